/* Evaluating a bound predicate over decoded rows, in blocks, with SQL
 * three-valued logic; see predicate.h. */
#include "predicate_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 1024u

typedef struct {
    const pred_bound *b;
    const pred_column_vec *cols;
    uint8_t *scratch; /* height * BLOCK */
    uint32_t r0, n;   /* current block */
} ectx;

/* Tri-state of order o for op, indexed by o + 1 (PQV_INCOMPARABLE -> 3: NULL). */
static const uint8_t cmp_table[6][4] = {
    [OP_EQ] = {TF, TT, TF, TN}, [OP_NE] = {TT, TF, TT, TN}, [OP_LT] = {TT, TF, TF, TN},
    [OP_LE] = {TT, TT, TF, TN}, [OP_GT] = {TF, TF, TT, TN}, [OP_GE] = {TF, TT, TT, TN},
};

static int order_index(pqv_order o)
{
    return o == PQV_INCOMPARABLE ? 3 : (int)o + 1;
}

static int float_order(double a, double b)
{
    /* pqv_compare's total order: NaN == NaN, NaN above everything, -0 == +0 */
    const bool na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na && nb ? 1 : na ? 2 : 0;
    return a < b ? 0 : a > b ? 2 : 1;
}

static void eval_cmp(const ectx *x, const bnode *nd, uint8_t *out)
{
    const pred_column_vec *c = &x->cols[nd->col];
    const pqv *lit = &x->b->vals[nd->val];
    const uint8_t *tab = cmp_table[nd->op];
    const pqv *v = c->values + x->r0;
    const uint8_t *isn = c->is_null ? c->is_null + x->r0 : NULL;
    const uint32_t n = x->n;
    /* values of NULL rows are never read: callers may leave them unset */
    if (lit->kind == PQV_INT) {
        const int64_t li = lit->v.i;
        for (uint32_t i = 0; i < n; i++) {
            if (isn && isn[i])
                out[i] = TN;
            else if (v[i].kind == PQV_INT)
                out[i] = tab[(v[i].v.i > li) - (v[i].v.i < li) + 1];
            else
                out[i] = tab[order_index(pqv_compare(&v[i], lit))];
        }
    } else if (lit->kind == PQV_FLOAT) {
        const double lf = lit->v.f;
        for (uint32_t i = 0; i < n; i++) {
            if (isn && isn[i])
                out[i] = TN;
            else
                out[i] = v[i].kind == PQV_FLOAT ? tab[float_order(v[i].v.f, lf)] : tab[3];
        }
    } else {
        for (uint32_t i = 0; i < n; i++)
            out[i] = isn && isn[i] ? TN : tab[order_index(pqv_compare(&v[i], lit))];
    }
}

uint32_t pred_lower_bound(const pqv *vals, uint32_t n, const pqv *v, bool *eq,
                          bool *incomparable)
{
    uint32_t a = 0, z = n;
    *incomparable = false;
    while (a < z) {
        const uint32_t mid = a + (z - a) / 2;
        const pqv_order o = pqv_compare(&vals[mid], v);
        if (o == PQV_INCOMPARABLE) {
            *incomparable = true;
            return 0;
        }
        if (o == PQV_LT)
            a = mid + 1;
        else
            z = mid;
    }
    *eq = a < n && pqv_compare(&vals[a], v) == PQV_EQ;
    return a;
}

static void eval_in(const ectx *x, const bnode *nd, uint8_t *out)
{
    const pred_column_vec *c = &x->cols[nd->col];
    const pqv *vals = &x->b->vals[nd->val];
    const uint8_t miss = nd->in_null ? TN : TF;
    for (uint32_t i = 0; i < x->n; i++) {
        const uint32_t r = x->r0 + i;
        if (c->is_null && c->is_null[r]) {
            out[i] = TN;
            continue;
        }
        if (nd->nval == 0) {
            out[i] = miss; /* only NULL items: values may be absent */
            continue;
        }
        bool eq = false, inc;
        pred_lower_bound(vals, nd->nval, &c->values[r], &eq, &inc);
        out[i] = inc ? TN : eq ? TT : miss;
    }
}

/* s matches the %-separated segments: prefix, suffix, and the middle ones in
 * order (leftmost-first placement is optimal with only % wildcards). */
static bool like_match(const uint8_t *s, uint32_t n, const pqv *seg, uint32_t nseg)
{
    const uint32_t fl = seg[0].v.bytes.len;
    if (nseg == 1)
        return n == fl && (fl == 0 || memcmp(s, seg[0].v.bytes.ptr, fl) == 0);
    const uint32_t ll = seg[nseg - 1].v.bytes.len;
    if ((uint64_t)fl + ll > n)
        return false;
    if (fl && memcmp(s, seg[0].v.bytes.ptr, fl) != 0)
        return false;
    if (ll && memcmp(s + n - ll, seg[nseg - 1].v.bytes.ptr, ll) != 0)
        return false;
    size_t p = fl;
    const size_t end = n - ll;
    for (uint32_t k = 1; k + 1 < nseg; k++) {
        const uint32_t len = seg[k].v.bytes.len;
        if (len == 0)
            continue;
        if (end - p < len)
            return false;
        const uint8_t *f = memmem(s + p, end - p, seg[k].v.bytes.ptr, len);
        if (!f)
            return false;
        p = (size_t)(f - s) + len;
    }
    return true;
}

static void eval_like(const ectx *x, const bnode *nd, uint8_t *out)
{
    const pred_column_vec *c = &x->cols[nd->col];
    const pqv *seg = &x->b->vals[nd->val];
    for (uint32_t i = 0; i < x->n; i++) {
        const uint32_t r = x->r0 + i;
        const pqv *v = &c->values[r];
        if ((c->is_null && c->is_null[r]) || v->kind != PQV_BYTES)
            out[i] = TN;
        else
            out[i] = like_match(v->v.bytes.ptr, v->v.bytes.len, seg, nd->nval) ? TT : TF;
    }
}

static bool all_equal(const uint8_t *out, uint32_t n, uint8_t t)
{
    for (uint32_t i = 0; i < n; i++)
        if (out[i] != t)
            return false;
    return true;
}

/* Node ni over the current block into out; deeper nodes use scratch
 * buffers from `level` on. */
static void eval_node(const ectx *x, uint32_t ni, uint8_t *out, uint32_t level)
{
    const bnode *nd = &x->b->nodes[ni];
    const pred_column_vec *c = nd->col != NONE ? &x->cols[nd->col] : NULL;
    const uint32_t n = x->n;
    switch ((bkind)nd->kind) {
    case B_AND:
    case B_OR: {
        const bool is_and = nd->kind == B_AND;
        eval_node(x, nd->child, out, level);
        uint8_t *tmp = x->scratch + (size_t)level * BLOCK;
        for (uint32_t ci = x->b->nodes[nd->child].next; ci != NONE; ci = x->b->nodes[ci].next) {
            if (all_equal(out, n, is_and ? TF : TT))
                break; /* decided for every row of the block */
            eval_node(x, ci, tmp, level + 1);
            if (is_and)
                for (uint32_t i = 0; i < n; i++)
                    out[i] = out[i] < tmp[i] ? out[i] : tmp[i];
            else
                for (uint32_t i = 0; i < n; i++)
                    out[i] = out[i] > tmp[i] ? out[i] : tmp[i];
        }
        return;
    }
    case B_NOT:
        eval_node(x, nd->child, out, level);
        for (uint32_t i = 0; i < n; i++)
            out[i] = (uint8_t)(TT - out[i]);
        return;
    case B_CMP: eval_cmp(x, nd, out); return;
    case B_IN: eval_in(x, nd, out); return;
    case B_LIKE: eval_like(x, nd, out); return;
    case B_ISNULL: {
        const uint8_t yes = nd->op ? TF : TT, no = nd->op ? TT : TF;
        for (uint32_t i = 0; i < n; i++)
            out[i] = c->is_null && c->is_null[x->r0 + i] ? yes : no;
        return;
    }
    case B_BOOLCOL:
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t r = x->r0 + i;
            const pqv *v = &c->values[r];
            out[i] = (c->is_null && c->is_null[r]) || v->kind != PQV_BOOL ? TN
                     : v->v.b                                               ? TT
                                                                            : TF;
        }
        return;
    case B_CONST: memset(out, nd->op, n); return;
    }
}

bool pred_eval_leaf_row(const pred_bound *b, uint32_t ni, const pqv *v, uint8_t *out)
{
    const bnode *nd = &b->nodes[ni];
    pred_column_vec *cols = calloc(b->ncols ? b->ncols : 1, sizeof *cols);
    if (!cols || nd->col >= b->ncols) {
        free(cols);
        return false;
    }
    const uint8_t null_flag = v == NULL;
    const pqv zero = {0};
    cols[nd->col].is_null = &null_flag;
    cols[nd->col].values = v ? v : &zero;
    ectx x = {.b = b, .cols = cols, .r0 = 0, .n = 1};
    eval_node(&x, ni, out, 0);
    free(cols);
    return true;
}

pred_status pred_eval(const pred_bound *b, const pred_column_vec *cols, uint32_t nrows,
                      uint8_t *selected, pred_error *err)
{
    if (!b || (nrows && !selected) || (b->ncols && !cols))
        return sv_fail(err, PRED_E_INVALID, 0, "NULL argument");
    if (nrows == 0)
        return PRED_OK;
    for (uint32_t i = 0; i < b->ncols; i++)
        if (b->cols[i].needs_values && !cols[i].values)
            return sv_fail(err, PRED_E_INVALID, 0, "no values given for column %u (%s)", i,
                           b->cols[i].path);
    /* one buffer for the block result plus one per tree level */
    uint8_t *buf = malloc((size_t)(b->height + 1) * BLOCK);
    if (!buf)
        return pred_nomem(err);
    ectx x = {.b = b, .cols = cols, .scratch = buf + BLOCK};
    for (uint32_t r0 = 0; r0 < nrows; r0 += BLOCK) {
        x.r0 = r0;
        x.n = nrows - r0 < BLOCK ? nrows - r0 : BLOCK;
        eval_node(&x, b->root, buf, 0);
        for (uint32_t i = 0; i < x.n; i++)
            selected[r0 + i] = buf[i] == TT;
    }
    free(buf);
    return PRED_OK;
}
