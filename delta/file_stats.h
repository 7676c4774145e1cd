/* A data file's statistics from its add action in the Delta log (the "stats"
 * JSON: numRecords, minValues, maxValues, nullCount), as the predicate's
 * region statistics: a view decides from the log that no row of a file can
 * match before fetching any of its filter columns.
 *
 * Conservative by construction: only top-level columns, min/max only for
 * integer and date columns (JSON integers, "YYYY-MM-DD"), where writers
 * store exact bounds; strings (truncated by writers), timestamps
 * (truncated to milliseconds), decimals and floats contribute null counts
 * only. A key that is missing or of an unexpected JSON type is no
 * statistic, so the file may match. Pure: no I/O. */
#ifndef SIEVE_DELTA_FILE_STATS_H
#define SIEVE_DELTA_FILE_STATS_H
#include <stdbool.h>
#include <stddef.h>

#include "parquet_meta.h"
#include "predicate.h"

#define DELTA_FILE_STATS_MAX_BYTES (4u << 20) /* a longer stats text is ignored */

typedef struct delta_file_stats delta_file_stats;

/* NULL when text is NULL, too long, not a JSON object, or out of memory:
 * then nothing is known. */
delta_file_stats *delta_file_stats_parse(const char *text, size_t len);
void delta_file_stats_free(delta_file_stats *s);

/* numRecords, or -1 when absent. */
long long delta_file_stats_num_records(const delta_file_stats *s);

/* false only when the statistics prove that no row of the file makes b (bound
 * to this file's footer m) TRUE. s NULL: true. */
bool delta_file_stats_may_match(const delta_file_stats *s, const pred_bound *b, const pq_file_meta *m);

#endif
