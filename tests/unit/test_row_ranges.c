/* row_ranges: set operations checked against a bitmap reference. */
#include "row_ranges.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define UNIVERSE 200

static void to_bitmap(const row_ranges *s, uint8_t *bits)
{
    memset(bits, 0, UNIVERSE);
    for (size_t i = 0; i < s->n; i++) {
        cr_assert(s->r[i].start < s->r[i].end, "empty range kept");
        if (i)
            cr_assert(s->r[i].start > s->r[i - 1].end, "ranges not disjoint and non-adjacent");
        for (uint64_t r = s->r[i].start; r < s->r[i].end; r++)
            bits[r] = 1;
    }
}

static void random_set(row_ranges *s, uint8_t *bits, unsigned *seed)
{
    memset(bits, 0, UNIVERSE);
    int n = rand_r(seed) % 8;
    for (int i = 0; i < n; i++) {
        uint64_t a = (uint64_t)(rand_r(seed) % UNIVERSE), len = (uint64_t)(rand_r(seed) % 30);
        uint64_t b = a + len > UNIVERSE ? UNIVERSE : a + len;
        if (s->n == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 8;
            s->r = realloc(s->r, s->cap * sizeof *s->r);
        }
        s->r[s->n++] = (row_range){a, b};
        for (uint64_t r = a; r < b; r++)
            bits[r] = 1;
    }
    row_ranges_normalize(s);
}

Test(row_ranges, operations_match_bitmaps)
{
    unsigned seed = 12345;
    for (int iter = 0; iter < 2000; iter++) {
        row_ranges a = {0}, b = {0}, x = {0}, sl = {0}, fb = {0};
        uint8_t ba[UNIVERSE], bb[UNIVERSE], got[UNIVERSE];
        random_set(&a, ba, &seed);
        random_set(&b, bb, &seed);
        to_bitmap(&a, got);
        cr_assert(memcmp(got, ba, UNIVERSE) == 0, "normalize changed the set");
        cr_assert(row_ranges_intersect(&a, &b, &x));
        to_bitmap(&x, got);
        uint64_t want_count = 0;
        for (int r = 0; r < UNIVERSE; r++) {
            cr_assert_eq(got[r], ba[r] & bb[r], "intersection wrong at row %d (iter %d)", r, iter);
            want_count += ba[r];
        }
        cr_assert_eq(row_ranges_count(&a), want_count);
        uint64_t lo = (uint64_t)(rand_r(&seed) % UNIVERSE), hi = lo + (uint64_t)(rand_r(&seed) % 50);
        if (hi > UNIVERSE)
            hi = UNIVERSE;
        cr_assert(row_ranges_slice(&a, lo, hi, &sl));
        uint64_t in = 0;
        uint8_t want_slice[UNIVERSE] = {0};
        for (uint64_t r = lo; r < hi; r++) {
            want_slice[r - lo] = ba[r];
            in += ba[r];
        }
        to_bitmap(&sl, got);
        cr_assert(memcmp(got, want_slice, UNIVERSE) == 0, "slice wrong (iter %d)", iter);
        cr_assert_eq(row_ranges_count_in(&a, lo, hi), in);
        cr_assert(row_ranges_from_bitmap(&fb, ba, UNIVERSE, 0));
        to_bitmap(&fb, got);
        cr_assert(memcmp(got, ba, UNIVERSE) == 0, "from_bitmap wrong");
        row_ranges_free(&a);
        row_ranges_free(&b);
        row_ranges_free(&x);
        row_ranges_free(&sl);
        row_ranges_free(&fb);
    }
}

Test(row_ranges, append_merges_touching_ranges)
{
    row_ranges s = {0};
    cr_assert(row_ranges_append(&s, 0, 5));
    cr_assert(row_ranges_append(&s, 5, 9));
    cr_assert(row_ranges_append(&s, 9, 9));
    cr_assert(row_ranges_append(&s, 12, 14));
    cr_assert_eq(s.n, 2);
    cr_assert_eq(s.r[0].end, 9);
    cr_assert_eq(row_ranges_count(&s), 11);
    row_ranges_free(&s);
}
