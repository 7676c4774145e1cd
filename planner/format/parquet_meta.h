/* Parquet metadata decoding: footer location, FileMetaData, the schema tree
 * resolved into leaf columns, Statistics, ColumnIndex, OffsetIndex and
 * PageHeader. FUSE-free and I/O-free: every function parses byte buffers the
 * caller supplies.
 *
 * Limits (a malformed or hostile input gets an error naming the field and
 * the byte offset, never a crash, hang or unbounded allocation):
 *   - footer (FileMetaData) length      <= PQ_MAX_FOOTER_LEN (64 MiB)
 *   - schema elements                   <= PQ_MAX_SCHEMA_ELEMENTS (100 000)
 *   - schema tree depth                 <= PQ_MAX_SCHEMA_DEPTH (64)
 *   - row groups                        <= PQ_MAX_ROW_GROUPS (1 000 000)
 *   - columns in every row group        == number of schema leaves
 *   - any binary/string                 <= PQ_MAX_STRING_LEN (16 MiB)
 *   - thrift nesting                    <= TC_MAX_DEPTH (64)
 *   - list/map counts                   <= bytes left in the buffer
 *   - memory held by one pq_file_meta   <= PQ_MAX_DECODED_BYTES (1 GiB)
 *
 * Ownership: pq_file_meta and pq_column_index keep a private copy of the
 * bytes they were parsed from, so every pq_bytes in them stays valid until
 * the matching free. pq_page_header owns nothing: its statistics point into
 * the buffer given to pq_page_header_parse.
 *
 * All parse functions return TC_OK or an error code and fill *err (which may
 * be NULL) with the code, byte offset and a message such as
 * "row_groups[2].columns[0].meta_data.total_compressed_size: field 7 has wire
 * type binary, expected i64 (at byte 1234)".
 *
 * One header, one file per part (planner/format/): meta_footer.c (footer
 * location, parsing from a tail), meta_file.c (FileMetaData, row groups,
 * column chunks), meta_schema.c (schema, leaves), meta_statistics.c,
 * page_index.c (OffsetIndex, ColumnIndex), page_header.c, page_crc.c,
 * meta_names.c (enum names), meta_arena.c, meta_fields.c (the struct reader
 * they share); column_resolve.h resolves column names to leaves. */
#ifndef SIEVE_PARQUET_META_H
#define SIEVE_PARQUET_META_H

#include "parquet_types.h"
#include "thrift_compact.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQ_MAX_FOOTER_LEN (64u << 20)
#define PQ_MAX_SCHEMA_ELEMENTS 100000u
#define PQ_MAX_SCHEMA_DEPTH 64u
#define PQ_MAX_ROW_GROUPS 1000000u
#define PQ_MAX_STRING_LEN (16u << 20)
#define PQ_MAX_DECODED_BYTES (1ull << 30)

/* Bytes after the footer: 4-byte LE footer length, then "PAR1". */
#define PQ_TAIL_LEN 8u

typedef struct {
    const uint8_t *ptr; /* NULL when absent */
    uint32_t len;
} pq_bytes;

/* ---------------- logical types ---------------- */

/* LogicalType union members; values are the thrift field ids. */
typedef enum {
    PQ_LT_NONE = 0,
    PQ_LT_STRING = 1,
    PQ_LT_MAP = 2,
    PQ_LT_LIST = 3,
    PQ_LT_ENUM = 4,
    PQ_LT_DECIMAL = 5,
    PQ_LT_DATE = 6,
    PQ_LT_TIME = 7,
    PQ_LT_TIMESTAMP = 8,
    PQ_LT_INTEGER = 10,
    PQ_LT_UNKNOWN = 11, /* "NullType": always null */
    PQ_LT_JSON = 12,
    PQ_LT_BSON = 13,
    PQ_LT_UUID = 14,
    PQ_LT_FLOAT16 = 15,
    PQ_LT_VARIANT = 16,
    PQ_LT_GEOMETRY = 17,
    PQ_LT_GEOGRAPHY = 18,
    PQ_LT_VECTOR = 19,
    PQ_LT_OTHER = 255, /* a union member this decoder does not know; see raw_id */
} pq_logical_kind;

typedef enum {
    PQ_UNIT_NONE = 0,
    PQ_UNIT_MILLIS = 1,
    PQ_UNIT_MICROS = 2,
    PQ_UNIT_NANOS = 3,
} pq_time_unit;

typedef struct {
    pq_logical_kind kind;
    int16_t raw_id;           /* union field id as read */
    int32_t decimal_scale;    /* DECIMAL */
    int32_t decimal_precision;
    bool adjusted_to_utc;     /* TIME, TIMESTAMP */
    pq_time_unit unit;        /* TIME, TIMESTAMP */
    int8_t bit_width;         /* INTEGER */
    bool is_signed;           /* INTEGER */
} pq_logical_type;

/* Short name such as "STRING", "TIMESTAMP", "NONE". */
const char *pq_logical_kind_name(pq_logical_kind k);
const char *pq_physical_type_name(int t);
const char *pq_encoding_name(int e);
const char *pq_codec_name(int c);
const char *pq_page_type_name(int t);

/* ---------------- schema ---------------- */

typedef struct {
    char *name;                /* NUL-terminated copy */
    uint32_t name_len;         /* may differ from strlen if the name holds NULs */
    int32_t type;              /* pq_physical_type, or -1 when not set (groups) */
    int32_t type_length;       /* -1 when not set */
    int32_t repetition;        /* pq_repetition, or -1 when not set (root) */
    int32_t num_children;      /* -1 when not set */
    int32_t converted_type;    /* pq_converted_type; PQ_CT_NONE when not set */
    int32_t scale;             /* -1 when not set */
    int32_t precision;         /* -1 when not set */
    int32_t field_id;
    bool has_field_id;
    pq_logical_type logical;   /* kind PQ_LT_NONE when not set */
} pq_schema_element;

typedef struct {
    char *path;                /* dotted path of names below the root, NUL-terminated */
    uint32_t schema_index;     /* index into pq_file_meta.schema */
    pq_physical_type type;
    int32_t type_length;       /* FIXED_LEN_BYTE_ARRAY width; -1 when not set */
    int32_t converted_type;    /* PQ_CT_NONE when not set */
    pq_logical_type logical;
    int32_t scale, precision;  /* from the SchemaElement; -1 when not set */
    pq_repetition repetition;  /* of the leaf itself */
    uint16_t max_def;          /* max definition level */
    uint16_t max_rep;          /* max repetition level */
    uint16_t depth;            /* 1 for a direct child of the root */
    bool nested;               /* below a group other than the root, or repeated */
} pq_leaf;

/* ---------------- statistics and column chunks ---------------- */

typedef struct {
    bool has_max, has_min, has_max_value, has_min_value;
    bool has_null_count, has_distinct_count, has_nan_count;
    bool has_is_max_value_exact, has_is_min_value_exact;
    bool is_max_value_exact, is_min_value_exact;
    pq_bytes max, min;             /* deprecated signed-order bounds */
    pq_bytes max_value, min_value; /* ColumnOrder bounds */
    int64_t null_count, distinct_count, nan_count;
} pq_statistics;

typedef struct {
    pq_bytes key;
    pq_bytes value; /* ptr NULL when absent */
} pq_key_value;

typedef struct {
    int32_t page_type;
    int32_t encoding;
    int32_t count;
} pq_encoding_stats;

typedef struct {
    /* ColumnChunk */
    pq_bytes file_path;            /* ptr NULL when absent */
    int64_t file_offset;
    bool has_offset_index, has_column_index;
    int64_t offset_index_offset;
    int32_t offset_index_length;
    int64_t column_index_offset;
    int32_t column_index_length;
    /* ColumnMetaData (required by this decoder) */
    pq_physical_type type;
    uint32_t encodings_mask;       /* bit e set when Encoding e is listed */
    uint32_t n_path;
    pq_bytes *path_in_schema;
    pq_codec codec;
    int64_t num_values;
    int64_t total_uncompressed_size;
    int64_t total_compressed_size;
    uint32_t n_kv;
    pq_key_value *kv;
    int64_t data_page_offset;
    bool has_index_page_offset, has_dictionary_page_offset;
    int64_t index_page_offset;
    int64_t dictionary_page_offset;
    bool has_statistics;
    pq_statistics statistics;
    uint32_t n_encoding_stats;
    pq_encoding_stats *encoding_stats;
    bool has_bloom_filter_offset, has_bloom_filter_length;
    int64_t bloom_filter_offset;
    int32_t bloom_filter_length;
} pq_column_chunk;

typedef struct {
    pq_column_chunk *columns;      /* n_columns == pq_file_meta.n_leaves */
    uint32_t n_columns;
    int64_t total_byte_size;
    int64_t num_rows;
    bool has_file_offset, has_total_compressed_size, has_ordinal;
    bool has_sorting_columns;      /* present but not decoded */
    int64_t file_offset;
    int64_t total_compressed_size;
    int16_t ordinal;
} pq_row_group;

/* ColumnOrder union members (thrift field ids). */
typedef enum {
    PQ_ORDER_UNKNOWN = 0,
    PQ_ORDER_TYPE_DEFINED = 1,
    PQ_ORDER_IEEE_754_TOTAL = 2,
    PQ_ORDER_INT96_TIMESTAMP = 3,
} pq_column_order;

typedef struct pq_file_meta {
    int32_t version;
    int64_t num_rows;
    pq_schema_element *schema;
    uint32_t n_schema;
    pq_leaf *leaves;               /* leaf columns in schema (= column chunk) order */
    uint32_t n_leaves;
    pq_row_group *row_groups;
    uint32_t n_row_groups;
    pq_key_value *kv;
    uint32_t n_kv;
    pq_bytes created_by;           /* ptr NULL when absent */
    uint8_t *column_orders;        /* pq_column_order per entry; NULL when absent */
    uint32_t n_column_orders;
    bool has_encryption_algorithm; /* plaintext-footer encrypted file */
    /* Set by pq_file_meta_from_tail; 0 otherwise. */
    uint64_t file_size;
    uint64_t footer_offset;
    uint32_t footer_len;
    struct pq_arena *arena;        /* private */
} pq_file_meta;

/* ---------------- footer ---------------- */

typedef struct {
    uint64_t footer_offset; /* file offset of the FileMetaData */
    uint32_t footer_len;    /* its length */
} pq_footer_loc;

/* From the file size and the file's last 8 bytes (length + "PAR1"), find
 * the FileMetaData. Rejects files shorter than 12 bytes, a bad magic, the
 * encrypted-footer magic "PARE" (TC_E_ENCRYPTED), a zero length, a length
 * over PQ_MAX_FOOTER_LEN, and a footer that would start before byte 4. */
tc_status pq_footer_locate(uint64_t file_size, const uint8_t last8[PQ_TAIL_LEN],
                           pq_footer_loc *loc, tc_error *err);

/* Parse a FileMetaData from exactly its bytes. data_end, when non-zero, is the
 * file offset where the footer starts: every column chunk's byte range (and
 * page-index range) must end at or before it. */
tc_status pq_file_meta_parse(const uint8_t *buf, size_t len, uint64_t data_end,
                             pq_file_meta **out, tc_error *err);

/* Locate and parse the footer from the last tail_len bytes of a file of
 * file_size bytes. When the tail is too short to hold the whole footer,
 * returns TC_E_NEED_MORE with *need_tail set to the tail length required
 * (*need_tail is set whenever the footer was located). */
tc_status pq_file_meta_from_tail(const uint8_t *tail, size_t tail_len, uint64_t file_size,
                                 pq_file_meta **out, uint64_t *need_tail, tc_error *err);

void pq_file_meta_free(pq_file_meta *m);

/* Byte range of a column chunk: from the dictionary page when there is one
 * (dictionary_page_offset set, > 0 and below data_page_offset, or
 * data_page_offset 0 as pyarrow writes for chunks without data pages), else
 * from the first data page, for total_compressed_size bytes. Returns false
 * when the numbers are negative or overflow. */
bool pq_column_chunk_range(const pq_column_chunk *c, uint64_t *offset, uint64_t *length);

/* Index just past the subtree of schema element i (i itself and every
 * element below it), bounded by n_schema. */
uint32_t pq_schema_subtree_end(const pq_file_meta *m, uint32_t i);

/* ---------------- statistics ---------------- */

/* Parse a standalone thrift Statistics struct (zero-copy into buf). */
tc_status pq_statistics_parse(const uint8_t *buf, size_t len, pq_statistics *out,
                              size_t *consumed, tc_error *err);

/* ---------------- page index ---------------- */

typedef struct {
    int64_t offset;               /* file offset of the page header */
    int32_t compressed_page_size; /* header + body */
    int64_t first_row_index;      /* relative to the row group */
} pq_page_location;

typedef struct {
    pq_page_location *pages;
    uint32_t n_pages;
    int64_t *unencoded_byte_array_data_bytes; /* NULL when absent */
    uint32_t n_unencoded;
} pq_offset_index;

/* Parses the OffsetIndex struct; page locations are checked for ascending
 * offsets, strictly ascending first_row_index, non-negative values and a
 * positive size (TC_E_INVALID otherwise). */
tc_status pq_offset_index_parse(const uint8_t *buf, size_t len, pq_offset_index *out,
                                tc_error *err);
void pq_offset_index_free(pq_offset_index *oi);

typedef enum {
    PQ_BOUNDARY_UNORDERED = 0,
    PQ_BOUNDARY_ASCENDING = 1,
    PQ_BOUNDARY_DESCENDING = 2,
} pq_boundary_order;

typedef struct {
    uint32_t n_pages;
    bool *null_pages;
    pq_bytes *min_values;
    pq_bytes *max_values;
    int32_t boundary_order;
    int64_t *null_counts;         /* NULL when absent; else n_pages entries */
    uint8_t *owned;               /* private copy of the parsed bytes */
} pq_column_index;

/* Parses the ColumnIndex struct; null_pages, min_values, max_values (and
 * null_counts when present) must have the same length. */
tc_status pq_column_index_parse(const uint8_t *buf, size_t len, pq_column_index *out,
                                tc_error *err);
void pq_column_index_free(pq_column_index *ci);

/* ---------------- page headers ---------------- */

typedef struct {
    int32_t type;                   /* pq_page_type (0..3) */
    int32_t uncompressed_page_size; /* body, header excluded */
    int32_t compressed_page_size;   /* body, header excluded */
    bool has_crc;
    uint32_t crc;
    uint32_t crc_offset;            /* byte offset of the crc varint within the header */
    uint32_t crc_len;               /* its length in bytes (1..10) */

    bool has_data_page_header;
    struct {
        int32_t num_values;
        int32_t encoding;
        int32_t definition_level_encoding;
        int32_t repetition_level_encoding;
        bool has_statistics;
        pq_statistics statistics;
    } data;

    bool has_index_page_header;

    bool has_dictionary_page_header;
    struct {
        int32_t num_values;
        int32_t encoding;
        bool has_is_sorted;
        bool is_sorted;
    } dict;

    bool has_data_page_header_v2;
    struct {
        int32_t num_values;
        int32_t num_nulls;
        int32_t num_rows;
        int32_t encoding;
        int32_t definition_levels_byte_length;
        int32_t repetition_levels_byte_length;
        bool is_compressed;         /* defaults to true */
        bool has_statistics;
        pq_statistics statistics;
    } v2;
} pq_page_header;

/* Parse the PageHeader at the start of buf; *header_len gets its length in
 * bytes (the page body follows). Checks that sizes are non-negative, that
 * the header matching the type is present, and (V2) that the level lengths
 * fit inside the page. TC_E_TRUNCATED means buf ended inside the header:
 * supply more bytes if the file has them. */
tc_status pq_page_header_parse(const uint8_t *buf, size_t len, pq_page_header *out,
                               size_t *header_len, tc_error *err);

/* ---------------- page CRC ---------------- */

/* CRC-32 (the gzip/zlib polynomial) as parquet page headers use it. Pass 0
 * as crc to start; chain calls to continue. */
uint32_t pq_crc32(uint32_t crc, const void *buf, size_t len);

/* True when the crc field's varint (i32, zigzag) of crc_len bytes can hold
 * new_crc, allowing non-minimal encoding. Always true for crc_len >= 5. */
bool pq_crc_fits(uint32_t crc_len, uint32_t new_crc);

/* Rewrite the crc varint of a parsed header in place, keeping its byte
 * count (padding with 0x80 continuation bytes when the value is short).
 * header is the header's bytes as given to pq_page_header_parse. Returns
 * false (and leaves header untouched) when the header has no crc, the
 * location is out of range, or the value does not fit. */
bool pq_crc_rewrite(uint8_t *header, size_t header_len, const pq_page_header *h,
                    uint32_t new_crc);

#endif
