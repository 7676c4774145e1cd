#include "chunk_values.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "page_map.h"
#include "sv_grow.h"

void pq_chunk_values_free(pq_chunk_values *v)
{
    free(v->def);
    free(v->rep);
    free(v->values);
    free(v->arena);
    memset(v, 0, sizeof *v);
}

/* Room for n more entries. */
static bool reserve(pq_chunk_values *v, size_t *cap, uint32_t n, uint32_t max_entries)
{
    if (n > max_entries - v->n_entries)
        return false;
    size_t need = (size_t)v->n_entries + n;
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    if (c > max_entries)
        c = max_entries;
    pqv *nv = realloc(v->values, c * sizeof *nv);
    if (!nv)
        return false;
    v->values = nv;
    if (v->max_def) {
        uint16_t *nd = realloc(v->def, c * sizeof *nd);
        if (!nd)
            return false;
        v->def = nd;
    }
    if (v->max_rep) {
        uint16_t *nr = realloc(v->rep, c * sizeof *nr);
        if (!nr)
            return false;
        v->rep = nr;
    }
    *cap = c;
    return true;
}

int pq_chunk_values_decode(const pq_file_meta *m, uint32_t rg, uint32_t leaf, const uint8_t *chunk, size_t len,
                           int64_t expect_rows, const pq_chunk_limits *limits, pq_chunk_values *out, sv_error *err)
{
    memset(out, 0, sizeof *out);
    const pq_leaf *lf = &m->leaves[leaf];
    out->max_def = lf->max_def;
    out->max_rep = lf->max_rep;
    pqd_error derr;
    if (pqv_type_from_leaf(lf, &out->type, &derr) != PQD_OK)
        return sv_fail(err, PQ_CHUNK_E_UNSUPPORTED, 0, "column %s: %s", lf->path, derr.msg);
    pq_column_ctx ctx = pq_column_ctx_of(m, rg, leaf);
    pq_page_map pm;
    tc_error terr;
    memset(&terr, 0, sizeof terr);
    if (pq_page_map_from_chunk(&ctx, chunk, len, &pm, &terr) != TC_OK)
        return sv_fail(err, PQ_CHUNK_E_CORRUPT, 0, "column %s: %s", lf->path, terr.msg);
    pq_decoder *dec = pq_decoder_new(NULL);
    pq_dictionary dict;
    memset(&dict, 0, sizeof dict);
    bool have_dict = false;
    size_t cap = 0, arena_len = 0, arena_cap = 0;
    int rc = dec ? 0 : sv_fail(err, PQ_CHUNK_E_NOMEM, 0, "out of memory");
    pq_column_desc cd = {lf->type, lf->type_length, lf->max_def, lf->max_rep, ctx.chunk->codec};
    for (uint32_t i = 0; rc == 0 && i < pm.n_pages; i++) {
        const pq_page *pg = &pm.pages[i];
        const uint64_t rel = pg->offset - pm.chunk_offset;
        pq_page_header h;
        size_t hlen = 0;
        if (pq_page_header_parse(chunk + rel, pg->total_size, &h, &hlen, &terr) != TC_OK) {
            rc = sv_fail(err, PQ_CHUNK_E_CORRUPT, rel, "column %s: %s", lf->path, terr.msg);
            break;
        }
        const uint8_t *body = chunk + rel + hlen;
        const size_t blen = pg->total_size - hlen;
        if (h.type == PQ_PAGE_DICTIONARY) {
            pq_dict_page_info di;
            if (have_dict)
                rc = sv_fail(err, PQ_CHUNK_E_CORRUPT, rel, "column %s: two dictionary pages", lf->path);
            else if (pq_dict_page_info_from_header(&h, &di, &derr) != PQD_OK ||
                     pq_decode_dictionary(dec, &cd, &di, body, blen, &dict, &derr) != PQD_OK)
                rc = sv_fail(err, PQ_CHUNK_E_CORRUPT, rel, "column %s dictionary: %s", lf->path, derr.msg);
            have_dict = rc == 0;
            continue;
        }
        if (!pg->is_data)
            continue;
        pq_data_page_info info;
        pq_page_values pv;
        if (pq_data_page_info_from_header(&h, &info, &derr) != PQD_OK ||
            pq_decode_data_page(dec, &cd, &info, body, blen, have_dict ? &dict : NULL, &pv, &derr) != PQD_OK) {
            rc = sv_fail(err, derr.code == PQD_E_UNSUPPORTED ? PQ_CHUNK_E_UNSUPPORTED : PQ_CHUNK_E_CORRUPT, rel,
                         "column %s page at %llu: %s", lf->path, (unsigned long long)pg->offset, derr.msg);
            break;
        }
        if (!reserve(out, &cap, pv.num_values, limits->max_entries)) {
            rc = sv_fail(err, PQ_CHUNK_E_LIMIT, rel, "column %s: more than %u level entries, or out of memory",
                         lf->path, limits->max_entries);
            break;
        }
        uint32_t k = 0;
        for (uint32_t e = 0; rc == 0 && e < pv.num_values; e++) {
            const uint32_t at = out->n_entries++;
            if (out->def)
                out->def[at] = pv.def_levels ? pv.def_levels[e] : lf->max_def;
            if (out->rep)
                out->rep[at] = pv.rep_levels ? pv.rep_levels[e] : 0;
            if (!out->rep || out->rep[at] == 0)
                out->n_rows++;
            if (out->def && out->def[at] < lf->max_def) {
                memset(&out->values[at], 0, sizeof out->values[at]);
                continue;
            }
            pqv val;
            if (pqv_from_page(&out->type, &pv, k++, &val, &derr) != PQD_OK) {
                rc = sv_fail(err, PQ_CHUNK_E_CORRUPT, rel, "column %s: %s", lf->path, derr.msg);
                break;
            }
            if (val.kind == PQV_BYTES) {
                size_t need = arena_len + val.v.bytes.len;
                if (need > limits->max_value_bytes ||
                    !sv_grow((void **)&out->arena, &arena_cap, need, 1, 65536, limits->max_value_bytes)) {
                    rc = sv_fail(err, PQ_CHUNK_E_LIMIT, rel, "column %s: more than %llu bytes of values, or out of memory",
                                 lf->path, (unsigned long long)limits->max_value_bytes);
                    break;
                }
                if (val.v.bytes.len)
                    memcpy(out->arena + arena_len, val.v.bytes.ptr, val.v.bytes.len);
                val.v.bytes.ptr = (const uint8_t *)(uintptr_t)arena_len; /* fixed up below */
                arena_len = need;
            }
            out->values[at] = val;
        }
    }
    if (rc == 0 && out->rep && out->n_entries && out->rep[0] != 0)
        rc = sv_fail(err, PQ_CHUNK_E_CORRUPT, 0, "column %s: the first entry continues a row", lf->path);
    if (rc == 0 && (int64_t)out->n_entries != ctx.chunk->num_values)
        rc = sv_fail(err, PQ_CHUNK_E_CORRUPT, 0, "column %s: %u level entries, the chunk says %lld", lf->path,
                     out->n_entries, (long long)ctx.chunk->num_values);
    if (rc == 0 && expect_rows >= 0 && (int64_t)out->n_rows != expect_rows)
        rc = sv_fail(err, PQ_CHUNK_E_CORRUPT, 0, "column %s: %u rows for %lld", lf->path, out->n_rows,
                     (long long)expect_rows);
    if (rc == 0 && out->type.kind == PQV_BYTES)
        for (uint32_t i = 0; i < out->n_entries; i++)
            if (pq_chunk_has_value(out, i))
                out->values[i].v.bytes.ptr =
                    out->arena ? out->arena + (uintptr_t)out->values[i].v.bytes.ptr : (const uint8_t *)"";
    if (have_dict)
        pq_dictionary_free(&dict);
    pq_decoder_free(dec);
    pq_page_map_free(&pm);
    if (rc != 0)
        pq_chunk_values_free(out);
    return rc;
}
