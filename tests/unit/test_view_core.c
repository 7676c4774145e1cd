/* Hints and views through the whole core (router, views, plain path) over
 * the in-memory store, without FUSE: writing and judging hints, what a view
 * serves and fetches, and what it does when the store fails or the object
 * changes under it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault_store.h"
#include "fixture_files.h"
#include "footer_cache.h"
#include "fs.h"
#include "log.h"
#include "mem_store.h"
#include "view.h"

#define KEY "w/t/a.parquet"
#define REL "t/a.parquet"

static mem_store *m;
static fault_store *faults;
static sv_fs *fs;
static sv_stats stats;
static uint8_t *pq;
static size_t pq_len;

/* The view's prices for the next mount: the override (>= 0), else the profile. */
static int64_t next_override = 0;
static link_profile *next_profile;
static uint64_t next_partial_memory = PARTIAL_MEMORY_DEFAULT;
static uint32_t next_block_size; /* 0: the default; with next_tail_bytes, small enough to see single fetches */
static uint64_t next_tail_bytes;
static const char *next_fixture = "v1_plain_none_index.parquet";

static void setup(void)
{
    sv_log_init(SV_LOG_ERROR, false);
    m = mem_store_create();
    faults = fault_store_create(mem_store_base(m));
    char fixture[512];
    snprintf(fixture, sizeof fixture, "%s/%s", FIXTURE_DIR, next_fixture);
    pq = fixture_read(fixture, &pq_len);
    cr_assert(mem_store_put(m, KEY, pq, pq_len));
    cr_assert(mem_store_put(m, "w/t/notes.txt", "not parquet", 11));
    memset(&stats, 0, sizeof stats);
    sv_fs_config cfg;
    sv_fs_config_defaults(&cfg);
    cfg.plain.prefix = "w/";
    cfg.request_cost_override = next_override; /* 0: requests are free, partial reads always pay */
    cfg.profile = next_profile;
    cfg.partial_memory = next_partial_memory;
    if (next_block_size) {
        cfg.plain.block_size = next_block_size;
        cfg.plain.tail_bytes = next_tail_bytes;
    }
    fs = sv_fs_create(fault_store_base(faults), &stats, &cfg);
    cr_assert_not_null(fs);
    sv_error err;
    cr_assert_eq(sv_fs_check(fs, &err), STORE_OK, "%s", err.msg);
}

static void teardown(void)
{
    mem_store_drain(m);
    sv_fs_destroy(fs);
    store_destroy(fault_store_base(faults));
    store_destroy(mem_store_base(m));
    free(pq);
}

TestSuite(view_core, .init = setup, .fini = teardown);

/* Mount again with other prices. */
static void remount(int64_t override, link_profile *lp)
{
    teardown();
    next_override = override;
    next_profile = lp;
    setup();
    next_override = 0;
    next_profile = NULL;
}

/* The inode of a path from the mount's root, or -errno. */
static int64_t lookup(const char *path)
{
    sv_attr a = {.ino = 1};
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        int r = sv_fs_lookup(fs, a.ino, c, &a, NULL);
        if (r < 0)
            return r;
    }
    return (int64_t)a.ino;
}

/* Write NAME.json and close it: the verdict of the close. */
static int write_hint(const char *name, const char *json)
{
    char fname[160];
    snprintf(fname, sizeof fname, "%s.json", name);
    sv_file *f;
    sv_attr a;
    int r = sv_fs_create_file(fs, (uint64_t)lookup(".sieve/hints"), fname, O_WRONLY | O_CREAT, &f, &a);
    if (r < 0)
        return r;
    cr_assert_eq(sv_fs_write(fs, f, 0, json, strlen(json)), (ssize_t)strlen(json));
    r = sv_fs_flush(fs, f);
    sv_fs_release(fs, f);
    return r;
}

/* The whole content of a file (malloc'd), or NULL with *err set. */
static uint8_t *read_all(const char *path, size_t *len, int *err)
{
    *err = 0;
    int64_t ino = lookup(path);
    cr_assert_gt(ino, 0, "lookup of %s: %lld", path, (long long)ino);
    sv_file *f;
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)ino, O_RDONLY, &f, &of, NULL), 0, "open %s", path);
    size_t cap = 1u << 20, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        struct iovec iov[SV_READ_MAX_IOV];
        size_t niov;
        sv_read_pins pins;
        ssize_t r = sv_fs_read_pinned(fs, f, n, 128u << 10, iov, SV_READ_MAX_IOV, &niov, &pins, NULL);
        if (r < 0) {
            *err = (int)r;
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0)
            break;
        for (size_t i = 0; i < niov; i++) {
            cr_assert_leq(n + iov[i].iov_len, cap);
            memcpy(buf + n, iov[i].iov_base, iov[i].iov_len);
            n += iov[i].iov_len;
        }
        sv_fs_read_release(fs, &pins);
    }
    sv_fs_release(fs, f);
    *len = n;
    return buf;
}

static json_t *stats_of(const char *name)
{
    char path[200];
    snprintf(path, sizeof path, ".sieve/hints/%s.stats", name);
    size_t len;
    int err;
    uint8_t *text = read_all(path, &len, &err);
    cr_assert_not_null(text);
    json_error_t je;
    json_t *doc = json_loadb((const char *)text, len, 0, &je);
    cr_assert_not_null(doc, "stats parse: %s", je.text);
    free(text);
    return doc;
}

static uint64_t counter(json_t *doc, const char *name)
{
    json_t *v = json_object_get(doc, name);
    cr_assert(json_is_integer(v), "%s in the stats", name);
    return (uint64_t)json_integer_value(v);
}

/* The file's parsed footer, from the fixture's bytes. */
static parquet_footer footer_of(const uint8_t *file, size_t len)
{
    parquet_footer ft;
    uint64_t need;
    cr_assert_eq(parquet_footer_from_tail(file, len, len, &ft, &need), FOOTER_OK);
    return ft;
}

/* Bytes of the view that differ from the real file lie only inside column
 * chunks of the columns in allowed (a bitmask of leaves); returns how many differ. */
static size_t check_differences(const uint8_t *view, uint32_t allowed)
{
    parquet_footer ft = footer_of(pq, pq_len);
    size_t diff = 0;
    for (size_t i = 0; i < pq_len; i++) {
        if (view[i] == pq[i])
            continue;
        diff++;
        bool inside = false;
        for (uint32_t g = 0; g < ft.meta->n_row_groups && !inside; g++)
            for (uint32_t c = 0; c < ft.meta->n_leaves && !inside; c++) {
                uint64_t off, len;
                cr_assert(pq_column_chunk_range(&ft.meta->row_groups[g].columns[c], &off, &len));
                inside = (allowed >> c & 1) && i >= off && i < off + len;
            }
        cr_assert(inside, "byte %zu differs outside the chunks that may", i);
    }
    parquet_footer_clear(&ft);
    return diff;
}

Test(view_core, a_rows_hint_synthesizes_pages_without_selected_rows)
{
    cr_assert_eq(write_hint("q", "{\"rows\": {\"" REL "\": [[10, 12]]}}"), 0);
    size_t len;
    int err;
    uint8_t *json = read_all(".sieve/hints/q.json", &len, &err);
    cr_assert_eq(len, strlen("{\"rows\": {\"" REL "\": [[10, 12]]}}"), "the document reads back as written");
    free(json);
    uint8_t *view = read_all(".sieve/views/q/" REL, &len, &err);
    cr_assert_not_null(view, "read: %d", err);
    cr_assert_eq(len, pq_len, "same size as the object");
    size_t diff = check_differences(view, 0x7f); /* no filter column: every chunk may be sieved */
    cr_assert_gt(diff, 0, "some values were not the real ones");
    json_t *st = stats_of("q");
    cr_assert_gt(counter(st, "pages_synthesized"), 0);
    /* The fixture's pages are smaller than the planner's first probe, so
     * the one page per column that holds rows 10 and 11 is read whole. */
    cr_assert_eq(counter(st, "pages_real"), 7, "one page per column holds the selected rows");
    cr_assert_eq(counter(st, "pages_partial"), 0);
    cr_assert_gt(counter(st, "requests"), 0, "the planning rounds");
    json_t *file = json_array_get(json_object_get(st, "files"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(file, "state")), "view");
    cr_assert_eq(json_integer_value(json_object_get(file, "selected_rows")), 2);
    json_decref(st);
    free(view);
    /* The plain path still serves the real bytes. */
    uint8_t *plain = read_all(REL, &len, &err);
    cr_assert_eq(memcmp(plain, pq, pq_len), 0);
    free(plain);
}

/* Real bytes of a view go out from the block cache without a copy, as on
 * the plain path; a read holding a synthesized page from a buffer of its
 * own. Both give the bytes the whole-file read gives. */
Test(view_core, real_bytes_are_replied_from_the_cache)
{
    cr_assert_eq(write_hint("z", "{\"rows\": {\"" REL "\": [[10, 12]]}}"), 0);
    size_t len;
    int err;
    uint8_t *whole = read_all(".sieve/views/z/" REL, &len, &err);
    cr_assert_not_null(whole, "read: %d", err);
    sv_file *f;
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(".sieve/views/z/" REL), O_RDONLY, &f, &of, NULL), 0);
    size_t from_cache = 0, from_buffer = 0;
    for (size_t off = 0; off < len; off += 4096) {
        struct iovec iov[SV_READ_MAX_IOV];
        size_t niov;
        sv_read_pins pins;
        ssize_t r = sv_fs_read_pinned(fs, f, off, 4096, iov, SV_READ_MAX_IOV, &niov, &pins, NULL);
        cr_assert_gt(r, 0, "read at %zu: %zd", off, r);
        size_t n = 0;
        for (size_t i = 0; i < niov; i++) {
            cr_assert_eq(memcmp(iov[i].iov_base, whole + off + n, iov[i].iov_len), 0, "bytes at %zu", off + n);
            n += iov[i].iov_len;
        }
        cr_assert_eq(n, (size_t)r);
        bool synthesized = memcmp(whole + off, pq + off, n) != 0;
        if (pins.owned) {
            cr_assert_eq(pins.obj.n, 0, "a buffer or pinned blocks, not both");
            from_buffer++;
        } else {
            cr_assert_gt(pins.obj.n, 0);
            cr_assert_not(synthesized, "a read from the cache at %zu holds synthesized bytes", off);
            from_cache++;
        }
        sv_fs_read_release(fs, &pins);
    }
    sv_fs_release(fs, f);
    cr_assert_gt(from_cache, 0, "the footer and the real pages");
    cr_assert_gt(from_buffer, 0, "the synthesized pages");
    free(whole);
}

typedef struct {
    sv_file *f;
    const sv_cancel *tok;
    ssize_t result;
} first_read;

static void *read_first_block(void *arg)
{
    first_read *fr = arg;
    struct iovec iov[SV_READ_MAX_IOV];
    size_t niov;
    sv_read_pins pins;
    fr->result = sv_fs_read_pinned(fs, fr->f, 0, 4096, iov, SV_READ_MAX_IOV, &niov, &pins, fr->tok);
    if (fr->result > 0)
        sv_fs_read_release(fs, &pins);
    return NULL;
}

/* Open the view of the two-row-group fixture with the server holding its
 * answers, start the first read on a thread and wait (at most 2 s) until
 * `want` GETs are asked for: how many were. 4 KiB blocks and a 4 KiB tail
 * keep the filter chunks (bytes 4-1195 and 12031-12441 of the fixture) out
 * of what opening the file fetched. */
static uint64_t start_held_first_read(first_read *fr, pthread_t *t, uint64_t want, uint64_t *gets_before)
{
    teardown();
    next_block_size = 4096;
    next_tail_bytes = 4096;
    setup();
    next_block_size = 0;
    next_tail_bytes = 0;
    parquet_footer ft = footer_of(pq, pq_len);
    cr_assert_eq(ft.meta->n_row_groups, 2, "the fixture has two row groups");
    uint64_t off0, len0, off1, len1;
    cr_assert(pq_column_chunk_range(&ft.meta->row_groups[0].columns[0], &off0, &len0));
    cr_assert(pq_column_chunk_range(&ft.meta->row_groups[1].columns[0], &off1, &len1));
    cr_assert(off0 + len0 < 8192 && off1 >= 8192 && off1 < (pq_len - 4096) / 4096 * 4096,
              "the fixture's i32 chunks lie in blocks the open does not fetch");
    parquet_footer_clear(&ft);
    cr_assert_eq(write_hint("g", "{\"where\": \"i32 >= 0\"}"), 0);
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(".sieve/views/g/" REL), O_RDONLY, &fr->f, &of, NULL), 0);
    mem_store_drain(m);
    mem_store_hold(m, true);
    *gets_before = mem_store_counts_now(m).gets;
    cr_assert_eq(pthread_create(t, NULL, read_first_block, fr), 0);
    uint64_t asked = 0;
    for (int i = 0; i < 200 && asked < want; i++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        asked = mem_store_counts_now(m).gets - *gets_before;
    }
    return asked;
}

/* The filter chunks of the row groups ahead go out with the first one: the
 * first read's preparation has asked for both row groups' i32 chunks before
 * either came back, not one and then, a round trip later, the next. */
Test(view_core, filter_chunks_of_the_row_groups_ahead_are_fetched_at_once)
{
    first_read fr = {NULL, NULL, 0};
    pthread_t t;
    uint64_t before;
    uint64_t asked = start_held_first_read(&fr, &t, 2, &before);
    mem_store_hold(m, false);
    pthread_join(t, NULL);
    cr_assert_geq(asked, 2, "both filter chunks were requested before either came back (%llu)",
                  (unsigned long long)asked);
    cr_assert_gt(fr.result, 0, "the read completes once the server answers");
    sv_fs_release(fs, fr.f);
}

/* With the hint's columns, the first read of one of them fetches what the
 * reader will read of all of them at once, dictionary pages included (most
 * of a dictionary-encoded chunk's bytes), not each when the reader gets to
 * it, also where every page is read whole. The
 * fixture's one row group holds k (bytes 4-6501), a (6502-17801), c and d
 * (29102-40401, its dictionary page up to 38720); with 4 KiB blocks and a
 * 4 KiB tail, neither the open nor a read at a's start fetches d's
 * dictionary page. */
Test(view_core, the_named_columns_dictionary_pages_come_with_the_first_read)
{
    /* A WAN: pages this small are read whole (the model declines), so the
     * view reads like the plain path, but knowing the columns. */
    link_profile *lp = link_profile_create();
    conn_profile wan = {.valid = true, .latency_s = 0.2, .bandwidth_Bps = 150e6 / 8,
                        .n_capacity = 1, .capacity = {{512, 1300}}, .suggested_in_flight = 512};
    link_profile_set(lp, &wan);
    teardown();
    next_block_size = 4096;
    next_tail_bytes = 4096;
    next_fixture = "v1_dict_none_large.parquet";
    next_override = -1;
    next_profile = lp;
    setup();
    next_block_size = 0;
    next_tail_bytes = 0;
    next_fixture = "v1_plain_none_index.parquet";
    next_override = 0;
    next_profile = NULL;
    cr_assert_eq(write_hint("d", "{\"where\": \"k >= 600\", \"columns\": [\"a\", \"c\", \"d\"]}"), 0);
    sv_file *f;
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(".sieve/views/d/" REL), O_RDONLY, &f, &of, NULL), 0);
    struct iovec iov[SV_READ_MAX_IOV];
    size_t niov;
    sv_read_pins pins;
    cr_assert_gt(sv_fs_read_pinned(fs, f, 8192, 4096, iov, SV_READ_MAX_IOV, &niov, &pins, NULL), 0);
    sv_fs_read_release(fs, &pins);
    mem_store_drain(m);
    uint64_t gets = mem_store_counts_now(m).gets;
    const uint64_t dict = 29102, dict_end = 38721;
    ssize_t r = sv_fs_read_pinned(fs, f, dict, dict_end - dict, iov, SV_READ_MAX_IOV, &niov, &pins, NULL);
    cr_assert_eq(r, (ssize_t)(dict_end - dict));
    size_t n = 0;
    for (size_t i = 0; i < niov; i++) {
        cr_assert_eq(memcmp(iov[i].iov_base, pq + dict + n, iov[i].iov_len), 0, "a dictionary page is real");
        n += iov[i].iov_len;
    }
    sv_fs_read_release(fs, &pins);
    cr_assert_eq(mem_store_counts_now(m).gets, gets, "d's dictionary page was fetched with the first read");
    json_t *st = stats_of("d");
    cr_assert_eq(counter(st, "pages_partial") + counter(st, "pages_synthesized"), 0, "every page read whole");
    json_decref(st);
    sv_fs_release(fs, f);
    teardown();
    link_profile_destroy(lp);
    setup();
}

/* Those fetches are the preparing reader's: interrupted while they are
 * held, it gives them up and the store drops every one unserved, the row
 * group ahead included (no GET goes on for a reader that is gone). */
Test(view_core, an_interrupted_preparation_cancels_the_fetches_ahead)
{
    sv_cancel tok;
    sv_cancel_init(&tok, NULL, 0);
    first_read fr = {NULL, &tok, 0};
    pthread_t t;
    uint64_t before;
    uint64_t asked = start_held_first_read(&fr, &t, 2, &before);
    uint64_t cancelled_before = mem_store_counts_now(m).cancelled;
    sv_cancel_fire(&tok, EINTR);
    pthread_join(t, NULL);
    mem_store_hold(m, false);
    mem_store_drain(m);
    cr_assert_geq(asked, 2, "both filter chunks were requested (%llu)", (unsigned long long)asked);
    cr_assert_lt(fr.result, 0, "the interrupted read fails (%zd)", fr.result);
    uint64_t dropped = mem_store_counts_now(m).cancelled - cancelled_before;
    cr_assert_geq(dropped, 2, "both held filter-chunk GETs were dropped unserved (%llu)",
                  (unsigned long long)dropped);
    sv_fs_release(fs, fr.f);
}

Test(view_core, filter_columns_and_the_footer_are_real)
{
    /* i32 is 3 x the row number (some rows null): row 10 only. */
    cr_assert_eq(write_hint("f", "{\"where\": \"i32 = 30\"}"), 0);
    size_t len;
    int err;
    uint8_t *view = read_all(".sieve/views/f/" REL, &len, &err);
    cr_assert_not_null(view);
    cr_assert_gt(check_differences(view, 0x7f & ~1u), 0, "i32 (leaf 0) is the filter column: all real");
    json_t *st = stats_of("f");
    json_t *file = json_array_get(json_object_get(st, "files"), 0);
    cr_assert_eq(json_integer_value(json_object_get(file, "selected_rows")), 1);
    json_decref(st);
    free(view);
}

/* The selection waits for a read that needs it: reading the footer and a
 * filter chunk evaluates nothing (selected_rows null), a read of another
 * column's chunk then does. */
Test(view_core, reads_of_real_chunks_do_not_wait_for_the_selection)
{
    cr_assert_eq(write_hint("s", "{\"where\": \"i32 = 30\"}"), 0);
    parquet_footer ft = footer_of(pq, pq_len);
    uint64_t off0, len0, off1, len1;
    cr_assert(pq_column_chunk_range(&ft.meta->row_groups[0].columns[0], &off0, &len0));
    cr_assert(pq_column_chunk_range(&ft.meta->row_groups[0].columns[1], &off1, &len1));
    parquet_footer_clear(&ft);
    sv_file *f;
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(".sieve/views/s/" REL), O_RDONLY, &f, &of, NULL), 0);
    const uint64_t reads[][2] = {{pq_len - 8, 8}, {off0, len0}, {off1, len1}};
    for (int i = 0; i < 3; i++) {
        struct iovec iov[SV_READ_MAX_IOV];
        size_t niov;
        sv_read_pins pins;
        ssize_t r = sv_fs_read_pinned(fs, f, reads[i][0], reads[i][1], iov, SV_READ_MAX_IOV, &niov, &pins, NULL);
        cr_assert_eq(r, (ssize_t)reads[i][1], "read %d", i);
        sv_fs_read_release(fs, &pins);
        json_t *st = stats_of("s");
        json_t *file = json_array_get(json_object_get(st, "files"), 0);
        cr_assert_str_eq(json_string_value(json_object_get(file, "state")), "view");
        json_t *n = json_object_get(file, "selected_rows");
        if (i < 2)
            cr_assert(json_is_null(n), "read %d (footer, filter chunk) evaluated the selection", i);
        else
            cr_assert_eq(json_integer_value(n), 1, "the i64 chunk needed the selection");
        json_decref(st);
    }
    sv_fs_release(fs, f);
}

Test(view_core, rejected_hints_say_why)
{
    cr_assert_eq(write_hint("bad", "{\"where\": \"nosuch = 1\"}"), -EINVAL);
    size_t len;
    int err;
    uint8_t *why = read_all(".sieve/hints/bad.error", &len, &err);
    cr_assert_not_null(why);
    cr_assert(memmem(why, len, "nosuch", 6), "%.*s", (int)len, why);
    free(why);
    cr_assert_eq(lookup(".sieve/views/bad"), -ENOENT);
    cr_assert_eq(write_hint("bad2", "{not json"), -EINVAL);
    cr_assert_eq(write_hint("r", "{\"rows\": {\"t/missing.parquet\": [[0, 1]]}}"), -EINVAL);
    cr_assert_eq(write_hint("r2", "{\"rows\": {\"" REL "\": [[0, 100000]]}}"), -EINVAL, "past the file's rows");
    /* Accepted hints are immutable. */
    cr_assert_eq(write_hint("ok", "{\"where\": \"i32 = 3\"}"), 0);
    cr_assert_eq(write_hint("ok", "{\"where\": \"i32 = 6\"}"), -EEXIST);
    cr_assert_eq(write_hint("ok", "{\"where\": \"i32 = 3\"}"), 0, "the same document again is fine");
    sv_stale_entry stale;
    cr_assert_eq(sv_fs_unlink(fs, (uint64_t)lookup(".sieve/hints"), "ok.json", &stale), 0);
    cr_assert_eq(stale.parent, SV_INO_VIEWS, "the view's directory is gone with its hint");
    cr_assert_str_eq(stale.name, "ok");
    cr_assert_eq(lookup(".sieve/views/ok"), -ENOENT);
    /* A rejected hint had no view: nothing to invalidate. */
    cr_assert_eq(sv_fs_unlink(fs, (uint64_t)lookup(".sieve/hints"), "bad.error", &stale), 0);
    cr_assert_eq(stale.parent, 0);
}

Test(view_core, failed_planning_rounds_serve_real_bytes)
{
    cr_assert_eq(write_hint("q", "{\"rows\": {\"" REL "\": [[10, 12]]}}"), 0);
    /* Open (which reads the whole small file into the cache as its tail),
     * then make every GET fail: the rounds fail, the cached bytes stay. */
    int64_t ino = lookup(".sieve/views/q/" REL);
    cr_assert_gt(ino, 0);
    sv_file *f;
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)ino, O_RDONLY, &f, &of, NULL), 0);
    mem_store_drain(m);
    fault_plan plan = {.fail_gets = 1000000};
    fault_store_set(faults, &plan);
    size_t len;
    int err;
    uint8_t *view = read_all(".sieve/views/q/" REL, &len, &err);
    cr_assert_not_null(view, "read: %d", err);
    cr_assert_eq(memcmp(view, pq, pq_len), 0, "every page real when its plan cannot be fetched");
    cr_assert_gt(fault_store_injected(faults), 0, "the rounds did fail");
    json_t *st = stats_of("q");
    cr_assert_eq(counter(st, "pages_synthesized") + counter(st, "pages_partial"), 0);
    cr_assert_gt(counter(st, "pages_real"), 0);
    json_decref(st);
    free(view);
    sv_fs_release(fs, f);
}

Test(view_core, a_changed_object_is_served_as_the_version_opened_or_not_at_all)
{
    cr_assert_eq(write_hint("q", "{\"rows\": {\"" REL "\": [[10, 12]]}}"), 0);
    int64_t ino = lookup(".sieve/views/q/" REL);
    sv_file *f;
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)ino, O_RDONLY, &f, &of, NULL), 0);
    mem_store_drain(m);
    uint8_t *other = malloc(pq_len);
    memset(other, 0x5a, pq_len);
    cr_assert(mem_store_put(m, KEY, other, pq_len)); /* a new version behind the mount */
    struct iovec iov[SV_READ_MAX_IOV];
    size_t niov, n = 0;
    sv_read_pins pins;
    uint8_t *got = malloc(pq_len);
    while (n < pq_len) {
        ssize_t r = sv_fs_read_pinned(fs, f, n, 4096, iov, SV_READ_MAX_IOV, &niov, &pins, NULL);
        if (r < 0) {
            cr_assert_eq(r, -EIO, "an error, never the new bytes");
            break;
        }
        cr_assert_gt(r, 0);
        for (size_t i = 0; i < niov; i++) {
            memcpy(got + n, iov[i].iov_base, iov[i].iov_len);
            n += iov[i].iov_len;
        }
        sv_fs_read_release(fs, &pins);
    }
    /* What was served is the opened version's (real or a plan of it). */
    for (size_t i = 0; i < n; i++)
        cr_assert(got[i] == pq[i] || got[i] != 0x5a || pq[i] == 0x5a, "byte %zu is the new version's", i);
    sv_fs_release(fs, f);
    free(got);
    free(other);
}

Test(view_core, views_mirror_the_tree_and_are_read_only)
{
    cr_assert_eq(write_hint("q", "{\"where\": \"i32 = 30\"}"), 0);
    sv_attr a;
    int64_t dir = lookup(".sieve/views/q/t");
    cr_assert_gt(dir, 0);
    cr_assert_eq(sv_fs_getattr(fs, (uint64_t)dir, &a), 0);
    cr_assert_eq(a.mode & S_IFMT, S_IFDIR);
    sv_dir *d;
    cr_assert_eq(sv_fs_opendir(fs, (uint64_t)dir, &d, NULL), 0);
    const sv_dirents *e = sv_dir_entries(d);
    cr_assert_eq(e->n, 4, ". .. a.parquet notes.txt");
    cr_assert_str_eq(e->entries[2].name, "a.parquet");
    cr_assert_neq(e->entries[2].ino, (uint64_t)lookup(REL), "a view's own inodes");
    sv_fs_releasedir(fs, d);
    sv_file *f;
    sv_open_flags of;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(".sieve/views/q/" REL), O_WRONLY, &f, &of, NULL), -EROFS);
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(REL), O_RDWR, &f, &of, NULL), -EROFS);
    size_t len;
    int err;
    uint8_t *txt = read_all(".sieve/views/q/t/notes.txt", &len, &err);
    cr_assert_eq(len, 11);
    cr_assert_eq(memcmp(txt, "not parquet", 11), 0, "files that are not Parquet are real");
    free(txt);
}

Test(view_core, handles_left_open_are_freed_with_the_mount)
{
    cr_assert_eq(write_hint("q", "{\"rows\": {\"" REL "\": [[0, 2]]}}"), 0);
    sv_file *f, *g, *h;
    sv_open_flags of;
    sv_dir *d;
    sv_attr a;
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(".sieve/views/q/" REL), O_RDONLY, &f, &of, NULL), 0);
    cr_assert_eq(sv_fs_open(fs, (uint64_t)lookup(REL), O_RDONLY, &g, &of, NULL), 0);
    cr_assert_eq(sv_fs_create_file(fs, (uint64_t)lookup(".sieve/hints"), "w.json", O_WRONLY, &h, &a), 0);
    cr_assert_eq(sv_fs_write(fs, h, 0, "{}", 2), 2);
    cr_assert_eq(sv_fs_opendir(fs, (uint64_t)lookup(".sieve"), &d, NULL), 0);
    /* teardown destroys the filesystem with all four open (valgrind and ASan check the rest) */
}

/* The view module on its own over a plain tree, to see its footer cache. */
Test(view_module, one_footer_parse_for_acceptance_plain_reads_and_the_view)
{
    sv_log_init(SV_LOG_ERROR, false);
    mem_store *ms = mem_store_create();
    size_t len;
    uint8_t *file = fixture_read(FIXTURE_DIR "/v1_plain_none_index.parquet", &len);
    cr_assert(mem_store_put(ms, KEY, file, len));
    sv_stats st = {0};
    plain_config pc = {.prefix = "w/", .cache_bytes = 16u << 20, .block_size = 16u << 10,
                       .max_request = 1u << 20, .tail_bytes = 64u << 10, .dir_ttl_ms = 60000,
                       .delta_log_ttl_ms = 1000, .prefetch = {.min_streak = 4u << 20, .max_window = 1u << 20}};
    plain_fs *p = plain_fs_create(mem_store_base(ms), &st, &pc);
    view_env env = {.plain = p, .profile = NULL, .request_cost_override = 0};
    view_registry *r = views_create(&env);
    cr_assert(p && r);
    hint_writer *w;
    sv_attr a;
    cr_assert_eq(views_create_hint(r, SV_INO_HINTS, "q.json", &w, &a), 0);
    const char *doc = "{\"rows\": {\"" REL "\": [[10, 12]]}}";
    cr_assert_eq(hint_writer_write(w, 0, doc, strlen(doc)), (ssize_t)strlen(doc));
    cr_assert_eq(hint_writer_flush(r, w), 0);
    hint_writer_close(r, w, false);
    cr_assert_eq(footer_cache_loads(p->footers), 1, "acceptance read the footer of the file in rows");
    sv_attr dir, t, f;
    cr_assert_eq(views_lookup(r, SV_INO_VIEWS, "q", &dir, NULL), 0);
    cr_assert_eq(views_lookup(r, dir.ino, "t", &t, NULL), 0);
    cr_assert_eq(views_lookup(r, t.ino, "a.parquet", &f, NULL), 0);
    plain_file pf;
    cr_assert_eq(plain_file_open(p, f.ino & ((1ull << 40) - 1), true, &pf, NULL), 0, "the same object, plain");
    view_opened vo;
    sv_open_flags of;
    cr_assert_eq(views_open(r, f.ino, O_RDONLY, &vo, &of, NULL), 0);
    cr_assert_eq(vo.kind, VIEW_OPENED_FILE);
    uint8_t *buf = malloc(len);
    cr_assert_eq(view_reader_read(r, vo.reader, 0, len, buf, NULL), (ssize_t)len);
    cr_assert_eq(memcmp(buf + len - 8, file + len - 8, 8), 0, "the footer's trailer is real");
    cr_assert_eq(footer_cache_loads(p->footers), 1, "one parse for acceptance, the plain open and the view");
    view_reader_close(r, vo.reader);
    plain_file_close(p, &pf);
    mem_store_drain(ms);
    views_destroy(r);
    plain_fs_destroy(p);
    store_destroy(mem_store_base(ms));
    free(buf);
    free(file);
}

/* The cost model decides from the mount's profile; every decision is counted
 * by its reason word in NAME.stats. */
static uint64_t reason(json_t *st, const char *kind, const char *word)
{
    json_t *r = json_object_get(json_object_get(st, kind), word);
    return r ? (uint64_t)json_integer_value(r) : 0;
}

/* Through a rows hint q on the fixture: the view serves the object's own
 * bytes and neither synthesizes nor reads any page partially. Its stats
 * (the caller decrefs). */
static json_t *view_serves_the_object(const char *why)
{
    cr_assert_eq(write_hint("q", "{\"rows\": {\"" REL "\": [[10, 12]]}}"), 0);
    size_t len;
    int err;
    uint8_t *view = read_all(".sieve/views/q/" REL, &len, &err);
    cr_assert_not_null(view, "read: %d", err);
    cr_assert_eq(memcmp(view, pq, pq_len), 0, "%s", why);
    free(view);
    json_t *st = stats_of("q");
    cr_assert_eq(counter(st, "pages_synthesized") + counter(st, "pages_partial"), 0);
    return st;
}

Test(view_core, without_a_profile_every_page_is_real)
{
    remount(-1, NULL);
    json_t *st = view_serves_the_object("no profile: the object's bytes");
    cr_assert_gt(reason(st, "chunk_reasons", "no_profile"), 0, "every chunk the read touched");
    cr_assert_eq(reason(st, "chunk_reasons", "planned"), 0);
    cr_assert_eq(counter(st, "requests"), 0, "no planning round at all");
    json_decref(st);
}

Test(view_core, a_measured_link_prices_the_plan)
{
    link_profile *lp = link_profile_create();
    /* A WAN: 200 ms, 150 Mbit/s. The fixture's pages are smaller than the
     * planner's first probe: a partial plan would fetch them whole and two
     * round trips more. (Pages large enough to pay: test_cost_model's grid
     * and the e2e tests through the link emulator.) */
    conn_profile wan = {.valid = true, .latency_s = 0.2, .bandwidth_Bps = 150e6 / 8,
                        .n_capacity = 1, .capacity = {{512, 1300}}, .suggested_in_flight = 512};
    link_profile_set(lp, &wan);
    remount(-1, lp);
    json_t *st = view_serves_the_object("small pages on a WAN: the object's bytes");
    cr_assert_gt(reason(st, "chunk_reasons", "file_cost") + reason(st, "page_reasons", "request_cost"), 0,
                 "declined by the model");
    cr_assert_eq(reason(st, "chunk_reasons", "no_profile"), 0);
    json_decref(st);

    teardown();
    link_profile_destroy(lp);
    setup();
}

Test(view_core, over_the_partial_memory_budget_pages_are_read_the_ordinary_way)
{
    next_partial_memory = 0; /* no planning round and no page image fits */
    remount(0, NULL);
    next_partial_memory = PARTIAL_MEMORY_DEFAULT;
    json_t *st = view_serves_the_object("over the budget: the object's bytes, no error");
    cr_assert_gt(reason(st, "page_reasons", "partial_memory"), 0);
    json_decref(st);
}

Test(partial_memory, reserves_within_the_limit)
{
    partial_memory pm;
    partial_memory_init(&pm, 100, NULL);
    cr_assert(partial_memory_reserve(&pm, 60));
    cr_assert_not(partial_memory_reserve(&pm, 41));
    cr_assert(partial_memory_reserve(&pm, 40));
    cr_assert_eq(partial_memory_used(&pm), 100);
    cr_assert_not(partial_memory_reserve(&pm, 1));
    partial_memory_release(&pm, 60);
    cr_assert_not(partial_memory_reserve(&pm, UINT64_MAX), "no overflow");
    cr_assert(partial_memory_reserve(&pm, 60));
    cr_assert(partial_memory_reserve(NULL, UINT64_MAX), "no budget: unlimited");
    cr_assert_eq(partial_memory_used(NULL), 0);
}

Test(partial_memory, takes_at_most_half_of_the_mounts_budget_and_counts_in_it)
{
    memory_budget mb;
    memory_budget_init(&mb, 1000);
    partial_memory pm;
    partial_memory_init(&pm, PARTIAL_MEMORY_DEFAULT, &mb);
    cr_assert_eq(pm.limit, 500, "the default is half");
    cr_assert(partial_memory_reserve(&pm, 300));
    cr_assert_eq(memory_budget_outside(&mb), 300);
    cr_assert_not(partial_memory_reserve(&pm, 201));
    cr_assert_eq(memory_budget_outside(&mb), 300, "a refused reservation takes nothing");
    partial_memory_release(&pm, 300);
    cr_assert_eq(memory_budget_outside(&mb), 0);
    partial_memory_init(&pm, 100, &mb);
    cr_assert_eq(pm.limit, 100, "a smaller limit stays");
}
