/* A hint's table (its "table" field): the directory the view shows, and
 * for a Delta table the snapshot the hint was accepted against, with which
 * the hint's logical names become the Parquet files' physical ones:
 *   - the predicate and the columns are renamed through the schema's
 *     column mapping;
 *   - a file's partition values become constants of the predicate
 *     (delta_partition.h): a file its partitions exclude is selected
 *     empty without any fetch, a file they include is judged on its own
 *     columns only;
 *   - files that are not in the snapshot are served real.
 * A view's selection must hold for readers of every version, not only the
 * snapshot's: deletion vectors are not used (another version may not delete
 * those rows), and a file is sieved only while the table's history
 * (table_history.h) shows the same partition values and the where's columns
 * bound to the same fields in every version the file is active in.
 * Built once when the hint is accepted; read-only after (the history has
 * its own lock). */
#ifndef SIEVE_VIEW_TABLE_H
#define SIEVE_VIEW_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hint.h"
#include "predicate.h"
#include "table_registry.h"
#include "view.h"

typedef struct view_table {
    uint64_t dir_ino;      /* the table's directory (the view's root) */
    char *path;            /* relative to the mount ("" for its root) */
    table_snap *snap;      /* NULL: a directory of Parquet files without a Delta log */
    pred_expr *pred;       /* the hint's where with physical names (NULL: none) */
    char **columns;        /* the hint's columns, physical (n_columns as in the hint) */
    size_t n_columns;
    char **where_names;    /* the logical columns the where names (Delta tables) */
    size_t n_where_names;
} view_table;

/* Bind h (with h->table set) to its table: 0, or HINT_E_TABLE with err
 * saying why the hint does not fit (no such directory, a protocol feature
 * views cannot honour, an unknown column). */
int view_table_bind(const view_env *env, const sv_hint *h, view_table **out, sv_error *err, const sv_cancel *tok);
void view_table_free(view_table *t);

/* The file of the table at relpath (relative to the mount), or NULL when it
 * is not in the snapshot (or the table has none). */
const delta_add *view_table_file(const view_table *t, const char *relpath);

/* The file's partition values as predicate constants (malloc'd array of
 * *n): false when one of them cannot be read with certainty. */
bool view_table_constants(const view_table *t, const delta_add *f, pred_constant **out, size_t *n);

/* In column-mapping mode id, columns are found in a file by their field
 * ids (Parquet field_id), whatever the file calls them: the where (parsed
 * from h again) and the columns renamed for file m. Only for a table in
 * mode id; false when out of memory or the where does not parse. */
bool view_table_names_for_file(const view_table *t, const sv_hint *h, const pq_file_meta *m, pred_expr **pred,
                               char ***columns, size_t *n_columns);
void view_table_free_names(pred_expr *pred, char **columns, size_t n_columns);

/* Whether the view may sieve file f (its add in the snapshot) for readers
 * of any version the table has now: true when the where names no column, or
 * when the table's history, walked up to the version the mount shows now,
 * keeps f's partition values and the where's bindings in every version f is
 * active in. false with why set otherwise (the file is then served real). */
bool view_table_file_holds(const view_env *env, view_table *t, const delta_add *f, char *why, size_t why_len,
                           const sv_cancel *tok);

#endif
