/* Selection hints (the JSON sidecar a query hands sievefs), version 1:
 *
 *   {"table":   "<directory relative to the mount>",      optional
 *    "where":   "<predicate>",                          optional
 *    "rows":    {"<path relative to the mount>": [[start, end], ...]},  optional
 *    "columns": ["<column>", ...]}                      optional
 *
 * Parsing checks the syntax of everything, including the predicate; checks
 * that need the table (unknown columns, types, rows beyond a file) happen
 * when the hint is accepted (hint_accept.c). Row ranges are half-open, 0-based file
 * row numbers; they are sorted and merged here. Paths may not leave the
 * mount (no leading '/', no "." or ".." components, no empty components).
 * FUSE-free and I/O-free. */
#ifndef SIEVE_HINT_H
#define SIEVE_HINT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "predicate.h"
#include "row_ranges.h"
#include "sv_error.h"

#define HINT_MAX_BYTES (1u << 20)      /* JSON document */
#define HINT_MAX_FILES 100000u         /* entries of "rows" */
#define HINT_MAX_RANGES 1000000u       /* row ranges over all files */
#define HINT_MAX_COLUMNS 4096u
#define HINT_MAX_PATH 4096u

/* Why a hint is refused: the code of its sv_error. */
typedef enum {
    HINT_OK = 0,
    HINT_E_INVALID, /* malformed JSON, a wrong field, a bad predicate or range */
    HINT_E_LIMIT,   /* one of the limits above */
    HINT_E_NOMEM,
    HINT_E_TABLE,   /* does not fit the table: unknown file or column, rows past a file's end */
} hint_status;

typedef struct {
    char *path;         /* normalized, relative to the mount */
    row_ranges ranges;  /* sorted, merged */
} hint_file_rows;

typedef struct {
    char *table;              /* the table's directory relative to the mount ("" its root), or NULL */
    char *where;              /* the predicate text, or NULL */
    pred_expr *pred;          /* parsed, or NULL */
    hint_file_rows *files;    /* sorted by path */
    size_t n_files;
    char **columns;           /* projected columns, as given */
    size_t n_columns;
} sv_hint;

/* Parse a hint document. On failure returns NULL with err naming the
 * problem (and the position, for predicate errors). */
sv_hint *hint_parse(const char *json, size_t len, sv_error *err);
void hint_free(sv_hint *h);

/* The "rows" entry for a file path (relative to the mount), or NULL. */
const hint_file_rows *hint_rows_for(const sv_hint *h, const char *relpath);

/* Whether name is a valid hint name: 1-128 characters of [A-Za-z0-9_.-],
 * not starting with '.'. */
bool hint_name_valid(const char *name, size_t len);

#endif
