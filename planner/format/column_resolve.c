/* Column names to leaf columns; see column_resolve.h. */
#include "column_resolve.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *path;
    uint32_t leaf;
} leaf_key;

struct pq_column_resolver {
    uint32_t n;
    leaf_key *by_exact;  /* leaves sorted by path */
    leaf_key *by_nocase; /* leaves sorted by path without case */
};

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* strcasecmp without locale: ASCII letters only, bytes unsigned. */
static int ascii_casecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        const int x = ascii_lower((unsigned char)*a), y = ascii_lower((unsigned char)*b);
        if (x != y || !x)
            return x - y;
    }
}

static int cmp_exact(const void *a, const void *b)
{
    return strcmp(((const leaf_key *)a)->path, ((const leaf_key *)b)->path);
}

static int cmp_nocase(const void *a, const void *b)
{
    return ascii_casecmp(((const leaf_key *)a)->path, ((const leaf_key *)b)->path);
}

pq_column_resolver *pq_column_resolver_new(const pq_file_meta *m)
{
    pq_column_resolver *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    const size_t n = m->n_leaves ? m->n_leaves : 1;
    r->n = m->n_leaves;
    r->by_exact = malloc(n * sizeof *r->by_exact);
    r->by_nocase = malloc(n * sizeof *r->by_nocase);
    if (!r->by_exact || !r->by_nocase) {
        pq_column_resolver_free(r);
        return NULL;
    }
    for (uint32_t i = 0; i < m->n_leaves; i++) {
        r->by_exact[i].path = m->leaves[i].path ? m->leaves[i].path : "";
        r->by_exact[i].leaf = i;
    }
    memcpy(r->by_nocase, r->by_exact, m->n_leaves * sizeof *r->by_exact);
    qsort(r->by_exact, m->n_leaves, sizeof *r->by_exact, cmp_exact);
    qsort(r->by_nocase, m->n_leaves, sizeof *r->by_nocase, cmp_nocase);
    return r;
}

void pq_column_resolver_free(pq_column_resolver *r)
{
    if (!r)
        return;
    free(r->by_exact);
    free(r->by_nocase);
    free(r);
}

/* [lo, hi) of keys equal to path under cmp. */
static void equal_range(const leaf_key *keys, uint32_t n, const char *path,
                        int (*cmp)(const void *, const void *), uint32_t *lo, uint32_t *hi)
{
    const leaf_key k = {.path = path};
    uint32_t a = 0, z = n;
    while (a < z) {
        const uint32_t mid = a + (z - a) / 2;
        if (cmp(&keys[mid], &k) < 0)
            a = mid + 1;
        else
            z = mid;
    }
    *lo = a;
    z = n;
    while (a < z) {
        const uint32_t mid = a + (z - a) / 2;
        if (cmp(&keys[mid], &k) <= 0)
            a = mid + 1;
        else
            z = mid;
    }
    *hi = a;
}

pq_resolve_status pq_column_resolve(const pq_column_resolver *r, const char *name,
                                    pq_column_match *out)
{
    pq_column_match m = {0};
    uint32_t lo, hi;
    const leaf_key *keys = r->by_exact;
    m.exact = true;
    equal_range(keys, r->n, name, cmp_exact, &lo, &hi);
    if (hi == lo) {
        keys = r->by_nocase;
        m.exact = false;
        equal_range(keys, r->n, name, cmp_nocase, &lo, &hi);
    }
    pq_resolve_status st = PQ_RESOLVE_OK;
    if (hi == lo) {
        m.exact = false;
        st = PQ_RESOLVE_UNKNOWN;
    } else if (hi - lo > 1) {
        /* the first two in schema order, whatever order qsort left them in */
        uint32_t a = keys[lo].leaf, b = keys[lo + 1].leaf;
        for (uint32_t i = lo + 2; i < hi; i++) {
            const uint32_t l = keys[i].leaf;
            if (l < a) {
                b = a;
                a = l;
            } else if (l < b) {
                b = l;
            }
        }
        if (b < a) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        m.candidates[0] = a;
        m.candidates[1] = b;
        st = PQ_RESOLVE_AMBIGUOUS;
    } else {
        m.leaf = keys[lo].leaf;
    }
    if (out)
        *out = m;
    return st;
}
