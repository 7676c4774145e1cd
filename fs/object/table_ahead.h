/* Footers ahead across the files of a table. Readers of a table of many
 * files (a Delta table grown by appends, a Hive-partitioned dataset) open
 * its Parquet files one after another, and each open waits a round trip for
 * its footer, often only to skip the file by its statistics: on a table of
 * hundreds of small files those round trips are the whole query.
 *
 * A table here is the directory of a Parquet file above any col=value/
 * partition directories. Once a reader has opened a second file of a table,
 * the table's directories are listed (in parallel, TABLE_AHEAD_THREADS at a
 * time, partition directories PARTITION_MAX_DEPTH deep) and the tails of
 * the files after the latest one opened, in key order (a glob's order, and
 * that of readers' sorted file lists), are fetched into the block cache, so
 * the next opens find their footers there. The listings also serve the
 * reader's own lookups.
 *
 * Ahead of the latest file opened, TABLE_AHEAD_GROWTH times the files
 * opened so far are kept fetched (at least TABLE_AHEAD_MIN_FILES, at most
 * TABLE_AHEAD_MAX_FILES), each tail as long as the opened files' footers
 * and page indexes took, with a margin (the first opens read 64 KiB). A
 * reader that skips files (by the Delta log's statistics) or opens them out
 * of key order leaves tails it never reads: never more than twice
 * TABLE_AHEAD_GROWTH times the files it opened, plus TABLE_AHEAD_MIN_FILES;
 * that and the listings is all a reader that stops early costs. A table a
 * view's hint names (table_ahead_expect) has the tails of its first
 * TABLE_AHEAD_EXPECT_FILES files fetched at once, before any open.
 *
 * Data ahead: a reader that reads the data of the files it opens (of the
 * latest 8 it opened, three quarters; a file's handles count together), not
 * only their footers (a reader skipping files by their statistics), also
 * gets the column chunks of the files fetched ahead, once their footers are
 * in: the chunks of the columns whose chunks its reads covered in the
 * table's closed files (read_pattern_note_covered, column_memory.h), each
 * run with what the kernel was seen to read on past one; for files whose
 * data it has not read yet at most data_window bytes and no more than 8 MiB
 * past what it has read of the files it closed: a reader that stops has
 * cost at most that.
 *
 * The bytes served are never affected, only what is fetched and when.
 *
 * Thread-safe: one mutex guards the runs; the workers list directories and
 * start fetches outside it. */
#ifndef SIEVE_TABLE_AHEAD_H
#define SIEVE_TABLE_AHEAD_H
#include <stdbool.h>
#include <stdint.h>

#include "column_memory.h"
#include "footer_cache.h"
#include "object_read.h"
#include "partition_path.h"
#include "tree.h"

#define TABLE_AHEAD_THREADS 16       /* directory listings and footers awaited at once */
#define TABLE_AHEAD_MIN_FILES 8u     /* tails kept ahead once a second file is opened */
#define TABLE_AHEAD_MAX_FILES 256u   /* tails kept ahead at most */
#define TABLE_AHEAD_GROWTH 4u        /* tails kept ahead per file opened */
#define TABLE_AHEAD_EXPECT_FILES 256u /* tails fetched ahead of a table a view's hint names */
#define TABLE_AHEAD_MAX_TABLE_FILES 20000u /* files known per table (all tables together) */
#define TABLE_AHEAD_MAX_DIRS 4096u   /* directories listed per table */
#define TABLE_AHEAD_RUNS 8u          /* tables followed at once */
#define TABLE_AHEAD_TTL_MS 30000     /* a table no file of which was opened for this long is forgotten */

typedef struct table_ahead table_ahead;

/* Reads through io, names through t, footers through footers (whose tail
 * it fetches ahead), the columns readers read from columns; data_window:
 * bytes of data fetched ahead of a reader at most; run_on: how far the
 * kernel reads past the end of a reader's read at most
 * (prefetch_kernel_runs_on): each run of chunks is fetched with what the
 * kernel was seen to read on past one, a page more, up to that. NULL when
 * out of memory or threads. */
table_ahead *table_ahead_create(tree *t, object_io *io, footer_cache *footers, column_memory *columns,
                                uint64_t data_window, uint64_t run_on);
/* Stops the workers (a listing in progress ends within its deadline). */
void table_ahead_destroy(table_ahead *ta);

/* A reader opened the Parquet file ino (object key key, a file of a
 * directory in the tree) and its footer parsed; tail_need: the bytes from
 * the start of its page index (or footer) to its end. Never waits for I/O. */
void table_ahead_opened(table_ahead *ta, uint64_t ino, const char *key, uint64_t tail_need);

/* A view's hint named the table of directory dir_ino (a Delta table, whose
 * files readers of the view will open, often every one for its footer):
 * its directories are listed now and the tails of its first
 * TABLE_AHEAD_EXPECT_FILES files in key order fetched, tail_need long (the
 * footer and page index of a file of the table, read to accept the hint;
 * 0: unknown, and a worker reads the first listed file's footer to learn
 * it; a file that is not Parquet stops it). Never waits for I/O. */
void table_ahead_expect(table_ahead *ta, uint64_t dir_ino, uint64_t tail_need);

/* The tail of o fetched ahead of its open (0: none), for the footer cache
 * (footer_cache_set_tail_source; arg: the table_ahead). */
uint64_t table_ahead_fetched_tail(void *arg, const object_ref *o);

/* A reader closed a Parquet file of key key, having read bytes_read bytes
 * of its data; run_on: how far the kernel read on past a run of chunks
 * (read_pattern_note_covered). */
void table_ahead_closed(table_ahead *ta, const char *key, uint64_t bytes_read, uint64_t run_on);

/* What it did so far: tails fetched ahead and opens that found theirs
 * fetched ahead; directories listed; files whose data was fetched ahead,
 * their bytes, and opens that found it so. */
typedef struct {
    uint64_t tails;
    uint64_t hits;
    uint64_t listings;
    uint64_t data_files, data_bytes, data_hits;
} table_ahead_counts;
table_ahead_counts table_ahead_counts_get(table_ahead *ta);

#endif
