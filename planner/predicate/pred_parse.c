/* The predicate's parser: text to the parsed form (predicate_internal.h),
 * by recursive descent over the tokens of pred_lex.c; see predicate.h for
 * the grammar. */
#include "predicate_internal.h"
#include "sv_civil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 pred_u128;

#define MAX_DIGITS 38 /* DECIMAL precision limit of pq_value.h */

void pred_free(pred_expr *e)
{
    if (!e)
        return;
    for (uint32_t i = 0; i < e->n_lits; i++)
        free(e->lits[i].s);
    for (uint32_t i = 0; i < e->n_names; i++)
        free(e->names[i].s);
    free(e->nodes);
    free(e->lits);
    free(e->names);
    free(e);
}

size_t pred_column_count(const pred_expr *e)
{
    return e ? e->n_names : 0;
}

const char *pred_column_name(const pred_expr *e, size_t i)
{
    return e && i < e->n_names ? e->names[i].s : NULL;
}

pred_status pred_rename_columns(pred_expr *e, const char *(*map)(void *ctx, const char *name), void *ctx,
                                pred_error *err)
{
    if (!e || !map)
        return sv_fail(err, PRED_E_INVALID, 0, "NULL argument");
    for (uint32_t i = 0; i < e->n_names; i++) {
        const char *to = map(ctx, e->names[i].s);
        if (!to)
            return pred_fail_at(err, PRED_E_COLUMN, e->names[i].pos, "unknown column '%s'", e->names[i].s);
        char *copy = strdup(to);
        if (!copy)
            return pred_nomem(err);
        free(e->names[i].s);
        e->names[i].s = copy;
    }
    return PRED_OK;
}

static pred_status new_node(parser *P, pkind kind, size_t pos, uint32_t *out)
{
    pred_expr *e = P->e;
    if (e->n_nodes >= PRED_MAX_NODES)
        return pred_fail_at(P->err, PRED_E_LIMIT, pos, "more than %u predicate nodes",
                            PRED_MAX_NODES);
    if (!PRED_GROW(e->nodes, e->cap_nodes, e->n_nodes + 1))
        return pred_nomem(P->err);
    pnode *n = &e->nodes[e->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->child = n->next = n->lit = n->name = NONE;
    n->pos = n->name_pos = pos;
    *out = e->n_nodes++;
    return PRED_OK;
}

static pred_status new_lit(parser *P, lit_kind kind, size_t pos, uint32_t *out)
{
    pred_expr *e = P->e;
    if (!PRED_GROW(e->lits, e->cap_lits, e->n_lits + 1))
        return pred_nomem(P->err);
    plit *l = &e->lits[e->n_lits];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->pos = pos;
    *out = e->n_lits++;
    return PRED_OK;
}

/* The text between quotes with doubled quotes collapsed; NUL-terminated. */
static char *unquote(const char *s, size_t n, char q, uint32_t *len)
{
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        out[o++] = s[i];
        if (s[i] == q)
            i++; /* the scanner only lets doubled quotes through */
    }
    out[o] = 0;
    *len = (uint32_t)o;
    return out;
}

/* Decode the current T_IDENT into a name and intern it. */
static pred_status intern_name(parser *P, uint32_t *out)
{
    const char *s = P->s + P->tok.pos;
    const size_t n = P->tok.len;
    char *name = malloc(n + 1);
    if (!name)
        return pred_nomem(P->err);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '"') {
            const size_t start = o;
            for (i++;; i++) {
                if (s[i] == '"') {
                    if (i + 1 < n && s[i + 1] == '"') {
                        name[o++] = '"';
                        i++;
                        continue;
                    }
                    i++;
                    break;
                }
                if (s[i] == 0) {
                    free(name);
                    return pred_fail_at(P->err, PRED_E_SYNTAX, P->tok.pos + i,
                                        "NUL byte in a quoted identifier");
                }
                name[o++] = s[i];
            }
            if (o == start) {
                free(name);
                return pred_fail_at(P->err, PRED_E_SYNTAX, P->tok.pos, "empty quoted identifier");
            }
        } else if (s[i] == '.') {
            name[o++] = '.';
            i++;
        } else {
            name[o++] = s[i++];
        }
    }
    name[o] = 0;
    pred_expr *e = P->e;
    for (uint32_t k = 0; k < e->n_names; k++) {
        if (strcmp(e->names[k].s, name) == 0) {
            free(name);
            *out = k;
            return PRED_OK;
        }
    }
    if (!PRED_GROW(e->names, e->cap_names, e->n_names + 1)) {
        free(name);
        return pred_nomem(P->err);
    }
    e->names[e->n_names].s = name;
    e->names[e->n_names].pos = P->tok.pos;
    *out = e->n_names++;
    return PRED_OK;
}

/* Current T_STRING as an owned byte string. */
static pred_status string_token(parser *P, char **s, uint32_t *len)
{
    const size_t n = P->tok.len - 2;
    if (n > PRED_MAX_STRING)
        return pred_fail_at(P->err, PRED_E_LIMIT, P->tok.pos, "string literal longer than %u bytes",
                            PRED_MAX_STRING);
    *s = unquote(P->s + P->tok.pos + 1, n, '\'', len);
    return *s ? PRED_OK : pred_nomem(P->err);
}

/* The current T_NUMBER (negated when neg) into literal l. */
static pred_status number_literal(parser *P, bool neg, plit *l)
{
    const char *s = P->s + P->tok.pos;
    const size_t n = P->tok.len;
    bool has_exp = false, has_point = false;
    for (size_t i = 0; i < n; i++) {
        has_exp |= s[i] == 'e' || s[i] == 'E';
        has_point |= s[i] == '.';
    }
    if (has_exp || has_point) {
        /* keep the numeral: FLOAT columns convert it with one correct rounding */
        char *text = malloc(n + 2);
        if (!text)
            return pred_nomem(P->err);
        size_t o = 0;
        if (neg)
            text[o++] = '-';
        memcpy(text + o, s, n);
        text[o + n] = 0;
        l->s = text;
        l->slen = (uint32_t)(o + n);
    }
    if (has_exp) {
        char *end;
        const double f = strtod(l->s, &end);
        if (*end != 0)
            return pred_fail_at(P->err, PRED_E_SYNTAX, l->pos, "malformed float literal");
        if (isinf(f))
            return pred_fail_at(P->err, PRED_E_SYNTAX, l->pos, "float literal out of range");
        l->kind = L_FLOAT;
        l->f = f;
        return PRED_OK;
    }
    pred_u128 mag = 0;
    unsigned sig = 0;
    int32_t scale = 0;
    bool frac = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            frac = true;
            continue;
        }
        if (frac && ++scale > MAX_DIGITS)
            return pred_fail_at(P->err, PRED_E_SYNTAX, l->pos,
                                "numeric literal has more than %d digits after the point",
                                MAX_DIGITS);
        if (sig == 0 && s[i] == '0')
            continue; /* leading zeros do not count */
        if (++sig > MAX_DIGITS)
            return pred_fail_at(P->err, PRED_E_SYNTAX, l->pos,
                                "numeric literal out of range: more than %d digits", MAX_DIGITS);
        mag = mag * 10 + (unsigned)(s[i] - '0');
    }
    if (!has_point) {
        if (!neg && mag <= (pred_u128)INT64_MAX) {
            l->kind = L_INT;
            l->i = (int64_t)mag;
            return PRED_OK;
        }
        if (neg && mag <= (pred_u128)INT64_MAX + 1) {
            l->kind = L_INT;
            l->i = mag == (pred_u128)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
            return PRED_OK;
        }
        /* beyond int64: an exact DECIMAL, whose numeral FLOAT columns need */
        char *text = malloc(n + 2);
        if (!text)
            return pred_nomem(P->err);
        snprintf(text, n + 2, "%s%.*s", neg ? "-" : "", (int)n, s);
        l->s = text;
        l->slen = (uint32_t)strlen(text);
    }
    l->kind = L_DECIMAL;
    l->dec = neg ? -(pq_i128)mag : (pq_i128)mag;
    l->scale = scale;
    return PRED_OK;
}

static pred_status parse_literal(parser *P, uint32_t *out)
{
    const size_t pos = P->tok.pos;
    pred_status st;
    if (P->tok.t == T_MINUS) {
        if ((st = pred_lex_next(P)) != PRED_OK)
            return st;
        if (P->tok.t != T_NUMBER)
            return pred_lex_expected(P, "a number after '-'");
    }
    uint32_t li = NONE;
    if ((st = new_lit(P, L_NULL, pos, &li)) != PRED_OK)
        return st;
    *out = li;
    plit *l = &P->e->lits[li];
    if (P->tok.t == T_NUMBER) {
        st = number_literal(P, pos != P->tok.pos, l);
    } else if (P->tok.t == T_STRING) {
        l->kind = L_STRING;
        st = string_token(P, &l->s, &l->slen);
    } else if (pred_lex_is_kw(P, K_TRUE) || pred_lex_is_kw(P, K_FALSE)) {
        l->kind = L_BOOL;
        l->b = pred_lex_is_kw(P, K_TRUE);
    } else if (pred_lex_is_kw(P, K_NULL)) {
        l->kind = L_NULL;
    } else if (pred_lex_is_kw(P, K_DATE) || pred_lex_is_kw(P, K_TIMESTAMP)) {
        const bool date = pred_lex_is_kw(P, K_DATE);
        if ((st = pred_lex_next(P)) != PRED_OK)
            return st;
        char *s;
        uint32_t n;
        if ((st = string_token(P, &s, &n)) != PRED_OK)
            return st;
        bool ok;
        if (date) {
            l->kind = L_DATE;
            ok = sv_parse_date(s, n, &l->days);
        } else {
            l->kind = L_TIMESTAMP;
            ok = sv_parse_timestamp(s, n, &l->secs, &l->nanos);
        }
        free(s);
        if (!ok)
            return pred_fail_at(P->err, PRED_E_SYNTAX, P->tok.pos, "bad %s literal: expected '%s'",
                                date ? "DATE" : "TIMESTAMP",
                                date ? "YYYY-MM-DD" : "YYYY-MM-DD[ HH:MM:SS[.fffffffff]]");
    } else {
        return pred_lex_expected(P, "a literal");
    }
    if (st != PRED_OK)
        return st;
    return pred_lex_next(P);
}

typedef struct {
    bool is_col;
    uint32_t name; /* is_col */
    uint32_t lit;  /* !is_col */
    size_t pos;
} operand;

static pred_status parse_operand(parser *P, operand *o)
{
    o->pos = P->tok.pos;
    if (P->tok.t == T_IDENT) {
        o->is_col = true;
        pred_status st = intern_name(P, &o->name);
        return st != PRED_OK ? st : pred_lex_next(P);
    }
    o->is_col = false;
    switch (P->tok.t) {
    case T_NUMBER:
    case T_STRING:
    case T_MINUS:
        return parse_literal(P, &o->lit);
    case T_KW:
        if (pred_lex_is_kw(P, K_TRUE) || pred_lex_is_kw(P, K_FALSE) || pred_lex_is_kw(P, K_NULL) ||
            pred_lex_is_kw(P, K_DATE) || pred_lex_is_kw(P, K_TIMESTAMP))
            return parse_literal(P, &o->lit);
        break;
    default:
        break;
    }
    return pred_lex_expected(P, "a column or a literal");
}

static pred_status need_column(parser *P, const operand *o, const char *what)
{
    if (o->is_col)
        return PRED_OK;
    return pred_fail_at(P->err, PRED_E_SYNTAX, o->pos, "%s needs a column on its left", what);
}

static cmp_op flip(cmp_op op)
{
    switch (op) {
    case OP_LT: return OP_GT;
    case OP_LE: return OP_GE;
    case OP_GT: return OP_LT;
    case OP_GE: return OP_LE;
    default: return op;
    }
}

static pred_status parse_or(parser *P, uint32_t *out);

/* A predicate node on column operand `left`. */
static pred_status column_node(parser *P, pkind kind, const operand *left, size_t pos,
                               uint32_t *out)
{
    pred_status st = new_node(P, kind, pos, out);
    if (st != PRED_OK)
        return st;
    pnode *n = &P->e->nodes[*out];
    n->name = left->name;
    n->name_pos = left->pos;
    return PRED_OK;
}

/* Node i's literals (nlit of them from lit) and whether it is negated. */
static pred_status set_lits(parser *P, uint32_t i, uint32_t lit, uint32_t nlit, bool neg)
{
    pnode *n = &P->e->nodes[i];
    n->lit = lit;
    n->nlit = nlit;
    n->neg = neg;
    return PRED_OK;
}

static pred_status parse_predicate(parser *P, uint32_t *out)
{
    operand left, right;
    pred_status st = parse_operand(P, &left);
    if (st != PRED_OK)
        return st;
    const size_t pos = P->tok.pos;
    if (P->tok.t == T_CMP) {
        cmp_op op = (cmp_op)P->tok.sub;
        if ((st = pred_lex_next(P)) != PRED_OK || (st = parse_operand(P, &right)) != PRED_OK)
            return st;
        if (left.is_col && right.is_col)
            return pred_fail_at(P->err, PRED_E_SYNTAX, pos,
                                "comparison of two columns is not supported");
        if (!left.is_col && !right.is_col)
            return pred_fail_at(P->err, PRED_E_SYNTAX, pos,
                                "a comparison needs a column on one side");
        if (!left.is_col) {
            const operand t = left;
            left = right;
            right = t;
            op = flip(op); /* 5 < x is x > 5 */
        }
        if ((st = column_node(P, P_CMP, &left, pos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].op = (uint8_t)op;
        return set_lits(P, *out, right.lit, 1, false);
    }
    bool neg = false;
    if (pred_lex_is_kw(P, K_NOT)) {
        neg = true;
        if ((st = pred_lex_next(P)) != PRED_OK)
            return st;
        if (!pred_lex_is_kw(P, K_BETWEEN) && !pred_lex_is_kw(P, K_IN) && !pred_lex_is_kw(P, K_LIKE))
            return pred_lex_expected(P, "BETWEEN, IN or LIKE after NOT");
    }
    const size_t kpos = P->tok.pos;
    if (pred_lex_is_kw(P, K_BETWEEN)) {
        uint32_t lo, hi;
        if ((st = need_column(P, &left, "BETWEEN")) != PRED_OK ||
            (st = pred_lex_next(P)) != PRED_OK || (st = parse_literal(P, &lo)) != PRED_OK)
            return st;
        if (!pred_lex_is_kw(P, K_AND))
            return pred_lex_expected(P, "AND between the bounds of BETWEEN");
        if ((st = pred_lex_next(P)) != PRED_OK || (st = parse_literal(P, &hi)) != PRED_OK)
            return st;
        if ((st = column_node(P, P_BETWEEN, &left, kpos, out)) != PRED_OK)
            return st;
        return set_lits(P, *out, lo, 2, neg); /* hi == lo + 1: literals are appended in order */
    }
    if (pred_lex_is_kw(P, K_IN)) {
        if ((st = need_column(P, &left, "IN")) != PRED_OK || (st = pred_lex_next(P)) != PRED_OK)
            return st;
        if (P->tok.t != T_LPAREN)
            return pred_lex_expected(P, "'(' after IN");
        if ((st = pred_lex_next(P)) != PRED_OK)
            return st;
        uint32_t first = NONE, count = 0;
        for (;;) {
            uint32_t li;
            if (count == PRED_MAX_IN_ITEMS)
                return pred_fail_at(P->err, PRED_E_LIMIT, P->tok.pos,
                                    "IN list longer than %u items", PRED_MAX_IN_ITEMS);
            if ((st = parse_literal(P, &li)) != PRED_OK)
                return st;
            if (first == NONE)
                first = li;
            count++;
            if (P->tok.t == T_RPAREN)
                break;
            if (P->tok.t != T_COMMA)
                return pred_lex_expected(P, "',' or ')' in the IN list");
            if ((st = pred_lex_next(P)) != PRED_OK)
                return st;
        }
        if ((st = pred_lex_next(P)) != PRED_OK ||
            (st = column_node(P, P_IN, &left, kpos, out)) != PRED_OK)
            return st;
        return set_lits(P, *out, first, count, neg);
    }
    if (pred_lex_is_kw(P, K_LIKE)) {
        if ((st = need_column(P, &left, "LIKE")) != PRED_OK || (st = pred_lex_next(P)) != PRED_OK)
            return st;
        if (P->tok.t != T_STRING)
            return pred_lex_expected(P, "a string pattern after LIKE");
        for (size_t i = P->tok.pos + 1; i + 1 < P->tok.pos + P->tok.len; i++)
            if (P->s[i] == '_' || P->s[i] == '\\')
                return pred_fail_at(P->err, PRED_E_SYNTAX, i,
                                    "LIKE supports only %% wildcards ('%c' is not supported)",
                                    P->s[i]);
        uint32_t li;
        if ((st = parse_literal(P, &li)) != PRED_OK ||
            (st = column_node(P, P_LIKE, &left, kpos, out)) != PRED_OK)
            return st;
        return set_lits(P, *out, li, 1, neg);
    }
    if (pred_lex_is_kw(P, K_IS)) {
        if ((st = need_column(P, &left, "IS NULL")) != PRED_OK ||
            (st = pred_lex_next(P)) != PRED_OK)
            return st;
        if (pred_lex_is_kw(P, K_NOT)) {
            neg = true;
            if ((st = pred_lex_next(P)) != PRED_OK)
                return st;
        }
        if (!pred_lex_is_kw(P, K_NULL))
            return pred_lex_expected(P, neg ? "NULL after IS NOT" : "NULL or NOT NULL after IS");
        if ((st = pred_lex_next(P)) != PRED_OK ||
            (st = column_node(P, P_ISNULL, &left, kpos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].neg = neg;
        return PRED_OK;
    }
    if (left.is_col)
        return column_node(P, P_COLUMN, &left, left.pos, out);
    const lit_kind lk = P->e->lits[left.lit].kind;
    if (lk != L_BOOL && lk != L_NULL)
        return pred_lex_expected(P, "a comparison after the literal");
    if ((st = new_node(P, P_CONST, left.pos, out)) != PRED_OK)
        return st;
    return set_lits(P, *out, left.lit, 1, false);
}

static pred_status enter(parser *P)
{
    if (++P->depth > PRED_MAX_DEPTH)
        return pred_fail_at(P->err, PRED_E_LIMIT, P->tok.pos, "nesting deeper than %u levels",
                            PRED_MAX_DEPTH);
    return PRED_OK;
}

static pred_status parse_not(parser *P, uint32_t *out)
{
    pred_status st;
    const size_t pos = P->tok.pos;
    if (pred_lex_is_kw(P, K_NOT)) {
        uint32_t child;
        if ((st = enter(P)) != PRED_OK || (st = pred_lex_next(P)) != PRED_OK ||
            (st = parse_not(P, &child)) != PRED_OK ||
            (st = new_node(P, P_NOT, pos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].child = child;
        P->depth--;
        return PRED_OK;
    }
    if (P->tok.t == T_LPAREN) {
        if ((st = enter(P)) != PRED_OK || (st = pred_lex_next(P)) != PRED_OK ||
            (st = parse_or(P, out)) != PRED_OK)
            return st;
        if (P->tok.t != T_RPAREN)
            return pred_lex_expected(P, "')'");
        P->depth--;
        return pred_lex_next(P);
    }
    return parse_predicate(P, out);
}

/* left { OP right }: one n-ary node, so long chains do not deepen the tree. */
static pred_status parse_chain(parser *P, keyword kw, pkind kind,
                               pred_status (*sub)(parser *, uint32_t *), uint32_t *out)
{
    uint32_t first;
    pred_status st = sub(P, &first);
    if (st != PRED_OK || !pred_lex_is_kw(P, kw)) {
        *out = first;
        return st;
    }
    uint32_t node;
    if ((st = new_node(P, kind, P->tok.pos, &node)) != PRED_OK)
        return st;
    P->e->nodes[node].child = first;
    uint32_t last = first;
    while (pred_lex_is_kw(P, kw)) {
        uint32_t c;
        if ((st = pred_lex_next(P)) != PRED_OK || (st = sub(P, &c)) != PRED_OK)
            return st;
        P->e->nodes[last].next = c;
        last = c;
    }
    *out = node;
    return PRED_OK;
}

static pred_status parse_and(parser *P, uint32_t *out)
{
    return parse_chain(P, K_AND, P_AND, parse_not, out);
}

static pred_status parse_or(parser *P, uint32_t *out)
{
    return parse_chain(P, K_OR, P_OR, parse_and, out);
}

pred_status pred_parse(const char *text, size_t len, pred_expr **out, pred_error *err)
{
    if (!out || (!text && len))
        return sv_fail(err, PRED_E_INVALID, 0, "NULL argument");
    *out = NULL;
    if (len > PRED_MAX_TEXT)
        return pred_fail_at(err, PRED_E_LIMIT, PRED_MAX_TEXT, "predicate longer than %u bytes",
                            PRED_MAX_TEXT);
    pred_expr *e = calloc(1, sizeof *e);
    if (!e)
        return pred_nomem(err);
    parser P = {.s = text ? text : "", .n = len, .e = e, .err = err};
    pred_status st = pred_lex_next(&P);
    if (st == PRED_OK && P.tok.t == T_EOF)
        st = pred_fail_at(err, PRED_E_SYNTAX, P.tok.pos, "empty predicate");
    if (st == PRED_OK)
        st = parse_or(&P, &e->root);
    if (st == PRED_OK && P.tok.t != T_EOF)
        st = pred_lex_expected(&P, "AND, OR or end of input");
    if (st != PRED_OK) {
        pred_free(e);
        return st;
    }
    *out = e;
    return PRED_OK;
}
