/* S3 client: a transfer thread drives one curl multi handle.
 *
 * Ownership and locking: the client owns the multi handle and every request
 * that has been handed to the transfer thread. `lock` guards only the
 * submission queues and the shutdown flag; everything else (active list,
 * retry list, curl handles) is touched by the transfer thread alone. One
 * HTTP exchange (setup, callbacks, validation) is s3_request.c. */
#include "s3_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "s3_request.h"

struct s3_client {
    object_store store; /* first: the object-store interface */
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t lock; /* guards queue_hi, queue_lo, stopping */
    s3_request *queue_hi, *queue_hi_tail;
    s3_request *queue_lo, *queue_lo_tail;
    bool stopping;

    /* Transfer-thread only. */
    s3_request *active; /* doubly linked */
    unsigned n_active;
    s3_request *retrying; /* singly linked, unsorted */
    uint64_t rng;

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
        curl_easy_cleanup(r->easy);
        r->easy = NULL;
    }
    r->done(r->ud, st, r->errmsg);
    /* The callback consumed the result; sync waiters own their own copy. */
    s3_request_free(r);
}

static void schedule_retry(s3_client *c, s3_request *r, bool fresh)
{
    uint32_t wait = retry_backoff_ms(&c->cfg.retry, r->attempt, &c->rng);
    r->due_ns = now_ns() + (int64_t)wait * 1000000;
    r->fresh_connection = fresh;
    r->next = c->retrying;
    c->retrying = r;
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
}

/* An attempt ended (curl finished it or we cut it off as stalled). */
static void attempt_ended(s3_client *c, s3_request *r, CURLcode rc, bool stalled)
{
    curl_multi_remove_handle(c->multi, r->easy);
    active_unlink(c, r);
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
    if (c->stats && r->kind == REQ_GET)
        STAT_ADD(c->stats, s3_bytes_fetched, r->received);

    attempt_outcome outcome;
    store_status st = STORE_OK;
    r->errmsg[0] = 0;
    if (stalled) {
        outcome = ATTEMPT_STALLED;
        snprintf(r->errmsg, sizeof r->errmsg, "%s: no response within %u ms", r->key,
                 c->cfg.stall_timeout_ms);
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
    bool shutting;
    pthread_mutex_lock(&c->lock);
    shutting = c->stopping;
    pthread_mutex_unlock(&c->lock);
    if (d == RETRY_NO || shutting) {
        if (st == STORE_ERR_CHANGED)
            log_warn("%s", r->errmsg);
        else
            log_info("giving up after %u attempt(s): %s", r->attempt, r->errmsg);
        finish(c, r, shutting ? STORE_ERR_SHUTDOWN : st);
        return;
    }
    schedule_retry(c, r, d == RETRY_FRESH);
}

static void start_attempt(s3_client *c, s3_request *r)
{
    r->attempt++;
    if (!s3_request_setup_attempt(&c->ep, r)) {
        snprintf(r->errmsg, sizeof r->errmsg, "%s: cannot set up request", r->key);
        finish(c, r, STORE_ERR_NOMEM);
        return;
    }
    r->started_ns = now_ns();
    r->prev = NULL;
    r->next = c->active;
    if (c->active)
        c->active->prev = r;
    c->active = r;
    c->n_active++;
    if (c->stats) {
        STAT_ADD(c->stats, s3_requests, 1);
        if (r->kind == REQ_GET)
            STAT_ADD(c->stats, s3_get_requests, 1);
        else if (r->kind == REQ_LIST)
            STAT_ADD(c->stats, s3_list_requests, 1);
        else
            STAT_ADD(c->stats, s3_head_requests, 1);
    }
    CURLMcode mc = curl_multi_add_handle(c->multi, r->easy);
    if (mc != CURLM_OK) {
        active_unlink(c, r);
        snprintf(r->errmsg, sizeof r->errmsg, "%s: %s", r->key, curl_multi_strerror(mc));
        finish(c, r, STORE_ERR_INVALID);
    }
}

static s3_request *queue_pop(s3_request **head, s3_request **tail)
{
    s3_request *r = *head;
    if (r) {
        *head = r->next;
        if (!*head)
            *tail = NULL;
        r->next = NULL;
    }
    return r;
}

static void *transfer_thread(void *arg)
{
    s3_client *c = arg;
    for (;;) {
        int64_t now = now_ns();
        /* Retries that are due go first: they have waited already. */
        s3_request **pp = &c->retrying;
        while (*pp) {
            s3_request *r = *pp;
            if (r->due_ns <= now && c->n_active < c->cfg.max_connections) {
                *pp = r->next;
                r->next = NULL;
                start_attempt(c, r);
            } else {
                pp = &r->next;
            }
        }
        pthread_mutex_lock(&c->lock);
        bool stopping = c->stopping;
        while (c->n_active < c->cfg.max_connections) {
            s3_request *r = queue_pop(&c->queue_hi, &c->queue_hi_tail);
            if (!r)
                r = queue_pop(&c->queue_lo, &c->queue_lo_tail);
            if (!r)
                break;
            pthread_mutex_unlock(&c->lock);
            start_attempt(c, r);
            pthread_mutex_lock(&c->lock);
        }
        pthread_mutex_unlock(&c->lock);
        if (stopping) {
            /* Nothing new starts; everything pending fails now rather than
             * waiting out backoffs or slow bodies. */
            while (c->retrying) {
                s3_request *r = c->retrying;
                c->retrying = r->next;
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
            break;
        }

        int running = 0;
        curl_multi_perform(c->multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(c->multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            s3_request *r = NULL;
            CURLcode rc = msg->data.result;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            attempt_ended(c, r, rc, false);
        }
        /* A request with no response headers after the stall limit is cut off
         * and retried on a new connection. */
        now = now_ns();
        int64_t stall_ns = (int64_t)c->cfg.stall_timeout_ms * 1000000;
        for (s3_request *r = c->active, *nx; r; r = nx) {
            nx = r->next;
            if (!r->got_headers && now - r->started_ns > stall_ns)
                attempt_ended(c, r, CURLE_OK, true);
        }
        /* Sleep until I/O, a submission (curl_multi_wakeup) or the next deadline. */
        int64_t wait_ms = 1000;
        if (c->active)
            wait_ms = 50;
        for (s3_request *r = c->retrying; r; r = r->next) {
            int64_t d = (r->due_ns - now) / 1000000;
            if (d < wait_ms)
                wait_ms = d < 0 ? 0 : d;
        }
        curl_multi_poll(c->multi, NULL, 0, (int)wait_ms, NULL);
    }
    return NULL;
}

static store_status submit(s3_client *c, s3_request *r)
{
    pthread_mutex_lock(&c->lock);
    if (c->stopping) {
        pthread_mutex_unlock(&c->lock);
        return STORE_ERR_SHUTDOWN;
    }
    r->next = NULL;
    if (r->high_priority) {
        if (c->queue_hi_tail)
            c->queue_hi_tail->next = r;
        else
            c->queue_hi = r;
        c->queue_hi_tail = r;
    } else {
        if (c->queue_lo_tail)
            c->queue_lo_tail->next = r;
        else
            c->queue_lo = r;
        c->queue_lo_tail = r;
    }
    pthread_mutex_unlock(&c->lock);
    curl_multi_wakeup(c->multi);
    return STORE_OK;
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
    r->high_priority = true;
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
    memcpy(r->iov, iov, iovcnt * sizeof *iov);
    r->iovcnt = iovcnt;
    r->high_priority = opts ? opts->priority == STORE_PRIO_DEMAND : true;
    r->max_attempts = opts ? opts->max_attempts : 0;
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
    if (!c->cfg.max_connections)
        c->cfg.max_connections = 32;
    if (!c->cfg.connect_timeout_ms)
        c->cfg.connect_timeout_ms = 5000;
    if (!c->cfg.stall_timeout_ms)
        c->cfg.stall_timeout_ms = 10000;
    if (!c->cfg.low_speed_time_s)
        c->cfg.low_speed_time_s = 30;
    c->ep.connect_timeout_ms = c->cfg.connect_timeout_ms;
    c->ep.low_speed_time_s = c->cfg.low_speed_time_s;
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
    if (!c->ep.base_url || !c->multi ||
        (!cr->anonymous && (!c->ep.sigv4 || !c->ep.user || !c->ep.pass)) ||
        (cr->session_token && !cr->anonymous && !c->ep.token_header)) {
        s3_client_destroy(c);
        return STORE_ERR_NOMEM;
    }
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)c->cfg.max_connections);
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c->cfg.max_connections);
    pthread_mutex_init(&c->lock, NULL);
    if (pthread_create(&c->thread, NULL, transfer_thread, c) != 0) {
        pthread_mutex_destroy(&c->lock);
        curl_multi_cleanup(c->multi);
        c->multi = NULL;
        s3_client_destroy(c);
        sv_fail(err, STORE_ERR_NOMEM, 0, "cannot start the transfer thread");
        return STORE_ERR_NOMEM;
    }
    log_debug("S3 client for %s ready", c->ep.base_url);
    *out = c;
    return STORE_OK;
}

void s3_client_destroy(s3_client *c)
{
    if (!c)
        return;
    if (c->multi && c->thread) {
        pthread_mutex_lock(&c->lock);
        c->stopping = true;
        /* Queued requests never started: fail them now. */
        s3_request *q[2] = {c->queue_hi, c->queue_lo};
        c->queue_hi = c->queue_hi_tail = c->queue_lo = c->queue_lo_tail = NULL;
        pthread_mutex_unlock(&c->lock);
        for (int i = 0; i < 2; i++) {
            for (s3_request *r = q[i], *nx; r; r = nx) {
                nx = r->next;
                snprintf(r->errmsg, sizeof r->errmsg, "%s: client shutting down", r->key);
                r->done(r->ud, STORE_ERR_SHUTDOWN, r->errmsg);
                s3_request_free(r);
            }
        }
        curl_multi_wakeup(c->multi);
        pthread_join(c->thread, NULL);
        pthread_mutex_destroy(&c->lock);
    }
    if (c->multi)
        curl_multi_cleanup(c->multi);
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
