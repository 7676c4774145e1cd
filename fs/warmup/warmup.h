/* The warmup: measures the link to the object store once a mount can list
 * it (or for `sievefs profile`), and turns the samples into a connection
 * profile (profiler/profile_estimate.h).
 *
 * Through the object-store interface only: walks a bounded number of
 * listing pages from the prefix (breadth first, _delta_log/ skipped) for up
 * to WARMUP_MAX_FILES data files of at least WARMUP_MIN_FILE bytes (*.parquet
 * first), then, within the time, byte and request budgets:
 *
 *   1. small ranges on warm connections (first a priming round opens them)
 *   2. small ranges on fresh connections (connect cost)
 *   3. large ranges at once (bandwidth)
 *   4. waves of small ranges kept at each in-flight level up to
 *      max_in_flight (capacity curve)
 *
 * Every GET has one attempt (a retry would time two requests as one); a
 * failed, refused or unfinished request is a discarded sample and never an
 * error of the caller. Times are CLOCK_MONOTONIC. */
#ifndef SIEVE_WARMUP_H
#define SIEVE_WARMUP_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "connection_profile.h"
#include "link_profile.h"
#include "object_store.h"
#include "stats.h"
#include "sv_error.h"

#define WARMUP_MIN_FILE  (4ull << 20)
#define WARMUP_MAX_FILES 3
#define WARMUP_SMALL     4096u /* bytes of a small range */

/* A line of progress ("latency", "capacity at 128 in flight", ...), called
 * on the sampling thread. */
typedef void (*warmup_progress_fn)(void *ud, const char *what);

typedef struct {
    const char *prefix;      /* where data files are looked for: "" or ending in '/' */
    double budget_s;         /* sampling time after the listing walk (default 5) */
    uint64_t max_bytes;      /* bytes fetched (default 25 MiB) */
    uint32_t max_requests;   /* GETs sent (default 3200) */
    uint32_t max_in_flight;  /* the store's limit (default 512): the highest capacity level
                              * (of 8, 32, 128, 256, 512), and no phase has more out at once */
    uint32_t max_list_pages; /* listing pages walked for data files (default 16) */
    sv_stats *stats;         /* warmup_requests / warmup_bytes; may be NULL */
    warmup_progress_fn progress; /* may be NULL */
    void *progress_ud;
    /* Whether a .parquet object may be sampled (a mount: a file of no Delta
     * table, or of its table's current snapshot); NULL: every one. */
    bool (*sample_ok)(void *ud, const char *key);
    void *sample_ud;
} warmup_config;

void warmup_config_defaults(warmup_config *c);

/* Measure now, blocking (at most the listing walk plus budget_s). True when
 * sampling ran: *out is the estimate (valid or not, measured_at_s set).
 * False with err when it could not (the listing failed, no data file large
 * enough, cancelled, out of memory): *out invalid. cancel may be NULL. */
bool warmup_measure(object_store *s, const warmup_config *c, const atomic_bool *cancel,
                    conn_profile *out, sv_error *err);

/* The measurement on a background thread: lp's state is RUNNING until it
 * ends, then DONE with the profile set, or FAILED. done (may be NULL) runs
 * on that thread when it ends, with the profile (valid or not) and, on
 * failure, why. The store and lp must outlive warmup_stop. */
typedef void (*warmup_done_fn)(void *ud, bool ok, const conn_profile *p, const char *why);
typedef struct warmup warmup;
warmup *warmup_start(object_store *s, const warmup_config *c, link_profile *lp, warmup_done_fn done,
                     void *ud);
/* Cancel (the sampler stops within about 100 ms, a listing page at most its
 * request's timeout), wait for the thread and free. NULL is a no-op. */
void warmup_stop(warmup *w);

#endif
