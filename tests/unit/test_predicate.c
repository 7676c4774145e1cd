/* The predicate language: parsing, binding to real fixture schemas,
 * three-valued evaluation, statistics pruning, limits, and a randomized
 * differential test against a reference evaluator written here. */
#include "predicate.h"

#include "fixture_files.h"
#include "parquet_meta.h"
#include "pq_value.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* helpers                                                            */
/* ------------------------------------------------------------------ */

/* v1_plain_none_index leaves */
enum { F_I32, F_I64, F_F32, F_F64, F_FLBA, F_B, F_S };
/* types_snappy leaves */
enum {
    T_DEC_I32,
    T_DEC_FLBA,
    T_DATE,
    T_T_MS,
    T_T_US,
    T_T_NS,
    T_TS_MS_UTC,
    T_TS_US,
    T_TS_NS_UTC,
    T_I8,
    T_U16,
    T_U32,
    T_U64,
    T_F16,
    T_STR,
    T_BIN,
    T_NUL,
    T_UUID,
    T_JSON,
};

#define DAY_2024_01_01 19723 /* days since 1970-01-01 */
#define SEC_2024_01_01 1704067200LL

static pq_file_meta *load_meta(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.parquet", FIXTURE_DIR, name);
    size_t len;
    uint8_t *data = fixture_read(path, &len);
    pq_file_meta *m = NULL;
    tc_error err;
    cr_assert_eq(pq_file_meta_from_tail(data, len, len, &m, NULL, &err), TC_OK, "%s: %s", name,
                 err.msg);
    free(data); /* the meta keeps its own copy */
    return m;
}

static pred_expr *parse_ok(const char *text)
{
    pred_expr *e = NULL;
    pred_error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(pred_parse(text, strlen(text), &e, &err), PRED_OK, "'%s': %s", text, err.msg);
    cr_assert_not_null(e);
    return e;
}

static pred_bound *bind_ok(const pq_file_meta *m, const char *text)
{
    pred_expr *e = parse_ok(text);
    pred_bound *b = NULL;
    pred_error err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(pred_bind(e, m, &b, &err), PRED_OK, "'%s': %s", text, err.msg);
    pred_free(e); /* the bound predicate must not depend on it */
    return b;
}

/* Parse (and bind to m when given) len bytes of text, expecting status st
 * at byte pos and a message holding sub. */
static void expect_error_n(const pq_file_meta *m, const char *text, size_t len, pred_status st,
                           size_t pos, const char *sub)
{
    pred_expr *e = NULL;
    pred_error err;
    memset(&err, 0, sizeof err);
    pred_status got = pred_parse(text, len, &e, &err);
    if (got == PRED_OK) {
        cr_assert_not_null(m, "'%.60s' parsed but a parse error was expected", text);
        pred_bound *b = NULL;
        got = pred_bind(e, m, &b, &err);
        if (got == PRED_OK)
            pred_bound_free(b);
        else
            cr_expect_null(b);
    } else {
        cr_expect_null(e);
    }
    pred_free(e);
    cr_assert_eq(got, st, "'%.60s': got %s (%s), want %s", text, pred_status_name(got), err.msg,
                 pred_status_name(st));
    cr_expect_eq(err.code, (int)st);
    cr_expect_eq(err.offset, pos, "'%.60s': pos %zu, want %zu (%s)", text, err.offset, pos,
                 err.msg);
    cr_expect(strstr(err.msg, sub) != NULL, "'%.60s': message '%s' lacks '%s'", text, err.msg,
              sub);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "at %zu: ", pos);
    cr_expect(strncmp(err.msg, prefix, strlen(prefix)) == 0,
              "message '%s' does not start with '%s'", err.msg, prefix);
}

#define ERR(m, text, st, pos, sub) expect_error_n(m, text, strlen(text), st, pos, sub)

#define MAXLEAF 20
#define MAXROWS 64

typedef struct {
    uint32_t nrows;
    pqv v[MAXLEAF][MAXROWS];
    uint8_t null[MAXLEAF][MAXROWS];
} table;

static void eval_rows(const pq_file_meta *m, const table *t, const char *text, uint8_t *sel)
{
    pred_bound *b = bind_ok(m, text);
    pred_column_vec cols[MAXLEAF];
    cr_assert_leq(pred_bound_ncols(b), MAXLEAF);
    for (size_t i = 0; i < pred_bound_ncols(b); i++) {
        const uint32_t leaf = pred_bound_leaf(b, i);
        cr_assert_lt(leaf, MAXLEAF);
        cols[i].values = t->v[leaf];
        cols[i].is_null = t->null[leaf];
    }
    pred_error err;
    memset(sel, 0xee, t->nrows);
    cr_assert_eq(pred_eval(b, cols, t->nrows, sel, &err), PRED_OK, "'%s': %s", text, err.msg);
    pred_bound_free(b);
}

/* Rows selected as a '0'/'1' string. */
static void expect_sel(const pq_file_meta *m, const table *t, const char *text, const char *want)
{
    uint8_t sel[MAXROWS];
    eval_rows(m, t, text, sel);
    char got[MAXROWS + 1];
    for (uint32_t r = 0; r < t->nrows; r++) {
        cr_assert(sel[r] == 0 || sel[r] == 1);
        got[r] = sel[r] ? '1' : '0';
    }
    got[t->nrows] = 0;
    cr_expect_str_eq(got, want, "'%s'", text);
}

/* Truth value per row as 'T'/'F'/'N': TRUE rows are those selected by the
 * text, FALSE rows those selected by NOT (text). */
static void expect_tri(const pq_file_meta *m, const table *t, const char *text, const char *want)
{
    uint8_t pos[MAXROWS], neg[MAXROWS];
    char buf[4096];
    eval_rows(m, t, text, pos);
    snprintf(buf, sizeof buf, "NOT (%s)", text);
    eval_rows(m, t, buf, neg);
    char got[MAXROWS + 1];
    for (uint32_t r = 0; r < t->nrows; r++) {
        cr_assert(!(pos[r] && neg[r]), "'%s' row %u both TRUE and FALSE", text, r);
        got[r] = pos[r] ? 'T' : neg[r] ? 'F' : 'N';
    }
    got[t->nrows] = 0;
    cr_expect_str_eq(got, want, "'%s'", text);
}

static table *new_table(uint32_t nrows)
{
    table *t = calloc(1, sizeof *t);
    cr_assert_not_null(t);
    t->nrows = nrows;
    return t;
}

/* Column leaf of t from ints; INT64_MIN means NULL. */
static void set_ints(table *t, uint32_t leaf, const int64_t *v)
{
    for (uint32_t r = 0; r < t->nrows; r++) {
        t->null[leaf][r] = v[r] == INT64_MIN;
        if (v[r] != INT64_MIN)
            t->v[leaf][r] = pqv_int(v[r]);
    }
}

static void set_strings(table *t, uint32_t leaf, const char *const *v)
{
    for (uint32_t r = 0; r < t->nrows; r++) {
        t->null[leaf][r] = v[r] == NULL;
        if (v[r])
            t->v[leaf][r] = pqv_string(v[r]);
    }
}

#define NUL INT64_MIN

/* Region statistics by leaf for pred_may_match. */
typedef struct {
    const pred_bound *b;
    bool have[MAXLEAF];
    pred_col_stats s[MAXLEAF];
    int calls;
} region_stats;

static bool stats_by_leaf(void *ud, size_t col, pred_col_stats *out)
{
    region_stats *r = ud;
    r->calls++;
    const uint32_t leaf = pred_bound_leaf(r->b, col);
    if (leaf >= MAXLEAF || !r->have[leaf])
        return false;
    *out = r->s[leaf];
    return true;
}

/* Bounds lo..hi for leaf, nulls null values (unknown if negative) in rows rows. */
static void set_stats(region_stats *r, uint32_t leaf, pqv lo, pqv hi, int64_t nulls, int64_t rows)
{
    r->have[leaf] = true;
    memset(&r->s[leaf], 0, sizeof r->s[leaf]);
    r->s[leaf].has_min_max = true;
    r->s[leaf].min = lo;
    r->s[leaf].max = hi;
    r->s[leaf].has_null_count = nulls >= 0;
    r->s[leaf].null_count = nulls;
    r->s[leaf].num_values = rows;
}

static void int_stats(region_stats *r, uint32_t leaf, int64_t lo, int64_t hi, int64_t nulls,
                      int64_t rows)
{
    set_stats(r, leaf, pqv_int(lo), pqv_int(hi), nulls, rows);
}

static bool may(const pq_file_meta *m, region_stats *r, const char *text)
{
    pred_bound *b = bind_ok(m, text);
    r->b = b;
    const bool res = pred_may_match(b, stats_by_leaf, r);
    pred_bound_free(b);
    return res;
}

/* Tables of cases: each row is checked as the call of its helper would be. */
#define NCASES(a) (sizeof(a) / sizeof *(a))

/* A predicate and the rows it gives: 'T'/'F'/'N' per row for expect_tri,
 * '0'/'1' per row for expect_sel. */
typedef struct {
    const char *text;
    const char *want;
} row_case;

static void expect_tris(const pq_file_meta *m, const table *t, const row_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_tri(m, t, c[i].text, c[i].want);
}

static void expect_sels(const pq_file_meta *m, const table *t, const row_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_sel(m, t, c[i].text, c[i].want);
}

/* A predicate and whether the region's statistics leave it able to match. */
typedef struct {
    const char *text;
    bool may;
} may_case;

static void expect_mays(const pq_file_meta *m, region_stats *r, const may_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const bool got = may(m, r, c[i].text);
        cr_expect_eq(got, c[i].may, "'%s': may match %d, want %d", c[i].text, got, c[i].may);
    }
}

/* A predicate that fails at byte pos with a message holding sub. */
typedef struct {
    const char *text;
    size_t pos;
    const char *sub;
} err_case;

static void expect_errors(const pq_file_meta *m, pred_status st, const err_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ERR(m, c[i].text, st, c[i].pos, c[i].sub);
}

/* ------------------------------------------------------------------ */
/* parsing                                                            */
/* ------------------------------------------------------------------ */

Test(predicate, parse_column_names)
{
    pred_expr *e = parse_ok("a = 1 AND \"odd name\" > 2 OR st.a IS NULL OR a < 5 OR "
                            "\"we\"\"ird\".\"x.y\" = 'q' OR date = DATE '2024-01-01'");
    cr_assert_eq(pred_column_count(e), 5);
    cr_expect_str_eq(pred_column_name(e, 0), "a");
    cr_expect_str_eq(pred_column_name(e, 1), "odd name");
    cr_expect_str_eq(pred_column_name(e, 2), "st.a");
    cr_expect_str_eq(pred_column_name(e, 3), "we\"ird.x.y");
    cr_expect_str_eq(pred_column_name(e, 4), "date");
    cr_expect_null(pred_column_name(e, 5));
    pred_free(e);
    cr_expect_eq(pred_column_count(NULL), 0);
    pred_free(NULL);
}

Test(predicate, parse_every_form)
{
    static const char *const ok[] = {
        "a = 1", "a != 1", "a <> 1", "a < 1", "a <= 1", "a > 1", "a >= 1", "1 < a",
        "a=-1", "a = - 1", "a BETWEEN 1 AND 2", "a NOT BETWEEN -1 AND 2.5",
        "a IN (1)", "a IN (1, 2, NULL)", "a NOT IN ('x', 'y')", "a IS NULL", "a IS NOT NULL",
        "a LIKE 'x%'", "a NOT LIKE '%'", "a LIKE ''", "NOT a = 1", "NOT NOT a", "a",
        "(a)", "((a = 1))", "TRUE", "false", "NULL", "a = TRUE", "a = NULL",
        "a = 12.50", "a = .5", "a = 12.", "a = 1e3", "a = 1.5E-2", "a = 2e+2",
        "a = 'it''s'", "a = ''", "a = DATE '2024-02-29'", "a = date'2024-01-01'",
        "a = TIMESTAMP '2024-01-01'", "a = TIMESTAMP '2024-01-01 12:34:56'",
        "a = TIMESTAMP '2024-01-01T12:34:56.123456789'", "a = timestamp '2024-01-01 00:00:00.5'",
        "a = 9223372036854775807", "a = -9223372036854775808",
        "a = 99999999999999999999999999999999999999",
        "a = 0.00000000000000000000000000000000000001",
        "a.b.c = 1", "_x1 = 1", "\"a\".b = 1", "x between 1 and 2 and y in (1) or not z",
        "a = 1 AND b = 2 OR c = 3 AND d = 4", " \t\na\r\n=\f1\v ", "timestamp = 1", "date",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        pred_free(parse_ok(ok[i]));
}

Test(predicate, syntax_errors_with_positions)
{
    static const err_case syntax[] = {
        {"", 0, "empty predicate"},
        {"   ", 3, "empty predicate"},
        {"(a = 1", 6, "expected ')'"},
        {"(a = 1 OR (b = 2)", 17, "expected ')', found end of input"},
        {"a = ", 4, "expected a column or a literal"},
        {"a = 'abc", 4, "unterminated string literal"},
        {"\"abc = 1", 0, "unterminated quoted identifier"},
        {"a ! 1", 2, "expected '=' after '!'"},
        {"a = 1 b", 6, "expected AND, OR or end of input, found 'b'"},
        {"a = 1)", 5, "found ')'"},
        {"a = b", 2, "comparison of two columns is not supported"},
        {"1 = 2", 2, "needs a column on one side"},
        {"a IN ()", 6, "expected a literal"},
        {"a IN (1 2)", 8, "expected ',' or ')'"},
        {"a IN 1", 5, "expected '(' after IN"},
        {"a IN (b)", 6, "expected a literal"},
        {"a IS 5", 5, "expected NULL or NOT NULL after IS"},
        {"a IS NOT 5", 9, "expected NULL after IS NOT"},
        {"a NOT 5", 6, "expected BETWEEN, IN or LIKE after NOT"},
        {"5 BETWEEN 1 AND 2", 0, "BETWEEN needs a column"},
        {"'x' LIKE 'y'", 0, "LIKE needs a column"},
        {"NULL IS NULL", 0, "IS NULL needs a column"},
        {"a BETWEEN 1 OR 2", 12, "expected AND"},
        {"a LIKE b", 7, "expected a string pattern"},
        {"a LIKE 'a_b'", 9, "LIKE supports only % wildcards"},
        {"a NOT LIKE '%\\%'", 13, "LIKE supports only % wildcards"},
        {"12abc = 1", 0, "malformed number"},
        {"a = 1.2.3", 4, "malformed number"},
        {"a = 1e", 4, "exponent without digits"},
        {"\"\" = 1", 0, "empty quoted identifier"},
        {"a. = 1", 1, "expected a name after '.'"},
        {"a = - x", 6, "expected a number after '-'"},
        {"'abc'", 5, "expected a comparison after the literal"},
        {"42", 2, "expected a comparison"},
        {"a = 1 AND", 9, "found end of input"},
        {"a = 1 # 2", 6, "unexpected character '#'"},
        {"a = \x01", 4, "unexpected byte 0x01"},
        {"a = 1 OR NOT", 12, "expected a column or a literal"},
    };
    expect_errors(NULL, PRED_E_SYNTAX, syntax, NCASES(syntax));
    /* A NUL byte inside the text (len-delimited) is not a terminator. */
    expect_error_n(NULL, "a = 1\0 OR b", 11, PRED_E_SYNTAX, 5, "unexpected byte 0x00");
    expect_error_n(NULL, "\"a\0\" = 1", 8, PRED_E_SYNTAX, 2, "NUL byte in a quoted identifier");
}

Test(predicate, literal_errors)
{
    static const err_case literals[] = {
        /* 39 digits: beyond DECIMAL(38) */
        {"a = 123456789012345678901234567890123456789", 4, "numeric literal out of range"},
        {"a < -123456789012345678901234567890123456789", 4, "out of range"},
        {"a = 0.0000000000000000000000000000000000000001", 4,
         "more than 38 digits after the point"},
        {"a = 1e999", 4, "float literal out of range"},
        {"a = DATE '2023-02-29'", 9, "bad DATE literal"},
        {"a = DATE '2024-13-01'", 9, "bad DATE literal"},
        {"a = DATE '2024-1-01'", 9, "YYYY-MM-DD"},
        {"a = DATE '2024-01-01 00:00:00'", 9, "bad DATE literal"},
        {"a IN (1, TIMESTAMP '2024-01-01 24:00:00')", 19, "bad TIMESTAMP literal"},
        {"a = TIMESTAMP '2024-01-01 10:00'", 14, "bad TIMESTAMP"},
        {"a = TIMESTAMP '2024-01-01 10:00:00.1234567890'", 14, "bad TIMESTAMP"},
        {"a = TIMESTAMP '2024-01-01 10:00:00Z'", 14, "bad TIMESTAMP"},
        {"a = TIMESTAMP '2024-01-01 10:00:00.'", 14, "bad TIMESTAMP"},
        /* DATE is a keyword only before a string: here it is a column */
        {"a = DATE", 2, "comparison of two columns"},
    };
    expect_errors(NULL, PRED_E_SYNTAX, literals, NCASES(literals));
}

Test(predicate, limits)
{
    /* text length */
    const size_t big = PRED_MAX_TEXT + 1;
    char *text = malloc(big + 16);
    cr_assert_not_null(text);
    memset(text, ' ', big);
    memcpy(text, "a = 1", 5);
    expect_error_n(NULL, text, big, PRED_E_LIMIT, PRED_MAX_TEXT, "longer than 65536 bytes");
    pred_expr *e = NULL;
    pred_error err;
    cr_expect_eq(pred_parse(text, PRED_MAX_TEXT, &e, &err), PRED_OK, "%s", err.msg);
    pred_free(e);

    /* parentheses: 64 levels parse, 65 do not */
    size_t n = 0;
    for (int i = 0; i < 65; i++)
        text[n++] = '(';
    n += (size_t)sprintf(text + n, "a = 1");
    for (int i = 0; i < 65; i++)
        text[n++] = ')';
    expect_error_n(NULL, text, n, PRED_E_LIMIT, 64, "nesting deeper than 64 levels");
    cr_expect_eq(pred_parse(text + 1, n - 2, &e, &err), PRED_OK, "%s", err.msg);
    pred_free(e);

    /* NOT chains count as nesting too */
    n = 0;
    for (int i = 0; i < 65; i++)
        n += (size_t)sprintf(text + n, "NOT ");
    n += (size_t)sprintf(text + n, "a");
    expect_error_n(NULL, text, n, PRED_E_LIMIT, 64 * 4, "nesting deeper than 64");
    cr_expect_eq(pred_parse(text + 4, n - 4, &e, &err), PRED_OK, "%s", err.msg);
    pred_free(e);

    /* nodes: one OR node and 4095 comparisons fit, 4096 do not */
    n = 0;
    size_t last = 0;
    for (unsigned i = 0; i < PRED_MAX_NODES; i++) {
        last = n + (i ? 4 : 0);
        n += (size_t)sprintf(text + n, "%sa=%u", i ? " OR " : "", i % 10);
    }
    expect_error_n(NULL, text, n, PRED_E_LIMIT, last + 1, "more than 4096 predicate nodes");
    cr_expect_eq(pred_parse(text, last - 4, &e, &err), PRED_OK, "%s", err.msg);
    pred_free(e);

    /* IN list: 4096 items fit, 4097 do not */
    n = (size_t)sprintf(text, "a IN (");
    for (unsigned i = 0; i < PRED_MAX_IN_ITEMS; i++)
        n += (size_t)sprintf(text + n, "%u,", i);
    const size_t item = n;
    n += (size_t)sprintf(text + n, "1)");
    expect_error_n(NULL, text, n, PRED_E_LIMIT, item, "IN list longer than 4096 items");
    text[item - 1] = ')';
    cr_expect_eq(pred_parse(text, item, &e, &err), PRED_OK, "%s", err.msg);
    pred_free(e);
    free(text);
}

Test(predicate, long_string_literal_and_in_list_evaluate)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    /* the longest string literal the text limit allows */
    const size_t slen = PRED_MAX_TEXT - 16;
    char *text = malloc(PRED_MAX_TEXT + 1);
    cr_assert_not_null(text);
    size_t n = (size_t)sprintf(text, "s LIKE '");
    memset(text + n, 'x', slen);
    text[n + slen - 1] = '%';
    n += slen;
    n += (size_t)sprintf(text + n, "'");
    cr_assert_leq(n, PRED_MAX_TEXT);
    pred_expr *e = NULL;
    pred_error err;
    cr_assert_eq(pred_parse(text, n, &e, &err), PRED_OK, "%s", err.msg);
    pred_bound *b = NULL;
    cr_assert_eq(pred_bind(e, m, &b, &err), PRED_OK, "%s", err.msg);
    pred_free(e);
    char *val = malloc(slen + 10);
    memset(val, 'x', slen + 9);
    pqv vals[2] = {pqv_bytes(val, (uint32_t)(slen + 9)), pqv_bytes(val, (uint32_t)(slen - 2))};
    pred_column_vec col = {.values = vals};
    uint8_t sel[2];
    cr_assert_eq(pred_eval(b, &col, 2, sel, &err), PRED_OK, "%s", err.msg);
    cr_expect_eq(sel[0], 1);
    cr_expect_eq(sel[1], 0);
    pred_bound_free(b);

    /* a 4096-item IN list: sorted once, binary searched per row */
    n = (size_t)sprintf(text, "i64 IN (");
    for (unsigned i = 0; i < PRED_MAX_IN_ITEMS; i++)
        n += (size_t)sprintf(text + n, "%s%u", i ? "," : "", (i * 7919u) % 100000u);
    sprintf(text + n, ")");
    b = bind_ok(m, text);
    pqv iv[4] = {pqv_int(0), pqv_int(7919), pqv_int(100001), pqv_int((4095u * 7919u) % 100000u)};
    col.values = iv;
    uint8_t s4[4];
    cr_assert_eq(pred_eval(b, &col, 4, s4, &err), PRED_OK, "%s", err.msg);
    cr_expect_eq(s4[0], 1);
    cr_expect_eq(s4[1], 1);
    cr_expect_eq(s4[2], 0);
    cr_expect_eq(s4[3], 1);
    pred_bound_free(b);
    free(val);
    free(text);
    pq_file_meta_free(m);
}

Test(predicate, deep_nesting_evaluates)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    char text[2048];
    size_t n = 0;
    /* 31 NOTs and 32 parentheses: 63 levels, and the 64th inside */
    n += (size_t)sprintf(text + n, "(");
    for (int i = 0; i < 31; i++)
        n += (size_t)sprintf(text + n, "NOT (");
    n += (size_t)sprintf(text + n, "i32 = 1 OR (i64 = 2 AND i32 = 3)");
    text[n++] = ')';
    for (int i = 0; i < 31; i++)
        text[n++] = ')';
    text[n] = 0;
    table *t = new_table(3);
    const int64_t a[] = {1, 3, 3}, b[] = {0, 2, 0};
    set_ints(t, F_I32, a);
    set_ints(t, F_I64, b);
    expect_sel(m, t, text, "001"); /* an odd number of NOTs */
    free(t);
    pq_file_meta_free(m);
}

/* ------------------------------------------------------------------ */
/* binding                                                            */
/* ------------------------------------------------------------------ */

Test(predicate, bind_columns_and_leaves)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    pred_bound *b = bind_ok(m, "s = 'x' AND (i64 > 3 OR s IS NULL) AND I64 < 9 AND \"b\"");
    cr_assert_eq(pred_bound_ncols(b), 3); /* s, i64 (I64 resolves to it), b */
    cr_expect_eq(pred_bound_leaf(b, 0), F_S);
    cr_expect_eq(pred_bound_leaf(b, 1), F_I64);
    cr_expect_eq(pred_bound_leaf(b, 2), F_B);
    cr_expect_eq(pred_bound_leaf(b, 3), UINT32_MAX);
    cr_expect_eq(pred_bound_type(b, 0)->kind, PQV_BYTES);
    cr_expect_eq(pred_bound_type(b, 1)->kind, PQV_INT);
    cr_expect_eq(pred_bound_type(b, 2)->kind, PQV_BOOL);
    pred_bound_free(b);
    pq_file_meta_free(m);
}

Test(predicate, bind_errors_with_positions)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    ERR(m, "i32 = 1 AND nope = 2", PRED_E_COLUMN, 12, "unknown column 'nope'");
    ERR(m, "i32 = 1 AND \"I 32\" = 2", PRED_E_COLUMN, 12, "unknown column 'I 32'");
    static const err_case flat_types[] = {
        {"s = 5", 4, "cannot compare column s (BYTES) with an integer literal"},
        {"i32 = 1.5e0", 6, "cannot compare column i32 (INT) with a float literal"},
        {"i32 = 'x'", 6, "with a string literal"},
        {"i32 IN (1, 2, 'x')", 14, "with a string literal"},
        {"i32 BETWEEN 1 AND DATE '2024-01-01'", 18, "with a DATE literal"},
        {"b = 1", 4, "cannot compare column b (BOOL) with an integer literal"},
        {"f64 = 'x'", 6, "column f64 (FLOAT) with a string literal"},
        {"f64 = TRUE", 6, "with a boolean literal"},
        {"i32 LIKE 'a%'", 4, "LIKE needs a string or binary column; i32 is INT"},
        {"i32 = 1 OR i64", 11, "column i64 (INT) is not BOOLEAN"},
        {"s = TIMESTAMP '2024-01-01'", 4, "with a TIMESTAMP literal"},
    };
    expect_errors(m, PRED_E_TYPE, flat_types, NCASES(flat_types));
    pq_file_meta_free(m);

    m = load_meta("types_snappy");
    static const err_case snappy_types[] = {
        {"date > 'abc'", 7,
         "cannot compare column date (DATE) with a string literal that is not a date"},
        {"date > TIMESTAMP '2024-01-01'", 7, "(DATE) with a TIMESTAMP literal"},
        {"date > 5", 7, "column date (DATE) with an integer literal"},
        {"ts_us = 'noon'", 8, "(TIMESTAMP) with a string literal that is not a timestamp"},
        {"dec_i32 = 1.5e0", 10, "column dec_i32 (DECIMAL(9,2)) with a float literal"},
        {"t_ms < 5", 0, "TIME values are not supported"},
        {"nul = 1", 0, "column nul cannot be used in a comparison"},
        {"u64 LIKE 'x'", 4, "u64 is UINT"},
    };
    expect_errors(m, PRED_E_TYPE, snappy_types, NCASES(snappy_types));
    pred_bound_free(bind_ok(m, "nul IS NULL AND t_ms IS NOT NULL AND nul = NULL"));
    pq_file_meta_free(m);

    m = load_meta("nested_index");
    ERR(m, "id = 1 OR lst.list.element = 3", PRED_E_TYPE, 10,
        "repeated column 'lst.list.element' is not supported");
    ERR(m, "mp.key_value.key IS NULL", PRED_E_TYPE, 0, "repeated column");
    /* optional inside an optional struct (max_def 2) is flat: fine */
    pred_bound *b = bind_ok(m, "st.a = 1 AND st.b LIKE 'x%' AND ST.A < 5");
    cr_expect_eq(pred_bound_ncols(b), 2);
    pred_bound_free(b);
    pq_file_meta_free(m);
}

/* A schema whose names differ only in case (no fixture has one). */
static pq_file_meta *case_meta(pq_leaf *leaves, pq_file_meta *m)
{
    static const char *const paths[] = {"Name", "NAME", "id", "Dup", "dup", "DUP"};
    memset(m, 0, sizeof *m);
    for (int i = 0; i < 6; i++) {
        memset(&leaves[i], 0, sizeof leaves[i]);
        leaves[i].path = (char *)paths[i];
        leaves[i].type = i == 2 ? PQ_INT64 : PQ_BYTE_ARRAY;
        leaves[i].type_length = -1;
        leaves[i].converted_type = PQ_CT_NONE;
        leaves[i].scale = leaves[i].precision = -1;
        leaves[i].repetition = PQ_OPTIONAL;
        leaves[i].max_def = 1;
        leaves[i].depth = 1;
    }
    m->leaves = leaves;
    m->n_leaves = 6;
    return m;
}

Test(predicate, case_insensitive_resolution)
{
    pq_leaf leaves[6];
    pq_file_meta mm;
    pq_file_meta *m = case_meta(leaves, &mm);
    pred_bound *b = bind_ok(m, "Name = 'x' AND NAME = 'y' AND ID = 3 AND \"Dup\" IS NULL");
    cr_assert_eq(pred_bound_ncols(b), 4);
    cr_expect_eq(pred_bound_leaf(b, 0), 0); /* exact match wins */
    cr_expect_eq(pred_bound_leaf(b, 1), 1);
    cr_expect_eq(pred_bound_leaf(b, 2), 2); /* unique without case */
    cr_expect_eq(pred_bound_leaf(b, 3), 3);
    pred_bound_free(b);
    ERR(m, "id = 1 AND name = 'x'", PRED_E_COLUMN, 11,
        "column name 'name' is ambiguous: it matches 'Name' and 'NAME'");
    ERR(m, "dUP IS NULL", PRED_E_COLUMN, 0, "'dUP' is ambiguous: it matches 'Dup' and 'dup'");

    /* fixtures: Spark's column names without their case */
    m = load_meta("spark_crc_snappy");
    b = bind_ok(m, "ID > 1 AND Price < 3.5 AND NAME LIKE 'a%'");
    cr_expect_eq(pred_bound_leaf(b, 0), 0);
    cr_expect_eq(pred_bound_leaf(b, 1), 4);
    cr_expect_eq(pred_bound_leaf(b, 2), 3);
    pred_bound_free(b);
    pq_file_meta_free(m);
}

Test(predicate, bad_arguments)
{
    pred_error err;
    pred_expr *e = NULL;
    cr_expect_eq(pred_parse(NULL, 3, &e, &err), PRED_E_INVALID);
    cr_expect_eq(pred_parse("a", 1, NULL, &err), PRED_E_INVALID);
    cr_expect_eq(pred_parse("a = ", 4, &e, NULL), PRED_E_SYNTAX); /* err may be NULL */
    pred_bound *b = NULL;
    cr_expect_eq(pred_bind(NULL, NULL, &b, &err), PRED_E_INVALID);
    pq_file_meta *m = load_meta("v1_plain_none_index");
    b = bind_ok(m, "i32 = 1 OR s IS NULL");
    uint8_t sel[2];
    cr_expect_eq(pred_eval(b, NULL, 2, sel, &err), PRED_E_INVALID);
    pred_column_vec cols[2] = {{0}, {0}};
    cr_expect_eq(pred_eval(b, cols, 2, sel, &err), PRED_E_INVALID);
    cr_expect(strstr(err.msg, "no values given for column 0 (i32)") != NULL, "%s", err.msg);
    /* s is only tested for NULL: it needs no values */
    const pqv v[2] = {pqv_int(1), pqv_int(2)};
    const uint8_t nulls[2] = {0, 1};
    cols[0].values = v;
    cols[1].is_null = nulls;
    cr_expect_eq(pred_eval(b, cols, 2, sel, &err), PRED_OK, "%s", err.msg);
    cr_expect_eq(sel[0], 1);
    cr_expect_eq(sel[1], 1);
    cr_expect_eq(pred_eval(b, cols, 0, NULL, &err), PRED_OK);
    pred_bound_free(b);
    pred_bound_free(NULL);
    cr_expect_str_eq(pred_status_name(PRED_E_LIMIT), "limit");
    pq_file_meta_free(m);
}

/* ------------------------------------------------------------------ */
/* evaluation                                                         */
/* ------------------------------------------------------------------ */

Test(predicate, integer_comparisons)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    table *t = new_table(6);
    const int64_t v[] = {-5, 0, 4, 5, 6, NUL};
    set_ints(t, F_I32, v);
    static const row_case comparisons[] = {
        {"i32 = 5", "FFFTFN"},
        {"i32 != 5", "TTTFTN"},
        {"i32 <> 5", "TTTFTN"},
        {"i32 < 5", "TTTFFN"},
        {"i32 <= 5", "TTTTFN"},
        {"i32 > 5", "FFFFTN"},
        {"i32 >= 5", "FFFTTN"},
        {"5 < i32", "FFFFTN"},
        {"5 >= i32", "TTTTFN"},
        {"-5 = i32", "TFFFFN"},
        {"i32 > -9223372036854775808", "TTTTTN"},
        {"i32 < 99999999999999999999", "TTTTTN"}, /* DECIMAL literal beyond int64 */
        {"i32 BETWEEN 0 AND 5", "FTTTFN"},
        {"i32 NOT BETWEEN 0 AND 5", "TFFFTN"},
        {"i32 BETWEEN 5 AND 0", "FFFFFN"},
        {"i32 BETWEEN 0 AND NULL", "FNNNNN"}, /* FALSE only where x < 0 */
        {"i32 IS NULL", "FFFFFT"},
        {"i32 IS NOT NULL", "TTTTTF"},
        {"i32 = NULL", "NNNNNN"},
        {"i32 <> NULL", "NNNNNN"},
    };
    expect_tris(m, t, comparisons, NCASES(comparisons));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, in_lists_with_null)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    table *t = new_table(4);
    const int64_t v[] = {1, 2, 3, NUL};
    set_ints(t, F_I32, v);
    static const row_case in_lists[] = {
        {"i32 IN (1, 3)", "TFTN"},
        {"i32 IN (3, 1, 3, 1)", "TFTN"},
        {"i32 IN (1, NULL)", "TNNN"},
        {"i32 NOT IN (1, NULL)", "FNNN"},
        {"i32 NOT IN (1, 3)", "FTFN"},
        {"i32 IN (NULL)", "NNNN"},
        {"i32 NOT IN (NULL, NULL)", "NNNN"},
        {"i32 IN (2.0, 3.5, 10000000000000000000000)", "FTFN"}, /* decimals */
    };
    expect_tris(m, t, in_lists, NCASES(in_lists));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, three_valued_truth_tables)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    /* rows: b in (T, F, N) x (i32 = 1) in (T, F, N) */
    table *t = new_table(9);
    const int64_t iv[] = {1, 0, NUL, 1, 0, NUL, 1, 0, NUL};
    set_ints(t, F_I32, iv);
    for (int r = 0; r < 9; r++) {
        t->null[F_B][r] = r >= 6;
        t->v[F_B][r] = pqv_bool(r < 3);
    }
    static const row_case kleene[] = {
        {"b", "TTTFFFNNN"},
        {"NOT b", "FFFTTTNNN"},
        {"b = TRUE", "TTTFFFNNN"},
        {"b <> TRUE", "FFFTTTNNN"},
        {"b < TRUE", "FFFTTTNNN"}, /* false < true */
        {"i32 = 1", "TFNTFNTFN"},
        {"b AND i32 = 1", "TFNFFFNFN"},
        {"b OR i32 = 1", "TTTTFNTNN"},
        {"NOT (b AND i32 = 1)", "FTNTTTNTN"},
        {"NOT b OR NOT i32 = 1", "FTNTTTNTN"}, /* De Morgan holds in Kleene logic */
        {"b AND NULL", "NNNFFFNNN"},
        {"b OR NULL", "TTTNNNNNN"},
        {"b AND TRUE", "TTTFFFNNN"},
        {"b OR FALSE", "TTTFFFNNN"},
        {"TRUE", "TTTTTTTTT"},
        {"FALSE", "FFFFFFFFF"},
        {"NULL", "NNNNNNNNN"},
        {"b IS NULL OR i32 IS NULL", "FFTFFTTTT"},
    };
    expect_tris(m, t, kleene, NCASES(kleene));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, precedence)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    /* all 8 combinations of three booleans: b, i32 = 1, i64 = 1 */
    table *t = new_table(8);
    int64_t x[8], y[8];
    for (int r = 0; r < 8; r++) {
        t->v[F_B][r] = pqv_bool(r & 4);
        x[r] = (r >> 1) & 1;
        y[r] = r & 1;
    }
    set_ints(t, F_I32, x);
    set_ints(t, F_I64, y);
    static const row_case combos[] = {
        /* AND binds tighter than OR */
        {"b OR i32 = 1 AND i64 = 1", "00011111"},
        {"(b OR i32 = 1) AND i64 = 1", "00010101"},
        {"i32 = 1 AND i64 = 1 OR b", "00011111"},
        /* NOT binds tighter than AND, looser than comparisons */
        {"NOT b AND i32 = 1", "00110000"},
        {"NOT (b AND i32 = 1)", "11111100"},
        {"NOT i32 = 1 AND NOT i64 = 1", "10001000"},
        {"NOT b OR i64 = 1 AND i32 = 0", "11110100"},
        /* BETWEEN's AND is not a conjunction */
        {"i32 BETWEEN 1 AND 1 AND i64 = 1", "00010001"},
        /* keywords without case */
        {"not B and I32 between 1 AnD 1 oR i64 iN (1)", "01110101"},
    };
    expect_sels(m, t, combos, NCASES(combos));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, like_patterns)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    static const char *const s[] = {"abc", "ab",  "xabcx", "",  "cab",
                                    "aaa", "é€ü", "abab",  NULL};
    table *t = new_table(9);
    set_strings(t, F_S, s);
    static const row_case patterns[] = {
        {"s LIKE 'ab%'", "TTFFFFFTN"},
        {"s LIKE '%ab'", "FTFFTFFTN"},
        {"s LIKE '%ab%'", "TTTFTFFTN"},
        {"s LIKE 'ab'", "FTFFFFFFN"},
        {"s LIKE ''", "FFFTFFFFN"},
        {"s LIKE '%'", "TTTTTTTTN"},
        {"s LIKE '%%'", "TTTTTTTTN"},
        {"s LIKE 'a%%b'", "FTFFFFFTN"},
        {"s LIKE 'a%b%c'", "TFFFFFFFN"},
        {"s LIKE 'aa%aa'", "FFFFFFFFN"}, /* prefix and suffix may not overlap */
        {"s LIKE 'a%a'", "FFFFFTFFN"},
        {"s LIKE '%b%b%'", "FFFFFFFTN"},
        {"s LIKE 'é%'", "FFFFFFTFN"},
        {"s LIKE '%€%'", "FFFFFFTFN"},
        {"s LIKE '%ü'", "FFFFFFTFN"},
        {"s LIKE 'AB%'", "FFFFFFFFN"}, /* case-sensitive */
        {"s NOT LIKE '%b%'", "FFFTFTTFN"},
    };
    expect_tris(m, t, patterns, NCASES(patterns));
    free(t);

    /* bytes with NUL and high bytes, and a FIXED_LEN_BYTE_ARRAY column */
    t = new_table(3);
    static const uint8_t b0[] = {0, 'a', 0xff, 'b'}, b1[] = {'a', 0}, b2[] = {0xff};
    t->v[F_FLBA][0] = pqv_bytes(b0, 4);
    t->v[F_FLBA][1] = pqv_bytes(b1, 2);
    t->v[F_FLBA][2] = pqv_bytes(b2, 1);
    expect_sel(m, t, "flba LIKE '%a%'", "110");
    expect_sel(m, t, "flba > 'a'", "011"); /* bytes compare unsigned: 0x00 < 'a' < 0xff */
    expect_sel(m, t, "flba < 'a'", "100");
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, strings_compare_as_bytes)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    static const char *const s[] = {"s0001", "s0050", "it's", "", "S0001", NULL};
    table *t = new_table(6);
    set_strings(t, F_S, s);
    static const row_case bytewise[] = {
        {"s = 's0001'", "TFFFFN"},
        {"s > 's0001'", "FTFFFN"},
        {"s >= 's'", "TTFFFN"},
        {"s = 'it''s'", "FFTFFN"},
        {"s = ''", "FFFTFN"},
        {"s IN ('', 's0050', NULL)", "NTNTNN"},
        {"s BETWEEN 'S' AND 's0002'", "TFTFTN"},
        {"'s0050' <= s", "FTFFFN"},
    };
    expect_tris(m, t, bytewise, NCASES(bytewise));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, decimals_and_integers)
{
    pq_file_meta *m = load_meta("types_snappy");
    table *t = new_table(5);
    /* DECIMAL(9,2) values 12.50, -0.01, 0, 999.99, NULL */
    const pq_i128 dv[] = {1250, -1, 0, 99999};
    for (int r = 0; r < 4; r++)
        t->v[T_DEC_I32][r] = pqv_decimal(dv[r], 2);
    t->null[T_DEC_I32][4] = 1;
    static const row_case dec_9_2[] = {
        {"dec_i32 = 12.5", "TFFFN"},
        {"dec_i32 = 12.50", "TFFFN"},
        {"dec_i32 = 12.500000", "TFFFN"},
        {"dec_i32 = 12", "FFFFN"},
        {"dec_i32 > 12", "TFFTN"},
        {"dec_i32 < 0", "FTFFN"},
        {"dec_i32 <= -0.01", "FTFFN"},
        {"dec_i32 < -0.001", "FTFFN"},
        {"dec_i32 = -0", "FFTFN"},
        {"dec_i32 IN (0.0, 999.99, 12.49)", "FFTTN"},
        {"dec_i32 BETWEEN -1 AND 12.5", "TTTFN"},
        {"dec_i32 >= 99999999999999999999999999999999999999", "FFFFN"},
    };
    expect_tris(m, t, dec_9_2, NCASES(dec_9_2));
    free(t);

    /* unsigned columns: the whole uint64 range, negative literals */
    t = new_table(3);
    t->v[T_U64][0] = pqv_uint(UINT64_MAX);
    t->v[T_U64][1] = pqv_uint(0);
    t->v[T_U64][2] = pqv_uint((uint64_t)INT64_MAX + 1);
    for (int r = 0; r < 3; r++)
        t->v[T_U32][r] = pqv_uint((uint64_t)r);
    static const row_case unsigned_range[] = {
        {"u64 = 18446744073709551615", "100"},
        {"u64 > 9223372036854775807", "101"},
        {"u64 > -1", "111"},
        {"u32 >= 1.5", "001"},
        {"u32 IN (-1, 0, 2)", "101"},
    };
    expect_sels(m, t, unsigned_range, NCASES(unsigned_range));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, floats_total_order)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    table *t = new_table(7);
    const double fv[] = {-0.0, 1.1, INFINITY, NAN, -INFINITY, 0.1};
    for (int r = 0; r < 6; r++)
        t->v[F_F64][r] = pqv_double(fv[r]);
    t->null[F_F64][6] = 1;
    static const row_case doubles[] = {
        {"f64 = 0", "TFFFFFN"},
        {"f64 = 0.0", "TFFFFFN"},
        {"f64 = 1.1", "FTFFFFN"}, /* decimal literal read as the double 1.1 */
        {"f64 = 0.1", "FFFFFTN"},
        {"f64 = 1e-1", "FFFFFTN"},
        {"f64 > 1e308", "FFTTFFN"}, /* NaN is above +Infinity */
        {"f64 < 0", "FFFFTFN"},
        {"f64 <> 1.1", "TFTTTTN"},
        {"f64 BETWEEN -1 AND 2", "TTFFFTN"},
        {"f64 IN (1.1, 0)", "TTFFFFN"},
        {"f64 >= 12345678901234567890123", "FFTTFFN"},
    };
    expect_tris(m, t, doubles, NCASES(doubles));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, dates)
{
    pq_file_meta *m = load_meta("types_snappy");
    table *t = new_table(5);
    const int32_t dv[] = {DAY_2024_01_01, DAY_2024_01_01 + 1, DAY_2024_01_01 + 59, 0};
    for (int r = 0; r < 4; r++)
        t->v[T_DATE][r] = pqv_date(dv[r]);
    t->null[T_DATE][4] = 1;
    static const row_case days[] = {
        {"date = DATE '2024-01-01'", "TFFFN"},
        {"date = '2024-01-02'", "FTFFN"},
        {"date = DATE '2024-02-29'", "FFTFN"}, /* leap day */
        {"date < DATE '1970-01-02'", "FFFTN"},
        {"date BETWEEN '2024-01-01' AND DATE '2024-01-31'", "TTFFN"},
        {"date IN ('1970-01-01', DATE '2024-02-29')", "FFTTN"},
        {"date > DATE '0001-01-01' AND date < DATE '9999-12-31'", "TTTTN"},
    };
    expect_tris(m, t, days, NCASES(days));
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, timestamps_and_units)
{
    pq_file_meta *m = load_meta("types_snappy");
    table *t = new_table(4);
    const int64_t ms = SEC_2024_01_01 * 1000;
    /* millis, UTC-adjusted */
    t->v[T_TS_MS_UTC][0] = pqv_timestamp(ms, PQ_UNIT_MILLIS, true);
    t->v[T_TS_MS_UTC][1] = pqv_timestamp(ms + 1, PQ_UNIT_MILLIS, true);
    t->v[T_TS_MS_UTC][2] = pqv_timestamp(ms + 45296789, PQ_UNIT_MILLIS, true); /* 12:34:56.789 */
    t->null[T_TS_MS_UTC][3] = 1;
    static const row_case millis[] = {
        {"ts_ms_utc = TIMESTAMP '2024-01-01 00:00:00'", "TFFN"},
        {"ts_ms_utc = TIMESTAMP '2024-01-01'", "TFFN"},
        {"ts_ms_utc = DATE '2024-01-01'", "TFFN"},
        {"ts_ms_utc = '2024-01-01 00:00:00.001'", "FTFN"},
        {"ts_ms_utc = TIMESTAMP '2024-01-01T12:34:56.789'", "FFTN"},
        /* a literal finer than the column: half a microsecond after midnight */
        {"ts_ms_utc < TIMESTAMP '2024-01-01 00:00:00.0000005'", "TFFN"},
        {"ts_ms_utc > TIMESTAMP '2024-01-01 00:00:00.0000005'", "FTTN"},
        {"ts_ms_utc = TIMESTAMP '2024-01-01 00:00:00.0000005'", "FFFN"},
        {"ts_ms_utc >= TIMESTAMP '2024-01-01 00:00:00.000999999'", "FTTN"},
        {"ts_ms_utc BETWEEN '2024-01-01' AND '2024-01-01 12:00:00'", "TTFN"},
        {"ts_ms_utc < TIMESTAMP '9999-12-31 23:59:59.999'", "TTTN"},
    };
    expect_tris(m, t, millis, NCASES(millis));
    free(t);

    /* nanos, UTC-adjusted: a far-future literal is beyond int64 nanos but
     * still compares (held in a coarser unit) */
    t = new_table(2);
    t->v[T_TS_NS_UTC][0] = pqv_timestamp(INT64_MAX, PQ_UNIT_NANOS, true);
    t->v[T_TS_NS_UTC][1] = pqv_timestamp(SEC_2024_01_01 * 1000000000LL + 1, PQ_UNIT_NANOS, true);
    expect_sel(m, t, "ts_ns_utc < TIMESTAMP '9999-12-31 00:00:00'", "11");
    expect_sel(m, t, "ts_ns_utc > '1000-01-01'", "11");
    expect_sel(m, t, "ts_ns_utc = TIMESTAMP '2024-01-01 00:00:00.000000001'", "01");
    ERR(m, "ts_ns_utc < TIMESTAMP '9999-12-31 00:00:00.000000001'", PRED_E_TYPE, 12,
        "timestamp literal out of range for column ts_ns_utc");
    free(t);

    /* micros, local (not adjusted to UTC): the literal takes the column's frame */
    t = new_table(2);
    t->v[T_TS_US][0] = pqv_timestamp(SEC_2024_01_01 * 1000000LL, PQ_UNIT_MICROS, false);
    t->v[T_TS_US][1] = pqv_timestamp(SEC_2024_01_01 * 1000000LL + 7, PQ_UNIT_MICROS, false);
    expect_sel(m, t, "ts_us = TIMESTAMP '2024-01-01 00:00:00'", "10");
    expect_sel(m, t, "ts_us > TIMESTAMP '2024-01-01 00:00:00.000006999'", "01");
    /* a value in the other frame is not comparable: NULL, never selected */
    t->v[T_TS_US][0] = pqv_timestamp(SEC_2024_01_01 * 1000000LL, PQ_UNIT_MICROS, true);
    expect_tri(m, t, "ts_us = TIMESTAMP '2024-01-01 00:00:00'", "NF");
    free(t);
    pq_file_meta_free(m);
}

Test(predicate, many_rows_across_blocks)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    pred_bound *b = bind_ok(m, "(i64 BETWEEN -100 AND 100 OR s LIKE '%7%') AND i64 IS NOT NULL "
                               "AND NOT i64 IN (3, 5)");
    const uint32_t n = 1000003;
    pqv *iv = malloc(n * sizeof *iv), *sv = malloc(n * sizeof *sv);
    uint8_t *inull = malloc(n), *sel = malloc(n);
    static const char *const strs[] = {"a7", "bb", "c", "777"};
    cr_assert(iv && sv && inull && sel);
    uint32_t want = 0;
    for (uint32_t r = 0; r < n; r++) {
        const int64_t x = (int64_t)(r % 1000) - 500;
        iv[r] = pqv_int(x);
        inull[r] = r % 17 == 0;
        sv[r] = pqv_string(strs[r % 4]);
        const bool s7 = (r % 4) == 0 || (r % 4) == 3;
        want += !inull[r] && (s7 || (x >= -100 && x <= 100)) && x != 3 && x != 5;
    }
    pred_column_vec cols[2];
    cr_assert_eq(pred_bound_leaf(b, 0), F_I64);
    cols[0] = (pred_column_vec){.is_null = inull, .values = iv};
    cols[1] = (pred_column_vec){.is_null = NULL, .values = sv};
    pred_error err;
    cr_assert_eq(pred_eval(b, cols, n, sel, &err), PRED_OK, "%s", err.msg);
    uint32_t got = 0;
    for (uint32_t r = 0; r < n; r++)
        got += sel[r];
    cr_expect_eq(got, want);
    free(iv);
    free(sv);
    free(inull);
    free(sel);
    pred_bound_free(b);
    pq_file_meta_free(m);
}

/* ------------------------------------------------------------------ */
/* statistics                                                         */
/* ------------------------------------------------------------------ */

Test(predicate, may_match_int_ranges)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    region_stats r;
    memset(&r, 0, sizeof r);
    int_stats(&r, F_I32, 10, 20, 0, 100);
    static const may_case ten_to_twenty[] = {
        {"i32 = 5", false},
        {"i32 = 15", true},
        {"i32 = 10", true},
        {"i32 = 20", true},
        {"i32 = 21", false},
        {"i32 > 20", false},
        {"i32 >= 20", true},
        {"i32 < 10", false},
        {"i32 <= 10", true},
        {"25 < i32", false},
        {"i32 <> 15", true},
        {"i32 BETWEEN 21 AND 30", false},
        {"i32 BETWEEN 20 AND 30", true},
        {"i32 NOT BETWEEN 5 AND 25", false},
        {"i32 NOT BETWEEN 5 AND 19", true},
        {"i32 IN (1, 2, 30)", false},
        {"i32 IN (1, 15, 30)", true},
        {"i32 IN (9.5, 20.5)", false},
        {"i32 = NULL", false},
        {"i32 IS NULL", false},
        {"i32 IS NOT NULL", true},
        {"i32 = 5 OR i32 > 20", false},
        {"i32 = 5 OR i32 > 19", true},
        {"i32 = 15 AND i32 = 5", false},
        {"FALSE", false},
        {"TRUE", true},
        {"NOT (i32 >= 10)", false},
        {"NOT (i32 > 10)", true},
        /* a column without statistics (i64) decides nothing */
        {"i64 = 5", true},
        {"i64 = 5 AND i32 = 5", false},
        {"i64 = 5 OR i32 = 5", true},
    };
    expect_mays(m, &r, ten_to_twenty, NCASES(ten_to_twenty));

    /* a single value: <> and NOT IN can prove FALSE everywhere */
    int_stats(&r, F_I32, 15, 15, 0, 100);
    static const may_case single_value[] = {
        {"i32 <> 15", false},
        {"NOT (i32 = 15)", false},
        {"i32 NOT IN (15, 16)", false},
        {"i32 NOT IN (14, 16)", true},
        {"i32 = 15", true},
        /* ... but with nulls, NOT IN with a NULL item is never TRUE anyway */
        {"i32 NOT IN (14, NULL)", false},
    };
    expect_mays(m, &r, single_value, NCASES(single_value));

    /* nulls */
    int_stats(&r, F_I32, 15, 15, 3, 100);
    cr_expect(may(m, &r, "i32 IS NULL"));
    cr_expect_not(may(m, &r, "i32 <> 15"));
    int_stats(&r, F_I32, 0, 0, 100, 100);
    r.s[F_I32].has_min_max = false; /* all null: no bounds */
    static const may_case all_null[] = {
        {"i32 = 0", false},
        {"i32 IS NOT NULL", false},
        {"i32 IS NULL", true},
        {"NOT i32 IS NOT NULL", true},
        {"NOT (i32 = 3)", false}, /* NULL, not TRUE */
    };
    expect_mays(m, &r, all_null, NCASES(all_null));
    /* null count unknown or row count unknown */
    int_stats(&r, F_I32, 10, 20, -1, 100);
    cr_expect(may(m, &r, "i32 IS NULL"));
    int_stats(&r, F_I32, 10, 20, 5, -1);
    cr_expect(may(m, &r, "i32 IS NULL"));
    cr_expect(may(m, &r, "i32 IS NOT NULL"));
    /* an empty region matches nothing */
    int_stats(&r, F_I32, 10, 20, 0, 0);
    cr_expect_not(may(m, &r, "i32 IS NULL OR i32 IS NOT NULL"));
    /* crossed bounds are ignored */
    int_stats(&r, F_I32, 20, 10, 0, 100);
    cr_expect(may(m, &r, "i32 = 5"));
    /* bounds of the wrong kind are ignored */
    int_stats(&r, F_I32, 10, 20, 0, 100);
    r.s[F_I32].min = pqv_string("a");
    r.s[F_I32].max = pqv_string("b");
    cr_expect(may(m, &r, "i32 = 5"));
    /* null count above the row count: not trusted */
    int_stats(&r, F_I32, 10, 20, 200, 100);
    cr_expect(may(m, &r, "i32 IS NULL"));
    cr_expect(may(m, &r, "i32 = 15"));
    pq_file_meta_free(m);
}

static bool no_stats(void *ud, size_t col, pred_col_stats *out)
{
    (void)col;
    (void)out;
    ++*(int *)ud;
    return false;
}

Test(predicate, may_match_unknown_and_floats)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    static const char *const texts[] = {"i32 = 5", "i32 IS NULL", "i32 IS NOT NULL",
                                        "s LIKE 'a%'", "b", "NOT b", "f64 > 1"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        pred_bound *b = bind_ok(m, texts[i]);
        int calls = 0;
        cr_expect(pred_may_match(b, no_stats, &calls), "%s", texts[i]);
        cr_expect_gt(calls, 0);
        cr_expect(pred_may_match(b, NULL, NULL), "%s", texts[i]);
        pred_bound_free(b);
    }
    cr_expect(pred_may_match(NULL, NULL, NULL));

    /* FLOAT bounds never prune (a NaN may be missing from them) */
    region_stats r;
    memset(&r, 0, sizeof r);
    set_stats(&r, F_F64, pqv_double(0), pqv_double(1), 0, 10);
    cr_expect(may(m, &r, "f64 > 5"));
    cr_expect(may(m, &r, "f64 = -3"));
    cr_expect(may(m, &r, "f64 <> 0.5"));
    /* ... but their null counts do */
    cr_expect_not(may(m, &r, "f64 IS NULL"));
    r.s[F_F64].null_count = 10;
    cr_expect_not(may(m, &r, "f64 IS NOT NULL"));
    cr_expect_not(may(m, &r, "f64 = 1"));
    pq_file_meta_free(m);
}

Test(predicate, may_match_strings_and_bools)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    region_stats r;
    memset(&r, 0, sizeof r);
    set_stats(&r, F_S, pqv_string("b"), pqv_string("c"), 0, 10);
    static const may_case b_to_c[] = {
        {"s LIKE 'a%'", false},
        {"s LIKE 'b%'", true},
        {"s LIKE 'bz%x'", true},
        {"s LIKE 'c%'", true},
        {"s LIKE 'ca%'", false},
        {"s LIKE 'd%'", false},
        {"s LIKE '%a'", true},
        {"s LIKE 'a'", false},
        {"s NOT LIKE 'a%'", true},
        {"s = 'a'", false},
        {"s = 'bcd'", true},
        {"s > 'c'", false},
        {"s IN ('a', 'ca', 'd')", false},
    };
    expect_mays(m, &r, b_to_c, NCASES(b_to_c));
    /* prefix pruning with 0xff bytes: no successor exists */
    static const uint8_t ff[] = {0xff, 0xff};
    r.s[F_S].min = pqv_bytes(ff, 1);
    r.s[F_S].max = pqv_bytes(ff, 2);
    cr_expect(may(m, &r, "s LIKE '\xff%'"));
    cr_expect_not(may(m, &r, "s LIKE '\xfe%'"));
    /* a truncated min bound (a lower bound, shorter than the prefix) */
    r.s[F_S].min = pqv_string("ab");
    r.s[F_S].max = pqv_string("b");
    cr_expect(may(m, &r, "s LIKE 'abc%'"));
    cr_expect_not(may(m, &r, "s LIKE 'aa%'"));

    memset(&r, 0, sizeof r);
    set_stats(&r, F_B, pqv_bool(false), pqv_bool(false), 0, 10);
    cr_expect_not(may(m, &r, "b"));
    cr_expect(may(m, &r, "NOT b"));
    cr_expect_not(may(m, &r, "b = TRUE"));
    r.s[F_B].max = pqv_bool(true);
    cr_expect(may(m, &r, "b"));
    r.s[F_B].min = pqv_bool(true);
    cr_expect_not(may(m, &r, "NOT b"));
    pq_file_meta_free(m);
}

/* Bounds from the fixture's own Statistics (written by pyarrow). */
Test(predicate, stats_from_parquet_fixture)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    const pq_row_group *rg = &m->row_groups[0];
    pred_bound *b = bind_ok(m, "i32 = 0 AND s = 'x' AND f64 = 1 AND b");
    cr_assert_eq(pred_bound_ncols(b), 4);
    pred_col_stats st;
    const pq_column_chunk *c = &rg->columns[F_I32];
    cr_assert(c->has_statistics);
    cr_assert(pred_stats_from_parquet(b, 0, &c->statistics, c->num_values, &st));
    cr_assert(st.has_min_max);
    cr_expect_eq(st.min.kind, PQV_INT);
    cr_expect_eq(st.min.v.i, 0); /* i32 = 3 * row, some rows null */
    cr_expect(st.has_null_count);
    cr_expect_gt(st.null_count, 0);
    cr_expect_eq(st.num_values, c->num_values);
    const int64_t max = st.max.v.i;
    cr_expect_eq(max % 3, 0);

    char text[128];
    region_stats r;
    memset(&r, 0, sizeof r);
    r.have[F_I32] = true;
    r.s[F_I32] = st;
    snprintf(text, sizeof text, "i32 > %lld", (long long)max);
    cr_expect_not(may(m, &r, text));
    snprintf(text, sizeof text, "i32 >= %lld", (long long)max);
    cr_expect(may(m, &r, text));
    cr_expect_not(may(m, &r, "i32 < 0"));
    cr_expect(may(m, &r, "i32 IS NULL"));

    /* strings: min_value/max_value, type-defined order (column_orders) */
    c = &rg->columns[F_S];
    cr_assert(pred_stats_from_parquet(b, 1, &c->statistics, c->num_values, &st));
    cr_assert(st.has_min_max);
    cr_expect_eq(st.min.kind, PQV_BYTES);
    cr_expect(st.min.v.bytes.len == 5 && memcmp(st.min.v.bytes.ptr, "s0000", 5) == 0);
    cr_expect(st.max.v.bytes.len == 5 && memcmp(st.max.v.bytes.ptr, "s0096", 5) == 0);
    /* floats decode (pred_may_match ignores their bounds) */
    c = &rg->columns[F_F64];
    cr_expect(pred_stats_from_parquet(b, 2, &c->statistics, c->num_values, &st));
    cr_expect(st.has_min_max);
    cr_expect_not(pred_stats_from_parquet(b, 9, &c->statistics, 1, &st));
    cr_expect_not(pred_stats_from_parquet(b, 0, NULL, 1, &st));

    /* hand-made Statistics: deprecated signed min/max only */
    pq_statistics ps;
    memset(&ps, 0, sizeof ps);
    int32_t lo = -5, hi = 7;
    ps.has_min = ps.has_max = true;
    ps.min = (pq_bytes){(const uint8_t *)&lo, 4};
    ps.max = (pq_bytes){(const uint8_t *)&hi, 4};
    cr_assert(pred_stats_from_parquet(b, 0, &ps, 10, &st));
    cr_expect(st.has_min_max && st.min.v.i == -5 && st.max.v.i == 7);
    cr_expect_not(st.has_null_count);
    /* ... never for bytes: old writers sorted them signed */
    ps.min = (pq_bytes){(const uint8_t *)"a", 1};
    ps.max = (pq_bytes){(const uint8_t *)"\xe9", 1};
    cr_expect_not(pred_stats_from_parquet(b, 1, &ps, 10, &st));
    ps.has_null_count = true;
    ps.null_count = 2;
    cr_expect(pred_stats_from_parquet(b, 1, &ps, 10, &st));
    cr_expect_not(st.has_min_max);
    cr_expect_eq(st.null_count, 2);
    /* crossed bounds and wrong widths are dropped */
    ps.min = (pq_bytes){(const uint8_t *)&hi, 4};
    ps.max = (pq_bytes){(const uint8_t *)&lo, 4};
    cr_expect(pred_stats_from_parquet(b, 0, &ps, 10, &st));
    cr_expect_not(st.has_min_max);
    ps.min = (pq_bytes){(const uint8_t *)&lo, 3};
    cr_expect(pred_stats_from_parquet(b, 0, &ps, 10, &st));
    cr_expect_not(st.has_min_max);
    pred_bound_free(b);
    pq_file_meta_free(m);

    /* without column_orders, min_value/max_value have no defined order */
    pq_leaf leaves[6];
    pq_file_meta mm;
    m = case_meta(leaves, &mm);
    b = bind_ok(m, "Name = 'x' AND id = 1");
    memset(&ps, 0, sizeof ps);
    ps.has_min_value = ps.has_max_value = true;
    ps.min_value = (pq_bytes){(const uint8_t *)"a", 1};
    ps.max_value = (pq_bytes){(const uint8_t *)"b", 1};
    cr_expect_not(pred_stats_from_parquet(b, 0, &ps, 10, &st));
    pred_bound_free(b);
}

/* ------------------------------------------------------------------ */
/* randomized differential test                                       */
/* ------------------------------------------------------------------ */

/* Reference three-valued logic, written from the SQL definitions. */
enum { RF, RT, RN };
#define RNULL INT_MIN /* a NULL literal or value */

static int r_and(int a, int b)
{
    if (a == RF || b == RF)
        return RF;
    return a == RN || b == RN ? RN : RT;
}

static int r_or(int a, int b)
{
    if (a == RT || b == RT)
        return RT;
    return a == RN || b == RN ? RN : RF;
}

static int r_not(int a)
{
    return a == RN ? RN : a == RT ? RF : RT;
}

/* lhs op rhs in half units; either may be RNULL */
static int r_cmp(int lhs, int op, int rhs)
{
    if (lhs == RNULL || rhs == RNULL)
        return RN;
    bool v = false;
    switch (op) {
    case 0: v = lhs == rhs; break;
    case 1: v = lhs != rhs; break;
    case 2: v = lhs < rhs; break;
    case 3: v = lhs <= rhs; break;
    case 4: v = lhs > rhs; break;
    case 5: v = lhs >= rhs; break;
    }
    return v ? RT : RF;
}

typedef struct {
    unsigned state;
    char buf[8192];
    size_t n;
} gen;

static unsigned rnd(gen *g, unsigned k)
{
    g->state = g->state * 1103515245u + 12345u;
    return (g->state >> 8) % k;
}

static void put(gen *g, const char *s)
{
    const size_t l = strlen(s);
    cr_assert_lt(g->n + l, sizeof g->buf);
    memcpy(g->buf + g->n, s, l);
    g->n += l;
    g->buf[g->n] = 0;
}

static const char *kw(gen *g, const char *upper)
{
    static char tmp[4][16];
    static int k;
    char *t = tmp[k++ & 3];
    const unsigned mode = rnd(g, 3);
    size_t i = 0;
    for (; upper[i]; i++)
        t[i] = mode == 0 ? upper[i] : mode == 1 ? (char)(upper[i] | 0x20)
               : (i & 1)  ? (char)(upper[i] | 0x20)
                          : upper[i];
    t[i] = 0;
    return t;
}

/* A literal in half units (or RNULL), written as integer, decimal or NULL. */
static int lit(gen *g)
{
    if (rnd(g, 10) == 0) {
        put(g, kw(g, "NULL"));
        return RNULL;
    }
    const int h = (int)rnd(g, 19) - 9;
    char s[32];
    if (h % 2 == 0)
        snprintf(s, sizeof s, rnd(g, 4) ? "%d" : "%d.0", h / 2);
    else
        snprintf(s, sizeof s, "%s%d.5", h < 0 ? "-" : "", abs(h) / 2);
    put(g, s);
    return h;
}

/* Emit a random predicate; evaluate it for every row (a, b) into out. */
#define NV 8
static const int vals[NV] = {RNULL, -3, -2, -1, 0, 1, 2, 3};

/* Column col (0: a, 1: b) of grid row r = a * NV + b. */
static int grid_value(int col, int r)
{
    return col ? vals[r % NV] : vals[r / NV];
}

/* ... in half units, as lit() writes literals */
static int grid_half(int col, int r)
{
    const int v = grid_value(col, r);
    return v == RNULL ? RNULL : 2 * v;
}

static void gen_expr(gen *g, int depth, int *out /* [NV * NV] */)
{
    const unsigned k = depth <= 0 ? rnd(g, 5) : rnd(g, 9);
    static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">=", "!="};
    static const int op_code[] = {0, 1, 2, 3, 4, 5, 1};
    const int col = (int)rnd(g, 2);
    const char *cname = col ? (rnd(g, 2) ? "i64" : "I64") : "i32";
    switch (k) {
    case 0: { /* comparison, either side */
        const unsigned o = rnd(g, 7);
        const bool flip = rnd(g, 3) == 0;
        int l;
        if (flip) {
            l = lit(g);
            put(g, " ");
            put(g, ops[o]);
            put(g, " ");
            put(g, cname);
        } else {
            put(g, cname);
            put(g, " ");
            put(g, ops[o]);
            put(g, " ");
            l = lit(g);
        }
        for (int r = 0; r < NV * NV; r++) {
            const int hv = grid_half(col, r);
            out[r] = flip ? r_cmp(l, op_code[o], hv) : r_cmp(hv, op_code[o], l);
        }
        return;
    }
    case 1: { /* BETWEEN */
        const bool neg = rnd(g, 2);
        put(g, cname);
        put(g, neg ? " NOT " : " ");
        put(g, kw(g, "BETWEEN"));
        put(g, " ");
        const int lo = lit(g);
        put(g, " AND ");
        const int hi = lit(g);
        for (int r = 0; r < NV * NV; r++) {
            const int hv = grid_half(col, r);
            const int v = r_and(r_cmp(hv, 5, lo), r_cmp(hv, 3, hi));
            out[r] = neg ? r_not(v) : v;
        }
        return;
    }
    case 2: { /* IN */
        const bool neg = rnd(g, 2);
        int items[5];
        const int n = 1 + (int)rnd(g, 5);
        put(g, cname);
        put(g, neg ? " NOT IN (" : " IN (");
        for (int i = 0; i < n; i++) {
            if (i)
                put(g, ", ");
            items[i] = lit(g);
        }
        put(g, ")");
        for (int r = 0; r < NV * NV; r++) {
            const int hv = grid_half(col, r);
            int v = RF;
            for (int i = 0; i < n; i++)
                v = r_or(v, r_cmp(hv, 0, items[i]));
            out[r] = neg ? r_not(v) : v;
        }
        return;
    }
    case 3: { /* IS [NOT] NULL */
        const bool neg = rnd(g, 2);
        put(g, cname);
        put(g, neg ? " IS NOT NULL" : " IS NULL");
        for (int r = 0; r < NV * NV; r++) {
            const bool isnull = grid_value(col, r) == RNULL;
            out[r] = isnull != neg ? RT : RF;
        }
        return;
    }
    case 4: { /* constant */
        const unsigned c = rnd(g, 3);
        put(g, c == 0 ? "TRUE" : c == 1 ? "FALSE" : "NULL");
        for (int i = 0; i < NV * NV; i++)
            out[i] = c == 0 ? RT : c == 1 ? RF : RN;
        return;
    }
    case 5:
    case 6: { /* chains of AND / OR */
        const bool is_and = k == 5;
        const int n = 2 + (int)rnd(g, 3);
        int *tmp = malloc(sizeof(int) * NV * NV);
        put(g, "(");
        for (int i = 0; i < n; i++) {
            if (i) {
                put(g, " ");
                put(g, kw(g, is_and ? "AND" : "OR"));
                put(g, " ");
            }
            gen_expr(g, depth - 1, i ? tmp : out);
            if (i)
                for (int j = 0; j < NV * NV; j++)
                    out[j] = is_and ? r_and(out[j], tmp[j]) : r_or(out[j], tmp[j]);
        }
        put(g, ")");
        free(tmp);
        return;
    }
    default: { /* NOT */
        put(g, kw(g, "NOT"));
        put(g, " (");
        gen_expr(g, depth - 1, out);
        put(g, ")");
        for (int i = 0; i < NV * NV; i++)
            out[i] = r_not(out[i]);
        return;
    }
    }
}

/* Exact statistics of rows [r0, r1) of the grid for one column. */
static void grid_stats(int col, const int *rows, int nrows, pred_col_stats *s)
{
    memset(s, 0, sizeof *s);
    s->has_null_count = true;
    s->num_values = nrows;
    int lo = INT_MAX, hi = INT_MIN;
    for (int i = 0; i < nrows; i++) {
        const int v = grid_value(col, rows[i]);
        if (v == RNULL) {
            s->null_count++;
            continue;
        }
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (lo <= hi) {
        s->has_min_max = true;
        s->min = pqv_int(lo);
        s->max = pqv_int(hi);
    }
}

typedef struct {
    const pred_bound *b;
    const int *rows;
    int nrows;
    unsigned drop; /* bit per column: report no statistics */
} grid_region;

static bool grid_cb(void *ud, size_t col, pred_col_stats *out)
{
    const grid_region *g = ud;
    const uint32_t leaf = pred_bound_leaf(g->b, col);
    const int c = leaf == F_I64;
    if (g->drop & (1u << c))
        return false;
    grid_stats(c, g->rows, g->nrows, out);
    return true;
}

Test(predicate, randomized_differential)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    pqv av[NV * NV], bv[NV * NV];
    uint8_t an[NV * NV], bn[NV * NV];
    for (int a = 0; a < NV; a++)
        for (int b = 0; b < NV; b++) {
            const int r = a * NV + b;
            an[r] = vals[a] == RNULL;
            bn[r] = vals[b] == RNULL;
            /* values of NULL rows are garbage on purpose: never read */
            av[r] = an[r] ? (pqv){.kind = PQV_BYTES} : pqv_int(vals[a]);
            bv[r] = bn[r] ? (pqv){.kind = (pqv_kind)99} : pqv_int(vals[b]);
        }
    gen g = {.state = 12345};
    int want[NV * NV];
    uint8_t sel[NV * NV];
    int pruned = 0, regions = 0;
    for (int iter = 0; iter < 3000; iter++) {
        g.n = 0;
        g.buf[0] = 0;
        gen_expr(&g, 1 + (int)rnd(&g, 4), want);
        pred_bound *b = bind_ok(m, g.buf);
        pred_column_vec cols[2];
        for (size_t i = 0; i < pred_bound_ncols(b); i++) {
            const bool is_b = pred_bound_leaf(b, i) == F_I64;
            cols[i].values = is_b ? bv : av;
            cols[i].is_null = is_b ? bn : an;
        }
        pred_error err;
        cr_assert_eq(pred_eval(b, cols, NV * NV, sel, &err), PRED_OK, "%s", err.msg);
        for (int r = 0; r < NV * NV; r++)
            cr_assert_eq(sel[r], want[r] == RT, "'%s' row a=%d b=%d: got %d, reference %d", g.buf,
                         vals[r / NV], vals[r % NV], sel[r], want[r]);
        /* pruning soundness on regions: runs of rows, some without stats */
        int rows[NV * NV];
        for (int trial = 0; trial < 6; trial++) {
            const int start = (int)rnd(&g, NV * NV), len = 1 + (int)rnd(&g, 16);
            int n = 0;
            bool any = false;
            for (int r = start; r < start + len && r < NV * NV; r++) {
                rows[n++] = r;
                any |= want[r] == RT;
            }
            const unsigned drop = rnd(&g, 4) == 0 ? 1 + rnd(&g, 3) : 0;
            grid_region gr = {.b = b, .rows = rows, .nrows = n, .drop = drop};
            const bool may_match = pred_may_match(b, grid_cb, &gr);
            regions++;
            if (any)
                cr_assert(may_match, "'%s' pruned rows %d..%d that match", g.buf, start,
                          start + n - 1);
            else
                pruned += !may_match;
        }
        pred_bound_free(b);
    }
    /* the pruning is not vacuous */
    cr_expect_gt(pruned, regions / 10, "pruned %d of %d regions", pruned, regions);
    pq_file_meta_free(m);
}

/* Partition columns (pred_bind_constants): conditions on them are decided
 * when binding, the tree simplified, and only the Parquet columns still
 * needed stay bound. */
static pred_bound *bind_with(const pq_file_meta *m, const char *text, const pred_constant *k, size_t nk)
{
    pred_expr *e = parse_ok(text);
    pred_bound *b = NULL;
    pred_error err;
    cr_assert_eq(pred_bind_constants(e, m, k, nk, &b, &err), PRED_OK, "'%s': %s", text, err.msg);
    pred_free(e);
    return b;
}

static pred_truth truth_with(const pq_file_meta *m, const char *text, const pred_constant *k, size_t nk)
{
    pred_bound *b = bind_with(m, text, k, nk);
    pred_truth t = pred_bound_truth(b);
    if (t != PRED_TRUTH_VARIES)
        cr_expect_eq(pred_bound_ncols(b), 0, "'%s': a decided predicate reads no column", text);
    pred_bound_free(b);
    return t;
}

Test(predicate, constants_decide_conditions_at_bind_time)
{
    pq_file_meta *m = load_meta("v1_plain_none_index");
    const pqv_type str = {.kind = PQV_BYTES, .physical = PQ_BYTE_ARRAY};
    const pqv_type i64 = {.kind = PQV_INT, .physical = PQ_INT64, .int_bits = 64};
    const pqv_type date = {.kind = PQV_DATE, .physical = PQ_INT32};
    pred_constant k[] = {
        {.name = "region", .type = str, .value = pqv_bytes((const uint8_t *)"EU", 2)},
        {.name = "year", .type = i64, .value = pqv_int(2024)},
        {.name = "nothing", .type = str, .is_null = true},
        {.name = "day", .type = date, .value = {.kind = PQV_DATE, .v.i = 19723}}, /* 2024-01-01 */
    };
    const size_t nk = sizeof k / sizeof k[0];
    cr_expect_eq(truth_with(m, "region = 'EU'", k, nk), PRED_TRUTH_TRUE);
    cr_expect_eq(truth_with(m, "Region <> 'EU'", k, nk), PRED_TRUTH_FALSE); /* case-insensitive name */
    cr_expect_eq(truth_with(m, "year BETWEEN 2020 AND 2025 AND region IN ('US', 'EU')", k, nk), PRED_TRUTH_TRUE);
    cr_expect_eq(truth_with(m, "nothing = 'x'", k, nk), PRED_TRUTH_NULL);
    cr_expect_eq(truth_with(m, "nothing IS NULL AND day = DATE '2024-01-01'", k, nk), PRED_TRUTH_TRUE);
    cr_expect_eq(truth_with(m, "region LIKE 'E%' OR i64 > 3", k, nk), PRED_TRUTH_TRUE);
    cr_expect_eq(truth_with(m, "year < 2000 AND i64 > 3", k, nk), PRED_TRUTH_FALSE);
    cr_expect_eq(truth_with(m, "NOT (year = 2024)", k, nk), PRED_TRUTH_FALSE);
    cr_expect_eq(truth_with(m, "region = 'EU' AND nothing = 'x'", k, nk), PRED_TRUTH_NULL);
    /* What is left reads only Parquet columns, and selects as without the constants. */
    pred_bound *b = bind_with(m, "(region = 'EU' OR s = 'y') AND i64 > 3 AND year = 2024", k, nk);
    cr_expect_eq(pred_bound_truth(b), PRED_TRUTH_VARIES);
    cr_assert_eq(pred_bound_ncols(b), 1, "s was decided away with the OR: only i64 stays");
    cr_expect_eq(pred_bound_leaf(b, 0), F_I64);
    table *t = new_table(4);
    const int64_t iv[] = {1, 5, INT64_MIN, 9};
    set_ints(t, F_I64, iv);
    pred_column_vec col = {.values = t->v[F_I64], .is_null = t->null[F_I64]};
    uint8_t sel[4];
    pred_error err;
    cr_assert_eq(pred_eval(b, &col, 4, sel, &err), PRED_OK, "%s", err.msg);
    cr_expect(!sel[0] && sel[1] && !sel[2] && sel[3]);
    pred_bound_free(b);
    /* A constant wins over a leaf of the same name; without constants the
     * names are leaves as before. */
    pred_constant as_leaf[] = {{.name = "i64", .type = i64, .value = pqv_int(7)}};
    cr_expect_eq(truth_with(m, "i64 = 7", as_leaf, 1), PRED_TRUTH_TRUE);
    b = bind_ok(m, "i64 = 7");
    cr_expect_eq(pred_bound_truth(b), PRED_TRUTH_VARIES);
    pred_bound_free(b);
    /* Type errors on constants are reported like on columns. */
    pred_expr *e = parse_ok("year = 'abc'");
    pred_bound *bad = NULL;
    cr_expect_eq(pred_bind_constants(e, m, k, nk, &bad, &err), PRED_E_TYPE, "%s", err.msg);
    cr_expect_null(bad);
    pred_free(e);
    free(t);
    pq_file_meta_free(m);
}
