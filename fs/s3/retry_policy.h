/* When and how long to wait before retrying an S3 request. Pure, FUSE-free. */
#ifndef SIEVE_RETRY_POLICY_H
#define SIEVE_RETRY_POLICY_H
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    RETRY_NO = 0,  /* permanent: report the error */
    RETRY_YES,     /* transient: back off and retry */
    RETRY_FRESH,   /* transient and the connection is suspect: retry on a new connection */
} retry_decision;

/* Outcome classes the transfer engine reports for one attempt. */
typedef enum {
    ATTEMPT_OK = 0,
    ATTEMPT_HTTP_STATUS,     /* completed with an HTTP status (see http_status) */
    ATTEMPT_TIMEOUT,         /* total or connect timeout */
    ATTEMPT_STALLED,         /* no first byte within the stall limit */
    ATTEMPT_CONN_RESET,      /* connection refused/reset/closed, recv/send error */
    ATTEMPT_SHORT_BODY,      /* fewer body bytes than promised */
    ATTEMPT_BAD_RESPONSE,    /* wrong Content-Range, garbage: the server misbehaved */
    ATTEMPT_DNS,             /* host name did not resolve */
    ATTEMPT_TLS,             /* certificate or TLS handshake failure */
} attempt_outcome;

typedef struct {
    uint32_t max_attempts;  /* total attempts including the first, >= 1 */
    uint32_t base_ms;       /* first backoff ceiling */
    uint32_t cap_ms;        /* largest backoff ceiling */
    /* No retry starts later than this after the first attempt started (0:
     * attempts alone bound it). S3 answers load with bursts of 503
     * SlowDown and asks clients to back off through them: the budget, not
     * the attempt count, decides how long a burst is survived. */
    uint32_t budget_ms;
} retry_policy;

/* Survives a 10 s burst of 503/429 with room to spare; the attempt count
 * only bounds the loop (a 3 s cap with full jitter averages 1.5 s a wait). */
#define RETRY_BUDGET_DEFAULT_MS 20000u
#define RETRY_POLICY_DEFAULT \
    ((retry_policy){ .max_attempts = 40, .base_ms = 100, .cap_ms = 3000, .budget_ms = RETRY_BUDGET_DEFAULT_MS })

/* Decide whether attempt number `attempt` (1-based, the one that just failed)
 * may be retried: 5xx, 429, timeouts, stalls, resets and short bodies are
 * transient (stalls, resets and short bodies on a fresh connection); other 4xx,
 * DNS, TLS and bad responses are permanent. Always RETRY_NO once attempt >=
 * max_attempts. */
retry_decision retry_classify(const retry_policy *p, uint32_t attempt,
                              attempt_outcome outcome, long http_status);

/* Full-jitter backoff before the retry that follows attempt `attempt`:
 * a uniform value in [0, min(cap, base * 2^(attempt-1))] milliseconds, drawn
 * from *rng_state (xorshift; any non-zero seed, a zero state is reseeded).
 * A NULL rng_state returns the ceiling. A NULL policy means
 * RETRY_POLICY_DEFAULT in both functions. */
uint32_t retry_backoff_ms(const retry_policy *p, uint32_t attempt, uint64_t *rng_state);

/* Whether a retry wait_ms from now, elapsed_ms after the first attempt
 * started, still starts within the policy's budget (always, without one). */
bool retry_within_budget(const retry_policy *p, uint64_t elapsed_ms, uint32_t wait_ms);

#endif
