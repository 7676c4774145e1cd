/* The files of a Delta table's _delta_log/ directory, by name, and the plan of
 * which of them to read for a snapshot version. Pure: the caller lists the
 * directory and reads the files.
 *
 * Names (the protocol's "Delta Log Entries", "Checkpoints", "Log Compaction
 * Files"; V = 20 decimal digits, P and T = 10):
 *   V.json                            commit
 *   V.checkpoint.parquet              classic checkpoint
 *   V.checkpoint.P.T.parquet          part P of a multi-part checkpoint of T parts
 *   V.checkpoint.<uuid>.json|parquet  UUID-named (V2) checkpoint
 *   X.Y.compacted.json                log compaction of commits X..Y (inclusive)
 *   V.crc                             version checksum (recognized, not used)
 *   _last_checkpoint
 * Anything else (temporary files, "_sidecars/", staged commits, a version
 * past INT64_MAX, part 0 or part > T, X > Y, a UUID not in 8-4-4-4-12 hex
 * form) is OTHER and ignored.
 *
 * The plan for a version V:
 *   - the newest complete checkpoint at a version <= V. At one version several
 *     may be complete; the reference implementation's order decides: a V2
 *     checkpoint (of several, the greatest file name), else the multi-part
 *     one with the most parts, else the classic one. Multi-part checkpoints
 *     with a part missing are skipped;
 *   - then the commits after it up to V, which must all be listed (without a
 *     checkpoint: from commit 0);
 *   - log compactions replace runs of those commits, greedily from the
 *     oldest: at each next needed version X, the compaction X.Y with the
 *     greatest Y <= V (Y > X) replaces commits X..Y; else commit X is read.
 *     Compactions are never required: the commits must be listed anyway.
 *     They drop commitInfo, so a reader that needs the commitInfo of V reads
 *     commit V itself.
 * A _last_checkpoint hint (version H) means that the listing may start at H:
 * for V >= H the checkpoint used must be at H or later (an error otherwise,
 * rather than a plan from commits that were never listed). */
#ifndef SIEVE_LOG_FILES_H
#define SIEVE_LOG_FILES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_error.h"

#define DELTA_LOG_MAX_ENTRIES 1000000u /* listing entries one plan considers */

typedef enum {
    DELTA_LOG_OK = 0,
    DELTA_LOG_E_INVALID,    /* a bad argument, or a file listed twice */
    DELTA_LOG_E_LIMIT,      /* more than DELTA_LOG_MAX_ENTRIES entries */
    DELTA_LOG_E_NOMEM,
    DELTA_LOG_E_EMPTY,      /* no commit in the listing */
    DELTA_LOG_E_VERSION,    /* the version asked for is after the latest */
    DELTA_LOG_E_GAP,        /* a needed commit is not listed */
    DELTA_LOG_E_CHECKPOINT, /* the hinted checkpoint is not listed complete */
    DELTA_LOG_E_TIMESTAMP,  /* the time asked for precedes the first commit */
} delta_log_status;

typedef enum {
    DELTA_LOG_FILE_OTHER = 0,
    DELTA_LOG_FILE_COMMIT,
    DELTA_LOG_FILE_CHECKPOINT,       /* classic */
    DELTA_LOG_FILE_CHECKPOINT_PART,  /* one part of a multi-part checkpoint */
    DELTA_LOG_FILE_CHECKPOINT_V2,    /* UUID-named */
    DELTA_LOG_FILE_COMPACTION,
    DELTA_LOG_FILE_CHECKSUM,
    DELTA_LOG_FILE_LAST_CHECKPOINT,
} delta_log_file_kind;

typedef struct {
    delta_log_file_kind kind;
    int64_t version;     /* compaction: the first commit covered; -1 for OTHER, _last_checkpoint */
    int64_t end_version; /* compaction: the last commit covered; else = version */
    int64_t part;        /* multi-part: 1..parts; classic and V2: 1 */
    int64_t parts;       /* multi-part: T; classic and V2: 1; else 0 */
    size_t uuid_offset;  /* V2: where the UUID is in the name */
    size_t uuid_len;     /* V2: 36; else 0 */
    bool json;           /* V2: a .json checkpoint (else .parquet) */
} delta_log_file;

/* Classify a file name (no directory). out may be NULL. */
delta_log_file_kind delta_log_classify(const char *name, size_t len, delta_log_file *out);

/* One object of a _delta_log/ listing. */
typedef struct {
    const char *name;  /* file name, NUL-terminated */
    uint64_t size;
    int64_t mtime_ms;  /* last-modified time, ms since the epoch */
} delta_log_entry;

/* What _last_checkpoint says (its "version" and "parts"; parts 0 if absent).
 * Which checkpoint at that version is complete is decided by the listing;
 * parts only goes into the error message. */
typedef struct {
    int64_t version;
    int64_t parts;
} delta_log_hint;

/* A file of the plan. */
typedef struct {
    char *name;
    int64_t version;     /* compaction: first commit covered */
    int64_t end_version; /* compaction: last commit covered; else = version */
    uint64_t size;
    int64_t mtime_ms;
} delta_log_plan_file;

typedef struct {
    int64_t version;            /* the snapshot version */
    int64_t latest_version;     /* the highest commit version listed */
    int64_t checkpoint_version; /* -1: none, replay from commit 0 */
    delta_log_file_kind checkpoint_kind; /* OTHER when none */
    delta_log_plan_file *checkpoint;     /* multi-part: parts 1..T in order; else 0 or 1 file */
    size_t n_checkpoint;
    delta_log_plan_file *commits;        /* ascending; those no compaction replaces */
    size_t n_commits;
    delta_log_plan_file *compactions;    /* ascending, disjoint */
    size_t n_compactions;
} delta_log_plan;

/* Plan the reading of version `version` (-1: the latest) from a listing of
 * _delta_log/. hint: NULL, or what _last_checkpoint says. Replay order: the
 * checkpoint, then commits and compactions merged by version (a compaction
 * stands at its first version); together they cover every version after the
 * checkpoint up to the snapshot version exactly once. */
int delta_log_plan_build(const delta_log_entry *entries, size_t n, int64_t version,
                         const delta_log_hint *hint, delta_log_plan *out, sv_error *err);
void delta_log_plan_free(delta_log_plan *p);

/* The latest version of a listing: the last commit's, or a later complete
 * checkpoint's; -1 when it has neither (or is invalid). */
int64_t delta_log_latest_version(const delta_log_entry *entries, size_t n);

/* Which version of its tables a mount shows (--version, --timestamp). */
typedef struct {
    enum {
        DELTA_VERSION_LATEST = 0, /* a zeroed spec: the latest version */
        DELTA_VERSION_AT,         /* version */
        DELTA_VERSION_AS_OF,      /* the latest version committed at or before timestamp_ms */
    } kind;
    int64_t version;
    int64_t timestamp_ms;
} delta_version_spec;

/* Whether spec names an older version than the latest (entries after it
 * are then hidden from the mount). */
bool delta_version_spec_restricts(const delta_version_spec *spec);

/* Whether a _delta_log/ entry belongs to versions up to max_version: a
 * commit, checkpoint or checksum at a later version, a compaction ending
 * after it, and _last_checkpoint (which may name a later checkpoint) do
 * not; anything else does. */
bool delta_log_name_visible(const char *name, int64_t max_version);

/* The version as of time timestamp_ms: the greatest commit version whose
 * last-modified time is <= timestamp_ms. Times are first made increasing in
 * version order (a commit not after its predecessor counts as 1 ms after it),
 * as the reference implementation does, so that clock skew cannot put a
 * version before an older one. In-commit timestamps are not considered here.
 * The listing should be complete (not started at a hint). */
int delta_log_version_at(const delta_log_entry *entries, size_t n, int64_t timestamp_ms, int64_t *version,
                         sv_error *err);

#endif
