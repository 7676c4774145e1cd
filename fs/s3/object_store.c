#include "object_store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *store_status_name(store_status st)
{
    switch (st) {
    case STORE_OK: return "ok";
    case STORE_ERR_NOT_FOUND: return "not found";
    case STORE_ERR_NO_BUCKET: return "no such bucket";
    case STORE_ERR_ACCESS: return "access denied";
    case STORE_ERR_CHANGED: return "object changed";
    case STORE_ERR_NETWORK: return "network error";
    case STORE_ERR_TIMEOUT: return "timeout";
    case STORE_ERR_TLS: return "TLS error";
    case STORE_ERR_PROTOCOL: return "bad server response";
    case STORE_ERR_HTTP: return "HTTP error";
    case STORE_ERR_NOMEM: return "out of memory";
    case STORE_ERR_INVALID: return "invalid request";
    case STORE_ERR_SHUTDOWN: return "shutting down";
    case STORE_ERR_CANCELLED: return "cancelled";
    }
    return "unknown";
}

int store_status_errno(store_status st)
{
    switch (st) {
    case STORE_OK: return 0;
    case STORE_ERR_NOT_FOUND: return ENOENT;
    case STORE_ERR_NO_BUCKET: return ENOENT;
    case STORE_ERR_ACCESS: return EACCES;
    case STORE_ERR_NOMEM: return ENOMEM;
    case STORE_ERR_CANCELLED: return EINTR;
    default: return EIO;
    }
}

void store_listing_free(store_listing *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n_objects; i++) {
        free(l->objects[i].key);
        free(l->objects[i].etag);
    }
    free(l->objects);
    for (size_t i = 0; i < l->n_prefixes; i++)
        free(l->prefixes[i]);
    free(l->prefixes);
    free(l->next_token);
    memset(l, 0, sizeof *l);
}

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    bool done;
    store_status st;
    char msg[SV_ERROR_MSG];
} get_wait;

static void get_done(void *ud, store_status st, const char *errmsg)
{
    get_wait *w = ud;
    pthread_mutex_lock(&w->m);
    w->st = st;
    snprintf(w->msg, sizeof w->msg, "%s", errmsg ? errmsg : "");
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
}

store_status store_get(object_store *s, const char *key, const char *etag, uint64_t offset,
                       uint64_t length, void *buf, sv_error *err)
{
    get_wait w = {.done = false};
    pthread_mutex_init(&w.m, NULL);
    pthread_cond_init(&w.cv, NULL);
    struct iovec iov = {buf, (size_t)length};
    store_status st = store_get_async(s, key, etag, offset, length, &iov, 1, NULL, get_done, &w);
    if (st == STORE_OK) {
        /* The store completes every started request, on shutdown too. */
        pthread_mutex_lock(&w.m);
        while (!w.done)
            pthread_cond_wait(&w.cv, &w.m);
        pthread_mutex_unlock(&w.m);
        st = w.st;
        if (st != STORE_OK)
            sv_fail(err, st, 0, "%s", w.msg[0] ? w.msg : store_status_name(st));
    } else {
        sv_fail(err, st, 0, "GET %s: %s", key, store_status_name(st));
    }
    pthread_mutex_destroy(&w.m);
    pthread_cond_destroy(&w.cv);
    return st;
}
