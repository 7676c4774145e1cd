/* Refining the profile with uncontended GETs; see refining_store.h. */
#include "refining_store.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct refining_store {
    object_store base; /* first: the interface */
    object_store *inner;
    link_profile *profile;
    atomic_uint_fast64_t in_flight; /* requests submitted and not yet completed */
    atomic_uint_fast64_t starts;    /* requests ever submitted: a later start means overlap */
    atomic_uint_fast64_t samples;
};

typedef struct {
    refining_store *r;
    store_get_done_fn done;
    void *ud;
    uint64_t bytes;
    uint64_t start_seq;  /* value of starts after this one's submission */
    bool alone_at_start; /* nothing else was in flight when it was submitted */
    struct timespec t0;
} timed_get;

static double seconds_since(const struct timespec *t0, struct timespec *now)
{
    clock_gettime(CLOCK_MONOTONIC, now);
    return (double)(now->tv_sec - t0->tv_sec) + (double)(now->tv_nsec - t0->tv_nsec) / 1e9;
}

static void timed_done(void *ud, store_status st, const char *errmsg)
{
    timed_get *g = ud;
    refining_store *r = g->r;
    struct timespec now;
    const double took = seconds_since(&g->t0, &now);
    /* Alone from start to end: nothing in flight at its start, nothing
     * started after it. */
    const bool alone = g->alone_at_start && atomic_load(&r->starts) == g->start_seq;
    atomic_fetch_sub(&r->in_flight, 1);
    if (alone && st == STORE_OK) {
        struct timespec wall;
        clock_gettime(CLOCK_REALTIME, &wall);
        if (link_profile_refine(r->profile, g->bytes, took, (int64_t)wall.tv_sec))
            atomic_fetch_add(&r->samples, 1);
    }
    store_get_done_fn done = g->done;
    void *dud = g->ud;
    free(g);
    done(dud, st, errmsg);
}

static store_status refining_get_async(object_store *s, const char *key, const char *etag, uint64_t offset,
                                       uint64_t length, const struct iovec *iov, size_t iovcnt,
                                       const store_request_opts *opts, store_get_done_fn done, void *ud)
{
    refining_store *r = (refining_store *)s;
    timed_get *g = malloc(sizeof *g);
    if (!g)
        return STORE_ERR_NOMEM;
    g->r = r;
    g->done = done;
    g->ud = ud;
    g->bytes = length;
    g->alone_at_start = atomic_fetch_add(&r->in_flight, 1) == 0;
    g->start_seq = atomic_fetch_add(&r->starts, 1) + 1;
    clock_gettime(CLOCK_MONOTONIC, &g->t0);
    store_status st = store_get_async(r->inner, key, etag, offset, length, iov, iovcnt, opts, timed_done, g);
    if (st != STORE_OK) {
        atomic_fetch_sub(&r->in_flight, 1);
        free(g);
    }
    return st;
}

/* HEADs and listings are not timed, but they overlap GETs. */
static void sync_begin(refining_store *r)
{
    atomic_fetch_add(&r->in_flight, 1);
    atomic_fetch_add(&r->starts, 1);
}

static store_status refining_head(object_store *s, const char *key, store_object_info *out, sv_error *err)
{
    refining_store *r = (refining_store *)s;
    sync_begin(r);
    store_status st = store_head(r->inner, key, out, err);
    atomic_fetch_sub(&r->in_flight, 1);
    return st;
}

static store_status refining_list_page(object_store *s, const char *prefix, const char *delimiter,
                                       const char *token, const store_request_opts *opts, store_listing *out,
                                       sv_error *err)
{
    refining_store *r = (refining_store *)s;
    sync_begin(r);
    store_status st = store_list_page(r->inner, prefix, delimiter, token, opts, out, err);
    atomic_fetch_sub(&r->in_flight, 1);
    return st;
}

static void refining_destroy(object_store *s)
{
    free((refining_store *)s);
}

static const object_store_ops refining_ops = {
    .get_async = refining_get_async,
    .head = refining_head,
    .list_page = refining_list_page,
    .destroy = refining_destroy,
};

refining_store *refining_store_create(object_store *inner, link_profile *lp)
{
    refining_store *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->base.ops = &refining_ops;
    r->inner = inner;
    r->profile = lp;
    atomic_init(&r->in_flight, 0);
    atomic_init(&r->starts, 0);
    atomic_init(&r->samples, 0);
    return r;
}

object_store *refining_store_base(refining_store *r)
{
    return &r->base;
}

uint64_t refining_store_samples(refining_store *r)
{
    return atomic_load(&r->samples);
}
