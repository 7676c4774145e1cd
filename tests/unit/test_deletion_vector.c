/* Deletion vectors and Z85: the protocol's examples, a DV file Spark wrote,
 * round trips of bitmaps built here with CRoaring (inline, file frame),
 * every way the bytes can disagree with the format or the descriptor, and
 * range extraction. */
#include "deletion_vector.h"
#include "z85.h"

#include <criterion/criterion.h>
#include <roaring/roaring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- building inputs ---- */

static const char Z85_ALPHABET[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/* Z85 of len bytes (a multiple of 4); malloc'd. */
static char *z85_encode(const uint8_t *in, size_t len)
{
    cr_assert(len % 4 == 0);
    char *s = malloc(len / 4 * 5 + 1), *p = s;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = (uint32_t)in[i] << 24 | (uint32_t)in[i + 1] << 16 | (uint32_t)in[i + 2] << 8 | in[i + 3];
        for (int j = 4; j >= 0; j--) {
            p[j] = Z85_ALPHABET[v % 85];
            v /= 85;
        }
        p += 5;
    }
    *p = '\0';
    return s;
}

typedef struct {
    uint8_t *b;
    size_t len;
} bytes;

static void put(bytes *o, const void *src, size_t n)
{
    o->b = realloc(o->b, o->len + n);
    memcpy(o->b + o->len, src, n);
    o->len += n;
}

static void put_le(bytes *o, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        put(o, &c, 1);
    }
}

static void put_be32(bytes *o, uint32_t v)
{
    uint8_t c[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(o, c, 4);
}

static void put_bitmap32(bytes *o, const roaring_bitmap_t *r)
{
    char *tmp = malloc(roaring_bitmap_portable_size_in_bytes(r));
    const size_t n = roaring_bitmap_portable_serialize(r, tmp);
    put(o, tmp, n);
    free(tmp);
}

/* A RoaringBitmapArray of n buckets, keys[i] holding the low 32 bits of
 * rows[i] (in the given order, so tests can unsort them). */
static bytes serialize_buckets(const uint32_t *keys, roaring_bitmap_t *const *rows, size_t n)
{
    bytes o = {0};
    put_le(&o, DV_MAGIC, 4);
    put_le(&o, n, 8);
    for (size_t i = 0; i < n; i++) {
        put_le(&o, keys[i], 4);
        put_bitmap32(&o, rows[i]);
    }
    return o;
}

/* The RoaringBitmapArray of sorted rows, with every bucket from 0 to the
 * highest one as delta-spark writes them (empty ones included); runs
 * optimized when asked. */
static bytes serialize_rows(const uint64_t *rows, size_t n, bool run_optimize)
{
    const uint32_t n_keys = n ? (uint32_t)(rows[n - 1] >> 32) + 1 : 0;
    uint32_t *keys = calloc(n_keys + 1, sizeof *keys);
    roaring_bitmap_t **maps = calloc(n_keys + 1, sizeof *maps);
    for (uint32_t k = 0; k < n_keys; k++) {
        keys[k] = k;
        maps[k] = roaring_bitmap_create();
    }
    for (size_t i = 0; i < n; i++)
        roaring_bitmap_add(maps[rows[i] >> 32], (uint32_t)rows[i]);
    for (uint32_t k = 0; run_optimize && k < n_keys; k++)
        roaring_bitmap_run_optimize(maps[k]);
    bytes o = serialize_buckets(keys, maps, n_keys);
    for (uint32_t k = 0; k < n_keys; k++)
        roaring_bitmap_free(maps[k]);
    free(keys);
    free(maps);
    return o;
}

/* The file frame: size BE, the bitmap, CRC-32 BE. */
static bytes frame(const bytes *bitmap)
{
    bytes o = {0};
    put_be32(&o, (uint32_t)bitmap->len);
    put(&o, bitmap->b, bitmap->len);
    put_be32(&o, (uint32_t)crc32(0L, bitmap->b, (uInt)bitmap->len));
    return o;
}

/* An exact-size heap copy of the first n bytes, so that ASan sees a read
 * past them. */
static uint8_t *prefix_copy(const bytes *b, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    memcpy(c, b->b, n);
    return c;
}

static dv_descriptor descriptor(char type, const char *path, int64_t offset, size_t size, int64_t cardinality)
{
    return (dv_descriptor){type, strdup(path), offset, (int32_t)size, cardinality};
}

/* Every deleted row of b; *n set. */
static uint64_t *all_rows(const dv_bitmap *b, size_t *n)
{
    const size_t card = (size_t)dv_bitmap_cardinality(b);
    uint64_t *out = malloc((card + 1) * sizeof *out);
    *n = dv_bitmap_rows_in_range(b, 0, UINT64_MAX, out, card + 1);
    return out;
}

static void expect_rows(const dv_bitmap *b, const uint64_t *rows, size_t n)
{
    cr_assert_eq(dv_bitmap_cardinality(b), n);
    size_t got_n;
    uint64_t *got = all_rows(b, &got_n);
    cr_assert_eq(got_n, n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(got[i], rows[i], "row %zu: %llu, expected %llu", i, (unsigned long long)got[i],
                     (unsigned long long)rows[i]);
        cr_assert(dv_bitmap_contains(b, rows[i]));
        if (rows[i] > 0 && (i == 0 || rows[i - 1] != rows[i] - 1))
            cr_assert_not(dv_bitmap_contains(b, rows[i] - 1));
    }
    free(got);
}

/* parse must fail with code and a message containing needle. */
static void parse_fails(const bytes *in, int code, const char *needle)
{
    sv_error err = {0};
    dv_bitmap *b = (dv_bitmap *)1;
    uint8_t *copy = prefix_copy(in, in->len);
    cr_assert_eq(dv_bitmap_parse(copy, in->len, &b, &err), code, "code %d: %s", err.code, err.msg);
    cr_assert_null(b);
    cr_assert_eq(err.code, code);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    cr_assert(strncmp(err.msg, "deletion vector: ", 17) == 0, "%s", err.msg);
    free(copy);
}

/* ---- Z85 ---- */

Test(z85, rfc_example)
{
    const uint8_t hello[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    uint8_t out[8];
    cr_assert_eq(z85_decoded_size(10), 8);
    cr_assert(z85_decode("HelloWorld", 10, out));
    cr_assert_arr_eq(out, hello, 8);
    char *s = z85_encode(hello, 8);
    cr_assert_str_eq(s, "HelloWorld");
    free(s);
}

Test(z85, sizes)
{
    cr_assert_eq(z85_decoded_size(0), 0);
    cr_assert_eq(z85_decoded_size(5), 4);
    cr_assert_eq(z85_decoded_size(7), 0);
    cr_assert_eq(z85_decoded_size(20), 16);
    uint8_t out[8];
    cr_assert(z85_decode("", 0, out));
    cr_assert_not(z85_decode("Hell", 4, out));
    cr_assert_not(z85_decode("HelloW", 6, out));
}

Test(z85, every_digit_and_random_bytes)
{
    /* Each digit in each of a group's 5 places. */
    for (int d = 0; d < 85; d++) {
        char group[6] = "00000";
        for (int place = 0; place < 5; place++) {
            memcpy(group, "00000", 5);
            group[place] = Z85_ALPHABET[d];
            uint8_t out[4];
            uint64_t v = (uint64_t)d;
            for (int i = place; i < 4; i++)
                v *= 85;
            const bool fits = v <= UINT32_MAX;
            cr_assert_eq(z85_decode(group, 5, out), fits, "group %s", group);
            if (fits)
                cr_assert_eq((uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 | (uint32_t)out[2] << 8 | out[3],
                             (uint32_t)v, "group %s", group);
        }
    }
    uint8_t in[4000], out[4000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof in; i++) {
        x = x * 1103515245u + 12345u;
        in[i] = (uint8_t)(x >> 16);
    }
    char *s = z85_encode(in, sizeof in);
    cr_assert(z85_decode(s, strlen(s), out));
    cr_assert_arr_eq(out, in, sizeof in);
    free(s);
}

Test(z85, rejects_characters_and_overflow)
{
    const uint8_t all_ones[4] = {0xff, 0xff, 0xff, 0xff};
    char *max = z85_encode(all_ones, 4);
    uint8_t out[4];
    cr_assert_str_eq(max, "%nSc0");
    cr_assert(z85_decode(max, 5, out));
    cr_assert_arr_eq(out, all_ones, 4);
    free(max);
    cr_assert_not(z85_decode("%nSc1", 5, out), "2^32 is one over");
    cr_assert_not(z85_decode("#####", 5, out));
    const char bad[] = {' ', '"', '\'', ',', ';', '\\', '_', '`', '|', '~', 0x7f, (char)0x80, (char)0xff, '\0', '\n'};
    for (size_t i = 0; i < sizeof bad; i++) {
        char group[5] = {'0', '0', '0', '0', bad[i]};
        cr_assert_not(z85_decode(group, 5, out), "character 0x%02x", (unsigned char)bad[i]);
    }
}

/* ---- descriptors ---- */

Test(deletion_vector, protocol_relative_path_example)
{
    dv_descriptor d = descriptor('u', "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6);
    sv_error err = {0};
    char *path = NULL;
    cr_assert_eq(dv_relative_path(&d, &path, &err), DV_OK, "%s", err.msg);
    cr_assert_str_eq(path, "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
    free(path);
    char *id = dv_unique_id(&d);
    cr_assert_str_eq(id, "uab^-aqEH.-t@S}K{vb[*k^@4");
    free(id);
    cr_assert_null(dv_absolute_path(&d));
    uint64_t off, len;
    cr_assert_eq(dv_file_range(&d, &off, &len, &err), DV_OK, "%s", err.msg);
    cr_assert_eq(off, 4);
    cr_assert_eq(len, 48);
    dv_descriptor_free(&d);
    cr_assert_null(d.path_or_inline);
}

Test(deletion_vector, relative_path_of_a_known_uuid)
{
    const uint8_t uuid[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                              0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
    char *enc = z85_encode(uuid, 16);
    char with_prefix[64];
    snprintf(with_prefix, sizeof with_prefix, "Qz9%s", enc);
    const char *cases[][2] = {
        {enc, "deletion_vector_123e4567-e89b-12d3-a456-426614174000.bin"},
        {with_prefix, "Qz9/deletion_vector_123e4567-e89b-12d3-a456-426614174000.bin"},
    };
    for (size_t i = 0; i < 2; i++) {
        dv_descriptor d = descriptor('u', cases[i][0], -1, 40, 6);
        sv_error err = {0};
        char *path = NULL;
        cr_assert_eq(dv_descriptor_check(&d, &err), DV_OK, "%s", err.msg);
        cr_assert_eq(dv_relative_path(&d, &path, &err), DV_OK, "%s", err.msg);
        cr_assert_str_eq(path, cases[i][1]);
        free(path);
        uint64_t off, len;
        cr_assert_eq(dv_file_range(&d, &off, &len, &err), DV_OK);
        cr_assert_eq(off, 1, "an absent offset is the first DV, after the version byte");
        char *id = dv_unique_id(&d);
        cr_assert_eq(id[0], 'u');
        cr_assert_str_eq(id + 1, cases[i][0], "no @offset when absent");
        free(id);
        dv_descriptor_free(&d);
    }
    free(enc);
}

Test(deletion_vector, relative_path_errors)
{
    const char *bad[] = {
        "short",                     /* under 20 characters */
        "ab^-aqEH.-t@S}K{vb[*k ",    /* a space in the UUID */
        "%%%%%qEH.-t@S}K{vb[*k^",    /* a group over 2^32 - 1 */
        "a/b^-aqEH.-t@S}K{vb[*k^",   /* prefix with '/' */
        "..^-aqEH.-t@S}K{vb[*k^",    /* ".." */
        ".^-aqEH.-t@S}K{vb[*k^",     /* "." */
        "a\\b^-aqEH.-t@S}K{vb[*k^",  /* backslash */
        "a\tb^-aqEH.-t@S}K{vb[*k^",  /* control character */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        dv_descriptor d = descriptor('u', bad[i], 1, 40, 6);
        sv_error err = {0};
        char *path = (char *)1;
        cr_assert_eq(dv_relative_path(&d, &path, &err), DV_E_DESCRIPTOR, "%s", bad[i]);
        cr_assert_null(path);
        cr_assert(strstr(err.msg, "relative path"), "%s", err.msg);
        cr_assert_eq(dv_descriptor_check(&d, NULL), DV_E_DESCRIPTOR, "%s", bad[i]);
        dv_descriptor_free(&d);
    }
    dv_descriptor d = descriptor('i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", -1, 40, 6);
    char *path = NULL;
    cr_assert_eq(dv_relative_path(&d, &path, NULL), DV_E_DESCRIPTOR);
    dv_descriptor_free(&d);
}

Test(deletion_vector, absolute_path_and_unique_ids)
{
    dv_descriptor p = descriptor('p', "s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", 4,
                                 40, 6);
    cr_assert_str_eq(dv_absolute_path(&p), p.path_or_inline);
    char *id = dv_unique_id(&p);
    cr_assert_str_eq(id, "ps3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin@4");
    free(id);
    char *path = NULL;
    cr_assert_eq(dv_relative_path(&p, &path, NULL), DV_E_DESCRIPTOR);
    dv_descriptor_free(&p);
    dv_descriptor i = descriptor('i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", -1, 40, 6);
    id = dv_unique_id(&i);
    cr_assert_str_eq(id, "iwi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L");
    free(id);
    uint64_t off, len;
    cr_assert_eq(dv_file_range(&i, &off, &len, NULL), DV_E_DESCRIPTOR, "an inline DV has no file");
    dv_descriptor_free(&i);
}

Test(deletion_vector, descriptor_checks)
{
    struct {
        dv_descriptor d;
        int code;
        const char *needle;
    } cases[] = {
        {{'x', "abc", -1, 40, 1}, DV_E_DESCRIPTOR, "storage type 0x78"},
        {{'p', "", -1, 40, 1}, DV_E_DESCRIPTOR, "empty"},
        {{'p', NULL, -1, 40, 1}, DV_E_DESCRIPTOR, "empty"},
        {{'p', "s3://b/x.bin", -1, 0, 1}, DV_E_DESCRIPTOR, "sizeInBytes 0"},
        {{'p', "s3://b/x.bin", -1, -5, 1}, DV_E_DESCRIPTOR, "sizeInBytes -5"},
        {{'p', "s3://b/x.bin", -1, (int32_t)(DV_MAX_BYTES + 1), 1}, DV_E_LIMIT, "over the limit"},
        {{'p', "s3://b/x.bin", -1, 40, -1}, DV_E_DESCRIPTOR, "negative cardinality"},
        {{'p', "s3://b/x.bin", 0, 40, 1}, DV_E_DESCRIPTOR, "offset 0"},
        {{'i', "HelloWorl", -1, 40, 1}, DV_E_DESCRIPTOR, "multiple of 5"},
        {{'p', "s3://b/x.bin", 1, 40, 1}, DV_OK, ""},
        {{'i', "HelloWorld", -1, 8, 1}, DV_OK, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sv_error err = {0};
        cr_assert_eq(dv_descriptor_check(&cases[i].d, &err), cases[i].code, "case %zu: %s", i, err.msg);
        cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].needle);
    }
    dv_descriptor_free(NULL);
}

Test(deletion_vector, file_version)
{
    sv_error err = {0};
    cr_assert_eq(dv_file_check_version(1, &err), DV_OK);
    cr_assert_eq(dv_file_check_version(0, &err), DV_E_UNSUPPORTED);
    cr_assert_eq(dv_file_check_version(2, &err), DV_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "file version 2"), "%s", err.msg);
}

/* ---- real inputs ---- */

Test(deletion_vector, protocol_inline_example_is_refused)
{
    /* PROTOCOL.md's example decodes to delta-spark's native layout with a
     * big-endian magic, count and size (64 39 d3 d0 00 00 00 01 00 00 00 1c,
     * then a 32-bit bitmap of 3 4 7 11 18 29): not the format the text
     * beside it defines, and refused by delta-spark's reader too. */
    dv_descriptor d = descriptor('i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", -1, 40, 6);
    sv_error err = {0};
    dv_bitmap *b = (dv_bitmap *)1;
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_E_UNSUPPORTED, "%s", err.msg);
    cr_assert_null(b);
    cr_assert(strstr(err.msg, "deletion vector: inline: a big-endian magic (1681511376)"), "%s", err.msg);
    dv_descriptor_free(&d);
}

Test(deletion_vector, delta_spark_inline)
{
    /* An inline DV of delta-spark 3.2.1 (rows 1, 3, 5): 38 bytes, padded
     * with zeros to 40 for Z85. */
    dv_descriptor d = descriptor('i', "^Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5", -1, 38, 3);
    sv_error err = {0};
    dv_bitmap *b = NULL;
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_OK, "%s", err.msg);
    const uint64_t rows[] = {1, 3, 5};
    expect_rows(b, rows, 3);
    dv_bitmap_free(b);
    d.cardinality = 2;
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_E_MISMATCH);
    cr_assert_null(b);
    cr_assert(strstr(err.msg, "holds 3 rows, the descriptor says 2"), "%s", err.msg);
    dv_descriptor_free(&d);
}

/* deletion_vector_41415451-7013-4e96-a975-1080b5f23562.bin, written by
 * Spark (delta-spark) for a DELETE of rows 1, 3 and 7; its log entry is
 * {"storageType":"u","pathOrInlineDv":"k%XEEA1=0jSDw=5WEMg:","offset":1,
 *  "sizeInBytes":38,"cardinality":3}. */
static const uint8_t SPARK_DV_FILE[47] = {
    0x01, 0x00, 0x00, 0x00, 0x26, 0xd1, 0xd3, 0x39, 0x64, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x30, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x03, 0x00, 0x07, 0x00, 0x68, 0xa8, 0x3f, 0xbb,
};

Test(deletion_vector, spark_file)
{
    dv_descriptor d = descriptor('u', "k%XEEA1=0jSDw=5WEMg:", 1, 38, 3);
    sv_error err = {0};
    char *path = NULL;
    cr_assert_eq(dv_relative_path(&d, &path, &err), DV_OK, "%s", err.msg);
    cr_assert_str_eq(path, "deletion_vector_41415451-7013-4e96-a975-1080b5f23562.bin");
    free(path);
    uint64_t off, len;
    cr_assert_eq(dv_file_range(&d, &off, &len, &err), DV_OK);
    cr_assert_eq(off, 1);
    cr_assert_eq(len, 46);
    cr_assert_eq(off + len, sizeof SPARK_DV_FILE);
    cr_assert_eq(dv_file_check_version(SPARK_DV_FILE[0], &err), DV_OK);
    dv_bitmap *b = NULL;
    cr_assert_eq(dv_bitmap_from_file_bytes(SPARK_DV_FILE + off, (size_t)len, &d, &b, &err), DV_OK, "%s", err.msg);
    const uint64_t rows[] = {1, 3, 7};
    expect_rows(b, rows, 3);
    dv_bitmap_free(b);
    dv_descriptor_free(&d);
}

/* ---- round trips ---- */

static void round_trip(const uint64_t *rows, size_t n, bool run_optimize)
{
    bytes bm = serialize_rows(rows, n, run_optimize);
    sv_error err = {0};
    dv_bitmap *b = NULL;

    /* the bitmap */
    cr_assert_eq(dv_bitmap_parse(bm.b, bm.len, &b, &err), DV_OK, "%s", err.msg);
    expect_rows(b, rows, n);
    dv_bitmap_free(b);

    /* inline: padded to whole Z85 groups */
    bytes padded = {0};
    put(&padded, bm.b, bm.len);
    while (padded.len % 4)
        put_le(&padded, 0, 1);
    char *z = z85_encode(padded.b, padded.len);
    dv_descriptor d = {'i', z, -1, (int32_t)bm.len, (int64_t)n};
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_OK, "%s", err.msg);
    expect_rows(b, rows, n);
    dv_bitmap_free(b);
    d.size_in_bytes = (int32_t)bm.len + 4;
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_E_MISMATCH, "%s", err.msg);
    cr_assert(strstr(err.msg, "sizeInBytes"), "%s", err.msg);
    d.size_in_bytes = (int32_t)bm.len;
    d.cardinality = (int64_t)n + 1;
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_E_MISMATCH);
    cr_assert_null(b);
    dv_descriptor_free(&d);

    /* a file frame, followed by another DV's bytes */
    bytes f = frame(&bm);
    put_le(&f, 0xabcdef, 3);
    dv_descriptor fd = descriptor('p', "s3://t/dv.bin", 1, bm.len, (int64_t)n);
    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len, &fd, &b, &err), DV_OK, "%s", err.msg);
    expect_rows(b, rows, n);
    dv_bitmap_free(b);
    fd.cardinality = (int64_t)n + 3;
    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len, &fd, &b, &err), DV_E_MISMATCH);
    cr_assert_null(b);
    dv_descriptor_free(&fd);

    free(bm.b);
    free(padded.b);
    free(f.b);
}

Test(deletion_vector, round_trip_empty)
{
    round_trip(NULL, 0, false);
}

Test(deletion_vector, round_trip_one_row)
{
    const uint64_t zero[] = {0}, one[] = {12345};
    round_trip(zero, 1, false);
    round_trip(one, 1, false);
}

Test(deletion_vector, round_trip_rows_above_2_32)
{
    const uint64_t rows[] = {1ull << 32, (1ull << 32) + 7, (5ull << 32) + 1, (5ull << 32) + 0xffffffffull,
                             (7ull << 32) | 0x80000000ull};
    round_trip(rows, sizeof rows / sizeof *rows, false);
    const uint64_t high[] = {(0x7fffffffull << 32) | 0xffffffffull}; /* the largest row: 2^63 - 1 */
    bytes bm = {0};
    roaring_bitmap_t *r = roaring_bitmap_of(1, 0xffffffffu);
    uint32_t key = 0x7fffffff;
    bm = serialize_buckets(&key, &r, 1);
    dv_bitmap *b = NULL;
    cr_assert_eq(dv_bitmap_parse(bm.b, bm.len, &b, NULL), DV_OK);
    expect_rows(b, high, 1);
    dv_bitmap_free(b);
    roaring_bitmap_free(r);
    free(bm.b);
}

Test(deletion_vector, round_trip_buckets_and_container_kinds)
{
    /* Arrays, a bitset (every other row of 0..20000), a run (100000
     * consecutive rows) and rows in buckets 0, 1 and 3. */
    size_t n = 0;
    uint64_t *rows = malloc(200000 * sizeof *rows);
    for (uint64_t r = 0; r < 20000; r += 2)
        rows[n++] = r;
    for (uint64_t r = 1000000; r < 1100000; r++)
        rows[n++] = r;
    rows[n++] = (1ull << 32) + 3;
    for (uint64_t r = (3ull << 32) + 65530; r < (3ull << 32) + 65545; r++) /* across a container boundary */
        rows[n++] = r;
    round_trip(rows, n, false);
    round_trip(rows, n, true);
    free(rows);
}

/* ---- range extraction ---- */

Test(deletion_vector, rows_in_range)
{
    const uint64_t rows[] = {0, 5, 6, 65535, 65536, 1000000, 0xffffffffull, (2ull << 32), (2ull << 32) + 9,
                             (4ull << 32) + 1};
    const size_t n = sizeof rows / sizeof *rows;
    bytes bm = serialize_rows(rows, n, true);
    dv_bitmap *b = NULL;
    cr_assert_eq(dv_bitmap_parse(bm.b, bm.len, &b, NULL), DV_OK);
    const uint64_t bounds[] = {0, 1, 5, 6, 7, 65535, 65536, 65537, 999999, 1000000, 0xffffffffull, 1ull << 32,
                               (2ull << 32), (2ull << 32) + 9, (2ull << 32) + 10, (3ull << 32), (4ull << 32) + 1,
                               (4ull << 32) + 2, UINT64_MAX};
    const size_t nb = sizeof bounds / sizeof *bounds;
    uint64_t out[16];
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nb; j++) {
            const uint64_t from = bounds[i], to = bounds[j];
            size_t want = 0;
            uint64_t expected[16];
            for (size_t k = 0; k < n; k++)
                if (rows[k] >= from && rows[k] < to)
                    expected[want++] = rows[k];
            cr_assert_eq(dv_bitmap_rows_in_range(b, from, to, out, 16), want, "[%llu, %llu)",
                         (unsigned long long)from, (unsigned long long)to);
            cr_assert_arr_eq(out, expected, want * sizeof *out);
        }
    /* continuing from the last row written, max at a time */
    for (size_t max = 1; max <= 4; max++) {
        size_t total = 0;
        uint64_t from = 3;
        for (;;) {
            const size_t got = dv_bitmap_rows_in_range(b, from, UINT64_MAX, out, max);
            for (size_t k = 0; k < got; k++)
                cr_assert_eq(out[k], rows[1 + total + k]);
            total += got;
            if (got < max)
                break;
            from = out[max - 1] + 1;
        }
        cr_assert_eq(total, n - 1);
    }
    cr_assert_eq(dv_bitmap_rows_in_range(b, 0, 100, out, 0), 0);
    cr_assert_eq(dv_bitmap_rows_in_range(b, 7, 7, out, 16), 0);
    cr_assert_eq(dv_bitmap_rows_in_range(b, 9, 3, out, 16), 0);
    dv_bitmap_free(b);
    free(bm.b);
}

Test(deletion_vector, rows_in_range_dense)
{
    /* A long run and a bitset, read in chunks of every size around the
     * reader's 256. */
    size_t n = 0;
    uint64_t *rows = malloc(300000 * sizeof *rows);
    for (uint64_t r = 10; r < 200010; r++)
        rows[n++] = r;
    for (uint64_t r = 300000; r < 400000; r += 3)
        rows[n++] = r;
    bytes bm = serialize_rows(rows, n, true);
    dv_bitmap *b = NULL;
    cr_assert_eq(dv_bitmap_parse(bm.b, bm.len, &b, NULL), DV_OK);
    uint64_t *out = malloc(n * sizeof *out);
    const size_t maxes[] = {255, 256, 257, 1000, n};
    for (size_t m = 0; m < sizeof maxes / sizeof *maxes; m++) {
        size_t total = 0;
        uint64_t from = 0;
        for (;;) {
            const size_t got = dv_bitmap_rows_in_range(b, from, 350001, out + total, maxes[m]);
            total += got;
            if (got < maxes[m])
                break;
            from = out[total - 1] + 1;
        }
        size_t want = 0;
        while (want < n && rows[want] < 350001)
            want++;
        cr_assert_eq(total, want, "max %zu", maxes[m]);
        cr_assert_arr_eq(out, rows, want * sizeof *out);
    }
    free(out);
    free(rows);
    dv_bitmap_free(b);
    free(bm.b);
}

/* ---- corrupt inputs ---- */

/* Rows in buckets 0, 2 and 3, arrays only: small enough to cut at every byte. */
static bytes small_bitmap(void)
{
    const uint64_t rows[] = {1, 3, 70000, (2ull << 32) + 5, (3ull << 32) + 8};
    return serialize_rows(rows, 5, false);
}

Test(deletion_vector, truncated_at_every_byte)
{
    bytes bm = small_bitmap();
    for (size_t k = 0; k < bm.len; k++) {
        uint8_t *c = prefix_copy(&bm, k);
        sv_error err = {0};
        dv_bitmap *b = (dv_bitmap *)1;
        cr_assert_neq(dv_bitmap_parse(c, k, &b, &err), DV_OK, "accepted %zu of %zu bytes", k, bm.len);
        cr_assert_null(b);
        cr_assert_neq(err.code, DV_OK);
        free(c);
    }
    bytes f = frame(&bm);
    dv_descriptor d = descriptor('u', "ab^-aqEH.-t@S}K{vb[*k^", 1, bm.len, 5);
    for (size_t k = 0; k < f.len; k++) {
        uint8_t *c = prefix_copy(&f, k);
        sv_error err = {0};
        dv_bitmap *b = (dv_bitmap *)1;
        cr_assert_neq(dv_bitmap_from_file_bytes(c, k, &d, &b, &err), DV_OK, "accepted %zu of %zu bytes", k, f.len);
        cr_assert_null(b);
        free(c);
    }
    dv_bitmap *b = NULL;
    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len, &d, &b, NULL), DV_OK);
    dv_bitmap_free(b);
    dv_descriptor_free(&d);
    free(f.b);
    free(bm.b);
}

Test(deletion_vector, truncation_message)
{
    bytes bm = small_bitmap();
    sv_error err = {0};
    dv_bitmap *b = NULL;
    cr_assert_eq(dv_bitmap_parse(bm.b, bm.len - 1, &b, &err), DV_E_CORRUPT);
    cr_assert(strstr(err.msg, "deletion vector: bitmap 4 of 4: container 1 of 1: truncated at byte"), "%s",
              err.msg);
    free(bm.b);
}

Test(deletion_vector, frame_errors)
{
    bytes bm = small_bitmap();
    bytes f = frame(&bm);
    dv_descriptor d = descriptor('u', "ab^-aqEH.-t@S}K{vb[*k^", 1, bm.len, 5);
    sv_error err = {0};
    dv_bitmap *b = NULL;

    d.size_in_bytes++;
    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len + 0, &d, &b, &err), DV_E_MISMATCH);
    cr_assert(strstr(err.msg, "the file says"), "%s", err.msg);
    d.size_in_bytes--;

    f.b[f.len - 1] ^= 1; /* the CRC */
    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len, &d, &b, &err), DV_E_CHECKSUM);
    cr_assert(strstr(err.msg, "CRC-32"), "%s", err.msg);
    cr_assert_eq(err.offset, 4 + bm.len);
    f.b[f.len - 1] ^= 1;
    f.b[20] ^= 0x40; /* the bitmap */
    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len, &d, &b, &err), DV_E_CHECKSUM);
    f.b[20] ^= 0x40;

    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len, &d, &b, &err), DV_OK, "%s", err.msg);
    dv_bitmap_free(b);

    dv_descriptor i = descriptor('i', "HelloWorld", -1, 8, 0);
    cr_assert_eq(dv_bitmap_from_file_bytes(f.b, f.len, &i, &b, &err), DV_E_DESCRIPTOR);
    dv_descriptor_free(&i);
    dv_descriptor_free(&d);
    free(f.b);
    free(bm.b);
}

Test(deletion_vector, bad_magic)
{
    bytes bm = small_bitmap();
    bm.b[0] ^= 1; /* 1681511376: delta-spark's native format */
    parse_fails(&bm, DV_E_UNSUPPORTED, "native");
    bm.b[0] ^= 3;
    parse_fails(&bm, DV_E_CORRUPT, "magic");
    free(bm.b);
}

Test(deletion_vector, keys_out_of_order)
{
    roaring_bitmap_t *r[3] = {roaring_bitmap_of(1, 1u), roaring_bitmap_of(1, 2u), roaring_bitmap_of(1, 3u)};
    const uint32_t unsorted[3] = {0, 5, 2}, duplicate[3] = {0, 5, 5}, top_bit[3] = {0, 5, 0x80000000u};
    bytes a = serialize_buckets(unsorted, r, 3), b = serialize_buckets(duplicate, r, 3),
          c = serialize_buckets(top_bit, r, 3);
    parse_fails(&a, DV_E_CORRUPT, "bitmap 3 of 3: key 2 not above the previous one (5)");
    parse_fails(&b, DV_E_CORRUPT, "key 5 not above");
    parse_fails(&c, DV_E_CORRUPT, "top bit");
    for (int i = 0; i < 3; i++)
        roaring_bitmap_free(r[i]);
    free(a.b);
    free(b.b);
    free(c.b);
}

Test(deletion_vector, counts_and_trailing_bytes)
{
    bytes bm = small_bitmap();
    put_le(&bm, 0, 1);
    parse_fails(&bm, DV_E_CORRUPT, "1 trailing bytes");
    bm.len--;
    bm.b[4] = 200; /* 200 bitmaps cannot fit */
    parse_fails(&bm, DV_E_CORRUPT, "cannot fit");
    memset(bm.b + 4, 0xff, 8);
    parse_fails(&bm, DV_E_LIMIT, "bitmaps (at most 65536)");
    memset(bm.b + 4, 0, 8);
    bm.b[6] = 1; /* 65536 */
    parse_fails(&bm, DV_E_CORRUPT, "cannot fit");
    free(bm.b);

    bytes over = {0};
    put_le(&over, DV_MAGIC, 4);
    put_le(&over, 0, 8);
    over.len = DV_MAX_BYTES + 1ull; /* not read: the size is refused first */
    dv_bitmap *b = NULL;
    sv_error err = {0};
    cr_assert_eq(dv_bitmap_parse(over.b, over.len, &b, &err), DV_E_LIMIT);
    free(over.b);
}

/* One bucket (key 0) holding the 32-bit bitmap in raw. */
static bytes with_bitmap32(const bytes *raw)
{
    bytes o = {0};
    put_le(&o, DV_MAGIC, 4);
    put_le(&o, 1, 8);
    put_le(&o, 0, 4);
    put(&o, raw->b, raw->len);
    return o;
}

Test(deletion_vector, corrupt_containers)
{
    struct {
        const char *what;
        int code;
        const char *needle;
    } expect[] = {
        {"unsorted array", DV_E_CORRUPT, "array value 2 not above"},
        {"duplicate array value", DV_E_CORRUPT, "array value 3 not above"},
        {"container keys", DV_E_CORRUPT, "container 2 of 2: key 1 not above"},
        {"bad cookie", DV_E_CORRUPT, "cookie"},
        {"too many containers", DV_E_CORRUPT, "containers (at most 65536)"},
        {"negative container count", DV_E_CORRUPT, "containers (at most 65536)"},
        {"overlapping runs", DV_E_CORRUPT, "overlaps"},
        {"run past 65535", DV_E_CORRUPT, "leaves 0..65535"},
        {"run cardinality", DV_E_CORRUPT, "runs hold 11 values, the header says 12"},
        {"bitset cardinality", DV_E_CORRUPT, "bitset holds 5000 values, the header says 5001"},
    };
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
        bytes raw = {0};
        switch (i) {
        case 0: /* no runs, 1 container: key 0, 3 values 5 1 5 */
        case 1: /* values 1 5 5 */
            put_le(&raw, 12346, 4);
            put_le(&raw, 1, 4);
            put_le(&raw, 0, 2);
            put_le(&raw, 2, 2);
            put_le(&raw, 16, 4);
            put_le(&raw, i == 0 ? 5 : 1, 2);
            put_le(&raw, i == 0 ? 1 : 5, 2);
            put_le(&raw, 5, 2);
            break;
        case 2: /* two containers, keys 1 then 1 */
            put_le(&raw, 12346, 4);
            put_le(&raw, 2, 4);
            put_le(&raw, 1, 2);
            put_le(&raw, 0, 2);
            put_le(&raw, 1, 2);
            put_le(&raw, 0, 2);
            put_le(&raw, 24, 4);
            put_le(&raw, 26, 4);
            put_le(&raw, 7, 2);
            put_le(&raw, 8, 2);
            break;
        case 3:
            put_le(&raw, 12345, 4);
            put_le(&raw, 0, 4);
            break;
        case 4:
        case 5:
            put_le(&raw, 12346, 4);
            put_le(&raw, i == 4 ? 65537 : 0xffffffffu, 4);
            put(&raw, (uint8_t[64]){0}, 64);
            break;
        case 6: /* runs: cookie with 1 container, run flag, key 0 card 20: [10,19] [15,24] */
        case 7: /* [65530, 65530 + 11] */
        case 8: /* [0, 10]: 11 values where the header says 12 */
            put_le(&raw, 12347, 4); /* (1 - 1) << 16 | 12347 */
            put_le(&raw, 1, 1);
            put_le(&raw, 0, 2);
            put_le(&raw, i == 6 ? 19 : 11, 2);
            if (i == 6) {
                put_le(&raw, 2, 2);
                put_le(&raw, 10, 2);
                put_le(&raw, 9, 2);
                put_le(&raw, 15, 2);
                put_le(&raw, 9, 2);
            } else {
                put_le(&raw, 1, 2);
                put_le(&raw, i == 7 ? 65530 : 0, 2);
                put_le(&raw, i == 7 ? 11 : 10, 2);
            }
            break;
        case 9: { /* a bitset with 5000 bits set, the header saying 5001 */
            put_le(&raw, 12346, 4);
            put_le(&raw, 1, 4);
            put_le(&raw, 0, 2);
            put_le(&raw, 5000, 2);
            put_le(&raw, 16, 4);
            uint8_t bits[8192] = {0};
            for (int v = 0; v < 5000; v++)
                bits[v / 8] |= (uint8_t)(1 << (v % 8));
            put(&raw, bits, sizeof bits);
            break;
        }
        }
        bytes in = with_bitmap32(&raw);
        parse_fails(&in, expect[i].code, expect[i].needle);
        free(raw.b);
        free(in.b);
    }
}

Test(deletion_vector, inline_errors)
{
    sv_error err = {0};
    dv_bitmap *b = NULL;
    dv_descriptor d = descriptor('i', "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{ ", -1, 40, 6);
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_E_CORRUPT);
    cr_assert(strstr(err.msg, "characters 45..49"), "%s", err.msg);
    dv_descriptor_free(&d);
    d = descriptor('i', "^Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5", -1, 37, 3); /* one short */
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_E_CORRUPT, "%s", err.msg);
    cr_assert(strstr(err.msg, "deletion vector: inline: bitmap 1 of 1: container 1 of 1: truncated"), "%s",
              err.msg);
    dv_descriptor_free(&d);
    d = descriptor('u', "ab^-aqEH.-t@S}K{vb[*k^", 1, 40, 6);
    cr_assert_eq(dv_bitmap_from_inline(&d, &b, &err), DV_E_DESCRIPTOR);
    dv_descriptor_free(&d);
    cr_assert_null(b);
}
