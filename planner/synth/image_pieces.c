/* The image of a sparse page: pieces of real or synthesized bytes over
 * zeros, read back and checksummed; see page_plan.h. */
#include "page_plan_internal.h"

#include "sv_grow.h"

#include <stdlib.h>
#include <string.h>

void pp_image_read(const pp_piece *pieces, uint32_t n_pieces, uint32_t off, uint32_t len,
                   uint8_t *dst)
{
    if (len == 0)
        return;
    memset(dst, 0, len);
    const uint64_t end = (uint64_t)off + len;
    /* First piece ending after off. */
    uint32_t lo = 0, hi = n_pieces;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)pieces[mid].off + pieces[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t i = lo; i < n_pieces && pieces[i].off < end; i++) {
        const pp_piece *p = &pieces[i];
        const uint64_t a = p->off > off ? p->off : off;
        const uint64_t pe = (uint64_t)p->off + p->len;
        const uint64_t b = pe < end ? pe : end;
        if (a < b)
            memcpy(dst + (a - off), p->data + (a - p->off), (size_t)(b - a));
    }
}

void pp_result_free(pp_result *r)
{
    if (!r)
        return;
    free(r->need);
    for (uint32_t i = 0; i < r->n_pieces; i++)
        free(r->pieces[i].data);
    free(r->pieces);
    r->need = NULL;
    r->pieces = NULL;
    r->n_need = r->n_pieces = 0;
}

bool pp_piece_take(plan *p, uint32_t off, uint32_t len, uint8_t *data)
{
    if (len == 0) {
        free(data);
        return true;
    }
    if (!sv_grow((void **)&p->pc, &p->cap_pc, (size_t)p->n_pc + 1, sizeof *p->pc, 16,
                 UINT32_MAX)) {
        free(data);
        return false;
    }
    p->pc[p->n_pc++] = (pp_piece){off, len, data};
    return true;
}

bool pp_piece_copy(plan *p, uint32_t off, uint32_t len, const uint8_t *src)
{
    if (len == 0)
        return true;
    uint8_t *d = malloc(len);
    if (!d)
        return false;
    memcpy(d, src, len);
    return pp_piece_take(p, off, len, d);
}

/* The non-zero parts of buf (zero runs of PP_ZERO_RUN bytes or more are
 * left to the image's zero fill). */
bool pp_pieces_sparse(plan *p, uint32_t off, const uint8_t *buf, uint32_t len)
{
    uint32_t i = 0;
    while (i < len) {
        while (i < len && buf[i] == 0)
            i++;
        if (i == len)
            break;
        uint32_t j = i, zeros = 0;
        while (j < len && zeros < PP_ZERO_RUN) {
            zeros = buf[j] ? 0 : zeros + 1;
            j++;
        }
        const uint32_t end = j - zeros;
        if (!pp_piece_copy(p, off + i, end - i, buf + i))
            return false;
        i = j;
    }
    return true;
}

/* Every known byte of [from, to). */
bool pp_pieces_known(plan *p, uint32_t from, uint32_t to)
{
    const pp_bytes *kb = p->kb;
    for (uint32_t i = pp_first_ending_at(kb, from); i < kb->n && kb->s[i].off < to; i++) {
        const uint32_t a = kb->s[i].off > from ? kb->s[i].off : from;
        const uint32_t e = pp_span_end(&kb->s[i]);
        const uint32_t b = e < to ? e : to;
        if (a < b && !pp_piece_copy(p, a, b - a, kb->s[i].data + (a - kb->s[i].off)))
            return false;
    }
    return true;
}

/* CRC-32 of the image over [from, to). */
uint32_t pp_image_crc(const pp_piece *pc, uint32_t n, uint32_t from, uint32_t to)
{
    static const uint8_t zeros[4096];
    uint32_t crc = 0, at = from;
    for (uint32_t i = 0; i < n && at < to; i++) {
        const uint32_t a = pc[i].off, e = pc[i].off + pc[i].len;
        if (e <= at)
            continue;
        const uint32_t zs = a < to ? a : to;
        while (at < zs) {
            const uint32_t c = zs - at < sizeof zeros ? zs - at : (uint32_t)sizeof zeros;
            crc = pq_crc32(crc, zeros, c);
            at += c;
        }
        const uint32_t b = e < to ? e : to;
        if (at < b) {
            crc = pq_crc32(crc, pc[i].data + (at - a), b - at);
            at = b;
        }
    }
    while (at < to) {
        const uint32_t c = to - at < sizeof zeros ? to - at : (uint32_t)sizeof zeros;
        crc = pq_crc32(crc, zeros, c);
        at += c;
    }
    return crc;
}

/* Header piece first (the CRC is rewritten in image_finish). */
bool pp_piece_header(plan *p)
{
    return pp_piece_copy(p, 0, p->hl, pp_bytes_get(p->kb, 0, p->hl));
}
