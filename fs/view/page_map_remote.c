/* Page-map bundles in S3; see page_map_remote.h. */
#include "page_map_remote.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "page_map_bundle.h"
#include "page_map_cache.h"

#define MAX_LEVELS 64 /* directories looked at above the file */

/* The inode of bundle `name` under dir/_sieve/pagemaps/SHARD/, or 0. */
static uint64_t find_in(plain_fs *p, uint64_t dir, const char *name, const sv_cancel *tok)
{
    char shard[PAGE_MAP_REMOTE_SHARD_LEN + 1];
    page_map_remote_shard(name, shard);
    sv_attr a;
    if (plain_lookup(p, dir, PAGE_MAP_REMOTE_DIR, &a, tok) != 0 || !S_ISDIR(a.mode))
        return 0;
    if (plain_lookup(p, a.ino, PAGE_MAP_REMOTE_SUBDIR, &a, tok) != 0 || !S_ISDIR(a.mode))
        return 0;
    if (plain_lookup(p, a.ino, shard, &a, tok) != 0 || !S_ISDIR(a.mode))
        return 0;
    if (plain_lookup(p, a.ino, name, &a, tok) != 0 || !S_ISREG(a.mode))
        return 0;
    return a.ino;
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
    uint64_t found = 0, dir = file_ino;
    for (int level = 0; !found && level < MAX_LEVELS && dir != TREE_ROOT_INO; level++) {
        dir = tree_parent(p->tree, dir);
        found = find_in(p, dir, name, tok);
    }
    if (!found)
        return 0;
    object_ref b = {0};
    if (plain_bind_object(p, found, &b) != 0)
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
