/* Decoding of Parquet data pages (V1 and V2) and dictionary pages into
 * levels and typed value arrays. FUSE-free and I/O-free: the caller supplies
 * the page body bytes (what follows the PageHeader, compressed_page_size
 * bytes) and the header fields.
 *
 * Supported encodings by physical type:
 *   PLAIN                        all types
 *   PLAIN_DICTIONARY,
 *   RLE_DICTIONARY               all types (needs the chunk's pq_dictionary;
 *                                every index is checked < dictionary size)
 *   RLE                          BOOLEAN (4-byte length prefix, V1 and V2)
 *   DELTA_BINARY_PACKED          INT32, INT64 (wrapping arithmetic)
 *   DELTA_LENGTH_BYTE_ARRAY      BYTE_ARRAY
 *   DELTA_BYTE_ARRAY             BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
 *   BYTE_STREAM_SPLIT            FLOAT, DOUBLE, INT32, INT64, FIXED_LEN_BYTE_ARRAY
 * Levels: RLE (hybrid) and, in V1 pages, the deprecated BIT_PACKED.
 * Anything else (ALP, BIT_PACKED values, unknown numbers, a valid encoding
 * on the wrong type) is PQD_E_UNSUPPORTED.
 *
 * Output (pq_page_values): definition and repetition levels as uint16 per
 * level entry (num_values of them, nulls included), and the non-null values
 * only (value k belongs to the k-th entry whose def level is max_def):
 *   BOOLEAN      uint8_t 0/1            INT32   int32_t
 *   INT64        int64_t                INT96   12-byte records (LE nanos of
 *   FLOAT        float                           day, then LE Julian day)
 *   DOUBLE       double                 FIXED_LEN_BYTE_ARRAY  type_length-byte records
 *   BYTE_ARRAY   offsets[num_non_null + 1] into data
 * Output pointers stay valid until the next decode call on the same
 * pq_decoder, and, because some point into the page itself (uncompressed
 * FIXED_LEN_BYTE_ARRAY/INT96 values, DELTA_LENGTH_BYTE_ARRAY payloads) or
 * into the dictionary, only while the caller's body buffer and the
 * pq_dictionary live.
 *
 * Safety: every length and count is checked against the bytes present;
 * num_values is capped (pq_decode_limits.max_values), the uncompressed page
 * size too (max_page_bytes), and byte-array payloads that can outgrow the
 * page (DELTA_BYTE_ARRAY prefixes, dictionary gathering) by max_value_bytes.
 * All allocation is bounded by those limits and the page sizes. Buffers are
 * kept in the pq_decoder and reused across pages. Host must be
 * little-endian.
 *
 * Implemented in planner/decode/: page_decode.c (the decoder, levels,
 * pages), value_decode.c (the values encodings), delta_binary_packed.c. */
#ifndef SIEVE_DECODE_H
#define SIEVE_DECODE_H

#include "codec.h"
#include "decode_error.h"
#include "parquet_meta.h"
#include "parquet_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQ_DECODE_DEFAULT_MAX_VALUES (1u << 24)
#define PQ_DECODE_DEFAULT_MAX_VALUE_BYTES (512ull << 20)
#define PQ_DECODE_MAX_LEVEL 32767u /* max_def / max_rep accepted */
#define PQ_DELTA_MAX_BLOCK_SIZE (1u << 20)

typedef struct {
    uint32_t max_values;      /* page num_values (levels) */
    uint32_t max_page_bytes;  /* uncompressed_page_size; at most PQ_CODEC_MAX_OUTPUT */
    uint64_t max_value_bytes; /* byte-array payload built beyond the page; < 4 GiB */
    bool materialize_dict;    /* dictionary pages: gather values (else indices only) */
} pq_decode_limits;

/* max_values PQ_DECODE_DEFAULT_MAX_VALUES, max_page_bytes
 * PQ_CODEC_MAX_OUTPUT, max_value_bytes PQ_DECODE_DEFAULT_MAX_VALUE_BYTES,
 * materialize_dict true. */
void pq_decode_limits_default(pq_decode_limits *l);

/* The column chunk facts decoding needs (from pq_leaf and ColumnMetaData). */
typedef struct {
    pq_physical_type type;
    int32_t type_length; /* FIXED_LEN_BYTE_ARRAY width (> 0); ignored for other types */
    uint16_t max_def, max_rep;
    int32_t codec;       /* pq_codec */
} pq_column_desc;

/* Header fields of one data page. */
typedef struct {
    bool v2;                        /* DATA_PAGE_V2 */
    int32_t num_values;             /* level entries, nulls included */
    int32_t encoding;               /* values encoding (pq_encoding) */
    int32_t uncompressed_page_size; /* the whole body (levels included), decompressed */
    /* V1 only */
    int32_t def_level_encoding;     /* RLE or BIT_PACKED */
    int32_t rep_level_encoding;
    /* V2 only */
    int32_t num_nulls;
    int32_t num_rows;
    int32_t def_levels_byte_length;
    int32_t rep_levels_byte_length;
    bool is_compressed;
} pq_data_page_info;

typedef struct {
    int32_t num_values;
    int32_t encoding;               /* PLAIN or PLAIN_DICTIONARY (both mean PLAIN) */
    int32_t uncompressed_page_size;
} pq_dict_page_info;

/* From a parsed PageHeader (parquet_meta.h): fills whichever of the two the
 * page type calls for. PQD_E_INVALID for other page types or a missing
 * sub-header. */
pqd_status pq_data_page_info_from_header(const pq_page_header *h, pq_data_page_info *out,
                                         pqd_error *err);
pqd_status pq_dict_page_info_from_header(const pq_page_header *h, pq_dict_page_info *out,
                                         pqd_error *err);

/* A decoded dictionary (owned; free with pq_dictionary_free). */
typedef struct {
    pq_physical_type type;
    uint32_t width;    /* bytes per entry; 0 for BYTE_ARRAY */
    uint32_t count;
    void *values;      /* fixed width: count * width bytes */
    uint32_t *offsets; /* BYTE_ARRAY: count + 1 */
    uint8_t *data;     /* BYTE_ARRAY payload */
} pq_dictionary;

void pq_dictionary_free(pq_dictionary *d);

typedef struct {
    uint32_t num_values;         /* level entries */
    uint32_t num_non_null;       /* values decoded (def == max_def) */
    uint32_t num_rows;           /* entries with rep == 0 (num_values when max_rep == 0) */
    const uint16_t *def_levels;  /* num_values entries; NULL when max_def == 0 */
    const uint16_t *rep_levels;  /* num_values entries; NULL when max_rep == 0 */
    pq_physical_type type;
    uint32_t width;              /* bytes per fixed-width value; 0 for BYTE_ARRAY */
    const void *values;          /* fixed width: num_non_null * width bytes (aligned) */
    const uint32_t *offsets;     /* BYTE_ARRAY: num_non_null + 1, offsets[0] == 0 */
    const uint8_t *data;         /* BYTE_ARRAY payload (may be NULL when empty) */
    const uint32_t *dict_indices;/* dictionary-encoded pages: num_non_null indices; with
                                    materialize_dict off, values/offsets/data are NULL */
    bool dict_encoded;
    int32_t encoding;
} pq_page_values;

typedef struct pq_decoder pq_decoder;

/* limits may be NULL (defaults). Returns NULL when out of memory. */
pq_decoder *pq_decoder_new(const pq_decode_limits *limits);
void pq_decoder_free(pq_decoder *d);

/* Width in bytes of a fixed-width value of the column (1 for BOOLEAN), 0 for
 * BYTE_ARRAY, or -1 for an invalid type/type_length. */
int64_t pq_value_width(pq_physical_type type, int32_t type_length);

/* Decode a dictionary page body (once per column chunk). */
pqd_status pq_decode_dictionary(pq_decoder *d, const pq_column_desc *col,
                                const pq_dict_page_info *info, const uint8_t *body,
                                size_t body_len, pq_dictionary *out, pqd_error *err);

/* Decode one data page body. dict: the chunk's dictionary, needed for
 * dictionary-encoded pages (NULL otherwise). */
pqd_status pq_decode_data_page(pq_decoder *d, const pq_column_desc *col,
                               const pq_data_page_info *info, const uint8_t *body,
                               size_t body_len, const pq_dictionary *dict, pq_page_values *out,
                               pqd_error *err);

/* DELTA_BINARY_PACKED on its own: exactly n values (the header's total count
 * must equal n); *consumed gets the encoded length. */
pqd_status pq_delta_decode_i32(const uint8_t *buf, size_t len, size_t n, int32_t *out,
                               size_t *consumed, pqd_error *err);
pqd_status pq_delta_decode_i64(const uint8_t *buf, size_t len, size_t n, int64_t *out,
                               size_t *consumed, pqd_error *err);

#endif
