/* A Delta table's schema (metaData.schemaString) with its column mapping:
 * every field's logical name (what queries and hints use) and physical name
 * (what the Parquet files and the log's partitionValues and statistics use).
 *
 *   mode none: physical = logical;
 *   mode name, id: physical = the field's delta.columnMapping.physicalName,
 *   and its delta.columnMapping.id is kept (the Parquet field_id in mode id).
 *
 * Fields are listed depth first (a struct before its children), with dotted
 * paths; arrays and maps are leaves here (their insides are not addressable
 * by hints). Pure; parsed with jansson, with limits on size, fields and
 * depth. */
#ifndef SIEVE_DELTA_SCHEMA_H
#define SIEVE_DELTA_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_error.h"

#define DELTA_SCHEMA_MAX_BYTES (16u << 20)
#define DELTA_SCHEMA_MAX_FIELDS 100000u
#define DELTA_SCHEMA_MAX_DEPTH 64u

typedef enum {
    DELTA_SCHEMA_OK = 0,
    DELTA_SCHEMA_E_INVALID, /* not a Delta schema, or a field without what its mode needs */
    DELTA_SCHEMA_E_LIMIT,
    DELTA_SCHEMA_E_NOMEM,
} delta_schema_status;

typedef enum {
    DELTA_MAPPING_NONE = 0,
    DELTA_MAPPING_NAME,
    DELTA_MAPPING_ID,
} delta_mapping_mode;

typedef struct {
    char *logical;     /* dotted logical path ("s.a"); a name's own dots are kept as is */
    char *physical;    /* dotted physical path */
    char *type;        /* a primitive type name ("long", "decimal(10,2)", "timestamp_ntz"),
                          or "struct", "array", "map" */
    int64_t field_id;  /* delta.columnMapping.id, or -1 */
    uint32_t depth;    /* 1 for a top-level field */
    uint32_t parent;   /* index of the enclosing struct field, or UINT32_MAX */
    bool nullable;
    bool partition;    /* a top-level partition column */
} delta_field;

typedef struct {
    delta_field *fields;
    size_t n_fields;
    delta_mapping_mode mode;
} delta_schema;

/* The mode a table's configuration names ("delta.columnMapping.mode": none,
 * name or id; absent: none). Other values: -1. */
int delta_mapping_mode_parse(const char *value);

/* Parse schemaString. partition_columns: metaData.partitionColumns (logical
 * names of top-level fields, each of which must exist and be primitive). */
int delta_schema_parse(const char *json, size_t len, delta_mapping_mode mode, char *const *partition_columns,
                       size_t n_partition, delta_schema *out, sv_error *err);
void delta_schema_free(delta_schema *s);

/* The field a logical name (a dotted path) names: exactly, else ignoring
 * ASCII case when exactly one field matches so (the rule of
 * column_resolve.h). NULL when none or several. */
const delta_field *delta_schema_find(const delta_schema *s, const char *logical);

#endif
