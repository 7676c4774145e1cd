/* The namespace over the in-memory store: listings in pages, directories
 * and files, one inode per object version, TTLs, names that cannot be
 * files, and a failed refresh that keeps the previous listing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_store.h"
#include "mem_store.h"
#include "tree.h"

static mem_store *m;
static fault_store *faults;
static tree *t;

static void setup(void)
{
    m = mem_store_create();
    faults = fault_store_create(mem_store_base(m));
    cr_assert(m && faults);
}

static void teardown(void)
{
    tree_destroy(t);
    t = NULL;
    store_destroy(fault_store_base(faults));
    store_destroy(mem_store_base(m));
}

TestSuite(tree, .init = setup, .fini = teardown);

static void put(const char *key, const char *data)
{
    cr_assert(mem_store_put(m, key, data, strlen(data)));
}

/* The inode of a path from the root ("a/b/c"), asserting each step. */
static tree_attr walk(const char *path)
{
    tree_attr a = {.ino = TREE_ROOT_INO, .is_dir = true};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
        cr_assert_eq(tree_lookup(t, a.ino, c, &a, NULL), STORE_OK, "lookup of %s in %s", c, path);
    return a;
}

Test(tree, directories_files_and_pages)
{
    put("warehouse/t1/a.parquet", "0123456789");
    put("warehouse/t1/_delta_log/00.json", "{}");
    put("warehouse/t2/p=1/b.parquet", "xy");
    put("warehouse/top.txt", "z");
    put("elsewhere/x", "not under the prefix");
    mem_store_set_page_keys(m, 1); /* every listing takes several pages */
    t = tree_create(fault_store_base(faults), "warehouse/", 60000, 1000);
    cr_assert_not_null(t);
    sv_error err;
    cr_assert_eq(tree_refresh_dir(t, TREE_ROOT_INO, NULL, &err), STORE_OK, "%s", err.msg);
    tree_dir_snapshot snap;
    cr_assert_eq(tree_readdir(t, TREE_ROOT_INO, &snap, NULL), STORE_OK);
    cr_assert_eq(snap.n, 3);
    cr_assert_str_eq(snap.entries[0].name, "t1");
    cr_assert_str_eq(snap.entries[1].name, "t2");
    cr_assert_str_eq(snap.entries[2].name, "top.txt");
    cr_assert(snap.entries[0].is_dir && snap.entries[1].is_dir && !snap.entries[2].is_dir);
    tree_dir_snapshot_free(&snap);
    tree_attr f = walk("t1/a.parquet");
    cr_assert(!f.is_dir && !f.in_delta_log);
    cr_assert_eq(f.size, 10);
    cr_assert_geq(f.ino, TREE_FIRST_INO);
    char *key = tree_key(t, f.ino);
    cr_assert_str_eq(key, "warehouse/t1/a.parquet");
    free(key);
    tree_attr log = walk("t1/_delta_log/00.json");
    cr_assert(log.in_delta_log);
    tree_attr d = walk("t2/p=1");
    cr_assert(d.is_dir);
    cr_assert_eq(tree_parent(t, d.ino), walk("t2").ino);
    tree_attr none;
    cr_assert_eq(tree_lookup(t, TREE_ROOT_INO, "elsewhere", &none, NULL), STORE_ERR_NOT_FOUND);
    cr_assert_eq(tree_lookup(t, TREE_ROOT_INO, "missing", &none, NULL), STORE_ERR_NOT_FOUND);
}

Test(tree, a_replaced_object_is_a_new_inode)
{
    put("a.parquet", "first");
    t = tree_create(mem_store_base(m), "", 0, 0); /* no TTL: every lookup lists again */
    tree_attr before = walk("a.parquet");
    put("a.parquet", "second version");
    tree_attr after = walk("a.parquet");
    cr_assert_neq(after.ino, before.ino, "a new ETag is a new inode");
    cr_assert_eq(after.size, 14);
    cr_assert_str_neq(after.etag, before.etag);
    tree_attr old;
    cr_assert_eq(tree_getattr(t, before.ino, &old), STORE_OK, "the old version's inode still answers");
    cr_assert_eq(old.size, 5);
    /* The same version listed again keeps its inode. */
    cr_assert_eq(walk("a.parquet").ino, after.ino);
}

Test(tree, a_refresh_names_what_it_replaced_or_removed)
{
    put("d/a", "1");
    put("d/b", "2");
    put("d/c", "3");
    t = tree_create(mem_store_base(m), "", 60000, 60000);
    uint64_t d = walk("d").ino;
    walk("d/a");
    tree_stale got[8];
    cr_assert_eq(tree_take_stale(t, got, 8), 0, "a first listing makes nothing stale");
    put("d/a", "one");   /* replaced: a new inode for the name */
    cr_assert(mem_store_delete(m, "d/c"));
    put("d/e", "5");     /* new: nothing cached for it */
    sv_error err;
    cr_assert_eq(tree_refresh_dir(t, d, NULL, &err), STORE_OK);
    size_t n = tree_take_stale(t, got, 8);
    cr_assert_eq(n, 2);
    cr_assert_eq(got[0].parent, d);
    cr_assert_str_eq(got[0].name, "a");
    cr_assert_eq(got[1].parent, d);
    cr_assert_str_eq(got[1].name, "c");
    cr_assert_eq(tree_take_stale(t, got, 8), 0, "taken once");
    cr_assert_eq(tree_refresh_dir(t, d, NULL, &err), STORE_OK);
    cr_assert_eq(tree_take_stale(t, got, 8), 0, "an unchanged listing makes nothing stale");
}

Test(tree, the_stale_ring_keeps_the_newest)
{
    char key[32];
    for (unsigned i = 0; i < TREE_STALE_MAX + 10; i++) {
        snprintf(key, sizeof key, "d/f%05u", i);
        put(key, "x");
    }
    t = tree_create(mem_store_base(m), "", 60000, 60000);
    uint64_t d = walk("d").ino;
    walk("d/f00000"); /* lists d */
    for (unsigned i = 0; i < TREE_STALE_MAX + 10; i++) {
        snprintf(key, sizeof key, "d/f%05u", i);
        put(key, "changed");
    }
    sv_error err;
    cr_assert_eq(tree_refresh_dir(t, d, NULL, &err), STORE_OK);
    tree_stale got[64];
    size_t total = 0, n;
    char first[TREE_NAME_MAX + 1] = "";
    while ((n = tree_take_stale(t, got, 64)) > 0) {
        if (!total)
            snprintf(first, sizeof first, "%s", got[0].name);
        total += n;
    }
    cr_assert_eq(total, TREE_STALE_MAX, "total %zu", total);
    cr_assert_str_eq(first, "f00010", "the oldest were dropped");
}

Test(tree, listings_are_reused_within_their_ttl)
{
    put("d/a", "1");
    put("d/_delta_log/0.json", "{}");
    t = tree_create(mem_store_base(m), "", 60000, 60000);
    walk("d/a");
    walk("d/_delta_log/0.json");
    uint64_t lists = mem_store_counts_now(m).lists;
    put("d/b", "2");
    walk("d/a");
    tree_attr none;
    cr_assert_eq(tree_lookup(t, walk("d").ino, "b", &none, NULL), STORE_ERR_NOT_FOUND, "cached listing, TTL not over");
    cr_assert_eq(mem_store_counts_now(m).lists, lists, "no listing within the TTL");
    sv_error err;
    cr_assert_eq(tree_refresh_dir(t, walk("d").ino, NULL, &err), STORE_OK);
    walk("d/b");
}

Test(tree, names_that_cannot_be_files_are_skipped)
{
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    char longkey[320];
    snprintf(longkey, sizeof longkey, "d/%s", longname);
    put(longkey, "1");
    put("d/./x", "1");
    put("d/../y", "1");
    put("d//z", "1");
    put("d/ok", "1");
    put("d/same", "file");
    put("d/same/inner", "dir wins");
    t = tree_create(mem_store_base(m), "", 60000, 1000);
    tree_dir_snapshot snap;
    cr_assert_eq(tree_readdir(t, walk("d").ino, &snap, NULL), STORE_OK);
    cr_assert_eq(snap.n, 2, "only ok and same: %zu", snap.n);
    cr_assert_str_eq(snap.entries[0].name, "ok");
    cr_assert_str_eq(snap.entries[1].name, "same");
    cr_assert(snap.entries[1].is_dir, "a file named like a directory: the directory wins");
    tree_dir_snapshot_free(&snap);
}

Test(tree, a_failed_refresh_keeps_the_previous_listing)
{
    put("d/a", "1");
    t = tree_create(fault_store_base(faults), "", 0, 0);
    walk("d/a");
    fault_plan plan = {.fail_lists = 100, .list_status = STORE_ERR_TIMEOUT};
    fault_store_set(faults, &plan);
    walk("d/a"); /* every listing fails now: the previous one is served */
    cr_assert_gt(fault_store_injected(faults), 0);
    /* A directory never listed has nothing to fall back on. */
    tree_destroy(t);
    t = tree_create(fault_store_base(faults), "", 0, 0);
    sv_error err = {0};
    cr_assert_eq(tree_refresh_dir(t, TREE_ROOT_INO, NULL, &err), STORE_ERR_TIMEOUT);
    cr_assert_eq(err.code, STORE_ERR_TIMEOUT);
    cr_assert(strstr(err.msg, "injected"), "the message names the cause: %s", err.msg);
    tree_attr none;
    cr_assert_neq(tree_lookup(t, TREE_ROOT_INO, "d", &none, NULL), STORE_OK);
}

/* A store whose listings never end in one of three ways: the same
 * continuation token again, a truncated page without a token, or a new
 * token every time. */
typedef struct {
    object_store base;
    int mode; /* 0: same token, 1: no token, 2: a new token forever */
    unsigned pages;
} looping_store;

static store_status loop_list(object_store *s, const char *prefix, const char *delimiter, const char *token,
                              const store_request_opts *opts, store_listing *out, sv_error *err)
{
    (void)prefix, (void)delimiter, (void)token, (void)opts, (void)err;
    looping_store *l = (looping_store *)s;
    memset(out, 0, sizeof *out);
    out->truncated = true;
    char buf[32];
    snprintf(buf, sizeof buf, "t%u", l->mode == 2 ? l->pages : 0);
    out->next_token = l->mode == 1 ? NULL : strdup(buf);
    l->pages++;
    return STORE_OK;
}

static store_status loop_get(object_store *s, const char *key, const char *etag, uint64_t offset, uint64_t length,
                             const struct iovec *iov, size_t iovcnt, const store_request_opts *opts,
                             store_get_done_fn done, void *ud)
{
    (void)s, (void)key, (void)etag, (void)offset, (void)length, (void)iov, (void)iovcnt, (void)opts, (void)done,
        (void)ud;
    return STORE_ERR_INVALID;
}

static void loop_destroy(object_store *s)
{
    (void)s;
}

static const object_store_ops loop_ops = {.get_async = loop_get, .list_page = loop_list, .destroy = loop_destroy};

/* ls on such a server ends with an error for that directory, not a loop. */
Test(tree, listings_that_never_end_are_errors)
{
    for (int mode = 0; mode < 3; mode++) {
        looping_store ls = {.base = {.ops = &loop_ops}, .mode = mode};
        tree *lt = tree_create(&ls.base, "", 60000, 1000);
        cr_assert_not_null(lt);
        tree_dir_snapshot snap = {0};
        store_status st = tree_readdir(lt, TREE_ROOT_INO, &snap, NULL);
        cr_expect_eq(st, STORE_ERR_PROTOCOL, "mode %d: status %d after %u pages", mode, st, ls.pages);
        cr_expect_leq(ls.pages, mode == 2 ? TREE_MAX_LIST_PAGES : 2u, "mode %d: %u pages", mode, ls.pages);
        tree_dir_snapshot_free(&snap);
        tree_destroy(lt);
    }
}

Test(tree, listings_count_in_the_mounts_memory_budget)
{
    char key[64];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "d/object-%03d", i);
        put(key, "x");
    }
    memory_budget mb;
    memory_budget_init(&mb, 1 << 20);
    t = tree_create(mem_store_base(m), "", 0, 0); /* no TTL: every lookup lists again */
    tree_share_budget(t, &mb);
    walk("d/object-000");
    uint64_t listed = memory_budget_outside(&mb);
    cr_assert_gt(listed, 200 * (sizeof "object-000" + sizeof(char *)), "200 names and their nodes: %llu",
                 (unsigned long long)listed);
    walk("d/object-000");
    cr_assert_eq(memory_budget_outside(&mb), listed, "listing the same names again takes nothing more");
    tree_destroy(t);
    t = NULL;
    cr_assert_eq(memory_budget_outside(&mb), 0, "all given back");
}

/* The children of directory path, as "name/" or "name" joined by spaces. */
static void names_of(const char *path, char *out, size_t size)
{
    tree_dir_snapshot snap;
    cr_assert_eq(tree_readdir(t, walk(path).ino, &snap, NULL), STORE_OK, "readdir %s", path);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < snap.n; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%s%s", i ? " " : "", snap.entries[i].name,
                                snap.entries[i].is_dir ? "/" : "");
    tree_dir_snapshot_free(&snap);
}

/* A table's partition directories are listed by one flat listing when the
 * first of them is looked into, and each shows exactly what a listing of its
 * own shows: files, nested partitions, other subdirectories. */
Test(tree, partition_directories_are_listed_together)
{
    put("w/t/_delta_log/00.json", "{}");
    put("w/t/_delta_log/01.json", "{}");
    for (int d = 1; d <= 9; d++) {
        char k[64];
        snprintf(k, sizeof k, "w/t/day=0%d/part-0.parquet", d);
        put(k, "x");
    }
    put("w/t/day=03/part-1.parquet", "yy");
    put("w/t/day=03/_tmp/scratch", "z");      /* not a partition: shown, not installed */
    put("w/t/day=04/h=1/part-0.parquet", "n"); /* nested partitions */
    put("w/t/day=04/h=2/part-0.parquet", "n");
    put("w/t/other/x.parquet", "o");
    t = tree_create(fault_store_base(faults), "w/", 60000, 1000);
    char top[1024];
    names_of("t", top, sizeof top); /* the table directory itself: listed as ever */
    const uint64_t lists_before = mem_store_counts_now(m).lists;
    walk("t/day=01/part-0.parquet");
    cr_assert_eq(mem_store_counts_now(m).lists, lists_before + 1, "one flat listing: %llu", (unsigned long long)(mem_store_counts_now(m).lists - lists_before));
    walk("t/day=09/part-0.parquet");
    walk("t/day=04/h=2/part-0.parquet");
    cr_assert_eq(mem_store_counts_now(m).lists, lists_before + 1, "the other partitions: no listing");
    char got[512];
    names_of("t/day=03", got, sizeof got);
    cr_assert_str_eq(got, "_tmp/ part-0.parquet part-1.parquet");
    names_of("t/day=04", got, sizeof got);
    cr_assert_str_eq(got, "h=1/ h=2/ part-0.parquet");
    names_of("t/day=04/h=1", got, sizeof got);
    cr_assert_str_eq(got, "part-0.parquet");
    cr_assert_eq(mem_store_counts_now(m).lists, lists_before + 1);
    names_of("t/day=03/_tmp", got, sizeof got); /* listed on its own */
    cr_assert_str_eq(got, "scratch");
    cr_assert_eq(mem_store_counts_now(m).lists, lists_before + 2);
    tree_attr a = walk("t/day=03/part-1.parquet");
    cr_assert_eq(a.size, 2);
}

/* A flat listing cut short by its page limit installs only the partitions
 * it covers whole; the rest are listed one by one, correctly. */
Test(tree, a_flat_listing_cut_short_installs_what_it_covers)
{
    mem_store_set_page_keys(m, 2);
    const int days = 2 * TREE_FLAT_LIST_PAGES + 10; /* more keys than the flat listing's pages hold */
    for (int d = 0; d < days; d++) {
        char k[64];
        snprintf(k, sizeof k, "w/t/day=%03d/a.parquet", d);
        put(k, "x");
        snprintf(k, sizeof k, "w/t/day=%03d/b.parquet", d);
        put(k, "x");
    }
    t = tree_create(fault_store_base(faults), "w/", 60000, 1000);
    char top[1024];
    names_of("t", top, sizeof top); /* the table directory itself: listed as ever */
    const uint64_t lists_before = mem_store_counts_now(m).lists;
    walk("t/day=000/a.parquet");
    const uint64_t flat = mem_store_counts_now(m).lists - lists_before;
    cr_assert_eq(flat, TREE_FLAT_LIST_PAGES, "the flat listing's pages");
    /* 2 keys a page, 2 a directory: the first PAGES - 1 are whole (the last
     * one's range is not known to have ended) */
    for (int d = 0; d < days; d++) {
        char dir[64], got[256];
        snprintf(dir, sizeof dir, "t/day=%03d", d);
        names_of(dir, got, sizeof got);
        cr_assert_str_eq(got, "a.parquet b.parquet", "%s", dir);
    }
    const uint64_t own = mem_store_counts_now(m).lists - lists_before - flat;
    cr_assert_eq(own, (uint64_t)(days - (TREE_FLAT_LIST_PAGES - 1)), "listed one by one: %llu",
                 (unsigned long long)own);
}

/* Past the TTL, the partitions are listed together again: one listing
 * refreshes them all, and what changed shows (a replaced object under a new
 * inode, its old name queued as stale; a new file). */
Test(tree, partition_directories_are_refreshed_together)
{
    for (int d = 1; d <= 6; d++) {
        char k[64];
        snprintf(k, sizeof k, "w/t/day=%d/part-0.parquet", d);
        put(k, "x");
    }
    t = tree_create(fault_store_base(faults), "w/", 500, 500);
    char got[256];
    names_of("t", got, sizeof got);
    const uint64_t ino_before = walk("t/day=2/part-0.parquet").ino;
    walk("t/day=3/part-0.parquet");
    usleep(600 * 1000);
    put("w/t/day=2/part-0.parquet", "replaced");
    put("w/t/day=3/part-1.parquet", "new");
    names_of("t", got, sizeof got); /* the table directory: its own refresh */
    const uint64_t lists_before = mem_store_counts_now(m).lists;
    const tree_attr a = walk("t/day=2/part-0.parquet");
    cr_assert_neq(a.ino, ino_before, "a new inode for the replaced object");
    cr_assert_eq(a.size, strlen("replaced"));
    names_of("t/day=3", got, sizeof got);
    cr_assert_str_eq(got, "part-0.parquet part-1.parquet");
    for (int d = 1; d <= 6; d++) {
        char dir[32];
        snprintf(dir, sizeof dir, "t/day=%d", d);
        names_of(dir, got, sizeof got);
    }
    cr_assert_eq(mem_store_counts_now(m).lists, lists_before + 1, "one listing refreshed them all");
    tree_stale stale[8];
    const size_t n = tree_take_stale(t, stale, 8);
    bool found = false;
    for (size_t i = 0; i < n; i++)
        found = found || strcmp(stale[i].name, "part-0.parquet") == 0;
    cr_assert(found, "the replaced name is stale");
}
