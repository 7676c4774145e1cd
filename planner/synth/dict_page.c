/* Dictionary pages in a view: the entries the selected rows reference are
 * kept real, every other entry is zero. A fixed-width PLAIN dictionary holds
 * entry k at k x width of its (decompressed) body, so the entries are read
 * through the body's section like values of a data page: stored, in raw
 * zstd blocks, or in snappy literals (section_stream.c). The image keeps the
 * header (its CRC rewritten or kept), the block or literal headers and the
 * entries; it decodes to a dictionary of the same size. */
#include "page_plan_internal.h"

#include "cost_model.h"

#include <stdlib.h>

/* Bytes of unreferenced entries whose bits may be flipped to keep the
 * page's old CRC: any value there is never looked up. */
static void dict_patch_bytes(plan *p, const stream *s, uint32_t count)
{
    const uint32_t *e = p->in->dict_entries;
    const uint32_t n = p->in->n_dict_entries;
    uint32_t next = 0, tries = 0;
    for (uint32_t k = 0; k < count && p->n_patch < PATCH_MAX_BYTES && tries < 4096; k++, tries++) {
        while (next < n && e[next] < k)
            next++;
        if (next < n && e[next] == k)
            continue;
        rvec r = {0};
        if (pp_stream_map(s, (uint64_t)k * p->width, 1, false, &r) && r.n == 1 &&
            !pp_bytes_get(p->kb, r.v[0].off, 1))
            pp_patch_add(p, r.v[0].off, 0xff);
        free(r.v);
    }
}

st pp_run_dictionary(plan *p)
{
    const pp_input *in = p->in;
    const st hs = pp_header_read(p);
    if (hs != ST_OK)
        return hs;
    const pq_page_header *h = &p->h;
    if (h->type != PQ_PAGE_DICTIONARY)
        return pp_contradiction(p, "layout: page is a %s, not a dictionary page", pq_page_type_name(h->type));
    pq_dict_page_info info;
    pqd_error de;
    if (pq_dict_page_info_from_header(h, &info, &de) != PQD_OK)
        return pp_contradiction(p, "layout: %s", de.msg);
    if (info.num_values < 0 || info.uncompressed_page_size < 0)
        return pp_contradiction(p, "layout: negative dictionary size");
    if (info.encoding != PQ_ENC_PLAIN && info.encoding != PQ_ENC_PLAIN_DICTIONARY)
        return pp_real(p, "encoding: %s dictionary", pq_encoding_name(info.encoding));
    const pq_physical_type t = in->col.type;
    if (t == PQ_BYTE_ARRAY || t == PQ_BOOLEAN)
        return pp_real(p, "encoding: %s dictionary entries (lengths to walk)", pq_physical_type_name(t));
    const uint32_t count = (uint32_t)info.num_values;
    p->body = (uint32_t)h->compressed_page_size;
    p->unc = (uint32_t)info.uncompressed_page_size;
    p->compressed = in->col.codec != PQ_CODEC_UNCOMPRESSED;
    if ((uint64_t)count * p->width != p->unc)
        return pp_contradiction(p, "layout: %u entries of %u bytes in a %u-byte dictionary", count, p->width,
                                p->unc);
    if (!p->compressed && p->body != p->unc)
        return pp_contradiction(p, "layout: uncompressed page stores %u bytes but says %u", p->body, p->unc);
    for (uint32_t i = 0; i < in->n_dict_entries; i++)
        if (!in->dict_entries || in->dict_entries[i] >= count ||
            (i > 0 && in->dict_entries[i] <= in->dict_entries[i - 1]))
            return pp_contradiction(p, "layout: referenced entries out of order or past the %u of the dictionary",
                                    count);
    stream *s = &p->s;
    p->v2 = false; /* the whole body is the section, as a V1 page's */
    pp_values_section(p, pp_section_kind(p));
    const st ws = pp_stream_walk(p, s);
    if (ws == ST_REAL)
        return ST_REAL;
    /* Runs of consecutive entries, each one range (predicted through blocks
     * not walked yet: asked for in the same round as their headers). */
    st vstat = ST_OK;
    for (uint32_t i = 0; i < in->n_dict_entries && vstat != ST_REAL;) {
        uint32_t j = i + 1;
        while (j < in->n_dict_entries && in->dict_entries[j] == in->dict_entries[j - 1] + 1)
            j++;
        const uint64_t a = in->dict_entries[i], b = (uint64_t)in->dict_entries[j - 1] + 1;
        const st r = pp_stream_want(p, s, a * p->width, (b - a) * p->width, true);
        if (r != ST_OK)
            vstat = r;
        i = j;
    }
    if (vstat == ST_REAL)
        return ST_REAL;
    if (ws != ST_OK || vstat != ST_OK)
        return ST_NEED;
    const double budget = cost_partial_budget(p->total, 0, in->min_saving);
    if (cost_of_reads(pp_bytes_total(p->kb), 0, 0) > budget)
        return pp_real(p, "saving: fetched %llu of %u bytes, budget %.0f",
                       (unsigned long long)pp_bytes_total(p->kb), p->total, budget);
    if (h->has_crc)
        dict_patch_bytes(p, s, count);
    p->k_sel = in->n_dict_entries;
    p->out->dict_entries = count;
    if (!pp_pieces_known(p, 0, p->total))
        return pp_nomem(p, "pieces");
    return pp_image_finish(p);
}
