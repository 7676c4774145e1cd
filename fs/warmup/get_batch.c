/* A batch of timed ranged GETs; see get_batch.h. */
#include "get_batch.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define POLL_NS 100000000 /* waits wake this often to see a cancel */

typedef struct {
    get_batch *b;
    /* Set before the run, read-only after. */
    const char *key, *etag;
    uint64_t offset, length, buf_offset;
    bool fresh;
    /* Guarded by b->lock once the run starts. */
    int64_t sent_ns, done_ns;
    bool finished;
    bool went_out; /* the store's: set before done runs (store_request_opts.sent) */
    store_status st;
} slot;

struct get_batch {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* a request finished (CLOCK_MONOTONIC) */
    int refs;            /* guarded by lock: the caller and each request out */
    uint32_t in_flight;  /* guarded by lock */
    size_t n;
    slot *slots;
    unsigned char *buf;
    uint64_t buf_bytes;
    sv_stats *stats;
    /* Fired when the runner leaves with requests out (its deadline or a
     * cancel): the store drops the queued ones and cuts off the rest.
     * Here, not on the runner's stack: the requests point to it. */
    sv_cancel cancel;
};

int64_t get_batch_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void batch_free(get_batch *b)
{
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->lock);
    free(b->slots);
    free(b->buf);
    free(b);
}

get_batch *get_batch_new(size_t n, uint64_t buf_bytes, sv_stats *stats)
{
    get_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->slots = calloc(n ? n : 1, sizeof *b->slots);
    b->buf = malloc(buf_bytes ? buf_bytes : 1);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&b->lock, NULL);
    sv_cancel_init(&b->cancel, NULL, 0);
    b->refs = 1;
    b->n = n;
    b->buf_bytes = buf_bytes;
    b->stats = stats;
    if (!b->slots || !b->buf) {
        batch_free(b);
        return NULL;
    }
    return b;
}

void get_batch_set(get_batch *b, size_t i, const char *key, const char *etag, uint64_t offset,
                   uint64_t length, uint64_t buf_offset, bool fresh)
{
    if (i >= b->n)
        return;
    slot *q = &b->slots[i];
    q->b = b;
    q->key = key;
    q->etag = etag;
    q->offset = offset;
    q->length = length;
    q->buf_offset = buf_offset;
    q->fresh = fresh;
}

void get_batch_release(get_batch *b)
{
    pthread_mutex_lock(&b->lock);
    bool last = --b->refs == 0;
    pthread_mutex_unlock(&b->lock);
    if (last)
        batch_free(b);
}

static void on_get_done(void *ud, store_status st, const char *errmsg)
{
    (void)errmsg;
    slot *q = ud;
    get_batch *b = q->b;
    const int64_t t = get_batch_now_ns();
    pthread_mutex_lock(&b->lock);
    q->done_ns = t;
    q->st = st;
    q->finished = true;
    b->in_flight--;
    /* Counted before the reference goes: after it, the caller may free b. */
    if (st == STORE_OK && b->stats)
        STAT_ADD(b->stats, warmup_bytes, q->length);
    /* Counted once the store has sent it (a request abandoned at the
     * warmup's deadline, or completed by shutdown, may never have gone out). */
    if (q->went_out && b->stats)
        STAT_ADD(b->stats, warmup_requests, 1);
    bool last = --b->refs == 0;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
    if (last)
        batch_free(b);
}

static bool cancelled(const atomic_bool *cancel)
{
    return cancel && atomic_load(cancel);
}

int64_t get_batch_run(get_batch *b, object_store *s, uint32_t conc, int64_t submit_by, int64_t done_by,
                      const atomic_bool *cancel)
{
    int64_t first = get_batch_now_ns();
    size_t next = 0;
    /* One attempt: a retry would time two requests as one. Low priority:
     * a reader's demand reads go first. */
    store_request_opts opts = {.max_attempts = 1, .priority = STORE_PRIO_PREFETCH}; /* readers first */
    pthread_mutex_lock(&b->lock);
    for (;;) {
        int64_t t = get_batch_now_ns();
        bool stop = cancelled(cancel);
        while (next < b->n && b->in_flight < conc && t < submit_by && !stop) {
            slot *q = &b->slots[next++];
            if (!q->key || q->length == 0 || q->buf_offset > b->buf_bytes ||
                q->length > b->buf_bytes - q->buf_offset) {
                q->finished = true;
                q->st = STORE_ERR_INVALID;
                continue;
            }
            q->sent_ns = t;
            b->refs++;
            b->in_flight++;
            if (next == 1)
                first = t;
            pthread_mutex_unlock(&b->lock);
            struct iovec iov = {b->buf + q->buf_offset, (size_t)q->length};
            opts.fresh_connection = q->fresh;
            opts.cancel = &b->cancel;
            opts.sent = &q->went_out;
            store_status st = store_get_async(s, q->key, q->etag, q->offset, q->length, &iov, 1, &opts,
                                              on_get_done, q);
            pthread_mutex_lock(&b->lock);
            if (st != STORE_OK) {
                /* Refused: done will not be called. */
                q->finished = true;
                q->st = st;
                b->in_flight--;
                b->refs--;
            }
            t = get_batch_now_ns();
        }
        if (b->in_flight == 0 && (next == b->n || t >= submit_by || stop))
            break;
        if (t >= done_by || stop) {
            /* Nobody will look at the rest: the store drops or cuts them
             * off, and each drops its reference. */
            sv_cancel_fire(&b->cancel, stop ? ECANCELED : ETIMEDOUT);
            break;
        }
        int64_t wake = t + POLL_NS < done_by ? t + POLL_NS : done_by;
        struct timespec ts = {wake / 1000000000, wake % 1000000000};
        pthread_cond_timedwait(&b->cond, &b->lock, &ts);
    }
    pthread_mutex_unlock(&b->lock);
    return first;
}

bool get_batch_result(get_batch *b, size_t i, int64_t *sent_ns, int64_t *done_ns)
{
    *sent_ns = *done_ns = 0;
    if (i >= b->n)
        return false;
    pthread_mutex_lock(&b->lock);
    const slot *q = &b->slots[i];
    bool ok = q->finished && q->st == STORE_OK;
    *sent_ns = q->sent_ns;
    *done_ns = q->finished ? q->done_ns : 0;
    pthread_mutex_unlock(&b->lock);
    return ok;
}
