/* RLE/bit-packed hybrid decoding, bit unpacking, deprecated BIT_PACKED. */
#include "pq_test_encode.h"
#include "rle_hybrid.h"

#include <criterion/criterion.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd64(void)
{
    return t_xorshift64(&rng_state);
}

static uint64_t mask_of(unsigned w)
{
    return w >= 64 ? ~0ull : ((1ull << w) - 1);
}

Test(rle_hybrid, bit_width)
{
    cr_expect_eq(pq_bit_width(0), 0);
    cr_expect_eq(pq_bit_width(1), 1);
    cr_expect_eq(pq_bit_width(2), 2);
    cr_expect_eq(pq_bit_width(3), 2);
    cr_expect_eq(pq_bit_width(4), 3);
    cr_expect_eq(pq_bit_width(255), 8);
    cr_expect_eq(pq_bit_width(256), 9);
    cr_expect_eq(pq_bit_width(UINT32_MAX), 32);
    cr_expect_eq(pq_bit_width(UINT64_MAX), 64);
}

Test(rle_hybrid, uleb)
{
    const uint8_t ok[] = {0xe5, 0x8e, 0x26};
    size_t pos = 0;
    uint32_t v;
    cr_assert(pq_read_uleb32(ok, sizeof ok, &pos, &v));
    cr_expect_eq(v, 624485);
    cr_expect_eq(pos, 3);
    const uint8_t max32[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    pos = 0;
    cr_assert(pq_read_uleb32(max32, sizeof max32, &pos, &v));
    cr_expect_eq(v, UINT32_MAX);
    const uint8_t over32[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    pos = 0;
    cr_expect_not(pq_read_uleb32(over32, sizeof over32, &pos, &v));
    const uint8_t six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    pos = 0;
    cr_expect_not(pq_read_uleb32(six, sizeof six, &pos, &v));
    const uint8_t trunc[] = {0x80, 0x80};
    pos = 0;
    cr_expect_not(pq_read_uleb32(trunc, sizeof trunc, &pos, &v));
    cr_expect_eq(pos, 0);
    const uint8_t max64[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    uint64_t v64;
    pos = 0;
    cr_assert(pq_read_uleb64(max64, sizeof max64, &pos, &v64));
    cr_expect_eq(v64, UINT64_MAX);
    const uint8_t over64[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    pos = 0;
    cr_expect_not(pq_read_uleb64(over64, sizeof over64, &pos, &v64));
    /* Non-minimal forms are accepted. */
    const uint8_t padded[] = {0x81, 0x80, 0x00};
    pos = 0;
    cr_assert(pq_read_uleb32(padded, sizeof padded, &pos, &v));
    cr_expect_eq(v, 1);
}

/* Encodings.md: 0..7 with bit width 3 packs to 10001000 11000110 11111010. */
Test(rle_hybrid, spec_bitpacked_example)
{
    const uint8_t buf[] = {0x03, 0x88, 0xc6, 0xfa}; /* header: 1 group, bit-packed */
    pq_rle_decoder d;
    cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 3, NULL), PQD_OK);
    uint32_t out[8];
    cr_assert_eq(pq_rle_get_u32(&d, out, 8, NULL), PQD_OK);
    for (uint32_t i = 0; i < 8; i++)
        cr_expect_eq(out[i], i);
    cr_expect_eq(pq_rle_consumed(&d), sizeof buf);
    pqd_error err;
    cr_expect_eq(pq_rle_get_u32(&d, out, 1, &err), PQD_E_TRUNCATED);
}

Test(rle_hybrid, spec_msb_bitpacked_example)
{
    const uint8_t buf[] = {0x05, 0x39, 0x77};
    uint16_t out[8];
    cr_assert_eq(pq_bitpacked_msb_u16(buf, sizeof buf, 3, out, 8, NULL), PQD_OK);
    for (uint16_t i = 0; i < 8; i++)
        cr_expect_eq(out[i], i);
    pqd_error err;
    cr_expect_eq(pq_bitpacked_msb_u16(buf, 2, 3, out, 8, &err), PQD_E_TRUNCATED);
    cr_expect_eq(pq_bitpacked_msb_u16(buf, 3, 17, out, 1, &err), PQD_E_RANGE);
}

Test(rle_hybrid, rle_runs_and_chunked_reads)
{
    /* RLE 5 x 10 (w=3), bit-packed 0..7, RLE 0 x 3. */
    const uint8_t buf[] = {20, 5, 0x03, 0x88, 0xc6, 0xfa, 6, 0};
    uint8_t expect[21];
    for (int i = 0; i < 10; i++)
        expect[i] = 5;
    for (int i = 0; i < 8; i++)
        expect[10 + i] = (uint8_t)i;
    memset(expect + 18, 0, 3);
    for (size_t chunk = 1; chunk <= 21; chunk++) {
        pq_rle_decoder d;
        cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 3, NULL), PQD_OK);
        uint8_t got8[21];
        uint16_t got16[21];
        size_t done = 0;
        while (done < 21) {
            const size_t k = 21 - done < chunk ? 21 - done : chunk;
            cr_assert_eq(pq_rle_get_u8(&d, got8 + done, k, NULL), PQD_OK);
            done += k;
        }
        cr_assert_arr_eq(got8, expect, 21);
        cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 3, NULL), PQD_OK);
        cr_assert_eq(pq_rle_get_u16(&d, got16, 21, NULL), PQD_OK);
        for (int i = 0; i < 21; i++)
            cr_expect_eq(got16[i], expect[i]);
    }
}

Test(rle_hybrid, zero_width)
{
    const uint8_t buf[] = {0x10, 0x03}; /* RLE 8 x (no value bytes), then 1 group of w=0 */
    pq_rle_decoder d;
    cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 0, NULL), PQD_OK);
    uint32_t out[16];
    memset(out, 0xff, sizeof out);
    cr_assert_eq(pq_rle_get_u32(&d, out, 16, NULL), PQD_OK);
    for (int i = 0; i < 16; i++)
        cr_expect_eq(out[i], 0);
}

Test(rle_hybrid, zero_length_runs_are_skipped)
{
    /* RLE 0 x (value 0), bit-packed 0 groups, RLE 2 x 7 */
    const uint8_t buf[] = {0x00, 0x00, 0x01, 0x04, 0x07};
    pq_rle_decoder d;
    cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 3, NULL), PQD_OK);
    uint32_t out[2];
    cr_assert_eq(pq_rle_get_u32(&d, out, 2, NULL), PQD_OK);
    cr_expect_eq(out[0], 7);
    cr_expect_eq(out[1], 7);
}

/* Every width 0..32, random values, random run structure, odd chunking. */
Test(rle_hybrid, roundtrip_all_widths)
{
    for (unsigned w = 0; w <= 32; w++) {
        for (int trial = 0; trial < 6; trial++) {
            const size_t n = 1 + (size_t)(rnd64() % 3000);
            uint64_t *v = malloc(n * sizeof *v);
            for (size_t i = 0; i < n; i++) {
                if (trial % 2 && i > 0 && rnd64() % 4)
                    v[i] = v[i - 1]; /* runs */
                else
                    v[i] = rnd64() & mask_of(w);
            }
            tbuf b = {0};
            tb_hybrid(&b, v, n, w, trial % 3 == 0 ? 8 : 3);
            pq_rle_decoder d;
            cr_assert_eq(pq_rle_init(&d, b.p, b.len, w, NULL), PQD_OK);
            uint32_t *out = malloc(n * sizeof *out);
            size_t done = 0;
            while (done < n) {
                size_t k = 1 + (size_t)(rnd64() % 700);
                if (k > n - done)
                    k = n - done;
                cr_assert_eq(pq_rle_get_u32(&d, out + done, k, NULL), PQD_OK, "w=%u", w);
                done += k;
            }
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(out[i], (uint32_t)v[i], "w=%u i=%zu", w, i);
            if (w <= 16) {
                uint16_t *o16 = malloc(n * sizeof *o16);
                cr_assert_eq(pq_rle_init(&d, b.p, b.len, w, NULL), PQD_OK);
                cr_assert_eq(pq_rle_get_u16(&d, o16, n, NULL), PQD_OK);
                for (size_t i = 0; i < n; i++)
                    cr_assert_eq(o16[i], (uint16_t)v[i]);
                free(o16);
            }
            tb_free(&b);
            free(v);
            free(out);
        }
    }
}

Test(rle_hybrid, unpack_all_widths)
{
    for (unsigned w = 0; w <= 64; w++) {
        for (size_t n = 0; n < 90; n += 1 + n / 4) {
            uint64_t v[100];
            for (size_t i = 0; i < n; i++)
                v[i] = rnd64() & mask_of(w);
            tbuf b = {0};
            tb_bitpack(&b, v, n, w);
            uint64_t o64[100];
            cr_assert_eq(pq_unpack_u64(b.p, b.len, w, o64, n, NULL), PQD_OK);
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(o64[i], v[i], "w=%u n=%zu i=%zu", w, n, i);
            if (w <= 32) {
                uint32_t o32[100];
                cr_assert_eq(pq_unpack_u32(b.p, b.len, w, o32, n, NULL), PQD_OK);
                for (size_t i = 0; i < n; i++)
                    cr_assert_eq(o32[i], (uint32_t)v[i]);
            }
            if (w <= 8) {
                uint8_t o8[100];
                cr_assert_eq(pq_unpack_u8(b.p, b.len, w, o8, n, NULL), PQD_OK);
                for (size_t i = 0; i < n; i++)
                    cr_assert_eq(o8[i], (uint8_t)v[i]);
            }
            if (n && w) {
                pqd_error err;
                cr_expect_eq(pq_unpack_u64(b.p, b.len - 1, w, o64, n, &err), PQD_E_TRUNCATED);
            }
            tb_free(&b);
        }
    }
    pqd_error err;
    uint32_t o[1];
    uint8_t in[16] = {0};
    cr_expect_eq(pq_unpack_u32(in, sizeof in, 33, o, 1, &err), PQD_E_RANGE);
}

Test(rle_hybrid, bad_bit_widths)
{
    pq_rle_decoder d;
    pqd_error err;
    const uint8_t buf[] = {0x02, 0x01};
    cr_expect_eq(pq_rle_init(&d, buf, sizeof buf, 33, &err), PQD_E_RANGE);
    cr_expect_eq(pq_rle_init(&d, buf, sizeof buf, 255, &err), PQD_E_RANGE);
    cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 9, &err), PQD_OK);
    uint8_t o8[1];
    cr_expect_eq(pq_rle_get_u8(&d, o8, 1, &err), PQD_E_INVALID);
    cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 17, &err), PQD_OK);
    uint16_t o16[1];
    cr_expect_eq(pq_rle_get_u16(&d, o16, 1, &err), PQD_E_INVALID);
}

Test(rle_hybrid, malformed)
{
    pq_rle_decoder d;
    pqd_error err;
    uint32_t out[64];
    /* Empty input. */
    cr_assert_eq(pq_rle_init(&d, NULL, 0, 3, &err), PQD_OK);
    cr_expect_eq(pq_rle_get_u32(&d, out, 1, &err), PQD_E_TRUNCATED);
    cr_expect_eq(pq_rle_get_u32(&d, out, 0, &err), PQD_OK);
    /* Run header cut off. */
    const uint8_t h[] = {0x80};
    cr_assert_eq(pq_rle_init(&d, h, sizeof h, 3, &err), PQD_OK);
    cr_expect_eq(pq_rle_get_u32(&d, out, 1, &err), PQD_E_TRUNCATED);
    /* Run header longer than 5 bytes. */
    const uint8_t h6[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    cr_assert_eq(pq_rle_init(&d, h6, sizeof h6, 3, &err), PQD_OK);
    cr_expect_eq(pq_rle_get_u32(&d, out, 1, &err), PQD_E_CORRUPT);
    /* RLE value bytes missing (w=12 needs 2). */
    const uint8_t rv[] = {0x04, 0x01};
    cr_assert_eq(pq_rle_init(&d, rv, sizeof rv, 12, &err), PQD_OK);
    cr_expect_eq(pq_rle_get_u32(&d, out, 1, &err), PQD_E_TRUNCATED);
    /* RLE value with bits above the width. */
    const uint8_t big[] = {0x04, 0x08};
    cr_assert_eq(pq_rle_init(&d, big, sizeof big, 3, &err), PQD_OK);
    cr_expect_eq(pq_rle_get_u32(&d, out, 1, &err), PQD_E_RANGE);
    cr_expect(strstr(err.msg, "does not fit") != NULL, "%s", err.msg);
    /* More values asked than the runs hold. */
    const uint8_t two[] = {0x04, 0x01};
    cr_assert_eq(pq_rle_init(&d, two, sizeof two, 1, &err), PQD_OK);
    cr_expect_eq(pq_rle_get_u32(&d, out, 3, &err), PQD_E_TRUNCATED);
    /* A huge RLE count is fine: only what is asked for is produced. */
    const uint8_t huge[] = {0xfe, 0xff, 0xff, 0xff, 0x0f, 0x01};
    cr_assert_eq(pq_rle_init(&d, huge, sizeof huge, 1, &err), PQD_OK);
    cr_expect_eq(pq_rle_get_u32(&d, out, 64, &err), PQD_OK);
    cr_expect_eq(out[63], 1);
}

Test(rle_hybrid, bitpacked_run_cut_short)
{
    /* Header claims 4 groups of w=8 (32 values) but only 10 bytes follow:
     * the 10 values present decode, the 11th is an error. */
    uint8_t buf[11] = {0x09};
    for (int i = 0; i < 10; i++)
        buf[1 + i] = (uint8_t)(i * 3);
    pq_rle_decoder d;
    cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 8, NULL), PQD_OK);
    uint32_t out[11];
    cr_assert_eq(pq_rle_get_u32(&d, out, 10, NULL), PQD_OK);
    for (int i = 0; i < 10; i++)
        cr_expect_eq(out[i], (uint32_t)(i * 3));
    pqd_error err;
    cr_expect_eq(pq_rle_get_u32(&d, out, 1, &err), PQD_E_TRUNCATED);
}

Test(rle_hybrid, levels_with_counts)
{
    for (int trial = 0; trial < 50; trial++) {
        const size_t n = 1 + (size_t)(rnd64() % 5000);
        const unsigned max_level = 1 + (unsigned)(rnd64() % 7);
        uint64_t *v = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = (i > 0 && rnd64() % 3) ? v[i - 1] : rnd64() % (max_level + 1);
        tbuf b = {0};
        tb_hybrid(&b, v, n, pq_bit_width(max_level), 4 + (size_t)trial % 9);
        size_t want = 0;
        uint16_t want_max = 0;
        for (size_t i = 0; i < n; i++) {
            want += v[i] == max_level;
            want_max = v[i] > want_max ? (uint16_t)v[i] : want_max;
        }
        pq_rle_decoder d;
        cr_assert_eq(pq_rle_init(&d, b.p, b.len, pq_bit_width(max_level), NULL), PQD_OK);
        uint16_t *out = malloc(n * sizeof *out);
        size_t count;
        uint16_t mx;
        cr_assert_eq(pq_rle_get_levels(&d, out, n, (uint16_t)max_level, &count, &mx, NULL), PQD_OK);
        cr_expect_eq(count, want);
        cr_expect_eq(mx, want_max);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(out[i], v[i]);
        free(out);
        free(v);
        tb_free(&b);
    }
    pq_rle_decoder d;
    const uint8_t buf[] = {0x02, 0x01};
    pqd_error err;
    size_t count;
    uint16_t mx, out[1];
    cr_assert_eq(pq_rle_init(&d, buf, sizeof buf, 17, NULL), PQD_OK);
    cr_expect_eq(pq_rle_get_levels(&d, out, 1, 0, &count, &mx, &err), PQD_E_INVALID);
}
