/* Page maps, cross-checks, eligibility, zstd frame walking and CRC rewriting,
 * on the committed fixtures (tests/fixtures/gen_parquet_fixtures.py) and on
 * hand-made inputs. */
#include "page_map.h"
#include "snappy_stream.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_set.h"

/* ------------------------------------------------------------------ */
/* fixtures                                                            */
/* ------------------------------------------------------------------ */

/* Every fixture, each with its footer parsed (which must parse): loaded
 * before each test of the suites that read them (.init = load_fixtures). */
FIXTURES_LOADED_PARSED

TestSuite(fixtures, .init = load_fixtures, .fini = free_fixtures);
TestSuite(mismatch, .init = load_fixtures, .fini = free_fixtures);
TestSuite(malformed, .init = load_fixtures, .fini = free_fixtures);

static fixture *find(const char *name)
{
    return fixtures_find(loaded, n_loaded, name);
}

static json_t *jcol(const fixture *fx, uint32_t rg, uint32_t col)
{
    return json_array_get(
        json_object_get(json_array_get(json_object_get(fx->exp, "row_groups"), rg), "columns"), col);
}

static const uint8_t *chunk_bytes(const fixture *fx, const pq_column_ctx *ctx, size_t *len)
{
    uint64_t off, l;
    cr_assert(pq_column_chunk_range(ctx->chunk, &off, &l));
    cr_assert(off + l <= fx->len);
    *len = (size_t)l;
    return fx->data + off;
}

static bool load_oi(const fixture *fx, const pq_column_chunk *c, pq_offset_index *oi)
{
    if (!c->has_offset_index)
        return false;
    tc_error err;
    cr_assert_eq(pq_offset_index_parse(fx->data + c->offset_index_offset,
                                       (size_t)c->offset_index_length, oi, &err),
                 TC_OK, "%s", err.msg);
    return true;
}

static void compare_to_json(const fixture *fx, const pq_page_map *pm, json_t *jc, bool rows_from_oi)
{
    json_t *pages = json_object_get(jc, "pages");
    cr_assert_eq(pm->n_pages, json_array_size(pages), "%s", fx->name);
    uint64_t total = 0;
    uint32_t data_pages = 0;
    for (uint32_t i = 0; i < pm->n_pages; i++) {
        const pq_page *p = &pm->pages[i];
        json_t *jp = json_array_get(pages, i);
        cr_expect_eq(p->offset, (uint64_t)jint(jp, "offset"));
        cr_expect_eq(p->header_len, (uint32_t)jint(jp, "header_len"));
        cr_expect_eq(p->compressed_size, jint(jp, "compressed_size"));
        cr_expect_eq(p->uncompressed_size, jint(jp, "uncompressed_size"));
        cr_expect_eq(p->page_type, jint(jp, "type"));
        cr_expect_eq(p->num_values, jint(jp, "num_values"));
        cr_expect_eq(p->encoding, jint(jp, "encoding"));
        cr_expect_eq(p->has_crc, json_is_true(json_object_get(jp, "has_crc")));
        cr_expect_eq(p->total_size, p->header_len + (uint32_t)p->compressed_size);
        json_t *nr = json_object_get(jp, "num_rows");
        if (json_is_integer(nr) && (p->num_rows >= 0 || !rows_from_oi))
            cr_expect_eq(p->num_rows, json_integer_value(nr), "%s page %u", fx->name, i);
        json_t *fr = json_object_get(jp, "first_row");
        if (json_is_integer(fr) && rows_from_oi)
            cr_expect_eq(p->first_row, json_integer_value(fr), "%s page %u", fx->name, i);
        if (p->page_type == PQ_PAGE_DATA_V2) {
            cr_expect_eq(p->def_levels_len, jint(jp, "def_len"));
            cr_expect_eq(p->rep_levels_len, jint(jp, "rep_len"));
        }
        if (p->is_data)
            data_pages++;
        else if ((int32_t)i != pm->dict_page || !p->has_header)
            cr_expect_eq(p->elig, PQ_ELIG_NOT_DATA_PAGE);
        else /* a dictionary page: whether a view keeps its entries in part */
            cr_expect(!pq_elig_is_eligible(p->elig) || p->elig == PQ_ELIG_DICTIONARY_ENTRIES, "%s page %u: %s",
                      fx->name, i, pq_elig_reason(p->elig));
        total += p->total_size;
    }
    cr_expect_eq(total, pm->chunk_len);
    cr_expect_eq(pm->n_data_pages, data_pages);
}

/* Every data page of the columns named in "expect_elig" has that reason. */
static void check_expected_elig(const fixture *fx, uint32_t col, const pq_page_map *pm)
{
    json_t *ee = json_object_get(fx->exp, "expect_elig");
    json_t *want = json_object_get(ee, fx->m->leaves[col].path);
    if (!json_is_string(want))
        return;
    for (uint32_t i = 0; i < pm->n_pages; i++)
        if (pm->pages[i].is_data)
            cr_expect_str_eq(pq_elig_reason(pm->pages[i].elig), json_string_value(want),
                             "%s %s page %u", fx->name, fx->m->leaves[col].path, i);
}

Test(fixtures, maps_match_expected_json)
{
    int maps = 0, with_oi = 0;
    for (int f = 0; f < n_loaded; f++) {
        const pq_file_meta *m = loaded[f].m;
        for (uint32_t g = 0; g < m->n_row_groups; g++)
            for (uint32_t c = 0; c < m->n_leaves; c++) {
                const pq_column_ctx ctx = pq_column_ctx_of(m, g, c);
                size_t clen;
                const uint8_t *chunk = chunk_bytes(&loaded[f], &ctx, &clen);
                json_t *jc = jcol(&loaded[f], g, c);
                tc_error err;

                pq_page_map walk;
                cr_assert_eq(pq_page_map_from_chunk(&ctx, chunk, clen, &walk, &err), TC_OK,
                             "%s rg %u col %u: %s", loaded[f].name, g, c, err.msg);
                cr_expect(walk.headers_walked);
                compare_to_json(&loaded[f], &walk, jc, false);
                maps++;

                pq_offset_index oi;
                const bool has_oi = load_oi(&loaded[f], ctx.chunk, &oi);
                pq_page_map built;
                pq_mismatch mm;
                cr_assert_eq(pq_page_map_build(&ctx, has_oi ? &oi : NULL, chunk, clen, &built, &mm,
                                               &err),
                             TC_OK, "%s rg %u col %u: %s", loaded[f].name, g, c, err.msg);
                compare_to_json(&loaded[f], &built, jc, has_oi);
                cr_expect_eq(built.has_offset_index, has_oi);
                check_expected_elig(&loaded[f], c, &built);

                if (has_oi) {
                    with_oi++;
                    pq_page_map idx;
                    cr_assert_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_OK,
                                 "%s: %s", loaded[f].name, err.msg);
                    cr_expect_eq(pq_page_map_cross_check(&idx, &walk, &mm), TC_OK, "%s: %s",
                                 loaded[f].name, mm.msg);
                    cr_assert_eq(idx.n_pages, built.n_pages);
                    for (uint32_t i = 0; i < idx.n_pages; i++) {
                        const pq_page *p = &idx.pages[i];
                        cr_expect_eq(p->has_header, false);
                        if (p->is_data && !loaded[f].m->leaves[c].nested &&
                            loaded[f].m->leaves[c].max_def <= 1)
                            cr_expect_eq(p->elig, PQ_ELIG_NO_HEADER);
                        /* Feed each page its header (and body). */
                        cr_assert_eq(pq_page_map_set_header(&idx, i, loaded[f].data + p->offset,
                                                            loaded[f].len - p->offset, &err),
                                     TC_OK, "%s page %u: %s", loaded[f].name, i, err.msg);
                        cr_expect_eq(p->header_len, built.pages[i].header_len);
                        cr_expect_eq(p->elig, built.pages[i].elig, "%s %s page %u: %s vs %s",
                                     loaded[f].name, loaded[f].m->leaves[c].path, i,
                                     pq_elig_reason(p->elig),
                                     pq_elig_reason(built.pages[i].elig));
                        cr_expect_eq(p->first_row, built.pages[i].first_row);
                        cr_expect_eq(p->num_rows, built.pages[i].num_rows);
                    }
                    pq_page_map_free(&idx);
                    pq_offset_index_free(&oi);
                } else {
                    for (uint32_t i = 0; i < built.n_pages; i++)
                        if (built.pages[i].is_data && built.max_rep == 0 && built.max_def <= 1)
                            cr_expect_eq(built.pages[i].elig, PQ_ELIG_NO_OFFSET_INDEX);
                }
                pq_page_map_free(&walk);
                pq_page_map_free(&built);
            }
    }
    cr_expect_gt(maps, 50);
    cr_expect_gt(with_oi, 30);
}

Test(fixtures, crc_pages)
{
    fixture *f = find("v1_crc_none_index");
    int pages = 0, short_crc = 0;
    for (uint32_t c = 0; c < f->m->n_leaves; c++) {
        const pq_column_ctx ctx = pq_column_ctx_of(f->m, 0, c);
        size_t clen;
        const uint8_t *chunk = chunk_bytes(f, &ctx, &clen);
        pq_offset_index oi;
        cr_assert(load_oi(f, ctx.chunk, &oi));
        pq_page_map pm;
        tc_error err;
        cr_assert_eq(pq_page_map_build(&ctx, &oi, chunk, clen, &pm, NULL, &err), TC_OK, "%s",
                     err.msg);
        const bool fixed = ctx.leaf->type != PQ_BOOLEAN && ctx.leaf->type != PQ_BYTE_ARRAY;
        for (uint32_t i = 0; i < pm.n_pages; i++) {
            const pq_page *p = &pm.pages[i];
            cr_assert(p->has_crc);
            cr_assert_gt(p->crc_len, 0);
            pages++;
            if (p->crc_len < 5)
                short_crc++;
            if (p->is_data && fixed)
                cr_expect_eq(p->elig, p->crc_len >= 5 ? PQ_ELIG_OK : PQ_ELIG_CRC, "%s page %u",
                             ctx.leaf->path, i);
            /* Zero the body as a synthesizer would, recompute, rewrite. */
            uint8_t *copy = malloc(p->total_size);
            memcpy(copy, f->data + p->offset, p->total_size);
            memset(copy + p->header_len, 0, (size_t)p->compressed_size);
            const uint32_t crc = pq_crc32(0, copy + p->header_len, (size_t)p->compressed_size);
            pq_page_header h, h2;
            size_t hl, hl2;
            cr_assert_eq(pq_page_header_parse(copy, p->total_size, &h, &hl, &err), TC_OK);
            const bool fits = pq_crc_fits(h.crc_len, crc);
            cr_expect_eq(pq_crc_rewrite(copy, hl, &h, crc), fits);
            if (fits) {
                cr_assert_eq(pq_page_header_parse(copy, p->total_size, &h2, &hl2, &err), TC_OK,
                             "%s", err.msg);
                cr_expect_eq(hl2, hl);
                cr_expect_eq(h2.crc, crc);
                cr_expect_eq(h2.compressed_page_size, h.compressed_page_size);
            }
            /* Rewriting the original value gives the original bytes back
             * when the original was minimal. */
            memcpy(copy, f->data + p->offset, p->header_len);
            cr_expect(pq_crc_rewrite(copy, hl, &h, h.crc));
            cr_expect(memcmp(copy, f->data + p->offset, p->header_len) == 0);
            free(copy);
        }
        pq_page_map_free(&pm);
        pq_offset_index_free(&oi);
    }
    cr_expect_gt(pages, 10);
    (void)short_crc;
}

Test(fixtures, zstd_frames)
{
    fixture *f = find("v1_zstd_random_index");
    int raw_pages = 0;
    for (uint32_t c = 0; c < f->m->n_leaves; c++) {
        const pq_column_ctx ctx = pq_column_ctx_of(f->m, 0, c);
        size_t clen;
        const uint8_t *chunk = chunk_bytes(f, &ctx, &clen);
        pq_page_map pm;
        tc_error err;
        cr_assert_eq(pq_page_map_from_chunk(&ctx, chunk, clen, &pm, &err), TC_OK);
        for (uint32_t i = 0; i < pm.n_pages; i++) {
            const pq_page *p = &pm.pages[i];
            const uint8_t *body = f->data + p->offset + p->header_len;
            pq_zstd_frame zf;
            cr_assert_eq(pq_zstd_inspect(body, (size_t)p->compressed_size, true, &zf, &err), TC_OK,
                         "%s", err.msg);
            cr_expect(zf.single_frame);
            cr_expect_not(zf.has_dict_id);
            cr_expect_not(zf.has_checksum);
            cr_expect_eq(zf.frame_len, (uint32_t)p->compressed_size);
            if (zf.has_content_size)
                cr_expect_eq(zf.content_size, (uint64_t)p->uncompressed_size);
            json_t *jz = json_object_get(
                json_array_get(json_object_get(jcol(f, 0, c), "pages"), i), "zstd");
            json_t *types = json_object_get(jz, "types");
            cr_assert_eq(zf.n_blocks, json_array_size(types));
            for (uint32_t b = 0; b < zf.n_blocks; b++) {
                static const char *const tn[] = {"raw", "rle", "compressed"};
                cr_expect_str_eq(tn[zf.blocks[b].type], json_string_value(json_array_get(types, b)));
                cr_expect_eq(zf.blocks[b].last, b + 1 == zf.n_blocks);
            }
            if (zf.all_raw) {
                raw_pages++;
                cr_expect_eq(zf.known_size, (uint64_t)p->uncompressed_size);
                cr_expect_eq(pq_zstd_page_verdict(body, (size_t)p->compressed_size,
                                                  p->uncompressed_size),
                             PQ_ELIG_OK);
                /* raw block contents are the page bytes at known offsets */
                cr_expect_eq(zf.blocks[0].decompressed_offset, 0);
            }
            pq_zstd_frame_free(&zf);
        }
        pq_page_map_free(&pm);
    }
    cr_expect_gt(raw_pages, 0);
}

/* ------------------------------------------------------------------ */
/* disagreements and malformed chunks                                  */
/* ------------------------------------------------------------------ */

Test(mismatch, offset_index_vs_headers)
{
    fixture *f = find("v1_plain_none_index");
    const pq_column_ctx ctx = pq_column_ctx_of(f->m, 0, 1); /* i64, flat, V1 */
    size_t clen;
    const uint8_t *chunk = chunk_bytes(f, &ctx, &clen);
    pq_offset_index oi;
    cr_assert(load_oi(f, ctx.chunk, &oi));
    cr_assert_gt(oi.n_pages, 2);
    tc_error err;
    pq_mismatch mm;
    pq_page_map idx, walk, out;

    /* a wrong first_row_index */
    oi.pages[1].first_row_index += 1;
    cr_assert_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_OK, "%s", err.msg);
    cr_assert_eq(pq_page_map_from_chunk(&ctx, chunk, clen, &walk, &err), TC_OK);
    cr_expect_eq(pq_page_map_cross_check(&idx, &walk, &mm), TC_E_MISMATCH);
    cr_expect_str_eq(mm.field, "num_rows"); /* page 0 now holds one row more */
    cr_expect_eq(mm.page, 0);
    cr_expect_eq(pq_page_map_build(&ctx, &oi, chunk, clen, &out, &mm, &err), TC_E_MISMATCH);
    cr_expect(strstr(err.msg, "disagree") != NULL, "%s", err.msg);
    cr_expect_null(out.pages);
    /* set_header notices it too */
    cr_expect_eq(pq_page_map_set_header(&idx, 0, f->data + idx.pages[0].offset,
                                        f->len - idx.pages[0].offset, &err),
                 TC_E_MISMATCH);
    cr_expect(strstr(err.msg, "rows") != NULL, "%s", err.msg);
    pq_page_map_free(&idx);
    oi.pages[1].first_row_index -= 1;

    /* a page the headers do not have: split page 1's size */
    const int32_t size1 = oi.pages[1].compressed_page_size;
    oi.pages[1].compressed_page_size = 10;
    cr_expect_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_E_INVALID);
    cr_expect(strstr(err.msg, "tile") != NULL, "%s", err.msg);
    oi.pages[1].compressed_page_size = size1;

    /* a missing last page */
    oi.n_pages--;
    cr_expect_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_E_INVALID);
    cr_expect(strstr(err.msg, "column chunk ends") != NULL, "%s", err.msg);
    oi.n_pages++;

    /* first page not at row 0 */
    oi.pages[0].first_row_index = 1;
    cr_expect_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_E_INVALID);
    oi.pages[0].first_row_index = 0;

    /* last page beyond the row group */
    const int64_t last = oi.pages[oi.n_pages - 1].first_row_index;
    oi.pages[oi.n_pages - 1].first_row_index = ctx.row_group_rows;
    cr_expect_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_E_INVALID);
    oi.pages[oi.n_pages - 1].first_row_index = last;

    /* header of another page */
    cr_assert_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_OK);
    const pq_column_ctx ctx_s = pq_column_ctx_of(f->m, 0, 6); /* "s" */
    size_t slen;
    const uint8_t *schunk = chunk_bytes(f, &ctx_s, &slen);
    pq_page_map smap;
    cr_assert_eq(pq_page_map_from_chunk(&ctx_s, schunk, slen, &smap, &err), TC_OK);
    uint32_t j = 0;
    while (j < smap.n_pages && smap.pages[j].total_size == idx.pages[1].total_size)
        j++;
    cr_assert_lt(j, smap.n_pages);
    const uint64_t rel = smap.pages[j].offset - smap.chunk_offset;
    cr_expect_eq(pq_page_map_set_header(&idx, 1, schunk + rel, slen - rel, &err), TC_E_MISMATCH);
    cr_expect(strstr(err.msg, "OffsetIndex says") != NULL, "%s", err.msg);
    cr_expect_not(idx.pages[1].has_header);
    pq_page_map_free(&smap);
    pq_page_map_free(&idx);
    pq_page_map_free(&walk);
    pq_offset_index_free(&oi);
}

/* Every flat chunk of every fixture: where the metadata allows one data
 * page, the predicted map is confirmed page by page by the chunk's own
 * headers exactly when the walked chunk has one data page, and equals that
 * walk; a chunk of several pages contradicts it at its data page. */
Test(fixtures, single_page_prediction_is_confirmed_or_contradicted_by_headers)
{
    int confirmed = 0, contradicted = 0, ruled_out_by_stats = 0;
    for (int i = 0; i < n_loaded; i++) {
        fixture *f = &loaded[i];
        for (uint32_t g = 0; g < f->m->n_row_groups; g++)
            for (uint32_t c = 0; c < f->m->n_leaves; c++) {
                const pq_column_ctx ctx = pq_column_ctx_of(f->m, g, c);
                if (ctx.leaf->max_rep > 0 || ctx.leaf->max_def > 1 || ctx.row_group_rows <= 0)
                    continue;
                size_t clen;
                const uint8_t *chunk = chunk_bytes(f, &ctx, &clen);
                tc_error err;
                pq_page_map walk, pred;
                cr_assert_eq(pq_page_map_from_chunk(&ctx, chunk, clen, &walk, &err), TC_OK, "%s: %s",
                             f->name, err.msg);
                const char *why = pq_page_map_single_page_ruled_out(&ctx);
                if (why) {
                    cr_expect_gt(walk.n_data_pages, 1, "%s rg %u col %u: one page ruled out (%s)", f->name,
                                 g, c, why);
                    ruled_out_by_stats += strstr(why, "encoding_stats") != NULL;
                    cr_expect_eq(pq_page_map_predict_single_page(&ctx, &pred, &err), TC_E_INVALID);
                    pq_page_map_free(&walk);
                    continue;
                }
                cr_assert_eq(pq_page_map_predict_single_page(&ctx, &pred, &err), TC_OK, "%s", err.msg);
                cr_assert(pred.predicted);
                cr_assert_eq(pred.n_data_pages, 1);
                tc_status worst = TC_OK;
                for (uint32_t p = 0; p < pred.n_pages && worst == TC_OK; p++) {
                    const uint64_t rel = pred.pages[p].offset - pred.chunk_offset;
                    worst = pq_page_map_set_header(&pred, p, chunk + rel, clen - rel, &err);
                }
                if (walk.n_data_pages == 1) {
                    cr_expect_eq(worst, TC_OK, "%s rg %u col %u: %s", f->name, g, c, err.msg);
                    pq_mismatch mm;
                    cr_expect_eq(pq_page_map_cross_check(&pred, &walk, &mm), TC_OK, "%s: %s", f->name, mm.msg);
                    confirmed++;
                } else {
                    cr_expect_eq(worst, TC_E_MISMATCH, "%s rg %u col %u: %u pages predicted as one", f->name, g,
                                 c, walk.n_data_pages);
                    contradicted++;
                }
                pq_page_map_free(&pred);
                pq_page_map_free(&walk);
            }
    }
    cr_expect_gt(confirmed, 0, "DuckDB's single-page chunks are predicted");
    cr_expect_gt(ruled_out_by_stats, 0, "pyarrow's encoding_stats rule several pages out");
    cr_expect_eq(contradicted, 0, "every multi-page fixture chunk has encoding_stats");
    /* A writer that gives no encoding_stats for a chunk of four pages: the
     * prediction is made, and the first data page's header refutes it. */
    fixture *f = find("v1_plain_none_noindex");
    pq_column_ctx ctx = pq_column_ctx_of(f->m, 0, 1);
    pq_column_chunk bare = *ctx.chunk;
    bare.n_encoding_stats = 0;
    ctx.chunk = &bare;
    size_t clen;
    const uint8_t *chunk = chunk_bytes(f, &ctx, &clen);
    pq_page_map pred;
    tc_error err;
    cr_assert_eq(pq_page_map_predict_single_page(&ctx, &pred, &err), TC_OK, "%s", err.msg);
    const uint32_t dp = pred.dict_page == 0 ? 1 : 0;
    const uint64_t rel = pred.pages[dp].offset - pred.chunk_offset;
    cr_expect_eq(pq_page_map_set_header(&pred, dp, chunk + rel, clen - rel, &err), TC_E_MISMATCH);
    cr_expect_not(pred.pages[dp].has_header);
    pq_page_map_free(&pred);
}

Test(mismatch, dictionary_page)
{
    fixture *f = find("v1_dict_snappy_index");
    const pq_column_ctx ctx = pq_column_ctx_of(f->m, 0, 0);
    size_t clen;
    const uint8_t *chunk = chunk_bytes(f, &ctx, &clen);
    pq_offset_index oi;
    cr_assert(load_oi(f, ctx.chunk, &oi));
    tc_error err;
    pq_page_map idx, walk;
    cr_assert_eq(pq_page_map_from_offset_index(&ctx, &oi, &idx, &err), TC_OK, "%s", err.msg);
    cr_assert_eq(idx.dict_page, 0);
    cr_expect(idx.pages[0].inferred);
    cr_assert_eq(pq_page_map_from_chunk(&ctx, chunk, clen, &walk, &err), TC_OK);
    cr_assert_eq(walk.dict_page, 0);
    pq_mismatch mm;
    cr_expect_eq(pq_page_map_cross_check(&idx, &walk, &mm), TC_OK, "%s", mm.msg);
    /* the dictionary's header fills in the inferred entry */
    cr_assert_eq(pq_page_map_set_header(&idx, 0, chunk, clen, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(idx.pages[0].page_type, PQ_PAGE_DICTIONARY);
    /* a data page header where the dictionary is expected */
    cr_expect_eq(pq_page_map_set_header(&idx, 0, f->data + idx.pages[1].offset,
                                        f->len - idx.pages[1].offset, &err),
                 TC_E_MISMATCH);
    /* a map without the dictionary page */
    idx.dict_page = -1;
    cr_expect_eq(pq_page_map_cross_check(&idx, &walk, &mm), TC_E_MISMATCH);
    cr_expect_str_eq(mm.field, "dictionary");
    pq_page_map_free(&idx);
    pq_page_map_free(&walk);
    pq_offset_index_free(&oi);
}

Test(malformed, chunks)
{
    fixture *f = find("v1_plain_none_noindex");
    pq_column_ctx ctx = pq_column_ctx_of(f->m, 0, 1);
    size_t clen;
    const uint8_t *chunk = chunk_bytes(f, &ctx, &clen);
    tc_error err;
    pq_page_map pm;

    /* short buffer */
    cr_expect_eq(pq_page_map_from_chunk(&ctx, chunk, clen - 1, &pm, &err), TC_E_NEED_MORE);
    cr_expect_eq(pq_page_map_from_chunk(&ctx, NULL, 0, &pm, &err), TC_E_NEED_MORE);

    /* chunk metadata claiming fewer bytes: the last body runs past its end */
    pq_column_chunk c = *ctx.chunk;
    c.total_compressed_size -= 3;
    pq_column_ctx bad = ctx;
    bad.chunk = &c;
    cr_expect_eq(pq_page_map_from_chunk(&bad, chunk, clen, &pm, &err), TC_E_RANGE);
    cr_expect(strstr(err.msg, "runs past the column chunk end") != NULL, "%s", err.msg);

    /* wrong num_values */
    c = *ctx.chunk;
    c.num_values += 1;
    cr_expect_eq(pq_page_map_from_chunk(&bad, chunk, clen, &pm, &err), TC_E_MISMATCH);
    cr_expect(strstr(err.msg, "num_values") != NULL, "%s", err.msg);

    /* wrong row count */
    bad = ctx;
    bad.row_group_rows += 1;
    cr_expect_eq(pq_page_map_from_chunk(&bad, chunk, clen, &pm, &err), TC_E_MISMATCH);

    /* a corrupted header byte in the second page: error names page and offset */
    uint8_t *copy = malloc(clen);
    memcpy(copy, chunk, clen);
    cr_assert_eq(pq_page_map_from_chunk(&ctx, copy, clen, &pm, &err), TC_OK);
    cr_assert_geq(pm.n_pages, 2);
    const uint64_t second = pm.pages[1].offset - pm.chunk_offset;
    pq_page_map_free(&pm);
    copy[second] = 0xff;
    cr_expect_neq(pq_page_map_from_chunk(&ctx, copy, clen, &pm, &err), TC_OK);
    cr_expect(strstr(err.msg, "page 1 at file offset") != NULL, "%s", err.msg);
    cr_expect_null(pm.pages);

    /* every single-byte corruption of the chunk is an error or a valid map */
    for (size_t i = 0; i < clen; i += 7) {
        memcpy(copy, chunk, clen);
        copy[i] ^= 0x5a;
        if (pq_page_map_from_chunk(&ctx, copy, clen, &pm, &err) == TC_OK)
            pq_page_map_free(&pm);
        else
            cr_assert(err.msg[0]);
    }
    free(copy);

    cr_expect_eq(pq_page_map_build(&ctx, NULL, NULL, 0, &pm, NULL, &err), TC_E_INVALID);
}

/* ------------------------------------------------------------------ */
/* eligibility rules on a hand-made map                                */
/* ------------------------------------------------------------------ */

static pq_page_map one_page(pq_physical_type t, pq_codec codec, int32_t encoding)
{
    static pq_page page;
    memset(&page, 0, sizeof page);
    page.is_data = true;
    page.has_header = true;
    page.page_type = PQ_PAGE_DATA;
    page.encoding = encoding;
    page.compressed_size = 0;
    page.uncompressed_size = 0;
    pq_page_map pm;
    memset(&pm, 0, sizeof pm);
    pm.pages = &page;
    pm.n_pages = 1;
    pm.n_data_pages = 1;
    pm.dict_page = -1;
    pm.has_offset_index = true;
    pm.type = t;
    pm.type_length = t == PQ_FIXED_LEN_BYTE_ARRAY ? 16 : -1;
    pm.codec = codec;
    pm.max_def = 1;
    return pm;
}

static const char *why(pq_page_map pm)
{
    return pq_elig_reason(pq_page_eligibility(&pm, 0, NULL, 0));
}

Test(eligibility, rules)
{
    cr_expect_str_eq(why(one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN)), "eligible");
    cr_expect_str_eq(why(one_page(PQ_INT96, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN)), "eligible");
    cr_expect_str_eq(why(one_page(PQ_FIXED_LEN_BYTE_ARRAY, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN)),
                     "eligible");
    cr_expect_str_eq(why(one_page(PQ_BYTE_ARRAY, PQ_CODEC_UNCOMPRESSED,
                                  PQ_ENC_DELTA_LENGTH_BYTE_ARRAY)),
                     "eligible");
    cr_expect_str_eq(why(one_page(PQ_BYTE_ARRAY, PQ_CODEC_ZSTD, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY)),
                     "compressed");
    cr_expect_str_eq(why(one_page(PQ_BYTE_ARRAY, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN)),
                     "byte_array_plain");
    cr_expect_str_eq(why(one_page(PQ_BOOLEAN, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN)), "boolean");
    cr_expect_str_eq(why(one_page(PQ_BOOLEAN, PQ_CODEC_UNCOMPRESSED, PQ_ENC_RLE)), "boolean");
    cr_expect_str_eq(why(one_page(PQ_INT64, PQ_CODEC_UNCOMPRESSED, PQ_ENC_RLE_DICTIONARY)),
                     "dictionary");
    cr_expect_str_eq(why(one_page(PQ_INT64, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN_DICTIONARY)),
                     "dictionary");
    cr_expect_str_eq(why(one_page(PQ_INT64, PQ_CODEC_UNCOMPRESSED, PQ_ENC_DELTA_BINARY_PACKED)),
                     "encoding");
    cr_expect_str_eq(why(one_page(PQ_DOUBLE, PQ_CODEC_UNCOMPRESSED, PQ_ENC_BYTE_STREAM_SPLIT)),
                     "encoding");
    cr_expect_str_eq(why(one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED,
                                  PQ_ENC_DELTA_LENGTH_BYTE_ARRAY)),
                     "encoding");
    cr_expect_str_eq(why(one_page(PQ_INT32, PQ_CODEC_SNAPPY, PQ_ENC_PLAIN)), "snappy_unchecked");
    cr_expect_str_eq(why(one_page(PQ_INT32, PQ_CODEC_GZIP, PQ_ENC_PLAIN)), "compressed");
    cr_expect_str_eq(why(one_page(PQ_INT32, PQ_CODEC_ZSTD, PQ_ENC_PLAIN)), "zstd_unchecked");

    pq_page_map pm = one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN);
    pm.max_def = 2;
    cr_expect_str_eq(why(pm), "nested");
    pm = one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN);
    pm.max_rep = 1;
    cr_expect_str_eq(why(pm), "nested");
    pm = one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN);
    pm.max_def = 0;
    cr_expect_str_eq(why(pm), "eligible");
    pm.has_offset_index = false;
    cr_expect_str_eq(why(pm), "no_offset_index");
    pm = one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN);
    pm.pages[0].page_type = PQ_PAGE_DATA_V2;
    cr_expect_str_eq(why(pm), "v2_page");
    pm = one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN);
    pm.pages[0].has_header = false;
    cr_expect_str_eq(why(pm), "no_header");
    pm = one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN);
    pm.pages[0].is_data = false;
    pm.pages[0].page_type = PQ_PAGE_DICTIONARY;
    cr_expect_str_eq(why(pm), "not_data_page");
    cr_expect_eq(pq_page_eligibility(&pm, 5, NULL, 0), PQ_ELIG_NOT_DATA_PAGE);

    pm = one_page(PQ_INT32, PQ_CODEC_UNCOMPRESSED, PQ_ENC_PLAIN);
    pm.pages[0].has_crc = true;
    pm.pages[0].crc_len = 5;
    cr_expect_str_eq(why(pm), "eligible");
    pm.pages[0].crc_len = 4;
    cr_expect_str_eq(why(pm), "crc");
    pm.pages[0].crc_len = 0; /* crc not written as a varint i32 */
    cr_expect_str_eq(why(pm), "crc");

    /* ZSTD with a body */
    static const uint8_t raw[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 8,   /* SS, FCS 1 byte */
                                  0x41, 0x00, 0x00,                  /* raw, last, size 8 */
                                  1,    2,    3,    4,    5, 6, 7, 8};
    pm = one_page(PQ_INT64, PQ_CODEC_ZSTD, PQ_ENC_PLAIN);
    pm.pages[0].compressed_size = sizeof raw;
    pm.pages[0].uncompressed_size = 8;
    cr_expect_eq(pq_page_eligibility(&pm, 0, raw, sizeof raw), PQ_ELIG_OK);
    cr_expect_eq(pq_page_eligibility(&pm, 0, raw, sizeof raw - 1), PQ_ELIG_ZSTD_UNCHECKED);
    pm.pages[0].uncompressed_size = 9;
    cr_expect_eq(pq_page_eligibility(&pm, 0, raw, sizeof raw), PQ_ELIG_ZSTD_FRAME);
    pm.pages[0].has_crc = true;
    pm.pages[0].crc_len = 2;
    pm.pages[0].uncompressed_size = 8;
    cr_expect_eq(pq_page_eligibility(&pm, 0, raw, sizeof raw), PQ_ELIG_CRC);

    for (int e = PQ_ELIG_OK; e <= PQ_ELIG_CRC; e++)
        cr_expect_str_neq(pq_elig_reason((pq_elig)e), "unknown");
}

/* ------------------------------------------------------------------ */
/* zstd frame walking                                                  */
/* ------------------------------------------------------------------ */

typedef struct {
    uint8_t b[512];
    size_t n;
} zb;

static void z_put(zb *z, const void *p, size_t n)
{
    memcpy(z->b + z->n, p, n);
    z->n += n;
}

static void z_magic(zb *z)
{
    z_put(z, "\x28\xb5\x2f\xfd", 4);
}

static void z_block(zb *z, int type, bool last, uint32_t size)
{
    const uint32_t h = (size << 3) | ((uint32_t)type << 1) | (last ? 1u : 0u);
    const uint8_t b[3] = {(uint8_t)h, (uint8_t)(h >> 8), (uint8_t)(h >> 16)};
    z_put(z, b, 3);
    const uint32_t content = type == PQ_ZSTD_RLE ? 1 : size;
    memset(z->b + z->n, 0xab, content);
    z->n += content;
}

Test(zstd, header_fields)
{
    zb z = {0};
    z_magic(&z);
    /* FCS flag 1 (2 bytes, +256), window descriptor, DictID flag 2 (2 bytes), checksum */
    const uint8_t hdr[] = {0x46, 0x00 /* window 1 KiB */, 0x34, 0x12, 0x04, 0x00};
    z_put(&z, hdr, sizeof hdr);
    z_block(&z, PQ_ZSTD_RAW, false, 100);
    z_block(&z, PQ_ZSTD_RLE, false, 50);
    z_block(&z, PQ_ZSTD_COMPRESSED, false, 30);
    z_block(&z, PQ_ZSTD_RAW, true, 10);
    z_put(&z, "\x01\x02\x03\x04", 4);
    pq_zstd_frame f;
    tc_error err;
    cr_assert_eq(pq_zstd_inspect(z.b, z.n, true, &f, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(f.header_len, 10);
    cr_expect(f.has_dict_id);
    cr_expect_eq(f.dict_id, 0x1234);
    cr_expect(f.has_content_size);
    cr_expect_eq(f.content_size, 4 + 256);
    cr_expect(f.has_checksum);
    cr_expect_not(f.single_segment);
    cr_expect_eq(f.window_size, 1024);
    cr_expect(f.single_frame);
    cr_expect_eq(f.frame_len, z.n);
    cr_expect_not(f.all_raw);
    cr_expect(f.has_compressed);
    cr_assert_eq(f.n_blocks, 4);
    cr_expect_eq(f.blocks[0].header_offset, 10);
    cr_expect_eq(f.blocks[0].decompressed_offset, 0);
    cr_expect_eq(f.blocks[1].decompressed_offset, 100);
    cr_expect_eq(f.blocks[1].header_offset, 10 + 3 + 100);
    cr_expect_eq(f.blocks[2].decompressed_offset, 150);
    cr_expect_eq(f.blocks[3].decompressed_offset, UINT64_MAX);
    cr_expect(f.blocks[3].last);
    pq_zstd_frame_free(&f);
    cr_expect_eq(pq_zstd_page_verdict(z.b, z.n, 260), PQ_ELIG_ZSTD_FRAME); /* dict id */

    /* trailing bytes: not a single frame */
    zb t = {0};
    z_magic(&t);
    z_put(&t, "\x20\x05", 2);
    z_block(&t, PQ_ZSTD_RAW, true, 5);
    cr_expect_eq(pq_zstd_page_verdict(t.b, t.n, 5), PQ_ELIG_OK);
    z_put(&t, "\x00", 1);
    cr_assert_eq(pq_zstd_inspect(t.b, t.n, false, &f, &err), TC_OK);
    cr_expect_not(f.single_frame);
    cr_expect_null(f.blocks);
    cr_expect_eq(pq_zstd_page_verdict(t.b, t.n, 5), PQ_ELIG_ZSTD_FRAME);

    /* Dictionary_ID of 0 means none */
    zb d = {0};
    z_magic(&d);
    z_put(&d, "\x21\x00\x03", 3); /* SS, DID 1 byte = 0, FCS 1 byte = 3 */
    z_block(&d, PQ_ZSTD_RAW, true, 3);
    cr_assert_eq(pq_zstd_inspect(d.b, d.n, false, &f, &err), TC_OK, "%s", err.msg);
    cr_expect_not(f.has_dict_id);
    cr_expect_eq(pq_zstd_page_verdict(d.b, d.n, 3), PQ_ELIG_OK);
    cr_expect_eq(pq_zstd_page_verdict(d.b, d.n, 4), PQ_ELIG_ZSTD_FRAME);

    /* RLE and compressed blocks */
    zb r = {0};
    z_magic(&r);
    z_put(&r, "\x20\x0a", 2);
    z_block(&r, PQ_ZSTD_RAW, false, 5);
    z_block(&r, PQ_ZSTD_RLE, true, 5);
    cr_expect_eq(pq_zstd_page_verdict(r.b, r.n, 10), PQ_ELIG_ZSTD_COMPRESSED_BLOCKS);
    cr_assert_eq(pq_zstd_inspect(r.b, r.n, false, &f, &err), TC_OK);
    cr_expect_eq(f.known_size, 10);

    /* 8-byte FCS and 4-byte FCS */
    zb e = {0};
    z_magic(&e);
    z_put(&e, "\xe0\x02\x00\x00\x00\x00\x00\x00\x00", 9);
    z_block(&e, PQ_ZSTD_RAW, true, 2);
    cr_assert_eq(pq_zstd_inspect(e.b, e.n, false, &f, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(f.content_size, 2);
    cr_expect_eq(f.window_size, 2);
}

Test(zstd, malformed)
{
    pq_zstd_frame f;
    tc_error err;
    cr_expect_eq(pq_zstd_inspect((const uint8_t *)"\x28\xb5\x2f", 3, false, &f, &err),
                 TC_E_TRUNCATED);
    cr_expect_eq(pq_zstd_inspect((const uint8_t *)"\x50\x2a\x4d\x18\x00\x00", 6, false, &f, &err),
                 TC_E_MAGIC);
    cr_expect(strstr(err.msg, "skippable") != NULL);
    cr_expect_eq(pq_zstd_inspect((const uint8_t *)"PAR1\x00\x00", 6, false, &f, &err), TC_E_MAGIC);

    zb z = {0};
    z_magic(&z);
    z_put(&z, "\x28\x05", 2); /* reserved bit */
    z_block(&z, PQ_ZSTD_RAW, true, 5);
    cr_expect_eq(pq_zstd_inspect(z.b, z.n, false, &f, &err), TC_E_INVALID);

    zb r = {0};
    z_magic(&r);
    z_put(&r, "\x20\x05", 2);
    z_block(&r, 3, true, 0); /* reserved block type */
    cr_expect_eq(pq_zstd_inspect(r.b, r.n, true, &f, &err), TC_E_INVALID);
    cr_expect_null(f.blocks);

    zb big = {0};
    z_magic(&big);
    z_put(&big, "\x20\x05", 2); /* window = content size = 5 */
    z_block(&big, PQ_ZSTD_RAW, true, 6);
    cr_expect_eq(pq_zstd_inspect(big.b, big.n, false, &f, &err), TC_E_INVALID);
    cr_expect(strstr(err.msg, "Block_Maximum_Size") != NULL, "%s", err.msg);

    zb t = {0};
    z_magic(&t);
    z_put(&t, "\x20\x10", 2);
    z_block(&t, PQ_ZSTD_RAW, false, 8);
    /* no last block */
    for (size_t cut = 0; cut < t.n; cut++)
        cr_expect_neq(pq_zstd_inspect(t.b, cut, true, &f, &err), TC_OK);
    cr_expect_eq(pq_zstd_inspect(t.b, t.n, true, &f, &err), TC_E_TRUNCATED);
    cr_expect_null(f.blocks);

    zb c = {0};
    z_magic(&c);
    z_put(&c, "\x24\x03", 2); /* checksum flag, checksum missing */
    z_block(&c, PQ_ZSTD_RAW, true, 3);
    cr_expect_eq(pq_zstd_inspect(c.b, c.n, false, &f, &err), TC_E_TRUNCATED);
    z_put(&c, "\x00\x00\x00\x00", 4);
    cr_expect_eq(pq_zstd_inspect(c.b, c.n, false, &f, &err), TC_OK);
    cr_expect_eq(pq_zstd_page_verdict(c.b, c.n, 3), PQ_ELIG_ZSTD_FRAME);
}

/* A one-page map whose page is the chunk's dictionary page. */
static pq_page_map dict_page(pq_physical_type t, pq_codec codec, uint16_t max_def)
{
    pq_page_map pm = one_page(t, codec, PQ_ENC_PLAIN);
    pm.pages[0].is_data = false;
    pm.pages[0].page_type = PQ_PAGE_DICTIONARY;
    pm.n_data_pages = 0;
    pm.dict_page = 0;
    pm.max_def = max_def;
    return pm;
}

Test(eligibility, snappy_streams_and_dictionary_pages)
{
    /* Fixed-width dictionaries a view keeps in part; strings and booleans not. */
    cr_expect_str_eq(why(dict_page(PQ_DOUBLE, PQ_CODEC_UNCOMPRESSED, 1)), "dictionary_entries");
    cr_expect_str_eq(why(dict_page(PQ_FIXED_LEN_BYTE_ARRAY, PQ_CODEC_UNCOMPRESSED, 0)), "dictionary_entries");
    cr_expect_str_eq(why(dict_page(PQ_BYTE_ARRAY, PQ_CODEC_UNCOMPRESSED, 1)), "dictionary_strings");
    cr_expect_str_eq(why(dict_page(PQ_DOUBLE, PQ_CODEC_GZIP, 1)), "compressed");
    cr_expect_str_eq(why(dict_page(PQ_DOUBLE, PQ_CODEC_SNAPPY, 1)), "snappy_unchecked");
    cr_expect_str_eq(why(dict_page(PQ_DOUBLE, PQ_CODEC_UNCOMPRESSED, 2)), "nested");
    /* Snappy bodies: literals only, or copies. */
    static const uint8_t literals[] = {5, 4 << 2, 'a', 'b', 'c', 'd', 'e'};
    static const uint8_t copies[] = {8, 3 << 2, 'a', 'b', 'c', 'd', 1 | (0 << 2), 4};
    static const uint8_t short_stream[] = {9, 4 << 2, 'a', 'b', 'c', 'd', 'e'};
    pq_page_map pm = dict_page(PQ_INT32, PQ_CODEC_SNAPPY, 1);
    pm.pages[0].compressed_size = sizeof literals;
    pm.pages[0].uncompressed_size = 5;
    cr_expect_str_eq(pq_elig_reason(pq_page_eligibility(&pm, 0, literals, sizeof literals)), "dictionary_entries");
    pm = one_page(PQ_INT32, PQ_CODEC_SNAPPY, PQ_ENC_PLAIN);
    pm.pages[0].compressed_size = sizeof literals;
    pm.pages[0].uncompressed_size = 5;
    cr_expect_str_eq(pq_elig_reason(pq_page_eligibility(&pm, 0, literals, sizeof literals)), "snappy_literals");
    cr_expect(pq_elig_is_eligible(PQ_ELIG_SNAPPY_LITERALS));
    pm.pages[0].compressed_size = sizeof copies;
    pm.pages[0].uncompressed_size = 8;
    cr_expect_str_eq(pq_elig_reason(pq_page_eligibility(&pm, 0, copies, sizeof copies)), "snappy_copies");
    pm.pages[0].compressed_size = sizeof short_stream;
    pm.pages[0].uncompressed_size = 9;
    cr_expect_str_eq(pq_elig_reason(pq_page_eligibility(&pm, 0, short_stream, sizeof short_stream)),
                     "snappy_copies", "a stream shorter than its preamble says is malformed");
    cr_expect_eq(pq_snappy_inspect(short_stream, sizeof short_stream, NULL), PQ_SNAPPY_MALFORMED);
    cr_expect_eq(pq_snappy_inspect(copies, sizeof copies, NULL), PQ_SNAPPY_COPIES);
}
