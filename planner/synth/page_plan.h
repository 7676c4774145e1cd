/* Partial reads and synthesized pages: how one data page of a view is served.
 *
 * A view serves a data page of a non-filter column in one of two ways:
 *   PP_REAL    the page's real bytes (the caller reads them from S3 as usual);
 *   PP_SPARSE  an image of the page: every byte covered by a piece holds the
 *              piece's bytes, every other byte is zero. The pieces hold the
 *              real header (with its CRC recomputed when it has one), the
 *              real levels, lengths blocks and zstd block headers, the real
 *              values of every selected row, and synthesized bytes where a
 *              page is rebuilt (e.g. a replacement zstd frame). The image has
 *              exactly the page's size and decodes with every reader to the
 *              same levels and the same values for selected rows.
 *
 * A dictionary page is served PP_REAL or PP_SPARSE the same way, its image
 * holding the entries selected rows reference (pp_input.dictionary).
 *
 * Planning is a loop driven by the caller, because locating values takes
 * dependent fetches (header, then levels or block headers, then values):
 *
 *     pp_bytes *known = pp_bytes_new(page.total_size);
 *     for (;;) {
 *         pp_plan(&in, known, &res);
 *         if (res.outcome != PP_NEED) break;
 *         fetch every res.need range (page-relative) and pp_bytes_put it;
 *         pp_result_free(&res);
 *     }
 *
 * The planner never asks for a range it already has, asks for at most
 * PP_MAX_ROUNDS rounds (then answers PP_REAL), and answers PP_REAL whenever
 * it is not certain the image is valid ("when in doubt, serve real bytes").
 * FUSE-free and I/O-free. Whether a request pays is the cost model's call
 * (profiler/cost_model.h); the planner's parts are listed in
 * page_plan_internal.h. */
#ifndef SIEVE_PAGE_PLAN_H
#define SIEVE_PAGE_PLAN_H

#include "decode.h"
#include "page_map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PP_MAX_ROUNDS 6
#define PP_HEADER_PROBE 1024u /* bytes asked for first: header and, usually, the levels */

/* Known real bytes of one page, page-relative, as sorted disjoint intervals
 * (adjacent or overlapping puts are merged). */
typedef struct pp_bytes pp_bytes;

pp_bytes *pp_bytes_new(uint32_t page_size);
void pp_bytes_free(pp_bytes *kb);
/* Copy len bytes at page offset off in; false when out of memory or off+len
 * exceeds the page. */
bool pp_bytes_put(pp_bytes *kb, uint32_t off, const uint8_t *data, uint32_t len);
/* Pointer to [off, off+len) when all of it is known and contiguous, else NULL. */
const uint8_t *pp_bytes_get(const pp_bytes *kb, uint32_t off, uint32_t len);
/* Total bytes held. */
uint64_t pp_bytes_total(const pp_bytes *kb);
/* Rounds pp_plan has asked for with this pp_bytes: a PP_NEED answer counts
 * one round when it is the first or bytes were put since the previous one
 * (asking again without new bytes is the same round). */
uint32_t pp_bytes_rounds(const pp_bytes *kb);

typedef struct {
    uint32_t off, len;
} pp_range;

typedef struct {
    uint32_t off, len;
    uint8_t *data; /* owned, len bytes */
} pp_piece;

typedef enum { PP_NEED = 0, PP_REAL, PP_SPARSE } pp_outcome;

typedef struct {
    const pq_page_map *pm; /* built from the OffsetIndex (first_row/num_rows known) */
    uint32_t page;         /* index into pm->pages; must be a data page */
    pq_column_desc col;
    /* Selected rows, relative to the page's first row: sorted, disjoint,
     * non-empty [start, start+len) ranges within [0, num_rows). n_rows == 0
     * means no row of the page is selected. */
    const pp_range *rows;
    uint32_t n_rows;
    uint32_t gap_merge;    /* merge two value ranges of the page when the gap is below this */
    double min_saving;     /* PP_SPARSE only when it fetches at most (1 - min_saving) of the page */
    /* Bytes one request is worth: a partial read is taken only when its bytes
     * plus this per request stay within (1 - min_saving) of the page plus one
     * request. 0: bytes alone count. */
    uint32_t request_cost;
    /* Entries of the chunk's dictionary page (its header's num_values), or
     * any lower bound the caller knows (only > 0 matters); 0 when unknown.
     * A synthesized dictionary-encoded page may reference entry 0 only when
     * this is > 0 (or when the page's real levels show it has values). */
    int64_t dict_values;
    /* A dictionary page (page is the chunk's dictionary page, rows unused):
     * the entries the selected rows of its data pages reference, sorted and
     * distinct. Its image keeps those entries (and the header, and the zstd
     * block or snappy literal headers) real, every other entry zero:
     * fixed-width PLAIN entries only (INT32, INT64, INT96, FLOAT, DOUBLE,
     * FIXED_LEN_BYTE_ARRAY), stored, in raw zstd blocks or snappy literals. */
    bool dictionary;
    const uint32_t *dict_entries;
    uint32_t n_dict_entries;
} pp_input;

typedef struct {
    pp_outcome outcome;
    /* PP_REAL: a stable reason word, then ": " and detail, e.g.
     * "encoding: DELTA_BYTE_ARRAY", "saving: 0.12 < 0.25", "crc: varint too short". */
    char reason[160];
    /* PP_REAL because the page's bytes contradict the file's own metadata
     * (reason words "layout", "verify"), not an ordinary decline. */
    bool contradicts_file;
    /* PP_NEED: page-relative ranges to fetch next, sorted and disjoint. */
    pp_range *need;
    uint32_t n_need;
    /* PP_SPARSE: the image (sorted, disjoint, inside the page). */
    pp_piece *pieces;
    uint32_t n_pieces;
    bool synthesized;      /* rebuilt without fetching its values (no row selected) */
    uint64_t fetched;      /* real bytes the plan fetched in all (pp_bytes_total at the end) */
    uint32_t selected_values; /* non-null values of selected rows kept real; dictionary
                                 pages: entries kept real */
    uint32_t dict_entries;    /* dictionary pages (PP_SPARSE): entries in the page */
} pp_result;

void pp_plan(const pp_input *in, const pp_bytes *known, pp_result *out);

/* Whether values of selected rows of a data page in this encoding can be
 * read in part (PLAIN fixed-width, BYTE_STREAM_SPLIT, DELTA_LENGTH_BYTE_ARRAY);
 * a page in any other encoding (dictionary indices among them) holding a
 * selected row is served real. */
bool pp_encoding_reads_partially(int32_t encoding, pq_physical_type type);

/* Whether planning a page of total_size bytes can pay at all when a request
 * is worth request_cost bytes: a page with selected rows needs at least two
 * requests (its header, then values), one with none at least one, and reading
 * it whole costs its size and one request. False: read it whole, unasked.
 * The cost model's answer (cost_partial_may_pay, profiler/cost_model.h). */
bool pp_worth_planning(uint32_t total_size, bool rows_selected, uint32_t request_cost,
                       double min_saving);
void pp_result_free(pp_result *r);

/* Copy the image bytes of [off, off+len) (page-relative) into dst: zeros,
 * then the overlapping parts of the pieces. */
void pp_image_read(const pp_piece *pieces, uint32_t n_pieces, uint32_t off, uint32_t len,
                   uint8_t *dst);

#endif
