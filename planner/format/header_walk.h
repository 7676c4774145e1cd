/* The page map of a column chunk without an OffsetIndex, built from its page
 * headers alone, fetched in rounds of small reads rather than the whole chunk.
 *
 * A walk follows the chain of data page headers from data_page_offset (the
 * bytes before it are the dictionary page, as with an OffsetIndex): each
 * header gives its page's size, hence where the next header is. Only a
 * header at the end of the chain already confirmed is ever parsed, so the
 * map holds exactly the chunk's pages, or the walk fails.
 *
 * Rounds: each round, the walk asks for the header window at the end of the
 * chain and, once the confirmed pages are all the same size (fixed-width
 * PLAIN values, a page every N rows), also for the windows where the
 * following headers would be if that held, so a regular chunk takes two
 * rounds however many pages it has. A prediction only decides what is
 * fetched; a window is used only once the chain reaches its offset.
 *
 * Flat columns only (rows are V1 num_values or V2 num_rows). FUSE-free and
 * I/O-free: the caller fetches what pq_header_walk_wants lists and hands it
 * to pq_header_walk_feed. */
#ifndef SIEVE_HEADER_WALK_H
#define SIEVE_HEADER_WALK_H

#include "page_map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQ_HEADER_WINDOW 256u             /* bytes fetched for a header at first */
#define PQ_HEADER_WINDOW_MAX (64u << 10)  /* a header longer than this fails the walk */
#define PQ_HEADER_WALK_MAX_PAGES 4096u    /* data pages of one chunk */
#define PQ_HEADER_WALK_MAX_WANTS 512u     /* windows asked for in one round */

typedef struct {
    uint64_t offset;
    uint32_t len;
} pq_header_want;

typedef struct {
    uint64_t offset;
    uint8_t *bytes;
    uint32_t len;
} pq_header_window;

typedef struct {
    pq_column_ctx col;
    uint64_t chunk_end;
    uint64_t next_offset;         /* where the next unconfirmed header is */
    int64_t next_row;             /* the first row of that page */
    uint32_t next_window;         /* bytes to ask for there */
    uint32_t regular_size;        /* size of every confirmed data page, 0 when they differ */
    int64_t regular_rows;         /* rows of the first confirmed data page */
    pq_header_window *confirmed;  /* one window per confirmed data page, in order */
    pq_page_location *pages;
    uint32_t n_pages;
    size_t cap_pages;
    pq_header_window *fed;        /* windows of the current round, not yet reached */
    uint32_t n_fed;
    size_t cap_fed;
    uint32_t rounds;
    bool done, failed;
    tc_error err;                 /* why it failed */
} pq_header_walk;

/* Start a walk of one flat column chunk. TC_E_INVALID when the chunk is
 * nested or its byte range or data_page_offset is not usable. */
tc_status pq_header_walk_init(pq_header_walk *w, const pq_column_ctx *col, tc_error *err);
void pq_header_walk_free(pq_header_walk *w);

/* The windows to fetch for the next round (at most max; the first is the
 * end of the chain). 0 when the walk is done or failed. */
size_t pq_header_walk_wants(const pq_header_walk *w, pq_header_want *out, size_t max);

/* Hand over the bytes fetched at offset (copied; len may be shorter than
 * asked at the chunk's end). */
tc_status pq_header_walk_feed(pq_header_walk *w, uint64_t offset, const uint8_t *buf, size_t len);

/* Follow the chain through the windows fed this round; then they are
 * dropped. Sets done when the chain reaches the chunk end with every row of
 * the row group, failed (with w->err) on any header that does not fit. */
void pq_header_walk_advance(pq_header_walk *w);

/* Whether the pages left can all be the size of the confirmed ones (all one
 * size): the bytes left hold the rows left in pages of that many rows, the
 * last one no larger (give or take PQ_HEADER_SLACK bytes of header). A walk
 * that is not predictable takes a round per page. */
#define PQ_HEADER_SLACK 64u
bool pq_header_walk_predictable(const pq_header_walk *w);

/* The map of a done walk: as from an OffsetIndex of the walked pages, with
 * every data page's header set. */
tc_status pq_header_walk_map(const pq_header_walk *w, pq_page_map *out, tc_error *err);

#endif
