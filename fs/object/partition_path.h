/* Hive-style partition directories (col=value/), as Delta and Hive tables lay
 * out their files: a table's files live in its directory or in partition
 * directories below it, and readers treat them as one table. */
#ifndef SIEVE_PARTITION_PATH_H
#define SIEVE_PARTITION_PATH_H
#include <stdbool.h>
#include <stddef.h>

/* How many partition levels below a table are followed. */
#define PARTITION_MAX_DEPTH 4u

/* Whether a directory name (n bytes, no '/') names a partition: "col=value",
 * not hidden ('.') or internal ('_', as _delta_log). */
bool partition_name(const char *name, size_t n);

/* The last component of a directory key ("t/day=1/" -> "day=1", *n = 5). */
const char *partition_dir_name(const char *dir_key, size_t *n);

/* The length of the table directory of an object key: its directory (up
 * to and including the last '/'), less up to PARTITION_MAX_DEPTH trailing
 * partition directories. 0 for a key without a directory. */
size_t partition_table_dir_len(const char *key);

#endif
