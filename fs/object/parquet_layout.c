#include "parquet_layout.h"

#include <stdlib.h>
#include <string.h>

#include "parquet_meta.h"

uint64_t parquet_layout_tail_hint(uint64_t file_size)
{
    /* 64 KiB holds the footer of most files; readers read at least that much
     * of the tail themselves, so a larger first read would be pure overhead. */
    uint64_t t = 64u << 10;
    return t < file_size ? t : file_size;
}

typedef struct {
    byte_span span;
    uint32_t column;
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
    if (!placed || !out->chunks || !out->column) {
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
                placed[out->n_chunks++] = (placed_chunk){{off, off + len}, c};
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
    }
    free(placed);
    out->footer.start = m->footer_offset;
    out->footer.end = file_size;
    if (out->page_index.end > file_size)
        out->page_index.start = out->page_index.end = 0;
    return true;
}

void parquet_layout_free(parquet_layout *l)
{
    if (!l)
        return;
    free(l->chunks);
    free(l->column);
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
