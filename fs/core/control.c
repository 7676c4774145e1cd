#include "control.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sv_json.h"

bool control_owns(uint64_t ino)
{
    return ino == SV_INO_CONTROL || ino == SV_INO_STATS || ino == SV_INO_PROFILE;
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
    /* The warmup's own requests, also counted above (so a test can subtract them). */
    if (o) {
        json_object_set_new(o, "warmup_requests", json_integer((json_int_t)STAT_GET(st, warmup_requests)));
        json_object_set_new(o, "warmup_bytes", json_integer((json_int_t)STAT_GET(st, warmup_bytes)));
        json_object_set_new(o, "stalls", json_integer((json_int_t)STAT_GET(st, stalls)));
        json_object_set_new(o, "retry_quota_waits", json_integer((json_int_t)STAT_GET(st, retry_quota_waits)));
        json_object_set_new(o, "requests_cancelled",
                            json_integer((json_int_t)STAT_GET(st, requests_cancelled)));
        json_object_set_new(o, "page_maps_walked", json_integer((json_int_t)STAT_GET(st, page_maps_walked)));
        json_object_set_new(o, "page_maps_from_disk",
                            json_integer((json_int_t)STAT_GET(st, page_maps_from_disk)));
        const table_ahead_counts ahead = table_ahead_counts_get(p->ahead);
        json_object_set_new(o, "table_ahead_tails", json_integer((json_int_t)ahead.tails));
        json_object_set_new(o, "table_ahead_hits", json_integer((json_int_t)ahead.hits));
        json_object_set_new(o, "table_ahead_listings", json_integer((json_int_t)ahead.listings));
        json_object_set_new(o, "table_ahead_data_files", json_integer((json_int_t)ahead.data_files));
        json_object_set_new(o, "table_ahead_data_bytes", json_integer((json_int_t)ahead.data_bytes));
        json_object_set_new(o, "table_ahead_data_hits", json_integer((json_int_t)ahead.data_hits));
        /* The one budget (--cache-size) and what holds it besides the cache. */
        memory_budget *mb = (memory_budget *)&p->budget; /* atomics: read-only use */
        json_object_set_new(o, "memory_budget_bytes", json_integer((json_int_t)mb->limit));
        json_object_set_new(o, "memory_outside_cache_bytes", json_integer((json_int_t)memory_budget_outside(mb)));
    }
    return sv_json_text(o, JSON_INDENT(2), len);
}

/* v rounded to a multiple of unit: the figures are measurements, not exact. */
static double rounded(double v, double unit)
{
    return round(v / unit) * unit;
}

char *control_render_profile(link_profile *lp, int64_t now_s, size_t *len)
{
    conn_profile p;
    link_warmup_state state = link_profile_snapshot(lp, &p);
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "state", json_string(link_warmup_state_name(state)));
    json_object_set_new(o, "valid", json_boolean(p.valid));
    json_object_set_new(o, "runs", json_integer((json_int_t)link_profile_runs(lp)));
    /* A profile exists once one was measured, valid or not. */
    const bool measured = p.measured_at_s > 0;
    json_object_set_new(o, "age_s", measured ? json_integer(now_s > p.measured_at_s ? now_s - p.measured_at_s : 0)
                                             : json_null());
    json_t *prof = json_null();
    if (measured) {
        json_t *curve = json_array();
        for (uint32_t i = 0; curve && i < p.n_capacity && i < PROFILE_MAX_CAPACITY_POINTS; i++)
            json_array_append_new(curve, json_pack("{s:i, s:f}", "in_flight", (json_int_t)p.capacity[i].in_flight,
                                                   "per_s", rounded(p.capacity[i].per_s, 0.1)));
        prof = json_pack("{s:f, s:f, s:f, s:f, s:f, s:I, s:o*, s:i, s:I}",
                         "latency_ms", rounded(p.latency_s * 1e3, 0.001),
                         "latency_p90_ms", rounded(p.latency_p90_s * 1e3, 0.001),
                         "connect_ms", rounded(p.connect_s * 1e3, 0.001),
                         "bandwidth_mbit", rounded(p.bandwidth_Bps * 8 / 1e6, 0.01),
                         "bandwidth_Bps", rounded(p.bandwidth_Bps, 1),
                         /* fewer than the usual ~8 MiB: a table of small files */
                         "bandwidth_bytes", (json_int_t)p.bandwidth_bytes,
                         "capacity", curve,
                         "suggested_in_flight", (json_int_t)p.suggested_in_flight,
                         "samples", (json_int_t)p.samples);
    }
    json_object_set_new(o, "profile", prof ? prof : json_null());
    /* 10 digits: a rounded figure prints as itself, not its binary neighbour. */
    return sv_json_text(o, JSON_INDENT(2) | JSON_REAL_PRECISION(10), len);
}

void control_attr(const plain_fs *p, link_profile *lp, uint64_t ino, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ino;
    out->mtime = p->start_time;
    out->timeout = 0;
    if (ino == SV_INO_CONTROL) {
        /* Always there and never another inode: the kernel may keep its
         * entry (readers resolve every path component on each open). */
        out->timeout = p->cfg.dir_attr_timeout_s;
        out->mode = S_IFDIR | 0555;
        out->nlink = 2;
    } else {
        out->mode = S_IFREG | 0444;
        out->nlink = 1;
        size_t len = 0;
        free(ino == SV_INO_PROFILE ? control_render_profile(lp, (int64_t)time(NULL), &len)
                                   : control_render_stats(p, &len));
        out->size = len;
    }
}

int control_lookup(const plain_fs *p, link_profile *lp, const char *name, sv_attr *out)
{
    uint64_t ino = strcmp(name, "stats") == 0 ? SV_INO_STATS : strcmp(name, "profile") == 0 ? SV_INO_PROFILE : 0;
    if (!ino)
        return -ENOENT;
    control_attr(p, lp, ino, out);
    return 0;
}

int control_readdir(sv_dirents *d)
{
    bool ok = sv_dirents_push(d, ".", SV_INO_CONTROL, S_IFDIR) && sv_dirents_push(d, "..", TREE_ROOT_INO, S_IFDIR) &&
              sv_dirents_push(d, "stats", SV_INO_STATS, S_IFREG) &&
              sv_dirents_push(d, "profile", SV_INO_PROFILE, S_IFREG) &&
              sv_dirents_push(d, "hints", SV_INO_HINTS, S_IFDIR) &&
              sv_dirents_push(d, "views", SV_INO_VIEWS, S_IFDIR) &&
              sv_dirents_push(d, "tables", SV_INO_TABLES, S_IFDIR);
    return ok ? 0 : -ENOMEM;
}
