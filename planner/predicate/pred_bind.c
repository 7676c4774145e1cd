/* Binding a parsed predicate to one file's schema: names to leaves
 * (column_resolve.h), type checks, literals coerced to the columns' values;
 * see predicate.h. */
#include "predicate_internal.h"
#include "sv_civil.h"

#include "column_resolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pred_bound_free(pred_bound *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->ncols; i++)
        free(b->cols[i].path);
    free(b->nodes);
    free(b->vals);
    free(b->bytes);
    free(b->cols);
    free(b);
}

size_t pred_bound_ncols(const pred_bound *b)
{
    return b ? b->ncols : 0;
}

uint32_t pred_bound_leaf(const pred_bound *b, size_t i)
{
    return b && i < b->ncols ? b->cols[i].leaf : UINT32_MAX;
}

const pqv_type *pred_bound_type(const pred_bound *b, size_t i)
{
    return b && i < b->ncols && b->cols[i].typed ? &b->cols[i].type : NULL;
}

typedef struct {
    const pred_expr *e;
    const pq_file_meta *m;
    pred_bound *b;
    pred_error *err;
    uint32_t *name_col;  /* per name: bound column, or NONE until first use */
    pq_column_resolver *columns; /* built at the first name resolved */
    const pred_constant *k;      /* names bound to constants (pred_bind_constants) */
    size_t nk;
} binder;

/* The constant a name binds to (exactly, else ignoring case when only one
 * does), or NULL. */
static const pred_constant *find_constant(const binder *B, const char *s)
{
    const pred_constant *folded = NULL;
    size_t n_folded = 0;
    for (size_t i = 0; i < B->nk; i++) {
        if (strcmp(B->k[i].name, s) == 0)
            return &B->k[i];
        if (strcasecmp(B->k[i].name, s) == 0) {
            folded = &B->k[i];
            n_folded++;
        }
    }
    return n_folded == 1 ? folded : NULL;
}

/* A bound column for constant k (reused when another name spelled it). */
static pred_status use_constant(binder *B, uint32_t name, const pred_constant *k, uint32_t *col)
{
    pred_bound *b = B->b;
    for (uint32_t i = 0; i < b->ncols; i++) {
        if (b->cols[i].constant && strcmp(b->cols[i].path, k->name) == 0) {
            *col = B->name_col[name] = i;
            return PRED_OK;
        }
    }
    if (!PRED_GROW(b->cols, b->cap_cols, b->ncols + 1))
        return pred_nomem(B->err);
    bcol *c = &b->cols[b->ncols];
    memset(c, 0, sizeof *c);
    c->leaf = NONE;
    c->type = k->type;
    c->typed = true;
    c->order_defined = true;
    c->constant = true;
    c->const_null = k->is_null;
    c->const_value = k->value;
    c->path = strdup(k->name);
    if (!c->path)
        return pred_nomem(B->err);
    *col = B->name_col[name] = b->ncols++;
    return PRED_OK;
}

/* The leaf a name resolves to (column_resolve.h). */
static pred_status find_leaf(binder *B, uint32_t name, uint32_t *leaf)
{
    const pq_file_meta *m = B->m;
    const char *s = B->e->names[name].s;
    const size_t pos = B->e->names[name].pos;
    if (!B->columns && !(B->columns = pq_column_resolver_new(m)))
        return pred_nomem(B->err);
    pq_column_match match;
    switch (pq_column_resolve(B->columns, s, &match)) {
    case PQ_RESOLVE_OK:
        *leaf = match.leaf;
        return PRED_OK;
    case PQ_RESOLVE_AMBIGUOUS:
        return pred_fail_at(B->err, PRED_E_COLUMN, pos,
                            "column name '%s' is ambiguous: it matches '%s' and '%s'", s,
                            m->leaves[match.candidates[0]].path,
                            m->leaves[match.candidates[1]].path);
    case PQ_RESOLVE_UNKNOWN:
        break;
    }
    return pred_fail_at(B->err, PRED_E_COLUMN, pos, "unknown column '%s'", s);
}

/* The bound column of name (resolved and added at first use). */
static pred_status use_column(binder *B, uint32_t name, size_t pos, uint32_t *col)
{
    if (B->name_col[name] != NONE) {
        *col = B->name_col[name];
        return PRED_OK;
    }
    const pred_constant *k = find_constant(B, B->e->names[name].s);
    if (k)
        return use_constant(B, name, k, col);
    uint32_t leaf = 0;
    pred_status st = find_leaf(B, name, &leaf);
    if (st != PRED_OK)
        return st;
    const pq_leaf *L = &B->m->leaves[leaf];
    if (L->max_rep > 0)
        return pred_fail_at(B->err, PRED_E_TYPE, pos,
                            "repeated column '%s' is not supported (lists and maps have no single "
                            "value per row)",
                            L->path);
    pred_bound *b = B->b;
    for (uint32_t i = 0; i < b->ncols; i++) {
        if (!b->cols[i].constant && b->cols[i].leaf == leaf) {
            *col = B->name_col[name] = i; /* another spelling of a column in use */
            return PRED_OK;
        }
    }
    if (!PRED_GROW(b->cols, b->cap_cols, b->ncols + 1))
        return pred_nomem(B->err);
    bcol *c = &b->cols[b->ncols];
    memset(c, 0, sizeof *c);
    c->leaf = leaf;
    c->path = strdup(L->path ? L->path : "");
    if (!c->path)
        return pred_nomem(B->err);
    pqd_error perr;
    c->typed = pqv_type_from_leaf(L, &c->type, &perr) == PQD_OK;
    c->order_defined = B->m->column_orders && leaf < B->m->n_column_orders &&
                       B->m->column_orders[leaf] == PQ_ORDER_TYPE_DEFINED;
    *col = B->name_col[name] = b->ncols++;
    return PRED_OK;
}

static void type_desc(const bcol *c, char *buf, size_t n)
{
    if (!c->typed)
        snprintf(buf, n, "no value order");
    else if (c->type.kind == PQV_DECIMAL)
        snprintf(buf, n, "DECIMAL(%d,%d)", c->type.precision, c->type.scale);
    else
        snprintf(buf, n, "%s", pqv_kind_name(c->type.kind));
}

static const char *lit_desc(lit_kind k)
{
    switch (k) {
    case L_NULL: return "NULL";
    case L_BOOL: return "a boolean literal";
    case L_INT: return "an integer literal";
    case L_DECIMAL: return "a decimal literal";
    case L_FLOAT: return "a float literal";
    case L_STRING: return "a string literal";
    case L_DATE: return "a DATE literal";
    case L_TIMESTAMP: return "a TIMESTAMP literal";
    }
    return "a literal";
}

/* A column used for its values: it needs an order. */
static pred_status need_values(binder *B, uint32_t col, size_t pos, const char *what)
{
    bcol *c = &B->b->cols[col];
    if (!c->typed) {
        pqd_error perr;
        pqv_type t;
        pqv_type_from_leaf(&B->m->leaves[c->leaf], &t, &perr);
        return pred_fail_at(B->err, PRED_E_TYPE, pos,
                            "column %s cannot be used in %s: %s (only IS [NOT] NULL works on it)",
                            c->path, what, perr.msg);
    }
    if (c->type.kind == PQV_TIME)
        return pred_fail_at(B->err, PRED_E_TYPE, pos,
                            "column %s (TIME) cannot be used in %s: TIME values are not supported "
                            "(only IS [NOT] NULL)",
                            c->path, what);
    c->needs_values = true;
    return PRED_OK;
}

static pred_status type_mismatch(binder *B, const bcol *c, const plit *l)
{
    char t[48];
    type_desc(c, t, sizeof t);
    return pred_fail_at(B->err, PRED_E_TYPE, l->pos, "cannot compare column %s (%s) with %s",
                        c->path, t, lit_desc(l->kind));
}

/* Literal l as a value comparable with column col's values. */
static pred_status coerce(binder *B, uint32_t col, const plit *l, pqv *out)
{
    const bcol *c = &B->b->cols[col];
    pred_bound *b = B->b;
    char t[48];
    switch (c->type.kind) {
    case PQV_BOOL:
        if (l->kind != L_BOOL)
            return type_mismatch(B, c, l);
        *out = pqv_bool(l->b);
        return PRED_OK;
    case PQV_INT:
    case PQV_UINT:
    case PQV_DECIMAL:
        /* exact only: a float literal would compare approximately */
        if (l->kind == L_INT)
            *out = pqv_int(l->i);
        else if (l->kind == L_DECIMAL)
            *out = pqv_decimal(l->dec, l->scale);
        else
            return type_mismatch(B, c, l);
        return PRED_OK;
    case PQV_FLOAT:
        if (l->kind == L_INT)
            *out = pqv_double((double)l->i);
        else if (l->kind == L_DECIMAL)
            *out = pqv_double(strtod(l->s, NULL)); /* correctly rounded, unlike unscaled/10^s */
        else if (l->kind == L_FLOAT)
            *out = pqv_double(l->f);
        else
            return type_mismatch(B, c, l);
        return PRED_OK;
    case PQV_DATE: {
        int32_t days;
        if (l->kind == L_DATE) {
            days = l->days;
        } else if (l->kind == L_STRING) {
            if (!sv_parse_date(l->s, l->slen, &days))
                return pred_fail_at(B->err, PRED_E_TYPE, l->pos,
                                    "cannot compare column %s (DATE) with a string literal that is "
                                    "not a date 'YYYY-MM-DD'",
                                    c->path);
        } else {
            return type_mismatch(B, c, l);
        }
        *out = pqv_date(days);
        return PRED_OK;
    }
    case PQV_TIMESTAMP: {
        int64_t secs;
        uint32_t nanos = 0;
        if (l->kind == L_TIMESTAMP) {
            secs = l->secs;
            nanos = l->nanos;
        } else if (l->kind == L_DATE) {
            secs = (int64_t)l->days * 86400;
        } else if (l->kind == L_STRING) {
            if (!sv_parse_timestamp(l->s, l->slen, &secs, &nanos))
                return pred_fail_at(B->err, PRED_E_TYPE, l->pos,
                                    "cannot compare column %s (TIMESTAMP) with a string literal "
                                    "that is not a timestamp 'YYYY-MM-DD[ HH:MM:SS[.fffffffff]]'",
                                    c->path);
        } else {
            return type_mismatch(B, c, l);
        }
        if (!pred_timestamp_value(secs, nanos, &c->type, out))
            return pred_fail_at(B->err, PRED_E_TYPE, l->pos,
                                "timestamp literal out of range for column %s", c->path);
        return PRED_OK;
    }
    case PQV_BYTES:
        if (l->kind != L_STRING)
            return type_mismatch(B, c, l);
        memcpy(b->bytes + b->n_bytes, l->s, l->slen);
        *out = pqv_bytes(b->bytes + b->n_bytes, l->slen);
        b->n_bytes += l->slen;
        return PRED_OK;
    case PQV_TIME:
        break;
    }
    type_desc(c, t, sizeof t);
    return pred_fail_at(B->err, PRED_E_TYPE, l->pos, "cannot compare column %s (%s)", c->path, t);
}

static pred_status bnode_new(binder *B, bkind kind, uint32_t *out)
{
    pred_bound *b = B->b;
    if (!PRED_GROW(b->nodes, b->cap_nodes, b->n_nodes + 1))
        return pred_nomem(B->err);
    bnode *n = &b->nodes[b->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->child = n->next = n->col = NONE;
    *out = b->n_nodes++;
    return PRED_OK;
}

static pred_status val_add(binder *B, pqv v, uint32_t *idx)
{
    pred_bound *b = B->b;
    if (!PRED_GROW(b->vals, b->cap_vals, b->n_vals + 1))
        return pred_nomem(B->err);
    b->vals[b->n_vals] = v;
    if (idx)
        *idx = b->n_vals;
    b->n_vals++;
    return PRED_OK;
}

static pred_status const_node(binder *B, int tri, uint32_t *out)
{
    pred_status st = bnode_new(B, B_CONST, out);
    if (st == PRED_OK)
        B->b->nodes[*out].op = (uint8_t)tri;
    return st;
}

/* column op literal, NULL literals folded to constant NULL. */
static pred_status cmp_node(binder *B, uint32_t col, cmp_op op, const plit *l, uint32_t *out)
{
    if (l->kind == L_NULL)
        return const_node(B, TN, out);
    pqv v;
    uint32_t vi = 0;
    pred_status st = coerce(B, col, l, &v);
    if (st != PRED_OK || (st = val_add(B, v, &vi)) != PRED_OK ||
        (st = bnode_new(B, B_CMP, out)) != PRED_OK)
        return st;
    bnode *n = &B->b->nodes[*out];
    n->op = (uint8_t)op;
    n->col = col;
    n->val = vi;
    n->nval = 1;
    return PRED_OK;
}

static pred_status wrap(binder *B, bkind kind, uint32_t first_child, uint32_t *out)
{
    pred_status st = bnode_new(B, kind, out);
    if (st == PRED_OK)
        B->b->nodes[*out].child = first_child;
    return st;
}

static int cmp_pqv(const void *a, const void *b)
{
    const pqv_order o = pqv_compare(a, b);
    return o == PQV_LT ? -1 : o == PQV_GT ? 1 : 0;
}

static pred_status bind_node(binder *B, uint32_t pi, uint32_t *out, uint32_t *height);

static pred_status bind_leaf(binder *B, const pnode *p, uint32_t *out)
{
    const pred_expr *e = B->e;
    pred_bound *b = B->b;
    uint32_t col = 0;
    pred_status st = use_column(B, p->name, p->name_pos, &col);
    if (st != PRED_OK)
        return st;
    const plit *lits = p->lit != NONE ? &e->lits[p->lit] : NULL;
    switch ((pkind)p->kind) {
    case P_CMP:
        if (lits[0].kind != L_NULL &&
            (st = need_values(B, col, p->name_pos, "a comparison")) != PRED_OK)
            return st;
        return cmp_node(B, col, (cmp_op)p->op, &lits[0], out);
    case P_BETWEEN: {
        /* lo <= x AND x <= hi; NOT BETWEEN is its negation */
        uint32_t ge = 0, le = 0, and_node = 0;
        if ((lits[0].kind != L_NULL || lits[1].kind != L_NULL) &&
            (st = need_values(B, col, p->name_pos, "BETWEEN")) != PRED_OK)
            return st;
        if ((st = cmp_node(B, col, OP_GE, &lits[0], &ge)) != PRED_OK ||
            (st = cmp_node(B, col, OP_LE, &lits[1], &le)) != PRED_OK)
            return st;
        b->nodes[ge].next = le;
        if ((st = wrap(B, B_AND, ge, &and_node)) != PRED_OK)
            return st;
        if (!p->neg) {
            *out = and_node;
            return PRED_OK;
        }
        return wrap(B, B_NOT, and_node, out);
    }
    case P_IN: {
        bool any = false, has_null = false;
        for (uint32_t i = 0; i < p->nlit; i++)
            any |= lits[i].kind != L_NULL;
        if (any && (st = need_values(B, col, p->name_pos, "IN")) != PRED_OK)
            return st;
        const uint32_t first = b->n_vals;
        for (uint32_t i = 0; i < p->nlit; i++) {
            pqv v;
            if (lits[i].kind == L_NULL) {
                has_null = true;
                continue;
            }
            if ((st = coerce(B, col, &lits[i], &v)) != PRED_OK ||
                (st = val_add(B, v, NULL)) != PRED_OK)
                return st;
        }
        /* sorted and distinct, for binary search per row and per min/max */
        uint32_t n = b->n_vals - first;
        if (n > 1)
            qsort(b->vals + first, n, sizeof *b->vals, cmp_pqv);
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (k == 0 || pqv_compare(&b->vals[first + k - 1], &b->vals[first + i]) != PQV_EQ)
                b->vals[first + k++] = b->vals[first + i];
        b->n_vals = first + k;
        uint32_t in = 0;
        if ((st = bnode_new(B, B_IN, &in)) != PRED_OK)
            return st;
        bnode *nd = &b->nodes[in];
        nd->col = col;
        nd->val = first;
        nd->nval = k;
        nd->in_null = has_null;
        if (!p->neg) {
            *out = in;
            return PRED_OK;
        }
        return wrap(B, B_NOT, in, out);
    }
    case P_ISNULL:
        if ((st = bnode_new(B, B_ISNULL, out)) != PRED_OK)
            return st;
        b->nodes[*out].col = col;
        b->nodes[*out].op = p->neg;
        return PRED_OK;
    case P_LIKE: {
        const bcol *c = &b->cols[col];
        if (!c->typed || c->type.kind != PQV_BYTES) {
            char t[48];
            type_desc(c, t, sizeof t);
            return pred_fail_at(B->err, PRED_E_TYPE, p->pos,
                                "LIKE needs a string or binary column; %s is %s", c->path, t);
        }
        if ((st = need_values(B, col, p->name_pos, "LIKE")) != PRED_OK)
            return st;
        /* the pattern's segments between % signs, copied once */
        const plit *l = &lits[0];
        uint8_t *copy = b->bytes + b->n_bytes;
        memcpy(copy, l->s, l->slen);
        b->n_bytes += l->slen;
        const uint32_t first = b->n_vals;
        uint32_t start = 0;
        for (uint32_t i = 0; i <= l->slen; i++) {
            if (i < l->slen && copy[i] != '%')
                continue;
            if ((st = val_add(B, pqv_bytes(copy + start, i - start), NULL)) != PRED_OK)
                return st;
            start = i + 1;
        }
        uint32_t like = 0;
        if ((st = bnode_new(B, B_LIKE, &like)) != PRED_OK)
            return st;
        b->nodes[like].col = col;
        b->nodes[like].val = first;
        b->nodes[like].nval = b->n_vals - first;
        if (!p->neg) {
            *out = like;
            return PRED_OK;
        }
        return wrap(B, B_NOT, like, out);
    }
    case P_COLUMN: {
        const bcol *c = &b->cols[col];
        if (!c->typed || c->type.kind != PQV_BOOL) {
            char t[48];
            type_desc(c, t, sizeof t);
            return pred_fail_at(B->err, PRED_E_TYPE, p->name_pos,
                                "column %s (%s) is not BOOLEAN: it cannot be a condition by itself",
                                c->path, t);
        }
        if ((st = need_values(B, col, p->name_pos, "a condition")) != PRED_OK ||
            (st = bnode_new(B, B_BOOLCOL, out)) != PRED_OK)
            return st;
        b->nodes[*out].col = col;
        return PRED_OK;
    }
    default:
        return sv_fail(B->err, PRED_E_INVALID, 0, "bad predicate node %d", p->kind);
    }
}

static pred_status bind_node(binder *B, uint32_t pi, uint32_t *out, uint32_t *height)
{
    const pnode *p = &B->e->nodes[pi];
    pred_status st;
    switch ((pkind)p->kind) {
    case P_AND:
    case P_OR:
    case P_NOT: {
        uint32_t first = NONE, last = NONE, h = 0;
        for (uint32_t c = p->child; c != NONE; c = B->e->nodes[c].next) {
            uint32_t bc, ch;
            if ((st = bind_node(B, c, &bc, &ch)) != PRED_OK)
                return st;
            if (first == NONE)
                first = bc;
            else
                B->b->nodes[last].next = bc;
            last = bc;
            h = ch > h ? ch : h;
        }
        *height = h + 1;
        const bkind k = p->kind == P_AND ? B_AND : p->kind == P_OR ? B_OR : B_NOT;
        return wrap(B, k, first, out);
    }
    case P_CONST: {
        const plit *l = &B->e->lits[p->lit];
        *height = 1;
        return const_node(B, l->kind == L_NULL ? TN : l->b ? TT : TF, out);
    }
    default:
        *height = 3; /* NOT (AND (cmp, cmp)) at most */
        return bind_leaf(B, p, out);
    }
}

/* ---------------- constants: decided at bind time ---------------- */

/* Decide every leaf node on a constant column, then simplify the tree from
 * node ni up: AND with a FALSE child is FALSE, OR with a TRUE child TRUE,
 * children that cannot change the result (TRUE under AND, FALSE under OR)
 * are dropped, NOT of a constant is a constant. */
static pred_status fold(binder *B, uint32_t ni)
{
    pred_bound *b = B->b;
    bnode *nd = &b->nodes[ni];
    switch ((bkind)nd->kind) {
    case B_AND:
    case B_OR: {
        const uint8_t absorbing = nd->kind == B_AND ? TF : TT, identity = nd->kind == B_AND ? TT : TF;
        uint32_t prev = NONE;
        for (uint32_t c = nd->child; c != NONE;) {
            pred_status st = fold(B, c);
            if (st != PRED_OK)
                return st;
            nd = &b->nodes[ni];
            const bnode *cn = &b->nodes[c];
            const uint32_t next = cn->next;
            if (cn->kind == B_CONST && cn->op == absorbing) {
                nd->kind = B_CONST;
                nd->op = absorbing;
                nd->child = NONE;
                return PRED_OK;
            }
            if (cn->kind == B_CONST && cn->op == identity) { /* unlink c */
                if (prev == NONE)
                    nd->child = next;
                else
                    b->nodes[prev].next = next;
            } else {
                prev = c;
            }
            c = next;
        }
        if (nd->child == NONE) { /* every child dropped */
            nd->kind = B_CONST;
            nd->op = identity;
        } else if (b->nodes[nd->child].next == NONE && b->nodes[nd->child].kind == B_CONST) {
            nd->op = b->nodes[nd->child].op; /* one constant child left (NULL) */
            nd->kind = B_CONST;
            nd->child = NONE;
        }
        return PRED_OK;
    }
    case B_NOT: {
        pred_status st = fold(B, nd->child);
        if (st != PRED_OK)
            return st;
        nd = &b->nodes[ni];
        if (b->nodes[nd->child].kind == B_CONST) {
            nd->op = (uint8_t)(TT - b->nodes[nd->child].op);
            nd->kind = B_CONST;
            nd->child = NONE;
        }
        return PRED_OK;
    }
    case B_CONST:
        return PRED_OK;
    default: {
        if (nd->col == NONE || !b->cols[nd->col].constant)
            return PRED_OK;
        const bcol *c = &b->cols[nd->col];
        uint8_t tri;
        if (!pred_eval_leaf_row(b, ni, c->const_null ? NULL : &c->const_value, &tri))
            return pred_nomem(B->err);
        nd = &b->nodes[ni];
        nd->kind = B_CONST;
        nd->op = tri;
        nd->col = NONE;
        return PRED_OK;
    }
    }
}

/* Mark the columns the tree under ni reads. */
static void mark_used(const pred_bound *b, uint32_t ni, uint8_t *used)
{
    for (; ni != NONE; ni = b->nodes[ni].next) {
        const bnode *nd = &b->nodes[ni];
        if (nd->col != NONE)
            used[nd->col] = 1;
        if (nd->child != NONE)
            mark_used(b, nd->child, used);
        if (ni == b->root)
            break; /* the root has no siblings */
    }
}

/* Drop the columns no node reads any more (the constants, and columns of
 * conditions a constant decided), renumbering the others. */
static pred_status drop_unused_columns(binder *B)
{
    pred_bound *b = B->b;
    uint8_t *used = calloc(b->ncols ? b->ncols : 1, 1);
    uint32_t *renum = malloc((b->ncols ? b->ncols : 1) * sizeof *renum);
    if (!used || !renum) {
        free(used);
        free(renum);
        return pred_nomem(B->err);
    }
    mark_used(b, b->root, used);
    uint32_t k = 0;
    for (uint32_t i = 0; i < b->ncols; i++) {
        renum[i] = used[i] ? k : NONE;
        if (!used[i]) {
            free(b->cols[i].path);
            continue;
        }
        b->cols[k++] = b->cols[i];
    }
    for (uint32_t n = 0; n < b->n_nodes; n++)
        if (b->nodes[n].col != NONE)
            b->nodes[n].col = renum[b->nodes[n].col];
    b->ncols = k;
    free(used);
    free(renum);
    return PRED_OK;
}

pred_truth pred_bound_truth(const pred_bound *b)
{
    const bnode *r = &b->nodes[b->root];
    return r->kind == B_CONST ? (pred_truth)r->op : PRED_TRUTH_VARIES;
}

static pred_status bind(const pred_expr *e, const pq_file_meta *m, const pred_constant *k, size_t nk,
                        pred_bound **out, pred_error *err)
{
    if (!e || !m || !out || (m->n_leaves && !m->leaves))
        return sv_fail(err, PRED_E_INVALID, 0, "NULL argument");
    *out = NULL;
    pred_bound *b = calloc(1, sizeof *b);
    binder B = {.e = e, .m = m, .b = b, .err = err, .k = k, .nk = nk};
    size_t nbytes = 1;
    for (uint32_t i = 0; i < e->n_lits; i++)
        if (e->lits[i].kind == L_STRING)
            nbytes += e->lits[i].slen;
    bool vals_ok = false;
    if (b) {
        b->bytes = malloc(nbytes);
        b->cap_bytes = nbytes;
        /* never NULL, so that &vals[i] of an empty IN list is well-defined */
        vals_ok = PRED_GROW(b->vals, b->cap_vals, 1);
    }
    B.name_col = malloc((e->n_names ? e->n_names : 1) * sizeof *B.name_col);
    pred_status st = PRED_OK;
    if (!b || !b->bytes || !vals_ok || !B.name_col) {
        st = pred_nomem(err);
    } else {
        for (uint32_t i = 0; i < e->n_names; i++)
            B.name_col[i] = NONE;
        st = bind_node(&B, e->root, &b->root, &b->height);
        if (st == PRED_OK && nk > 0 && (st = fold(&B, b->root)) == PRED_OK)
            st = drop_unused_columns(&B);
    }
    free(B.name_col);
    pq_column_resolver_free(B.columns);
    if (st != PRED_OK) {
        pred_bound_free(b);
        return st;
    }
    *out = b;
    return PRED_OK;
}

pred_status pred_bind(const pred_expr *e, const pq_file_meta *m, pred_bound **out, pred_error *err)
{
    return bind(e, m, NULL, 0, out, err);
}

pred_status pred_bind_constants(const pred_expr *e, const pq_file_meta *m, const pred_constant *k, size_t nk,
                                pred_bound **out, pred_error *err)
{
    if (nk && !k)
        return sv_fail(err, PRED_E_INVALID, 0, "NULL argument");
    return bind(e, m, k, nk, out, err);
}
