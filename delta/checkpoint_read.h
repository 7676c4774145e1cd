/* The actions of a Parquet checkpoint (classic, one part of a multi-part
 * one, a V2 checkpoint's top-level file, or a sidecar): one action per row,
 * in nested columns (add.path, add.partitionValues as a map,
 * add.deletionVector as a struct, metaData.partitionColumns as a list, ...).
 *
 * The file is read whole from memory with the Parquet engine (footer,
 * pq_chunk_values); each row becomes the delta_action (log_actions.h) the
 * same action would be in a JSON commit: paths percent-decoded, an empty
 * partition value NULL. Only the actions and fields a reader uses are
 * produced: add, remove, metaData, protocol, sidecar, checkpointMetadata;
 * rows of other actions (txn, domainMetadata) are skipped. Lists and maps
 * are found by their position under their field whatever their writer
 * called the levels ("key_value", "map", "list.element", "array", ...).
 * Pure. */
#ifndef SIEVE_CHECKPOINT_READ_H
#define SIEVE_CHECKPOINT_READ_H
#include <stddef.h>
#include <stdint.h>

#include "log_actions.h"
#include "sv_error.h"

#define DELTA_CHECKPOINT_MAX_BYTES (1ull << 30)   /* a checkpoint file read whole */
#define DELTA_CHECKPOINT_MAX_ROWS (64u << 20)     /* rows of one row group */

typedef enum {
    DELTA_CHECKPOINT_OK = 0,
    DELTA_CHECKPOINT_E_PARQUET, /* not a readable Parquet file */
    DELTA_CHECKPOINT_E_SCHEMA,  /* not a checkpoint's columns */
    DELTA_CHECKPOINT_E_INVALID, /* a row that is no valid action */
    DELTA_CHECKPOINT_E_LIMIT,
    DELTA_CHECKPOINT_E_NOMEM,
    DELTA_CHECKPOINT_E_STOPPED, /* the callback returned non-zero */
} delta_checkpoint_status;

/* Called for each action in file order; it takes ownership of *a (free it
 * with delta_action_free). Non-zero stops the read. */
typedef int (*delta_action_fn)(void *ctx, delta_action *a);

int delta_checkpoint_read(const uint8_t *file, size_t len, delta_action_fn fn, void *ctx, sv_error *err);

#endif
