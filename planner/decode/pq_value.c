/* Comparable logical values; see pq_value.h. */
#include "pq_value.h"

#include "sv_name.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 pq_u128;

#define I128_MAX ((pq_i128)(((pq_u128)1 << 127) - 1))
#define I128_MIN (-I128_MAX - 1)
#define JULIAN_EPOCH_DAY 2440588LL /* Julian day number of 1970-01-01 */
#define NANOS_PER_DAY 86400000000000LL

const char *pqv_kind_name(pqv_kind k)
{
    static const char *const names[] = {
        [PQV_BOOL] = "BOOL", [PQV_INT] = "INT", [PQV_UINT] = "UINT", [PQV_FLOAT] = "FLOAT",
        [PQV_DECIMAL] = "DECIMAL", [PQV_DATE] = "DATE", [PQV_TIME] = "TIME",
        [PQV_TIMESTAMP] = "TIMESTAMP", [PQV_BYTES] = "BYTES",
    };
    return SV_NAME(names, k, "unknown");
}

/* ---------------- type resolution ---------------- */

static pqd_status want_physical(pq_physical_type have, pq_physical_type want, const char *what,
                                pqd_error *err)
{
    if (have != want)
        return sv_fail(err, PQD_E_INVALID, 0, "%s annotation on physical type %d", what,
                       (int)have);
    return PQD_OK;
}

static pqd_status decimal_type(pqv_type *t, int32_t scale, int32_t precision, pqd_error *err)
{
    switch (t->physical) {
    case PQ_INT32:
    case PQ_INT64:
    case PQ_BYTE_ARRAY:
        break;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (t->type_length <= 0)
            return sv_fail(err, PQD_E_INVALID, 0, "DECIMAL: bad type_length %d", t->type_length);
        break;
    default:
        return sv_fail(err, PQD_E_INVALID, 0, "DECIMAL annotation on physical type %d",
                       (int)t->physical);
    }
    if (precision < 1)
        return sv_fail(err, PQD_E_INVALID, 0, "DECIMAL: precision %d", precision);
    if (precision > 38)
        return sv_fail(err, PQD_E_UNSUPPORTED, 0, "DECIMAL: precision %d over 38", precision);
    if (scale < 0 || scale > precision)
        return sv_fail(err, PQD_E_INVALID, 0, "DECIMAL: scale %d outside 0..%d", scale,
                       precision);
    t->kind = PQV_DECIMAL;
    t->scale = scale;
    t->precision = precision;
    return PQD_OK;
}

static pqd_status integer_type(pqv_type *t, int bits, bool is_signed, pqd_error *err)
{
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
        return sv_fail(err, PQD_E_INVALID, 0, "INTEGER: bit width %d", bits);
    const pq_physical_type want = bits == 64 ? PQ_INT64 : PQ_INT32;
    pqd_status st = want_physical(t->physical, want, "INTEGER", err);
    if (st != PQD_OK)
        return st;
    t->kind = is_signed ? PQV_INT : PQV_UINT;
    t->int_bits = (uint8_t)bits;
    return PQD_OK;
}

static pqd_status time_type(pqv_type *t, pqv_kind kind, pq_time_unit unit, bool adjusted,
                            pqd_error *err)
{
    if (unit != PQ_UNIT_MILLIS && unit != PQ_UNIT_MICROS && unit != PQ_UNIT_NANOS)
        return sv_fail(err, PQD_E_INVALID, 0, "%s: unknown unit %d",
                       kind == PQV_TIME ? "TIME" : "TIMESTAMP", (int)unit);
    const pq_physical_type want =
        (kind == PQV_TIME && unit == PQ_UNIT_MILLIS) ? PQ_INT32 : PQ_INT64;
    pqd_status st = want_physical(t->physical, want, kind == PQV_TIME ? "TIME" : "TIMESTAMP", err);
    if (st != PQD_OK)
        return st;
    t->kind = kind;
    t->unit = unit;
    t->adjusted_to_utc = adjusted;
    return PQD_OK;
}

static pqd_status bytes_type(pqv_type *t, const char *what, pqd_error *err)
{
    if (t->physical != PQ_BYTE_ARRAY && t->physical != PQ_FIXED_LEN_BYTE_ARRAY)
        return sv_fail(err, PQD_E_INVALID, 0, "%s annotation on physical type %d", what,
                       (int)t->physical);
    t->kind = PQV_BYTES;
    return PQD_OK;
}

static pqd_status physical_default(pqv_type *t, pqd_error *err)
{
    switch (t->physical) {
    case PQ_BOOLEAN: t->kind = PQV_BOOL; return PQD_OK;
    case PQ_INT32: t->kind = PQV_INT; t->int_bits = 32; return PQD_OK;
    case PQ_INT64: t->kind = PQV_INT; t->int_bits = 64; return PQD_OK;
    case PQ_INT96:
        t->kind = PQV_TIMESTAMP;
        t->unit = PQ_UNIT_NANOS;
        t->adjusted_to_utc = false;
        return PQD_OK;
    case PQ_FLOAT:
    case PQ_DOUBLE: t->kind = PQV_FLOAT; return PQD_OK;
    case PQ_BYTE_ARRAY: t->kind = PQV_BYTES; return PQD_OK;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (t->type_length <= 0)
            return sv_fail(err, PQD_E_INVALID, 0, "FIXED_LEN_BYTE_ARRAY: bad type_length %d",
                           t->type_length);
        t->kind = PQV_BYTES;
        return PQD_OK;
    }
    return sv_fail(err, PQD_E_INVALID, 0, "bad physical type %d", (int)t->physical);
}

pqd_status pqv_type_resolve(pq_physical_type physical, int32_t type_length,
                            int32_t converted_type, int32_t scale, int32_t precision,
                            const pq_logical_type *lt, pqv_type *out, pqd_error *err)
{
    memset(out, 0, sizeof *out);
    out->physical = physical;
    out->type_length = type_length;
    if (physical < PQ_BOOLEAN || physical > PQ_FIXED_LEN_BYTE_ARRAY)
        return sv_fail(err, PQD_E_INVALID, 0, "bad physical type %d", (int)physical);
    if (physical == PQ_FIXED_LEN_BYTE_ARRAY && type_length <= 0)
        return sv_fail(err, PQD_E_INVALID, 0, "FIXED_LEN_BYTE_ARRAY: bad type_length %d",
                       type_length);
    if (lt && lt->kind != PQ_LT_NONE) {
        switch (lt->kind) {
        case PQ_LT_STRING: return bytes_type(out, "STRING", err);
        case PQ_LT_ENUM: return bytes_type(out, "ENUM", err);
        case PQ_LT_JSON: return bytes_type(out, "JSON", err);
        case PQ_LT_BSON: return bytes_type(out, "BSON", err);
        case PQ_LT_UUID:
            if (physical != PQ_FIXED_LEN_BYTE_ARRAY || type_length != 16)
                return sv_fail(err, PQD_E_INVALID, 0, "UUID needs FIXED_LEN_BYTE_ARRAY(16)");
            out->kind = PQV_BYTES;
            return PQD_OK;
        case PQ_LT_DECIMAL: return decimal_type(out, lt->decimal_scale, lt->decimal_precision, err);
        case PQ_LT_DATE: {
            pqd_status st = want_physical(physical, PQ_INT32, "DATE", err);
            if (st == PQD_OK)
                out->kind = PQV_DATE;
            return st;
        }
        case PQ_LT_TIME: return time_type(out, PQV_TIME, lt->unit, lt->adjusted_to_utc, err);
        case PQ_LT_TIMESTAMP:
            return time_type(out, PQV_TIMESTAMP, lt->unit, lt->adjusted_to_utc, err);
        case PQ_LT_INTEGER: return integer_type(out, lt->bit_width, lt->is_signed, err);
        case PQ_LT_FLOAT16:
            if (physical != PQ_FIXED_LEN_BYTE_ARRAY || type_length != 2)
                return sv_fail(err, PQD_E_INVALID, 0, "FLOAT16 needs FIXED_LEN_BYTE_ARRAY(2)");
            out->kind = PQV_FLOAT;
            out->float16 = true;
            return PQD_OK;
        case PQ_LT_OTHER:
            break; /* unknown union member: fall back to the converted type */
        default:
            return sv_fail(err, PQD_E_UNSUPPORTED, 0, "logical type %d has no value order",
                           (int)lt->kind);
        }
    }
    switch (converted_type) {
    case PQ_CT_NONE: return physical_default(out, err);
    case PQ_CT_UTF8: return bytes_type(out, "UTF8", err);
    case PQ_CT_ENUM: return bytes_type(out, "ENUM", err);
    case PQ_CT_JSON: return bytes_type(out, "JSON", err);
    case PQ_CT_BSON: return bytes_type(out, "BSON", err);
    case PQ_CT_DECIMAL: return decimal_type(out, scale, precision, err);
    case PQ_CT_DATE: {
        pqd_status st = want_physical(physical, PQ_INT32, "DATE", err);
        if (st == PQD_OK)
            out->kind = PQV_DATE;
        return st;
    }
    case PQ_CT_TIME_MILLIS: return time_type(out, PQV_TIME, PQ_UNIT_MILLIS, true, err);
    case PQ_CT_TIME_MICROS: return time_type(out, PQV_TIME, PQ_UNIT_MICROS, true, err);
    case PQ_CT_TIMESTAMP_MILLIS: return time_type(out, PQV_TIMESTAMP, PQ_UNIT_MILLIS, true, err);
    case PQ_CT_TIMESTAMP_MICROS: return time_type(out, PQV_TIMESTAMP, PQ_UNIT_MICROS, true, err);
    case PQ_CT_UINT_8: return integer_type(out, 8, false, err);
    case PQ_CT_UINT_16: return integer_type(out, 16, false, err);
    case PQ_CT_UINT_32: return integer_type(out, 32, false, err);
    case PQ_CT_UINT_64: return integer_type(out, 64, false, err);
    case PQ_CT_INT_8: return integer_type(out, 8, true, err);
    case PQ_CT_INT_16: return integer_type(out, 16, true, err);
    case PQ_CT_INT_32: return integer_type(out, 32, true, err);
    case PQ_CT_INT_64: return integer_type(out, 64, true, err);
    default:
        return sv_fail(err, PQD_E_UNSUPPORTED, 0, "converted type %d has no value order",
                       (int)converted_type);
    }
}

pqd_status pqv_type_from_leaf(const pq_leaf *leaf, pqv_type *out, pqd_error *err)
{
    return pqv_type_resolve(leaf->type, leaf->type_length, leaf->converted_type, leaf->scale,
                            leaf->precision, &leaf->logical, out, err);
}

/* ---------------- value construction ---------------- */

static int32_t ld_i32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int64_t ld_i64(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

bool pqv_int96_to_nanos(const uint8_t p[12], int64_t *nanos)
{
    const int64_t of_day = ld_i64(p);
    const int32_t jday = ld_i32(p + 8);
    const pq_i128 n = ((pq_i128)jday - JULIAN_EPOCH_DAY) * NANOS_PER_DAY + of_day;
    if (n > INT64_MAX || n < INT64_MIN)
        return false;
    *nanos = (int64_t)n;
    return true;
}

static double half_to_double(uint16_t h)
{
    const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexp(mant | 0x400, exp - 25);
    return sign ? -v : v;
}

/* Big-endian two's complement of any length; PQD_E_RANGE when it needs more
 * than 128 bits. */
static pqd_status be_to_i128(const uint8_t *p, size_t len, pq_i128 *out, pqd_error *err)
{
    if (len == 0)
        return sv_fail(err, PQD_E_CORRUPT, 0, "DECIMAL: empty value");
    const uint8_t ext = (p[0] & 0x80) ? 0xff : 0x00;
    size_t skip = 0;
    while (len - skip > 16) {
        if (p[skip] != ext)
            return sv_fail(err, PQD_E_RANGE, 0, "DECIMAL: %zu-byte value over 128 bits", len);
        skip++;
    }
    if (skip && ((p[skip] ^ ext) & 0x80))
        return sv_fail(err, PQD_E_RANGE, 0, "DECIMAL: %zu-byte value over 128 bits", len);
    pq_u128 u = ext ? ~(pq_u128)0 : 0;
    for (size_t i = skip; i < len; i++)
        u = (u << 8) | p[i];
    *out = (pq_i128)u;
    return PQD_OK;
}

pqd_status pqv_from_plain(const pqv_type *t, const uint8_t *p, size_t len, pqv *out,
                          pqd_error *err)
{
    memset(out, 0, sizeof *out);
    out->kind = t->kind;
    if (!p && len)
        return sv_fail(err, PQD_E_INVALID, 0, "NULL value bytes");
    int64_t w = pq_value_width(t->physical, t->type_length);
    if (w < 0)
        return sv_fail(err, PQD_E_INVALID, 0, "bad physical type %d", (int)t->physical);
    if (w > 0 && (size_t)w != len)
        return sv_fail(err, PQD_E_CORRUPT, 0, "%s value of %zu bytes, expected %lld",
                       pqv_kind_name(t->kind), len, (long long)w);
    switch (t->kind) {
    case PQV_BOOL:
        out->v.b = p[0] & 1;
        return PQD_OK;
    case PQV_INT:
        out->v.i = t->physical == PQ_INT32 ? ld_i32(p) : ld_i64(p);
        return PQD_OK;
    case PQV_UINT:
        out->v.u = t->physical == PQ_INT32 ? (uint64_t)(uint32_t)ld_i32(p) : (uint64_t)ld_i64(p);
        return PQD_OK;
    case PQV_FLOAT:
        if (t->physical == PQ_FLOAT) {
            float f;
            memcpy(&f, p, 4);
            out->v.f = f;
        } else if (t->physical == PQ_DOUBLE) {
            memcpy(&out->v.f, p, 8);
        } else {
            out->v.f = half_to_double((uint16_t)(p[0] | p[1] << 8));
        }
        return PQD_OK;
    case PQV_DECIMAL:
        out->scale = t->scale;
        if (t->physical == PQ_INT32)
            out->v.dec = ld_i32(p);
        else if (t->physical == PQ_INT64)
            out->v.dec = ld_i64(p);
        else
            return be_to_i128(p, len, &out->v.dec, err);
        return PQD_OK;
    case PQV_DATE:
        out->v.i = ld_i32(p);
        return PQD_OK;
    case PQV_TIME:
    case PQV_TIMESTAMP:
        out->unit = t->unit;
        out->adjusted_to_utc = t->adjusted_to_utc;
        if (t->physical == PQ_INT96) {
            if (!pqv_int96_to_nanos(p, &out->v.i))
                return sv_fail(err, PQD_E_RANGE, 0, "INT96 timestamp outside int64 nanoseconds");
        } else {
            out->v.i = t->physical == PQ_INT32 ? ld_i32(p) : ld_i64(p);
        }
        return PQD_OK;
    case PQV_BYTES:
        if (len > UINT32_MAX)
            return sv_fail(err, PQD_E_LIMIT, 0, "value of %zu bytes", len);
        out->v.bytes.ptr = p;
        out->v.bytes.len = (uint32_t)len;
        return PQD_OK;
    }
    return sv_fail(err, PQD_E_INVALID, 0, "bad value kind %d", (int)t->kind);
}

/* Decoded values, a page's or a dictionary's: entry and holder name them in
 * errors ("value 3 of 2", "page of type 1 ..."). */
typedef struct {
    const char *entry, *holder;
    pq_physical_type type;
    uint32_t count, width;
    const void *values;      /* fixed width */
    const uint32_t *offsets; /* BYTE_ARRAY, into data */
    const uint8_t *data;
} decoded;

static pqd_status from_decoded(const pqv_type *t, const decoded *d, uint32_t i, pqv *out,
                               pqd_error *err)
{
    if (i >= d->count)
        return sv_fail(err, PQD_E_RANGE, 0, "%s %u of %u", d->entry, i, d->count);
    if (d->type != t->physical)
        return sv_fail(err, PQD_E_INVALID, 0, "%s of type %d for a column of type %d", d->holder,
                       (int)d->type, (int)t->physical);
    if (d->type == PQ_BYTE_ARRAY ? !d->offsets : !d->values)
        return sv_fail(err, PQD_E_INVALID, 0, "%s values not materialized", d->holder);
    if (d->type == PQ_BYTE_ARRAY)
        return pqv_from_plain(t, d->data + d->offsets[i], d->offsets[i + 1] - d->offsets[i], out,
                              err);
    return pqv_from_plain(t, (const uint8_t *)d->values + (size_t)i * d->width, d->width, out, err);
}

pqd_status pqv_from_page(const pqv_type *t, const pq_page_values *pv, uint32_t i, pqv *out,
                         pqd_error *err)
{
    const decoded d = {.entry = "value", .holder = "page", .type = pv->type,
                       .count = pv->num_non_null, .width = pv->width, .values = pv->values,
                       .offsets = pv->offsets, .data = pv->data};
    return from_decoded(t, &d, i, out, err);
}

/* pq_decode_dictionary always materializes its entries: only a page can be
 * "not materialized". */
pqd_status pqv_from_dict(const pqv_type *t, const pq_dictionary *d, uint32_t i, pqv *out,
                         pqd_error *err)
{
    const decoded dd = {.entry = "dictionary entry", .holder = "dictionary", .type = d->type,
                        .count = d->count, .width = d->width, .values = d->values,
                        .offsets = d->offsets, .data = d->data};
    return from_decoded(t, &dd, i, out, err);
}

pqv pqv_bool(bool b)
{
    return (pqv){.kind = PQV_BOOL, .v.b = b};
}

pqv pqv_int(int64_t i)
{
    return (pqv){.kind = PQV_INT, .v.i = i};
}

pqv pqv_uint(uint64_t u)
{
    return (pqv){.kind = PQV_UINT, .v.u = u};
}

pqv pqv_double(double f)
{
    return (pqv){.kind = PQV_FLOAT, .v.f = f};
}

pqv pqv_decimal(pq_i128 unscaled, int32_t scale)
{
    return (pqv){.kind = PQV_DECIMAL, .scale = scale, .v.dec = unscaled};
}

pqv pqv_date(int32_t days)
{
    return (pqv){.kind = PQV_DATE, .v.i = days};
}

pqv pqv_time(int64_t t, pq_time_unit unit, bool adjusted_to_utc)
{
    return (pqv){.kind = PQV_TIME, .unit = unit, .adjusted_to_utc = adjusted_to_utc, .v.i = t};
}

pqv pqv_timestamp(int64_t t, pq_time_unit unit, bool adjusted_to_utc)
{
    return (pqv){.kind = PQV_TIMESTAMP, .unit = unit, .adjusted_to_utc = adjusted_to_utc, .v.i = t};
}

pqv pqv_bytes(const void *p, uint32_t len)
{
    return (pqv){.kind = PQV_BYTES, .v.bytes = {p, len}};
}

pqv pqv_string(const char *s)
{
    return pqv_bytes(s, (uint32_t)strlen(s));
}

bool pqv_is_nan(const pqv *v)
{
    return v->kind == PQV_FLOAT && isnan(v->v.f);
}

/* ---------------- comparison ---------------- */

#define CMP(a, b) ((a) < (b) ? PQV_LT : (a) > (b) ? PQV_GT : PQV_EQ)

static pqv_order sign_of(pq_i128 x)
{
    return x < 0 ? PQV_LT : x > 0 ? PQV_GT : PQV_EQ;
}

/* Compare x * 10^k with y (k > 0). */
static pqv_order cmp_scaled(pq_i128 x, int k, pq_i128 y)
{
    for (int i = 0; i < k; i++) {
        if (x > I128_MAX / 10 || x < I128_MIN / 10)
            return sign_of(x); /* |x * 10^k| is beyond every 128-bit value */
        x *= 10;
    }
    return CMP(x, y);
}

static pqv_order cmp_decimal(pq_i128 a, int32_t sa, pq_i128 b, int32_t sb)
{
    if (sa == sb)
        return CMP(a, b);
    if (sa < sb)
        return cmp_scaled(a, sb - sa, b);
    const pqv_order o = cmp_scaled(b, sa - sb, a);
    return o == PQV_LT ? PQV_GT : o == PQV_GT ? PQV_LT : PQV_EQ;
}

static bool is_numeric_exact(pqv_kind k)
{
    return k == PQV_INT || k == PQV_UINT || k == PQV_DECIMAL;
}

static pq_i128 as_i128(const pqv *v, int32_t *scale)
{
    *scale = 0;
    switch (v->kind) {
    case PQV_INT: return v->v.i;
    case PQV_UINT: return (pq_i128)v->v.u;
    default: *scale = v->scale; return v->v.dec;
    }
}

static int64_t unit_to_nanos_factor(pq_time_unit u)
{
    switch (u) {
    case PQ_UNIT_MILLIS: return 1000000;
    case PQ_UNIT_MICROS: return 1000;
    case PQ_UNIT_NANOS: return 1;
    default: return 0;
    }
}

static pqv_order cmp_float(double a, double b)
{
    const bool na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na && nb ? PQV_EQ : na ? PQV_GT : PQV_LT;
    return CMP(a, b); /* -0.0 == +0.0 */
}

pqv_order pqv_compare(const pqv *a, const pqv *b)
{
    if (is_numeric_exact(a->kind) && is_numeric_exact(b->kind)) {
        if (a->kind == PQV_INT && b->kind == PQV_INT)
            return CMP(a->v.i, b->v.i);
        if (a->kind == PQV_UINT && b->kind == PQV_UINT)
            return CMP(a->v.u, b->v.u);
        int32_t sa, sb;
        const pq_i128 x = as_i128(a, &sa), y = as_i128(b, &sb);
        return cmp_decimal(x, sa, y, sb);
    }
    if (a->kind != b->kind)
        return PQV_INCOMPARABLE;
    switch (a->kind) {
    case PQV_BOOL: return CMP((int)a->v.b, (int)b->v.b);
    case PQV_FLOAT: return cmp_float(a->v.f, b->v.f);
    case PQV_DATE: return CMP(a->v.i, b->v.i);
    case PQV_TIME:
    case PQV_TIMESTAMP: {
        if (a->adjusted_to_utc != b->adjusted_to_utc)
            return PQV_INCOMPARABLE;
        const int64_t fa = unit_to_nanos_factor(a->unit), fb = unit_to_nanos_factor(b->unit);
        if (!fa || !fb)
            return PQV_INCOMPARABLE;
        if (fa == fb)
            return CMP(a->v.i, b->v.i);
        const pq_i128 x = (pq_i128)a->v.i * fa, y = (pq_i128)b->v.i * fb;
        return CMP(x, y);
    }
    case PQV_BYTES: {
        const uint32_t la = a->v.bytes.len, lb = b->v.bytes.len;
        const uint32_t m = la < lb ? la : lb;
        const int c = m ? memcmp(a->v.bytes.ptr, b->v.bytes.ptr, m) : 0;
        if (c)
            return c < 0 ? PQV_LT : PQV_GT;
        return CMP(la, lb);
    }
    default:
        return PQV_INCOMPARABLE;
    }
}

/* ---------------- formatting ---------------- */

static size_t fmt_i128(pq_i128 v, int32_t scale, char *buf, size_t n)
{
    char digits[64];
    size_t nd = 0;
    const bool neg = v < 0;
    pq_u128 u = neg ? (pq_u128)0 - (pq_u128)v : (pq_u128)v;
    do {
        digits[nd++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (scale > 0 && nd <= (size_t)scale)
        digits[nd++] = '0';
    char out[96];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    for (size_t i = nd; i-- > 0;) {
        out[o++] = digits[i];
        if (scale > 0 && i == (size_t)scale)
            out[o++] = '.';
    }
    out[o] = 0;
    return (size_t)snprintf(buf, n, "%s", out);
}

size_t pqv_format(const pqv *v, char *buf, size_t n)
{
    switch (v->kind) {
    case PQV_BOOL: return (size_t)snprintf(buf, n, "%s", v->v.b ? "true" : "false");
    case PQV_INT:
    case PQV_DATE:
    case PQV_TIME:
    case PQV_TIMESTAMP: return (size_t)snprintf(buf, n, "%lld", (long long)v->v.i);
    case PQV_UINT: return (size_t)snprintf(buf, n, "%llu", (unsigned long long)v->v.u);
    case PQV_FLOAT:
        if (isnan(v->v.f))
            return (size_t)snprintf(buf, n, "NaN");
        if (isinf(v->v.f))
            return (size_t)snprintf(buf, n, "%sInfinity", v->v.f < 0 ? "-" : "");
        return (size_t)snprintf(buf, n, "%.17g", v->v.f);
    case PQV_DECIMAL:
        return fmt_i128(v->v.dec, v->scale > 0 && v->scale <= 40 ? v->scale : 0, buf, n);
    case PQV_BYTES: {
        static const char hex[] = "0123456789abcdef";
        const size_t need = (size_t)v->v.bytes.len * 2;
        size_t o = 0;
        for (uint32_t i = 0; i < v->v.bytes.len && o + 2 < n; i++) {
            buf[o++] = hex[v->v.bytes.ptr[i] >> 4];
            buf[o++] = hex[v->v.bytes.ptr[i] & 15];
        }
        if (n)
            buf[o < n ? o : n - 1] = 0;
        return need;
    }
    }
    if (n)
        buf[0] = 0;
    return 0;
}
