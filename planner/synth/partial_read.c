/* Partial reads: a page with selected rows served from its real header,
 * levels, lengths and block headers and the selected values, zeros
 * elsewhere. */
#include "page_plan_internal.h"

#include "cost_model.h"

#include <stdlib.h>

bool pp_encoding_reads_partially(int32_t encoding, pq_physical_type t)
{
    switch (encoding) {
    case PQ_ENC_PLAIN: return t != PQ_BYTE_ARRAY;
    case PQ_ENC_BYTE_STREAM_SPLIT: return pp_bss_type(t);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return t == PQ_BYTE_ARRAY;
    default: return false;
    }
}

bool pp_partial_encoding(const plan *p)
{
    return pp_encoding_reads_partially(p->enc, p->in->col.type);
}

/* Low bits of zero bytes of unselected values, where a CRC patch may go:
 * the low-order byte of unselected values not fetched (little-endian types:
 * the first; FIXED_LEN_BYTE_ARRAY, big-endian decimals: the last), the
 * first data byte of unselected strings, whole bytes of unselected
 * booleans. */
static void partial_patch_bytes(plan *p, const stream *s, uint64_t vs, uint64_t lstream,
                                const uint64_t *pre)
{
    const pq_physical_type t = p->in->col.type;
    const bool bss = p->enc == PQ_ENC_BYTE_STREAM_SPLIT, flba = t == PQ_FIXED_LEN_BYTE_ARRAY;
    uint32_t prev = 0, tries = 0;
    for (uint32_t i = 0; i <= p->n_vr && p->n_patch < PATCH_MAX_BYTES && tries < 4096; i++) {
        const uint64_t a = prev, b = i < p->n_vr ? p->vr[i].a : p->k;
        if (i < p->n_vr)
            prev = p->vr[i].b;
        for (uint64_t v = a; v < b && p->n_patch < PATCH_MAX_BYTES && tries < 4096; v++) {
            uint64_t d;
            uint8_t bits = 0x3f;
            tries++;
            if (pre) {
                if (pre[v + 1] == pre[v])
                    continue;
                d = vs + lstream + pre[v];
            } else if (bss) {
                d = vs + (uint64_t)(flba ? p->width - 1 : 0) * p->k + v;
            } else if (t == PQ_BOOLEAN) {
                if (v % 8 || v + 8 > b)
                    continue;
                d = vs + v / 8;
                bits = 0xff;
            } else {
                d = vs + v * p->width + (flba ? p->width - 1 : 0);
            }
            rvec r = {0};
            if (pp_stream_map(s, d, 1, false, &r) && r.n == 1 &&
                !pp_bytes_get(p->kb, r.v[0].off, 1))
                pp_patch_add(p, r.v[0].off, bits);
            free(r.v);
        }
    }
}

/* Selected rows, values not readable in part: when the real levels can be
 * read (V2, or V1 not compressed) and show every selected row null, the page
 * is rebuilt like an unselected one with its real levels. */
static st partial_all_null(plan *p)
{
    const bool levels_readable = p->v2 || !p->compressed;
    if (p->in->col.max_def != 1 || !levels_readable ||
        (p->compressed && p->in->col.codec != PQ_CODEC_ZSTD &&
         p->in->col.codec != PQ_CODEC_SNAPPY))
        goto no;
    pp_stream_identity(&p->s, p->hl, p->body, p->unc);
    const st ls = pp_levels_read(p, &p->s);
    if (ls != ST_OK)
        return ls;
    if (p->k_sel == 0)
        return p->compressed ? pp_run_synth_compressed(p) : pp_run_synth_plain(p);
no:
    if (pp_partial_encoding(p))
        return pp_real(p, "codec: %s values of selected rows", pq_codec_name(p->in->col.codec));
    return pp_real(p, "encoding: %s %s values of selected rows", pq_encoding_name(p->enc),
                   pq_physical_type_name(p->in->col.type));
}

st pp_run_partial(plan *p)
{
    if (!pp_partial_encoding(p) ||
        (p->compressed && p->in->col.codec != PQ_CODEC_ZSTD && p->in->col.codec != PQ_CODEC_SNAPPY))
        return partial_all_null(p);
    stream *s = &p->s;
    st ws;
    uint64_t V;
    const st os = pp_values_open(p, pp_section_kind(p), &ws, &V);
    if (os != ST_OK)
        return os;
    const uint64_t vs = p->vstart;
    const uint32_t w = p->width;
    uint64_t *pre = NULL, lstream = 0;
    if (p->enc == PQ_ENC_DELTA_LENGTH_BYTE_ARRAY) {
        if (ws != ST_OK)
            return ST_NEED; /* lengths are read through the walked blocks */
        uint64_t end;
        const st dl = pp_delta_layout(p, s, vs, V, &end, &pre);
        if (dl != ST_OK)
            return dl;
        lstream = end - vs;
    } else if (p->enc == PQ_ENC_PLAIN && p->in->col.type == PQ_BOOLEAN) {
        if (V != ((uint64_t)p->k + 7) / 8)
            return pp_contradiction(p, "layout: %llu bytes for %u booleans", (unsigned long long)V, p->k);
    } else if (V != (uint64_t)p->k * w) {
        return pp_contradiction(p, "layout: values region %llu bytes, %u values of %u bytes",
                       (unsigned long long)V, p->k, w);
    }
    /* Value bytes of the selected rows (predicted through unwalked blocks
     * while the walk is still going: asked for in the same round). */
    st vstat = ST_OK;
    for (uint32_t i = 0; i < p->n_vr && vstat != ST_REAL; i++) {
        const uint64_t a = p->vr[i].a, b = p->vr[i].b;
        st r = ST_OK;
        if (pre) {
            r = pp_stream_want(p, s, vs + lstream + pre[a], pre[b] - pre[a], true);
        } else if (p->enc == PQ_ENC_BYTE_STREAM_SPLIT) {
            for (uint32_t j = 0; j < w && r != ST_REAL; j++) {
                const st rj = pp_stream_want(p, s, vs + (uint64_t)j * p->k + a, b - a, true);
                r = rj != ST_OK ? rj : r;
            }
        } else if (p->in->col.type == PQ_BOOLEAN) {
            r = pp_stream_want(p, s, vs + a / 8, (b + 7) / 8 - a / 8, true);
        } else {
            r = pp_stream_want(p, s, vs + a * w, (b - a) * w, true);
        }
        if (r != ST_OK)
            vstat = r;
    }
    if (vstat == ST_OK && ws == ST_OK && p->h.has_crc)
        partial_patch_bytes(p, s, vs, lstream, pre);
    free(pre);
    if (vstat == ST_REAL)
        return ST_REAL;
    if (ws != ST_OK || vstat != ST_OK)
        return ST_NEED;
    /* Everything is known: the image is every known byte. Its bytes alone
     * must keep the saving (the requests were weighed when asked for). */
    const double budget = cost_partial_budget(p->total, 0, p->in->min_saving);
    if (cost_of_reads(pp_bytes_total(p->kb), 0, 0) > budget)
        return pp_real(p, "saving: fetched %llu of %u bytes, budget %.0f",
                       (unsigned long long)pp_bytes_total(p->kb), p->total, budget);
    if (!pp_pieces_known(p, 0, p->total))
        return pp_nomem(p, "pieces");
    return pp_image_finish(p);
}
