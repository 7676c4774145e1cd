/* Fuzz the RLE/bit-packed hybrid decoder, the LSB/MSB bit unpackers and the
 * DELTA_BINARY_PACKED decoders. Input: byte 0 bit width (0..33 used as is,
 * so 33 exercises the error path), bytes 1-2 value count (LE), byte 3 read
 * chunk size, then the encoded bytes. The u8/u16/u32 forms of the decoder
 * must agree value for value. */
#include "decode.h"
#include "rle_hybrid.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

static pqd_status read_all(const uint8_t *buf, size_t len, unsigned w, size_t n, size_t chunk,
                           int form, uint32_t *out)
{
    pq_rle_decoder d;
    pqd_error err;
    pqd_status st = pq_rle_init(&d, buf, len, w, &err);
    if (st != PQD_OK)
        return st;
    uint8_t t8[256];
    uint16_t t16[256];
    size_t done = 0;
    while (done < n) {
        const size_t k = n - done < chunk ? n - done : chunk;
        if (form == 0) {
            st = pq_rle_get_u32(&d, out + done, k, &err);
        } else if (form == 1) {
            st = pq_rle_get_u16(&d, t16, k, &err);
            for (size_t i = 0; st == PQD_OK && i < k; i++)
                out[done + i] = t16[i];
        } else {
            st = pq_rle_get_u8(&d, t8, k, &err);
            for (size_t i = 0; st == PQD_OK && i < k; i++)
                out[done + i] = t8[i];
        }
        if (st != PQD_OK) {
            check(err.code == (int)st);
            return st;
        }
        check(pq_rle_consumed(&d) <= len);
        done += k;
    }
    return PQD_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    const unsigned w = data[0] % 34;
    const size_t n = (size_t)(data[1] | data[2] << 8);
    const size_t chunk = 1 + data[3] % 256;
    const size_t len = size - 4;
    uint8_t *buf = malloc(len ? len : 1);
    uint32_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    if (!buf || !a || !b)
        abort();
    memcpy(buf, data + 4, len);

    const pqd_status s32 = read_all(buf, len, w, n, chunk, 0, a);
    if (s32 == PQD_OK && w < 32)
        for (size_t i = 0; i < n; i++)
            check(a[i] >> w == 0);
    if (w <= 16) {
        const pqd_status s16 = read_all(buf, len, w, n, 256, 1, b);
        check(s16 == s32);
        check(s16 != PQD_OK || memcmp(a, b, n * sizeof *a) == 0);
    }
    if (w <= 15) {
        /* Levels with fused statistics agree with a plain decode. */
        pq_rle_decoder d;
        uint16_t *lv = malloc((n ? n : 1) * sizeof *lv);
        if (!lv)
            abort();
        const uint16_t target = (uint16_t)(data[3] & ((1u << w) - 1));
        size_t count = 0;
        uint16_t mx = 0;
        check(pq_rle_init(&d, buf, len, w, NULL) == PQD_OK);
        const pqd_status sl = pq_rle_get_levels(&d, lv, n, target, &count, &mx, NULL);
        check(sl == s32);
        if (sl == PQD_OK) {
            size_t c = 0;
            uint16_t m = 0;
            for (size_t i = 0; i < n; i++) {
                check(lv[i] == a[i]);
                c += lv[i] == target;
                m = lv[i] > m ? lv[i] : m;
            }
            check(c == count && m == mx);
        }
        free(lv);
    }
    if (w <= 8) {
        const pqd_status s8 = read_all(buf, len, w, n, chunk, 2, b);
        check(s8 == s32);
        check(s8 != PQD_OK || memcmp(a, b, n * sizeof *a) == 0);
    }

    /* Plain bit unpacking of the same bytes. */
    uint64_t *u64 = malloc((n ? n : 1) * sizeof *u64);
    if (!u64)
        abort();
    const unsigned w64 = data[0] % 66;
    if (pq_unpack_u64(buf, len, w64, u64, n, NULL) == PQD_OK && w64 <= 32) {
        check(pq_unpack_u32(buf, len, w64, a, n, NULL) == PQD_OK);
        for (size_t i = 0; i < n; i++)
            check(a[i] == u64[i]);
    }
    uint16_t *l16 = malloc((n ? n : 1) * sizeof *l16);
    if (!l16)
        abort();
    (void)pq_bitpacked_msb_u16(buf, len, w % 17, l16, n, NULL);

    /* DELTA_BINARY_PACKED: the same bytes as INT32 and INT64 streams. */
    size_t used32 = 0, used64 = 0;
    const pqd_status d32 = pq_delta_decode_i32(buf, len, n, (int32_t *)a, &used32, NULL);
    const pqd_status d64 = pq_delta_decode_i64(buf, len, n, (int64_t *)u64, &used64, NULL);
    if (d32 == PQD_OK)
        check(used32 <= len);
    if (d64 == PQD_OK)
        check(used64 <= len);
    if (d32 == PQD_OK && d64 == PQD_OK) {
        /* Same stream: the INT32 values are the INT64 values mod 2^32. */
        check(used32 == used64);
        for (size_t i = 0; i < n; i++)
            check((uint32_t)a[i] == (uint32_t)u64[i]);
    }
    free(l16);
    free(u64);
    free(buf);
    free(a);
    free(b);
    return 0;
}
