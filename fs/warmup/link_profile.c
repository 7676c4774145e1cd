/* The mount's current connection profile; see link_profile.h. */
#include "link_profile.h"

#include "profile_refine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sv_name.h"

struct link_profile {
    pthread_mutex_t lock;    /* guards everything below */
    pthread_cond_t changed;  /* state changed (CLOCK_MONOTONIC, for sv_cancel_wait) */
    conn_profile current;
    link_warmup_state state;
    link_retry_fn retry;     /* set once before use */
    void *retry_ud;
    bool retried;            /* the one retry has been started */
    unsigned runs;           /* warmup runs started: 0, 1, or 2 after the retry */
};

static const char *const state_names[] = {
    [LINK_WARMUP_NONE] = "none",
    [LINK_WARMUP_RUNNING] = "running",
    [LINK_WARMUP_DONE] = "done",
    [LINK_WARMUP_FAILED] = "failed",
};

const char *link_warmup_state_name(link_warmup_state st)
{
    return SV_NAME(state_names, st, "unknown");
}

link_profile *link_profile_create(void)
{
    link_profile *lp = calloc(1, sizeof *lp);
    if (lp) {
        pthread_mutex_init(&lp->lock, NULL);
        sv_cond_init(&lp->changed);
    }
    return lp;
}

void link_profile_destroy(link_profile *lp)
{
    if (!lp)
        return;
    pthread_cond_destroy(&lp->changed);
    pthread_mutex_destroy(&lp->lock);
    free(lp);
}

bool link_profile_get(link_profile *lp, conn_profile *out)
{
    link_profile_snapshot(lp, out);
    return out->valid;
}

void link_profile_set(link_profile *lp, const conn_profile *p)
{
    if (!lp)
        return;
    pthread_mutex_lock(&lp->lock);
    lp->current = *p;
    pthread_mutex_unlock(&lp->lock);
}

bool link_profile_refine(link_profile *lp, uint64_t bytes, double seconds, int64_t now_s)
{
    if (!lp)
        return false;
    pthread_mutex_lock(&lp->lock);
    bool ok = conn_profile_refine(&lp->current, bytes, seconds, now_s);
    pthread_mutex_unlock(&lp->lock);
    return ok;
}

link_warmup_state link_profile_state(link_profile *lp)
{
    if (!lp)
        return LINK_WARMUP_NONE;
    pthread_mutex_lock(&lp->lock);
    link_warmup_state st = lp->state;
    pthread_mutex_unlock(&lp->lock);
    return st;
}

void link_profile_set_state(link_profile *lp, link_warmup_state st)
{
    if (!lp)
        return;
    pthread_mutex_lock(&lp->lock);
    if (st == LINK_WARMUP_RUNNING && lp->state != LINK_WARMUP_RUNNING)
        lp->runs++;
    lp->state = st;
    pthread_cond_broadcast(&lp->changed);
    pthread_mutex_unlock(&lp->lock);
}

link_warmup_state link_profile_snapshot(link_profile *lp, conn_profile *out)
{
    memset(out, 0, sizeof *out);
    if (!lp)
        return LINK_WARMUP_NONE;
    pthread_mutex_lock(&lp->lock);
    *out = lp->current;
    link_warmup_state st = lp->state;
    pthread_mutex_unlock(&lp->lock);
    return st;
}

void link_profile_set_retry(link_profile *lp, link_retry_fn fn, void *ud)
{
    if (!lp)
        return;
    pthread_mutex_lock(&lp->lock);
    lp->retry = fn;
    lp->retry_ud = ud;
    pthread_mutex_unlock(&lp->lock);
}

bool link_profile_retry_once(link_profile *lp, const sv_cancel *tok, conn_profile *out)
{
    memset(out, 0, sizeof *out);
    if (!lp)
        return false;
    pthread_mutex_lock(&lp->lock);
    if (!lp->current.valid && lp->state == LINK_WARMUP_FAILED && !lp->retried && lp->retry) {
        lp->retried = true;
        lp->state = LINK_WARMUP_RUNNING; /* queries arriving meanwhile wait below */
        lp->runs++;
        link_retry_fn fn = lp->retry;
        void *ud = lp->retry_ud;
        pthread_mutex_unlock(&lp->lock);
        fn(ud); /* starts it; a failure to start sets FAILED */
        pthread_mutex_lock(&lp->lock);
    }
    while (lp->retried && lp->state == LINK_WARMUP_RUNNING && !lp->current.valid)
        if (sv_cancel_wait(tok, &lp->changed, &lp->lock))
            break;
    *out = lp->current;
    pthread_mutex_unlock(&lp->lock);
    return out->valid;
}

unsigned link_profile_runs(link_profile *lp)
{
    if (!lp)
        return 0;
    pthread_mutex_lock(&lp->lock);
    unsigned n = lp->runs;
    pthread_mutex_unlock(&lp->lock);
    return n;
}
