/* Deadlines and cancellation on the read path, over a store that holds every
 * GET until the test completes it (a stalled server): tokens, timed waits
 * of the block cache and of ranges fetched outside it, and what an abandoned
 * fetch still owns (its blocks, its buffers) until it completes, and that
 * giving up cancels it (store_request_opts.cancel fires). */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "object_read.h"
#include "sv_cancel.h"

#define BS (16u << 10)
#define MAX_HELD 64

/* ---- a store that never answers on its own ---------------------------------- */

typedef struct {
    struct iovec iov[8];
    size_t iovcnt;
    uint64_t offset;
    const sv_cancel *cancel; /* the request's token: this store never acts on it */
    store_get_done_fn done;
    void *ud;
} held_get;

static struct {
    object_store base;
    pthread_mutex_t lock;
    held_get held[MAX_HELD]; /* under lock */
    size_t n;                /* under lock */
} hs;

static store_status held_get_async(object_store *s, const char *key, const char *etag, uint64_t offset,
                                   uint64_t length, const struct iovec *iov, size_t iovcnt,
                                   const store_request_opts *opts, store_get_done_fn done, void *ud)
{
    (void)s, (void)key, (void)etag, (void)length;
    pthread_mutex_lock(&hs.lock);
    cr_assert_lt(hs.n, MAX_HELD);
    cr_assert_leq(iovcnt, 8);
    held_get *g = &hs.held[hs.n++];
    memcpy(g->iov, iov, iovcnt * sizeof *iov);
    g->iovcnt = iovcnt;
    g->offset = offset;
    g->cancel = opts ? opts->cancel : NULL;
    g->done = done;
    g->ud = ud;
    pthread_mutex_unlock(&hs.lock);
    return STORE_OK;
}

/* Complete every held GET: byte i of the object is (uint8_t)i. */
static size_t release_all(store_status st)
{
    pthread_mutex_lock(&hs.lock);
    size_t n = hs.n;
    held_get copy[MAX_HELD];
    memcpy(copy, hs.held, n * sizeof *copy);
    hs.n = 0;
    pthread_mutex_unlock(&hs.lock);
    for (size_t k = 0; k < n; k++) {
        uint64_t pos = copy[k].offset;
        for (size_t i = 0; i < copy[k].iovcnt; i++) {
            uint8_t *b = copy[k].iov[i].iov_base; /* must still be valid: the fetch owns it */
            for (size_t j = 0; j < copy[k].iov[i].iov_len; j++)
                b[j] = (uint8_t)(pos++);
        }
        copy[k].done(copy[k].ud, st, st == STORE_OK ? NULL : "held GET failed");
    }
    return n;
}

/* How many held GETs have been cancelled by their callers. */
static size_t held_cancelled(void)
{
    pthread_mutex_lock(&hs.lock);
    size_t n = 0;
    for (size_t i = 0; i < hs.n; i++)
        n += hs.held[i].cancel && sv_cancel_check(hs.held[i].cancel) != 0;
    pthread_mutex_unlock(&hs.lock);
    return n;
}

static size_t held_count(void)
{
    pthread_mutex_lock(&hs.lock);
    size_t n = hs.n;
    pthread_mutex_unlock(&hs.lock);
    return n;
}

static store_status no_head(object_store *s, const char *key, store_object_info *out, sv_error *err)
{
    (void)s, (void)key, (void)out, (void)err;
    return STORE_ERR_INVALID;
}

static store_status no_list(object_store *s, const char *prefix, const char *delimiter, const char *token,
                            const store_request_opts *opts, store_listing *out, sv_error *err)
{
    (void)s, (void)prefix, (void)delimiter, (void)token, (void)opts, (void)out, (void)err;
    return STORE_ERR_INVALID;
}

static void no_destroy(object_store *s)
{
    (void)s;
}

static const object_store_ops held_ops = {held_get_async, no_head, no_list, no_destroy, NULL};

static block_cache *cache;
static object_io *io;
static sv_stats stats;
static object_ref obj;

static void setup(void)
{
    sv_log_init(SV_LOG_ERROR, false);
    memset(&hs, 0, sizeof hs);
    hs.base.ops = &held_ops;
    pthread_mutex_init(&hs.lock, NULL);
    memset(&stats, 0, sizeof stats);
    cache = block_cache_create(BS, 16u << 20, &stats);
    io = object_io_create(&hs.base, cache, &stats, 1u << 20, 200);
    cr_assert(cache && io);
    obj = (object_ref){.id = 7, .key = strdup("t/held.bin"), .etag = "\"e\"", .size = 1u << 20};
}

static void teardown(void)
{
    release_all(STORE_ERR_SHUTDOWN);
    object_ref_free(&obj);
    object_io_destroy(io);
    block_cache_destroy(cache);
    pthread_mutex_destroy(&hs.lock);
}

TestSuite(deadlines, .init = setup, .fini = teardown);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- tokens ------------------------------------------------------------------ */

Test(deadlines, token_reasons)
{
    sv_cancel parent, t;
    sv_cancel_init(&parent, NULL, 0);
    sv_cancel_init(&t, &parent, 0);
    cr_assert_eq(sv_cancel_check(NULL), 0);
    cr_assert_eq(sv_cancel_check(&t), 0, "no deadline: never expires");
    sv_cancel_fire(&t, EINTR);
    sv_cancel_fire(&t, ESHUTDOWN);
    cr_assert_eq(sv_cancel_check(&t), EINTR, "the first reason stays");
    sv_cancel_init(&t, &parent, 0);
    sv_cancel_fire(&parent, ESHUTDOWN);
    cr_assert_eq(sv_cancel_check(&t), ESHUTDOWN, "a parent's cancellation reaches the child");
    sv_cancel_init(&t, NULL, 30);
    cr_assert_eq(sv_cancel_check(&t), 0);
    usleep(40 * 1000);
    cr_assert_eq(sv_cancel_check(&t), ETIMEDOUT);
}

/* ---- the block cache ------------------------------------------------------------ */

static void *release_when_held(void *ud);

Test(deadlines, read_gives_up_at_its_deadline_and_cancels_its_fetch)
{
    uint8_t *buf = malloc(64u << 10);
    sv_cancel tok;
    object_io_cancel_init(io, &tok); /* 200 ms */
    double t0 = now_s();
    cr_assert_eq(object_read(io, &obj, 4096, 64u << 10, buf, &tok), -ETIMEDOUT);
    double took = now_s() - t0;
    cr_assert(took >= 0.19 && took < 2.0, "gave up after %.3f s (deadline 0.2 s)", took);
    cr_assert_eq(held_count(), 1, "one GET for the run of missing blocks");
    cr_assert_eq(held_cancelled(), 1, "nobody else waits for it: the GET is cancelled");
    /* The stalled server answers late anyway: the fetch still owns its
     * blocks' buffers (ASan/valgrind check the writes), but they left the
     * cache, so the next read fetches anew. */
    cr_assert_eq(release_all(STORE_OK), 1);
    size_t want = 1;
    pthread_t th;
    pthread_create(&th, NULL, release_when_held, &want);
    cr_assert_eq(object_read(io, &obj, 4096, 64u << 10, buf, NULL), (ssize_t)(64u << 10));
    pthread_join(th, NULL);
    for (size_t i = 0; i < (64u << 10); i++)
        cr_assert_eq(buf[i], (uint8_t)(4096 + i));
    free(buf);
}

typedef struct {
    sv_cancel *tok;
    int reason;
} firer;

/* Cancel once the read is waiting on its GET (a fetch is held). */
static void *fire_when_waiting(void *ud)
{
    firer *f = ud;
    while (held_count() == 0)
        usleep(1000);
    usleep(50 * 1000);
    if (f->tok)
        sv_cancel_fire(f->tok, f->reason);
    else
        object_io_shutdown(io);
    return NULL;
}

static void check_cancel_is_prompt(sv_cancel *tok, sv_cancel *fire, int reason)
{
    uint8_t buf[BS];
    firer f = {fire, reason};
    pthread_t th;
    pthread_create(&th, NULL, fire_when_waiting, &f);
    double t0 = now_s();
    ssize_t r = object_read(io, &obj, 0, sizeof buf, buf, tok);
    double took = now_s() - t0;
    pthread_join(th, NULL);
    cr_assert_eq(r, -reason);
    cr_assert_lt(took, 1.0, "cancelled after %.3f s", took);
}

Test(deadlines, interrupt_ends_the_wait_at_once)
{
    sv_cancel tok;
    sv_cancel_init(&tok, NULL, 0); /* no deadline: only the interrupt ends it */
    check_cancel_is_prompt(&tok, &tok, EINTR);
}

Test(deadlines, shutdown_ends_every_wait)
{
    sv_cancel tok;
    object_io_cancel_init(io, &tok);
    tok.deadline = (struct timespec){0, 0}; /* only the shutdown can end it */
    check_cancel_is_prompt(&tok, NULL, ESHUTDOWN);
    uint8_t buf[BS];
    object_io_cancel_init(io, &tok);
    cr_assert_eq(object_read(io, &obj, 0, sizeof buf, buf, &tok), -ESHUTDOWN, "later reads give up at once");
}

/* ---- ranges outside the cache ------------------------------------------------------ */

Test(deadlines, abandoned_ranges_keep_their_buffers_until_completed)
{
    object_range r[3];
    for (int i = 0; i < 3; i++)
        r[i] = (object_range){.off = (uint64_t)i * 100000, .len = 5000, .buf = malloc(5000)};
    sv_cancel tok;
    object_io_cancel_init(io, &tok);
    size_t started = 0;
    cr_assert_eq(object_fetch_ranges(io, &obj, r, 3, &started, &tok), -ETIMEDOUT);
    cr_assert_eq(started, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_null(r[i].buf, "range %d: the buffer is the fetch's now", i);
    cr_assert_eq(held_cancelled(), 3, "and every request of it is cancelled");
    /* Completing writes into them and frees them (valgrind/ASan check both). */
    cr_assert_eq(release_all(STORE_OK), 3);
}

static void *release_when_held(void *ud)
{
    size_t want = *(size_t *)ud;
    while (held_count() < want)
        usleep(1000);
    release_all(STORE_OK);
    return NULL;
}

Test(deadlines, ranges_that_complete_in_time_stay_the_callers)
{
    object_range r[2] = {{.off = 10, .len = 100, .buf = malloc(100)}, {.off = 5000, .len = 7, .buf = malloc(7)}};
    sv_cancel tok;
    object_io_cancel_init(io, &tok);
    size_t want = 2, started = 0;
    pthread_t th;
    pthread_create(&th, NULL, release_when_held, &want);
    cr_assert_eq(object_fetch_ranges(io, &obj, r, 2, &started, &tok), 0);
    pthread_join(th, NULL);
    cr_assert_eq(started, 2);
    cr_assert_not_null(r[0].buf);
    cr_assert_eq(r[0].buf[0], 10);
    cr_assert_eq(r[1].buf[6], (uint8_t)5006);
    free(r[0].buf);
    free(r[1].buf);
}
