/* The warmup's sampler (fs/warmup/warmup.c) against the in-memory store:
 * mem_store adds no latency, so this tests the plumbing (which files, the
 * budgets, failures never failing the caller, the background state), not
 * the figures; tests/e2e/test_profile.py measures a real link. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault_store.h"
#include "link_profile.h"
#include "mem_store.h"
#include "warmup.h"

static mem_store *m;

static void put_size(const char *key, size_t len)
{
    unsigned char *b = malloc(len);
    cr_assert_not_null(b);
    for (size_t i = 0; i < len; i++)
        b[i] = (unsigned char)(i * 31 + 7);
    cr_assert(mem_store_put(m, key, b, len));
    free(b);
}

static void setup(void)
{
    m = mem_store_create();
    cr_assert_not_null(m);
}

static void teardown(void)
{
    store_destroy(mem_store_base(m));
}

TestSuite(warmup, .init = setup, .fini = teardown, .timeout = 60);

static void table(void)
{
    put_size("t/_delta_log/00000000000000000000.checkpoint.parquet", 5u << 20); /* never sampled */
    put_size("t/small.parquet", 1000);
    put_size("t/part=1/a.parquet", 4u << 20);
    put_size("t/part=2/b.parquet", (4u << 20) + 12345);
}

static warmup_config quick(void)
{
    warmup_config c;
    warmup_config_defaults(&c);
    c.prefix = "t/";
    c.budget_s = 2.0;
    return c;
}

Test(warmup, measures_within_its_budgets)
{
    table();
    sv_stats stats = {0};
    warmup_config c = quick();
    c.stats = &stats;
    conn_profile p;
    sv_error err = {0};
    cr_assert(warmup_measure(mem_store_base(m), &c, NULL, &p, &err), "%s", err.msg);
    mem_store_drain(m);
    mem_store_counts n = mem_store_counts_now(m);
    cr_expect_gt(n.gets, 0);
    cr_expect_leq(n.gets, c.max_requests);
    cr_expect_leq(n.get_bytes, c.max_bytes);
    cr_expect_eq(STAT_GET(&stats, warmup_requests), n.gets);
    cr_expect_eq(STAT_GET(&stats, warmup_bytes), n.get_bytes, "%llu vs %llu", (unsigned long long)STAT_GET(&stats, warmup_bytes), (unsigned long long)n.get_bytes);
    cr_expect_gt(p.samples, 0);
    cr_expect_gt(p.measured_at_s, 0);
    cr_expect_gt(p.latency_s, 0, "mem_store is fast, but not instant");
    cr_expect_leq(p.latency_s, p.latency_p90_s);
    for (uint32_t i = 0; i < p.n_capacity; i++)
        cr_expect_leq(p.capacity[i].in_flight, 512);
}

Test(warmup, request_and_level_limits)
{
    table();
    warmup_config c = quick();
    c.max_requests = 60;
    c.max_in_flight = 32;
    conn_profile p;
    sv_error err = {0};
    cr_assert(warmup_measure(mem_store_base(m), &c, NULL, &p, &err), "%s", err.msg);
    mem_store_drain(m);
    cr_expect_leq(mem_store_counts_now(m).gets, 60);
    for (uint32_t i = 0; i < p.n_capacity; i++)
        cr_expect_leq(p.capacity[i].in_flight, 32);
    c.max_bytes = 1u << 20; /* no room for the large ranges: no bandwidth, no profile */
    c.max_requests = 3200;
    cr_assert(warmup_measure(mem_store_base(m), &c, NULL, &p, &err));
    cr_expect_eq(p.bandwidth_Bps, 0);
    cr_expect_not(p.valid);
}

Test(warmup, no_file_large_enough)
{
    put_size("t/small.parquet", 1000);
    put_size("t/_delta_log/big.json", 5u << 20);
    warmup_config c = quick();
    conn_profile p;
    sv_error err = {0};
    cr_expect_not(warmup_measure(mem_store_base(m), &c, NULL, &p, &err));
    cr_expect_not(p.valid);
    cr_expect(strstr(err.msg, "no object"), "%s", err.msg);
    cr_expect_eq(mem_store_counts_now(m).gets, 0);
}

Test(warmup, failed_requests_are_discarded_samples)
{
    table();
    fault_store *f = fault_store_create(mem_store_base(m));
    cr_assert_not_null(f);
    fault_plan plan = {.fail_gets = 1000000};
    fault_store_set(f, &plan);
    warmup_config c = quick();
    conn_profile p;
    sv_error err = {0};
    cr_expect(warmup_measure(fault_store_base(f), &c, NULL, &p, &err), "%s", err.msg);
    cr_expect_not(p.valid);
    cr_expect_eq(p.samples, 0);
    /* Refused at submission, too. */
    fault_plan refuse = {.refuse_gets = 1000000};
    fault_store_set(f, &refuse);
    cr_expect(warmup_measure(fault_store_base(f), &c, NULL, &p, &err));
    cr_expect_not(p.valid);
    /* A listing that fails: not measured, with the store's reason. */
    fault_plan nolist = {.fail_lists = 100};
    fault_store_set(f, &nolist);
    cr_expect_not(warmup_measure(fault_store_base(f), &c, NULL, &p, &err));
    cr_expect(strstr(err.msg, "cannot list"), "%s", err.msg);
    mem_store_drain(m);
    store_destroy(fault_store_base(f));
}

typedef struct {
    int calls;
    bool ok;
} done_seen;

static void on_done(void *ud, bool ok, const conn_profile *p, const char *why)
{
    done_seen *d = ud;
    d->calls++;
    d->ok = ok;
    cr_expect(ok ? p->valid && !why : why != NULL);
}

Test(warmup, in_the_background)
{
    table();
    link_profile *lp = link_profile_create();
    cr_assert_eq(link_profile_state(lp), LINK_WARMUP_NONE);
    warmup_config c = quick();
    done_seen d = {0};
    warmup *w = warmup_start(mem_store_base(m), &c, lp, on_done, &d);
    cr_assert_not_null(w);
    struct timespec nap = {0, 10000000};
    for (int i = 0; i < 1000 && link_profile_state(lp) == LINK_WARMUP_RUNNING; i++)
        nanosleep(&nap, NULL);
    link_warmup_state st = link_profile_state(lp);
    warmup_stop(w);
    cr_expect(st == LINK_WARMUP_DONE || st == LINK_WARMUP_FAILED, "%s", link_warmup_state_name(st));
    cr_expect_eq(d.calls, 1);
    conn_profile p;
    cr_expect_eq(link_profile_get(lp, &p), st == LINK_WARMUP_DONE);
    cr_expect_eq(d.ok, st == LINK_WARMUP_DONE);
    link_profile_destroy(lp);
    mem_store_drain(m);
}

Test(warmup, stopped_at_once)
{
    table();
    link_profile *lp = link_profile_create();
    warmup_config c = quick();
    c.budget_s = 30; /* the cancel, not the budget, ends it */
    time_t t0 = time(NULL);
    warmup *w = warmup_start(mem_store_base(m), &c, lp, NULL, NULL);
    cr_assert_not_null(w);
    warmup_stop(w);
    cr_expect_leq(time(NULL) - t0, 5);
    cr_expect_neq(link_profile_state(lp), LINK_WARMUP_RUNNING);
    link_profile_destroy(lp);
    mem_store_drain(m); /* requests abandoned by the cancel still complete */
}
