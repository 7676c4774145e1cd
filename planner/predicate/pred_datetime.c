/* DATE and TIMESTAMP literals: proleptic Gregorian dates to days, and
 * timestamps to a value in a column's own unit; see predicate_internal.h. */
#include "predicate_internal.h"

#include "sv_civil.h"

static bool digits_at(const char *s, size_t n, size_t at, size_t count, int64_t *v)
{
    if (at + count > n)
        return false;
    int64_t x = 0;
    for (size_t i = 0; i < count; i++) {
        const char c = s[at + i];
        if (c < '0' || c > '9')
            return false;
        x = x * 10 + (c - '0');
    }
    *v = x;
    return true;
}

/* YYYY-MM-DD at the start of s; 10 bytes. */
static bool parse_ymd(const char *s, size_t n, int64_t *days)
{
    int64_t y, m, d;
    if (!digits_at(s, n, 0, 4, &y) || n < 10 || s[4] != '-' || !digits_at(s, n, 5, 2, &m) ||
        s[7] != '-' || !digits_at(s, n, 8, 2, &d))
        return false;
    if (!sv_civil_valid(y, m, d))
        return false;
    *days = sv_days_from_civil(y, m, d);
    return true;
}

bool pred_parse_date(const char *s, size_t n, int32_t *days)
{
    int64_t d;
    if (n != 10 || !parse_ymd(s, n, &d))
        return false;
    *days = (int32_t)d; /* years 0000..9999 fit easily */
    return true;
}

/* YYYY-MM-DD[( |T)HH:MM:SS[.f{1,9}]] in the literal's own frame. */
bool pred_parse_timestamp(const char *s, size_t n, int64_t *secs, uint32_t *nanos)
{
    int64_t days;
    if (!parse_ymd(s, n, &days))
        return false;
    int64_t h = 0, mi = 0, sec = 0, frac = 0;
    if (n > 10) {
        if ((s[10] != ' ' && s[10] != 'T') || !digits_at(s, n, 11, 2, &h) || n < 19 ||
            s[13] != ':' || !digits_at(s, n, 14, 2, &mi) || s[16] != ':' ||
            !digits_at(s, n, 17, 2, &sec))
            return false;
        if (h > 23 || mi > 59 || sec > 59)
            return false;
        size_t p = 19;
        if (p < n) {
            if (s[p] != '.')
                return false;
            p++;
            size_t nd = 0;
            while (p < n && s[p] >= '0' && s[p] <= '9' && nd < 9) {
                frac = frac * 10 + (s[p] - '0');
                p++;
                nd++;
            }
            if (nd == 0 || p != n)
                return false;
            for (; nd < 9; nd++)
                frac *= 10;
        }
    }
    *secs = days * 86400 + h * 3600 + mi * 60 + sec;
    *nanos = (uint32_t)frac;
    return true;
}

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
