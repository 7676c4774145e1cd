/* Proleptic Gregorian dates as days since 1970-01-01, without timegm, TZ or
 * locale: one copy for every parser of dates (the predicate's DATE and
 * TIMESTAMP literals; S3 listing times can use it too).
 *
 *   if (!sv_civil_valid(y, m, d))
 *       return false;
 *   days = sv_days_from_civil(y, m, d);
 */
#ifndef SIEVE_SV_CIVIL_H
#define SIEVE_SV_CIVIL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool sv_is_leap(int64_t y);

/* m is 1..12 and d a day of that month (29 February in leap years only). */
bool sv_civil_valid(int64_t y, int64_t m, int64_t d);

/* Days since 1970-01-01 of a valid date (H. Hinnant's days_from_civil). */
int64_t sv_days_from_civil(int64_t y, int64_t m, int64_t d);

/* 'YYYY-MM-DD' (exactly): days since 1970-01-01. */
bool sv_parse_date(const char *s, size_t n, int32_t *days);
/* 'YYYY-MM-DD[( |T)HH:MM:SS[.f{1,9}]]': seconds since 1970-01-01 00:00 in
 * the text's own frame, and nanoseconds. */
bool sv_parse_timestamp(const char *s, size_t n, int64_t *secs, uint32_t *nanos);

#endif
