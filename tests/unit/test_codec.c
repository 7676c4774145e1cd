/* Page decompression: every codec, exact sizes, malformed input, bombs. */
#include "codec.h"
#include "parquet_types.h"

#include <brotli/encode.h>
#include <criterion/criterion.h>
#include <lz4.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

typedef struct {
    uint8_t *p;
    size_t len;
} blob;

static uint8_t *sample(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245 + 12345;
        /* Compressible but not trivial. */
        p[i] = (uint8_t)((i % 64 < 40) ? 'a' + (i % 7) : (x >> 16));
    }
    return p;
}

static blob c_snappy(const uint8_t *src, size_t n)
{
    size_t cap = snappy_max_compressed_length(n);
    blob b = {malloc(cap), cap};
    cr_assert_eq(snappy_compress((const char *)src, n, (char *)b.p, &b.len), SNAPPY_OK);
    return b;
}

static blob c_zstd(const uint8_t *src, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    blob b = {malloc(cap), 0};
    b.len = ZSTD_compress(b.p, cap, src, n, 3);
    cr_assert(!ZSTD_isError(b.len));
    return b;
}

/* windowBits 15 + 16: gzip wrapper; 15: zlib wrapper. */
static blob c_deflate(const uint8_t *src, size_t n, int window_bits)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, n) + 64;
    blob b = {malloc(cap), 0};
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    zs.next_out = b.p;
    zs.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    b.len = cap - zs.avail_out;
    deflateEnd(&zs);
    return b;
}

static blob c_lz4(const uint8_t *src, size_t n)
{
    int cap = LZ4_compressBound((int)n);
    blob b = {malloc((size_t)cap + 1), 0};
    int r = LZ4_compress_default((const char *)src, (char *)b.p, (int)n, cap);
    cr_assert(r > 0);
    b.len = (size_t)r;
    return b;
}

/* Hadoop framing: [BE32 raw len][BE32 compressed len][block] per frame. */
static blob c_lz4_hadoop(const uint8_t *src, size_t n, size_t frame)
{
    blob b = {malloc(16 + 2 * (size_t)LZ4_compressBound((int)n) + 16 * (n / frame + 2)), 0};
    size_t off = 0;
    do {
        const size_t k = n - off < frame ? n - off : frame;
        uint8_t *h = b.p + b.len;
        const int r = LZ4_compress_default((const char *)src + off, (char *)h + 8, (int)k,
                                           LZ4_compressBound((int)k));
        cr_assert(r > 0);
        const uint32_t vals[2] = {(uint32_t)k, (uint32_t)r};
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 4; i++)
                h[j * 4 + i] = (uint8_t)(vals[j] >> (24 - 8 * i));
        b.len += 8 + (size_t)r;
        off += k;
    } while (off < n);
    return b;
}

static blob c_brotli(const uint8_t *src, size_t n)
{
    size_t cap = BrotliEncoderMaxCompressedSize(n) + 16;
    blob b = {malloc(cap), cap};
    cr_assert(BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, n, src, &b.len, b.p));
    return b;
}

static blob compress_with(int codec, const uint8_t *src, size_t n)
{
    switch (codec) {
    case PQ_CODEC_SNAPPY: return c_snappy(src, n);
    case PQ_CODEC_GZIP: return c_deflate(src, n, 15 + 16);
    case PQ_CODEC_ZSTD: return c_zstd(src, n);
    case PQ_CODEC_LZ4_RAW: return c_lz4(src, n);
    case PQ_CODEC_LZ4: return c_lz4_hadoop(src, n, 4096);
    case PQ_CODEC_BROTLI: return c_brotli(src, n);
    default: {
        blob b = {malloc(n ? n : 1), n};
        memcpy(b.p, src, n);
        return b;
    }
    }
}

static const int all_codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP,
                                 PQ_CODEC_ZSTD,         PQ_CODEC_LZ4_RAW, PQ_CODEC_LZ4,
                                 PQ_CODEC_BROTLI};
#define N_CODECS (sizeof all_codecs / sizeof all_codecs[0])

Test(codec, roundtrip_every_codec_and_size)
{
    pq_codec_ctx *ctx = pq_codec_ctx_new();
    const size_t sizes[] = {0, 1, 7, 100, 4096, 65537, 1 << 20};
    for (size_t ci = 0; ci < N_CODECS; ci++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const size_t n = sizes[si];
            uint8_t *src = sample(n);
            blob c = compress_with(all_codecs[ci], src, n);
            uint8_t *dst = malloc(n ? n : 1);
            pqd_error err = {0};
            const pqd_status st = pq_decompress(ctx, all_codecs[ci], c.p, c.len, dst, n, &err);
            cr_assert_eq(st, PQD_OK, "codec %d size %zu: %s", all_codecs[ci], n, err.msg);
            cr_assert(n == 0 || memcmp(dst, src, n) == 0, "codec %d size %zu", all_codecs[ci], n);
            /* Without a context too. */
            cr_assert_eq(pq_decompress(NULL, all_codecs[ci], c.p, c.len, dst, n, NULL), PQD_OK);
            free(src);
            free(c.p);
            free(dst);
        }
    }
    pq_codec_ctx_free(ctx);
}

Test(codec, wrong_expected_size_is_an_error)
{
    const size_t n = 10000;
    uint8_t *src = sample(n);
    uint8_t *dst = malloc(n + 100);
    for (size_t ci = 0; ci < N_CODECS; ci++) {
        blob c = compress_with(all_codecs[ci], src, n);
        pqd_error err;
        /* One byte short: the stream holds more than expected. */
        pqd_status st = pq_decompress(NULL, all_codecs[ci], c.p, c.len, dst, n - 1, &err);
        cr_expect_neq(st, PQD_OK, "codec %d accepted a short buffer", all_codecs[ci]);
        /* One byte more: the stream ends early. */
        st = pq_decompress(NULL, all_codecs[ci], c.p, c.len, dst, n + 1, &err);
        cr_expect_neq(st, PQD_OK, "codec %d accepted a long buffer", all_codecs[ci]);
        free(c.p);
    }
    free(src);
    free(dst);
}

Test(codec, truncated_and_corrupt_streams)
{
    const size_t n = 50000;
    uint8_t *src = sample(n);
    uint8_t *dst = malloc(n);
    for (size_t ci = 1; ci < N_CODECS; ci++) {
        const int codec = all_codecs[ci];
        blob c = compress_with(codec, src, n);
        pqd_error err;
        for (size_t cut = 0; cut < c.len; cut += 1 + c.len / 13) {
            const pqd_status st = pq_decompress(NULL, codec, c.p, cut, dst, n, &err);
            cr_expect_neq(st, PQD_OK, "codec %d accepted %zu of %zu bytes", codec, cut, c.len);
        }
        /* Flip bytes in the middle; must fail or (rarely) decode to the
         * right size, never crash. */
        for (size_t k = 0; k < 64; k++) {
            uint8_t *m = malloc(c.len);
            memcpy(m, c.p, c.len);
            m[(k * 7919) % c.len] ^= (uint8_t)(1 + k);
            (void)pq_decompress(NULL, codec, m, c.len, dst, n, &err);
            free(m);
        }
        /* Trailing garbage after a complete stream. */
        uint8_t *t = malloc(c.len + 3);
        memcpy(t, c.p, c.len);
        memcpy(t + c.len, "xyz", 3);
        cr_expect_neq(pq_decompress(NULL, codec, t, c.len + 3, dst, n, &err), PQD_OK,
                      "codec %d accepted trailing bytes", codec);
        free(t);
        free(c.p);
    }
    free(src);
    free(dst);
}

Test(codec, unsupported)
{
    pqd_error err;
    uint8_t dst[4];
    const uint8_t src[4] = {1, 2, 3, 4};
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_LZO, src, 4, dst, 4, &err), PQD_E_UNSUPPORTED);
    cr_expect(strstr(err.msg, "LZO") != NULL, "%s", err.msg);
    cr_expect_eq(pq_decompress(NULL, 99, src, 4, dst, 4, &err), PQD_E_UNSUPPORTED);
    cr_expect_eq(pq_decompress(NULL, -1, src, 4, dst, 4, &err), PQD_E_UNSUPPORTED);
    cr_expect_not(pq_codec_is_supported(PQ_CODEC_LZO));
    cr_expect(pq_codec_is_supported(PQ_CODEC_ZSTD));
}

Test(codec, limits)
{
    pqd_error err;
    const uint8_t src[4] = {0};
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_ZSTD, src, 4, (size_t)PQ_CODEC_MAX_OUTPUT + 1, &err),
                 PQD_E_LIMIT);
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_GZIP, src, (size_t)PQ_CODEC_MAX_INPUT + 1, 10, &err),
                 PQD_E_LIMIT);
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_UNCOMPRESSED, src, 4, 5, &err), PQD_E_MISMATCH);
}

/* A tiny stream claiming a huge size is refused before any allocation. */
Test(codec, bomb_claims_rejected_by_precheck)
{
    pqd_error err;
    blob z = c_zstd((const uint8_t *)"hello", 5);
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_ZSTD, z.p, z.len, 200u << 20, &err), PQD_E_CORRUPT);
    /* Frame content size disagrees with the expected size. */
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_ZSTD, z.p, z.len, 6, &err), PQD_E_MISMATCH);
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_ZSTD, z.p, z.len, 5, &err), PQD_OK);
    free(z.p);
    blob s = c_snappy((const uint8_t *)"hello", 5);
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_SNAPPY, s.p, s.len, 6, &err), PQD_E_MISMATCH);
    free(s.p);
    /* Snappy preamble claiming 100 MiB in a 10-byte stream. */
    const uint8_t sb[10] = {0x80, 0x80, 0x80, 0x32, 0x00};
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_SNAPPY, sb, sizeof sb, 100u << 20, &err),
                 PQD_E_CORRUPT);
    const uint8_t g[20] = {0x1f, 0x8b};
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_GZIP, g, sizeof g, 1u << 26, &err), PQD_E_CORRUPT);
    cr_expect_eq(pq_codec_precheck(PQ_CODEC_LZ4_RAW, g, sizeof g, 1u << 24, &err), PQD_E_CORRUPT);
}

/* Real bombs: streams that expand far beyond the expected size stop at it. */
Test(codec, bomb_streams_stop_at_expected_size)
{
    const size_t big = 64u << 20;
    uint8_t *zeros = calloc(1, big);
    uint8_t dst[4096];
    pqd_error err;
    const int codecs[] = {PQ_CODEC_GZIP, PQ_CODEC_ZSTD, PQ_CODEC_BROTLI, PQ_CODEC_SNAPPY,
                          PQ_CODEC_LZ4_RAW};
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        const size_t n = codecs[i] == PQ_CODEC_LZ4_RAW || codecs[i] == PQ_CODEC_SNAPPY ? (1u << 20)
                                                                                       : big;
        blob c = compress_with(codecs[i], zeros, n);
        const pqd_status st = pq_decompress(NULL, codecs[i], c.p, c.len, dst, sizeof dst, &err);
        cr_expect(st == PQD_E_MISMATCH || st == PQD_E_CORRUPT, "codec %d: %d %s", codecs[i], st,
                  err.msg);
        free(c.p);
    }
    free(zeros);
}

Test(codec, gzip_variants)
{
    const size_t n = 3000;
    uint8_t *src = sample(n);
    uint8_t *dst = malloc(2 * n);
    /* zlib wrapper is accepted too. */
    blob z = c_deflate(src, n, 15);
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_GZIP, z.p, z.len, dst, n, NULL), PQD_OK);
    cr_expect_eq(memcmp(dst, src, n), 0);
    /* Raw deflate is not. */
    blob r = c_deflate(src, n, -15);
    pqd_error err;
    cr_expect_neq(pq_decompress(NULL, PQ_CODEC_GZIP, r.p, r.len, dst, n, &err), PQD_OK);
    /* Two concatenated gzip members. */
    blob a = c_deflate(src, 1000, 15 + 16), b = c_deflate(src + 1000, n - 1000, 15 + 16);
    uint8_t *cat = malloc(a.len + b.len);
    memcpy(cat, a.p, a.len);
    memcpy(cat + a.len, b.p, b.len);
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_GZIP, cat, a.len + b.len, dst, n, &err), PQD_OK,
                 "%s", err.msg);
    cr_expect_eq(memcmp(dst, src, n), 0);
    free(cat);
    free(a.p);
    free(b.p);
    free(z.p);
    free(r.p);
    free(src);
    free(dst);
}

Test(codec, zstd_frames)
{
    const size_t n = 5000;
    uint8_t *src = sample(n);
    uint8_t dst[5000];
    blob a = c_zstd(src, 2000), b = c_zstd(src + 2000, n - 2000);
    /* frame, skippable frame (8-byte header + 4 bytes), frame */
    const uint8_t skip[12] = {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 9, 9, 9, 9};
    uint8_t *cat = malloc(a.len + b.len + sizeof skip);
    memcpy(cat, a.p, a.len);
    memcpy(cat + a.len, skip, sizeof skip);
    memcpy(cat + a.len + sizeof skip, b.p, b.len);
    pqd_error err;
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_ZSTD, cat, a.len + b.len + sizeof skip, dst, n, &err),
                 PQD_OK, "%s", err.msg);
    cr_expect_eq(memcmp(dst, src, n), 0);
    /* Content sizes add up to less than expected. */
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_ZSTD, a.p, a.len, dst, n, &err), PQD_E_MISMATCH);
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_ZSTD, NULL, 0, dst, 0, &err), PQD_E_TRUNCATED);
    free(cat);
    free(a.p);
    free(b.p);
    free(src);
}

Test(codec, lz4_hadoop_framing)
{
    const size_t n = 20000;
    uint8_t *src = sample(n);
    uint8_t *dst = malloc(n);
    pqd_error err;
    /* Several frames. */
    blob h = c_lz4_hadoop(src, n, 3000);
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_LZ4, h.p, h.len, dst, n, &err), PQD_OK, "%s",
                 err.msg);
    cr_expect_eq(memcmp(dst, src, n), 0);
    /* The Hadoop stream is not a valid raw block. */
    cr_expect_neq(pq_decompress(NULL, PQ_CODEC_LZ4_RAW, h.p, h.len, dst, n, &err), PQD_OK);
    /* Raw block under the LZ4 codec: the parquet-cpp fallback. */
    blob r = c_lz4(src, n);
    cr_expect_eq(pq_decompress(NULL, PQ_CODEC_LZ4, r.p, r.len, dst, n, &err), PQD_OK, "%s",
                 err.msg);
    cr_expect_eq(memcmp(dst, src, n), 0);
    /* Frame lengths that lie. */
    h.p[3] ^= 0x01; /* first frame's decompressed length */
    cr_expect_neq(pq_decompress(NULL, PQ_CODEC_LZ4, h.p, h.len, dst, n, &err), PQD_OK);
    h.p[3] ^= 0x01;
    h.p[7] = 0xff; /* first frame's compressed length */
    cr_expect_neq(pq_decompress(NULL, PQ_CODEC_LZ4, h.p, h.len, dst, n, &err), PQD_OK);
    free(h.p);
    free(r.p);
    free(src);
    free(dst);
}
