/* The connection profile's estimators (profiler/profile_estimate) over
 * synthetic samples, hostile ones included (all failed, zero or negative
 * durations, NaN, overlapping and nested intervals), and the capacity curve
 * lookup (conn_profile_capacity_at). */
#include "connection_profile.h"
#include "profile_estimate.h"

#include <criterion/criterion.h>
#include <math.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

Test(profile_latency, median_and_p90_of_ok_samples)
{
    latency_sample s[11];
    for (int i = 0; i < 10; i++)
        s[i] = (latency_sample){0.100 + 0.001 * i, true};
    s[10] = (latency_sample){9.0, false}; /* a failed one, slow: ignored */
    double med, p90;
    cr_assert(profile_latency(s, N_OF(s), 3, &med, &p90));
    cr_expect_float_eq(med, 0.1045, 1e-9);
    cr_expect_float_eq(p90, 0.109 - 0.001, 1e-9); /* nearest rank: the 9th of 10 */
}

Test(profile_latency, hostile_samples_are_discarded)
{
    latency_sample s[] = {{0, true}, {-1, true}, {NAN, true}, {INFINITY, true}, {0.2, false}};
    double med = 1, p90 = 1;
    cr_expect_not(profile_latency(s, N_OF(s), 1, &med, &p90));
    cr_expect_eq(med, 0);
    cr_expect_eq(p90, 0);
    cr_expect_not(profile_latency(NULL, 0, 1, &med, &p90));
    latency_sample two[] = {{0.1, true}, {0.3, true}};
    cr_expect_not(profile_latency(two, 2, 3, &med, &p90), "too few samples");
    cr_expect(profile_latency(two, 2, 2, &med, &p90));
    cr_expect_float_eq(med, 0.2, 1e-12);
    cr_expect_float_eq(p90, 0.3, 1e-12);
}

Test(profile_bandwidth, bytes_over_the_union_of_intervals)
{
    /* Two ranges delivered at once over [0, 1] and one alone over [2, 3]:
     * 3 MB in 2 s of delivery. */
    delivery_sample d[] = {{0, 1, 1000000, true}, {0, 1, 1000000, true}, {2, 3, 1000000, true}};
    cr_expect_float_eq(profile_bandwidth(d, N_OF(d)), 1.5e6, 1e-6);
    /* Overlapping and nested intervals count their time once. */
    delivery_sample o[] = {{0, 2, 1000, true}, {1, 3, 1000, true}, {1.5, 1.6, 1000, true}};
    cr_expect_float_eq(profile_bandwidth(o, N_OF(o)), 1000.0, 1e-9);
}

/* Ranges of different lengths (whole small files): each counts its own
 * bytes, and the profile says how many were behind the figure. */
Test(profile_bandwidth, each_sample_its_own_bytes)
{
    delivery_sample d[] = {{0, 1, 300000, true}, {0, 0.5, 100000, true}, {1, 2, 1600000, true},
                           {0, 9, 5000000, false}};
    cr_expect_float_eq(profile_bandwidth(d, N_OF(d)), 1e6, 1e-6);
    cr_expect_eq(profile_bandwidth_bytes(d, N_OF(d)), 2000000);
    latency_sample warm[] = {{0.1, true}, {0.1, true}, {0.1, true}};
    profile_samples ps = {.warm = warm, .n_warm = 3, .large = d, .n_large = N_OF(d)};
    conn_profile p;
    profile_estimate(&ps, &p);
    cr_expect(p.valid);
    cr_expect_eq(p.bandwidth_bytes, 2000000);
    ps.n_large = 0; /* no bandwidth: no bytes behind it */
    profile_estimate(&ps, &p);
    cr_expect_eq(p.bandwidth_bytes, 0);
}

Test(profile_bandwidth, hostile_intervals)
{
    delivery_sample d[] = {
        {1, 1, 1000, true},        /* zero duration */
        {2, 1, 1000, true},        /* ends before it starts */
        {0, NAN, 1000, true},
        {0, 1, 0, true},           /* no bytes */
        {0, 10, 1 << 20, false},   /* failed */
    };
    cr_expect_eq(profile_bandwidth(d, N_OF(d)), 0.0);
    cr_expect_eq(profile_bandwidth(NULL, 3), 0.0);
}

/* A wave kept at in_flight by a server completing per_s a second: the first
 * in_flight requests pay ramp_s more (new connections), every other one
 * takes in_flight / per_s (Little's law). */
static capacity_wave steady_wave(wave_request *r, size_t n, uint32_t in_flight, double ramp_s, double per_s)
{
    const double each = in_flight / per_s;
    for (size_t i = 0; i < n; i++) {
        double sent = i < in_flight ? 0 : ramp_s + (double)(i - in_flight) / per_s;
        r[i] = (wave_request){sent, sent + each + (i < in_flight ? ramp_s : 0), true};
    }
    return (capacity_wave){in_flight, r, n};
}

Test(profile_capacity, steady_rate_by_littles_law)
{
    wave_request r[96];
    capacity_wave w = steady_wave(r, N_OF(r), 32, 5.0, 320.0); /* a slow ramp does not count */
    cr_expect_float_eq(profile_wave_rate(&w), 320.0, 1e-6);
    /* Completions bunched into round trips do not bias it: 8 in flight over 0.2 s. */
    wave_request b[24];
    for (size_t i = 0; i < N_OF(b); i++) {
        double sent = 0.2 * (double)(i / 8) + 0.001 * (double)(i % 8);
        b[i] = (wave_request){sent, sent + 0.2, true};
    }
    capacity_wave bw = {8, b, N_OF(b)};
    cr_expect_float_eq(profile_wave_rate(&bw), 40.0, 1e-6);
    /* Sent order need not be the array's. */
    wave_request tmp = r[0];
    r[0] = r[95];
    r[95] = tmp;
    cr_expect_float_eq(profile_wave_rate(&w), 320.0, 1e-6);
    w.n = 32 + PROFILE_MIN_WAVE_SAMPLES - 1;
    cr_expect_eq(profile_wave_rate(&w), 0.0, "too few steady requests");
}

Test(profile_capacity, hostile_waves)
{
    wave_request r[40];
    capacity_wave w = steady_wave(r, N_OF(r), 8, 0.1, 80);
    for (size_t i = 8; i < 25; i++)
        r[i].ok = false;
    cr_expect_eq(profile_wave_rate(&w), 0.0, "mostly failed");
    w = steady_wave(r, N_OF(r), 8, 0.1, 80);
    for (size_t i = 0; i < N_OF(r); i++)
        r[i].done_s = r[i].sent_s;
    cr_expect_eq(profile_wave_rate(&w), 0.0, "zero durations");
    for (size_t i = 0; i < N_OF(r); i++)
        r[i].done_s = r[i].sent_s - 1;
    cr_expect_eq(profile_wave_rate(&w), 0.0, "done before sent");
    for (size_t i = 0; i < N_OF(r); i++)
        r[i] = (wave_request){NAN, NAN, true};
    cr_expect_eq(profile_wave_rate(&w), 0.0, "not numbers");
    capacity_wave none = {0, r, N_OF(r)};
    cr_expect_eq(profile_wave_rate(&none), 0.0);
    capacity_wave empty = {8, NULL, 0};
    cr_expect_eq(profile_wave_rate(&empty), 0.0);
    cr_expect_eq(profile_wave_rate(NULL), 0.0);
}

static latency_sample warm[5] = {{0.1, true}, {0.1, true}, {0.1, true}, {0.1, true}, {0.1, true}};
static latency_sample fresh[3] = {{0.2, true}, {0.2, true}, {0.5, false}};
static delivery_sample large[2] = {{0, 1, 12500000, true}, {0, 1, 12500000, true}};

Test(profile_estimate, a_whole_profile)
{
    /* Capacity grows to 256 in flight and is flat after: suggest 256. */
    static wave_request t8[24], t32[96], t128[384], t256[768], t512[1536];
    capacity_wave w[] = {
        steady_wave(t512, N_OF(t512), 512, 0.3, 2530), /* out of order: sorted by level */
        steady_wave(t8, N_OF(t8), 8, 0.1, 80),
        steady_wave(t32, N_OF(t32), 32, 0.1, 320),
        steady_wave(t128, N_OF(t128), 128, 0.1, 1280),
        steady_wave(t256, N_OF(t256), 256, 0.2, 2500),
    };
    profile_samples s = {warm, 5, fresh, 3, large, 2, w, N_OF(w)};
    conn_profile p;
    profile_estimate(&s, &p);
    cr_assert(p.valid);
    cr_expect_float_eq(p.latency_s, 0.1, 1e-12);
    cr_expect_float_eq(p.connect_s, 0.1, 1e-12);
    cr_expect_float_eq(p.bandwidth_Bps, 25e6, 1e-3);
    cr_assert_eq(p.n_capacity, 5);
    for (uint32_t i = 1; i < p.n_capacity; i++)
        cr_expect_lt(p.capacity[i - 1].in_flight, p.capacity[i].in_flight);
    cr_expect_float_eq(p.capacity[0].per_s, 80, 1e-6);
    cr_expect_eq(p.suggested_in_flight, 256);
    cr_expect_gt(p.samples, 2000);
    cr_expect_eq(p.measured_at_s, 0);
}

Test(profile_estimate, too_few_of_a_kind)
{
    conn_profile p;
    /* Everything failed. */
    latency_sample bad[4] = {{0.1, false}, {0.1, false}, {0.1, false}, {0.1, false}};
    delivery_sample badl[1] = {{0, 1, 100, false}};
    profile_samples s = {bad, 4, bad, 4, badl, 1, NULL, 0};
    profile_estimate(&s, &p);
    cr_expect_not(p.valid);
    cr_expect_eq(p.latency_s, 0);
    cr_expect_eq(p.bandwidth_Bps, 0);
    cr_expect_eq(p.n_capacity, 0);
    cr_expect_eq(p.suggested_in_flight, 0);
    cr_expect_eq(p.samples, 0);
    /* Latency without bandwidth: not a profile the cost model can use. */
    profile_samples nol = {warm, 5, NULL, 0, badl, 1, NULL, 0};
    profile_estimate(&nol, &p);
    cr_expect_not(p.valid);
    cr_expect_float_eq(p.latency_s, 0.1, 1e-12);
    /* No fresh samples: valid, connect cost 0. */
    profile_samples nof = {warm, 5, NULL, 0, large, 2, NULL, 0};
    profile_estimate(&nof, &p);
    cr_expect(p.valid);
    cr_expect_eq(p.connect_s, 0);
    /* Fresh faster than warm (noise): no negative connect cost. */
    latency_sample quick[2] = {{0.05, true}, {0.05, true}};
    profile_samples q = {warm, 5, quick, 2, large, 2, NULL, 0};
    profile_estimate(&q, &p);
    cr_expect_eq(p.connect_s, 0);
    profile_estimate(NULL, &p);
    cr_expect_not(p.valid);
}

Test(profile_estimate, one_point_per_level_and_bounded)
{
    static wave_request t[12][40];
    capacity_wave w[12];
    for (uint32_t i = 0; i < 12; i++)
        w[i] = steady_wave(t[i], 40, i < 2 ? 8 : 8 + i, 0.1, 100.0 + i);
    conn_profile p;
    profile_samples s = {warm, 5, NULL, 0, large, 2, w, 12};
    profile_estimate(&s, &p);
    cr_assert_eq(p.n_capacity, PROFILE_MAX_CAPACITY_POINTS);
    cr_expect_eq(p.capacity[0].in_flight, 8);
    cr_expect_float_eq(p.capacity[0].per_s, 101.0, 1e-6, "the better of two waves at one level");
    cr_expect_eq(p.capacity[PROFILE_MAX_CAPACITY_POINTS - 1].in_flight, 8 + 8);
}

Test(conn_profile, capacity_at_interpolates)
{
    conn_profile p = {.valid = true, .latency_s = 0.1, .n_capacity = 3,
                      .capacity = {{8, 80}, {32, 320}, {128, 400}}};
    cr_expect_float_eq(conn_profile_capacity_at(&p, 4), 40, 1e-9);
    cr_expect_float_eq(conn_profile_capacity_at(&p, 20), 200, 1e-9);
    cr_expect_float_eq(conn_profile_capacity_at(&p, 80), 360, 1e-9);
    cr_expect_float_eq(conn_profile_capacity_at(&p, 1000), 400, 1e-9);
    cr_expect_eq(conn_profile_capacity_at(&p, 0), 0);
    conn_profile empty = {0};
    cr_expect_eq(conn_profile_capacity_at(&empty, 8), 0);
    cr_expect_eq(conn_profile_capacity_at(NULL, 8), 0);
}
