/* PageHeader: page type, sizes, CRC location, and the data (V1, V2) or
 * dictionary sub-header. */
#include "parquet_meta_internal.h"

#include <string.h>

static bool parse_data_page_header(tc_reader *r, pq_page_header *h)
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
        case 1: ok = f_i32_nonneg(r, &f, "num_values", &h->data.num_values); break;
        case 2: ok = f_i32(r, &f, "encoding", &h->data.encoding); break;
        case 3:
            ok = f_i32(r, &f, "definition_level_encoding", &h->data.definition_level_encoding);
            break;
        case 4:
            ok = f_i32(r, &f, "repetition_level_encoding", &h->data.repetition_level_encoding);
            break;
        case 5:
            ok = f_statistics(r, &f, "statistics", &h->data.statistics);
            h->data.has_statistics = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    static const char *const names[] = {NULL, "num_values", "encoding",
                                        "definition_level_encoding",
                                        "repetition_level_encoding"};
    return struct_done(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), names, start);
}

static bool parse_dict_page_header(tc_reader *r, pq_page_header *h)
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
        case 1: ok = f_i32_nonneg(r, &f, "num_values", &h->dict.num_values); break;
        case 2: ok = f_i32(r, &f, "encoding", &h->dict.encoding); break;
        case 3:
            ok = f_bool(r, &f, "is_sorted", &h->dict.is_sorted);
            h->dict.has_is_sorted = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    static const char *const names[] = {NULL, "num_values", "encoding"};
    return struct_done(r, seen, BIT(1) | BIT(2), names, start);
}

static bool parse_v2_page_header(tc_reader *r, pq_page_header *h)
{
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    h->v2.is_compressed = true;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32_nonneg(r, &f, "num_values", &h->v2.num_values); break;
        case 2: ok = f_i32_nonneg(r, &f, "num_nulls", &h->v2.num_nulls); break;
        case 3: ok = f_i32_nonneg(r, &f, "num_rows", &h->v2.num_rows); break;
        case 4: ok = f_i32(r, &f, "encoding", &h->v2.encoding); break;
        case 5:
            ok = f_i32_nonneg(r, &f, "definition_levels_byte_length",
                              &h->v2.definition_levels_byte_length);
            break;
        case 6:
            ok = f_i32_nonneg(r, &f, "repetition_levels_byte_length",
                              &h->v2.repetition_levels_byte_length);
            break;
        case 7: ok = f_bool(r, &f, "is_compressed", &h->v2.is_compressed); break;
        case 8:
            ok = f_statistics(r, &f, "statistics", &h->v2.statistics);
            h->v2.has_statistics = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL,
                                        "num_values",
                                        "num_nulls",
                                        "num_rows",
                                        "encoding",
                                        "definition_levels_byte_length",
                                        "repetition_levels_byte_length"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6), names, start))
        return false;
    if (h->v2.num_nulls > h->v2.num_values)
        return tc_fail_at(r, TC_E_RANGE, start, "num_nulls %d exceeds num_values %d",
                          (int)h->v2.num_nulls, (int)h->v2.num_values);
    tc_struct_end(r);
    return true;
}

tc_status pq_page_header_parse(const uint8_t *buf, size_t len, pq_page_header *h,
                               size_t *header_len, tc_error *err)
{
    memset(h, 0, sizeof *h);
    tc_reader rr, *r = &rr;
    meta_reader_init(r, buf, len, "PageHeader");
    const size_t start = r->pos;
    bool ok = tc_struct_begin(r);
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (ok && tc_next_field(r, &last, &f)) {
        switch (f.id) {
        case 1: ok = f_enum(r, &f, "type", PQ_PAGE_DATA_V2, &h->type); break;
        case 2:
            ok = f_i32_nonneg(r, &f, "uncompressed_page_size", &h->uncompressed_page_size);
            break;
        case 3: ok = f_i32_nonneg(r, &f, "compressed_page_size", &h->compressed_page_size); break;
        case 4: {
            const size_t at = r->pos;
            int32_t v = 0;
            ok = f_i32(r, &f, "crc", &v);
            if (ok) {
                /* Only a single zigzag-varint i32 can be rewritten in place: with
                 * a repeated field, a rewrite of one copy could leave a reader
                 * looking at another. */
                const bool repeated = h->has_crc;
                h->has_crc = true;
                h->crc = (uint32_t)v;
                if (f.type == TC_I32 && !repeated) {
                    h->crc_offset = (uint32_t)at;
                    h->crc_len = (uint32_t)(r->pos - at);
                } else {
                    h->crc_offset = 0;
                    h->crc_len = 0;
                }
            }
            break;
        }
        case 5:
            tc_path_push(r, "data_page_header", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_data_page_header(r, h);
            if (ok) {
                h->has_data_page_header = true;
                tc_path_pop(r);
            }
            break;
        case 6:
            tc_path_push(r, "index_page_header", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && f_skip(r, &f);
            if (ok) {
                h->has_index_page_header = true;
                tc_path_pop(r);
            }
            break;
        case 7:
            tc_path_push(r, "dictionary_page_header", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_dict_page_header(r, h);
            if (ok) {
                h->has_dictionary_page_header = true;
                tc_path_pop(r);
            }
            break;
        case 8:
            tc_path_push(r, "data_page_header_v2", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_v2_page_header(r, h);
            if (ok) {
                h->has_data_page_header_v2 = true;
                tc_path_pop(r);
            }
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (ok)
            seen |= field_bit(&f);
    }
    if (ok && !r->failed) {
        static const char *const names[] = {NULL, "type", "uncompressed_page_size",
                                            "compressed_page_size"};
        ok = require(r, seen, BIT(1) | BIT(2) | BIT(3), names, start);
    }
    if (ok && !r->failed) {
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
    if (!ok || r->failed)
        return meta_reader_error(r, err);
    tc_struct_end(r);
    *header_len = r->pos;
    return TC_OK;
}
