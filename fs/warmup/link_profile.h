/* The mount's current connection profile (profiler/connection_profile.h),
 * shared between the warmup that measures it, the reads that refine it and
 * the views that plan with it, and the state of the warmup behind it (for
 * .sieve/profile). Copies in and out under one lock, so a reader always
 * sees a whole profile. */
#ifndef SIEVE_LINK_PROFILE_H
#define SIEVE_LINK_PROFILE_H
#include <stdbool.h>
#include <stdint.h>

#include "connection_profile.h"
#include "sv_cancel.h"

typedef struct link_profile link_profile;

typedef enum {
    LINK_WARMUP_NONE = 0, /* not run (--warmup none, or a zero budget) */
    LINK_WARMUP_RUNNING,
    LINK_WARMUP_DONE,     /* ended with a valid profile */
    LINK_WARMUP_FAILED,   /* ended without one: no data file, requests failed, cancelled */
} link_warmup_state;

/* "none", "running", "done", "failed". */
const char *link_warmup_state_name(link_warmup_state st);

link_profile *link_profile_create(void);
void link_profile_destroy(link_profile *lp);

/* Copy the current profile into *out; false (and *out invalid) when none has
 * been measured. lp may be NULL (no profile). */
bool link_profile_get(link_profile *lp, conn_profile *out);
/* Replace the current profile. */
void link_profile_set(link_profile *lp, const conn_profile *p);
/* Fold one uncontended GET into the current profile (profile_refine.h), under
 * the lock; false when there is no measured profile or the sample is refused. */
bool link_profile_refine(link_profile *lp, uint64_t bytes, double seconds, int64_t now_s);

/* The warmup's state; LINK_WARMUP_NONE for a NULL lp. */
link_warmup_state link_profile_state(link_profile *lp);
void link_profile_set_state(link_profile *lp, link_warmup_state st);
/* Profile and state read together (one lock), as .sieve/profile shows them. */
link_warmup_state link_profile_snapshot(link_profile *lp, conn_profile *out);

/* How the mount reruns its warmup (starts it in the background; the warmup
 * sets the state as it runs and ends). Set once, before the mount serves. */
typedef void (*link_retry_fn)(void *ud);
void link_profile_set_retry(link_profile *lp, link_retry_fn fn, void *ud);
/* For a query about to plan without a profile. When the warmup ended
 * without one and has not been retried, retry it, once per mount; a query
 * that finds that retry running waits for it too. Waits until it ends or
 * tok gives up (then the query goes on without a profile). True and *out
 * when a profile exists at the end. A warmup still running its first time
 * is not waited for: the mount answers at once, and so do its queries. */
bool link_profile_retry_once(link_profile *lp, const sv_cancel *tok, conn_profile *out);
/* Warmup runs started so far: 0 (none), 1, 2 once retried. */
unsigned link_profile_runs(link_profile *lp);

#endif
