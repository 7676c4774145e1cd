#include "delta_partition.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_civil.h"

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* "[-]digits[.digits]" as an unscaled value at scale (more fraction digits
 * than the scale: not this type's value). */
static bool parse_decimal(const char *s, int32_t scale, int32_t precision, pq_i128 *out)
{
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    pq_i128 v = 0;
    int digits = 0, frac = -1;
    for (; *s; s++) {
        if (*s == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (*s < '0' || *s > '9' || ++digits > 38)
            return false;
        if (frac >= 0 && ++frac > scale)
            return false;
        v = v * 10 + (*s - '0');
    }
    if (digits == 0)
        return false;
    for (int f = frac < 0 ? 0 : frac; f < scale; f++)
        v *= 10;
    (void)precision;
    *out = neg ? -v : v;
    return true;
}

bool delta_partition_constant(const delta_field *f, const char *text, pred_constant *out)
{
    memset(out, 0, sizeof *out);
    out->name = f->physical;
    out->is_null = text == NULL;
    pqv_type *t = &out->type;
    pqv *v = &out->value;
    const char *ty = f->type;
    int64_t i;
    if (!strcmp(ty, "string") || !strcmp(ty, "binary")) {
        *t = (pqv_type){.kind = PQV_BYTES, .physical = PQ_BYTE_ARRAY};
        if (text)
            *v = pqv_bytes(text, (uint32_t)strlen(text));
        return true;
    }
    static const struct {
        const char *name;
        int64_t lo, hi;
        uint8_t bits;
    } ints[] = {{"byte", INT8_MIN, INT8_MAX, 8}, {"short", INT16_MIN, INT16_MAX, 16},
                {"integer", INT32_MIN, INT32_MAX, 32}, {"long", INT64_MIN, INT64_MAX, 64}};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        if (strcmp(ty, ints[k].name))
            continue;
        *t = (pqv_type){.kind = PQV_INT, .physical = ints[k].bits == 64 ? PQ_INT64 : PQ_INT32,
                        .int_bits = ints[k].bits};
        if (!text)
            return true;
        if (!parse_int(text, ints[k].lo, ints[k].hi, &i))
            return false;
        *v = pqv_int(i);
        return true;
    }
    if (!strcmp(ty, "boolean")) {
        *t = (pqv_type){.kind = PQV_BOOL, .physical = PQ_BOOLEAN};
        if (!text)
            return true;
        if (strcmp(text, "true") && strcmp(text, "false"))
            return false;
        v->kind = PQV_BOOL;
        v->v.b = text[0] == 't';
        return true;
    }
    if (!strcmp(ty, "double") || !strcmp(ty, "float")) {
        *t = (pqv_type){.kind = PQV_FLOAT, .physical = !strcmp(ty, "double") ? PQ_DOUBLE : PQ_FLOAT};
        if (!text)
            return true;
        char *end;
        errno = 0;
        double d = strtod(text, &end);
        if (errno || end == text || *end)
            return false;
        v->kind = PQV_FLOAT;
        v->v.f = d;
        return true;
    }
    if (!strcmp(ty, "date")) {
        *t = (pqv_type){.kind = PQV_DATE, .physical = PQ_INT32};
        int32_t days;
        if (!text)
            return true;
        if (!sv_parse_date(text, strlen(text), &days))
            return false;
        v->kind = PQV_DATE;
        v->v.i = days;
        return true;
    }
    if (!strcmp(ty, "timestamp") || !strcmp(ty, "timestamp_ntz")) {
        const bool utc = !strcmp(ty, "timestamp");
        *t = (pqv_type){.kind = PQV_TIMESTAMP, .physical = PQ_INT64, .unit = PQ_UNIT_MICROS, .adjusted_to_utc = utc};
        if (!text)
            return true;
        size_t n = strlen(text);
        /* A zone-less timestamp value is in the writer's session zone: only
         * an explicit UTC one ("...Z") is certain. */
        if (utc && (n == 0 || text[n - 1] != 'Z'))
            return false;
        if (utc)
            n--;
        int64_t secs;
        uint32_t nanos;
        if (!sv_parse_timestamp(text, n, &secs, &nanos) || (utc && (n < 11 || text[10] != 'T')))
            return false;
        v->kind = PQV_TIMESTAMP;
        v->unit = PQ_UNIT_MICROS;
        v->adjusted_to_utc = utc;
        v->v.i = secs * 1000000 + nanos / 1000;
        return true;
    }
    int32_t p, s;
    if (sscanf(ty, "decimal(%d,%d)", &p, &s) == 2 && p > 0 && p <= 38 && s >= 0 && s <= p) {
        *t = (pqv_type){.kind = PQV_DECIMAL, .physical = PQ_FIXED_LEN_BYTE_ARRAY, .scale = s, .precision = p};
        if (!text)
            return true;
        pq_i128 u;
        if (!parse_decimal(text, s, p, &u))
            return false;
        v->kind = PQV_DECIMAL;
        v->scale = s;
        v->v.dec = u;
        return true;
    }
    return false;
}
