#include "selection.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "page_map.h"
#include "pq_value.h"
#include "sv_grow.h"

/* Decode one filter column chunk of a row group into per-row values. BYTES
 * values are copied into *arena (pointers fixed up at the end). */
typedef struct {
    pqv *values;
    uint8_t *nulls;
    uint8_t *arena;
    size_t arena_len, arena_cap;
} col_vec;

static void col_vec_free(col_vec *c)
{
    free(c->values);
    free(c->nulls);
    free(c->arena);
}

static int decode_filter_chunk(const pq_file_meta *m, uint32_t rg, uint32_t leaf, const uint8_t *chunk,
                               size_t chunk_len, uint32_t nrows, col_vec *out, char *err, size_t errlen)
{
    const pq_leaf *lf = &m->leaves[leaf];
    pqv_type t;
    pqd_error derr;
    if (pqv_type_from_leaf(lf, &t, &derr) != PQD_OK) {
        snprintf(err, errlen, "column %s: %s", lf->path, derr.msg);
        return -1;
    }
    pq_column_ctx ctx = pq_column_ctx_of(m, rg, leaf);
    pq_page_map pm;
    tc_error terr;
    memset(&terr, 0, sizeof terr);
    if (pq_page_map_from_chunk(&ctx, chunk, chunk_len, &pm, &terr) != TC_OK) {
        snprintf(err, errlen, "column %s: %s", lf->path, terr.msg);
        return -1;
    }
    out->values = calloc(nrows ? nrows : 1, sizeof *out->values);
    out->nulls = calloc(nrows ? nrows : 1, 1);
    pq_decoder *dec = pq_decoder_new(NULL);
    pq_dictionary dict;
    memset(&dict, 0, sizeof dict);
    bool have_dict = false;
    int rc = 0;
    if (!out->values || !out->nulls || !dec) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    pq_column_desc cd = {lf->type, lf->type_length, lf->max_def, lf->max_rep, ctx.chunk->codec};
    uint32_t row = 0;
    for (uint32_t i = 0; rc == 0 && i < pm.n_pages; i++) {
        const pq_page *pg = &pm.pages[i];
        uint64_t rel = pg->offset - pm.chunk_offset;
        pq_page_header h;
        size_t hlen = 0;
        if (pq_page_header_parse(chunk + rel, pg->total_size, &h, &hlen, &terr) != TC_OK) {
            snprintf(err, errlen, "column %s: %s", lf->path, terr.msg);
            rc = -1;
            break;
        }
        const uint8_t *body = chunk + rel + hlen;
        size_t blen = pg->total_size - hlen;
        if (h.type == PQ_PAGE_DICTIONARY) {
            pq_dict_page_info di;
            if (have_dict || pq_dict_page_info_from_header(&h, &di, &derr) != PQD_OK ||
                pq_decode_dictionary(dec, &cd, &di, body, blen, &dict, &derr) != PQD_OK) {
                snprintf(err, errlen, "column %s dictionary: %s", lf->path,
                         have_dict ? "two dictionary pages" : derr.msg);
                rc = -1;
                break;
            }
            have_dict = true;
            continue;
        }
        if (!pg->is_data)
            continue;
        pq_data_page_info info;
        pq_page_values pv;
        if (pq_data_page_info_from_header(&h, &info, &derr) != PQD_OK ||
            pq_decode_data_page(dec, &cd, &info, body, blen, have_dict ? &dict : NULL, &pv, &derr) != PQD_OK) {
            snprintf(err, errlen, "column %s page at %llu: %s", lf->path, (unsigned long long)pg->offset,
                     derr.msg);
            rc = -1;
            break;
        }
        if (pv.num_values > nrows - row) {
            snprintf(err, errlen, "column %s: more values than the row group's %u rows", lf->path, nrows);
            rc = -1;
            break;
        }
        uint32_t k = 0;
        for (uint32_t e = 0; e < pv.num_values; e++, row++) {
            if (pv.def_levels && pv.def_levels[e] < lf->max_def) {
                out->nulls[row] = 1;
                continue;
            }
            pqv val;
            if (pqv_from_page(&t, &pv, k++, &val, &derr) != PQD_OK) {
                snprintf(err, errlen, "column %s: %s", lf->path, derr.msg);
                rc = -1;
                break;
            }
            if (val.kind == PQV_BYTES) {
                size_t need = out->arena_len + val.v.bytes.len;
                if (need > SELECTION_MAX_FILTER_BYTES) {
                    snprintf(err, errlen, "column %s: more than %llu bytes of values in a row group",
                             lf->path, (unsigned long long)SELECTION_MAX_FILTER_BYTES);
                    rc = -1;
                    break;
                }
                if (!sv_grow((void **)&out->arena, &out->arena_cap, need, 1, 65536, SELECTION_MAX_FILTER_BYTES)) {
                    snprintf(err, errlen, "out of memory");
                    rc = -1;
                    break;
                }
                if (val.v.bytes.len)
                    memcpy(out->arena + out->arena_len, val.v.bytes.ptr, val.v.bytes.len);
                val.v.bytes.ptr = (const uint8_t *)(uintptr_t)out->arena_len; /* fixed up below */
                out->arena_len = need;
            }
            out->values[row] = val;
        }
    }
    if (rc == 0 && row != nrows) {
        snprintf(err, errlen, "column %s: %u values for %u rows", lf->path, row, nrows);
        rc = -1;
    }
    if (rc == 0 && t.kind == PQV_BYTES)
        for (uint32_t r = 0; r < nrows; r++)
            if (!out->nulls[r])
                out->values[r].v.bytes.ptr = out->arena + (uintptr_t)out->values[r].v.bytes.ptr;
    if (have_dict)
        pq_dictionary_free(&dict);
    pq_decoder_free(dec);
    pq_page_map_free(&pm);
    return rc;
}

typedef struct {
    const pred_bound *b;
    const pq_row_group *rg;
} stats_ctx;

static bool rg_stats(void *ud, size_t col, pred_col_stats *out)
{
    stats_ctx *c = ud;
    const pq_column_chunk *cc = &c->rg->columns[pred_bound_leaf(c->b, col)];
    if (!cc->has_statistics)
        return false;
    return pred_stats_from_parquet(c->b, col, &cc->statistics, c->rg->num_rows, out);
}

bool selection_group_needs_filter(const pq_file_meta *m, const pred_bound *b, uint32_t g)
{
    const pq_row_group *rg = &m->row_groups[g];
    if (rg->num_rows <= 0 || rg->num_rows > SELECTION_MAX_ROWS_PER_GROUP)
        return false;
    stats_ctx sc = {b, rg};
    return pred_may_match(b, rg_stats, &sc);
}

bool selection_filter_chunk(const pq_file_meta *m, const object_ref *o, const pred_bound *b, uint32_t g,
                            size_t col, uint64_t *off, uint64_t *len)
{
    const pq_row_group *rg = &m->row_groups[g];
    return pq_column_chunk_range(&rg->columns[pred_bound_leaf(b, col)], off, len) && *off < o->size &&
           *len <= o->size - *off && *len > 0 && *len <= SELECTION_MAX_FILTER_CHUNK;
}

/* Evaluate the predicate on row group g; selected rows appended to *sel
 * (relative to the group). */
int selection_of_row_group(object_io *io, const object_ref *o, const pq_file_meta *m, const pred_bound *b,
                           uint32_t g, row_ranges *sel, sv_error *error, const sv_cancel *tok)
{
    char err[SV_ERROR_MSG];
    const size_t errlen = sizeof err;
    const pq_row_group *rg = &m->row_groups[g];
    if (rg->num_rows < 0 || rg->num_rows > SELECTION_MAX_ROWS_PER_GROUP) {
        sv_fail(error, SELECTION_E_LIMIT, 0, "row group %u has %lld rows (limit %u)", g, (long long)rg->num_rows,
                SELECTION_MAX_ROWS_PER_GROUP);
        return -1;
    }
    uint32_t nrows = (uint32_t)rg->num_rows;
    if (nrows == 0)
        return 0;
    stats_ctx sc = {b, rg};
    if (!pred_may_match(b, rg_stats, &sc))
        return 0; /* statistics prove no row matches */
    size_t ncols = pred_bound_ncols(b);
    col_vec *cols = calloc(ncols, sizeof *cols);
    pred_column_vec *pc = calloc(ncols, sizeof *pc);
    uint8_t *bits = malloc(nrows);
    int rc = (cols && pc && bits) ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; rc == 0 && i < ncols; i++) {
        uint32_t leaf = pred_bound_leaf(b, i);
        uint64_t off, len;
        if (!selection_filter_chunk(m, o, b, g, i, &off, &len)) {
            snprintf(err, errlen, "filter column %s: chunk out of range or too large",
                     m->leaves[leaf].path);
            rc = -1;
            break;
        }
        uint8_t *buf = malloc(len ? (size_t)len : 1);
        if (!buf) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        object_prefetch(io, o, off, off + len, 0, true);
        if (object_read(io, o, off, (size_t)len, buf, tok) != (ssize_t)len) {
            snprintf(err, errlen, "filter column %s: read failed", m->leaves[leaf].path);
            rc = -1;
        } else {
            rc = decode_filter_chunk(m, g, leaf, buf, (size_t)len, nrows, &cols[i], err, errlen);
        }
        free(buf);
        pc[i].is_null = cols ? cols[i].nulls : NULL;
        pc[i].values = cols ? cols[i].values : NULL;
    }
    if (rc == 0) {
        pred_error perr;
        if (pred_eval(b, pc, nrows, bits, &perr) != PRED_OK) {
            snprintf(err, errlen, "where: %s", perr.msg);
            rc = -1;
        } else if (!row_ranges_from_bitmap(sel, bits, nrows, 0)) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    for (size_t i = 0; cols && i < ncols; i++)
        col_vec_free(&cols[i]);
    free(cols);
    free(pc);
    free(bits);
    if (rc != 0)
        sv_fail(error, SELECTION_E_FILTER, 0, "%s", err);
    return rc;
}
