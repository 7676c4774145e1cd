/* The checks of a hint that need the table: every file named in `rows`
 * exists in the mount and has those rows, and the predicate and the columns
 * fit the schema of a table file (the first readable Parquet file outside
 * _delta_log and hidden directories), or of the table the hint names. Footers come from the footer cache,
 * so a view later finds them parsed. */
#ifndef SIEVE_HINT_ACCEPT_H
#define SIEVE_HINT_ACCEPT_H
#include "hint.h"
#include "sv_error.h"
#include "view.h"

struct view_table;

/* 0, or -1 with err (code HINT_E_TABLE) saying why the hint does not fit.
 * A hint naming a table is checked against that table (view_table.h) and
 * *table gets its binding; otherwise *table is NULL. */
int hint_accept(const view_env *env, const sv_hint *h, struct view_table **table, sv_error *err);

#endif
