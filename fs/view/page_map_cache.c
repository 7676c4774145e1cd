/* Walked page maps per object version; see page_map_cache.h. */
#include "page_map_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "page_map_bundle.h"
#include "page_map_file.h"
#include "sv_file.h"

typedef struct entry {
    struct entry *newer, *older; /* recency list */
    char *key;
    char etag[S3_ETAG_MAX + 1];
    uint64_t size;
    uint32_t rg, col;
    pq_header_window *windows;
    uint32_t n;
    uint64_t bytes; /* what it holds, counted against the budget */
    bool from_disk; /* read from the cache directory: not bytes to serve */
} entry;

#define CLAIMED_VERSIONS 4096 /* versions whose bundle was looked for */

struct page_map_cache {
    pthread_mutex_t lock; /* guards everything below but dir and tmp_seq */
    uint64_t claimed[CLAIMED_VERSIONS]; /* version hashes, a ring */
    uint32_t n_claimed, next_claim;
    entry *newest, *oldest;
    uint64_t budget, bytes, entries, hits, misses, disk_reads, disk_writes;
    memory_budget *mem;      /* the mount's, charged `bytes`; NULL: none (set before use) */
    uint64_t charged;        /* what mem was charged: bytes as of the last change */
    char *dir;               /* immutable; NULL: memory only */
    sv_stats *stats;         /* atomic counters; may be NULL */
    atomic_uint tmp_seq;     /* names temporary files */
};

static void insert(page_map_cache *c, entry *e, const object_ref *o);

void page_map_cache_share_budget(page_map_cache *c, memory_budget *mb)
{
    c->mem = mb;
}

/* Bring the mount's budget to what the cache holds (lock held). */
static void sync_budget(page_map_cache *c)
{
    if (c->bytes > c->charged)
        memory_budget_charge(c->mem, c->bytes - c->charged);
    else
        memory_budget_uncharge(c->mem, c->charged - c->bytes);
    c->charged = c->bytes;
}
static entry *read_file(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col);

page_map_cache *page_map_cache_create(uint64_t budget_bytes, const char *dir, sv_stats *stats)
{
    page_map_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->budget = budget_bytes;
    c->stats = stats;
    if (dir && !(c->dir = strdup(dir))) {
        page_map_cache_destroy(c);
        return NULL;
    }
    return c;
}

static void entry_free(entry *e)
{
    for (uint32_t i = 0; e && i < e->n; i++)
        free(e->windows[i].bytes);
    if (e) {
        free(e->windows);
        free(e->key);
        free(e);
    }
}

static void unlink_entry(page_map_cache *c, entry *e)
{
    if (e->newer)
        e->newer->older = e->older;
    else
        c->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        c->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void push_newest(page_map_cache *c, entry *e)
{
    e->older = c->newest;
    e->newer = NULL;
    if (c->newest)
        c->newest->newer = e;
    c->newest = e;
    if (!c->oldest)
        c->oldest = e;
}

void page_map_cache_destroy(page_map_cache *c)
{
    if (!c)
        return;
    for (entry *e = c->newest, *next; e; e = next) {
        next = e->older;
        entry_free(e);
    }
    memory_budget_uncharge(c->mem, c->charged);
    pthread_mutex_destroy(&c->lock);
    free(c->dir);
    free(c);
}

static bool same(const entry *e, const object_ref *o, uint32_t rg, uint32_t col)
{
    return e->rg == rg && e->col == col && e->size == o->size && strcmp(e->etag, o->etag) == 0 &&
           strcmp(e->key, o->key) == 0;
}

/* Called with c->lock held. A linear search: entries are few hundred to a
 * few thousand, and a search is one per chunk planned. */
static entry *find(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col)
{
    for (entry *e = c->newest; e; e = e->older)
        if (same(e, o, rg, col))
            return e;
    return NULL;
}

bool page_map_cache_get(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_column_ctx *ctx,
                        pq_header_walk *w, bool *from_s3)
{
    *from_s3 = false;
    if (!c || !o->key || !o->etag[0])
        return false;
    pq_header_walk replay;
    if (pq_header_walk_init(&replay, ctx, NULL) != TC_OK)
        return false;
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, o, rg, col);
    if (!e && c->dir) {
        pthread_mutex_unlock(&c->lock);
        entry *disk = read_file(c, o, rg, col);
        pthread_mutex_lock(&c->lock);
        if (disk) {
            c->disk_reads++;
            if (c->stats)
                STAT_ADD(c->stats, page_maps_from_disk, 1);
            if (disk->bytes <= c->budget) {
                insert(c, disk, o);
                e = disk;
            } else {
                entry_free(disk);
            }
        }
    }
    bool fed = e != NULL;
    *from_s3 = e && !e->from_disk;
    if (e) {
        unlink_entry(c, e);
        push_newest(c, e);
        for (uint32_t i = 0; i < e->n && fed; i++)
            fed = pq_header_walk_feed(&replay, e->windows[i].offset, e->windows[i].bytes, e->windows[i].len) == TC_OK;
    }
    if (fed)
        c->hits++;
    else
        c->misses++;
    pthread_mutex_unlock(&c->lock);
    if (fed)
        pq_header_walk_advance(&replay);
    if (!fed || !replay.done) {
        pq_header_walk_free(&replay);
        return false;
    }
    *w = replay;
    return true;
}

/* A new entry holding copies of windows[0..n), or NULL. */
static entry *entry_new(const object_ref *o, uint32_t rg, uint32_t col, const pq_header_window *windows, uint32_t n,
                        bool from_disk)
{
    entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->key = strdup(o->key);
    e->windows = calloc(n ? n : 1, sizeof *e->windows);
    e->n = n;
    e->bytes = sizeof *e + strlen(o->key) + (uint64_t)n * sizeof *e->windows;
    bool ok = e->key && e->windows;
    for (uint32_t i = 0; ok && i < n; i++) {
        const pq_header_window *src = &windows[i];
        e->windows[i] = (pq_header_window){src->offset, malloc(src->len ? src->len : 1), src->len};
        ok = e->windows[i].bytes != NULL;
        if (ok)
            memcpy(e->windows[i].bytes, src->bytes, src->len);
        e->bytes += src->len;
    }
    memcpy(e->etag, o->etag, sizeof e->etag);
    e->size = o->size;
    e->rg = rg;
    e->col = col;
    e->from_disk = from_disk;
    if (!ok) {
        entry_free(e);
        return NULL;
    }
    return e;
}

/* Keep e (replacing an entry for the same chunk), evicting to the budget.
 * Called with c->lock held. */
static void insert(page_map_cache *c, entry *e, const object_ref *o)
{
    entry *old = find(c, o, e->rg, e->col);
    if (old) {
        unlink_entry(c, old);
        c->bytes -= old->bytes;
        c->entries--;
        entry_free(old);
    }
    push_newest(c, e);
    c->bytes += e->bytes;
    c->entries++;
    while (c->bytes > c->budget && c->oldest) {
        entry *v = c->oldest;
        unlink_entry(c, v);
        c->bytes -= v->bytes;
        c->entries--;
        entry_free(v);
    }
    sync_budget(c);
}

static void write_file(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_header_walk *w)
{
    size_t len = 0;
    uint8_t *buf = page_map_file_encode(o->key, o->etag, o->size, rg, col, w, &len);
    if (!buf)
        return;
    char name[64], path[4200];
    page_map_file_name(o->key, o->etag, o->size, rg, col, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    if (sv_write_file_atomic(path, buf, len, atomic_fetch_add(&c->tmp_seq, 1)) == 0) {
        pthread_mutex_lock(&c->lock);
        c->disk_writes++;
        pthread_mutex_unlock(&c->lock);
    } else {
        log_debug("%s: page map of rg %u column %u not written to %s", o->key, rg, col, c->dir);
    }
    free(buf);
}

/* The entry for (o, rg, col) from the cache directory, or NULL. */
static entry *read_file(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col)
{
    char name[64], path[4200];
    page_map_file_name(o->key, o->etag, o->size, rg, col, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    size_t len = 0;
    uint8_t *buf = sv_read_file(path, PAGE_MAP_FILE_MAX, &len);
    page_map_file f;
    entry *e = NULL;
    if (buf && page_map_file_parse(buf, len, &f)) {
        /* The name is a hash: the file must name exactly this chunk. */
        if (strcmp(f.key, o->key) == 0 && strcmp(f.etag, o->etag) == 0 && f.size == o->size && f.rg == rg &&
            f.col == col)
            e = entry_new(o, rg, col, f.windows, f.n, true);
        page_map_file_free(&f);
    } else if (buf) {
        log_info("%s: ignoring %s: not a page map file of this version", o->key, path);
    }
    free(buf);
    return e;
}

void page_map_cache_put(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_header_walk *w)
{
    if (!c || !w->done || !o->key || !o->etag[0] || w->n_pages == 0)
        return;
    if (c->stats)
        STAT_ADD(c->stats, page_maps_walked, 1);
    entry *e = entry_new(o, rg, col, w->confirmed, w->n_pages, false);
    if (!e)
        return;
    if (e->bytes > c->budget) {
        entry_free(e);
    } else {
        pthread_mutex_lock(&c->lock);
        insert(c, e, o);
        pthread_mutex_unlock(&c->lock);
    }
    if (c->dir)
        write_file(c, o, rg, col, w);
}

bool page_map_cache_claim_bundle(page_map_cache *c, const object_ref *o)
{
    if (!c || !o->key || !o->etag[0])
        return false;
    const uint64_t h = page_map_version_hash(o->key, o->etag, o->size);
    pthread_mutex_lock(&c->lock);
    bool seen = false;
    for (uint32_t i = 0; i < c->n_claimed && !seen; i++)
        seen = c->claimed[i] == h;
    if (!seen) {
        c->claimed[c->next_claim] = h;
        c->next_claim = (c->next_claim + 1) % CLAIMED_VERSIONS;
        if (c->n_claimed < CLAIMED_VERSIONS)
            c->n_claimed++;
    }
    pthread_mutex_unlock(&c->lock);
    return !seen;
}

uint32_t page_map_cache_add_bundle(page_map_cache *c, const object_ref *o, const uint8_t *buf, size_t len)
{
    page_map_bundle b;
    if (!c || !o->key || !page_map_bundle_parse(buf, len, &b)) {
        if (c && o->key)
            log_info("%s: ignoring its page-map bundle: malformed", o->key);
        return 0;
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < b.n; i++) {
        const page_map_file *f = &b.maps[i];
        /* A bundle names its version in every map: one for another version
         * (a replaced object, a hash collision) is not this file's. */
        if (strcmp(f->key, o->key) != 0 || strcmp(f->etag, o->etag) != 0 || f->size != o->size)
            continue;
        entry *e = entry_new(o, f->rg, f->col, f->windows, f->n, true);
        if (!e)
            break;
        pthread_mutex_lock(&c->lock);
        /* A map this mount walked itself is worth more: its bytes serve. */
        if (e->bytes <= c->budget && !find(c, o, f->rg, f->col)) {
            insert(c, e, o);
            kept++;
        } else {
            entry_free(e);
        }
        pthread_mutex_unlock(&c->lock);
    }
    page_map_bundle_free(&b);
    if (kept && c->stats)
        STAT_ADD(c->stats, page_maps_from_disk, kept);
    return kept;
}

uint32_t page_map_cache_load_dir_bundle(page_map_cache *c, const object_ref *o)
{
    if (!c || !c->dir || !o->key)
        return 0;
    char name[32], path[4200];
    page_map_bundle_name(o->key, o->etag, o->size, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    size_t len = 0;
    uint8_t *buf = sv_read_file(path, PAGE_MAP_BUNDLE_MAX, &len);
    uint32_t kept = buf ? page_map_cache_add_bundle(c, o, buf, len) : 0;
    free(buf);
    return kept;
}

page_map_cache_counts page_map_cache_counts_now(page_map_cache *c)
{
    page_map_cache_counts n = {0, 0, 0, 0, 0, 0};
    if (!c)
        return n;
    pthread_mutex_lock(&c->lock);
    n = (page_map_cache_counts){c->entries, c->bytes, c->hits, c->misses, c->disk_reads, c->disk_writes};
    pthread_mutex_unlock(&c->lock);
    return n;
}
