/* Page maps from page headers fetched in rounds (header_walk), on the
 * committed fixtures: every flat chunk walks to the map its own bytes give,
 * equal to its OffsetIndex where it has one, in two rounds when its pages
 * are regular; a corrupted or contradicting header fails the walk. */
#include "header_walk.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_set.h"

FIXTURE_SUITE(header_walk);

static fixture *find(const char *name)
{
    return fixtures_find(loaded, n_loaded, name);
}

/* Walk one chunk of file[0..len) as the view would: each round, fetch what
 * the walk asks for (clipped at the file's end) and advance. Returns the
 * rounds taken, or -1 when the walk failed. */
static int predictable_after_first = -1; /* pq_header_walk_predictable after round 1 of the last walk */

static int walk(const uint8_t *file, size_t len, const pq_column_ctx *ctx, pq_page_map *out, tc_error *err)
{
    predictable_after_first = -1;
    pq_header_walk w;
    if (pq_header_walk_init(&w, ctx, err) != TC_OK)
        return -1;
    pq_header_want wants[PQ_HEADER_WALK_MAX_WANTS];
    int rounds = 0;
    size_t n;
    while ((n = pq_header_walk_wants(&w, wants, PQ_HEADER_WALK_MAX_WANTS)) > 0 && rounds < 64) {
        for (size_t i = 0; i < n; i++) {
            cr_assert_lt(wants[i].offset, len);
            size_t l = wants[i].len;
            if (l > len - wants[i].offset)
                l = len - wants[i].offset;
            cr_assert_eq(pq_header_walk_feed(&w, wants[i].offset, file + wants[i].offset, l), TC_OK);
        }
        pq_header_walk_advance(&w);
        if (rounds++ == 0)
            predictable_after_first = pq_header_walk_predictable(&w);
    }
    int r = -1;
    if (w.done && pq_header_walk_map(&w, out, err) == TC_OK)
        r = rounds;
    else if (w.failed && err)
        *err = w.err;
    pq_header_walk_free(&w);
    return r;
}

static bool flat(const pq_column_ctx *ctx)
{
    return ctx->leaf->max_rep == 0 && !ctx->leaf->nested && ctx->row_group_rows > 0;
}

Test(header_walk, every_flat_chunk_walks_to_its_own_pages_and_its_offset_index)
{
    int walked = 0, with_index = 0, multi_page_regular = 0;
    for (int i = 0; i < n_loaded; i++) {
        fixture *f = &loaded[i];
        for (uint32_t g = 0; g < f->m->n_row_groups; g++)
            for (uint32_t c = 0; c < f->m->n_leaves; c++) {
                const pq_column_ctx ctx = pq_column_ctx_of(f->m, g, c);
                if (!flat(&ctx))
                    continue;
                uint64_t off, l;
                cr_assert(pq_column_chunk_range(ctx.chunk, &off, &l));
                tc_error err;
                pq_page_map from_chunk, walked_map;
                cr_assert_eq(pq_page_map_from_chunk(&ctx, f->data + off, (size_t)l, &from_chunk, &err), TC_OK,
                             "%s: %s", f->name, err.msg);
                int rounds = walk(f->data, f->len, &ctx, &walked_map, &err);
                cr_assert_geq(rounds, 1, "%s rg %u col %u: %s", f->name, g, c, err.msg);
                walked++;
                cr_expect_eq(walked_map.n_data_pages, from_chunk.n_data_pages, "%s rg %u col %u", f->name, g, c);
                cr_expect_eq(walked_map.dict_page, from_chunk.dict_page);
                for (uint32_t p = 0; p < walked_map.n_pages && p < from_chunk.n_pages; p++) {
                    cr_expect_eq(walked_map.pages[p].offset, from_chunk.pages[p].offset);
                    cr_expect_eq(walked_map.pages[p].total_size, from_chunk.pages[p].total_size);
                    if (walked_map.pages[p].is_data) {
                        cr_expect(walked_map.pages[p].has_header, "%s: page %u has its header", f->name, p);
                        cr_expect_eq(walked_map.pages[p].elig == PQ_ELIG_NO_OFFSET_INDEX, false,
                                     "rows are known: eligible as from an OffsetIndex");
                    }
                }
                /* Regular pages (all data pages but the last of one size)
                 * take two rounds: the first header, then the rest. */
                bool regular = from_chunk.n_data_pages > 2;
                const uint32_t first = from_chunk.dict_page >= 0 ? 1 : 0;
                for (uint32_t p = first; regular && p + 1 < from_chunk.n_pages; p++)
                    regular = from_chunk.pages[p].total_size == from_chunk.pages[first].total_size;
                if (regular) {
                    cr_expect_leq(rounds, 2, "%s rg %u col %u: %u regular pages in %d rounds", f->name, g, c,
                                  from_chunk.n_data_pages, rounds);
                    cr_expect_eq(predictable_after_first, 1, "%s rg %u col %u: regular, seen from its first page",
                                 f->name, g, c);
                    multi_page_regular++;
                } else {
                    cr_expect_leq(rounds, (int)from_chunk.n_data_pages, "one round per page at most");
                }
                pq_offset_index oi;
                if (ctx.chunk->has_offset_index &&
                    pq_offset_index_parse(f->data + ctx.chunk->offset_index_offset,
                                          (size_t)ctx.chunk->offset_index_length, &oi, &err) == TC_OK) {
                    pq_page_map from_index;
                    cr_assert_eq(pq_page_map_from_offset_index(&ctx, &oi, &from_index, &err), TC_OK, "%s",
                                 err.msg);
                    pq_mismatch mm;
                    cr_expect_eq(pq_page_map_cross_check(&from_index, &walked_map, &mm), TC_OK, "%s: %s", f->name,
                                 mm.msg);
                    for (uint32_t p = 0; p < from_index.n_pages && p < walked_map.n_pages; p++) {
                        cr_expect_eq(walked_map.pages[p].first_row, from_index.pages[p].first_row);
                        cr_expect_eq(walked_map.pages[p].num_rows, from_index.pages[p].num_rows);
                    }
                    pq_page_map_free(&from_index);
                    pq_offset_index_free(&oi);
                    with_index++;
                }
                pq_page_map_free(&walked_map);
                pq_page_map_free(&from_chunk);
            }
    }
    cr_expect_gt(walked, 20);
    cr_expect_gt(with_index, 5, "maps from headers are compared with OffsetIndexes");
    cr_expect_gt(multi_page_regular, 0, "some fixture has regular multi-page chunks");
}

/* The first chunk of several data pages in a file without an OffsetIndex. */
static pq_column_ctx multi_page_chunk(fixture *f, pq_page_map *pm)
{
    for (uint32_t g = 0; g < f->m->n_row_groups; g++)
        for (uint32_t c = 0; c < f->m->n_leaves; c++) {
            pq_column_ctx ctx = pq_column_ctx_of(f->m, g, c);
            uint64_t off, l;
            tc_error err;
            if (!flat(&ctx) || !pq_column_chunk_range(ctx.chunk, &off, &l) ||
                pq_page_map_from_chunk(&ctx, f->data + off, (size_t)l, pm, &err) != TC_OK)
                continue;
            if (pm->n_data_pages >= 3)
                return ctx;
            pq_page_map_free(pm);
        }
    cr_assert_fail("%s has no chunk of 3 or more data pages", f->name);
    return (pq_column_ctx){0};
}

Test(header_walk, a_corrupted_header_fails_the_walk)
{
    fixture *f = find("v1_plain_none_noindex");
    pq_page_map truth;
    pq_column_ctx ctx = multi_page_chunk(f, &truth);
    const uint32_t dp = truth.dict_page >= 0 ? 1 : 0;
    uint8_t *copy = malloc(f->len);
    cr_assert(copy);
    tc_error err;
    pq_page_map m;
    /* Each data page in turn: a header byte zeroed (the page type or the
     * sizes it starts with), the walk fails or finds exactly the truth
     * (a byte the parser does not read). It never yields other pages. */
    for (uint32_t p = dp; p < truth.n_pages; p++) {
        for (uint32_t b = 0; b < 6; b++) {
            memcpy(copy, f->data, f->len);
            copy[truth.pages[p].offset + b] ^= 0x5a;
            int r = walk(copy, f->len, &ctx, &m, &err);
            if (r >= 0) {
                cr_expect_eq(m.n_pages, truth.n_pages, "page %u byte %u", p, b);
                for (uint32_t k = 0; k < m.n_pages && k < truth.n_pages; k++) {
                    cr_expect_eq(m.pages[k].offset, truth.pages[k].offset);
                    cr_expect_eq(m.pages[k].total_size, truth.pages[k].total_size);
                }
                pq_page_map_free(&m);
            }
        }
    }
    /* After its first page, a chunk whose bytes left cannot be pages of
     * that size (here: a chunk said to be a page longer, and a row group
     * said to hold twice the rows) is not predictable. */
    pq_header_walk w;
    for (int variant = 0; variant < 3; variant++) {
        pq_column_chunk longer = *ctx.chunk;
        pq_column_ctx c3 = ctx;
        if (variant == 1)
            longer.total_compressed_size += 2 * (int64_t)truth.pages[dp].total_size;
        if (variant == 2)
            c3.row_group_rows *= 2;
        c3.chunk = &longer;
        cr_assert_eq(pq_header_walk_init(&w, &c3, &err), TC_OK, "%s", err.msg);
        pq_header_want wants[4];
        cr_assert_eq(pq_header_walk_wants(&w, wants, 4), 1, "first the first header alone");
        cr_assert_eq(pq_header_walk_feed(&w, wants[0].offset, f->data + wants[0].offset, wants[0].len), TC_OK);
        pq_header_walk_advance(&w);
        cr_assert_eq(w.n_pages, 1);
        cr_expect_eq(pq_header_walk_predictable(&w), variant == 0, "variant %d", variant);
        pq_header_walk_free(&w);
    }
    /* Headers that contradict the metadata: a chunk one byte shorter than
     * its pages (the last runs past its end), a row group of one more row
     * than its pages hold. */
    pq_column_chunk shorter = *ctx.chunk;
    shorter.total_compressed_size -= 1;
    pq_column_ctx c2 = ctx;
    c2.chunk = &shorter;
    cr_expect_eq(walk(f->data, f->len, &c2, &m, &err), -1);
    cr_expect(strstr(err.msg, "past the chunk end"), "%s", err.msg);
    c2 = ctx;
    c2.row_group_rows += 1;
    cr_expect_eq(walk(f->data, f->len, &c2, &m, &err), -1);
    cr_expect(strstr(err.msg, "rows"), "%s", err.msg);
    pq_page_map_free(&truth);
    free(copy);
}

Test(header_walk, metadata_it_cannot_walk)
{
    fixture *f = find("v1_plain_none_noindex");
    pq_column_ctx ctx = pq_column_ctx_of(f->m, 0, 1);
    pq_column_chunk bad = *ctx.chunk;
    bad.data_page_offset = -1;
    ctx.chunk = &bad;
    pq_header_walk w;
    tc_error err;
    cr_expect_eq(pq_header_walk_init(&w, &ctx, &err), TC_E_RANGE);
    /* A window fed at an offset the chain never reaches is not used. */
    ctx = pq_column_ctx_of(f->m, 0, 1);
    cr_assert_eq(pq_header_walk_init(&w, &ctx, &err), TC_OK, "%s", err.msg);
    uint8_t junk[64];
    memset(junk, 0x15, sizeof junk);
    cr_assert_eq(pq_header_walk_feed(&w, w.next_offset + 1, junk, sizeof junk), TC_OK);
    pq_header_walk_advance(&w);
    cr_expect_not(w.done);
    cr_expect_not(w.failed);
    cr_expect_eq(w.n_pages, 0);
    /* Junk at the chain's end fails it, naming the offset. */
    const uint64_t at = w.next_offset;
    cr_assert_eq(pq_header_walk_feed(&w, at, junk, sizeof junk), TC_OK);
    pq_header_walk_advance(&w);
    cr_expect(w.failed);
    char want[64];
    snprintf(want, sizeof want, "offset %llu", (unsigned long long)at);
    cr_expect(strstr(w.err.msg, want), "%s", w.err.msg);
    pq_header_want wants[4];
    cr_expect_eq(pq_header_walk_wants(&w, wants, 4), 0, "a failed walk asks for nothing");
    pq_header_walk_free(&w);
}
