/* Footers ahead across the files of a table. Readers of a table of many
 * files (a Delta table grown by appends, a Hive-partitioned dataset) open
 * its Parquet files one after another, and each open waits a round trip for
 * its footer, often only to skip the file by its statistics: on a table of
 * hundreds of small files those round trips are the whole query.
 *
 * A table here is the directory of a Parquet file above any col=value/
 * partition directories. Once a reader has opened a second file of a table,
 * the table's directories are listed (in parallel, TABLE_AHEAD_THREADS at a
 * time, partition directories TABLE_AHEAD_MAX_DEPTH deep) and the tails of
 * the files after the latest one opened, in key order (a glob's order, and
 * that of readers' sorted file lists), are fetched into the block cache, so
 * the next opens find their footers there. The listings also serve the
 * reader's own lookups.
 *
 * Ahead of the latest file opened, twice the files opened so far are kept
 * fetched (at least TABLE_AHEAD_MIN_FILES, at most TABLE_AHEAD_MAX_FILES).
 * A reader that skips files (by the Delta log's statistics) or opens them
 * out of key order leaves tails it never reads: never more than four times
 * the files it opened, plus TABLE_AHEAD_MIN_FILES; that and the listings is
 * all a reader that stops early costs.
 * The bytes served are never affected, only what is fetched and when.
 *
 * Thread-safe: one mutex guards the runs; the workers list directories and
 * start fetches outside it. */
#ifndef SIEVE_TABLE_AHEAD_H
#define SIEVE_TABLE_AHEAD_H
#include <stdint.h>

#include "object_read.h"
#include "tree.h"

#define TABLE_AHEAD_THREADS 4        /* directory listings at once */
#define TABLE_AHEAD_MIN_FILES 8u     /* tails kept ahead once a second file is opened */
#define TABLE_AHEAD_MAX_FILES 64u    /* tails kept ahead at most */
#define TABLE_AHEAD_MAX_DEPTH 4u     /* partition directory levels walked */
#define TABLE_AHEAD_MAX_TABLE_FILES 20000u /* files known per table (all tables together) */
#define TABLE_AHEAD_MAX_DIRS 4096u   /* directories listed per table */
#define TABLE_AHEAD_RUNS 8u          /* tables followed at once */
#define TABLE_AHEAD_TTL_MS 30000     /* a table no file of which was opened for this long is forgotten */

typedef struct table_ahead table_ahead;

/* Reads through io, names through t; tail_len(size) is how much of the end
 * of a file of that size an open reads (the footer cache's tail). NULL when
 * out of memory or threads. */
table_ahead *table_ahead_create(tree *t, object_io *io, uint64_t (*tail_len)(uint64_t size, void *ud),
                                void *tail_ud);
/* Stops the workers (a listing in progress ends within its deadline). */
void table_ahead_destroy(table_ahead *ta);

/* A reader opened the Parquet file ino (object key key, a file of a
 * directory in the tree) and its footer parsed. Never waits for I/O. */
void table_ahead_opened(table_ahead *ta, uint64_t ino, const char *key);

/* Tails fetched ahead so far, and opens that found theirs fetched ahead. */
typedef struct {
    uint64_t tails;
    uint64_t hits;
    uint64_t listings;
} table_ahead_counts;
table_ahead_counts table_ahead_counts_get(table_ahead *ta);

#endif
