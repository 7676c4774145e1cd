/* Comparable logical values: type resolution, construction, comparison. */
#include "pq_value.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static pq_logical_type lt(pq_logical_kind k)
{
    pq_logical_type t;
    memset(&t, 0, sizeof t);
    t.kind = k;
    return t;
}

static pqv_type resolve_ok(pq_physical_type p, int32_t tl, int32_t ct, int32_t scale,
                           int32_t prec, const pq_logical_type *l)
{
    pqv_type t;
    pqd_error err = {0};
    cr_assert_eq(pqv_type_resolve(p, tl, ct, scale, prec, l, &t, &err), PQD_OK, "%s", err.msg);
    return t;
}

static pqv from(const pqv_type *t, const void *p, size_t len)
{
    pqv v;
    pqd_error err = {0};
    cr_assert_eq(pqv_from_plain(t, p, len, &v, &err), PQD_OK, "%s", err.msg);
    return v;
}

Test(pq_value, resolve_physical_defaults)
{
    cr_expect_eq(resolve_ok(PQ_BOOLEAN, -1, PQ_CT_NONE, -1, -1, NULL).kind, PQV_BOOL);
    cr_expect_eq(resolve_ok(PQ_INT32, -1, PQ_CT_NONE, -1, -1, NULL).kind, PQV_INT);
    cr_expect_eq(resolve_ok(PQ_INT64, -1, PQ_CT_NONE, -1, -1, NULL).kind, PQV_INT);
    const pqv_type t96 = resolve_ok(PQ_INT96, -1, PQ_CT_NONE, -1, -1, NULL);
    cr_expect_eq(t96.kind, PQV_TIMESTAMP);
    cr_expect_eq(t96.unit, PQ_UNIT_NANOS);
    cr_expect_not(t96.adjusted_to_utc);
    cr_expect_eq(resolve_ok(PQ_FLOAT, -1, PQ_CT_NONE, -1, -1, NULL).kind, PQV_FLOAT);
    cr_expect_eq(resolve_ok(PQ_DOUBLE, -1, PQ_CT_NONE, -1, -1, NULL).kind, PQV_FLOAT);
    cr_expect_eq(resolve_ok(PQ_BYTE_ARRAY, -1, PQ_CT_NONE, -1, -1, NULL).kind, PQV_BYTES);
    cr_expect_eq(resolve_ok(PQ_FIXED_LEN_BYTE_ARRAY, 4, PQ_CT_NONE, -1, -1, NULL).kind, PQV_BYTES);
    pqv_type t;
    pqd_error err;
    cr_expect_eq(pqv_type_resolve(PQ_FIXED_LEN_BYTE_ARRAY, 0, PQ_CT_NONE, -1, -1, NULL, &t, &err),
                 PQD_E_INVALID);
    cr_expect_eq(pqv_type_resolve((pq_physical_type)8, 0, PQ_CT_NONE, -1, -1, NULL, &t, &err),
                 PQD_E_INVALID);
}

Test(pq_value, resolve_logical_and_converted)
{
    pq_logical_type l = lt(PQ_LT_INTEGER);
    l.bit_width = 32;
    l.is_signed = false;
    pqv_type t = resolve_ok(PQ_INT32, -1, PQ_CT_NONE, -1, -1, &l);
    cr_expect_eq(t.kind, PQV_UINT);
    cr_expect_eq(t.int_bits, 32);
    cr_expect_eq(resolve_ok(PQ_INT64, -1, PQ_CT_UINT_64, -1, -1, NULL).kind, PQV_UINT);
    cr_expect_eq(resolve_ok(PQ_INT32, -1, PQ_CT_INT_8, -1, -1, NULL).kind, PQV_INT);
    /* The logical type wins over the converted type. */
    l = lt(PQ_LT_TIMESTAMP);
    l.unit = PQ_UNIT_NANOS;
    l.adjusted_to_utc = false;
    t = resolve_ok(PQ_INT64, -1, PQ_CT_TIMESTAMP_MICROS, -1, -1, &l);
    cr_expect_eq(t.kind, PQV_TIMESTAMP);
    cr_expect_eq(t.unit, PQ_UNIT_NANOS);
    cr_expect_not(t.adjusted_to_utc);
    /* Legacy converted timestamps are UTC-adjusted. */
    t = resolve_ok(PQ_INT64, -1, PQ_CT_TIMESTAMP_MILLIS, -1, -1, NULL);
    cr_expect_eq(t.unit, PQ_UNIT_MILLIS);
    cr_expect(t.adjusted_to_utc);
    t = resolve_ok(PQ_INT32, -1, PQ_CT_TIME_MILLIS, -1, -1, NULL);
    cr_expect_eq(t.kind, PQV_TIME);
    l = lt(PQ_LT_DECIMAL);
    l.decimal_precision = 20;
    l.decimal_scale = 3;
    t = resolve_ok(PQ_FIXED_LEN_BYTE_ARRAY, 9, PQ_CT_DECIMAL, 1, 5, &l);
    cr_expect_eq(t.kind, PQV_DECIMAL);
    cr_expect_eq(t.scale, 3);
    t = resolve_ok(PQ_INT64, -1, PQ_CT_DECIMAL, 2, 18, NULL);
    cr_expect_eq(t.scale, 2);
    cr_expect_eq(resolve_ok(PQ_BYTE_ARRAY, -1, PQ_CT_UTF8, -1, -1, NULL).kind, PQV_BYTES);
    l = lt(PQ_LT_UUID);
    cr_expect_eq(resolve_ok(PQ_FIXED_LEN_BYTE_ARRAY, 16, PQ_CT_NONE, -1, -1, &l).kind, PQV_BYTES);
    l = lt(PQ_LT_FLOAT16);
    t = resolve_ok(PQ_FIXED_LEN_BYTE_ARRAY, 2, PQ_CT_NONE, -1, -1, &l);
    cr_expect_eq(t.kind, PQV_FLOAT);
    cr_expect(t.float16);
    /* An unknown union member falls back to the converted type. */
    l = lt(PQ_LT_OTHER);
    cr_expect_eq(resolve_ok(PQ_INT32, -1, PQ_CT_DATE, -1, -1, &l).kind, PQV_DATE);
}

Test(pq_value, resolve_errors)
{
    pqv_type t;
    pqd_error err;
    pq_logical_type l = lt(PQ_LT_DATE);
    cr_expect_eq(pqv_type_resolve(PQ_INT64, -1, PQ_CT_NONE, -1, -1, &l, &t, &err), PQD_E_INVALID);
    l = lt(PQ_LT_TIME);
    l.unit = PQ_UNIT_MILLIS;
    cr_expect_eq(pqv_type_resolve(PQ_INT64, -1, PQ_CT_NONE, -1, -1, &l, &t, &err), PQD_E_INVALID);
    l = lt(PQ_LT_INTEGER);
    l.bit_width = 64;
    cr_expect_eq(pqv_type_resolve(PQ_INT32, -1, PQ_CT_NONE, -1, -1, &l, &t, &err), PQD_E_INVALID);
    l.bit_width = 12;
    cr_expect_eq(pqv_type_resolve(PQ_INT32, -1, PQ_CT_NONE, -1, -1, &l, &t, &err), PQD_E_INVALID);
    l = lt(PQ_LT_DECIMAL);
    l.decimal_precision = 39;
    cr_expect_eq(pqv_type_resolve(PQ_FIXED_LEN_BYTE_ARRAY, 17, PQ_CT_NONE, -1, -1, &l, &t, &err),
                 PQD_E_UNSUPPORTED);
    l.decimal_precision = 5;
    l.decimal_scale = 6;
    cr_expect_eq(pqv_type_resolve(PQ_INT32, -1, PQ_CT_NONE, -1, -1, &l, &t, &err), PQD_E_INVALID);
    l.decimal_scale = 2;
    cr_expect_eq(pqv_type_resolve(PQ_DOUBLE, -1, PQ_CT_NONE, -1, -1, &l, &t, &err), PQD_E_INVALID);
    cr_expect_eq(pqv_type_resolve(PQ_FIXED_LEN_BYTE_ARRAY, 12, PQ_CT_INTERVAL, -1, -1, NULL, &t,
                                  &err),
                 PQD_E_UNSUPPORTED);
    l = lt(PQ_LT_GEOMETRY);
    cr_expect_eq(pqv_type_resolve(PQ_BYTE_ARRAY, -1, PQ_CT_NONE, -1, -1, &l, &t, &err),
                 PQD_E_UNSUPPORTED);
    l = lt(PQ_LT_STRING);
    cr_expect_eq(pqv_type_resolve(PQ_INT32, -1, PQ_CT_NONE, -1, -1, &l, &t, &err), PQD_E_INVALID);
    l = lt(PQ_LT_UUID);
    cr_expect_eq(pqv_type_resolve(PQ_FIXED_LEN_BYTE_ARRAY, 8, PQ_CT_NONE, -1, -1, &l, &t, &err),
                 PQD_E_INVALID);
}

Test(pq_value, integers_signed_and_unsigned)
{
    const pqv_type u32 = resolve_ok(PQ_INT32, -1, PQ_CT_UINT_32, -1, -1, NULL);
    const uint8_t all_ones[4] = {0xff, 0xff, 0xff, 0xff};
    pqv a = from(&u32, all_ones, 4);
    cr_expect_eq(a.kind, PQV_UINT);
    cr_expect_eq(a.v.u, 4294967295u);
    const pqv_type i32 = resolve_ok(PQ_INT32, -1, PQ_CT_NONE, -1, -1, NULL);
    pqv b = from(&i32, all_ones, 4);
    cr_expect_eq(b.v.i, -1);
    /* Mixed signedness compares by value. */
    cr_expect_eq(pqv_compare(&b, &a), PQV_LT);
    cr_expect_eq(pqv_compare(&a, &b), PQV_GT);
    pqv m1 = pqv_int(-1), big = pqv_uint(UINT64_MAX), i_max = pqv_int(INT64_MAX);
    cr_expect_eq(pqv_compare(&m1, &big), PQV_LT);
    cr_expect_eq(pqv_compare(&big, &i_max), PQV_GT);
    pqv u_eq = pqv_uint((uint64_t)INT64_MAX);
    cr_expect_eq(pqv_compare(&u_eq, &i_max), PQV_EQ);
    const pqv_type u64 = resolve_ok(PQ_INT64, -1, PQ_CT_UINT_64, -1, -1, NULL);
    const uint8_t eight[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    pqv c = from(&u64, eight, 8);
    cr_expect_eq(pqv_compare(&c, &big), PQV_EQ);
    /* Wrong width for stats. */
    pqv v;
    pqd_error err;
    cr_expect_eq(pqv_from_plain(&i32, eight, 8, &v, &err), PQD_E_CORRUPT);
}

Test(pq_value, decimals)
{
    /* 123.45 (scale 2) vs 123.450 (scale 3) vs 123 (int). */
    pqv a = pqv_decimal(12345, 2), b = pqv_decimal(123450, 3), c = pqv_int(123);
    cr_expect_eq(pqv_compare(&a, &b), PQV_EQ);
    cr_expect_eq(pqv_compare(&a, &c), PQV_GT);
    cr_expect_eq(pqv_compare(&c, &a), PQV_LT);
    pqv d = pqv_decimal(12300, 2);
    cr_expect_eq(pqv_compare(&c, &d), PQV_EQ);
    pqv neg = pqv_decimal(-1, 38), zero = pqv_uint(0);
    cr_expect_eq(pqv_compare(&neg, &zero), PQV_LT);
    /* Rescaling overflow: 10^37 at scale 0 vs a tiny value at scale 38. */
    pq_i128 e37 = 1;
    for (int i = 0; i < 37; i++)
        e37 *= 10;
    pqv huge = pqv_decimal(e37, 0), tiny = pqv_decimal(5, 38), mhuge = pqv_decimal(-e37, 0);
    cr_expect_eq(pqv_compare(&huge, &tiny), PQV_GT);
    cr_expect_eq(pqv_compare(&tiny, &huge), PQV_LT);
    cr_expect_eq(pqv_compare(&mhuge, &tiny), PQV_LT);
    cr_expect_eq(pqv_compare(&tiny, &mhuge), PQV_GT);
    /* From big-endian bytes: FIXED_LEN_BYTE_ARRAY(3) -2 = ff ff fe. */
    pq_logical_type l = lt(PQ_LT_DECIMAL);
    l.decimal_precision = 6;
    l.decimal_scale = 2;
    const pqv_type f3 = resolve_ok(PQ_FIXED_LEN_BYTE_ARRAY, 3, PQ_CT_NONE, -1, -1, &l);
    const uint8_t m2[3] = {0xff, 0xff, 0xfe};
    pqv x = from(&f3, m2, 3);
    cr_expect(x.v.dec == -2);
    char buf[64];
    pqv_format(&x, buf, sizeof buf);
    cr_expect_str_eq(buf, "-0.02");
    /* BYTE_ARRAY decimals of any length; 17+ bytes only with sign extension. */
    const pqv_type ba = resolve_ok(PQ_BYTE_ARRAY, -1, PQ_CT_DECIMAL, 0, 38, NULL);
    uint8_t wide[20];
    memset(wide, 0xff, sizeof wide);
    wide[19] = 0xf0;
    x = from(&ba, wide, 20);
    cr_expect(x.v.dec == -16);
    pqv y;
    pqd_error err;
    wide[0] = 0x7f;
    cr_expect_eq(pqv_from_plain(&ba, wide, 20, &y, &err), PQD_E_RANGE);
    memset(wide, 0, sizeof wide);
    wide[3] = 0x80; /* 17 significant bytes after 3 zero bytes: 0x80.. needs 129 bits */
    cr_expect_eq(pqv_from_plain(&ba, wide, 20, &y, &err), PQD_E_RANGE);
    cr_expect_eq(pqv_from_plain(&ba, wide, 0, &y, &err), PQD_E_CORRUPT);
    const uint8_t one = 0x01;
    x = from(&ba, &one, 1);
    cr_expect(x.v.dec == 1);
    /* INT32 decimals. */
    const pqv_type i32d = resolve_ok(PQ_INT32, -1, PQ_CT_DECIMAL, 3, 9, NULL);
    const int32_t raw = -1234567;
    x = from(&i32d, &raw, 4);
    pqv_format(&x, buf, sizeof buf);
    cr_expect_str_eq(buf, "-1234.567");
    pqv small = pqv_decimal(5, 3);
    pqv_format(&small, buf, sizeof buf);
    cr_expect_str_eq(buf, "0.005");
    pq_i128 max38 = e37 * 10 - 1;
    pqv m38 = pqv_decimal(-max38, 10);
    pqv_format(&m38, buf, sizeof buf);
    cr_expect_str_eq(buf, "-9999999999999999999999999999.9999999999");
}

Test(pq_value, floats_and_nan)
{
    pqv nan = pqv_double(NAN), nnan = pqv_double(-NAN), inf = pqv_double(INFINITY),
        ninf = pqv_double(-INFINITY), pz = pqv_double(0.0), nz = pqv_double(-0.0),
        one = pqv_double(1.0);
    cr_expect_eq(pqv_compare(&nan, &nnan), PQV_EQ);
    cr_expect_eq(pqv_compare(&nan, &inf), PQV_GT);
    cr_expect_eq(pqv_compare(&inf, &nan), PQV_LT);
    cr_expect_eq(pqv_compare(&ninf, &one), PQV_LT);
    cr_expect_eq(pqv_compare(&pz, &nz), PQV_EQ);
    cr_expect(pqv_is_nan(&nan));
    cr_expect_not(pqv_is_nan(&inf));
    /* Floats do not compare with exact numerics. */
    pqv i = pqv_int(1);
    cr_expect_eq(pqv_compare(&one, &i), PQV_INCOMPARABLE);
    /* FLOAT widens exactly to double. */
    const pqv_type ft = resolve_ok(PQ_FLOAT, -1, PQ_CT_NONE, -1, -1, NULL);
    const float f = 0.1f;
    pqv fv = from(&ft, &f, 4), dv = pqv_double((double)0.1f), d01 = pqv_double(0.1);
    cr_expect_eq(pqv_compare(&fv, &dv), PQV_EQ);
    cr_expect_eq(pqv_compare(&fv, &d01), PQV_GT);
    /* FLOAT16. */
    pq_logical_type l = lt(PQ_LT_FLOAT16);
    const pqv_type h = resolve_ok(PQ_FIXED_LEN_BYTE_ARRAY, 2, PQ_CT_NONE, -1, -1, &l);
    const uint8_t h15[2] = {0x00, 0x3e}, hmax[2] = {0xff, 0x7b}, hsub[2] = {0x01, 0x00},
                  hnan[2] = {0x01, 0x7e}, hninf[2] = {0x00, 0xfc};
    cr_expect_eq(from(&h, h15, 2).v.f, 1.5);
    cr_expect_eq(from(&h, hmax, 2).v.f, 65504.0);
    cr_expect_eq(from(&h, hsub, 2).v.f, ldexp(1, -24));
    cr_expect(isnan(from(&h, hnan, 2).v.f));
    cr_expect_eq(from(&h, hninf, 2).v.f, -INFINITY);
    char buf[32];
    pqv_format(&nan, buf, sizeof buf);
    cr_expect_str_eq(buf, "NaN");
    pqv_format(&ninf, buf, sizeof buf);
    cr_expect_str_eq(buf, "-Infinity");
}

Test(pq_value, times_and_timestamps)
{
    pqv ms = pqv_timestamp(1000, PQ_UNIT_MILLIS, true), us = pqv_timestamp(1000000, PQ_UNIT_MICROS, true),
        ns = pqv_timestamp(1000000001, PQ_UNIT_NANOS, true),
        local = pqv_timestamp(1000, PQ_UNIT_MILLIS, false);
    cr_expect_eq(pqv_compare(&ms, &us), PQV_EQ);
    cr_expect_eq(pqv_compare(&ms, &ns), PQV_LT);
    cr_expect_eq(pqv_compare(&ns, &us), PQV_GT);
    cr_expect_eq(pqv_compare(&ms, &local), PQV_INCOMPARABLE);
    /* Scaling that would overflow int64 is done in 128 bits. */
    pqv far = pqv_timestamp(INT64_MAX / 1000, PQ_UNIT_MILLIS, true),
        nmax = pqv_timestamp(INT64_MAX, PQ_UNIT_NANOS, true);
    cr_expect_eq(pqv_compare(&far, &nmax), PQV_GT);
    pqv t1 = pqv_time(3600000, PQ_UNIT_MILLIS, true), t2 = pqv_time(3600000000LL, PQ_UNIT_MICROS, true);
    cr_expect_eq(pqv_compare(&t1, &t2), PQV_EQ);
    cr_expect_eq(pqv_compare(&t1, &ms), PQV_INCOMPARABLE);
    pqv d1 = pqv_date(19000), d2 = pqv_date(-5);
    cr_expect_eq(pqv_compare(&d1, &d2), PQV_GT);
    cr_expect_eq(pqv_compare(&d1, &ms), PQV_INCOMPARABLE);
    pqv i = pqv_int(19000);
    cr_expect_eq(pqv_compare(&d1, &i), PQV_INCOMPARABLE);
}

Test(pq_value, int96)
{
    /* 2000-01-01T00:00:01.5 = Julian day 2451545, 1.5e9 ns into the day. */
    uint8_t b[12];
    const int64_t nod = 1500000000;
    const int32_t jd = 2451545;
    memcpy(b, &nod, 8);
    memcpy(b + 8, &jd, 4);
    int64_t ns;
    cr_assert(pqv_int96_to_nanos(b, &ns));
    cr_expect_eq(ns, 946684800LL * 1000000000LL + 1500000000LL);
    const pqv_type t = resolve_ok(PQ_INT96, -1, PQ_CT_NONE, -1, -1, NULL);
    pqv v = from(&t, b, 12);
    pqv same = pqv_timestamp(946684801500LL, PQ_UNIT_MILLIS, false);
    cr_expect_eq(pqv_compare(&v, &same), PQV_EQ);
    /* Out of int64 range. */
    const int32_t far = 2000000000;
    memcpy(b + 8, &far, 4);
    cr_expect_not(pqv_int96_to_nanos(b, &ns));
    pqd_error err;
    cr_expect_eq(pqv_from_plain(&t, b, 12, &v, &err), PQD_E_RANGE);
}

Test(pq_value, bytes_and_bools)
{
    pqv a = pqv_string("abc"), b = pqv_string("abd"), ab = pqv_string("ab"), empty = pqv_string("");
    cr_expect_eq(pqv_compare(&a, &b), PQV_LT);
    cr_expect_eq(pqv_compare(&ab, &a), PQV_LT);
    cr_expect_eq(pqv_compare(&a, &a), PQV_EQ);
    cr_expect_eq(pqv_compare(&empty, &ab), PQV_LT);
    /* Unsigned byte order: 0x80 > 0x7f. */
    const uint8_t hi[1] = {0x80}, lo[1] = {0x7f};
    pqv h = pqv_bytes(hi, 1), l = pqv_bytes(lo, 1);
    cr_expect_eq(pqv_compare(&h, &l), PQV_GT);
    pqv t = pqv_bool(true), f = pqv_bool(false);
    cr_expect_eq(pqv_compare(&f, &t), PQV_LT);
    cr_expect_eq(pqv_compare(&t, &t), PQV_EQ);
    pqv one = pqv_int(1);
    cr_expect_eq(pqv_compare(&t, &one), PQV_INCOMPARABLE);
    cr_expect_eq(pqv_compare(&a, &one), PQV_INCOMPARABLE);
    char buf[16];
    cr_expect_eq(pqv_format(&h, buf, sizeof buf), 2);
    cr_expect_str_eq(buf, "80");
    /* Truncated output stays terminated and reports the full length. */
    pqv long_s = pqv_string("abcdefghij");
    cr_expect_eq(pqv_format(&long_s, buf, 8), 20);
    cr_expect_eq(strlen(buf), 6);
}

Test(pq_value, from_decoded_page)
{
    pq_decoder *d = pq_decoder_new(NULL);
    const uint8_t body[] = {3, 0, 0, 0, 'a', 'b', 'c', 0, 0, 0, 0};
    const pq_column_desc c = {.type = PQ_BYTE_ARRAY, .codec = PQ_CODEC_UNCOMPRESSED};
    const pq_data_page_info info = {.num_values = 2, .encoding = PQ_ENC_PLAIN,
                                    .uncompressed_page_size = sizeof body};
    pq_page_values pv;
    cr_assert_eq(pq_decode_data_page(d, &c, &info, body, sizeof body, NULL, &pv, NULL), PQD_OK);
    const pqv_type t = resolve_ok(PQ_BYTE_ARRAY, -1, PQ_CT_UTF8, -1, -1, NULL);
    pqv v0, v1;
    cr_assert_eq(pqv_from_page(&t, &pv, 0, &v0, NULL), PQD_OK);
    cr_assert_eq(pqv_from_page(&t, &pv, 1, &v1, NULL), PQD_OK);
    pqv lit = pqv_string("abc");
    cr_expect_eq(pqv_compare(&v0, &lit), PQV_EQ);
    cr_expect_eq(v1.v.bytes.len, 0);
    pqd_error err;
    cr_expect_eq(pqv_from_page(&t, &pv, 2, &v0, &err), PQD_E_RANGE);
    const pqv_type ti = resolve_ok(PQ_INT32, -1, PQ_CT_NONE, -1, -1, NULL);
    cr_expect_eq(pqv_from_page(&ti, &pv, 0, &v0, &err), PQD_E_INVALID);
    pq_decoder_free(d);
}

Test(pq_value, from_dictionary)
{
    pq_decoder *d = pq_decoder_new(NULL);
    const uint8_t body[] = {1, 0, 0, 0, 'b', 2, 0, 0, 0, 'a', 'z'};
    const pq_column_desc c = {.type = PQ_BYTE_ARRAY, .codec = PQ_CODEC_UNCOMPRESSED};
    const pq_dict_page_info di = {.num_values = 2, .encoding = PQ_ENC_PLAIN,
                                  .uncompressed_page_size = sizeof body};
    pq_dictionary dict;
    cr_assert_eq(pq_decode_dictionary(d, &c, &di, body, sizeof body, &dict, NULL), PQD_OK);
    const pqv_type t = resolve_ok(PQ_BYTE_ARRAY, -1, PQ_CT_UTF8, -1, -1, NULL);
    pqv a, b;
    cr_assert_eq(pqv_from_dict(&t, &dict, 0, &a, NULL), PQD_OK);
    cr_assert_eq(pqv_from_dict(&t, &dict, 1, &b, NULL), PQD_OK);
    cr_expect_eq(pqv_compare(&a, &b), PQV_GT);
    pqd_error err;
    cr_expect_eq(pqv_from_dict(&t, &dict, 2, &a, &err), PQD_E_RANGE);
    pq_dictionary_free(&dict);
    pq_decoder_free(d);
}
