/* Column names to leaf columns: the one rule every part of sievefs resolves
 * a user's column name by (predicates, hint columns).
 *
 *   1. a leaf whose dotted path equals the name exactly;
 *   2. else a leaf whose path equals it ignoring ASCII case (DuckDB and
 *      Spark resolve names without case), when exactly one does.
 * Two or more leaves matching at the first step that matches are ambiguous
 * (a schema may repeat a name), reported with the first two in schema
 * order so that messages are stable.
 *
 * The resolver sorts the leaf paths twice (exact and case-folded) once, so
 * each lookup is two binary searches: thousands of leaves and lookups cost
 * milliseconds. It borrows the paths of the pq_file_meta it was built from,
 * which must outlive it. FUSE-free and I/O-free. */
#ifndef SIEVE_COLUMN_RESOLVE_H
#define SIEVE_COLUMN_RESOLVE_H

#include "parquet_meta.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct pq_column_resolver pq_column_resolver;

typedef enum {
    PQ_RESOLVE_OK = 0,    /* one leaf: match.leaf */
    PQ_RESOLVE_UNKNOWN,   /* no leaf matches, exactly or ignoring case */
    PQ_RESOLVE_AMBIGUOUS, /* several leaves match: match.candidates */
} pq_resolve_status;

typedef struct {
    uint32_t leaf;          /* PQ_RESOLVE_OK: index into m->leaves (= column chunk index) */
    bool exact;             /* PQ_RESOLVE_OK: the path equals the name byte for byte */
    uint32_t candidates[2]; /* PQ_RESOLVE_AMBIGUOUS: the first two matches in schema order */
} pq_column_match;

/* Indexes over the leaves of m (leaves without a path count as ""). NULL
 * when out of memory. */
pq_column_resolver *pq_column_resolver_new(const pq_file_meta *m);
void pq_column_resolver_free(pq_column_resolver *r);

/* Resolve name (NUL-terminated). out may be NULL. */
pq_resolve_status pq_column_resolve(const pq_column_resolver *r, const char *name,
                                    pq_column_match *out);

#endif
