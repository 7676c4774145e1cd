/* Growing an array by doubling, with an upper bound on its element count, in
 * one place instead of a hand-written loop at every call site:
 *
 *   if (!sv_grow((void **)&v->items, &v->cap, v->n + 1, sizeof *v->items, 64, MAX_ITEMS))
 *       return fail(...);
 */
#ifndef SIEVE_SV_GROW_H
#define SIEVE_SV_GROW_H
#include <stdbool.h>
#include <stddef.h>

/* Make *arr hold at least need elements of elem bytes: capacity doubles from
 * first (at least 1) and never passes max. False (nothing changed) when need
 * is over max or memory runs out. */
bool sv_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first, size_t max);

#endif
