/* Which rows of a row group the hint's predicate selects: its filter column
 * chunks are fetched real (through the block cache, where the reader finds
 * them again), decoded page by page, and the bound predicate evaluated over
 * them. Row-group statistics that prove no row matches skip the fetch. */
#ifndef SIEVE_SELECTION_H
#define SIEVE_SELECTION_H
#include <stdbool.h>
#include <stdint.h>

#include "object_read.h"
#include "parquet_meta.h"
#include "predicate.h"
#include "row_ranges.h"
#include "sv_error.h"

#define SELECTION_MAX_FILTER_CHUNK (256ull << 20) /* larger filter chunks: the file is served real */
#define SELECTION_MAX_FILTER_BYTES (256ull << 20) /* decoded BYTES values of one filter column */
#define SELECTION_MAX_ROWS_PER_GROUP (8u << 20)   /* the filter columns of a row group are held decoded */

/* Why a row group's selection could not be had (the code of its sv_error);
 * the file is then served real. */
typedef enum {
    SELECTION_OK = 0,
    SELECTION_E_LIMIT,  /* a row group or filter chunk over the limits above */
    SELECTION_E_FILTER, /* a filter chunk unreadable, undecodable or out of the file */
    SELECTION_E_LAYOUT, /* the footer's row counts make no sense */
    SELECTION_E_NOMEM,
} selection_status;

/* Append the selected rows of row group g (relative to the group) to *sel:
 * 0, or -1 with err saying why (the file is then served real). Reads of
 * filter chunks obey tok. */
int selection_of_row_group(object_io *io, const object_ref *o, const pq_file_meta *m, const pred_bound *b,
                           uint32_t g, row_ranges *sel, sv_error *err, const sv_cancel *tok);
/* Whether selection_of_row_group reads group g's filter chunks: its row
 * count is within the limits and its statistics do not rule it out. */
bool selection_group_needs_filter(const pq_file_meta *m, const pred_bound *b, uint32_t g);

/* The byte range of filter column col (of the bound predicate) in group g,
 * as selection_of_row_group reads it: false when the chunk lies outside the
 * object, is empty, or is over SELECTION_MAX_FILTER_CHUNK. */
bool selection_filter_chunk(const pq_file_meta *m, const object_ref *o, const pred_bound *b, uint32_t g,
                            size_t col, uint64_t *off, uint64_t *len);

#endif
