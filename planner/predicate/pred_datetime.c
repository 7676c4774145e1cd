/* DATE and TIMESTAMP literals: proleptic Gregorian dates to days, and
 * timestamps to a value in a column's own unit; see predicate_internal.h. */
#include "predicate_internal.h"

#include "sv_civil.h"

static int64_t unit_factor(pq_time_unit u)
{
    switch (u) {
    case PQ_UNIT_MILLIS: return 1000000;
    case PQ_UNIT_MICROS: return 1000;
    default: return 1;
    }
}

/* A timestamp literal as a value comparable with the column, in the
 * column's time frame: in the column's unit when that holds it exactly, else
 * in any unit that does (pqv_compare scales units), so that sub-unit
 * precision is kept and 9999-12-31 still compares with a nanos column. */
bool pred_timestamp_value(int64_t secs, uint32_t nanos, const pqv_type *t, pqv *out)
{
    const pq_i128 ns = (pq_i128)secs * 1000000000 + nanos;
    const pq_time_unit units[4] = {t->unit, PQ_UNIT_MILLIS, PQ_UNIT_MICROS, PQ_UNIT_NANOS};
    for (int i = 0; i < 4; i++) {
        const int64_t f = unit_factor(units[i]);
        if (ns % f)
            continue;
        const pq_i128 q = ns / f;
        if (q < INT64_MIN || q > INT64_MAX)
            continue;
        *out = pqv_timestamp((int64_t)q, units[i], t->adjusted_to_utc);
        return true;
    }
    return false;
}
