/* RLE / bit-packed hybrid and bit unpacking; see rle_hybrid.h. */
#include "rle_hybrid.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* An unsigned LEB128 of at most n bytes, the last one at most last_max (so
 * that the value fits its type). */
ALWAYS_INLINE bool read_uleb(const uint8_t *buf, size_t len, size_t *pos, unsigned n,
                             uint8_t last_max, uint64_t *out)
{
    uint64_t v = 0;
    size_t p = *pos;
    for (unsigned i = 0; i < n; i++) {
        if (p >= len)
            return false;
        const uint8_t b = buf[p++];
        if (i == n - 1 && b > last_max)
            return false;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *pos = p;
            *out = v;
            return true;
        }
    }
    return false;
}

bool pq_read_uleb32(const uint8_t *buf, size_t len, size_t *pos, uint32_t *out)
{
    uint64_t v;
    if (!read_uleb(buf, len, pos, 5, 0x0f, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

bool pq_read_uleb64(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out)
{
    return read_uleb(buf, len, pos, 10, 0x01, out);
}

unsigned pq_bit_width(uint64_t max_value)
{
    return max_value ? 64u - (unsigned)__builtin_clzll(max_value) : 0u;
}

/* ---- LSB-first unpacking ----
 * A group is 8 values of w bits = w bytes. The fast form reads unaligned
 * 64-bit words, so it needs 8 readable bytes past the group's end; callers
 * switch to a padded copy for the last groups of a buffer. The width is a
 * compile-time constant in every instantiation (the switch below), so the
 * shifts and masks fold into straight-line code. */

#define DEFINE_UNPACK(SUF, T)                                                                    \
    ALWAYS_INLINE void groups_##SUF##_w(const uint8_t *in, T *out, size_t ngroups, unsigned w)   \
    {                                                                                            \
        const uint64_t mask = w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);                 \
        for (size_t g = 0; g < ngroups; g++) {                                                   \
            for (unsigned i = 0; i < 8; i++) {                                                   \
                const unsigned bit = i * w, sh = bit & 7;                                        \
                uint64_t v = load64(in + (bit >> 3)) >> sh;                                      \
                if (sh + w > 64)                                                                 \
                    v |= (uint64_t)in[(bit >> 3) + 8] << ((64 - sh) & 63);                       \
                out[i] = (T)(v & mask);                                                          \
            }                                                                                    \
            in += w;                                                                             \
            out += 8;                                                                            \
        }                                                                                        \
    }

DEFINE_UNPACK(u8, uint8_t)
DEFINE_UNPACK(u16, uint16_t)
DEFINE_UNPACK(u32, uint32_t)
DEFINE_UNPACK(u64, uint64_t)

/* Width 1 (booleans, levels of flat optional columns): spread the 8 bits
 * of a byte into 8 bytes with one multiply (copy the byte into every lane,
 * keep bit i in lane i, then normalise each lane to 0/1). */
ALWAYS_INLINE uint64_t spread_bits(uint8_t b)
{
    const uint64_t x = (b * 0x0101010101010101ull) & 0x8040201008040201ull;
    return ((x + 0x7f7f7f7f7f7f7f7full) >> 7) & 0x0101010101010101ull;
}

static void groups1_u8(const uint8_t *in, uint8_t *out, size_t ngroups)
{
    for (size_t g = 0; g < ngroups; g++) {
        const uint64_t v = spread_bits(in[g]);
        memcpy(out + 8 * g, &v, 8);
    }
}

static void groups1_u16(const uint8_t *in, uint16_t *out, size_t ngroups)
{
    size_t g = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (; g + 2 <= ngroups; g += 2) {
        const __m128i b = _mm_set_epi64x((long long)spread_bits(in[g + 1]),
                                         (long long)spread_bits(in[g]));
        _mm_storeu_si128((__m128i *)(void *)(out + 8 * g), _mm_unpacklo_epi8(b, zero));
        _mm_storeu_si128((__m128i *)(void *)(out + 8 * g + 8), _mm_unpackhi_epi8(b, zero));
    }
#endif
    for (; g < ngroups; g++) {
        const uint64_t v = spread_bits(in[g]);
        for (unsigned i = 0; i < 8; i++)
            out[8 * g + i] = (uint16_t)((v >> (8 * i)) & 1);
    }
}

#define UC(F, W)                                                                                 \
    case W:                                                                                      \
        F(in, out, ngroups, W);                                                                  \
        break;
#define UCASES8(F) UC(F, 1) UC(F, 2) UC(F, 3) UC(F, 4) UC(F, 5) UC(F, 6) UC(F, 7) UC(F, 8)
#define UCASES16(F)                                                                              \
    UCASES8(F) UC(F, 9) UC(F, 10) UC(F, 11) UC(F, 12) UC(F, 13) UC(F, 14) UC(F, 15) UC(F, 16)
#define UCASES32(F)                                                                              \
    UCASES16(F) UC(F, 17) UC(F, 18) UC(F, 19) UC(F, 20) UC(F, 21) UC(F, 22) UC(F, 23) UC(F, 24)  \
    UC(F, 25) UC(F, 26) UC(F, 27) UC(F, 28) UC(F, 29) UC(F, 30) UC(F, 31) UC(F, 32)
#define UCASES64(F)                                                                             \
    UCASES32(F) UC(F, 33) UC(F, 34) UC(F, 35) UC(F, 36) UC(F, 37) UC(F, 38) UC(F, 39) UC(F, 40) \
    UC(F, 41) UC(F, 42) UC(F, 43) UC(F, 44) UC(F, 45) UC(F, 46) UC(F, 47) UC(F, 48) UC(F, 49)   \
    UC(F, 50) UC(F, 51) UC(F, 52) UC(F, 53) UC(F, 54) UC(F, 55) UC(F, 56) UC(F, 57) UC(F, 58)   \
    UC(F, 59) UC(F, 60) UC(F, 61) UC(F, 62) UC(F, 63) UC(F, 64)

/* Dispatch on the width; w == 0 yields zeros and reads nothing. */
#define DEFINE_DISPATCH(SUF, T, CASES)                                                           \
    static void groups_##SUF(const uint8_t *in, T *out, size_t ngroups, unsigned w)              \
    {                                                                                            \
        if (W1_FAST_##SUF && w == 1) {                                                           \
            W1_CALL_##SUF(in, out, ngroups);                                                     \
            return;                                                                              \
        }                                                                                        \
        switch (w) {                                                                             \
            CASES(groups_##SUF##_w)                                                              \
        default:                                                                                 \
            memset(out, 0, ngroups * 8 * sizeof *out);                                           \
            break;                                                                               \
        }                                                                                        \
    }                                                                                            \
    /* Group g of data (data_len bytes present; missing bytes read as 0). */                     \
    static void group_safe_##SUF(const uint8_t *data, size_t data_len, unsigned w, uint64_t g,   \
                                 T out[8])                                                       \
    {                                                                                            \
        uint8_t pad[64 + 16] = {0};                                                              \
        const uint64_t off = g * w;                                                              \
        if (off < data_len) {                                                                    \
            const size_t have = data_len - off < w ? (size_t)(data_len - off) : w;               \
            memcpy(pad, data + off, have);                                                       \
        }                                                                                        \
        groups_##SUF(pad, out, 1, w);                                                            \
    }                                                                                            \
    /* n values starting at value index start of a packed run. */                                \
    static void range_##SUF(const uint8_t *data, size_t data_len, unsigned w, uint64_t start,    \
                            T *out, size_t n)                                                    \
    {                                                                                            \
        uint64_t g = start / 8;                                                                  \
        const unsigned lead = (unsigned)(start % 8);                                             \
        if (lead && n) {                                                                         \
            T tmp[8];                                                                            \
            group_safe_##SUF(data, data_len, w, g, tmp);                                         \
            const size_t k = n < 8u - lead ? n : 8u - lead;                                      \
            memcpy(out, tmp + lead, k * sizeof *out);                                            \
            out += k;                                                                            \
            n -= k;                                                                              \
            g++;                                                                                 \
        }                                                                                        \
        size_t full = n / 8;                                                                     \
        if (full && w) {                                                                         \
            /* Groups whose fast read (up to 8 bytes past the group) stays inside data. */       \
            const uint64_t fit = data_len >= 8 ? (data_len - 8) / w : 0;                         \
            const uint64_t fast_end = fit > g ? fit : g;                                         \
            size_t fast = (size_t)(fast_end - g < full ? fast_end - g : full);                   \
            groups_##SUF(data + g * w, out, fast, w);                                            \
            out += fast * 8;                                                                     \
            n -= fast * 8;                                                                       \
            g += fast;                                                                           \
        } else if (full) {                                                                       \
            memset(out, 0, full * 8 * sizeof *out);                                              \
            out += full * 8;                                                                     \
            n -= full * 8;                                                                       \
            g += full;                                                                           \
        }                                                                                        \
        while (n) {                                                                              \
            T tmp[8];                                                                            \
            group_safe_##SUF(data, data_len, w, g, tmp);                                         \
            const size_t k = n < 8 ? n : 8;                                                      \
            memcpy(out, tmp, k * sizeof *out);                                                   \
            out += k;                                                                            \
            n -= k;                                                                              \
            g++;                                                                                 \
        }                                                                                        \
    }

#define W1_FAST_u8 1
#define W1_FAST_u16 1
#define W1_FAST_u32 0
#define W1_FAST_u64 0
#define W1_CALL_u8(in, out, n) groups1_u8(in, (uint8_t *)(out), n)
#define W1_CALL_u16(in, out, n) groups1_u16(in, (uint16_t *)(out), n)
#define W1_CALL_u32(in, out, n) (void)0
#define W1_CALL_u64(in, out, n) (void)0

DEFINE_DISPATCH(u8, uint8_t, UCASES8)
DEFINE_DISPATCH(u16, uint16_t, UCASES16)
DEFINE_DISPATCH(u32, uint32_t, UCASES32)
DEFINE_DISPATCH(u64, uint64_t, UCASES64)

static pqd_status check_packed(size_t in_len, unsigned w, unsigned max_w, size_t n,
                               pqd_error *err)
{
    if (w > max_w)
        return sv_fail(err, PQD_E_RANGE, 0, "bit width %u over %u", w, max_w);
    const uint64_t need = ((uint64_t)n * w + 7) / 8;
    if (need > in_len)
        return sv_fail(err, PQD_E_TRUNCATED, in_len,
                       "%zu values of %u bits need %llu bytes, %zu present", n, w,
                       (unsigned long long)need, in_len);
    return PQD_OK;
}

#define DEFINE_UNPACK_API(SUF, T, MAXW)                                                          \
    pqd_status pq_unpack_##SUF(const uint8_t *in, size_t in_len, unsigned bit_width, T *out,     \
                               size_t n, pqd_error *err)                                         \
    {                                                                                            \
        const pqd_status st = check_packed(in_len, bit_width, MAXW, n, err);                     \
        if (st != PQD_OK)                                                                        \
            return st;                                                                           \
        range_##SUF(in, in_len, bit_width, 0, out, n);                                           \
        return PQD_OK;                                                                           \
    }

DEFINE_UNPACK_API(u8, uint8_t, 8)
DEFINE_UNPACK_API(u32, uint32_t, 32)
DEFINE_UNPACK_API(u64, uint64_t, 64)

/* ---- hybrid decoder ---- */

pqd_status pq_rle_init(pq_rle_decoder *d, const uint8_t *buf, size_t len, unsigned bit_width,
                       pqd_error *err)
{
    memset(d, 0, sizeof *d);
    if (bit_width > 32)
        return sv_fail(err, PQD_E_RANGE, 0, "RLE/bit-packed: bit width %u over 32", bit_width);
    if (!buf && len)
        return sv_fail(err, PQD_E_INVALID, 0, "RLE/bit-packed: NULL buffer");
    d->buf = buf;
    d->len = len;
    d->bit_width = bit_width;
    return PQD_OK;
}

size_t pq_rle_consumed(const pq_rle_decoder *d)
{
    return d->pos;
}

static pqd_status next_run(pq_rle_decoder *d, pqd_error *err)
{
    const size_t hpos = d->pos;
    if (hpos >= d->len)
        return sv_fail(err, PQD_E_TRUNCATED, hpos,
                       "RLE/bit-packed: runs end at byte %zu before all values were read", hpos);
    uint32_t h;
    if (!pq_read_uleb32(d->buf, d->len, &d->pos, &h))
        return sv_fail(err, d->len - hpos < 5 ? PQD_E_TRUNCATED : PQD_E_CORRUPT, hpos,
                       "RLE/bit-packed: bad run header at byte %zu", hpos);
    const unsigned w = d->bit_width;
    if (h & 1) {
        const uint64_t groups = h >> 1;
        const uint64_t bytes = groups * w;
        const size_t avail = d->len - d->pos;
        d->rle = false;
        d->bp_data = d->pos;
        d->bp_index = 0;
        if (bytes <= avail) {
            d->bp_bytes = (size_t)bytes;
            d->run_left = groups * 8;
        } else { /* cut short by the buffer end: keep the values present */
            d->bp_bytes = avail;
            d->run_left = (uint64_t)avail * 8 / w;
        }
        d->pos += d->bp_bytes;
    } else {
        const unsigned nb = (w + 7) / 8;
        if (nb > d->len - d->pos)
            return sv_fail(err, PQD_E_TRUNCATED, d->pos,
                           "RLE/bit-packed: RLE run value at byte %zu is truncated", d->pos);
        uint32_t v = 0;
        for (unsigned i = 0; i < nb; i++)
            v |= (uint32_t)d->buf[d->pos + i] << (8 * i);
        if (w < 32 && (v >> w) != 0)
            return sv_fail(err, PQD_E_RANGE, d->pos,
                           "RLE/bit-packed: RLE run value %u at byte %zu does not fit %u bits", v,
                           d->pos, w);
        d->pos += nb;
        d->rle = true;
        d->rle_value = v;
        d->run_left = h >> 1;
    }
    return PQD_OK;
}

#define DEFINE_RLE_GET(SUF, T, MAXW)                                                             \
    pqd_status pq_rle_get_##SUF(pq_rle_decoder *d, T *out, size_t n, pqd_error *err)             \
    {                                                                                            \
        if (d->bit_width > MAXW)                                                                 \
            return sv_fail(err, PQD_E_INVALID, 0,                                                \
                           "RLE/bit-packed: bit width %u too wide for " #SUF, d->bit_width);     \
        while (n) {                                                                              \
            if (d->run_left == 0) {                                                              \
                const pqd_status st = next_run(d, err);                                          \
                if (st != PQD_OK)                                                                \
                    return st;                                                                   \
                continue;                                                                        \
            }                                                                                    \
            const size_t k = d->run_left < n ? (size_t)d->run_left : n;                          \
            if (d->rle) {                                                                        \
                const T v = (T)d->rle_value;                                                     \
                if (sizeof(T) == 1 || v == 0)                                                    \
                    memset(out, (int)v, k * sizeof *out);                                        \
                else                                                                             \
                    for (size_t i = 0; i < k; i++)                                               \
                        out[i] = v;                                                              \
            } else {                                                                             \
                range_##SUF(d->buf + d->bp_data, d->bp_bytes, d->bit_width, d->bp_index, out,    \
                            k);                                                                  \
                d->bp_index += k;                                                                \
            }                                                                                    \
            d->run_left -= k;                                                                    \
            out += k;                                                                            \
            n -= k;                                                                              \
        }                                                                                        \
        return PQD_OK;                                                                           \
    }

DEFINE_RLE_GET(u8, uint8_t, 8)
DEFINE_RLE_GET(u16, uint16_t, 16)
DEFINE_RLE_GET(u32, uint32_t, 32)

static void fill_u16(uint16_t *out, uint16_t v, size_t k)
{
    if (v == 0) {
        memset(out, 0, k * sizeof *out);
        return;
    }
    const uint64_t pat = v * 0x0001000100010001ull;
    size_t i = 0;
    for (; i + 8 <= k; i += 8) {
        memcpy(out + i, &pat, 8);
        memcpy(out + i + 4, &pat, 8);
    }
    for (; i < k; i++)
        out[i] = v;
}

/* Count of lv[i] == target and the largest lv[i]. */
static void level_stats(const uint16_t *lv, size_t n, uint16_t target, size_t *count,
                        uint16_t *max)
{
    size_t c = 0, i = 0;
    uint16_t mx = 0;
#if defined(__SSE2__)
    /* Levels are <= 32767, so signed 16-bit max is exact. Lane counters
     * are flushed before they can wrap. */
    const __m128i t = _mm_set1_epi16((short)target);
    __m128i vmax = _mm_setzero_si128();
    while (i + 8 <= n) {
        __m128i acc = _mm_setzero_si128();
        const size_t end = n - i > 8 * 32767 ? i + 8 * 32767 : n;
        for (; i + 8 <= end; i += 8) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(lv + i));
            acc = _mm_sub_epi16(acc, _mm_cmpeq_epi16(v, t));
            vmax = _mm_max_epi16(vmax, v);
        }
        uint16_t lanes[8];
        _mm_storeu_si128((__m128i *)(void *)lanes, acc);
        for (unsigned k = 0; k < 8; k++)
            c += lanes[k];
    }
    uint16_t m8[8];
    _mm_storeu_si128((__m128i *)(void *)m8, vmax);
    for (unsigned k = 0; k < 8; k++)
        mx = m8[k] > mx ? m8[k] : mx;
#endif
    for (; i < n; i++) {
        c += lv[i] == target;
        mx = lv[i] > mx ? lv[i] : mx;
    }
    *count = c;
    *max = mx;
}

pqd_status pq_rle_get_levels(pq_rle_decoder *d, uint16_t *out, size_t n, uint16_t target,
                             size_t *count, uint16_t *max, pqd_error *err)
{
    if (d->bit_width > 15)
        return sv_fail(err, PQD_E_INVALID, 0, "RLE/bit-packed: bit width %u too wide for levels",
                       d->bit_width);
    size_t c = 0;
    uint16_t mx = 0;
    while (n) {
        if (d->run_left == 0) {
            const pqd_status st = next_run(d, err);
            if (st != PQD_OK)
                return st;
            continue;
        }
        const size_t k = d->run_left < n ? (size_t)d->run_left : n;
        if (d->rle) {
            const uint16_t v = (uint16_t)d->rle_value;
            fill_u16(out, v, k);
            c += v == target ? k : 0;
            mx = v > mx ? v : mx;
        } else {
            range_u16(d->buf + d->bp_data, d->bp_bytes, d->bit_width, d->bp_index, out, k);
            d->bp_index += k;
            size_t kc;
            uint16_t km;
            level_stats(out, k, target, &kc, &km);
            c += kc;
            mx = km > mx ? km : mx;
        }
        d->run_left -= k;
        out += k;
        n -= k;
    }
    *count = c;
    *max = mx;
    return PQD_OK;
}

/* ---- deprecated BIT_PACKED (MSB first) ---- */

pqd_status pq_bitpacked_msb_u16(const uint8_t *in, size_t in_len, unsigned bit_width,
                                uint16_t *out, size_t n, pqd_error *err)
{
    const pqd_status st = check_packed(in_len, bit_width, 16, n, err);
    if (st != PQD_OK)
        return st;
    if (bit_width == 0) {
        memset(out, 0, n * sizeof *out);
        return PQD_OK;
    }
    uint64_t bit = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;
        for (unsigned j = 0; j < bit_width; j++, bit++)
            v = (v << 1) | ((in[bit >> 3] >> (7 - (bit & 7))) & 1u);
        out[i] = (uint16_t)v;
    }
    return PQD_OK;
}
