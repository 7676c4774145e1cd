/* PageHeader: page type, sizes, CRC location, and the data (V1, V2) or
 * dictionary sub-header. */
#include "parquet_meta_internal.h"

#include <string.h>

#define PH(m) PQM_AT(pq_page_header, m)
static const pqm_field data_page_fields[] = {
    {1, PQM_I32_NONNEG, "num_values", PH(data.num_values), PQM_REQ},
    {2, PQM_I32, "encoding", PH(data.encoding), PQM_REQ},
    {3, PQM_I32, "definition_level_encoding", PH(data.definition_level_encoding), PQM_REQ},
    {4, PQM_I32, "repetition_level_encoding", PH(data.repetition_level_encoding), PQM_REQ},
    {5, PQM_STATS, "statistics", PH(data.statistics),
     PQM_HAS(pq_page_header, data.has_statistics)},
};
static const pqm_table data_page_table = PQM_TABLE(data_page_fields);

static const pqm_field dict_page_fields[] = {
    {1, PQM_I32_NONNEG, "num_values", PH(dict.num_values), PQM_REQ},
    {2, PQM_I32, "encoding", PH(dict.encoding), PQM_REQ},
    {3, PQM_BOOL, "is_sorted", PH(dict.is_sorted), PQM_HAS(pq_page_header, dict.has_is_sorted)},
};
static const pqm_table dict_page_table = PQM_TABLE(dict_page_fields);

/* IndexPageHeader has no fields yet. */
static const pqm_table index_page_table = {NULL, 0};

static const pqm_field v2_page_fields[] = {
    {1, PQM_I32_NONNEG, "num_values", PH(v2.num_values), PQM_REQ},
    {2, PQM_I32_NONNEG, "num_nulls", PH(v2.num_nulls), PQM_REQ},
    {3, PQM_I32_NONNEG, "num_rows", PH(v2.num_rows), PQM_REQ},
    {4, PQM_I32, "encoding", PH(v2.encoding), PQM_REQ},
    {5, PQM_I32_NONNEG, "definition_levels_byte_length", PH(v2.definition_levels_byte_length),
     PQM_REQ},
    {6, PQM_I32_NONNEG, "repetition_levels_byte_length", PH(v2.repetition_levels_byte_length),
     PQM_REQ},
    {7, PQM_BOOL, "is_compressed", PH(v2.is_compressed)},
    {8, PQM_STATS, "statistics", PH(v2.statistics), PQM_HAS(pq_page_header, v2.has_statistics)},
};
static const pqm_table v2_page_table = PQM_TABLE(v2_page_fields);

/* DataPageHeaderV2: is_compressed defaults to true; nulls are values. */
static bool read_v2_header(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    tc_reader *r = &d->r;
    pq_page_header *h = obj;
    tc_path_push(r, fd->name, -1);
    const size_t start = r->pos;
    bool ok = tc_field_expect(r, f, TC_STRUCT);
    if (ok) {
        h->v2.is_compressed = true;
        ok = pqm_struct(d, &v2_page_table, h);
    }
    if (ok && h->v2.num_nulls > h->v2.num_values)
        ok = tc_fail_at(r, TC_E_RANGE, start, "num_nulls %d exceeds num_values %d",
                        (int)h->v2.num_nulls, (int)h->v2.num_values);
    if (ok)
        h->has_data_page_header_v2 = true; /* kept when a later copy fails, as for PQM_STRUCT */
    tc_path_pop(r);
    return ok;
}

static bool read_crc(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    tc_reader *r = &d->r;
    pq_page_header *h = obj;
    const size_t at = r->pos;
    int32_t v = 0;
    if (!f_i32(r, f, fd->name, &v))
        return false;
    /* Only a single zigzag-varint i32 can be rewritten in place: with a
     * repeated field, a rewrite of one copy could leave a reader looking at
     * another. */
    const bool repeated = h->has_crc;
    h->has_crc = true;
    h->crc = (uint32_t)v;
    if (f->type == TC_I32 && !repeated) {
        h->crc_offset = (uint32_t)at;
        h->crc_len = (uint32_t)(r->pos - at);
    } else {
        h->crc_offset = 0;
        h->crc_len = 0;
    }
    return true;
}

#define PH_SUB(table, m) .sub = &table, PQM_HAS(pq_page_header, m)
static const pqm_field page_header_fields[] = {
    {1, PQM_ENUM, "type", PH(type), .max = PQ_PAGE_DATA_V2, PQM_REQ},
    {2, PQM_I32_NONNEG, "uncompressed_page_size", PH(uncompressed_page_size), PQM_REQ},
    {3, PQM_I32_NONNEG, "compressed_page_size", PH(compressed_page_size), PQM_REQ},
    {4, PQM_CALL, "crc", .call = read_crc},
    {5, PQM_STRUCT, "data_page_header", PH_SUB(data_page_table, has_data_page_header)},
    {6, PQM_STRUCT, "index_page_header", PH_SUB(index_page_table, has_index_page_header)},
    {7, PQM_STRUCT, "dictionary_page_header",
     PH_SUB(dict_page_table, has_dictionary_page_header)},
    {8, PQM_CALL, "data_page_header_v2", .call = read_v2_header},
};
static const pqm_table page_header_table = PQM_TABLE(page_header_fields);

tc_status pq_page_header_parse(const uint8_t *buf, size_t len, pq_page_header *h,
                               size_t *header_len, tc_error *err)
{
    memset(h, 0, sizeof *h);
    pm d = {0};
    tc_reader *r = &d.r;
    meta_reader_init(r, buf, len, "PageHeader");
    const size_t start = r->pos;
    bool ok = pqm_struct(&d, &page_header_table, h);
    if (ok) {
        switch (h->type) {
        case PQ_PAGE_DATA:
            if (!h->has_data_page_header)
                ok = tc_fail_at(r, TC_E_MISSING, start,
                                "DATA_PAGE without data_page_header (id 5)");
            break;
        case PQ_PAGE_DICTIONARY:
            if (!h->has_dictionary_page_header)
                ok = tc_fail_at(r, TC_E_MISSING, start,
                                "DICTIONARY_PAGE without dictionary_page_header (id 7)");
            break;
        case PQ_PAGE_DATA_V2:
            if (!h->has_data_page_header_v2)
                ok = tc_fail_at(r, TC_E_MISSING, start,
                                "DATA_PAGE_V2 without data_page_header_v2 (id 8)");
            else {
                const int64_t levels = (int64_t)h->v2.definition_levels_byte_length +
                                       h->v2.repetition_levels_byte_length;
                if (levels > h->compressed_page_size || levels > h->uncompressed_page_size)
                    ok = tc_fail_at(r, TC_E_RANGE, start,
                                    "level bytes (%lld) exceed the page size (compressed %d, "
                                    "uncompressed %d)",
                                    (long long)levels, (int)h->compressed_page_size,
                                    (int)h->uncompressed_page_size);
            }
            break;
        default:
            break;
        }
    }
    if (!ok)
        return meta_reader_error(r, err);
    *header_len = r->pos;
    return TC_OK;
}
