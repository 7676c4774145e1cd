/* The page index: OffsetIndex (where pages are, which rows they hold) and
 * ColumnIndex (per-page bounds and null counts). Their arrays are malloc'd
 * (pm without an arena) and freed by pq_offset_index_free and
 * pq_column_index_free. */
#include "parquet_meta_internal.h"

#include <stdlib.h>
#include <string.h>

static const pqm_field page_location_fields[] = {
    {1, PQM_I64_NONNEG, "offset", PQM_AT(pq_page_location, offset), PQM_REQ},
    {2, PQM_I32, "compressed_page_size", PQM_AT(pq_page_location, compressed_page_size), PQM_REQ},
    {3, PQM_I64_NONNEG, "first_row_index", PQM_AT(pq_page_location, first_row_index), PQM_REQ},
};
static const pqm_table page_location_table = PQM_TABLE(page_location_fields);

/* Page location i: a positive size, offsets and first rows increasing. */
static bool parse_page_location(pm *d, void *elem, uint32_t i)
{
    tc_reader *r = &d->r;
    const pq_page_location *c = elem;
    const size_t start = r->pos;
    if (!pqm_struct(d, &page_location_table, elem))
        return false;
    if (c->compressed_page_size <= 0)
        return tc_fail_at(r, TC_E_RANGE, start, "compressed_page_size %d is not positive",
                          (int)c->compressed_page_size);
    if (i == 0)
        return true;
    const pq_page_location *p = c - 1;
    if (c->offset <= p->offset)
        return tc_fail(r, TC_E_INVALID, "page offset %lld does not increase (previous %lld)",
                       (long long)c->offset, (long long)p->offset);
    if (c->first_row_index <= p->first_row_index)
        return tc_fail(r, TC_E_INVALID, "first_row_index %lld does not increase (previous %lld)",
                       (long long)c->first_row_index, (long long)p->first_row_index);
    return true;
}
static const pqm_list page_locations_list = {TC_STRUCT, sizeof(pq_page_location), .once = true,
                                             .read = parse_page_location};

static const pqm_field offset_index_fields[] = {
    {1, PQM_LIST, "page_locations", PQM_LIST_AT(pq_offset_index, pages, n_pages),
     .list = &page_locations_list, PQM_REQ},
    {2, PQM_LIST, "unencoded_byte_array_data_bytes",
     PQM_LIST_AT(pq_offset_index, unencoded_byte_array_data_bytes, n_unencoded),
     .list = &pqm_i64_list},
};
static const pqm_table offset_index_table = PQM_TABLE(offset_index_fields);

void pq_offset_index_free(pq_offset_index *oi)
{
    if (!oi)
        return;
    pqm_free_lists(&offset_index_table, oi);
    memset(oi, 0, sizeof *oi);
}

tc_status pq_offset_index_parse(const uint8_t *buf, size_t len, pq_offset_index *out,
                                tc_error *err)
{
    memset(out, 0, sizeof *out);
    pm d = {0};
    meta_reader_init(&d.r, buf, len, "OffsetIndex");
    const size_t start = d.r.pos;
    bool ok = pqm_struct(&d, &offset_index_table, out);
    if (ok && out->unencoded_byte_array_data_bytes && out->n_unencoded != out->n_pages)
        ok = tc_fail_at(&d.r, TC_E_MISMATCH, start,
                        "%u unencoded_byte_array_data_bytes entries for %u pages",
                        out->n_unencoded, out->n_pages);
    if (!ok) {
        pq_offset_index_free(out);
        return meta_reader_error(&d.r, err);
    }
    return TC_OK;
}

/* A ColumnIndex as read, with the entry count of each list (they must agree). */
typedef struct {
    pq_column_index ci;
    uint32_t n_null, n_min, n_max, n_counts;
} column_index_read;
_Static_assert(offsetof(column_index_read, ci) == 0, "the table's offsets hold for ci alone");

#define CI(arr, count) PQM_LIST_AT(column_index_read, ci.arr, count)
static const pqm_field column_index_fields[] = {
    {1, PQM_LIST, "null_pages", CI(null_pages, n_null), .list = &pqm_bool_list, PQM_REQ},
    {2, PQM_LIST, "min_values", CI(min_values, n_min), .list = &pqm_bytes_list, PQM_REQ},
    {3, PQM_LIST, "max_values", CI(max_values, n_max), .list = &pqm_bytes_list, PQM_REQ},
    {4, PQM_ENUM, "boundary_order", PQM_AT(column_index_read, ci.boundary_order),
     .max = PQ_BOUNDARY_DESCENDING, PQM_REQ},
    {5, PQM_LIST, "null_counts", CI(null_counts, n_counts), .list = &pqm_i64_list},
};
static const pqm_table column_index_table = PQM_TABLE(column_index_fields);

void pq_column_index_free(pq_column_index *ci)
{
    if (!ci)
        return;
    pqm_free_lists(&column_index_table, ci); /* a column_index_read begins with its ci */
    free(ci->owned);
    memset(ci, 0, sizeof *ci);
}

tc_status pq_column_index_parse(const uint8_t *buf, size_t len, pq_column_index *out,
                                tc_error *err)
{
    memset(out, 0, sizeof *out);
    column_index_read c = {0};
    c.ci.owned = malloc(len ? len : 1);
    if (!c.ci.owned)
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory");
    if (len)
        memcpy(c.ci.owned, buf, len);
    pm d = {0};
    meta_reader_init(&d.r, c.ci.owned, len, "ColumnIndex");
    const size_t start = d.r.pos;
    bool ok = pqm_struct(&d, &column_index_table, &c);
    if (ok && (c.n_min != c.n_null || c.n_max != c.n_null))
        ok = tc_fail_at(&d.r, TC_E_MISMATCH, start,
                        "null_pages, min_values and max_values have %u, %u and %u entries",
                        c.n_null, c.n_min, c.n_max);
    if (ok && c.ci.null_counts && c.n_counts != c.n_null)
        ok = tc_fail_at(&d.r, TC_E_MISMATCH, start, "%u null_counts entries for %u pages",
                        c.n_counts, c.n_null);
    if (!ok) {
        pq_column_index_free(&c.ci);
        return meta_reader_error(&d.r, err);
    }
    c.ci.n_pages = c.n_null;
    *out = c.ci;
    return TC_OK;
}
