/* FileMetaData: row groups, column chunks and their ColumnMetaData, key-value
 * metadata and column orders, checked against the schema and the file. */
#include "parquet_meta_internal.h"

#include <stdlib.h>
#include <string.h>

static bool parse_key_value(pm *d, pq_key_value *kv)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_bytes(r, &f, "key", &kv->key); break;
        case 2: ok = f_bytes(r, &f, "value", &kv->value); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    static const char *const names[] = {NULL, "key"};
    return struct_done(r, seen, BIT(1), names, start);
}

static bool parse_kv_list(pm *d, const tc_field *f, const char *name, pq_key_value **out,
                          uint32_t *n_out)
{
    tc_reader *r = &d->r;
    tc_path_push(r, name, -1);
    uint32_t n;
    if (!list_open(r, f, TC_STRUCT, 0, name, &n))
        return false;
    pq_key_value *kv = pm_alloc(d, n ? n : 1, sizeof *kv);
    if (!kv)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        tc_path_set_index(r, i);
        if (!parse_key_value(d, &kv[i]))
            return false;
    }
    tc_container_end(r);
    tc_path_pop(r);
    *out = kv;
    *n_out = n;
    return true;
}

static bool parse_encoding_stats(tc_reader *r, pq_encoding_stats *es)
{
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32(r, &f, "page_type", &es->page_type); break;
        case 2: ok = f_i32(r, &f, "encoding", &es->encoding); break;
        case 3: ok = f_i32(r, &f, "count", &es->count); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    static const char *const names[] = {NULL, "page_type", "encoding", "count"};
    return struct_done(r, seen, BIT(1) | BIT(2) | BIT(3), names, start);
}

static bool parse_column_meta(pm *d, pq_column_chunk *c)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok = true;
        switch (f.id) {
        case 1: {
            int32_t t;
            ok = f_enum(r, &f, "type", PQ_FIXED_LEN_BYTE_ARRAY, &t);
            c->type = (pq_physical_type)t;
            break;
        }
        case 2: {
            tc_path_push(r, "encodings", -1);
            uint32_t n;
            uint8_t et;
            ok = list_open_t(r, &f, TC_I32, 0, "encodings", &n, &et);
            for (uint32_t i = 0; ok && i < n; i++) {
                const size_t at = r->pos;
                int64_t e;
                ok = elem_int(r, et, &e);
                if (ok && (e < 0 || e > 31))
                    ok = tc_fail_at(r, TC_E_RANGE, at, "encoding %lld out of range",
                                    (long long)e);
                if (ok)
                    c->encodings_mask |= 1u << e;
            }
            if (ok) {
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 3: {
            tc_path_push(r, "path_in_schema", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_BINARY, 0, "path_in_schema", &n);
            if (ok) {
                c->path_in_schema = pm_alloc(d, n ? n : 1, sizeof *c->path_in_schema);
                ok = c->path_in_schema != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                const uint8_t *p;
                uint32_t len;
                ok = tc_read_binary(r, &p, &len);
                c->path_in_schema[i] = (pq_bytes){p, len};
            }
            if (ok) {
                c->n_path = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 4: {
            int32_t v = 0;
            ok = f_i32(r, &f, "codec", &v);
            c->codec = (pq_codec)v;
            break;
        }
        case 5: ok = f_i64_nonneg(r, &f, "num_values", &c->num_values); break;
        case 6:
            ok = f_i64_nonneg(r, &f, "total_uncompressed_size", &c->total_uncompressed_size);
            break;
        case 7:
            ok = f_i64_nonneg(r, &f, "total_compressed_size", &c->total_compressed_size);
            break;
        case 8: ok = parse_kv_list(d, &f, "key_value_metadata", &c->kv, &c->n_kv); break;
        case 9: ok = f_i64_nonneg(r, &f, "data_page_offset", &c->data_page_offset); break;
        case 10:
            ok = f_i64(r, &f, "index_page_offset", &c->index_page_offset);
            c->has_index_page_offset = ok;
            break;
        case 11:
            ok = f_i64(r, &f, "dictionary_page_offset", &c->dictionary_page_offset);
            c->has_dictionary_page_offset = ok;
            break;
        case 12:
            ok = f_statistics(r, &f, "statistics", &c->statistics);
            c->has_statistics = ok;
            break;
        case 13: {
            tc_path_push(r, "encoding_stats", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "encoding_stats", &n);
            if (ok) {
                c->encoding_stats = pm_alloc(d, n ? n : 1, sizeof *c->encoding_stats);
                ok = c->encoding_stats != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_encoding_stats(r, &c->encoding_stats[i]);
            }
            if (ok) {
                c->n_encoding_stats = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 14:
            ok = f_i64(r, &f, "bloom_filter_offset", &c->bloom_filter_offset);
            c->has_bloom_filter_offset = ok;
            break;
        case 15:
            ok = f_i32(r, &f, "bloom_filter_length", &c->bloom_filter_length);
            c->has_bloom_filter_length = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    static const char *const names[] = {NULL,
                                        "type",
                                        "encodings",
                                        "path_in_schema",
                                        "codec",
                                        "num_values",
                                        "total_uncompressed_size",
                                        "total_compressed_size",
                                        NULL,
                                        "data_page_offset"};
    return struct_done(r, seen,
                       BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(9),
                       names, start);
}

static bool range_check(tc_reader *r, size_t at, const char *what, int64_t off, int64_t len,
                        uint64_t data_end)
{
    if (off < 0 || len < 0)
        return tc_fail_at(r, TC_E_RANGE, at, "%s range [%lld, +%lld) is negative", what,
                          (long long)off, (long long)len);
    /* An empty range names no bytes: pyarrow writes [0, 0) for the chunks of an
     * empty row group. */
    if (data_end == 0 || len == 0)
        return true;
    if ((uint64_t)off < 4 || (uint64_t)off > data_end || (uint64_t)len > data_end - (uint64_t)off)
        return tc_fail_at(r, TC_E_RANGE, at,
                          "%s range [%lld, %lld) lies outside the data area [4, %llu)", what,
                          (long long)off, (long long)off + (long long)len,
                          (unsigned long long)data_end);
    return true;
}

static bool parse_column_chunk(pm *d, pq_column_chunk *c, const pq_leaf *leaf, uint64_t data_end)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    bool has_oi_off = false, has_oi_len = false, has_ci_off = false, has_ci_len = false;
    bool has_crypto = false;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_bytes(r, &f, "file_path", &c->file_path); break;
        case 2: ok = f_i64(r, &f, "file_offset", &c->file_offset); break;
        case 3:
            tc_path_push(r, "meta_data", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_column_meta(d, c);
            if (ok)
                tc_path_pop(r);
            break;
        case 4:
            ok = f_i64(r, &f, "offset_index_offset", &c->offset_index_offset);
            has_oi_off = ok;
            break;
        case 5:
            ok = f_i32(r, &f, "offset_index_length", &c->offset_index_length);
            has_oi_len = ok;
            break;
        case 6:
            ok = f_i64(r, &f, "column_index_offset", &c->column_index_offset);
            has_ci_off = ok;
            break;
        case 7:
            ok = f_i32(r, &f, "column_index_length", &c->column_index_length);
            has_ci_len = ok;
            break;
        case 8:
        case 9:
            has_crypto = true;
            ok = f_skip(r, &f);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    if (r->failed)
        return false;
    if (!(seen & BIT(3)))
        return tc_fail_at(r, has_crypto ? TC_E_ENCRYPTED : TC_E_MISSING, start,
                          has_crypto ? "column is encrypted (no plaintext meta_data)"
                                     : "missing required field meta_data (id 3)");
    c->has_offset_index = has_oi_off && has_oi_len;
    c->has_column_index = has_ci_off && has_ci_len;
    tc_struct_end(r);

    /* Consistency with the schema and the file. */
    if (c->type != leaf->type)
        return tc_fail_at(r, TC_E_MISMATCH, start,
                          "meta_data.type %s differs from schema leaf '%s' (%s)",
                          pq_physical_type_name(c->type), leaf->path,
                          pq_physical_type_name(leaf->type));
    if (c->file_path.ptr == NULL) {
        uint64_t off, len;
        if (!pq_column_chunk_range(c, &off, &len))
            return tc_fail_at(r, TC_E_RANGE, start, "column chunk byte range overflows");
        if (!range_check(r, start, "column chunk", (int64_t)off, (int64_t)len, data_end))
            return false;
        if (c->has_offset_index &&
            !range_check(r, start, "offset index", c->offset_index_offset,
                         c->offset_index_length, data_end))
            return false;
        if (c->has_column_index &&
            !range_check(r, start, "column index", c->column_index_offset,
                         c->column_index_length, data_end))
            return false;
    }
    return true;
}

static bool parse_row_group(pm *d, pq_row_group *g, const pq_file_meta *m, uint64_t data_end)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: {
            if (g->columns)
                return tc_fail_at(r, TC_E_INVALID, f.offset, "columns listed twice");
            tc_path_push(r, "columns", -1);
            const size_t at = r->pos;
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "columns", &n);
            if (ok && n != m->n_leaves)
                ok = tc_fail_at(r, TC_E_MISMATCH, at,
                                "row group has %u columns but the schema has %u leaves", n,
                                m->n_leaves);
            if (ok) {
                g->columns = pm_alloc(d, n ? n : 1, sizeof *g->columns);
                ok = g->columns != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_column_chunk(d, &g->columns[i], &m->leaves[i], data_end);
            }
            if (ok) {
                g->n_columns = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 2: ok = f_i64(r, &f, "total_byte_size", &g->total_byte_size); break;
        case 3: ok = f_i64_nonneg(r, &f, "num_rows", &g->num_rows); break;
        case 4:
            g->has_sorting_columns = true;
            ok = f_skip(r, &f);
            break;
        case 5:
            ok = f_i64(r, &f, "file_offset", &g->file_offset);
            g->has_file_offset = ok;
            break;
        case 6:
            ok = f_i64(r, &f, "total_compressed_size", &g->total_compressed_size);
            g->has_total_compressed_size = ok;
            break;
        case 7:
            ok = f_i16(r, &f, "ordinal", &g->ordinal);
            g->has_ordinal = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    static const char *const names[] = {NULL, "columns", "total_byte_size", "num_rows"};
    return struct_done(r, seen, BIT(1) | BIT(2) | BIT(3), names, start);
}

static bool parse_column_order(tc_reader *r, uint8_t *out)
{
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    *out = PQ_ORDER_UNKNOWN;
    while (tc_next_field(r, &last, &f)) {
        if (f.id >= 1 && f.id <= 3 && f.type == TC_STRUCT)
            *out = (uint8_t)f.id;
        if (!f_skip(r, &f))
            return false;
    }
    return struct_close(r);
}

static bool parse_file_meta_struct(pm *d, pq_file_meta *m, uint64_t data_end)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32(r, &f, "version", &m->version); break;
        case 2: {
            if (seen & BIT(2))
                return tc_fail_at(r, TC_E_INVALID, f.offset, "schema listed twice");
            tc_path_push(r, "schema", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, PQ_MAX_SCHEMA_ELEMENTS, "schema elements", &n);
            if (ok) {
                m->schema = pm_alloc(d, n ? n : 1, sizeof *m->schema);
                ok = m->schema != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = pqm_schema_element(d, &m->schema[i]);
            }
            if (ok) {
                m->n_schema = n;
                tc_container_end(r);
                tc_path_set_index(r, -1);
                ok = pqm_resolve_leaves(d, m);
            }
            if (ok)
                tc_path_pop(r);
            break;
        }
        case 3: ok = f_i64_nonneg(r, &f, "num_rows", &m->num_rows); break;
        case 4: {
            if (!(seen & BIT(2)))
                return tc_fail_at(r, TC_E_INVALID, f.offset,
                                  "row_groups appear before the schema");
            if (seen & BIT(4))
                return tc_fail_at(r, TC_E_INVALID, f.offset, "row_groups listed twice");
            tc_path_push(r, "row_groups", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, PQ_MAX_ROW_GROUPS, "row groups", &n);
            if (ok) {
                m->row_groups = pm_alloc(d, n ? n : 1, sizeof *m->row_groups);
                ok = m->row_groups != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_row_group(d, &m->row_groups[i], m, data_end);
            }
            if (ok) {
                m->n_row_groups = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 5: ok = parse_kv_list(d, &f, "key_value_metadata", &m->kv, &m->n_kv); break;
        case 6: ok = f_bytes(r, &f, "created_by", &m->created_by); break;
        case 7: {
            tc_path_push(r, "column_orders", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "column_orders", &n);
            if (ok) {
                m->column_orders = pm_alloc(d, n ? n : 1, 1);
                ok = m->column_orders != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_column_order(r, &m->column_orders[i]);
            }
            if (ok) {
                m->n_column_orders = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 8:
            m->has_encryption_algorithm = true;
            ok = f_skip(r, &f);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    static const char *const names[] = {NULL, "version", "schema", "num_rows", "row_groups"};
    if (!struct_done(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), names, start))
        return false;
    /* Row counts must add up. */
    int64_t total = 0;
    for (uint32_t i = 0; i < m->n_row_groups; i++) {
        if (m->row_groups[i].num_rows > INT64_MAX - total)
            return tc_fail_at(r, TC_E_RANGE, start, "row group row counts overflow");
        total += m->row_groups[i].num_rows;
    }
    if (total != m->num_rows)
        return tc_fail_at(r, TC_E_MISMATCH, start,
                          "num_rows is %lld but the row groups hold %lld rows",
                          (long long)m->num_rows, (long long)total);
    return true;
}

void pq_file_meta_free(pq_file_meta *m)
{
    if (!m)
        return;
    pqm_arena_free(m->arena);
    free(m);
}

tc_status pq_file_meta_parse(const uint8_t *buf, size_t len, uint64_t data_end,
                             pq_file_meta **out, tc_error *err)
{
    *out = NULL;
    if (!buf && len)
        return sv_fail(err, TC_E_INVALID, 0, "no buffer");
    if (len > PQ_MAX_FOOTER_LEN)
        return sv_fail(err, TC_E_LIMIT, 0, "footer of %zu bytes exceeds the %u-byte limit",
                       len, PQ_MAX_FOOTER_LEN);
    pq_file_meta *m = calloc(1, sizeof *m);
    struct pq_arena *a = pqm_arena_new(PQ_MAX_DECODED_BYTES);
    if (!m || !a) {
        free(m);
        pqm_arena_free(a);
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory");
    }
    m->arena = a;
    pm d;
    d.a = a;
    uint8_t *copy = pqm_arena_alloc(a, len);
    if (!copy) {
        pq_file_meta_free(m);
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory copying the footer");
    }
    if (len)
        memcpy(copy, buf, len);
    meta_reader_init(&d.r, copy, len, NULL);
    if (!parse_file_meta_struct(&d, m, data_end)) {
        pq_file_meta_free(m);
        return meta_reader_error(&d.r, err);
    }
    *out = m;
    return TC_OK;
}

bool pq_column_chunk_range(const pq_column_chunk *c, uint64_t *offset, uint64_t *length)
{
    int64_t start = c->data_page_offset;
    /* A chunk without data pages (pyarrow's empty row groups) has
     * data_page_offset 0 and only a dictionary page. */
    if (c->has_dictionary_page_offset && c->dictionary_page_offset > 0 &&
        (c->dictionary_page_offset < start || start == 0))
        start = c->dictionary_page_offset;
    if (start < 0 || c->total_compressed_size < 0 ||
        c->total_compressed_size > INT64_MAX - start)
        return false;
    *offset = (uint64_t)start;
    *length = (uint64_t)c->total_compressed_size;
    return true;
}
