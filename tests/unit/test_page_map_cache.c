/* Walked page maps kept per object version: a hit replays the windows
 * through a new walk (equal map, no fetch), another ETag or size misses, a
 * replay the metadata contradicts misses, and the budget evicts. */
#include "page_map_cache.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_files.h"
#include "page_map_file.h"

#include <stdio.h>
#include <unistd.h>

static uint8_t *file;
static size_t file_len;
static pq_file_meta *meta;

static void setup(void)
{
    file = fixture_read(FIXTURE_DIR "/v1_plain_none_noindex.parquet", &file_len);
    tc_error err;
    cr_assert_eq(pq_file_meta_from_tail(file, file_len, file_len, &meta, NULL, &err), TC_OK, "%s", err.msg);
}

static void teardown(void)
{
    pq_file_meta_free(meta);
    free(file);
}

TestSuite(page_map_cache, .init = setup, .fini = teardown);

/* A done walk of (rg, col), fetching from the fixture's bytes. */
static void walk(const pq_column_ctx *ctx, pq_header_walk *w)
{
    tc_error err;
    cr_assert_eq(pq_header_walk_init(w, ctx, &err), TC_OK, "%s", err.msg);
    pq_header_want wants[PQ_HEADER_WALK_MAX_WANTS];
    size_t n;
    for (int r = 0; r < 64 && (n = pq_header_walk_wants(w, wants, PQ_HEADER_WALK_MAX_WANTS)) > 0; r++) {
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(pq_header_walk_feed(w, wants[i].offset, file + wants[i].offset, wants[i].len), TC_OK);
        pq_header_walk_advance(w);
    }
    cr_assert(w->done, "%s", w->err.msg);
}

static object_ref ref(const char *etag, uint64_t size)
{
    object_ref o = {.id = 1, .key = strdup("t/a.parquet"), .size = size};
    snprintf(o.etag, sizeof o.etag, "%s", etag);
    return o;
}

Test(page_map_cache, a_hit_replays_the_same_map_and_other_versions_miss)
{
    page_map_cache *c = page_map_cache_create(1u << 20, NULL, NULL);
    cr_assert(c);
    bool s3 = false;
    pq_column_ctx ctx = pq_column_ctx_of(meta, 0, 1);
    pq_header_walk w;
    walk(&ctx, &w);
    object_ref o = ref("\"e1\"", file_len);
    page_map_cache_put(c, &o, 0, 1, &w);
    pq_header_walk hit;
    cr_assert(page_map_cache_get(c, &o, 0, 1, &ctx, &hit, &s3));
    cr_assert(hit.done);
    pq_page_map a, b;
    tc_error err;
    cr_assert_eq(pq_header_walk_map(&w, &a, &err), TC_OK, "%s", err.msg);
    cr_assert_eq(pq_header_walk_map(&hit, &b, &err), TC_OK, "%s", err.msg);
    cr_assert_eq(a.n_pages, b.n_pages);
    for (uint32_t i = 0; i < a.n_pages; i++) {
        cr_expect_eq(a.pages[i].offset, b.pages[i].offset);
        cr_expect_eq(a.pages[i].total_size, b.pages[i].total_size);
        cr_expect_eq(a.pages[i].first_row, b.pages[i].first_row);
        cr_expect_eq(a.pages[i].has_header, b.pages[i].has_header);
    }
    pq_page_map_free(&a);
    pq_page_map_free(&b);
    pq_header_walk_free(&hit);
    /* Another column, another version (ETag or size): misses. */
    pq_column_ctx ctx2 = pq_column_ctx_of(meta, 0, 2);
    cr_expect_not(page_map_cache_get(c, &o, 0, 2, &ctx2, &hit, &s3));
    object_ref other = ref("\"e2\"", file_len), longer = ref("\"e1\"", file_len + 1);
    cr_expect_not(page_map_cache_get(c, &other, 0, 1, &ctx, &hit, &s3));
    cr_expect_not(page_map_cache_get(c, &longer, 0, 1, &ctx, &hit, &s3));
    /* Metadata the kept windows do not fit (a row group of one more row):
     * the replay does not finish, and nothing is served from it. */
    pq_column_ctx wrong = ctx;
    wrong.row_group_rows += 1;
    cr_expect_not(page_map_cache_get(c, &o, 0, 1, &wrong, &hit, &s3));
    page_map_cache_counts n = page_map_cache_counts_now(c);
    cr_expect_eq(n.entries, 1);
    cr_expect_eq(n.hits, 2, "the hit and the contradicted replay found the entry");
    cr_expect_eq(n.misses, 3);
    pq_header_walk_free(&w);
    object_ref_free(&o);
    object_ref_free(&other);
    object_ref_free(&longer);
    page_map_cache_destroy(c);
}

Test(page_map_cache, the_budget_evicts_the_least_recently_used)
{
    pq_column_ctx c1 = pq_column_ctx_of(meta, 0, 1), c2 = pq_column_ctx_of(meta, 0, 2);
    pq_header_walk w1, w2, hit;
    bool s3 = false;
    walk(&c1, &w1);
    walk(&c2, &w2);
    object_ref o = ref("\"e1\"", file_len);
    /* Room for about one entry. */
    page_map_cache *big = page_map_cache_create(1u << 20, NULL, NULL);
    page_map_cache_put(big, &o, 0, 1, &w1);
    const uint64_t one = page_map_cache_counts_now(big).bytes;
    page_map_cache_destroy(big);
    page_map_cache *c = page_map_cache_create(one + one / 2, NULL, NULL);
    page_map_cache_put(c, &o, 0, 1, &w1);
    page_map_cache_put(c, &o, 0, 2, &w2);
    cr_expect_eq(page_map_cache_counts_now(c).entries, 1);
    cr_expect_leq(page_map_cache_counts_now(c).bytes, one + one / 2);
    cr_expect_not(page_map_cache_get(c, &o, 0, 1, &c1, &hit, &s3), "the older entry went");
    cr_assert(page_map_cache_get(c, &o, 0, 2, &c2, &hit, &s3));
    pq_header_walk_free(&hit);
    /* An entry larger than the whole budget is not kept. */
    page_map_cache *tiny = page_map_cache_create(16, NULL, NULL);
    page_map_cache_put(tiny, &o, 0, 1, &w1);
    cr_expect_eq(page_map_cache_counts_now(tiny).entries, 0);
    page_map_cache_destroy(tiny);
    page_map_cache_destroy(c);
    pq_header_walk_free(&w1);
    pq_header_walk_free(&w2);
    object_ref_free(&o);
}

/* With a directory: a walk written by one cache (mount) is read back by a
 * new one, as a prediction (not bytes from S3); another ETag misses; a
 * corrupted file misses. */
Test(page_map_cache, the_cache_directory_outlives_the_mount)
{
    char dir[] = "/tmp/sieve-pmc-XXXXXX";
    cr_assert(mkdtemp(dir));
    pq_column_ctx ctx = pq_column_ctx_of(meta, 0, 1);
    pq_header_walk w, hit;
    walk(&ctx, &w);
    object_ref o = ref("\"e1\"", file_len), other = ref("\"e2\"", file_len);
    page_map_cache *first = page_map_cache_create(1u << 20, dir, NULL);
    page_map_cache_put(first, &o, 0, 1, &w);
    cr_expect_eq(page_map_cache_counts_now(first).disk_writes, 1);
    bool s3 = false;
    cr_assert(page_map_cache_get(first, &o, 0, 1, &ctx, &hit, &s3));
    cr_expect(s3, "in the mount that fetched it: bytes from S3");
    pq_header_walk_free(&hit);
    page_map_cache_destroy(first);
    page_map_cache *second = page_map_cache_create(1u << 20, dir, NULL);
    cr_assert(page_map_cache_get(second, &o, 0, 1, &ctx, &hit, &s3));
    cr_expect_not(s3, "read back from the directory");
    cr_expect_eq(hit.n_pages, w.n_pages);
    cr_expect_eq(page_map_cache_counts_now(second).disk_reads, 1);
    pq_header_walk_free(&hit);
    cr_expect_not(page_map_cache_get(second, &other, 0, 1, &ctx, &hit, &s3), "a changed object is walked afresh");
    page_map_cache_destroy(second);
    /* Flip a byte of the file: it no longer parses (CRC). */
    char name[64], path[256];
    page_map_file_name(o.key, o.etag, o.size, 0, 1, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    fseek(f, 30, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 30, SEEK_SET);
    fputc(ch ^ 0x40, f);
    fclose(f);
    page_map_cache *third = page_map_cache_create(1u << 20, dir, NULL);
    cr_expect_not(page_map_cache_get(third, &o, 0, 1, &ctx, &hit, &s3));
    page_map_cache_destroy(third);
    /* The committed fuzz seed is a valid file. */
    size_t seed_len;
    uint8_t *seed = fixture_read(SIEVE_SOURCE_DIR "/tests/fuzz/corpus/page_map_file/valid_two_windows.bin", &seed_len);
    page_map_file pf;
    cr_expect(page_map_file_parse(seed, seed_len, &pf));
    cr_expect_eq(pf.n, 2);
    cr_expect_str_eq(pf.key, "t/part-0.parquet");
    page_map_file_free(&pf);
    free(seed);
    unlink(path);
    rmdir(dir);
    pq_header_walk_free(&w);
    object_ref_free(&o);
    object_ref_free(&other);
}
