/* Fuzz the predicate language: the input is predicate text. It is parsed,
 * bound to a fixed schema holding every value kind (plus a repeated column,
 * a nested one and two names differing only in case), evaluated on a small
 * table with NULLs, NaN and edge values, and checked:
 *   - errors carry a status, a message and a position inside the text;
 *   - a row is never selected by both the text and NOT (text);
 *   - exact statistics of a region holding one selected row, or of the whole
 *     table, never let pred_may_match prune it (nor do missing statistics). */
#include "predicate.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

enum {
    C_I,   /* INT64 */
    C_U,   /* UINT_32 */
    C_D,   /* DECIMAL(9,2) on INT32 */
    C_F,   /* DOUBLE */
    C_S,   /* UTF8 */
    C_B,   /* BOOLEAN */
    C_DT,  /* DATE */
    C_TS,  /* TIMESTAMP_MILLIS (UTC) */
    C_TN,  /* TIMESTAMP nanos, local */
    C_T,   /* TIME_MILLIS */
    C_R,   /* repeated */
    C_AB,  /* "Ab" */
    C_AB2, /* "aB" */
    C_XY,  /* "x.y", optional in an optional struct */
    NCOLS
};

#define NROWS 12

static pq_leaf leaves[NCOLS];
static pq_file_meta meta;
static uint8_t orders[NCOLS];
static pqv vals[NCOLS][NROWS];
static uint8_t nulls[NCOLS][NROWS];

static void leaf(int i, const char *path, pq_physical_type t, int32_t ct)
{
    pq_leaf *l = &leaves[i];
    memset(l, 0, sizeof *l);
    l->path = (char *)path;
    l->type = t;
    l->type_length = -1;
    l->converted_type = ct;
    l->scale = l->precision = -1;
    l->repetition = PQ_OPTIONAL;
    l->max_def = 1;
    l->depth = 1;
}

static void setup(void)
{
    static const struct {
        const char *path;
        pq_physical_type type;
        int32_t converted;
    } cols[NCOLS] = {
        [C_I] = {"i", PQ_INT64, PQ_CT_NONE},
        [C_U] = {"u", PQ_INT32, PQ_CT_UINT_32},
        [C_D] = {"d", PQ_INT32, PQ_CT_DECIMAL},
        [C_F] = {"f", PQ_DOUBLE, PQ_CT_NONE},
        [C_S] = {"s", PQ_BYTE_ARRAY, PQ_CT_UTF8},
        [C_B] = {"b", PQ_BOOLEAN, PQ_CT_NONE},
        [C_DT] = {"dt", PQ_INT32, PQ_CT_DATE},
        [C_TS] = {"ts", PQ_INT64, PQ_CT_TIMESTAMP_MILLIS},
        [C_TN] = {"tn", PQ_INT64, PQ_CT_NONE},
        [C_T] = {"t", PQ_INT32, PQ_CT_TIME_MILLIS},
        [C_R] = {"r.list.element", PQ_INT32, PQ_CT_NONE},
        [C_AB] = {"Ab", PQ_INT32, PQ_CT_NONE},
        [C_AB2] = {"aB", PQ_INT32, PQ_CT_NONE},
        [C_XY] = {"x.y", PQ_INT32, PQ_CT_NONE},
    };
    for (int i = 0; i < NCOLS; i++)
        leaf(i, cols[i].path, cols[i].type, cols[i].converted);
    /* what the plain optional leaf above does not say */
    leaves[C_D].scale = 2;
    leaves[C_D].precision = 9;
    leaves[C_TN].logical.kind = PQ_LT_TIMESTAMP;
    leaves[C_TN].logical.unit = PQ_UNIT_NANOS;
    leaves[C_TN].logical.adjusted_to_utc = false;
    leaves[C_R].max_rep = 1;
    leaves[C_R].max_def = 3;
    leaves[C_XY].max_def = 2;
    leaves[C_XY].depth = 2;
    for (int i = 0; i < NCOLS; i++)
        orders[i] = PQ_ORDER_TYPE_DEFINED;
    meta.leaves = leaves;
    meta.n_leaves = NCOLS;
    meta.column_orders = orders;
    meta.n_column_orders = NCOLS;

    static const int64_t iv[NROWS] = {0, 1, -1, 5, 100, INT64_MAX, INT64_MIN, 42, 7, 3, 2, 0};
    static const double fv[NROWS] = {0.0,   -0.0, 1.5, NAN, INFINITY, -INFINITY,
                                     1e300, 0.1,  2,   3,   -7,       5};
    static const char *const sv[NROWS] = {"", "a", "abc", "b%", "x_y", "\xc3\xa9t\xc3\xa9",
                                          "zz", "ab", "abab", "A", "s0001", "it's"};
    for (int r = 0; r < NROWS; r++) {
        const int64_t x = iv[r];
        vals[C_I][r] = pqv_int(x);
        vals[C_U][r] = pqv_uint((uint64_t)(uint32_t)x);
        vals[C_D][r] = pqv_decimal(x % 100000, 2);
        vals[C_F][r] = pqv_double(fv[r]);
        vals[C_S][r] = pqv_string(sv[r]);
        vals[C_B][r] = pqv_bool(r & 1);
        vals[C_DT][r] = pqv_date((int32_t)(19723 + r * 40 - 200));
        vals[C_TS][r] =
            pqv_timestamp(1704067200000LL + (int64_t)r * 1000 - 3000, PQ_UNIT_MILLIS, true);
        vals[C_TN][r] = pqv_timestamp(1704067200000000000LL + x % 1000000, PQ_UNIT_NANOS, false);
        vals[C_T][r] = pqv_time(r * 1000, PQ_UNIT_MILLIS, true);
        vals[C_R][r] = pqv_int(r);
        vals[C_AB][r] = pqv_int(r);
        vals[C_AB2][r] = pqv_int(-r);
        vals[C_XY][r] = pqv_int(r % 3);
        for (int c = 0; c < NCOLS; c++)
            nulls[c][r] = (uint8_t)(((r + c) % 5) == 4);
    }
}

static void check_error(const pred_error *err, pred_status st, size_t len)
{
    check(st != PRED_OK && err->code == (int)st);
    check(err->msg[0] != 0 && memchr(err->msg, 0, sizeof err->msg) != NULL);
    check(err->offset <= len || st == PRED_E_NOMEM);
}

typedef struct {
    const pred_bound *b;
    int r0, r1;    /* rows [r0, r1) */
    unsigned mode; /* 0 exact, 1 no min/max, 2 no statistics at all */
} region;

static bool region_stats(void *ud, size_t col, pred_col_stats *out)
{
    const region *g = ud;
    const uint32_t c = pred_bound_leaf(g->b, col);
    check(c < NCOLS);
    if (g->mode == 2)
        return false;
    memset(out, 0, sizeof *out);
    out->num_values = g->r1 - g->r0;
    out->has_null_count = true;
    for (int r = g->r0; r < g->r1; r++) {
        if (nulls[c][r]) {
            out->null_count++;
            continue;
        }
        if (g->mode == 1)
            continue;
        const pqv *v = &vals[c][r];
        if (!out->has_min_max) {
            out->has_min_max = true;
            out->min = out->max = *v;
            continue;
        }
        if (pqv_compare(v, &out->min) == PQV_LT)
            out->min = *v;
        if (pqv_compare(v, &out->max) == PQV_GT)
            out->max = *v;
    }
    return true;
}

/* Parse and bind; NULL when the text is rejected (after checking the error). */
static pred_bound *compile(const char *text, size_t len)
{
    pred_expr *e = NULL;
    pred_error err;
    memset(&err, 0, sizeof err);
    pred_status st = pred_parse(text, len, &e, &err);
    if (st != PRED_OK) {
        check(e == NULL);
        check_error(&err, st, len);
        return NULL;
    }
    for (size_t i = 0; i < pred_column_count(e); i++)
        check(pred_column_name(e, i) != NULL);
    check(pred_column_name(e, pred_column_count(e)) == NULL);
    pred_bound *b = NULL;
    memset(&err, 0, sizeof err);
    st = pred_bind(e, &meta, &b, &err);
    pred_free(e);
    if (st != PRED_OK) {
        check(b == NULL);
        check_error(&err, st, len);
        return NULL;
    }
    return b;
}

static bool run(const pred_bound *b, uint8_t *sel)
{
    pred_column_vec cols[NCOLS];
    const size_t n = pred_bound_ncols(b);
    check(n <= NCOLS);
    for (size_t i = 0; i < n; i++) {
        const uint32_t c = pred_bound_leaf(b, i);
        check(c < NCOLS && c != C_R);
        cols[i].values = vals[c];
        cols[i].is_null = nulls[c];
    }
    pred_error err;
    const pred_status st = pred_eval(b, cols, NROWS, sel, &err);
    if (st == PRED_E_NOMEM)
        return false;
    check(st == PRED_OK);
    for (int r = 0; r < NROWS; r++)
        check(sel[r] <= 1);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setup();
        ready = true;
    }
    const char *text = (const char *)data;
    pred_bound *b = compile(text, size);
    if (!b)
        return 0;
    uint8_t sel[NROWS];
    if (!run(b, sel)) {
        pred_bound_free(b);
        return 0;
    }
    bool any = false;
    for (int r = 0; r < NROWS; r++)
        any |= sel[r];

    /* statistics may never prune a region holding a selected row */
    for (unsigned mode = 0; mode < 3; mode++) {
        region whole = {.b = b, .r0 = 0, .r1 = NROWS, .mode = mode};
        check(!any || pred_may_match(b, region_stats, &whole));
        for (int r = 0; r < NROWS; r++) {
            region one = {.b = b, .r0 = r, .r1 = r + 1, .mode = mode};
            check(!sel[r] || pred_may_match(b, region_stats, &one));
        }
    }
    check(!any || pred_may_match(b, NULL, NULL));

    /* Columns i and s bound to row r's values as constants (how a Delta
     * table's partition columns are bound): row r is selected exactly as
     * before, and a predicate decided as a whole agrees with the rows. */
    {
        const int r = (int)(size % NROWS);
        const pqv_type *ti = NULL, *ts = NULL;
        for (size_t i = 0; i < pred_bound_ncols(b); i++) {
            if (pred_bound_leaf(b, i) == C_I)
                ti = pred_bound_type(b, i);
            if (pred_bound_leaf(b, i) == C_S)
                ts = pred_bound_type(b, i);
        }
        pred_constant k[2];
        size_t nk = 0;
        if (ti)
            k[nk++] = (pred_constant){.name = "i", .type = *ti, .is_null = nulls[C_I][r], .value = vals[C_I][r]};
        if (ts)
            k[nk++] = (pred_constant){.name = "s", .type = *ts, .is_null = nulls[C_S][r], .value = vals[C_S][r]};
        pred_expr *e = NULL;
        pred_bound *kb = NULL;
        pred_error err;
        if (nk && pred_parse(text, size, &e, &err) == PRED_OK &&
            pred_bind_constants(e, &meta, k, nk, &kb, &err) == PRED_OK) {
            for (size_t i = 0; i < pred_bound_ncols(kb); i++)
                check(pred_bound_leaf(kb, i) != C_I && pred_bound_leaf(kb, i) != C_S);
            uint8_t ksel[NROWS];
            const pred_truth t = pred_bound_truth(kb);
            if (t != PRED_TRUTH_VARIES)
                check(sel[r] == (t == PRED_TRUTH_TRUE));
            else if (run(kb, ksel))
                check(ksel[r] == sel[r]);
        }
        pred_bound_free(kb);
        pred_free(e);
    }

    /* NOT (text) never selects a row the text selects */
    if (size + 6 <= PRED_MAX_TEXT) {
        char *neg = malloc(size + 7);
        if (neg) {
            memcpy(neg, "NOT (", 5);
            memcpy(neg + 5, data, size);
            neg[size + 5] = ')';
            pred_bound *nb = compile(neg, size + 6);
            uint8_t nsel[NROWS];
            if (nb && run(nb, nsel)) {
                for (int r = 0; r < NROWS; r++)
                    check(!(sel[r] && nsel[r]));
            }
            pred_bound_free(nb);
            free(neg);
        }
    }
    pred_bound_free(b);
    return 0;
}
