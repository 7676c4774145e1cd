/* DELTA_BINARY_PACKED integers (and the lengths of the DELTA byte-array
 * encodings); see decode.h. */
#include "decode_internal.h"

#include "rle_hybrid.h"

static uint64_t zigzag64(uint64_t v)
{
    return (v >> 1) ^ (0 - (v & 1));
}

#define DEFINE_DELTA(SUF, T, UT, MAXW, UNPACK)                                                   \
    pqd_status pq_delta_decode_##SUF(const uint8_t *buf, size_t len, size_t n, T *out,           \
                                     size_t *consumed, pqd_error *err)                           \
    {                                                                                            \
        size_t pos = 0;                                                                          \
        uint32_t block_size, mb;                                                                 \
        uint64_t total, first;                                                                   \
        if (!pq_read_uleb32(buf, len, &pos, &block_size))                                        \
            return sv_fail(err, PQD_E_CORRUPT, pos, "DELTA_BINARY_PACKED: bad block size");      \
        if (!pq_read_uleb32(buf, len, &pos, &mb))                                                \
            return sv_fail(err, PQD_E_CORRUPT, pos,                                              \
                           "DELTA_BINARY_PACKED: bad miniblock count");                          \
        if (!pq_read_uleb64(buf, len, &pos, &total))                                             \
            return sv_fail(err, PQD_E_CORRUPT, pos, "DELTA_BINARY_PACKED: bad value count");     \
        if (!pq_read_uleb64(buf, len, &pos, &first))                                             \
            return sv_fail(err, PQD_E_CORRUPT, pos, "DELTA_BINARY_PACKED: bad first value");     \
        if (block_size == 0 || block_size % 128 != 0 || block_size > PQ_DELTA_MAX_BLOCK_SIZE)    \
            return sv_fail(err, PQD_E_CORRUPT, 0,                                                \
                           "DELTA_BINARY_PACKED: block size %u is not a multiple of 128 in "     \
                           "128..%u",                                                            \
                           block_size, PQ_DELTA_MAX_BLOCK_SIZE);                                 \
        if (mb == 0 || block_size % mb != 0 || (block_size / mb) % 32 != 0)                      \
            return sv_fail(err, PQD_E_CORRUPT, 0,                                                \
                           "DELTA_BINARY_PACKED: %u miniblocks per block of %u values do not "   \
                           "hold a multiple of 32 values each",                                  \
                           mb, block_size);                                                      \
        if (total != (uint64_t)n)                                                                \
            return sv_fail(err, PQD_E_MISMATCH, 0,                                               \
                           "DELTA_BINARY_PACKED: header counts %llu values, %zu expected",       \
                           (unsigned long long)total, n);                                        \
        const uint32_t vpm = block_size / mb;                                                    \
        UT *o = (UT *)out;                                                                       \
        if (n == 0) {                                                                            \
            *consumed = pos;                                                                     \
            return PQD_OK;                                                                       \
        }                                                                                        \
        UT last = (UT)zigzag64(first);                                                           \
        o[0] = last;                                                                             \
        size_t i = 1;                                                                            \
        while (i < n) {                                                                          \
            uint64_t mdz;                                                                        \
            const size_t bpos = pos;                                                             \
            if (!pq_read_uleb64(buf, len, &pos, &mdz))                                           \
                return sv_fail(err, pos >= len ? PQD_E_TRUNCATED : PQD_E_CORRUPT, bpos,          \
                               "DELTA_BINARY_PACKED: bad min delta at byte %zu (value %zu of "   \
                               "%zu)",                                                           \
                               bpos, i, n);                                                      \
            const UT min_delta = (UT)zigzag64(mdz);                                              \
            if (mb > len - pos)                                                                  \
                return sv_fail(err, PQD_E_TRUNCATED, pos,                                        \
                               "DELTA_BINARY_PACKED: miniblock widths at byte %zu truncated",    \
                               pos);                                                             \
            const uint8_t *widths = buf + pos;                                                   \
            pos += mb;                                                                           \
            for (uint32_t m = 0; m < mb && i < n; m++) {                                         \
                const unsigned w = widths[m];                                                    \
                if (w > MAXW)                                                                    \
                    return sv_fail(err, PQD_E_RANGE, (size_t)(widths + m - buf),                 \
                                   "DELTA_BINARY_PACKED: miniblock bit width %u over %u", w,     \
                                   MAXW);                                                        \
                const size_t cnt = n - i < vpm ? n - i : vpm;                                    \
                const size_t bytes = (size_t)vpm * w / 8;                                        \
                if (bytes > len - pos)                                                           \
                    return sv_fail(err, PQD_E_TRUNCATED, pos,                                    \
                                   "DELTA_BINARY_PACKED: miniblock at byte %zu needs %zu "       \
                                   "bytes, %zu left",                                            \
                                   pos, bytes, len - pos);                                       \
                UNPACK(buf + pos, bytes, w, o + i, cnt, NULL);                                   \
                UT *p = o + i;                                                                   \
                for (size_t k = 0; k < cnt; k++) {                                               \
                    last += min_delta + p[k];                                                    \
                    p[k] = last;                                                                 \
                }                                                                                \
                pos += bytes;                                                                    \
                i += cnt;                                                                        \
            }                                                                                    \
        }                                                                                        \
        *consumed = pos;                                                                         \
        return PQD_OK;                                                                           \
    }

DEFINE_DELTA(i32, int32_t, uint32_t, 32, pq_unpack_u32)
DEFINE_DELTA(i64, int64_t, uint64_t, 64, pq_unpack_u64)
