/* The warmup: measures the link to the object store once a mount can list
 * it (or for `sievefs profile`), and turns the samples into a connection
 * profile (profiler/profile_estimate.h).
 *
 * Through the object-store interface only: walks a bounded number of
 * listing pages from the prefix (breadth first, _delta_log/ skipped) for up
 * to WARMUP_MAX_FILES large data files, of at least WARMUP_MIN_FILE bytes
 * (*.parquet first). With fewer than that (tables grown by appends are
 * mostly small files) it also takes up to WARMUP_MAX_SMALL_FILES smaller
 * ones of at least WARMUP_MIN_SMALL_FILE bytes (*.parquet first, the
 * largest seen). Then, within the time, byte and request budgets, spread
 * over the files in turn:
 *
 *   1. small ranges on warm connections (first a priming round opens them)
 *   2. small ranges on fresh connections (connect cost)
 *   3. large ranges at once (bandwidth): about WARMUP_BANDWIDTH_BYTES in
 *      ranges of up to 2 MiB, each capped at its file's size (whole small
 *      files, several in flight together; a priming round first opens a
 *      connection for each). Files holding less give a bandwidth from fewer
 *      bytes (conn_profile.bandwidth_bytes says how many); under
 *      WARMUP_MIN_BANDWIDTH_BYTES in all, the warmup does not sample
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

#define WARMUP_MIN_FILE  (4ull << 20) /* a large file: room for 2 MiB ranges */
#define WARMUP_MAX_FILES 3
/* Smaller files, taken when there are fewer than WARMUP_MAX_FILES large
 * ones: a bandwidth sample of ~8 MiB needs several of them in flight. */
#define WARMUP_MIN_SMALL_FILE  (64ull << 10)
#define WARMUP_MAX_SMALL_FILES 32
#define WARMUP_BANDWIDTH_BYTES (8ull << 20) /* the bandwidth sample's bytes in flight */
/* Less than this in all the files: a bandwidth sample would be mostly
 * latency jitter (64 KiB take 3.5 ms at 150 Mbit/s), so none is taken. */
#define WARMUP_MIN_BANDWIDTH_BYTES (1ull << 20)
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
 * False with err when it could not (the listing failed, no data file of at
 * least WARMUP_MIN_SMALL_FILE, small files holding under
 * WARMUP_MIN_BANDWIDTH_BYTES in all, cancelled, out of memory): *out
 * invalid. cancel may be NULL. */
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
