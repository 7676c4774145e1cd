/* FileMetaData: row groups, column chunks and their ColumnMetaData, key-value
 * metadata and column orders, checked against the schema and the file. */
#include "parquet_meta_internal.h"

#include <stdlib.h>
#include <string.h>

static const pqm_field key_value_fields[] = {
    {1, PQM_BYTES, "key", PQM_AT(pq_key_value, key), PQM_REQ},
    {2, PQM_BYTES, "value", PQM_AT(pq_key_value, value)},
};
static const pqm_table key_value_table = PQM_TABLE(key_value_fields);
static const pqm_list key_value_list = {TC_STRUCT, sizeof(pq_key_value), .sub = &key_value_table};

static const pqm_field encoding_stats_fields[] = {
    {1, PQM_I32, "page_type", PQM_AT(pq_encoding_stats, page_type), PQM_REQ},
    {2, PQM_I32, "encoding", PQM_AT(pq_encoding_stats, encoding), PQM_REQ},
    {3, PQM_I32, "count", PQM_AT(pq_encoding_stats, count), PQM_REQ},
};
static const pqm_table encoding_stats_table = PQM_TABLE(encoding_stats_fields);
static const pqm_list encoding_stats_list = {TC_STRUCT, sizeof(pq_encoding_stats),
                                             .sub = &encoding_stats_table};

/* ColumnMetaData.encodings: a bit per encoding. */
static bool read_encodings(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    tc_reader *r = &d->r;
    pq_column_chunk *c = obj;
    tc_path_push(r, fd->name, -1);
    uint32_t n;
    uint8_t et;
    bool ok = pqm_list_open(r, f, TC_I32, 0, fd->name, &n, &et);
    for (uint32_t i = 0; ok && i < n; i++) {
        const size_t at = r->pos;
        int64_t e;
        ok = elem_int(r, et, &e);
        if (ok && (e < 0 || e > 31))
            ok = tc_fail_at(r, TC_E_RANGE, at, "encoding %lld out of range", (long long)e);
        if (ok)
            c->encodings_mask |= 1u << e;
    }
    if (ok) {
        tc_container_end(r);
        tc_path_pop(r);
    }
    return ok;
}

/* The enum members are read as the i32 they are on the wire. */
_Static_assert(sizeof(pq_physical_type) == sizeof(int32_t), "pq_physical_type is an i32");
_Static_assert(sizeof(pq_codec) == sizeof(int32_t), "pq_codec is an i32");

/* ColumnMetaData: its fields are part of pq_column_chunk. */
#define CC(m) PQM_AT(pq_column_chunk, m)
#define CC_OPT(m) CC(m), PQM_HAS(pq_column_chunk, has_##m)
static const pqm_field column_meta_fields[] = {
    {1, PQM_ENUM, "type", CC(type), .max = PQ_FIXED_LEN_BYTE_ARRAY, PQM_REQ},
    {2, PQM_CALL, "encodings", .call = read_encodings, PQM_REQ},
    {3, PQM_LIST, "path_in_schema", PQM_LIST_AT(pq_column_chunk, path_in_schema, n_path),
     .list = &pqm_bytes_list, PQM_REQ},
    {4, PQM_I32, "codec", CC(codec), PQM_REQ},
    {5, PQM_I64_NONNEG, "num_values", CC(num_values), PQM_REQ},
    {6, PQM_I64_NONNEG, "total_uncompressed_size", CC(total_uncompressed_size), PQM_REQ},
    {7, PQM_I64_NONNEG, "total_compressed_size", CC(total_compressed_size), PQM_REQ},
    {8, PQM_LIST, "key_value_metadata", PQM_LIST_AT(pq_column_chunk, kv, n_kv),
     .list = &key_value_list},
    {9, PQM_I64_NONNEG, "data_page_offset", CC(data_page_offset), PQM_REQ},
    {10, PQM_I64, "index_page_offset", CC_OPT(index_page_offset)},
    {11, PQM_I64, "dictionary_page_offset", CC_OPT(dictionary_page_offset)},
    {12, PQM_STATS, "statistics", CC_OPT(statistics)},
    {13, PQM_LIST, "encoding_stats",
     PQM_LIST_AT(pq_column_chunk, encoding_stats, n_encoding_stats), .list = &encoding_stats_list},
    {14, PQM_I64, "bloom_filter_offset", CC_OPT(bloom_filter_offset)},
    {15, PQM_I32, "bloom_filter_length", CC_OPT(bloom_filter_length)},
};
static const pqm_table column_meta_table = PQM_TABLE(column_meta_fields);

/* ColumnChunk; ids 8 and 9 (crypto metadata) are only looked for. */
static const pqm_field column_chunk_fields[] = {
    {1, PQM_BYTES, "file_path", CC(file_path)},
    {2, PQM_I64, "file_offset", CC(file_offset)},
    {3, PQM_STRUCT, "meta_data", .sub = &column_meta_table, PQM_REQ},
    {4, PQM_I64, "offset_index_offset", CC(offset_index_offset)},
    {5, PQM_I32, "offset_index_length", CC(offset_index_length)},
    {6, PQM_I64, "column_index_offset", CC(column_index_offset)},
    {7, PQM_I32, "column_index_length", CC(column_index_length)},
};
static const pqm_table column_chunk_table = PQM_TABLE(column_chunk_fields);

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

/* Column chunk i of a row group. */
static bool parse_column_chunk(pm *d, void *elem, uint32_t i)
{
    tc_reader *r = &d->r;
    pq_column_chunk *c = elem;
    const pq_leaf *leaf = &d->m->leaves[i];
    const uint64_t data_end = d->data_end;
    const size_t start = r->pos;
    uint32_t seen;
    if (!pqm_read(d, &column_chunk_table, c, &seen))
        return false;
    if (!(seen & BIT(3)) && (seen & (BIT(8) | BIT(9))))
        return tc_fail_at(r, TC_E_ENCRYPTED, start, "column is encrypted (no plaintext meta_data)");
    if (!pqm_required(r, &column_chunk_table, seen, start))
        return false;
    /* An index of no bytes is no index (its offset is then never checked). */
    c->has_offset_index = (seen & BIT(4)) && (seen & BIT(5)) && c->offset_index_length != 0;
    c->has_column_index = (seen & BIT(6)) && (seen & BIT(7)) && c->column_index_length != 0;

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

/* A row group lists one column chunk per schema leaf. */
static bool columns_count(pm *d, uint32_t n, size_t at)
{
    if (n != d->m->n_leaves)
        return tc_fail_at(&d->r, TC_E_MISMATCH, at,
                          "row group has %u columns but the schema has %u leaves", n,
                          d->m->n_leaves);
    return true;
}
static const pqm_list columns_list = {TC_STRUCT, sizeof(pq_column_chunk), .once = true,
                                      .count = columns_count, .read = parse_column_chunk};

#define RG(m) PQM_AT(pq_row_group, m)
#define RG_OPT(m) RG(m), PQM_HAS(pq_row_group, has_##m)
static const pqm_field row_group_fields[] = {
    {1, PQM_LIST, "columns", PQM_LIST_AT(pq_row_group, columns, n_columns),
     .list = &columns_list, PQM_REQ},
    {2, PQM_I64, "total_byte_size", RG(total_byte_size), PQM_REQ},
    {3, PQM_I64_NONNEG, "num_rows", RG(num_rows), PQM_REQ},
    {4, PQM_SKIP, "sorting_columns", PQM_HAS(pq_row_group, has_sorting_columns)},
    {5, PQM_I64, "file_offset", RG_OPT(file_offset)},
    {6, PQM_I64, "total_compressed_size", RG_OPT(total_compressed_size)},
    {7, PQM_I16, "ordinal", RG_OPT(ordinal)},
};
static const pqm_table row_group_table = PQM_TABLE(row_group_fields);

static bool parse_row_group(pm *d, void *elem, uint32_t i)
{
    (void)i;
    return pqm_struct(d, &row_group_table, elem);
}

/* ColumnOrder: which member of the union, one byte per column. */
static bool parse_column_order(pm *d, void *elem, uint32_t i)
{
    (void)i;
    int16_t id;
    const bool ok = pqm_union_member(d, 3, NULL, &id);
    *(uint8_t *)elem = (uint8_t)id;
    return ok;
}

/* The schema resolves into leaves as soon as it is read: the row groups'
 * column chunks are checked against them. */
static bool read_schema(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    if (!pqm_list_read(d, fd, f, obj))
        return false;
    tc_path_push(&d->r, fd->name, -1);
    const bool ok = pqm_resolve_leaves(d);
    tc_path_pop(&d->r);
    return ok;
}

static bool read_row_groups(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    const pq_file_meta *m = obj;
    if (!m->schema)
        return tc_fail_at(&d->r, TC_E_INVALID, f->offset, "row_groups appear before the schema");
    return pqm_list_read(d, fd, f, obj);
}

static const pqm_list schema_list = {TC_STRUCT, sizeof(pq_schema_element), PQ_MAX_SCHEMA_ELEMENTS,
                                     "schema elements", .once = true,
                                     .read = pqm_schema_element};
static const pqm_list row_groups_list = {TC_STRUCT, sizeof(pq_row_group), PQ_MAX_ROW_GROUPS,
                                         "row groups", .once = true, .read = parse_row_group};
static const pqm_list column_orders_list = {TC_STRUCT, 1, .read = parse_column_order};

#define FM(arr, count) PQM_LIST_AT(pq_file_meta, arr, count)
static const pqm_field file_meta_fields[] = {
    {1, PQM_I32, "version", PQM_AT(pq_file_meta, version), PQM_REQ},
    {2, PQM_CALL, "schema", FM(schema, n_schema), .list = &schema_list, .call = read_schema,
     PQM_REQ},
    {3, PQM_I64_NONNEG, "num_rows", PQM_AT(pq_file_meta, num_rows), PQM_REQ},
    {4, PQM_CALL, "row_groups", FM(row_groups, n_row_groups), .list = &row_groups_list,
     .call = read_row_groups, PQM_REQ},
    {5, PQM_LIST, "key_value_metadata", FM(kv, n_kv), .list = &key_value_list},
    {6, PQM_BYTES, "created_by", PQM_AT(pq_file_meta, created_by)},
    {7, PQM_LIST, "column_orders", FM(column_orders, n_column_orders),
     .list = &column_orders_list},
    {8, PQM_SKIP, "encryption_algorithm", PQM_HAS(pq_file_meta, has_encryption_algorithm)},
};
static const pqm_table file_meta_table = PQM_TABLE(file_meta_fields);

static bool parse_file_meta_struct(pm *d, pq_file_meta *m)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!pqm_struct(d, &file_meta_table, m))
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
    pm d = {.a = a, .m = m, .data_end = data_end};
    uint8_t *copy = pqm_arena_alloc(a, len);
    if (!copy) {
        pq_file_meta_free(m);
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory copying the footer");
    }
    if (len)
        memcpy(copy, buf, len);
    meta_reader_init(&d.r, copy, len, NULL);
    if (!parse_file_meta_struct(&d, m)) {
        pq_file_meta_free(m);
        return meta_reader_error(&d.r, err);
    }
    *out = m;
    return TC_OK;
}

uint32_t pq_schema_subtree_end(const pq_file_meta *m, uint32_t i)
{
    uint64_t pending = 1;
    while (pending > 0 && i < m->n_schema) {
        pending--;
        if (m->schema[i].num_children > 0)
            pending += (uint32_t)m->schema[i].num_children;
        i++;
    }
    return i;
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
