/* The plain tree over the in-memory store: attributes, listings and
 * extended attributes, and what a reader's reads make sievefs fetch (the
 * Parquet-aware chunk prefetch and the sequential window), with small cache
 * blocks so that a small fixture has many. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_files.h"
#include "log.h"
#include "mem_store.h"
#include "plain.h"

#define BS 256u
#define READAHEAD 4096u /* the fixture's chunks are a few KiB */
#define SV_MAX_TEST_IOV 512

static mem_store *m;
static plain_fs *p;
static sv_stats stats;
static uint8_t *pq;
static size_t pq_len;
static uint8_t *text;
static size_t text_len;

static void setup(void)
{
    sv_log_init(SV_LOG_ERROR, false);
    m = mem_store_create();
    pq = fixture_read(FIXTURE_DIR "/v1_plain_none_index.parquet", &pq_len);
    cr_assert(mem_store_put(m, "w/t/a.parquet", pq, pq_len));
    text_len = 64u << 10;
    text = malloc(text_len);
    for (size_t i = 0; i < text_len; i++)
        text[i] = (uint8_t)('a' + i % 26);
    cr_assert(mem_store_put(m, "w/t/notes.txt", text, text_len));
    cr_assert(mem_store_put(m, "w/t/_delta_log/00000.json", "{}", 2));
    memset(&stats, 0, sizeof stats);
    plain_config cfg = {
        .prefix = "w/",
        .cache_bytes = 16u << 20,
        .block_size = BS,
        .max_request = 64u << 10,
        .tail_bytes = 2048, /* the fixture's footer and little else */
        .dir_ttl_ms = 60000,
        .delta_log_ttl_ms = 1000,
        .file_attr_timeout_s = 3600,
        .delta_log_attr_timeout_s = 1,
        .dir_attr_timeout_s = 10,
        .prefetch = {.min_streak = 8u << 10, .max_window = 16u << 10, .kernel_readahead = READAHEAD},
    };
    p = plain_fs_create(mem_store_base(m), &stats, &cfg);
    cr_assert_not_null(p);
}

static void teardown(void)
{
    mem_store_drain(m);
    plain_fs_destroy(p);
    store_destroy(mem_store_base(m));
    free(pq);
    free(text);
}

TestSuite(plain, .init = setup, .fini = teardown);

static uint64_t ino_of(const char *path)
{
    sv_attr a = {.ino = TREE_ROOT_INO};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
        cr_assert_eq(plain_lookup(p, a.ino, c, &a, NULL), 0, "lookup of %s", c);
    return a.ino;
}

/* A reader's read: bytes compared with the object's, returns bytes fetched from the store. */
static uint64_t reader_read(plain_file *f, const uint8_t *want, uint64_t off, size_t size)
{
    uint64_t before = mem_store_counts_now(m).get_bytes;
    struct iovec iov[SV_MAX_TEST_IOV];
    size_t niov;
    object_pins pins;
    ssize_t n = plain_file_read(p, f, off, size, iov, SV_MAX_TEST_IOV, &niov, &pins, NULL, NULL);
    cr_assert_geq(n, 0);
    size_t pos = off;
    for (size_t i = 0; i < niov; i++) {
        cr_assert_eq(memcmp(iov[i].iov_base, want + pos, iov[i].iov_len), 0, "bytes at %zu", pos);
        pos += iov[i].iov_len;
    }
    object_pins_release(p->io, &pins);
    mem_store_drain(m);
    return mem_store_counts_now(m).get_bytes - before;
}

Test(plain, attributes_listings_and_xattrs)
{
    sv_attr a;
    cr_assert_eq(plain_getattr(p, ino_of("t/a.parquet"), &a), 0);
    cr_assert_eq(a.size, pq_len);
    cr_assert_eq(a.mode, S_IFREG | 0444);
    cr_assert_eq(a.timeout, 3600);
    cr_assert_eq(plain_getattr(p, ino_of("t/_delta_log/00000.json"), &a), 0);
    cr_assert_eq(a.timeout, 1, "short attribute timeout under _delta_log");
    cr_assert_eq(plain_getattr(p, ino_of("t"), &a), 0);
    cr_assert_eq(a.mode, S_IFDIR | 0555);
    tree_dir_snapshot snap;
    cr_assert_eq(plain_readdir(p, ino_of("t"), &snap, NULL), 0);
    cr_assert_eq(snap.n, 3);
    tree_dir_snapshot_free(&snap);
    cr_assert_eq(plain_readdir(p, ino_of("t/a.parquet"), &snap, NULL), -ENOTDIR);
    cr_assert_eq(plain_lookup(p, TREE_ROOT_INO, "nope", &a, NULL), -ENOENT);
    char buf[256];
    ssize_t n = plain_getxattr(p, ino_of("t/a.parquet"), SV_XATTR_KEY, buf, sizeof buf);
    cr_assert_eq(n, (ssize_t)strlen("w/t/a.parquet"));
    cr_assert_eq(memcmp(buf, "w/t/a.parquet", (size_t)n), 0);
    cr_assert_gt(plain_getxattr(p, ino_of("t/a.parquet"), SV_XATTR_ETAG, NULL, 0), 0);
    cr_assert_eq(plain_getxattr(p, ino_of("t"), SV_XATTR_ETAG, buf, sizeof buf), -ENODATA);
    cr_assert_eq(plain_getxattr(p, ino_of("t/a.parquet"), SV_XATTR_KEY, buf, 2), -ERANGE);
    cr_assert_eq(plain_listxattr(p, ino_of("t/a.parquet"), NULL, 0),
                 (ssize_t)(sizeof SV_XATTR_KEY + sizeof SV_XATTR_ETAG));
    object_ref o;
    cr_assert_eq(plain_bind_object(p, ino_of("t"), &o), -EISDIR);
}

Test(plain, a_footer_per_version_however_many_opens)
{
    plain_file f1, f2;
    cr_assert_eq(plain_file_open(p, ino_of("t/a.parquet"), true, &f1, NULL), 0);
    cr_assert_eq(plain_file_open(p, ino_of("t/a.parquet"), true, &f2, NULL), 0);
    cr_assert_not_null(plain_file_layout(&f1));
    cr_assert_eq(f1.footer, f2.footer);
    cr_assert_eq(footer_cache_loads(p->footers), 1);
    plain_file_close(p, &f1);
    plain_file_close(p, &f2);
}

/* A read into a chunk fetches that chunk, and of the next only what the
 * kernel's readahead can ask for once the reader reaches the chunk's end. */
Test(plain, a_read_into_a_chunk_fetches_that_chunk_and_no_other)
{
    plain_file f;
    cr_assert_eq(plain_file_open(p, ino_of("t/a.parquet"), true, &f, NULL), 0);
    const parquet_layout *l = plain_file_layout(&f);
    cr_assert_not_null(l);
    mem_store_drain(m);
    /* Chunk 1 (row group 0, i64) from its first byte. */
    const byte_span c = l->chunks[1];
    uint64_t fetched = reader_read(&f, pq, c.start, 64);
    uint64_t chunk_blocks = (c.end + BS - 1) / BS - c.start / BS;
    cr_assert_geq(fetched, (chunk_blocks - 1) * BS, "the rest of the chunk: %llu", (unsigned long long)fetched);
    const prefetch_config pc = {.kernel_readahead = READAHEAD};
    cr_assert_leq(fetched, (chunk_blocks + 1) * BS + prefetch_continuation_proof(&pc) + BS,
                  "and of the next chunk its start only: %llu", (unsigned long long)fetched);
    cr_assert_eq(reader_read(&f, pq, c.start + 64, (size_t)(c.end - c.start - 64)), 0, "the chunk is cached");
    /* Reads that merely run on into the next chunk do not fetch it whole. */
    const byte_span d = l->chunks[2];
    fetched = reader_read(&f, pq, c.end - 32, 300);
    cr_assert_leq(fetched, 3 * BS, "ran on into the next chunk: %llu", (unsigned long long)fetched);
    plain_file_close(p, &f);
    (void)d;
}

Test(plain, sequential_reads_get_a_window_ahead)
{
    plain_file f;
    cr_assert_eq(plain_file_open(p, ino_of("t/notes.txt"), true, &f, NULL), 0);
    mem_store_drain(m);
    uint64_t tail = mem_store_counts_now(m).get_bytes;
    cr_assert_eq(tail, 2048, "the tail of a non-Parquet file, in case it is a footer");
    uint64_t total = 0;
    for (uint64_t off = 0; off < 32u << 10; off += 1024)
        total += reader_read(&f, text, off, 1024);
    /* After 8 KiB of sequential reads, half the streak is fetched ahead. */
    uint64_t ahead = total - (32u << 10);
    cr_assert_gt(ahead, 0, "something was fetched ahead of the reader");
    cr_assert_leq(ahead, 16u << 10, "at most max_window ahead: %llu", (unsigned long long)ahead);
    cr_assert_gt(STAT_GET(&stats, prefetch_bytes), 0);
    plain_file_close(p, &f);
}

Test(plain, reads_of_a_replaced_object_fail)
{
    plain_file f;
    cr_assert_eq(plain_file_open(p, ino_of("t/notes.txt"), false, &f, NULL), 0);
    cr_assert(mem_store_put(m, "w/t/notes.txt", "new", 3));
    struct iovec iov[SV_MAX_TEST_IOV];
    size_t niov;
    object_pins pins;
    cr_assert_eq(plain_file_read(p, &f, 40000, 100, iov, SV_MAX_TEST_IOV, &niov, &pins, NULL, NULL), -EIO);
    plain_file_close(p, &f);
}

/* A reader that stops (the last open file of the version closes) leaves no
 * prefetch behind: GETs nobody waits for are dropped, not served; while
 * another file of the version is open they go on. The bytes are fetched
 * anew, and right, when read later. */
Test(plain, closing_the_last_file_cancels_its_prefetch)
{
    plain_file f1, f2;
    cr_assert_eq(plain_file_open(p, ino_of("t/a.parquet"), true, &f1, NULL), 0);
    cr_assert_eq(plain_file_open(p, ino_of("t/a.parquet"), true, &f2, NULL), 0);
    const parquet_layout *l = plain_file_layout(&f1);
    cr_assert_not_null(l);
    mem_store_drain(m);
    const byte_span c = l->chunks[1], d = l->chunks[2];
    mem_store_hold(m, true); /* a server that has not answered yet */
    object_prefetch(p->io, &f1.obj, c.start, c.end, c.end - c.start, false);
    mem_store_counts before = mem_store_counts_now(m);
    plain_file_close(p, &f1);
    mem_store_hold(m, false);
    mem_store_drain(m);
    mem_store_counts mid = mem_store_counts_now(m);
    cr_assert_eq(mid.cancelled, before.cancelled, "another file of the version is open: kept");
    cr_assert_gt(mid.get_bytes, before.get_bytes);
    mem_store_hold(m, true);
    object_prefetch(p->io, &f2.obj, d.start, d.end, d.end - d.start, false);
    plain_file_close(p, &f2);
    mem_store_hold(m, false);
    mem_store_drain(m);
    mem_store_counts after = mem_store_counts_now(m);
    cr_assert_gt(after.cancelled, mid.cancelled, "the last close dropped the prefetch");
    cr_assert_eq(after.get_bytes, mid.get_bytes, "and nothing of it was served");
    plain_file f3;
    cr_assert_eq(plain_file_open(p, ino_of("t/a.parquet"), true, &f3, NULL), 0);
    cr_assert_gt(reader_read(&f3, pq, d.start, (size_t)(d.end - d.start)), 0, "fetched anew when read");
    plain_file_close(p, &f3);
}
