/* The client's load meter (fs/s3/load_meter.c): rates over the last window,
 * minimums while little has been seen, and the wait it gives the work ahead
 * of a request. */
#include "load_meter.h"

#include <criterion/criterion.h>

#define S (1000000000ll)

Test(load_meter, nothing_seen_gives_the_minimum_rates)
{
    load_meter m;
    load_meter_init(&m);
    cr_assert_float_eq(m.answers_per_s, LOAD_METER_MIN_ANSWERS_PER_S, 1e-9);
    /* 200 requests ahead at 20/s: 10 s */
    cr_assert_eq(load_meter_wait_ms(&m, 200, 0, 60000), 10000);
    load_meter_sample(&m, 5 * S, 0, 0); /* one sample: no span yet */
    cr_assert_float_eq(m.bytes_per_s, LOAD_METER_MIN_BYTES_PER_S, 1e-9);
}

Test(load_meter, rates_over_the_window)
{
    load_meter m;
    load_meter_init(&m);
    /* 1,000 answers and 10 MB a second, sampled every 100 ms for 5 s */
    for (int i = 0; i <= 50; i++)
        load_meter_sample(&m, i * S / 10, (uint64_t)i * 100, (uint64_t)i * 1000000);
    cr_assert_float_eq(m.answers_per_s, 1000.0, 1.0);
    cr_assert_float_eq(m.bytes_per_s, 10e6, 1e4);
    /* 500 requests and 5 MB ahead: 0.5 s + 0.5 s */
    cr_assert_eq(load_meter_wait_ms(&m, 500, 5000000, 60000), 1000);
    cr_assert_eq(load_meter_wait_ms(&m, 500, 5000000, 700), 700, "capped");
}

Test(load_meter, a_server_that_slows_down_gets_longer_waits)
{
    load_meter m;
    load_meter_init(&m);
    for (int i = 0; i <= 30; i++)
        load_meter_sample(&m, i * S / 10, (uint64_t)i * 100, 0); /* 1,000/s for 3 s */
    const uint32_t fast = load_meter_wait_ms(&m, 300, 0, 60000);
    for (int i = 31; i <= 60; i++)
        load_meter_sample(&m, i * S / 10, 3000 + (uint64_t)(i - 30) * 10, 0); /* then 100/s */
    const uint32_t slow = load_meter_wait_ms(&m, 300, 0, 60000);
    cr_assert_lt(fast, 400);
    cr_assert_gt(slow, 2500, "the window forgets the fast past: %u ms", slow);
}

Test(load_meter, a_quiet_spell_falls_back_to_the_minimums)
{
    load_meter m;
    load_meter_init(&m);
    for (int i = 0; i <= 20; i++)
        load_meter_sample(&m, i * S / 10, (uint64_t)i * 1000, 0);
    load_meter_sample(&m, 10 * S, 2000, 0); /* nothing for 8 s */
    cr_assert_float_eq(m.answers_per_s, LOAD_METER_MIN_ANSWERS_PER_S, 1e-9);
}
