/* One line of a Delta commit file (or of a JSON checkpoint or log
 * compaction): a JSON object with one action, by the protocol's "Actions":
 *
 *   {"add":{"path":"a%20b/part-0.parquet","partitionValues":{"p":"1"},"size":635,...}}
 *
 * Known actions are parsed into structs with owned strings; only the fields a
 * reader uses are kept (tags, options, clusteringProvider, commitInfo's
 * provenance are dropped). Unknown actions are DELTA_ACTION_OTHER, which
 * readers ignore; unknown fields are ignored too. Required fields are
 * checked for presence and JSON type; an optional field that is null counts
 * as absent.
 *
 * Decisions:
 *   - paths (add, remove, cdc, and sidecar, which the protocol also calls
 *     URI-encoded) are percent-decoded; a '%' not followed by two hex digits
 *     and "%00" are errors. A deletion vector's pathOrInlineDv is kept as is
 *     (its unique id is built from the stored text);
 *   - a partition value "" is NULL, like JSON null (the protocol: an empty
 *     string is a null partition value);
 *   - strings may not contain U+0000 (jansson's default): such a line is an
 *     error, binary partition values with a zero byte included;
 *   - commitInfo is free-form: a "timestamp" that is not an integer is
 *     ignored, while "inCommitTimestamp" must be one;
 *   - a line holds one action: top-level keys with null values are skipped,
 *     two non-null ones are an error.
 * Pure: parsed with jansson, limits below. */
#ifndef SIEVE_LOG_ACTIONS_H
#define SIEVE_LOG_ACTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deletion_vector.h"
#include "sv_error.h"

#define DELTA_ACTION_MAX_LINE (64u << 20) /* bytes of one line */
#define DELTA_ACTION_MAX_ENTRIES 100000u  /* partition values, configuration entries, columns, features */
#define DELTA_ACTION_MAX_PATH 8192u       /* bytes of a path as stored (encoded) */

typedef enum {
    DELTA_ACTION_OK = 0,
    DELTA_ACTION_E_JSON,    /* not JSON, or not one object */
    DELTA_ACTION_E_INVALID, /* a required field missing or of the wrong type, a bad value */
    DELTA_ACTION_E_LIMIT,
    DELTA_ACTION_E_NOMEM,
} delta_action_status;

typedef enum {
    DELTA_ACTION_BLANK = 0, /* an empty or whitespace-only line */
    DELTA_ACTION_OTHER,     /* an action this module does not know: ignore it */
    DELTA_ACTION_ADD,
    DELTA_ACTION_REMOVE,
    DELTA_ACTION_METADATA,
    DELTA_ACTION_PROTOCOL,
    DELTA_ACTION_COMMIT_INFO,
    DELTA_ACTION_TXN,
    DELTA_ACTION_DOMAIN_METADATA,
    DELTA_ACTION_CDC,
    DELTA_ACTION_SIDECAR,
    DELTA_ACTION_CHECKPOINT_METADATA,
} delta_action_kind;

/* A map entry; value NULL is a null partition value. */
typedef struct {
    char *key;
    char *value;
} delta_kv;

/* A deletion vector descriptor, as stored (deletion_vector.h reads it). */
typedef dv_descriptor delta_action_dv;

typedef struct {
    char *path;                /* percent-decoded */
    delta_kv *partition_values; /* document order */
    size_t n_partition_values;
    int64_t size;
    int64_t modification_time;
    bool data_change;
    char *stats;               /* the JSON text, or NULL */
    bool has_dv;
    delta_action_dv dv;
    int64_t base_row_id;       /* -1 when absent */
    int64_t default_row_commit_version; /* -1 when absent */
} delta_add;

typedef struct {
    char *path;                /* percent-decoded */
    int64_t deletion_timestamp; /* -1 when absent */
    bool data_change;
    bool has_partition_values;
    delta_kv *partition_values;
    size_t n_partition_values;
    int64_t size;              /* -1 when absent */
    bool has_dv;
    delta_action_dv dv;
    int64_t base_row_id;       /* -1 when absent */
    int64_t default_row_commit_version; /* -1 when absent */
} delta_remove;

typedef struct {
    char *id;
    char *name;                /* NULL when absent */
    char *description;         /* NULL when absent */
    char *provider;            /* format.provider */
    char *schema_string;       /* the schema's JSON text */
    char **partition_columns;
    size_t n_partition_columns;
    delta_kv *configuration;   /* document order; values never NULL */
    size_t n_configuration;
    int64_t created_time;      /* -1 when absent */
} delta_metadata;

typedef struct {
    int32_t min_reader_version;
    int32_t min_writer_version;
    bool has_reader_features;  /* present, even if empty */
    char **reader_features;
    size_t n_reader_features;
    bool has_writer_features;
    char **writer_features;
    size_t n_writer_features;
} delta_protocol;

typedef struct {
    bool has_timestamp;
    int64_t timestamp;
    bool has_in_commit_timestamp;
    int64_t in_commit_timestamp;
} delta_commit_info;

typedef struct {
    char *app_id;
    int64_t version;
    int64_t last_updated;      /* -1 when absent */
} delta_txn;

typedef struct {
    char *domain;
    char *configuration;
    bool removed;
} delta_domain_metadata;

typedef struct {
    char *path;                /* percent-decoded */
    delta_kv *partition_values;
    size_t n_partition_values;
    int64_t size;
    bool data_change;          /* false when absent */
} delta_cdc;

typedef struct {
    char *path;                /* percent-decoded; a bare name is in _delta_log/_sidecars/ */
    int64_t size_in_bytes;
    int64_t modification_time;
} delta_sidecar;

typedef struct {
    int64_t version;
} delta_checkpoint_metadata;

typedef struct {
    delta_action_kind kind;
    union {
        delta_add add;
        delta_remove remove;
        delta_metadata metadata;
        delta_protocol protocol;
        delta_commit_info commit_info;
        delta_txn txn;
        delta_domain_metadata domain_metadata;
        delta_cdc cdc;
        delta_sidecar sidecar;
        delta_checkpoint_metadata checkpoint_metadata;
    };
} delta_action;

/* Parse one line (without or with its '\n'). On success *out holds the
 * action (kind BLANK or OTHER: nothing else); on failure *out is empty and
 * err says which action and field, e.g. add: "size": expected an integer. */
int delta_action_parse(const char *line, size_t len, delta_action *out, sv_error *err);

/* Free what an action owns; each leaves the struct zeroed (commitInfo and
 * checkpointMetadata own nothing, so they have no free function). */
void delta_action_free(delta_action *a);
void delta_add_free(delta_add *a);
void delta_remove_free(delta_remove *r);
void delta_metadata_free(delta_metadata *m);
void delta_protocol_free(delta_protocol *p);
void delta_txn_free(delta_txn *t);
void delta_domain_metadata_free(delta_domain_metadata *d);
void delta_cdc_free(delta_cdc *c);
void delta_sidecar_free(delta_sidecar *s);

/* A URI-encoded path (add.path, remove.path, a sidecar's path), decoded:
 * %XX with hex digits, never %00. DELTA_ACTION_E_INVALID otherwise. */
int delta_path_decode(const char *s, size_t len, char **out, sv_error *err);

/* The action's key in the log ("add", "metaData", ...); "" for BLANK, OTHER. */
const char *delta_action_name(delta_action_kind kind);

#endif
