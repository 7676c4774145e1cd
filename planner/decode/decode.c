/* Data and dictionary page decoding; see decode.h. */
#include "decode.h"

#include "parquet_meta.h"
#include "rle_hybrid.h"

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "decode.c assumes a little-endian host (PLAIN values are copied as is)"
#endif

/* ---------------- reusable buffers ---------------- */

typedef struct {
    void *p;
    size_t cap;
} dbuf;

/* At least n bytes (contents not preserved); NULL when out of memory. */
static void *dbuf_get(dbuf *b, size_t n)
{
    if (n == 0)
        n = 1;
    if (n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < n)
            c = c > SIZE_MAX / 2 ? n : c * 2;
        free(b->p);
        b->p = malloc(c);
        b->cap = b->p ? c : 0;
    }
    return b->p;
}

static void dbuf_free(dbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->cap = 0;
}

struct pq_decoder {
    pq_decode_limits lim;
    pq_codec_ctx *codec;
    dbuf decomp;  /* decompressed body (V1) or values section (V2) */
    dbuf def, rep;
    dbuf values;  /* fixed-width values */
    dbuf offsets; /* BYTE_ARRAY offsets */
    dbuf data;    /* BYTE_ARRAY payload */
    dbuf idx;     /* dictionary indices */
    dbuf tmp1, tmp2;
};

static const uint8_t empty_bytes[8];
static const uint32_t zero_offset[1];

void pq_decode_limits_default(pq_decode_limits *l)
{
    l->max_values = PQ_DECODE_DEFAULT_MAX_VALUES;
    l->max_page_bytes = PQ_CODEC_MAX_OUTPUT;
    l->max_value_bytes = PQ_DECODE_DEFAULT_MAX_VALUE_BYTES;
    l->materialize_dict = true;
}

pq_decoder *pq_decoder_new(const pq_decode_limits *limits)
{
    pq_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    pq_decode_limits_default(&d->lim);
    if (limits) {
        d->lim = *limits;
        if (d->lim.max_page_bytes > PQ_CODEC_MAX_OUTPUT)
            d->lim.max_page_bytes = PQ_CODEC_MAX_OUTPUT;
        if (d->lim.max_value_bytes > UINT32_MAX - 1)
            d->lim.max_value_bytes = UINT32_MAX - 1;
    }
    d->codec = pq_codec_ctx_new();
    if (!d->codec) {
        free(d);
        return NULL;
    }
    return d;
}

void pq_decoder_free(pq_decoder *d)
{
    if (!d)
        return;
    pq_codec_ctx_free(d->codec);
    dbuf *all[] = {&d->decomp, &d->def, &d->rep, &d->values, &d->offsets,
                   &d->data, &d->idx, &d->tmp1, &d->tmp2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        dbuf_free(all[i]);
    free(d);
}

void pq_dictionary_free(pq_dictionary *d)
{
    if (!d)
        return;
    free(d->values);
    free(d->offsets);
    free(d->data);
    memset(d, 0, sizeof *d);
}

static uint32_t le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static const char *enc_name(int e)
{
    switch (e) {
    case PQ_ENC_PLAIN: return "PLAIN";
    case PQ_ENC_PLAIN_DICTIONARY: return "PLAIN_DICTIONARY";
    case PQ_ENC_RLE: return "RLE";
    case PQ_ENC_BIT_PACKED: return "BIT_PACKED";
    case PQ_ENC_DELTA_BINARY_PACKED: return "DELTA_BINARY_PACKED";
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return "DELTA_LENGTH_BYTE_ARRAY";
    case PQ_ENC_DELTA_BYTE_ARRAY: return "DELTA_BYTE_ARRAY";
    case PQ_ENC_RLE_DICTIONARY: return "RLE_DICTIONARY";
    case PQ_ENC_BYTE_STREAM_SPLIT: return "BYTE_STREAM_SPLIT";
    case 10: return "ALP";
    }
    return "unknown";
}

static const char *type_name(int t)
{
    static const char *const names[] = {"BOOLEAN", "INT32",      "INT64",
                                        "INT96",   "FLOAT",      "DOUBLE",
                                        "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t <= 7 ? names[t] : "unknown";
}

static pqd_status nomem(pqd_error *err, const char *what, size_t n)
{
    return sv_fail(err, PQD_E_NOMEM, 0, "%s: cannot allocate %zu bytes", what, n);
}

int64_t pq_value_width(pq_physical_type type, int32_t type_length)
{
    switch (type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32:
    case PQ_FLOAT: return 4;
    case PQ_INT64:
    case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_BYTE_ARRAY: return 0;
    case PQ_FIXED_LEN_BYTE_ARRAY: return type_length > 0 ? type_length : -1;
    }
    return -1;
}

static pqd_status check_col(const pq_decoder *d, const pq_column_desc *col, uint32_t *width,
                            pqd_error *err)
{
    if (!col)
        return sv_fail(err, PQD_E_INVALID, 0, "no column description");
    const int64_t w = pq_value_width(col->type, col->type_length);
    if (w < 0)
        return sv_fail(err, PQD_E_INVALID, 0, "column: bad physical type %d / type_length %d",
                       (int)col->type, (int)col->type_length);
    if (w > (int64_t)d->lim.max_page_bytes)
        return sv_fail(err, PQD_E_LIMIT, 0, "column: type_length %lld over the page limit",
                       (long long)w);
    if (col->max_def > PQ_DECODE_MAX_LEVEL || col->max_rep > PQ_DECODE_MAX_LEVEL)
        return sv_fail(err, PQD_E_LIMIT, 0, "column: max levels %u/%u over %u",
                       col->max_def, col->max_rep, PQ_DECODE_MAX_LEVEL);
    *width = (uint32_t)w;
    return PQD_OK;
}

/* The decompressed bytes of src (src itself when not compressed). */
static pqd_status inflate_body(pq_decoder *d, int codec, const uint8_t *src, size_t src_len,
                               size_t unc, const uint8_t **out, pqd_error *err)
{
    if (codec == PQ_CODEC_UNCOMPRESSED) {
        if (src_len != unc)
            return sv_fail(err, PQD_E_MISMATCH, 0,
                           "uncompressed page: %zu bytes stored, uncompressed size says %zu",
                           src_len, unc);
        *out = src_len ? src : empty_bytes;
        return PQD_OK;
    }
    pqd_status st = pq_codec_precheck(codec, src, src_len, unc, err);
    if (st != PQD_OK)
        return st;
    uint8_t *dst = dbuf_get(&d->decomp, unc);
    if (!dst)
        return nomem(err, "decompression buffer", unc);
    st = pq_decompress(d->codec, codec, src, src_len, dst, unc, err);
    if (st != PQD_OK)
        return st;
    *out = dst;
    return PQD_OK;
}

/* ---------------- DELTA_BINARY_PACKED ---------------- */

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

/* ---------------- levels ---------------- */

/* Check levels <= max_level; count entries equal to `count_value`. */
static void scan_levels(const uint16_t *lv, size_t n, unsigned count_value, size_t *count,
                        uint16_t *max)
{
    uint16_t mx = 0;
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        const uint16_t v = lv[i];
        mx = v > mx ? v : mx;
        c += v == count_value;
    }
    *count = c;
    *max = mx;
}

static pqd_status check_max_level(uint16_t mx, unsigned max_level, const char *what,
                                  pqd_error *err)
{
    if (mx > max_level)
        return sv_fail(err, PQD_E_RANGE, 0, "%s: level %u over the maximum %u", what, mx,
                       max_level);
    return PQD_OK;
}

/* Hybrid levels in buf[0..len): n values, *count of those equal to target. */
static pqd_status hybrid_levels(const uint8_t *buf, size_t len, unsigned max_level,
                                uint16_t *out, size_t n, unsigned target, size_t *count,
                                const char *what, pqd_error *err)
{
    pq_rle_decoder r;
    uint16_t mx = 0;
    pqd_status st = pq_rle_init(&r, buf, len, pq_bit_width(max_level), err);
    if (st == PQD_OK)
        st = pq_rle_get_levels(&r, out, n, (uint16_t)target, count, &mx, err);
    if (st != PQD_OK) {
        sv_error_prefix(err, "%s", what);
        return st;
    }
    return check_max_level(mx, max_level, what, err);
}

/* V1 level section at page[*pos]: RLE (4-byte length + hybrid) or BIT_PACKED. */
static pqd_status v1_levels(const uint8_t *page, size_t page_len, size_t *pos, int enc,
                            unsigned max_level, uint16_t *out, size_t n, unsigned target,
                            size_t *count, const char *what, pqd_error *err)
{
    const size_t start = *pos;
    if (enc == PQ_ENC_RLE) {
        if (page_len - start < 4)
            return sv_fail(err, PQD_E_TRUNCATED, start, "%s: length prefix truncated", what);
        const uint32_t len = le32(page + start);
        if (len > page_len - start - 4)
            return sv_fail(err, PQD_E_TRUNCATED, start,
                           "%s: length %u past the page end (%zu bytes left)", what, len,
                           page_len - start - 4);
        *pos = start + 4 + len;
        return hybrid_levels(page + start + 4, len, max_level, out, n, target, count, what, err);
    }
    if (enc == PQ_ENC_BIT_PACKED) {
        const unsigned w = pq_bit_width(max_level);
        const pqd_status st = pq_bitpacked_msb_u16(page + start, page_len - start, w, out, n, err);
        if (st != PQD_OK) {
            sv_error_prefix(err, "%s", what);
            return st;
        }
        *pos = start + (size_t)(((uint64_t)n * w + 7) / 8);
        uint16_t mx;
        scan_levels(out, n, target, count, &mx);
        return check_max_level(mx, max_level, what, err);
    }
    return sv_fail(err, PQD_E_UNSUPPORTED, start, "%s: unsupported level encoding %s (%d)", what,
                   enc_name(enc), enc);
}

/* ---------------- values ---------------- */

typedef struct {
    pq_decoder *d;
    const pq_column_desc *col;
    uint32_t width;
    const uint8_t *v; /* values section */
    size_t vlen;
    size_t n;         /* values to decode */
    pq_page_values *out;
    pqd_error *err;
} vctx;

/* PLAIN BYTE_ARRAY: n length-prefixed values into offsets + payload, either
 * in the decoder's reusable buffers (off_buf/data_buf) or, when those are
 * NULL, in fresh allocations the caller owns (dictionary pages). */
static pqd_status plain_byte_array(const uint8_t *v, size_t vlen, size_t n,
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
    uint32_t *off = owned ? malloc((n + 1) * sizeof *off) : dbuf_get(off_buf, (n + 1) * 4);
    uint8_t *data = owned ? malloc(vlen ? vlen : 1) : dbuf_get(data_buf, vlen);
    pqd_status st = PQD_OK;
    if (!off || !data) {
        st = nomem(err, "PLAIN BYTE_ARRAY", vlen);
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
        uint8_t *dst = dbuf_get(&c->d->values, n);
        if (!dst)
            return nomem(c->err, "PLAIN BOOLEAN", n);
        const pqd_status st = pq_unpack_u8(c->v, c->vlen, 1, dst, n, c->err);
        if (st != PQD_OK)
            return st;
        out->values = dst;
        return PQD_OK;
    }
    case PQ_BYTE_ARRAY: {
        uint32_t *off;
        uint8_t *data;
        const pqd_status st = plain_byte_array(c->v, c->vlen, n, &off, &data, &c->d->offsets,
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
                       type_name(c->col->type), n, (unsigned long long)need, c->vlen);
    if (c->col->type == PQ_INT96 || c->col->type == PQ_FIXED_LEN_BYTE_ARRAY) {
        out->values = c->v; /* byte records: no alignment needed */
        return PQD_OK;
    }
    void *dst = dbuf_get(&c->d->values, (size_t)need);
    if (!dst)
        return nomem(c->err, "PLAIN values", (size_t)need);
    if (need)
        memcpy(dst, c->v, (size_t)need);
    out->values = dst;
    return PQD_OK;
}

static pqd_status dec_rle_bool(vctx *c)
{
    if (c->col->type != PQ_BOOLEAN)
        return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "RLE values on a %s column",
                       type_name(c->col->type));
    uint8_t *dst = dbuf_get(&c->d->values, c->n);
    if (!dst)
        return nomem(c->err, "RLE BOOLEAN", c->n);
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
    if (t != PQ_INT32 && t != PQ_INT64)
        return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "DELTA_BINARY_PACKED on a %s column",
                       type_name(t));
    void *dst = dbuf_get(&c->d->values, c->n * c->width);
    if (!dst)
        return nomem(c->err, "DELTA_BINARY_PACKED", c->n * c->width);
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
    if (c->col->type != PQ_BYTE_ARRAY)
        return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "DELTA_LENGTH_BYTE_ARRAY on a %s column",
                       type_name(c->col->type));
    uint32_t *off = dbuf_get(&c->d->offsets, (c->n + 1) * sizeof *off);
    if (!off)
        return nomem(c->err, "DELTA_LENGTH_BYTE_ARRAY", (c->n + 1) * 4);
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
    if (t != PQ_BYTE_ARRAY && t != PQ_FIXED_LEN_BYTE_ARRAY)
        return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "DELTA_BYTE_ARRAY on a %s column",
                       type_name(t));
    const size_t n = c->n;
    int32_t *pre = dbuf_get(&c->d->tmp1, n * 4);
    int32_t *suf = dbuf_get(&c->d->tmp2, n * 4);
    if (!pre || !suf)
        return nomem(c->err, "DELTA_BYTE_ARRAY", n * 8);
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
    uint8_t *dst = dbuf_get(t == PQ_BYTE_ARRAY ? &c->d->data : &c->d->values, (size_t)total);
    uint32_t *off = t == PQ_BYTE_ARRAY ? dbuf_get(&c->d->offsets, (n + 1) * 4) : NULL;
    if (!dst || (t == PQ_BYTE_ARRAY && !off))
        return nomem(c->err, "DELTA_BYTE_ARRAY", (size_t)total);
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
    const pq_physical_type t = c->col->type;
    if (t != PQ_FLOAT && t != PQ_DOUBLE && t != PQ_INT32 && t != PQ_INT64 &&
        t != PQ_FIXED_LEN_BYTE_ARRAY)
        return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "BYTE_STREAM_SPLIT on a %s column",
                       type_name(t));
    const size_t n = c->n, k = c->width;
    const uint64_t need = (uint64_t)n * k;
    if (need != c->vlen)
        return sv_fail(c->err, need > c->vlen ? PQD_E_TRUNCATED : PQD_E_MISMATCH, 0,
                       "BYTE_STREAM_SPLIT: %zu values of %zu bytes need exactly %llu bytes, "
                       "%zu present",
                       n, k, (unsigned long long)need, c->vlen);
    uint8_t *dst = dbuf_get(&c->d->values, (size_t)need);
    if (!dst)
        return nomem(c->err, "BYTE_STREAM_SPLIT", (size_t)need);
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
        uint32_t *off = dbuf_get(&c->d->offsets, (n + 1) * 4);
        uint8_t *data = dbuf_get(&c->d->data, (size_t)total);
        if (!off || !data)
            return nomem(c->err, "dictionary gather", (size_t)total);
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
    void *dst = dbuf_get(&c->d->values, (size_t)total);
    if (!dst)
        return nomem(c->err, "dictionary gather", (size_t)total);
    if (!indices_below(idx, n, dict->count))
        return bad_index(c, idx, dict);
    switch (w) {
    case 1: {
        const uint8_t *s = dict->values;
        uint8_t *o = dst;
        for (size_t i = 0; i < n; i++)
            o[i] = s[idx[i]];
        break;
    }
    case 4: {
        const uint32_t *s = dict->values;
        uint32_t *o = dst;
        for (size_t i = 0; i < n; i++)
            o[i] = s[idx[i]];
        break;
    }
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
    default: {
        const uint8_t *s = dict->values;
        uint8_t *o = dst;
        for (size_t i = 0; i < n; i++)
            memcpy(o + i * w, s + (size_t)idx[i] * w, w);
        break;
    }
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
                       "dictionary of type %s/%u used for a %s/%u column", type_name(dict->type),
                       dict->width, type_name(c->col->type), c->width);
    c->out->dict_encoded = true;
    uint32_t *idx = dbuf_get(&c->d->idx, c->n * 4);
    if (!idx)
        return nomem(c->err, "dictionary indices", c->n * 4);
    c->out->dict_indices = idx;
    if (c->n == 0) {
        c->out->values = empty_bytes;
        c->out->offsets = zero_offset;
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

static pqd_status decode_values(vctx *c, int enc, const pq_dictionary *dict)
{
    switch (enc) {
    case PQ_ENC_PLAIN: return dec_plain(c);
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: return dec_dictionary(c, dict);
    case PQ_ENC_RLE: return dec_rle_bool(c);
    case PQ_ENC_DELTA_BINARY_PACKED: return dec_delta_binary(c);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return dec_delta_length(c);
    case PQ_ENC_DELTA_BYTE_ARRAY: return dec_delta_byte_array(c);
    case PQ_ENC_BYTE_STREAM_SPLIT: return dec_byte_stream_split(c);
    default:
        return sv_fail(c->err, PQD_E_UNSUPPORTED, 0, "unsupported values encoding %s (%d)",
                       enc_name(enc), enc);
    }
}

/* ---------------- pages ---------------- */

pqd_status pq_decode_data_page(pq_decoder *d, const pq_column_desc *col,
                               const pq_data_page_info *info, const uint8_t *body,
                               size_t body_len, const pq_dictionary *dict, pq_page_values *out,
                               pqd_error *err)
{
    if (!d || !info || !out)
        return sv_fail(err, PQD_E_INVALID, 0, "NULL argument");
    memset(out, 0, sizeof *out);
    uint32_t width;
    pqd_status st = check_col(d, col, &width, err);
    if (st != PQD_OK)
        return st;
    if (!body && body_len)
        return sv_fail(err, PQD_E_INVALID, 0, "NULL page body");
    if (!body)
        body = empty_bytes;
    if (info->num_values < 0)
        return sv_fail(err, PQD_E_CORRUPT, 0, "num_values %d is negative", info->num_values);
    if ((uint32_t)info->num_values > d->lim.max_values)
        return sv_fail(err, PQD_E_LIMIT, 0, "num_values %d over the limit %u", info->num_values,
                       d->lim.max_values);
    if (info->uncompressed_page_size < 0)
        return sv_fail(err, PQD_E_CORRUPT, 0, "uncompressed_page_size %d is negative",
                       info->uncompressed_page_size);
    if ((uint32_t)info->uncompressed_page_size > d->lim.max_page_bytes)
        return sv_fail(err, PQD_E_LIMIT, 0, "uncompressed_page_size %d over the limit %u",
                       info->uncompressed_page_size, d->lim.max_page_bytes);
    const size_t nv = (size_t)info->num_values;
    const size_t unc = (size_t)info->uncompressed_page_size;
    uint16_t *def = NULL, *rep = NULL;
    if (col->max_def && !(def = dbuf_get(&d->def, nv * 2)))
        return nomem(err, "definition levels", nv * 2);
    if (col->max_rep && !(rep = dbuf_get(&d->rep, nv * 2)))
        return nomem(err, "repetition levels", nv * 2);

    const uint8_t *vals;
    size_t vals_len;
    size_t nn = nv, rows = nv; /* entries with def == max_def / rep == 0 */
    if (!info->v2) {
        const uint8_t *page;
        st = inflate_body(d, col->codec, body, body_len, unc, &page, err);
        if (st != PQD_OK)
            return st;
        size_t pos = 0;
        if (rep && (st = v1_levels(page, unc, &pos, info->rep_level_encoding, col->max_rep, rep,
                                   nv, 0, &rows, "repetition levels", err)) != PQD_OK)
            return st;
        if (def && (st = v1_levels(page, unc, &pos, info->def_level_encoding, col->max_def, def,
                                   nv, col->max_def, &nn, "definition levels", err)) != PQD_OK)
            return st;
        vals = page + pos;
        vals_len = unc - pos;
    } else {
        const int32_t rl = info->rep_levels_byte_length, dl = info->def_levels_byte_length;
        if (rl < 0 || dl < 0)
            return sv_fail(err, PQD_E_CORRUPT, 0, "V2 level byte lengths %d/%d negative", rl, dl);
        const size_t lv = (size_t)rl + (size_t)dl;
        if (lv > body_len || lv > unc)
            return sv_fail(err, PQD_E_TRUNCATED, 0,
                           "V2 level byte lengths %d+%d exceed the page (%zu stored, %zu "
                           "uncompressed)",
                           rl, dl, body_len, unc);
        if (rep && (st = hybrid_levels(body, (size_t)rl, col->max_rep, rep, nv, 0, &rows,
                                       "repetition levels", err)) != PQD_OK)
            return st;
        if (def && (st = hybrid_levels(body + rl, (size_t)dl, col->max_def, def, nv,
                                       col->max_def, &nn, "definition levels", err)) != PQD_OK)
            return st;
        const int codec = info->is_compressed ? col->codec : PQ_CODEC_UNCOMPRESSED;
        st = inflate_body(d, codec, body + lv, body_len - lv, unc - lv, &vals, err);
        if (st != PQD_OK) {
            sv_error_prefix(err, "V2 values section");
            return st;
        }
        vals_len = unc - lv;
    }

    if (info->v2) {
        if (rep && nv > 0 && rep[0] != 0)
            return sv_fail(err, PQD_E_CORRUPT, 0,
                           "V2 page starts inside a row (first repetition level %u)", rep[0]);
        if (info->num_rows != (int32_t)rows)
            return sv_fail(err, PQD_E_MISMATCH, 0, "V2 num_rows %d but the levels hold %zu rows",
                           info->num_rows, rows);
        if (info->num_nulls < 0 || info->num_nulls > info->num_values)
            return sv_fail(err, PQD_E_CORRUPT, 0, "V2 num_nulls %d out of range 0..%d",
                           info->num_nulls, info->num_values);
    }

    out->num_values = (uint32_t)nv;
    out->num_non_null = (uint32_t)nn;
    out->num_rows = (uint32_t)rows;
    out->def_levels = def;
    out->rep_levels = rep;
    out->type = col->type;
    out->width = width;
    out->encoding = info->encoding;
    vctx c = {d, col, width, vals, vals_len, nn, out, err};
    st = decode_values(&c, info->encoding, dict);
    if (st != PQD_OK) {
        const pq_page_values keep = {0};
        *out = keep;
        return st;
    }
    if (out->dict_encoded && !d->lim.materialize_dict && out->num_non_null > 0)
        return PQD_OK; /* indices only: values, offsets and data stay NULL */
    if (col->type == PQ_BYTE_ARRAY) {
        if (!out->offsets)
            out->offsets = zero_offset;
        if (!out->data)
            out->data = empty_bytes;
    } else if (!out->values) {
        out->values = empty_bytes;
    }
    return PQD_OK;
}

pqd_status pq_decode_dictionary(pq_decoder *d, const pq_column_desc *col,
                                const pq_dict_page_info *info, const uint8_t *body,
                                size_t body_len, pq_dictionary *out, pqd_error *err)
{
    if (!d || !info || !out)
        return sv_fail(err, PQD_E_INVALID, 0, "NULL argument");
    memset(out, 0, sizeof *out);
    uint32_t width;
    pqd_status st = check_col(d, col, &width, err);
    if (st != PQD_OK)
        return st;
    if (!body && body_len)
        return sv_fail(err, PQD_E_INVALID, 0, "NULL page body");
    if (!body)
        body = empty_bytes;
    if (info->encoding != PQ_ENC_PLAIN && info->encoding != PQ_ENC_PLAIN_DICTIONARY)
        return sv_fail(err, PQD_E_UNSUPPORTED, 0, "dictionary page encoding %s (%d)",
                       enc_name(info->encoding), info->encoding);
    if (info->num_values < 0)
        return sv_fail(err, PQD_E_CORRUPT, 0, "dictionary num_values %d is negative",
                       info->num_values);
    if ((uint32_t)info->num_values > d->lim.max_values)
        return sv_fail(err, PQD_E_LIMIT, 0, "dictionary num_values %d over the limit %u",
                       info->num_values, d->lim.max_values);
    if (info->uncompressed_page_size < 0 ||
        (uint32_t)info->uncompressed_page_size > d->lim.max_page_bytes)
        return sv_fail(err, info->uncompressed_page_size < 0 ? PQD_E_CORRUPT : PQD_E_LIMIT, 0,
                       "dictionary uncompressed_page_size %d out of range",
                       info->uncompressed_page_size);
    const size_t unc = (size_t)info->uncompressed_page_size;
    const size_t n = (size_t)info->num_values;
    const uint8_t *page;
    st = inflate_body(d, col->codec, body, body_len, unc, &page, err);
    if (st != PQD_OK) {
        sv_error_prefix(err, "dictionary page");
        return st;
    }
    out->type = col->type;
    out->width = width;
    if (col->type == PQ_BYTE_ARRAY) {
        st = plain_byte_array(page, unc, n, &out->offsets, &out->data, NULL, NULL, err);
        if (st != PQD_OK) {
            sv_error_prefix(err, "dictionary page");
            memset(out, 0, sizeof *out);
            return st;
        }
        out->count = (uint32_t)n;
        return PQD_OK;
    }
    if (col->type == PQ_BOOLEAN) {
        uint8_t *v = malloc(n ? n : 1);
        if (!v)
            return nomem(err, "dictionary", n);
        st = pq_unpack_u8(page, unc, 1, v, n, err);
        if (st != PQD_OK) {
            free(v);
            sv_error_prefix(err, "dictionary page");
            return st;
        }
        out->values = v;
        out->count = (uint32_t)n;
        return PQD_OK;
    }
    const uint64_t need = (uint64_t)n * width;
    if (need > unc)
        return sv_fail(err, PQD_E_TRUNCATED, 0,
                       "dictionary page: %zu %s values need %llu bytes, %zu present", n,
                       type_name(col->type), (unsigned long long)need, unc);
    void *v = malloc(need ? (size_t)need : 1);
    if (!v)
        return nomem(err, "dictionary", (size_t)need);
    if (need)
        memcpy(v, page, (size_t)need);
    out->values = v;
    out->count = (uint32_t)n;
    return PQD_OK;
}

/* ---------------- header adapters ---------------- */

pqd_status pq_data_page_info_from_header(const pq_page_header *h, pq_data_page_info *out,
                                         pqd_error *err)
{
    memset(out, 0, sizeof *out);
    if (h->type == PQ_PAGE_DATA && h->has_data_page_header) {
        out->v2 = false;
        out->num_values = h->data.num_values;
        out->encoding = h->data.encoding;
        out->def_level_encoding = h->data.definition_level_encoding;
        out->rep_level_encoding = h->data.repetition_level_encoding;
        out->uncompressed_page_size = h->uncompressed_page_size;
        return PQD_OK;
    }
    if (h->type == PQ_PAGE_DATA_V2 && h->has_data_page_header_v2) {
        out->v2 = true;
        out->num_values = h->v2.num_values;
        out->encoding = h->v2.encoding;
        out->num_nulls = h->v2.num_nulls;
        out->num_rows = h->v2.num_rows;
        out->def_levels_byte_length = h->v2.definition_levels_byte_length;
        out->rep_levels_byte_length = h->v2.repetition_levels_byte_length;
        out->is_compressed = h->v2.is_compressed;
        out->uncompressed_page_size = h->uncompressed_page_size;
        out->def_level_encoding = PQ_ENC_RLE;
        out->rep_level_encoding = PQ_ENC_RLE;
        return PQD_OK;
    }
    return sv_fail(err, PQD_E_INVALID, 0, "page type %d is not a data page with its header",
                   h->type);
}

pqd_status pq_dict_page_info_from_header(const pq_page_header *h, pq_dict_page_info *out,
                                         pqd_error *err)
{
    memset(out, 0, sizeof *out);
    if (h->type != PQ_PAGE_DICTIONARY || !h->has_dictionary_page_header)
        return sv_fail(err, PQD_E_INVALID, 0, "page type %d is not a dictionary page", h->type);
    out->num_values = h->dict.num_values;
    out->encoding = h->dict.encoding;
    out->uncompressed_page_size = h->uncompressed_page_size;
    return PQD_OK;
}
