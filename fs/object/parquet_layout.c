#include "parquet_layout.h"

#include <stdlib.h>
#include <string.h>

#include "parquet_meta.h"

uint64_t parquet_layout_meta_start(const parquet_layout *l)
{
    const byte_span *pi = &l->page_index;
    return pi->end > pi->start && pi->start < l->footer.start ? pi->start : l->footer.start;
}

uint64_t parquet_layout_meta_len(const parquet_layout *l, uint64_t file_size)
{
    const uint64_t start = parquet_layout_meta_start(l);
    return start < file_size ? file_size - start : file_size;
}

uint64_t parquet_layout_tail_hint(uint64_t file_size)
{
    /* 64 KiB holds the footer of most files; readers read at least that much
     * of the tail themselves, so a larger first read would be pure overhead. */
    uint64_t t = 64u << 10;
    return t < file_size ? t : file_size;
}

typedef struct {
    byte_span span;
    uint32_t column, row_group;
} placed_chunk;

static int placed_cmp(const void *a, const void *b)
{
    const placed_chunk *x = a, *y = b;
    return x->span.start < y->span.start ? -1 : x->span.start > y->span.start ? 1 : 0;
}

static void widen(byte_span *s, uint64_t start, uint64_t end)
{
    if (s->end == s->start) {
        s->start = start;
        s->end = end;
        return;
    }
    if (start < s->start)
        s->start = start;
    if (end > s->end)
        s->end = end;
}

bool parquet_layout_from_meta(const pq_file_meta *m, uint64_t file_size, parquet_layout *out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (uint32_t g = 0; g < m->n_row_groups; g++)
        n += m->row_groups[g].n_columns;
    placed_chunk *placed = calloc(n ? n : 1, sizeof *placed);
    out->chunks = calloc(n ? n : 1, sizeof *out->chunks);
    out->column = calloc(n ? n : 1, sizeof *out->column);
    out->row_group = calloc(n ? n : 1, sizeof *out->row_group);
    if (!placed || !out->chunks || !out->column || !out->row_group) {
        free(placed);
        parquet_layout_free(out);
        return false;
    }
    out->n_columns = m->n_leaves;
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            uint64_t off, len;
            /* Chunks in other files (file_path) or with nonsense ranges are not
             * prefetch targets; reads there get the generic path. */
            if (!cc->file_path.ptr && pq_column_chunk_range(cc, &off, &len) && len > 0 &&
                off < file_size && len <= file_size - off && c < m->n_leaves)
                placed[out->n_chunks++] = (placed_chunk){{off, off + len}, c, g};
            if (cc->has_column_index && cc->column_index_offset >= 0 && cc->column_index_length > 0)
                widen(&out->page_index, (uint64_t)cc->column_index_offset,
                      (uint64_t)cc->column_index_offset + (uint64_t)cc->column_index_length);
            if (cc->has_offset_index && cc->offset_index_offset >= 0 && cc->offset_index_length > 0)
                widen(&out->page_index, (uint64_t)cc->offset_index_offset,
                      (uint64_t)cc->offset_index_offset + (uint64_t)cc->offset_index_length);
        }
    }
    qsort(placed, out->n_chunks, sizeof *placed, placed_cmp);
    for (size_t i = 0; i < out->n_chunks; i++) {
        out->chunks[i] = placed[i].span;
        out->column[i] = placed[i].column;
        out->row_group[i] = placed[i].row_group;
    }
    free(placed);
    out->footer.start = m->footer_offset;
    out->footer.end = file_size;
    if (out->page_index.end > file_size)
        out->page_index.start = out->page_index.end = 0;
    return true;
}

/* Page starts kept per file at most: 16 MiB of offsets and first rows. */
#define LAYOUT_PAGES_MAX (1u << 20)

typedef struct {
    uint64_t start, first_row;
} located_page;

static int page_start_cmp(const void *a, const void *b)
{
    const uint64_t x = ((const located_page *)a)->start, y = ((const located_page *)b)->start;
    return x < y ? -1 : x > y;
}

bool parquet_layout_add_pages(parquet_layout *l, const pq_file_meta *m, const uint8_t *buf, uint64_t buf_off,
                              size_t len)
{
    size_t n = 0, cap = 0;
    located_page *starts = NULL;
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            uint64_t off, clen;
            if (cc->file_path.ptr || !cc->has_offset_index || cc->offset_index_offset < 0 ||
                cc->offset_index_length <= 0 || !pq_column_chunk_range(cc, &off, &clen))
                continue;
            const uint64_t io = (uint64_t)cc->offset_index_offset, il = (uint64_t)cc->offset_index_length;
            if (io < buf_off || io - buf_off > len || il > len - (io - buf_off))
                continue;
            pq_offset_index oi;
            tc_error te;
            memset(&te, 0, sizeof te);
            if (pq_offset_index_parse(buf + (io - buf_off), (size_t)il, &oi, &te) != TC_OK)
                continue;
            bool inside = oi.n_pages > 0 && n + oi.n_pages <= LAYOUT_PAGES_MAX;
            for (uint32_t k = 0; inside && k < oi.n_pages; k++)
                inside = (uint64_t)oi.pages[k].offset >= off && (uint64_t)oi.pages[k].offset < off + clen;
            if (inside && n + oi.n_pages > cap) {
                size_t ncap = cap ? cap : 1024;
                while (ncap < n + oi.n_pages)
                    ncap *= 2;
                located_page *grown = realloc(starts, ncap * sizeof *grown);
                if (!grown) {
                    pq_offset_index_free(&oi);
                    free(starts);
                    return false;
                }
                starts = grown;
                cap = ncap;
            }
            /* Rows ascending from 0, as the format requires; else no rows. */
            bool rows = oi.pages[0].first_row_index == 0;
            for (uint32_t k = 1; inside && rows && k < oi.n_pages; k++)
                rows = oi.pages[k].first_row_index > oi.pages[k - 1].first_row_index;
            for (uint32_t k = 0; inside && k < oi.n_pages; k++)
                starts[n++] = (located_page){(uint64_t)oi.pages[k].offset,
                                           rows ? (uint64_t)oi.pages[k].first_row_index : UINT64_MAX};
            pq_offset_index_free(&oi);
        }
    }
    if (n == 0) {
        free(starts);
        return true;
    }
    qsort(starts, n, sizeof *starts, page_start_cmp);
    uint64_t *offsets = malloc(n * sizeof *offsets), *first_rows = malloc(n * sizeof *first_rows);
    if (!offsets || !first_rows) {
        free(offsets);
        free(first_rows);
        free(starts);
        return false;
    }
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u > 0 && starts[i].start == offsets[u - 1]) {
            first_rows[u - 1] = UINT64_MAX; /* two indexes claim one page: its rows are unknown */
            continue;
        }
        offsets[u] = starts[i].start;
        first_rows[u++] = starts[i].first_row;
    }
    free(starts);
    free(l->page_starts);
    free(l->page_rows);
    l->page_starts = offsets;
    l->page_rows = first_rows;
    l->n_page_starts = u;
    return true;
}

/* Index of the first page start at or past offset. */
static size_t first_page_from(const parquet_layout *l, uint64_t offset)
{
    size_t lo = 0, hi = l->n_page_starts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->page_starts[mid] < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool parquet_layout_page_at(const parquet_layout *l, const byte_span *chunk, uint64_t offset, byte_span *page)
{
    if (offset < chunk->start || offset >= chunk->end)
        return false;
    const size_t lo = first_page_from(l, offset + 1); /* the first page start past offset */
    const bool next_inside = lo < l->n_page_starts && l->page_starts[lo] < chunk->end;
    if (lo > 0 && l->page_starts[lo - 1] >= chunk->start) {
        page->start = l->page_starts[lo - 1];
        page->end = next_inside ? l->page_starts[lo] : chunk->end;
        return true;
    }
    if (!next_inside)
        return false; /* no page map for this chunk */
    /* Before its first data page: the dictionary page. */
    page->start = chunk->start;
    page->end = l->page_starts[lo];
    return true;
}

bool parquet_layout_page_rows(const parquet_layout *l, const byte_span *chunk, uint64_t page_start, uint64_t *row_lo,
                              uint64_t *row_hi)
{
    if (!l->page_rows || page_start < chunk->start || page_start >= chunk->end)
        return false;
    const size_t k = first_page_from(l, page_start);
    if (k >= l->n_page_starts || l->page_starts[k] != page_start || l->page_rows[k] == UINT64_MAX)
        return false;
    *row_lo = l->page_rows[k];
    const bool last = k + 1 >= l->n_page_starts || l->page_starts[k + 1] >= chunk->end;
    *row_hi = last ? UINT64_MAX : l->page_rows[k + 1];
    return last || (*row_hi != UINT64_MAX && *row_hi > *row_lo);
}

bool parquet_layout_pages_of_rows(const parquet_layout *l, const byte_span *chunk, uint64_t row_lo, uint64_t row_hi,
                                  byte_span *dictionary, byte_span *pages)
{
    if (!l->page_rows || row_lo >= row_hi)
        return false;
    const size_t first = first_page_from(l, chunk->start), end = first_page_from(l, chunk->end);
    if (first >= end)
        return false; /* no page map for this chunk */
    *dictionary = (byte_span){chunk->start, l->page_starts[first]};
    *pages = (byte_span){0, 0};
    for (size_t k = first; k < end; k++) {
        const uint64_t lo = l->page_rows[k], hi = k + 1 < end ? l->page_rows[k + 1] : UINT64_MAX;
        /* Rows unknown, or not ascending (another chunk's pages inside
         * this one's bytes): no pages of rows. */
        if (lo == UINT64_MAX || (k + 1 < end && (hi == UINT64_MAX || hi <= lo)))
            return false;
        if (hi <= row_lo || lo >= row_hi)
            continue;
        if (pages->end == pages->start)
            pages->start = l->page_starts[k];
        pages->end = k + 1 < end ? l->page_starts[k + 1] : chunk->end;
    }
    return pages->end > pages->start;
}

void parquet_layout_free(parquet_layout *l)
{
    if (!l)
        return;
    free(l->chunks);
    free(l->column);
    free(l->row_group);
    free(l->page_starts);
    free(l->page_rows);
    memset(l, 0, sizeof *l);
}

const byte_span *parquet_layout_chunk_at(const parquet_layout *l, uint64_t offset, size_t *index)
{
    /* Last chunk starting at or before offset. */
    size_t lo = 0, hi = l->n_chunks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->chunks[mid].start <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const byte_span *s = &l->chunks[lo - 1];
    if (offset >= s->end)
        return NULL;
    if (index)
        *index = lo - 1;
    return s;
}
