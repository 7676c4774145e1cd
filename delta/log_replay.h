/* Log replay: a Delta table's snapshot from its actions, fed in log order
 * (the checkpoint's actions, then each later commit's, oldest first):
 *   - the latest protocol and metadata win;
 *   - the active files are keyed by (path, deletion vector id): an add
 *     puts its file (replacing one of the same key), a remove deletes the
 *     file of its key;
 *   - the schema is parsed with the table's column mapping mode.
 * A snapshot whose protocol asks for a reader feature this reader does not
 * understand is still built (the plain path serves bytes whatever the
 * features), and delta_snapshot_unsupported names the feature, so that
 * views refuse the table with that message. Pure. */
#ifndef SIEVE_LOG_REPLAY_H
#define SIEVE_LOG_REPLAY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delta_schema.h"
#include "log_actions.h"
#include "sv_error.h"

#define DELTA_REPLAY_MAX_FILES (16u << 20) /* active and removed files tracked at once */

typedef enum {
    DELTA_REPLAY_OK = 0,
    DELTA_REPLAY_E_INVALID, /* no protocol or metadata, a schema that does not parse, ... */
    DELTA_REPLAY_E_LIMIT,
    DELTA_REPLAY_E_NOMEM,
} delta_replay_status;

typedef struct {
    int64_t version;
    int64_t timestamp_ms;     /* the snapshot commit's time, as the caller knows it (-1: unknown) */
    delta_protocol protocol;
    delta_metadata metadata;
    delta_schema schema;      /* logical and physical names */
    delta_add *files;         /* active files, sorted by path, then deletion vector id */
    size_t n_files;
    uint64_t total_bytes;     /* of the active files */
    char unsupported[256];    /* "" or why views cannot read the table */
} delta_snapshot;

typedef struct delta_replay delta_replay;

delta_replay *delta_replay_new(void);
void delta_replay_free(delta_replay *r);

/* One action; *a is taken over (and left empty) whatever the result. */
int delta_replay_apply(delta_replay *r, delta_action *a, sv_error *err);

/* The snapshot at `version` from what was applied; the replay is consumed
 * (free it afterwards). */
int delta_replay_finish(delta_replay *r, int64_t version, int64_t timestamp_ms, delta_snapshot **out,
                        sv_error *err);

void delta_snapshot_free(delta_snapshot *s);

/* The schema a metaData action describes, with its column mapping mode: 0,
 * or DELTA_REPLAY_E_INVALID (an unknown mode, a schema that does not parse).
 * A metaData without a schema string yet gives an empty schema. */
int delta_metadata_schema(const delta_metadata *m, delta_schema *out, sv_error *err);

/* The key of a file in the active set: path, or path and "@" and the
 * deletion vector's unique id (malloc'd). */
char *delta_file_key(const char *path, bool has_dv, const delta_action_dv *dv);

/* The active file at path with or without a deletion vector, by binary
 * search (NULL when none); several can share a path only transiently. */
const delta_add *delta_snapshot_find(const delta_snapshot *s, const char *path);

/* A partition value of a file by the partition column's physical name
 * (NULL: null, or no such key); *found tells the two apart. */
const char *delta_file_partition_value(const delta_add *f, const char *physical, bool *found);

#endif
