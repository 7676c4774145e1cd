/* The mount's one memory budget (--cache-size). Every buffer the daemon
 * keeps for reads counts against it: cache blocks (fetches in flight fill
 * blocks too), parsed footers, walked page maps, the views' planning buffers
 * and page images, and directory listings. The block cache takes what the
 * others leave and gives way at its next allocation when they grow; the
 * others have their own caps inside the budget (footers an eighth, page maps
 * a sixteenth, partial reads half), so the cache never shrinks below
 * MEMORY_BUDGET_CACHE_FLOOR of it.
 *
 * Lock-free: one atomic counter of the bytes held outside the block cache. */
#ifndef SIEVE_MEMORY_BUDGET_H
#define SIEVE_MEMORY_BUDGET_H
#include <stdatomic.h>
#include <stdint.h>

/* The block cache keeps at least limit / MEMORY_BUDGET_CACHE_FLOOR, so that
 * demand reads can still be served while listings are very large. */
#define MEMORY_BUDGET_CACHE_FLOOR 8u

typedef struct memory_budget {
    uint64_t limit;                 /* set before use, read-only after */
    _Atomic uint64_t outside_cache; /* bytes held by everything but the block cache */
} memory_budget;

void memory_budget_init(memory_budget *mb, uint64_t limit);
/* Count n more (or n fewer) bytes held outside the block cache. mb may be
 * NULL: nothing is counted. */
void memory_budget_charge(memory_budget *mb, uint64_t n);
void memory_budget_uncharge(memory_budget *mb, uint64_t n);
uint64_t memory_budget_outside(memory_budget *mb);
/* What the block cache may hold now: the limit less what the others hold,
 * never below limit / MEMORY_BUDGET_CACHE_FLOOR; own_limit without a budget. */
uint64_t memory_budget_cache_share(memory_budget *mb, uint64_t own_limit);

#endif
