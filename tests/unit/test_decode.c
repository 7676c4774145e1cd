/* Data and dictionary page decoding on hand-built pages. */
#include "decode.h"
#include "pq_test_encode.h"

#include <criterion/criterion.h>
#include <math.h>
#include <zstd.h>

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd64(void)
{
    return t_xorshift64(&rng);
}

static pq_column_desc col(pq_physical_type t, int32_t tl, uint16_t max_def, uint16_t max_rep)
{
    pq_column_desc c = {.type = t, .type_length = tl, .max_def = max_def, .max_rep = max_rep,
                        .codec = PQ_CODEC_UNCOMPRESSED};
    return c;
}

static pq_data_page_info v1(int32_t nv, int enc, size_t unc)
{
    pq_data_page_info i = {.v2 = false, .num_values = nv, .encoding = enc,
                           .uncompressed_page_size = (int32_t)unc,
                           .def_level_encoding = PQ_ENC_RLE, .rep_level_encoding = PQ_ENC_RLE};
    return i;
}

/* V1 level section: 4-byte length + hybrid. */
static void put_levels_v1(tbuf *b, const uint16_t *lv, size_t n, unsigned max_level)
{
    uint64_t *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = lv[i];
    tbuf t = {0};
    tb_hybrid(&t, v, n, (unsigned)t_bits(max_level), 8);
    tb_le32(b, (uint32_t)t.len);
    tb_put(b, t.p, t.len);
    tb_free(&t);
    free(v);
}

static size_t put_levels_raw(tbuf *b, const uint16_t *lv, size_t n, unsigned max_level)
{
    uint64_t *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = lv[i];
    const size_t before = b->len;
    tb_hybrid(b, v, n, (unsigned)t_bits(max_level), 8);
    free(v);
    return b->len - before;
}

static pq_decoder *dec(void)
{
    pq_decoder *d = pq_decoder_new(NULL);
    cr_assert_not_null(d);
    return d;
}

/* Decode len bytes of page as one data page, which must succeed. */
static void decode_ok(pq_decoder *d, const pq_column_desc *c, const pq_data_page_info *info,
                      const uint8_t *page, size_t len, const pq_dictionary *dict,
                      pq_page_values *pv)
{
    pqd_error err;
    cr_assert_eq(pq_decode_data_page(d, c, info, page, len, dict, pv, &err), PQD_OK, "%s",
                 err.msg);
}

Test(decode, plain_required_int32_v1)
{
    tbuf b = {0};
    for (int32_t i = 0; i < 1000; i++)
        tb_le32(&b, (uint32_t)(i * 7 - 500));
    pq_decoder *d = dec();
    const pq_column_desc c = col(PQ_INT32, -1, 0, 0);
    const pq_data_page_info info = v1(1000, PQ_ENC_PLAIN, b.len);
    pq_page_values pv;
    decode_ok(d, &c, &info, b.p, b.len, NULL, &pv);
    cr_expect_eq(pv.num_values, 1000);
    cr_expect_eq(pv.num_non_null, 1000);
    cr_expect_eq(pv.num_rows, 1000);
    cr_expect_null(pv.def_levels);
    cr_expect_null(pv.rep_levels);
    cr_expect_eq(pv.width, 4);
    const int32_t *v = pv.values;
    for (int32_t i = 0; i < 1000; i++)
        cr_assert_eq(v[i], i * 7 - 500);
    pq_decoder_free(d);
    tb_free(&b);
}

/* Optional columns of every fixed-width type, V1 and V2, with nulls. */
Test(decode, plain_optional_every_fixed_type)
{
    const pq_physical_type types[] = {PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_INT96,
                                      PQ_FLOAT,   PQ_DOUBLE, PQ_FIXED_LEN_BYTE_ARRAY};
    pq_decoder *d = dec();
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        for (int v2 = 0; v2 <= 1; v2++) {
            const pq_physical_type t = types[ti];
            const pq_column_desc c = col(t, 5, 1, 0);
            const size_t n = 777;
            const size_t w = (size_t)pq_value_width(t, 5);
            uint16_t def[777];
            size_t nn = 0;
            for (size_t i = 0; i < n; i++) {
                def[i] = (i % 5 != 2) && (i < 300 || i > 400);
                nn += def[i];
            }
            uint8_t *vals = malloc(nn * w + 1);
            for (size_t i = 0; i < nn * w; i++)
                vals[i] = (uint8_t)rnd64();
            tbuf body = {0};
            pq_data_page_info info;
            if (t == PQ_BOOLEAN) {
                uint64_t *bits = malloc(nn * sizeof *bits);
                for (size_t i = 0; i < nn; i++)
                    bits[i] = vals[i] &= 1;
                if (v2) {
                    const size_t dl = put_levels_raw(&body, def, n, 1);
                    tb_bitpack(&body, bits, nn, 1);
                    info = (pq_data_page_info){.v2 = true, .num_values = (int32_t)n,
                                               .num_nulls = (int32_t)(n - nn),
                                               .num_rows = (int32_t)n, .encoding = PQ_ENC_PLAIN,
                                               .def_levels_byte_length = (int32_t)dl,
                                               .uncompressed_page_size = (int32_t)body.len};
                } else {
                    put_levels_v1(&body, def, n, 1);
                    tb_bitpack(&body, bits, nn, 1);
                    info = v1((int32_t)n, PQ_ENC_PLAIN, body.len);
                }
                free(bits);
            } else if (v2) {
                const size_t dl = put_levels_raw(&body, def, n, 1);
                tb_put(&body, vals, nn * w);
                info = (pq_data_page_info){.v2 = true, .num_values = (int32_t)n,
                                           .num_nulls = (int32_t)(n - nn), .num_rows = (int32_t)n,
                                           .encoding = PQ_ENC_PLAIN,
                                           .def_levels_byte_length = (int32_t)dl,
                                           .uncompressed_page_size = (int32_t)body.len};
            } else {
                put_levels_v1(&body, def, n, 1);
                tb_put(&body, vals, nn * w);
                info = v1((int32_t)n, PQ_ENC_PLAIN, body.len);
            }
            pq_page_values pv;
            pqd_error err;
            cr_assert_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err),
                         PQD_OK, "type %d v2 %d: %s", t, v2, err.msg);
            cr_expect_eq(pv.num_non_null, nn);
            cr_expect_eq(pv.width, w);
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(pv.def_levels[i], def[i]);
            cr_assert_eq(memcmp(pv.values, vals, nn * w), 0, "type %d v2 %d", t, v2);
            tb_free(&body);
            free(vals);
        }
    }
    pq_decoder_free(d);
}

static void put_plain_strings(tbuf *b, const char *const *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tb_le32(b, (uint32_t)strlen(s[i]));
        tb_put(b, s[i], strlen(s[i]));
    }
}

static void expect_strings(const pq_page_values *pv, const char *const *s, size_t n)
{
    cr_assert_eq(pv->num_non_null, n);
    cr_assert_eq(pv->offsets[0], 0);
    for (size_t i = 0; i < n; i++) {
        const uint32_t a = pv->offsets[i], l = pv->offsets[i + 1] - a;
        cr_assert_eq(l, strlen(s[i]), "value %zu", i);
        cr_assert_eq(memcmp(pv->data + a, s[i], l), 0, "value %zu", i);
    }
}

static const char *const words[] = {"", "a", "apple", "applesauce", "apply", "b", "banana",
                                    "band", "bandana", "", "zzz", "zz"};
#define N_WORDS (sizeof words / sizeof words[0])

Test(decode, plain_byte_array)
{
    tbuf b = {0};
    put_plain_strings(&b, words, N_WORDS);
    pq_decoder *d = dec();
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 0, 0);
    const pq_data_page_info info = v1(N_WORDS, PQ_ENC_PLAIN, b.len);
    pq_page_values pv;
    cr_assert_eq(pq_decode_data_page(d, &c, &info, b.p, b.len, NULL, &pv, NULL), PQD_OK);
    expect_strings(&pv, words, N_WORDS);
    /* A length running past the end. */
    b.p[4 + 0 + 4 + 1] = 0xff; /* length of "apple" */
    pqd_error err;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, b.p, b.len, NULL, &pv, &err),
                 PQD_E_TRUNCATED);
    /* The first value takes every byte, so the later length prefixes are
     * missing (a heap overflow found by fuzzing). */
    tbuf greedy = {0};
    tb_le32(&greedy, 20);
    tb_put(&greedy, "0123456789abcdefghij", 20);
    const pq_data_page_info ginfo = v1(3, PQ_ENC_PLAIN, greedy.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &ginfo, greedy.p, greedy.len, NULL, &pv, &err),
                 PQD_E_TRUNCATED);
    pq_dictionary gd;
    const pq_dict_page_info gdi = {.num_values = 3, .encoding = PQ_ENC_PLAIN,
                                   .uncompressed_page_size = (int32_t)greedy.len};
    cr_expect_eq(pq_decode_dictionary(d, &c, &gdi, greedy.p, greedy.len, &gd, &err),
                 PQD_E_TRUNCATED);
    tb_free(&greedy);
    /* Fewer bytes than 4 per value. */
    const pq_data_page_info many = v1(1000, PQ_ENC_PLAIN, b.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &many, b.p, b.len, NULL, &pv, &err), PQD_E_TRUNCATED);
    pq_decoder_free(d);
    tb_free(&b);
}

static void dict_page_i64(tbuf *b, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tb_le64(b, (uint64_t)v[i]);
}

Test(decode, dictionary_pages)
{
    pq_decoder *d = dec();
    /* INT64 dictionary. */
    const int64_t dv[] = {INT64_MIN, -1, 0, 42, INT64_MAX};
    tbuf dp = {0};
    dict_page_i64(&dp, dv, 5);
    const pq_column_desc c = col(PQ_INT64, -1, 1, 0);
    const pq_dict_page_info di = {.num_values = 5, .encoding = PQ_ENC_PLAIN,
                                  .uncompressed_page_size = (int32_t)dp.len};
    pq_dictionary dict;
    pqd_error err;
    cr_assert_eq(pq_decode_dictionary(d, &c, &di, dp.p, dp.len, &dict, &err), PQD_OK, "%s",
                 err.msg);
    cr_expect_eq(dict.count, 5);
    /* Data page: 2000 entries, every 3rd null, indices i % 5, RLE_DICTIONARY. */
    const size_t n = 2000;
    uint16_t def[2000];
    uint64_t idx[2000];
    size_t nn = 0;
    for (size_t i = 0; i < n; i++) {
        def[i] = i % 3 != 0;
        if (def[i]) {
            idx[nn] = (nn / 50) % 5;
            nn++;
        }
    }
    for (int enc = 0; enc < 2; enc++) {
        tbuf body = {0};
        put_levels_v1(&body, def, n, 1);
        tb_u8(&body, 3);
        tb_hybrid(&body, idx, nn, 3, 8);
        const pq_data_page_info info =
            v1((int32_t)n, enc ? PQ_ENC_PLAIN_DICTIONARY : PQ_ENC_RLE_DICTIONARY, body.len);
        pq_page_values pv;
        decode_ok(d, &c, &info, body.p, body.len, &dict, &pv);
        cr_expect(pv.dict_encoded);
        cr_assert_eq(pv.num_non_null, nn);
        const int64_t *v = pv.values;
        for (size_t i = 0; i < nn; i++) {
            cr_assert_eq(pv.dict_indices[i], idx[i]);
            cr_assert_eq(v[i], dv[idx[i]]);
        }
        /* Without a dictionary. */
        cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err),
                     PQD_E_INVALID);
        tb_free(&body);
    }
    /* An index past the dictionary, at the start, middle or end. */
    pq_page_values pv;
    const size_t where[] = {0, nn / 2 + 1, nn - 1};
    for (size_t k = 0; k < 3; k++) {
        const uint64_t saved = idx[where[k]];
        idx[where[k]] = 5 + k;
        tbuf bad = {0};
        put_levels_v1(&bad, def, n, 1);
        tb_u8(&bad, 3);
        tb_hybrid(&bad, idx, nn, 3, 8);
        const pq_data_page_info binfo = v1((int32_t)n, PQ_ENC_RLE_DICTIONARY, bad.len);
        cr_expect_eq(pq_decode_data_page(d, &c, &binfo, bad.p, bad.len, &dict, &pv, &err),
                     PQD_E_RANGE);
        cr_expect(strstr(err.msg, "out of range") != NULL, "%s", err.msg);
        idx[where[k]] = saved;
        tb_free(&bad);
    }
    /* Bit width byte over 32. */
    tbuf w33 = {0};
    put_levels_v1(&w33, def, n, 1);
    tb_u8(&w33, 33);
    tb_u8(&w33, 0);
    const pq_data_page_info winfo = v1((int32_t)n, PQ_ENC_RLE_DICTIONARY, w33.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &winfo, w33.p, w33.len, &dict, &pv, &err),
                 PQD_E_RANGE);
    tb_free(&w33);
    /* Dictionary of another type. */
    const pq_column_desc c32 = col(PQ_INT32, -1, 0, 0);
    const uint8_t one[] = {0, 0x02, 0x00};
    const pq_data_page_info oinfo = v1(1, PQ_ENC_RLE_DICTIONARY, sizeof one);
    cr_expect_eq(pq_decode_data_page(d, &c32, &oinfo, one, sizeof one, &dict, &pv, &err),
                 PQD_E_INVALID);
    pq_dictionary_free(&dict);
    tb_free(&dp);
    pq_decoder_free(d);
}

Test(decode, byte_array_dictionary_and_indices_only)
{
    tbuf dp = {0};
    put_plain_strings(&dp, words, N_WORDS);
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 0, 0);
    const pq_dict_page_info di = {.num_values = N_WORDS, .encoding = PQ_ENC_PLAIN_DICTIONARY,
                                  .uncompressed_page_size = (int32_t)dp.len};
    for (int materialize = 1; materialize >= 0; materialize--) {
        pq_decode_limits lim;
        pq_decode_limits_default(&lim);
        lim.materialize_dict = materialize;
        pq_decoder *d = pq_decoder_new(&lim);
        pq_dictionary dict;
        cr_assert_eq(pq_decode_dictionary(d, &c, &di, dp.p, dp.len, &dict, NULL), PQD_OK);
        uint64_t idx[300];
        const char *expect[300];
        for (size_t i = 0; i < 300; i++) {
            idx[i] = (i * 7) % N_WORDS;
            expect[i] = words[idx[i]];
        }
        tbuf body = {0};
        tb_u8(&body, 4);
        tb_hybrid(&body, idx, 300, 4, 8);
        const pq_data_page_info info = v1(300, PQ_ENC_RLE_DICTIONARY, body.len);
        pq_page_values pv;
        cr_assert_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, &dict, &pv, NULL), PQD_OK);
        for (size_t i = 0; i < 300; i++)
            cr_assert_eq(pv.dict_indices[i], idx[i]);
        if (materialize)
            expect_strings(&pv, expect, 300);
        else
            cr_expect(pv.offsets == NULL && pv.data == NULL && pv.values == NULL);
        pq_dictionary_free(&dict);
        pq_decoder_free(d);
        tb_free(&body);
    }
    tb_free(&dp);
}

Test(decode, dictionary_gather_limit)
{
    /* One 1000-byte dictionary entry repeated by a 2-byte RLE run of 10^6
     * indices would build 1 GB: refused by max_value_bytes. */
    char big[1001];
    memset(big, 'x', 1000);
    big[1000] = 0;
    const char *entries[] = {big};
    tbuf dp = {0};
    put_plain_strings(&dp, entries, 1);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.max_value_bytes = 100u << 20;
    pq_decoder *d = pq_decoder_new(&lim);
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 0, 0);
    const pq_dict_page_info di = {.num_values = 1, .encoding = PQ_ENC_PLAIN,
                                  .uncompressed_page_size = (int32_t)dp.len};
    pq_dictionary dict;
    cr_assert_eq(pq_decode_dictionary(d, &c, &di, dp.p, dp.len, &dict, NULL), PQD_OK);
    tbuf body = {0};
    tb_u8(&body, 1);
    tb_uleb(&body, 1000000u << 1);
    tb_u8(&body, 0);
    const pq_data_page_info info = v1(1000000, PQ_ENC_RLE_DICTIONARY, body.len);
    pq_page_values pv;
    pqd_error err;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, &dict, &pv, &err), PQD_E_LIMIT);
    pq_dictionary_free(&dict);
    pq_decoder_free(d);
    tb_free(&body);
    tb_free(&dp);
}

Test(decode, dictionary_page_errors)
{
    pq_decoder *d = dec();
    const uint8_t four[8] = {1, 0, 0, 0, 2, 0, 0, 0};
    const pq_column_desc c = col(PQ_INT32, -1, 0, 0);
    pq_dictionary dict;
    pqd_error err;
    pq_dict_page_info di = {.num_values = 3, .encoding = PQ_ENC_PLAIN, .uncompressed_page_size = 8};
    cr_expect_eq(pq_decode_dictionary(d, &c, &di, four, 8, &dict, &err), PQD_E_TRUNCATED);
    di.num_values = 2;
    di.encoding = PQ_ENC_RLE;
    cr_expect_eq(pq_decode_dictionary(d, &c, &di, four, 8, &dict, &err), PQD_E_UNSUPPORTED);
    di.encoding = PQ_ENC_PLAIN;
    di.num_values = -1;
    cr_expect_eq(pq_decode_dictionary(d, &c, &di, four, 8, &dict, &err), PQD_E_CORRUPT);
    di.num_values = 2;
    di.uncompressed_page_size = 9;
    cr_expect_eq(pq_decode_dictionary(d, &c, &di, four, 8, &dict, &err), PQD_E_MISMATCH);
    di.uncompressed_page_size = 8;
    cr_assert_eq(pq_decode_dictionary(d, &c, &di, four, 8, &dict, &err), PQD_OK);
    cr_expect_eq(((const int32_t *)dict.values)[1], 2);
    pq_dictionary_free(&dict);
    /* Boolean dictionary. */
    const pq_column_desc cb = col(PQ_BOOLEAN, -1, 0, 0);
    const uint8_t bits[1] = {0x02};
    const pq_dict_page_info bi = {.num_values = 2, .encoding = PQ_ENC_PLAIN,
                                  .uncompressed_page_size = 1};
    cr_assert_eq(pq_decode_dictionary(d, &cb, &bi, bits, 1, &dict, &err), PQD_OK);
    cr_expect_eq(((const uint8_t *)dict.values)[0], 0);
    cr_expect_eq(((const uint8_t *)dict.values)[1], 1);
    pq_dictionary_free(&dict);
    pq_decoder_free(d);
}

Test(decode, rle_booleans_v1_v2)
{
    pq_decoder *d = dec();
    const size_t n = 1000;
    uint64_t bits[1000];
    for (size_t i = 0; i < n; i++)
        bits[i] = (i / 37) % 2 || i % 11 == 0;
    tbuf h = {0};
    tb_hybrid(&h, bits, n, 1, 8);
    tbuf body = {0};
    tb_le32(&body, (uint32_t)h.len);
    tb_put(&body, h.p, h.len);
    const pq_column_desc c = col(PQ_BOOLEAN, -1, 0, 0);
    pq_page_values pv;
    pqd_error err;
    pq_data_page_info info = v1((int32_t)n, PQ_ENC_RLE, body.len);
    decode_ok(d, &c, &info, body.p, body.len, NULL, &pv);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(((const uint8_t *)pv.values)[i], bits[i]);
    info = (pq_data_page_info){.v2 = true, .num_values = (int32_t)n, .num_rows = (int32_t)n,
                               .encoding = PQ_ENC_RLE,
                               .uncompressed_page_size = (int32_t)body.len};
    decode_ok(d, &c, &info, body.p, body.len, NULL, &pv);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(((const uint8_t *)pv.values)[i], bits[i]);
    /* RLE on an INT32 column. */
    const pq_column_desc ci = col(PQ_INT32, -1, 0, 0);
    cr_expect_eq(pq_decode_data_page(d, &ci, &info, body.p, body.len, NULL, &pv, &err),
                 PQD_E_UNSUPPORTED);
    /* Length prefix past the end. */
    body.p[0] = 0xff;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err),
                 PQD_E_TRUNCATED);
    tb_free(&h);
    tb_free(&body);
    pq_decoder_free(d);
}

Test(decode, deprecated_bit_packed_levels)
{
    /* max_def 3 (2 bits), 10 levels packed MSB first, then PLAIN int32s. */
    const uint16_t def[10] = {3, 0, 1, 3, 3, 2, 3, 0, 3, 3};
    tbuf body = {0};
    uint8_t packed[3] = {0};
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 2; j++)
            if ((def[i] >> (1 - j)) & 1) {
                const int bit = i * 2 + j;
                packed[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
            }
    tb_put(&body, packed, 3);
    for (int i = 0; i < 6; i++)
        tb_le32(&body, (uint32_t)(100 + i));
    pq_decoder *d = dec();
    const pq_column_desc c = col(PQ_INT32, -1, 3, 0);
    pq_data_page_info info = v1(10, PQ_ENC_PLAIN, body.len);
    info.def_level_encoding = PQ_ENC_BIT_PACKED;
    pq_page_values pv;
    pqd_error err;
    decode_ok(d, &c, &info, body.p, body.len, NULL, &pv);
    cr_expect_eq(pv.num_non_null, 6);
    for (int i = 0; i < 10; i++)
        cr_expect_eq(pv.def_levels[i], def[i]);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(((const int32_t *)pv.values)[i], 100 + i);
    info.def_level_encoding = PQ_ENC_PLAIN;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err),
                 PQD_E_UNSUPPORTED);
    tb_free(&body);
    pq_decoder_free(d);
}

/* ---- DELTA_BINARY_PACKED ---- */

static void delta_roundtrip(bool is32, const int64_t *v, size_t n, unsigned block, unsigned mb)
{
    tbuf b = {0};
    tb_delta(&b, v, n, is32, block, mb);
    pqd_error err;
    size_t used = 0;
    if (is32) {
        int32_t *o = malloc((n ? n : 1) * 4);
        cr_assert_eq(pq_delta_decode_i32(b.p, b.len, n, o, &used, &err), PQD_OK,
                     "n=%zu block=%u mb=%u: %s", n, block, mb, err.msg);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(o[i], (int32_t)v[i], "i=%zu", i);
        free(o);
    } else {
        int64_t *o = malloc((n ? n : 1) * 8);
        cr_assert_eq(pq_delta_decode_i64(b.p, b.len, n, o, &used, &err), PQD_OK,
                     "n=%zu block=%u mb=%u: %s", n, block, mb, err.msg);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(o[i], v[i], "i=%zu", i);
        free(o);
    }
    cr_expect_eq(used, b.len, "consumed %zu of %zu", used, b.len);
    tb_free(&b);
}

Test(decode, delta_binary_packed_roundtrip)
{
    const size_t ns[] = {0, 1, 2, 31, 32, 33, 127, 128, 129, 1000, 5000};
    const unsigned shapes[][2] = {{128, 4}, {128, 1}, {256, 8}, {1024, 32}, {128, 2}};
    for (int is32 = 0; is32 <= 1; is32++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
                for (int kind = 0; kind < 4; kind++) {
                    const size_t n = ns[ni];
                    int64_t *v = malloc((n ? n : 1) * 8);
                    for (size_t i = 0; i < n; i++) {
                        int64_t x;
                        switch (kind) {
                        case 0: x = (int64_t)(rnd64() % 1000) - 500; break;
                        case 1: x = (int64_t)rnd64(); break; /* full range: wraps */
                        case 2: x = (int64_t)i * 3 + 1000; break;
                        default: x = (i % 2) ? INT64_MAX : INT64_MIN; break;
                        }
                        v[i] = is32 ? (int32_t)x : x;
                    }
                    delta_roundtrip(is32, v, n, shapes[si][0], shapes[si][1]);
                    free(v);
                }
}

Test(decode, delta_spec_example_and_wrap)
{
    /* Encodings.md example 2 shape with a real block size: 7,5,3,1,2,3,4,5. */
    const int64_t v[] = {7, 5, 3, 1, 2, 3, 4, 5};
    delta_roundtrip(false, v, 8, 128, 4);
    /* INT32 wrap: INT32_MAX then INT32_MIN is a delta of +1 mod 2^32. */
    const int64_t w[] = {INT32_MAX, INT32_MIN, INT32_MAX, 0, -1, INT32_MIN};
    delta_roundtrip(true, w, 6, 128, 4);
}

static pqd_status delta32(const tbuf *b, size_t n, pqd_error *err)
{
    int32_t out[4096];
    size_t used;
    return pq_delta_decode_i32(b->p, b->len, n, out, &used, err);
}

Test(decode, delta_malformed_headers)
{
    pqd_error err;
    /* header: block, miniblocks, total, first */
    struct {
        uint64_t block, mb, total, first;
        pqd_status want;
    } cases[] = {
        {0, 1, 1, 0, PQD_E_CORRUPT},            /* block size 0 */
        {100, 1, 1, 0, PQD_E_CORRUPT},          /* not a multiple of 128 */
        {1u << 21, 1, 1, 0, PQD_E_CORRUPT},     /* over PQ_DELTA_MAX_BLOCK_SIZE */
        {128, 0, 1, 0, PQD_E_CORRUPT},          /* no miniblocks */
        {128, 3, 1, 0, PQD_E_CORRUPT},          /* 128 % 3 */
        {128, 8, 1, 0, PQD_E_CORRUPT},          /* 16 values per miniblock */
        {128, 4, 1ull << 40, 0, PQD_E_MISMATCH}, /* absurd count */
        {128, 4, 5, 0, PQD_E_MISMATCH},         /* count != expected */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tbuf b = {0};
        tb_uleb(&b, cases[i].block);
        tb_uleb(&b, cases[i].mb);
        tb_uleb(&b, cases[i].total);
        tb_uleb(&b, cases[i].first);
        cr_expect_eq(delta32(&b, 1, &err), cases[i].want, "case %zu: %s", i, err.msg);
        tb_free(&b);
    }
    /* Truncated header fields. */
    const uint8_t t1[] = {0x80};
    tbuf b = {.p = (uint8_t *)t1, .len = 1};
    cr_expect_eq(delta32(&b, 1, &err), PQD_E_CORRUPT);
    /* Block size as a 6-byte varint. */
    const uint8_t t2[] = {0x80, 0x81, 0x80, 0x80, 0x80, 0x00, 4, 1, 0};
    b = (tbuf){.p = (uint8_t *)t2, .len = sizeof t2};
    cr_expect_eq(delta32(&b, 1, &err), PQD_E_CORRUPT);
}

Test(decode, delta_malformed_blocks)
{
    pqd_error err;
    /* 100 values, block 128 with 4 miniblocks of 32. */
    tbuf b = {0};
    tb_uleb(&b, 128);
    tb_uleb(&b, 4);
    tb_uleb(&b, 100);
    tb_uleb(&b, 0);
    const size_t hdr = b.len;
    tb_uleb(&b, 0);                 /* min delta */
    const uint8_t widths[4] = {33, 0, 0, 0};
    tb_put(&b, widths, 4);
    cr_expect_eq(delta32(&b, 100, &err), PQD_E_RANGE); /* width 33 on INT32 */
    int64_t o64[128];
    size_t used;
    b.p[hdr + 1] = 65;
    cr_expect_eq(pq_delta_decode_i64(b.p, b.len, 100, o64, &used, &err), PQD_E_RANGE);
    /* Width 5 but no miniblock data. */
    b.p[hdr + 1] = 5;
    cr_expect_eq(delta32(&b, 100, &err), PQD_E_TRUNCATED);
    /* Block header missing. */
    b.len = hdr;
    cr_expect_eq(delta32(&b, 100, &err), PQD_E_TRUNCATED);
    /* Miniblock widths cut short. */
    b.len = hdr + 3;
    cr_expect_eq(delta32(&b, 100, &err), PQD_E_TRUNCATED);
    tb_free(&b);
    /* Unused miniblocks of the last block may carry any width byte. */
    tbuf ok = {0};
    tb_uleb(&ok, 128);
    tb_uleb(&ok, 4);
    tb_uleb(&ok, 10);
    tb_uleb(&ok, t_zigzag(-3));
    tb_uleb(&ok, t_zigzag(2));
    const uint8_t w2[4] = {0, 0xff, 0xee, 0x99};
    tb_put(&ok, w2, 4);
    int32_t out[10];
    cr_assert_eq(pq_delta_decode_i32(ok.p, ok.len, 10, out, &used, &err), PQD_OK, "%s", err.msg);
    for (int i = 0; i < 10; i++)
        cr_expect_eq(out[i], -3 + 2 * i);
    cr_expect_eq(used, ok.len);
    tb_free(&ok);
}

Test(decode, delta_binary_packed_pages)
{
    pq_decoder *d = dec();
    const size_t n = 3000;
    int64_t *v = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        v[i] = (int64_t)(rnd64() % 100000) - 50000 + (int64_t)i * 1000;
    for (int is32 = 0; is32 <= 1; is32++) {
        tbuf body = {0};
        tb_delta(&body, v, n, is32, 128, 4);
        const pq_column_desc c = col(is32 ? PQ_INT32 : PQ_INT64, -1, 0, 0);
        const pq_data_page_info info = v1((int32_t)n, PQ_ENC_DELTA_BINARY_PACKED, body.len);
        pq_page_values pv;
        pqd_error err;
        decode_ok(d, &c, &info, body.p, body.len, NULL, &pv);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(is32 ? ((const int32_t *)pv.values)[i] : ((const int64_t *)pv.values)[i],
                         is32 ? (int32_t)v[i] : v[i]);
        const pq_column_desc cf = col(PQ_DOUBLE, -1, 0, 0);
        cr_expect_eq(pq_decode_data_page(d, &cf, &info, body.p, body.len, NULL, &pv, &err),
                     PQD_E_UNSUPPORTED);
        tb_free(&body);
    }
    free(v);
    pq_decoder_free(d);
}

/* ---- byte array deltas ---- */

static void put_dlba(tbuf *b, const char *const *s, size_t n)
{
    int64_t *lens = malloc((n ? n : 1) * 8);
    for (size_t i = 0; i < n; i++)
        lens[i] = (int64_t)strlen(s[i]);
    tb_delta(b, lens, n, true, 128, 4);
    for (size_t i = 0; i < n; i++)
        tb_put(b, s[i], strlen(s[i]));
    free(lens);
}

Test(decode, delta_length_byte_array)
{
    pq_decoder *d = dec();
    tbuf body = {0};
    put_dlba(&body, words, N_WORDS);
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 0, 0);
    pq_data_page_info info = v1(N_WORDS, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, body.len);
    pq_page_values pv;
    pqd_error err;
    decode_ok(d, &c, &info, body.p, body.len, NULL, &pv);
    expect_strings(&pv, words, N_WORDS);
    /* Data cut short. */
    info.uncompressed_page_size = (int32_t)body.len - 1;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len - 1, NULL, &pv, &err),
                 PQD_E_TRUNCATED);
    tb_free(&body);
    /* A negative length. */
    const int64_t lens[] = {1, -2, 3};
    tbuf neg = {0};
    tb_delta(&neg, lens, 3, true, 128, 4);
    tb_put(&neg, "abcdef", 6);
    info = v1(3, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, neg.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, neg.p, neg.len, NULL, &pv, &err), PQD_E_CORRUPT);
    tb_free(&neg);
    pq_decoder_free(d);
}

static void put_dba(tbuf *b, const char *const *s, size_t n)
{
    int64_t *pre = malloc((n ? n : 1) * 8), *suf = malloc((n ? n : 1) * 8);
    const char *prev = "";
    for (size_t i = 0; i < n; i++) {
        size_t p = 0;
        while (prev[p] && s[i][p] == prev[p])
            p++;
        pre[i] = (int64_t)p;
        suf[i] = (int64_t)(strlen(s[i]) - p);
        prev = s[i];
    }
    tb_delta(b, pre, n, true, 128, 4);
    tb_delta(b, suf, n, true, 128, 4);
    for (size_t i = 0; i < n; i++)
        tb_put(b, s[i] + pre[i], (size_t)suf[i]);
    free(pre);
    free(suf);
}

Test(decode, delta_byte_array)
{
    pq_decoder *d = dec();
    tbuf body = {0};
    put_dba(&body, words, N_WORDS);
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 0, 0);
    const pq_data_page_info info = v1(N_WORDS, PQ_ENC_DELTA_BYTE_ARRAY, body.len);
    pq_page_values pv;
    pqd_error err;
    decode_ok(d, &c, &info, body.p, body.len, NULL, &pv);
    expect_strings(&pv, words, N_WORDS);
    tb_free(&body);
    /* FIXED_LEN_BYTE_ARRAY(4). */
    const char *const fixed[] = {"abcd", "abce", "abce", "zbce", "zzzz"};
    tbuf fb = {0};
    put_dba(&fb, fixed, 5);
    const pq_column_desc cf = col(PQ_FIXED_LEN_BYTE_ARRAY, 4, 0, 0);
    const pq_data_page_info finfo = v1(5, PQ_ENC_DELTA_BYTE_ARRAY, fb.len);
    decode_ok(d, &cf, &finfo, fb.p, fb.len, NULL, &pv);
    cr_expect_eq(memcmp(pv.values, "abcdabceabcezbcezzzz", 20), 0);
    /* Same bytes as FIXED_LEN_BYTE_ARRAY(3): lengths disagree. */
    const pq_column_desc cf3 = col(PQ_FIXED_LEN_BYTE_ARRAY, 3, 0, 0);
    cr_expect_eq(pq_decode_data_page(d, &cf3, &finfo, fb.p, fb.len, NULL, &pv, &err), PQD_E_CORRUPT);
    tb_free(&fb);
    pq_decoder_free(d);
}

static tbuf dba_raw(const int64_t *pre, const int64_t *suf, size_t n, const char *data)
{
    tbuf b = {0};
    tb_delta(&b, pre, n, true, 128, 4);
    tb_delta(&b, suf, n, true, 128, 4);
    tb_put(&b, data, strlen(data));
    return b;
}

Test(decode, delta_byte_array_malformed)
{
    pq_decoder *d = dec();
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 0, 0);
    pq_page_values pv;
    pqd_error err;
    /* First prefix must be 0. */
    const int64_t p1[] = {1, 0}, s1[] = {2, 2};
    tbuf b = dba_raw(p1, s1, 2, "abcd");
    pq_data_page_info info = v1(2, PQ_ENC_DELTA_BYTE_ARRAY, b.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, b.p, b.len, NULL, &pv, &err), PQD_E_CORRUPT);
    tb_free(&b);
    /* Prefix longer than the previous value. */
    const int64_t p2[] = {0, 3}, s2[] = {2, 1};
    b = dba_raw(p2, s2, 2, "abc");
    info = v1(2, PQ_ENC_DELTA_BYTE_ARRAY, b.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, b.p, b.len, NULL, &pv, &err), PQD_E_CORRUPT);
    tb_free(&b);
    /* Suffixes past the data. */
    const int64_t p3[] = {0, 0}, s3[] = {2, 9};
    b = dba_raw(p3, s3, 2, "abc");
    info = v1(2, PQ_ENC_DELTA_BYTE_ARRAY, b.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, b.p, b.len, NULL, &pv, &err), PQD_E_TRUNCATED);
    tb_free(&b);
    /* Suffix count disagrees with prefix count. */
    tbuf m = {0};
    tb_delta(&m, p3, 2, true, 128, 4);
    tb_delta(&m, s3, 1, true, 128, 4);
    info = v1(2, PQ_ENC_DELTA_BYTE_ARRAY, m.len);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, m.p, m.len, NULL, &pv, &err), PQD_E_MISMATCH);
    tb_free(&m);
    pq_decoder_free(d);
}

Test(decode, delta_byte_array_prefix_bomb)
{
    /* A 5000-byte first value, then 100000 values reusing all of it with an
     * empty suffix: 500 MB from a tiny page. Refused under a 64 MiB limit. */
    const size_t n = 100000;
    int64_t *pre = calloc(n, 8), *suf = calloc(n, 8);
    suf[0] = 5000;
    for (size_t i = 1; i < n; i++)
        pre[i] = 5000;
    char *data = malloc(5001);
    memset(data, 'q', 5000);
    data[5000] = 0;
    tbuf b = dba_raw(pre, suf, n, data);
    cr_expect_lt(b.len, 20000);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.max_value_bytes = 64u << 20;
    pq_decoder *d = pq_decoder_new(&lim);
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 0, 0);
    const pq_data_page_info info = v1((int32_t)n, PQ_ENC_DELTA_BYTE_ARRAY, b.len);
    pq_page_values pv;
    pqd_error err;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, b.p, b.len, NULL, &pv, &err), PQD_E_LIMIT);
    pq_decoder_free(d);
    tb_free(&b);
    free(pre);
    free(suf);
    free(data);
}

/* ---- BYTE_STREAM_SPLIT ---- */

Test(decode, byte_stream_split_every_type)
{
    const pq_physical_type types[] = {PQ_FLOAT, PQ_DOUBLE, PQ_INT32, PQ_INT64,
                                      PQ_FIXED_LEN_BYTE_ARRAY};
    pq_decoder *d = dec();
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const pq_column_desc c = col(types[ti], 3, 0, 0);
        const size_t w = (size_t)pq_value_width(types[ti], 3), n = 501;
        uint8_t *plain = malloc(n * w), *split = malloc(n * w);
        for (size_t i = 0; i < n * w; i++)
            plain[i] = (uint8_t)rnd64();
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < w; k++)
                split[k * n + i] = plain[i * w + k];
        pq_data_page_info info = v1((int32_t)n, PQ_ENC_BYTE_STREAM_SPLIT, n * w);
        pq_page_values pv;
        pqd_error err;
        decode_ok(d, &c, &info, split, n * w, NULL, &pv);
        cr_assert_eq(memcmp(pv.values, plain, n * w), 0, "type %d", types[ti]);
        /* Streams must fill the page exactly. */
        info.uncompressed_page_size = (int32_t)(n * w - 1);
        cr_expect_eq(pq_decode_data_page(d, &c, &info, split, n * w - 1, NULL, &pv, &err),
                     PQD_E_TRUNCATED);
        info.num_values = (int32_t)n - 1;
        info.uncompressed_page_size = (int32_t)(n * w);
        cr_expect_eq(pq_decode_data_page(d, &c, &info, split, n * w, NULL, &pv, &err),
                     PQD_E_MISMATCH);
        free(plain);
        free(split);
    }
    const pq_column_desc cb = col(PQ_BYTE_ARRAY, -1, 0, 0);
    const uint8_t x[4] = {0};
    const pq_data_page_info info = v1(1, PQ_ENC_BYTE_STREAM_SPLIT, 4);
    pq_page_values pv;
    cr_expect_eq(pq_decode_data_page(d, &cb, &info, x, 4, NULL, &pv, NULL), PQD_E_UNSUPPORTED);
    pq_decoder_free(d);
}

/* ---- V2 pages, compression, nesting ---- */

static tbuf zstd_of(const uint8_t *p, size_t n)
{
    tbuf b = {0};
    tb_reserve(&b, ZSTD_compressBound(n));
    b.len = ZSTD_compress(b.p, b.cap, p, n, 1);
    cr_assert(!ZSTD_isError(b.len));
    return b;
}

Test(decode, v2_compressed_values_and_nesting)
{
    /* list<int32> with max_rep 1, max_def 3: rows [1,2] null [] [null,5]. */
    const uint16_t rep[] = {0, 1, 0, 0, 0, 1};
    const uint16_t def[] = {3, 3, 0, 1, 2, 3};
    tbuf levels = {0};
    const size_t rl = put_levels_raw(&levels, rep, 6, 1);
    const size_t dl = put_levels_raw(&levels, def, 6, 3);
    tbuf vals = {0};
    tb_le32(&vals, 1);
    tb_le32(&vals, 2);
    tb_le32(&vals, 5);
    tbuf z = zstd_of(vals.p, vals.len);
    tbuf body = {0};
    tb_put(&body, levels.p, levels.len);
    tb_put(&body, z.p, z.len);
    pq_column_desc c = col(PQ_INT32, -1, 3, 1);
    c.codec = PQ_CODEC_ZSTD;
    pq_data_page_info info = {.v2 = true, .num_values = 6, .num_nulls = 3, .num_rows = 4,
                              .encoding = PQ_ENC_PLAIN, .def_levels_byte_length = (int32_t)dl,
                              .rep_levels_byte_length = (int32_t)rl, .is_compressed = true,
                              .uncompressed_page_size = (int32_t)(levels.len + vals.len)};
    pq_decoder *d = dec();
    pq_page_values pv;
    pqd_error err;
    decode_ok(d, &c, &info, body.p, body.len, NULL, &pv);
    cr_expect_eq(pv.num_values, 6);
    cr_expect_eq(pv.num_non_null, 3);
    cr_expect_eq(pv.num_rows, 4);
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(pv.rep_levels[i], rep[i]);
        cr_expect_eq(pv.def_levels[i], def[i]);
    }
    cr_expect_eq(((const int32_t *)pv.values)[2], 5);
    /* num_rows that disagrees with the repetition levels. */
    info.num_rows = 5;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err),
                 PQD_E_MISMATCH);
    info.num_rows = 4;
    /* Level lengths past the page. */
    info.def_levels_byte_length = (int32_t)body.len;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err),
                 PQD_E_TRUNCATED);
    info.def_levels_byte_length = -1;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err),
                 PQD_E_CORRUPT);
    info.def_levels_byte_length = (int32_t)dl;
    /* is_compressed false: the same bytes are taken as stored. */
    info.is_compressed = false;
    cr_expect_neq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, &err), PQD_OK);
    tbuf plain = {0};
    tb_put(&plain, levels.p, levels.len);
    tb_put(&plain, vals.p, vals.len);
    decode_ok(d, &c, &info, plain.p, plain.len, NULL, &pv);
    cr_expect_eq(((const int32_t *)pv.values)[0], 1);
    /* A V2 page must start a row. */
    const uint16_t rep_bad[] = {1, 1, 0, 0, 0, 1};
    tbuf lb = {0};
    const size_t rl2 = put_levels_raw(&lb, rep_bad, 6, 1);
    put_levels_raw(&lb, def, 6, 3);
    tb_put(&lb, vals.p, vals.len);
    info.rep_levels_byte_length = (int32_t)rl2;
    info.num_rows = 3;
    info.uncompressed_page_size = (int32_t)lb.len;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, lb.p, lb.len, NULL, &pv, &err), PQD_E_CORRUPT);
    tb_free(&lb);
    tb_free(&plain);
    tb_free(&levels);
    tb_free(&vals);
    tb_free(&z);
    tb_free(&body);
    pq_decoder_free(d);
}

Test(decode, v1_compressed_page)
{
    const uint16_t def[] = {1, 0, 1, 1};
    tbuf page = {0};
    put_levels_v1(&page, def, 4, 1);
    const char *const s[] = {"one", "three", "four"};
    put_plain_strings(&page, s, 3);
    tbuf z = zstd_of(page.p, page.len);
    pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 1, 0);
    c.codec = PQ_CODEC_ZSTD;
    pq_data_page_info info = v1(4, PQ_ENC_PLAIN, page.len);
    pq_decoder *d = dec();
    pq_page_values pv;
    pqd_error err;
    decode_ok(d, &c, &info, z.p, z.len, NULL, &pv);
    expect_strings(&pv, s, 3);
    info.uncompressed_page_size++;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, z.p, z.len, NULL, &pv, &err), PQD_E_MISMATCH);
    c.codec = PQ_CODEC_LZO;
    info.uncompressed_page_size--;
    cr_expect_eq(pq_decode_data_page(d, &c, &info, z.p, z.len, NULL, &pv, &err),
                 PQD_E_UNSUPPORTED);
    tb_free(&page);
    tb_free(&z);
    pq_decoder_free(d);
}

Test(decode, limits_and_bad_arguments)
{
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.max_values = 1000;
    lim.max_page_bytes = 1 << 16;
    pq_decoder *d = pq_decoder_new(&lim);
    const pq_column_desc c = col(PQ_INT32, -1, 1, 0);
    uint8_t buf[64] = {0};
    pq_page_values pv;
    pqd_error err;
    pq_data_page_info info = v1(1001, PQ_ENC_PLAIN, 64);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, buf, 64, NULL, &pv, &err), PQD_E_LIMIT);
    info = v1(-1, PQ_ENC_PLAIN, 64);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, buf, 64, NULL, &pv, &err), PQD_E_CORRUPT);
    info = v1(10, PQ_ENC_PLAIN, (1 << 16) + 1);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, buf, 64, NULL, &pv, &err), PQD_E_LIMIT);
    /* Stored and uncompressed sizes of an UNCOMPRESSED page differ. */
    info = v1(10, PQ_ENC_PLAIN, 60);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, buf, 64, NULL, &pv, &err), PQD_E_MISMATCH);
    /* Unknown and unsupported encodings. */
    const int bad_enc[] = {10, 99, -1, PQ_ENC_BIT_PACKED};
    for (size_t i = 0; i < 4; i++) {
        info = v1(0, bad_enc[i], 4);
        cr_expect_eq(pq_decode_data_page(d, &c, &info, buf, 4, NULL, &pv, &err), PQD_E_UNSUPPORTED,
                     "encoding %d", bad_enc[i]);
    }
    /* Bad column descriptions. */
    pq_column_desc bad = col(PQ_FIXED_LEN_BYTE_ARRAY, 0, 0, 0);
    info = v1(0, PQ_ENC_PLAIN, 0);
    cr_expect_eq(pq_decode_data_page(d, &bad, &info, buf, 0, NULL, &pv, &err), PQD_E_INVALID);
    bad = col((pq_physical_type)9, -1, 0, 0);
    cr_expect_eq(pq_decode_data_page(d, &bad, &info, buf, 0, NULL, &pv, &err), PQD_E_INVALID);
    bad = col(PQ_INT32, -1, 40000, 0);
    cr_expect_eq(pq_decode_data_page(d, &bad, &info, buf, 0, NULL, &pv, &err), PQD_E_LIMIT);
    cr_expect_eq(pq_decode_data_page(d, NULL, &info, buf, 0, NULL, &pv, &err), PQD_E_INVALID);
    /* Definition level above max_def (w=1 holds only 0/1, so use max_def 2
     * with a level 3). */
    const pq_column_desc c2 = col(PQ_INT32, -1, 2, 0);
    const uint16_t def[8] = {3, 0, 0, 0, 0, 0, 0, 0};
    tbuf page = {0};
    put_levels_v1(&page, def, 8, 2);
    info = v1(8, PQ_ENC_PLAIN, page.len);
    cr_expect_eq(pq_decode_data_page(d, &c2, &info, page.p, page.len, NULL, &pv, &err),
                 PQD_E_RANGE);
    tb_free(&page);
    /* Truncated level section. */
    const uint8_t cut[] = {10, 0, 0, 0, 1};
    info = v1(8, PQ_ENC_PLAIN, sizeof cut);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, cut, sizeof cut, NULL, &pv, &err),
                 PQD_E_TRUNCATED);
    /* PLAIN values missing. */
    const uint8_t few[] = {2, 0, 0, 0, 0x06, 0x01, 1, 0};
    info = v1(3, PQ_ENC_PLAIN, sizeof few);
    cr_expect_eq(pq_decode_data_page(d, &c, &info, few, sizeof few, NULL, &pv, &err),
                 PQD_E_TRUNCATED);
    pq_decoder_free(d);
}

Test(decode, all_null_and_empty_pages)
{
    pq_decoder *d = dec();
    const pq_column_desc c = col(PQ_BYTE_ARRAY, -1, 1, 0);
    const uint16_t def[100] = {0};
    tbuf page = {0};
    put_levels_v1(&page, def, 100, 1);
    pq_page_values pv;
    pqd_error err;
    const int encs[] = {PQ_ENC_PLAIN, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_ENC_RLE_DICTIONARY};
    pq_dictionary empty_dict = {.type = PQ_BYTE_ARRAY};
    for (size_t i = 0; i < 3; i++) {
        tbuf p = {0};
        tb_put(&p, page.p, page.len);
        if (encs[i] == PQ_ENC_DELTA_LENGTH_BYTE_ARRAY)
            tb_delta(&p, NULL, 0, true, 128, 4);
        const pq_data_page_info info = v1(100, encs[i], p.len);
        cr_assert_eq(pq_decode_data_page(d, &c, &info, p.p, p.len, &empty_dict, &pv, &err), PQD_OK,
                     "enc %d: %s", encs[i], err.msg);
        cr_expect_eq(pv.num_non_null, 0);
        cr_expect_eq(pv.offsets[0], 0);
        tb_free(&p);
    }
    /* Zero-value page. */
    const pq_data_page_info info = v1(0, PQ_ENC_PLAIN, 0);
    cr_assert_eq(pq_decode_data_page(d, &c, &info, NULL, 0, NULL, &pv, &err), PQD_E_TRUNCATED);
    const pq_column_desc creq = col(PQ_INT64, -1, 0, 0);
    decode_ok(d, &creq, &info, NULL, 0, NULL, &pv);
    cr_expect_eq(pv.num_values, 0);
    cr_expect_not_null(pv.values);
    tb_free(&page);
    pq_decoder_free(d);
}

/* One decoder over pages of growing and shrinking sizes keeps working. */
Test(decode, decoder_reuse)
{
    pq_decoder *d = dec();
    const pq_column_desc c = col(PQ_INT64, -1, 0, 0);
    const size_t sizes[] = {10, 100000, 3, 50000, 1, 200000, 7};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const size_t n = sizes[k];
        int64_t *v = malloc(n * 8);
        for (size_t i = 0; i < n; i++)
            v[i] = (int64_t)(i * k) - 77;
        tbuf body = {0};
        tb_delta(&body, v, n, false, 256, 8);
        const pq_data_page_info info = v1((int32_t)n, PQ_ENC_DELTA_BINARY_PACKED, body.len);
        pq_page_values pv;
        cr_assert_eq(pq_decode_data_page(d, &c, &info, body.p, body.len, NULL, &pv, NULL), PQD_OK);
        cr_assert_eq(memcmp(pv.values, v, n * 8), 0);
        free(v);
        tb_free(&body);
    }
    pq_decoder_free(d);
}

Test(decode, info_from_header)
{
    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DATA_V2;
    h.uncompressed_page_size = 100;
    h.has_data_page_header_v2 = true;
    h.v2.num_values = 10;
    h.v2.num_nulls = 2;
    h.v2.num_rows = 9;
    h.v2.encoding = PQ_ENC_RLE_DICTIONARY;
    h.v2.definition_levels_byte_length = 3;
    h.v2.repetition_levels_byte_length = 4;
    h.v2.is_compressed = false;
    pq_data_page_info i;
    cr_assert_eq(pq_data_page_info_from_header(&h, &i, NULL), PQD_OK);
    cr_expect(i.v2);
    cr_expect_eq(i.num_rows, 9);
    cr_expect_eq(i.rep_levels_byte_length, 4);
    cr_expect_not(i.is_compressed);
    pq_dict_page_info di;
    pqd_error err;
    cr_expect_eq(pq_dict_page_info_from_header(&h, &di, &err), PQD_E_INVALID);
    h.type = PQ_PAGE_DICTIONARY;
    h.has_dictionary_page_header = true;
    h.dict.num_values = 5;
    h.dict.encoding = PQ_ENC_PLAIN;
    cr_assert_eq(pq_dict_page_info_from_header(&h, &di, NULL), PQD_OK);
    cr_expect_eq(di.num_values, 5);
    cr_expect_eq(pq_data_page_info_from_header(&h, &i, &err), PQD_E_INVALID);
}
