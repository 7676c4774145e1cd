/* Walked page maps per object version; see page_map_cache.h. */
#include "page_map_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *newer, *older; /* recency list */
    char *key;
    char etag[S3_ETAG_MAX + 1];
    uint64_t size;
    uint32_t rg, col;
    pq_header_window *windows;
    uint32_t n;
    uint64_t bytes; /* what it holds, counted against the budget */
} entry;

struct page_map_cache {
    pthread_mutex_t lock; /* guards everything below */
    entry *newest, *oldest;
    uint64_t budget, bytes, entries, hits, misses;
};

page_map_cache *page_map_cache_create(uint64_t budget_bytes)
{
    page_map_cache *c = calloc(1, sizeof *c);
    if (c) {
        pthread_mutex_init(&c->lock, NULL);
        c->budget = budget_bytes;
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
    pthread_mutex_destroy(&c->lock);
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
                        pq_header_walk *w)
{
    if (!c || !o->key || !o->etag[0])
        return false;
    pq_header_walk replay;
    if (pq_header_walk_init(&replay, ctx, NULL) != TC_OK)
        return false;
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, o, rg, col);
    bool fed = e != NULL;
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

void page_map_cache_put(page_map_cache *c, const object_ref *o, uint32_t rg, uint32_t col, const pq_header_walk *w)
{
    if (!c || !w->done || !o->key || !o->etag[0] || w->n_pages == 0)
        return;
    entry *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->key = strdup(o->key);
    e->windows = calloc(w->n_pages, sizeof *e->windows);
    e->n = w->n_pages;
    e->bytes = sizeof *e + strlen(o->key) + (uint64_t)w->n_pages * sizeof *e->windows;
    bool ok = e->key && e->windows;
    for (uint32_t i = 0; ok && i < w->n_pages; i++) {
        const pq_header_window *src = &w->confirmed[i];
        e->windows[i] = (pq_header_window){src->offset, malloc(src->len), src->len};
        ok = e->windows[i].bytes != NULL;
        if (ok)
            memcpy(e->windows[i].bytes, src->bytes, src->len);
        e->bytes += src->len;
    }
    memcpy(e->etag, o->etag, sizeof e->etag);
    e->size = o->size;
    e->rg = rg;
    e->col = col;
    if (!ok || e->bytes > c->budget) {
        entry_free(e);
        return;
    }
    pthread_mutex_lock(&c->lock);
    entry *old = find(c, o, rg, col);
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
    pthread_mutex_unlock(&c->lock);
}

page_map_cache_counts page_map_cache_counts_now(page_map_cache *c)
{
    page_map_cache_counts n = {0, 0, 0, 0};
    if (!c)
        return n;
    pthread_mutex_lock(&c->lock);
    n = (page_map_cache_counts){c->entries, c->bytes, c->hits, c->misses};
    pthread_mutex_unlock(&c->lock);
    return n;
}
