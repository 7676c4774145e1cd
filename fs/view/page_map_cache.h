/* Page maps walked from page headers (header_walk.h), kept per object
 * version (key, ETag, size), row group and column, so that another view of
 * the same file, or the same view after its file was closed, does not walk
 * the headers again. An entry holds the walk's header windows; a hit
 * replays them through a new walk, which checks the chain again as if they
 * had just been fetched. Least recently used entries go first, within a
 * byte budget. With a directory (--cache-dir), walks are also written there
 * (page_map_file.h) and read back on a miss, so they outlive the mount; a
 * map read from disk is a prediction only: its header bytes are not served
 * (the page planner reads them from S3).
 *
 * Thread-safe (one lock; files are written whole under a temporary name and
 * renamed). */
#ifndef SIEVE_PAGE_MAP_CACHE_H
#define SIEVE_PAGE_MAP_CACHE_H
#include <stdbool.h>
#include <stdint.h>

#include "header_walk.h"
#include "memory_budget.h"
#include "object_read.h"
#include "stats.h"

typedef struct page_map_cache page_map_cache;

/* dir (may be NULL): where walks are kept across mounts; it must exist.
 * stats (may be NULL): page_maps_walked and page_maps_from_disk. */
page_map_cache *page_map_cache_create(uint64_t budget_bytes, const char *dir, sv_stats *stats);
void page_map_cache_destroy(page_map_cache *c);
/* Count what the cache holds in mb (memory_budget.h). Call before use; mb
 * must outlive the cache. */
void page_map_cache_share_budget(page_map_cache *c, memory_budget *mb);

/* A done walk of chunk (rg, col) of version o into w (initialised for ctx,
 * the chunk's metadata); false (w untouched) when there is none or the
 * replay does not finish. *from_s3: its windows' bytes were fetched from S3
 * by this mount (false: read from the cache directory). c may be NULL. */
bool page_map_cache_get(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_column_ctx *ctx,
                        pq_header_walk *w, bool *from_s3);

/* Keep a done walk of chunk (rg, col) of version o (copied). */
void page_map_cache_put(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_header_walk *w);

/* Bundles (page_map_bundle.h): all the maps of one version, written ahead
 * of time by `sievefs index`. A bundle is looked for once per version:
 * claim_bundle is true the first time it is called for o, then false (a
 * bounded memory of the versions seen). */
bool page_map_cache_claim_bundle(page_map_cache *c, const object_ref *o);
/* Keep the maps of bundle buf that name version o, as predictions (like
 * maps read from the cache directory: their header bytes are not served).
 * Returns how many were kept. */
uint32_t page_map_cache_add_bundle(page_map_cache *c, const object_ref *o, const uint8_t *buf, size_t len);
/* The same for the bundle of o in the cache directory, when there is one. */
uint32_t page_map_cache_load_dir_bundle(page_map_cache *c, const object_ref *o);

typedef struct {
    uint64_t entries, bytes, hits, misses, disk_reads, disk_writes;
} page_map_cache_counts;
page_map_cache_counts page_map_cache_counts_now(page_map_cache *c);

#endif
