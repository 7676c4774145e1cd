/* The mount's current connection profile; see link_profile.h. */
#include "link_profile.h"

#include "profile_refine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct link_profile {
    pthread_mutex_t lock; /* guards current */
    conn_profile current;
};

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
    memset(out, 0, sizeof *out);
    if (!lp)
        return false;
    pthread_mutex_lock(&lp->lock);
    *out = lp->current;
    pthread_mutex_unlock(&lp->lock);
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
