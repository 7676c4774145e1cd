/* The SDKs' retry quota (fs/s3/retry_quota.c): retries spend it, successes
 * refill it, and a storm of timeouts empties it. */
#include "retry_quota.h"

#include <criterion/criterion.h>

Test(retry_quota, starts_full_and_timeouts_cost_more)
{
    retry_quota q;
    retry_quota_init(&q);
    cr_assert_eq(q.tokens, RETRY_QUOTA_MAX);
    cr_assert_eq(retry_quota_cost(ATTEMPT_STALLED), RETRY_QUOTA_TIMEOUT_COST);
    cr_assert_eq(retry_quota_cost(ATTEMPT_TIMEOUT), RETRY_QUOTA_TIMEOUT_COST);
    cr_assert_eq(retry_quota_cost(ATTEMPT_HTTP_STATUS), RETRY_QUOTA_COST);
    cr_assert_eq(retry_quota_cost(ATTEMPT_CONN_RESET), RETRY_QUOTA_COST);
    cr_assert_gt(RETRY_QUOTA_TIMEOUT_COST, RETRY_QUOTA_COST);
}

Test(retry_quota, a_storm_of_stalls_empties_it_and_successes_bring_it_back)
{
    retry_quota q;
    retry_quota_init(&q);
    unsigned retried = 0;
    while (retry_quota_take(&q, retry_quota_cost(ATTEMPT_STALLED)))
        retried++;
    cr_assert_eq(retried, RETRY_QUOTA_MAX / RETRY_QUOTA_TIMEOUT_COST);
    cr_assert_lt(q.tokens, RETRY_QUOTA_TIMEOUT_COST);
    const uint32_t before = q.tokens;
    cr_assert_not(retry_quota_take(&q, RETRY_QUOTA_TIMEOUT_COST), "nothing taken when short");
    cr_assert_eq(q.tokens, before);
    /* ten first-attempt successes pay for one more stalled retry */
    for (uint32_t i = 0; i < RETRY_QUOTA_TIMEOUT_COST; i++)
        retry_quota_success(&q, 0);
    cr_assert(retry_quota_take(&q, RETRY_QUOTA_TIMEOUT_COST));
}

Test(retry_quota, a_retried_success_returns_what_it_paid_never_above_the_maximum)
{
    retry_quota q;
    retry_quota_init(&q);
    cr_assert(retry_quota_take(&q, 15));
    retry_quota_success(&q, 15);
    cr_assert_eq(q.tokens, RETRY_QUOTA_MAX);
    retry_quota_success(&q, 0);
    retry_quota_success(&q, 10);
    cr_assert_eq(q.tokens, RETRY_QUOTA_MAX);
}
