/* Statistics (column chunks, pages, standalone). */
#include "parquet_meta_internal.h"

#include <string.h>

/* Every field is optional; has_<member> says that it was read. */
#define STAT(m) PQM_AT(pq_statistics, m), PQM_HAS(pq_statistics, has_##m)
static const pqm_field statistics_fields[] = {
    {1, PQM_BYTES, "max", STAT(max)},
    {2, PQM_BYTES, "min", STAT(min)},
    {3, PQM_I64, "null_count", STAT(null_count)},
    {4, PQM_I64, "distinct_count", STAT(distinct_count)},
    {5, PQM_BYTES, "max_value", STAT(max_value)},
    {6, PQM_BYTES, "min_value", STAT(min_value)},
    {7, PQM_BOOL, "is_max_value_exact", STAT(is_max_value_exact)},
    {8, PQM_BOOL, "is_min_value_exact", STAT(is_min_value_exact)},
    {9, PQM_I64, "nan_count", STAT(nan_count)},
};
static const pqm_table statistics_table = PQM_TABLE(statistics_fields);

bool pqm_statistics(pm *d, pq_statistics *s)
{
    memset(s, 0, sizeof *s);
    return pqm_struct(d, &statistics_table, s);
}

tc_status pq_statistics_parse(const uint8_t *buf, size_t len, pq_statistics *out,
                              size_t *consumed, tc_error *err)
{
    pm d = {0};
    meta_reader_init(&d.r, buf, len, "Statistics");
    if (!pqm_statistics(&d, out))
        return meta_reader_error(&d.r, err);
    if (consumed)
        *consumed = d.r.pos;
    return TC_OK;
}
