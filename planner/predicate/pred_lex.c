/* The predicate's tokens: names (dotted, "quoted"), keywords, numbers,
 * strings and operators; see predicate_internal.h. */
#include "predicate_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const kw_text[] = {"AND", "OR",   "NOT",   "BETWEEN", "IN",   "IS",
                                      "NULL", "LIKE", "TRUE", "FALSE",   "DATE", "TIMESTAMP"};

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

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
    return pred_fail_at(P->err, PRED_E_SYNTAX, pos, "%s", what);
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

/* Punctuation and comparison operators, each longer spelling before its
 * prefix. */
typedef struct {
    const char *s;
    ttype t;
    int sub; /* cmp_op of a T_CMP */
} op_spelling;

static const op_spelling ops[] = {
    {"(", T_LPAREN, 0},     {")", T_RPAREN, 0},    {",", T_COMMA, 0},   {"-", T_MINUS, 0},
    {"=", T_CMP, OP_EQ},    {"!=", T_CMP, OP_NE},  {"<=", T_CMP, OP_LE}, {"<>", T_CMP, OP_NE},
    {"<", T_CMP, OP_LT},    {">=", T_CMP, OP_GE},  {">", T_CMP, OP_GT},
};

static const op_spelling *lex_op(const parser *P, size_t p)
{
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const size_t l = strlen(ops[i].s);
        if (l <= P->n - p && memcmp(P->s + p, ops[i].s, l) == 0)
            return &ops[i];
    }
    return NULL;
}

pred_status pred_lex_next(parser *P)
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
    case '(':
    case ')':
    case ',':
    case '-':
    case '=':
    case '!':
    case '<':
    case '>': {
        const op_spelling *op = lex_op(P, p);
        if (!op) /* only '!' has no spelling of its own */
            return lex_error(P, p, "expected '=' after '!'");
        t->t = op->t;
        t->sub = op->sub;
        end = p + strlen(op->s);
        break;
    }
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
            return pred_fail_at(P->err, PRED_E_SYNTAX, p, "unexpected character '%c'", c);
        return pred_fail_at(P->err, PRED_E_SYNTAX, p, "unexpected byte 0x%02x", (unsigned char)c);
    }
    t->len = end - p;
    P->p = end;
    return PRED_OK;
}

bool pred_lex_is_kw(const parser *P, keyword k)
{
    return P->tok.t == T_KW && P->tok.sub == (int)k;
}

pred_status pred_lex_expected(parser *P, const char *what)
{
    char buf[64];
    return pred_fail_at(P->err, PRED_E_SYNTAX, P->tok.pos, "expected %s, found %s", what,
                        tok_desc(P, buf, sizeof buf));
}
