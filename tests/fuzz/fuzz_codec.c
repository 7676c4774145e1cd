/* Fuzz page decompression (and, on snappy input, pq_snappy_inspect: a stream
 * it calls literals-only decompresses to the concatenation of its literals). Byte 0: codec (low 4 bits, raw: 3 is LZO, 8+ are
 * unknown) and mode (bit 7). Bytes 1-3: expected decompressed size (LE, at
 * most 16 MiB). Decode mode: the rest is a compressed stream; on success the
 * output must be exactly the expected size. Roundtrip mode: the rest is
 * compressed with the codec's own library and must decompress to itself. */
#include "codec.h"
#include "snappy_stream.h"
#include "parquet_types.h"

#include <lz4.h>
#include <snappy-c.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

static pq_codec_ctx *ctx;

static size_t compress_with(int codec, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        memcpy(dst, src, n);
        return n;
    case PQ_CODEC_SNAPPY: {
        size_t out = cap;
        return snappy_compress((const char *)src, n, (char *)dst, &out) == SNAPPY_OK ? out : 0;
    }
    case PQ_CODEC_ZSTD: {
        const size_t r = ZSTD_compress(dst, cap, src, n, 1);
        return ZSTD_isError(r) ? 0 : r;
    }
    case PQ_CODEC_LZ4_RAW: {
        const int r = LZ4_compress_default((const char *)src, (char *)dst, (int)n, (int)cap);
        return r > 0 ? (size_t)r : 0;
    }
    case PQ_CODEC_LZ4: { /* one Hadoop frame */
        if (cap < 8)
            return 0;
        const int r = LZ4_compress_default((const char *)src, (char *)dst + 8, (int)n,
                                           (int)cap - 8);
        if (r <= 0)
            return 0;
        const uint32_t v[2] = {(uint32_t)n, (uint32_t)r};
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 4; i++)
                dst[j * 4 + i] = (uint8_t)(v[j] >> (24 - 8 * i));
        return (size_t)r + 8;
    }
    case PQ_CODEC_GZIP: {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return 0;
        zs.next_in = (Bytef *)(uintptr_t)src;
        zs.avail_in = (uInt)n;
        zs.next_out = dst;
        zs.avail_out = (uInt)cap;
        const int rc = deflate(&zs, Z_FINISH);
        const size_t out = cap - zs.avail_out;
        deflateEnd(&zs);
        return rc == Z_STREAM_END ? out : 0;
    }
    default:
        return 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    if (!ctx)
        ctx = pq_codec_ctx_new();
    const int codec = data[0] & 0x0f;
    const bool roundtrip = data[0] & 0x80;
    const size_t expected = (size_t)(data[1] | data[2] << 8 | data[3] << 16);
    const uint8_t *src = data + 4;
    const size_t n = size - 4;
    pqd_error err;

    if (roundtrip) {
        const size_t cap = n + n / 2 + 1024;
        uint8_t *c = malloc(cap), *out = malloc(n ? n : 1);
        if (!c || !out)
            abort();
        const size_t clen = compress_with(codec, src, n, c, cap);
        if (clen || (codec == PQ_CODEC_UNCOMPRESSED && n == 0)) {
            const pqd_status st = pq_decompress(ctx, codec, c, clen, out, n, &err);
            check(st == PQD_OK);
            check(n == 0 || memcmp(out, src, n) == 0);
        }
        free(c);
        free(out);
        return 0;
    }

    uint8_t *in = malloc(n ? n : 1);
    if (!in)
        abort();
    memcpy(in, src, n);
    if (codec == PQ_CODEC_SNAPPY) {
        uint64_t content = 0;
        if (pq_snappy_inspect(in, n, &content) == PQ_SNAPPY_LITERALS && content <= (16u << 20)) {
            /* The literals, concatenated, are the content. */
            uint8_t *want = malloc(content ? content : 1), *got = malloc(content ? content : 1);
            if (!want || !got)
                abort();
            size_t pos = 0, at = 0;
            while (in[pos] & 0x80)
                pos++;
            pos++;
            while (pos < n) {
                const uint32_t code = in[pos] >> 2, extra = code < 60 ? 0 : code - 59;
                uint64_t len = code < 60 ? code + 1 : 0;
                for (uint32_t i = 0; i < extra; i++)
                    len |= (uint64_t)in[pos + 1 + i] << (8 * i);
                len += extra ? 1 : 0;
                pos += 1 + extra;
                memcpy(want + at, in + pos, (size_t)len);
                pos += (size_t)len;
                at += (size_t)len;
            }
            check(at == content);
            check(pq_decompress(ctx, codec, in, n, got, (size_t)content, NULL) == PQD_OK);
            check(content == 0 || memcmp(got, want, (size_t)content) == 0);
            free(want);
            free(got);
        }
    }
    const pqd_status pre = pq_codec_precheck(codec, in, n, expected, &err);
    if (pre == PQD_OK) {
        /* Guard bytes around the output catch any write outside it. */
        uint8_t *out = malloc(expected + 64);
        if (!out)
            abort();
        memset(out, 0xa5, expected + 64);
        const pqd_status st = pq_decompress(ctx, codec, in, n, out + 32, expected, &err);
        for (size_t i = 0; i < 32; i++)
            check(out[i] == 0xa5 && out[32 + expected + i] == 0xa5);
        if (st != PQD_OK)
            check(err.code == (int)st && memchr(err.msg, 0, sizeof err.msg) != NULL);
        /* Without a context the result is the same. */
        const pqd_status st2 = pq_decompress(NULL, codec, in, n, out + 32, expected, NULL);
        check(st2 == st);
        free(out);
    } else {
        check(pq_decompress(ctx, codec, in, n, NULL, expected, NULL) == pre);
    }
    free(in);
    return 0;
}
