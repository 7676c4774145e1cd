/* The values encodings of a page: PLAIN, RLE (booleans), the DELTA
 * encodings, BYTE_STREAM_SPLIT and dictionary indices (gathered through
 * the dictionary); see decode.h. */
#include "decode_internal.h"

#include "rle_hybrid.h"

#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

pqd_status pqd_plain_byte_array(const uint8_t *v, size_t vlen, size_t n,
                                uint32_t **offsets_out, uint8_t **data_out, dbuf *off_buf,
                                dbuf *data_buf, pqd_error *err)
{
    if ((uint64_t)n * 4 > vlen)
        return sv_fail(err, PQD_E_TRUNCATED, 0,
                       "PLAIN BYTE_ARRAY: %zu values need at least %llu bytes, %zu present", n,
                       (unsigned long long)n * 4, vlen);
    /* Payload bytes are at most vlen - 4n once every value is read, but a
     * value may claim more before a later length prefix turns out missing:
     * size the buffer for the whole section. */
    const bool owned = !off_buf;
    uint32_t *off = owned ? malloc((n + 1) * sizeof *off) : pqd_buf_get(off_buf, (n + 1) * 4);
    uint8_t *data = owned ? malloc(vlen ? vlen : 1) : pqd_buf_get(data_buf, vlen);
    pqd_status st = PQD_OK;
    if (!off || !data) {
        st = pqd_nomem(err, "PLAIN BYTE_ARRAY", vlen);
        goto out;
    }
    size_t p = 0, o = 0;
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (vlen - p < 4) {
            st = sv_fail(err, PQD_E_TRUNCATED, p, "PLAIN BYTE_ARRAY: value %zu length truncated",
                         i);
            goto out;
        }
        const uint32_t len = le32(v + p);
        p += 4;
        if (len > vlen - p) {
            st = sv_fail(err, PQD_E_TRUNCATED, p - 4,
                         "PLAIN BYTE_ARRAY: value %zu of %u bytes past the end (%zu left)", i,
                         len, vlen - p);
            goto out;
        }
        memcpy(data + o, v + p, len);
        p += len;
        o += len;
        off[i + 1] = (uint32_t)o;
    }
    *offsets_out = off;
    *data_out = data;
out:
    if (st != PQD_OK && owned) {
        free(off);
        free(data);
    }
    return st;
}

static pqd_status dec_plain(vctx *c)
{
    pq_page_values *out = c->out;
    const size_t n = c->n;
    switch (c->col->type) {
    case PQ_BOOLEAN: {
        uint8_t *dst = pqd_buf_get(&c->d->values, n);
        if (!dst)
            return pqd_nomem(c->err, "PLAIN BOOLEAN", n);
        const pqd_status st = pq_unpack_u8(c->v, c->vlen, 1, dst, n, c->err);
        if (st != PQD_OK)
            return st;
        out->values = dst;
        return PQD_OK;
    }
    case PQ_BYTE_ARRAY: {
        uint32_t *off;
        uint8_t *data;
        const pqd_status st = pqd_plain_byte_array(c->v, c->vlen, n, &off, &data, &c->d->offsets,
                                                   &c->d->data, c->err);
        if (st != PQD_OK)
            return st;
        out->offsets = off;
        out->data = data;
        return PQD_OK;
    }
    default:
        break;
    }
    const uint64_t need = (uint64_t)n * c->width;
    if (need > c->vlen)
        return sv_fail(c->err, PQD_E_TRUNCATED, 0,
                       "PLAIN %s: %zu values need %llu bytes, %zu present",
                       pqd_type_name(c->col->type), n, (unsigned long long)need, c->vlen);
    if (c->col->type == PQ_INT96 || c->col->type == PQ_FIXED_LEN_BYTE_ARRAY) {
        out->values = c->v; /* byte records: no alignment needed */
        return PQD_OK;
    }
    void *dst = pqd_buf_get(&c->d->values, (size_t)need);
    if (!dst)
        return pqd_nomem(c->err, "PLAIN values", (size_t)need);
    if (need)
        memcpy(dst, c->v, (size_t)need);
    out->values = dst;
    return PQD_OK;
}

static pqd_status dec_rle_bool(vctx *c)
{
    uint8_t *dst = pqd_buf_get(&c->d->values, c->n);
    if (!dst)
        return pqd_nomem(c->err, "RLE BOOLEAN", c->n);
    c->out->values = dst;
    if (c->n == 0 && c->vlen == 0)
        return PQD_OK;
    if (c->vlen < 4)
        return sv_fail(c->err, PQD_E_TRUNCATED, 0, "RLE BOOLEAN: length prefix truncated");
    const uint32_t len = le32(c->v);
    if (len > c->vlen - 4)
        return sv_fail(c->err, PQD_E_TRUNCATED, 0,
                       "RLE BOOLEAN: length %u past the page end (%zu left)", len, c->vlen - 4);
    pq_rle_decoder r;
    pqd_status st = pq_rle_init(&r, c->v + 4, len, 1, c->err);
    if (st == PQD_OK)
        st = pq_rle_get_u8(&r, dst, c->n, c->err);
    if (st != PQD_OK)
        sv_error_prefix(c->err, "RLE BOOLEAN");
    return st;
}

static pqd_status dec_delta_binary(vctx *c)
{
    const pq_physical_type t = c->col->type;
    void *dst = pqd_buf_get(&c->d->values, c->n * c->width);
    if (!dst)
        return pqd_nomem(c->err, "DELTA_BINARY_PACKED", c->n * c->width);
    size_t used;
    const pqd_status st = t == PQ_INT32
                              ? pq_delta_decode_i32(c->v, c->vlen, c->n, dst, &used, c->err)
                              : pq_delta_decode_i64(c->v, c->vlen, c->n, dst, &used, c->err);
    if (st != PQD_OK)
        return st;
    c->out->values = dst;
    return PQD_OK;
}

/* Lengths via DELTA_BINARY_PACKED into offs[1..n] as prefix sums; checks
 * every length >= 0 and the sum against `avail`. */
static pqd_status lengths_to_offsets(uint32_t *offs, size_t n, uint64_t avail, const char *what,
                                     pqd_error *err)
{
    const int32_t *lens = (const int32_t *)(offs + 1);
    uint64_t sum = 0;
    offs[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const int32_t l = lens[i];
        if (l < 0)
            return sv_fail(err, PQD_E_CORRUPT, 0, "%s: value %zu has negative length %d", what,
                           i, l);
        sum += (uint32_t)l;
        if (sum > avail)
            return sv_fail(err, PQD_E_TRUNCATED, 0,
                           "%s: lengths add up past the %llu data bytes present", what,
                           (unsigned long long)avail);
        offs[i + 1] = (uint32_t)sum;
    }
    return PQD_OK;
}

static pqd_status dec_delta_length(vctx *c)
{
    uint32_t *off = pqd_buf_get(&c->d->offsets, (c->n + 1) * sizeof *off);
    if (!off)
        return pqd_nomem(c->err, "DELTA_LENGTH_BYTE_ARRAY", (c->n + 1) * 4);
    size_t used;
    pqd_status st = pq_delta_decode_i32(c->v, c->vlen, c->n, (int32_t *)(off + 1), &used, c->err);
    if (st != PQD_OK) {
        sv_error_prefix(c->err, "DELTA_LENGTH_BYTE_ARRAY lengths");
        return st;
    }
    st = lengths_to_offsets(off, c->n, c->vlen - used, "DELTA_LENGTH_BYTE_ARRAY", c->err);
    if (st != PQD_OK)
        return st;
    c->out->offsets = off;
    c->out->data = c->v + used;
    return PQD_OK;
}

static pqd_status dec_delta_byte_array(vctx *c)
{
    const pq_physical_type t = c->col->type;
    const size_t n = c->n;
    int32_t *pre = pqd_buf_get(&c->d->tmp1, n * 4);
    int32_t *suf = pqd_buf_get(&c->d->tmp2, n * 4);
    if (!pre || !suf)
        return pqd_nomem(c->err, "DELTA_BYTE_ARRAY", n * 8);
    size_t used1, used2;
    pqd_status st = pq_delta_decode_i32(c->v, c->vlen, n, pre, &used1, c->err);
    if (st != PQD_OK) {
        sv_error_prefix(c->err, "DELTA_BYTE_ARRAY prefix lengths");
        return st;
    }
    st = pq_delta_decode_i32(c->v + used1, c->vlen - used1, n, suf, &used2, c->err);
    if (st != PQD_OK) {
        sv_error_prefix(c->err, "DELTA_BYTE_ARRAY suffix lengths");
        return st;
    }
    const uint8_t *sdata = c->v + used1 + used2;
    const size_t slen = c->vlen - used1 - used2;
    /* Pass 1: validate and size. */
    uint64_t prev = 0, total = 0, sufsum = 0;
    for (size_t i = 0; i < n; i++) {
        if (pre[i] < 0 || suf[i] < 0)
            return sv_fail(c->err, PQD_E_CORRUPT, 0,
                           "DELTA_BYTE_ARRAY: value %zu has negative prefix/suffix length", i);
        if ((uint64_t)pre[i] > prev)
            return sv_fail(c->err, PQD_E_CORRUPT, 0,
                           "DELTA_BYTE_ARRAY: value %zu prefix %d longer than the previous "
                           "value (%llu)",
                           i, pre[i], (unsigned long long)prev);
        const uint64_t l = (uint64_t)pre[i] + (uint64_t)suf[i];
        if (t == PQ_FIXED_LEN_BYTE_ARRAY && l != c->width)
            return sv_fail(c->err, PQD_E_CORRUPT, 0,
                           "DELTA_BYTE_ARRAY: value %zu has %llu bytes, type_length is %u", i,
                           (unsigned long long)l, c->width);
        sufsum += (uint64_t)suf[i];
        total += l;
        prev = l;
        if (sufsum > slen)
            return sv_fail(c->err, PQD_E_TRUNCATED, 0,
                           "DELTA_BYTE_ARRAY: suffixes add up past the %zu bytes present", slen);
        if (total > c->d->lim.max_value_bytes)
            return sv_fail(c->err, PQD_E_LIMIT, 0,
                           "DELTA_BYTE_ARRAY: values add up to over %llu bytes",
                           (unsigned long long)c->d->lim.max_value_bytes);
    }
    /* Pass 2: build. */
    uint8_t *dst = pqd_buf_get(t == PQ_BYTE_ARRAY ? &c->d->data : &c->d->values, (size_t)total);
    uint32_t *off = t == PQ_BYTE_ARRAY ? pqd_buf_get(&c->d->offsets, (n + 1) * 4) : NULL;
    if (!dst || (t == PQ_BYTE_ARRAY && !off))
        return pqd_nomem(c->err, "DELTA_BYTE_ARRAY", (size_t)total);
    size_t o = 0, prev_start = 0, sp = 0;
    if (off)
        off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t p = (size_t)pre[i], s = (size_t)suf[i];
        if (p)
            memcpy(dst + o, dst + prev_start, p);
        if (s)
            memcpy(dst + o + p, sdata + sp, s);
        prev_start = o;
        sp += s;
        o += p + s;
        if (off)
            off[i + 1] = (uint32_t)o;
    }
    if (off) {
        c->out->offsets = off;
        c->out->data = dst;
    } else {
        c->out->values = dst;
    }
    return PQD_OK;
}

/* BYTE_STREAM_SPLIT with 4 and 8 streams: value i gathers byte i of each
 * stream. SSE2 interleaves 16 values per step (unpacklo/hi of bytes, then
 * 16-bit (and 32-bit) lanes); the tail, and non-SSE2 hosts, go bytewise. */
static void bss_decode4(const uint8_t *v, size_t n, uint8_t *dst)
{
    const uint8_t *s0 = v, *s1 = v + n, *s2 = v + 2 * n, *s3 = v + 3 * n;
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s0 + i));
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s1 + i));
        const __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s2 + i));
        const __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(s3 + i));
        const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
        const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
        uint8_t *o = dst + i * 4;
        _mm_storeu_si128((__m128i *)(void *)o, _mm_unpacklo_epi16(ab_lo, cd_lo));
        _mm_storeu_si128((__m128i *)(void *)(o + 16), _mm_unpackhi_epi16(ab_lo, cd_lo));
        _mm_storeu_si128((__m128i *)(void *)(o + 32), _mm_unpacklo_epi16(ab_hi, cd_hi));
        _mm_storeu_si128((__m128i *)(void *)(o + 48), _mm_unpackhi_epi16(ab_hi, cd_hi));
    }
#endif
    for (; i < n; i++) {
        uint8_t *o = dst + i * 4;
        o[0] = s0[i];
        o[1] = s1[i];
        o[2] = s2[i];
        o[3] = s3[i];
    }
}

static void bss_decode8(const uint8_t *v, size_t n, uint8_t *dst)
{
    const uint8_t *s[8];
    for (unsigned j = 0; j < 8; j++)
        s[j] = v + j * n;
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        __m128i x[8];
        for (unsigned j = 0; j < 8; j++)
            x[j] = _mm_loadu_si128((const __m128i *)(const void *)(s[j] + i));
        /* bytes: streams (0,1) (2,3) (4,5) (6,7) */
        const __m128i p01l = _mm_unpacklo_epi8(x[0], x[1]), p01h = _mm_unpackhi_epi8(x[0], x[1]);
        const __m128i p23l = _mm_unpacklo_epi8(x[2], x[3]), p23h = _mm_unpackhi_epi8(x[2], x[3]);
        const __m128i p45l = _mm_unpacklo_epi8(x[4], x[5]), p45h = _mm_unpackhi_epi8(x[4], x[5]);
        const __m128i p67l = _mm_unpacklo_epi8(x[6], x[7]), p67h = _mm_unpackhi_epi8(x[6], x[7]);
        /* 16-bit lanes: bytes 0-3 and 4-7 of values 0-3, 4-7, 8-11, 12-15 */
        const __m128i q0 = _mm_unpacklo_epi16(p01l, p23l), q1 = _mm_unpackhi_epi16(p01l, p23l);
        const __m128i q2 = _mm_unpacklo_epi16(p01h, p23h), q3 = _mm_unpackhi_epi16(p01h, p23h);
        const __m128i r0 = _mm_unpacklo_epi16(p45l, p67l), r1 = _mm_unpackhi_epi16(p45l, p67l);
        const __m128i r2 = _mm_unpacklo_epi16(p45h, p67h), r3 = _mm_unpackhi_epi16(p45h, p67h);
        uint8_t *o = dst + i * 8;
        const __m128i out[8] = {_mm_unpacklo_epi32(q0, r0), _mm_unpackhi_epi32(q0, r0),
                                _mm_unpacklo_epi32(q1, r1), _mm_unpackhi_epi32(q1, r1),
                                _mm_unpacklo_epi32(q2, r2), _mm_unpackhi_epi32(q2, r2),
                                _mm_unpacklo_epi32(q3, r3), _mm_unpackhi_epi32(q3, r3)};
        for (unsigned j = 0; j < 8; j++)
            _mm_storeu_si128((__m128i *)(void *)(o + 16 * j), out[j]);
    }
#endif
    for (; i < n; i++)
        for (unsigned j = 0; j < 8; j++)
            dst[i * 8 + j] = s[j][i];
}

static pqd_status dec_byte_stream_split(vctx *c)
{
    const size_t n = c->n, k = c->width;
    const uint64_t need = (uint64_t)n * k;
    if (need != c->vlen)
        return sv_fail(c->err, need > c->vlen ? PQD_E_TRUNCATED : PQD_E_MISMATCH, 0,
                       "BYTE_STREAM_SPLIT: %zu values of %zu bytes need exactly %llu bytes, "
                       "%zu present",
                       n, k, (unsigned long long)need, c->vlen);
    uint8_t *dst = pqd_buf_get(&c->d->values, (size_t)need);
    if (!dst)
        return pqd_nomem(c->err, "BYTE_STREAM_SPLIT", (size_t)need);
    const uint8_t *v = c->v;
    if (k == 4)
        bss_decode4(v, n, dst);
    else if (k == 8)
        bss_decode8(v, n, dst);
    else
        for (size_t j = 0; j < k; j++) {
            const uint8_t *s = v + j * n;
            for (size_t i = 0; i < n; i++)
                dst[i * k + j] = s[i];
        }
    c->out->values = dst;
    return PQD_OK;
}

static pqd_status bad_index(vctx *c, const uint32_t *idx, const pq_dictionary *dict)
{
    uint32_t mx = 0;
    for (size_t i = 0; i < c->n; i++)
        mx = idx[i] > mx ? idx[i] : mx;
    return sv_fail(c->err, PQD_E_RANGE, 0,
                   "dictionary index %u out of range (dictionary has %u entries)", mx,
                   dict->count);
}

/* True when every idx[i] < count (SSE2: four unsigned compares per step). */
static bool indices_below(const uint32_t *idx, size_t n, uint32_t count)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i bias = _mm_set1_epi32((int)0x80000000u);
    const __m128i lim = _mm_xor_si128(_mm_set1_epi32((int)count), bias);
    __m128i bad = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
        const __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(idx + i)),
                                        bias);
        /* v >= lim  <=>  !(lim > v) */
        bad = _mm_or_si128(bad, _mm_andnot_si128(_mm_cmpgt_epi32(lim, v), _mm_set1_epi32(-1)));
    }
    if (_mm_movemask_epi8(bad))
        return false;
#endif
    for (; i < n; i++)
        if (idx[i] >= count)
            return false;
    return true;
}

/* o[i] = entry idx[i] of w bytes; inlined with a constant w, one load and
 * one store per value. */
static inline __attribute__((always_inline)) void gather(uint8_t *o, const uint8_t *s,
                                                         const uint32_t *idx, size_t n, size_t w)
{
    for (size_t i = 0; i < n; i++)
        memcpy(o + i * w, s + (size_t)idx[i] * w, w);
}

/* Gather dictionary values by index (indices checked first for fixed-width
 * values, during the sizing pass for byte arrays). */
static pqd_status gather_dict(vctx *c, const pq_dictionary *dict, const uint32_t *idx)
{
    const size_t n = c->n;
    const uint32_t count = dict->count;
    if (dict->type == PQ_BYTE_ARRAY) {
        uint64_t total = 0;
        const uint32_t *doff = dict->offsets;
        for (size_t i = 0; i < n; i++) {
            const uint32_t k = idx[i];
            if (k >= count)
                return bad_index(c, idx, dict);
            total += doff[k + 1] - doff[k];
        }
        if (total > c->d->lim.max_value_bytes)
            return sv_fail(c->err, PQD_E_LIMIT, 0,
                           "dictionary values add up to %llu bytes, over the limit %llu",
                           (unsigned long long)total,
                           (unsigned long long)c->d->lim.max_value_bytes);
        uint32_t *off = pqd_buf_get(&c->d->offsets, (n + 1) * 4);
        uint8_t *data = pqd_buf_get(&c->d->data, (size_t)total);
        if (!off || !data)
            return pqd_nomem(c->err, "dictionary gather", (size_t)total);
        uint32_t o = 0;
        off[0] = 0;
        for (size_t i = 0; i < n; i++) {
            const uint32_t a = doff[idx[i]], l = doff[idx[i] + 1] - a;
            memcpy(data + o, dict->data + a, l);
            o += l;
            off[i + 1] = o;
        }
        c->out->offsets = off;
        c->out->data = data;
        return PQD_OK;
    }
    const size_t w = dict->width;
    const uint64_t total = (uint64_t)n * w;
    if (total > c->d->lim.max_value_bytes)
        return sv_fail(c->err, PQD_E_LIMIT, 0,
                       "dictionary values add up to %llu bytes, over the limit %llu",
                       (unsigned long long)total, (unsigned long long)c->d->lim.max_value_bytes);
    void *dst = pqd_buf_get(&c->d->values, (size_t)total);
    if (!dst)
        return pqd_nomem(c->err, "dictionary gather", (size_t)total);
    if (!indices_below(idx, n, dict->count))
        return bad_index(c, idx, dict);
    switch (w) {
    case 1: gather(dst, dict->values, idx, n, 1); break;
    case 4: gather(dst, dict->values, idx, n, 4); break;
    case 8: {
        const uint64_t *s = dict->values;
        uint64_t *o = dst;
        size_t i = 0;
        for (; i + 4 <= n; i += 4) {
            const uint64_t a = s[idx[i]], b = s[idx[i + 1]], x = s[idx[i + 2]], y = s[idx[i + 3]];
            o[i] = a;
            o[i + 1] = b;
            o[i + 2] = x;
            o[i + 3] = y;
        }
        for (; i < n; i++)
            o[i] = s[idx[i]];
        break;
    }
    default: gather(dst, dict->values, idx, n, w); break;
    }
    c->out->values = dst;
    return PQD_OK;
}

static pqd_status dec_dictionary(vctx *c, const pq_dictionary *dict)
{
    if (!dict)
        return sv_fail(c->err, PQD_E_INVALID, 0,
                       "dictionary-encoded page but no dictionary page was decoded");
    if (dict->type != c->col->type || dict->width != c->width)
        return sv_fail(c->err, PQD_E_INVALID, 0,
                       "dictionary of type %s/%u used for a %s/%u column",
                       pqd_type_name(dict->type), dict->width, pqd_type_name(c->col->type),
                       c->width);
    c->out->dict_encoded = true;
    uint32_t *idx = pqd_buf_get(&c->d->idx, c->n * 4);
    if (!idx)
        return pqd_nomem(c->err, "dictionary indices", c->n * 4);
    c->out->dict_indices = idx;
    if (c->n == 0) {
        c->out->values = pqd_empty_bytes;
        c->out->offsets = pqd_zero_offset;
        return PQD_OK;
    }
    if (c->vlen < 1)
        return sv_fail(c->err, PQD_E_TRUNCATED, 0, "dictionary indices: bit width byte missing");
    const unsigned w = c->v[0];
    if (w > 32)
        return sv_fail(c->err, PQD_E_RANGE, 0, "dictionary indices: bit width %u over 32", w);
    pq_rle_decoder r;
    pqd_status st = pq_rle_init(&r, c->v + 1, c->vlen - 1, w, c->err);
    if (st == PQD_OK)
        st = pq_rle_get_u32(&r, idx, c->n, c->err);
    if (st != PQD_OK) {
        sv_error_prefix(c->err, "dictionary indices");
        return st;
    }
    if (c->d->lim.materialize_dict)
        return gather_dict(c, dict, idx); /* checks the indices as it goes */
    for (size_t i = 0; i < c->n; i++)
        if (idx[i] >= dict->count)
            return bad_index(c, idx, dict);
    return PQD_OK;
}

#define TYPE(t) (1u << (t))
#define ANY_TYPE 0xffu

/* The values encodings besides the dictionary ones, and the physical types
 * each applies to. */
static const struct {
    int enc;
    const char *what; /* in "<what> on a <type> column" */
    uint32_t types;   /* a bit per pq_physical_type */
    pqd_status (*dec)(vctx *c);
} value_decoders[] = {
    {PQ_ENC_PLAIN, "PLAIN", ANY_TYPE, dec_plain},
    {PQ_ENC_RLE, "RLE values", TYPE(PQ_BOOLEAN), dec_rle_bool},
    {PQ_ENC_DELTA_BINARY_PACKED, "DELTA_BINARY_PACKED", TYPE(PQ_INT32) | TYPE(PQ_INT64),
     dec_delta_binary},
    {PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, "DELTA_LENGTH_BYTE_ARRAY", TYPE(PQ_BYTE_ARRAY),
     dec_delta_length},
    {PQ_ENC_DELTA_BYTE_ARRAY, "DELTA_BYTE_ARRAY", TYPE(PQ_BYTE_ARRAY) | TYPE(PQ_FIXED_LEN_BYTE_ARRAY),
     dec_delta_byte_array},
    {PQ_ENC_BYTE_STREAM_SPLIT, "BYTE_STREAM_SPLIT",
     TYPE(PQ_FLOAT) | TYPE(PQ_DOUBLE) | TYPE(PQ_INT32) | TYPE(PQ_INT64) |
         TYPE(PQ_FIXED_LEN_BYTE_ARRAY),
     dec_byte_stream_split},
};

pqd_status pqd_decode_values(vctx *c, int enc, const pq_dictionary *dict)
{
    if (enc == PQ_ENC_PLAIN_DICTIONARY || enc == PQ_ENC_RLE_DICTIONARY)
        return dec_dictionary(c, dict);
    for (size_t i = 0; i < sizeof value_decoders / sizeof value_decoders[0]; i++) {
        if (value_decoders[i].enc != enc)
            continue;
        const pq_physical_type t = c->col->type;
        const uint32_t types = value_decoders[i].types;
        if (types != ANY_TYPE && ((unsigned)t >= 8 || !(types & TYPE(t))))
            return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "%s on a %s column",
                           value_decoders[i].what, pqd_type_name(t));
        return value_decoders[i].dec(c);
    }
    return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "unsupported values encoding %s (%d)",
                   pqd_encoding_name(enc), enc);
}
