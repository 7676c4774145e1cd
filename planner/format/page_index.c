/* The page index: OffsetIndex (where pages are, which rows they hold) and
 * ColumnIndex (per-page bounds and null counts). */
#include "parquet_meta_internal.h"

#include <stdlib.h>
#include <string.h>

static bool parse_page_location(tc_reader *r, pq_page_location *pl)
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
        case 1: ok = f_i64_nonneg(r, &f, "offset", &pl->offset); break;
        case 2: ok = f_i32(r, &f, "compressed_page_size", &pl->compressed_page_size); break;
        case 3: ok = f_i64_nonneg(r, &f, "first_row_index", &pl->first_row_index); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        seen |= field_bit(&f);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "offset", "compressed_page_size",
                                        "first_row_index"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3), names, start))
        return false;
    if (pl->compressed_page_size <= 0)
        return tc_fail_at(r, TC_E_RANGE, start, "compressed_page_size %d is not positive",
                          (int)pl->compressed_page_size);
    tc_struct_end(r);
    return true;
}

void pq_offset_index_free(pq_offset_index *oi)
{
    if (!oi)
        return;
    free(oi->pages);
    free(oi->unencoded_byte_array_data_bytes);
    memset(oi, 0, sizeof *oi);
}

static bool parse_i64_list(tc_reader *r, const tc_field *f, const char *name, int64_t **out,
                           uint32_t *n_out)
{
    tc_path_push(r, name, -1);
    uint32_t n;
    uint8_t et;
    if (!list_open_t(r, f, TC_I64, 0, name, &n, &et))
        return false;
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return tc_fail(r, TC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++)
        if (!elem_int(r, et, &v[i])) {
            free(v);
            return false;
        }
    tc_container_end(r);
    tc_path_pop(r);
    free(*out);
    *out = v;
    *n_out = n;
    return true;
}

tc_status pq_offset_index_parse(const uint8_t *buf, size_t len, pq_offset_index *out,
                                tc_error *err)
{
    memset(out, 0, sizeof *out);
    tc_reader rr, *r = &rr;
    meta_reader_init(r, buf, len, "OffsetIndex");
    const size_t start = r->pos;
    bool ok = tc_struct_begin(r);
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (ok && tc_next_field(r, &last, &f)) {
        switch (f.id) {
        case 1: {
            if (out->pages) {
                ok = tc_fail_at(r, TC_E_INVALID, f.offset, "page_locations listed twice");
                break;
            }
            tc_path_push(r, "page_locations", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "page_locations", &n);
            if (ok) {
                out->pages = calloc(n ? n : 1, sizeof *out->pages);
                if (!out->pages)
                    ok = tc_fail(r, TC_E_NOMEM, "out of memory");
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_page_location(r, &out->pages[i]);
                if (ok && i > 0) {
                    const pq_page_location *p = &out->pages[i - 1], *c = &out->pages[i];
                    if (c->offset <= p->offset)
                        ok = tc_fail(r, TC_E_INVALID,
                                     "page offset %lld does not increase (previous %lld)",
                                     (long long)c->offset, (long long)p->offset);
                    else if (c->first_row_index <= p->first_row_index)
                        ok = tc_fail(r, TC_E_INVALID,
                                     "first_row_index %lld does not increase (previous %lld)",
                                     (long long)c->first_row_index,
                                     (long long)p->first_row_index);
                }
            }
            if (ok) {
                out->n_pages = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 2:
            ok = parse_i64_list(r, &f, "unencoded_byte_array_data_bytes",
                                &out->unencoded_byte_array_data_bytes, &out->n_unencoded);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (ok)
            seen |= field_bit(&f);
    }
    if (ok && !r->failed) {
        static const char *const names[] = {NULL, "page_locations"};
        ok = require(r, seen, BIT(1), names, start);
    }
    if (ok && !r->failed && out->unencoded_byte_array_data_bytes &&
        out->n_unencoded != out->n_pages)
        ok = tc_fail_at(r, TC_E_MISMATCH, start,
                        "%u unencoded_byte_array_data_bytes entries for %u pages",
                        out->n_unencoded, out->n_pages);
    if (!ok || r->failed) {
        pq_offset_index_free(out);
        return meta_reader_error(r, err);
    }
    return TC_OK;
}

void pq_column_index_free(pq_column_index *ci)
{
    if (!ci)
        return;
    free(ci->null_pages);
    free(ci->min_values);
    free(ci->max_values);
    free(ci->null_counts);
    free(ci->owned);
    memset(ci, 0, sizeof *ci);
}

static bool parse_bytes_list(tc_reader *r, const tc_field *f, const char *name, pq_bytes **out,
                             uint32_t *n_out)
{
    tc_path_push(r, name, -1);
    uint32_t n;
    if (!list_open(r, f, TC_BINARY, 0, name, &n))
        return false;
    pq_bytes *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return tc_fail(r, TC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p;
        uint32_t len;
        if (!tc_read_binary(r, &p, &len)) {
            free(v);
            return false;
        }
        v[i] = (pq_bytes){p, len};
    }
    tc_container_end(r);
    tc_path_pop(r);
    free(*out);
    *out = v;
    *n_out = n;
    return true;
}

tc_status pq_column_index_parse(const uint8_t *buf, size_t len, pq_column_index *out,
                                tc_error *err)
{
    memset(out, 0, sizeof *out);
    out->owned = malloc(len ? len : 1);
    if (!out->owned)
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory");
    if (len)
        memcpy(out->owned, buf, len);
    tc_reader rr, *r = &rr;
    meta_reader_init(r, out->owned, len, "ColumnIndex");
    const size_t start = r->pos;
    bool ok = tc_struct_begin(r);
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    uint32_t n_null = 0, n_min = 0, n_max = 0, n_counts = 0;
    while (ok && tc_next_field(r, &last, &f)) {
        switch (f.id) {
        case 1: {
            tc_path_push(r, "null_pages", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_BOOL_TRUE, 0, "null_pages", &n);
            bool *v = NULL;
            if (ok) {
                v = calloc(n ? n : 1, sizeof *v);
                if (!v)
                    ok = tc_fail(r, TC_E_NOMEM, "out of memory");
            }
            for (uint32_t i = 0; ok && i < n; i++)
                ok = tc_read_bool_elem(r, &v[i]);
            if (ok) {
                free(out->null_pages);
                out->null_pages = v;
                n_null = n;
                tc_container_end(r);
                tc_path_pop(r);
            } else {
                free(v);
            }
            break;
        }
        case 2: ok = parse_bytes_list(r, &f, "min_values", &out->min_values, &n_min); break;
        case 3: ok = parse_bytes_list(r, &f, "max_values", &out->max_values, &n_max); break;
        case 4:
            ok = f_enum(r, &f, "boundary_order", PQ_BOUNDARY_DESCENDING, &out->boundary_order);
            break;
        case 5: ok = parse_i64_list(r, &f, "null_counts", &out->null_counts, &n_counts); break;
        default: ok = f_skip(r, &f); break;
        }
        if (ok)
            seen |= field_bit(&f);
    }
    if (ok && !r->failed) {
        static const char *const names[] = {NULL, "null_pages", "min_values", "max_values",
                                            "boundary_order"};
        ok = require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), names, start);
    }
    if (ok && !r->failed && (n_min != n_null || n_max != n_null))
        ok = tc_fail_at(r, TC_E_MISMATCH, start,
                        "null_pages, min_values and max_values have %u, %u and %u entries",
                        n_null, n_min, n_max);
    if (ok && !r->failed && out->null_counts && n_counts != n_null)
        ok = tc_fail_at(r, TC_E_MISMATCH, start, "%u null_counts entries for %u pages", n_counts,
                        n_null);
    if (!ok || r->failed) {
        pq_column_index_free(out);
        return meta_reader_error(r, err);
    }
    out->n_pages = n_null;
    return TC_OK;
}
