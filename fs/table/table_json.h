/* MOUNTPOINT/.sieve/tables/TABLE/snapshot.json: a table's snapshot as a
 * distributed engine's driver needs it to split work across workers that
 * each mount the table (delta-kernel's scan metadata, without the I/O):
 *
 *   {"table": "warehouse/events", "version": 12, "timestamp_ms": ...,
 *    "protocol": {...}, "views": {"readable": true, "reason": null},
 *    "column_mapping": "name",
 *    "schema": [{"name": "id", "physical_name": "col-1a", "type": "long",
 *                "nullable": true, "field_id": 1, "partition": false}, ...],
 *    "partition_columns": ["region"],
 *    "num_files": 3, "total_bytes": 12345,
 *    "files": [{"path": "region=EU/part-0.parquet", "size": 4115,
 *               "partition_values": {"region": "EU"}, "num_records": 100,
 *               "deletion_vector_cardinality": 2}, ...]}
 *
 * Partition values are keyed by logical name; num_records comes from the
 * file's statistics (null without them); deletion_vector_cardinality is
 * null for a file without a deletion vector. */
#ifndef SIEVE_TABLE_JSON_H
#define SIEVE_TABLE_JSON_H
#include <stddef.h>

#include "log_replay.h"

/* The document as text (malloc'd, *len its length), or NULL when out of
 * memory. */
char *table_snapshot_json(const delta_snapshot *s, const char *table_path, size_t *len);

/* A file's statistics' "numRecords", or -1 without one. */
long long table_file_num_records(const delta_add *f);

#endif
