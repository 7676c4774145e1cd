#include "sv_cancel.h"

#include <errno.h>

static struct timespec now_plus_ms(uint64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
    if (a->tv_sec != b->tv_sec)
        return a->tv_sec < b->tv_sec ? -1 : 1;
    return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

static int has_deadline(const sv_cancel *t)
{
    return t->deadline.tv_sec != 0 || t->deadline.tv_nsec != 0;
}

void sv_cancel_init(sv_cancel *t, const sv_cancel *parent, uint64_t timeout_ms)
{
    atomic_init(&t->reason, 0);
    t->parent = parent;
    t->deadline = timeout_ms ? now_plus_ms(timeout_ms) : (struct timespec){0, 0};
}

void sv_cancel_fire(sv_cancel *t, int reason)
{
    int none = 0;
    atomic_compare_exchange_strong(&t->reason, &none, reason);
}

int sv_cancel_check(const sv_cancel *t)
{
    for (const sv_cancel *p = t; p; p = p->parent) {
        int r = atomic_load(&p->reason);
        if (r)
            return r;
    }
    if (t && has_deadline(t)) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (ts_cmp(&now, &t->deadline) >= 0)
            return ETIMEDOUT;
    }
    return 0;
}

int sv_cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    int r = pthread_condattr_init(&a);
    if (r)
        return r;
    r = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (!r)
        r = pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
    return r;
}

int sv_cancel_wait(const sv_cancel *t, pthread_cond_t *c, pthread_mutex_t *m)
{
    int e = sv_cancel_check(t);
    if (e)
        return e;
    struct timespec until = now_plus_ms(SV_CANCEL_SLICE_MS);
    if (t && has_deadline(t) && ts_cmp(&t->deadline, &until) < 0)
        until = t->deadline;
    pthread_cond_timedwait(c, m, &until);
    return sv_cancel_check(t);
}
