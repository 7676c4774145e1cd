/* The mount's one memory budget; see memory_budget.h. */
#include "memory_budget.h"

void memory_budget_init(memory_budget *mb, uint64_t limit)
{
    mb->limit = limit;
    atomic_init(&mb->outside_cache, 0);
}

void memory_budget_charge(memory_budget *mb, uint64_t n)
{
    if (mb && n)
        atomic_fetch_add(&mb->outside_cache, n);
}

void memory_budget_uncharge(memory_budget *mb, uint64_t n)
{
    if (mb && n)
        atomic_fetch_sub(&mb->outside_cache, n);
}

uint64_t memory_budget_outside(memory_budget *mb)
{
    return mb ? atomic_load(&mb->outside_cache) : 0;
}

uint64_t memory_budget_cache_share(memory_budget *mb, uint64_t own_limit)
{
    if (!mb)
        return own_limit;
    uint64_t floor = mb->limit / MEMORY_BUDGET_CACHE_FLOOR, outside = atomic_load(&mb->outside_cache);
    uint64_t share = outside < mb->limit ? mb->limit - outside : 0;
    if (share > own_limit)
        share = own_limit;
    return share > floor ? share : floor;
}
