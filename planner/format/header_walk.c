/* Page maps from page headers fetched in rounds; see header_walk.h. */
#include "header_walk.h"

#include "sv_grow.h"

#include <stdlib.h>
#include <string.h>

tc_status pq_header_walk_init(pq_header_walk *w, const pq_column_ctx *col, tc_error *err)
{
    memset(w, 0, sizeof *w);
    if (!col || !col->chunk || !col->leaf)
        return sv_fail(err, TC_E_INVALID, 0, "no column chunk given");
    if (col->leaf->max_rep > 0 || col->leaf->nested)
        return sv_fail(err, TC_E_INVALID, 0, "nested column: rows are not values");
    const pq_column_chunk *c = col->chunk;
    uint64_t start = 0, len = 0;
    if (!pq_column_chunk_range(c, &start, &len) || len > INT64_MAX - start)
        return sv_fail(err, TC_E_RANGE, 0, "column chunk byte range overflows");
    if (c->data_page_offset < 0 || (uint64_t)c->data_page_offset < start ||
        (uint64_t)c->data_page_offset >= start + len)
        return sv_fail(err, TC_E_RANGE, 0, "data_page_offset %lld is not in the column chunk [%llu, %llu)",
                       (long long)c->data_page_offset, (unsigned long long)start,
                       (unsigned long long)(start + len));
    if (col->row_group_rows <= 0)
        return sv_fail(err, TC_E_INVALID, 0, "row group of %lld rows", (long long)col->row_group_rows);
    w->col = *col;
    w->chunk_end = start + len;
    w->next_offset = (uint64_t)c->data_page_offset;
    w->next_window = PQ_HEADER_WINDOW;
    return TC_OK;
}

static void drop_windows(pq_header_window *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(v[i].bytes);
}

void pq_header_walk_free(pq_header_walk *w)
{
    if (!w)
        return;
    drop_windows(w->confirmed, w->n_pages);
    drop_windows(w->fed, w->n_fed);
    free(w->confirmed);
    free(w->pages);
    free(w->fed);
    memset(w, 0, sizeof *w);
}

static uint32_t clip(const pq_header_walk *w, uint64_t off, uint32_t len)
{
    uint64_t left = w->chunk_end - off;
    return left < len ? (uint32_t)left : len;
}

size_t pq_header_walk_wants(const pq_header_walk *w, pq_header_want *out, size_t max)
{
    if (w->done || w->failed || max == 0 || w->next_offset >= w->chunk_end)
        return 0;
    size_t n = 0;
    out[n++] = (pq_header_want){w->next_offset, clip(w, w->next_offset, w->next_window)};
    if (w->regular_size == 0)
        return n;
    /* Where the following headers are if every page is this size; the
     * last page may be shorter. */
    uint64_t pages_left = PQ_HEADER_WALK_MAX_PAGES - w->n_pages;
    for (uint64_t off = w->next_offset + w->regular_size; off < w->chunk_end && n < max && n <= pages_left;
         off += w->regular_size)
        out[n++] = (pq_header_want){off, clip(w, off, PQ_HEADER_WINDOW)};
    return n;
}

tc_status pq_header_walk_feed(pq_header_walk *w, uint64_t offset, const uint8_t *buf, size_t len)
{
    if (w->done || w->failed || offset < w->next_offset || offset >= w->chunk_end || len == 0)
        return TC_OK; /* nothing the walk can still use */
    if (len > PQ_HEADER_WINDOW_MAX)
        len = PQ_HEADER_WINDOW_MAX;
    if (!sv_grow((void **)&w->fed, &w->cap_fed, (size_t)w->n_fed + 1, sizeof *w->fed, 16,
                 PQ_HEADER_WALK_MAX_PAGES + PQ_HEADER_WALK_MAX_WANTS))
        return sv_fail(&w->err, TC_E_NOMEM, 0, "out of memory");
    uint8_t *copy = malloc(len);
    if (!copy)
        return sv_fail(&w->err, TC_E_NOMEM, 0, "out of memory");
    memcpy(copy, buf, len);
    w->fed[w->n_fed++] = (pq_header_window){offset, copy, (uint32_t)len};
    return TC_OK;
}

static void fail(pq_header_walk *w, tc_status code, uint64_t off, const char *what, long long a, long long b)
{
    w->failed = true;
    sv_fail(&w->err, code, (size_t)off, "page header at file offset %llu: %s (%lld, %lld)",
            (unsigned long long)off, what, a, b);
}

/* The fed window starting at the end of the chain, or NULL. */
static pq_header_window *window_at_chain(pq_header_walk *w)
{
    for (uint32_t i = 0; i < w->n_fed; i++)
        if (w->fed[i].bytes && w->fed[i].offset == w->next_offset)
            return &w->fed[i];
    return NULL;
}

/* Confirm the header in win (at the end of the chain): false when the walk
 * must wait for a longer window or has failed. */
static bool confirm(pq_header_walk *w, pq_header_window *win)
{
    pq_page_header h;
    size_t hl = 0;
    tc_error e;
    tc_status s = pq_page_header_parse(win->bytes, win->len, &h, &hl, &e);
    const uint64_t left = w->chunk_end - win->offset;
    if (s == TC_E_TRUNCATED && win->len < left) {
        if (win->len >= PQ_HEADER_WINDOW_MAX) {
            fail(w, TC_E_RANGE, win->offset, "header longer than the largest window", (long long)win->len,
                 (long long)PQ_HEADER_WINDOW_MAX);
        } else {
            uint64_t more = (uint64_t)win->len * 4;
            w->next_window = more > PQ_HEADER_WINDOW_MAX ? PQ_HEADER_WINDOW_MAX : (uint32_t)more;
        }
        return false;
    }
    if (s != TC_OK) {
        w->failed = true;
        sv_fail(&w->err, s, (size_t)(win->offset + e.offset), "page header at file offset %llu: %s",
                (unsigned long long)win->offset, e.msg);
        return false;
    }
    int64_t rows = -1;
    if (h.type == PQ_PAGE_DATA)
        rows = h.data.num_values;
    else if (h.type == PQ_PAGE_DATA_V2)
        rows = h.v2.num_rows;
    else {
        fail(w, TC_E_INVALID, win->offset, "not a data page after data_page_offset: type, page", (long long)h.type,
             (long long)w->n_pages);
        return false;
    }
    const uint64_t total = (uint64_t)hl + (uint64_t)h.compressed_page_size;
    if (total > left || total > INT32_MAX) {
        fail(w, TC_E_RANGE, win->offset, "page runs past the chunk end: size, bytes left", (long long)total,
             (long long)left);
        return false;
    }
    if (rows <= 0 || rows > w->col.row_group_rows - w->next_row) {
        fail(w, TC_E_INVALID, win->offset, "page rows do not fit the row group: rows, rows left", (long long)rows,
             (long long)(w->col.row_group_rows - w->next_row));
        return false;
    }
    if (w->n_pages >= PQ_HEADER_WALK_MAX_PAGES) {
        fail(w, TC_E_RANGE, win->offset, "too many pages: pages, limit", (long long)w->n_pages + 1,
             (long long)PQ_HEADER_WALK_MAX_PAGES);
        return false;
    }
    if (!sv_grow((void **)&w->pages, &w->cap_pages, (size_t)w->n_pages + 1, sizeof *w->pages, 16,
                 PQ_HEADER_WALK_MAX_PAGES)) {
        fail(w, TC_E_NOMEM, win->offset, "out of memory: pages", (long long)w->n_pages, 0);
        return false;
    }
    /* Same capacity as pages: grown together. */
    pq_header_window *grown = realloc(w->confirmed, w->cap_pages * sizeof *grown);
    if (!grown) {
        fail(w, TC_E_NOMEM, win->offset, "out of memory: pages", (long long)w->n_pages, 0);
        return false;
    }
    w->confirmed = grown;
    w->pages[w->n_pages] = (pq_page_location){(int64_t)win->offset, (int32_t)total, w->next_row};
    w->confirmed[w->n_pages] = *win;
    win->bytes = NULL; /* moved */
    w->regular_size = w->n_pages == 0 || w->regular_size == (uint32_t)total ? (uint32_t)total : 0;
    if (w->n_pages == 0)
        w->regular_rows = rows;
    w->n_pages++;
    w->next_offset += total;
    w->next_row += rows;
    w->next_window = PQ_HEADER_WINDOW;
    if (w->next_offset == w->chunk_end) {
        if (w->next_row != w->col.row_group_rows)
            fail(w, TC_E_INVALID, win->offset, "pages end with the chunk but hold rows, of", (long long)w->next_row,
                 (long long)w->col.row_group_rows);
        else
            w->done = true;
        return false;
    }
    return true;
}

void pq_header_walk_advance(pq_header_walk *w)
{
    if (!w->done && !w->failed) {
        w->rounds++;
        pq_header_window *win;
        while (!w->done && !w->failed && (win = window_at_chain(w)) && confirm(w, win))
            ;
    }
    drop_windows(w->fed, w->n_fed);
    w->n_fed = 0;
}

tc_status pq_header_walk_map(const pq_header_walk *w, pq_page_map *out, tc_error *err)
{
    if (!w->done) {
        memset(out, 0, sizeof *out);
        out->dict_page = -1;
        return sv_fail(err, TC_E_INVALID, 0, "the header walk is not done");
    }
    pq_offset_index oi = {.pages = w->pages, .n_pages = w->n_pages};
    tc_status s = pq_page_map_from_offset_index(&w->col, &oi, out, err);
    if (s != TC_OK)
        return s;
    const uint32_t first = out->dict_page >= 0 ? 1 : 0;
    for (uint32_t i = 0; i < w->n_pages && s == TC_OK; i++)
        s = pq_page_map_set_header(out, first + i, w->confirmed[i].bytes, w->confirmed[i].len, err);
    if (s != TC_OK) {
        pq_page_map_free(out);
        out->dict_page = -1;
    }
    return s;
}

bool pq_header_walk_predictable(const pq_header_walk *w)
{
    if (w->done)
        return true;
    if (w->failed || w->regular_size == 0 || w->regular_rows <= 0)
        return false;
    const uint64_t rows_left = (uint64_t)(w->col.row_group_rows - w->next_row);
    const uint64_t bytes_left = w->chunk_end - w->next_offset;
    const uint64_t pages = (rows_left + (uint64_t)w->regular_rows - 1) / (uint64_t)w->regular_rows;
    if (pages == 0 || pages > PQ_HEADER_WALK_MAX_PAGES)
        return false;
    const uint64_t full = (pages - 1) * w->regular_size;
    return bytes_left > full && bytes_left - full <= (uint64_t)w->regular_size + PQ_HEADER_SLACK;
}
