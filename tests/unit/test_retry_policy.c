/* retry_classify decision table and retry_backoff_ms bounds. */
#include "retry_policy.h"

#include <criterion/criterion.h>

static const retry_policy policy = { .max_attempts = 5, .base_ms = 100, .cap_ms = 5000 };

typedef struct {
    attempt_outcome outcome;
    long status;
    retry_decision want;
} classify_case;

Test(retry_classify, decision_table_for_first_attempt)
{
    static const classify_case cases[] = {
        { ATTEMPT_OK, 200, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 500, RETRY_YES },
        { ATTEMPT_HTTP_STATUS, 502, RETRY_YES },
        { ATTEMPT_HTTP_STATUS, 503, RETRY_YES }, /* SlowDown */
        { ATTEMPT_HTTP_STATUS, 504, RETRY_YES },
        { ATTEMPT_HTTP_STATUS, 599, RETRY_YES },
        { ATTEMPT_HTTP_STATUS, 429, RETRY_YES },
        { ATTEMPT_HTTP_STATUS, 400, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 403, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 404, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 412, RETRY_NO }, /* If-Match failed: the object changed */
        { ATTEMPT_HTTP_STATUS, 416, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 499, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 200, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 301, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 600, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, -1, RETRY_NO },
        { ATTEMPT_HTTP_STATUS, 0, RETRY_NO },
        { ATTEMPT_TIMEOUT, 0, RETRY_YES },
        { ATTEMPT_STALLED, 0, RETRY_FRESH },
        { ATTEMPT_CONN_RESET, 0, RETRY_FRESH },
        { ATTEMPT_SHORT_BODY, 206, RETRY_FRESH },
        { ATTEMPT_BAD_RESPONSE, 206, RETRY_NO },
        { ATTEMPT_DNS, 0, RETRY_NO },
        { ATTEMPT_TLS, 0, RETRY_NO },
        { (attempt_outcome)99, 0, RETRY_NO },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const retry_decision got = retry_classify(&policy, 1, cases[i].outcome, cases[i].status);
        cr_expect_eq(got, cases[i].want, "case %zu (outcome %d, status %ld): got %d want %d", i,
                     (int)cases[i].outcome, cases[i].status, (int)got, (int)cases[i].want);
    }
}

Test(retry_classify, transient_until_the_last_attempt)
{
    for (uint32_t attempt = 1; attempt < policy.max_attempts; attempt++) {
        cr_expect_eq(retry_classify(&policy, attempt, ATTEMPT_HTTP_STATUS, 503), RETRY_YES);
        cr_expect_eq(retry_classify(&policy, attempt, ATTEMPT_CONN_RESET, 0), RETRY_FRESH);
    }
    cr_expect_eq(retry_classify(&policy, 5, ATTEMPT_HTTP_STATUS, 503), RETRY_NO);
    cr_expect_eq(retry_classify(&policy, 6, ATTEMPT_TIMEOUT, 0), RETRY_NO);
    cr_expect_eq(retry_classify(&policy, UINT32_MAX, ATTEMPT_STALLED, 0), RETRY_NO);
}

Test(retry_classify, single_attempt_policy_never_retries)
{
    const retry_policy once = { .max_attempts = 1, .base_ms = 100, .cap_ms = 1000 };
    cr_expect_eq(retry_classify(&once, 1, ATTEMPT_HTTP_STATUS, 500), RETRY_NO);
    const retry_policy zero = { .max_attempts = 0, .base_ms = 100, .cap_ms = 1000 };
    cr_expect_eq(retry_classify(&zero, 1, ATTEMPT_TIMEOUT, 0), RETRY_NO);
}

Test(retry_classify, null_policy_uses_default)
{
    const uint32_t n = RETRY_POLICY_DEFAULT.max_attempts;
    cr_expect_eq(retry_classify(NULL, 1, ATTEMPT_TIMEOUT, 0), RETRY_YES);
    cr_expect_eq(retry_classify(NULL, n - 1, ATTEMPT_TIMEOUT, 0), RETRY_YES);
    cr_expect_eq(retry_classify(NULL, n, ATTEMPT_TIMEOUT, 0), RETRY_NO);
}

Test(retry_budget, default_survives_a_ten_second_burst)
{
    /* Even with the longest wait every time, the default policy keeps
     * retrying a burst of 503 for more than 10 s before either bound ends it. */
    const retry_policy p = RETRY_POLICY_DEFAULT;
    uint64_t elapsed = 0;
    uint32_t attempt = 1;
    while (retry_classify(&p, attempt, ATTEMPT_HTTP_STATUS, 503) != RETRY_NO) {
        uint32_t wait = retry_backoff_ms(&p, attempt, NULL);
        cr_assert_leq(wait, 3000, "a single wait of %u ms", wait);
        if (!retry_within_budget(&p, elapsed, wait))
            break;
        elapsed += wait;
        attempt++;
    }
    cr_expect_geq(elapsed, 10000, "retries stop after %llu ms", (unsigned long long)elapsed);
    cr_expect_leq(elapsed, p.budget_ms);
    /* And with the shortest waits (all jitter draws zero), the attempt
     * count alone would stop it; averaged draws need about 13 waits. */
    cr_expect_geq(p.max_attempts, 20u);
}

Test(retry_budget, ends_retries)
{
    const retry_policy p = {.max_attempts = 100, .base_ms = 100, .cap_ms = 1000, .budget_ms = 5000};
    cr_expect(retry_within_budget(&p, 0, 1000));
    cr_expect(retry_within_budget(&p, 4000, 1000));
    cr_expect_not(retry_within_budget(&p, 4001, 1000));
    cr_expect_not(retry_within_budget(&p, UINT32_MAX, 0));
    const retry_policy unbounded = {.max_attempts = 3, .base_ms = 100, .cap_ms = 1000};
    cr_expect(retry_within_budget(&unbounded, UINT32_MAX, 1000));
}

Test(retry_classify, attempt_zero_counts_as_first)
{
    cr_expect_eq(retry_classify(&policy, 0, ATTEMPT_TIMEOUT, 0), RETRY_YES);
}

/* Largest value seen over many draws at one attempt. */
static uint32_t max_over_draws(const retry_policy *p, uint32_t attempt, uint64_t seed,
                               uint32_t ceiling)
{
    uint64_t state = seed;
    uint32_t max = 0;
    for (int i = 0; i < 20000; i++) {
        const uint32_t v = retry_backoff_ms(p, attempt, &state);
        cr_assert_leq(v, ceiling, "attempt %u draw %d: %u > ceiling %u", attempt, i, v, ceiling);
        if (v > max)
            max = v;
    }
    return max;
}

Test(retry_backoff, within_doubling_ceiling_then_capped)
{
    /* Ceilings: 100, 200, 400, ..., 3200, then capped at 5000. */
    const uint32_t want[] = { 100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000 };
    for (uint32_t attempt = 1; attempt <= 9; attempt++) {
        const uint32_t ceiling = want[attempt - 1];
        const uint32_t max = max_over_draws(&policy, attempt, 0x1234567u + attempt, ceiling);
        /* Full jitter spreads draws over the whole range: the top 5% is reached. */
        cr_expect_geq(max, ceiling - ceiling / 20, "attempt %u: max %u far below %u", attempt,
                      max, ceiling);
    }
}

Test(retry_backoff, huge_attempt_numbers_do_not_overflow)
{
    for (uint32_t attempt = 30; attempt < 70; attempt++)
        max_over_draws(&policy, attempt, 99, 5000);
    max_over_draws(&policy, UINT32_MAX, 7, 5000);
    /* A base above 2^31 overflows 32 bits at the first doubling, and any
     * base does from attempt 33 on: an overflowed ceiling wraps to a smaller
     * number (or 0), so draws would never reach the top of the range. With
     * the cap at UINT32_MAX, the ceiling is UINT32_MAX from attempt 2 on and
     * full jitter reaches its top 5%. (A uint32_t draw is always <=
     * UINT32_MAX: only how high the draws go can show an overflow.) */
    const retry_policy big = { .max_attempts = 3, .base_ms = 3000000000u, .cap_ms = UINT32_MAX };
    for (uint32_t attempt = 2; attempt < 70; attempt += 3) {
        const uint32_t max = max_over_draws(&big, attempt, 42u + attempt, UINT32_MAX);
        cr_expect_geq(max, UINT32_MAX - UINT32_MAX / 20, "attempt %u: draws reach only %u", attempt, max);
    }
    const retry_policy huge_base = { .max_attempts = 3, .base_ms = UINT32_MAX, .cap_ms = 5000 };
    for (uint32_t attempt = 1; attempt < 70; attempt += 4) {
        const uint32_t max = max_over_draws(&huge_base, attempt, 7u + attempt, 5000);
        cr_expect_geq(max, 4750, "attempt %u: draws reach only %u of the cap 5000", attempt, max);
    }
}

Test(retry_backoff, cap_below_base_wins)
{
    const retry_policy p = { .max_attempts = 5, .base_ms = 1000, .cap_ms = 300 };
    max_over_draws(&p, 1, 5, 300);
    max_over_draws(&p, 4, 5, 300);
}

Test(retry_backoff, zero_base_or_cap_means_no_wait)
{
    const retry_policy zero_base = { .max_attempts = 5, .base_ms = 0, .cap_ms = 5000 };
    const retry_policy zero_cap = { .max_attempts = 5, .base_ms = 100, .cap_ms = 0 };
    uint64_t state = 1;
    for (uint32_t attempt = 1; attempt < 10; attempt++) {
        cr_expect_eq(retry_backoff_ms(&zero_base, attempt, &state), 0);
        cr_expect_eq(retry_backoff_ms(&zero_cap, attempt, &state), 0);
    }
}

Test(retry_backoff, deterministic_for_a_seed)
{
    uint64_t a = 0xDEADBEEFu, b = 0xDEADBEEFu, c = 0xDEADBEF0u;
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        const uint32_t va = retry_backoff_ms(&policy, 7, &a);
        const uint32_t vb = retry_backoff_ms(&policy, 7, &b);
        const uint32_t vc = retry_backoff_ms(&policy, 7, &c);
        cr_expect_eq(va, vb, "draw %d differs for the same seed", i);
        differ += va != vc;
    }
    cr_expect_gt(differ, 50, "different seeds should give different sequences");
    cr_expect_eq(a, b);
}

Test(retry_backoff, roughly_uniform)
{
    /* Mean of U[0, 5000] is 2500; 20000 draws put it well within +-100. */
    uint64_t state = 2024;
    uint64_t sum = 0;
    const int n = 20000;
    for (int i = 0; i < n; i++)
        sum += retry_backoff_ms(&policy, 10, &state);
    const double mean = (double)sum / n;
    cr_expect(mean > 2400 && mean < 2600, "mean %.1f", mean);
}

Test(retry_backoff, zero_seed_still_random)
{
    uint64_t state = 0;
    int nonzero = 0;
    for (int i = 0; i < 100; i++)
        nonzero += retry_backoff_ms(&policy, 7, &state) != 0;
    cr_expect_gt(nonzero, 90);
    cr_expect_neq(state, 0);
}

Test(retry_backoff, null_state_returns_ceiling)
{
    cr_expect_eq(retry_backoff_ms(&policy, 1, NULL), 100);
    cr_expect_eq(retry_backoff_ms(&policy, 3, NULL), 400);
    cr_expect_eq(retry_backoff_ms(&policy, 20, NULL), 5000);
    cr_expect_eq(retry_backoff_ms(NULL, 2, NULL), 200);
}
