/* Parquet layout (column chunk spans from the footer) on the committed fixtures. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_files.h"
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
