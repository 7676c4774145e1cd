/* The predicate's parts share these: the parsed form (pred_parse.c, built
 * by the parser over the tokens of pred_lex.c), the bound form
 * (pred_bind.c), read by pred_eval.c (rows) and pred_prune.c (statistics),
 * and the helpers more than one part needs. Private to planner/predicate/. */
#ifndef SIEVE_PREDICATE_INTERNAL_H
#define SIEVE_PREDICATE_INTERNAL_H

#include "predicate.h"
#include "sv_grow.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NONE UINT32_MAX

/* Room for need elements in the array arr of capacity cap (doubling from 16). */
#define PRED_GROW(arr, cap, need) \
    sv_grow((void **)&(arr), &(cap), (need), sizeof *(arr), 16, UINT32_MAX)

/* Three-valued logic encoded so that AND is min, OR is max and NOT is 2 - x. */
enum { TF = 0, TN = 1, TT = 2 };

/* ---------------- errors (pred_errors.c) ---------------- */

/* An error about the text at byte pos: the message starts "at POS: ". One
 * not tied to the text (arguments, memory) is sv_fail(err, s, 0, ...). */
pred_status pred_fail_at(pred_error *err, pred_status s, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
pred_status pred_nomem(pred_error *err);

/* ---------------- dates and times (pred_datetime.c) ---------------- */

/* A timestamp literal as a value comparable with a column of type t. */
bool pred_timestamp_value(int64_t secs, uint32_t nanos, const pqv_type *t, pqv *out);

/* ---------------- parsed form (pred_parse.c) ---------------- */

typedef enum {
    L_NULL,
    L_BOOL,
    L_INT,
    L_DECIMAL,
    L_FLOAT,
    L_STRING,
    L_DATE,
    L_TIMESTAMP,
} lit_kind;

typedef struct {
    lit_kind kind;
    size_t pos;
    bool b;
    int64_t i;        /* INT */
    pq_i128 dec;      /* DECIMAL unscaled */
    int32_t scale;    /* DECIMAL */
    double f;         /* FLOAT */
    char *s;          /* STRING bytes; DECIMAL numeral text (for FLOAT columns); owned */
    uint32_t slen;
    int32_t days;     /* DATE */
    int64_t secs;     /* TIMESTAMP */
    uint32_t nanos;
} plit;

typedef enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE } cmp_op;

typedef enum {
    P_AND,
    P_OR,
    P_NOT,
    P_CMP,     /* column op literal */
    P_BETWEEN, /* literals lo, hi */
    P_IN,      /* nlit literals */
    P_ISNULL,  /* neg: IS NOT NULL */
    P_LIKE,    /* literal: pattern */
    P_COLUMN,  /* a BOOLEAN column alone */
    P_CONST,   /* TRUE, FALSE or NULL alone */
} pkind;

typedef struct {
    uint8_t kind, op;
    bool neg;
    uint32_t name;        /* index into names */
    uint32_t child, next; /* first child, next sibling (AND/OR/NOT) */
    uint32_t lit, nlit;
    size_t pos;           /* operator, or first token */
    size_t name_pos;      /* where the column is written */
} pnode;

typedef struct {
    char *s;
    size_t pos;
} pname;

struct pred_expr {
    pnode *nodes;
    uint32_t n_nodes;
    size_t cap_nodes;
    plit *lits;
    uint32_t n_lits;
    size_t cap_lits;
    pname *names;
    uint32_t n_names;
    size_t cap_names;
    uint32_t root;
};

/* ---------------- tokens (pred_lex.c) ---------------- */

typedef enum {
    T_EOF,
    T_IDENT,
    T_STRING,
    T_NUMBER,
    T_LPAREN,
    T_RPAREN,
    T_COMMA,
    T_MINUS,
    T_CMP, /* sub: cmp_op */
    T_KW,  /* sub: keyword */
} ttype;

typedef enum {
    K_AND,
    K_OR,
    K_NOT,
    K_BETWEEN,
    K_IN,
    K_IS,
    K_NULL,
    K_LIKE,
    K_TRUE,
    K_FALSE,
    K_DATE,
    K_TIMESTAMP,
} keyword;

typedef struct {
    ttype t;
    int sub;
    size_t pos, len;
} token;

typedef struct {
    const char *s;
    size_t n, p; /* text, length, cursor after tok */
    token tok;
    pred_expr *e;
    pred_error *err;
    unsigned depth;
} parser;

/* Read the next token into P->tok. */
pred_status pred_lex_next(parser *P);
bool pred_lex_is_kw(const parser *P, keyword k);
/* A syntax error at the current token: "expected WHAT, found TOKEN". */
pred_status pred_lex_expected(parser *P, const char *what);

/* ---------------- bound form (pred_bind.c) ---------------- */

typedef enum {
    B_AND,
    B_OR,
    B_NOT,
    B_CMP,     /* op, one value */
    B_IN,      /* sorted distinct values; in_null: the list holds NULL */
    B_ISNULL,  /* op 1: IS NOT NULL */
    B_LIKE,    /* values: the pattern's %-separated segments (>= 1) */
    B_BOOLCOL,
    B_CONST,   /* op: TF/TN/TT */
} bkind;

typedef struct {
    uint8_t kind, op;
    bool in_null;
    uint32_t col;
    uint32_t child, next;
    uint32_t val, nval;
} bnode;

typedef struct {
    uint32_t leaf;
    pqv_type type;
    bool typed;         /* pqv_type_from_leaf succeeded */
    bool order_defined; /* column_orders: min_value/max_value use the type's order */
    bool needs_values;  /* used by more than IS [NOT] NULL */
    char *path;
    /* pred_bind_constants: a constant, not a leaf (leaf NONE); folded away
     * before the bound predicate is returned */
    bool constant;
    bool const_null;
    pqv const_value;
} bcol;

struct pred_bound {
    bnode *nodes;
    uint32_t n_nodes;
    size_t cap_nodes;
    pqv *vals;
    uint32_t n_vals;
    size_t cap_vals;
    uint8_t *bytes; /* copies of string literals; BYTES vals point here */
    size_t n_bytes, cap_bytes;
    bcol *cols;
    uint32_t ncols;
    size_t cap_cols;
    uint32_t root;
    uint32_t height; /* tree height: scratch buffers pred_eval needs */
};

/* ---------------- shared by evaluation and pruning (pred_eval.c) ---------------- */

/* Leaf node ni (a comparison, IN, LIKE, IS NULL or a BOOLEAN column) for
 * one row whose column holds v, or the null value when v is NULL: TF, TN
 * or TT into *out. False when out of memory. */
bool pred_eval_leaf_row(const pred_bound *b, uint32_t ni, const pqv *v, uint8_t *out);

/* Index of the first of vals[0..n) >= v (n if none); *eq when equal,
 * *incomparable (and 0) when v does not compare with them. */
uint32_t pred_lower_bound(const pqv *vals, uint32_t n, const pqv *v, bool *eq,
                          bool *incomparable);

#endif
