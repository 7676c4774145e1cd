/* Helpers for unit tests of the core over the in-memory object store:
 * a GET's completion the test waits for. */
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

#endif
