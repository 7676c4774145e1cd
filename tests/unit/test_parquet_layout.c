/* Parquet layout (column chunk spans from the footer) on the committed fixtures. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_files.h"
#include "fixture_set.h"
#include "footer_cache.h"

static uint8_t *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", FIXTURE_DIR, name);
    return fixture_read(path, len);
}

Test(parquet_layout, tail_hint_bounds)
{
    cr_assert_eq(parquet_layout_tail_hint(100), 100);
    cr_assert_eq(parquet_layout_tail_hint(10u << 20), 64u << 10);
    cr_assert_eq(parquet_layout_tail_hint(50ull << 30), 64u << 10);
}

Test(parquet_layout, chunks_tile_the_data_region_of_every_fixture)
{
    const char *names[] = {"types_snappy.parquet", "nested_index.parquet"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t len;
        uint8_t *file = slurp(names[k], &len);
        parquet_footer ft;
        uint64_t need;
        /* A short tail asks for more; the whole file always suffices. */
        int r = parquet_footer_from_tail(file + len - 16, 16, len, &ft, &need);
        cr_assert_eq(r, 1, "%s: a 16-byte tail cannot hold the footer", names[k]);
        cr_assert_gt(need, 16);
        cr_assert_leq(need, len);
        r = parquet_footer_from_tail(file + len - need, (size_t)need, len, &ft, &need);
        cr_assert_eq(r, FOOTER_OK, "%s: %s", names[k], ft.err.msg);
        cr_assert_not_null(ft.meta);
        const parquet_layout l = ft.layout;
        cr_assert_gt(l.n_chunks, 0);
        for (size_t i = 0; i < l.n_chunks; i++) {
            cr_assert_geq(l.chunks[i].start, 4, "chunks start after the leading magic");
            cr_assert_lt(l.chunks[i].start, l.chunks[i].end);
            cr_assert_leq(l.chunks[i].end, l.footer.start);
            if (i > 0)
                cr_assert_geq(l.chunks[i].start, l.chunks[i - 1].end, "sorted, no overlap");
            size_t idx;
            cr_assert_eq(parquet_layout_chunk_at(&l, l.chunks[i].start, &idx), &l.chunks[i]);
            cr_assert_eq(idx, i);
            cr_assert_eq(parquet_layout_chunk_at(&l, l.chunks[i].end - 1, NULL), &l.chunks[i]);
        }
        cr_assert_null(parquet_layout_chunk_at(&l, 0, NULL), "the magic is in no chunk");
        cr_assert_null(parquet_layout_chunk_at(&l, len - 1, NULL), "the footer is in no chunk");
        cr_assert_eq(l.footer.end, len);
        cr_assert_eq(l.footer.start, ft.meta->footer_offset);
        parquet_footer_clear(&ft);
        free(file);
    }
}

Test(parquet_layout, rejects_non_parquet)
{
    const char junk[] = "this is not a parquet file, just text....";
    parquet_footer ft;
    uint64_t need;
    int r = parquet_footer_from_tail((const uint8_t *)junk, sizeof junk - 1, sizeof junk - 1, &ft, &need);
    cr_assert_eq(r, FOOTER_E_PARSE);
    cr_assert_eq(ft.err.code, FOOTER_E_PARSE);
    cr_assert_null(ft.meta);
    cr_assert_neq(ft.err.msg[0], 0, "a message names the cause");
}

/* The page starts kept from a tail holding the page index are exactly the
 * OffsetIndex page offsets the fixture's generator recorded (pyarrow's
 * reading, not ours), and each is found by parquet_layout_page_at with the
 * next one (or the chunk's end) as its end; before a chunk's first data
 * page lies its dictionary page. A tail without the page index keeps none. */
Test(parquet_layout, page_starts_are_the_offset_index_pages)
{
    fixture fx[32];
    const int n = fixtures_load(fx, 32);
    int with_index = 0;
    for (int i = 0; i < n; i++) {
        parquet_footer ft;
        uint64_t need;
        if (parquet_footer_from_tail(fx[i].data, fx[i].len, fx[i].len, &ft, &need) != FOOTER_OK)
            continue;
        const parquet_layout *l = &ft.layout;
        size_t expected = 0;
        json_t *rgs = json_object_get(fx[i].exp, "row_groups");
        for (size_t g = 0; g < json_array_size(rgs); g++) {
            json_t *cols = json_object_get(json_array_get(rgs, g), "columns");
            for (size_t c = 0; c < json_array_size(cols); c++) {
                json_t *col = json_array_get(cols, c);
                json_t *locs = json_object_get(json_object_get(col, "offset_index"), "page_locations");
                if (!json_is_array(locs) || json_array_size(locs) == 0)
                    continue;
                const uint64_t first = (uint64_t)jint(json_array_get(locs, 0), "offset");
                size_t ci;
                const byte_span *chunk = parquet_layout_chunk_at(l, first, &ci);
                cr_assert_not_null(chunk, "%s: page at %llu in a chunk", fx[i].name, (unsigned long long)first);
                byte_span pg;
                if (first > chunk->start) {
                    cr_assert(parquet_layout_page_at(l, chunk, chunk->start, &pg));
                    cr_assert_eq(pg.start, chunk->start, "%s: the dictionary page", fx[i].name);
                    cr_assert_eq(pg.end, first);
                }
                for (size_t k = 0; k < json_array_size(locs); k++) {
                    const uint64_t at = (uint64_t)jint(json_array_get(locs, k), "offset");
                    const uint64_t next = k + 1 < json_array_size(locs)
                                              ? (uint64_t)jint(json_array_get(locs, k + 1), "offset")
                                              : chunk->end;
                    cr_assert(parquet_layout_page_at(l, chunk, at, &pg), "%s: page %zu", fx[i].name, k);
                    cr_assert_eq(pg.start, at, "%s: chunk %zu page %zu starts at %llu, not %llu", fx[i].name, ci, k,
                                 (unsigned long long)at, (unsigned long long)pg.start);
                    cr_assert_eq(pg.end, next, "%s: chunk %zu page %zu", fx[i].name, ci, k);
                    cr_assert(parquet_layout_page_at(l, chunk, next - 1, &pg));
                    cr_assert_eq(pg.start, at, "%s: its last byte is in it", fx[i].name);
                    /* Its rows, and the page holding its first row. */
                    const uint64_t row = (uint64_t)jint(json_array_get(locs, k), "first_row_index");
                    const uint64_t row_end = k + 1 < json_array_size(locs)
                                                 ? (uint64_t)jint(json_array_get(locs, k + 1), "first_row_index")
                                                 : UINT64_MAX;
                    uint64_t lo, hi;
                    cr_assert(parquet_layout_page_rows(l, chunk, at, &lo, &hi), "%s: page %zu rows", fx[i].name, k);
                    cr_assert_eq(lo, row, "%s: chunk %zu page %zu first row %llu, not %llu", fx[i].name, ci, k,
                                 (unsigned long long)row, (unsigned long long)lo);
                    cr_assert_eq(hi, row_end, "%s: chunk %zu page %zu", fx[i].name, ci, k);
                    byte_span dict, pages;
                    cr_assert(parquet_layout_pages_of_rows(l, chunk, row, row + 1, &dict, &pages));
                    cr_assert_eq(dict.start, chunk->start, "%s", fx[i].name);
                    cr_assert_eq(dict.end, first, "%s: what lies before its first data page", fx[i].name);
                    cr_assert_eq(pages.start, at, "%s: chunk %zu row %llu in page %zu", fx[i].name, ci,
                                 (unsigned long long)row, k);
                    cr_assert_eq(pages.end, next, "%s: chunk %zu row %llu in page %zu only", fx[i].name, ci,
                                 (unsigned long long)row, k);
                    cr_assert_not(parquet_layout_page_rows(l, chunk, at + 1, &lo, &hi), "%s: not a page start",
                                  fx[i].name);
                    expected++;
                }
            }
        }
        cr_assert_eq(l->n_page_starts, expected, "%s: %zu page starts, the OffsetIndexes list %zu", fx[i].name,
                     l->n_page_starts, expected);
        with_index += expected > 0;
        /* A tail from the footer on holds no page index: no page is guessed. */
        const size_t tail = fx[i].len - (size_t)l->footer.start;
        parquet_footer short_ft;
        cr_assert_eq(parquet_footer_from_tail(fx[i].data + fx[i].len - tail, tail, fx[i].len, &short_ft, &need),
                     FOOTER_OK, "%s", fx[i].name);
        cr_assert_eq(short_ft.layout.n_page_starts, 0, "%s", fx[i].name);
        byte_span pg;
        byte_span dict;
        for (size_t k = 0; k < short_ft.layout.n_chunks; k++) {
            cr_assert_not(parquet_layout_page_at(&short_ft.layout, &short_ft.layout.chunks[k],
                                                 short_ft.layout.chunks[k].start, &pg));
            cr_assert_not(
                parquet_layout_pages_of_rows(&short_ft.layout, &short_ft.layout.chunks[k], 0, UINT64_MAX, &dict, &pg));
        }
        parquet_footer_clear(&short_ft);
        parquet_footer_clear(&ft);
    }
    cr_assert_geq(with_index, 3, "fixtures with an OffsetIndex: %d", with_index);
    fixtures_free(fx, n);
}

/* A damaged page index never breaks the footer, and no page start kept
 * lies outside a chunk (an OffsetIndex pointing elsewhere is dropped). */
Test(parquet_layout, a_damaged_page_index_keeps_no_page_outside_a_chunk)
{
    fixture fx[32];
    const int n = fixtures_load(fx, 32);
    fixture *f = fixtures_find(fx, n, "v1_plain_none_index");
    parquet_footer ft;
    uint64_t need;
    cr_assert_eq(parquet_footer_from_tail(f->data, f->len, f->len, &ft, &need), FOOTER_OK);
    const size_t good = ft.layout.n_page_starts;
    cr_assert_gt(good, 1);
    /* Every byte of the page index flipped in turn. */
    uint8_t *copy = malloc(f->len);
    memcpy(copy, f->data, f->len);
    for (uint64_t b = ft.layout.page_index.start; b < ft.layout.page_index.end; b++) {
        copy[b] ^= 0x5a;
        parquet_footer bad;
        if (parquet_footer_from_tail(copy, f->len, f->len, &bad, &need) == FOOTER_OK) {
            for (size_t k = 0; k < bad.layout.n_page_starts; k++)
                cr_assert_not_null(parquet_layout_chunk_at(&bad.layout, bad.layout.page_starts[k], NULL),
                                   "byte %llu flipped: page start %llu outside every chunk",
                                   (unsigned long long)b, (unsigned long long)bad.layout.page_starts[k]);
            parquet_footer_clear(&bad);
        }
        copy[b] ^= 0x5a;
    }
    free(copy);
    parquet_footer_clear(&ft);
    fixtures_free(fx, n);
}
