/* Footers ahead across a table's files (table_ahead.h), through the plain
 * tree over the in-memory store: a partitioned table of small Parquet files
 * opened one after another, as a reader of a table's file list opens them. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture_files.h"
#include "log.h"
#include "mem_store.h"
#include "plain.h"

#define DAYS 4
#define FILES_PER_DAY 10
#define N_FILES (DAYS * FILES_PER_DAY)

static mem_store *m;
static plain_fs *p;
static sv_stats stats;
static uint8_t *pq;
static size_t pq_len;

static void file_path(char *buf, size_t size, int i)
{
    snprintf(buf, size, "tbl/day=2024-01-0%d/part-%02d.parquet", 1 + i / FILES_PER_DAY, i % FILES_PER_DAY);
}

static void setup(void)
{
    sv_log_init(SV_LOG_ERROR, false);
    m = mem_store_create();
    pq = fixture_read(FIXTURE_DIR "/v1_plain_none_index.parquet", &pq_len);
    for (int i = 0; i < N_FILES; i++) {
        char path[128], key[160];
        file_path(path, sizeof path, i);
        snprintf(key, sizeof key, "w/%s", path);
        cr_assert(mem_store_put(m, key, pq, pq_len));
    }
    cr_assert(mem_store_put(m, "w/tbl/_delta_log/00000000000000000000.json", "{}", 2));
    cr_assert(mem_store_put(m, "w/other/x.parquet", pq, pq_len));
    memset(&stats, 0, sizeof stats);
    plain_config cfg = {
        .prefix = "w/",
        .cache_bytes = 16u << 20,
        .block_size = 256,
        .max_request = 64u << 10,
        .read_timeout_ms = 2000, /* an open whose footer is not cached fails while the store holds GETs */
        .tail_bytes = 0, /* 64 KiB: the fixture's whole file, page index and all */
        .dir_ttl_ms = 60000,
        .delta_log_ttl_ms = 1000,
        .file_attr_timeout_s = 3600,
        .delta_log_attr_timeout_s = 1,
        .dir_attr_timeout_s = 10,
        .prefetch = {.min_streak = 8u << 10, .max_window = 16u << 10, .kernel_readahead = 4096},
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
}

TestSuite(table_ahead, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t ino_of(const char *path)
{
    sv_attr a = {.ino = TREE_ROOT_INO};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
        cr_assert_eq(plain_lookup(p, a.ino, c, &a, NULL), 0, "lookup of %s", c);
    return a.ino;
}

/* Wait (up to 10 s) until the workers have listed `listings` directories,
 * then until the fetches they started are done. */
static void settle(uint64_t listings)
{
    for (int i = 0; i < 1000 && table_ahead_counts_get(p->ahead).listings < listings; i++)
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    cr_assert_geq(table_ahead_counts_get(p->ahead).listings, listings);
    mem_store_drain(m);
}

/* Open file i and close it; the bytes the open fetched from the store. */
static uint64_t open_file(int i)
{
    char path[128];
    file_path(path, sizeof path, i);
    const uint64_t ino = ino_of(path);
    mem_store_drain(m);
    const uint64_t before = mem_store_counts_now(m).get_bytes;
    plain_file f;
    cr_assert_eq(plain_file_open(p, ino, false, &f, NULL), 0, "open %s", path);
    cr_assert_not_null(plain_file_layout(&f), "%s: footer", path);
    const uint64_t fetched = mem_store_counts_now(m).get_bytes - before;
    plain_file_close(p, &f);
    return fetched;
}

/* Open file i while the store serves no GET: true when its footer was
 * already in the cache (else the open's read times out: no layout). The
 * fetches the open starts ahead are served afterwards. */
static bool opens_from_cache(int i)
{
    char path[128];
    file_path(path, sizeof path, i);
    const uint64_t ino = ino_of(path);
    mem_store_drain(m);
    mem_store_hold(m, true);
    plain_file f;
    const int r = plain_file_open(p, ino, false, &f, NULL);
    const bool cached = r == 0 && plain_file_layout(&f) != NULL;
    if (r == 0)
        plain_file_close(p, &f);
    mem_store_hold(m, false);
    mem_store_drain(m);
    return cached;
}

Test(table_ahead, one_file_opened_fetches_nothing_ahead)
{
    cr_assert_gt(open_file(0), 0);
    nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
    mem_store_drain(m);
    table_ahead_counts c = table_ahead_counts_get(p->ahead);
    cr_assert_eq(c.tails, 0);
    cr_assert_eq(c.listings, 0);
}

/* Opened in key order across the partitions: after the second open, every
 * open finds its footer fetched ahead (it opens while the store serves
 * nothing), and
 * never more than the window is fetched past the reader. */
Test(table_ahead, opens_in_key_order_find_their_footers_fetched)
{
    cr_assert_gt(open_file(0), 0);
    cr_assert_gt(open_file(1), 0);
    settle(1 + DAYS); /* the table and its partition directories */
    for (int i = 2; i < N_FILES; i++) {
        cr_assert(opens_from_cache(i), "file %d: footer fetched ahead", i);
        const table_ahead_counts c = table_ahead_counts_get(p->ahead);
        uint64_t window = TABLE_AHEAD_GROWTH * (uint64_t)(i + 1);
        window = window < TABLE_AHEAD_MIN_FILES ? TABLE_AHEAD_MIN_FILES : window;
        window = window > TABLE_AHEAD_MAX_FILES ? TABLE_AHEAD_MAX_FILES : window;
        cr_assert_leq(c.tails, (uint64_t)(i - 1) + window, "after %d opens: %llu tails", i + 1,
                      (unsigned long long)c.tails);
        mem_store_drain(m);
    }
    const table_ahead_counts c = table_ahead_counts_get(p->ahead);
    cr_assert_eq(c.hits, N_FILES - 2);
    cr_assert_eq(c.tails, N_FILES - 2, "no file outside the table, nor twice");
    cr_assert_eq(footer_cache_loads(p->footers), N_FILES);
}

/* A reader that stops after two files has cost the window's tails and the
 * listings: no more. */
Test(table_ahead, a_reader_that_stops_costs_the_window)
{
    open_file(0);
    open_file(1);
    settle(1 + DAYS);
    const mem_store_counts before = mem_store_counts_now(m);
    nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
    mem_store_drain(m);
    const table_ahead_counts c = table_ahead_counts_get(p->ahead);
    cr_assert_eq(c.tails, TABLE_AHEAD_MIN_FILES);
    cr_assert_eq(mem_store_counts_now(m).get_bytes, before.get_bytes, "nothing more once settled");
    cr_assert_leq(before.get_bytes, (2 + TABLE_AHEAD_MIN_FILES) * (uint64_t)pq_len);
}

/* A reader opening files out of key order (every third file, backwards)
 * leaves at most twice the growth times the files it opened, plus the
 * minimum, fetched and unread. */
Test(table_ahead, out_of_order_opens_are_bounded)
{
    int opened = 0;
    for (int i = N_FILES - 1; i >= 0; i -= 3) {
        open_file(i);
        opened++;
        settle(opened >= 2 ? 1 + DAYS : 0);
        const table_ahead_counts c = table_ahead_counts_get(p->ahead);
        cr_assert_leq(c.tails - c.hits, 2 * TABLE_AHEAD_GROWTH * (uint64_t)opened + TABLE_AHEAD_MIN_FILES);
    }
}

/* Files of another table, and Delta log files, are never fetched ahead. */
Test(table_ahead, other_tables_are_their_own)
{
    open_file(0);
    char path[] = "other/x.parquet";
    plain_file f;
    cr_assert_eq(plain_file_open(p, ino_of(path), false, &f, NULL), 0);
    plain_file_close(p, &f);
    nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
    mem_store_drain(m);
    cr_assert_eq(table_ahead_counts_get(p->ahead).tails, 0, "one file of each table: nothing ahead");
}

/* Open file i, read its first column chunk whole if read_chunk, close it. With hold, the store serves no GET meanwhile: true
 * when everything the reader asked for was in the cache. */
static bool read_file(int i, bool read_chunk, bool hold)
{
    char path[128];
    file_path(path, sizeof path, i);
    const uint64_t ino = ino_of(path);
    mem_store_drain(m);
    if (hold)
        mem_store_hold(m, true);
    plain_file f;
    bool ok = plain_file_open(p, ino, false, &f, NULL) == 0;
    if (ok) {
        const parquet_layout *l = plain_file_layout(&f);
        ok = l && l->n_chunks > 1;
        if (ok && read_chunk) {
            struct iovec iov[256];
            size_t niov;
            object_pins pins;
            const size_t len = (size_t)(l->chunks[0].end - l->chunks[0].start);
            sv_cancel tok; /* the read timeout: a block the store holds is a miss, not a hang */
            object_io_cancel_init(p->io, &tok);
            ok = plain_file_read(p, &f, l->chunks[0].start, len, iov, 256, &niov, &pins, NULL, &tok) == (ssize_t)len;
            if (ok)
                object_pins_release(p->io, &pins);
        }
        plain_file_close(p, &f);
    }
    if (hold)
        mem_store_hold(m, false);
    mem_store_drain(m);
    return ok;
}

/* Wait (up to 10 s) for the workers to fetch the data of `files` files,
 * then until they start no more (each file's data is claimed once its
 * footer is in, so the window's files come one after another). */
static void settle_data(uint64_t files)
{
    for (int i = 0; i < 1000 && table_ahead_counts_get(p->ahead).data_files < files; i++)
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    uint64_t seen = UINT64_MAX;
    for (int i = 0; i < 100 && table_ahead_counts_get(p->ahead).data_files != seen; i++) {
        seen = table_ahead_counts_get(p->ahead).data_files;
        mem_store_drain(m);
        nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
    }
    mem_store_drain(m);
}

/* A reader that reads the files' data gets the chunks of the columns it
 * read (its reads covered them) fetched ahead with the footers: its next
 * files are read from the cache. */
Test(table_ahead, a_reader_of_the_data_gets_the_data_ahead)
{
    for (int i = 0; i < 3; i++)
        cr_assert(read_file(i, true, false));
    settle(1 + DAYS);
    settle_data(1);
    const table_ahead_counts c = table_ahead_counts_get(p->ahead);
    cr_assert_geq(c.data_files, 1, "data fetched ahead");
    cr_assert(read_file(3, true, true), "file 3: footer and chunk from the cache");
    cr_assert_geq(table_ahead_counts_get(p->ahead).data_hits, 1);
    /* never past the window of files ahead */
    cr_assert_leq(table_ahead_counts_get(p->ahead).data_files, table_ahead_counts_get(p->ahead).tails);
}

/* A reader that only reads footers (skipping every file by its
 * statistics) never gets data fetched ahead. */
Test(table_ahead, a_reader_of_footers_gets_no_data_ahead)
{
    for (int i = 0; i < 10; i++)
        cr_assert(read_file(i, false, false));
    settle(1 + DAYS);
    nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
    const table_ahead_counts c = table_ahead_counts_get(p->ahead);
    cr_assert_eq(c.data_files, 0);
    cr_assert_eq(c.data_bytes, 0);
}

/* Two threads opening the table's files at once, each every other file (as
 * DuckDB's threads do): the footers still come ahead of nearly every open,
 * and the reads stay correct. */
static void *read_every_other(void *arg)
{
    const int first = *(const int *)arg;
    for (int i = first; i < N_FILES; i += 2) {
        char path[128];
        file_path(path, sizeof path, i);
        sv_attr a = {.ino = TREE_ROOT_INO};
        char buf[256];
        snprintf(buf, sizeof buf, "%s", path);
        for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
            if (plain_lookup(p, a.ino, c, &a, NULL) != 0)
                return (void *)1;
        plain_file f;
        if (plain_file_open(p, a.ino, false, &f, NULL) != 0)
            return (void *)1;
        const bool ok = plain_file_layout(&f) != NULL;
        plain_file_close(p, &f);
        if (!ok)
            return (void *)1;
        nanosleep(&(struct timespec){.tv_nsec = 2 * 1000 * 1000}, NULL); /* the reader's own work */
    }
    return NULL;
}

Test(table_ahead, parallel_openers_find_their_footers_fetched)
{
    pthread_t t[2];
    int first[2] = {0, 1};
    for (int k = 0; k < 2; k++)
        cr_assert_eq(pthread_create(&t[k], NULL, read_every_other, &first[k]), 0);
    for (int k = 0; k < 2; k++) {
        void *rc;
        pthread_join(t[k], &rc);
        cr_assert_null(rc, "thread %d failed", k);
    }
    mem_store_drain(m);
    const table_ahead_counts c = table_ahead_counts_get(p->ahead);
    cr_assert_eq(footer_cache_loads(p->footers), N_FILES);
    cr_assert_leq(c.tails, N_FILES, "no file fetched ahead twice");
    cr_assert_geq(c.hits, N_FILES / 4, "many opens found their footer fetched: %llu", (unsigned long long)c.hits);
}

/* A table a view's hint names: its files' tails are fetched before any
 * open, and every open, the first one too, finds its footer fetched. */
Test(table_ahead, a_table_a_view_names_has_every_footer_ahead)
{
    table_ahead_expect(p->ahead, ino_of("tbl"), 16 << 10);
    settle(1 + DAYS);
    for (int i = 0; i < N_FILES; i++)
        cr_assert(opens_from_cache(i), "file %d: footer fetched ahead", i);
    const table_ahead_counts c = table_ahead_counts_get(p->ahead);
    cr_assert_eq(c.hits, N_FILES);
    cr_assert_eq(c.tails, N_FILES, "no file outside the table, nor twice");
    cr_assert_eq(footer_cache_loads(p->footers), N_FILES);
}

/* Without a footer's length to go by, one file's footer is read first
 * (the hint named no column to check against one): then every tail. */
Test(table_ahead, a_named_table_of_unknown_footers_learns_their_length)
{
    table_ahead_expect(p->ahead, ino_of("tbl"), 0);
    settle(1 + DAYS);
    for (int i = 0; i < 200 && table_ahead_counts_get(p->ahead).tails < N_FILES; i++)
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    mem_store_drain(m);
    cr_assert_eq(table_ahead_counts_get(p->ahead).tails, N_FILES);
    for (int i = 0; i < N_FILES; i++)
        cr_assert(opens_from_cache(i), "file %d: footer fetched ahead", i);
    cr_assert_eq(footer_cache_loads(p->footers), N_FILES, "the first file's footer read once");
}

/* A table of files that are not Parquet: the probe's footer does not
 * parse, and nothing more is fetched. */
Test(table_ahead, a_named_table_of_other_files_fetches_no_tails)
{
    cr_assert(mem_store_put(m, "w/junk/a=1/x.parquet", "not parquet at all", 18));
    cr_assert(mem_store_put(m, "w/junk/a=2/y.parquet", "not parquet either", 18));
    table_ahead_expect(p->ahead, ino_of("junk"), 0);
    settle(3);
    nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
    mem_store_drain(m);
    cr_assert_eq(table_ahead_counts_get(p->ahead).tails, 0);
}
