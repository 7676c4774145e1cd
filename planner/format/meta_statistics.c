/* Statistics (column chunks, pages, standalone). */
#include "parquet_meta_internal.h"

#include <string.h>

bool pqm_statistics(tc_reader *r, pq_statistics *s)
{
    memset(s, 0, sizeof *s);
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_bytes(r, &f, "max", &s->max); s->has_max = ok; break;
        case 2: ok = f_bytes(r, &f, "min", &s->min); s->has_min = ok; break;
        case 3: ok = f_i64(r, &f, "null_count", &s->null_count); s->has_null_count = ok; break;
        case 4:
            ok = f_i64(r, &f, "distinct_count", &s->distinct_count);
            s->has_distinct_count = ok;
            break;
        case 5: ok = f_bytes(r, &f, "max_value", &s->max_value); s->has_max_value = ok; break;
        case 6: ok = f_bytes(r, &f, "min_value", &s->min_value); s->has_min_value = ok; break;
        case 7:
            ok = f_bool(r, &f, "is_max_value_exact", &s->is_max_value_exact);
            s->has_is_max_value_exact = ok;
            break;
        case 8:
            ok = f_bool(r, &f, "is_min_value_exact", &s->is_min_value_exact);
            s->has_is_min_value_exact = ok;
            break;
        case 9: ok = f_i64(r, &f, "nan_count", &s->nan_count); s->has_nan_count = ok; break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
    }
    return struct_close(r);
}

tc_status pq_statistics_parse(const uint8_t *buf, size_t len, pq_statistics *out,
                              size_t *consumed, tc_error *err)
{
    tc_reader r;
    meta_reader_init(&r, buf, len, "Statistics");
    if (!pqm_statistics(&r, out))
        return meta_reader_error(&r, err);
    if (consumed)
        *consumed = r.pos;
    return TC_OK;
}
