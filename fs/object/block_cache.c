#include "block_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct block_cache {
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t changed;
    uint32_t block_size;
    uint64_t limit;
    memory_budget *budget; /* the mount's, whose share lowers limit; NULL: none (set before use) */
    /* Bytes the blocks hold, all states: each block's data (block_size, or
     * its own length when short, so 10,000 small objects do not take 16 KiB
     * each) plus its bookkeeping (BLOCK_OVERHEAD). */
    uint64_t bytes;
    cache_block **buckets;
    size_t nbuckets;
    TAILQ_HEAD(lru_list, cache_block) lru; /* READY and unpinned only; first = most recent */
    /* Buffers of dropped blocks, reused so that a streaming read does not
     * page-fault fresh memory for every block. Counted in `bytes`. */
    void **spare;
    size_t n_spare, cap_spare;
    block_fetch *in_flight; /* fetches set and not completed (block_fetch.next_in_flight) */
    sv_stats *stats;
};

/* What a block costs besides its data: its struct and a hash link. */
#define BLOCK_OVERHEAD ((uint64_t)sizeof(cache_block) + 16u)

static uint64_t block_cost(uint32_t alloc)
{
    return alloc + BLOCK_OVERHEAD;
}

static size_t bucket_of(const block_cache *bc, uint64_t object_id, uint64_t index)
{
    uint64_t h = object_id * 0x9E3779B97F4A7C15ull ^ (index + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    return (size_t)(h & (bc->nbuckets - 1));
}

block_cache *block_cache_create(uint32_t block_size, uint64_t limit_bytes, sv_stats *stats)
{
    if (block_size == 0 || limit_bytes < block_cost(block_size))
        return NULL;
    block_cache *bc = calloc(1, sizeof *bc);
    if (!bc)
        return NULL;
    uint64_t blocks = limit_bytes / block_size;
    size_t nb = 64;
    while (nb < blocks * 2 && nb < (1u << 24))
        nb *= 2;
    bc->buckets = calloc(nb, sizeof *bc->buckets);
    bc->cap_spare = 64;
    bc->spare = calloc(bc->cap_spare, sizeof *bc->spare);
    if (!bc->buckets || !bc->spare) {
        free(bc->buckets);
        free(bc->spare);
        free(bc);
        return NULL;
    }
    bc->nbuckets = nb;
    bc->block_size = block_size;
    bc->limit = limit_bytes;
    bc->stats = stats;
    TAILQ_INIT(&bc->lru);
    pthread_mutex_init(&bc->lock, NULL);
    sv_cond_init(&bc->changed); /* CLOCK_MONOTONIC: waits have deadlines */
    return bc;
}

void block_cache_destroy(block_cache *bc)
{
    if (!bc)
        return;
    for (size_t i = 0; i < bc->nbuckets; i++) {
        for (cache_block *b = bc->buckets[i], *nx; b; b = nx) {
            nx = b->hash_next;
            free(b->data);
            free(b);
        }
    }
    for (size_t i = 0; i < bc->n_spare; i++)
        free(bc->spare[i]);
    free(bc->spare);
    free(bc->buckets);
    pthread_mutex_destroy(&bc->lock);
    pthread_cond_destroy(&bc->changed);
    free(bc);
}

uint32_t block_cache_block_size(const block_cache *bc) { return bc->block_size; }
uint64_t block_cache_limit(const block_cache *bc) { return bc->limit; }

void block_cache_share_budget(block_cache *bc, memory_budget *mb)
{
    bc->budget = mb;
}

uint64_t block_cache_cost_of(uint32_t data_bytes)
{
    return block_cost(data_bytes);
}

uint64_t block_cache_bytes(block_cache *bc)
{
    pthread_mutex_lock(&bc->lock);
    uint64_t n = bc->bytes;
    pthread_mutex_unlock(&bc->lock);
    return n;
}

/* The least recently used block on the list, or NULL. */
static cache_block *lru_last(block_cache *bc)
{
    return TAILQ_LAST(&bc->lru, lru_list);
}

static void hash_remove(block_cache *bc, cache_block *b)
{
    cache_block **pp = &bc->buckets[bucket_of(bc, b->object_id, b->index)];
    while (*pp && *pp != b)
        pp = &(*pp)->hash_next;
    if (*pp)
        *pp = b->hash_next;
}

static void drop_block(block_cache *bc, cache_block *b, bool keep_spare)
{
    hash_remove(bc, b);
    if (keep_spare && b->alloc == bc->block_size && bc->n_spare < bc->cap_spare) {
        bc->spare[bc->n_spare++] = b->data; /* its data still counted in bytes */
        bc->bytes -= BLOCK_OVERHEAD;
    } else {
        bc->bytes -= block_cost(b->alloc);
        free(b->data);
    }
    free(b);
}

/* What the blocks may hold now: the limit, less what the rest of the
 * mount's memory budget holds. */
static uint64_t room_limit(const block_cache *bc)
{
    return memory_budget_cache_share(bc->budget, bc->limit);
}

/* Release spare buffers, keeping `keep`, until `need` more bytes fit (lock held). */
static void trim_spares(block_cache *bc, uint64_t need, size_t keep)
{
    const uint64_t lim = room_limit(bc);
    while (bc->n_spare > keep && bc->bytes + need > lim) {
        free(bc->spare[--bc->n_spare]);
        bc->bytes -= bc->block_size;
    }
}

/* Evict least recently used unpinned READY blocks until `need` more bytes
 * fit. An evicted full block's buffer becomes a spare, which is room for
 * exactly one new full block: for a full block, one spare is enough. */
static bool make_room(block_cache *bc, uint64_t need)
{
    const uint64_t lim = room_limit(bc);
    const bool full = need == block_cost(bc->block_size);
    if (full) /* the limit may have shrunk (memory_budget.h): spares beyond one go first */
        trim_spares(bc, BLOCK_OVERHEAD, 1);
    if (full && bc->n_spare > 0 && bc->bytes + BLOCK_OVERHEAD <= lim)
        return true;
    for (cache_block *victim; bc->bytes + need > lim && (victim = lru_last(bc));) {
        TAILQ_REMOVE(&bc->lru, victim, lru);
        drop_block(bc, victim, need == block_cost(bc->block_size));
        if (bc->stats)
            STAT_ADD(bc->stats, cache_evictions, 1);
        if (full && bc->n_spare > 0 && bc->bytes + BLOCK_OVERHEAD <= lim)
            return true;
    }
    return bc->bytes + need <= lim;
}

static cache_block *find(block_cache *bc, uint64_t object_id, uint64_t index)
{
    for (cache_block *b = bc->buckets[bucket_of(bc, object_id, index)]; b; b = b->hash_next)
        if (b->object_id == object_id && b->index == index)
            return b;
    return NULL;
}

static void pin(block_cache *bc, cache_block *b)
{
    if (b->pins == 0 && b->state == BLOCK_READY)
        TAILQ_REMOVE(&bc->lru, b, lru);
    b->pins++;
    b->drop_behind = false; /* wanted again: an ordinary cached block */
}

bool block_cache_is_ready(block_cache *bc, const cache_block *b)
{
    pthread_mutex_lock(&bc->lock);
    bool ready = b->state == BLOCK_READY;
    pthread_mutex_unlock(&bc->lock);
    return ready;
}

void block_cache_pin(block_cache *bc, cache_block *b)
{
    pthread_mutex_lock(&bc->lock);
    pin(bc, b);
    pthread_mutex_unlock(&bc->lock);
}

cache_block *block_cache_lookup(block_cache *bc, uint64_t object_id, uint64_t index)
{
    pthread_mutex_lock(&bc->lock);
    cache_block *b = find(bc, object_id, index);
    if (b)
        pin(bc, b);
    pthread_mutex_unlock(&bc->lock);
    return b;
}

cache_block *block_cache_acquire(block_cache *bc, uint64_t object_id, uint64_t index, uint32_t len,
                                 bool only_if_room, bool *created)
{
    *created = false;
    if (len == 0 || len > bc->block_size)
        return NULL;
    pthread_mutex_lock(&bc->lock);
    cache_block *b = find(bc, object_id, index);
    if (b) {
        pin(bc, b);
        pthread_mutex_unlock(&bc->lock);
        return b;
    }
    /* Demand reads may overshoot the limit while everything is pinned or
     * loading (bounded by reads in flight); prefetch never does. */
    const bool full = len == bc->block_size;
    if (!full)
        trim_spares(bc, block_cost(len), 0);
    if (!make_room(bc, block_cost(full ? bc->block_size : len)) && only_if_room) {
        pthread_mutex_unlock(&bc->lock);
        return NULL;
    }
    /* Recycle a block a streaming reader is done with before touching fresh memory. */
    cache_block *victim = lru_last(bc);
    if (full && bc->n_spare == 0 && victim && victim->drop_behind) {
        TAILQ_REMOVE(&bc->lru, victim, lru);
        drop_block(bc, victim, true);
        if (bc->stats)
            STAT_ADD(bc->stats, cache_evictions, 1);
    }
    b = calloc(1, sizeof *b);
    uint8_t *data = NULL;
    bool reused = false;
    if (b && full && bc->n_spare > 0) {
        data = bc->spare[--bc->n_spare];
        reused = true;
    } else if (b) {
        data = malloc(full ? bc->block_size : len);
    }
    if (!data) {
        free(b);
        pthread_mutex_unlock(&bc->lock);
        return NULL;
    }
    b->object_id = object_id;
    b->index = index;
    b->data = data;
    b->len = len;
    b->alloc = full ? bc->block_size : len;
    b->state = BLOCK_LOADING;
    b->pins = 1;
    size_t i = bucket_of(bc, object_id, index);
    b->hash_next = bc->buckets[i];
    bc->buckets[i] = b;
    bc->bytes += reused ? BLOCK_OVERHEAD : block_cost(b->alloc);
    *created = true;
    pthread_mutex_unlock(&bc->lock);
    return b;
}

/* Take f off the in-flight list (once). Called with bc->lock held. */
static void forget_fetch_locked(block_cache *bc, block_fetch *f)
{
    if (!f || !f->in_flight)
        return;
    if (f->prev_in_flight)
        f->prev_in_flight->next_in_flight = f->next_in_flight;
    else
        bc->in_flight = f->next_in_flight;
    if (f->next_in_flight)
        f->next_in_flight->prev_in_flight = f->prev_in_flight;
    f->next_in_flight = f->prev_in_flight = NULL;
    f->in_flight = false;
}

void block_cache_complete(block_cache *bc, cache_block *b, int error)
{
    pthread_mutex_lock(&bc->lock);
    forget_fetch_locked(bc, b->fetch);
    b->state = error ? BLOCK_FAILED : BLOCK_READY;
    b->error = error;
    b->fetch = NULL;
    pthread_cond_broadcast(&bc->changed);
    pthread_mutex_unlock(&bc->lock);
}

static void unpin_locked(block_cache *bc, cache_block *b);

void block_cache_complete_run(block_cache *bc, cache_block *const *blocks, size_t n, int error)
{
    pthread_mutex_lock(&bc->lock);
    if (n)
        forget_fetch_locked(bc, blocks[0]->fetch);
    for (size_t i = 0; i < n; i++) {
        blocks[i]->state = error ? BLOCK_FAILED : BLOCK_READY;
        blocks[i]->error = error;
        blocks[i]->fetch = NULL;
    }
    pthread_cond_broadcast(&bc->changed);
    for (size_t i = 0; i < n; i++)
        unpin_locked(bc, blocks[i]);
    pthread_mutex_unlock(&bc->lock);
}

int block_cache_wait(block_cache *bc, cache_block *b, const sv_cancel *tok)
{
    pthread_mutex_lock(&bc->lock);
    int e = 0;
    while (b->state == BLOCK_LOADING && !e)
        e = sv_cancel_wait(tok, &bc->changed, &bc->lock);
    /* Given up: the block stays LOADING, owned by its fetch (which holds a
     * pin until it completes), and the caller's pin is released as usual. */
    if (b->state != BLOCK_LOADING)
        e = b->state == BLOCK_FAILED ? b->error : 0;
    pthread_mutex_unlock(&bc->lock);
    return e;
}

void block_cache_release_consumed(block_cache *bc, cache_block *b)
{
    pthread_mutex_lock(&bc->lock);
    if (b->pins == 1 && b->state == BLOCK_READY) {
        b->pins = 0;
        b->drop_behind = true;
        TAILQ_INSERT_TAIL(&bc->lru, b, lru); /* the first to go */
        trim_spares(bc, 0, 0);
        make_room(bc, 0);
        pthread_mutex_unlock(&bc->lock);
        return;
    }
    pthread_mutex_unlock(&bc->lock);
    block_cache_release(bc, b);
}

void block_cache_release(block_cache *bc, cache_block *b)
{
    pthread_mutex_lock(&bc->lock);
    unpin_locked(bc, b);
    pthread_mutex_unlock(&bc->lock);
}

void block_cache_set_fetch(block_cache *bc, block_fetch *f)
{
    pthread_mutex_lock(&bc->lock);
    for (size_t i = 0; i < f->n; i++)
        f->blocks[i]->fetch = f;
    f->prev_in_flight = NULL;
    f->next_in_flight = bc->in_flight;
    if (bc->in_flight)
        bc->in_flight->prev_in_flight = f;
    bc->in_flight = f;
    f->in_flight = true;
    pthread_mutex_unlock(&bc->lock);
}

/* Cancel fetch f when nobody but it pins any of its blocks: its blocks
 * leave the index at once, so a reader arriving now creates a fresh block
 * rather than join a GET about to be cut off. Called with bc->lock held. */
static bool cancel_if_unwanted_locked(block_cache *bc, block_fetch *f)
{
    bool wanted = !f || sv_cancel_check(&f->cancel) != 0;
    for (size_t i = 0; f && i < f->n && !wanted; i++)
        wanted = f->blocks[i]->pins > 1 || f->blocks[i]->detached;
    if (wanted)
        return false;
    for (size_t i = 0; i < f->n; i++) {
        hash_remove(bc, f->blocks[i]);
        f->blocks[i]->detached = true;
    }
    sv_cancel_fire(&f->cancel, ECANCELED);
    return true;
}

void block_cache_release_abandoned(block_cache *bc, cache_block *b)
{
    pthread_mutex_lock(&bc->lock);
    block_fetch *f = b->state == BLOCK_LOADING ? b->fetch : NULL;
    unpin_locked(bc, b); /* LOADING: the fetch's pin keeps b */
    cancel_if_unwanted_locked(bc, f);
    pthread_mutex_unlock(&bc->lock);
}

size_t block_cache_cancel_unwanted(block_cache *bc, uint64_t object_id)
{
    size_t cancelled = 0;
    pthread_mutex_lock(&bc->lock);
    /* A cancelled fetch stays on the list until its run completes. */
    for (block_fetch *f = bc->in_flight; f; f = f->next_in_flight)
        if (f->n && f->blocks[0]->object_id == object_id && cancel_if_unwanted_locked(bc, f))
            cancelled++;
    pthread_mutex_unlock(&bc->lock);
    return cancelled;
}

static void unpin_locked(block_cache *bc, cache_block *b)
{
    if (--b->pins == 0) {
        if (b->detached) {
            drop_block(bc, b, true); /* hash_remove finds nothing: fine */
        } else if (b->state == BLOCK_READY) {
            TAILQ_INSERT_HEAD(&bc->lru, b, lru);
            trim_spares(bc, 0, 0);
            make_room(bc, 0);
        } else if (b->state == BLOCK_FAILED) {
            drop_block(bc, b, true);
        }
        /* A LOADING block with no pins cannot exist: its fetch holds a pin. */
    }
}
