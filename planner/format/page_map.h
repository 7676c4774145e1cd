/* Page maps of Parquet column chunks, and which data pages a later "partial
 * read" could serve with only some values fetched.
 *
 * A page map lists every page of one column chunk: the dictionary page (when
 * there is one) and then the data pages, in file order, tiling the chunk's
 * byte range exactly. It is built either
 *   - from the OffsetIndex (pq_page_map_from_offset_index): offsets, sizes and
 *     row ranges are known, header fields are not until pq_page_map_set_header
 *     is given each page's header bytes; the region between the chunk start
 *     and the first data page is taken to be the dictionary page; or
 *   - by walking the page headers in a buffer holding the whole chunk
 *     (pq_page_map_from_chunk): every header field is known, rows only for
 *     V2 pages (num_rows) and flat V1 pages (num_values); or
 *   - from both (pq_page_map_build), which cross-checks them and fails on the
 *     first disagreement.
 *
 * FUSE-free and I/O-free. Errors use tc_status/tc_error (thrift_compact.h);
 * offsets in messages are file offsets of the page concerned. */
#ifndef SIEVE_PAGE_MAP_H
#define SIEVE_PAGE_MAP_H

#include "parquet_meta.h"
#include "zstd_frame.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Eligibility of a page for a partial read; the first reason that applies,
 * in this order. pq_elig_reason gives the stable word in quotes. */
typedef enum {
    PQ_ELIG_OK = 0,                  /* "eligible" */
    PQ_ELIG_NOT_DATA_PAGE,           /* "not_data_page": dictionary or index page */
    PQ_ELIG_NESTED,                  /* "nested": max_rep > 0 or max_def > 1 */
    PQ_ELIG_NO_OFFSET_INDEX,         /* "no_offset_index": rows come from headers only */
    PQ_ELIG_NO_HEADER,               /* "no_header": header not read yet (OffsetIndex-only map) */
    PQ_ELIG_V2_PAGE,                 /* "v2_page" */
    PQ_ELIG_DICTIONARY,              /* "dictionary": PLAIN_DICTIONARY / RLE_DICTIONARY */
    PQ_ELIG_BOOLEAN,                 /* "boolean" */
    PQ_ELIG_BYTE_ARRAY_PLAIN,        /* "byte_array_plain": PLAIN BYTE_ARRAY (length prefixes) */
    PQ_ELIG_ENCODING,                /* "encoding": any other encoding/type pairing */
    PQ_ELIG_COMPRESSED,              /* "compressed": a codec other than UNCOMPRESSED/ZSTD, or
                                        DELTA_LENGTH_BYTE_ARRAY with any codec */
    PQ_ELIG_ZSTD_UNCHECKED,          /* "zstd_unchecked": ZSTD, page body not supplied */
    PQ_ELIG_ZSTD_FRAME,              /* "zstd_frame": body is not one plain zstd frame (several
                                        frames, dictionary id, checksum, content size differs
                                        from uncompressed_page_size, malformed) */
    PQ_ELIG_ZSTD_COMPRESSED_BLOCKS,  /* "zstd_compressed_blocks": a block is not raw */
    PQ_ELIG_CRC,                     /* "crc": page CRC whose varint is too short to hold
                                        an arbitrary new CRC (fewer than 5 bytes) */
    PQ_ELIG_SNAPPY_LITERALS,         /* "snappy_literals" (eligible): SNAPPY whose stream holds
                                        literals only */
    PQ_ELIG_DICTIONARY_ENTRIES,      /* "dictionary_entries" (eligible): a dictionary page of
                                        fixed-width entries a view keeps in part */
    PQ_ELIG_SNAPPY_UNCHECKED,        /* "snappy_unchecked": SNAPPY, page body not supplied */
    PQ_ELIG_SNAPPY_COPIES,           /* "snappy_copies": the snappy stream holds copies (or is
                                        malformed) */
    PQ_ELIG_DICTIONARY_STRINGS,      /* "dictionary_strings": a dictionary page of BYTE_ARRAY or
                                        BOOLEAN entries (their lengths would need a walk) */
    PQ_ELIG_N                        /* the number of reasons */
} pq_elig;

const char *pq_elig_reason(pq_elig e);
/* Whether a view can serve the page in part (eligible, snappy_literals,
 * dictionary_entries). */
bool pq_elig_is_eligible(pq_elig e);

typedef struct {
    uint64_t offset;           /* file offset of the page header */
    uint32_t total_size;       /* header + body bytes */
    uint32_t header_len;       /* 0 until the header has been parsed */
    int32_t compressed_size;   /* body bytes (PageHeader.compressed_page_size); -1 unknown */
    int32_t uncompressed_size; /* -1 unknown */
    int64_t first_row;         /* first row, relative to the row group; -1 unknown */
    int64_t num_rows;          /* -1 unknown */
    int32_t num_values;        /* levels/values count incl. nulls; -1 unknown */
    int32_t num_nulls;         /* V2 only; -1 otherwise */
    int32_t page_type;         /* pq_page_type; -1 until the header is read */
    bool is_data;              /* data page (V1 or V2) */
    bool has_header;           /* header fields below are valid */
    bool inferred;             /* dictionary page inferred from the OffsetIndex gap */
    int32_t encoding;          /* values (or dictionary) encoding; -1 unknown */
    int32_t def_encoding;      /* V1 level encodings; -1 otherwise */
    int32_t rep_encoding;
    int32_t def_levels_len;    /* V2 level byte lengths; -1 otherwise */
    int32_t rep_levels_len;
    bool body_compressed;      /* the chunk codec applies to (part of) the body */
    bool has_crc;
    uint32_t crc;
    uint32_t crc_offset;       /* crc varint position within the header */
    uint32_t crc_len;          /* its byte count; 0 if not rewritable */
    pq_elig elig;
} pq_page;

typedef struct {
    pq_page *pages;            /* dictionary page first (if any), then data pages */
    uint32_t n_pages;
    uint32_t n_data_pages;
    int32_t dict_page;         /* index of the dictionary page, -1 when none */
    bool has_offset_index;     /* row ranges come from an OffsetIndex (or its prediction) */
    bool predicted;            /* the one-page prediction of pq_page_map_predict_single_page */
    bool headers_walked;       /* every header was parsed from the chunk bytes */
    /* The column chunk. */
    pq_physical_type type;
    int32_t type_length;
    pq_codec codec;
    uint16_t max_def, max_rep;
    bool nested;
    uint64_t chunk_offset, chunk_len;
    int64_t num_values;        /* ColumnMetaData.num_values */
    int64_t row_group_rows;
} pq_page_map;

/* The facts about one column chunk a page map needs. */
typedef struct {
    const pq_column_chunk *chunk;
    const pq_leaf *leaf;
    int64_t row_group_rows;
} pq_column_ctx;

/* Context for row group rg, column col of m (no bounds check beyond assert). */
pq_column_ctx pq_column_ctx_of(const pq_file_meta *m, uint32_t rg, uint32_t col);

void pq_page_map_free(pq_page_map *pm);

/* From an OffsetIndex. Checks that the pages tile the chunk's byte range
 * (a gap before the first data page is the dictionary page), that the first
 * page starts at row 0, and that every page holds at least one row of the
 * row group. Header fields stay unknown (has_header false). */
tc_status pq_page_map_from_offset_index(const pq_column_ctx *col, const pq_offset_index *oi,
                                        pq_page_map *out, tc_error *err);

/* For a chunk without an OffsetIndex, the map its metadata predicts when
 * it holds one data page (DuckDB's layout): that page runs from
 * data_page_offset to the chunk end and holds every row of the row group;
 * bytes before it are the dictionary page, as from an OffsetIndex. Made only
 * for flat columns, and only when encoding_stats (if the writer gave them)
 * count one data page. Header fields stay unknown: the prediction holds only
 * once the page's header confirms size, kind and rows (pq_page_map_set_header
 * or the page planner's header check), and a chunk of several pages
 * contradicts it. TC_E_INVALID when the metadata rules one page out. */
tc_status pq_page_map_predict_single_page(const pq_column_ctx *col, pq_page_map *out, tc_error *err);

/* Why the metadata rules out that prediction (a stable phrase), or NULL. */
const char *pq_page_map_single_page_ruled_out(const pq_column_ctx *col);

/* By walking the page headers in chunk[0..chunk_len), which must hold the
 * whole column chunk (chunk_len == its total_compressed_size). Checks that the
 * pages tile the chunk, that at most one dictionary page comes first, that
 * num_values add up to ColumnMetaData.num_values and (when known) rows to the
 * row group's num_rows. Eligibility is computed with the page bodies. */
tc_status pq_page_map_from_chunk(const pq_column_ctx *col, const uint8_t *chunk,
                                 size_t chunk_len, pq_page_map *out, tc_error *err);

/* Fill page i of an OffsetIndex map from its header bytes (buf starts at
 * pages[i].offset; TC_E_TRUNCATED asks for more). Fails with TC_E_MISMATCH
 * when the header disagrees with the OffsetIndex (size, page kind, rows). */
tc_status pq_page_map_set_header(pq_page_map *pm, uint32_t i, const uint8_t *buf, size_t len,
                                 tc_error *err);

typedef struct {
    uint32_t page;        /* index into the OffsetIndex map's pages */
    const char *field;    /* "page_count", "dictionary", "offset", "size", "first_row", ... */
    int64_t index_value;  /* from the OffsetIndex */
    int64_t header_value; /* from the headers */
    char msg[200];
} pq_mismatch;

/* Compare a map from the OffsetIndex with one from walking the headers of
 * the same chunk: dictionary page, page count, and for every data page the
 * offset, total size and (where the headers know them) first row and row
 * count. TC_OK when they agree, else TC_E_MISMATCH with *mm describing the
 * first disagreement. */
tc_status pq_page_map_cross_check(const pq_page_map *from_index, const pq_page_map *from_headers,
                                  pq_mismatch *mm);

/* Build the best map from what the caller has: oi and/or the chunk bytes
 * (at least one). With both, the maps are cross-checked (a disagreement is
 * TC_E_MISMATCH, described in *mm if not NULL and in *err) and the result is
 * the header map with row ranges from the OffsetIndex. */
tc_status pq_page_map_build(const pq_column_ctx *col, const pq_offset_index *oi,
                            const uint8_t *chunk, size_t chunk_len, pq_page_map *out,
                            pq_mismatch *mm, tc_error *err);

/* Eligibility of page i. body/body_len: the page body (the bytes after the
 * header), needed only to look inside ZSTD pages; NULL gives
 * PQ_ELIG_ZSTD_UNCHECKED for those. */
pq_elig pq_page_eligibility(const pq_page_map *pm, uint32_t i, const uint8_t *body,
                            size_t body_len);

/* Recompute pages[].elig for every page; chunk (optional) holds the whole
 * chunk so that ZSTD page bodies can be inspected. */
void pq_page_map_classify(pq_page_map *pm, const uint8_t *chunk, size_t chunk_len);

/* ---------------- zstd page bodies ---------------- */

/* Verdict for a ZSTD page body: PQ_ELIG_OK when it is a single frame with no
 * dictionary id, no checksum, a content size (if present) equal to
 * uncompressed_size, only raw blocks adding up to uncompressed_size;
 * PQ_ELIG_ZSTD_COMPRESSED_BLOCKS when a block is RLE or compressed;
 * PQ_ELIG_ZSTD_FRAME otherwise. */
pq_elig pq_zstd_page_verdict(const uint8_t *body, size_t len, int64_t uncompressed_size);

#endif
