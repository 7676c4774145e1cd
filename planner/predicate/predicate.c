/* SQL-like predicates over Parquet leaf columns; see predicate.h. */
#include "predicate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 pred_u128;

#define NONE UINT32_MAX
#define MAX_DIGITS 38 /* DECIMAL precision limit of pq_value.h */

/* Three-valued logic encoded so that AND is min, OR is max and NOT is 2 - x. */
enum { TF = 0, TN = 1, TT = 2 };

/* ---------------- errors ---------------- */

const char *pred_status_name(pred_status s)
{
    switch (s) {
    case PRED_OK: return "ok";
    case PRED_E_SYNTAX: return "syntax";
    case PRED_E_COLUMN: return "column";
    case PRED_E_TYPE: return "type";
    case PRED_E_LIMIT: return "limit";
    case PRED_E_NOMEM: return "nomem";
    case PRED_E_INVALID: return "invalid";
    }
    return "unknown";
}

/* An error about the text at byte pos: the message starts "at POS: ". */
static pred_status fail_at(pred_error *err, pred_status s, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static pred_status fail_at(pred_error *err, pred_status s, size_t pos, const char *fmt, ...)
{
    if (err) {
        char detail[SV_ERROR_MSG];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        sv_fail(err, s, pos, "at %zu: %s", pos, detail);
    }
    return s;
}

/* An error not tied to a place in the text (arguments, memory) is
 * sv_fail(err, s, 0, ...). */

/* Grow *p (element size sz) to hold at least need elements. */
static bool grow(void **p, uint32_t *cap, uint32_t need, size_t sz)
{
    if (need <= *cap)
        return true;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * sz);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* strcasecmp without locale: ASCII letters only, bytes unsigned. */
static int ascii_casecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        const int x = ascii_lower((unsigned char)*a), y = ascii_lower((unsigned char)*b);
        if (x != y || !x)
            return x - y;
    }
}

/* ---------------- dates and times ---------------- */

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool digits_at(const char *s, size_t n, size_t at, size_t count, int64_t *v)
{
    if (at + count > n)
        return false;
    int64_t x = 0;
    for (size_t i = 0; i < count; i++) {
        const char c = s[at + i];
        if (c < '0' || c > '9')
            return false;
        x = x * 10 + (c - '0');
    }
    *v = x;
    return true;
}

/* YYYY-MM-DD at the start of s; 10 bytes. */
static bool parse_ymd(const char *s, size_t n, int64_t *days)
{
    int64_t y, m, d;
    if (!digits_at(s, n, 0, 4, &y) || n < 10 || s[4] != '-' || !digits_at(s, n, 5, 2, &m) ||
        s[7] != '-' || !digits_at(s, n, 8, 2, &d))
        return false;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1)
        return false;
    if (d > mdays[m - 1] + (m == 2 && is_leap(y)))
        return false;
    *days = days_from_civil(y, m, d);
    return true;
}

static bool parse_date(const char *s, size_t n, int32_t *days)
{
    int64_t d;
    if (n != 10 || !parse_ymd(s, n, &d))
        return false;
    *days = (int32_t)d; /* years 0000..9999 fit easily */
    return true;
}

/* YYYY-MM-DD[( |T)HH:MM:SS[.f{1,9}]] in the literal's own frame. */
static bool parse_timestamp(const char *s, size_t n, int64_t *secs, uint32_t *nanos)
{
    int64_t days;
    if (!parse_ymd(s, n, &days))
        return false;
    int64_t h = 0, mi = 0, sec = 0, frac = 0;
    if (n > 10) {
        if ((s[10] != ' ' && s[10] != 'T') || !digits_at(s, n, 11, 2, &h) || n < 19 ||
            s[13] != ':' || !digits_at(s, n, 14, 2, &mi) || s[16] != ':' ||
            !digits_at(s, n, 17, 2, &sec))
            return false;
        if (h > 23 || mi > 59 || sec > 59)
            return false;
        size_t p = 19;
        if (p < n) {
            if (s[p] != '.')
                return false;
            p++;
            size_t nd = 0;
            while (p < n && s[p] >= '0' && s[p] <= '9' && nd < 9) {
                frac = frac * 10 + (s[p] - '0');
                p++;
                nd++;
            }
            if (nd == 0 || p != n)
                return false;
            for (; nd < 9; nd++)
                frac *= 10;
        }
    }
    *secs = days * 86400 + h * 3600 + mi * 60 + sec;
    *nanos = (uint32_t)frac;
    return true;
}

static int64_t unit_factor(pq_time_unit u)
{
    switch (u) {
    case PQ_UNIT_MILLIS: return 1000000;
    case PQ_UNIT_MICROS: return 1000;
    default: return 1;
    }
}

/* A timestamp literal as a value comparable with the column, in the
 * column's time frame: in the column's unit when that holds it exactly, else
 * in any unit that does (pqv_compare scales units), so that sub-unit
 * precision is kept and 9999-12-31 still compares with a nanos column. */
static bool timestamp_value(int64_t secs, uint32_t nanos, const pqv_type *t, pqv *out)
{
    const pq_i128 ns = (pq_i128)secs * 1000000000 + nanos;
    const pq_time_unit units[4] = {t->unit, PQ_UNIT_MILLIS, PQ_UNIT_MICROS, PQ_UNIT_NANOS};
    for (int i = 0; i < 4; i++) {
        const int64_t f = unit_factor(units[i]);
        if (ns % f)
            continue;
        const pq_i128 q = ns / f;
        if (q < INT64_MIN || q > INT64_MAX)
            continue;
        *out = pqv_timestamp((int64_t)q, units[i], t->adjusted_to_utc);
        return true;
    }
    return false;
}

/* ---------------- parsed form ---------------- */

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
    uint32_t n_nodes, cap_nodes;
    plit *lits;
    uint32_t n_lits, cap_lits;
    pname *names;
    uint32_t n_names, cap_names;
    uint32_t root;
};

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

/* ---------------- lexer ---------------- */

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

static const char *const kw_text[] = {"AND", "OR",   "NOT",   "BETWEEN", "IN",   "IS",
                                      "NULL", "LIKE", "TRUE", "FALSE",   "DATE", "TIMESTAMP"};

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

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_ident_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || is_digit(c);
}

/* Describe the current token for "found ..." in messages. */
static const char *tok_desc(const parser *P, char *buf, size_t n)
{
    if (P->tok.t == T_EOF)
        return "end of input";
    const size_t len = P->tok.len > 32 ? 32 : P->tok.len;
    bool printable = true;
    for (size_t i = 0; i < len; i++)
        printable &= (unsigned char)P->s[P->tok.pos + i] >= 0x20 &&
                     (unsigned char)P->s[P->tok.pos + i] < 0x7f;
    if (!printable)
        snprintf(buf, n, "a token with unprintable bytes");
    else
        snprintf(buf, n, "'%.*s%s'", (int)len, P->s + P->tok.pos, P->tok.len > len ? "..." : "");
    return buf;
}

static pred_status lex_error(parser *P, size_t pos, const char *what)
{
    return fail_at(P->err, PRED_E_SYNTAX, pos, "%s", what);
}

/* Scan a quoted run starting at P->s[p] == q ('' or "" escapes); returns the
 * index after the closing quote, or 0 when unterminated. */
static size_t scan_quoted(const parser *P, size_t p, char q)
{
    for (size_t i = p + 1; i < P->n; i++) {
        if (P->s[i] != q)
            continue;
        if (i + 1 < P->n && P->s[i + 1] == q) {
            i++;
            continue;
        }
        return i + 1;
    }
    return 0;
}

static pred_status next(parser *P)
{
    size_t p = P->p;
    while (p < P->n && is_space(P->s[p]))
        p++;
    token *t = &P->tok;
    t->pos = p;
    t->sub = 0;
    if (p >= P->n) {
        t->t = T_EOF;
        t->len = 0;
        P->p = p;
        return PRED_OK;
    }
    const char c = P->s[p];
    size_t end = p + 1;
    switch (c) {
    case '(': t->t = T_LPAREN; break;
    case ')': t->t = T_RPAREN; break;
    case ',': t->t = T_COMMA; break;
    case '-': t->t = T_MINUS; break;
    case '=': t->t = T_CMP; t->sub = OP_EQ; break;
    case '!':
        if (end >= P->n || P->s[end] != '=')
            return lex_error(P, p, "expected '=' after '!'");
        t->t = T_CMP;
        t->sub = OP_NE;
        end++;
        break;
    case '<':
        t->t = T_CMP;
        t->sub = OP_LT;
        if (end < P->n && P->s[end] == '=') {
            t->sub = OP_LE;
            end++;
        } else if (end < P->n && P->s[end] == '>') {
            t->sub = OP_NE;
            end++;
        }
        break;
    case '>':
        t->t = T_CMP;
        t->sub = OP_GT;
        if (end < P->n && P->s[end] == '=') {
            t->sub = OP_GE;
            end++;
        }
        break;
    case '\'':
        end = scan_quoted(P, p, '\'');
        if (!end)
            return lex_error(P, p, "unterminated string literal");
        t->t = T_STRING;
        break;
    default:
        if (is_digit(c) || (c == '.' && end < P->n && is_digit(P->s[end]))) {
            end = p;
            while (end < P->n && is_digit(P->s[end]))
                end++;
            if (end < P->n && P->s[end] == '.') {
                end++;
                while (end < P->n && is_digit(P->s[end]))
                    end++;
            }
            if (end < P->n && (P->s[end] == 'e' || P->s[end] == 'E')) {
                end++;
                if (end < P->n && (P->s[end] == '+' || P->s[end] == '-'))
                    end++;
                if (end >= P->n || !is_digit(P->s[end]))
                    return lex_error(P, p, "malformed number: exponent without digits");
                while (end < P->n && is_digit(P->s[end]))
                    end++;
            }
            if (end < P->n && (is_ident_char(P->s[end]) || P->s[end] == '.'))
                return lex_error(P, p, "malformed number");
            t->t = T_NUMBER;
            break;
        }
        if (c == '"' || is_ident_start(c)) {
            /* segment { '.' segment }: one token, split again when interned */
            end = p;
            for (;;) {
                if (P->s[end] == '"') {
                    const size_t q = scan_quoted(P, end, '"');
                    if (!q)
                        return lex_error(P, end, "unterminated quoted identifier");
                    end = q;
                } else {
                    while (end < P->n && is_ident_char(P->s[end]))
                        end++;
                }
                if (end >= P->n || P->s[end] != '.')
                    break;
                if (end + 1 >= P->n || (P->s[end + 1] != '"' && !is_ident_start(P->s[end + 1])))
                    return lex_error(P, end, "expected a name after '.'");
                end++;
            }
            t->t = T_IDENT;
            if (c != '"' && memchr(P->s + p, '.', end - p) == NULL) {
                for (int k = 0; k <= K_TIMESTAMP; k++) {
                    const char *kw = kw_text[k];
                    const size_t kl = strlen(kw);
                    if (kl != end - p)
                        continue;
                    size_t i = 0;
                    while (i < kl && ascii_lower((unsigned char)P->s[p + i]) == ascii_lower(kw[i]))
                        i++;
                    if (i < kl)
                        continue;
                    if (k == K_DATE || k == K_TIMESTAMP) {
                        /* keywords only before a string, so columns may be called date */
                        size_t q = end;
                        while (q < P->n && is_space(P->s[q]))
                            q++;
                        if (q >= P->n || P->s[q] != '\'')
                            break;
                    }
                    t->t = T_KW;
                    t->sub = k;
                    break;
                }
            }
            break;
        }
        if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
            return fail_at(P->err, PRED_E_SYNTAX, p, "unexpected character '%c'", c);
        return fail_at(P->err, PRED_E_SYNTAX, p, "unexpected byte 0x%02x", (unsigned char)c);
    }
    t->len = end - p;
    P->p = end;
    return PRED_OK;
}

static bool is_kw(const parser *P, keyword k)
{
    return P->tok.t == T_KW && P->tok.sub == (int)k;
}

static pred_status expected(parser *P, const char *what)
{
    char buf[64];
    return fail_at(P->err, PRED_E_SYNTAX, P->tok.pos, "expected %s, found %s", what,
                   tok_desc(P, buf, sizeof buf));
}

/* ---------------- parser ---------------- */

static pred_status nomem(pred_error *err)
{
    return sv_fail(err, PRED_E_NOMEM, 0, "out of memory");
}

static pred_status new_node(parser *P, pkind kind, size_t pos, uint32_t *out)
{
    pred_expr *e = P->e;
    if (e->n_nodes >= PRED_MAX_NODES)
        return fail_at(P->err, PRED_E_LIMIT, pos, "more than %u predicate nodes",
                       PRED_MAX_NODES);
    if (!grow((void **)&e->nodes, &e->cap_nodes, e->n_nodes + 1, sizeof *e->nodes))
        return nomem(P->err);
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
    if (!grow((void **)&e->lits, &e->cap_lits, e->n_lits + 1, sizeof *e->lits))
        return nomem(P->err);
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
        return nomem(P->err);
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
                    return fail_at(P->err, PRED_E_SYNTAX, P->tok.pos + i,
                                   "NUL byte in a quoted identifier");
                }
                name[o++] = s[i];
            }
            if (o == start) {
                free(name);
                return fail_at(P->err, PRED_E_SYNTAX, P->tok.pos, "empty quoted identifier");
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
    if (!grow((void **)&e->names, &e->cap_names, e->n_names + 1, sizeof *e->names)) {
        free(name);
        return nomem(P->err);
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
        return fail_at(P->err, PRED_E_LIMIT, P->tok.pos, "string literal longer than %u bytes",
                       PRED_MAX_STRING);
    *s = unquote(P->s + P->tok.pos + 1, n, '\'', len);
    return *s ? PRED_OK : nomem(P->err);
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
            return nomem(P->err);
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
            return fail_at(P->err, PRED_E_SYNTAX, l->pos, "malformed float literal");
        if (isinf(f))
            return fail_at(P->err, PRED_E_SYNTAX, l->pos, "float literal out of range");
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
            return fail_at(P->err, PRED_E_SYNTAX, l->pos,
                           "numeric literal has more than %d digits after the point",
                           MAX_DIGITS);
        if (sig == 0 && s[i] == '0')
            continue; /* leading zeros do not count */
        if (++sig > MAX_DIGITS)
            return fail_at(P->err, PRED_E_SYNTAX, l->pos,
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
            return nomem(P->err);
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
        if ((st = next(P)) != PRED_OK)
            return st;
        if (P->tok.t != T_NUMBER)
            return expected(P, "a number after '-'");
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
    } else if (is_kw(P, K_TRUE) || is_kw(P, K_FALSE)) {
        l->kind = L_BOOL;
        l->b = is_kw(P, K_TRUE);
    } else if (is_kw(P, K_NULL)) {
        l->kind = L_NULL;
    } else if (is_kw(P, K_DATE) || is_kw(P, K_TIMESTAMP)) {
        const bool date = is_kw(P, K_DATE);
        if ((st = next(P)) != PRED_OK)
            return st;
        char *s;
        uint32_t n;
        if ((st = string_token(P, &s, &n)) != PRED_OK)
            return st;
        bool ok;
        if (date) {
            l->kind = L_DATE;
            ok = parse_date(s, n, &l->days);
        } else {
            l->kind = L_TIMESTAMP;
            ok = parse_timestamp(s, n, &l->secs, &l->nanos);
        }
        free(s);
        if (!ok)
            return fail_at(P->err, PRED_E_SYNTAX, P->tok.pos, "bad %s literal: expected '%s'",
                           date ? "DATE" : "TIMESTAMP",
                           date ? "YYYY-MM-DD" : "YYYY-MM-DD[ HH:MM:SS[.fffffffff]]");
    } else {
        return expected(P, "a literal");
    }
    if (st != PRED_OK)
        return st;
    return next(P);
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
        return st != PRED_OK ? st : next(P);
    }
    o->is_col = false;
    switch (P->tok.t) {
    case T_NUMBER:
    case T_STRING:
    case T_MINUS:
        return parse_literal(P, &o->lit);
    case T_KW:
        if (is_kw(P, K_TRUE) || is_kw(P, K_FALSE) || is_kw(P, K_NULL) || is_kw(P, K_DATE) ||
            is_kw(P, K_TIMESTAMP))
            return parse_literal(P, &o->lit);
        break;
    default:
        break;
    }
    return expected(P, "a column or a literal");
}

static pred_status need_column(parser *P, const operand *o, const char *what)
{
    if (o->is_col)
        return PRED_OK;
    return fail_at(P->err, PRED_E_SYNTAX, o->pos, "%s needs a column on its left", what);
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

static pred_status parse_predicate(parser *P, uint32_t *out)
{
    operand left, right;
    pred_status st = parse_operand(P, &left);
    if (st != PRED_OK)
        return st;
    const size_t pos = P->tok.pos;
    if (P->tok.t == T_CMP) {
        cmp_op op = (cmp_op)P->tok.sub;
        if ((st = next(P)) != PRED_OK || (st = parse_operand(P, &right)) != PRED_OK)
            return st;
        if (left.is_col && right.is_col)
            return fail_at(P->err, PRED_E_SYNTAX, pos,
                           "comparison of two columns is not supported");
        if (!left.is_col && !right.is_col)
            return fail_at(P->err, PRED_E_SYNTAX, pos, "a comparison needs a column on one side");
        if (!left.is_col) {
            const operand t = left;
            left = right;
            right = t;
            op = flip(op); /* 5 < x is x > 5 */
        }
        if ((st = column_node(P, P_CMP, &left, pos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].op = (uint8_t)op;
        P->e->nodes[*out].lit = right.lit;
        P->e->nodes[*out].nlit = 1;
        return PRED_OK;
    }
    bool neg = false;
    if (is_kw(P, K_NOT)) {
        neg = true;
        if ((st = next(P)) != PRED_OK)
            return st;
        if (!is_kw(P, K_BETWEEN) && !is_kw(P, K_IN) && !is_kw(P, K_LIKE))
            return expected(P, "BETWEEN, IN or LIKE after NOT");
    }
    const size_t kpos = P->tok.pos;
    if (is_kw(P, K_BETWEEN)) {
        uint32_t lo, hi;
        if ((st = need_column(P, &left, "BETWEEN")) != PRED_OK || (st = next(P)) != PRED_OK ||
            (st = parse_literal(P, &lo)) != PRED_OK)
            return st;
        if (!is_kw(P, K_AND))
            return expected(P, "AND between the bounds of BETWEEN");
        if ((st = next(P)) != PRED_OK || (st = parse_literal(P, &hi)) != PRED_OK)
            return st;
        if ((st = column_node(P, P_BETWEEN, &left, kpos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].lit = lo; /* hi == lo + 1: literals are appended in order */
        P->e->nodes[*out].nlit = 2;
        P->e->nodes[*out].neg = neg;
        return PRED_OK;
    }
    if (is_kw(P, K_IN)) {
        if ((st = need_column(P, &left, "IN")) != PRED_OK || (st = next(P)) != PRED_OK)
            return st;
        if (P->tok.t != T_LPAREN)
            return expected(P, "'(' after IN");
        if ((st = next(P)) != PRED_OK)
            return st;
        uint32_t first = NONE, count = 0;
        for (;;) {
            uint32_t li;
            if (count == PRED_MAX_IN_ITEMS)
                return fail_at(P->err, PRED_E_LIMIT, P->tok.pos,
                               "IN list longer than %u items", PRED_MAX_IN_ITEMS);
            if ((st = parse_literal(P, &li)) != PRED_OK)
                return st;
            if (first == NONE)
                first = li;
            count++;
            if (P->tok.t == T_RPAREN)
                break;
            if (P->tok.t != T_COMMA)
                return expected(P, "',' or ')' in the IN list");
            if ((st = next(P)) != PRED_OK)
                return st;
        }
        if ((st = next(P)) != PRED_OK || (st = column_node(P, P_IN, &left, kpos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].lit = first;
        P->e->nodes[*out].nlit = count;
        P->e->nodes[*out].neg = neg;
        return PRED_OK;
    }
    if (is_kw(P, K_LIKE)) {
        if ((st = need_column(P, &left, "LIKE")) != PRED_OK || (st = next(P)) != PRED_OK)
            return st;
        if (P->tok.t != T_STRING)
            return expected(P, "a string pattern after LIKE");
        for (size_t i = P->tok.pos + 1; i + 1 < P->tok.pos + P->tok.len; i++)
            if (P->s[i] == '_' || P->s[i] == '\\')
                return fail_at(P->err, PRED_E_SYNTAX, i,
                               "LIKE supports only %% wildcards ('%c' is not supported)",
                               P->s[i]);
        uint32_t li;
        if ((st = parse_literal(P, &li)) != PRED_OK ||
            (st = column_node(P, P_LIKE, &left, kpos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].lit = li;
        P->e->nodes[*out].nlit = 1;
        P->e->nodes[*out].neg = neg;
        return PRED_OK;
    }
    if (is_kw(P, K_IS)) {
        if ((st = need_column(P, &left, "IS NULL")) != PRED_OK || (st = next(P)) != PRED_OK)
            return st;
        if (is_kw(P, K_NOT)) {
            neg = true;
            if ((st = next(P)) != PRED_OK)
                return st;
        }
        if (!is_kw(P, K_NULL))
            return expected(P, neg ? "NULL after IS NOT" : "NULL or NOT NULL after IS");
        if ((st = next(P)) != PRED_OK ||
            (st = column_node(P, P_ISNULL, &left, kpos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].neg = neg;
        return PRED_OK;
    }
    if (left.is_col)
        return column_node(P, P_COLUMN, &left, left.pos, out);
    const lit_kind lk = P->e->lits[left.lit].kind;
    if (lk != L_BOOL && lk != L_NULL)
        return expected(P, "a comparison after the literal");
    if ((st = new_node(P, P_CONST, left.pos, out)) != PRED_OK)
        return st;
    P->e->nodes[*out].lit = left.lit;
    P->e->nodes[*out].nlit = 1;
    return PRED_OK;
}

static pred_status enter(parser *P)
{
    if (++P->depth > PRED_MAX_DEPTH)
        return fail_at(P->err, PRED_E_LIMIT, P->tok.pos, "nesting deeper than %u levels",
                       PRED_MAX_DEPTH);
    return PRED_OK;
}

static pred_status parse_not(parser *P, uint32_t *out)
{
    pred_status st;
    const size_t pos = P->tok.pos;
    if (is_kw(P, K_NOT)) {
        uint32_t child;
        if ((st = enter(P)) != PRED_OK || (st = next(P)) != PRED_OK ||
            (st = parse_not(P, &child)) != PRED_OK ||
            (st = new_node(P, P_NOT, pos, out)) != PRED_OK)
            return st;
        P->e->nodes[*out].child = child;
        P->depth--;
        return PRED_OK;
    }
    if (P->tok.t == T_LPAREN) {
        if ((st = enter(P)) != PRED_OK || (st = next(P)) != PRED_OK ||
            (st = parse_or(P, out)) != PRED_OK)
            return st;
        if (P->tok.t != T_RPAREN)
            return expected(P, "')'");
        P->depth--;
        return next(P);
    }
    return parse_predicate(P, out);
}

/* left { OP right }: one n-ary node, so long chains do not deepen the tree. */
static pred_status parse_chain(parser *P, keyword kw, pkind kind,
                               pred_status (*sub)(parser *, uint32_t *), uint32_t *out)
{
    uint32_t first;
    pred_status st = sub(P, &first);
    if (st != PRED_OK || !is_kw(P, kw)) {
        *out = first;
        return st;
    }
    uint32_t node;
    if ((st = new_node(P, kind, P->tok.pos, &node)) != PRED_OK)
        return st;
    P->e->nodes[node].child = first;
    uint32_t last = first;
    while (is_kw(P, kw)) {
        uint32_t c;
        if ((st = next(P)) != PRED_OK || (st = sub(P, &c)) != PRED_OK)
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
        return fail_at(err, PRED_E_LIMIT, PRED_MAX_TEXT, "predicate longer than %u bytes",
                       PRED_MAX_TEXT);
    pred_expr *e = calloc(1, sizeof *e);
    if (!e)
        return nomem(err);
    parser P = {.s = text ? text : "", .n = len, .e = e, .err = err};
    pred_status st = next(&P);
    if (st == PRED_OK && P.tok.t == T_EOF)
        st = fail_at(err, PRED_E_SYNTAX, P.tok.pos, "empty predicate");
    if (st == PRED_OK)
        st = parse_or(&P, &e->root);
    if (st == PRED_OK && P.tok.t != T_EOF)
        st = expected(&P, "AND, OR or end of input");
    if (st != PRED_OK) {
        pred_free(e);
        return st;
    }
    *out = e;
    return PRED_OK;
}

/* ---------------- binding ---------------- */

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
} bcol;

struct pred_bound {
    bnode *nodes;
    uint32_t n_nodes, cap_nodes;
    pqv *vals;
    uint32_t n_vals, cap_vals;
    uint8_t *bytes; /* copies of string literals; BYTES vals point here */
    size_t n_bytes, cap_bytes;
    bcol *cols;
    uint32_t ncols, cap_cols;
    uint32_t root;
    uint32_t height; /* tree height: scratch buffers pred_eval needs */
};

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
    const char *path;
    uint32_t leaf;
} leaf_key;

static int cmp_exact(const void *a, const void *b)
{
    return strcmp(((const leaf_key *)a)->path, ((const leaf_key *)b)->path);
}

static int cmp_nocase(const void *a, const void *b)
{
    return ascii_casecmp(((const leaf_key *)a)->path, ((const leaf_key *)b)->path);
}

typedef struct {
    const pred_expr *e;
    const pq_file_meta *m;
    pred_bound *b;
    pred_error *err;
    uint32_t *name_col;  /* per name: bound column, or NONE until first use */
    leaf_key *by_exact;  /* leaves sorted by path, built at first resolution */
    leaf_key *by_nocase; /* leaves sorted by path without case */
} binder;

/* [lo, hi) of keys equal to path under cmp. */
static void equal_range(const leaf_key *keys, uint32_t n, const char *path,
                        int (*cmp)(const void *, const void *), uint32_t *lo, uint32_t *hi)
{
    const leaf_key k = {.path = path};
    uint32_t a = 0, z = n;
    while (a < z) {
        const uint32_t mid = a + (z - a) / 2;
        if (cmp(&keys[mid], &k) < 0)
            a = mid + 1;
        else
            z = mid;
    }
    *lo = a;
    z = n;
    while (a < z) {
        const uint32_t mid = a + (z - a) / 2;
        if (cmp(&keys[mid], &k) <= 0)
            a = mid + 1;
        else
            z = mid;
    }
    *hi = a;
}

static pred_status find_leaf(binder *B, uint32_t name, uint32_t *leaf)
{
    const pq_file_meta *m = B->m;
    const char *s = B->e->names[name].s;
    const size_t pos = B->e->names[name].pos;
    if (!B->by_exact) {
        const size_t n = m->n_leaves ? m->n_leaves : 1;
        B->by_exact = malloc(n * sizeof *B->by_exact);
        B->by_nocase = malloc(n * sizeof *B->by_nocase);
        if (!B->by_exact || !B->by_nocase)
            return nomem(B->err);
        for (uint32_t i = 0; i < m->n_leaves; i++) {
            B->by_exact[i].path = m->leaves[i].path ? m->leaves[i].path : "";
            B->by_exact[i].leaf = i;
        }
        memcpy(B->by_nocase, B->by_exact, m->n_leaves * sizeof *B->by_exact);
        qsort(B->by_exact, m->n_leaves, sizeof *B->by_exact, cmp_exact);
        qsort(B->by_nocase, m->n_leaves, sizeof *B->by_nocase, cmp_nocase);
    }
    uint32_t lo, hi;
    const leaf_key *keys = B->by_exact;
    equal_range(keys, m->n_leaves, s, cmp_exact, &lo, &hi);
    if (hi == lo) {
        keys = B->by_nocase;
        equal_range(keys, m->n_leaves, s, cmp_nocase, &lo, &hi);
    }
    if (hi == lo)
        return fail_at(B->err, PRED_E_COLUMN, pos, "unknown column '%s'", s);
    if (hi - lo > 1) {
        /* report the two first in schema order for a stable message */
        uint32_t a = keys[lo].leaf, b = keys[lo + 1].leaf;
        for (uint32_t i = lo + 2; i < hi; i++) {
            const uint32_t l = keys[i].leaf;
            if (l < a) {
                b = a;
                a = l;
            } else if (l < b) {
                b = l;
            }
        }
        if (b < a) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        return fail_at(B->err, PRED_E_COLUMN, pos,
                       "column name '%s' is ambiguous: it matches '%s' and '%s'", s,
                       m->leaves[a].path, m->leaves[b].path);
    }
    *leaf = keys[lo].leaf;
    return PRED_OK;
}

/* The bound column of name (resolved and added at first use). */
static pred_status use_column(binder *B, uint32_t name, size_t pos, uint32_t *col)
{
    if (B->name_col[name] != NONE) {
        *col = B->name_col[name];
        return PRED_OK;
    }
    uint32_t leaf = 0;
    pred_status st = find_leaf(B, name, &leaf);
    if (st != PRED_OK)
        return st;
    const pq_leaf *L = &B->m->leaves[leaf];
    if (L->max_rep > 0)
        return fail_at(B->err, PRED_E_TYPE, pos,
                       "repeated column '%s' is not supported (lists and maps have no single "
                       "value per row)",
                       L->path);
    pred_bound *b = B->b;
    for (uint32_t i = 0; i < b->ncols; i++) {
        if (b->cols[i].leaf == leaf) {
            *col = B->name_col[name] = i; /* another spelling of a column in use */
            return PRED_OK;
        }
    }
    if (!grow((void **)&b->cols, &b->cap_cols, b->ncols + 1, sizeof *b->cols))
        return nomem(B->err);
    bcol *c = &b->cols[b->ncols];
    memset(c, 0, sizeof *c);
    c->leaf = leaf;
    c->path = strdup(L->path ? L->path : "");
    if (!c->path)
        return nomem(B->err);
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
        return fail_at(B->err, PRED_E_TYPE, pos,
                       "column %s cannot be used in %s: %s (only IS [NOT] NULL works on it)",
                       c->path, what, perr.msg);
    }
    if (c->type.kind == PQV_TIME)
        return fail_at(B->err, PRED_E_TYPE, pos,
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
    return fail_at(B->err, PRED_E_TYPE, l->pos, "cannot compare column %s (%s) with %s", c->path,
                   t, lit_desc(l->kind));
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
            if (!parse_date(l->s, l->slen, &days))
                return fail_at(B->err, PRED_E_TYPE, l->pos,
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
            if (!parse_timestamp(l->s, l->slen, &secs, &nanos))
                return fail_at(B->err, PRED_E_TYPE, l->pos,
                               "cannot compare column %s (TIMESTAMP) with a string literal that "
                               "is not a timestamp 'YYYY-MM-DD[ HH:MM:SS[.fffffffff]]'",
                               c->path);
        } else {
            return type_mismatch(B, c, l);
        }
        if (!timestamp_value(secs, nanos, &c->type, out))
            return fail_at(B->err, PRED_E_TYPE, l->pos,
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
    return fail_at(B->err, PRED_E_TYPE, l->pos, "cannot compare column %s (%s)", c->path, t);
}

static pred_status bnode_new(binder *B, bkind kind, uint32_t *out)
{
    pred_bound *b = B->b;
    if (!grow((void **)&b->nodes, &b->cap_nodes, b->n_nodes + 1, sizeof *b->nodes))
        return nomem(B->err);
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
    if (!grow((void **)&b->vals, &b->cap_vals, b->n_vals + 1, sizeof *b->vals))
        return nomem(B->err);
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
    uint32_t vi;
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
        uint32_t ge, le, and_node;
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
        uint32_t in;
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
            return fail_at(B->err, PRED_E_TYPE, p->pos,
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
        uint32_t like;
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
            return fail_at(B->err, PRED_E_TYPE, p->name_pos,
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

pred_status pred_bind(const pred_expr *e, const pq_file_meta *m, pred_bound **out,
                      pred_error *err)
{
    if (!e || !m || !out || (m->n_leaves && !m->leaves))
        return sv_fail(err, PRED_E_INVALID, 0, "NULL argument");
    *out = NULL;
    pred_bound *b = calloc(1, sizeof *b);
    binder B = {.e = e, .m = m, .b = b, .err = err};
    size_t nbytes = 1;
    for (uint32_t i = 0; i < e->n_lits; i++)
        if (e->lits[i].kind == L_STRING)
            nbytes += e->lits[i].slen;
    bool vals_ok = false;
    if (b) {
        b->bytes = malloc(nbytes);
        b->cap_bytes = nbytes;
        /* never NULL, so that &vals[i] of an empty IN list is well-defined */
        vals_ok = grow((void **)&b->vals, &b->cap_vals, 1, sizeof *b->vals);
    }
    B.name_col = malloc((e->n_names ? e->n_names : 1) * sizeof *B.name_col);
    pred_status st = PRED_OK;
    if (!b || !b->bytes || !vals_ok || !B.name_col) {
        st = nomem(err);
    } else {
        for (uint32_t i = 0; i < e->n_names; i++)
            B.name_col[i] = NONE;
        st = bind_node(&B, e->root, &b->root, &b->height);
    }
    free(B.name_col);
    free(B.by_exact);
    free(B.by_nocase);
    if (st != PRED_OK) {
        pred_bound_free(b);
        return st;
    }
    *out = b;
    return PRED_OK;
}

/* ---------------- evaluation ---------------- */

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

/* Index of the first of vals[0..n) >= v (n if none); *eq when equal. */
static uint32_t lower_bound(const pqv *vals, uint32_t n, const pqv *v, bool *eq, bool *incomparable)
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
        lower_bound(vals, nd->nval, &c->values[r], &eq, &inc);
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
        return nomem(err);
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

/* ---------------- statistics ---------------- */

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
    const uint32_t k = lower_bound(vals, nd->nval, &r->s.min, &eq, &inc);
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
