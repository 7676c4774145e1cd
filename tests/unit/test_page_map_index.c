/* Page maps built ahead of time (page_map_index) over an in-memory store
 * holding the committed fixtures: every chunk a view would walk, regular or
 * not, walks to the map its own bytes give; chunks with an OffsetIndex or
 * one page by their metadata are left alone; the maps' bundle parses back,
 * feeds a page-map cache for exactly its version, and any changed byte is
 * refused; a failing GET fails the file. */
#include "page_map_index.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fault_store.h"
#include "fixture_set.h"
#include "mem_store.h"
#include "page_map_bundle.h"
#include "page_map_cache.h"

FIXTURE_SUITE(page_map_index);

typedef struct {
    const fixture *f;
    const char *key, *etag;
    page_map_bundle_writer bundle;
    uint32_t sunk, irregular;
} sink_state;

/* Each walk's map equals the map the chunk's own bytes give. */
static void check_walk(void *ud, uint32_t rg, uint32_t col, const pq_header_walk *w)
{
    sink_state *s = ud;
    pq_column_ctx ctx = pq_column_ctx_of(s->f->m, rg, col);
    uint64_t off, len;
    cr_assert(pq_column_chunk_range(ctx.chunk, &off, &len));
    tc_error err;
    pq_page_map truth, got;
    cr_assert_eq(pq_page_map_from_chunk(&ctx, s->f->data + off, (size_t)len, &truth, &err), TC_OK, "%s", err.msg);
    cr_assert_eq(pq_header_walk_map(w, &got, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(got.n_pages, truth.n_pages, "%s rg %u col %u", s->f->name, rg, col);
    bool regular = true;
    const uint32_t first = truth.dict_page >= 0 ? 1 : 0;
    for (uint32_t p = 0; p < got.n_pages && p < truth.n_pages; p++) {
        cr_expect_eq(got.pages[p].offset, truth.pages[p].offset);
        cr_expect_eq(got.pages[p].total_size, truth.pages[p].total_size);
        if (p > first && p + 1 < truth.n_pages && truth.pages[p].total_size != truth.pages[first].total_size)
            regular = false;
    }
    s->irregular += !regular;
    pq_page_map_free(&got);
    pq_page_map_free(&truth);
    page_map_bundle_writer_add(&s->bundle, s->key, s->etag, s->f->len, rg, col, w);
    s->sunk++;
}

Test(page_map_index, walks_every_chunk_a_view_would_to_its_own_pages)
{
    mem_store *ms = mem_store_create();
    cr_assert(ms);
    uint32_t walked = 0, with_none = 0, irregular = 0, files = 0;
    for (int i = 0; i < n_loaded; i++) {
        fixture *f = &loaded[i];
        char key[200], etag[S3_ETAG_MAX + 1];
        snprintf(key, sizeof key, "t/%s.parquet", f->name);
        cr_assert(mem_store_put(ms, key, f->data, f->len));
        cr_assert(mem_store_etag(ms, key, etag));
        sv_error err = {0};
        pq_file_meta *m = NULL;
        cr_assert_eq(page_map_index_read_meta(mem_store_base(ms), key, etag, f->len, &m, &err), 0, "%s: %s", key,
                     err.msg);
        cr_expect_eq(m->n_row_groups, f->m->n_row_groups);
        pq_file_meta_free(m);
        sink_state s = {.f = f, .key = key, .etag = etag};
        page_map_index_counts n;
        cr_assert_eq(page_map_index_file(mem_store_base(ms), key, etag, f->len, f->m, check_walk, &s, &n, &err), 0,
                     "%s: %s", key, err.msg);
        cr_expect_eq(n.walked, s.sunk);
        cr_expect_eq(n.chunks, n.need_none + n.nested + n.walked + n.failed, "%s: every chunk counted", key);
        walked += n.walked;
        with_none += n.need_none;
        irregular += s.irregular;
        size_t blen = 0;
        uint8_t *b = page_map_bundle_writer_finish(&s.bundle, &blen);
        cr_assert_eq(b != NULL, n.walked > 0);
        if (!b)
            continue;
        files++;
        /* The bundle parses back to the same maps, and feeds a cache for
         * this version only, as predictions. */
        page_map_bundle pb;
        cr_assert(page_map_bundle_parse(b, blen, &pb));
        cr_expect_eq(pb.n, n.walked);
        page_map_cache *c = page_map_cache_create(1u << 24, NULL, NULL);
        object_ref o = {.id = 1, .key = key, .size = f->len};
        snprintf(o.etag, sizeof o.etag, "%s", etag);
        object_ref other = o;
        snprintf(other.etag, sizeof other.etag, "\"other\"");
        cr_expect(page_map_cache_claim_bundle(c, &o));
        cr_expect(!page_map_cache_claim_bundle(c, &o), "looked for once per version");
        cr_expect_eq(page_map_cache_add_bundle(c, &other, b, blen), 0, "maps of another version are not kept");
        cr_expect_eq(page_map_cache_add_bundle(c, &o, b, blen), n.walked);
        for (uint32_t k = 0; k < pb.n; k++) {
            pq_column_ctx ctx = pq_column_ctx_of(f->m, pb.maps[k].rg, pb.maps[k].col);
            pq_header_walk w;
            bool from_s3 = true;
            cr_expect(page_map_cache_get(c, &o, pb.maps[k].rg, pb.maps[k].col, &ctx, &w, &from_s3));
            cr_expect(!from_s3, "a bundle's maps are predictions: their bytes are not served");
            pq_header_walk_free(&w);
        }
        page_map_cache_destroy(c);
        page_map_bundle_free(&pb);
        /* Any changed byte (sampled) is refused as a whole. */
        for (size_t at = 0; at < blen; at += 1 + blen / 97) {
            b[at] ^= 0x10;
            cr_expect(!page_map_bundle_parse(b, blen, &pb), "%s: byte %zu changed", key, at);
            b[at] ^= 0x10;
        }
        cr_expect(!page_map_bundle_parse(b, blen - 1, &pb));
        free(b);
    }
    cr_expect_geq(walked, 6, "v1_plain_none_noindex alone has 6 chunks to walk");
    cr_expect_gt(with_none, 10, "chunks with an OffsetIndex or one page need no map");
    cr_expect_gt(irregular, 0, "some walked chunk has pages of different sizes");
    cr_expect_geq(files, 1);
    store_destroy(mem_store_base(ms));
}

Test(page_map_index, a_failing_get_fails_the_file)
{
    fixture *f = fixtures_find(loaded, n_loaded, "v1_plain_none_noindex");
    mem_store *ms = mem_store_create();
    cr_assert(mem_store_put(ms, "t/a.parquet", f->data, f->len));
    char etag[S3_ETAG_MAX + 1];
    cr_assert(mem_store_etag(ms, "t/a.parquet", etag));
    fault_store *fs = fault_store_create(mem_store_base(ms));
    fault_store_set(fs, &(fault_plan){.fail_gets = 1});
    sink_state s = {.f = f, .key = "t/a.parquet", .etag = etag};
    page_map_index_counts n;
    sv_error err = {0};
    cr_expect_eq(page_map_index_file(fault_store_base(fs), "t/a.parquet", etag, f->len, f->m, check_walk, &s, &n,
                                     &err),
                 -1);
    cr_expect_eq(s.sunk, 0, "nothing is kept from a file whose reads failed");
    cr_expect(strlen(err.msg) > 0);
    /* A replaced object (another ETag) is not read. */
    cr_expect_eq(page_map_index_file(mem_store_base(ms), "t/a.parquet", "\"stale\"", f->len, f->m, check_walk, &s,
                                     &n, &err),
                 -1);
    free(page_map_bundle_writer_finish(&s.bundle, &(size_t){0}));
    store_destroy(fault_store_base(fs));
    store_destroy(mem_store_base(ms));
}
