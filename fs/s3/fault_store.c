#include "fault_store.h"

#include <pthread.h>
#include <stdlib.h>

#include "sv_error.h"

struct fault_store {
    object_store base;    /* first: the interface */
    object_store *inner;
    pthread_mutex_t lock; /* guards plan and injected */
    fault_plan plan;
    uint64_t injected;
};

typedef struct {
    store_get_done_fn done;
    void *ud;
    store_status inject;
} wrapped_get;

static void wrapped_done(void *ud, store_status st, const char *errmsg)
{
    wrapped_get *w = ud;
    if (w->inject != STORE_OK) {
        st = w->inject;
        errmsg = "injected fault";
    }
    w->done(w->ud, st, errmsg);
    free(w);
}

/* Whether this GET fails, and how (lock not held). */
static store_status get_fault(fault_store *f, uint64_t offset, uint64_t length, bool *refuse)
{
    store_status st = STORE_OK;
    *refuse = false;
    pthread_mutex_lock(&f->lock);
    fault_plan *p = &f->plan;
    bool counts = p->only_to <= p->only_from || (offset < p->only_to && offset + length > p->only_from);
    if (counts && p->refuse_gets) {
        p->refuse_gets--;
        *refuse = true;
        st = STORE_ERR_NETWORK;
        f->injected++;
    } else if (counts && p->fail_gets) {
        p->fail_gets--;
        st = p->get_status ? p->get_status : STORE_ERR_NETWORK;
        f->injected++;
    }
    pthread_mutex_unlock(&f->lock);
    return st;
}

static store_status fault_get_async(object_store *s, const char *key, const char *etag, uint64_t offset,
                                    uint64_t length, const struct iovec *iov, size_t iovcnt,
                                    const store_request_opts *opts, store_get_done_fn done, void *ud)
{
    fault_store *f = (fault_store *)s;
    bool refuse;
    store_status inject = get_fault(f, offset, length, &refuse);
    if (refuse)
        return inject;
    wrapped_get *w = malloc(sizeof *w);
    if (!w)
        return STORE_ERR_NOMEM;
    *w = (wrapped_get){done, ud, inject};
    store_status st = store_get_async(f->inner, key, etag, offset, length, iov, iovcnt, opts, wrapped_done, w);
    if (st != STORE_OK)
        free(w);
    return st;
}

static store_status fault_head(object_store *s, const char *key, store_object_info *out, sv_error *err)
{
    return store_head(((fault_store *)s)->inner, key, out, err);
}

static store_status fault_list_page(object_store *s, const char *prefix, const char *delimiter, const char *token,
                                    const store_request_opts *opts, store_listing *out, sv_error *err)
{
    fault_store *f = (fault_store *)s;
    pthread_mutex_lock(&f->lock);
    store_status st = STORE_OK;
    if (f->plan.fail_lists) {
        f->plan.fail_lists--;
        st = f->plan.list_status ? f->plan.list_status : STORE_ERR_NETWORK;
        f->injected++;
    }
    pthread_mutex_unlock(&f->lock);
    if (st != STORE_OK) {
        *out = (store_listing){0};
        return (store_status)sv_fail(err, st, 0, "listing '%s': injected fault", prefix);
    }
    return store_list_page(f->inner, prefix, delimiter, token, opts, out, err);
}

static store_status fault_put(object_store *s, const char *key, const void *body, size_t len, sv_error *err)
{
    return store_put(((fault_store *)s)->inner, key, body, len, err);
}

static void fault_destroy(object_store *s)
{
    fault_store *f = (fault_store *)s;
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static const object_store_ops fault_ops = {
    .get_async = fault_get_async,
    .head = fault_head,
    .list_page = fault_list_page,
    .put = fault_put,
    .destroy = fault_destroy,
};

fault_store *fault_store_create(object_store *inner)
{
    fault_store *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->base.ops = &fault_ops;
    f->inner = inner;
    pthread_mutex_init(&f->lock, NULL);
    return f;
}

object_store *fault_store_base(fault_store *f)
{
    return &f->base;
}

void fault_store_set(fault_store *f, const fault_plan *plan)
{
    pthread_mutex_lock(&f->lock);
    f->plan = *plan;
    pthread_mutex_unlock(&f->lock);
}

uint64_t fault_store_injected(fault_store *f)
{
    pthread_mutex_lock(&f->lock);
    uint64_t n = f->injected;
    pthread_mutex_unlock(&f->lock);
    return n;
}
