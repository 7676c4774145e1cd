/* Row sets as sorted ranges; see row_ranges.h. */
#include "row_ranges.h"

#include "sv_grow.h"

#include <stdlib.h>

void row_ranges_free(row_ranges *s)
{
    free(s->r);
    s->r = NULL;
    s->n = s->cap = 0;
}

bool row_ranges_append(row_ranges *s, uint64_t start, uint64_t end)
{
    if (end <= start)
        return true;
    if (s->n && start <= s->r[s->n - 1].end) {
        if (end > s->r[s->n - 1].end)
            s->r[s->n - 1].end = end;
        return true;
    }
    if (!sv_grow((void **)&s->r, &s->cap, s->n + 1, sizeof *s->r, 8, SIZE_MAX))
        return false;
    s->r[s->n].start = start;
    s->r[s->n].end = end;
    s->n++;
    return true;
}

static int cmp_range(const void *a, const void *b)
{
    const row_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

void row_ranges_normalize(row_ranges *s)
{
    if (s->n < 2) {
        if (s->n == 1 && s->r[0].end <= s->r[0].start)
            s->n = 0;
        return;
    }
    qsort(s->r, s->n, sizeof *s->r, cmp_range);
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->r[i].end <= s->r[i].start)
            continue;
        if (w && s->r[i].start <= s->r[w - 1].end) {
            if (s->r[i].end > s->r[w - 1].end)
                s->r[w - 1].end = s->r[i].end;
        } else {
            s->r[w++] = s->r[i];
        }
    }
    s->n = w;
}

bool row_ranges_intersect(const row_ranges *a, const row_ranges *b, row_ranges *out)
{
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        uint64_t lo = a->r[i].start > b->r[j].start ? a->r[i].start : b->r[j].start;
        uint64_t hi = a->r[i].end < b->r[j].end ? a->r[i].end : b->r[j].end;
        if (lo < hi && !row_ranges_append(out, lo, hi))
            return false;
        if (a->r[i].end < b->r[j].end)
            i++;
        else
            j++;
    }
    return true;
}

/* First range whose end is beyond row. */
static size_t first_after(const row_ranges *s, uint64_t row)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->r[mid].end <= row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool row_ranges_slice(const row_ranges *s, uint64_t start, uint64_t end, row_ranges *out)
{
    for (size_t i = first_after(s, start); i < s->n && s->r[i].start < end; i++) {
        uint64_t lo = s->r[i].start > start ? s->r[i].start : start;
        uint64_t hi = s->r[i].end < end ? s->r[i].end : end;
        if (!row_ranges_append(out, lo - start, hi - start))
            return false;
    }
    return true;
}

uint64_t row_ranges_count(const row_ranges *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->r[i].end - s->r[i].start;
    return n;
}

uint64_t row_ranges_count_in(const row_ranges *s, uint64_t start, uint64_t end)
{
    uint64_t n = 0;
    for (size_t i = first_after(s, start); i < s->n && s->r[i].start < end; i++) {
        uint64_t lo = s->r[i].start > start ? s->r[i].start : start;
        uint64_t hi = s->r[i].end < end ? s->r[i].end : end;
        n += hi - lo;
    }
    return n;
}

bool row_ranges_from_bitmap(row_ranges *s, const uint8_t *sel, size_t n, uint64_t base)
{
    size_t i = 0;
    while (i < n) {
        if (!sel[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && sel[j])
            j++;
        if (!row_ranges_append(s, base + i, base + j))
            return false;
        i = j;
    }
    return true;
}
