/* Fuzz the page planner (page_plan.c): drive the pp_plan loop over one page
 * with every byte it asks for available, and check its contract (abort on
 * violation):
 *   - PP_NEED asks for sorted, disjoint, non-empty ranges inside the page,
 *     none holding a byte already known, and the loop ends within
 *     PP_MAX_ROUNDS rounds;
 *   - PP_REAL has a reason starting with one of the stable words;
 *   - PP_SPARSE pieces are sorted, disjoint and inside the page; the image
 *     keeps every header byte but the CRC field (which matches the image
 *     body), decodes, and, where the real page decodes too, has the same
 *     number of values, the same levels (unless a V1 compressed body was
 *     rebuilt with no row selected) and the same values at selected rows;
 *     pp_image_read agrees at every offset tried.
 *
 * Input layout (little-endian):
 *   0  u8  physical type (mod 8)
 *   1  u8  flags: 1 optional (max_def 1), 2 nested (max_rep 1), 4 page rows
 *          from offset 8 instead of the page header, 8 dictionary size known,
 *          16 request cost = byte 3 x 64, 32 the page is a dictionary page and
 *          the row range starts are the entries to keep (then a PP_SPARSE
 *          image decodes to a dictionary of as many entries, those equal)
 *   2  u8  codec (mod 8)
 *   3  u8  gap_merge / 16
 *   4  u16 type_length
 *   6  u8  min_saving * 256
 *   7  u8  row ranges used (mod 17)
 *   8  u32 page rows (flag 4)
 *  12  16 x (u16 start, u16 len): selected rows, normalized by the harness
 *  76  the page: header and body */
#include "page_plan.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HDR 76u
#define MAX_PAGE_UNC (4u << 20)

static void check(bool ok)
{
    if (!ok)
        abort();
}

static uint32_t rd16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rd32(const uint8_t *p)
{
    return rd16(p) | rd16(p + 2) << 16;
}

static int cmp_range(const void *a, const void *b)
{
    const pp_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static bool reason_ok(const char *r)
{
    static const char *const words[] = {"encoding:", "codec:", "nested:", "crc:",   "saving:",
                                        "layout:",   "rounds:", "zstd:",  "snappy:", "levels:", "nomem:",
                                        "verify:"};
    if (!memchr(r, 0, sizeof ((pp_result *)0)->reason))
        return false;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strncmp(r, words[i], strlen(words[i])) == 0)
            return true;
    return false;
}

static bool same_value(const pq_page_values *a, const pq_page_values *b, uint32_t i)
{
    if (a->type == PQ_BYTE_ARRAY) {
        if (!a->offsets || !b->offsets)
            return a->dict_indices[i] == b->dict_indices[i];
        const uint32_t la = a->offsets[i + 1] - a->offsets[i];
        const uint32_t lb = b->offsets[i + 1] - b->offsets[i];
        return la == lb && memcmp(a->data + a->offsets[i], b->data + b->offsets[i], la) == 0;
    }
    if (a->dict_encoded && (!a->values || !b->values))
        return a->dict_indices[i] == b->dict_indices[i];
    return memcmp((const uint8_t *)a->values + (size_t)i * a->width,
                  (const uint8_t *)b->values + (size_t)i * b->width, a->width) == 0;
}

/* The image's header is the page's but the CRC, which matches the image's
 * body; returns the header's length (h: the page's header). */
static size_t check_header_kept(const uint8_t *page, const uint8_t *img, uint32_t len, pq_page_header *h)
{
    pq_page_header hi;
    size_t hl, hli;
    check(pq_page_header_parse(page, len, h, &hl, NULL) == TC_OK);
    check(pq_page_header_parse(img, len, &hi, &hli, NULL) == TC_OK);
    check(hl == hli);
    for (size_t i = 0; i < hl; i++)
        if (!h->has_crc || i < h->crc_offset || i >= h->crc_offset + h->crc_len)
            check(img[i] == page[i]);
    if (h->has_crc)
        check(hi.crc == pq_crc32(0, img + hl, len - hl));
    return hl;
}

static void check_sparse(const pq_column_desc *col, const uint8_t *page, uint32_t len,
                         const pp_result *res, const pp_range *rows, uint32_t n_rows)
{
    for (uint32_t i = 0; i < res->n_pieces; i++) {
        check(res->pieces[i].len > 0);
        check((uint64_t)res->pieces[i].off + res->pieces[i].len <= len);
        if (i)
            check(res->pieces[i].off >= res->pieces[i - 1].off + res->pieces[i - 1].len);
    }
    uint8_t *img = malloc(len);
    check(img != NULL);
    pp_image_read(res->pieces, res->n_pieces, 0, len, img);
    for (uint32_t off = 0; off < len; off += 1 + off / 3) {
        const uint32_t l = (len - off) / 2 + 1 < len - off ? (len - off) / 2 + 1 : len - off;
        uint8_t *part = malloc(l);
        check(part != NULL);
        pp_image_read(res->pieces, res->n_pieces, off, l, part);
        check(memcmp(part, img + off, l) == 0);
        free(part);
    }
    pq_page_header h;
    const size_t hl = check_header_kept(page, img, len, &h);
    pq_data_page_info info;
    check(pq_data_page_info_from_header(&h, &info, NULL) == PQD_OK);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.materialize_dict = false;
    pq_decoder *d1 = pq_decoder_new(&lim), *d2 = pq_decoder_new(&lim);
    check(d1 && d2);
    const int64_t w = pq_value_width(col->type, col->type_length);
    uint8_t *zero = calloc(1, w > 0 ? (size_t)w : 1);
    uint32_t offs[2] = {0, 0};
    pq_dictionary dict = {.type = col->type, .width = w > 0 ? (uint32_t)w : 0,
                          .count = UINT32_MAX, .values = zero, .offsets = offs, .data = zero};
    pq_page_values a, b;
    const bool real_ok =
        pq_decode_data_page(d1, col, &info, page + hl, len - hl, &dict, &a, NULL) == PQD_OK;
    check(pq_decode_data_page(d2, col, &info, img + hl, len - hl, &dict, &b, NULL) == PQD_OK);
    if (real_ok) {
        check(a.num_values == b.num_values);
        const bool v1_rebuilt = res->synthesized && !info.v2 && col->codec != PQ_CODEC_UNCOMPRESSED;
        if (!(v1_rebuilt && n_rows == 0)) {
            check(a.num_non_null == b.num_non_null);
            if (col->max_def)
                check(memcmp(a.def_levels, b.def_levels, (size_t)a.num_values * 2) == 0);
        }
        uint32_t vi = 0, r = 0, checked = 0;
        for (uint32_t i = 0; i < a.num_values; i++) {
            const bool present = !col->max_def || a.def_levels[i] == col->max_def;
            while (r < n_rows && i >= rows[r].off + rows[r].len)
                r++;
            if (r < n_rows && i >= rows[r].off && present) {
                check(same_value(&a, &b, vi));
                checked++;
            }
            vi += present;
        }
        check(checked == res->selected_values);
    }
    free(zero);
    pq_decoder_free(d1);
    pq_decoder_free(d2);
    free(img);
}

/* A dictionary page's image: header as the page's but the CRC (which
 * matches), the same entry count, the kept entries equal. */
static void check_dictionary(const pq_column_desc *col, const uint8_t *page, uint32_t len, const pp_result *res,
                             const uint32_t *entries, uint32_t n)
{
    uint8_t *img = malloc(len);
    check(img != NULL);
    pp_image_read(res->pieces, res->n_pieces, 0, len, img);
    pq_page_header h;
    const size_t hl = check_header_kept(page, img, len, &h);
    pq_dict_page_info info;
    check(pq_dict_page_info_from_header(&h, &info, NULL) == PQD_OK);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    pq_decoder *d = pq_decoder_new(&lim);
    check(d != NULL);
    pq_dictionary a = {0}, b = {0};
    check(pq_decode_dictionary(d, col, &info, img + hl, len - hl, &b, NULL) == PQD_OK);
    if (pq_decode_dictionary(d, col, &info, page + hl, len - hl, &a, NULL) == PQD_OK) {
        check(a.count == b.count && a.width == b.width && a.width > 0);
        for (uint32_t i = 0; i < n; i++)
            check(entries[i] < a.count &&
                  memcmp((const uint8_t *)a.values + (size_t)entries[i] * a.width,
                         (const uint8_t *)b.values + (size_t)entries[i] * b.width, a.width) == 0);
    }
    check(res->selected_values == n);
    pq_dictionary_free(&a);
    pq_dictionary_free(&b);
    pq_decoder_free(d);
    free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size <= HDR || size - HDR > (16u << 20))
        return 0;
    const uint8_t flags = data[1];
    const uint32_t len = (uint32_t)(size - HDR);
    /* Exact-size copy so that reads past the page are caught. */
    uint8_t *page = malloc(len);
    check(page != NULL);
    memcpy(page, data + HDR, len);
    pq_column_desc col = {.type = (pq_physical_type)(data[0] % 8),
                          .type_length = (int32_t)rd16(data + 4),
                          .max_def = (uint16_t)(flags & 1),
                          .max_rep = (uint16_t)((flags >> 1) & 1),
                          .codec = data[2] % 8};
    int64_t rows = (flags & 4) ? (int64_t)(rd32(data + 8) & 0xFFFFF) : -1;
    pq_page_header h;
    size_t hl;
    if (pq_page_header_parse(page, len, &h, &hl, NULL) == TC_OK) {
        if (h.uncompressed_page_size > (int32_t)MAX_PAGE_UNC) {
            free(page);
            return 0;
        }
        if (rows < 0)
            rows = h.type == PQ_PAGE_DATA_V2 ? h.v2.num_rows : h.data.num_values;
    }
    if (rows < 0 || rows > (1 << 20))
        rows = 1;
    const bool dictionary = flags & 32;
    pq_page pg = {.offset = 0, .total_size = len, .first_row = dictionary ? -1 : 0, .num_rows = dictionary ? -1 : rows,
                  .is_data = !dictionary, .compressed_size = -1, .uncompressed_size = -1,
                  .num_values = -1, .num_nulls = -1, .page_type = -1, .encoding = -1};
    pq_page_map pm = {.pages = &pg, .n_pages = 1, .n_data_pages = dictionary ? 0 : 1, .dict_page = dictionary ? 0 : -1,
                      .has_offset_index = true, .type = col.type, .type_length = col.type_length,
                      .codec = (pq_codec)col.codec, .max_def = col.max_def,
                      .max_rep = col.max_rep, .chunk_len = len, .num_values = rows,
                      .row_group_rows = rows};
    pp_range sel[16];
    uint32_t n = 0;
    const uint32_t want = data[7] % 17;
    for (uint32_t i = 0; i < want; i++) {
        const uint32_t a = rd16(data + 12 + 4 * i), l = rd16(data + 14 + 4 * i);
        if (a < rows && l > 0)
            sel[n++] = (pp_range){a, (uint32_t)((uint64_t)a + l > (uint64_t)rows ? rows - a : l)};
    }
    qsort(sel, n, sizeof *sel, cmp_range);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (m && sel[i].off < sel[m - 1].off + sel[m - 1].len) {
            const uint32_t e = sel[i].off + sel[i].len;
            if (e > sel[m - 1].off + sel[m - 1].len)
                sel[m - 1].len = e - sel[m - 1].off;
            continue;
        }
        sel[m++] = sel[i];
    }
    /* Dictionary pages: the selected ranges' starts, distinct, as entries. */
    uint32_t entries[16], n_entries = 0;
    for (uint32_t i = 0; dictionary && i < m; i++)
        entries[n_entries++] = sel[i].off;
    const pp_input in = {.pm = &pm, .page = 0, .col = col, .rows = dictionary ? NULL : sel, .n_rows = dictionary ? 0 : m,
                         .dictionary = dictionary, .dict_entries = entries, .n_dict_entries = n_entries,
                         .gap_merge = (uint32_t)data[3] * 16, .min_saving = data[6] / 256.0,
                         .dict_values = (flags & 8) ? 1 + data[3] : 0,
                         .request_cost = (flags & 16) ? (uint32_t)data[3] * 64 : 0};
    pp_bytes *kb = pp_bytes_new(len);
    check(kb != NULL);
    pp_result res;
    for (int loop = 0;; loop++) {
        pp_plan(&in, kb, &res);
        if (res.outcome != PP_NEED)
            break;
        check(loop <= PP_MAX_ROUNDS);
        check(res.n_need > 0);
        for (uint32_t i = 0; i < res.n_need; i++) {
            const pp_range *r = &res.need[i];
            check(r->len > 0 && (uint64_t)r->off + r->len <= len);
            if (i)
                check(r->off >= res.need[i - 1].off + res.need[i - 1].len);
            for (uint32_t k = r->off; k < r->off + r->len; k++)
                check(pp_bytes_get(kb, k, 1) == NULL);
        }
        for (uint32_t i = 0; i < res.n_need; i++)
            check(pp_bytes_put(kb, res.need[i].off, page + res.need[i].off, res.need[i].len));
        pp_result_free(&res);
    }
    check(pp_bytes_rounds(kb) <= PP_MAX_ROUNDS);
    check(res.fetched == pp_bytes_total(kb));
    if (res.outcome == PP_REAL) {
        check(reason_ok(res.reason));
        check(res.n_pieces == 0 && res.n_need == 0);
    } else {
        check(res.outcome == PP_SPARSE);
        if (dictionary)
            check_dictionary(&col, page, len, &res, entries, n_entries);
        else
            check_sparse(&col, page, len, &res, sel, m);
        if (m > 0 && !res.synthesized)
            check((double)res.fetched <= (1.0 - in.min_saving) * len + 1e-6);
    }
    pp_result_free(&res);
    pp_bytes_free(kb);
    free(page);
    return 0;
}
