/* Page maps and partial-read eligibility; see page_map.h. */
#include "page_map.h"
#include "snappy_stream.h"

#include "sv_grow.h"
#include "sv_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pq_elig_reason(pq_elig e)
{
    static const char *const names[] = {
        [PQ_ELIG_OK] = "eligible", [PQ_ELIG_NOT_DATA_PAGE] = "not_data_page",
        [PQ_ELIG_NESTED] = "nested", [PQ_ELIG_NO_OFFSET_INDEX] = "no_offset_index",
        [PQ_ELIG_NO_HEADER] = "no_header", [PQ_ELIG_V2_PAGE] = "v2_page",
        [PQ_ELIG_DICTIONARY] = "dictionary", [PQ_ELIG_BOOLEAN] = "boolean",
        [PQ_ELIG_BYTE_ARRAY_PLAIN] = "byte_array_plain", [PQ_ELIG_ENCODING] = "encoding",
        [PQ_ELIG_COMPRESSED] = "compressed", [PQ_ELIG_ZSTD_UNCHECKED] = "zstd_unchecked",
        [PQ_ELIG_ZSTD_FRAME] = "zstd_frame",
        [PQ_ELIG_ZSTD_COMPRESSED_BLOCKS] = "zstd_compressed_blocks", [PQ_ELIG_CRC] = "crc",
        [PQ_ELIG_SNAPPY_LITERALS] = "snappy_literals", [PQ_ELIG_DICTIONARY_ENTRIES] = "dictionary_entries",
        [PQ_ELIG_SNAPPY_UNCHECKED] = "snappy_unchecked", [PQ_ELIG_SNAPPY_COPIES] = "snappy_copies",
        [PQ_ELIG_DICTIONARY_STRINGS] = "dictionary_strings",
    };
    return SV_NAME(names, e, "unknown");
}

pq_column_ctx pq_column_ctx_of(const pq_file_meta *m, uint32_t rg, uint32_t col)
{
    const pq_row_group *g = &m->row_groups[rg];
    return (pq_column_ctx){&g->columns[col], &m->leaves[col], g->num_rows};
}

void pq_page_map_free(pq_page_map *pm)
{
    if (!pm)
        return;
    free(pm->pages);
    memset(pm, 0, sizeof *pm);
}

/* ---------------- building blocks ---------------- */

static tc_status map_init(pq_page_map *pm, const pq_column_ctx *col, tc_error *err)
{
    memset(pm, 0, sizeof *pm);
    pm->dict_page = -1;
    if (!col || !col->chunk || !col->leaf)
        return sv_fail(err, TC_E_INVALID, 0, "no column chunk given");
    const pq_column_chunk *c = col->chunk;
    if (!pq_column_chunk_range(c, &pm->chunk_offset, &pm->chunk_len))
        return sv_fail(err, TC_E_RANGE, 0, "column chunk byte range overflows");
    if (pm->chunk_len > INT64_MAX - pm->chunk_offset)
        return sv_fail(err, TC_E_RANGE, 0, "column chunk byte range overflows");
    pm->type = col->leaf->type;
    pm->type_length = col->leaf->type_length;
    pm->codec = c->codec;
    pm->max_def = col->leaf->max_def;
    pm->max_rep = col->leaf->max_rep;
    pm->nested = col->leaf->nested;
    pm->num_values = c->num_values;
    pm->row_group_rows = col->row_group_rows;
    return TC_OK;
}

/* A page entry before the OffsetIndex or its header says anything: every
 * fact unknown (-1). */
static const pq_page unknown_page = {
    .compressed_size = -1, .uncompressed_size = -1, .first_row = -1, .num_rows = -1,
    .num_values = -1, .num_nulls = -1, .page_type = -1, .encoding = -1, .def_encoding = -1,
    .rep_encoding = -1, .def_levels_len = -1, .rep_levels_len = -1,
};

static pq_page *push_page(pq_page_map *pm, size_t *cap)
{
    if (!sv_grow((void **)&pm->pages, cap, (size_t)pm->n_pages + 1, sizeof *pm->pages, 16,
                 UINT32_MAX))
        return NULL;
    pq_page *p = &pm->pages[pm->n_pages++];
    *p = unknown_page;
    return p;
}

/* Copy the header's facts into a page entry (rows are set by the caller). */
static void fill_from_header(const pq_page_map *pm, pq_page *p, const pq_page_header *h,
                             size_t header_len)
{
    p->has_header = true;
    p->header_len = (uint32_t)header_len;
    p->compressed_size = h->compressed_page_size;
    p->uncompressed_size = h->uncompressed_page_size;
    p->page_type = h->type;
    p->is_data = h->type == PQ_PAGE_DATA || h->type == PQ_PAGE_DATA_V2;
    p->has_crc = h->has_crc;
    p->crc = h->crc;
    p->crc_offset = h->crc_offset;
    p->crc_len = h->crc_len;
    p->body_compressed = pm->codec != PQ_CODEC_UNCOMPRESSED;
    switch (h->type) {
    case PQ_PAGE_DATA:
        p->num_values = h->data.num_values;
        p->encoding = h->data.encoding;
        p->def_encoding = h->data.definition_level_encoding;
        p->rep_encoding = h->data.repetition_level_encoding;
        break;
    case PQ_PAGE_DATA_V2:
        p->num_values = h->v2.num_values;
        p->num_nulls = h->v2.num_nulls;
        p->encoding = h->v2.encoding;
        p->def_levels_len = h->v2.definition_levels_byte_length;
        p->rep_levels_len = h->v2.repetition_levels_byte_length;
        p->body_compressed = p->body_compressed && h->v2.is_compressed;
        break;
    case PQ_PAGE_DICTIONARY:
        p->num_values = h->dict.num_values;
        p->encoding = h->dict.encoding;
        break;
    default:
        break;
    }
}

/* Rows a header alone tells: V2 num_rows, flat V1 num_values; else -1. */
static int64_t header_rows(const pq_page_map *pm, const pq_page_header *h)
{
    if (h->type == PQ_PAGE_DATA_V2)
        return h->v2.num_rows;
    if (h->type == PQ_PAGE_DATA && pm->max_rep == 0)
        return h->data.num_values;
    return -1;
}

/* Copy a page-header error, rebasing its offset onto the file. */
static tc_status header_error(tc_error *err, const tc_error *e, uint64_t page_offset,
                              uint32_t index)
{
    if (err) {
        err->code = e->code;
        err->offset = (size_t)(page_offset + e->offset);
        snprintf(err->msg, sizeof err->msg, "page %u at file offset %llu: %s", index,
                 (unsigned long long)page_offset, e->msg);
    }
    return e->code;
}

/* ---------------- from the OffsetIndex ---------------- */

tc_status pq_page_map_from_offset_index(const pq_column_ctx *col, const pq_offset_index *oi,
                                        pq_page_map *out, tc_error *err)
{
    tc_status s = map_init(out, col, err);
    if (s != TC_OK)
        return s;
    const uint64_t start = out->chunk_offset, end = out->chunk_offset + out->chunk_len;
    size_t cap = 0;
    if (!oi || oi->n_pages == 0) {
        s = sv_fail(err, TC_E_INVALID, (size_t)start, "OffsetIndex lists no pages");
        goto fail;
    }
    const uint64_t first = (uint64_t)oi->pages[0].offset;
    if (oi->pages[0].offset < 0 || first < start || first >= end) {
        s = sv_fail(err, TC_E_RANGE, (size_t)start,
                    "first data page at %lld lies outside the column chunk [%llu, %llu)",
                    (long long)oi->pages[0].offset, (unsigned long long)start,
                    (unsigned long long)end);
        goto fail;
    }
    if (first > start) {
        if (first - start > UINT32_MAX) {
            s = sv_fail(err, TC_E_RANGE, (size_t)start,
                        "%llu bytes before the first data page are too many for a "
                        "dictionary page",
                        (unsigned long long)(first - start));
            goto fail;
        }
        pq_page *d = push_page(out, &cap);
        if (!d)
            goto nomem;
        d->offset = start;
        d->total_size = (uint32_t)(first - start);
        d->page_type = PQ_PAGE_DICTIONARY;
        d->inferred = true;
        out->dict_page = 0;
    }
    uint64_t at = first;
    for (uint32_t i = 0; i < oi->n_pages; i++) {
        const pq_page_location *l = &oi->pages[i];
        if (l->offset < 0 || (uint64_t)l->offset != at) {
            s = sv_fail(err, TC_E_INVALID, (size_t)(l->offset < 0 ? 0 : l->offset),
                        "OffsetIndex page %u starts at %lld, but the previous page ends at "
                        "%llu (pages must tile the chunk)",
                        i, (long long)l->offset, (unsigned long long)at);
            goto fail;
        }
        if (l->compressed_page_size <= 0 ||
            (uint64_t)l->compressed_page_size > end - (uint64_t)l->offset) {
            s = sv_fail(err, TC_E_RANGE, (size_t)l->offset,
                        "OffsetIndex page %u of %d bytes at %lld runs past the chunk end "
                        "%llu",
                        i, (int)l->compressed_page_size, (long long)l->offset,
                        (unsigned long long)end);
            goto fail;
        }
        const int64_t next_row = i + 1 < oi->n_pages ? oi->pages[i + 1].first_row_index
                                                     : out->row_group_rows;
        if ((i == 0 && l->first_row_index != 0) || l->first_row_index < 0 ||
            next_row <= l->first_row_index) {
            s = sv_fail(err, TC_E_INVALID, (size_t)l->offset,
                        "OffsetIndex page %u: first_row_index %lld, next page or row-group "
                        "end at row %lld (%lld rows in the row group)",
                        i, (long long)l->first_row_index, (long long)next_row,
                        (long long)out->row_group_rows);
            goto fail;
        }
        pq_page *p = push_page(out, &cap);
        if (!p)
            goto nomem;
        p->offset = (uint64_t)l->offset;
        p->total_size = (uint32_t)l->compressed_page_size;
        p->first_row = l->first_row_index;
        p->num_rows = next_row - l->first_row_index;
        p->is_data = true;
        out->n_data_pages++;
        at += (uint64_t)l->compressed_page_size;
    }
    if (at != end) {
        s = sv_fail(err, TC_E_INVALID, (size_t)at,
                    "OffsetIndex pages end at %llu but the column chunk ends at %llu",
                    (unsigned long long)at, (unsigned long long)end);
        goto fail;
    }
    out->has_offset_index = true;
    pq_page_map_classify(out, NULL, 0);
    return TC_OK;
nomem:
    s = sv_fail(err, TC_E_NOMEM, 0, "out of memory");
fail:
    pq_page_map_free(out);
    out->dict_page = -1;
    return s;
}

const char *pq_page_map_single_page_ruled_out(const pq_column_ctx *col)
{
    if (!col || !col->chunk || !col->leaf)
        return "no column chunk given";
    const pq_column_chunk *c = col->chunk;
    uint64_t start = 0, len = 0;
    if (!pq_column_chunk_range(c, &start, &len))
        return "the column chunk has no valid byte range";
    if (col->leaf->max_rep > 0 || col->leaf->max_def > 1)
        return "nested column: rows are not values";
    if (c->data_page_offset < 0 || (uint64_t)c->data_page_offset < start ||
        (uint64_t)c->data_page_offset >= start + len ||
        start + len - (uint64_t)c->data_page_offset > INT32_MAX)
        return "data_page_offset is not a page of the chunk";
    if (c->n_encoding_stats > 0) {
        int64_t data_pages = 0;
        for (uint32_t i = 0; i < c->n_encoding_stats; i++)
            if (c->encoding_stats[i].page_type == PQ_PAGE_DATA ||
                c->encoding_stats[i].page_type == PQ_PAGE_DATA_V2)
                data_pages += c->encoding_stats[i].count;
        if (data_pages != 1)
            return "encoding_stats count several data pages";
    }
    return NULL;
}

tc_status pq_page_map_predict_single_page(const pq_column_ctx *col, pq_page_map *out, tc_error *err)
{
    const char *why = pq_page_map_single_page_ruled_out(col);
    if (why) {
        memset(out, 0, sizeof *out);
        out->dict_page = -1;
        return sv_fail(err, TC_E_INVALID, 0, "%s", why);
    }
    const pq_column_chunk *c = col->chunk;
    uint64_t start = 0, len = 0;
    (void)pq_column_chunk_range(c, &start, &len);
    pq_page_location one = {
        .offset = c->data_page_offset,
        .compressed_page_size = (int32_t)(start + len - (uint64_t)c->data_page_offset),
        .first_row_index = 0,
    };
    pq_offset_index oi = {.pages = &one, .n_pages = 1};
    tc_status s = pq_page_map_from_offset_index(col, &oi, out, err);
    if (s == TC_OK)
        out->predicted = true;
    return s;
}

tc_status pq_page_map_set_header(pq_page_map *pm, uint32_t i, const uint8_t *buf, size_t len,
                                 tc_error *err)
{
    if (i >= pm->n_pages)
        return sv_fail(err, TC_E_INVALID, 0, "page %u does not exist (%u pages)", i,
                       pm->n_pages);
    pq_page *p = &pm->pages[i];
    pq_page_header h;
    size_t hl = 0;
    tc_error e;
    tc_status s = pq_page_header_parse(buf, len, &h, &hl, &e);
    if (s != TC_OK)
        return header_error(err, &e, p->offset, i);
    const uint64_t total = (uint64_t)hl + (uint64_t)h.compressed_page_size;
    if (total != p->total_size)
        return sv_fail(err, TC_E_MISMATCH, (size_t)p->offset,
                       "page %u at %llu: header (%zu bytes) + body (%d bytes) = %llu, but "
                       "the OffsetIndex says %u",
                       i, (unsigned long long)p->offset, hl, (int)h.compressed_page_size,
                       (unsigned long long)total, p->total_size);
    const bool data = h.type == PQ_PAGE_DATA || h.type == PQ_PAGE_DATA_V2;
    if (data != p->is_data || (p->inferred && h.type != PQ_PAGE_DICTIONARY))
        return sv_fail(err, TC_E_MISMATCH, (size_t)p->offset,
                       "page %u at %llu is a %s, but the OffsetIndex implies a %s", i,
                       (unsigned long long)p->offset, pq_page_type_name(h.type),
                       p->is_data ? "data page" : "dictionary page");
    const int64_t rows = header_rows(pm, &h);
    if (p->is_data && rows >= 0 && rows != p->num_rows)
        return sv_fail(err, TC_E_MISMATCH, (size_t)p->offset,
                       "page %u at %llu holds %lld rows by its header, %lld by the "
                       "OffsetIndex",
                       i, (unsigned long long)p->offset, (long long)rows,
                       (long long)p->num_rows);
    fill_from_header(pm, p, &h, hl);
    const uint8_t *body = len - hl >= (size_t)h.compressed_page_size ? buf + hl : NULL;
    p->elig = pq_page_eligibility(pm, i, body, body ? (size_t)h.compressed_page_size : 0);
    return TC_OK;
}

/* ---------------- by walking headers ---------------- */

tc_status pq_page_map_from_chunk(const pq_column_ctx *col, const uint8_t *chunk,
                                 size_t chunk_len, pq_page_map *out, tc_error *err)
{
    tc_status s = map_init(out, col, err);
    if (s != TC_OK)
        return s;
    size_t cap = 0;
    if (!chunk || chunk_len < out->chunk_len) {
        s = sv_fail(err, TC_E_NEED_MORE, 0,
                    "the column chunk has %llu bytes, %zu were supplied",
                    (unsigned long long)out->chunk_len, chunk ? chunk_len : 0);
        goto fail;
    }
    const size_t len = (size_t)out->chunk_len;
    size_t pos = 0;
    int64_t values = 0, rows = 0;
    bool rows_known = true;
    while (pos < len) {
        const uint64_t file_off = out->chunk_offset + pos;
        pq_page_header h;
        size_t hl = 0;
        tc_error e;
        s = pq_page_header_parse(chunk + pos, len - pos, &h, &hl, &e);
        if (s != TC_OK) {
            header_error(err, &e, file_off, out->n_pages);
            if (s == TC_E_TRUNCATED && err)
                snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg),
                         " [header runs past the column chunk end]");
            goto fail;
        }
        if ((size_t)h.compressed_page_size > len - pos - hl) {
            s = sv_fail(err, TC_E_RANGE, (size_t)file_off,
                        "page %u at file offset %llu: body of %d bytes runs past the column "
                        "chunk end (%zu bytes left)",
                        out->n_pages, (unsigned long long)file_off,
                        (int)h.compressed_page_size, len - pos - hl);
            goto fail;
        }
        if (hl + (size_t)h.compressed_page_size > UINT32_MAX) {
            s = sv_fail(err, TC_E_LIMIT, (size_t)file_off, "page larger than 4 GiB");
            goto fail;
        }
        if (h.type == PQ_PAGE_DICTIONARY && out->n_pages != 0) {
            s = sv_fail(err, TC_E_INVALID, (size_t)file_off,
                        "dictionary page at file offset %llu is page %u; it must come first",
                        (unsigned long long)file_off, out->n_pages);
            goto fail;
        }
        pq_page *p = push_page(out, &cap);
        if (!p) {
            s = sv_fail(err, TC_E_NOMEM, 0, "out of memory");
            goto fail;
        }
        p->offset = file_off;
        p->total_size = (uint32_t)(hl + (size_t)h.compressed_page_size);
        fill_from_header(out, p, &h, hl);
        if (h.type == PQ_PAGE_DICTIONARY)
            out->dict_page = 0;
        if (p->is_data) {
            out->n_data_pages++;
            values += p->num_values;
            const int64_t r = header_rows(out, &h);
            if (r < 0 || !rows_known) {
                rows_known = false;
            } else {
                p->first_row = rows;
                p->num_rows = r;
                rows += r;
            }
        }
        pos += p->total_size;
    }
    if (values != out->num_values) {
        s = sv_fail(err, TC_E_MISMATCH, (size_t)out->chunk_offset,
                    "data page headers hold %lld values, ColumnMetaData.num_values is %lld",
                    (long long)values, (long long)out->num_values);
        goto fail;
    }
    if (rows_known && rows != out->row_group_rows) {
        s = sv_fail(err, TC_E_MISMATCH, (size_t)out->chunk_offset,
                    "data page headers hold %lld rows, the row group has %lld",
                    (long long)rows, (long long)out->row_group_rows);
        goto fail;
    }
    out->headers_walked = true;
    pq_page_map_classify(out, chunk, len);
    return TC_OK;
fail:
    pq_page_map_free(out);
    out->dict_page = -1;
    return s;
}

/* ---------------- cross-check ---------------- */

static tc_status mismatch(pq_mismatch *mm, uint32_t page, const char *field, int64_t a,
                          int64_t b, const char *what)
{
    if (mm) {
        mm->page = page;
        mm->field = field;
        mm->index_value = a;
        mm->header_value = b;
        snprintf(mm->msg, sizeof mm->msg,
                 "page %u: %s differs: OffsetIndex %lld, page headers %lld (%s)", page, field,
                 (long long)a, (long long)b, what);
    }
    return TC_E_MISMATCH;
}

tc_status pq_page_map_cross_check(const pq_page_map *a, const pq_page_map *b, pq_mismatch *mm)
{
    if (mm)
        memset(mm, 0, sizeof *mm);
    if (a->chunk_offset != b->chunk_offset || a->chunk_len != b->chunk_len)
        return mismatch(mm, 0, "chunk", (int64_t)a->chunk_offset, (int64_t)b->chunk_offset,
                        "the maps describe different column chunks");
    if ((a->dict_page >= 0) != (b->dict_page >= 0))
        return mismatch(mm, 0, "dictionary", a->dict_page >= 0, b->dict_page >= 0,
                        "dictionary page present");
    if (a->dict_page >= 0) {
        const pq_page *x = &a->pages[a->dict_page], *y = &b->pages[b->dict_page];
        if (x->offset != y->offset)
            return mismatch(mm, (uint32_t)a->dict_page, "offset", (int64_t)x->offset,
                            (int64_t)y->offset, "dictionary page offset");
        if (x->total_size != y->total_size)
            return mismatch(mm, (uint32_t)a->dict_page, "size", x->total_size, y->total_size,
                            "dictionary page size incl. header");
    }
    if (a->n_data_pages != b->n_data_pages)
        return mismatch(mm, 0, "page_count", a->n_data_pages, b->n_data_pages,
                        "number of data pages");
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n_pages; i++) {
        const pq_page *x = &a->pages[i];
        if (!x->is_data)
            continue;
        while (j < b->n_pages && !b->pages[j].is_data)
            j++;
        if (j >= b->n_pages)
            return mismatch(mm, i, "page_count", a->n_data_pages, b->n_data_pages,
                            "number of data pages");
        const pq_page *y = &b->pages[j++];
        if (x->offset != y->offset)
            return mismatch(mm, i, "offset", (int64_t)x->offset, (int64_t)y->offset,
                            "data page offset");
        if (x->total_size != y->total_size)
            return mismatch(mm, i, "size", x->total_size, y->total_size,
                            "data page size incl. header");
        if (y->first_row >= 0 && x->first_row != y->first_row)
            return mismatch(mm, i, "first_row", x->first_row, y->first_row,
                            "first row of the page");
        if (y->num_rows >= 0 && x->num_rows != y->num_rows)
            return mismatch(mm, i, "num_rows", x->num_rows, y->num_rows, "rows in the page");
    }
    /* Pages the headers found that the index does not account for. */
    if (a->n_pages != b->n_pages)
        return mismatch(mm, 0, "page_count", a->n_pages, b->n_pages,
                        "pages including non-data pages");
    return TC_OK;
}

tc_status pq_page_map_build(const pq_column_ctx *col, const pq_offset_index *oi,
                            const uint8_t *chunk, size_t chunk_len, pq_page_map *out,
                            pq_mismatch *mm, tc_error *err)
{
    if (mm)
        memset(mm, 0, sizeof *mm);
    if (!oi && !chunk) {
        memset(out, 0, sizeof *out);
        out->dict_page = -1;
        return sv_fail(err, TC_E_INVALID, 0, "neither an OffsetIndex nor chunk bytes");
    }
    if (!chunk)
        return pq_page_map_from_offset_index(col, oi, out, err);
    if (!oi)
        return pq_page_map_from_chunk(col, chunk, chunk_len, out, err);
    pq_page_map a, b;
    tc_status s = pq_page_map_from_offset_index(col, oi, &a, err);
    if (s != TC_OK) {
        *out = a;
        return s;
    }
    s = pq_page_map_from_chunk(col, chunk, chunk_len, &b, err);
    if (s != TC_OK) {
        pq_page_map_free(&a);
        *out = b;
        return s;
    }
    pq_mismatch local;
    pq_mismatch *m = mm ? mm : &local;
    s = pq_page_map_cross_check(&a, &b, m);
    if (s != TC_OK) {
        const uint64_t off = m->page < a.n_pages ? a.pages[m->page].offset : a.chunk_offset;
        sv_fail(err, s, (size_t)off, "OffsetIndex and page headers disagree: %s", m->msg);
        pq_page_map_free(&a);
        pq_page_map_free(&b);
        memset(out, 0, sizeof *out);
        out->dict_page = -1;
        return s;
    }
    for (uint32_t i = 0; i < b.n_pages; i++) {
        /* Same page order and offsets (cross-checked above). */
        b.pages[i].first_row = a.pages[i].first_row;
        b.pages[i].num_rows = a.pages[i].num_rows;
    }
    b.has_offset_index = true;
    pq_page_map_free(&a);
    pq_page_map_classify(&b, chunk, chunk_len);
    *out = b;
    return TC_OK;
}

/* ---------------- eligibility ---------------- */

static bool fixed_width(pq_physical_type t)
{
    switch (t) {
    case PQ_INT32:
    case PQ_INT64:
    case PQ_INT96:
    case PQ_FLOAT:
    case PQ_DOUBLE:
    case PQ_FIXED_LEN_BYTE_ARRAY:
        return true;
    default:
        return false;
    }
}

bool pq_elig_is_eligible(pq_elig e)
{
    return e == PQ_ELIG_OK || e == PQ_ELIG_SNAPPY_LITERALS || e == PQ_ELIG_DICTIONARY_ENTRIES;
}

/* The codec's verdict on a body whose content must sit at computable
 * offsets: OK, or why not. */
static pq_elig body_verdict(const pq_page_map *pm, const pq_page *p, const uint8_t *body, size_t body_len)
{
    if (pm->codec == PQ_CODEC_UNCOMPRESSED)
        return PQ_ELIG_OK;
    const bool zstd = pm->codec == PQ_CODEC_ZSTD, snappy = pm->codec == PQ_CODEC_SNAPPY;
    if (!zstd && !snappy)
        return PQ_ELIG_COMPRESSED;
    if (!body || p->compressed_size < 0 || body_len < (size_t)p->compressed_size)
        return zstd ? PQ_ELIG_ZSTD_UNCHECKED : PQ_ELIG_SNAPPY_UNCHECKED;
    if (zstd)
        return pq_zstd_page_verdict(body, (size_t)p->compressed_size, p->uncompressed_size);
    uint64_t content = 0;
    if (pq_snappy_inspect(body, (size_t)p->compressed_size, &content) != PQ_SNAPPY_LITERALS ||
        p->uncompressed_size < 0 || content != (uint64_t)p->uncompressed_size)
        return PQ_ELIG_SNAPPY_COPIES;
    return PQ_ELIG_SNAPPY_LITERALS;
}

pq_elig pq_page_eligibility(const pq_page_map *pm, uint32_t i, const uint8_t *body,
                            size_t body_len)
{
    if (i >= pm->n_pages)
        return PQ_ELIG_NOT_DATA_PAGE;
    const pq_page *p = &pm->pages[i];
    if (!p->is_data && (int32_t)i == pm->dict_page && p->has_header) {
        if (pm->max_rep > 0 || pm->max_def > 1)
            return PQ_ELIG_NESTED;
        if (!fixed_width(pm->type))
            return PQ_ELIG_DICTIONARY_STRINGS;
        const pq_elig v = body_verdict(pm, p, body, body_len);
        return v == PQ_ELIG_OK || v == PQ_ELIG_SNAPPY_LITERALS ? PQ_ELIG_DICTIONARY_ENTRIES : v;
    }
    if (!p->is_data)
        return PQ_ELIG_NOT_DATA_PAGE;
    if (pm->max_rep > 0 || pm->max_def > 1)
        return PQ_ELIG_NESTED;
    if (!pm->has_offset_index)
        return PQ_ELIG_NO_OFFSET_INDEX;
    if (!p->has_header)
        return PQ_ELIG_NO_HEADER;
    if (p->page_type == PQ_PAGE_DATA_V2)
        return PQ_ELIG_V2_PAGE;
    if (p->encoding == PQ_ENC_PLAIN_DICTIONARY || p->encoding == PQ_ENC_RLE_DICTIONARY)
        return PQ_ELIG_DICTIONARY;
    if (pm->type == PQ_BOOLEAN)
        return PQ_ELIG_BOOLEAN;
    if (pm->type == PQ_BYTE_ARRAY && p->encoding == PQ_ENC_PLAIN)
        return PQ_ELIG_BYTE_ARRAY_PLAIN;
    pq_elig ok = PQ_ELIG_OK;
    if (p->encoding == PQ_ENC_PLAIN && fixed_width(pm->type)) {
        ok = body_verdict(pm, p, body, body_len);
        if (ok != PQ_ELIG_OK && ok != PQ_ELIG_SNAPPY_LITERALS)
            return ok;
    } else if (p->encoding == PQ_ENC_DELTA_LENGTH_BYTE_ARRAY && pm->type == PQ_BYTE_ARRAY) {
        if (pm->codec != PQ_CODEC_UNCOMPRESSED)
            return PQ_ELIG_COMPRESSED;
    } else {
        return PQ_ELIG_ENCODING;
    }
    if (p->has_crc && p->crc_len < 5)
        return PQ_ELIG_CRC;
    return ok;
}

void pq_page_map_classify(pq_page_map *pm, const uint8_t *chunk, size_t chunk_len)
{
    for (uint32_t i = 0; i < pm->n_pages; i++) {
        pq_page *p = &pm->pages[i];
        const uint8_t *body = NULL;
        size_t body_len = 0;
        if (chunk && p->has_header && p->compressed_size >= 0 && p->offset >= pm->chunk_offset) {
            const uint64_t rel = p->offset - pm->chunk_offset + p->header_len;
            if (rel <= chunk_len && (uint64_t)p->compressed_size <= chunk_len - rel) {
                body = chunk + rel;
                body_len = (size_t)p->compressed_size;
            }
        }
        p->elig = pq_page_eligibility(pm, i, body, body_len);
    }
}

/* ---------------- zstd page bodies ---------------- */

pq_elig pq_zstd_page_verdict(const uint8_t *body, size_t len, int64_t uncompressed_size)
{
    pq_zstd_frame f;
    if (pq_zstd_inspect(body, len, false, &f, NULL) != TC_OK)
        return PQ_ELIG_ZSTD_FRAME;
    if (!f.single_frame || f.has_dict_id)
        return PQ_ELIG_ZSTD_FRAME;
    if (!f.all_raw)
        return PQ_ELIG_ZSTD_COMPRESSED_BLOCKS;
    if (f.has_checksum || (f.has_content_size && f.content_size != (uint64_t)uncompressed_size) ||
        uncompressed_size < 0 || f.known_size != (uint64_t)uncompressed_size)
        return PQ_ELIG_ZSTD_FRAME;
    return PQ_ELIG_OK;
}
