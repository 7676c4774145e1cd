/* The predicate language of selection hints: a SQL-like `where` text over
 * the leaf columns of Parquet files. Parsed once (pred_parse), bound to each
 * file's schema (pred_bind: name resolution, type checks, literal coercion),
 * then evaluated on decoded rows (pred_eval) or on min/max statistics of a
 * row group or page (pred_may_match).
 *
 * Grammar (keywords case-insensitive; NOT binds tighter than AND, AND than OR):
 *   expr      := or
 *   or        := and { OR and }
 *   and       := not { AND not }
 *   not       := NOT not | '(' expr ')' | predicate
 *   predicate := operand cmp operand        cmp: = != <> < <= > >=
 *              | column [NOT] BETWEEN literal AND literal
 *              | column [NOT] IN ( literal {, literal} )
 *              | column IS [NOT] NULL
 *              | column [NOT] LIKE 'pattern'  (only % wildcards; _ and \ rejected)
 *              | column                    (a BOOLEAN column)
 *              | TRUE | FALSE | NULL
 *   operand   := column | literal; a comparison has exactly one column side
 *   column    := segment { '.' segment }   segment: [A-Za-z_][A-Za-z0-9_]* or
 *                "quoted" ("" escapes a quote); the dotted path of a leaf
 *   literal   := [-] integer | [-] decimal | [-] float | 'string' ('' escapes)
 *              | DATE 'YYYY-MM-DD'
 *              | TIMESTAMP 'YYYY-MM-DD[( |T)HH:MM:SS[.fffffffff]]'
 *              | TRUE | FALSE | NULL
 * Integers that fit int64 are INT; up to 38 digits DECIMAL with scale 0.
 * 12.50 is DECIMAL(unscaled 1250, scale 2); 1e3 and 1.5E-2 are doubles.
 * DATE and TIMESTAMP are keywords only when a string literal follows, so a
 * column may be called date.
 *
 * Binding: a name matches a leaf path exactly, else case-insensitively
 * (ASCII) when exactly one leaf matches that way (DuckDB and Spark resolve
 * names without case). Literals are coerced to the column's pqv_type:
 *   INT, UINT, DECIMAL   integer and decimal literals, compared exactly
 *   FLOAT                integer, decimal and float literals, as doubles
 *   DATE                 DATE literals and strings that parse as dates
 *   TIMESTAMP            TIMESTAMP and DATE literals (midnight) and strings
 *                        that parse as timestamps, taken in the column's own
 *                        frame (adjusted_to_utc) at nanosecond precision
 *   BYTES                string literals (byte-wise); LIKE only here
 *   BOOL                 TRUE/FALSE; the bare column is a predicate
 *   TIME                 only IS [NOT] NULL
 * Comparing with the NULL literal is allowed and is NULL. Repeated columns
 * (max_rep > 0) are rejected; IS [NOT] NULL works on any flat column, even
 * one without a value order.
 *
 * Evaluation uses SQL three-valued logic: a row is selected only when the
 * predicate is TRUE. FLOAT follows pqv_compare's total order (NaN equals NaN
 * and is above +Infinity), as DuckDB, Spark and PostgreSQL do.
 *
 * Limits (each a PRED_E_LIMIT error, never a crash or unbounded work):
 * text <= PRED_MAX_TEXT bytes, nesting of parentheses and NOT <=
 * PRED_MAX_DEPTH, <= PRED_MAX_NODES predicate nodes, IN lists <=
 * PRED_MAX_IN_ITEMS, string literals <= PRED_MAX_STRING bytes.
 *
 * Floats are read with strtod: the process must keep the "C" LC_NUMERIC
 * locale (sievefs never calls setlocale).
 *
 * Implemented in planner/predicate/: pred_lex.c and pred_parse.c (text to
 * the parsed form), pred_bind.c (names through column_resolve.h, types,
 * literals), pred_eval.c (rows), pred_prune.c (statistics), pred_datetime.c
 * and pred_errors.c. */
#ifndef SIEVE_PREDICATE_H
#define SIEVE_PREDICATE_H

#include "parquet_meta.h"
#include "pq_value.h"
#include "sv_error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRED_MAX_TEXT (64u << 10)
#define PRED_MAX_DEPTH 64u
#define PRED_MAX_NODES 4096u
#define PRED_MAX_IN_ITEMS 4096u
#define PRED_MAX_STRING (64u << 10)

typedef enum {
    PRED_OK = 0,
    PRED_E_SYNTAX,  /* malformed text, bad literal (overflow, bad date) */
    PRED_E_COLUMN,  /* unknown or ambiguous column name */
    PRED_E_TYPE,    /* a literal or operator that does not fit the column's type */
    PRED_E_LIMIT,   /* one of the documented limits was exceeded */
    PRED_E_NOMEM,   /* allocation failed */
    PRED_E_INVALID, /* bad arguments from the caller (NULL pointers, missing values) */
} pred_status;

/* Short stable name, e.g. "syntax", "column". */
const char *pred_status_name(pred_status s);

/* The one error shape (common/sv_error.h): code is a pred_status, offset
 * the 0-based byte offset into the text (0 when not about the text), msg
 * e.g. "at 17: expected ')', found end of input". */
typedef sv_error pred_error;

/* ---------------- parsing ---------------- */

typedef struct pred_expr pred_expr; /* parsed text; owns everything */

/* text need not be NUL-terminated. */
pred_status pred_parse(const char *text, size_t len, pred_expr **out, pred_error *err);
void pred_free(pred_expr *e);

/* Distinct column names as written (after unquoting), in order of first use. */
size_t pred_column_count(const pred_expr *e);
const char *pred_column_name(const pred_expr *e, size_t i);

/* Replace every column name by what map gives for it (copied; a Delta
 * table's logical names by physical ones). map returning NULL: an unknown
 * column (PRED_E_COLUMN at the name's position); names already replaced
 * stay replaced. */
pred_status pred_rename_columns(pred_expr *e, const char *(*map)(void *ctx, const char *name), void *ctx,
                                pred_error *err);

/* ---------------- binding ---------------- */

/* Bound to one file's schema; owns copies of everything it needs (the
 * pred_expr and pq_file_meta may be freed after pred_bind). */
typedef struct pred_bound pred_bound;

pred_status pred_bind(const pred_expr *e, const pq_file_meta *m, pred_bound **out,
                      pred_error *err);

/* Columns whose value is one constant for the whole file (a Delta table's
 * partition columns, which live in the log, not in the Parquet file). */
typedef struct {
    const char *name;  /* matched like a leaf path: exactly, else ignoring case when unique */
    pqv_type type;
    bool is_null;
    pqv value;         /* of type's kind; BYTES borrowed for the call */
} pred_constant;

/* pred_bind, with the names of k[0..nk) bound to constants (they win over
 * leaves of the same name). Every condition on a constant is decided at
 * bind time and the tree simplified, so the bound predicate reads only
 * Parquet columns, and pred_bound_truth says when the file is decided as a
 * whole. */
pred_status pred_bind_constants(const pred_expr *e, const pq_file_meta *m, const pred_constant *k, size_t nk,
                                pred_bound **out, pred_error *err);

typedef enum {
    PRED_TRUTH_FALSE = 0, /* no row is selected */
    PRED_TRUTH_NULL = 1,  /* no row is selected (NULL is not TRUE) */
    PRED_TRUTH_TRUE = 2,  /* every row is selected */
    PRED_TRUTH_VARIES,    /* depends on the rows */
} pred_truth;

/* Whether the bound predicate is one constant for every row. */
pred_truth pred_bound_truth(const pred_bound *b);
void pred_bound_free(pred_bound *b);

/* Distinct leaf columns used, in order of first use. */
size_t pred_bound_ncols(const pred_bound *b);
/* Index into m->leaves (= column chunk index in each row group). */
uint32_t pred_bound_leaf(const pred_bound *b, size_t i);
/* The column's comparable type (what pred_eval expects in pqv values). */
const pqv_type *pred_bound_type(const pred_bound *b, size_t i);

/* ---------------- evaluation ---------------- */

/* Column data: one entry per row for bound column i. */
typedef struct {
    const uint8_t *is_null; /* nrows bytes, 1 = NULL; may be NULL when no nulls */
    const pqv *values;      /* nrows entries (entries of NULL rows are ignored); may be
                             * NULL for a column used only by IS [NOT] NULL */
} pred_column_vec;

/* selected[r] = 1 when the predicate is TRUE for row r, else 0. cols[i] is
 * bound column i. Values must be of the column's kind (pred_bound_type); a
 * value that does not compare with the literal counts as NULL. Rows are
 * processed in blocks, one allocation per call. */
pred_status pred_eval(const pred_bound *b, const pred_column_vec *cols, uint32_t nrows,
                      uint8_t *selected, pred_error *err);

/* ---------------- statistics ---------------- */

/* Statistics of one region (row group or page) for bound column i. */
typedef struct {
    bool has_min_max;
    pqv min, max; /* over non-null values; bounds (possibly loose) are enough */
    bool has_null_count;
    int64_t null_count;
    int64_t num_values; /* rows in the region (>= 0), -1 unknown */
} pred_col_stats;

/* false: no statistics for that column. May be called more than once per
 * column in one pred_may_match; out's BYTES values must stay valid until
 * pred_may_match returns. */
typedef bool (*pred_stats_fn)(void *ud, size_t col, pred_col_stats *out);

/* false only when the statistics prove that no row of the region makes the
 * predicate TRUE; unknown gives true. min/max of FLOAT columns are never
 * used (a NaN may be missing from them), only their null counts. */
bool pred_may_match(const pred_bound *b, pred_stats_fn fn, void *ud);

/* A column chunk's Statistics (PLAIN-encoded bounds) as pred_col_stats for
 * bound column i: min_value/max_value when the file declares the type-defined
 * column order for the column, else the deprecated signed-order min/max but
 * only for kinds whose order is signed (BOOL, INT, DATE, TIME, INT64
 * TIMESTAMP, INT32/INT64 DECIMAL, FLOAT): never for BYTES (old writers sorted
 * bytes signed), UINT or INT96. BYTES bounds borrow st's buffers. false when
 * nothing usable (no bounds and no null count). */
bool pred_stats_from_parquet(const pred_bound *b, size_t col, const pq_statistics *st,
                             int64_t num_values, pred_col_stats *out);

#endif
