/* The dictionary entries selected rows reference; see dict_refs.h. */
#include "dict_refs.h"

#include <stdlib.h>
#include <string.h>

#include "parquet_meta.h"
#include "sv_grow.h"

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

dict_refs_status dict_refs_add_page(dict_refs *refs, const pq_column_desc *col, const uint8_t *page, size_t len,
                                    int64_t num_rows, const pp_range *rows, uint32_t n_rows)
{
    if (col->max_rep != 0 || col->max_def > 1)
        return DR_BAD;
    pq_page_header h;
    size_t hl = 0;
    if (pq_page_header_parse(page, len, &h, &hl, NULL) != TC_OK ||
        (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2) || h.compressed_page_size < 0 ||
        hl + (size_t)h.compressed_page_size != len)
        return DR_BAD;
    pq_data_page_info info;
    if (pq_data_page_info_from_header(&h, &info, NULL) != PQD_OK)
        return DR_BAD;
    if (info.encoding != PQ_ENC_RLE_DICTIONARY && info.encoding != PQ_ENC_PLAIN_DICTIONARY)
        return DR_NOT_DICT;
    if (info.num_values < 0 || info.num_values != num_rows)
        return DR_BAD;
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.materialize_dict = false;
    pq_decoder *dec = pq_decoder_new(&lim);
    if (!dec)
        return DR_NOMEM;
    /* Indices are only checked against the dictionary's size: the page
     * planner checks them against the real one. */
    uint8_t zero[16] = {0};
    uint32_t offs[2] = {0, 0};
    const int64_t w = pq_value_width(col->type, col->type_length);
    pq_dictionary any = {.type = col->type, .width = w > 0 ? (uint32_t)w : 0, .count = UINT32_MAX,
                         .values = zero, .offsets = offs, .data = zero};
    pq_page_values pv;
    dict_refs_status res = DR_OK;
    if (pq_decode_data_page(dec, col, &info, page + hl, len - hl, &any, &pv, NULL) != PQD_OK || !pv.dict_encoded ||
        !pv.dict_indices || pv.num_values != (uint32_t)num_rows || (col->max_def && !pv.def_levels)) {
        res = DR_BAD;
        goto out;
    }
    /* Walk the rows in order, counting the non-null values before each. */
    uint32_t vi = 0, row = 0;
    for (uint32_t r = 0; r < n_rows && res == DR_OK; r++) {
        if ((uint64_t)rows[r].off + rows[r].len > pv.num_values || rows[r].off < row) {
            res = DR_BAD;
            break;
        }
        for (; row < rows[r].off; row++)
            vi += !col->max_def || pv.def_levels[row] == col->max_def;
        for (; row < rows[r].off + rows[r].len; row++) {
            if (col->max_def && pv.def_levels[row] != col->max_def)
                continue;
            if (vi >= pv.num_non_null) {
                res = DR_BAD;
                break;
            }
            if (!sv_grow((void **)&refs->v, &refs->cap, refs->n + 1, sizeof *refs->v, 256, SIZE_MAX / 8)) {
                res = DR_NOMEM;
                break;
            }
            refs->v[refs->n++] = pv.dict_indices[vi++];
        }
    }
out:
    pq_decoder_free(dec);
    return res;
}

void dict_refs_finish(dict_refs *refs)
{
    if (refs->n < 2)
        return;
    qsort(refs->v, refs->n, sizeof *refs->v, cmp_u32);
    size_t w = 1;
    for (size_t i = 1; i < refs->n; i++)
        if (refs->v[i] != refs->v[w - 1])
            refs->v[w++] = refs->v[i];
    refs->n = w;
}

void dict_refs_free(dict_refs *refs)
{
    free(refs->v);
    memset(refs, 0, sizeof *refs);
}
