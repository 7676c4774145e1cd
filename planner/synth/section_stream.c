/* A page section read through its decompressed offsets: the identity for
 * uncompressed bytes, a walk of the frame and raw block headers for ZSTD,
 * of the literal headers for SNAPPY (both predicted while the blocks are
 * full-size, so values can be asked for in the same round). */
#include "page_plan_internal.h"

#include "sv_grow.h"

#include <stdlib.h>
#include <string.h>

/* A stored section is complete from the start; the others once their
 * blocks are walked. */
static void stream_init(stream *s, sec_kind kind, uint32_t start, uint32_t clen, uint64_t dlen)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->start = start;
    s->clen = clen;
    s->dlen = dlen;
    s->complete = kind == SEC_STORED;
}

void pp_stream_identity(stream *s, uint32_t start, uint32_t clen, uint64_t dlen)
{
    stream_init(s, SEC_STORED, start, clen, dlen);
}

void pp_values_section(plan *p, sec_kind kind)
{
    const uint32_t sec = p->v2 ? p->hl + p->lv : p->hl;
    const uint64_t dlen = p->v2 ? (uint64_t)p->unc - p->lv : p->unc;
    stream_init(&p->s, kind, sec, p->total - sec, dlen);
}

sec_kind pp_section_kind(const plan *p)
{
    if (!p->compressed)
        return SEC_STORED;
    return p->in->col.codec == PQ_CODEC_SNAPPY ? SEC_SNAPPY : SEC_ZSTD;
}

/* ---- snappy: a length preamble, then elements; literals only ---- */

/* Compressors cut their input into fragments of 64 KiB and emit an
 * incompressible fragment as one literal: its tag and two length bytes. */
#define SN_FRAGMENT 65536u
#define SN_PREAMBLE_MAX 5u
#define SN_TAG_MAX 5u

/* Header bytes of a literal of n content bytes as compressors write it. */
static uint32_t sn_literal_header_len(uint64_t n)
{
    const uint64_t m = n - 1;
    return m < 60 ? 1 : m < (1u << 8) ? 2 : m < (1u << 16) ? 3 : m < (1u << 24) ? 4 : 5;
}

/* Header bytes of blocks [from, expect) predicted full-size, for the walk
 * to ask for all at once: the last one holds what is left. */
static void sn_ask_predicted(plan *p, const stream *s)
{
    uint64_t h = s->next_hdr, d = s->next_doff;
    for (uint32_t j = s->nb; j < s->expect; j++) {
        const uint64_t left = s->dlen - d, size = left < s->bmax ? left : s->bmax;
        const uint32_t hl = sn_literal_header_len(size);
        pp_need(p, h, hl);
        h += hl + size;
        d += size;
    }
}

static st snappy_walk(plan *p, stream *s)
{
    const uint32_t end = s->start + s->clen;
    if (!s->fh_ok) {
        /* The preamble: the uncompressed length as a varint. */
        const uint32_t probe = s->clen < SN_PREAMBLE_MAX + SN_TAG_MAX ? s->clen : SN_PREAMBLE_MAX + SN_TAG_MAX;
        if (s->clen == 0)
            return pp_real(p, "snappy: empty section");
        const uint32_t have = pp_known_run(p->kb, s->start);
        const uint8_t *f = have ? pp_bytes_get(p->kb, s->start, have < probe ? have : probe) : NULL;
        uint64_t len = 0;
        uint32_t n = 0;
        for (bool more = true; more; n++) {
            if (n >= SN_PREAMBLE_MAX)
                return pp_real(p, "snappy: preamble longer than %u bytes", SN_PREAMBLE_MAX);
            if (n >= have || n >= probe) {
                pp_need(p, s->start, probe);
                /* The usual layout, asked for in the same round. */
                if (s->dlen > 0 && s->clen == ulen(s->dlen) + s->dlen +
                                                   3ull * ((s->dlen - 1) / SN_FRAGMENT) +
                                                   sn_literal_header_len((s->dlen - 1) % SN_FRAGMENT + 1)) {
                    stream pred = *s;
                    pred.next_hdr = s->start + ulen(s->dlen);
                    pred.bmax = SN_FRAGMENT;
                    pred.expect = (uint32_t)((s->dlen + SN_FRAGMENT - 1) / SN_FRAGMENT);
                    if (pred.expect <= PP_MAX_BLOCKS)
                        sn_ask_predicted(p, &pred);
                }
                return ST_NEED;
            }
            len |= (uint64_t)(f[n] & 0x7f) << (7 * n);
            more = f[n] & 0x80;
        }
        if (len != s->dlen)
            return pp_real(p, "snappy: stream holds %llu bytes, page says %llu", (unsigned long long)len,
                           (unsigned long long)s->dlen);
        s->fh_len = n;
        s->bmax = SN_FRAGMENT;
        s->fh_ok = true;
        s->next_hdr = s->start + n;
        s->next_doff = 0;
        if (s->dlen == 0) {
            if (s->next_hdr != end)
                return pp_real(p, "snappy: %u bytes after an empty stream", end - s->next_hdr);
            s->complete = true;
            return ST_OK;
        }
        /* Literals of full fragments: the stream's size is exactly theirs. */
        const uint64_t blocks = (s->dlen + SN_FRAGMENT - 1) / SN_FRAGMENT;
        const uint64_t last = s->dlen - (blocks - 1) * SN_FRAGMENT;
        s->full = blocks <= PP_MAX_BLOCKS &&
                  (uint64_t)s->clen == n + s->dlen + 3 * (blocks - 1) + sn_literal_header_len(last);
        s->expect = s->full ? (uint32_t)blocks : PP_MAX_BLOCKS;
    }
    while (!s->complete) {
        const uint32_t pos = s->next_hdr;
        if (pos >= end)
            return pp_real(p, "snappy: stream ends at %llu of %llu bytes", (unsigned long long)s->next_doff,
                           (unsigned long long)s->dlen);
        const uint8_t *tag = pp_bytes_get(p->kb, pos, 1);
        if (!tag) {
            if (s->full) {
                sn_ask_predicted(p, s);
            } else {
                pp_need(p, pos, end - pos < SN_TAG_MAX ? end - pos : SN_TAG_MAX);
            }
            return ST_NEED;
        }
        if ((tag[0] & 3) != 0)
            return pp_real(p, "snappy: copy element at section byte %u", pos - s->start);
        const uint32_t code = tag[0] >> 2;
        const uint32_t extra = code < 60 ? 0 : code - 59;
        if (end - pos < 1 + extra)
            return pp_real(p, "snappy: literal header runs past the section");
        const uint8_t *hb = pp_bytes_get(p->kb, pos, 1 + extra);
        if (!hb) {
            pp_need(p, pos, 1 + extra);
            return ST_NEED;
        }
        uint64_t size = code < 60 ? code + 1 : 0;
        for (uint32_t i = 0; i < extra; i++)
            size |= (uint64_t)hb[1 + i] << (8 * i);
        if (extra)
            size += 1;
        if (size > end - pos - 1 - extra)
            return pp_real(p, "snappy: literal of %llu bytes runs past the section", (unsigned long long)size);
        if (size > s->dlen - s->next_doff)
            return pp_real(p, "snappy: literals hold more than %llu bytes", (unsigned long long)s->dlen);
        if (s->nb >= PP_MAX_BLOCKS)
            return pp_real(p, "snappy: more than %u literals", PP_MAX_BLOCKS);
        if (!sv_grow((void **)&s->b, &s->capb, (size_t)s->nb + 1, sizeof *s->b, 8, UINT32_MAX))
            return pp_nomem(p, "snappy literals");
        s->b[s->nb++] = (zblock){pos, pos + 1 + extra, (uint32_t)size, s->next_doff};
        if (s->full && (1 + extra != sn_literal_header_len(size) ||
                        (s->next_doff + size < s->dlen && size != s->bmax)))
            s->full = false;
        s->next_hdr = pos + 1 + extra + (uint32_t)size;
        s->next_doff += size;
        if (s->next_doff == s->dlen) {
            if (s->next_hdr != end)
                return pp_real(p, "snappy: %u bytes after the stream", end - s->next_hdr);
            s->complete = true;
        }
    }
    return ST_OK;
}

/* Walk the frame header and the block headers known so far; ask for the
 * next one (and, while the layout looks like full-size blocks, every later
 * one). OK once every block is walked. */
st pp_stream_walk(plan *p, stream *s)
{
    if (s->kind == SEC_SNAPPY)
        return snappy_walk(p, s);
    if (s->kind == SEC_STORED) {
        if (s->clen != s->dlen)
            return pp_contradiction(p,
                           "layout: %u bytes stored, %llu uncompressed in an uncompressed section",
                           s->clen, (unsigned long long)s->dlen);
        return ST_OK;
    }
    if (!s->fh_ok) {
        const uint32_t probe =
            s->clen < PQ_ZSTD_FRAME_HEADER_MAX ? s->clen : PQ_ZSTD_FRAME_HEADER_MAX;
        const uint32_t have = pp_known_run(p->kb, s->start);
        if (s->clen < 8)
            return pp_real(p, "zstd: %u-byte section cannot hold a frame", s->clen);
        if (have < 5)
            return pp_need(p, s->start, probe);
        const uint8_t *f = pp_bytes_get(p->kb, s->start, have < probe ? have : probe);
        const uint32_t magic = (uint32_t)pq_zstd_le(f, 4);
        if ((magic & 0xFFFFFFF0u) == PQ_ZSTD_SKIPPABLE_MAGIC)
            return pp_real(p, "zstd: skippable frame first");
        if (magic != PQ_ZSTD_MAGIC)
            return pp_real(p, "zstd: not a zstd frame (magic 0x%08x)", magic);
        const pq_zstd_descriptor fd = pq_zstd_descriptor_of(f[4]);
        const uint32_t fh_len = fd.header_len;
        if (fd.reserved_bit)
            return pp_real(p, "zstd: frame header reserved bit set");
        if (fd.has_checksum)
            return pp_real(p, "zstd: content checksum (zeroed content would not match it)");
        if (have < fh_len)
            return pp_need(p, s->start, fh_len);
        f = pp_bytes_get(p->kb, s->start, fh_len);
        uint32_t pos = 5;
        uint64_t window = 0;
        if (!fd.single_segment)
            window = pq_zstd_window_size(f[pos++]);
        if (fd.dict_id_len) {
            const uint32_t did = (uint32_t)pq_zstd_le(f + pos, fd.dict_id_len);
            if (did)
                return pp_real(p, "zstd: dictionary id %u", did);
            pos += fd.dict_id_len;
        }
        if (fd.fcs_len) {
            const uint64_t fcs = pq_zstd_content_size(f + pos, fd.fcs_len);
            if (fcs != s->dlen)
                return pp_real(p, "zstd: frame content size %llu, page says %llu",
                               (unsigned long long)fcs, (unsigned long long)s->dlen);
            if (fd.single_segment)
                window = fcs;
        }
        s->bmax = window < PQ_ZSTD_BLOCK_MAX ? (uint32_t)window : PQ_ZSTD_BLOCK_MAX;
        s->fh_len = fh_len;
        /* Raw blocks only: stored = frame header + 3 per block + content. */
        if ((uint64_t)s->clen < (uint64_t)fh_len + s->dlen + 3)
            return pp_real(p, "zstd: compressed blocks (%u bytes hold %llu)", s->clen,
                           (unsigned long long)s->dlen);
        const uint64_t over = s->clen - fh_len - s->dlen;
        if (over % 3)
            return pp_real(p, "zstd: compressed blocks (%u bytes hold %llu)", s->clen,
                           (unsigned long long)s->dlen);
        if (s->bmax == 0 && s->dlen > 0)
            return pp_real(p, "zstd: zero window for %llu bytes", (unsigned long long)s->dlen);
        const uint64_t min_blocks = s->dlen ? (s->dlen + s->bmax - 1) / s->bmax : 1;
        if (over / 3 < min_blocks || over / 3 > PP_MAX_BLOCKS)
            return pp_real(p, "zstd: frame of %u bytes cannot be %llu raw blocks", s->clen,
                           (unsigned long long)(over / 3));
        s->expect = (uint32_t)(over / 3);
        s->full = s->expect == min_blocks;
        s->fh_ok = true;
        s->next_hdr = s->start + fh_len;
        s->next_doff = 0;
    }
    const uint32_t end = s->start + s->clen;
    while (!s->complete) {
        const uint32_t pos = s->next_hdr;
        if (end - pos < 3)
            return pp_real(p, "zstd: frame truncated at section byte %u", pos - s->start);
        const uint8_t *hb = pp_bytes_get(p->kb, pos, 3);
        if (!hb) {
            pp_need(p, pos, 3);
            if (s->full)
                for (uint32_t j = 1; j < s->expect - s->nb; j++)
                    pp_need(p, pos + (uint64_t)j * (3 + s->bmax), 3);
            return ST_NEED;
        }
        const uint32_t bh = (uint32_t)pq_zstd_le(hb, 3);
        const bool last = bh & 1;
        const unsigned type = (bh >> 1) & 3;
        const uint32_t size = bh >> 3;
        if (type != 0)
            return pp_real(p, "zstd: %s block at section byte %u",
                           type == 1 ? "RLE" : type == 2 ? "compressed" : "reserved",
                           pos - s->start);
        if (size > s->bmax)
            return pp_real(p, "zstd: block of %u bytes over the maximum %u", size, s->bmax);
        if (size > end - pos - 3)
            return pp_real(p, "zstd: block of %u bytes runs past the section", size);
        if (s->nb >= s->expect)
            return pp_real(p, "zstd: more blocks than the section size allows");
        if (!sv_grow((void **)&s->b, &s->capb, (size_t)s->nb + 1, sizeof *s->b, 8, UINT32_MAX))
            return pp_nomem(p, "zstd blocks");
        s->b[s->nb++] = (zblock){pos, pos + 3, size, s->next_doff};
        s->next_hdr = pos + 3 + size;
        s->next_doff += size;
        if (s->next_doff > s->dlen)
            return pp_real(p, "zstd: blocks hold more than %llu bytes",
                           (unsigned long long)s->dlen);
        if (last) {
            if (s->next_hdr != end)
                return pp_real(p, "zstd: %u bytes after the frame", end - s->next_hdr);
            if (s->next_doff != s->dlen)
                return pp_real(p, "zstd: frame holds %llu bytes, page says %llu",
                               (unsigned long long)s->next_doff, (unsigned long long)s->dlen);
            s->complete = true;
        } else if (size != s->bmax) {
            s->full = false;
        }
    }
    return ST_OK;
}

/* Page ranges holding decompressed bytes [d, d+len) into r. With predict,
 * blocks not walked yet are assumed full-size (only to ask for bytes early).
 * False when some part cannot be located. */
bool pp_stream_map(const stream *s, uint64_t d, uint64_t len, bool predict, rvec *r)
{
    if (d > s->dlen || len > s->dlen - d)
        return false;
    if (s->kind == SEC_STORED)
        return pp_rv_push(r, s->start + d, len);
    while (len > 0) {
        uint32_t data, size;
        uint64_t doff;
        if (d < s->next_doff) {
            uint32_t lo = 0, hi = s->nb;
            while (hi - lo > 1) {
                const uint32_t mid = lo + (hi - lo) / 2;
                if (s->b[mid].doff <= d)
                    lo = mid;
                else
                    hi = mid;
            }
            data = s->b[lo].data;
            size = s->b[lo].size;
            doff = s->b[lo].doff;
        } else if (predict && s->fh_ok && s->full && !s->complete) {
            /* Every block to come but the last holds bmax bytes behind a
             * 3-byte header (zstd; a snappy literal of 64 KiB too). */
            const uint64_t idx = (d - s->next_doff) / s->bmax;
            doff = s->next_doff + idx * s->bmax;
            const uint64_t h = s->next_hdr + idx * (3ull + s->bmax);
            const uint64_t left = s->dlen - doff;
            size = left < s->bmax ? (uint32_t)left : s->bmax;
            const uint64_t hl = s->kind == SEC_SNAPPY ? sn_literal_header_len(size) : 3;
            if (h + hl + size > (uint64_t)s->start + s->clen)
                return false;
            data = (uint32_t)(h + hl);
        } else {
            return false;
        }
        if (size == 0)
            return false;
        const uint64_t in = d - doff, take = size - in < len ? size - in : len;
        if (!pp_rv_push(r, data + in, take))
            return false;
        d += take;
        len -= take;
    }
    return true;
}

/* Ask for decompressed bytes [d, d+len): OK when known, NEED (maybe with
 * nothing asked when they cannot be located yet: the walk asked for block
 * headers). */
st pp_stream_want(plan *p, const stream *s, uint64_t d, uint64_t len, bool predict)
{
    rvec r = {0};
    if (!pp_stream_map(s, d, len, predict, &r)) {
        free(r.v);
        return ST_NEED;
    }
    st res = ST_OK;
    for (uint32_t i = 0; i < r.n; i++)
        if (pp_want(p, r.v[i].off, r.v[i].len) != ST_OK)
            res = p->out->outcome == PP_REAL ? ST_REAL : ST_NEED;
    free(r.v);
    return res;
}

/* Copy decompressed bytes [d, d+len) when all are known. */
bool pp_stream_copy(const plan *p, const stream *s, uint64_t d, uint64_t len, uint8_t *dst)
{
    rvec r = {0};
    bool ok = pp_stream_map(s, d, len, false, &r);
    uint64_t at = 0;
    for (uint32_t i = 0; ok && i < r.n; i++) {
        const uint8_t *src = pp_bytes_get(p->kb, r.v[i].off, r.v[i].len);
        if (!src)
            ok = false;
        else
            memcpy(dst + at, src, r.v[i].len);
        at += r.v[i].len;
    }
    free(r.v);
    return ok;
}

/* Copy the known decompressed bytes from d on, up to max; returns the count. */
uint32_t pp_stream_prefix(const plan *p, const stream *s, uint64_t d, uint32_t max,
                          uint8_t *dst)
{
    if (d >= s->dlen)
        return 0;
    if (max > s->dlen - d)
        max = (uint32_t)(s->dlen - d);
    rvec r = {0};
    uint32_t got = 0;
    if (pp_stream_map(s, d, max, false, &r) || r.n > 0)
        for (uint32_t i = 0; i < r.n; i++) {
            const uint32_t have = pp_known_run(p->kb, r.v[i].off);
            const uint32_t take = have < r.v[i].len ? have : r.v[i].len;
            if (take)
                memcpy(dst + got, pp_bytes_get(p->kb, r.v[i].off, take), take);
            got += take;
            if (take < r.v[i].len)
                break;
        }
    free(r.v);
    return got;
}
