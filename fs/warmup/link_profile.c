/* The mount's current connection profile; see link_profile.h. */
#include "link_profile.h"

#include "profile_refine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sv_name.h"

struct link_profile {
    pthread_mutex_t lock;    /* guards current and state */
    conn_profile current;
    link_warmup_state state;
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
    if (lp)
        pthread_mutex_init(&lp->lock, NULL);
    return lp;
}

void link_profile_destroy(link_profile *lp)
{
    if (!lp)
        return;
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
    lp->state = st;
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
