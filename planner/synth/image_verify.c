/* The image's last steps: its pieces checked, the CRC rewritten (or kept
 * by crc_patch.c), and one decode of the whole image ("when in doubt,
 * serve real bytes"). */
#include "page_plan_internal.h"

#include <stdlib.h>
#include <string.h>

/* Decode a dictionary page's image: the same entry count, and each entry
 * kept equal to the real one. */
static st pp_dictionary_verify(plan *p)
{
    uint8_t *bodybuf = malloc(p->body ? p->body : 1);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    pq_decoder *dec = pq_decoder_new(&lim);
    st res = ST_OK;
    pq_dictionary dict = {0};
    if (!bodybuf || !dec) {
        res = pp_nomem(p, "verification");
        goto out;
    }
    pp_image_read(p->pc, p->n_pc, p->hl, p->body, bodybuf);
    pq_dict_page_info info;
    pqd_error err;
    if (pq_dict_page_info_from_header(&p->h, &info, &err) != PQD_OK ||
        pq_decode_dictionary(dec, &p->in->col, &info, bodybuf, p->body, &dict, &err) != PQD_OK) {
        res = pp_contradiction(p, "verify: image does not decode: %s", err.msg);
        goto out;
    }
    if ((int64_t)dict.count != info.num_values || dict.width != p->width) {
        res = pp_contradiction(p, "verify: image decodes to %u entries of %u bytes (expected %d of %u)",
                               dict.count, dict.width, info.num_values, p->width);
        goto out;
    }
    for (uint32_t i = 0; i < p->in->n_dict_entries && res == ST_OK; i++) {
        const uint64_t k = p->in->dict_entries[i];
        uint8_t real[64];
        const uint8_t *got = (const uint8_t *)dict.values + k * p->width;
        if (p->width > sizeof real || !pp_stream_copy(p, &p->s, k * p->width, p->width, real) ||
            memcmp(real, got, p->width) != 0)
            res = pp_contradiction(p, "verify: entry %llu differs in the image", (unsigned long long)k);
    }
out:
    pq_dictionary_free(&dict);
    free(bodybuf);
    pq_decoder_free(dec);
    return res;
}

/* Sort pieces, check they are disjoint and inside the page, rewrite the CRC
 * and decode the image once. */
st pp_image_finish(plan *p)
{
    for (uint32_t i = 1; i < p->n_pc; i++)
        if (p->pc[i].off < p->pc[i - 1].off + p->pc[i - 1].len)
            return pp_contradiction(p, "verify: pieces overlap at %u", p->pc[i].off);
    if (p->n_pc == 0 || p->pc[0].off != 0 || p->pc[0].len < p->hl ||
        p->pc[p->n_pc - 1].off + p->pc[p->n_pc - 1].len > p->total)
        return pp_contradiction(p, "verify: pieces do not hold the header or leave the page");
    if (p->h.has_crc) {
        const uint32_t crc = pp_image_crc(p->pc, p->n_pc, p->hl, p->total);
        if (crc != p->h.crc && !pq_crc_rewrite(p->pc[0].data, p->hl, &p->h, crc)) {
            const st cs = pp_crc_patch(p);
            if (cs != ST_OK)
                return cs == ST_REAL && p->out->outcome != PP_REAL
                           ? pp_real(p, "crc: new CRC 0x%08x does not fit the %u-byte field and "
                                        "no free bytes to keep the old one",
                                     crc, p->h.crc_len)
                           : cs;
        }
    }
    if (p->in->dictionary)
        return pp_dictionary_verify(p);
    /* Decode the image. */
    uint8_t *bodybuf = malloc(p->body ? p->body : 1);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.materialize_dict = false;
    pq_decoder *dec = pq_decoder_new(&lim);
    st res = ST_OK;
    if (!bodybuf || !dec) {
        res = pp_nomem(p, "verification");
        goto out;
    }
    pp_image_read(p->pc, p->n_pc, p->hl, p->body, bodybuf);
    const int64_t w = pq_value_width(p->in->col.type, p->in->col.type_length);
    uint8_t zero_entry[16] = {0};
    uint32_t zero_offsets[2] = {0, 0};
    uint8_t *big_entry = NULL;
    pq_dictionary dict = {.type = p->in->col.type, .width = w > 0 ? (uint32_t)w : 0, .count = 1};
    if (w > (int64_t)sizeof zero_entry) {
        big_entry = calloc(1, (size_t)w);
        if (!big_entry) {
            res = pp_nomem(p, "verification");
            goto out;
        }
        dict.values = big_entry;
    } else {
        dict.values = zero_entry;
    }
    dict.offsets = zero_offsets;
    dict.data = zero_entry;
    pq_page_values pv;
    pqd_error err;
    const pqd_status ds =
        pq_decode_data_page(dec, &p->in->col, &p->info, bodybuf, p->body, &dict, &pv, &err);
    free(big_entry);
    if (ds != PQD_OK) {
        res = pp_contradiction(p, "verify: image does not decode: %s", err.msg);
        goto out;
    }
    if (pv.num_values != p->n || pv.num_non_null != p->expect_k)
        res = pp_contradiction(p, "verify: image decodes to %u values, %u non-null (expected %u, %u)",
                      pv.num_values, pv.num_non_null, p->n, p->expect_k);
out:
    free(bodybuf);
    pq_decoder_free(dec);
    return res;
}
