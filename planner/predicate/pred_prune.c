/* Pruning with statistics: whether any row of a region (row group, page)
 * can make a bound predicate TRUE given its min/max and null counts; see
 * predicate.h. */
#include "predicate_internal.h"

#include <string.h>

/* Possible outcomes of a node over a region's rows. */
enum { PF = 1, PN = 2, PT = 4, PALL = PF | PN | PT };

typedef struct {
    bool known;       /* the callback gave statistics */
    bool empty;       /* no rows */
    bool may_null;    /* some row may be NULL */
    bool may_value;   /* some row may be non-NULL */
    bool mm;          /* min/max usable for this column */
    pred_col_stats s;
} region;

static void region_of(const pred_bound *b, uint32_t col, pred_stats_fn fn, void *ud, region *r)
{
    memset(r, 0, sizeof *r);
    r->may_null = r->may_value = true;
    r->s.num_values = -1;
    if (!fn || !fn(ud, col, &r->s))
        return;
    r->known = true;
    const pred_col_stats *s = &r->s;
    const bool rows_known = s->num_values >= 0;
    if (rows_known && s->num_values == 0) {
        r->empty = true;
        r->may_null = r->may_value = false;
        return;
    }
    const bool nulls_known = s->has_null_count && s->null_count >= 0 &&
                             (!rows_known || s->null_count <= s->num_values);
    if (nulls_known) {
        r->may_null = s->null_count > 0;
        r->may_value = !(rows_known && s->null_count == s->num_values);
    }
    /* FLOAT bounds may omit NaN; crossed or mismatched bounds are unusable */
    const bcol *c = &b->cols[col];
    if (s->has_min_max && c->typed && c->type.kind != PQV_FLOAT && r->may_value) {
        const pqv_order o = pqv_compare(&s->min, &s->max);
        r->mm = o == PQV_LT || o == PQV_EQ;
    }
}

static unsigned may_cmp(const region *r, cmp_op op, const pqv *v)
{
    unsigned res = r->may_null ? PN : 0;
    if (!r->may_value)
        return res;
    if (!r->mm)
        return res | PT | PF;
    const pqv_order lo = pqv_compare(&r->s.min, v), hi = pqv_compare(&r->s.max, v);
    if (lo == PQV_INCOMPARABLE || hi == PQV_INCOMPARABLE)
        return res | PT | PF;
    const bool inside = lo != PQV_GT && hi != PQV_LT; /* min <= v <= max */
    const bool only = lo == PQV_EQ && hi == PQV_EQ;    /* every value is v */
    bool t = true, f = true;
    switch (op) {
    case OP_EQ: t = inside; f = !only; break;
    case OP_NE: t = !only; f = inside; break;
    case OP_LT: t = lo == PQV_LT; f = hi != PQV_LT; break;
    case OP_LE: t = lo != PQV_GT; f = hi == PQV_GT; break;
    case OP_GT: t = hi == PQV_GT; f = lo != PQV_GT; break;
    case OP_GE: t = hi != PQV_LT; f = lo == PQV_LT; break;
    }
    return res | (t ? PT : 0) | (f ? PF : 0);
}

static unsigned may_in(const region *r, const bnode *nd, const pqv *vals)
{
    unsigned res = r->may_null ? PN : 0;
    if (!r->may_value)
        return res;
    const unsigned miss = nd->in_null ? PN : PF;
    if (!r->mm)
        return res | (nd->nval ? PT : 0) | miss;
    bool eq = false, inc;
    const uint32_t k = pred_lower_bound(vals, nd->nval, &r->s.min, &eq, &inc);
    if (inc)
        return res | PT | miss;
    const bool hit = k < nd->nval && pqv_compare(&vals[k], &r->s.max) != PQV_GT;
    const bool only = eq && pqv_compare(&r->s.min, &r->s.max) == PQV_EQ;
    return res | (hit ? PT : 0) | (only ? 0 : miss);
}

static unsigned may_like(const region *r, const bnode *nd, const pqv *seg)
{
    if (nd->nval == 1)
        return may_cmp(r, OP_EQ, &seg[0]);
    unsigned res = r->may_null ? PN : 0;
    if (!r->may_value)
        return res;
    const pqv *p = &seg[0];
    if (!r->mm || p->v.bytes.len == 0 || r->s.min.kind != PQV_BYTES || r->s.max.kind != PQV_BYTES)
        return res | PT | PF;
    /* values with prefix p lie in [p, p's successor): some may when
     * max >= p and min's first |p| bytes are <= p */
    pqv min_head = r->s.min;
    if (min_head.v.bytes.len > p->v.bytes.len)
        min_head.v.bytes.len = p->v.bytes.len;
    const bool t = pqv_compare(&r->s.max, p) != PQV_LT && pqv_compare(&min_head, p) != PQV_GT;
    return res | PF | (t ? PT : 0);
}

static unsigned may_bool(const region *r)
{
    unsigned res = r->may_null ? PN : 0;
    if (!r->may_value)
        return res;
    if (!r->mm || r->s.min.kind != PQV_BOOL || r->s.max.kind != PQV_BOOL)
        return res | PT | PF;
    return res | (r->s.max.v.b ? PT : 0) | (!r->s.min.v.b ? PF : 0);
}

static unsigned may_node(const pred_bound *b, uint32_t ni, pred_stats_fn fn, void *ud)
{
    const bnode *nd = &b->nodes[ni];
    region r;
    switch ((bkind)nd->kind) {
    case B_AND:
    case B_OR: {
        /* per child independently: a superset of what the rows can give */
        const bool is_and = nd->kind == B_AND;
        bool all_t = true, any_t = false, all_f = true, any_f = false, all_nt = true,
             all_nf = true, any_n = false;
        for (uint32_t ci = nd->child; ci != NONE; ci = b->nodes[ci].next) {
            const unsigned s = may_node(b, ci, fn, ud);
            all_t &= (s & PT) != 0;
            any_t |= (s & PT) != 0;
            all_f &= (s & PF) != 0;
            any_f |= (s & PF) != 0;
            all_nt &= (s & (PN | PT)) != 0;
            all_nf &= (s & (PN | PF)) != 0;
            any_n |= (s & PN) != 0;
        }
        if (is_and)
            return (all_t ? PT : 0) | (any_f ? PF : 0) | (all_nt && any_n ? PN : 0);
        return (any_t ? PT : 0) | (all_f ? PF : 0) | (all_nf && any_n ? PN : 0);
    }
    case B_NOT: {
        const unsigned s = may_node(b, nd->child, fn, ud);
        return (s & PN) | (s & PT ? PF : 0) | (s & PF ? PT : 0);
    }
    case B_CONST: return nd->op == TT ? PT : nd->op == TF ? PF : PN;
    default: break;
    }
    region_of(b, nd->col, fn, ud, &r);
    if (!r.known)
        return nd->kind == B_ISNULL ? PT | PF : PALL;
    switch ((bkind)nd->kind) {
    case B_CMP: return may_cmp(&r, (cmp_op)nd->op, &b->vals[nd->val]);
    case B_IN: return may_in(&r, nd, &b->vals[nd->val]);
    case B_LIKE: return may_like(&r, nd, &b->vals[nd->val]);
    case B_BOOLCOL: return may_bool(&r);
    case B_ISNULL: {
        const unsigned is = (r.may_null ? PT : 0) | (r.may_value ? PF : 0);
        return nd->op ? (is & PT ? PF : 0) | (is & PF ? PT : 0) : is;
    }
    default: return PALL;
    }
}

bool pred_may_match(const pred_bound *b, pred_stats_fn fn, void *ud)
{
    if (!b)
        return true;
    return (may_node(b, b->root, fn, ud) & PT) != 0;
}

/* Kinds whose deprecated (signed-order) min/max are in the type's order. */
static bool signed_order_ok(const pqv_type *t)
{
    switch (t->kind) {
    case PQV_BOOL:
    case PQV_INT:
    case PQV_DATE:
    case PQV_TIME:
    case PQV_FLOAT:
        return true;
    case PQV_TIMESTAMP: return t->physical == PQ_INT64;
    case PQV_DECIMAL: return t->physical == PQ_INT32 || t->physical == PQ_INT64;
    default: return false;
    }
}

static bool decode_bounds(const pqv_type *t, pq_bytes lo, pq_bytes hi, pred_col_stats *out)
{
    pqd_error perr;
    pqv a, z;
    if ((!lo.ptr && lo.len) || (!hi.ptr && hi.len))
        return false;
    if (pqv_from_plain(t, lo.ptr, lo.len, &a, &perr) != PQD_OK ||
        pqv_from_plain(t, hi.ptr, hi.len, &z, &perr) != PQD_OK)
        return false;
    const pqv_order o = pqv_compare(&a, &z);
    if (o != PQV_LT && o != PQV_EQ)
        return false; /* crossed bounds: not trusted */
    out->has_min_max = true;
    out->min = a;
    out->max = z;
    return true;
}

bool pred_stats_from_parquet(const pred_bound *b, size_t col, const pq_statistics *st,
                             int64_t num_values, pred_col_stats *out)
{
    if (!out)
        return false;
    memset(out, 0, sizeof *out);
    out->num_values = num_values >= 0 ? num_values : -1;
    if (!b || col >= b->ncols || !st)
        return false;
    if (st->has_null_count && st->null_count >= 0) {
        out->has_null_count = true;
        out->null_count = st->null_count;
    }
    const bcol *c = &b->cols[col];
    /* INT96 has no defined order in Statistics */
    if (c->typed && c->type.physical != PQ_INT96) {
        bool ok = false;
        if (c->order_defined && st->has_min_value && st->has_max_value)
            ok = decode_bounds(&c->type, st->min_value, st->max_value, out);
        if (!ok && st->has_min && st->has_max && signed_order_ok(&c->type))
            decode_bounds(&c->type, st->min, st->max, out);
    }
    return out->has_min_max || out->has_null_count;
}
