#include "control.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_json.h"

bool control_owns(uint64_t ino)
{
    return ino == SV_INO_CONTROL || ino == SV_INO_STATS;
}

char *control_render_stats(const plain_fs *p, size_t *len)
{
    const sv_stats *st = p->stats;
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                          "fuse_reads", (json_int_t)STAT_GET(st, fuse_reads),
                          "fuse_read_bytes", (json_int_t)STAT_GET(st, fuse_read_bytes),
                          "s3_requests", (json_int_t)STAT_GET(st, s3_requests),
                          "s3_get_requests", (json_int_t)STAT_GET(st, s3_get_requests),
                          "s3_list_requests", (json_int_t)STAT_GET(st, s3_list_requests),
                          "s3_head_requests", (json_int_t)STAT_GET(st, s3_head_requests),
                          "s3_bytes_fetched", (json_int_t)STAT_GET(st, s3_bytes_fetched),
                          "cache_hit_bytes", (json_int_t)STAT_GET(st, cache_hit_bytes),
                          "cache_miss_bytes", (json_int_t)STAT_GET(st, cache_miss_bytes),
                          "prefetch_bytes", (json_int_t)STAT_GET(st, prefetch_bytes),
                          "cache_evictions", (json_int_t)STAT_GET(st, cache_evictions),
                          "cache_bytes", (json_int_t)block_cache_bytes(p->cache),
                          "cache_limit_bytes", (json_int_t)block_cache_limit(p->cache),
                          "retries", (json_int_t)STAT_GET(st, retries),
                          "errors", (json_int_t)STAT_GET(st, errors),
                          "read_timeouts", (json_int_t)STAT_GET(st, read_timeouts),
                          "read_interrupts", (json_int_t)STAT_GET(st, read_interrupts));
    return sv_json_text(o, JSON_INDENT(2), len);
}

void control_attr(const plain_fs *p, uint64_t ino, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ino;
    out->mtime = p->start_time;
    out->timeout = 0;
    if (ino == SV_INO_CONTROL) {
        out->mode = S_IFDIR | 0555;
        out->nlink = 2;
    } else {
        out->mode = S_IFREG | 0444;
        out->nlink = 1;
        size_t len = 0;
        free(control_render_stats(p, &len));
        out->size = len;
    }
}

int control_lookup(const plain_fs *p, const char *name, sv_attr *out)
{
    if (strcmp(name, "stats") != 0)
        return -ENOENT;
    control_attr(p, SV_INO_STATS, out);
    return 0;
}

int control_readdir(sv_dirents *d)
{
    bool ok = sv_dirents_push(d, ".", SV_INO_CONTROL, S_IFDIR) && sv_dirents_push(d, "..", TREE_ROOT_INO, S_IFDIR) &&
              sv_dirents_push(d, "stats", SV_INO_STATS, S_IFREG) &&
              sv_dirents_push(d, "hints", SV_INO_HINTS, S_IFDIR) &&
              sv_dirents_push(d, "views", SV_INO_VIEWS, S_IFDIR);
    return ok ? 0 : -ENOMEM;
}
