/* Real bytes through the block cache over the in-memory store: what is
 * fetched and when, object changes, injected failures, ranges outside the
 * cache, and the footer cache shared by every open of a version. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_store.h"
#include "fixture_files.h"
#include "footer_cache.h"
#include "log.h"
#include "mem_store.h"
#include "object_read.h"
#include "prefetch.h"

#define BS (16u << 10)

static mem_store *m;
static fault_store *faults;
static block_cache *cache;
static object_io *io;
static sv_stats stats;
static uint8_t *data;
static size_t data_len;

static void setup(void)
{
    sv_log_init(SV_LOG_ERROR, false);
    m = mem_store_create();
    faults = fault_store_create(mem_store_base(m));
    memset(&stats, 0, sizeof stats);
    cache = block_cache_create(BS, 64u << 20, &stats);
    io = object_io_create(fault_store_base(faults), cache, &stats, 1u << 20, 0);
    cr_assert(m && faults && cache && io);
    data_len = 3 * (1u << 20) + 12345;
    data = malloc(data_len);
    for (size_t i = 0; i < data_len; i++)
        data[i] = (uint8_t)(i * 7 + (i >> 11));
    cr_assert(mem_store_put(m, "obj", data, data_len));
}

static void teardown(void)
{
    mem_store_drain(m);
    object_io_destroy(io);
    block_cache_destroy(cache);
    store_destroy(fault_store_base(faults));
    store_destroy(mem_store_base(m));
    free(data);
}

TestSuite(object_read, .init = setup, .fini = teardown);

static object_ref ref_of(const char *key, uint64_t id)
{
    object_ref o = {.id = id, .key = strdup(key)};
    cr_assert(mem_store_etag(m, key, o.etag));
    store_object_info info;
    sv_error err;
    cr_assert_eq(store_head(mem_store_base(m), key, &info, &err), STORE_OK);
    o.size = info.size;
    return o;
}

Test(object_read, exact_bytes_then_from_the_cache)
{
    object_ref o = ref_of("obj", 100);
    size_t offs[] = {0, 1, BS - 1, BS, 5 * BS + 17, data_len - 10};
    for (size_t k = 0; k < sizeof offs / sizeof *offs; k++) {
        uint8_t buf[40000];
        size_t want = data_len - offs[k] < sizeof buf ? data_len - offs[k] : sizeof buf;
        cr_assert_eq(object_read(io, &o, offs[k], sizeof buf, buf, NULL), (ssize_t)want);
        cr_assert_eq(memcmp(buf, data + offs[k], want), 0, "bytes at %zu", offs[k]);
    }
    uint64_t gets = mem_store_counts_now(m).gets;
    uint8_t buf[40000];
    cr_assert_eq(object_read(io, &o, 0, sizeof buf, buf, NULL), (ssize_t)sizeof buf);
    cr_assert_eq(mem_store_counts_now(m).gets, gets, "cached blocks are not fetched again");
    cr_assert_eq(object_read(io, &o, data_len, 10, buf, NULL), 0, "EOF");
    object_ref_free(&o);
}

Test(object_read, pinned_reads_count_hits_and_misses)
{
    object_ref o = ref_of("obj", 101);
    struct iovec iov[8];
    size_t niov;
    object_pins pins;
    object_read_tally t = {0};
    cr_assert_eq(object_pin(io, &o, 100, 3 * BS, 8, &pins), 0);
    cr_assert_eq(object_pins_wait(io, &pins, iov, &niov, &t, NULL), (ssize_t)(3 * BS));
    cr_assert_eq(niov, 4);
    size_t pos = 100;
    for (size_t i = 0; i < niov; i++) {
        cr_assert_eq(memcmp(iov[i].iov_base, data + pos, iov[i].iov_len), 0);
        pos += iov[i].iov_len;
    }
    object_pins_release(io, &pins);
    cr_assert_eq(t.miss_bytes, 3 * BS);
    cr_assert_eq(t.hit_bytes, 0);
    t = (object_read_tally){0};
    cr_assert_eq(object_pin(io, &o, 100, 3 * BS, 8, &pins), 0);
    cr_assert_eq(object_pins_wait(io, &pins, iov, &niov, &t, NULL), (ssize_t)(3 * BS));
    object_pins_release(io, &pins);
    cr_assert_eq(t.hit_bytes, 3 * BS);
    cr_assert_eq(object_pin(io, &o, 0, 10 * BS, 8, &pins), -EINVAL, "more blocks than iov entries");
    object_ref_free(&o);
}

Test(object_read, prefetch_fills_the_cache_in_runs)
{
    object_ref o = ref_of("obj", 102);
    object_prefetch(io, &o, 0, 2u << 20, 256u << 10, false);
    mem_store_drain(m);
    mem_store_counts c = mem_store_counts_now(m);
    cr_assert_eq(c.gets, 8, "2 MiB in 256 KiB runs: %llu", (unsigned long long)c.gets);
    cr_assert_eq(c.get_bytes, 2u << 20);
    cr_assert_eq(STAT_GET(&stats, prefetch_bytes), 2u << 20);
    uint8_t *buf = malloc(1u << 20);
    cr_assert_eq(object_read(io, &o, 512u << 10, 1u << 20, buf, NULL), (ssize_t)(1u << 20));
    cr_assert_eq(memcmp(buf, data + (512u << 10), 1u << 20), 0);
    cr_assert_eq(mem_store_counts_now(m).gets, 8, "read from what prefetch fetched");
    /* Parallel parts: a quarter of the span each, at least 1 MiB. */
    object_prefetch_parts(io, &o, 2u << 20, data_len);
    mem_store_drain(m);
    cr_assert_eq(mem_store_counts_now(m).gets, 8 + 2, "1 MiB + 12345 bytes in two parts");
    free(buf);
    object_ref_free(&o);
}

Test(object_read, a_changed_object_is_an_error_never_a_mix)
{
    object_ref o = ref_of("obj", 103);
    uint8_t buf[100];
    cr_assert_eq(object_read(io, &o, 0, sizeof buf, buf, NULL), (ssize_t)sizeof buf);
    cr_assert(mem_store_put(m, "obj", "replaced", 8));
    cr_assert_eq(object_read(io, &o, 5u << 20 >> 1, sizeof buf, buf, NULL), -EIO, "If-Match fails");
    cr_assert_eq(object_read(io, &o, 0, sizeof buf, buf, NULL), (ssize_t)sizeof buf, "cached bytes of the version stay");
    cr_assert_eq(memcmp(buf, data, sizeof buf), 0);
    /* Same ETag, shorter object (a broken server): the range fails. */
    cr_assert(mem_store_put_etag(m, "obj", data, 1000, o.etag));
    cr_assert_eq(object_read(io, &o, 2u << 20, sizeof buf, buf, NULL), -EIO);
    object_ref_free(&o);
}

Test(object_read, failures_fail_the_read_and_a_later_read_retries)
{
    object_ref o = ref_of("obj", 104);
    fault_plan plan = {.fail_gets = 1};
    fault_store_set(faults, &plan);
    uint8_t buf[1000];
    cr_assert_eq(object_read(io, &o, 0, sizeof buf, buf, NULL), -EIO);
    cr_assert_geq(STAT_GET(&stats, errors), 1);
    cr_assert_eq(object_read(io, &o, 0, sizeof buf, buf, NULL), (ssize_t)sizeof buf, "failed blocks are dropped");
    cr_assert_eq(memcmp(buf, data, sizeof buf), 0);
    plan = (fault_plan){.refuse_gets = 1};
    fault_store_set(faults, &plan);
    cr_assert_eq(object_read(io, &o, 1u << 20, sizeof buf, buf, NULL), -EIO, "a refused GET fails its blocks at once");
    cr_assert_eq(object_read(io, &o, 1u << 20, sizeof buf, buf, NULL), (ssize_t)sizeof buf);
    object_ref_free(&o);
}

/* One listing of the exact key finds a version; a key only others begin
 * with (as objects or as a directory) is absent. */
Test(object_read, an_exact_key_is_found_by_one_listing)
{
    cr_assert(mem_store_put(m, "d/x.pmb", "abc", 3));
    cr_assert(mem_store_put(m, "d/y.pmbx", "abcd", 4));
    cr_assert(mem_store_put(m, "d/z.pmb/inner", "e", 1));
    uint64_t lists = mem_store_counts_now(m).lists;
    object_ref o;
    cr_assert_eq(object_find_exact(io, "d/x.pmb", &o, NULL), 0);
    cr_assert_str_eq(o.key, "d/x.pmb");
    cr_assert_eq(o.size, 3);
    char etag[S3_ETAG_MAX + 1];
    cr_assert(mem_store_etag(m, "d/x.pmb", etag));
    cr_assert_str_eq(o.etag, etag);
    cr_assert_eq(mem_store_counts_now(m).lists, lists + 1, "one listing");
    object_ref_free(&o);
    cr_assert_eq(object_find_exact(io, "d/y.pmb", &o, NULL), -ENOENT);
    cr_assert_eq(object_find_exact(io, "d/z.pmb", &o, NULL), -ENOENT);
    cr_assert_eq(object_find_exact(io, "d/none", &o, NULL), -ENOENT);
    cr_assert_null(o.key);
}

Test(object_read, ranges_outside_the_cache)
{
    object_ref o = ref_of("obj", 105);
    uint8_t a[100], b[5000], c[1];
    object_range r[3] = {{10, sizeof a, a}, {1u << 20, sizeof b, b}, {data_len - 1, 1, c}};
    size_t started = 0;
    cr_assert_eq(object_fetch_ranges(io, &o, r, 3, &started, NULL), 0);
    cr_assert_eq(started, 3);
    cr_assert_eq(memcmp(a, data + 10, sizeof a), 0);
    cr_assert_eq(memcmp(b, data + (1u << 20), sizeof b), 0);
    cr_assert_eq(c[0], data[data_len - 1]);
    cr_assert_eq(block_cache_bytes(cache), 0, "nothing went into the cache");
    fault_plan plan = {.fail_gets = 1, .only_from = 1u << 20, .only_to = (1u << 20) + 1};
    fault_store_set(faults, &plan);
    cr_assert_eq(object_fetch_ranges(io, &o, r, 3, &started, NULL), -EIO);
    cr_assert_eq(started, 3, "every range went out; one failed");
    object_ref_free(&o);
}

/* A caller that stops waiting takes its requests with it: those the store
 * has not served yet are dropped, not fetched for nobody. */
Test(object_read, abandoned_ranges_are_dropped_by_the_store)
{
    object_ref o = ref_of("obj", 107);
    enum { N = 6 };
    object_range r[N];
    for (size_t i = 0; i < N; i++)
        r[i] = (object_range){i * 100000, 4096, malloc(4096)};
    mem_store_hold(m, true); /* a server that does not answer yet */
    mem_store_counts before = mem_store_counts_now(m);
    sv_cancel tok;
    sv_cancel_init(&tok, NULL, 100); /* the caller's deadline */
    size_t started = 0;
    cr_assert_eq(object_fetch_ranges(io, &o, r, N, &started, &tok), -ETIMEDOUT);
    cr_assert_eq(started, N);
    for (size_t i = 0; i < N; i++)
        cr_assert_null(r[i].buf, "the buffers are the group's now");
    mem_store_hold(m, false);
    mem_store_drain(m);
    mem_store_counts after = mem_store_counts_now(m);
    cr_assert_eq(after.cancelled - before.cancelled, N, "every abandoned GET was dropped");
    cr_assert_eq(after.get_bytes, before.get_bytes, "none was served");
    object_ref_free(&o);
}

/* A demand read that gives up cuts off its GET when nobody else waits for
 * those blocks; the blocks leave the cache, and the next read fetches them
 * anew and gets the right bytes. */
Test(object_read, an_abandoned_read_cancels_its_fetch)
{
    object_ref o = ref_of("obj", 108);
    uint8_t buf[3 * BS];
    mem_store_hold(m, true);
    mem_store_counts before = mem_store_counts_now(m);
    sv_cancel tok;
    sv_cancel_init(&tok, NULL, 100);
    cr_assert_eq(object_read(io, &o, BS / 2, sizeof buf, buf, &tok), -ETIMEDOUT);
    mem_store_hold(m, false);
    mem_store_drain(m);
    mem_store_counts mid = mem_store_counts_now(m);
    cr_assert_gt(mid.cancelled, before.cancelled, "the abandoned GET was dropped");
    cr_assert_eq(mid.get_bytes, before.get_bytes, "and not served");
    cr_assert_eq(object_read(io, &o, BS / 2, sizeof buf, buf, NULL), (ssize_t)sizeof buf);
    cr_assert_eq(memcmp(buf, data + BS / 2, sizeof buf), 0);
    cr_assert_gt(mem_store_counts_now(m).get_bytes, mid.get_bytes, "fetched anew");
    object_ref_free(&o);
}

/* Two readers of the same blocks: the one who gives up leaves the GET to
 * the one still waiting. */
Test(object_read, a_fetch_another_reader_waits_for_is_kept)
{
    object_ref o = ref_of("obj", 109);
    uint8_t buf[BS];
    mem_store_hold(m, true);
    object_pins keep;
    cr_assert_eq(object_pin(io, &o, 0, sizeof buf, 8, &keep), 0); /* the other reader's pins */
    sv_cancel tok;
    sv_cancel_init(&tok, NULL, 100);
    cr_assert_eq(object_read(io, &o, 0, sizeof buf, buf, &tok), -ETIMEDOUT);
    mem_store_counts before = mem_store_counts_now(m);
    mem_store_hold(m, false);
    struct iovec iov[8];
    size_t niov = 0;
    cr_assert_eq(object_pins_wait(io, &keep, iov, &niov, NULL, NULL), (ssize_t)sizeof buf);
    cr_assert_eq(memcmp(iov[0].iov_base, data, sizeof buf), 0);
    object_pins_release(io, &keep);
    mem_store_drain(m);
    cr_assert_eq(mem_store_counts_now(m).cancelled, before.cancelled, "nothing was dropped");
    object_ref_free(&o);
}

/* What a stream speculates past the chunks it reads: 1/20 of its streak,
 * and at least what the kernel's readahead can ask for past a chunk's end
 * (the proof), which is fetched with the chunk. */
static uint64_t speculation(const prefetch_config *cfg, uint64_t streak)
{
    const uint64_t proof = prefetch_continuation_proof(cfg);
    return streak / 20 > proof ? streak / 20 : proof;
}

/* Bytes the store has sent since before. */
static uint64_t fetched_since(uint64_t before)
{
    return mem_store_counts_now(m).get_bytes - before;
}

/* A reader that reads chunk 0 to its end, and the kernel's readahead running
 * on up to twice its window into chunk 1: chunk 1 is not fetched whole until
 * the reads go further into it than readahead can; only its start is
 * fetched ahead: what readahead can ask for past chunk 0's end, or 1/20
 * of the stream's bytes if more. */
Test(object_read, kernel_readahead_past_a_chunk_does_not_fetch_the_next)
{
    object_ref o = ref_of("obj", 109);
    byte_span spans[] = {{0, 1u << 20}, {1u << 20, 2u << 20}, {2u << 20, data_len}};
    parquet_layout l = {.chunks = spans, .n_chunks = 3};
    const uint64_t ra = 384u << 10, step = 128u << 10;
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    cr_assert_eq(prefetch_continuation_proof(&cfg), 2 * ra + 4096);
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    uint64_t before = mem_store_counts_now(m).get_bytes;
    uint64_t streak = 0;
    for (uint64_t off = 0; off < (1u << 20) + 2 * ra; off += step, streak += step)
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, off, (size_t)step));
    mem_store_drain(m);
    const uint64_t speculated = fetched_since(before) - (1u << 20);
    cr_assert_geq(fetched_since(before), 1u << 20, "chunk 0 whole");
    cr_assert_leq(speculated, speculation(&cfg, streak) + BS, "chunk 0, and of chunk 1 its speculated start only: %llu",
                  (unsigned long long)speculated);
    /* One read further: the reader reads chunk 1, the rest of which is fetched. */
    const uint64_t off = (1u << 20) + 2 * ra;
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, off, (size_t)step));
    mem_store_drain(m);
    streak += step;
    cr_assert_geq(fetched_since(before), (2u << 20) - 2 * ra + speculated);
    cr_assert_leq(fetched_since(before), (2u << 20) - 2 * ra + speculated + speculation(&cfg, streak) + BS,
                  "of chunk 2, its speculated start only");
    /* Without a configured window, the kernel's default (128 KiB) is assumed. */
    prefetch_config dflt = {0};
    cr_assert_eq(prefetch_continuation_proof(&dflt), 2 * (128u << 10) + 4096);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* A reader reading on through chunks smaller than the proof (DuckDB's
 * small columns, one chunk after the other): no chunk is ever proven by
 * reads past its own start, yet the reader is shown to read on once its
 * reads are the proof past a chunk it ran on into. From then on each read
 * has the proof's worth of bytes past it on the way, so the reader's next
 * read does not wait a round trip; and no more than that. */
Test(object_read, a_reader_running_through_small_chunks_has_its_next_reads_on_the_way)
{
    enum { CHUNKS = 16 };
    object_ref o = ref_of("obj", 113);
    const uint64_t q = 64u << 10, ra = 32u << 10;
    byte_span spans[CHUNKS];
    uint32_t cols[CHUNKS];
    for (size_t i = 0; i < CHUNKS; i++) {
        spans[i] = (byte_span){i * q, (i + 1) * q};
        cols[i] = (uint32_t)i;
    }
    parquet_layout l = {.chunks = spans, .n_chunks = CHUNKS, .column = cols, .n_columns = CHUNKS};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    const uint64_t proof = prefetch_continuation_proof(&cfg);
    cr_assert_gt(proof, q, "the chunks are smaller than the proof");
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    uint64_t before = mem_store_counts_now(m).get_bytes;
    for (uint64_t d = 0; d + ra <= (CHUNKS - 2) * q; d += ra) {
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
        mem_store_drain(m);
        if (d < 4 * q)
            continue;
        /* Everything fetched is one run from 0: its length is how far
         * ahead of the reader the bytes are. */
        cr_assert_geq(fetched_since(before), d + 2 * ra, "at %llu the next read is on its way: %llu",
                      (unsigned long long)d, (unsigned long long)fetched_since(before));
        cr_assert_leq(fetched_since(before), d + ra + proof + BS, "at %llu at most the proof ahead: %llu",
                      (unsigned long long)d, (unsigned long long)fetched_since(before));
    }
    cr_assert(rp.column_read[8], "a column read through counts as read");
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* A reader that has read three chunks in a row in one stream reads on:
 * once the third is proven, the fourth is fetched whole, unless it is
 * larger than what the stream has read. Before that, only the proof of the
 * next chunk comes with each. */
Test(object_read, a_long_run_fetches_its_next_chunk_whole)
{
    object_ref o = ref_of("obj", 114);
    const uint64_t q = 256u << 10, ra = 32u << 10;
    /* chunks 0-3 of q, chunk 4 of 5q (larger than the streak), chunk 5 */
    byte_span spans[] = {{0, q}, {q, 2 * q}, {2 * q, 3 * q}, {3 * q, 4 * q}, {4 * q, 9 * q}, {9 * q, 10 * q}};
    uint32_t cols[] = {0, 1, 2, 3, 4, 5};
    parquet_layout l = {.chunks = spans, .n_chunks = 6, .column = cols, .n_columns = 6};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    const uint64_t proof = prefetch_continuation_proof(&cfg);
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    uint64_t before = mem_store_counts_now(m).get_bytes;
    uint64_t d = 0;
    for (; d < q + proof; d += ra) /* chunk 0, and into 1 as far as the proof */
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
    mem_store_drain(m);
    cr_assert_geq(fetched_since(before), 2 * q + proof - BS, "chunks 0 and 1, and the proof of 2");
    cr_assert_leq(fetched_since(before), 2 * q + proof + BS, "chunk 2 not whole: %llu",
                  (unsigned long long)fetched_since(before));
    for (; d < 2 * q + proof; d += ra) /* on into chunk 2 as far as the proof */
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
    mem_store_drain(m);
    /* Chunk 2 is the third of the run: chunk 3 comes whole with it, and of
     * chunk 4 (five times larger than what the stream has read) the proof
     * only. */
    cr_assert_geq(fetched_since(before), 4 * q + proof - BS, "chunk 3 whole: %llu",
                  (unsigned long long)fetched_since(before));
    cr_assert_leq(fetched_since(before), 4 * q + proof + BS, "chunk 4: its proof only: %llu",
                  (unsigned long long)fetched_since(before));
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* A stream that reads two adjacent chunks, then hops over one to the
 * next: chunks read apart are no long run. The chunk after the hop gets
 * its share of speculation only, not fetched whole as the fourth of a run
 * (Spark's small second file, full scan: 82 KB of a 508 KB read). */
Test(object_read, a_hop_over_a_chunk_starts_a_new_run)
{
    object_ref o = ref_of("obj", 115);
    const uint64_t q = 256u << 10;
    byte_span spans[] = {{0, q}, {q, 2 * q}, {2 * q, 3 * q}, {3 * q, 4 * q}, {4 * q, 5 * q}, {5 * q, 6 * q}};
    uint32_t cols[] = {0, 1, 2, 3, 4, 5};
    parquet_layout l = {.chunks = spans, .n_chunks = 6, .column = cols, .n_columns = 6};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .exact_reads = true};
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    uint64_t before = mem_store_counts_now(m).get_bytes;
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, 0, (size_t)q));
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, q, (size_t)q));
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, 3 * q, (size_t)q)); /* over chunk 2 */
    mem_store_drain(m);
    cr_assert(rp.column_skipped[2], "the column hopped over is skipped");
    /* Chunks 0, 1 and 3, and the share past chunks 1 and 3 of what the
     * stream had read (2q, then 3q): not chunk 4 whole. */
    const uint64_t share = (2 * q) / 20 + (3 * q) / 20;
    cr_assert_geq(fetched_since(before), 3 * q, "%llu", (unsigned long long)fetched_since(before));
    cr_assert_leq(fetched_since(before), 3 * q + share + 2 * BS, "chunk 4 not whole: %llu",
                  (unsigned long long)fetched_since(before));
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* Two threads of a reader read chunks 0 and 2 at once, interleaved; each
 * one's readahead runs on into the chunk after it. Neither is mistaken for a
 * jump into a new chunk: chunks 1 and 3 are not fetched whole. */
Test(object_read, interleaved_readers_each_keep_their_stream)
{
    object_ref o = ref_of("obj", 110);
    const uint64_t q = 768u << 10;
    byte_span spans[] = {{0, q}, {q, 2 * q}, {2 * q, 3 * q}, {3 * q, data_len}};
    parquet_layout l = {.chunks = spans, .n_chunks = 4};
    const uint64_t ra = 128u << 10;
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    uint64_t before = mem_store_counts_now(m).get_bytes;
    for (uint64_t d = 0; d < q + 2 * ra; d += ra) {
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, 2 * q + d, (size_t)ra));
    }
    mem_store_drain(m);
    const uint64_t streak = q + 2 * ra;
    cr_assert_geq(fetched_since(before), 2 * q, "chunks 0 and 2 whole");
    cr_assert_leq(fetched_since(before) - 2 * q, 2 * (speculation(&cfg, streak) + BS), "of chunks 1 and 3 the starts only: %llu",
                  (unsigned long long)(fetched_since(before) - 2 * q));
    /* The first thread reads on past what readahead reaches: chunk 1 is read,
     * and the rest of it fetched. */
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, q + 2 * ra, (size_t)ra));
    mem_store_drain(m);
    cr_assert_geq(fetched_since(before), 2 * q + (q - 2 * ra));
    cr_assert_leq(fetched_since(before), 3 * q + speculation(&cfg, streak) + BS, "chunk 3: its start only");
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* Two row groups of three columns; the reader reads columns 0 and 1 of
 * each, one long read per row group (DuckDB). Once row group 0 has shown
 * the columns, entering row group 1 fetches both of its chunks at once, and
 * of column 2, which the reader jumped over, only what the kernel's
 * readahead asks for past column 1. */
Test(object_read, column_pattern_fetches_a_row_groups_read_columns_at_once)
{
    object_ref o = ref_of("obj", 111);
    const uint64_t q = 512u << 10;
    byte_span spans[] = {{0, q}, {q, 2 * q}, {2 * q, 3 * q}, {3 * q, 4 * q}, {4 * q, 5 * q}, {5 * q, 6 * q}};
    uint32_t cols[] = {0, 1, 2, 0, 1, 2};
    parquet_layout l = {.chunks = spans, .n_chunks = 6, .column = cols, .n_columns = 3};
    const uint64_t ra = 128u << 10;
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    uint64_t before = mem_store_counts_now(m).get_bytes;
    for (uint64_t d = 0; d < 2 * q; d += ra) /* row group 0, columns 0 and 1 */
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
    mem_store_drain(m);
    /* Column 1 is fetched from where the reads proved it (before that, the
     * reader's own reads fetch what they need). */
    cr_assert_geq(fetched_since(before), 2 * q - 2 * ra);
    cr_assert_leq(fetched_since(before), 2 * q + speculation(&cfg, 2 * q) + BS, "column 2: its start only");
    uint64_t mid = fetched_since(before);
    /* The reader jumps to row group 1 (over column 2 of row group 0): one
     * read, and both chunks it will read are on their way. */
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, 3 * q, (size_t)ra));
    mem_store_drain(m);
    /* Of column 2, skipped, only what readahead asks for past column 1. */
    cr_assert_eq(fetched_since(before) - mid, 2 * q + ra,
                 "row group 1, columns 0 and 1, and of column 2 one readahead window: %llu",
                 (unsigned long long)(fetched_since(before) - mid));
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* One read of a row group after another, each a long read through columns
 * 0 to 39 of 48 (one thread, no page index). While the columns are unknown,
 * a stream speculates 1/20 of its streak past the chunk it reads, over as
 * many chunks as that covers; once the reader has left row groups after
 * column 39, column 40 counts as skipped and later row groups fetch of it
 * only what the kernel's readahead asks for past column 39. */
Test(object_read, speculation_spreads_over_unread_columns_and_stops_at_a_skipped_one)
{
    enum { COLS = 48, READ = 40, GROUPS = 4 };
    const uint64_t q = 256u << 10, ra = 32u << 10;
    size_t len = (size_t)GROUPS * COLS * q;
    uint8_t *wide = calloc(len, 1);
    cr_assert(wide && mem_store_put(m, "wide", wide, len));
    free(wide);
    object_ref o = ref_of("wide", 112);
    byte_span spans[GROUPS * COLS];
    uint32_t cols[GROUPS * COLS];
    for (size_t i = 0; i < GROUPS * COLS; i++) {
        spans[i] = (byte_span){i * q, (i + 1) * q};
        cols[i] = (uint32_t)(i % COLS);
    }
    parquet_layout l = {.chunks = spans, .n_chunks = GROUPS * COLS, .column = cols, .n_columns = COLS};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    uint64_t fetched_before_group[GROUPS + 1];
    for (int g = 0; g < GROUPS; g++) {
        fetched_before_group[g] = mem_store_counts_now(m).get_bytes;
        const uint64_t start = (uint64_t)g * COLS * q;
        for (uint64_t d = 0; d < READ * q; d += ra)
            cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, start + d, (size_t)ra));
        mem_store_drain(m);
    }
    fetched_before_group[GROUPS] = mem_store_counts_now(m).get_bytes;
    /* Row group 0: its columns (less the starts of the first few, which
     * the reader's own reads fetch, not counted here) and, past column 39,
     * speculation over more than the next chunk, at most 1/20 of the streak
     * (512 KiB: columns 40 and 41). */
    const uint64_t g0 = fetched_before_group[1] - fetched_before_group[0];
    const uint64_t streak = READ * q;
    cr_assert_gt(g0, READ * q + q, "speculation spans more than the next chunk: %llu",
                 (unsigned long long)g0);
    cr_assert_leq(g0, READ * q + speculation(&cfg, streak) + BS, "at most 1/20 of the streak: %llu", (unsigned long long)g0);
    /* Row group 3: its 40 columns at once, and of column 40 only what
     * readahead asks for past column 39. */
    const uint64_t g3 = fetched_before_group[4] - fetched_before_group[3];
    cr_assert_geq(g3, READ * q);
    cr_assert_leq(g3, READ * q + ra, "row group 3: columns 0-39, one readahead window of 40: %llu",
                  (unsigned long long)g3);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* DuckDB reads the last page of a chunk before the chunk from its start.
 * That first read fetches the chunk from there on; the read of its start
 * then fetches the rest at once, not one read per round trip. */
Test(object_read, a_chunk_read_from_its_end_first_still_comes_whole)
{
    object_ref o = ref_of("obj", 116);
    const uint64_t q = 256u << 10, ra = 32u << 10, tail = 48u << 10;
    byte_span spans[] = {{0, q}, {q, 2 * q}, {2 * q, 3 * q}, {3 * q, 4 * q}};
    uint32_t cols[] = {0, 1, 2, 3};
    parquet_layout l = {.chunks = spans, .n_chunks = 4, .column = cols, .n_columns = 4};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    const uint64_t before = mem_store_counts_now(m).get_bytes;
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, 2 * q - tail, (size_t)tail));
    mem_store_drain(m);
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, q, (size_t)ra));
    mem_store_drain(m);
    cr_assert_geq(fetched_since(before), q, "chunk 1 whole after the read of its start: %llu",
                  (unsigned long long)fetched_since(before));
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* Speculation is a share of what the reader has read of the whole file, not
 * of one stream alone: one thread reads columns 0-39 (20 MiB, then stops),
 * another jumps to column 50 and reads on through column 83 (17 MiB). Once
 * the first has ended (the second has read 16 MiB since), the second keeps
 * 1/20 of all 37 MiB ahead of it, not 1/20 of its own 17 MiB: a reader that
 * stops there has still cost at most 5 % more than it read. */
Test(object_read, speculation_is_a_share_of_the_whole_files_reads)
{
    enum { CHUNKS = 96, FIRST = 40, JUMP = 50, LAST = 83 };
    const uint64_t q = 512u << 10, ra = 32u << 10;
    size_t len = (size_t)CHUNKS * q;
    uint8_t *wide = calloc(len, 1);
    cr_assert(wide && mem_store_put(m, "wide2", wide, len));
    free(wide);
    object_ref o = ref_of("wide2", 115);
    byte_span spans[CHUNKS];
    uint32_t cols[CHUNKS];
    for (size_t i = 0; i < CHUNKS; i++) {
        spans[i] = (byte_span){i * q, (i + 1) * q};
        cols[i] = (uint32_t)i; /* one row group: every column unknown until read */
    }
    parquet_layout l = {.chunks = spans, .n_chunks = CHUNKS, .column = cols, .n_columns = CHUNKS};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    for (uint64_t d = 0; d < FIRST * q; d += ra)
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
    mem_store_drain(m);
    const uint64_t before = mem_store_counts_now(m).get_bytes;
    const uint64_t second = (uint64_t)(LAST + 1 - JUMP) * q;
    for (uint64_t d = JUMP * q; d < (LAST + 1) * q; d += ra)
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
    mem_store_drain(m);
    /* What the second stream fetched past its own reads. */
    const uint64_t ahead = fetched_since(before) - second;
    const uint64_t all = (uint64_t)FIRST * q + second;
    cr_assert_gt(ahead, speculation(&cfg, second) + BS, "more than 1/20 of its own streak: %llu",
                 (unsigned long long)ahead);
    cr_assert_leq(ahead, all / 20 + BS, "at most 1/20 of all the reads: %llu", (unsigned long long)ahead);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* pyarrow reads a row group as a score of coalesced ranges at once; most end
 * at a skipped column, while one long range is still read chunk by chunk.
 * Here seven threads jump to a 4 MiB chunk each (A_i, the column after each
 * is skipped) and a last one to chunk L0; the seven read `others_read` of
 * theirs, then the last reads L0: it must then keep 1/20 of all the file's
 * reads ahead of it in L1. */
static void the_long_range_keeps_its_share(const char *key, uint64_t etag, uint64_t others_read)
{
    enum { OTHERS = 7, CHUNKS = 2 * OTHERS + 2 };
    const uint64_t a = 4u << 20, b = 1u << 20, ra = 32u << 10, step = 128u << 10;
    byte_span spans[CHUNKS]; /* A_0, B_0, ..., A_6, B_6, L0, L1 */
    uint32_t cols[CHUNKS];
    uint64_t at = 0;
    for (size_t i = 0; i < CHUNKS; i++) {
        const uint64_t len = (i % 2 == 0 && i < CHUNKS - 2) || i == CHUNKS - 1 ? a : b;
        spans[i] = (byte_span){at, at + len};
        cols[i] = (uint32_t)i;
        at += len;
    }
    uint8_t *wide = calloc(at, 1);
    cr_assert(wide && mem_store_put(m, key, wide, at));
    free(wide);
    object_ref o = ref_of(key, etag);
    parquet_layout l = {.chunks = spans, .n_chunks = CHUNKS, .column = cols, .n_columns = CHUNKS};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    const byte_span *l0 = &spans[CHUNKS - 2];
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    for (size_t t = 0; t < OTHERS; t++)
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, spans[2 * t].start, (size_t)step));
    cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, l0->start, (size_t)step));
    for (size_t t = 0; t < OTHERS; t++)
        cr_assert(rp.column_skipped[2 * t + 1], "B_%zu's column is skipped", t);
    mem_store_drain(m);
    const uint64_t before = mem_store_counts_now(m).get_bytes;
    for (uint64_t d = step; d < others_read; d += step)
        for (size_t t = 0; t < OTHERS; t++)
            cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, spans[2 * t].start + d, (size_t)step));
    mem_store_drain(m);
    cr_assert_eq(fetched_since(before), 0, "the seven hold their chunks and the proof past them");
    for (uint64_t d = l0->start + step; d < l0->end; d += step)
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)step));
    mem_store_drain(m);
    /* L1's proof came with the jump to L0; the rest of what is ahead now. */
    const uint64_t ahead = fetched_since(before) + prefetch_continuation_proof(&cfg);
    const uint64_t all = OTHERS * others_read + (l0->end - l0->start);
    cr_assert_geq(ahead, all / 20 - BS, "1/20 of all the reads ahead: %llu of %llu", (unsigned long long)ahead,
                  (unsigned long long)(all / 20));
    cr_assert_leq(ahead, all / 20 + BS, "and no more: %llu of %llu", (unsigned long long)ahead,
                  (unsigned long long)(all / 20));
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* What another stream keeps ahead of it no further than the proof is what
 * the kernel's readahead asks for past its reads anyway, not speculation:
 * it does not come out of a stream's share. The seven ranges read their
 * chunks to the end, each holding the proof of the skipped column after it;
 * the long range keeps 1/20 of all the file's reads ahead of it in L1, not
 * that less the seven proofs. */
Test(object_read, readahead_windows_of_other_streams_are_not_speculation)
{
    the_long_range_keeps_its_share("wide3", 116, 4u << 20);
}

/* The rest of the chunk another stream reads is the reader's, fetched
 * because it jumped there, not speculation: while the seven ranges are
 * halfway through their chunks, the long range still keeps 1/20 of all the
 * file's reads ahead of it. */
Test(object_read, the_rest_of_another_streams_chunk_is_not_speculation)
{
    the_long_range_keeps_its_share("wide4", 117, 2u << 20);
}

/* A reader reads a file's tail (its footer, with the end of the last chunk
 * before it) first. That reads nothing of the last chunk's column: when the
 * reader then reads the chunk before to its end and skips the last column,
 * the last chunk is not fetched whole (only what the kernel reads ahead). */
Test(object_read, a_footer_read_is_not_a_read_of_the_last_chunk)
{
    const uint64_t q = 1u << 20, ra = 128u << 10, tail = 64u << 10, footer = 16u << 10;
    byte_span spans[] = {{0, q}, {q, 2 * q}, {2 * q, 3 * q}};
    uint32_t cols[] = {0, 1, 2};
    const uint64_t size = 3 * q + footer;
    uint8_t *bytes = calloc(size, 1);
    cr_assert(bytes && mem_store_put(m, "tail", bytes, size));
    free(bytes);
    object_ref o = ref_of("tail", 121);
    parquet_layout l = {.chunks = spans, .n_chunks = 3, .column = cols, .n_columns = 3};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, &l, NULL));
    prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, size - tail, (size_t)tail);
    mem_store_drain(m);
    const uint64_t before = mem_store_counts_now(m).get_bytes;
    for (uint64_t d = q; d < 2 * q + ra; d += ra)
        cr_assert(prefetch_chunk_of_read(io, &cfg, &o, &l, &rp, d, (size_t)ra));
    mem_store_drain(m);
    const uint64_t fetched = fetched_since(before);
    cr_assert_leq(fetched, q + prefetch_continuation_proof(&cfg) + 2 * BS, "chunk 1 and the proof past it: %llu",
                  (unsigned long long)fetched);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* Two files of one table (one row group of four columns each); the reader
 * reads columns 0-2 of the first. In the second, once it has gone on from
 * column 0 into column 1 as far as the proof, column 2 is fetched whole at
 * once: the table's columns are shared. Without the shared set, only a
 * speculated start of it. */
Test(object_read, a_tables_columns_read_carry_over_to_its_next_file)
{
    const uint64_t q = 768u << 10, ra = 128u << 10;
    byte_span spans[] = {{0, q}, {q, 2 * q}, {2 * q, 3 * q}, {3 * q, 4 * q}};
    uint32_t cols[] = {0, 1, 2, 3};
    parquet_layout l = {.chunks = spans, .n_chunks = 4, .column = cols, .n_columns = 4};
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    column_memory *cm = column_memory_create();
    cr_assert(cm);
    uint64_t got[2];
    for (int shared = 0; shared < 2; shared++) {
        column_set *set = shared ? column_memory_get(cm, 42, 4) : NULL;
        cr_assert(!shared || set);
        object_ref a = ref_of("obj", 120 + 2 * (uint64_t)shared), b = ref_of("obj", 121 + 2 * (uint64_t)shared);
        read_pattern pa, pb;
        cr_assert(read_pattern_init(&pa, &l, set));
        for (uint64_t d = 0; d < 3 * q; d += ra)
            cr_assert(prefetch_chunk_of_read(io, &cfg, &a, &l, &pa, d, (size_t)ra));
        mem_store_drain(m);
        cr_assert(!shared || (column_set_has(set, 0) && column_set_has(set, 2) && !column_set_has(set, 3)));
        cr_assert(read_pattern_init(&pb, &l, set));
        uint64_t before = mem_store_counts_now(m).get_bytes;
        const uint64_t proof = prefetch_continuation_proof(&cfg);
        for (uint64_t d = 0; d < q + proof; d += ra)
            cr_assert(prefetch_chunk_of_read(io, &cfg, &b, &l, &pb, d, (size_t)ra));
        mem_store_drain(m);
        got[shared] = fetched_since(before);
        read_pattern_destroy(&pa);
        read_pattern_destroy(&pb);
        column_memory_put(cm, set);
        object_ref_free(&a);
        object_ref_free(&b);
    }
    const uint64_t streak = q + prefetch_continuation_proof(&cfg) + ra;
    cr_expect_leq(got[0], 2 * q + speculation(&cfg, streak) + BS, "alone: columns 0 and 1, of column 2 a start: %llu",
                  (unsigned long long)got[0]);
    cr_expect_geq(got[1], 3 * q - 2 * ra, "shared: column 2 whole as well: %llu", (unsigned long long)got[1]);
    cr_expect_leq(got[1], 3 * q + speculation(&cfg, streak) + BS, "and of column 3 a start only: %llu", (unsigned long long)got[1]);
    /* Another table (key) starts empty. */
    column_set *other = column_memory_get(cm, 43, 4);
    cr_assert(other && !column_set_has(other, 0));
    column_memory_put(cm, other);
    column_memory_destroy(cm);
}

Test(object_read, prefetch_runs_join_neighbours)
{
    object_ref o = ref_of("obj", 106);
    prefetch_run run = {0, 0, false};
    prefetch_run_add(io, &o, &run, 0, 100);
    prefetch_run_add(io, &o, &run, 100, 200000); /* touching: joined */
    prefetch_run_add(io, &o, &run, 300000, 300001); /* past a gap: the first run starts */
    mem_store_drain(m);
    cr_assert_eq(mem_store_counts_now(m).gets, 1);
    prefetch_run_flush(io, &o, &run);
    mem_store_drain(m);
    cr_assert_eq(mem_store_counts_now(m).gets, 2);
    cr_assert_eq(run.start, run.end, "flushed");
    object_ref_free(&o);
}

Test(object_read, one_footer_per_version)
{
    size_t len;
    uint8_t *pq = fixture_read(FIXTURE_DIR "/v1_plain_none_index.parquet", &len);
    cr_assert(mem_store_put(m, "t/a.parquet", pq, len));
    cr_assert(mem_store_put(m, "t/junk.parquet", "not parquet at all, just bytes", 30));
    footer_cache *fc = footer_cache_create(io, 1u << 20, 0);
    object_ref o = ref_of("t/a.parquet", 200);
    const parquet_footer *f1 = footer_cache_get(fc, &o, NULL);
    const parquet_footer *f2 = footer_cache_get(fc, &o, NULL);
    cr_assert_not_null(f1->meta, "%s", f1->err.msg);
    cr_assert_eq(f1, f2, "the same parse");
    cr_assert_eq(footer_cache_loads(fc), 1);
    cr_assert_eq(f1->meta->n_row_groups, 2);
    cr_assert_eq(f1->layout.n_chunks, 14);
    cr_assert_eq(f1->layout.n_columns, 7);
    unsigned per_column[7] = {0};
    for (size_t i = 0; i < f1->layout.n_chunks; i++) {
        cr_assert_lt(f1->layout.column[i], 7);
        per_column[f1->layout.column[i]]++;
    }
    for (int c = 0; c < 7; c++)
        cr_assert_eq(per_column[c], 2, "column %d: one chunk per row group", c);
    footer_cache_put(fc, f1);
    footer_cache_put(fc, f2);
    const parquet_footer *f3 = footer_cache_get(fc, &o, NULL);
    cr_assert_eq(footer_cache_loads(fc), 1, "kept while unreferenced, within the budget");
    footer_cache_put(fc, f3);
    object_ref bad = ref_of("t/junk.parquet", 201);
    const parquet_footer *j1 = footer_cache_get(fc, &bad, NULL);
    cr_assert_null(j1->meta);
    cr_assert_eq(j1->err.code, FOOTER_E_PARSE);
    cr_assert(strstr(j1->err.msg, "t/junk.parquet"), "the message names the object: %s", j1->err.msg);
    footer_cache_put(fc, j1);
    footer_cache_put(fc, footer_cache_get(fc, &bad, NULL));
    cr_assert_eq(footer_cache_loads(fc), 2, "a footer that does not parse is remembered");
    /* A read that fails is not remembered. */
    object_ref other = ref_of("t/a.parquet", 202);
    fault_plan plan = {.fail_gets = 1};
    fault_store_set(faults, &plan);
    const parquet_footer *e1 = footer_cache_get(fc, &other, NULL);
    cr_assert_null(e1->meta);
    cr_assert_eq(e1->err.code, FOOTER_E_READ);
    footer_cache_put(fc, e1);
    const parquet_footer *e2 = footer_cache_get(fc, &other, NULL);
    cr_assert_not_null(e2->meta, "read again after a failed read");
    footer_cache_put(fc, e2);
    cr_assert_eq(footer_cache_loads(fc), 4);
    mem_store_drain(m);
    footer_cache_destroy(fc);
    object_ref_free(&o);
    object_ref_free(&bad);
    object_ref_free(&other);
    free(pq);
}

Test(object_read, idle_footers_are_evicted_past_the_budget)
{
    size_t len;
    uint8_t *pq = fixture_read(FIXTURE_DIR "/v1_plain_none_index.parquet", &len);
    cr_assert(mem_store_put(m, "a.parquet", pq, len));
    footer_cache *fc = footer_cache_create(io, 1, 0); /* nothing idle is kept */
    object_ref o = ref_of("a.parquet", 300);
    const parquet_footer *f = footer_cache_get(fc, &o, NULL);
    const parquet_footer *g = footer_cache_get(fc, &o, NULL);
    cr_assert_eq(f, g, "shared while referenced");
    footer_cache_put(fc, f);
    footer_cache_put(fc, g);
    footer_cache_put(fc, footer_cache_get(fc, &o, NULL));
    cr_assert_eq(footer_cache_loads(fc), 2);
    mem_store_drain(m);
    footer_cache_destroy(fc);
    object_ref_free(&o);
    free(pq);
}

/* Chunks of 384 KiB: a 16 KiB dictionary page, then 16 KiB data pages, all
 * listed as page starts (from the OffsetIndex). */
enum { PAGED_CHUNKS = 8, PAGED_PAGES = 23 };
#define PAGED_Q (384u << 10)
#define PAGED_P (16u << 10)

typedef struct {
    byte_span spans[PAGED_CHUNKS];
    uint32_t cols[PAGED_CHUNKS];
    uint32_t groups[PAGED_CHUNKS];
    uint64_t starts[PAGED_CHUNKS * PAGED_PAGES];
    uint64_t rows[PAGED_CHUNKS * PAGED_PAGES];
    parquet_layout l;
} paged_file;

static void paged_layout(paged_file *f)
{
    size_t n = 0;
    for (size_t i = 0; i < PAGED_CHUNKS; i++) {
        f->spans[i] = (byte_span){i * PAGED_Q, (i + 1) * PAGED_Q};
        f->cols[i] = (uint32_t)i;
        for (uint64_t pg = PAGED_P; pg < PAGED_Q; pg += PAGED_P)
            f->starts[n++] = i * PAGED_Q + pg;
    }
    f->l = (parquet_layout){.chunks = f->spans, .n_chunks = PAGED_CHUNKS, .column = f->cols,
                            .n_columns = PAGED_CHUNKS, .page_starts = f->starts, .n_page_starts = n};
}

/* The paged file, the kernel's readahead window ra, and a fresh read pattern. */
static void paged_reads(paged_file *f, prefetch_config *cfg, read_pattern *rp, uint64_t ra)
{
    paged_layout(f);
    *cfg = (prefetch_config){.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    cr_assert(read_pattern_init(rp, &f->l, NULL));
}

/* Bytes fetched for one read and what it prefetches. */
static uint64_t fetched_for_read(const prefetch_config *cfg, const object_ref *o, const parquet_layout *l,
                                 read_pattern *rp, uint64_t off, uint64_t size)
{
    const uint64_t before = mem_store_counts_now(m).get_bytes;
    cr_assert(prefetch_chunk_of_read(io, cfg, o, l, rp, off, (size_t)size));
    mem_store_drain(m);
    return fetched_since(before);
}

/* The paged file's pages with their rows, one row group: the data pages of
 * each chunk hold 1,000 rows each, the same rows in every chunk. */
static void paged_rows(paged_file *f)
{
    for (size_t k = 0; k < f->l.n_page_starts; k++)
        f->rows[k] = (k % PAGED_PAGES) * 1000;
    for (size_t i = 0; i < PAGED_CHUNKS; i++)
        f->groups[i] = 0;
    f->l.page_rows = f->rows;
    f->l.row_group = f->groups;
}

/* A reader that selects rows by the page index and reads the columns it
 * projects one after the other, a pread at a time (arrow-rs: delta-rs and
 * DataFusion read local files so), waits a round trip per page. Once it
 * reads a page, the pages holding the same rows in the chunks after it,
 * and their dictionaries, come ahead of it, as far as the proof reaches
 * (here 68 KiB: two chunks' dictionary and page); a read of what came
 * ahead fetches nothing, and moves what is ahead on by one chunk. A
 * reader that reads pages out of chunk order more than twice (DuckDB's
 * threads read columns in parallel) gets its pages only. */
Test(object_read, the_same_rows_of_the_next_columns_come_ahead_of_a_reader_of_pages)
{
    const uint64_t q = PAGED_Q, pg = PAGED_P, ra = 32u << 10;
    paged_file f;
    prefetch_config cfg;
    read_pattern rp;
    paged_reads(&f, &cfg, &rp, ra);
    paged_rows(&f);
    object_ref o = ref_of("obj", 131);
    /* Page 3 of chunk 0 (rows 2,000 to 3,000): it, and page 3 with the
     * dictionary of chunks 1 and 2. */
    uint64_t got = fetched_for_read(&cfg, &o, &f.l, &rp, 3 * pg, pg);
    cr_assert_eq(got, pg + 4 * pg, "its page, and two chunks' rows ahead: %llu", (unsigned long long)got);
    /* Page 3 of chunk 1: it came ahead; chunk 3's rows go. */
    got = fetched_for_read(&cfg, &o, &f.l, &rp, q + 3 * pg, pg);
    cr_assert_eq(got, 2 * pg, "chunk 3's dictionary and page: %llu", (unsigned long long)got);
    /* Chunk 2's dictionary, then its page: chunk 4's rows go. */
    cr_assert_eq(fetched_for_read(&cfg, &o, &f.l, &rp, 2 * q, pg), 0, "chunk 2's dictionary came ahead");
    got = fetched_for_read(&cfg, &o, &f.l, &rp, 2 * q + 3 * pg, pg);
    cr_assert_eq(got, 2 * pg, "chunk 4's dictionary and page: %llu", (unsigned long long)got);
    read_pattern_destroy(&rp);

    /* Pages read out of chunk order: after three steps back, a page read
     * fetches its page only. */
    object_ref o2 = ref_of("obj", 132);
    cr_assert(read_pattern_init(&rp, &f.l, NULL));
    for (uint64_t k = 7; k >= 4; k--)
        (void)fetched_for_read(&cfg, &o2, &f.l, &rp, k * q + 9 * pg, pg);
    got = fetched_for_read(&cfg, &o2, &f.l, &rp, q + 9 * pg, pg);
    cr_assert_eq(got, pg, "its page only: %llu", (unsigned long long)got);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
    object_ref_free(&o2);
}

/* A reader that skips pages by the page index (DuckDB reads the pages that
 * hold selected rows, each with a pread of its own) gets those pages, not
 * the rest of their chunks: a pread of exactly a page inside a chunk
 * fetches that page. Once it has read two so, a read of the kernel's whole
 * window that holds a page fetches that read alone (the pread ended in it),
 * a read of a chunk's start its dictionary page alone, and a chunk it
 * reads on through comes whole once its reads have run on across three
 * page starts.
 * Without page starts, the first read fetches the rest of its chunk. */
Test(object_read, a_reader_skipping_pages_gets_its_pages_not_their_chunks)
{
    const uint64_t q = PAGED_Q, pg = PAGED_P, ra = 32u << 10;
    paged_file f;
    paged_layout(&f);
    parquet_layout *l = &f.l;
    prefetch_config cfg = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = ra};
    object_ref o = ref_of("obj", 117);
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, l, NULL));
    /* Page 3 of chunk 0, then page 2 of chunk 1, each by a pread of it. */
    uint64_t got = fetched_for_read(&cfg, &o, l, &rp, 3 * pg, pg);
    cr_assert_leq(got, pg + BS, "that page: %llu", (unsigned long long)got);
    got = fetched_for_read(&cfg, &o, l, &rp, q + 2 * pg, pg);
    cr_assert_leq(got, pg + BS, "that page: %llu", (unsigned long long)got);
    /* Page 5 of chunk 2, a read of the kernel's whole window that holds
     * the page: that read, nothing past it. */
    got = fetched_for_read(&cfg, &o, l, &rp, 2 * q + 5 * pg, ra);
    cr_assert_eq(got, ra, "the read only: %llu", (unsigned long long)got);
    /* The start of chunk 3: its dictionary page. */
    got = fetched_for_read(&cfg, &o, l, &rp, 3 * q, pg);
    cr_assert_leq(got, pg + BS, "the dictionary page: %llu", (unsigned long long)got);
    /* Chunk 5 read on through from its start: page by page, then whole. */
    got = 0;
    for (uint64_t d = 5 * q; d < 5 * q + 4 * ra; d += ra)
        got += fetched_for_read(&cfg, &o, l, &rp, d, ra);
    cr_assert_geq(got, q, "chunk 5 whole: %llu", (unsigned long long)got);
    cr_assert_leq(got, q + BS, "and nothing past it: %llu", (unsigned long long)got);
    read_pattern_destroy(&rp);
    /* Without page starts, the same first read fetches the rest of chunk 0. */
    l->page_starts = NULL;
    l->n_page_starts = 0;
    object_ref o2 = ref_of("obj", 118);
    cr_assert(read_pattern_init(&rp, l, NULL));
    got = fetched_for_read(&cfg, &o2, l, &rp, 3 * pg, pg);
    cr_assert_geq(got, q - 3 * pg, "without a page map, the rest of the chunk: %llu", (unsigned long long)got);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
    object_ref_free(&o2);
}

/* DuckDB's first reads of a file come in parallel, before two page preads
 * show that it skips pages: a window of a page larger than the kernel's
 * (chunk 2, whose column is then known read), then a pread of a page of
 * chunk 1, then that chunk's dictionary page, its first. That is the
 * dictionary the page needs, not a read of the chunk: it fetches its page
 * only, neither the rest of chunk 1 nor chunk 2 whole. */
Test(object_read, a_dictionary_read_after_a_page_pread_fetches_the_dictionary_only)
{
    const uint64_t q = PAGED_Q, pg = PAGED_P, ra = 8u << 10;
    paged_file f;
    prefetch_config cfg;
    read_pattern rp;
    paged_reads(&f, &cfg, &rp, ra);
    object_ref o = ref_of("obj", 121);
    uint64_t got = fetched_for_read(&cfg, &o, &f.l, &rp, 2 * q + 6 * pg, ra);
    cr_assert_leq(got, pg + ra + BS, "chunk 2: the page and the window past it: %llu", (unsigned long long)got);
    got = fetched_for_read(&cfg, &o, &f.l, &rp, q + 3 * pg, pg);
    cr_assert_leq(got, pg + BS, "chunk 1: the page: %llu", (unsigned long long)got);
    got = fetched_for_read(&cfg, &o, &f.l, &rp, q, ra);
    cr_assert_leq(got, pg + BS, "chunk 1's dictionary page only: %llu", (unsigned long long)got);
    /* A reader jumping to chunk 6's start still gets it whole. */
    got = fetched_for_read(&cfg, &o, &f.l, &rp, 6 * q, ra);
    cr_assert_geq(got, q - ra, "chunk 6 whole: %llu", (unsigned long long)got);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* A pread of a page larger than the kernel's window reaches the mount as
 * reads of whole windows from the pread's start, the last one running past
 * the page's end to its own: the first window fetches the page and the
 * rest of that last window, not a whole window more past the page's end
 * (Spark's table, DuckDB's preads of 160 KB pages: 30-45 KB a page the
 * kernel never asked for). Pages of two 8 KiB windows: the page alone,
 * where the page and a window past it would be two blocks. */
Test(object_read, a_window_of_a_larger_page_fetches_to_the_end_of_the_kernels_last_window)
{
    const uint64_t q = PAGED_Q, pg = PAGED_P, ra = 8u << 10;
    paged_file f;
    prefetch_config cfg;
    read_pattern rp;
    paged_reads(&f, &cfg, &rp, ra);
    object_ref o = ref_of("obj", 122);
    const uint64_t got = fetched_for_read(&cfg, &o, &f.l, &rp, 2 * q + 6 * pg, ra);
    cr_assert_eq(got, pg, "the page, which ends where the kernel's second window does: %llu",
                 (unsigned long long)got);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
}

/* Page starts change nothing for a reader that reads chunks from their
 * start (pyarrow), even when a kernel read of its long pread, arriving out
 * of order, starts at a page: its first read of a chunk fetches the chunk
 * whole. But DuckDB's first reads of a file come in parallel, before two
 * page preads show that it skips pages, and a pread of a page larger than
 * the kernel's window reaches the mount as reads of the whole window: the
 * first, at a data page inside a chunk whose page goes on past it, fetches
 * that page and the rest of the kernel's window it ends in, not the rest of
 * the chunk; a read of
 * the chunk's start then still fetches the chunk whole. */
Test(object_read, a_first_window_at_a_page_fetches_its_chunk_unless_the_page_is_larger)
{
    const uint64_t q = PAGED_Q, pg = PAGED_P;
    paged_file f;
    prefetch_config cfg;
    read_pattern rp;
    /* Pages smaller than the window: chunk reads. */
    paged_reads(&f, &cfg, &rp, 32u << 10);
    object_ref o = ref_of("obj", 119);
    const uint64_t at[] = {0, 4 * q + 4 * pg};
    for (size_t k = 0; k < 2; k++) {
        const uint64_t got = fetched_for_read(&cfg, &o, &f.l, &rp, at[k], 32u << 10);
        const uint64_t chunk_start = at[k] / q * q;
        cr_assert_geq(got, chunk_start + q - at[k], "read at %llu: the rest of its chunk: %llu",
                      (unsigned long long)at[k], (unsigned long long)got);
    }
    read_pattern_destroy(&rp);
    /* Pages larger than the window: the page first. */
    const uint64_t ra = 8u << 10;
    paged_reads(&f, &cfg, &rp, ra);
    object_ref o2 = ref_of("obj", 120);
    uint64_t got = fetched_for_read(&cfg, &o2, &f.l, &rp, 2 * q + 6 * pg, ra);
    cr_assert_geq(got, pg, "the page: %llu", (unsigned long long)got);
    cr_assert_leq(got, pg + ra + BS, "the page and the window past it: %llu", (unsigned long long)got);
    got += fetched_for_read(&cfg, &o2, &f.l, &rp, 2 * q, ra);
    cr_assert_geq(got, q, "from the chunk's start, the chunk whole: %llu", (unsigned long long)got);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
    object_ref_free(&o2);
}

/* Bytes fetched for a first read of "obj" (as object version id, so no
 * block is cached yet) on a fresh read pattern. */
static uint64_t fetched_for_first_read(const prefetch_config *cfg, const parquet_layout *l, uint64_t id,
                                       uint64_t off, uint64_t size)
{
    object_ref o = ref_of("obj", id);
    read_pattern rp;
    cr_assert(read_pattern_init(&rp, l, NULL));
    const uint64_t got = fetched_for_read(cfg, &o, l, &rp, off, size);
    read_pattern_destroy(&rp);
    object_ref_free(&o);
    return got;
}

/* --direct-io: the kernel passes a reader's reads as they are and reads
 * nothing ahead, so nothing is fetched past a chunk for readahead's sake:
 * a reader that reads chunk 0 whole and stops has caused the chunk and
 * 1/20 of it, where with the kernel's readahead the proof (two windows and
 * a page) comes with it. */
Test(object_read, exact_reads_fetch_nothing_for_readahead_past_a_chunk)
{
    byte_span spans[] = {{0, 1u << 20}, {1u << 20, 2u << 20}, {2u << 20, data_len}};
    uint32_t cols[] = {0, 1, 2};
    parquet_layout l = {.chunks = spans, .n_chunks = 3, .column = cols, .n_columns = 3};
    prefetch_config exact = {.min_streak = 4u << 20, .max_window = 64u << 20, .exact_reads = true};
    prefetch_config paged = {.min_streak = 4u << 20, .max_window = 64u << 20};
    cr_assert_eq(prefetch_kernel_runs_on(&exact), 0);
    cr_assert_eq(prefetch_kernel_runs_on(&paged), 128u << 10);
    cr_assert_lt(prefetch_continuation_proof(&exact), BS);
    const uint64_t got[2] = {fetched_for_first_read(&exact, &l, 130, 0, 1u << 20),
                             fetched_for_first_read(&paged, &l, 131, 0, 1u << 20)};
    cr_assert_geq(got[0], 1u << 20, "chunk 0: %llu", (unsigned long long)got[0]);
    cr_assert_leq(got[0], (1u << 20) + (1u << 20) / 20 + BS, "chunk 0 and 1/20 of it: %llu",
                  (unsigned long long)got[0]);
    cr_assert_geq(got[1], (1u << 20) + 2 * (128u << 10), "with readahead, the proof past it: %llu",
                  (unsigned long long)got[1]);
}

/* With exact reads, a pread of a page larger than the piece a read()
 * arrives in (PREFETCH_DIRECT_IO_PIECE) fetches the page, not on to the end
 * of a window past it: its last piece ends where the pread does. */
Test(object_read, exact_reads_fetch_a_large_page_to_its_end)
{
    const uint64_t M = 1u << 20, K64 = 64u << 10;
    byte_span spans[] = {{0, M}, {M, 3 * M}, {3 * M, data_len}};
    uint32_t cols[] = {0, 1, 2};
    uint64_t starts[] = {M + K64, M + M / 2 * 3 + K64};
    parquet_layout l = {.chunks = spans, .n_chunks = 3, .column = cols, .n_columns = 3,
                        .page_starts = starts, .n_page_starts = 2};
    prefetch_config exact = {.min_streak = 4u << 20, .max_window = 64u << 20, .exact_reads = true};
    prefetch_config windows = {.min_streak = 4u << 20, .max_window = 64u << 20, .kernel_readahead = M};
    cr_assert_eq(prefetch_kernel_readahead(&exact), PREFETCH_DIRECT_IO_PIECE);
    const uint64_t got[2] = {fetched_for_first_read(&exact, &l, 132, starts[0], M),
                             fetched_for_first_read(&windows, &l, 133, starts[0], M)};
    const uint64_t page = starts[1] - starts[0];
    cr_assert_geq(got[0], page, "the page: %llu", (unsigned long long)got[0]);
    cr_assert_leq(got[0], page + BS, "the page and nothing past it: %llu", (unsigned long long)got[0]);
    cr_assert_geq(got[1], 3 * M - starts[0], "windows: on to the chunk's end: %llu", (unsigned long long)got[1]);
}
