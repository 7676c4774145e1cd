/* The page maps of every walked column chunk of one object version in one
 * file: what `sievefs index` writes (into --cache-dir, or into S3 under the
 * table's _sieve/pagemaps/) and mounts read back on a miss, so a file's maps
 * cost one read rather than a header walk. Little-endian:
 *
 *   "SIEVEPB1"  u32 n  n x (u32 len  len bytes of a page_map_file)  u32 crc32
 *
 * Each member is a whole page_map_file (page_map_file.h), with its own CRC,
 * naming the version and chunk it maps. A bundle read back is untrusted like
 * a page map file: every length is checked against the buffer and the limits
 * below, and its maps are a prediction only (page_map_cache.h). */
#ifndef SIEVE_PAGE_MAP_BUNDLE_H
#define SIEVE_PAGE_MAP_BUNDLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "page_map_file.h"

#define PAGE_MAP_BUNDLE_MAX (64u << 20)   /* larger bundles are not read */
#define PAGE_MAP_BUNDLE_MAX_MAPS 65536u

typedef struct {
    page_map_file *maps;
    uint32_t n;
} page_map_bundle;

/* Parse buf (kept: the maps' windows point into it). False with out zeroed
 * when anything is out of bounds, over a limit, or a CRC differs. */
bool page_map_bundle_parse(const uint8_t *buf, size_t len, page_map_bundle *out);
void page_map_bundle_free(page_map_bundle *b);

/* A bundle being written: members appended one by one. */
typedef struct {
    uint8_t *buf;
    size_t len, cap;
    uint32_t n;
    bool failed; /* out of memory or over a limit: encode nothing */
} page_map_bundle_writer;

void page_map_bundle_writer_add(page_map_bundle_writer *w, const char *key, const char *etag, uint64_t size,
                                uint32_t rg, uint32_t col, const pq_header_walk *walk);
/* The finished bundle (*len set; the caller frees it), or NULL when it
 * failed or holds no map. Frees the writer's buffer either way. */
uint8_t *page_map_bundle_writer_finish(page_map_bundle_writer *w, size_t *len);

/* The bundle's name for (key, etag, size): 16 hex digits of the hash that
 * page_map_file_name uses, then ".pmb"; into out (at least 24 bytes). */
void page_map_bundle_name(const char *key, const char *etag, uint64_t size, char *out, size_t out_len);

#endif
