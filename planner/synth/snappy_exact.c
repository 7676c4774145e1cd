/* SNAPPY streams of an exact size, for rebuilt SNAPPY pages. */
#include "page_plan_internal.h"

#include "sv_grow.h"

#include <stdlib.h>
#include <string.h>

/* The content is cut into literals and repeats (a run of bytes equal to
 * the byte `off` positions back, off <= 8). A repeat of R bytes is written
 * as overlapping copies: copy-1 (2 bytes, 4..11 long), copy-2 (3 bytes, 1..64
 * long) and copy-4 (5 bytes, 1..64 long); a literal of n bytes as p pieces of
 * at most 60 bytes (n + p bytes). Choosing the copy mix of every repeat and
 * the piece count of every literal reaches any size between the shortest
 * and the longest form. */
#define SN_MIN_REPEAT 12u
#define SN_MAX_OFF 8u

typedef struct {
    uint64_t lit;     /* literal bytes before the repeat */
    uint64_t rep;     /* repeated bytes (0: trailing literal only) */
    uint32_t off;
    /* chosen form */
    uint64_t pieces;  /* literal pieces */
    uint64_t m1, m2, m4;
} sn_tok;

typedef struct {
    sn_tok *t;
    size_t n, cap;
} sn_toks;

static bool sn_push(sn_toks *v, uint64_t lit, uint64_t rep, uint32_t off)
{
    if (!sv_grow((void **)&v->t, &v->cap, v->n + 1, sizeof *v->t, 64, SIZE_MAX))
        return false;
    v->t[v->n++] = (sn_tok){.lit = lit, .rep = rep, .off = off};
    return true;
}

static bool sn_tokenize(const uint8_t *src, uint64_t len, sn_toks *v)
{
    uint64_t i = 1, lit_start = 0;
    while (i < len) {
        uint64_t best = 0;
        uint32_t best_off = 0;
        for (uint32_t o = 1; o <= SN_MAX_OFF && o <= i; o++) {
            uint64_t l = 0;
            while (i + l < len && src[i + l] == src[i + l - o])
                l++;
            if (l > best) {
                best = l;
                best_off = o;
            }
            if (best >= 64)
                break;
        }
        if (best >= SN_MIN_REPEAT) {
            if (!sn_push(v, i - lit_start, best, best_off))
                return false;
            i += best;
            lit_start = i;
        } else {
            i++;
        }
    }
    if (len > lit_start)
        return sn_push(v, len - lit_start, 0, 0);
    return true;
}

/* Copy mix of exactly t bytes for a repeat of r bytes: m1 copy-1, m2
 * copy-2, m4 copy-4 with 2*m1 + 3*m2 + 5*m4 == t and lengths that can add
 * up to r. */
static bool sn_copies(uint64_t r, uint64_t t, uint64_t *m1o, uint64_t *m2o, uint64_t *m4o)
{
    for (uint64_t m1 = 0; m1 <= 2; m1++) {
        if (2 * m1 > t || 4 * m1 > r)
            continue;
        const uint64_t u = t - 2 * m1;
        /* m4 bounds from: m2 >= 0, 4 m1 + m2 + m4 <= r, 11 m1 + 64 (m2 + m4) >= r. */
        const int64_t lo_c1 = ((int64_t)u + 12 * (int64_t)m1 - 3 * (int64_t)r + 1) / 2;
        uint64_t lo = lo_c1 > 0 ? (uint64_t)lo_c1 : 0;
        const int64_t hi_c2 = (64 * (int64_t)u - 3 * ((int64_t)r - 11 * (int64_t)m1)) / 128;
        if (hi_c2 < 0)
            continue;
        uint64_t hi = u / 5 < (uint64_t)hi_c2 ? u / 5 : (uint64_t)hi_c2;
        /* (u - 5 m4) divisible by 3: m4 = 2u mod 3. */
        const uint64_t want = (2 * u) % 3;
        while (lo % 3 != want)
            lo++;
        for (uint64_t m4 = lo; m4 <= hi && m4 <= lo + 6; m4 += 3) {
            const uint64_t m2 = (u - 5 * m4) / 3;
            const uint64_t cnt = m2 + m4;
            if (4 * m1 + cnt <= r && 11 * m1 + 64 * cnt >= r && (m1 + cnt) > 0) {
                *m1o = m1;
                *m2o = m2;
                *m4o = m4;
                return true;
            }
        }
    }
    return false;
}

static uint64_t sn_lit_pieces_min(uint64_t n)
{
    return (n + 59) / 60;
}

static size_t sn_put_literal(uint8_t *o, const uint8_t *src, uint64_t n)
{
    o[0] = (uint8_t)((n - 1) << 2);
    memcpy(o + 1, src, n);
    return 1 + n;
}

/* Spread total over count parts each in [lo, hi]; part i. */
static uint64_t sn_part(uint64_t total, uint64_t count, uint64_t lo, uint64_t i)
{
    const uint64_t extra = total - lo * count;
    return lo + extra / count + (i < extra % count);
}

/* src[0..len) as a snappy stream of exactly room bytes into *out (malloc'd). */
bool pp_snappy_exact(const uint8_t *src, uint64_t len, uint64_t room, uint8_t **out)
{
    sn_toks v = {0};
    bool ok = false;
    uint8_t *o = NULL;
    if (len > UINT32_MAX || !sn_tokenize(src, len, &v))
        goto done;
    /* Shortest form. */
    uint64_t size = ulen(len);
    for (size_t i = 0; i < v.n; i++) {
        sn_tok *t = &v.t[i];
        t->pieces = sn_lit_pieces_min(t->lit);
        size += t->lit + t->pieces;
        if (t->rep) {
            uint64_t best = 0;
            const uint64_t base = 3 * ((t->rep + 63) / 64);
            for (uint64_t c = base > 2 ? base - 2 : 1; c <= base; c++)
                if (sn_copies(t->rep, c, &t->m1, &t->m2, &t->m4)) {
                    best = c;
                    break;
                }
            if (!best)
                goto done;
            size += best;
        }
    }
    if (size > room)
        goto done;
    /* Lengthen: repeats first (up to 5 bytes per byte), then literal pieces. */
    uint64_t d = room - size;
    for (size_t i = 0; i < v.n && d > 0; i++) {
        sn_tok *t = &v.t[i];
        if (!t->rep)
            continue;
        const uint64_t cur = 2 * t->m1 + 3 * t->m2 + 5 * t->m4;
        const uint64_t cap = 5 * t->rep - cur;
        uint64_t add = d < cap ? d : cap;
        for (; add > 0; add--)
            if (sn_copies(t->rep, cur + add, &t->m1, &t->m2, &t->m4))
                break;
        d -= add;
    }
    for (size_t i = 0; i < v.n && d > 0; i++) {
        sn_tok *t = &v.t[i];
        const uint64_t cap = t->lit - t->pieces;
        const uint64_t add = d < cap ? d : cap;
        t->pieces += add;
        d -= add;
    }
    if (d > 0)
        goto done;
    o = malloc(room ? room : 1);
    if (!o)
        goto done;
    size_t n = put_uleb(o, len);
    uint64_t at = 0;
    for (size_t i = 0; i < v.n; i++) {
        const sn_tok *t = &v.t[i];
        for (uint64_t k = 0; k < t->pieces; k++) {
            const uint64_t pl = sn_part(t->lit, t->pieces, 1, k);
            n += sn_put_literal(o + n, src + at, pl);
            at += pl;
        }
        if (!t->rep)
            continue;
        /* Copy-1 lengths from 4, the others from 1, spread over the repeat. */
        const uint64_t cnt = t->m1 + t->m2 + t->m4;
        uint64_t left = t->rep - 4 * t->m1 - (t->m2 + t->m4);
        for (uint64_t k = 0; k < cnt; k++) {
            const bool c1 = k < t->m1, c4 = !c1 && k >= t->m1 + t->m2;
            const uint64_t room_k = c1 ? 7 : 63;
            const uint64_t add = left < room_k ? left : room_k;
            const uint64_t l = (c1 ? 4 : 1) + add;
            left -= add;
            if (c1) {
                o[n++] = (uint8_t)(1 | ((l - 4) << 2) | ((t->off >> 8) << 5));
                o[n++] = (uint8_t)t->off;
            } else if (!c4) {
                o[n++] = (uint8_t)(2 | ((l - 1) << 2));
                o[n++] = (uint8_t)t->off;
                o[n++] = (uint8_t)(t->off >> 8);
            } else {
                o[n++] = (uint8_t)(3 | ((l - 1) << 2));
                put_le32(o + n, t->off);
                n += 4;
            }
            at += l;
        }
        if (left)
            goto done;
    }
    ok = n == room && at == len;
done:
    free(v.t);
    if (ok)
        *out = o;
    else
        free(o);
    return ok;
}
