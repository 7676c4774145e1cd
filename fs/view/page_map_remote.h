/* Page-map bundles kept in S3 next to a table (`sievefs index --to-s3`):
 * _sieve/pagemaps/SHARD/NAME.pmb, NAME the bundle's name for the object
 * version (page_map_bundle.h) and SHARD its first two hex digits, under the
 * file's directory or any directory above it in the mount. The shards keep
 * every listing of the prefix to one page (256 shards of up to 1,000
 * bundles each before a shard takes two) however large the table. Every
 * mount looks there once per version before walking a file's page headers
 * (a listing of the bundle's exact key where a directory holds _sieve/,
 * then one GET), so the walk is paid once per file version, not once per
 * mount. What it reads is untrusted and a prediction only
 * (page_map_cache.h). */
#ifndef SIEVE_PAGE_MAP_REMOTE_H
#define SIEVE_PAGE_MAP_REMOTE_H
#include <stdint.h>

#include "sv_cancel.h"
#include "view.h"

#define PAGE_MAP_REMOTE_DIR "_sieve"
#define PAGE_MAP_REMOTE_SUBDIR "pagemaps"
#define PAGE_MAP_REMOTE_SHARD_LEN 2

/* The shard directory of bundle name (its first two characters). */
void page_map_remote_shard(const char *name, char out[PAGE_MAP_REMOTE_SHARD_LEN + 1]);

/* Find the bundle of version o (file inode file_ino) and keep its maps in
 * env->page_maps; the number kept (0 when there is none, on any failure,
 * or when tok fires first). Listings it needs are cached like any other. */
uint32_t page_map_remote_load(const view_env *env, uint64_t file_ino, const object_ref *o, const sv_cancel *tok);

/* Maps built ahead of time (`sievefs index`) for version o (plain inode
 * file_ino), looked for once per version (page_map_cache_claim_bundle): in
 * the cache directory, else in S3 (page_map_remote_load). The view's
 * selection calls it while its own fetches are in flight, when a chunk the
 * hint wants would walk its headers, so the lookup's round trips overlap
 * them; the header walk calls it otherwise. */
void page_map_prebuilt_load(const view_env *env, const object_ref *o, uint64_t file_ino, const sv_cancel *tok);

#endif
