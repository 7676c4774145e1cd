/* Fuzz data/dictionary page decoding (planner/decode/: page_decode.c,
 * value_decode.c, codec.c, rle_hybrid.c) and value conversion (pq_value.c).
 * Input layout: fuzz_decode_page.h. Every output is read back in full so
 * that the sanitizers see any pointer or length that strays outside its
 * buffer, and the documented invariants are checked (abort on violation). */
#include "decode.h"
#include "fuzz_decode_page.h"
#include "pq_value.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

static int32_t rd32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

/* Touch every output byte; returns a checksum so it is not optimised out. */
static uint64_t touch(const pq_page_values *pv, const pq_column_desc *c, const pq_dictionary *dict)
{
    uint64_t sum = 0;
    check(pv->num_non_null <= pv->num_values);
    if (c->max_def == 0)
        check(pv->def_levels == NULL && pv->num_non_null == pv->num_values);
    for (uint32_t i = 0; pv->def_levels && i < pv->num_values; i++)
        check(pv->def_levels[i] <= c->max_def);
    for (uint32_t i = 0; pv->rep_levels && i < pv->num_values; i++)
        check(pv->rep_levels[i] <= c->max_rep);
    if (pv->type == PQ_BYTE_ARRAY) {
        check(pv->offsets != NULL || (pv->dict_encoded && !pv->offsets));
        if (pv->offsets) {
            check(pv->offsets[0] == 0);
            for (uint32_t i = 0; i < pv->num_non_null; i++) {
                check(pv->offsets[i] <= pv->offsets[i + 1]);
                for (uint32_t k = pv->offsets[i]; k < pv->offsets[i + 1]; k++)
                    sum += pv->data[k];
            }
        }
    } else if (pv->values) {
        const uint8_t *v = pv->values;
        for (size_t i = 0; i < (size_t)pv->num_non_null * pv->width; i++)
            sum += v[i];
        if (pv->type == PQ_BOOLEAN)
            for (uint32_t i = 0; i < pv->num_non_null; i++)
                check(v[i] <= 1);
    }
    if (pv->dict_encoded) {
        check(dict != NULL);
        for (uint32_t i = 0; i < pv->num_non_null; i++)
            check(pv->dict_indices[i] < dict->count);
    }
    return sum;
}

/* Convert every value with pq_value and compare neighbours. */
static void values_roundtrip(const pq_page_values *pv, const pq_column_desc *c, int32_t tl)
{
    if (pv->type == PQ_BYTE_ARRAY ? !pv->offsets : !pv->values)
        return;
    static const int32_t converted[] = {PQ_CT_NONE, PQ_CT_DECIMAL, PQ_CT_UINT_32, PQ_CT_DATE};
    for (size_t k = 0; k < sizeof converted / sizeof converted[0]; k++) {
        pqv_type t;
        if (pqv_type_resolve(c->type, tl, converted[k], 2, 18, NULL, &t, NULL) != PQD_OK)
            continue;
        pqv prev;
        bool have_prev = false;
        for (uint32_t i = 0; i < pv->num_non_null && i < 256; i++) {
            pqv v;
            if (pqv_from_page(&t, pv, i, &v, NULL) != PQD_OK)
                continue;
            char buf[96];
            pqv_format(&v, buf, sizeof buf);
            check(memchr(buf, 0, sizeof buf) != NULL);
            const pqv_order o = pqv_compare(&v, &v);
            check(o == PQV_EQ);
            if (have_prev) {
                const pqv_order a = pqv_compare(&prev, &v), b = pqv_compare(&v, &prev);
                check(a != PQV_INCOMPARABLE && (int)a == -(int)b);
            }
            prev = v;
            have_prev = true;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < FUZZ_PAGE_HEADER_LEN)
        return 0;
    const uint8_t *h = data;
    const uint8_t flags = h[1];
    pq_column_desc c = {
        .type = (pq_physical_type)(h[0] % 8),
        .type_length = rd32(h + 8),
        .max_def = h[6],
        .max_rep = h[7],
        .codec = h[2],
    };
    pq_data_page_info info = {
        .v2 = flags & FUZZ_PAGE_V2,
        .num_values = rd32(h + 12),
        .encoding = h[3],
        .uncompressed_page_size = rd32(h + 32),
        .def_level_encoding = h[4],
        .rep_level_encoding = h[5],
        .num_nulls = rd32(h + 16),
        .num_rows = rd32(h + 20),
        .def_levels_byte_length = rd32(h + 24),
        .rep_levels_byte_length = rd32(h + 28),
        .is_compressed = flags & FUZZ_PAGE_COMPRESSED,
    };
    const pq_dict_page_info dinfo = {
        .num_values = rd32(h + 36),
        .uncompressed_page_size = rd32(h + 40),
        .encoding = h[48],
    };
    size_t dict_len = (uint32_t)rd32(h + 44);
    const uint8_t *rest = data + FUZZ_PAGE_HEADER_LEN;
    size_t rest_len = size - FUZZ_PAGE_HEADER_LEN;
    if (dict_len > rest_len)
        dict_len = rest_len;

    /* Exact-size heap copies so that reads past either body are caught. */
    uint8_t *dict_body = malloc(dict_len ? dict_len : 1);
    uint8_t *page_body = malloc(rest_len - dict_len ? rest_len - dict_len : 1);
    if (!dict_body || !page_body)
        abort();
    memcpy(dict_body, rest, dict_len);
    memcpy(page_body, rest + dict_len, rest_len - dict_len);

    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.max_values = 1u << 20;
    lim.max_page_bytes = 4u << 20;
    lim.max_value_bytes = 16u << 20;
    lim.materialize_dict = !(flags & FUZZ_PAGE_INDICES_ONLY);
    pq_decoder *d = pq_decoder_new(&lim);
    check(d != NULL);

    pq_dictionary dict;
    bool have_dict = false;
    pqd_error err;
    if (flags & FUZZ_PAGE_HAS_DICT) {
        const pqd_status st = pq_decode_dictionary(d, &c, &dinfo, dict_body, dict_len, &dict, &err);
        if (st == PQD_OK) {
            have_dict = true;
            check(dict.type == c.type);
            if (c.type == PQ_BYTE_ARRAY) {
                check(dict.offsets[0] == 0);
                for (uint32_t i = 0; i < dict.count; i++)
                    check(dict.offsets[i] <= dict.offsets[i + 1]);
            }
        } else {
            check(err.code == (int)st && memchr(err.msg, 0, sizeof err.msg) != NULL);
        }
    }
    pq_page_values pv;
    volatile uint64_t sink = 0;
    /* Twice with the same decoder: buffer reuse must not change the result. */
    for (int round = 0; round < 2; round++) {
        const pqd_status st = pq_decode_data_page(d, &c, &info, page_body, rest_len - dict_len,
                                                  have_dict ? &dict : NULL, &pv, &err);
        if (st == PQD_OK) {
            sink += touch(&pv, &c, have_dict ? &dict : NULL);
            if (round == 0)
                values_roundtrip(&pv, &c, c.type_length);
        } else {
            check(err.code == (int)st && memchr(err.msg, 0, sizeof err.msg) != NULL);
        }
    }
    (void)sink;
    if (have_dict)
        pq_dictionary_free(&dict);
    pq_decoder_free(d);
    free(dict_body);
    free(page_body);
    return 0;
}
