/* Retry classification and full-jitter exponential backoff. */
#include "retry_policy.h"

#include <stddef.h>

/* A NULL policy or nonsense fields fall back to sane values instead of
 * dividing by zero or retrying forever. */
static retry_policy effective_policy(const retry_policy *p)
{
    retry_policy eff = p ? *p : RETRY_POLICY_DEFAULT;
    if (eff.max_attempts == 0)
        eff.max_attempts = 1;
    return eff;
}

static retry_decision classify_http_status(long status)
{
    if (status == 429)
        return RETRY_YES; /* throttled: SlowDown / TooManyRequests */
    if (status >= 500 && status <= 599)
        return RETRY_YES;
    return RETRY_NO; /* other 4xx, and 1xx-3xx or garbage statuses, will not change on retry */
}

retry_decision retry_classify(const retry_policy *p, uint32_t attempt,
                              attempt_outcome outcome, long http_status)
{
    const retry_policy eff = effective_policy(p);
    if (attempt == 0)
        attempt = 1; /* the first attempt is attempt 1; treat 0 the same */
    if (attempt >= eff.max_attempts)
        return RETRY_NO;

    switch (outcome) {
    case ATTEMPT_OK:
        return RETRY_NO;
    case ATTEMPT_HTTP_STATUS:
        return classify_http_status(http_status);
    case ATTEMPT_TIMEOUT:
        return RETRY_YES;
    case ATTEMPT_STALLED:
    case ATTEMPT_CONN_RESET:
    case ATTEMPT_SHORT_BODY:
        /* The connection itself is the likely culprit: do not reuse it. */
        return RETRY_FRESH;
    case ATTEMPT_BAD_RESPONSE:
    case ATTEMPT_DNS:
    case ATTEMPT_TLS:
        return RETRY_NO;
    }
    return RETRY_NO; /* an outcome value outside the enum */
}

/* Backoff ceiling for the retry after `attempt`: min(cap, base * 2^(attempt-1)),
 * computed without overflowing however large attempt is. */
static uint64_t backoff_ceiling_ms(const retry_policy *p, uint32_t attempt)
{
    const uint64_t base = p->base_ms;
    const uint64_t cap = p->cap_ms;
    if (base == 0 || cap == 0)
        return 0;
    const uint32_t doublings = attempt > 0 ? attempt - 1 : 0;
    /* base < 2^32, so base << 31 still fits; past that the cap always wins. */
    if (doublings >= 32)
        return cap;
    const uint64_t grown = base << doublings;
    return grown < cap ? grown : cap;
}

/* xorshift64* (Marsaglia/Vigna): the state update is plain xorshift64, the
 * multiply scrambles the low bits that the modulo below consumes. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    if (x == 0)
        x = 0x9E3779B97F4A7C15u; /* zero is xorshift's fixed point: reseed */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x * 0x2545F4914F6CDD1Du;
}

bool retry_within_budget(const retry_policy *p, uint64_t elapsed_ms, uint32_t wait_ms)
{
    const retry_policy eff = effective_policy(p);
    return eff.budget_ms == 0 || elapsed_ms + wait_ms <= eff.budget_ms;
}

uint32_t retry_backoff_ms(const retry_policy *p, uint32_t attempt, uint64_t *rng_state)
{
    const retry_policy eff = effective_policy(p);
    const uint64_t ceiling = backoff_ceiling_ms(&eff, attempt);
    if (ceiling == 0)
        return 0;
    if (!rng_state)
        return (uint32_t)ceiling; /* no randomness supplied: the conservative choice */
    /* ceiling < 2^32, so the modulo bias over 64 random bits is below 2^-32. */
    return (uint32_t)(next_random(rng_state) % (ceiling + 1));
}
