/* S3 client: a transfer thread drives one curl multi handle.
 *
 * Ownership and locking: the client owns the multi handle and every request
 * that has been handed to the transfer thread. `lock` guards only the
 * submission queue and the shutdown flag; the limits and deadlines are
 * atomics any thread may set; everything else (active and retry lists,
 * counters, curl handles, epoll) is touched by the transfer thread alone.
 * One HTTP exchange (setup, callbacks, validation) is s3_request.c.
 *
 * The loop: curl_multi_socket_action over epoll, so one event costs work
 * for the sockets that have it, not for every request in flight. An eventfd
 * wakes it for submissions, limit changes and shutdown; submitters write it
 * only when no wake is pending. Deadlines are checked by a sweep over the
 * active requests a few times per the shortest deadline, not per event.
 *
 * Scheduling: at most in_flight_limit requests hold a slot (in flight or
 * backing off before a retry); waiting ones sit in a request_queue (demand,
 * plan, prefetch; round-robin between owners). A request that would need a
 * new connection waits while max_connecting set-ups are pending. */
#include "s3_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "load_meter.h"
#include "log.h"
#include "request_queue.h"
#include "retry_quota.h"
#include "s3_request.h"

#define DEFAULT_IN_FLIGHT 32u
#define DEFAULT_CONNECTING 64u
#define DEFAULT_FIRST_BYTE_MS 10000u
#define DEFAULT_PROGRESS_WINDOW_MS 10000u
#define DEFAULT_MIN_BODY_RATE 1024u
#define DEFAULT_BODY_SLACK_MS 10000u
#define EPOLL_BATCH 256
/* Idle loop wake-up: nothing is due, but a lost wake costs at most this. */
#define IDLE_WAIT_MS 1000
/* Deadline sweeps: this many per shortest deadline, within these bounds. */
#define SWEEPS_PER_DEADLINE 8
#define SWEEP_MIN_MS 10
#define SWEEP_MAX_MS 250
/* The most a first-byte deadline waits for the work ahead of an attempt
 * (load_meter.h); a reader's --read-timeout bounds its read anyway. */
#define LOAD_WAIT_CAP_MS 30000u
/* How often a retry waiting for the quota looks again (successes refill it). */
#define QUOTA_POLL_MS 50

struct s3_client {
    object_store store; /* first: the object-store interface */
    pthread_t thread;
    bool thread_started;
    int wake_fd;             /* eventfd; written by any thread, read by the transfer thread */
    atomic_bool wake_pending; /* lock-free: a wake is already on its way */

    pthread_mutex_t lock;  /* guards queue and the writes of stopping */
    request_queue queue;   /* guarded by lock */
    atomic_bool stopping;  /* written under lock (submit checks it there), read lock-free */

    /* Set from any thread; read by the transfer thread (atomics). */
    atomic_uint in_flight_limit;
    atomic_uint first_byte_ms, progress_window_ms, min_body_rate, body_slack_ms;

    /* Transfer-thread only. */
    CURLM *multi;
    int epfd;
    s3_request *active; /* doubly linked */
    unsigned n_active;
    s3_request *retrying; /* singly linked, unsorted; each still holds its slot */
    unsigned n_retrying;
    unsigned n_awaiting_connection; /* active, curl has no connection for it yet */
    unsigned n_connected;           /* active with a connection */
    unsigned sockets_open;          /* curl's connection sockets, pooled ones included */
    unsigned pool_size;             /* what CURLMOPT_MAXCONNECTS is set to */
    CURL **free_easy;               /* reset easy handles to reuse */
    size_t n_free_easy, free_easy_cap;
    int64_t curl_due_ns;            /* when curl's timer fires, -1 = none */
    int64_t next_sweep_ns;
    uint64_t rng;
    retry_quota quota;
    load_meter meter;
    uint64_t answered_ended, body_bytes_ended; /* of attempts no longer active */
    /* The work ahead of an attempt that starts now: as of the last sweep,
     * plus what started since. */
    uint64_t ahead_requests_swept, ahead_bytes_swept;
    uint64_t started_since_sweep, started_bytes_since_sweep;

    s3_endpoint ep; /* read-only after creation */
    s3_client_config cfg;
    sv_stats *stats;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

char *s3_uri_encode(const char *s, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(n * 3 + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char ch = *p;
        bool unreserved = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                          (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' ||
                          ch == '~' || (keep_slash && ch == '/');
        if (unreserved) {
            *o++ = (char)ch;
        } else {
            *o++ = '%';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 15];
        }
    }
    *o = 0;
    return out;
}

static void wake(s3_client *c)
{
    /* One write per sleep of the transfer thread, not one per submission. */
    if (!atomic_exchange(&c->wake_pending, true)) {
        uint64_t one = 1;
        ssize_t w = write(c->wake_fd, &one, sizeof one);
        (void)w; /* EAGAIN: the counter is already non-zero, the wake is pending */
    }
}

/* ---- easy handles (transfer thread) ------------------------------------------- */

static int on_prereq(void *ud, char *primary_ip, char *local_ip, int primary_port, int local_port);
static curl_socket_t on_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a);
static int on_close_socket(void *ud, curl_socket_t fd);

static CURL *easy_take(s3_client *c)
{
    if (c->n_free_easy)
        return c->free_easy[--c->n_free_easy];
    CURL *e = curl_easy_init();
    if (e) {
        s3_easy_defaults(&c->ep, e);
        curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
        curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
        curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, c);
        curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
        curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, c);
    }
    return e;
}

static void easy_give_back(s3_client *c, CURL *e)
{
    /* Reusing a handle saves its allocation and set-up (no curl_easy_reset:
     * the next attempt sets every option that differs); the pool of
     * connections is the multi handle's either way. */
    if (c->n_free_easy == c->free_easy_cap) {
        size_t cap = c->free_easy_cap ? c->free_easy_cap * 2 : 64;
        CURL **grown = cap <= S3_CLIENT_MAX_IN_FLIGHT * 2u
                           ? realloc(c->free_easy, cap * sizeof *grown)
                           : NULL;
        if (!grown) {
            curl_easy_cleanup(e);
            return;
        }
        c->free_easy = grown;
        c->free_easy_cap = cap;
    }
    c->free_easy[c->n_free_easy++] = e;
}

/* ---- scheduling (transfer thread) ------------------------------------------- */

static void finish(s3_client *c, s3_request *r, store_status st)
{
    r->result = st;
    if (st != STORE_OK) {
        if (c->stats)
            STAT_ADD(c->stats, errors, 1);
        log_debug("request failed: %s", r->errmsg);
    }
    if (r->easy) {
        easy_give_back(c, r->easy);
        r->easy = NULL;
    }
    r->done(r->ud, st, r->errmsg);
    /* The callback consumed the result; sync waiters own their own copy. */
    s3_request_free(r);
}

static void schedule_retry(s3_client *c, s3_request *r, uint32_t wait, bool fresh)
{
    r->due_ns = now_ns() + (int64_t)wait * 1000000;
    r->fresh_connection = fresh;
    r->next = c->retrying;
    c->retrying = r;
    c->n_retrying++;
    if (c->stats)
        STAT_ADD(c->stats, retries, 1);
    log_info("retrying %s in %u ms (attempt %u failed: %s)", r->key, wait, r->attempt, r->errmsg);
}

static void active_unlink(s3_client *c, s3_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        c->active = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = r->prev = NULL;
    c->n_active--;
    if (r->has_connection)
        c->n_connected--;
    else
        c->n_awaiting_connection--;
}

/* Why an attempt was cut off by a deadline (NULL: curl finished it). */
typedef struct {
    const char *what; /* "no response", "body stalled", "body too slow" */
    unsigned ms;
} cutoff;

/* An attempt ended (curl finished it or a deadline cut it off). */
static void attempt_ended(s3_client *c, s3_request *r, CURLcode rc, const cutoff *cut)
{
    curl_multi_remove_handle(c->multi, r->easy);
    active_unlink(c, r);
    c->answered_ended += r->got_headers;
    c->body_bytes_ended += r->body_bytes;
    if (!cut)
        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
    if (c->stats && r->kind == REQ_GET)
        STAT_ADD(c->stats, s3_bytes_fetched, r->received);
    /* The handle goes back now: a retry may wait seconds for its turn. */
    easy_give_back(c, r->easy);
    r->easy = NULL;

    attempt_outcome outcome;
    store_status st = STORE_OK;
    r->errmsg[0] = 0;
    if (cut) {
        outcome = ATTEMPT_STALLED;
        if (c->stats)
            STAT_ADD(c->stats, stalls, 1);
        if (r->got_headers)
            snprintf(r->errmsg, sizeof r->errmsg, "%s: %s (%" PRIu64 " of %" PRIu64
                     " bytes after %u ms)", r->key, cut->what, r->received, r->length, cut->ms);
        else
            snprintf(r->errmsg, sizeof r->errmsg, "%s: %s within %u ms", r->key, cut->what, cut->ms);
    } else if (r->aborted_bad) {
        outcome = ATTEMPT_BAD_RESPONSE;
        snprintf(r->errmsg, sizeof r->errmsg, "%s: %s", r->key, r->abort_reason);
    } else if (rc != CURLE_OK) {
        outcome = s3_outcome_from_curl(rc);
        snprintf(r->errmsg, sizeof r->errmsg, "%s: %s", r->key, curl_easy_strerror(rc));
    } else if (r->status >= 200 && r->status <= 299) {
        outcome = ATTEMPT_OK;
        if (r->kind == REQ_GET && !s3_validate_get(r, &st, r->errmsg, sizeof r->errmsg)) {
            outcome = st == STORE_ERR_CHANGED ? ATTEMPT_HTTP_STATUS : ATTEMPT_BAD_RESPONSE;
            if (r->received < r->length && st == STORE_ERR_PROTOCOL && r->status == 206 &&
                r->have_content_range)
                outcome = ATTEMPT_SHORT_BODY;
        }
    } else {
        outcome = ATTEMPT_HTTP_STATUS;
        st = s3_status_from_http(r, r->errmsg, sizeof r->errmsg);
    }

    if (outcome == ATTEMPT_OK) {
        retry_quota_success(&c->quota, r->retry_paid);
        finish(c, r, STORE_OK);
        return;
    }
    if (outcome != ATTEMPT_HTTP_STATUS)
        st = s3_status_from_outcome(outcome);
    retry_policy p = c->cfg.retry;
    if (r->max_attempts)
        p.max_attempts = r->max_attempts;
    retry_decision d = st == STORE_ERR_CHANGED ? RETRY_NO
                                            : retry_classify(&p, r->attempt, outcome, r->status);
    bool shutting = atomic_load(&c->stopping);
    uint32_t wait = 0;
    if (d != RETRY_NO && !shutting) {
        wait = retry_backoff_ms(&p, r->attempt, &c->rng);
        uint64_t elapsed_ms = (uint64_t)(now_ns() - r->first_attempt_ns) / 1000000;
        if (!retry_within_budget(&p, elapsed_ms, wait)) {
            log_info("giving up after %u attempt(s) in %" PRIu64 " ms (retry budget %u ms): %s", r->attempt,
                     elapsed_ms, p.budget_ms, r->errmsg);
            finish(c, r, st);
            return;
        }
    }
    if (d == RETRY_NO || shutting) {
        if (st == STORE_ERR_CHANGED)
            log_warn("%s", r->errmsg);
        else
            log_info("giving up after %u attempt(s): %s", r->attempt, r->errmsg);
        finish(c, r, shutting ? STORE_ERR_SHUTDOWN : st);
        return;
    }
    r->retry_cost = retry_quota_cost(outcome);
    r->result = st; /* what the request fails with if its retry never goes out */
    schedule_retry(c, r, wait, d == RETRY_FRESH);
}

static int on_prereq(void *ud, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    s3_request *r = ud;
    s3_client *c = r->client;
    if (!r->has_connection) {
        r->has_connection = true;
        c->n_awaiting_connection--;
        c->n_connected++;
    }
    return CURL_PREREQFUNC_OK;
}

static curl_socket_t on_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)purpose;
    s3_client *c = ud;
    curl_socket_t fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    if (fd != CURL_SOCKET_BAD)
        c->sockets_open++;
    return fd;
}

static int on_close_socket(void *ud, curl_socket_t fd)
{
    s3_client *c = ud;
    c->sockets_open--;
    return close(fd);
}

/* Whether one more request may start now, given how many connections are
 * being set up and an estimate of the idle ones it could reuse. */
static bool may_connect(const s3_client *c)
{
    if (c->n_awaiting_connection < c->cfg.max_connecting)
        return true;
    /* Sockets not serving a request with a connection are idle pooled ones
     * or ones being connected; assuming every awaiting request has one of
     * the latter keeps the estimate low. */
    unsigned busy = c->n_connected + c->n_awaiting_connection;
    return c->sockets_open > busy;
}

static void start_attempt(s3_client *c, s3_request *r)
{
    r->attempt++;
    CURL *easy = easy_take(c);
    if (!easy || !s3_request_setup_attempt(&c->ep, r, easy)) {
        /* finish() gives back the handle the request now holds, if any. */
        snprintf(r->errmsg, sizeof r->errmsg, "%s: cannot set up request", r->key);
        finish(c, r, STORE_ERR_NOMEM);
        return;
    }
    r->client = c;
    curl_easy_setopt(easy, CURLOPT_PREREQDATA, r);
    r->started_ns = now_ns();
    if (r->attempt == 1)
        r->first_attempt_ns = r->started_ns;
    r->window_start_ns = 0;
    r->window_start_bytes = 0;
    r->ahead_requests = c->ahead_requests_swept + c->started_since_sweep;
    r->ahead_bytes = c->ahead_bytes_swept + c->started_bytes_since_sweep;
    c->started_since_sweep++;
    if (r->kind == REQ_GET)
        c->started_bytes_since_sweep += r->length;
    r->prev = NULL;
    r->next = c->active;
    if (c->active)
        c->active->prev = r;
    c->active = r;
    c->n_active++;
    c->n_awaiting_connection++;
    if (r->sent)
        *r->sent = true;
    if (c->stats) {
        STAT_ADD(c->stats, s3_requests, 1);
        if (r->kind == REQ_GET)
            STAT_ADD(c->stats, s3_get_requests, 1);
        else if (r->kind == REQ_LIST)
            STAT_ADD(c->stats, s3_list_requests, 1);
        else if (r->kind == REQ_HEAD)
            STAT_ADD(c->stats, s3_head_requests, 1);
    }
    CURLMcode mc = curl_multi_add_handle(c->multi, r->easy);
    if (mc != CURLM_OK) {
        active_unlink(c, r);
        snprintf(r->errmsg, sizeof r->errmsg, "%s: %s", r->key, curl_multi_strerror(mc));
        finish(c, r, STORE_ERR_INVALID);
    }
}

/* Keep the keep-alive pool as large as the in-flight limit. No
 * CURLMOPT_MAX_HOST_CONNECTIONS: admission already bounds the transfers (one
 * connection each), and after the limit is lowered curl would hold new
 * attempts in a queue of its own, where the first-byte deadline would cut
 * them off as stalls. */
static void apply_limit(s3_client *c, unsigned limit)
{
    if (limit == c->pool_size)
        return;
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)limit);
    c->pool_size = limit;
}

/* A request whose caller gave up (its token fired or its deadline passed)
 * ends here rather than go out. */
static bool drop_if_cancelled(s3_client *c, s3_request *r)
{
    int why = sv_cancel_check(r->cancel);
    if (!why)
        return false;
    snprintf(r->errmsg, sizeof r->errmsg, "%s: cancelled (%s)", r->key,
             why == ETIMEDOUT ? "deadline passed" : why == EINTR ? "reader interrupted" : "caller gone");
    if (c->stats)
        STAT_ADD(c->stats, requests_cancelled, 1);
    r->result = STORE_ERR_CANCELLED;
    if (r->easy) {
        easy_give_back(c, r->easy);
        r->easy = NULL;
    }
    r->done(r->ud, STORE_ERR_CANCELLED, r->errmsg);
    s3_request_free(r);
    return true;
}

/* Start what may start: due retries first (they hold their slots and have
 * waited already), then queued requests while slots are free. */
static void admit(s3_client *c, int64_t now)
{
    unsigned limit = atomic_load_explicit(&c->in_flight_limit, memory_order_relaxed);
    apply_limit(c, limit);
    for (s3_request **pp = &c->retrying; *pp && may_connect(c);) {
        s3_request *r = *pp;
        if (r->due_ns <= now && !sv_cancel_check(r->cancel) && !retry_quota_take(&c->quota, r->retry_cost)) {
            /* The quota is short: wait for successes to refill it, within
             * the retry budget. */
            const uint64_t elapsed_ms = (uint64_t)(now - r->first_attempt_ns) / 1000000;
            if (!retry_within_budget(&c->cfg.retry, elapsed_ms, QUOTA_POLL_MS)) {
                *pp = r->next;
                r->next = NULL;
                c->n_retrying--;
                log_info("giving up after %u attempt(s) in %" PRIu64 " ms (retry quota empty): %s", r->attempt,
                         elapsed_ms, r->errmsg);
                finish(c, r, r->result);
                continue;
            }
            if (!r->quota_waited && c->stats)
                STAT_ADD(c->stats, retry_quota_waits, 1);
            r->quota_waited = true;
            r->due_ns = now + (int64_t)QUOTA_POLL_MS * 1000000;
            pp = &r->next;
            continue;
        }
        if (r->due_ns <= now || sv_cancel_check(r->cancel)) {
            *pp = r->next;
            r->next = NULL;
            c->n_retrying--;
            if (!drop_if_cancelled(c, r)) {
                r->retry_paid += r->retry_cost;
                start_attempt(c, r);
            }
        } else {
            pp = &r->next;
        }
    }
    while (c->n_active + c->n_retrying < limit && may_connect(c)) {
        /* Take a batch per lock hold: submitters contend for it too. */
        unsigned room = limit - c->n_active - c->n_retrying;
        unsigned conn_room = c->n_awaiting_connection < c->cfg.max_connecting
                                 ? c->cfg.max_connecting - c->n_awaiting_connection
                                 : 1;
        if (room > conn_room)
            room = conn_room;
        rq_entry *batch = NULL, **tail = &batch;
        pthread_mutex_lock(&c->lock);
        for (unsigned i = 0; i < room; i++) {
            rq_entry *e = request_queue_pop(&c->queue);
            if (!e)
                break;
            *tail = e;
            tail = &e->next;
        }
        pthread_mutex_unlock(&c->lock);
        if (!batch)
            break;
        for (rq_entry *e = batch, *nx; e; e = nx) {
            nx = e->next;
            if (!drop_if_cancelled(c, (s3_request *)e))
                start_attempt(c, (s3_request *)e);
        }
    }
}

/* Deadlines of the attempts in flight: first byte, then body progress and,
 * for a GET, the whole body. */
/* The client's totals into its load meter, and the work a new attempt
 * would find ahead of it. */
static void measure_load(s3_client *c, int64_t now)
{
    uint64_t answered = c->answered_ended, bytes = c->body_bytes_ended, awaiting = 0, to_come = 0;
    for (const s3_request *r = c->active; r; r = r->next) {
        answered += r->got_headers;
        bytes += r->body_bytes;
        awaiting += !r->got_headers;
        if (r->kind == REQ_GET && r->length > r->received)
            to_come += r->length - r->received;
    }
    load_meter_sample(&c->meter, now, answered, bytes);
    c->ahead_requests_swept = awaiting;
    c->ahead_bytes_swept = to_come;
    c->started_since_sweep = c->started_bytes_since_sweep = 0;
}

static void sweep_deadlines(s3_client *c, int64_t now)
{
    measure_load(c, now);
    int64_t first_byte_ns = (int64_t)atomic_load(&c->first_byte_ms) * 1000000;
    unsigned window_ms = atomic_load(&c->progress_window_ms);
    int64_t window_ns = (int64_t)window_ms * 1000000;
    uint64_t rate = atomic_load(&c->min_body_rate);
    int64_t slack_ns = (int64_t)atomic_load(&c->body_slack_ms) * 1000000;
    uint64_t window_min_bytes = rate * window_ms / 1000;
    for (s3_request *r = c->active, *nx; r; r = nx) {
        nx = r->next;
        if (r->cancel && sv_cancel_check(r->cancel)) {
            curl_multi_remove_handle(c->multi, r->easy);
            active_unlink(c, r);
            if (c->stats && r->kind == REQ_GET)
                STAT_ADD(c->stats, s3_bytes_fetched, r->received);
            drop_if_cancelled(c, r);
            continue;
        }
        if (!r->got_headers) {
            /* Late is not stalled while the requests and bytes that were
             * ahead of it, at the rates the client sees now, explain it. */
            const int64_t ahead_ns =
                (int64_t)load_meter_wait_ms(&c->meter, r->ahead_requests, r->ahead_bytes, LOAD_WAIT_CAP_MS) *
                1000000;
            if (now - r->started_ns > first_byte_ns + ahead_ns) {
                cutoff cut = {"no response", (unsigned)((first_byte_ns + ahead_ns) / 1000000)};
                attempt_ended(c, r, CURLE_OK, &cut);
            }
            continue;
        }
        if (!r->window_start_ns) {
            r->window_start_ns = r->first_byte_ns ? r->first_byte_ns : now;
            r->window_start_bytes = 0;
        }
        if (r->kind == REQ_GET && rate) {
            int64_t body_ns = (int64_t)(r->length * 1000 / rate) * 1000000 + slack_ns;
            if (now - r->first_byte_ns > body_ns) {
                cutoff cut = {"body too slow", (unsigned)((now - r->first_byte_ns) / 1000000)};
                attempt_ended(c, r, CURLE_OK, &cut);
                continue;
            }
        }
        if (now - r->window_start_ns >= window_ns) {
            if (r->body_bytes - r->window_start_bytes < window_min_bytes) {
                cutoff cut = {"body stalled", window_ms};
                attempt_ended(c, r, CURLE_OK, &cut);
                continue;
            }
            r->window_start_ns = now;
            r->window_start_bytes = r->body_bytes;
        }
    }
}

static int64_t sweep_period_ns(s3_client *c)
{
    unsigned shortest = atomic_load(&c->first_byte_ms);
    unsigned w = atomic_load(&c->progress_window_ms);
    if (w < shortest)
        shortest = w;
    unsigned ms = shortest / SWEEPS_PER_DEADLINE;
    ms = ms < SWEEP_MIN_MS ? SWEEP_MIN_MS : ms > SWEEP_MAX_MS ? SWEEP_MAX_MS : ms;
    return (int64_t)ms * 1000000;
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *ud, void *registered)
{
    (void)easy;
    s3_client *c = ud;
    if (what == CURL_POLL_REMOVE) {
        /* Fails harmlessly when curl has closed it already. */
        epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    struct epoll_event ev = {
        .events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u),
        .data.fd = fd,
    };
    if (registered && epoll_ctl(c->epfd, EPOLL_CTL_MOD, fd, &ev) == 0)
        return 0;
    if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno == EEXIST)
        epoll_ctl(c->epfd, EPOLL_CTL_MOD, fd, &ev);
    curl_multi_assign(c->multi, fd, c); /* any non-NULL: registered */
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *ud)
{
    (void)multi;
    s3_client *c = ud;
    c->curl_due_ns = timeout_ms < 0 ? -1 : now_ns() + (int64_t)timeout_ms * 1000000;
    return 0;
}

static void read_completions(s3_client *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        s3_request *r = NULL;
        CURLcode rc = msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
        attempt_ended(c, r, rc, NULL);
    }
}

static void fail_all(s3_client *c)
{
    /* Nothing new starts; everything pending fails now rather than waiting
     * out backoffs or slow bodies. */
    while (c->retrying) {
        s3_request *r = c->retrying;
        c->retrying = r->next;
        c->n_retrying--;
        snprintf(r->errmsg, sizeof r->errmsg, "%s: client shutting down", r->key);
        finish(c, r, STORE_ERR_SHUTDOWN);
    }
    while (c->active) {
        s3_request *r = c->active;
        curl_multi_remove_handle(c->multi, r->easy);
        active_unlink(c, r);
        snprintf(r->errmsg, sizeof r->errmsg, "%s: client shutting down", r->key);
        finish(c, r, STORE_ERR_SHUTDOWN);
    }
}

static void *transfer_thread(void *arg)
{
    s3_client *c = arg;
    struct epoll_event evs[EPOLL_BATCH];
    int running = 0;
    c->next_sweep_ns = now_ns() + sweep_period_ns(c);
    for (;;) {
        if (atomic_load(&c->stopping)) {
            fail_all(c);
            break;
        }
        int64_t now = now_ns();
        admit(c, now);

        /* Sleep until I/O, a wake, curl's timer, a retry or the next sweep. */
        int64_t until = now + (int64_t)IDLE_WAIT_MS * 1000000;
        if (c->curl_due_ns >= 0 && c->curl_due_ns < until)
            until = c->curl_due_ns;
        if (c->active && c->next_sweep_ns < until)
            until = c->next_sweep_ns;
        for (s3_request *r = c->retrying; r; r = r->next)
            if (r->due_ns < until)
                until = r->due_ns;
        int wait_ms = until <= now ? 0 : (int)((until - now + 999999) / 1000000);
        int n = epoll_wait(c->epfd, evs, EPOLL_BATCH, wait_ms);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == c->wake_fd) {
                uint64_t v;
                ssize_t got = read(c->wake_fd, &v, sizeof v);
                (void)got;
                atomic_store(&c->wake_pending, false);
                continue;
            }
            int mask = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(c->multi, evs[i].data.fd, mask, &running);
        }
        now = now_ns();
        if (c->curl_due_ns >= 0 && c->curl_due_ns <= now) {
            c->curl_due_ns = -1;
            curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
        read_completions(c);
        if (now >= c->next_sweep_ns) {
            sweep_deadlines(c, now);
            c->next_sweep_ns = now + sweep_period_ns(c);
        }
    }
    return NULL;
}

static store_status submit(s3_client *c, s3_request *r)
{
    pthread_mutex_lock(&c->lock);
    if (atomic_load(&c->stopping)) {
        pthread_mutex_unlock(&c->lock);
        return STORE_ERR_SHUTDOWN;
    }
    bool queued = request_queue_push(&c->queue, &r->queued, r->priority, r->owner);
    pthread_mutex_unlock(&c->lock);
    if (!queued)
        return STORE_ERR_NOMEM;
    wake(c);
    return STORE_OK;
}

void s3_client_set_in_flight(s3_client *c, unsigned n)
{
    if (n < 1)
        n = 1;
    if (n > S3_CLIENT_MAX_IN_FLIGHT)
        n = S3_CLIENT_MAX_IN_FLIGHT;
    atomic_store(&c->in_flight_limit, n);
    wake(c);
}

unsigned s3_client_in_flight_limit(s3_client *c)
{
    return atomic_load(&c->in_flight_limit);
}

void s3_client_set_deadlines(s3_client *c, const s3_deadlines *d)
{
    if (d->first_byte_ms)
        atomic_store(&c->first_byte_ms, d->first_byte_ms);
    if (d->progress_window_ms)
        atomic_store(&c->progress_window_ms, d->progress_window_ms);
    if (d->min_body_rate)
        atomic_store(&c->min_body_rate, d->min_body_rate);
    if (d->body_slack_ms)
        atomic_store(&c->body_slack_ms, d->body_slack_ms);
}

s3_deadlines s3_client_deadlines(s3_client *c)
{
    return (s3_deadlines){
        .first_byte_ms = atomic_load(&c->first_byte_ms),
        .progress_window_ms = atomic_load(&c->progress_window_ms),
        .min_body_rate = atomic_load(&c->min_body_rate),
        .body_slack_ms = atomic_load(&c->body_slack_ms),
    };
}

/* ---- synchronous wrappers ----------------------------------------------- */

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    bool done;
    store_status st;
    char msg[256];
    /* For HEAD and LIST the completion copies out what the caller needs. */
    char *body;
    size_t body_len;
    long status;
    char etag[S3_ETAG_MAX + 1];
    uint64_t content_length;
    bool have_content_length;
    char last_modified[64];
} sync_wait;

static void sync_wait_init(sync_wait *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->cv, NULL);
}

static void sync_wait_destroy(sync_wait *w)
{
    pthread_mutex_destroy(&w->m);
    pthread_cond_destroy(&w->cv);
    free(w->body);
}

/* HEAD/LIST completion: take the body and headers before finish() frees the
 * request (it calls done() first). */
typedef struct {
    sync_wait *w;
    s3_request *r;
} meta_ctx;

static void meta_done(void *ud, store_status st, const char *errmsg)
{
    meta_ctx *m = ud;
    s3_request *r = m->r;
    sync_wait *w = m->w;
    pthread_mutex_lock(&w->m);
    w->body = r->body;
    w->body_len = r->body_len;
    r->body = NULL;
    w->status = r->status;
    snprintf(w->etag, sizeof w->etag, "%s", r->resp_etag);
    snprintf(w->last_modified, sizeof w->last_modified, "%s", r->last_modified);
    w->content_length = r->content_length;
    w->have_content_length = r->have_content_length;
    w->st = st;
    snprintf(w->msg, sizeof w->msg, "%s", errmsg ? errmsg : "");
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
}

/* Unbounded by itself, bounded by the request: every attempt has a connect
 * timeout and first-byte and progress deadlines, and attempts are limited,
 * so the completion always comes (STORE_ERR_SHUTDOWN at the latest). */
static void sync_block(sync_wait *w)
{
    pthread_mutex_lock(&w->m);
    while (!w->done)
        pthread_cond_wait(&w->cv, &w->m);
    pthread_mutex_unlock(&w->m);
}

/* Submit a HEAD or LIST request and wait for it; the completion copies its
 * body and headers into *w (initialised here; the caller destroys it). */
static store_status run_meta_request(s3_client *c, s3_request *r, sync_wait *w, const char *what,
                                     const char *name, sv_error *err)
{
    sync_wait_init(w);
    meta_ctx m = {w, r};
    /* Someone is blocked on it: metadata goes with demand reads. */
    r->priority = STORE_PRIO_DEMAND;
    r->done = meta_done;
    r->ud = &m;
    store_status st = submit(c, r);
    if (st != STORE_OK) {
        s3_request_free(r);
        sv_fail(err, st, 0, "%s %s: %s", what, name, store_status_name(st));
        return st;
    }
    sync_block(w);
    if (w->st != STORE_OK)
        sv_fail(err, w->st, 0, "%s", w->msg);
    return w->st;
}

static store_status s3_head(object_store *s, const char *key, store_object_info *out, sv_error *err)
{
    s3_client *c = (s3_client *)s;
    s3_request *r = s3_request_new(REQ_HEAD, key);
    if (!r || !(r->url = s3_object_url(&c->ep, key))) {
        s3_request_free(r);
        sv_fail(err, STORE_ERR_NOMEM, 0, "HEAD %s: out of memory", key);
        return STORE_ERR_NOMEM;
    }
    sync_wait w;
    store_status st = run_meta_request(c, r, &w, "HEAD", key, err);
    if (st == STORE_OK) {
        memset(out, 0, sizeof *out);
        if (!w.have_content_length || !w.etag[0]) {
            sv_fail(err, STORE_ERR_PROTOCOL, 0, "HEAD %s: response lacks Content-Length or ETag", key);
            st = STORE_ERR_PROTOCOL;
        } else {
            out->size = w.content_length;
            snprintf(out->etag, sizeof out->etag, "%s", w.etag);
            struct tm tm;
            memset(&tm, 0, sizeof tm);
            if (strptime(w.last_modified, "%a, %d %b %Y %H:%M:%S GMT", &tm))
                out->mtime = (int64_t)timegm(&tm);
        }
    }
    sync_wait_destroy(&w);
    return st;
}

static store_status s3_put(object_store *s, const char *key, const void *body, size_t len, sv_error *err)
{
    s3_client *c = (s3_client *)s;
    s3_request *r = s3_request_new(REQ_PUT, key);
    if (!r || !(r->url = s3_object_url(&c->ep, key))) {
        s3_request_free(r);
        sv_fail(err, STORE_ERR_NOMEM, 0, "PUT %s: out of memory", key);
        return STORE_ERR_NOMEM;
    }
    r->put_body = body; /* the caller blocks below: body outlives r */
    r->put_len = len;
    sync_wait w;
    store_status st = run_meta_request(c, r, &w, "PUT", key, err);
    sync_wait_destroy(&w);
    return st;
}

static store_status s3_list_page(object_store *s, const char *prefix, const char *delimiter,
                                 const char *token, const store_request_opts *opts, store_listing *out,
                                 sv_error *err)
{
    s3_client *c = (s3_client *)s;
    memset(out, 0, sizeof *out);
    /* Parameters in sorted order and fully encoded, so the query string is
     * already canonical for SigV4 whatever curl version signs it. */
    char *enc_prefix = s3_uri_encode(prefix, false);
    char *enc_delim = delimiter ? s3_uri_encode(delimiter, false) : NULL;
    char *enc_token = token ? s3_uri_encode(token, false) : NULL;
    s3_request *r = s3_request_new(REQ_LIST, prefix[0] ? prefix : "/");
    bool ok = enc_prefix && (!delimiter || enc_delim) && (!token || enc_token) && r;
    if (ok) {
        size_t n = strlen(c->ep.base_url) + strlen(enc_prefix) + (enc_delim ? strlen(enc_delim) : 0) +
                   (enc_token ? strlen(enc_token) : 0) + 128;
        r->url = malloc(n);
        if (r->url) {
            size_t len = (size_t)snprintf(r->url, n, "%s/?", c->ep.base_url);
            if (enc_token)
                len += (size_t)snprintf(r->url + len, n - len, "continuation-token=%s&", enc_token);
            if (enc_delim)
                len += (size_t)snprintf(r->url + len, n - len, "delimiter=%s&", enc_delim);
            /* encoding-type=url: keys with characters XML 1.0 cannot carry still list. */
            snprintf(r->url + len, n - len, "encoding-type=url&list-type=2&max-keys=1000&prefix=%s",
                     enc_prefix);
        }
        ok = r->url != NULL;
    }
    free(enc_prefix);
    free(enc_delim);
    free(enc_token);
    if (!ok) {
        s3_request_free(r);
        sv_fail(err, STORE_ERR_NOMEM, 0, "listing %s: out of memory", prefix);
        return STORE_ERR_NOMEM;
    }
    if (opts && opts->max_attempts)
        r->max_attempts = opts->max_attempts;
    r->owner = opts ? opts->owner : NULL;
    r->cancel = opts ? opts->cancel : NULL; /* the caller blocks below: its token outlives r */
    sync_wait w;
    store_status st = run_meta_request(c, r, &w, "listing", prefix, err);
    if (st == STORE_OK) {
        sv_error perr;
        s3_listing_err le = s3_listing_parse(w.body ? w.body : "", w.body_len, out, &perr);
        if (le != S3_LISTING_OK) {
            st = le == S3_LISTING_ERR_NOMEM ? STORE_ERR_NOMEM : STORE_ERR_PROTOCOL;
            sv_fail(err, st, 0, "listing '%s': %s", prefix, perr.msg);
        }
    }
    sync_wait_destroy(&w);
    return st;
}

static store_status s3_get_async(object_store *s, const char *key, const char *etag, uint64_t offset,
                                 uint64_t length, const struct iovec *iov, size_t iovcnt,
                                 const store_request_opts *opts, store_get_done_fn done, void *ud)
{
    s3_client *c = (s3_client *)s;
    if (length == 0 || iovcnt == 0 || iovcnt > S3_REQUEST_MAX_IOV || offset > UINT64_MAX - length)
        return STORE_ERR_INVALID;
    uint64_t total = 0;
    for (size_t i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (total != length)
        return STORE_ERR_INVALID;
    if (etag && strlen(etag) > S3_ETAG_MAX)
        return STORE_ERR_INVALID;
    s3_request *r = s3_request_new(REQ_GET, key);
    if (!r || !(r->url = s3_object_url(&c->ep, key))) {
        s3_request_free(r);
        return STORE_ERR_NOMEM;
    }
    if (etag) {
        snprintf(r->etag, sizeof r->etag, "%s", etag);
        r->have_etag = true;
    }
    r->offset = offset;
    r->length = length;
    if (!s3_request_set_iov(r, iov, iovcnt)) {
        s3_request_free(r);
        return STORE_ERR_NOMEM;
    }
    r->priority = opts ? opts->priority : STORE_PRIO_DEMAND;
    r->owner = opts ? opts->owner : NULL;
    r->cancel = opts ? opts->cancel : NULL;
    r->sent = opts ? opts->sent : NULL;
    r->max_attempts = opts ? opts->max_attempts : 0;
    r->object_size = opts ? opts->object_size : 0;
    r->fresh_connection = opts && opts->fresh_connection;
    r->done = done;
    r->ud = ud;
    store_status st = submit(c, r);
    if (st != STORE_OK)
        s3_request_free(r);
    return st;
}

static void s3_store_destroy(object_store *s)
{
    s3_client_destroy((s3_client *)s);
}

static const object_store_ops s3_store_ops = {
    .get_async = s3_get_async,
    .head = s3_head,
    .list_page = s3_list_page,
    .put = s3_put,
    .destroy = s3_store_destroy,
};

object_store *s3_client_store(s3_client *c)
{
    return &c->store;
}

/* ---- lifecycle ---------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_global(void) { curl_global_init(CURL_GLOBAL_ALL); }

store_status s3_client_create(const s3_client_config *cfg, s3_client **out, sv_error *err)
{
    *out = NULL;
    if (!cfg->bucket || !cfg->bucket[0] || !cfg->creds) {
        sv_fail(err, STORE_ERR_INVALID, 0, "no bucket or credentials given");
        return STORE_ERR_INVALID;
    }
    pthread_once(&curl_once, curl_global);
    s3_client *c = calloc(1, sizeof *c);
    if (!c)
        return STORE_ERR_NOMEM;
    c->store.ops = &s3_store_ops;
    c->cfg = *cfg;
    c->wake_fd = -1;
    c->epfd = -1;
    c->curl_due_ns = -1;
    request_queue_init(&c->queue);
    if (!c->cfg.max_connections)
        c->cfg.max_connections = DEFAULT_IN_FLIGHT;
    if (c->cfg.max_connections > S3_CLIENT_MAX_IN_FLIGHT)
        c->cfg.max_connections = S3_CLIENT_MAX_IN_FLIGHT;
    if (!c->cfg.max_connecting)
        c->cfg.max_connecting = DEFAULT_CONNECTING;
    if (!c->cfg.connect_timeout_ms)
        c->cfg.connect_timeout_ms = 5000;
    if (!c->cfg.stall_timeout_ms)
        c->cfg.stall_timeout_ms = DEFAULT_FIRST_BYTE_MS;
    if (!c->cfg.progress_window_ms)
        c->cfg.progress_window_ms = DEFAULT_PROGRESS_WINDOW_MS;
    if (!c->cfg.min_body_rate)
        c->cfg.min_body_rate = DEFAULT_MIN_BODY_RATE;
    if (!c->cfg.body_slack_ms)
        c->cfg.body_slack_ms = DEFAULT_BODY_SLACK_MS;
    atomic_init(&c->in_flight_limit, c->cfg.max_connections);
    atomic_init(&c->first_byte_ms, c->cfg.stall_timeout_ms);
    retry_quota_init(&c->quota);
    load_meter_init(&c->meter);
    atomic_init(&c->progress_window_ms, c->cfg.progress_window_ms);
    atomic_init(&c->min_body_rate, c->cfg.min_body_rate);
    atomic_init(&c->body_slack_ms, c->cfg.body_slack_ms);
    atomic_init(&c->stopping, false);
    atomic_init(&c->wake_pending, false);
    c->ep.connect_timeout_ms = c->cfg.connect_timeout_ms;
    if (!c->cfg.retry.max_attempts)
        c->cfg.retry = RETRY_POLICY_DEFAULT;
    c->stats = cfg->stats;
    c->rng = (uint64_t)now_ns() | 1;

    const aws_credentials *cr = cfg->creds;
    const char *region = cr->region ? cr->region : "us-east-1";
    size_t n;
    if (cfg->endpoint && cfg->endpoint[0]) {
        const char *ep = cfg->endpoint;
        if (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0) {
            sv_fail(err, STORE_ERR_INVALID, 0, "endpoint '%s' must start with http:// or https://", ep);
            free(c);
            return STORE_ERR_INVALID;
        }
        size_t eplen = strlen(ep);
        while (eplen > 0 && ep[eplen - 1] == '/')
            eplen--;
        char *bucket_enc = s3_uri_encode(cfg->bucket, false);
        n = eplen + (bucket_enc ? strlen(bucket_enc) : 0) + 2;
        c->ep.base_url = malloc(n);
        if (c->ep.base_url && bucket_enc)
            snprintf(c->ep.base_url, n, "%.*s/%s", (int)eplen, ep, bucket_enc);
        free(bucket_enc);
        c->ep.https = strncmp(ep, "https://", 8) == 0;
    } else {
        n = strlen(cfg->bucket) + strlen(region) + 64;
        c->ep.base_url = malloc(n);
        if (c->ep.base_url) {
            if (cfg->force_path_style || strchr(cfg->bucket, '.'))
                snprintf(c->ep.base_url, n, "https://s3.%s.amazonaws.com/%s", region, cfg->bucket);
            else
                snprintf(c->ep.base_url, n, "https://%s.s3.%s.amazonaws.com", cfg->bucket, region);
        }
        c->ep.https = true;
    }
    if (!cr->anonymous && cr->access_key_id && cr->secret_access_key) {
        n = strlen(region) + 32;
        c->ep.sigv4 = malloc(n);
        if (c->ep.sigv4)
            snprintf(c->ep.sigv4, n, "aws:amz:%s:s3", region);
        c->ep.user = strdup(cr->access_key_id);
        c->ep.pass = strdup(cr->secret_access_key);
        if (cr->session_token) {
            n = strlen(cr->session_token) + 32;
            c->ep.token_header = malloc(n);
            if (c->ep.token_header)
                snprintf(c->ep.token_header, n, "x-amz-security-token: %s", cr->session_token);
        }
    }
    if (c->ep.https && cfg->ca_bundle && cfg->ca_bundle[0])
        c->ep.ca_bundle = strdup(cfg->ca_bundle);
    c->multi = curl_multi_init();
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event wake_ev = {.events = EPOLLIN, .data.fd = c->wake_fd};
    if (c->wake_fd < 0 || c->epfd < 0 || epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->wake_fd, &wake_ev)) {
        sv_fail(err, STORE_ERR_NOMEM, 0, "cannot set up the transfer loop: %s", strerror(errno));
        s3_client_destroy(c);
        return STORE_ERR_NOMEM;
    }
    if (!c->ep.base_url || !c->multi ||
        (!cr->anonymous && (!c->ep.sigv4 || !c->ep.user || !c->ep.pass)) ||
        (cr->session_token && !cr->anonymous && !c->ep.token_header)) {
        s3_client_destroy(c);
        return STORE_ERR_NOMEM;
    }
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    apply_limit(c, c->cfg.max_connections);
    pthread_mutex_init(&c->lock, NULL);
    if (pthread_create(&c->thread, NULL, transfer_thread, c) != 0) {
        s3_client_destroy(c);
        sv_fail(err, STORE_ERR_NOMEM, 0, "cannot start the transfer thread");
        return STORE_ERR_NOMEM;
    }
    c->thread_started = true;
    log_debug("S3 client for %s ready", c->ep.base_url);
    *out = c;
    return STORE_OK;
}

void s3_client_destroy(s3_client *c)
{
    if (!c)
        return;
    if (c->thread_started) {
        pthread_mutex_lock(&c->lock);
        atomic_store(&c->stopping, true);
        /* Queued requests never started: fail them now. */
        rq_entry *q = request_queue_drain(&c->queue);
        pthread_mutex_unlock(&c->lock);
        for (rq_entry *e = q, *nx; e; e = nx) {
            nx = e->next;
            s3_request *r = (s3_request *)e;
            snprintf(r->errmsg, sizeof r->errmsg, "%s: client shutting down", r->key);
            r->done(r->ud, STORE_ERR_SHUTDOWN, r->errmsg);
            s3_request_free(r);
        }
        wake(c);
        pthread_join(c->thread, NULL);
        pthread_mutex_destroy(&c->lock);
    }
    request_queue_destroy(&c->queue);
    if (c->multi)
        curl_multi_cleanup(c->multi);
    /* After the multi handle: its cleanup closes pooled sockets through
     * on_close_socket, which counts in c. */
    for (size_t i = 0; i < c->n_free_easy; i++)
        curl_easy_cleanup(c->free_easy[i]);
    free(c->free_easy);
    if (c->epfd >= 0)
        close(c->epfd);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    free(c->ep.base_url);
    free(c->ep.sigv4);
    if (c->ep.pass) {
        explicit_bzero(c->ep.pass, strlen(c->ep.pass));
        free(c->ep.pass);
    }
    free(c->ep.user);
    if (c->ep.token_header) {
        explicit_bzero(c->ep.token_header, strlen(c->ep.token_header));
        free(c->ep.token_header);
    }
    free(c->ep.ca_bundle);
    free(c);
}
