/* The SDKs' retry quota; see retry_quota.h. */
#include "retry_quota.h"

void retry_quota_init(retry_quota *q)
{
    q->tokens = RETRY_QUOTA_MAX;
}

uint32_t retry_quota_cost(attempt_outcome outcome)
{
    return outcome == ATTEMPT_TIMEOUT || outcome == ATTEMPT_STALLED ? RETRY_QUOTA_TIMEOUT_COST : RETRY_QUOTA_COST;
}

bool retry_quota_take(retry_quota *q, uint32_t cost)
{
    if (q->tokens < cost)
        return false;
    q->tokens -= cost;
    return true;
}

void retry_quota_success(retry_quota *q, uint32_t paid)
{
    const uint64_t back = paid ? paid : RETRY_QUOTA_SUCCESS_REFILL;
    q->tokens = q->tokens + back > RETRY_QUOTA_MAX ? RETRY_QUOTA_MAX : (uint32_t)(q->tokens + back);
}
