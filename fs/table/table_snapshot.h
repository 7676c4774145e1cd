/* A Delta table's snapshot, loaded through the plain path: the table's
 * _delta_log/ listed with the tree (cached for its short TTL), the plan of
 * what to read (log_files.h), then _last_checkpoint, the checkpoint (its
 * parts, or a V2 checkpoint and its sidecars in _delta_log/_sidecars/) and
 * the commits after it read whole through the block cache, and replayed
 * (log_replay.h). */
#ifndef SIEVE_TABLE_SNAPSHOT_H
#define SIEVE_TABLE_SNAPSHOT_H
#include <stdint.h>

#include "log_files.h"
#include "log_replay.h"
#include "plain.h"
#include "sv_cancel.h"
#include "sv_error.h"

#define TABLE_LOG_MAX_FILE (1ull << 30) /* one log file read whole */

/* Which version a mount shows (--version, --timestamp). */
typedef delta_version_spec table_version_spec;

/* Codes of the errors below (the object or step is in the message). */
typedef enum {
    TABLE_OK = 0,
    TABLE_E_NOT_A_TABLE, /* no _delta_log/ with a commit */
    TABLE_E_LOG,         /* the log does not make a snapshot: gap, bad file, bad action */
    TABLE_E_IO,          /* a listing or read failed, or tok fired */
    TABLE_E_NOMEM,
} table_status;

/* The version spec resolved against a listing of _delta_log/ (spec NULL:
 * the latest): -1 with err set when there is no such version. A version
 * past the latest is returned as is (the plan then refuses it). */
int64_t table_version_resolve(const delta_log_entry *entries, size_t n, const table_version_spec *spec,
                              sv_error *err);

/* The directory inode's table at the version spec names. */
int table_snapshot_load(plain_fs *p, uint64_t table_dir, const table_version_spec *spec, delta_snapshot **out,
                        sv_error *err, const sv_cancel *tok);

/* The _delta_log/ listing of a table directory: entries owned by *names
 * (free with table_log_listing_free). */
typedef struct {
    uint64_t log_dir;       /* inode of _delta_log/ */
    delta_log_entry *entries;
    uint64_t *inos;         /* per entry */
    size_t n;
    char **names;
} table_log_listing;

int table_log_list(plain_fs *p, uint64_t table_dir, table_log_listing *out, sv_error *err, const sv_cancel *tok);
/* The same from the listings the mount last showed, past their TTL or not
 * (*stale then true): no round trip unless never listed. */
int table_log_list_cached(plain_fs *p, uint64_t table_dir, table_log_listing *out, bool *stale, sv_error *err,
                          const sv_cancel *tok);

/* The whole log file of inode ino (name says which in messages), malloc'd
 * into *buf: 0, or TABLE_E_* with err. Read through the block cache. */
int table_log_read(plain_fs *p, uint64_t ino, const char *name, uint8_t **buf, size_t *len, sv_error *err,
                   const sv_cancel *tok);
/* Start fetching these log files at once (they are read next, one by one). */
void table_log_prefetch(plain_fs *p, const uint64_t *inos, size_t n);
void table_log_listing_free(table_log_listing *l);

#endif
