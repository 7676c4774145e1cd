/* The arena a pq_file_meta is decoded into: one free, and a cap on what
 * a hostile footer can make the decoder allocate (PQ_MAX_DECODED_BYTES). */
#include "parquet_meta_internal.h"

#include <stdlib.h>
#include <string.h>

struct pq_arena_block {
    struct pq_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

struct pq_arena {
    struct pq_arena_block *head;
    uint64_t total; /* bytes requested from malloc */
    uint64_t limit;
};

struct pq_arena *pqm_arena_new(uint64_t limit)
{
    struct pq_arena *a = calloc(1, sizeof *a);
    if (a)
        a->limit = limit;
    return a;
}

void pqm_arena_free(struct pq_arena *a)
{
    if (!a)
        return;
    struct pq_arena_block *b = a->head;
    while (b) {
        struct pq_arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

/* Zeroed memory, 16-byte aligned; NULL on failure or when over the cap. */
void *pqm_arena_alloc(struct pq_arena *a, size_t size)
{
    if (size == 0)
        size = 1;
    if (size > a->limit)
        return NULL;
    size = (size + 15) & ~(size_t)15;
    struct pq_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        const size_t block = size > (64u << 10) ? size : (64u << 10);
        if (a->total + block + sizeof *b > a->limit)
            return NULL;
        struct pq_arena_block *nb = malloc(sizeof *nb + block);
        if (!nb)
            return NULL;
        nb->cap = block;
        nb->used = 0;
        a->total += block + sizeof *nb;
        /* A big one-off block goes behind the current one so the current
         * block's free space stays usable. */
        if (b && size > (64u << 10)) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->head = nb;
        }
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void *pm_alloc(pm *d, size_t n, size_t size)
{
    if (d->r.failed)
        return NULL;
    if (!d->a) {
        void *p = calloc(n, size);
        if (!p)
            tc_fail(&d->r, TC_E_NOMEM, "out of memory");
        return p;
    }
    if (size && n > SIZE_MAX / size) {
        tc_fail(&d->r, TC_E_NOMEM, "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    void *p = pqm_arena_alloc(d->a, n * size);
    if (!p)
        tc_fail(&d->r, TC_E_NOMEM, "cannot allocate %zu bytes (decoded metadata is capped at %llu)",
                n * size, (unsigned long long)d->a->limit);
    return p;
}
