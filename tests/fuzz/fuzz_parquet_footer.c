/* Fuzz FileMetaData decoding two ways: the input as a bare FileMetaData, and
 * the input as a whole Parquet file (footer located from its tail, then page
 * maps, page indexes and eligibility for every column chunk, and the plain
 * path's byte layout with its page starts). */
#include <stdio.h>
#include "column_resolve.h"
#include "page_map.h"
#include "parquet_layout.h"
#include "parquet_meta.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A broken invariant aborts, naming its line. */
static void check_at(bool ok, int line)
{
    if (!ok) {
        fprintf(stderr, "fuzz_parquet_footer: check failed at line %d\n", line);
        abort();
    }
}
#define check(ok) check_at((ok), __LINE__)

static void check_meta(const pq_file_meta *m)
{
    check(m->n_schema >= 1 && m->n_schema <= PQ_MAX_SCHEMA_ELEMENTS);
    check(m->n_leaves < m->n_schema);
    check(m->n_row_groups <= PQ_MAX_ROW_GROUPS);
    int64_t rows = 0;
    pq_column_resolver *res = pq_column_resolver_new(m); /* NULL: out of memory */
    for (uint32_t i = 0; i < m->n_leaves; i++) {
        const pq_leaf *L = &m->leaves[i];
        check(L->path != NULL && L->schema_index < m->n_schema);
        check(L->max_rep <= L->max_def && L->max_def <= PQ_MAX_SCHEMA_DEPTH);
        check(L->type >= PQ_BOOLEAN && L->type <= PQ_FIXED_LEN_BYTE_ARRAY);
        /* Every leaf's own path finds it, or, when the schema repeats the
         * path, is ambiguous between two leaves of that path. */
        pq_column_match mm;
        const pq_resolve_status st = res ? pq_column_resolve(res, L->path, &mm) : PQ_RESOLVE_OK;
        if (res && st == PQ_RESOLVE_OK)
            check(mm.leaf == i && mm.exact);
        else if (res)
            check(st == PQ_RESOLVE_AMBIGUOUS && mm.candidates[0] < mm.candidates[1] &&
                  mm.candidates[0] <= i && strcmp(m->leaves[mm.candidates[0]].path, L->path) == 0 &&
                  strcmp(m->leaves[mm.candidates[1]].path, L->path) == 0);
    }
    pq_column_resolver_free(res);
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        check(rg->n_columns == m->n_leaves);
        check(rg->num_rows >= 0);
        rows += rg->num_rows;
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            check(cc->type == m->leaves[c].type);
            check(cc->num_values >= 0 && cc->total_compressed_size >= 0);
        }
    }
    check(rows == m->num_rows);
}

static void check_map(const pq_page_map *pm)
{
    uint64_t at = pm->chunk_offset;
    uint32_t data = 0;
    for (uint32_t i = 0; i < pm->n_pages; i++) {
        const pq_page *p = &pm->pages[i];
        check(p->offset == at);
        check(p->total_size > 0);
        at += p->total_size;
        if (p->is_data)
            data++;
        check((int)p->elig >= PQ_ELIG_OK && (int)p->elig < PQ_ELIG_N);
        check(strcmp(pq_elig_reason(p->elig), "unknown") != 0);
        if (p->elig == PQ_ELIG_OK || p->elig == PQ_ELIG_SNAPPY_LITERALS)
            check(p->is_data && p->has_header && pm->has_offset_index && pm->max_rep == 0 &&
                  pm->max_def <= 1);
        if (p->elig == PQ_ELIG_DICTIONARY_ENTRIES)
            check(!p->is_data && (int32_t)i == pm->dict_page && p->has_header && pm->max_rep == 0 &&
                  pm->max_def <= 1);
    }
    check(at == pm->chunk_offset + pm->chunk_len);
    check(data == pm->n_data_pages);
}

static void walk_file(const uint8_t *data, size_t size, const pq_file_meta *m)
{
    check(m->footer_offset + m->footer_len + 8 == size);
    for (uint32_t g = 0; g < m->n_row_groups; g++)
        for (uint32_t c = 0; c < m->n_leaves; c++) {
            const pq_column_ctx ctx = pq_column_ctx_of(m, g, c);
            const pq_column_chunk *cc = ctx.chunk;
            if (cc->file_path.ptr)
                continue;
            uint64_t off, len;
            check(pq_column_chunk_range(cc, &off, &len));
            check(off >= 4 && off + len <= m->footer_offset);
            pq_offset_index oi;
            bool has_oi = false;
            tc_error err;
            if (cc->has_offset_index) {
                check(cc->offset_index_offset >= 4 &&
                      (uint64_t)cc->offset_index_offset + (uint64_t)cc->offset_index_length <=
                          m->footer_offset);
                has_oi = pq_offset_index_parse(data + cc->offset_index_offset,
                                               (size_t)cc->offset_index_length, &oi,
                                               &err) == TC_OK;
            }
            if (cc->has_column_index) {
                pq_column_index ci;
                if (pq_column_index_parse(data + cc->column_index_offset,
                                          (size_t)cc->column_index_length, &ci, &err) == TC_OK)
                    pq_column_index_free(&ci);
            }
            pq_page_map pm;
            pq_mismatch mm;
            if (pq_page_map_build(&ctx, has_oi ? &oi : NULL, data + off, (size_t)len, &pm, &mm,
                                  &err) == TC_OK) {
                check_map(&pm);
                pq_page_map_free(&pm);
            } else {
                check(err.msg[0] != '\0' && pm.pages == NULL);
            }
            if (has_oi) {
                /* OffsetIndex-only map, then every header fed in. */
                if (pq_page_map_from_offset_index(&ctx, &oi, &pm, &err) == TC_OK) {
                    check_map(&pm);
                    for (uint32_t i = 0; i < pm.n_pages; i++)
                        pq_page_map_set_header(&pm, i, data + pm.pages[i].offset,
                                               size - pm.pages[i].offset, &err);
                    check_map(&pm);
                    pq_page_map_free(&pm);
                }
                pq_offset_index_free(&oi);
            }
        }
}

/* The layout's chunks are sorted; the page starts kept are strictly
 * ascending and in the file; each chunk's pages tile it from its start. */
static void check_layout(const uint8_t *data, size_t size, const pq_file_meta *m)
{
    parquet_layout l;
    if (!parquet_layout_from_meta(m, size, &l))
        return;
    if (parquet_layout_add_pages(&l, m, data, 0, size)) {
        for (size_t k = 0; k < l.n_page_starts; k++) {
            check(k == 0 || l.page_starts[k] > l.page_starts[k - 1]);
            check(l.page_starts[k] < size);
        }
        for (size_t i = 0; i < l.n_chunks; i++) {
            check(i == 0 || l.chunks[i].start >= l.chunks[i - 1].start);
            byte_span pg;
            uint64_t at = l.chunks[i].start;
            size_t steps = 0;
            while (at < l.chunks[i].end && parquet_layout_page_at(&l, &l.chunks[i], at, &pg)) {
                check(pg.start <= at && at < pg.end && pg.end <= l.chunks[i].end);
                at = pg.end;
                check(++steps <= l.n_page_starts + 1);
            }
            /* The pages holding any rows lie inside the chunk, after what
             * precedes its first data page; a page's own rows find it. */
            byte_span dict, pages;
            if (parquet_layout_pages_of_rows(&l, &l.chunks[i], 0, UINT64_MAX, &dict, &pages)) {
                check(dict.start == l.chunks[i].start && dict.end <= pages.start);
                check(pages.start < pages.end && pages.end <= l.chunks[i].end);
                uint64_t lo, hi;
                if (parquet_layout_page_rows(&l, &l.chunks[i], pages.start, &lo, &hi) && lo < hi) {
                    byte_span d2, p2;
                    check(parquet_layout_pages_of_rows(&l, &l.chunks[i], lo, lo + 1, &d2, &p2));
                    check(p2.start == pages.start);
                }
            }
        }
    }
    parquet_layout_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_file_meta *m = NULL;
    tc_error err;
    if (pq_file_meta_parse(data, size, 0, &m, &err) == TC_OK) {
        check_meta(m);
        pq_file_meta_free(m);
    } else {
        check(m == NULL && err.msg[0] != '\0' && err.offset <= size);
    }

    uint64_t need = 0;
    m = NULL;
    const tc_status s = pq_file_meta_from_tail(data, size, size, &m, &need, &err);
    if (s == TC_OK) {
        check_meta(m);
        walk_file(data, size, m);
        check_layout(data, size, m);
        pq_file_meta_free(m);
    } else {
        check(m == NULL && err.msg[0] != '\0');
        if (s == TC_E_NEED_MORE)
            check(need > size);
    }
    return 0;
}
