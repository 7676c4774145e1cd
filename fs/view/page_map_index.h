/* Page maps built ahead of time (`sievefs index`): every column chunk of one
 * Parquet object version that a view would have to walk (flat, no
 * OffsetIndex, its metadata ruling out a single page) walked from its page
 * headers to the end. Each round fetches the windows every unfinished walk
 * asks for, all chunks at once, and there are as many rounds as it takes
 * (a chunk of irregular pages takes one per page, at most
 * PQ_HEADER_WALK_MAX_PAGES), which a view reading the file cannot afford
 * but a job run once per file version can. A chunk whose headers do not make
 * a map is left out: a view serves it real or walks it itself. */
#ifndef SIEVE_PAGE_MAP_INDEX_H
#define SIEVE_PAGE_MAP_INDEX_H
#include <stdint.h>

#include "header_walk.h"
#include "object_store.h"
#include "parquet_meta.h"

typedef struct {
    uint32_t chunks;     /* column chunks in the file */
    uint32_t need_none;  /* an OffsetIndex, or one page by their metadata: no map needed */
    uint32_t nested;     /* not flat: views serve them real */
    uint32_t walked, failed;
    uint32_t rounds;
    uint64_t requests, bytes;
} page_map_index_counts;

/* Gets each done walk of chunk (rg, col). */
typedef void (*page_map_index_sink)(void *ud, uint32_t rg, uint32_t col, const pq_header_walk *w);

/* The footer of version (key, etag, size) in store, parsed into *out (freed
 * with pq_file_meta_free). 0, or -1 with the cause in err. */
int page_map_index_read_meta(object_store *s, const char *key, const char *etag, uint64_t size,
                             pq_file_meta **out, sv_error *err);

/* Walk the chunks of version (key, etag, size) whose footer is m; sink gets
 * every done walk; counts (zeroed here) tell what happened. 0, or -1 with
 * the cause in err when a fetch fails. */
int page_map_index_file(object_store *s, const char *key, const char *etag, uint64_t size, const pq_file_meta *m,
                        page_map_index_sink sink, void *ud, page_map_index_counts *counts, sv_error *err);

#endif
