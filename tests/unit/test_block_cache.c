/* Block cache: pinning, waiting, failure, LRU eviction and the memory bound. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "block_cache.h"

#define BS 4096u
#define CB block_cache_cost_of(BS) /* what a full block counts */

static cache_block *get(block_cache *bc, uint64_t obj, uint64_t idx, bool room, bool *created)
{
    return block_cache_acquire(bc, obj, idx, BS, room, created);
}

/* Read block idx of obj as a reader would: acquire it, fill it (complete)
 * and release it, as consumed or not. Returns whether it was a miss. */
static bool read_block(block_cache *bc, uint64_t obj, uint64_t idx, bool consumed)
{
    bool created;
    cache_block *b = get(bc, obj, idx, false, &created);
    block_cache_complete(bc, b, 0);
    if (consumed)
        block_cache_release_consumed(bc, b);
    else
        block_cache_release(bc, b);
    return created;
}

Test(block_cache, create_rejects_bad_sizes)
{
    cr_assert_null(block_cache_create(0, 1 << 20, NULL));
    cr_assert_null(block_cache_create(BS, BS - 1, NULL));
}

Test(block_cache, miss_then_hit)
{
    sv_stats st = {0};
    block_cache *bc = block_cache_create(BS, 8 * CB, &st);
    bool created;
    cache_block *b = get(bc, 1, 0, false, &created);
    cr_assert(created);
    cr_assert_eq(b->state, BLOCK_LOADING);
    memset(b->data, 0xAB, BS);
    block_cache_complete(bc, b, 0);
    block_cache_release(bc, b);

    cache_block *again = get(bc, 1, 0, false, &created);
    cr_assert_not(created);
    cr_assert_eq(again, b);
    cr_assert_eq(block_cache_wait(bc, again, NULL), 0);
    cr_assert_eq(again->data[BS - 1], 0xAB);
    block_cache_release(bc, again);

    /* A different object with the same index is a different block. */
    cache_block *other = get(bc, 2, 0, false, &created);
    cr_assert(created);
    cr_assert_neq(other, b);
    block_cache_complete(bc, other, 0);
    block_cache_release(bc, other);
    cr_assert_eq(block_cache_bytes(bc), 2 * CB);
    block_cache_destroy(bc);
}

Test(block_cache, failed_block_is_dropped_and_refetched)
{
    block_cache *bc = block_cache_create(BS, 8 * CB, NULL);
    bool created;
    cache_block *b = get(bc, 1, 5, false, &created);
    block_cache_complete(bc, b, EIO);
    cr_assert_eq(block_cache_wait(bc, b, NULL), EIO);
    block_cache_release(bc, b);
    cr_assert_null(block_cache_lookup(bc, 1, 5));
    cache_block *again = get(bc, 1, 5, false, &created);
    cr_assert(created, "a failed block must be fetched again, not served");
    block_cache_complete(bc, again, 0);
    block_cache_release(bc, again);
    block_cache_destroy(bc);
}

Test(block_cache, lru_eviction_keeps_the_bound)
{
    sv_stats st = {0};
    block_cache *bc = block_cache_create(BS, 4 * CB, &st);
    for (uint64_t i = 0; i < 4; i++)
        read_block(bc, 1, i, false);
    /* Touch block 0 so block 1 is the least recently used. */
    cache_block *b0 = block_cache_lookup(bc, 1, 0);
    cr_assert_not_null(b0);
    block_cache_release(bc, b0);
    for (uint64_t i = 4; i < 6; i++) {
        cr_assert(read_block(bc, 1, i, false));
        cr_assert_leq(block_cache_bytes(bc), 4 * CB);
    }
    cr_assert_null(block_cache_lookup(bc, 1, 1), "LRU block 1 should be gone");
    cr_assert_null(block_cache_lookup(bc, 1, 2), "block 2 should be gone next");
    cache_block *still = block_cache_lookup(bc, 1, 0);
    cr_assert_not_null(still, "recently used block 0 must survive");
    block_cache_release(bc, still);
    cr_assert_eq(STAT_GET(&st, cache_evictions), 2);
    block_cache_destroy(bc);
}

Test(block_cache, pinned_blocks_are_never_evicted_and_prefetch_respects_limit)
{
    block_cache *bc = block_cache_create(BS, 2 * CB, NULL);
    bool created;
    cache_block *a = get(bc, 1, 0, false, &created);
    cache_block *b = get(bc, 1, 1, false, &created);
    block_cache_complete(bc, a, 0);
    block_cache_complete(bc, b, 0);
    /* Both pinned: prefetch gets nothing, demand may overshoot. */
    cr_assert_null(get(bc, 1, 2, true, &created));
    cr_assert_not(created);
    cache_block *c = get(bc, 1, 2, false, &created);
    cr_assert_not_null(c);
    cr_assert(created);
    memset(a->data, 1, BS);
    cr_assert_eq(a->data[0], 1, "a pinned block keeps its memory");
    block_cache_complete(bc, c, 0);
    block_cache_release(bc, a);
    block_cache_release(bc, b);
    block_cache_release(bc, c);
    cr_assert_leq(block_cache_bytes(bc), 2 * CB, "back under the limit once unpinned");
    block_cache_destroy(bc);
}

typedef struct {
    block_cache *bc;
    cache_block *b;
    int result;
} waiter_arg;

static void *waiter(void *p)
{
    waiter_arg *w = p;
    w->result = block_cache_wait(w->bc, w->b, NULL);
    return NULL;
}

Test(block_cache, waiters_wake_on_completion)
{
    block_cache *bc = block_cache_create(BS, 8 * CB, NULL);
    bool created;
    cache_block *b = get(bc, 9, 0, false, &created);
    pthread_t th[4];
    waiter_arg args[4];
    for (int i = 0; i < 4; i++) {
        bool c2;
        args[i] = (waiter_arg){bc, get(bc, 9, 0, false, &c2), -1};
        cr_assert_not(c2);
        pthread_create(&th[i], NULL, waiter, &args[i]);
    }
    usleep(10000);
    block_cache_complete(bc, b, 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(args[i].result, 0);
        block_cache_release(bc, args[i].b);
    }
    block_cache_release(bc, b);
    block_cache_destroy(bc);
}

Test(block_cache, acquire_rejects_bad_length)
{
    block_cache *bc = block_cache_create(BS, 8 * CB, NULL);
    bool created;
    cr_assert_null(block_cache_acquire(bc, 1, 0, 0, false, &created));
    cr_assert_null(block_cache_acquire(bc, 1, 0, BS + 1, false, &created));
    block_cache_destroy(bc);
}

Test(block_cache, consumed_blocks_are_recycled_before_fresh_memory)
{
    sv_stats st = {0};
    block_cache *bc = block_cache_create(BS, 64 * BS, &st);
    /* A streaming reader: each block is released as consumed. */
    for (uint64_t i = 0; i < 32; i++) {
        cr_assert(read_block(bc, 1, i, true));
        cr_assert_leq(block_cache_bytes(bc), 2 * BS, "the working set stays small (block %llu)",
                      (unsigned long long)i);
    }
    /* An ordinary block is not displaced by the stream's recycling... */
    read_block(bc, 2, 0, false);
    for (uint64_t i = 32; i < 40; i++)
        read_block(bc, 1, i, true);
    cache_block *still = block_cache_lookup(bc, 2, 0);
    cr_assert_not_null(still, "recycling consumed blocks must not evict other data");
    /* ...and a consumed block read again becomes ordinary. */
    block_cache_release(bc, still);
    block_cache_destroy(bc);
}

Test(block_cache, small_objects_take_their_own_size)
{
    /* 10,000 five-byte objects: each block holds 5 bytes, not a whole block. */
    block_cache *bc = block_cache_create(16384, 64u << 20, NULL);
    bool created;
    for (uint64_t obj = 0; obj < 10000; obj++) {
        cache_block *b = block_cache_acquire(bc, obj, 0, 5, false, &created);
        cr_assert(created);
        memcpy(b->data, "12345", 5);
        block_cache_complete(bc, b, 0);
        block_cache_release(bc, b);
    }
    cr_assert_eq(block_cache_bytes(bc), 10000 * block_cache_cost_of(5));
    cr_assert_lt(block_cache_bytes(bc), 2u << 20, "%llu bytes", (unsigned long long)block_cache_bytes(bc));
    cache_block *b = block_cache_lookup(bc, 9999, 0);
    cr_assert_not_null(b);
    cr_assert_eq(memcmp(b->data, "12345", 5), 0);
    block_cache_release(bc, b);
    block_cache_destroy(bc);
}

Test(block_cache, short_and_full_blocks_share_the_bound)
{
    block_cache *bc = block_cache_create(BS, 3 * CB, NULL);
    bool created;
    for (uint64_t i = 0; i < 50; i++) {
        uint32_t len = i % 3 == 0 ? BS : (uint32_t)(1 + i * 37 % (BS - 1));
        cache_block *b = block_cache_acquire(bc, i, 0, len, false, &created);
        cr_assert(created);
        memset(b->data, (int)i, len);
        block_cache_complete(bc, b, 0);
        block_cache_release(bc, b);
        cr_assert_leq(block_cache_bytes(bc), 3 * CB, "after block %llu", (unsigned long long)i);
    }
    block_cache_destroy(bc);
}

/* Fill the cache with n unpinned READY blocks of object obj. */
static void fill(block_cache *bc, uint64_t obj, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        read_block(bc, obj, i, false);
}

Test(block_cache, gives_way_to_the_rest_of_the_mounts_budget)
{
    memory_budget mb;
    memory_budget_init(&mb, 64 * CB);
    block_cache *bc = block_cache_create(BS, 64 * CB, NULL);
    block_cache_share_budget(bc, &mb);
    fill(bc, 1, 64);
    cr_assert_leq(block_cache_bytes(bc), 64 * CB);
    cr_assert_geq(block_cache_bytes(bc), 60 * CB, "the whole budget is the cache's while nothing else holds memory");

    /* Partial reads, footers or listings take half: the next block evicts down to the rest. */
    memory_budget_charge(&mb, 32 * CB);
    read_block(bc, 2, 0, false);
    cr_assert_leq(block_cache_bytes(bc) + memory_budget_outside(&mb), 64 * CB);
    cr_assert_gt(block_cache_bytes(bc), 16 * CB);

    /* However much they take, the cache keeps its floor for demand reads. */
    memory_budget_charge(&mb, 64 * CB);
    read_block(bc, 2, 1, false);
    cr_assert_leq(block_cache_bytes(bc), 64 * CB / MEMORY_BUDGET_CACHE_FLOOR);
    cr_assert_geq(block_cache_bytes(bc), 64 * CB / MEMORY_BUDGET_CACHE_FLOOR - CB);

    /* And it grows back when they let go. */
    memory_budget_uncharge(&mb, 96 * CB);
    fill(bc, 3, 64);
    cr_assert_geq(block_cache_bytes(bc), 60 * CB);
    block_cache_destroy(bc);
}
