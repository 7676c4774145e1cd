/* The in-memory object store behaves as S3 does for what the core uses:
 * ranged GETs with If-Match, HEAD, delimiter listings in pages. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_store.h"
#include "mem_store.h"

static mem_store *m;

static void setup(void)
{
    m = mem_store_create();
    cr_assert_not_null(m);
}

static void teardown(void)
{
    store_destroy(mem_store_base(m));
}

TestSuite(mem_store, .init = setup, .fini = teardown);

Test(mem_store, ranged_get_and_if_match)
{
    cr_assert(mem_store_put(m, "a/x", "0123456789", 10));
    char etag[S3_ETAG_MAX + 1];
    cr_assert(mem_store_etag(m, "a/x", etag));
    char buf[4] = {0};
    cr_assert_eq(store_get(mem_store_base(m), "a/x", etag, 3, 4, buf, NULL), STORE_OK);
    cr_assert_eq(memcmp(buf, "3456", 4), 0);
    cr_assert_eq(store_get(mem_store_base(m), "a/x", "\"other\"", 3, 4, buf, NULL), STORE_ERR_CHANGED);
    cr_assert_eq(store_get(mem_store_base(m), "a/x", NULL, 8, 4, buf, NULL), STORE_ERR_CHANGED, "past the end: 416");
    cr_assert_eq(store_get(mem_store_base(m), "nope", NULL, 0, 1, buf, NULL), STORE_ERR_NOT_FOUND);
    /* A put replaces the object under a new ETag. */
    cr_assert(mem_store_put(m, "a/x", "abcdefghij", 10));
    cr_assert_eq(store_get(mem_store_base(m), "a/x", etag, 0, 1, buf, NULL), STORE_ERR_CHANGED);
    mem_store_counts c = mem_store_counts_now(m);
    cr_assert_eq(c.gets, 5);
    cr_assert_eq(c.get_bytes, 4);
}

Test(mem_store, head)
{
    cr_assert(mem_store_put(m, "k", "xyz", 3));
    store_object_info info;
    sv_error err = {0};
    cr_assert_eq(store_head(mem_store_base(m), "k", &info, &err), STORE_OK);
    cr_assert_eq(info.size, 3);
    cr_assert_eq(store_head(mem_store_base(m), "missing", &info, &err), STORE_ERR_NOT_FOUND);
    cr_assert_eq(err.code, STORE_ERR_NOT_FOUND);
    cr_assert(strstr(err.msg, "missing"), "%s", err.msg);
}

/* Every entry under prefix, over all pages. */
static void list_all(const char *prefix, char out[][64], size_t *n, unsigned *pages)
{
    char *token = NULL;
    *n = 0;
    *pages = 0;
    for (;;) {
        store_listing l;
        sv_error err;
        cr_assert_eq(store_list_page(mem_store_base(m), prefix, "/", token, NULL, &l, &err), STORE_OK);
        (*pages)++;
        for (size_t i = 0; i < l.n_prefixes; i++)
            snprintf(out[(*n)++], 64, "P:%s", l.prefixes[i]);
        for (size_t i = 0; i < l.n_objects; i++)
            snprintf(out[(*n)++], 64, "O:%s", l.objects[i].key);
        free(token);
        token = l.truncated ? strdup(l.next_token) : NULL;
        store_listing_free(&l);
        if (!token)
            break;
        cr_assert_lt(*pages, 100);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(a, b);
}

Test(mem_store, listings_in_pages)
{
    const char *keys[] = {"t/a.parquet", "t/b.parquet", "t/_delta_log/0.json", "t/_delta_log/1.json",
                          "t/p=1/x.parquet", "t/p=2/y.parquet", "t/p=2/z.parquet", "other/q"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_assert(mem_store_put(m, keys[i], "d", 1));
    const char *want[] = {"O:t/a.parquet", "O:t/b.parquet", "P:t/_delta_log/", "P:t/p=1/", "P:t/p=2/"};
    for (unsigned page = 1; page <= 6; page++) {
        mem_store_set_page_keys(m, page);
        char got[16][64];
        size_t n;
        unsigned pages;
        list_all("t/", got, &n, &pages);
        qsort(got, n, sizeof got[0], cmp_str);
        cr_assert_eq(n, 5, "page size %u: %zu entries", page, n);
        for (size_t i = 0; i < n; i++)
            cr_assert_str_eq(got[i], want[i], "page size %u", page);
        cr_assert_eq(pages, (5 + page - 1) / page + (5 % page == 0 ? 0 : 0), "page size %u: %u pages", page, pages);
    }
}

/* Completions of the shutdown test: how many, and how many with an
 * acceptable status (served, or refused because the store is going). */
static atomic_int completed, acceptable;

static void count_done(void *ud, store_status st, const char *msg)
{
    (void)ud;
    (void)msg;
    atomic_fetch_add(&completed, 1);
    if (st == STORE_OK || st == STORE_ERR_SHUTDOWN)
        atomic_fetch_add(&acceptable, 1);
}

Test(mem_store, shutdown_completes_queued_gets)
{
    /* GETs queued and the store destroyed: each completes exactly once. */
    mem_store *m2 = mem_store_create();
    cr_assert(mem_store_put(m2, "k", "xyz", 3));
    char buf[8][3];
    for (int i = 0; i < 8; i++) {
        struct iovec iov = {buf[i], 3};
        cr_assert_eq(store_get_async(mem_store_base(m2), "k", NULL, 0, 3, &iov, 1, NULL, count_done, NULL),
                     STORE_OK);
    }
    store_destroy(mem_store_base(m2));
    cr_assert_eq(atomic_load(&completed), 8);
    cr_assert_eq(atomic_load(&acceptable), 8);
}

Test(mem_store, fault_store_injects_and_passes_through)
{
    cr_assert(mem_store_put(m, "k", "0123456789", 10));
    fault_store *f = fault_store_create(mem_store_base(m));
    object_store *s = fault_store_base(f);
    char buf[4];
    fault_plan plan = {.fail_gets = 2, .get_status = STORE_ERR_TIMEOUT, .only_from = 5, .only_to = 6};
    fault_store_set(f, &plan);
    cr_assert_eq(store_get(s, "k", NULL, 0, 4, buf, NULL), STORE_OK, "outside the range: not counted");
    cr_assert_eq(store_get(s, "k", NULL, 4, 4, buf, NULL), STORE_ERR_TIMEOUT);
    cr_assert_eq(store_get(s, "k", NULL, 5, 1, buf, NULL), STORE_ERR_TIMEOUT);
    cr_assert_eq(store_get(s, "k", NULL, 5, 1, buf, NULL), STORE_OK, "two faults, then none");
    plan = (fault_plan){.refuse_gets = 1};
    fault_store_set(f, &plan);
    struct iovec iov = {buf, 1};
    cr_assert_neq(store_get_async(s, "k", NULL, 0, 1, &iov, 1, NULL, count_done, NULL), STORE_OK);
    plan = (fault_plan){.fail_lists = 1};
    fault_store_set(f, &plan);
    store_listing l;
    sv_error err;
    cr_assert_eq(store_list_page(s, "", "/", NULL, NULL, &l, &err), STORE_ERR_NETWORK);
    cr_assert_eq(store_list_page(s, "", "/", NULL, NULL, &l, &err), STORE_OK);
    cr_assert_eq(l.n_objects, 1);
    store_listing_free(&l);
    cr_assert_eq(fault_store_injected(f), 4);
    store_destroy(s);
}
