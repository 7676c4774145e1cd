/* Helpers for unit tests of the core over the in-memory object store:
 * waiting for async GETs, and walking paths of an sv_fs. */
#ifndef SIEVE_TEST_CORE_FIXTURE_H
#define SIEVE_TEST_CORE_FIXTURE_H
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "object_store.h"

/* A GET's completion, waited for by the test. */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool done;
    store_status st;
    char msg[SV_ERROR_MSG];
} test_get;

static inline void test_get_done(void *ud, store_status st, const char *msg)
{
    test_get *g = ud;
    pthread_mutex_lock(&g->m);
    g->st = st;
    snprintf(g->msg, sizeof g->msg, "%s", msg ? msg : "");
    g->done = true;
    pthread_cond_signal(&g->c);
    pthread_mutex_unlock(&g->m);
}

/* GET [off, off+len) of key (If-Match etag when not NULL) into buf and wait. */
static inline store_status test_get_range(object_store *s, const char *key, const char *etag, uint64_t off,
                                          uint64_t len, void *buf)
{
    test_get g = {.done = false};
    pthread_mutex_init(&g.m, NULL);
    pthread_cond_init(&g.c, NULL);
    struct iovec iov = {buf, (size_t)len};
    store_status st = store_get_async(s, key, etag, off, len, &iov, 1, NULL, test_get_done, &g);
    if (st == STORE_OK) {
        pthread_mutex_lock(&g.m);
        while (!g.done)
            pthread_cond_wait(&g.c, &g.m);
        pthread_mutex_unlock(&g.m);
        st = g.st;
    }
    pthread_mutex_destroy(&g.m);
    pthread_cond_destroy(&g.c);
    return st;
}

#endif
