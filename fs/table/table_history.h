/* What a Delta table's log says about every version a reader can ask for,
 * so that a view bound to one snapshot can tell whether its selection of a
 * file holds for readers of other versions (docs/delta.md, "Views across
 * versions").
 *
 * Walked once per table from the earliest version a reader can read (commit
 * 0, or the oldest complete checkpoint when older commits are gone) to the
 * version the mount shows, and extended as the log grows. Kept per file path:
 *   - its partition values, and whether two adds of it disagree;
 *   - the schema epochs it was active in: an epoch is a run of versions with
 *     the same schema, partition columns and column mapping mode.
 * Deletion vectors are not kept: views never rely on them.
 *
 * A log the walk cannot follow (a missing commit no checkpoint bridges,
 * more than the limits below) leaves the history incomplete: every check
 * then says so, and views serve real bytes.
 *
 * Locking: lock guards every field; the walk's reads run without it, claimed
 * by one thread (extending) while others wait on done. */
#ifndef SIEVE_TABLE_HISTORY_H
#define SIEVE_TABLE_HISTORY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delta_schema.h"
#include "log_actions.h"
#include "plain.h"
#include "sv_cancel.h"
#include "sv_error.h"

#define TABLE_HISTORY_MAX_COMMITS 100000u  /* commit files one history reads */
#define TABLE_HISTORY_MAX_PATHS (4u << 20) /* distinct file paths it keeps */
#define TABLE_HISTORY_MAX_EPOCHS 4096u     /* schema epochs it keeps */

typedef struct table_history table_history;

table_history *table_history_new(void);
void table_history_free(table_history *h);

/* Walk the log of the table at table_dir up to version `to` (the version
 * the mount shows): 0 (the history covers it, or is incomplete), or
 * TABLE_E_* with err (a read failed or tok fired: the walk resumes next
 * time from where it stopped). */
int table_history_extend(table_history *h, plain_fs *p, uint64_t table_dir, int64_t to, sv_error *err,
                         const sv_cancel *tok);

typedef enum {
    HISTORY_SAFE = 0,         /* same partition values in every add, every epoch accepted */
    HISTORY_INCOMPLETE,       /* the log could not be walked (why says why) */
    HISTORY_UNKNOWN_FILE,     /* the path was never added in the versions walked */
    HISTORY_PARTITION_VALUES, /* two adds of the path carry other partition values */
    HISTORY_SCHEMA,           /* an epoch the file was active in was refused */
} history_verdict;

/* Whether a view may rely on what one snapshot says of the file at path (its
 * add there has partition values pv, n_pv): checked against every version
 * the history covers. schema_ok(ctx, schema) judges each epoch the file was
 * active in (schema NULL: that version's schema did not parse). why (may be
 * NULL) gets a sentence for anything but HISTORY_SAFE. */
history_verdict table_history_check(table_history *h, const char *path, const delta_kv *pv, size_t n_pv,
                                    bool (*schema_ok)(void *ctx, const delta_schema *schema), void *ctx,
                                    char *why, size_t why_len);

/* The last version walked (-1: none yet). */
int64_t table_history_last_version(table_history *h);

#endif
