/* Synthesized ZSTD and SNAPPY pages: a rebuilt values section (V2) or
 * body (V1) compressed to exactly the stored size. */
#include "page_plan_internal.h"

#include <stdlib.h>
#include <zstd.h>

/* src as nframes zstd frames (level 1), with or without a content checksum
 * and content size; returns the bytes written or 0. */
static size_t zstd_frames(ZSTD_CCtx *cc, const uint8_t *src, size_t len, unsigned nframes,
                          int checksum, int fcs, uint8_t *dst, size_t cap)
{
    if (ZSTD_isError(ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, fcs)))
        return 0;
    size_t out = 0, at = 0;
    for (unsigned f = 0; f < nframes; f++) {
        const size_t part = f + 1 == nframes ? len - at : len / nframes;
        const size_t r = ZSTD_compress2(cc, dst + out, cap - out, src + at, part);
        if (ZSTD_isError(r))
            return 0;
        out += r;
        at += part;
    }
    return out;
}

/* Compress src into zstd frames filling exactly room bytes at page offset
 * at: one frame, padded with a skippable frame of zeros (only its 8-byte
 * header is a piece); when the padding does not fit, other frame layouts
 * (checksum, no content size, two or three frames) are tried. */
static st zstd_section(plan *p, const uint8_t *src, size_t len, uint32_t at, uint32_t room)
{
    const size_t cap = 3 * ZSTD_compressBound(len) + 64;
    uint8_t *dst = malloc(cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    if (!dst || !cc) {
        free(dst);
        ZSTD_freeCCtx(cc);
        return pp_nomem(p, "zstd frame");
    }
    size_t used = 0, first = 0;
    for (unsigned v = 0; v < 12 && !used; v++) {
        const unsigned nframes = 1 + v / 4;
        const int checksum = (v & 1) != 0, fcs = (v & 2) == 0;
        const size_t r = zstd_frames(cc, src, len, nframes, checksum, fcs, dst, cap - 8);
        if (v == 0)
            first = r;
        if (r == 0)
            continue;
        if (r == room) {
            used = r;
        } else if (r + 8 <= room) {
            put_le32(dst + r, PQ_ZSTD_SKIPPABLE_MAGIC);
            put_le32(dst + r + 4, (uint32_t)(room - r - 8));
            used = r + 8;
            for (size_t i = used; i < room && i < used + PATCH_MAX_BYTES; i++)
                pp_patch_add(p, at + (uint32_t)i, 0xff); /* skippable frame content */
        }
    }
    ZSTD_freeCCtx(cc);
    if (!used) {
        free(dst);
        return pp_real(p, "zstd: rebuilt frame of %zu bytes does not fit %u bytes", first, room);
    }
    if (!pp_piece_take(p, at, (uint32_t)used, dst))
        return pp_nomem(p, "pieces");
    return ST_OK;
}

/* The codec's stream of src, exactly room bytes, as pieces at page offset at. */
static st compress_exact(plan *p, const uint8_t *src, size_t len, uint32_t at, uint32_t room)
{
    if (p->in->col.codec == PQ_CODEC_ZSTD)
        return zstd_section(p, src, len, at, room);
    uint8_t *o;
    if (!pp_snappy_exact(src, len, room, &o))
        return pp_real(p, "codec: no SNAPPY stream of exactly %u bytes for %zu", room, len);
    /* Mostly copy elements: kept whole (they are not zeros). */
    if (!pp_piece_take(p, at, room, o))
        return pp_nomem(p, "pieces");
    return ST_OK;
}

/* V1: choose the non-null count k and the level bytes L so that
 * 4 + L + values(k) is exactly the uncompressed size. */
static bool v1_search(const plan *p, const vspec *f, uint64_t *k_out, uint64_t *l_out)
{
    const uint64_t n = p->n, U = p->unc;
    if (p->in->col.max_def == 0) {
        *k_out = n;
        *l_out = 0;
        return pp_fill_values(f, n, U, NULL);
    }
    if (U < 4)
        return false;
    const uint64_t room = U - 4;
    const bool dict = f->enc == PQ_ENC_RLE_DICTIONARY || f->enc == PQ_ENC_PLAIN_DICTIONARY;
    uint64_t v1;
    const bool fixed = pp_fixed_size(f, 1, &v1);
    uint64_t kstart = n;
    if (dict && !f->dict_ok)
        kstart = 0;
    else if (fixed && f->enc == PQ_ENC_PLAIN && f->type == PQ_BOOLEAN)
        kstart = room * 8 < n ? room * 8 : n;
    else if (fixed && f->width)
        kstart = room / f->width < n ? room / f->width : n;
    lplan lp;
    uint32_t tries = 0;
    for (uint64_t k = kstart + 1; k-- > 0 && tries < PP_SEARCH_TRIES; tries++) {
        const uint64_t lmin = pp_run_cost_min(k, 1) + pp_run_cost_min(n - k, 1);
        if (fixed) {
            uint64_t V;
            pp_fixed_size(f, k, &V);
            if (V > room)
                continue;
            const uint64_t L = room - V;
            if (L > 2 * n + 16)
                break; /* every later k leaves more bytes than levels can take */
            if (pp_levels_plan(n, k, L, &lp)) {
                *k_out = k;
                *l_out = L;
                return true;
            }
            continue;
        }
        /* Short level runs and long values, or (few values) long levels. */
        for (uint64_t i = 0; i <= 33; i++) {
            const uint64_t L = i <= 16 ? lmin + i : room - (i - 17);
            if (L > room || (i > 16 && L < lmin + 17))
                continue;
            if (pp_fill_values(f, k, room - L, NULL) && pp_levels_plan(n, k, L, &lp)) {
                *k_out = k;
                *l_out = L;
                return true;
            }
        }
    }
    return false;
}

/* No row selected, ZSTD or SNAPPY: a rebuilt (values section or) body
 * compressed to exactly the stored size (zstd: a frame padded with a
 * skippable frame; snappy: a stream whose copy and literal elements are
 * chosen to add up to it). */
st pp_run_synth_compressed(plan *p)
{
    if (p->in->col.codec != PQ_CODEC_ZSTD && p->in->col.codec != PQ_CODEC_SNAPPY)
        return pp_real(p, "codec: %s", pq_codec_name(p->in->col.codec));
    p->rebuilt = true;
    if (p->unc > PP_SYNTH_MAX)
        return pp_real(p, "saving: %u-byte body too large to rebuild", p->unc);
    if (p->v2) {
        const st ls = pp_levels_read(p, &p->s);
        if (ls != ST_OK)
            return ls;
        p->expect_k = p->k;
        const uint64_t V = (uint64_t)p->unc - p->lv;
        uint8_t *buf = NULL;
        const st vs_ = pp_rebuild_values(p, V, &buf);
        if (vs_ != ST_OK)
            return vs_;
        if (!pp_piece_header(p) || !pp_pieces_known(p, p->hl, p->hl + p->lv)) {
            free(buf);
            return pp_nomem(p, "pieces");
        }
        const st zs = compress_exact(p, buf, V, p->hl + p->lv, p->body - p->lv);
        free(buf);
        return zs == ST_OK ? pp_image_finish(p) : zs;
    }
    if (p->in->n_rows > 0)
        return pp_real(p, "encoding: selected rows need the real levels inside the V1 body");
    const vspec f = pp_values_spec(p, false);
    if (p->in->col.max_def == 1 && p->info.def_level_encoding != PQ_ENC_RLE)
        return pp_real(p, "levels: V1 definition levels encoded %s",
                       pq_encoding_name(p->info.def_level_encoding));
    uint64_t k, L;
    if (!v1_search(p, &f, &k, &L))
        return pp_real(p, "encoding: no %s %s body of exactly %u bytes for %u values",
                       pq_encoding_name(p->enc), pq_physical_type_name(p->in->col.type), p->unc,
                       p->n);
    uint8_t *buf = calloc(1, p->unc ? p->unc : 1);
    if (!buf)
        return pp_nomem(p, "body");
    uint64_t vs = 0;
    if (p->in->col.max_def == 1) {
        lplan lp;
        pp_levels_plan(p->n, k, L, &lp);
        put_le32(buf, (uint32_t)L);
        pp_levels_emit(&lp, buf + 4);
        vs = 4 + L;
    }
    pp_fill_values(&f, k, p->unc - vs, buf + vs);
    p->expect_k = (uint32_t)k;
    if (!pp_piece_header(p)) {
        free(buf);
        return pp_nomem(p, "pieces");
    }
    const st zs = compress_exact(p, buf, p->unc, p->hl, p->body);
    free(buf);
    return zs == ST_OK ? pp_image_finish(p) : zs;
}
