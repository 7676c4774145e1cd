/* Page maps walked from page headers (header_walk.h), kept per object
 * version (key, ETag, size), row group and column, so that another view of
 * the same file, or the same view after its file was closed, does not walk
 * the headers again. An entry holds the walk's header windows; a hit
 * replays them through a new walk, which checks the chain again as if they
 * had just been fetched. Least recently used entries go first, within a
 * byte budget.
 *
 * Thread-safe (one lock). */
#ifndef SIEVE_PAGE_MAP_CACHE_H
#define SIEVE_PAGE_MAP_CACHE_H
#include <stdbool.h>
#include <stdint.h>

#include "header_walk.h"
#include "object_read.h"

typedef struct page_map_cache page_map_cache;

page_map_cache *page_map_cache_create(uint64_t budget_bytes);
void page_map_cache_destroy(page_map_cache *c);

/* A done walk of chunk (rg, col) of version o into w (initialised for ctx,
 * the chunk's metadata); false (w untouched) when there is none or the
 * replay does not finish. c may be NULL. */
bool page_map_cache_get(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_column_ctx *ctx,
                        pq_header_walk *w);

/* Keep a done walk of chunk (rg, col) of version o (copied). */
void page_map_cache_put(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_header_walk *w);

typedef struct {
    uint64_t entries, bytes, hits, misses;
} page_map_cache_counts;
page_map_cache_counts page_map_cache_counts_now(page_map_cache *c);

#endif
