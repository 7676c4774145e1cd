/* The memory budget of partial reads (--partial-memory): the buffers of
 * planning rounds and the page images views keep. A plan that cannot reserve
 * its bytes serves those pages real (ordinary reads through the block cache)
 * rather than waiting or failing. Its bytes are part of the mount's memory
 * budget (memory_budget.h), of which it may take at most half.
 * Lock-free: one atomic counter. */
#ifndef SIEVE_PARTIAL_MEMORY_H
#define SIEVE_PARTIAL_MEMORY_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "memory_budget.h"

/* The default limit: half of --cache-size. */
#define PARTIAL_MEMORY_DEFAULT UINT64_MAX

typedef struct {
    _Atomic uint64_t used;
    uint64_t limit;      /* set before use, read-only after */
    memory_budget *mem;  /* the mount's, charged what is taken; may be NULL */
} partial_memory;

/* limit: at most half of mb's (PARTIAL_MEMORY_DEFAULT: half); mb may be NULL. */
void partial_memory_init(partial_memory *pm, uint64_t limit, memory_budget *mb);
/* Take n bytes of the budget; false (nothing taken) when that would exceed
 * the limit. pm may be NULL: no budget, always true. */
bool partial_memory_reserve(partial_memory *pm, uint64_t n);
void partial_memory_release(partial_memory *pm, uint64_t n);
uint64_t partial_memory_used(partial_memory *pm);

#endif
