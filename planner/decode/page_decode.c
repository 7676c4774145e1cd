/* Data and dictionary pages: the decoder and its buffers, the page body
 * decompressed, levels decoded, values handed to value_decode.c; see
 * decode.h. */
#include "decode_internal.h"

#include "rle_hybrid.h"
#include "sv_name.h"

#include <stdlib.h>

const uint8_t pqd_empty_bytes[8] = {0};
const uint32_t pqd_zero_offset[1] = {0};

/* ---------------- the decoder ---------------- */

void *pqd_buf_get(dbuf *b, size_t n)
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

const char *pqd_encoding_name(int e)
{
    static const char *const names[] = {
        [PQ_ENC_PLAIN] = "PLAIN", [PQ_ENC_PLAIN_DICTIONARY] = "PLAIN_DICTIONARY",
        [PQ_ENC_RLE] = "RLE", [PQ_ENC_BIT_PACKED] = "BIT_PACKED",
        [PQ_ENC_DELTA_BINARY_PACKED] = "DELTA_BINARY_PACKED",
        [PQ_ENC_DELTA_LENGTH_BYTE_ARRAY] = "DELTA_LENGTH_BYTE_ARRAY",
        [PQ_ENC_DELTA_BYTE_ARRAY] = "DELTA_BYTE_ARRAY", [PQ_ENC_RLE_DICTIONARY] = "RLE_DICTIONARY",
        [PQ_ENC_BYTE_STREAM_SPLIT] = "BYTE_STREAM_SPLIT", [10] = "ALP",
    };
    return SV_NAME(names, e, "unknown");
}

/* The format's names; "unknown" for any other value. */
const char *pqd_type_name(int t)
{
    return t >= PQ_BOOLEAN && t <= PQ_FIXED_LEN_BYTE_ARRAY ? pq_physical_type_name(t) : "unknown";
}

pqd_status pqd_nomem(pqd_error *err, const char *what, size_t n)
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

/* What both page decoders check first: the column, and the body (never
 * NULL after this, even when empty). */
static pqd_status check_page(const pq_decoder *d, const pq_column_desc *col,
                             const uint8_t **body, size_t body_len, uint32_t *width,
                             pqd_error *err)
{
    const pqd_status st = check_col(d, col, width, err);
    if (st != PQD_OK)
        return st;
    if (!*body && body_len)
        return sv_fail(err, PQD_E_INVALID, 0, "NULL page body");
    if (!*body)
        *body = pqd_empty_bytes;
    return PQD_OK;
}

/* A page header's num_values against the limit; what: "" or "dictionary ". */
static pqd_status check_num_values(const pq_decoder *d, int32_t n, const char *what,
                                   pqd_error *err)
{
    if (n < 0)
        return sv_fail(err, PQD_E_CORRUPT, 0, "%snum_values %d is negative", what, n);
    if ((uint32_t)n > d->lim.max_values)
        return sv_fail(err, PQD_E_LIMIT, 0, "%snum_values %d over the limit %u", what, n,
                       d->lim.max_values);
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
        *out = src_len ? src : pqd_empty_bytes;
        return PQD_OK;
    }
    pqd_status st = pq_codec_precheck(codec, src, src_len, unc, err);
    if (st != PQD_OK)
        return st;
    uint8_t *dst = pqd_buf_get(&d->decomp, unc);
    if (!dst)
        return pqd_nomem(err, "decompression buffer", unc);
    st = pq_decompress(d->codec, codec, src, src_len, dst, unc, err);
    if (st != PQD_OK)
        return st;
    *out = dst;
    return PQD_OK;
}

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
                   pqd_encoding_name(enc), enc);
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
    uint32_t width = 0;
    pqd_status st = check_page(d, col, &body, body_len, &width, err);
    if (st != PQD_OK || (st = check_num_values(d, info->num_values, "", err)) != PQD_OK)
        return st;
    if (info->uncompressed_page_size < 0)
        return sv_fail(err, PQD_E_CORRUPT, 0, "uncompressed_page_size %d is negative",
                       info->uncompressed_page_size);
    if ((uint32_t)info->uncompressed_page_size > d->lim.max_page_bytes)
        return sv_fail(err, PQD_E_LIMIT, 0, "uncompressed_page_size %d over the limit %u",
                       info->uncompressed_page_size, d->lim.max_page_bytes);
    const size_t nv = (size_t)info->num_values;
    const size_t unc = (size_t)info->uncompressed_page_size;
    uint16_t *def = NULL, *rep = NULL;
    if (col->max_def && !(def = pqd_buf_get(&d->def, nv * 2)))
        return pqd_nomem(err, "definition levels", nv * 2);
    if (col->max_rep && !(rep = pqd_buf_get(&d->rep, nv * 2)))
        return pqd_nomem(err, "repetition levels", nv * 2);

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
    st = pqd_decode_values(&c, info->encoding, dict);
    if (st != PQD_OK) {
        const pq_page_values keep = {0};
        *out = keep;
        return st;
    }
    if (out->dict_encoded && !d->lim.materialize_dict && out->num_non_null > 0)
        return PQD_OK; /* indices only: values, offsets and data stay NULL */
    if (col->type == PQ_BYTE_ARRAY) {
        if (!out->offsets)
            out->offsets = pqd_zero_offset;
        if (!out->data)
            out->data = pqd_empty_bytes;
    } else if (!out->values) {
        out->values = pqd_empty_bytes;
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
    uint32_t width = 0;
    pqd_status st = check_page(d, col, &body, body_len, &width, err);
    if (st != PQD_OK)
        return st;
    if (info->encoding != PQ_ENC_PLAIN && info->encoding != PQ_ENC_PLAIN_DICTIONARY)
        return sv_fail(err, PQD_E_UNSUPPORTED, 0, "dictionary page encoding %s (%d)",
                       pqd_encoding_name(info->encoding), info->encoding);
    if ((st = check_num_values(d, info->num_values, "dictionary ", err)) != PQD_OK)
        return st;
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
        st = pqd_plain_byte_array(page, unc, n, &out->offsets, &out->data, NULL, NULL, err);
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
            return pqd_nomem(err, "dictionary", n);
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
                       pqd_type_name(col->type), (unsigned long long)need, unc);
    void *v = malloc(need ? (size_t)need : 1);
    if (!v)
        return pqd_nomem(err, "dictionary", (size_t)need);
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
