/* Fuzz PageHeader decoding, the CRC rewriter, the zstd frame walker and page
 * maps walked from a buffer of pages (a synthetic column chunk whose type,
 * codec and levels come from the first input byte), whole and in rounds of
 * header windows (header_walk), which must agree. */
#include "header_walk.h"
#include "page_map.h"
#include "parquet_meta.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

static void crc_round_trip(const uint8_t *data, size_t hl, const pq_page_header *h)
{
    if (!h->has_crc || h->crc_len == 0)
        return;
    check(h->crc_offset + h->crc_len <= hl);
    uint8_t *copy = malloc(hl);
    memcpy(copy, data, hl);
    const uint32_t want = pq_crc32(0, data, hl);
    const bool fits = pq_crc_fits(h->crc_len, want);
    check(pq_crc_rewrite(copy, hl, h, want) == fits);
    if (h->crc_len >= 5)
        check(fits);
    if (fits) {
        pq_page_header h2;
        size_t hl2 = 0;
        tc_error err;
        check(pq_page_header_parse(copy, hl, &h2, &hl2, &err) == TC_OK);
        check(hl2 == hl && h2.crc == want && h2.type == h->type &&
              h2.compressed_page_size == h->compressed_page_size);
    } else {
        check(memcmp(copy, data, hl) == 0);
    }
    free(copy);
}

static void zstd_walk(const uint8_t *p, size_t n)
{
    pq_zstd_frame f;
    tc_error err;
    if (pq_zstd_inspect(p, n, true, &f, &err) == TC_OK) {
        check(f.frame_len <= n && f.header_len <= f.frame_len);
        check(f.single_frame == (f.frame_len == n));
        check(f.n_blocks >= 1 && f.blocks != NULL);
        for (uint32_t i = 0; i < f.n_blocks; i++) {
            check(f.blocks[i].header_offset >= f.header_len);
            check(f.blocks[i].header_offset + 3 <= f.frame_len);
            if (i)
                check(f.blocks[i].header_offset > f.blocks[i - 1].header_offset);
            check(f.blocks[i].last == (i + 1 == f.n_blocks));
        }
        pq_zstd_frame_free(&f);
    } else {
        check(err.msg[0] != '\0' && f.blocks == NULL);
    }
    (void)pq_zstd_page_verdict(p, n, (int64_t)n);
}

/* The chunk data[0..size) at file offset 4, walked in rounds: a walk that
 * finishes finds exactly the pages of the whole-chunk walk. */
static void header_walk(const uint8_t *data, size_t size, const pq_column_ctx *ctx)
{
    pq_header_walk w;
    tc_error err;
    if (pq_header_walk_init(&w, ctx, &err) != TC_OK)
        return;
    pq_header_want wants[64];
    size_t n;
    for (int round = 0; round < 32 && (n = pq_header_walk_wants(&w, wants, 64)) > 0; round++) {
        for (size_t i = 0; i < n; i++) {
            check(wants[i].offset >= 4 && wants[i].offset - 4 < size && wants[i].len > 0);
            check(wants[i].len <= size - (wants[i].offset - 4));
            check(pq_header_walk_feed(&w, wants[i].offset, data + (wants[i].offset - 4), wants[i].len) == TC_OK);
        }
        pq_header_walk_advance(&w);
    }
    check(!(w.done && w.failed));
    pq_page_map walked, whole;
    if (w.done && pq_header_walk_map(&w, &walked, &err) == TC_OK) {
        check(pq_page_map_from_chunk(ctx, data, size, &whole, &err) == TC_OK);
        check(whole.n_pages == walked.n_pages);
        for (uint32_t i = 0; i < walked.n_pages; i++)
            check(whole.pages[i].offset == walked.pages[i].offset &&
                  whole.pages[i].total_size == walked.pages[i].total_size && walked.pages[i].has_header);
        pq_page_map_free(&whole);
        pq_page_map_free(&walked);
    }
    if (w.failed)
        check(w.err.msg[0] != '\0');
    pq_header_walk_free(&w);
}

/* Walk the pages as the library would, to give the synthetic chunk the
 * value and row counts that make the map build succeed. */
static void chunk_walk(const uint8_t *data, size_t size, uint8_t knobs)
{
    static const pq_physical_type types[8] = {PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_INT96,
                                              PQ_FLOAT,   PQ_DOUBLE, PQ_BYTE_ARRAY,
                                              PQ_FIXED_LEN_BYTE_ARRAY};
    static const pq_codec codecs[4] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_ZSTD, PQ_CODEC_SNAPPY,
                                       PQ_CODEC_ZSTD};
    pq_leaf leaf;
    memset(&leaf, 0, sizeof leaf);
    leaf.path = "x";
    leaf.type = types[knobs & 7];
    leaf.type_length = 4;
    leaf.max_def = (knobs >> 3) & 1;
    leaf.max_rep = (knobs >> 4) & 1;
    pq_column_chunk cc;
    memset(&cc, 0, sizeof cc);
    cc.type = leaf.type;
    cc.codec = codecs[(knobs >> 5) & 3];
    cc.data_page_offset = 4;
    cc.total_compressed_size = (int64_t)size;
    int64_t values = 0, rows = 0;
    size_t pos = 0;
    while (pos < size) {
        pq_page_header h;
        size_t hl;
        tc_error err;
        if (pq_page_header_parse(data + pos, size - pos, &h, &hl, &err) != TC_OK)
            break;
        if ((size_t)h.compressed_page_size > size - pos - hl)
            break;
        if (h.type == PQ_PAGE_DATA) {
            values += h.data.num_values;
            rows += leaf.max_rep ? 0 : h.data.num_values;
        } else if (h.type == PQ_PAGE_DATA_V2) {
            values += h.v2.num_values;
            rows += h.v2.num_rows;
        }
        pos += hl + (size_t)h.compressed_page_size;
    }
    cc.num_values = values;
    const pq_column_ctx ctx = {&cc, &leaf, rows};
    pq_page_map pm;
    tc_error err;
    header_walk(data, size, &ctx);
    if (pq_page_map_from_chunk(&ctx, data, size, &pm, &err) == TC_OK) {
        uint64_t at = 4;
        for (uint32_t i = 0; i < pm.n_pages; i++) {
            check(pm.pages[i].offset == at);
            at += pm.pages[i].total_size;
            check(pm.pages[i].elig != PQ_ELIG_OK); /* no offset index */
        }
        check(at == 4 + size);
        /* Pretend an OffsetIndex vouched for the rows: eligibility may now pass. */
        pm.has_offset_index = true;
        pq_page_map_classify(&pm, data, size);
        for (uint32_t i = 0; i < pm.n_pages; i++)
            if (pm.pages[i].elig == PQ_ELIG_OK)
                check(pm.pages[i].is_data && pm.max_rep == 0);
        pq_page_map_free(&pm);
    } else {
        check(err.msg[0] != '\0' && pm.pages == NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_page_header h;
    size_t hl = 0;
    tc_error err;
    if (pq_page_header_parse(data, size, &h, &hl, &err) == TC_OK) {
        check(hl > 0 && hl <= size);
        check(h.type >= 0 && h.type <= 3);
        check(h.compressed_page_size >= 0 && h.uncompressed_page_size >= 0);
        crc_round_trip(data, hl, &h);
        zstd_walk(data + hl, size - hl);
    } else {
        check(err.msg[0] != '\0' && err.offset <= size);
        zstd_walk(data, size);
    }
    if (size > 1)
        chunk_walk(data + 1, size - 1, data[0]);
    return 0;
}
