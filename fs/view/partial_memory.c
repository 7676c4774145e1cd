/* The memory budget of partial reads; see partial_memory.h. */
#include "partial_memory.h"

void partial_memory_init(partial_memory *pm, uint64_t limit, memory_budget *mb)
{
    atomic_init(&pm->used, 0);
    if (mb && limit > mb->limit / 2)
        limit = mb->limit / 2;
    pm->limit = limit;
    pm->mem = mb;
}

bool partial_memory_reserve(partial_memory *pm, uint64_t n)
{
    if (!pm)
        return true;
    uint64_t cur = atomic_load(&pm->used);
    do {
        if (n > pm->limit || cur > pm->limit - n)
            return false;
    } while (!atomic_compare_exchange_weak(&pm->used, &cur, cur + n));
    memory_budget_charge(pm->mem, n);
    return true;
}

void partial_memory_release(partial_memory *pm, uint64_t n)
{
    if (pm && n) {
        atomic_fetch_sub(&pm->used, n);
        memory_budget_uncharge(pm->mem, n);
    }
}

uint64_t partial_memory_used(partial_memory *pm)
{
    return pm ? atomic_load(&pm->used) : 0;
}
