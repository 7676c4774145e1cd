/* Page decompression; see codec.h. */
#include "codec.h"

#include "parquet_meta.h"
#include "parquet_types.h"

#include <brotli/decode.h>
#include <limits.h>
#include <lz4.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

struct pq_codec_ctx {
    ZSTD_DCtx *zstd;
    z_stream zs;
    bool zs_ready;
};

/* Expansion bounds: the most output a stream of n bytes can legally yield.
 *  snappy: a 3-byte copy emits at most 64 bytes (21.3x);
 *  LZ4: every extra byte of match length adds at most 255 bytes;
 *  deflate: at most 258 bytes per ~2 bits (1032x);
 *  zstd: a 4-byte RLE block expands to at most 128 KiB. */
#define SNAPPY_RATIO 22u
#define LZ4_RATIO 256u
#define DEFLATE_RATIO 1040u
#define ZSTD_RATIO 32768u
#define RATIO_SLACK 4096u

/* The format's codec names; "unknown" (not "UNKNOWN") for any other value. */
static const char *codec_name(int c)
{
    return c >= PQ_CODEC_UNCOMPRESSED && c <= PQ_CODEC_LZ4_RAW ? pq_codec_name(c) : "unknown";
}

pq_codec_ctx *pq_codec_ctx_new(void)
{
    pq_codec_ctx *c = calloc(1, sizeof *c);
    return c;
}

void pq_codec_ctx_free(pq_codec_ctx *c)
{
    if (!c)
        return;
    if (c->zstd)
        ZSTD_freeDCtx(c->zstd);
    if (c->zs_ready)
        inflateEnd(&c->zs);
    free(c);
}

bool pq_codec_is_supported(int codec)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
    case PQ_CODEC_SNAPPY:
    case PQ_CODEC_GZIP:
    case PQ_CODEC_BROTLI:
    case PQ_CODEC_LZ4:
    case PQ_CODEC_ZSTD:
    case PQ_CODEC_LZ4_RAW:
        return true;
    default:
        return false;
    }
}

static bool ratio_ok(size_t src_len, size_t dst_len, uint64_t ratio)
{
    return (uint64_t)dst_len <= (uint64_t)src_len * ratio + RATIO_SLACK;
}

pqd_status pq_codec_precheck(int codec, const uint8_t *src, size_t src_len, size_t dst_len,
                             pqd_error *err)
{
    if (!pq_codec_is_supported(codec))
        return sv_fail(err, PQD_E_UNSUPPORTED, 0, "unsupported codec %s (%d)", codec_name(codec),
                       codec);
    if (dst_len > PQ_CODEC_MAX_OUTPUT)
        return sv_fail(err, PQD_E_LIMIT, 0, "%s: decompressed size %zu over the limit %u",
                       codec_name(codec), dst_len, PQ_CODEC_MAX_OUTPUT);
    if (src_len > PQ_CODEC_MAX_INPUT)
        return sv_fail(err, PQD_E_LIMIT, 0, "%s: compressed size %zu over the limit %u",
                       codec_name(codec), src_len, PQ_CODEC_MAX_INPUT);
    if (src_len > 0 && !src)
        return sv_fail(err, PQD_E_INVALID, 0, "%s: NULL input", codec_name(codec));
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (src_len != dst_len)
            return sv_fail(err, PQD_E_MISMATCH, 0,
                           "UNCOMPRESSED: %zu bytes stored, %zu expected", src_len, dst_len);
        return PQD_OK;
    case PQ_CODEC_SNAPPY: {
        size_t n = 0;
        if (snappy_uncompressed_length((const char *)src, src_len, &n) != SNAPPY_OK)
            return sv_fail(err, PQD_E_CORRUPT, 0, "SNAPPY: bad length preamble");
        if (n != dst_len)
            return sv_fail(err, PQD_E_MISMATCH, 0,
                           "SNAPPY: stream holds %zu bytes, %zu expected", n, dst_len);
        if (!ratio_ok(src_len, dst_len, SNAPPY_RATIO))
            return sv_fail(err, PQD_E_CORRUPT, 0,
                           "SNAPPY: %zu bytes cannot expand to %zu", src_len, dst_len);
        return PQD_OK;
    }
    case PQ_CODEC_LZ4:
    case PQ_CODEC_LZ4_RAW:
        if (!ratio_ok(src_len, dst_len, LZ4_RATIO))
            return sv_fail(err, PQD_E_CORRUPT, 0, "%s: %zu bytes cannot expand to %zu",
                           codec_name(codec), src_len, dst_len);
        return PQD_OK;
    case PQ_CODEC_GZIP:
        if (!ratio_ok(src_len, dst_len, DEFLATE_RATIO))
            return sv_fail(err, PQD_E_CORRUPT, 0, "GZIP: %zu bytes cannot expand to %zu",
                           src_len, dst_len);
        return PQD_OK;
    case PQ_CODEC_ZSTD: {
        if (!ratio_ok(src_len, dst_len, ZSTD_RATIO))
            return sv_fail(err, PQD_E_CORRUPT, 0, "ZSTD: %zu bytes cannot expand to %zu",
                           src_len, dst_len);
        if (src_len == 0)
            return sv_fail(err, PQD_E_TRUNCATED, 0, "ZSTD: empty input");
        /* Sum the content sizes the frames declare (skippable frames count 0). */
        unsigned long long total = 0;
        bool unknown = false;
        size_t pos = 0;
        while (pos < src_len) {
            const unsigned long long fcs = ZSTD_getFrameContentSize(src + pos, src_len - pos);
            if (fcs == ZSTD_CONTENTSIZE_ERROR)
                return sv_fail(err, PQD_E_CORRUPT, pos, "ZSTD: bad frame header");
            const size_t flen = ZSTD_findFrameCompressedSize(src + pos, src_len - pos);
            if (ZSTD_isError(flen))
                return sv_fail(err, PQD_E_CORRUPT, pos, "ZSTD: %s", ZSTD_getErrorName(flen));
            if (fcs == ZSTD_CONTENTSIZE_UNKNOWN)
                unknown = true;
            else if ((total += fcs) > (unsigned long long)dst_len)
                break;
            pos += flen;
        }
        if (total > (unsigned long long)dst_len || (!unknown && total != dst_len))
            return sv_fail(err, PQD_E_MISMATCH, 0,
                           "ZSTD: frames declare %s%llu bytes, %zu expected",
                           total > dst_len ? "over " : "", total, dst_len);
        return PQD_OK;
    }
    case PQ_CODEC_BROTLI:
    default:
        return PQD_OK;
    }
}

/* ---- gzip / zlib ---- */

static pqd_status gzip_decompress(pq_codec_ctx *c, const uint8_t *src, size_t src_len,
                                  uint8_t *dst, size_t dst_len, pqd_error *err)
{
    z_stream *zs = &c->zs;
    if (!c->zs_ready) {
        memset(zs, 0, sizeof *zs);
        /* 15 + 32: 32 KiB window, gzip or zlib header detected automatically. */
        if (inflateInit2(zs, 15 + 32) != Z_OK)
            return sv_fail(err, PQD_E_NOMEM, 0, "GZIP: inflateInit2 failed");
        c->zs_ready = true;
    } else if (inflateReset(zs) != Z_OK) {
        return sv_fail(err, PQD_E_CORRUPT, 0, "GZIP: inflateReset failed");
    }
    uint8_t scratch[1];
    zs->next_in = (Bytef *)(uintptr_t)src;
    zs->avail_in = (uInt)src_len;
    zs->next_out = dst_len ? dst : scratch;
    zs->avail_out = (uInt)dst_len;
    size_t produced = 0;
    bool overflow_probe = false;
    for (;;) {
        if (zs->avail_out == 0 && !overflow_probe) {
            /* dst is full: the stream must end without producing more. */
            overflow_probe = true;
            zs->next_out = scratch;
            zs->avail_out = 1;
        }
        const uInt out_before = zs->avail_out;
        const int rc = inflate(zs, Z_NO_FLUSH);
        if (overflow_probe && zs->avail_out == 0)
            return sv_fail(err, PQD_E_MISMATCH, src_len - zs->avail_in,
                           "GZIP: stream holds more than the %zu bytes expected", dst_len);
        if (!overflow_probe)
            produced += out_before - zs->avail_out;
        if (rc == Z_STREAM_END) {
            if (zs->avail_in == 0)
                break;
            /* Another gzip member may follow (files written by concatenation). */
            const uint8_t *rest = zs->next_in;
            if (zs->avail_in >= 2 && rest[0] == 0x1f && rest[1] == 0x8b) {
                if (inflateReset(zs) != Z_OK)
                    return sv_fail(err, PQD_E_CORRUPT, 0, "GZIP: inflateReset failed");
                continue;
            }
            return sv_fail(err, PQD_E_CORRUPT, src_len - zs->avail_in,
                           "GZIP: %u trailing bytes after the stream", zs->avail_in);
        }
        if (rc == Z_OK)
            continue;
        if (rc == Z_BUF_ERROR) /* no progress possible: the input ran out */
            return sv_fail(err, PQD_E_TRUNCATED, src_len - zs->avail_in,
                           "GZIP: stream ends after %zu of %zu bytes", produced, dst_len);
        if (rc == Z_MEM_ERROR)
            return sv_fail(err, PQD_E_NOMEM, 0, "GZIP: out of memory");
        return sv_fail(err, PQD_E_CORRUPT, src_len - zs->avail_in, "GZIP: %s",
                       zs->msg ? zs->msg : "inflate error");
    }
    if (produced != dst_len)
        return sv_fail(err, PQD_E_MISMATCH, 0, "GZIP: stream holds %zu bytes, %zu expected",
                       produced, dst_len);
    return PQD_OK;
}

/* ---- LZ4 ---- */

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool lz4_block(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len)
{
    if (src_len > INT_MAX || dst_len > INT_MAX)
        return false;
    if (src_len == 0)
        return false;
    char scratch[1];
    const int n = LZ4_decompress_safe((const char *)src, dst_len ? (char *)dst : scratch,
                                      (int)src_len, (int)dst_len);
    return n >= 0 && (size_t)n == dst_len;
}

/* Hadoop framing: repeated [BE32 decompressed][BE32 compressed][block]. */
static bool lz4_hadoop(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len)
{
    size_t in = 0, out = 0;
    if (src_len < 8)
        return false;
    while (src_len - in >= 8) {
        const uint32_t dlen = load_be32(src + in);
        const uint32_t clen = load_be32(src + in + 4);
        in += 8;
        if (clen > src_len - in || dlen > dst_len - out)
            return false;
        if (!lz4_block(src + in, clen, dst ? dst + out : NULL, dlen))
            return false;
        in += clen;
        out += dlen;
    }
    return in == src_len && out == dst_len;
}

/* ---- brotli ---- */

static pqd_status brotli_decompress(const uint8_t *src, size_t src_len, uint8_t *dst,
                                    size_t dst_len, pqd_error *err)
{
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!s)
        return sv_fail(err, PQD_E_NOMEM, 0, "BROTLI: cannot create decoder");
    size_t avail_in = src_len, avail_out = dst_len;
    const uint8_t *next_in = src;
    uint8_t scratch[1];
    uint8_t *next_out = dst_len ? dst : scratch;
    BrotliDecoderResult r =
        BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
    pqd_status st = PQD_OK;
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
        st = sv_fail(err, PQD_E_MISMATCH, src_len - avail_in,
                     "BROTLI: stream holds more than the %zu bytes expected", dst_len);
    } else if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
        st = sv_fail(err, PQD_E_TRUNCATED, src_len,
                     "BROTLI: stream ends after %zu of %zu bytes", dst_len - avail_out, dst_len);
    } else if (r != BROTLI_DECODER_RESULT_SUCCESS) {
        st = sv_fail(err, PQD_E_CORRUPT, src_len - avail_in, "BROTLI: %s",
                     BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s)));
    } else if (avail_in != 0) {
        st = sv_fail(err, PQD_E_CORRUPT, src_len - avail_in,
                     "BROTLI: %zu trailing bytes after the stream", avail_in);
    } else if (avail_out != 0) {
        st = sv_fail(err, PQD_E_MISMATCH, 0, "BROTLI: stream holds %zu bytes, %zu expected",
                     dst_len - avail_out, dst_len);
    }
    BrotliDecoderDestroyInstance(s);
    return st;
}

pqd_status pq_decompress(pq_codec_ctx *ctx, int codec, const uint8_t *src, size_t src_len,
                         uint8_t *dst, size_t dst_len, pqd_error *err)
{
    pqd_status st = pq_codec_precheck(codec, src, src_len, dst_len, err);
    if (st != PQD_OK)
        return st;
    if (dst_len > 0 && !dst)
        return sv_fail(err, PQD_E_INVALID, 0, "%s: NULL output", codec_name(codec));
    pq_codec_ctx *tmp = NULL;
    if (!ctx && (codec == PQ_CODEC_ZSTD || codec == PQ_CODEC_GZIP)) {
        tmp = ctx = pq_codec_ctx_new();
        if (!ctx)
            return sv_fail(err, PQD_E_NOMEM, 0, "%s: out of memory", codec_name(codec));
    }
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (dst_len)
            memcpy(dst, src, dst_len);
        break;
    case PQ_CODEC_SNAPPY: {
        size_t n = dst_len;
        char scratch[1];
        const snappy_status s =
            snappy_uncompress((const char *)src, src_len, dst_len ? (char *)dst : scratch, &n);
        if (s != SNAPPY_OK)
            st = sv_fail(err, PQD_E_CORRUPT, 0, "SNAPPY: corrupt stream");
        else if (n != dst_len)
            st = sv_fail(err, PQD_E_MISMATCH, 0, "SNAPPY: stream holds %zu bytes, %zu expected",
                         n, dst_len);
        break;
    }
    case PQ_CODEC_GZIP:
        st = gzip_decompress(ctx, src, src_len, dst, dst_len, err);
        break;
    case PQ_CODEC_ZSTD: {
        if (!ctx->zstd && !(ctx->zstd = ZSTD_createDCtx())) {
            st = sv_fail(err, PQD_E_NOMEM, 0, "ZSTD: cannot create context");
            break;
        }
        uint8_t scratch[1];
        const size_t n = ZSTD_decompressDCtx(ctx->zstd, dst_len ? dst : scratch, dst_len, src,
                                             src_len);
        if (ZSTD_isError(n)) {
            const ZSTD_ErrorCode e = ZSTD_getErrorCode(n);
            st = sv_fail(err, e == ZSTD_error_dstSize_tooSmall ? PQD_E_MISMATCH : PQD_E_CORRUPT,
                         0, "ZSTD: %s%s", ZSTD_getErrorName(n),
                         e == ZSTD_error_dstSize_tooSmall ? " (more than the expected size)" : "");
        } else if (n != dst_len) {
            st = sv_fail(err, PQD_E_MISMATCH, 0, "ZSTD: stream holds %zu bytes, %zu expected",
                         n, dst_len);
        }
        break;
    }
    case PQ_CODEC_LZ4_RAW:
        if (!lz4_block(src, src_len, dst, dst_len))
            st = sv_fail(err, PQD_E_CORRUPT, 0,
                         "LZ4_RAW: not a valid block of exactly %zu bytes", dst_len);
        break;
    case PQ_CODEC_LZ4:
        if (!lz4_hadoop(src, src_len, dst, dst_len) && !lz4_block(src, src_len, dst, dst_len))
            st = sv_fail(err, PQD_E_CORRUPT, 0,
                         "LZ4: neither Hadoop-framed nor a raw block of exactly %zu bytes",
                         dst_len);
        break;
    case PQ_CODEC_BROTLI:
        st = brotli_decompress(src, src_len, dst, dst_len, err);
        break;
    default:
        st = sv_fail(err, PQD_E_UNSUPPORTED, 0, "unsupported codec %d", codec);
        break;
    }
    pq_codec_ctx_free(tmp);
    return st;
}
