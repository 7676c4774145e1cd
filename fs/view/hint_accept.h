/* The checks of a hint that need the table: every file named in `rows`
 * exists in the mount and has those rows, and the predicate and the columns
 * fit the schema of a table file (the first readable Parquet file outside
 * _delta_log and hidden directories). Footers come from the footer cache,
 * so a view later finds them parsed. */
#ifndef SIEVE_HINT_ACCEPT_H
#define SIEVE_HINT_ACCEPT_H
#include "hint.h"
#include "sv_error.h"
#include "view.h"

/* 0, or -1 with err (code HINT_E_TABLE) saying why the hint does not fit. */
int hint_accept(const view_env *env, const sv_hint *h, sv_error *err);

#endif
