/* Page-map bundles in S3; see page_map_remote.h. */
#include "page_map_remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "page_map_bundle.h"
#include "page_map_cache.h"

#define MAX_LEVELS 64 /* directories looked at above the file */

/* Bundle `name` under dir/_sieve/pagemaps/SHARD/, into *out: true when
 * found. The _sieve directory is looked up in dir's listing (cached by the
 * plain tree); the bundle itself by one listing of its exact key, not by
 * listing each directory on the way. */
static bool find_in(plain_fs *p, uint64_t dir, const char *name, object_ref *out, const sv_cancel *tok)
{
    sv_attr a;
    if (plain_lookup(p, dir, PAGE_MAP_REMOTE_DIR, &a, tok) != 0 || !S_ISDIR(a.mode))
        return false;
    char *base = tree_key(p->tree, a.ino);
    if (!base)
        return false;
    char shard[PAGE_MAP_REMOTE_SHARD_LEN + 1];
    page_map_remote_shard(name, shard);
    const size_t n = strlen(base);
    const char *sep = n && base[n - 1] == '/' ? "" : "/";
    char *key = NULL;
    bool found = false;
    if (asprintf(&key, "%s%s%s/%s/%s", base, sep, PAGE_MAP_REMOTE_SUBDIR, shard, name) >= 0) {
        found = object_find_exact(p->io, key, out, tok) == 0;
        free(key);
    }
    free(base);
    return found;
}

void page_map_remote_shard(const char *name, char out[PAGE_MAP_REMOTE_SHARD_LEN + 1])
{
    memcpy(out, name, PAGE_MAP_REMOTE_SHARD_LEN);
    out[PAGE_MAP_REMOTE_SHARD_LEN] = '\0';
}

uint32_t page_map_remote_load(const view_env *env, uint64_t file_ino, const object_ref *o, const sv_cancel *tok)
{
    plain_fs *p = env->plain;
    char name[32];
    page_map_bundle_name(o->key, o->etag, o->size, name, sizeof name);
    object_ref b = {0};
    bool found = false;
    uint64_t dir = file_ino;
    for (int level = 0; !found && level < MAX_LEVELS && dir != TREE_ROOT_INO; level++) {
        dir = tree_parent(p->tree, dir);
        found = find_in(p, dir, name, &b, tok);
    }
    if (!found)
        return 0;
    uint32_t kept = 0;
    if (b.size > 0 && b.size <= PAGE_MAP_BUNDLE_MAX) {
        object_range r = {0, b.size, malloc((size_t)b.size)};
        if (r.buf && object_fetch_ranges(p->io, &b, &r, 1, NULL, tok) == 0)
            kept = page_map_cache_add_bundle(env->page_maps, o, r.buf, (size_t)b.size);
        free(r.buf); /* NULL when the fetch was given up and the store still owns it */
    }
    log_debug("%s: %u page maps from s3 bundle %s", o->key, kept, b.key ? b.key : name);
    object_ref_free(&b);
    return kept;
}

void page_map_prebuilt_load(const view_env *env, const object_ref *o, uint64_t file_ino, const sv_cancel *tok)
{
    if (page_map_cache_claim_bundle(env->page_maps, o) && page_map_cache_load_dir_bundle(env->page_maps, o) == 0)
        page_map_remote_load(env, file_ino, o, tok);
}
