/* The retry quota of the AWS SDKs' "standard" retry mode: a bucket of
 * tokens that retries spend (timeouts and stalls more than other errors)
 * and successful responses put back, so that a struggling server sees fewer
 * retries, not more, and a healthy one never notices. The SDKs fail a
 * request whose retry finds the bucket short; a filesystem read would then
 * fail at once, so here such a retry waits for tokens instead, within its
 * retry budget (retry_policy.h). Pure. */
#ifndef SIEVE_RETRY_QUOTA_H
#define SIEVE_RETRY_QUOTA_H
#include <stdbool.h>
#include <stdint.h>

#include "retry_policy.h"

#define RETRY_QUOTA_MAX 500u          /* the SDKs' initial and largest bucket */
#define RETRY_QUOTA_COST 5u           /* a retry after an error response or a reset */
#define RETRY_QUOTA_TIMEOUT_COST 10u  /* a retry after a timeout or a stall */
#define RETRY_QUOTA_SUCCESS_REFILL 1u /* a first attempt that succeeded */

typedef struct {
    uint32_t tokens;
} retry_quota;

void retry_quota_init(retry_quota *q);
/* What a retry after this outcome costs. */
uint32_t retry_quota_cost(attempt_outcome outcome);
/* Take cost tokens: false (nothing taken) when fewer are left. */
bool retry_quota_take(retry_quota *q, uint32_t cost);
/* A request succeeded: its retries' cost (paid, 0 for none) goes back, or
 * one token for a request that needed no retry; never above the maximum. */
void retry_quota_success(retry_quota *q, uint32_t paid);

#endif
