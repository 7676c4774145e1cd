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
    refining_store *r = refining_store_create(mem_store_base(m), lp);
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
    /* Submitted together: at most the first ran alone, and only if it ended
     * before the second started. */
    waiter w = {0};
    static char bufs[8][4096];
    for (int i = 0; i < 8; i++) {
        struct iovec iov = {bufs[i], sizeof bufs[i]};
        cr_assert_eq(store_get_async(s, "k", NULL, 0, sizeof bufs[i], &iov, 1, NULL, count_done, &w), STORE_OK);
    }
    for (int i = 0; i < 5000 && atomic_load(&w.done) < 8; i++)
        usleep(1000);
    cr_assert_eq(atomic_load(&w.done), 8);
    cr_expect_leq(refining_store_samples(r), 6);
    /* Without a measured profile nothing is folded in. */
    link_profile_set(lp, &(conn_profile){0});
    cr_assert_eq(store_get(s, "k", NULL, 0, sizeof buf, buf, &err), STORE_OK);
    cr_expect_leq(refining_store_samples(r), 6);
    store_destroy(s);
    mem_store_drain(m);
    store_destroy(mem_store_base(m));
    link_profile_destroy(lp);
}
