/* The cost model (profiler/cost_model): prices from a connection profile,
 * the time of a plan, the byte currency the page planner uses, and the
 * decisions over a grid of links and page layouts (docs/cost_model.md). */
#include "connection_profile.h"
#include "cost_model.h"
#include "page_plan.h"

#include <criterion/criterion.h>
#include <math.h>

/* A link: latency, bandwidth in Mbit/s, and a capacity curve. */
static conn_profile link_of(double latency_ms, double mbit, const capacity_point *cap, uint32_t ncap,
                            uint32_t suggested)
{
    conn_profile p = {0};
    p.valid = true;
    p.latency_s = latency_ms / 1000.0;
    p.latency_p90_s = p.latency_s * 1.1;
    p.bandwidth_Bps = mbit * 1e6 / 8;
    for (uint32_t i = 0; i < ncap && i < PROFILE_MAX_CAPACITY_POINTS; i++)
        p.capacity[p.n_capacity++] = cap[i];
    p.suggested_in_flight = suggested;
    return p;
}

/* The grid of the issue: a data centre, a region, a WAN, and a server that
 * caps requests per second whatever the link. */
/* S3 serves about 5,500 GETs per second per prefix. */
static const capacity_point dc_cap[] = {{8, 4000}, {64, 5500}, {256, 5500}};
static const capacity_point region_cap[] = {{8, 300}, {64, 2400}, {256, 8000}, {512, 9000}};
static const capacity_point wan_cap[] = {{8, 38}, {64, 300}, {256, 1000}, {512, 1300}};
static const capacity_point capped_cap[] = {{8, 38}, {64, 100}, {256, 100}, {512, 100}};

static conn_profile dc(void) { return link_of(1, 10000, dc_cap, 3, 256); }
static conn_profile region(void) { return link_of(25, 1000, region_cap, 4, 512); }
static conn_profile wan(void) { return link_of(200, 150, wan_cap, 4, 512); }
static conn_profile capped(void) { return link_of(200, 150, capped_cap, 4, 64); }
/* Loopback through the link emulator and a local S3 server on 2 cores, as a
 * mount measured it (the benchmark's `lan`). */
static const capacity_point loop_cap[] = {{8, 1442}, {32, 2793}, {128, 2716}, {256, 4249}, {512, 5039}};
static conn_profile loopback(void) { return link_of(2.8, 4619, loop_cap, 5, 512); }

Test(capacity, interpolates_and_respects_latency)
{
    conn_profile p = wan();
    cr_expect_float_eq(conn_profile_capacity_at(&p, 512), 1300, 1e-9);
    cr_expect_float_eq(conn_profile_capacity_at(&p, 1024), 1300, 1e-9); /* flat above the last */
    cr_expect_float_eq(conn_profile_capacity_at(&p, 384), 1150, 1e-9);  /* halfway 256..512 */
    cr_expect_float_eq(conn_profile_capacity_at(&p, 4), 19, 1e-9);      /* proportional below */
    /* Never more than in_flight per latency. */
    p.capacity[0].per_s = 1000;
    cr_expect_float_eq(conn_profile_capacity_at(&p, 8), 40, 1e-9);
    conn_profile none = {0};
    cr_expect_eq(conn_profile_capacity_at(&none, 64), 0.0);
    cr_expect_eq(conn_profile_capacity_at(NULL, 64), 0.0);
    cr_expect_eq(conn_profile_capacity_at(&p, 0), 0.0);
}

Test(prices, from_a_profile)
{
    conn_profile p = wan();
    cost_link l = cost_link_from_profile(&p, 0);
    cr_expect_eq(l.source, COST_SOURCE_PROFILE);
    cr_expect_eq(l.in_flight, 512);
    cr_expect_float_eq(l.byte_s, 8 / 150e6, 1e-15);
    cr_expect_float_eq(l.request_s, 1 / 1300.0, 1e-12);
    cr_expect_float_eq(l.round_s, 0.2, 1e-12);
    /* 150 Mbit/s / 1300 requests/s: a request is worth about 14.4 KB, a
     * round trip 3.75 MB. */
    cr_expect_eq(cost_request_bytes(&l), 14423);
    cr_expect_eq(cost_round_bytes(&l), 3750000);
    cr_expect(cost_link_allows_partial(&l));
    /* At a lower load a request costs more. */
    cost_link l64 = cost_link_from_profile(&p, 64);
    cr_expect_gt(cost_request_bytes(&l64), cost_request_bytes(&l));
    cr_expect_float_eq(cost_plan_time(&l, 2, 18750000, 1300), 0.4 + 1.0 + 1.0, 1e-9);
}

Test(prices, a_round_runs_at_its_own_concurrency)
{
    const conn_profile p = wan();
    const cost_link l = cost_link_from_profile(&p, 0);
    cr_expect_eq(cost_round_time(&l, 0), 0.0);
    /* 1,300 requests with 512 in flight: a second, after the latency. */
    cr_expect_float_eq(cost_round_time(&l, 1300), 0.2 + 1.0, 1e-9);
    /* 79 requests are 79 in flight, at that level's capacity (300/s at 64,
     * 1,000/s at 256: 354.7/s), not 1,300/s. */
    cr_expect_float_eq(cost_round_time(&l, 79), 0.2 + 79 / (300 + 15.0 / 192 * 700), 1e-9);
    /* Few requests: bounded by in_flight per latency, so one latency more. */
    cr_expect_float_eq(cost_round_time(&l, 4), 0.2 + 4 / 19.0, 1e-9);
    /* The override prices each request alike. */
    const cost_link o = cost_link_from_request_cost(1000);
    cr_expect_float_eq(cost_round_time(&o, 10), 10 * 1000 * 1e-9, 1e-15);
}

Test(prices, a_partial_plan_is_its_rounds_and_its_bytes)
{
    const conn_profile p = wan();
    const cost_link l = cost_link_from_profile(&p, 0);
    const uint64_t rounds[2] = {79, 1300};
    /* 18.75 MB is a second at 150 Mbit/s; each round at its own size, its
     * latency once per round, its requests overlapping the bytes. */
    const double req = (cost_round_time(&l, 79) - 0.2) + (cost_round_time(&l, 1300) - 0.2);
    cr_assert(req > 1.0, "the requests outlast a second of bytes here: %f", req);
    cr_expect_float_eq(cost_partial_time(&l, rounds, 2, 18750000), 0.4 + req, 1e-9);
    /* Five seconds of bytes outlast the requests. */
    cr_expect_float_eq(cost_partial_time(&l, rounds, 2, 5 * 18750000ull), 0.4 + 5.0, 1e-9);
    cr_expect_float_eq(cost_partial_time(&l, rounds, 1, 0), cost_round_time(&l, 79), 1e-12);
    cr_expect_eq(cost_partial_time(&l, rounds, 0, 0), 0.0);
    /* A round without requests waits no latency. */
    const uint64_t gap[3] = {79, 0, 1300};
    cr_expect_float_eq(cost_partial_time(&l, gap, 3, 18750000), 0.4 + req, 1e-9);
    /* The override prices in bytes: they add up. */
    const cost_link o = cost_link_from_request_cost(1000);
    cr_expect_float_eq(cost_partial_time(&o, rounds, 2, 5000),
                       cost_round_time(&o, 79) + cost_round_time(&o, 1300) + 5000 * o.byte_s, 1e-15);
    /* The decision compares exactly this against the whole read. */
    const double tp = cost_partial_time(&l, rounds, 2, 1000);
    cr_expect(cost_file_pays_rounds(&l, rounds, 2, 1000, 0, (uint64_t)(tp / l.request_s / 0.9) + 1, 0.1));
    cr_expect_not(cost_file_pays_rounds(&l, rounds, 2, 1000, 0, (uint64_t)(tp / l.request_s / 0.9) - 1, 0.1));
}

Test(prices, whole_pages_hide_behind_the_readers_decoding)
{
    const conn_profile w = wan(), lo = loopback();
    const cost_link lw = cost_link_from_profile(&w, 0), ll = cost_link_from_profile(&lo, 0);
    /* 150 Mbit/s: all but 1/1 GB/s of each byte's time shows. */
    cr_expect_float_eq(cost_whole_time(&lw, 18750000, 0), 1.0 - 18750000 / COST_READER_BYTES_PER_S, 1e-9);
    cr_expect_float_eq(cost_whole_time(&lw, 0, 1300), 1.0, 1e-9);
    /* 4.6 Gbit/s: 577 MB/s against the reader's 1 GB/s. */
    cr_expect_float_eq(cost_whole_time(&ll, 70000000, 0), 70000000 * (8 / 4619e6 - 1e-9), 1e-9);
    /* A link faster than the reader: the transfer hides entirely. */
    conn_profile fast = lo;
    fast.bandwidth_Bps = 4e9;
    const cost_link lf = cost_link_from_profile(&fast, 0);
    cr_expect_eq(cost_whole_time(&lf, 70000000, 0), 0.0);
}

Test(prices, without_a_profile_nothing_is_partial)
{
    conn_profile invalid = wan();
    invalid.valid = false;
    const cost_link ls[] = {cost_link_none(), cost_link_from_profile(NULL, 0),
                            cost_link_from_profile(&invalid, 0)};
    for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++) {
        cr_expect_eq(ls[i].source, COST_SOURCE_NONE);
        cr_expect_not(cost_link_allows_partial(&ls[i]));
        cr_expect_eq(cost_request_bytes(&ls[i]), COST_REQUEST_BYTES_MAX);
        cr_expect_not(pp_worth_planning(8u << 20, true, cost_request_bytes(&ls[i]), COST_MIN_SAVING));
    }
    cr_expect_str_eq(cost_source_name(COST_SOURCE_NONE), "none");
}

Test(prices, the_override_is_the_old_byte_model)
{
    cost_link l = cost_link_from_request_cost(128u << 10);
    cr_expect_eq(l.source, COST_SOURCE_OVERRIDE);
    cr_expect_eq(cost_request_bytes(&l), 128u << 10);
    cr_expect_eq(cost_round_bytes(&l), 0); /* rounds are free */
    cost_link zero = cost_link_from_request_cost(0);
    cr_expect_eq(cost_request_bytes(&zero), 0);
    cr_expect(cost_link_allows_partial(&zero));
    cr_expect_str_eq(cost_source_name(l.source), "request-cost");
}

Test(prices, hostile_profiles_stay_finite)
{
    conn_profile p = wan();
    p.bandwidth_Bps = 0;
    cr_expect_eq(cost_link_from_profile(&p, 0).source, COST_SOURCE_NONE);
    p = wan();
    p.bandwidth_Bps = NAN;
    cr_expect_eq(cost_link_from_profile(&p, 0).source, COST_SOURCE_NONE);
    p = wan();
    p.n_capacity = 0; /* no curve: in_flight per latency bounds it */
    p.suggested_in_flight = 0;
    cost_link l = cost_link_from_profile(&p, 0);
    cr_expect_eq(l.in_flight, 1);
    cr_expect_float_eq(l.request_s, 0.2, 1e-12);
    p.latency_s = 0; /* no bound at all: requests count as free, bytes still do */
    l = cost_link_from_profile(&p, 0);
    cr_expect_eq(cost_request_bytes(&l), 0);
    p = wan();
    p.n_capacity = 200; /* more points than the array holds */
    cr_expect_float_eq(conn_profile_capacity_at(&p, 10000), 0, 1e-9 + 1e9);
}

/* A file of chunks with one page each: pages of page_kb, rows per page,
 * `selected` scattered rows per page; returns whether the partial plan pays,
 * estimated as chunk_plan does (header probe, then one request per selected
 * range closer than the request cost in bytes, two rounds). */
static bool file_pays(const conn_profile *p, uint32_t chunks, uint32_t page_kb, uint32_t rows,
                      uint32_t selected)
{
    const cost_link l = cost_link_from_profile(p, 0);
    const uint32_t rc = cost_request_bytes(&l);
    const uint64_t page = (uint64_t)page_kb << 10;
    if (!pp_worth_planning((uint32_t)page, selected > 0, rc, COST_MIN_SAVING))
        return false;
    const double per_row = (double)page / rows;
    const double gap = (double)rows / (selected ? selected : 1) * per_row;
    const uint64_t req_per_page = 1 + (selected == 0 ? 0 : gap >= cost_gap_merge(rc, COST_GAP_MERGE_MIN) ? selected : 1);
    uint64_t bytes_per_page = PP_HEADER_PROBE + (uint64_t)(selected * per_row);
    if (selected && gap < cost_gap_merge(rc, COST_GAP_MERGE_MIN))
        bytes_per_page = page; /* every gap read through */
    const uint64_t rounds[2] = {chunks, (req_per_page - 1) * chunks};
    return cost_file_pays_rounds(&l, rounds, selected ? 2 : 1, bytes_per_page * chunks, page * chunks, chunks,
                                 COST_MIN_SAVING);
}

Test(decisions, the_grid)
{
    const conn_profile d = dc(), r = region(), w = wan(), c = capped(), lo = loopback();
    /* 70 chunks of 1 MiB pages of 100,000 rows. */
    /* 0.02 % scattered: 20 rows a page. */
    cr_expect(file_pays(&w, 70, 1024, 100000, 20), "wan: 20 ranges a page pay");
    cr_expect(file_pays(&r, 70, 1024, 100000, 20), "region: 20 ranges a page pay");
    cr_expect_not(file_pays(&d, 70, 1024, 100000, 20), "a data centre link reads whole");
    cr_expect_not(file_pays(&c, 70, 1024, 100000, 20), "100 requests/s: 1,470 requests cost 15 s");
    /* 0.1 % scattered (100 rows a page): gaps of about 10 KB cost less to
     * read through than a request (14.4 KB at 1,300/s), so nothing is saved. */
    cr_expect_not(file_pays(&w, 70, 1024, 100000, 100));
    /* The same share of wider values (8 MiB pages of 100,000 rows, 84 bytes
     * a value): gaps of 84 KB are not read through, and it pays. */
    cr_expect(file_pays(&w, 70, 8192, 100000, 100));
    /* 5 % scattered: every gap is read through, nothing is saved. */
    cr_expect_not(file_pays(&w, 70, 1024, 100000, 5000));
    /* No selected row: one header request a page. */
    cr_expect(file_pays(&w, 70, 1024, 100000, 0));
    /* ... except where the link outruns the reader (10 Gbit/s against its
     * 1 GB/s): the pages' transfer hides behind its decoding, and their 70
     * header probes cost a round it would not wait for. */
    cr_expect_not(file_pays(&d, 70, 1024, 100000, 0));
    cr_expect(file_pays(&c, 70, 1024, 100000, 0));
    /* ... but not for small pages on a capped server: 70 requests at 100/s
     * against 70 x 64 KiB at 150 Mbit/s. */
    cr_expect_not(file_pays(&c, 70, 64, 10000, 0));
    /* One small chunk cannot pay for two round trips on the WAN. */
    cr_expect_not(file_pays(&w, 1, 64, 10000, 2));
    /* The benchmark's clustered 0.1 % on loopback (70 chunks of 800 KB
     * pages, 121 rows in one run): 140 requests in two rounds (about 55 ms)
     * against 56 MB arriving at 577 MB/s while the reader decodes at 1 GB/s
     * (about 41 ms): whole. The same on the WAN pays. */
    cr_expect_not(file_pays(&lo, 70, 800, 100000, 1), "loopback: the rounds cost more than the hidden transfer");
    cr_expect(file_pays(&w, 70, 800, 100000, 1));
}

Test(decisions, small_pages_are_read_whole)
{
    const uint32_t rc = 128u << 10;
    /* 2 rc <= 0.9 (size + rc)  <=>  size >= 11/9 rc */
    const uint32_t sel = (uint32_t)((11.0 / 9.0) * rc);
    cr_expect(cost_partial_may_pay(sel + 1, true, rc, COST_MIN_SAVING));
    cr_expect_not(cost_partial_may_pay(sel - 1, true, rc, COST_MIN_SAVING));
    /* rc <= 0.9 (size + rc)  <=>  size >= rc / 9 */
    const uint32_t none = rc / 9;
    cr_expect(cost_partial_may_pay(none + 1, false, rc, COST_MIN_SAVING));
    cr_expect_not(cost_partial_may_pay(none - 1, false, rc, COST_MIN_SAVING));
    cr_expect(cost_partial_may_pay(1, true, 0, COST_MIN_SAVING));
}

Test(cost_model, reads_cost_bytes_plus_requests)
{
    cr_expect_eq(cost_of_reads(0, 0, 4096), 0.0);
    cr_expect_eq(cost_of_reads(1000, 3, 4096), 1000.0 + 3 * 4096.0);
    cr_expect_eq(cost_partial_budget(100000, 0, 0.25), 75000.0);
    cr_expect_eq(cost_partial_budget(100000, 20000, 0.0), 120000.0);
}

/* The rule of docs/cost_model.md, written out here rather than taken from
 * the code under test: a partial read costs at least one request (two when
 * rows are selected: the header probe, then the values) and must save more
 * than min_saving of reading the page whole, one request plus its bytes. */
static bool reference_may_pay(uint32_t size, bool sel, uint32_t rc, double min_saving)
{
    const double least = sel ? 2.0 * rc : 1.0 * rc;
    return least <= (1.0 - min_saving) * ((double)size + (double)rc);
}

Test(cost_model, the_planner_asks_the_cost_model)
{
    unsigned checked = 0, yes = 0;
    for (uint32_t size = 1; size < (1u << 22); size = size * 3 + 7)
        for (uint32_t rc = 0; rc < (1u << 20); rc = rc * 5 + 1000)
            for (int sel = 0; sel < 2; sel++) {
                const bool want = reference_may_pay(size, sel, rc, COST_MIN_SAVING);
                cr_assert_eq(cost_partial_may_pay(size, sel, rc, COST_MIN_SAVING), want,
                             "cost model: size %u, selected %d, request cost %u", size, sel, rc);
                cr_assert_eq(pp_worth_planning(size, sel, rc, COST_MIN_SAVING), want,
                             "planner: size %u, selected %d, request cost %u", size, sel, rc);
                checked++;
                yes += want;
            }
    /* Both answers occur: the grid straddles the boundary. */
    cr_assert(yes > 0 && yes < checked, "%u of %u", yes, checked);
    /* On the boundary itself (exact in binary: min_saving 0.25), either side. */
    for (uint32_t rc = 4096; rc <= (1u << 20); rc *= 4) {
        /* selected: 2 rc <= 0.75 (size + rc)  <=>  size >= 5/3 rc */
        const uint32_t edge = (uint32_t)((5.0 * rc + 2) / 3);
        cr_expect(pp_worth_planning(edge, true, rc, 0.25), "rc %u size %u", rc, edge);
        cr_expect_not(pp_worth_planning(edge - 1, true, rc, 0.25), "rc %u size %u", rc, edge - 1);
        /* none selected: rc <= 0.75 (size + rc)  <=>  size >= rc / 3 */
        const uint32_t edge0 = (rc + 2) / 3;
        cr_expect(pp_worth_planning(edge0, false, rc, 0.25), "rc %u size %u", rc, edge0);
        cr_expect_not(pp_worth_planning(edge0 - 1, false, rc, 0.25), "rc %u size %u", rc, edge0 - 1);
    }
}

Test(cost_model, gaps_below_a_request_are_read_through)
{
    cr_expect_eq(cost_gap_merge(0, COST_GAP_MERGE_MIN), COST_GAP_MERGE_MIN);
    cr_expect_eq(cost_gap_merge(14423, COST_GAP_MERGE_MIN), 14423);
    cr_expect_eq(cost_gap_merge(100, COST_FETCH_MERGE_MIN), COST_FETCH_MERGE_MIN);
}

Test(cost_model, constants_keep_their_values)
{
    cr_expect_eq(COST_MIN_SAVING, 0.10);
    cr_expect_eq(COST_GAP_MERGE_MIN, 2u << 10);
    cr_expect_eq(COST_FETCH_MERGE_MIN, 2u << 10);
    cr_expect_eq(COST_MAX_FETCH, 8u << 20);
}
