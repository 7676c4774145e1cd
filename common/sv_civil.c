#include "sv_civil.h"

#include <stddef.h>

bool sv_is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool sv_civil_valid(int64_t y, int64_t m, int64_t d)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m >= 1 && m <= 12 && d >= 1 && d <= mdays[m - 1] + (m == 2 && sv_is_leap(y));
}

int64_t sv_days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

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

bool sv_parse_date(const char *s, size_t n, int32_t *days)
{
    int64_t d;
    if (n != 10 || !parse_ymd(s, n, &d))
        return false;
    *days = (int32_t)d; /* years 0000..9999 fit easily */
    return true;
}

/* YYYY-MM-DD[( |T)HH:MM:SS[.f{1,9}]] in the literal's own frame. */
bool sv_parse_timestamp(const char *s, size_t n, int64_t *secs, uint32_t *nanos)
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
