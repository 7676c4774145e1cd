/* Where DELTA_LENGTH_BYTE_ARRAY values lie: the DELTA_BINARY_PACKED lengths
 * stream is walked block by block (asking for its bytes as it goes), then
 * decoded into prefix sums. */
#include "page_plan_internal.h"

#include "rle_hybrid.h"

#include <stdlib.h>
#include <string.h>

/* Walk the lengths stream at decompressed offset d0 (count values, int32)
 * up to its end, asking for the rest of it (estimated from the blocks
 * walked) when its bytes run out. */
st pp_delta_walk(plan *p, const stream *s, uint64_t d0, uint64_t count, uint64_t *end)
{
    const uint64_t limit = s->dlen;
    uint8_t hb[64];
    uint64_t pos = d0;
    const uint32_t hmax = limit - pos < sizeof hb ? (uint32_t)(limit - pos) : (uint32_t)sizeof hb;
    const uint32_t got = pp_stream_prefix(p, s, pos, hmax, hb);
    size_t q = 0;
    uint32_t block, mb;
    uint64_t total, first;
    if (!pq_read_uleb32(hb, got, &q, &block) || !pq_read_uleb32(hb, got, &q, &mb) ||
        !pq_read_uleb64(hb, got, &q, &total) || !pq_read_uleb64(hb, got, &q, &first)) {
        if (got < hmax) {
            const uint64_t ask = limit - pos < PP_DELTA_PROBE ? limit - pos : PP_DELTA_PROBE;
            const st r = pp_stream_want(p, s, pos, ask, false);
            return r == ST_OK ? pp_real(p, "encoding: DELTA header unreadable") : r;
        }
        return pp_real(p, "encoding: DELTA header malformed");
    }
    (void)first;
    if (block == 0 || block % 128 || block > PQ_DELTA_MAX_BLOCK_SIZE || mb == 0 || block % mb ||
        (block / mb) % 32)
        return pp_real(p, "encoding: DELTA block %u / %u miniblocks", block, mb);
    if (total != count)
        return pp_real(p, "encoding: DELTA holds %llu values, %llu expected",
                       (unsigned long long)total, (unsigned long long)count);
    const uint32_t vpm = block / mb;
    pos += q;
    const uint64_t first_block = pos;
    uint64_t left = total ? total - 1 : 0, walked = 0;
    uint8_t *bb = malloc((size_t)mb + 10);
    if (!bb)
        return pp_nomem(p, "DELTA block header");
    st res = ST_OK;
    while (left > 0) {
        const uint64_t bmax = 10 + (uint64_t)mb;
        const uint32_t want_n = limit - pos < bmax ? (uint32_t)(limit - pos) : (uint32_t)bmax;
        const uint32_t have = pp_stream_prefix(p, s, pos, want_n, bb);
        size_t bq = 0;
        uint64_t md;
        const bool md_ok = pq_read_uleb64(bb, have, &bq, &md);
        if (!md_ok || have - bq < mb) {
            if (have < want_n) {
                /* The rest of the stream, estimated from the blocks walked
                 * (with a quarter more), at least PP_DELTA_PROBE. */
                const uint64_t blocks_left = (left + block - 1) / block;
                uint64_t ask = walked ? (pos - first_block) / walked * blocks_left : 0;
                ask += ask / 4;
                ask = ask < PP_DELTA_PROBE ? PP_DELTA_PROBE : ask;
                ask = ask > limit - pos ? limit - pos : ask;
                res = pp_stream_want(p, s, pos, ask, false);
                if (res == ST_OK)
                    res = pp_real(p, "encoding: DELTA block unreadable");
            } else {
                res = pp_real(p, "encoding: DELTA block header malformed");
            }
            break;
        }
        uint64_t bytes = 0;
        for (uint32_t m = 0; m < mb && left > 0; m++) {
            const unsigned w = bb[bq + m];
            if (w > 32) {
                res = pp_real(p, "encoding: DELTA miniblock width %u", w);
                break;
            }
            bytes += (uint64_t)vpm * w / 8;
            left -= left < vpm ? left : vpm;
        }
        if (res != ST_OK)
            break;
        pos += bq + mb + bytes;
        walked++;
        if (pos > limit) {
            res = pp_real(p, "encoding: DELTA stream runs past the values");
            break;
        }
    }
    free(bb);
    *end = pos;
    return res;
}

/* Decode the lengths stream [d0, end) into prefix sums pre[0..k] (NEED
 * while some of its bytes are not known: the walk reads block headers only). */
st pp_delta_lengths(plan *p, const stream *s, uint64_t d0, uint64_t end, uint64_t **pre_out)
{
    const uint64_t slen = end - d0;
    const st ws = pp_stream_want(p, s, d0, slen, false);
    if (ws != ST_OK)
        return ws;
    uint8_t *buf = malloc(slen ? slen : 1);
    int32_t *lens = malloc(((size_t)p->k + 1) * sizeof *lens);
    uint64_t *pre = malloc(((size_t)p->k + 1) * sizeof *pre);
    st res = ST_OK;
    if (!buf || !lens || !pre) {
        res = pp_nomem(p, "lengths");
        goto out;
    }
    if (!pp_stream_copy(p, s, d0, slen, buf)) {
        res = pp_contradiction(p, "layout: lengths stream not known after its walk");
        goto out;
    }
    size_t used = 0;
    pqd_error err;
    if (pq_delta_decode_i32(buf, slen, p->k, lens, &used, &err) != PQD_OK) {
        res = pp_real(p, "encoding: DELTA lengths: %s", err.msg);
        goto out;
    }
    if (used != slen) {
        res = pp_real(p, "encoding: DELTA lengths use %zu of %llu bytes", used,
                      (unsigned long long)slen);
        goto out;
    }
    pre[0] = 0;
    for (uint32_t i = 0; i < p->k; i++) {
        if (lens[i] < 0) {
            res = pp_real(p, "encoding: negative length %d", lens[i]);
            goto out;
        }
        pre[i + 1] = pre[i] + (uint32_t)lens[i];
    }
out:
    free(buf);
    free(lens);
    if (res == ST_OK)
        *pre_out = pre;
    else
        free(pre);
    return res;
}

st pp_delta_layout(plan *p, const stream *s, uint64_t d0, uint64_t V, uint64_t *end,
                   uint64_t **pre_out)
{
    const st d = pp_delta_walk(p, s, d0, p->k, end);
    if (d != ST_OK)
        return d;
    uint64_t *pre = NULL;
    const st dl = pp_delta_lengths(p, s, d0, *end, &pre);
    if (dl != ST_OK)
        return dl;
    const uint64_t lstream = *end - d0, data = pre[p->k];
    if (lstream + data != V) {
        free(pre);
        return pp_contradiction(p, "layout: lengths %llu + data %llu bytes, values region %llu",
                                (unsigned long long)lstream, (unsigned long long)data,
                                (unsigned long long)V);
    }
    *pre_out = pre;
    return ST_OK;
}
