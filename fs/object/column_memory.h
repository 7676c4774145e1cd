/* The columns readers of one table read. Parquet files of one directory with
 * one schema are read alike: a query reads the same columns of each, often
 * several files at once. A file's read pattern (prefetch.h) shares a column
 * set with every open or recently read file of its table and schema, so
 * what the reader showed in one file is known in the next; a set none of
 * whose files has been open for COLUMN_MEMORY_TTL_MS starts empty again
 * (another query).
 *
 * Thread-safe: the table has its own lock; a set's bytes are atomics, set by
 * any reader thread, never cleared while shared. */
#ifndef SIEVE_COLUMN_MEMORY_H
#define SIEVE_COLUMN_MEMORY_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet_meta.h"

#define COLUMN_MEMORY_TTL_MS 30000
#define COLUMN_MEMORY_SETS 64 /* directories and schemas remembered at once */

typedef struct column_set {
    uint64_t key;             /* directory and schema (column_memory_key) */
    uint32_t n_columns;
    atomic_uchar *read;       /* per column: a reader of one of the files read it */
    atomic_uchar *covered;    /* per column: the reads of one of the files covered its chunks */
    atomic_llong updated_ms;  /* last column added or file closed (monotonic) */
    unsigned refs;            /* open files sharing it; guarded by column_memory.lock */
} column_set;

typedef struct column_memory column_memory;

column_memory *column_memory_create(void);
void column_memory_destroy(column_memory *cm);

/* The key of a file's table: its table directory (partition_path.h: its
 * directory above any col=value/ ones) and its leaf columns' paths and
 * types. */
uint64_t column_memory_key(const char *object_key, const pq_file_meta *m);

/* The set for key (created empty, or emptied when stale), referenced; NULL
 * when out of memory or every slot is in use. */
column_set *column_memory_get(column_memory *cm, uint64_t key, uint32_t n_columns);
void column_memory_put(column_memory *cm, column_set *s);

/* Mark column c read (no-op past the set's columns). */
void column_set_add(column_set *s, uint32_t c);
bool column_set_has(const column_set *s, uint32_t c);
/* The reads of a closed file covered (nearly) all of column c's chunks
 * (read_pattern_note_covered): what a reader of the next file will read,
 * whatever the prefetch's guesses. */
void column_set_add_covered(column_set *s, uint32_t c);
bool column_set_has_covered(const column_set *s, uint32_t c);

#endif
