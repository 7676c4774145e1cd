/* Which values the selected rows hold: the definition levels are fetched
 * and scanned into ranges of non-null value indexes. */
#include "page_plan_internal.h"

#include "rle_hybrid.h"
#include "sv_grow.h"

#include <stdlib.h>
#include <string.h>

static bool vr_push(plan *p, uint32_t a, uint32_t b)
{
    if (a == b)
        return true;
    if (p->n_vr && p->vr[p->n_vr - 1].b == a) {
        p->vr[p->n_vr - 1].b = b;
        return true;
    }
    if (!sv_grow((void **)&p->vr, &p->cap_vr, (size_t)p->n_vr + 1, sizeof *p->vr, 16,
                 UINT32_MAX))
        return false;
    p->vr[p->n_vr++] = (vrange){a, b};
    return true;
}

/* Fetch the definition level runs (none when max_def is 0): V1 in the
 * section after a 4-byte length, V2 the real bytes before the section. Sets
 * p->lev, p->lev_len and p->vstart. */
static st levels_fetch(plan *p, const stream *s)
{
    p->vstart = 0;
    free(p->lev);
    p->lev = NULL;
    p->lev_len = 0;
    if (p->in->col.max_def == 0)
        return ST_OK;
    if (p->v2) {
        const uint8_t *b = pp_bytes_get(p->kb, p->hl + p->rl, p->dl);
        if (!b)
            return pp_need(p, p->hl + p->rl, p->dl);
        p->lev = malloc(p->dl ? p->dl : 1);
        if (!p->lev)
            return pp_nomem(p, "levels");
        memcpy(p->lev, b, p->dl);
        p->lev_len = p->dl;
        return ST_OK;
    }
    if (p->info.def_level_encoding != PQ_ENC_RLE)
        return pp_real(p, "levels: V1 definition levels encoded %s",
                       pq_encoding_name(p->info.def_level_encoding));
    uint8_t lb[4];
    if (!pp_stream_copy(p, s, 0, 4, lb)) {
        const st r = pp_stream_want(p, s, 0, 4, true);
        return r == ST_OK ? ST_NEED : r;
    }
    const uint32_t L = get_le32(lb);
    if (L > s->dlen - 4)
        return pp_real(p, "levels: length %u runs past the %llu-byte body", L,
                       (unsigned long long)s->dlen);
    p->lev = malloc(L ? L : 1);
    if (!p->lev)
        return pp_nomem(p, "levels");
    if (!pp_stream_copy(p, s, 4, L, p->lev)) {
        free(p->lev);
        p->lev = NULL;
        const st r = pp_stream_want(p, s, 4, L, true);
        return r == ST_OK ? ST_NEED : r;
    }
    p->lev_len = L;
    p->vstart = 4 + L;
    return ST_OK;
}

/* Decode the levels: p->k non-null entries, and the non-null value ranges
 * of the selected rows. */
static st levels_scan(plan *p)
{
    const pp_input *in = p->in;
    p->n_vr = 0;
    p->k_sel = 0;
    if (in->col.max_def == 0) {
        p->k = p->n;
        for (uint32_t r = 0; r < in->n_rows; r++)
            if (!vr_push(p, in->rows[r].off, in->rows[r].off + in->rows[r].len))
                return pp_nomem(p, "value ranges");
    } else {
        pq_rle_decoder d;
        pqd_error err;
        if (pq_rle_init(&d, p->lev, p->lev_len, 1, &err) != PQD_OK)
            return pp_real(p, "levels: %s", err.msg);
        uint8_t buf[4096];
        uint32_t i = 0, nn = 0, r = 0, a = 0;
        bool inside = false;
        while (i < p->n) {
            const uint32_t c = p->n - i < sizeof buf ? p->n - i : (uint32_t)sizeof buf;
            if (pq_rle_get_u8(&d, buf, c, &err) != PQD_OK)
                return pp_real(p, "levels: %s", err.msg);
            for (uint32_t j = 0; j < c; j++, i++) {
                if (!inside && r < in->n_rows && i == in->rows[r].off) {
                    inside = true;
                    a = nn;
                }
                nn += buf[j];
                if (inside && i + 1 == in->rows[r].off + in->rows[r].len) {
                    if (!vr_push(p, a, nn))
                        return pp_nomem(p, "value ranges");
                    inside = false;
                    r++;
                }
            }
        }
        p->k = nn;
    }
    for (uint32_t i = 0; i < p->n_vr; i++)
        p->k_sel += p->vr[i].b - p->vr[i].a;
    if (p->v2 && (int64_t)p->n - p->k != p->h.v2.num_nulls)
        return pp_contradiction(p, "layout: levels hold %u nulls, the V2 header says %d", p->n - p->k,
                       p->h.v2.num_nulls);
    return ST_OK;
}

st pp_levels_read(plan *p, const stream *s)
{
    const st ls = levels_fetch(p, s);
    return ls != ST_OK ? ls : levels_scan(p);
}

st pp_values_open(plan *p, sec_kind kind, st *walk, uint64_t *V)
{
    stream *s = &p->s;
    pp_values_section(p, kind);
    *walk = pp_stream_walk(p, s);
    if (*walk == ST_REAL)
        return ST_REAL;
    const st ls = pp_levels_read(p, s);
    if (ls != ST_OK)
        return ls;
    p->expect_k = p->k;
    *V = s->dlen - p->vstart;
    return ST_OK;
}
