/* What the page decoder's parts share (page_decode.c: the decoder, levels
 * and pages; value_decode.c: the values encodings; delta_binary_packed.c).
 * Private to planner/decode/. */
#ifndef SIEVE_DECODE_INTERNAL_H
#define SIEVE_DECODE_INTERNAL_H

#include "decode.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the page decoder assumes a little-endian host (PLAIN values are copied as is)"
#endif

/* A reusable buffer of the decoder. */
typedef struct {
    void *p;
    size_t cap;
} dbuf;

/* At least n bytes (contents not preserved); NULL when out of memory. */
void *pqd_buf_get(dbuf *b, size_t n);

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

/* Returned for empty outputs, so that they are never NULL. */
extern const uint8_t pqd_empty_bytes[8];
extern const uint32_t pqd_zero_offset[1];

static inline uint32_t le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Names in messages ("unknown" for numbers out of range). */
const char *pqd_encoding_name(int e);
const char *pqd_type_name(int t);
/* PQD_E_NOMEM "WHAT: cannot allocate N bytes". */
pqd_status pqd_nomem(pqd_error *err, const char *what, size_t n);

/* ---------------- values (value_decode.c) ---------------- */

/* The values section of one page being decoded. */
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

/* n PLAIN BYTE_ARRAY values into offsets + payload: in the decoder's
 * buffers (off_buf/data_buf), or when those are NULL in fresh allocations
 * the caller owns (dictionary pages). */
pqd_status pqd_plain_byte_array(const uint8_t *v, size_t vlen, size_t n, uint32_t **offsets_out,
                                uint8_t **data_out, dbuf *off_buf, dbuf *data_buf,
                                pqd_error *err);
/* The c->n values of encoding enc into c->out. */
pqd_status pqd_decode_values(vctx *c, int enc, const pq_dictionary *dict);

#endif
