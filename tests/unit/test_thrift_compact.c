/* Thrift compact-protocol reader: varints, zigzag, field headers, containers,
 * skipping, limits and error reporting. */
#include "thrift_compact.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define R(name, ...)                                                                           \
    static const uint8_t name##_buf[] = {__VA_ARGS__};                                         \
    tc_reader name;                                                                            \
    tc_reader_init(&name, name##_buf, sizeof name##_buf)

Test(varint, single_and_multi_byte)
{
    R(r, 0x00, 0x7f, 0xdf, 0x89, 0x03, 0x80, 0x01);
    uint64_t v;
    cr_assert(tc_read_varint(&r, &v));
    cr_expect_eq(v, 0);
    cr_assert(tc_read_varint(&r, &v));
    cr_expect_eq(v, 127);
    cr_assert(tc_read_varint(&r, &v));
    cr_expect_eq(v, 50399); /* the spec's example */
    cr_assert(tc_read_varint(&r, &v));
    cr_expect_eq(v, 128);
    cr_expect_eq(r.pos, r.len);
}

Test(varint, max_u64_is_ten_bytes)
{
    R(r, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    uint64_t v;
    cr_assert(tc_read_varint(&r, &v));
    cr_expect_eq(v, UINT64_MAX);
}

Test(varint, tenth_byte_overflow)
{
    R(r, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02);
    uint64_t v;
    cr_assert_not(tc_read_varint(&r, &v));
    cr_expect_eq(r.err.code, TC_E_VARINT);
    cr_expect_eq(r.err.offset, 0);
}

Test(varint, eleven_bytes_rejected)
{
    R(r, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00);
    uint64_t v;
    cr_assert_not(tc_read_varint(&r, &v));
    cr_expect_eq(r.err.code, TC_E_VARINT);
}

Test(varint, truncated)
{
    R(r, 0x01, 0x80, 0x80);
    uint64_t v;
    cr_assert(tc_read_varint(&r, &v));
    cr_assert_not(tc_read_varint(&r, &v));
    cr_expect_eq(r.err.code, TC_E_TRUNCATED);
    cr_expect_eq(r.err.offset, 1);
    /* The first error sticks. */
    cr_assert_not(tc_read_varint(&r, &v));
    cr_expect_eq(r.err.offset, 1);
}

Test(varint, non_minimal_accepted)
{
    /* 1 padded to five bytes, as the CRC rewriter writes it. */
    R(r, 0x81, 0x80, 0x80, 0x80, 0x00);
    uint64_t v;
    cr_assert(tc_read_varint(&r, &v));
    cr_expect_eq(v, 1);
}

Test(zigzag, round_trip_and_ranges)
{
    const int64_t vals[] = {0, -1, 1, -2, 2, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        cr_expect_eq(tc_zigzag_decode(tc_zigzag_encode(vals[i])), vals[i]);
    cr_expect_eq(tc_zigzag_encode(-1), 1);
    cr_expect_eq(tc_zigzag_encode(1), 2);

    R(r, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x10);
    int32_t v;
    cr_assert(tc_read_i32(&r, &v));
    cr_expect_eq(v, INT32_MAX);
    cr_assert_not(tc_read_i32(&r, &v)); /* 2^32 zigzag -> 2^31, too big */
    cr_expect_eq(r.err.code, TC_E_VARINT);

    R(r16, 0x80, 0x80, 0x04);
    int16_t s;
    cr_assert_not(tc_read_i16(&r16, &s));
}

Test(binary, length_checks)
{
    R(r, 0x03, 'a', 'b', 'c', 0x05, 'x');
    const uint8_t *p;
    uint32_t n;
    cr_assert(tc_read_binary(&r, &p, &n));
    cr_expect_eq(n, 3);
    cr_expect(memcmp(p, "abc", 3) == 0);
    cr_assert_not(tc_read_binary(&r, &p, &n));
    cr_expect_eq(r.err.code, TC_E_LENGTH);
    cr_expect_eq(r.err.offset, 4);
    cr_expect(strstr(r.err.msg, "past the end") != NULL, "%s", r.err.msg);

    R(big, 0x80, 0x80, 0x80, 0x80, 0x08); /* 2^31 */
    cr_assert_not(tc_read_binary(&big, &p, &n));
    cr_expect_eq(big.err.code, TC_E_LENGTH);

    R(lim, 0x04, 1, 2, 3, 4);
    lim.max_string = 3;
    cr_assert_not(tc_read_binary(&lim, &p, &n));
    cr_expect(strstr(lim.err.msg, "limit") != NULL);
}

Test(doubles, little_endian)
{
    R(r, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, 0x00);
    double d;
    cr_assert(tc_read_double(&r, &d));
    cr_expect_eq(d, 1.0);
    cr_assert_not(tc_read_double(&r, &d));
    cr_expect_eq(r.err.code, TC_E_TRUNCATED);
}

Test(fields, short_long_bool_stop)
{
    /* field 1 i32 = 5, field 3 bool true, field 4 bool false, long form
     * field 300 (zigzag 600 = 0xd8 0x04) binary "", field 301 (delta 1) i64 -1, stop */
    R(r, 0x15, 0x0a, 0x21, 0x12, 0x08, 0xd8, 0x04, 0x00, 0x16, 0x01, 0x00);
    cr_assert(tc_struct_begin(&r));
    int16_t last = 0;
    tc_field f;
    cr_assert(tc_next_field(&r, &last, &f));
    cr_expect_eq(f.id, 1);
    cr_expect_eq(f.type, TC_I32);
    int32_t v;
    cr_assert(tc_field_i32(&r, &f, &v));
    cr_expect_eq(v, 5);
    cr_assert(tc_next_field(&r, &last, &f));
    cr_expect_eq(f.id, 3);
    bool b;
    cr_assert(tc_field_bool(&r, &f, &b));
    cr_expect(b);
    cr_assert(tc_next_field(&r, &last, &f));
    cr_expect_eq(f.id, 4);
    cr_assert(tc_field_bool(&r, &f, &b));
    cr_expect_not(b);
    cr_assert(tc_next_field(&r, &last, &f));
    cr_expect_eq(f.id, 300);
    const uint8_t *p;
    uint32_t n;
    cr_assert(tc_field_binary(&r, &f, &p, &n));
    cr_expect_eq(n, 0);
    cr_assert(tc_next_field(&r, &last, &f));
    cr_expect_eq(f.id, 301);
    int64_t w;
    cr_assert(tc_field_i64(&r, &f, &w));
    cr_expect_eq(w, -1);
    cr_expect_not(tc_next_field(&r, &last, &f));
    cr_expect_not(r.failed);
    tc_struct_end(&r);
    cr_expect_eq(r.depth, 0);
}

Test(fields, invalid_type_and_wrong_type)
{
    R(r, 0x1e, 0x00);
    int16_t last = 0;
    tc_field f;
    cr_assert_not(tc_next_field(&r, &last, &f));
    cr_expect_eq(r.err.code, TC_E_TYPE);

    R(w, 0x18, 0x00);
    last = 0;
    cr_assert(tc_next_field(&w, &last, &f));
    int64_t v;
    cr_assert_not(tc_field_i64(&w, &f, &v));
    cr_expect_eq(w.err.code, TC_E_TYPE);
    cr_expect(strstr(w.err.msg, "binary") != NULL, "%s", w.err.msg);
}

Test(fields, id_overflow)
{
    /* long form id 32767 then delta 1 */
    R(r, 0x05, 0xfe, 0xff, 0x03, 0x00, 0x15, 0x00);
    int16_t last = 0;
    tc_field f;
    cr_assert(tc_next_field(&r, &last, &f));
    cr_expect_eq(f.id, 32767);
    int32_t v;
    cr_assert(tc_field_i32(&r, &f, &v));
    cr_assert_not(tc_next_field(&r, &last, &f));
    cr_expect_eq(r.err.code, TC_E_FIELD_ID);
}

Test(fields, integer_widths_accepted_with_range)
{
    /* field 1 as i8 = -3, field 2 as i64 = 2^40 read as i32 -> range error */
    R(r, 0x13, 0xfd, 0x26, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40);
    int16_t last = 0;
    tc_field f;
    int32_t v;
    cr_assert(tc_next_field(&r, &last, &f));
    cr_assert(tc_field_i32(&r, &f, &v));
    cr_expect_eq(v, -3);
    cr_assert(tc_next_field(&r, &last, &f));
    cr_assert_not(tc_field_i32(&r, &f, &v));
    cr_expect_eq(r.err.code, TC_E_RANGE);
}

Test(lists, short_and_long_form)
{
    /* 3 x i32 (1, -1, 2); then long form 15 x i8 */
    uint8_t buf[64] = {0x35, 0x02, 0x01, 0x04, 0xf3, 15};
    for (int i = 0; i < 15; i++)
        buf[6 + i] = (uint8_t)i;
    tc_reader r;
    tc_reader_init(&r, buf, 21);
    uint8_t et;
    uint32_t n;
    cr_assert(tc_list_begin(&r, &et, &n));
    cr_expect_eq(et, TC_I32);
    cr_expect_eq(n, 3);
    int32_t v;
    cr_assert(tc_read_i32(&r, &v));
    cr_expect_eq(v, 1);
    cr_assert(tc_read_i32(&r, &v));
    cr_expect_eq(v, -1);
    cr_assert(tc_read_i32(&r, &v));
    cr_expect_eq(v, 2);
    tc_container_end(&r);
    cr_assert(tc_list_begin(&r, &et, &n));
    cr_expect_eq(et, TC_I8);
    cr_expect_eq(n, 15);
    for (int i = 0; i < 15; i++) {
        int8_t b;
        cr_assert(tc_read_i8(&r, &b));
        cr_expect_eq(b, i);
    }
    tc_container_end(&r);
    cr_expect_eq(r.pos, r.len);
    cr_expect_eq(r.depth, 0);
}

Test(lists, count_past_buffer)
{
    /* long form, count 2^31-1 structs in 3 bytes */
    R(r, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00, 0x00, 0x00);
    uint8_t et;
    uint32_t n;
    cr_assert_not(tc_list_begin(&r, &et, &n));
    cr_expect_eq(r.err.code, TC_E_COUNT);
    cr_expect(strstr(r.err.msg, "cannot fit") != NULL, "%s", r.err.msg);

    /* count above i32 */
    R(h, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f);
    cr_assert_not(tc_list_begin(&h, &et, &n));
    cr_expect_eq(h.err.code, TC_E_COUNT);

    /* doubles need 8 bytes each */
    R(d, 0x27, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    cr_assert_not(tc_list_begin(&d, &et, &n));
    cr_expect_eq(d.err.code, TC_E_COUNT);

    /* element type 0 / 14 */
    R(z, 0x10, 0x00);
    cr_assert_not(tc_list_begin(&z, &et, &n));
    cr_expect_eq(z.err.code, TC_E_TYPE);
}

Test(lists, bool_elements_both_encodings)
{
    /* element type 1 (Java/C++) and 2 (spec); values 1 true, 0/2 false; 3 is bad */
    R(r, 0x31, 0x01, 0x02, 0x00, 0x22, 0x01, 0x00, 0x11, 0x03);
    uint8_t et;
    uint32_t n;
    bool b;
    cr_assert(tc_list_begin(&r, &et, &n));
    cr_expect_eq(et, TC_BOOL_TRUE);
    cr_assert(tc_read_bool_elem(&r, &b));
    cr_expect(b);
    cr_assert(tc_read_bool_elem(&r, &b));
    cr_expect_not(b);
    cr_assert(tc_read_bool_elem(&r, &b));
    cr_expect_not(b);
    tc_container_end(&r);
    cr_assert(tc_list_begin(&r, &et, &n));
    cr_expect_eq(et, TC_BOOL_TRUE);
    cr_assert(tc_read_bool_elem(&r, &b));
    cr_assert(tc_read_bool_elem(&r, &b));
    tc_container_end(&r);
    cr_assert(tc_list_begin(&r, &et, &n));
    cr_assert_not(tc_read_bool_elem(&r, &b));
    cr_expect_eq(r.err.code, TC_E_RANGE);
}

Test(maps, empty_nonempty_invalid)
{
    /* empty map; map {i32 -> binary} with 2 entries; map with invalid key type */
    R(r, 0x00, 0x02, 0x58, 0x02, 0x01, 'a', 0x04, 0x00, 0x01, 0xf8);
    uint8_t kt, vt;
    uint32_t n;
    cr_assert(tc_map_begin(&r, &kt, &vt, &n));
    cr_expect_eq(n, 0);
    tc_container_end(&r);
    cr_assert(tc_map_begin(&r, &kt, &vt, &n));
    cr_expect_eq(n, 2);
    cr_expect_eq(kt, TC_I32);
    cr_expect_eq(vt, TC_BINARY);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert(tc_skip(&r, kt));
        cr_assert(tc_skip(&r, vt));
    }
    tc_container_end(&r);
    cr_assert_not(tc_map_begin(&r, &kt, &vt, &n));
    cr_expect_eq(r.err.code, TC_E_TYPE);

    R(big, 0xff, 0xff, 0xff, 0x07, 0x55, 0x00);
    cr_assert_not(tc_map_begin(&big, &kt, &vt, &n));
    cr_expect_eq(big.err.code, TC_E_COUNT);
}

Test(skip, every_type)
{
    /* struct { 1: bool, 2: i8, 3: i16, 4: i32, 5: i64, 6: double, 7: binary,
     *          8: list<i32>, 9: set<binary>, 10: map<i8,bool>, 11: struct{}, 12: uuid } */
    static const uint8_t buf[] = {
        0x11,                                           /* 1: bool true (in the type) */
        0x13, 0x7f,                                     /* 2: i8 */
        0x14, 0x03,                                     /* 3: i16 (zigzag) */
        0x15, 0x04,                                     /* 4: i32 */
        0x16, 0x05,                                     /* 5: i64 */
        0x17, 0, 0, 0, 0, 0, 0, 0, 0,                   /* 6: double */
        0x18, 0x02, 'h', 'i',                           /* 7: binary "hi" */
        0x19, 0x25, 0x02, 0x04,                         /* 8: list of 2 i32 */
        0x1a, 0x18, 0x00,                               /* 9: set of 1 empty binary */
        0x1b, 0x01, 0x31, 0x05, 0x01,                   /* 10: map of 1 i8 -> bool */
        0x1c, 0x00,                                     /* 11: empty struct */
        0x1d, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, /* 12: uuid, 16 bytes */
        13, 14, 15,
        0x00,                                           /* stop */
        0xAA, /* trailing byte not part of the struct */
    };
    const size_t n = sizeof buf;
    tc_reader r;
    tc_reader_init(&r, buf, n);
    cr_assert(tc_skip(&r, TC_STRUCT), "%s", r.err.msg);
    cr_expect_eq(r.pos, n - 1);
    cr_expect_eq(r.depth, 0);
}

Test(limits, depth)
{
    /* 200 nested lists of lists */
    uint8_t buf[256];
    for (int i = 0; i < 200; i++)
        buf[i] = 0x19; /* 1 element of type list */
    buf[200] = 0x05; /* innermost: empty list of i32 */
    tc_reader r;
    tc_reader_init(&r, buf, 201);
    cr_assert_not(tc_skip(&r, TC_LIST));
    cr_expect_eq(r.err.code, TC_E_DEPTH);

    /* 200 nested structs via field 1 */
    for (int i = 0; i < 200; i++)
        buf[i] = 0x1c;
    for (int i = 200; i < 256; i++)
        buf[i] = 0;
    tc_reader_init(&r, buf, 256);
    cr_assert_not(tc_skip(&r, TC_STRUCT));
    cr_expect_eq(r.err.code, TC_E_DEPTH);

    /* 51 levels are fine */
    tc_reader_init(&r, buf + 150, 106);
    cr_assert(tc_skip(&r, TC_STRUCT), "%s", r.err.msg);
}

Test(limits, budget)
{
    /* list of 100 i8 with a budget of 50 */
    uint8_t buf[128] = {0xf3, 100};
    tc_reader r;
    tc_reader_init(&r, buf, 102);
    r.budget = 50;
    cr_assert_not(tc_skip(&r, TC_LIST));
    cr_expect_eq(r.err.code, TC_E_BUDGET);
    tc_reader_init(&r, buf, 102);
    cr_assert(tc_skip(&r, TC_LIST));
    cr_expect_eq(r.budget, TC_DEFAULT_BUDGET - 100);
}

Test(errors, path_and_offset_in_message)
{
    R(r, 0x15, 0x80);
    tc_path_push(&r, "row_groups", 3);
    tc_path_push(&r, "columns", 1);
    tc_path_push(&r, "num_values", -1);
    int16_t last = 0;
    tc_field f;
    cr_assert(tc_next_field(&r, &last, &f));
    int32_t v;
    cr_assert_not(tc_field_i32(&r, &f, &v));
    cr_expect_eq(r.err.code, TC_E_TRUNCATED);
    cr_expect_eq(r.err.offset, 1);
    cr_expect(strncmp(r.err.msg, "row_groups[3].columns[1].num_values: ", 37) == 0, "%s",
              r.err.msg);
    cr_expect(strstr(r.err.msg, "at byte 1") != NULL, "%s", r.err.msg);
    cr_expect_str_eq(tc_status_name(TC_E_TRUNCATED), "truncated");
}

Test(errors, empty_and_null_buffers)
{
    tc_reader r;
    tc_reader_init(&r, NULL, 10);
    cr_expect_eq(r.len, 0);
    cr_assert_not(tc_skip(&r, TC_STRUCT));
    cr_expect_eq(r.err.code, TC_E_TRUNCATED);
    cr_assert_not(tc_skip(&r, 14));
}
