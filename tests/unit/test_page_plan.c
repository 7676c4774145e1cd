/* The page planner (page_plan.c): known-byte bookkeeping, image reads, and
 * the pp_plan loop on hand-built pages (V1/V2, uncompressed, zstd raw and
 * compressed frames, every encoding the planner rebuilds) and on every data
 * page of the committed fixtures. Every sparse image is checked the way a
 * reader would see it: same size, header bytes unchanged but for the CRC
 * (recomputed over the image body), decodes with pq_decode_data_page to the
 * same levels and the same values at the selected rows. */
#include "dict_refs.h"
#include "page_plan.h"
#include "page_plan_internal.h"
#include "rle_hybrid.h"
#include "pq_test_encode.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <snappy-c.h>
#include <zstd.h>

#include "fixture_files.h"

#define PATCH_MAX_BYTES_FOR_TESTS 8u /* bytes a CRC patch may set (page_plan_internal.h) */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd64(void)
{
    return t_xorshift64(&rng);
}

/* ------------------------------------------------------------------ */
/* known bytes and images                                              */
/* ------------------------------------------------------------------ */

Test(bytes, put_get_merge)
{
    pp_bytes *kb = pp_bytes_new(100);
    uint8_t page[100];
    for (int i = 0; i < 100; i++)
        page[i] = (uint8_t)(i * 7 + 1);
    cr_assert_eq(pp_bytes_total(kb), 0);
    cr_assert_null(pp_bytes_get(kb, 0, 1));
    cr_assert(pp_bytes_put(kb, 10, page + 10, 10));
    cr_assert(pp_bytes_put(kb, 30, page + 30, 5));
    cr_assert_eq(pp_bytes_total(kb), 15);
    cr_assert_not_null(pp_bytes_get(kb, 12, 8));
    cr_assert_null(pp_bytes_get(kb, 12, 9));
    cr_assert_null(pp_bytes_get(kb, 25, 2));
    /* Adjacent and overlapping puts merge. */
    cr_assert(pp_bytes_put(kb, 20, page + 20, 10));
    cr_assert_eq(pp_bytes_total(kb), 25);
    const uint8_t *g = pp_bytes_get(kb, 10, 25);
    cr_assert_not_null(g);
    cr_assert(memcmp(g, page + 10, 25) == 0);
    cr_assert(pp_bytes_put(kb, 5, page + 5, 40));
    cr_assert_eq(pp_bytes_total(kb), 40);
    cr_assert(memcmp(pp_bytes_get(kb, 5, 40), page + 5, 40) == 0);
    cr_assert(pp_bytes_put(kb, 90, page + 90, 10));
    cr_assert(pp_bytes_put(kb, 0, page, 3));
    cr_assert_eq(pp_bytes_total(kb), 53);
    /* Out of the page. */
    cr_assert_not(pp_bytes_put(kb, 95, page, 6));
    cr_assert_not(pp_bytes_put(kb, 101, page, 0));
    cr_assert(pp_bytes_put(kb, 100, page, 0));
    cr_assert_null(pp_bytes_get(kb, 99, 2));
    /* Fill everything: one span. */
    cr_assert(pp_bytes_put(kb, 0, page, 100));
    cr_assert_eq(pp_bytes_total(kb), 100);
    cr_assert(memcmp(pp_bytes_get(kb, 0, 100), page, 100) == 0);
    cr_assert_eq(pp_bytes_rounds(kb), 0);
    pp_bytes_free(kb);
}

Test(bytes, random_puts_match_reference)
{
    for (int trial = 0; trial < 50; trial++) {
        const uint32_t size = 1 + (uint32_t)(rnd64() % 3000);
        uint8_t *page = malloc(size), *have = calloc(1, size);
        for (uint32_t i = 0; i < size; i++)
            page[i] = (uint8_t)rnd64();
        pp_bytes *kb = pp_bytes_new(size);
        for (int k = 0; k < 40; k++) {
            const uint32_t off = (uint32_t)(rnd64() % size);
            const uint32_t len = (uint32_t)(rnd64() % (size - off + 1));
            cr_assert(pp_bytes_put(kb, off, page + off, len));
            memset(have + off, 1, len);
            uint64_t total = 0;
            for (uint32_t i = 0; i < size; i++)
                total += have[i];
            cr_assert_eq(pp_bytes_total(kb), total);
            const uint32_t qo = (uint32_t)(rnd64() % size);
            const uint32_t ql = 1 + (uint32_t)(rnd64() % (size - qo));
            bool all = true;
            for (uint32_t i = qo; i < qo + ql; i++)
                all = all && have[i];
            const uint8_t *g = pp_bytes_get(kb, qo, ql);
            cr_assert_eq(g != NULL, all, "trial %d [%u,+%u)", trial, qo, ql);
            if (g)
                cr_assert(memcmp(g, page + qo, ql) == 0);
        }
        pp_bytes_free(kb);
        free(page);
        free(have);
    }
}

Test(image, read_at_any_offset)
{
    uint8_t a[5] = {1, 2, 3, 4, 5}, b[3] = {9, 8, 7}, c[1] = {42};
    pp_piece pieces[3] = {{2, 5, a}, {10, 3, b}, {19, 1, c}};
    uint8_t ref[20] = {0};
    memcpy(ref + 2, a, 5);
    memcpy(ref + 10, b, 3);
    ref[19] = 42;
    for (uint32_t off = 0; off <= 20; off++)
        for (uint32_t len = 0; off + len <= 20; len++) {
            uint8_t dst[20];
            memset(dst, 0xEE, sizeof dst);
            pp_image_read(pieces, 3, off, len, dst);
            cr_assert(memcmp(dst, ref + off, len) == 0, "[%u,+%u)", off, len);
            if (len < 20)
                cr_assert_eq(dst[len], 0xEE);
        }
    pp_image_read(NULL, 0, 5, 4, ref);
    cr_assert(ref[0] == 0 && ref[3] == 0 && ref[4] == 3);
}

/* ------------------------------------------------------------------ */
/* hand-built pages                                                    */
/* ------------------------------------------------------------------ */

static void th_field(tbuf *b, int16_t *last, int16_t id, uint8_t type)
{
    const int16_t d = (int16_t)(id - *last);
    if (d > 0 && d <= 15) {
        tb_u8(b, (uint8_t)((d << 4) | type));
    } else {
        tb_u8(b, type);
        tb_uleb(b, t_zigzag(id));
    }
    *last = id;
}

static void th_i32(tbuf *b, int16_t *last, int16_t id, int32_t v)
{
    th_field(b, last, id, 5);
    tb_uleb(b, t_zigzag(v));
}

typedef struct {
    bool v2;
    int32_t n, nulls, enc, def_enc;
    bool crc, is_compressed;
    uint32_t stats_len; /* a max statistic of this many bytes (a long header) */
    uint32_t crc_value; /* written instead of the body's CRC when not 0 */
} hdr_spec;

/* PageHeader of a data page with the given body sizes. */
static void build_header(tbuf *b, const hdr_spec *h, size_t unc, size_t comp, uint32_t crc,
                         int32_t dl)
{
    int16_t last = 0;
    th_i32(b, &last, 1, h->v2 ? PQ_PAGE_DATA_V2 : PQ_PAGE_DATA);
    th_i32(b, &last, 2, (int32_t)unc);
    th_i32(b, &last, 3, (int32_t)comp);
    if (h->crc)
        th_i32(b, &last, 4, (int32_t)crc);
    int16_t l2 = 0;
    if (!h->v2) {
        th_field(b, &last, 5, 12);
        th_i32(b, &l2, 1, h->n);
        th_i32(b, &l2, 2, h->enc);
        th_i32(b, &l2, 3, h->def_enc ? h->def_enc : PQ_ENC_RLE);
        th_i32(b, &l2, 4, PQ_ENC_RLE);
    } else {
        th_field(b, &last, 8, 12);
        th_i32(b, &l2, 1, h->n);
        th_i32(b, &l2, 2, h->nulls);
        th_i32(b, &l2, 3, h->n);
        th_i32(b, &l2, 4, h->enc);
        th_i32(b, &l2, 5, dl);
        th_i32(b, &l2, 6, 0);
        th_field(b, &l2, 7, h->is_compressed ? 1 : 2);
    }
    if (h->stats_len) {
        th_field(b, &l2, h->v2 ? 8 : 5, 12);
        int16_t l3 = 0;
        th_field(b, &l3, 1, 8);
        tb_uleb(b, h->stats_len);
        for (uint32_t i = 0; i < h->stats_len; i++)
            tb_u8(b, (uint8_t)i);
        tb_u8(b, 0);
    }
    tb_u8(b, 0);
    tb_u8(b, 0);
}

/* A zstd frame of raw blocks of the given sizes (0-terminated list; the
 * last block takes the rest). */
static void zstd_raw_frame(tbuf *b, const uint8_t *src, size_t len, const uint32_t *sizes)
{
    tb_le32(b, 0xFD2FB528u);
    tb_u8(b, 0x80);  /* FCS 4 bytes, not single segment */
    tb_u8(b, 0x38);  /* window 128 KiB */
    tb_le32(b, (uint32_t)len);
    size_t at = 0;
    for (int i = 0;; i++) {
        size_t sz = sizes && sizes[i] ? sizes[i] : 131072;
        if (sz > len - at)
            sz = len - at;
        const bool last = at + sz == len;
        const uint32_t h = (uint32_t)(sz << 3) | (last ? 1u : 0u); /* type raw */
        tb_u8(b, (uint8_t)h);
        tb_u8(b, (uint8_t)(h >> 8));
        tb_u8(b, (uint8_t)(h >> 16));
        tb_put(b, src + at, sz);
        at += sz;
        if (last)
            break;
    }
}

typedef enum { Z_NONE, Z_RAW, Z_COMPRESSED, Z_SNAPPY } zmode;

typedef struct {
    pq_column_desc col;
    hdr_spec h;
    zmode z;
    const uint32_t *raw_sizes;
    /* values */
    uint32_t n;
    const uint8_t *def;  /* n levels (NULL: all present) */
    tbuf values;         /* encoded values region */
} page_spec;

typedef struct {
    uint8_t *data;
    uint32_t len, hl;
    pq_page pg;
    pq_page_map pm;
} built_page;

static void build_page(const page_spec *ps, built_page *out)
{
    tbuf levels = {0}, body = {0}, hdr = {0};
    uint32_t nulls = 0;
    if (ps->col.max_def) {
        uint64_t *lv = malloc((ps->n + 1) * sizeof *lv);
        for (uint32_t i = 0; i < ps->n; i++) {
            lv[i] = ps->def ? ps->def[i] : 1;
            nulls += lv[i] == 0;
        }
        tb_hybrid(&levels, lv, ps->n, 1, 8);
        free(lv);
    }
    hdr_spec h = ps->h;
    h.n = (int32_t)ps->n;
    h.nulls = (int32_t)nulls;
    size_t unc;
    int32_t dl = 0;
    if (!h.v2) {
        tbuf plain = {0};
        if (ps->col.max_def) {
            tb_le32(&plain, (uint32_t)levels.len);
            tb_put(&plain, levels.p, levels.len);
        }
        tb_put(&plain, ps->values.p, ps->values.len);
        unc = plain.len;
        if (ps->z == Z_RAW) {
            zstd_raw_frame(&body, plain.p, plain.len, ps->raw_sizes);
        } else if (ps->z == Z_COMPRESSED) {
            tb_reserve(&body, ZSTD_compressBound(plain.len));
            body.len = ZSTD_compress(body.p, body.cap, plain.p, plain.len, 3);
            cr_assert(!ZSTD_isError(body.len));
        } else if (ps->z == Z_SNAPPY) {
            size_t cl = snappy_max_compressed_length(plain.len);
            tb_reserve(&body, cl);
            cr_assert_eq(snappy_compress((const char *)plain.p, plain.len, (char *)body.p, &cl),
                         SNAPPY_OK);
            body.len = cl;
        } else {
            tb_put(&body, plain.p, plain.len);
        }
        tb_free(&plain);
    } else {
        dl = (int32_t)levels.len;
        tb_put(&body, levels.p, levels.len);
        unc = levels.len + ps->values.len;
        if (ps->z == Z_RAW) {
            zstd_raw_frame(&body, ps->values.p, ps->values.len, ps->raw_sizes);
        } else if (ps->z == Z_COMPRESSED) {
            tb_reserve(&body, ZSTD_compressBound(ps->values.len));
            const size_t r = ZSTD_compress(body.p + body.len, body.cap - body.len, ps->values.p,
                                           ps->values.len, 3);
            cr_assert(!ZSTD_isError(r));
            body.len += r;
        } else if (ps->z == Z_SNAPPY) {
            size_t cl = snappy_max_compressed_length(ps->values.len);
            tb_reserve(&body, cl);
            cr_assert_eq(snappy_compress((const char *)ps->values.p, ps->values.len,
                                         (char *)body.p + body.len, &cl),
                         SNAPPY_OK);
            body.len += cl;
        } else {
            tb_put(&body, ps->values.p, ps->values.len);
        }
    }
    const uint32_t crc = h.crc_value ? h.crc_value : pq_crc32(0, body.p, body.len);
    build_header(&hdr, &h, unc, body.len, crc, dl);
    out->hl = (uint32_t)hdr.len;
    out->len = (uint32_t)(hdr.len + body.len);
    out->data = malloc(out->len);
    memcpy(out->data, hdr.p, hdr.len);
    memcpy(out->data + hdr.len, body.p, body.len);
    tb_free(&levels);
    tb_free(&body);
    tb_free(&hdr);
    memset(&out->pg, 0, sizeof out->pg);
    out->pg.offset = 0;
    out->pg.total_size = out->len;
    out->pg.first_row = 0;
    out->pg.num_rows = ps->n;
    out->pg.is_data = true;
    out->pg.compressed_size = -1;
    out->pg.encoding = -1;
    memset(&out->pm, 0, sizeof out->pm);
    out->pm.pages = &out->pg;
    out->pm.n_pages = out->pm.n_data_pages = 1;
    out->pm.dict_page = -1;
    out->pm.has_offset_index = true;
    out->pm.type = ps->col.type;
    out->pm.type_length = ps->col.type_length;
    out->pm.codec = (pq_codec)ps->col.codec;
    out->pm.max_def = ps->col.max_def;
    out->pm.max_rep = ps->col.max_rep;
    out->pm.chunk_len = out->len;
    out->pm.num_values = ps->n;
    out->pm.row_group_rows = ps->n;
}

/* ------------------------------------------------------------------ */
/* the plan loop and the image checks                                  */
/* ------------------------------------------------------------------ */

typedef struct {
    pp_result res;
    uint32_t rounds;
    uint64_t fetched;
    uint32_t n_ranges; /* need ranges asked in all */
} loop_out;

static void plan_loop(const pp_input *in, const uint8_t *page, uint32_t len, loop_out *lo)
{
    pp_bytes *kb = pp_bytes_new(len);
    memset(lo, 0, sizeof *lo);
    for (int guard = 0;; guard++) {
        cr_assert_lt(guard, PP_MAX_ROUNDS + 2, "planner keeps asking");
        pp_plan(in, kb, &lo->res);
        if (lo->res.outcome != PP_NEED)
            break;
        cr_assert_gt(lo->res.n_need, 0);
        for (uint32_t i = 0; i < lo->res.n_need; i++) {
            const pp_range *r = &lo->res.need[i];
            cr_assert_gt(r->len, 0);
            cr_assert_leq((uint64_t)r->off + r->len, len);
            if (i > 0)
                cr_assert_gt(r->off, lo->res.need[i - 1].off + lo->res.need[i - 1].len - 1,
                             "need ranges overlap or are unsorted");
            for (uint32_t k = r->off; k < r->off + r->len; k++)
                cr_assert_null(pp_bytes_get(kb, k, 1), "need range repeats known byte %u", k);
        }
        for (uint32_t i = 0; i < lo->res.n_need; i++)
            cr_assert(pp_bytes_put(kb, lo->res.need[i].off, page + lo->res.need[i].off,
                                   lo->res.need[i].len));
        lo->n_ranges += lo->res.n_need;
        pp_result_free(&lo->res);
    }
    lo->rounds = pp_bytes_rounds(kb);
    cr_assert_leq(lo->rounds, PP_MAX_ROUNDS);
    lo->fetched = pp_bytes_total(kb);
    cr_assert_eq(lo->res.fetched, lo->fetched);
    pp_bytes_free(kb);
}

static bool same_value(const pq_page_values *a, uint32_t ia, const pq_page_values *b, uint32_t ib)
{
    if (a->type == PQ_BYTE_ARRAY) {
        const uint32_t la = a->offsets[ia + 1] - a->offsets[ia];
        const uint32_t lb = b->offsets[ib + 1] - b->offsets[ib];
        return la == lb && memcmp(a->data + a->offsets[ia], b->data + b->offsets[ib], la) == 0;
    }
    if (a->dict_encoded && !a->values)
        return a->dict_indices[ia] == b->dict_indices[ib];
    return memcmp((const uint8_t *)a->values + (size_t)ia * a->width,
                  (const uint8_t *)b->values + (size_t)ib * b->width, a->width) == 0;
}

typedef struct {
    bool levels_may_differ; /* V1 compressed body rebuilt without rows */
} check_opts;

/* The image of a PP_SPARSE result against the real page. */
static void check_image(const pq_column_desc *col, const uint8_t *page, uint32_t len,
                        const pp_result *res, const pp_range *rows, uint32_t n_rows,
                        const pq_dictionary *dict, const char *what)
{
    cr_assert_eq(res->outcome, PP_SPARSE, "%s: %s", what, res->reason);
    for (uint32_t i = 0; i < res->n_pieces; i++) {
        cr_assert_leq((uint64_t)res->pieces[i].off + res->pieces[i].len, len);
        if (i)
            cr_assert_geq(res->pieces[i].off, res->pieces[i - 1].off + res->pieces[i - 1].len);
    }
    uint8_t *img = malloc(len);
    pp_image_read(res->pieces, res->n_pieces, 0, len, img);
    /* Pieces read at odd offsets agree with the whole image. */
    for (int t = 0; t < 20; t++) {
        const uint32_t off = (uint32_t)(rnd64() % len);
        const uint32_t l = (uint32_t)(rnd64() % (len - off + 1));
        uint8_t *part = malloc(l ? l : 1);
        pp_image_read(res->pieces, res->n_pieces, off, l, part);
        cr_assert(memcmp(part, img + off, l) == 0);
        free(part);
    }
    pq_page_header h, hi;
    size_t hl, hli;
    tc_error te;
    cr_assert_eq(pq_page_header_parse(page, len, &h, &hl, &te), TC_OK, "%s", te.msg);
    cr_assert_eq(pq_page_header_parse(img, len, &hi, &hli, &te), TC_OK, "%s: image header: %s",
                 what, te.msg);
    cr_assert_eq(hl, hli);
    for (size_t i = 0; i < hl; i++)
        if (!h.has_crc || i < h.crc_offset || i >= h.crc_offset + h.crc_len)
            cr_assert_eq(img[i], page[i], "%s: header byte %zu changed", what, i);
    if (h.has_crc)
        cr_assert_eq(hi.crc, pq_crc32(0, img + hl, len - hl), "%s: CRC not recomputed", what);
    pq_data_page_info info;
    pqd_error de;
    cr_assert_eq(pq_data_page_info_from_header(&h, &info, &de), PQD_OK);
    pq_decoder *d1 = pq_decoder_new(NULL), *d2 = pq_decoder_new(NULL);
    pq_page_values a, b;
    const pqd_status sa = pq_decode_data_page(d1, col, &info, page + hl, len - hl, dict, &a, &de);
    cr_assert_eq(sa, PQD_OK, "%s: the real page does not decode: %s", what, de.msg);
    const pqd_status sb = pq_decode_data_page(d2, col, &info, img + hl, len - hl, dict, &b, &de);
    cr_assert_eq(sb, PQD_OK, "%s: image does not decode: %s", what, de.msg);
    cr_assert_eq(a.num_values, b.num_values);
    const bool v1_rebuilt = res->synthesized && !info.v2 && col->codec != PQ_CODEC_UNCOMPRESSED;
    if (col->max_def && !(v1_rebuilt && n_rows == 0))
        cr_assert(memcmp(a.def_levels, b.def_levels, a.num_values * 2) == 0, "%s: levels differ",
                  what);
    if (!(v1_rebuilt && n_rows == 0))
        cr_assert_eq(a.num_non_null, b.num_non_null);
    uint32_t ia = 0, r = 0, checked = 0;
    for (uint32_t i = 0; i < a.num_values; i++) {
        const bool present = !col->max_def || a.def_levels[i] == col->max_def;
        while (r < n_rows && i >= rows[r].off + rows[r].len)
            r++;
        const bool sel = r < n_rows && i >= rows[r].off;
        if (sel && present) {
            cr_assert(same_value(&a, ia, &b, ia), "%s: value of row %u differs", what, i);
            checked++;
        }
        ia += present;
    }
    cr_assert_eq(checked, res->selected_values, "%s", what);
    pq_decoder_free(d1);
    pq_decoder_free(d2);
    free(img);
}

static pp_input input_for(const built_page *bp, const pq_column_desc *col, const pp_range *rows,
                          uint32_t n_rows)
{
    return (pp_input){.pm = &bp->pm, .page = 0, .col = *col, .rows = rows, .n_rows = n_rows,
                      .gap_merge = 0, .min_saving = 0, .dict_values = 0};
}

/* Plan bp for rows with input_for's defaults, to the end. */
static void plan_rows(const built_page *bp, const pq_column_desc *col, const pp_range *rows,
                      uint32_t n_rows, loop_out *lo)
{
    const pp_input in = input_for(bp, col, rows, n_rows);
    plan_loop(&in, bp->data, bp->len, lo);
}

/* The planner's reason starts with word (its "word:" prefix). */
static void expect_reason(const loop_out *lo, const char *word)
{
    cr_assert(strncmp(lo->res.reason, word, strlen(word)) == 0, "reason '%s', want '%s...'",
              lo->res.reason, word);
}

/* Value bytes of n fixed-width values of w bytes (random). */
static void random_values(tbuf *v, uint32_t n, uint32_t w)
{
    for (uint32_t i = 0; i < n * w; i++)
        tb_u8(v, (uint8_t)rnd64());
}

/* DELTA_LENGTH_BYTE_ARRAY values: k random lengths below max_len, then as
 * many random bytes. */
static void random_delta_lengths(tbuf *v, uint32_t k, unsigned max_len)
{
    int64_t *l = malloc((k + 1) * sizeof *l);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < k; i++)
        sum += (uint64_t)(l[i] = (int64_t)(rnd64() % max_len));
    tb_delta(v, l, k, true, 128, 4);
    random_values(v, (uint32_t)sum, 1);
    free(l);
}

/* RLE_DICTIONARY values: the bit width w, then k random indices below 2^w. */
static void random_dict_indices(tbuf *v, uint32_t k, unsigned w)
{
    tb_u8(v, (uint8_t)w);
    uint64_t *idx = malloc((k + 1) * sizeof *idx);
    for (uint32_t i = 0; i < k; i++)
        idx[i] = rnd64() % (1u << w);
    tb_hybrid(v, idx, k, w, 8);
    free(idx);
}

static uint8_t *random_levels(uint32_t n, unsigned null_pct)
{
    uint8_t *d = malloc(n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        d[i] = (rnd64() % 100) >= null_pct;
    return d;
}

static uint32_t count_present(const uint8_t *def, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        k += def ? def[i] : 1;
    return k;
}

/* Selection shapes over n rows. */
static uint32_t make_rows(int shape, uint32_t n, pp_range *rows)
{
    switch (shape) {
    case 0: return 0;
    case 1: rows[0] = (pp_range){n / 2, 1}; return 1;
    case 2: rows[0] = (pp_range){0, 1}; rows[1] = (pp_range){n - 1, 1}; return 2;
    case 3: {
        uint32_t k = 0;
        for (uint32_t i = 3; i < n && k < 64; i += n / 50 + 1)
            rows[k++] = (pp_range){i, 1};
        return k;
    }
    case 4: rows[0] = (pp_range){n / 3, n / 10 + 1}; return 1;
    default: rows[0] = (pp_range){0, n}; return 1;
    }
}

/* Plan every selection shape on one page spec and check each image;
 * returns how many were sparse. */
static int sweep(page_spec *ps, const char *what, const char *expect_real_word)
{
    built_page bp;
    build_page(ps, &bp);
    int sparse = 0;
    for (int shape = 0; shape < 6; shape++) {
        pp_range rows[80];
        const uint32_t nr = make_rows(shape, ps->n, rows);
        loop_out lo;
        plan_rows(&bp, &ps->col, rows, nr, &lo);
        char label[200];
        snprintf(label, sizeof label, "%s shape %d", what, shape);
        if (lo.res.outcome == PP_SPARSE) {
            check_image(&ps->col, bp.data, bp.len, &lo.res, rows, nr, NULL, label);
            if (nr == 0)
                cr_assert(lo.res.synthesized, "%s", label);
            else if (lo.res.selected_values > 0)
                cr_assert_not(lo.res.synthesized, "%s", label);
            sparse++;
        } else if (expect_real_word) {
            cr_assert(strncmp(lo.res.reason, expect_real_word, strlen(expect_real_word)) == 0,
                      "%s: reason %s", label, lo.res.reason);
        }
        pp_result_free(&lo.res);
    }
    free(bp.data);
    return sparse;
}

static pq_column_desc cdesc(pq_physical_type t, int32_t tl, uint16_t max_def, int codec)
{
    return (pq_column_desc){.type = t, .type_length = tl, .max_def = max_def, .max_rep = 0,
                            .codec = codec};
}

/* ps: a required, uncompressed PLAIN column of type t holding n random
 * values of w bytes; bp: its page. */
static void plain_page(page_spec *ps, built_page *bp, pq_physical_type t, uint32_t n, uint32_t w)
{
    memset(ps, 0, sizeof *ps);
    ps->col = cdesc(t, 0, 0, PQ_CODEC_UNCOMPRESSED);
    ps->h = (hdr_spec){.enc = PQ_ENC_PLAIN};
    ps->n = n;
    random_values(&ps->values, n, w);
    build_page(ps, bp);
}

/* n rows of ps, null_pct % of them null, the others random values of w
 * bytes; returns the definition levels (the caller frees them). */
static uint8_t *random_optional(page_spec *ps, uint32_t n, unsigned null_pct, uint32_t w)
{
    ps->n = n;
    uint8_t *def = random_levels(n, null_pct);
    ps->def = def;
    random_values(&ps->values, count_present(def, n), w);
    return def;
}

Test(plan, plain_fixed_width_every_layout)
{
    static const struct {
        pq_physical_type t;
        int32_t tl;
        uint32_t w;
    } types[] = {{PQ_INT32, 0, 4}, {PQ_INT64, 0, 8}, {PQ_FLOAT, 0, 4}, {PQ_DOUBLE, 0, 8},
                 {PQ_INT96, 0, 12}, {PQ_FIXED_LEN_BYTE_ARRAY, 5, 5}};
    int sparse = 0, cases = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int v2 = 0; v2 < 2; v2++)
            for (int z = 0; z < 3; z++)
                for (int opt = 0; opt < 2; opt++) {
                    const uint32_t n = z == Z_RAW ? 40000 : 3000;
                    page_spec ps = {0};
                    ps.col = cdesc(types[t].t, types[t].tl, (uint16_t)opt,
                                   z ? PQ_CODEC_ZSTD : PQ_CODEC_UNCOMPRESSED);
                    ps.h = (hdr_spec){.v2 = v2, .enc = PQ_ENC_PLAIN, .is_compressed = true,
                                      .crc = (t + z) % 2 == 0};
                    ps.z = (zmode)z;
                    ps.n = n;
                    uint8_t *def = opt ? random_levels(n, 20) : NULL;
                    ps.def = def;
                    random_values(&ps.values, count_present(def, n), types[t].w);
                    char what[100];
                    snprintf(what, sizeof what, "type %d v%d z%d opt%d", types[t].t, v2 + 1, z,
                             opt);
                    /* CRC varints may be too short for the new value: "crc" is the
                     * only acceptable way to fail besides compressed blocks with rows. */
                    const int s = sweep(&ps, what, NULL);
                    sparse += s;
                    cases++;
                    cr_assert_geq(s, z == Z_COMPRESSED ? 1 : 4, "%s: only %d sparse", what, s);
                    tb_free(&ps.values);
                    free(def);
                }
    cr_expect_gt(sparse, cases * 3);
}

Test(plan, zstd_raw_blocks_straddling_values)
{
    /* Blocks of odd sizes: values straddle block boundaries and the layout
     * is not the full-size one, so block headers take dependent rounds. */
    static const uint32_t sizes[] = {1000, 777, 4096, 13, 70000, 131072, 5, 0};
    for (int v2 = 0; v2 < 2; v2++) {
        page_spec ps = {0};
        ps.col = cdesc(PQ_INT64, 0, 1, PQ_CODEC_ZSTD);
        ps.h = (hdr_spec){.v2 = v2, .enc = PQ_ENC_PLAIN, .is_compressed = true};
        ps.z = Z_RAW;
        ps.raw_sizes = sizes;
        uint8_t *def = random_optional(&ps, 20000, 10, 8);
        built_page bp;
        build_page(&ps, &bp);
        pp_range rows[8] = {{5, 1}, {130, 7}, {1500, 1}, {9000, 3}, {19999, 1}};
        loop_out lo;
        plan_rows(&bp, &ps.col, rows, 5, &lo);
        /* 8 blocks, sizes unpredictable: one header per round is too slow. */
        if (lo.res.outcome == PP_REAL)
            expect_reason(&lo, "rounds:");
        else
            check_image(&ps.col, bp.data, bp.len, &lo.res, rows, 5, NULL, "straddle");
        pp_result_free(&lo.res);
        /* Full-size blocks (the zstd layout): headers are predicted, two or
         * three rounds in all. */
        ps.raw_sizes = NULL;
        free(bp.data);
        build_page(&ps, &bp);
        plan_rows(&bp, &ps.col, rows, 5, &lo);
        check_image(&ps.col, bp.data, bp.len, &lo.res, rows, 5, NULL, "full blocks");
        cr_assert_leq(lo.rounds, 3);
        cr_assert_lt(lo.fetched, bp.len / 4);
        pp_result_free(&lo.res);
        free(bp.data);
        tb_free(&ps.values);
        free(def);
    }
}

Test(plan, snappy_literal_streams)
{
    /* A compressor emits incompressible values (random doubles) as one
     * literal per 64 KiB fragment: literal headers are predicted like
     * full-size zstd blocks, values read in part in two or three rounds. */
    for (int v2 = 0; v2 < 2; v2++)
        for (int opt = 0; opt < 2; opt++) {
            page_spec ps = {0};
            ps.col = cdesc(PQ_DOUBLE, 0, (uint16_t)opt, PQ_CODEC_SNAPPY);
            ps.h = (hdr_spec){.v2 = v2, .enc = PQ_ENC_PLAIN, .is_compressed = true, .crc = v2};
            ps.z = Z_SNAPPY;
            uint8_t *def = NULL;
            /* V1 compresses the levels with the values: random nulls make
             * copies there (real: see below); a nullable column without nulls
             * has one run of levels. */
            if (opt)
                def = random_optional(&ps, 30000, v2 ? 10 : 0, 8);
            else {
                ps.n = 30000;
                random_values(&ps.values, ps.n, 8);
            }
            built_page bp;
            build_page(&ps, &bp);
            pp_range rows[5] = {{5, 1}, {130, 7}, {8191, 2}, {16384, 1}, {29999, 1}};
            loop_out lo;
            plan_rows(&bp, &ps.col, rows, 5, &lo);
            char what[64];
            snprintf(what, sizeof what, "snappy literals v%d opt%d", v2 + 1, opt);
            cr_assert_eq(lo.res.outcome, PP_SPARSE, "%s: %s", what, lo.res.reason);
            check_image(&ps.col, bp.data, bp.len, &lo.res, rows, 5, NULL, what);
            cr_assert_leq(lo.rounds, 3, "%s", what);
            cr_assert_lt(lo.fetched, bp.len / 8, "%s", what);
            pp_result_free(&lo.res);
            free(bp.data);

            /* Compressible values: the stream holds copies, the page is real. */
            tb_free(&ps.values);
            const uint32_t k = opt ? count_present(def, ps.n) : ps.n;
            for (uint32_t i = 0; i < k; i++)
                tb_le64(&ps.values, i / 16);
            build_page(&ps, &bp);
            plan_rows(&bp, &ps.col, rows, 5, &lo);
            cr_assert_eq(lo.res.outcome, PP_REAL, "%s", what);
            expect_reason(&lo, "snappy:");
            pp_result_free(&lo.res);
            free(bp.data);
            tb_free(&ps.values);
            free(def);
        }
}

Test(plan, zstd_rounds_limit)
{
    /* Many small raw blocks of irregular sizes: one header learned per
     * round, so the planner must stop at PP_MAX_ROUNDS. */
    uint32_t sizes[64];
    for (int i = 0; i < 63; i++)
        sizes[i] = 3000 + (uint32_t)i;
    sizes[63] = 0;
    page_spec ps = {0};
    ps.col = cdesc(PQ_DOUBLE, 0, 0, PQ_CODEC_ZSTD);
    ps.h = (hdr_spec){.enc = PQ_ENC_PLAIN};
    ps.z = Z_RAW;
    ps.raw_sizes = sizes;
    ps.n = 30000;
    random_values(&ps.values, ps.n, 8);
    built_page bp;
    build_page(&ps, &bp);
    pp_range rows[1] = {{29000, 2}};
    loop_out lo;
    plan_rows(&bp, &ps.col, rows, 1, &lo);
    cr_assert_eq(lo.res.outcome, PP_REAL);
    expect_reason(&lo, "rounds:");
    cr_assert_eq(lo.rounds, PP_MAX_ROUNDS);
    pp_result_free(&lo.res);
    free(bp.data);
    tb_free(&ps.values);
}

Test(plan, same_round_when_asked_again)
{
    page_spec ps;
    built_page bp;
    plain_page(&ps, &bp, PQ_INT32, 5000, 4);
    pp_range rows[1] = {{4000, 1}};
    pp_input in = input_for(&bp, &ps.col, rows, 1);
    pp_bytes *kb = pp_bytes_new(bp.len);
    pp_result r1, r2;
    pp_plan(&in, kb, &r1);
    pp_plan(&in, kb, &r2);
    cr_assert_eq(r1.outcome, PP_NEED);
    cr_assert_eq(r1.n_need, 1);
    cr_assert_eq(r1.need[0].off, 0);
    cr_assert_eq(r1.need[0].len, PP_HEADER_PROBE);
    cr_assert_eq(r2.n_need, 1);
    cr_assert_eq(pp_bytes_rounds(kb), 1);
    pp_bytes_put(kb, 0, bp.data, PP_HEADER_PROBE);
    pp_result_free(&r1);
    pp_plan(&in, kb, &r1);
    cr_assert_eq(r1.outcome, PP_NEED);
    cr_assert_eq(r1.n_need, 1);
    cr_assert_eq(r1.need[0].off, bp.hl + 4000 * 4);
    cr_assert_eq(r1.need[0].len, 4);
    cr_assert_eq(pp_bytes_rounds(kb), 2);
    pp_bytes_put(kb, r1.need[0].off, bp.data + r1.need[0].off, 4);
    pp_result_free(&r1);
    pp_result_free(&r2);
    pp_plan(&in, kb, &r1);
    cr_assert_eq(r1.outcome, PP_SPARSE, "%s", r1.reason);
    cr_assert_eq(r1.fetched, PP_HEADER_PROBE + 4);
    cr_assert_eq(r1.selected_values, 1);
    cr_assert_not(r1.synthesized);
    check_image(&ps.col, bp.data, bp.len, &r1, rows, 1, NULL, "round trip");
    pp_result_free(&r1);
    pp_bytes_free(kb);
    free(bp.data);
    tb_free(&ps.values);
}

Test(plan, gap_merge_and_min_saving)
{
    page_spec ps;
    built_page bp;
    plain_page(&ps, &bp, PQ_INT64, 10000, 8);
    pp_range rows[3] = {{2000, 1}, {2010, 1}, {9000, 1}};
    pp_input in = input_for(&bp, &ps.col, rows, 3);
    /* Gap 0: three ranges in the values round. */
    loop_out lo;
    plan_loop(&in, bp.data, bp.len, &lo);
    cr_assert_eq(lo.res.outcome, PP_SPARSE);
    cr_assert_eq(lo.n_ranges, 1 + 3);
    pp_result_free(&lo.res);
    /* Gap 100: the two close rows share a range. */
    in.gap_merge = 100;
    plan_loop(&in, bp.data, bp.len, &lo);
    cr_assert_eq(lo.n_ranges, 1 + 2);
    check_image(&ps.col, bp.data, bp.len, &lo.res, rows, 3, NULL, "gap 100");
    pp_result_free(&lo.res);
    /* Gap larger than the page: one range. */
    in.gap_merge = 1u << 30;
    plan_loop(&in, bp.data, bp.len, &lo);
    cr_assert_eq(lo.n_ranges, 1 + 1);
    pp_result_free(&lo.res);
    /* A saving of 90 %: every row is asked for, over budget. */
    pp_range all[1] = {{0, 10000}};
    in = input_for(&bp, &ps.col, all, 1);
    in.min_saving = 0.1;
    plan_loop(&in, bp.data, bp.len, &lo);
    cr_assert_eq(lo.res.outcome, PP_REAL);
    expect_reason(&lo, "saving:");
    cr_assert_leq(lo.fetched, PP_HEADER_PROBE);
    pp_result_free(&lo.res);
    /* No row selected: always worth it. */
    in = input_for(&bp, &ps.col, NULL, 0);
    in.min_saving = 0.99999;
    plan_loop(&in, bp.data, bp.len, &lo);
    cr_assert_eq(lo.res.outcome, PP_SPARSE);
    cr_assert(lo.res.synthesized);
    pp_result_free(&lo.res);
    free(bp.data);
    tb_free(&ps.values);
}

/* Plan the page to the end and check the outcome (and, when sparse, the
 * number of fetch ranges and the image). */
static void expect_plan(const pp_input *in, const built_page *bp, const pq_column_desc *col,
                        pp_outcome want, uint32_t want_ranges, const char *what)
{
    loop_out lo;
    plan_loop(in, bp->data, bp->len, &lo);
    cr_assert_eq(lo.res.outcome, want, "%s: %s", what, lo.res.reason);
    if (want == PP_SPARSE) {
        cr_assert_eq(lo.n_ranges, want_ranges, "%s", what);
        check_image(col, bp->data, bp->len, &lo.res, in->rows, in->n_rows, NULL, what);
    } else {
        cr_assert(strncmp(lo.res.reason, "saving:", 7) == 0, "%s: %s", what, lo.res.reason);
    }
    pp_result_free(&lo.res);
}

Test(plan, request_cost)
{
    page_spec ps;
    built_page bp;
    plain_page(&ps, &bp, PQ_INT64, 10000, 8); /* 80,000 bytes of values */
    pp_range rows[3] = {{1000, 1}, {5000, 1}, {9000, 1}};
    pp_input in = input_for(&bp, &ps.col, rows, 3);
    in.min_saving = 0.25;
    /* Three values cost three requests: worth it at 1,000 bytes each, */
    in.request_cost = 1000;
    expect_plan(&in, &bp, &ps.col, PP_SPARSE, 1 + 3, "request cost 1000");
    /* not at 30,000 each: 3 x 30,000 > 0.75 x (80,000 + 30,000); */
    in.request_cost = 30000;
    expect_plan(&in, &bp, &ps.col, PP_REAL, 0, "request cost 30000");
    /* nor as one request of 64,000 bytes when gaps below the cost are merged
     * (as the view does). */
    in.gap_merge = 30000;
    expect_plan(&in, &bp, &ps.col, PP_REAL, 0, "merged gaps");
    /* Two selected values close together: one request, worth it. */
    pp_range two[2] = {{4000, 1}, {4100, 1}};
    in.rows = two;
    in.n_rows = 2;
    expect_plan(&in, &bp, &ps.col, PP_SPARSE, 1 + 1, "two close values");
    free(bp.data);
    tb_free(&ps.values);
}

Test(plan, worth_planning)
{
    /* No request cost: always worth asking. */
    cr_assert(pp_worth_planning(1, true, 0, 0.25));
    cr_assert(pp_worth_planning(0, false, 0, 0.25));
    /* Selected rows need two requests: 2c <= 0.75 (size + c), size >= 5c/3. */
    cr_assert_not(pp_worth_planning(213000, true, 128000, 0.25));
    cr_assert(pp_worth_planning(214000, true, 128000, 0.25));
    /* No selected row: one request, size >= c/3. */
    cr_assert_not(pp_worth_planning(42000, false, 128000, 0.25));
    cr_assert(pp_worth_planning(43000, false, 128000, 0.25));
    /* A saving of 100 % is never reachable with a cost. */
    cr_assert_not(pp_worth_planning(1u << 30, false, 1, 1.0));
}

Test(plan, long_header_takes_more_rounds)
{
    page_spec ps = {0};
    ps.col = cdesc(PQ_INT32, 0, 1, PQ_CODEC_UNCOMPRESSED);
    ps.h = (hdr_spec){.enc = PQ_ENC_PLAIN, .stats_len = 5000};
    uint8_t *def = random_optional(&ps, 30000, 30, 4);
    built_page bp;
    build_page(&ps, &bp);
    cr_assert_gt(bp.hl, 5000);
    pp_range rows[1] = {{12345, 3}};
    loop_out lo;
    plan_rows(&bp, &ps.col, rows, 1, &lo);
    check_image(&ps.col, bp.data, bp.len, &lo.res, rows, 1, NULL, "long header");
    cr_assert_geq(lo.rounds, 4); /* 1 KiB, 2 KiB, 4 KiB, 8 KiB probes, then levels/values */
    pp_result_free(&lo.res);
    free(bp.data);
    tb_free(&ps.values);
    free(def);
}

Test(plan, real_reasons)
{
    page_spec ps = {0};
    ps.n = 2000;
    pp_range rows[1] = {{100, 5}};
    loop_out lo;
    built_page bp;
    /* Nested: no fetch at all. */
    ps.col = cdesc(PQ_INT64, 0, 2, PQ_CODEC_UNCOMPRESSED);
    ps.h = (hdr_spec){.enc = PQ_ENC_PLAIN};
    random_values(&ps.values, ps.n, 8);
    ps.col.max_def = 1;
    build_page(&ps, &bp);
    ps.col.max_def = 2;
    bp.pm.max_def = 2;
    plan_rows(&bp, &ps.col, rows, 1, &lo);
    cr_assert_eq(lo.res.outcome, PP_REAL);
    expect_reason(&lo, "nested:");
    cr_assert_eq(lo.fetched, 0);
    pp_result_free(&lo.res);
    free(bp.data);
    /* Gzip (and snappy with rows selected: no partial reads of snappy). */
    ps.col = cdesc(PQ_INT64, 0, 0, PQ_CODEC_GZIP);
    build_page(&ps, &bp);
    plan_rows(&bp, &ps.col, NULL, 0, &lo);
    expect_reason(&lo, "codec:");
    pp_result_free(&lo.res);
    free(bp.data);
    /* Compressed zstd blocks with rows selected. */
    ps.col = cdesc(PQ_INT64, 0, 0, PQ_CODEC_ZSTD);
    tb_free(&ps.values);
    for (uint32_t i = 0; i < ps.n; i++)
        tb_le64(&ps.values, i);
    ps.z = Z_COMPRESSED;
    build_page(&ps, &bp);
    plan_rows(&bp, &ps.col, rows, 1, &lo);
    expect_reason(&lo, "zstd:");
    pp_result_free(&lo.res);
    /* ... but synthesized without. */
    plan_rows(&bp, &ps.col, NULL, 0, &lo);
    check_image(&ps.col, bp.data, bp.len, &lo.res, NULL, 0, NULL, "zstd synth");
    cr_assert_eq(lo.rounds, 1);
    pp_result_free(&lo.res);
    free(bp.data);
    /* Dictionary indices with rows selected. */
    ps.col = cdesc(PQ_INT64, 0, 0, PQ_CODEC_UNCOMPRESSED);
    ps.z = Z_NONE;
    ps.h.enc = PQ_ENC_RLE_DICTIONARY;
    tb_free(&ps.values);
    tb_u8(&ps.values, 3);
    uint64_t idx[2000];
    for (int i = 0; i < 2000; i++)
        idx[i] = (uint64_t)i % 5;
    tb_hybrid(&ps.values, idx, 2000, 3, 8);
    build_page(&ps, &bp);
    plan_rows(&bp, &ps.col, rows, 1, &lo);
    expect_reason(&lo, "encoding:");
    pp_result_free(&lo.res);
    free(bp.data);
    /* Header disagreeing with the page map. */
    ps.h.enc = PQ_ENC_PLAIN;
    tb_free(&ps.values);
    random_values(&ps.values, ps.n, 8);
    build_page(&ps, &bp);
    bp.pg.num_rows = 1999;
    plan_rows(&bp, &ps.col, NULL, 0, &lo);
    expect_reason(&lo, "layout:");
    pp_result_free(&lo.res);
    /* Selection past the page. */
    bp.pg.num_rows = 2000;
    pp_range bad[1] = {{1999, 2}};
    plan_rows(&bp, &ps.col, bad, 1, &lo);
    expect_reason(&lo, "layout:");
    cr_assert_eq(lo.fetched, 0);
    pp_result_free(&lo.res);
    free(bp.data);
    tb_free(&ps.values);
}

Test(plan, crc_rewritten_or_real)
{
    /* pyarrow-style minimal CRC varints: short ones may not hold the new
     * CRC; then the answer is "crc". Either way no wrong image. */
    int sparse = 0, crc_real = 0;
    for (int trial = 0; trial < 60; trial++) {
        page_spec ps = {0};
        ps.col = cdesc(PQ_DOUBLE, 0, 1, PQ_CODEC_UNCOMPRESSED);
        ps.h = (hdr_spec){.enc = PQ_ENC_PLAIN, .crc = true};
        uint8_t *def = random_optional(&ps, 500 + (uint32_t)trial, 5, 8);
        built_page bp;
        build_page(&ps, &bp);
        pp_range rows[1] = {{7, 2}};
        loop_out lo;
        plan_rows(&bp, &ps.col, trial % 2 ? rows : NULL, trial % 2, &lo);
        if (lo.res.outcome == PP_SPARSE) {
            check_image(&ps.col, bp.data, bp.len, &lo.res, rows, trial % 2, NULL, "crc");
            sparse++;
        } else {
            cr_assert(strncmp(lo.res.reason, "crc:", 4) == 0 ||
                          strncmp(lo.res.reason, "saving:", 7) == 0,
                      "%s", lo.res.reason);
            crc_real += lo.res.reason[0] == 'c';
        }
        pp_result_free(&lo.res);
        free(bp.data);
        tb_free(&ps.values);
        free(def);
    }
    cr_expect_gt(sparse, 30);
    (void)crc_real;
}

Test(plan, crc_patched_when_the_field_is_short)
{
    /* A 1-byte CRC field cannot take a new CRC: the image gets 4 bytes of an
     * unselected value (or of the zstd padding) forged so that its body has
     * the old CRC, and the header stays byte for byte. */
    int patched = 0;
    for (int z = 0; z < 3; z++)
        for (int shape = 0; shape < 5; shape++) {
            page_spec ps = {0};
            ps.col = cdesc(PQ_INT64, 0, 1, z ? PQ_CODEC_ZSTD : PQ_CODEC_UNCOMPRESSED);
            ps.h = (hdr_spec){.enc = PQ_ENC_PLAIN, .crc = true, .crc_value = 21, .v2 = z == 2,
                              .is_compressed = true};
            ps.z = z == 1 ? Z_RAW : z == 2 ? Z_COMPRESSED : Z_NONE;
            ps.n = 20000;
            uint8_t *def = random_levels(ps.n, 10);
            ps.def = def;
            if (z == 2) {
                for (uint32_t i = 0; i < count_present(def, ps.n); i++)
                    tb_le64(&ps.values, i % 7);
            } else {
                random_values(&ps.values, count_present(def, ps.n), 8);
            }
            built_page bp;
            build_page(&ps, &bp);
            pp_range rows[80];
            const uint32_t nr = make_rows(z == 2 ? 0 : shape, ps.n, rows);
            loop_out lo;
            plan_rows(&bp, &ps.col, rows, nr, &lo);
            cr_assert_eq(lo.res.outcome, PP_SPARSE, "z%d shape %d: %s", z, shape, lo.res.reason);
            check_image(&ps.col, bp.data, bp.len, &lo.res, rows, nr, NULL, "crc patch");
            uint8_t *img = malloc(bp.len);
            pp_image_read(lo.res.pieces, lo.res.n_pieces, 0, bp.len, img);
            cr_assert(memcmp(img, bp.data, bp.hl) == 0, "header changed");
            cr_assert_eq(pq_crc32(0, img + bp.hl, bp.len - bp.hl), 21);
            patched++;
            free(img);
            pp_result_free(&lo.res);
            free(bp.data);
            tb_free(&ps.values);
            free(def);
        }
    cr_assert_eq(patched, 15);
}

/* Synthesized values regions: every encoding the planner rebuilds, V1 and
 * V2, uncompressed and zstd, required and optional. */
Test(plan, synthesized_every_encoding)
{
    int sparse = 0, total = 0;
    for (int enc_i = 0; enc_i < 9; enc_i++)
        for (int v2 = 0; v2 < 2; v2++)
            for (int z = 0; z < 3; z++)
                for (int opt = 0; opt < 2; opt++) {
                    page_spec ps = {0};
                    ps.n = 1500 + (uint32_t)(rnd64() % 2000);
                    uint8_t *def = opt ? random_levels(ps.n, 25) : NULL;
                    ps.def = def;
                    const uint32_t k = count_present(def, ps.n);
                    pq_physical_type t = PQ_INT64;
                    int enc = PQ_ENC_PLAIN;
                    switch (enc_i) {
                    case 0: random_values(&ps.values, k, 8); break;
                    case 1: /* PLAIN BYTE_ARRAY */
                        t = PQ_BYTE_ARRAY;
                        for (uint32_t i = 0; i < k; i++) {
                            const uint32_t l = (uint32_t)(rnd64() % 12);
                            tb_le32(&ps.values, l);
                            random_values(&ps.values, l, 1);
                        }
                        break;
                    case 2: /* PLAIN BOOLEAN */
                        t = PQ_BOOLEAN;
                        random_values(&ps.values, (k + 7) / 8, 1);
                        break;
                    case 3: /* RLE_DICTIONARY */
                    case 4: {
                        t = enc_i == 3 ? PQ_INT32 : PQ_BYTE_ARRAY;
                        enc = PQ_ENC_RLE_DICTIONARY;
                        random_dict_indices(&ps.values, k, 4);
                        break;
                    }
                    case 5:
                    case 6: { /* DELTA_BINARY_PACKED, random (wide) and smooth */
                        t = enc_i == 5 ? PQ_INT64 : PQ_INT32;
                        enc = PQ_ENC_DELTA_BINARY_PACKED;
                        int64_t *v = malloc((k + 1) * sizeof *v);
                        for (uint32_t i = 0; i < k; i++)
                            v[i] = enc_i == 5 ? (int64_t)rnd64() : (int64_t)(i * 3 + rnd64() % 5);
                        tb_delta(&ps.values, v, k, t == PQ_INT32, 128, 4);
                        free(v);
                        break;
                    }
                    case 7: { /* DELTA_LENGTH_BYTE_ARRAY */
                        t = PQ_BYTE_ARRAY;
                        enc = PQ_ENC_DELTA_LENGTH_BYTE_ARRAY;
                        random_delta_lengths(&ps.values, k, 20);
                        break;
                    }
                    default: { /* BYTE_STREAM_SPLIT */
                        t = PQ_DOUBLE;
                        enc = PQ_ENC_BYTE_STREAM_SPLIT;
                        random_values(&ps.values, k, 8);
                        break;
                    }
                    }
                    static const int codecs[3] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_ZSTD,
                                                  PQ_CODEC_SNAPPY};
                    static const zmode zm[3] = {Z_NONE, Z_COMPRESSED, Z_SNAPPY};
                    ps.col = cdesc(t, 0, (uint16_t)opt, codecs[z]);
                    ps.h = (hdr_spec){.v2 = v2, .enc = enc, .is_compressed = true};
                    ps.z = zm[z];
                    built_page bp;
                    build_page(&ps, &bp);
                    pp_input in = input_for(&bp, &ps.col, NULL, 0);
                    in.dict_values = 16;
                    loop_out lo;
                    plan_loop(&in, bp.data, bp.len, &lo);
                    char what[100];
                    snprintf(what, sizeof what, "enc_i %d v%d z%d opt%d", enc_i, v2 + 1, z, opt);
                    total++;
                    if (lo.res.outcome == PP_SPARSE) {
                        cr_assert(lo.res.synthesized);
                        /* The index range is checked against a 16-entry dictionary. */
                        pq_dictionary dict = {.type = t, .count = 16};
                        uint8_t zeros[16 * 8] = {0};
                        uint32_t offs[17] = {0};
                        dict.width = t == PQ_BYTE_ARRAY ? 0 : (t == PQ_INT32 ? 4 : 8);
                        dict.values = zeros;
                        dict.offsets = offs;
                        dict.data = zeros;
                        check_image(&ps.col, bp.data, bp.len, &lo.res, NULL, 0,
                                    enc == PQ_ENC_RLE_DICTIONARY ? &dict : NULL, what);
                        /* Uncompressed pages fetch their levels at most. */
                        if (!z)
                            cr_assert_lt(lo.fetched, bp.len / 2 + PP_HEADER_PROBE, "%s", what);
                        sparse++;
                    } else {
                        cr_assert(strncmp(lo.res.reason, "encoding:", 9) == 0 ||
                                      strncmp(lo.res.reason, "zstd:", 5) == 0 ||
                                      strncmp(lo.res.reason, "codec:", 6) == 0,
                                  "%s: %s", what, lo.res.reason);
                    }
                    pp_result_free(&lo.res);
                    free(bp.data);
                    tb_free(&ps.values);
                    free(def);
                }
    cr_expect_geq(sparse, total * 9 / 10, "%d of %d synthesized", sparse, total);
}

/* Partial reads of DELTA_LENGTH_BYTE_ARRAY, BYTE_STREAM_SPLIT and PLAIN
 * BOOLEAN values; all-null selections of dictionary pages. */
Test(plan, partial_other_encodings)
{
    for (int v = 0; v < 3; v++)
        for (int v2 = 0; v2 < 2; v2++)
            for (int z = 0; z < 2; z++) {
                page_spec ps = {0};
                ps.n = 4000;
                uint8_t *def = random_levels(ps.n, 15);
                ps.def = def;
                const uint32_t k = count_present(def, ps.n);
                if (v == 0) {
                    ps.col = cdesc(PQ_BYTE_ARRAY, 0, 1, 0);
                    ps.h.enc = PQ_ENC_DELTA_LENGTH_BYTE_ARRAY;
                    random_delta_lengths(&ps.values, k, 40);
                } else if (v == 1) {
                    ps.col = cdesc(PQ_FLOAT, 0, 1, 0);
                    ps.h.enc = PQ_ENC_BYTE_STREAM_SPLIT;
                    random_values(&ps.values, k, 4);
                } else {
                    ps.col = cdesc(PQ_BOOLEAN, 0, 1, 0);
                    ps.h.enc = PQ_ENC_PLAIN;
                    random_values(&ps.values, (k + 7) / 8, 1);
                }
                ps.col.codec = z ? PQ_CODEC_ZSTD : PQ_CODEC_UNCOMPRESSED;
                ps.z = z ? Z_RAW : Z_NONE;
                ps.h.v2 = v2;
                ps.h.is_compressed = true;
                char what[64];
                snprintf(what, sizeof what, "enc %d v%d z%d", ps.h.enc, v2 + 1, z);
                cr_assert_geq(sweep(&ps, what, NULL), 4, "%s", what);
                tb_free(&ps.values);
                free(def);
            }
}

Test(plan, all_null_selection_of_dictionary_page)
{
    page_spec ps = {0};
    ps.n = 3000;
    uint8_t *def = random_levels(ps.n, 50);
    for (uint32_t i = 1000; i < 1100; i++)
        def[i] = 0;
    ps.def = def;
    const uint32_t k = count_present(def, ps.n);
    ps.col = cdesc(PQ_INT64, 0, 1, PQ_CODEC_UNCOMPRESSED);
    ps.h.enc = PQ_ENC_RLE_DICTIONARY;
    random_dict_indices(&ps.values, k, 2);
    pq_dictionary dict = {.type = PQ_INT64, .width = 8, .count = 4};
    uint64_t dv[4] = {11, 22, 33, 44};
    dict.values = dv;
    for (int v2 = 0; v2 < 2; v2++) {
        ps.h.v2 = v2;
        built_page bp;
        build_page(&ps, &bp);
        pp_range rows[2] = {{1010, 20}, {1050, 30}};
        loop_out lo;
        plan_rows(&bp, &ps.col, rows, 2, &lo);
        check_image(&ps.col, bp.data, bp.len, &lo.res, rows, 2, &dict, "all null");
        cr_assert(lo.res.synthesized);
        pp_result_free(&lo.res);
        /* One non-null row selected: real. */
        pp_range rows2[1] = {{0, 1000}};
        plan_rows(&bp, &ps.col, rows2, 1, &lo);
        cr_assert_eq(lo.res.outcome, PP_REAL);
        expect_reason(&lo, "encoding:");
        pp_result_free(&lo.res);
        free(bp.data);
    }
    tb_free(&ps.values);
    free(def);
}

/* ------------------------------------------------------------------ */
/* fixtures                                                            */
/* ------------------------------------------------------------------ */

typedef struct {
    int pages, sparse, synthesized, crc_pages, crc_sparse;
} sweep_stats;

static void fixture_sweep(const char *name, sweep_stats *sw)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", FIXTURE_DIR, name);
    size_t len;
    uint8_t *data = fixture_read(path, &len);
    pq_file_meta *m;
    tc_error err;
    cr_assert_eq(pq_file_meta_from_tail(data, len, len, &m, NULL, &err), TC_OK, "%s", err.msg);
    for (uint32_t rg = 0; rg < m->n_row_groups; rg++)
        for (uint32_t c = 0; c < m->n_leaves; c++) {
            const pq_column_ctx ctx = pq_column_ctx_of(m, rg, c);
            if (!ctx.chunk->has_offset_index)
                continue;
            pq_offset_index oi;
            cr_assert_eq(pq_offset_index_parse(data + ctx.chunk->offset_index_offset,
                                               (size_t)ctx.chunk->offset_index_length, &oi, &err),
                         TC_OK);
            pq_page_map pm;
            cr_assert_eq(pq_page_map_from_offset_index(&ctx, &oi, &pm, &err), TC_OK, "%s",
                         err.msg);
            const pq_column_desc col = {ctx.leaf->type, ctx.leaf->type_length, ctx.leaf->max_def,
                                        ctx.leaf->max_rep, (int32_t)ctx.chunk->codec};
            pq_dictionary dict = {0};
            bool have_dict = false;
            if (pm.dict_page >= 0 && ctx.leaf->max_rep == 0) {
                const pq_page *dp = &pm.pages[pm.dict_page];
                pq_page_header h;
                size_t hl;
                pq_dict_page_info di;
                pqd_error de;
                pq_decoder *d = pq_decoder_new(NULL);
                if (pq_page_header_parse(data + dp->offset, dp->total_size, &h, &hl, NULL) ==
                        TC_OK &&
                    pq_dict_page_info_from_header(&h, &di, &de) == PQD_OK &&
                    pq_decode_dictionary(d, &col, &di, data + dp->offset + hl, dp->total_size - hl,
                                         &dict, &de) == PQD_OK)
                    have_dict = true;
                pq_decoder_free(d);
            }
            for (uint32_t i = 0; i < pm.n_pages; i++) {
                const pq_page *pg = &pm.pages[i];
                if (!pg->is_data)
                    continue;
                const uint8_t *page = data + pg->offset;
                pq_page_header h;
                size_t hl;
                cr_assert_eq(pq_page_header_parse(page, pg->total_size, &h, &hl, NULL), TC_OK);
                for (int shape = 0; shape < 6; shape++) {
                    pp_range rows[80];
                    const uint32_t nr = make_rows(shape, (uint32_t)pg->num_rows, rows);
                    pp_input in = {.pm = &pm, .page = i, .col = col, .rows = rows, .n_rows = nr,
                                   .dict_values = have_dict ? dict.count : 0};
                    loop_out lo;
                    plan_loop(&in, page, pg->total_size, &lo);
                    sw->pages++;
                    sw->crc_pages += h.has_crc;
                    char what[300];
                    snprintf(what, sizeof what, "%s rg %u %s page %u shape %d", name, rg,
                             ctx.leaf->path, i, shape);
                    if (lo.res.outcome == PP_SPARSE) {
                        sw->sparse++;
                        sw->synthesized += lo.res.synthesized;
                        sw->crc_sparse += h.has_crc;
                        const bool dict_enc = h.data.encoding == PQ_ENC_RLE_DICTIONARY ||
                                              h.data.encoding == PQ_ENC_PLAIN_DICTIONARY ||
                                              h.v2.encoding == PQ_ENC_RLE_DICTIONARY;
                        if (!dict_enc || have_dict)
                            check_image(&col, page, pg->total_size, &lo.res, rows, nr,
                                        have_dict ? &dict : NULL, what);
                    } else {
                        cr_assert(lo.res.reason[0] != 0);
                        if (col.max_rep > 0 || col.max_def > 1)
                            cr_assert(strncmp(lo.res.reason, "nested:", 7) == 0, "%s: %s", what,
                                      lo.res.reason);
                    }
                    pp_result_free(&lo.res);
                }
            }
            if (have_dict)
                pq_dictionary_free(&dict);
            pq_page_map_free(&pm);
            pq_offset_index_free(&oi);
        }
    pq_file_meta_free(m);
    free(data);
}

Test(fixtures, every_page_every_selection)
{
    DIR *d = opendir(FIXTURE_DIR);
    cr_assert_not_null(d);
    sweep_stats sw = {0};
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL) {
        const size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 8, ".parquet") != 0)
            continue;
        fixture_sweep(e->d_name, &sw);
        files++;
    }
    closedir(d);
    cr_assert_geq(files, 8);
    cr_expect_gt(sw.pages, 300);
    cr_expect_gt(sw.sparse, sw.pages / 5, "%d of %d sparse", sw.sparse, sw.pages);
    cr_expect_gt(sw.synthesized, 50);
    /* Spark and pyarrow CRC fixtures: some pages rewritten with a new CRC. */
    cr_expect_gt(sw.crc_pages, 50);
    cr_expect_gt(sw.crc_sparse, 20, "%d of %d CRC pages sparse", sw.crc_sparse, sw.crc_pages);
}

Test(fixtures, spark_crc_pages_partial)
{
    /* Every page of the Spark file carries a 5-byte CRC: partial reads of
     * PLAIN columns must all be sparse with a recomputed CRC. */
    sweep_stats sw = {0};
    fixture_sweep("spark_crc_uncompressed.parquet", &sw);
    cr_assert_eq(sw.crc_pages, sw.pages);
    cr_assert_gt(sw.crc_sparse, sw.pages / 3, "%d of %d", sw.crc_sparse, sw.pages);
}

/* ------------------------------------------------------------------ */
/* dictionary pages                                                    */
/* ------------------------------------------------------------------ */

/* A dictionary page of `count` entries (values: count x w bytes) stored as
 * z says, with a CRC when crc; its page map holds it as page 0. */
static void build_dict_page(const tbuf *values, uint32_t count, pq_column_desc col, zmode z, bool crc,
                            built_page *out)
{
    tbuf body = {0}, hdr = {0};
    if (z == Z_SNAPPY) {
        size_t cl = snappy_max_compressed_length(values->len);
        tb_reserve(&body, cl);
        cr_assert_eq(snappy_compress((const char *)values->p, values->len, (char *)body.p, &cl), SNAPPY_OK);
        body.len = cl;
    } else if (z == Z_RAW) {
        zstd_raw_frame(&body, values->p, values->len, NULL);
    } else {
        tb_put(&body, values->p, values->len);
    }
    int16_t last = 0, l2 = 0;
    th_i32(&hdr, &last, 1, PQ_PAGE_DICTIONARY);
    th_i32(&hdr, &last, 2, (int32_t)values->len);
    th_i32(&hdr, &last, 3, (int32_t)body.len);
    if (crc)
        th_i32(&hdr, &last, 4, (int32_t)pq_crc32(0, body.p, body.len));
    th_field(&hdr, &last, 7, 12);
    th_i32(&hdr, &l2, 1, (int32_t)count);
    th_i32(&hdr, &l2, 2, PQ_ENC_PLAIN);
    tb_u8(&hdr, 0);
    tb_u8(&hdr, 0);
    out->hl = (uint32_t)hdr.len;
    out->len = (uint32_t)(hdr.len + body.len);
    out->data = malloc(out->len);
    memcpy(out->data, hdr.p, hdr.len);
    memcpy(out->data + hdr.len, body.p, body.len);
    tb_free(&body);
    tb_free(&hdr);
    memset(&out->pg, 0, sizeof out->pg);
    out->pg.total_size = out->len;
    out->pg.first_row = -1;
    out->pg.num_rows = -1;
    out->pg.compressed_size = -1;
    out->pg.encoding = -1;
    memset(&out->pm, 0, sizeof out->pm);
    out->pm.pages = &out->pg;
    out->pm.n_pages = 1;
    out->pm.dict_page = 0;
    out->pm.has_offset_index = true;
    out->pm.type = col.type;
    out->pm.type_length = col.type_length;
    out->pm.codec = (pq_codec)col.codec;
    out->pm.max_def = col.max_def;
    out->pm.chunk_len = out->len;
}

/* Plan the dictionary page keeping entries; check the image against the
 * real page: same size, header but the CRC, the kept entries equal, the
 * others zero, and the CRC right. */
static void check_dict_plan(const built_page *bp, pq_column_desc col, const uint32_t *entries, uint32_t n,
                            uint32_t w, loop_out *lo, const char *what)
{
    pp_input in = {.pm = &bp->pm, .page = 0, .col = col, .min_saving = 0.25, .dictionary = true,
                   .dict_entries = entries, .n_dict_entries = n};
    plan_loop(&in, bp->data, bp->len, lo);
    if (lo->res.outcome != PP_SPARSE)
        return;
    cr_assert_eq(lo->res.selected_values, n, "%s", what);
    uint8_t *img = malloc(bp->len);
    pp_image_read(lo->res.pieces, lo->res.n_pieces, 0, bp->len, img);
    /* The image decodes as a dictionary of the same entry count, the kept entries real. */
    pq_page_header h;
    size_t hl;
    tc_error e;
    cr_assert_eq(pq_page_header_parse(img, bp->len, &h, &hl, &e), TC_OK, "%s", what);
    cr_assert_eq(hl, bp->hl);
    if (h.has_crc)
        cr_assert_eq(h.crc, pq_crc32(0, img + hl, bp->len - hl), "%s: CRC", what);
    pq_dict_page_info info;
    pqd_error de;
    cr_assert_eq(pq_dict_page_info_from_header(&h, &info, &de), PQD_OK);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    pq_decoder *dec = pq_decoder_new(&lim);
    pq_dictionary got = {0}, real = {0};
    cr_assert_eq(pq_decode_dictionary(dec, &col, &info, img + hl, bp->len - hl, &got, &de), PQD_OK, "%s: %s",
                 what, de.msg);
    cr_assert_eq(pq_decode_dictionary(dec, &col, &info, bp->data + hl, bp->len - hl, &real, &de), PQD_OK);
    cr_assert_eq(got.count, real.count);
    uint32_t nonzero_unkept = 0;
    for (uint32_t k = 0, i = 0; k < real.count; k++) {
        const uint8_t *g = (const uint8_t *)got.values + (size_t)k * w, *r = (const uint8_t *)real.values + (size_t)k * w;
        if (i < n && entries[i] == k) {
            cr_assert(memcmp(g, r, w) == 0, "%s: entry %u", what, k);
            i++;
        } else {
            /* zero, or real (fetched with the header probe) */
            for (uint32_t b = 0; b < w; b++)
                nonzero_unkept += g[b] != 0 && g[b] != r[b];
        }
    }
    cr_assert_leq(nonzero_unkept, PATCH_MAX_BYTES_FOR_TESTS, "%s: entries not kept are zero or real (but CRC patch bytes)",
                  what);
    pq_dictionary_free(&got);
    pq_dictionary_free(&real);
    pq_decoder_free(dec);
    free(img);
}

Test(plan, dictionary_pages_keep_the_referenced_entries)
{
    static const zmode modes[] = {Z_NONE, Z_RAW, Z_SNAPPY};
    static const int codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_ZSTD, PQ_CODEC_SNAPPY};
    const uint32_t count = 120000; /* 960,000 bytes of doubles: 15 snappy literals */
    uint32_t entries[] = {0, 1, 2, 777, 65535, 65536, 99999, 119999};
    const uint32_t n = sizeof entries / sizeof entries[0];
    for (int m = 0; m < 3; m++)
        for (int crc = 0; crc < 2; crc++) {
            tbuf v = {0};
            random_values(&v, count, 8);
            pq_column_desc col = cdesc(PQ_DOUBLE, 0, 1, codecs[m]);
            built_page bp;
            build_dict_page(&v, count, col, modes[m], crc, &bp);
            loop_out lo;
            char what[64];
            snprintf(what, sizeof what, "dictionary codec %d crc %d", codecs[m], crc);
            check_dict_plan(&bp, col, entries, n, 8, &lo, what);
            cr_assert_eq(lo.res.outcome, PP_SPARSE, "%s: %s", what, lo.res.reason);
            cr_assert_leq(lo.rounds, 2, "%s: header, then entries and block headers at once", what);
            cr_assert_lt(lo.fetched, 8 * 1024, "%s: %llu bytes", what, (unsigned long long)lo.fetched);
            pp_result_free(&lo.res);
            free(bp.data);

            /* A dictionary that compresses (copies in the snappy stream) is real. */
            if (modes[m] == Z_SNAPPY) {
                tb_free(&v);
                for (uint32_t i = 0; i < count; i++)
                    tb_le64(&v, i / 64);
                build_dict_page(&v, count, col, modes[m], crc, &bp);
                check_dict_plan(&bp, col, entries, n, 8, &lo, what);
                cr_assert_eq(lo.res.outcome, PP_REAL);
                expect_reason(&lo, "snappy:");
                pp_result_free(&lo.res);
                free(bp.data);
            }
            tb_free(&v);
        }
}

Test(plan, dictionary_pages_refuse_what_they_cannot_keep)
{
    tbuf v = {0};
    random_values(&v, 1000, 8);
    pq_column_desc col = cdesc(PQ_INT64, 0, 0, PQ_CODEC_UNCOMPRESSED);
    built_page bp;
    build_dict_page(&v, 1000, col, Z_NONE, false, &bp);
    loop_out lo;
    /* An entry past the dictionary: the caller's indices contradict the page. */
    uint32_t past[] = {3, 1000};
    check_dict_plan(&bp, col, past, 2, 8, &lo, "past");
    cr_assert_eq(lo.res.outcome, PP_REAL);
    cr_assert(lo.res.contradicts_file);
    pp_result_free(&lo.res);
    /* Most entries referenced: no saving. */
    uint32_t *most = malloc(900 * sizeof *most);
    for (uint32_t i = 0; i < 900; i++)
        most[i] = i;
    check_dict_plan(&bp, col, most, 900, 8, &lo, "most");
    cr_assert_eq(lo.res.outcome, PP_REAL);
    expect_reason(&lo, "saving:");
    pp_result_free(&lo.res);
    free(most);
    /* The wrong entry count for the body. */
    free(bp.data);
    build_dict_page(&v, 999, col, Z_NONE, false, &bp);
    uint32_t one[] = {5};
    check_dict_plan(&bp, col, one, 1, 8, &lo, "count");
    cr_assert_eq(lo.res.outcome, PP_REAL);
    expect_reason(&lo, "layout:");
    pp_result_free(&lo.res);
    free(bp.data);
    tb_free(&v);
}

Test(plan, dictionary_references_of_selected_rows)
{
    /* Known indices, some rows null: the selected rows' non-null values'
     * indices, in any codec and page version. */
    static const zmode modes[] = {Z_NONE, Z_SNAPPY, Z_COMPRESSED};
    static const int codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_ZSTD};
    for (int m = 0; m < 3; m++)
        for (int v2 = 0; v2 < 2; v2++) {
            const uint32_t n = 5000;
            page_spec ps = {0};
            ps.col = cdesc(PQ_INT64, 0, 1, codecs[m]);
            ps.h = (hdr_spec){.v2 = v2, .enc = PQ_ENC_RLE_DICTIONARY, .is_compressed = true};
            ps.z = modes[m];
            ps.n = n;
            uint8_t *def = random_levels(n, 20);
            ps.def = def;
            const uint32_t k = count_present(def, n);
            uint64_t *idx = malloc((k + 1) * sizeof *idx);
            for (uint32_t i = 0; i < k; i++)
                idx[i] = rnd64() % 1000;
            tb_u8(&ps.values, 10);
            tb_hybrid(&ps.values, idx, k, 10, 8);
            built_page bp;
            build_page(&ps, &bp);
            pp_range rows[3] = {{0, 3}, {2500, 10}, {4999, 1}};
            dict_refs refs = {0};
            cr_assert_eq(dict_refs_add_page(&refs, &ps.col, bp.data, bp.len, n, rows, 3), DR_OK);
            /* Expected: walk the levels. */
            uint32_t want[32], nw = 0, vi = 0, r = 0;
            for (uint32_t row = 0; row < n; row++) {
                while (r < 3 && row >= rows[r].off + rows[r].len)
                    r++;
                if (def[row]) {
                    if (r < 3 && row >= rows[r].off)
                        want[nw++] = (uint32_t)idx[vi];
                    vi++;
                }
            }
            cr_assert_eq(refs.n, nw);
            for (uint32_t i = 0; i < nw; i++)
                cr_assert_eq(refs.v[i], want[i], "codec %d v%d: ref %u", codecs[m], v2 + 1, i);
            dict_refs_finish(&refs);
            for (size_t i = 1; i < refs.n; i++)
                cr_assert_lt(refs.v[i - 1], refs.v[i], "sorted, distinct");
            /* Rows past the page: the caller's selection disagrees with it. */
            pp_range past[1] = {{4999, 2}};
            cr_assert_eq(dict_refs_add_page(&refs, &ps.col, bp.data, bp.len, n, past, 1), DR_BAD);
            /* Another row count than the page's. */
            cr_assert_eq(dict_refs_add_page(&refs, &ps.col, bp.data, bp.len, n + 1, rows, 3), DR_BAD);
            /* A cut page. */
            cr_assert_eq(dict_refs_add_page(&refs, &ps.col, bp.data, bp.len - 1, n, rows, 3), DR_BAD);
            dict_refs_free(&refs);
            free(bp.data);
            free(idx);
            free(def);
            tb_free(&ps.values);
        }
    /* A PLAIN page references nothing. */
    page_spec ps = {0};
    built_page bp;
    plain_page(&ps, &bp, PQ_INT64, 100, 8);
    dict_refs refs = {0};
    pp_range one[1] = {{5, 1}};
    cr_assert_eq(dict_refs_add_page(&refs, &ps.col, bp.data, bp.len, 100, one, 1), DR_NOT_DICT);
    cr_assert_eq(refs.n, 0);
    free(bp.data);
    tb_free(&ps.values);
}

/* A synthesized page of dictionary indices must fill its real size exactly.
 * Runs of one value and two tails miss many sizes (pyarrow's 20,000
 * indices of 17 bits: 42,541 bytes); one-byte runs of up to 63 values and a
 * few two-byte runs reach every size from a byte per 20 values to 4.5 bytes
 * a value. Each fill decodes to k zero indices using exactly its bytes. */
Test(plan, dictionary_indices_of_any_size_between_the_bounds)
{
    const vspec f = {PQ_ENC_RLE_DICTIONARY, PQ_INT32, 4, true};
    const uint64_t k = 20000;
    cr_assert(pp_fill_values(&f, k, 42541, NULL), "pyarrow's page size");
    uint8_t *buf = malloc(100001);
    uint32_t *vals = malloc(k * sizeof *vals);
    cr_assert(buf && vals);
    for (uint64_t V = k / 20; V <= k * 9 / 2; V += 7) {
        cr_assert(pp_fill_values(&f, k, V, NULL), "%llu values in %llu bytes", (unsigned long long)k,
                  (unsigned long long)V);
        memset(buf, 0, V);
        cr_assert(pp_fill_values(&f, k, V, buf));
        pq_rle_decoder d;
        pqd_error err;
        cr_assert_eq(pq_rle_init(&d, buf + 1, V - 1, buf[0], &err), PQD_OK);
        cr_assert_eq(pq_rle_get_u32(&d, vals, k, &err), PQD_OK, "V %llu: %s", (unsigned long long)V, err.msg);
        cr_assert_eq(pq_rle_consumed(&d), V - 1, "V %llu", (unsigned long long)V);
        for (uint64_t i = 0; i < k; i++)
            cr_assert_eq(vals[i], 0);
    }
    free(buf);
    free(vals);
}
