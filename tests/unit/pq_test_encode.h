/* Test-only encoders for the Parquet value-decoding tests: a growable byte
 * buffer, ULEB128/zigzag, LSB-first bit packing, an RLE/bit-packed hybrid
 * writer and a DELTA_BINARY_PACKED writer. Written from the format spec
 * (parquet-format Encodings.md); deliberately simple, not fast. Also the
 * tests' pseudo-random source (xorshift64), so that inputs repeat. */
#ifndef SIEVE_PQ_TEST_ENCODE_H
#define SIEVE_PQ_TEST_ENCODE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t *p;
    size_t len, cap;
} tbuf;

static inline void tb_reserve(tbuf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        abort();
    b->cap = cap;
}

static inline void tb_put(tbuf *b, const void *src, size_t n)
{
    tb_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, src, n);
    b->len += n;
}

static inline void tb_u8(tbuf *b, uint8_t v)
{
    tb_put(b, &v, 1);
}

static inline void tb_le32(tbuf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tb_put(b, x, 4);
}

static inline void tb_le64(tbuf *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        tb_u8(b, (uint8_t)(v >> (8 * i)));
}

/* v as ULEB128 into out (10 bytes at the most); returns how many. */
static inline size_t t_uleb(uint8_t out[10], uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        out[n++] = (uint8_t)(v | 0x80);
    out[n++] = (uint8_t)v;
    return n;
}

static inline void tb_uleb(tbuf *b, uint64_t v)
{
    uint8_t x[10];
    tb_put(b, x, t_uleb(x, v));
}

static inline uint64_t t_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* The next value of the xorshift64 stream in *state (never 0). */
static inline uint64_t t_xorshift64(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static inline void tb_free(tbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* Append n values of w bits packed LSB first, padded to whole bytes. */
static inline void tb_bitpack(tbuf *b, const uint64_t *v, size_t n, unsigned w)
{
    const size_t bytes = (n * w + 7) / 8;
    if (bytes == 0)
        return;
    tb_reserve(b, bytes);
    uint8_t *o = b->p + b->len;
    memset(o, 0, bytes);
    for (size_t i = 0; i < n; i++)
        for (unsigned j = 0; j < w; j++)
            if ((v[i] >> j) & 1) {
                const size_t bit = i * w + j;
                o[bit >> 3] |= (uint8_t)(1u << (bit & 7));
            }
    b->len += bytes;
}

/* RLE/bit-packed hybrid (no length prefix). Runs of >= min_rle equal values
 * become RLE runs, everything else bit-packed runs (padded with zeros). */
static inline void tb_hybrid(tbuf *b, const uint64_t *v, size_t n, unsigned w, size_t min_rle)
{
    size_t i = 0;
    while (i < n) {
        size_t r = 1;
        while (i + r < n && v[i + r] == v[i])
            r++;
        if (r >= min_rle) {
            tb_uleb(b, (uint64_t)r << 1);
            for (unsigned k = 0; k < (w + 7) / 8; k++)
                tb_u8(b, (uint8_t)(v[i] >> (8 * k)));
            i += r;
            continue;
        }
        /* Bit-pack until the next long run (whole groups of 8). */
        size_t end = i;
        while (end < n) {
            size_t rr = 1;
            while (end + rr < n && v[end + rr] == v[end])
                rr++;
            if (rr >= min_rle && end > i && (end - i) % 8 == 0)
                break;
            end++;
        }
        const size_t count = end - i;
        const size_t groups = (count + 7) / 8;
        uint64_t tmp[8 * 64];
        size_t done = 0;
        while (done < groups) {
            const size_t g = groups - done < 63 ? groups - done : 63;
            memset(tmp, 0, sizeof tmp);
            for (size_t k = 0; k < g * 8 && i + done * 8 + k < end; k++)
                tmp[k] = v[i + done * 8 + k];
            tb_uleb(b, (g << 1) | 1);
            tb_bitpack(b, tmp, g * 8, w);
            done += g;
        }
        i = end;
    }
}

static inline unsigned t_bits(uint64_t v)
{
    unsigned w = 0;
    while (v) {
        w++;
        v >>= 1;
    }
    return w;
}

/* DELTA_BINARY_PACKED of n values (int32 domain when is32, else int64). */
static inline void tb_delta(tbuf *b, const int64_t *vals, size_t n, bool is32, unsigned block,
                            unsigned miniblocks)
{
    const unsigned vpm = block / miniblocks;
    tb_uleb(b, block);
    tb_uleb(b, miniblocks);
    tb_uleb(b, n);
    tb_uleb(b, t_zigzag(n ? vals[0] : 0));
    const uint64_t mask = is32 ? 0xffffffffull : ~0ull;
    size_t i = 1;
    uint64_t *rel = calloc(block, sizeof *rel);
    while (i < n) {
        const size_t cnt = n - i < block ? n - i : block;
        int64_t min = INT64_MAX;
        for (size_t k = 0; k < cnt; k++) {
            const uint64_t d = ((uint64_t)vals[i + k] - (uint64_t)vals[i + k - 1]) & mask;
            const int64_t sd = is32 ? (int64_t)(int32_t)(uint32_t)d : (int64_t)d;
            min = sd < min ? sd : min;
        }
        tb_uleb(b, t_zigzag(min));
        memset(rel, 0, block * sizeof *rel);
        for (size_t k = 0; k < cnt; k++) {
            const uint64_t d = ((uint64_t)vals[i + k] - (uint64_t)vals[i + k - 1]) & mask;
            rel[k] = (d - (uint64_t)min) & mask;
        }
        unsigned widths[256];
        const size_t used = (cnt + vpm - 1) / vpm;
        for (unsigned m = 0; m < miniblocks; m++) {
            uint64_t mx = 0;
            for (unsigned k = 0; m < used && k < vpm; k++)
                mx |= rel[m * vpm + k];
            widths[m] = t_bits(mx);
            tb_u8(b, (uint8_t)widths[m]);
        }
        for (size_t m = 0; m < used; m++)
            tb_bitpack(b, rel + m * vpm, vpm, widths[m]);
        i += cnt;
    }
    free(rel);
}

#endif
