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

#endif
