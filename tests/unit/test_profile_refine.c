/* Refining the connection profile with reads that ran alone
 * (profiler/profile_refine, fs/warmup/refining_store). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "link_profile.h"
#include "mem_store.h"
#include "profile_refine.h"
#include "refining_store.h"

static conn_profile measured(void)
{
    conn_profile p = {.valid = true, .latency_s = 0.2, .latency_p90_s = 0.22, .bandwidth_Bps = 18.75e6};
    return p;
}

Test(refine, small_reads_move_the_latency_a_tenth)
{
    conn_profile p = measured();
    /* 4 KiB in 0.3 s: latency sample 0.3 - 4096 / 18.75e6. */
    cr_assert(conn_profile_refine(&p, 4096, 0.3, 77));
    const double sample = 0.3 - 4096 / 18.75e6;
    cr_expect_float_eq(p.latency_s, 0.2 + 0.1 * (sample - 0.2), 1e-12);
    cr_expect_float_eq(p.latency_p90_s / p.latency_s, 1.1, 1e-9, "the spread is kept");
    cr_expect_float_eq(p.bandwidth_Bps, 18.75e6, 1e-6);
    cr_expect_eq(p.samples, 1);
    cr_expect_eq(p.measured_at_s, 77);
    /* Many identical samples converge on them. */
    for (int i = 0; i < 200; i++)
        conn_profile_refine(&p, 4096, 0.05, 78);
    cr_expect_float_eq(p.latency_s, 0.05 - 4096 / 18.75e6, 1e-6);
}

Test(refine, large_reads_move_the_bandwidth)
{
    conn_profile p = measured();
    /* 8 MiB in 0.2 + 0.4 s: 20.97 MB/s while flowing. */
    cr_assert(conn_profile_refine(&p, 8u << 20, 0.6, 1));
    cr_expect_float_eq(p.bandwidth_Bps, 18.75e6 + 0.1 * ((8u << 20) / 0.4 - 18.75e6), 1e-3);
    cr_expect_float_eq(p.latency_s, 0.2, 1e-12);
}

Test(refine, hostile_samples_change_nothing)
{
    conn_profile p = measured();
    const conn_profile before = p;
    cr_expect_not(conn_profile_refine(&p, 4096, 0, 1));
    cr_expect_not(conn_profile_refine(&p, 4096, -1, 1));
    cr_expect_not(conn_profile_refine(&p, 4096, NAN, 1));
    cr_expect_not(conn_profile_refine(&p, 4096, INFINITY, 1));
    cr_expect_not(conn_profile_refine(&p, 0, 0.1, 1));
    cr_expect_not(conn_profile_refine(&p, 256u << 10, 0.1, 1), "between the classes");
    cr_expect_not(conn_profile_refine(&p, 8u << 20, 0.1, 1), "faster than the latency");
    cr_expect_not(conn_profile_refine(&p, 4096, 1e-9, 1), "faster than its own bytes");
    cr_expect_eq(memcmp(&p, &before, sizeof p), 0);
    conn_profile none = {0};
    cr_expect_not(conn_profile_refine(&none, 4096, 0.1, 1), "nothing measured: nothing to refine");
    cr_expect_not(conn_profile_refine(NULL, 4096, 0.1, 1));
    cr_expect_not(link_profile_refine(NULL, 4096, 0.1, 1));
}

/* -- the store wrapper -- */

/* A store that holds every GET until gate_release completes them all. */
typedef struct {
    object_store base;
    store_get_done_fn done[16];
    void *ud[16];
    int n;
} gate_store;

static store_status gate_get(object_store *s, const char *key, const char *etag, uint64_t offset, uint64_t length,
                             const struct iovec *iov, size_t iovcnt, const store_request_opts *opts,
                             store_get_done_fn done, void *ud)
{
    (void)key, (void)etag, (void)offset, (void)length, (void)iov, (void)iovcnt, (void)opts;
    gate_store *g = (gate_store *)s;
    if (g->n == 16)
        return STORE_ERR_INVALID;
    g->done[g->n] = done;
    g->ud[g->n++] = ud;
    return STORE_OK;
}

static void gate_release(gate_store *g)
{
    for (int i = 0; i < g->n; i++)
        g->done[i](g->ud[i], STORE_OK, NULL);
    g->n = 0;
}

static void gate_destroy(object_store *s) { (void)s; }

static const object_store_ops gate_ops = {.get_async = gate_get, .destroy = gate_destroy};

typedef struct {
    atomic_int done;
} waiter;

static void count_done(void *ud, store_status st, const char *msg)
{
    (void)msg;
    cr_expect_eq(st, STORE_OK);
    atomic_fetch_add(&((waiter *)ud)->done, 1);
}

Test(refining_store, reads_alone_refine_and_overlapping_ones_do_not)
{
    mem_store *m = mem_store_create();
    static char data[1 << 16];
    memset(data, 7, sizeof data);
    cr_assert(mem_store_put(m, "k", data, sizeof data));
    link_profile *lp = link_profile_create();
    conn_profile p = measured();
    p.latency_s = 1e-9; /* the in-memory store answers in microseconds */
    p.latency_p90_s = 1e-9;
    p.bandwidth_Bps = 1e12;
    link_profile_set(lp, &p);
    refining_store *r = refining_store_create(mem_store_base(m), lp), *r2;
    object_store *s = refining_store_base(r);
    char buf[4096];
    sv_error err;
    /* One after the other: each ran alone. */
    for (int i = 0; i < 5; i++)
        cr_assert_eq(store_get(s, "k", NULL, (uint64_t)i * 4096, sizeof buf, buf, &err), STORE_OK, "%s", err.msg);
    cr_expect_eq(refining_store_samples(r), 5);
    conn_profile now;
    cr_assert(link_profile_get(lp, &now));
    cr_expect_gt(now.latency_s, 1e-9, "the reads' time moved the latency");
    cr_expect_eq(now.samples, 5);
    store_destroy(s);
    /* Submitted together over a store that holds them until released: they
     * overlap, and none refines. */
    gate_store gate = {.base = {&gate_ops}};
    r2 = refining_store_create(&gate.base, lp);
    s = refining_store_base(r2);
    waiter w = {0};
    static char bufs[8][4096];
    for (int i = 0; i < 8; i++) {
        struct iovec iov = {bufs[i], sizeof bufs[i]};
        cr_assert_eq(store_get_async(s, "k", NULL, 0, sizeof bufs[i], &iov, 1, NULL, count_done, &w), STORE_OK);
    }
    gate_release(&gate);
    cr_assert_eq(atomic_load(&w.done), 8);
    cr_expect_eq(refining_store_samples(r2), 0, "overlapping reads measure the load, not the link");
    store_destroy(s);
    /* Without a measured profile nothing is folded in. */
    link_profile_set(lp, &(conn_profile){0});
    r = refining_store_create(mem_store_base(m), lp);
    s = refining_store_base(r);
    cr_assert_eq(store_get(s, "k", NULL, 0, sizeof buf, buf, &err), STORE_OK);
    cr_expect_eq(refining_store_samples(r), 0);
    store_destroy(s);
    mem_store_drain(m);
    store_destroy(mem_store_base(m));
    link_profile_destroy(lp);
}
