#include "selection.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_values.h"

/* One filter column chunk of a row group, decoded: a value and a null flag
 * per row. */
typedef struct {
    pq_chunk_values cv;
    uint8_t *nulls;
} col_vec;

static void col_vec_free(col_vec *c)
{
    pq_chunk_values_free(&c->cv);
    free(c->nulls);
}

static int decode_filter_chunk(const pq_file_meta *m, uint32_t rg, uint32_t leaf, const uint8_t *chunk,
                               size_t chunk_len, uint32_t nrows, col_vec *out, char *err, size_t errlen)
{
    const pq_chunk_limits lim = {.max_entries = nrows, .max_value_bytes = SELECTION_MAX_FILTER_BYTES};
    sv_error e;
    if (m->leaves[leaf].max_rep > 0) {
        snprintf(err, errlen, "column %s: a repeated column cannot be filtered on", m->leaves[leaf].path);
        return -1;
    }
    if (pq_chunk_values_decode(m, rg, leaf, chunk, chunk_len, nrows, &lim, &out->cv, &e) != 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    out->nulls = calloc(nrows ? nrows : 1, 1);
    if (!out->nulls) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t r = 0; r < nrows; r++)
        out->nulls[r] = !pq_chunk_has_value(&out->cv, r);
    return 0;
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
        pc[i].values = cols ? cols[i].cv.values : NULL;
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
