/* Synthesized pages stored uncompressed: no row selected, so the real
 * header and levels keep the page's shape and the values region is
 * rebuilt with the least structure its encoding needs. */
#include "page_plan_internal.h"

#include <stdlib.h>

/* real_levels: p->k comes from the page's real levels, so a dictionary
 * page with values has an entry 0. */
vspec pp_values_spec(const plan *p, bool real_levels)
{
    return (vspec){p->enc, p->in->col.type, p->width,
                   p->in->dict_values > 0 || (real_levels && p->k > 0)};
}

/* The p->k values of a page with no selected row rebuilt into exactly V
 * bytes (*out, malloc'd), or why not. */
st pp_rebuild_values(plan *p, uint64_t V, uint8_t **out)
{
    const vspec f = pp_values_spec(p, true);
    if (!pp_fill_values(&f, p->k, V, NULL))
        return pp_real(p, "encoding: cannot rebuild %u %s %s values in %llu bytes", p->k,
                       pq_encoding_name(p->enc), pq_physical_type_name(p->in->col.type),
                       (unsigned long long)V);
    uint8_t *buf = calloc(1, V ? V : 1);
    if (!buf)
        return pp_nomem(p, "values");
    pp_fill_values(&f, p->k, V, buf);
    *out = buf;
    return ST_OK;
}

/* No row selected, values stored uncompressed: real header and levels, a
 * values region with the least structure its encoding needs. */
st pp_run_synth_plain(plan *p)
{
    stream *s = &p->s;
    p->rebuilt = true;
    st ws; /* uncompressed: the walk is done at once (or contradicts the header) */
    uint64_t V;
    const st os = pp_values_open(p, SEC_STORED, &ws, &V);
    if (os != ST_OK)
        return os;
    const uint32_t sec = s->start;
    const uint64_t dlen = s->dlen, vs = p->vstart;
    const uint32_t lev_end = p->v2 ? p->hl + p->lv : sec + (uint32_t)vs;
    if (p->enc == PQ_ENC_DELTA_LENGTH_BYTE_ARRAY && p->in->col.type == PQ_BYTE_ARRAY) {
        /* Real lengths, zero data: every value keeps its length. */
        uint64_t end, *pre = NULL;
        const st dl = pp_delta_layout(p, s, vs, V, &end, &pre);
        if (dl != ST_OK)
            return dl;
        free(pre);
        if (!pp_piece_header(p) || !pp_pieces_known(p, p->hl, lev_end) ||
            !pp_pieces_known(p, sec + (uint32_t)vs, sec + (uint32_t)end))
            return pp_nomem(p, "pieces");
        for (uint64_t i = end; i < dlen && i < end + PATCH_MAX_BYTES; i++)
            pp_patch_add(p, sec + (uint32_t)i, 0x3f); /* zeroed string bytes stay ASCII */
        return pp_image_finish(p);
    }
    uint8_t *buf = NULL;
    const st vs_ = pp_rebuild_values(p, V, &buf);
    if (vs_ != ST_OK)
        return vs_;
    const bool ok = pp_piece_header(p) && pp_pieces_known(p, p->hl, lev_end) &&
                    pp_pieces_sparse(p, sec + (uint32_t)vs, buf, (uint32_t)V);
    free(buf);
    if (!ok)
        return pp_nomem(p, "pieces");
    /* Value bytes no structure depends on. */
    const pq_physical_type t = p->in->col.type;
    const uint32_t low = t == PQ_FIXED_LEN_BYTE_ARRAY ? p->width - 1 : 0;
    for (uint64_t j = 0; j < PATCH_MAX_BYTES && j < p->k; j++) {
        if (p->enc == PQ_ENC_PLAIN && t == PQ_BOOLEAN) {
            if (j < V)
                pp_patch_add(p, sec + (uint32_t)(vs + j), 0xff);
        } else if (p->enc == PQ_ENC_PLAIN && t != PQ_BYTE_ARRAY) {
            pp_patch_add(p, sec + (uint32_t)(vs + j * p->width + low), 0x3f);
        } else if (p->enc == PQ_ENC_BYTE_STREAM_SPLIT && V == (uint64_t)p->k * p->width) {
            pp_patch_add(p, sec + (uint32_t)(vs + (uint64_t)low * p->k + j), 0x3f);
        } else if (p->enc == PQ_ENC_PLAIN && t == PQ_BYTE_ARRAY && 4ull * p->k + j < V) {
            pp_patch_add(p, sec + (uint32_t)(vs + 4ull * p->k + j), 0x3f);
        }
    }
    return pp_image_finish(p);
}
