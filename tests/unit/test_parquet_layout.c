/* Parquet layout (column chunk spans from the footer) on the committed fixtures. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_files.h"
#include "parquet_layout.h"

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
        parquet_layout l;
        uint64_t need;
        char err[256];
        /* A short tail asks for more; the whole file always suffices. */
        int r = parquet_layout_from_tail(file + len - 16, 16, len, &l, &need, err, sizeof err);
        cr_assert_eq(r, 1, "%s: a 16-byte tail cannot hold the footer", names[k]);
        cr_assert_gt(need, 16);
        cr_assert_leq(need, len);
        r = parquet_layout_from_tail(file + len - need, (size_t)need, len, &l, &need, err, sizeof err);
        cr_assert_eq(r, 0, "%s: %s", names[k], err);
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
        parquet_layout_free(&l);
        free(file);
    }
}

Test(parquet_layout, rejects_non_parquet)
{
    const char junk[] = "this is not a parquet file, just text....";
    parquet_layout l;
    uint64_t need;
    char err[256] = "";
    int r = parquet_layout_from_tail((const uint8_t *)junk, sizeof junk - 1, sizeof junk - 1, &l,
                                     &need, err, sizeof err);
    cr_assert_eq(r, -1);
    cr_assert_neq(err[0], 0, "a message names the cause");
}
