/* The Delta tables of a mount: every directory holding a _delta_log/ that
 * the mount has seen (listed, looked up, or named by a hint), each with its
 * snapshot at the version the mount shows (--version, --timestamp, else the
 * latest). A snapshot is loaded when first needed and again once the
 * table's _delta_log/ listing (short TTL) shows another version; a table is
 * loaded in the background as soon as it is seen, so that the first query
 * does not wait for the replay.
 *
 * Locking: the registry lock guards the table list and each table's
 * snapshot pointer and loading flag; snapshots are immutable and reference
 * counted, so readers use them without the lock. No I/O under the lock. */
#ifndef SIEVE_TABLE_REGISTRY_H
#define SIEVE_TABLE_REGISTRY_H
#include <stdbool.h>
#include <stdint.h>

#include "plain.h"
#include "sv_cancel.h"
#include "table_history.h"
#include "table_snapshot.h"

#define TABLE_MAX_TABLES 4096u

typedef struct table_registry table_registry;

/* A snapshot shared by its users. */
typedef struct table_snap table_snap;
const delta_snapshot *table_snap_get(const table_snap *t);
void table_snap_put(table_snap *t);

/* background: load tables as soon as they are seen (a thread per load). */
table_registry *table_registry_create(plain_fs *p, const table_version_spec *spec, bool background);
void table_registry_destroy(table_registry *r);

/* dir_ino holds a _delta_log/: remember it (and start loading it when
 * background). Cheap when already known. */
void table_registry_saw(table_registry *r, uint64_t dir_ino);

/* The table's snapshot at the mount's version (referenced: table_snap_put),
 * loading it if needed; dir_ino need not have been seen before. */
int table_registry_snapshot(table_registry *r, uint64_t dir_ino, table_snap **out, sv_error *err,
                            const sv_cancel *tok);

/* The table's history (table_history.h), walked up to the version the mount
 * shows now (its _delta_log/ listing, cached for its short TTL): 0 with *out
 * set (it lives as long as the registry), or TABLE_E_* with err. */
int table_registry_history(table_registry *r, uint64_t dir_ino, table_history **out, sv_error *err,
                           const sv_cancel *tok);
/* The same up to the version of the _delta_log/ listing the mount last
 * showed, without waiting for a new listing when it is past its TTL: every
 * reader of this mount learnt its version from that listing. A listing past
 * its TTL is refreshed in the background (and the history with it), for
 * readers told of versions by something else than this mount. */
int table_registry_history_now(table_registry *r, uint64_t dir_ino, table_history **out, sv_error *err,
                               const sv_cancel *tok);

/* The tables seen: their directory inodes and paths relative to the mount
 * ("" for the mount's root), copied into arrays the caller frees
 * (table_registry_list_free). */
typedef struct {
    uint64_t *dir_inos;
    char **paths;
    size_t n;
} table_list;
int table_registry_list(table_registry *r, table_list *out);
void table_list_free(table_list *l);

/* The path of a directory relative to the mount ("" for the root), or NULL. */
char *table_relative_path(plain_fs *p, uint64_t dir_ino);

#endif
