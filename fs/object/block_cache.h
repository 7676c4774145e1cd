/* Bounded in-memory cache of fixed-size blocks of S3 objects.
 *
 * A block is identified by (object id, block index); an object id names one
 * immutable version of an object (key + ETag), so cached bytes never need
 * invalidation. Readers pin blocks while they copy from them; a block being
 * fetched is LOADING and readers wait on it. Eviction is LRU over READY
 * blocks that nobody pins. One mutex guards the whole cache; waiting uses one
 * condition variable (fetch completions broadcast). */
#ifndef SIEVE_BLOCK_CACHE_H
#define SIEVE_BLOCK_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "memory_budget.h"
#include "stats.h"
#include "sv_cancel.h"

typedef enum { BLOCK_LOADING = 0, BLOCK_READY, BLOCK_FAILED } block_state;

typedef struct cache_block cache_block;

/* One GET filling a run of LOADING blocks (owned by its fetcher, alive until
 * the run completes): what lets the last reader who gives up on it cancel it. */
typedef struct block_fetch {
    sv_cancel cancel;            /* the GET's store_request_opts.cancel */
    cache_block *const *blocks;  /* the run */
    size_t n;
    /* The cache's list of fetches in flight (block_cache_set_fetch until the
     * run completes), under the cache's lock: what a closing file's
     * cancellation looks through, rather than every block. */
    struct block_fetch *next_in_flight, *prev_in_flight;
    bool in_flight;
} block_fetch;

struct cache_block {
    uint64_t object_id;
    uint64_t index;
    uint8_t *data;
    uint32_t len;       /* bytes valid when READY (the last block of an object is short) */
    uint32_t alloc;     /* bytes of data: block_size, or len for a short block */
    block_state state;
    int error;          /* errno when FAILED */
    uint32_t pins;
    bool drop_behind;   /* consumed by a streaming reader: first to be reused */
    bool detached;      /* out of the index (its fetch was abandoned): freed at its last unpin */
    block_fetch *fetch; /* while LOADING: the GET filling it (block_cache_set_fetch) */
    struct cache_block *hash_next;
    TAILQ_ENTRY(cache_block) lru; /* on the cache's LRU list iff READY and unpinned */
};

typedef struct block_cache block_cache;

block_cache *block_cache_create(uint32_t block_size, uint64_t limit_bytes, sv_stats *stats);
void block_cache_destroy(block_cache *bc);
uint32_t block_cache_block_size(const block_cache *bc);

/* Find the block or create it in LOADING state (data allocated, len bytes
 * expected). Either way the block comes back pinned. *created tells whether
 * the caller must fetch it (and then call block_cache_complete). Returns NULL
 * when out of memory. With `only_if_room`, a missing block is not created when
 * the cache is over its limit and nothing can be evicted (prefetch uses this
 * so it never pushes memory past the limit); *created is false then. */
cache_block *block_cache_acquire(block_cache *bc, uint64_t object_id, uint64_t index, uint32_t len,
                                 bool only_if_room, bool *created);
/* Look up without creating; pinned if found. */
cache_block *block_cache_lookup(block_cache *bc, uint64_t object_id, uint64_t index);
/* Whether b is READY now (under the lock: a fetch may be completing it). */
bool block_cache_is_ready(block_cache *bc, const cache_block *b);
/* Add a pin to a block the caller already holds (e.g. to hand one to a fetch). */
void block_cache_pin(block_cache *bc, cache_block *b);
/* Mark a LOADING block READY (error == 0) or FAILED (errno) and wake waiters. */
void block_cache_complete(block_cache *bc, cache_block *b, int error);
/* Complete a run of LOADING blocks fetched together and drop the fetch's pin
 * on each: one lock and one wake-up for the whole run. */
void block_cache_complete_run(block_cache *bc, cache_block *const *blocks, size_t n, int error);
/* Wait until the block is no longer LOADING, tok's deadline passes or tok is
 * cancelled: 0, the errno of a failed fetch, or tok's reason (ETIMEDOUT,
 * EINTR, ESHUTDOWN). tok may be NULL (no deadline). */
int block_cache_wait(block_cache *bc, cache_block *b, const sv_cancel *tok);
/* Unpin. A FAILED block is dropped when its last pin goes, so a later read retries. */
void block_cache_release(block_cache *bc, cache_block *b);
/* Tie a run of LOADING blocks to the GET that fills them, before it is sent. */
void block_cache_set_fetch(block_cache *bc, block_fetch *f);
/* Unpin a block its reader gave up waiting for. When nobody but its fetch
 * pins any block of that fetch any more, the fetch is cancelled (f->cancel
 * fires) and its blocks leave the index at once, so a later read fetches
 * them anew instead of waiting on a GET that is being cut off. */
void block_cache_release_abandoned(block_cache *bc, cache_block *b);
/* The same for every fetch of object_id nobody waits for (a prefetch whose
 * reader closed the file): cancelled, its blocks out of the index. Returns
 * how many fetches were cancelled. */
size_t block_cache_cancel_unwanted(block_cache *bc, uint64_t object_id);
/* Unpin a block a streaming reader has read past. It goes to the cold end of
 * the LRU and its buffer is reused for the next new block, even below the
 * limit, so a long sequential read cycles through a small working set instead
 * of faulting in fresh memory and flushing everything else from the cache. */
void block_cache_release_consumed(block_cache *bc, cache_block *b);

uint64_t block_cache_bytes(block_cache *bc);
/* What a block of data_bytes (a full block, or a short one's length) counts
 * against the limit: its data and its bookkeeping. */
uint64_t block_cache_cost_of(uint32_t data_bytes);
uint64_t block_cache_limit(const block_cache *bc);
/* Hold the blocks within what the rest of mb leaves (memory_budget.h), from
 * the next allocation on. Call before use; mb must outlive the cache. */
void block_cache_share_budget(block_cache *bc, memory_budget *mb);

#endif
