/* S3 client: a transfer thread drives one curl multi handle.
 *
 * Ownership and locking: the client owns the multi handle and every request
 * that has been handed to the transfer thread. `lock` guards only the
 * submission queues and the shutdown flag; everything else (active list,
 * retry list, curl handles) is touched by the transfer thread alone. */
#include "s3_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_range.h"
#include "log.h"

#define EMPTY_PAYLOAD_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ERROR_BODY_MAX (64u << 10) /* keep at most this much of an error response */
#define MAX_IOV 1024

typedef enum { REQ_GET, REQ_HEAD, REQ_LIST } req_kind;

typedef struct s3_request {
    req_kind kind;
    char *url;
    char *key; /* for messages */
    char etag[S3_ETAG_MAX + 1];
    bool have_etag;
    uint64_t offset, length;
    struct iovec iov[MAX_IOV];
    size_t iovcnt;
    uint64_t received;
    bool high_priority;
    uint32_t max_attempts;

    /* Body of a HEAD/LIST response or of an error response. */
    char *body;
    size_t body_len, body_cap, body_limit;
    bool body_overflow;

    /* Per attempt. */
    CURL *easy;
    struct curl_slist *headers;
    uint32_t attempt;
    bool fresh_connection;
    bool got_headers;
    bool aborted_bad;  /* our write callback refused the body */
    char abort_reason[160];
    int64_t started_ns;
    int64_t due_ns;
    long status;
    char resp_etag[S3_ETAG_MAX + 1];
    char content_range[128];
    bool have_content_range;
    char last_modified[64];
    uint64_t content_length;
    bool have_content_length;

    /* Completion. */
    s3_status result;
    char errmsg[256];
    s3_get_done_fn done;
    void *ud;
    struct s3_request *next, *prev;
} s3_request;

struct s3_client {
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

    char *base_url; /* scheme://host[:port][/bucket] without trailing slash */
    char *sigv4;    /* "aws:amz:REGION:s3", NULL when anonymous */
    char *userpwd_user, *userpwd_pass;
    char *token_header;
    char *ca_bundle;
    bool https;
    s3_client_config cfg;
    sv_stats *stats;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const char *s3_status_name(s3_status st)
{
    switch (st) {
    case S3_OK: return "ok";
    case S3_ERR_NOT_FOUND: return "not found";
    case S3_ERR_NO_BUCKET: return "no such bucket";
    case S3_ERR_ACCESS: return "access denied";
    case S3_ERR_CHANGED: return "object changed";
    case S3_ERR_NETWORK: return "network error";
    case S3_ERR_TIMEOUT: return "timeout";
    case S3_ERR_TLS: return "TLS error";
    case S3_ERR_PROTOCOL: return "bad server response";
    case S3_ERR_HTTP: return "HTTP error";
    case S3_ERR_NOMEM: return "out of memory";
    case S3_ERR_INVALID: return "invalid request";
    case S3_ERR_SHUTDOWN: return "shutting down";
    }
    return "unknown";
}

int s3_status_errno(s3_status st)
{
    switch (st) {
    case S3_OK: return 0;
    case S3_ERR_NOT_FOUND: return ENOENT;
    case S3_ERR_NO_BUCKET: return ENOENT;
    case S3_ERR_ACCESS: return EACCES;
    case S3_ERR_NOMEM: return ENOMEM;
    case S3_ERR_TIMEOUT: return EIO;
    default: return EIO;
    }
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

static void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- request construction ------------------------------------------------ */

static void request_free(s3_request *r)
{
    if (!r)
        return;
    if (r->easy)
        curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->headers);
    free(r->url);
    free(r->key);
    free(r->body);
    free(r);
}

static char *object_url(const s3_client *c, const char *key)
{
    char *enc = s3_uri_encode(key, true);
    if (!enc)
        return NULL;
    size_t n = strlen(c->base_url) + strlen(enc) + 2;
    char *url = malloc(n);
    if (url)
        snprintf(url, n, "%s/%s", c->base_url, enc);
    free(enc);
    return url;
}

/* ---- curl callbacks (transfer thread) --------------------------------------- */

static bool body_append(s3_request *r, const char *data, size_t n)
{
    if (r->body_len + n > r->body_limit) {
        r->body_overflow = true;
        return false;
    }
    if (r->body_len + n + 1 > r->body_cap) {
        size_t cap = r->body_cap ? r->body_cap : 16384;
        while (cap < r->body_len + n + 1)
            cap *= 2;
        if (cap > r->body_limit + 1)
            cap = r->body_limit + 1;
        char *nb = realloc(r->body, cap);
        if (!nb)
            return false;
        r->body = nb;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = 0;
    return true;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    s3_request *r = ud;
    size_t n = size * nitems;
    r->got_headers = true;
    if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
        /* A new response (e.g. after a redirect or 100-continue): reset. */
        r->have_content_range = r->have_content_length = false;
        r->resp_etag[0] = 0;
        r->last_modified[0] = 0;
        return n;
    }
    const char *colon = memchr(buf, ':', n);
    if (!colon)
        return n;
    size_t name_len = (size_t)(colon - buf);
    const char *v = colon + 1;
    const char *end = buf + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v);
#define HEADER_IS(name) (name_len == sizeof(name) - 1 && strncasecmp(buf, name, name_len) == 0)
    if (HEADER_IS("etag")) {
        if (vlen <= S3_ETAG_MAX) {
            memcpy(r->resp_etag, v, vlen);
            r->resp_etag[vlen] = 0;
        }
    } else if (HEADER_IS("content-range")) {
        if (vlen < sizeof r->content_range) {
            memcpy(r->content_range, v, vlen);
            r->content_range[vlen] = 0;
            r->have_content_range = true;
        }
    } else if (HEADER_IS("content-length")) {
        uint64_t x = 0;
        bool ok = vlen > 0 && vlen <= 19;
        for (size_t i = 0; ok && i < vlen; i++) {
            if (v[i] < '0' || v[i] > '9')
                ok = false;
            else
                x = x * 10 + (uint64_t)(v[i] - '0');
        }
        r->have_content_length = ok;
        r->content_length = ok ? x : 0;
    } else if (HEADER_IS("last-modified")) {
        if (vlen < sizeof r->last_modified) {
            memcpy(r->last_modified, v, vlen);
            r->last_modified[vlen] = 0;
        }
    }
#undef HEADER_IS
    return n;
}

static size_t abort_body(s3_request *r, const char *why)
{
    r->aborted_bad = true;
    snprintf(r->abort_reason, sizeof r->abort_reason, "%s", why);
    return CURL_WRITEFUNC_ERROR;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    s3_request *r = ud;
    size_t n = size * nmemb;
    long status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    if (r->kind != REQ_GET || status < 200 || status > 299) {
        /* Listings, and error documents of any request. */
        if (!body_append(r, data, n) && r->kind != REQ_GET && status >= 200 && status <= 299)
            return abort_body(r, "response body too large");
        return n; /* error bodies are kept truncated */
    }
    if (r->received + n > r->length)
        return abort_body(r, "server sent more bytes than the requested range");
    /* Scatter into the caller's buffers. */
    uint64_t pos = r->received;
    size_t done = 0;
    for (size_t i = 0; i < r->iovcnt && done < n; i++) {
        if (pos >= r->iov[i].iov_len) {
            pos -= r->iov[i].iov_len;
            continue;
        }
        size_t take = r->iov[i].iov_len - (size_t)pos;
        if (take > n - done)
            take = n - done;
        memcpy((char *)r->iov[i].iov_base + pos, data + done, take);
        done += take;
        pos = 0;
    }
    r->received += n;
    return n;
}

/* ---- attempt setup ------------------------------------------------------ */

static bool attempt_setup(s3_client *c, s3_request *r)
{
    if (!r->easy) {
        r->easy = curl_easy_init();
        if (!r->easy)
            return false;
    } else {
        curl_easy_reset(r->easy);
    }
    curl_slist_free_all(r->headers);
    r->headers = NULL;
    r->received = 0;
    r->body_len = 0;
    r->body_overflow = false;
    r->got_headers = false;
    r->aborted_bad = false;
    r->abort_reason[0] = 0;
    r->status = 0;
    r->have_content_range = r->have_content_length = false;
    r->resp_etag[0] = 0;
    r->last_modified[0] = 0;
    r->body_limit = r->kind == REQ_LIST ? S3_LISTING_MAX_XML : ERROR_BODY_MAX;

    CURL *e = r->easy;
    struct curl_slist *h = NULL;
    char line[S3_ETAG_MAX + 64];
    h = curl_slist_append(h, "x-amz-content-sha256: " EMPTY_PAYLOAD_SHA256);
    if (c->token_header)
        h = curl_slist_append(h, c->token_header);
    if (r->kind == REQ_GET) {
        snprintf(line, sizeof line, "Range: bytes=%" PRIu64 "-%" PRIu64, r->offset,
                 r->offset + r->length - 1);
        h = curl_slist_append(h, line);
        if (r->have_etag) {
            snprintf(line, sizeof line, "If-Match: %s", r->etag);
            h = curl_slist_append(h, line);
        }
    }
    if (!h)
        return false;
    r->headers = h;

    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)c->cfg.connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)c->cfg.low_speed_time_s);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    /* Large receive buffer: fewer write callbacks and syscalls on big ranges. */
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, r->kind == REQ_GET ? 512L * 1024 : 64L * 1024);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL); /* never transform object bytes */
    if (r->kind == REQ_HEAD)
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    if (r->fresh_connection) {
        curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    }
    if (c->https) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
        if (c->ca_bundle)
            curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_bundle);
    }
    if (c->sigv4) {
        curl_easy_setopt(e, CURLOPT_AWS_SIGV4, c->sigv4);
        curl_easy_setopt(e, CURLOPT_USERNAME, c->userpwd_user);
        curl_easy_setopt(e, CURLOPT_PASSWORD, c->userpwd_pass);
    }
    return true;
}

/* ---- completion --------------------------------------------------------- */

static attempt_outcome outcome_from_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_OK: return ATTEMPT_OK;
    case CURLE_OPERATION_TIMEDOUT: return ATTEMPT_TIMEOUT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return ATTEMPT_DNS;
    case CURLE_PARTIAL_FILE: return ATTEMPT_SHORT_BODY;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR: return ATTEMPT_TLS;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_BAD_CONTENT_ENCODING: return ATTEMPT_BAD_RESPONSE;
    default: return ATTEMPT_CONN_RESET; /* connect refused, reset, recv/send errors, empty reply */
    }
}

static s3_status status_from_outcome(attempt_outcome o)
{
    switch (o) {
    case ATTEMPT_TIMEOUT:
    case ATTEMPT_STALLED: return S3_ERR_TIMEOUT;
    case ATTEMPT_DNS:
    case ATTEMPT_CONN_RESET: return S3_ERR_NETWORK;
    case ATTEMPT_TLS: return S3_ERR_TLS;
    case ATTEMPT_SHORT_BODY:
    case ATTEMPT_BAD_RESPONSE: return S3_ERR_PROTOCOL;
    default: return S3_ERR_HTTP;
    }
}

/* Map an HTTP error status (and the S3 error document) to a result. */
static s3_status status_from_http(s3_request *r, char *msg, size_t msglen)
{
    char code[64] = "", message[160] = "";
    if (r->body_len)
        s3_error_parse(r->body, r->body_len, code, sizeof code, message, sizeof message);
    const char *what = r->kind == REQ_LIST ? "listing" : r->kind == REQ_HEAD ? "HEAD" : "GET";
    snprintf(msg, msglen, "%s %s: HTTP %ld%s%s%s%s", what, r->key, r->status, code[0] ? " " : "",
             code, message[0] ? ": " : "", message);
    switch (r->status) {
    case 404: return strcmp(code, "NoSuchBucket") == 0 ? S3_ERR_NO_BUCKET : S3_ERR_NOT_FOUND;
    case 401:
    case 403: return S3_ERR_ACCESS;
    case 412:
    case 416: return S3_ERR_CHANGED;
    default: return S3_ERR_HTTP;
    }
}

/* Check a 2xx GET response against what was asked. Returns false with msg set
 * when the bytes cannot be trusted. */
static bool validate_get(s3_request *r, s3_status *st, char *msg, size_t msglen)
{
    if (r->status == 206) {
        http_content_range cr;
        if (!r->have_content_range ||
            http_parse_content_range(r->content_range, strlen(r->content_range), &cr) != 0) {
            snprintf(msg, msglen, "GET %s: 206 without a valid Content-Range", r->key);
            *st = S3_ERR_PROTOCOL;
            return false;
        }
        if (cr.first != r->offset || cr.last != r->offset + r->length - 1) {
            snprintf(msg, msglen,
                     "GET %s: asked for bytes %" PRIu64 "-%" PRIu64 ", server sent %" PRIu64
                     "-%" PRIu64,
                     r->key, r->offset, r->offset + r->length - 1, cr.first, cr.last);
            *st = S3_ERR_PROTOCOL;
            return false;
        }
    } else if (r->status == 200) {
        /* Server ignored Range: only acceptable if the whole object is the range. */
        if (r->offset != 0 || !r->have_content_length || r->content_length != r->length) {
            snprintf(msg, msglen, "GET %s: server ignored the Range header", r->key);
            *st = S3_ERR_PROTOCOL;
            return false;
        }
    } else {
        snprintf(msg, msglen, "GET %s: unexpected HTTP %ld", r->key, r->status);
        *st = S3_ERR_PROTOCOL;
        return false;
    }
    if (r->have_etag && r->resp_etag[0] && strcmp(r->resp_etag, r->etag) != 0) {
        snprintf(msg, msglen, "GET %s: ETag changed from %s to %s", r->key, r->etag, r->resp_etag);
        *st = S3_ERR_CHANGED;
        return false;
    }
    if (r->received != r->length) {
        snprintf(msg, msglen, "GET %s: short body, %" PRIu64 " of %" PRIu64 " bytes", r->key,
                 r->received, r->length);
        *st = S3_ERR_PROTOCOL;
        return false;
    }
    return true;
}

static void finish(s3_client *c, s3_request *r, s3_status st)
{
    r->result = st;
    if (st != S3_OK) {
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
    request_free(r);
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
    s3_status st = S3_OK;
    r->errmsg[0] = 0;
    if (stalled) {
        outcome = ATTEMPT_STALLED;
        snprintf(r->errmsg, sizeof r->errmsg, "%s: no response within %u ms", r->key,
                 c->cfg.stall_timeout_ms);
    } else if (r->aborted_bad) {
        outcome = ATTEMPT_BAD_RESPONSE;
        snprintf(r->errmsg, sizeof r->errmsg, "%s: %s", r->key, r->abort_reason);
    } else if (rc != CURLE_OK) {
        outcome = outcome_from_curl(rc);
        snprintf(r->errmsg, sizeof r->errmsg, "%s: %s", r->key, curl_easy_strerror(rc));
    } else if (r->status >= 200 && r->status <= 299) {
        outcome = ATTEMPT_OK;
        if (r->kind == REQ_GET && !validate_get(r, &st, r->errmsg, sizeof r->errmsg)) {
            outcome = st == S3_ERR_CHANGED ? ATTEMPT_HTTP_STATUS : ATTEMPT_BAD_RESPONSE;
            if (r->received < r->length && st == S3_ERR_PROTOCOL && r->status == 206 &&
                r->have_content_range)
                outcome = ATTEMPT_SHORT_BODY;
        }
    } else {
        outcome = ATTEMPT_HTTP_STATUS;
        st = status_from_http(r, r->errmsg, sizeof r->errmsg);
    }

    if (outcome == ATTEMPT_OK) {
        finish(c, r, S3_OK);
        return;
    }
    if (outcome != ATTEMPT_HTTP_STATUS)
        st = status_from_outcome(outcome);
    retry_policy p = c->cfg.retry;
    if (r->max_attempts)
        p.max_attempts = r->max_attempts;
    retry_decision d = st == S3_ERR_CHANGED ? RETRY_NO
                                            : retry_classify(&p, r->attempt, outcome, r->status);
    bool shutting;
    pthread_mutex_lock(&c->lock);
    shutting = c->stopping;
    pthread_mutex_unlock(&c->lock);
    if (d == RETRY_NO || shutting) {
        if (st == S3_ERR_CHANGED)
            log_warn("%s", r->errmsg);
        else
            log_info("giving up after %u attempt(s): %s", r->attempt, r->errmsg);
        finish(c, r, shutting ? S3_ERR_SHUTDOWN : st);
        return;
    }
    schedule_retry(c, r, d == RETRY_FRESH);
}

static void start_attempt(s3_client *c, s3_request *r)
{
    r->attempt++;
    if (!attempt_setup(c, r)) {
        snprintf(r->errmsg, sizeof r->errmsg, "%s: cannot set up request", r->key);
        finish(c, r, S3_ERR_NOMEM);
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
        finish(c, r, S3_ERR_INVALID);
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
                finish(c, r, S3_ERR_SHUTDOWN);
            }
            while (c->active) {
                s3_request *r = c->active;
                curl_multi_remove_handle(c->multi, r->easy);
                active_unlink(c, r);
                snprintf(r->errmsg, sizeof r->errmsg, "%s: client shutting down", r->key);
                finish(c, r, S3_ERR_SHUTDOWN);
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

static s3_status submit(s3_client *c, s3_request *r)
{
    pthread_mutex_lock(&c->lock);
    if (c->stopping) {
        pthread_mutex_unlock(&c->lock);
        return S3_ERR_SHUTDOWN;
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
    return S3_OK;
}

/* ---- synchronous wrappers ----------------------------------------------- */

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    bool done;
    s3_status st;
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

static void sync_done(void *ud, s3_status st, const char *errmsg)
{
    sync_wait *w = ud;
    pthread_mutex_lock(&w->m);
    w->st = st;
    snprintf(w->msg, sizeof w->msg, "%s", errmsg ? errmsg : "");
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
}

/* HEAD/LIST completion: take the body and headers before finish() frees the
 * request (it calls done() first). */
typedef struct {
    sync_wait *w;
    s3_request *r;
} meta_ctx;

static void meta_done(void *ud, s3_status st, const char *errmsg)
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

static s3_request *request_new(req_kind kind, const char *key)
{
    s3_request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->kind = kind;
    r->key = strdup(key);
    if (!r->key) {
        free(r);
        return NULL;
    }
    return r;
}

/* Submit a HEAD or LIST request and wait for it; the completion copies its
 * body and headers into *w (initialised here; the caller destroys it). */
static s3_status run_meta_request(s3_client *c, s3_request *r, sync_wait *w, const char *what,
                                  const char *name, char *err, size_t errlen)
{
    sync_wait_init(w);
    meta_ctx m = {w, r};
    r->high_priority = true;
    r->done = meta_done;
    r->ud = &m;
    s3_status st = submit(c, r);
    if (st != S3_OK) {
        request_free(r);
        set_err(err, errlen, "%s %s: %s", what, name, s3_status_name(st));
        return st;
    }
    sync_block(w);
    if (w->st != S3_OK)
        set_err(err, errlen, "%s", w->msg);
    return w->st;
}

s3_status s3_head(s3_client *c, const char *key, s3_object_info *out, char *err, size_t errlen)
{
    s3_request *r = request_new(REQ_HEAD, key);
    if (!r || !(r->url = object_url(c, key))) {
        request_free(r);
        set_err(err, errlen, "HEAD %s: out of memory", key);
        return S3_ERR_NOMEM;
    }
    sync_wait w;
    s3_status st = run_meta_request(c, r, &w, "HEAD", key, err, errlen);
    if (st == S3_OK) {
        memset(out, 0, sizeof *out);
        if (!w.have_content_length || !w.etag[0]) {
            set_err(err, errlen, "HEAD %s: response lacks Content-Length or ETag", key);
            st = S3_ERR_PROTOCOL;
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

s3_status s3_list_page(s3_client *c, const char *prefix, const char *delimiter, const char *token,
                       const s3_request_opts *opts, s3_listing *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* Parameters in sorted order and fully encoded, so the query string is
     * already canonical for SigV4 whatever curl version signs it. */
    char *enc_prefix = s3_uri_encode(prefix, false);
    char *enc_delim = delimiter ? s3_uri_encode(delimiter, false) : NULL;
    char *enc_token = token ? s3_uri_encode(token, false) : NULL;
    s3_request *r = request_new(REQ_LIST, prefix[0] ? prefix : "/");
    bool ok = enc_prefix && (!delimiter || enc_delim) && (!token || enc_token) && r;
    if (ok) {
        size_t n = strlen(c->base_url) + strlen(enc_prefix) + (enc_delim ? strlen(enc_delim) : 0) +
                   (enc_token ? strlen(enc_token) : 0) + 128;
        r->url = malloc(n);
        if (r->url) {
            size_t len = (size_t)snprintf(r->url, n, "%s/?", c->base_url);
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
        request_free(r);
        set_err(err, errlen, "listing %s: out of memory", prefix);
        return S3_ERR_NOMEM;
    }
    if (opts && opts->max_attempts)
        r->max_attempts = opts->max_attempts;
    sync_wait w;
    s3_status st = run_meta_request(c, r, &w, "listing", prefix, err, errlen);
    if (st == S3_OK) {
        char perr[200];
        s3_listing_err le = s3_listing_parse(w.body ? w.body : "", w.body_len, out, perr, sizeof perr);
        if (le != S3_LISTING_OK) {
            set_err(err, errlen, "listing '%s': %s", prefix, perr);
            st = le == S3_LISTING_ERR_NOMEM ? S3_ERR_NOMEM : S3_ERR_PROTOCOL;
        }
    }
    sync_wait_destroy(&w);
    return st;
}

s3_status s3_get_async(s3_client *c, const char *key, const char *etag, uint64_t offset,
                       uint64_t length, const struct iovec *iov, size_t iovcnt,
                       const s3_request_opts *opts, s3_get_done_fn done, void *ud)
{
    if (length == 0 || iovcnt == 0 || iovcnt > MAX_IOV || offset > UINT64_MAX - length)
        return S3_ERR_INVALID;
    uint64_t total = 0;
    for (size_t i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (total != length)
        return S3_ERR_INVALID;
    if (etag && strlen(etag) > S3_ETAG_MAX)
        return S3_ERR_INVALID;
    s3_request *r = request_new(REQ_GET, key);
    if (!r || !(r->url = object_url(c, key))) {
        request_free(r);
        return S3_ERR_NOMEM;
    }
    if (etag) {
        snprintf(r->etag, sizeof r->etag, "%s", etag);
        r->have_etag = true;
    }
    r->offset = offset;
    r->length = length;
    memcpy(r->iov, iov, iovcnt * sizeof *iov);
    r->iovcnt = iovcnt;
    r->high_priority = opts ? opts->high_priority : true;
    r->max_attempts = opts ? opts->max_attempts : 0;
    r->done = done;
    r->ud = ud;
    s3_status st = submit(c, r);
    if (st != S3_OK)
        request_free(r);
    return st;
}

s3_status s3_get(s3_client *c, const char *key, const char *etag, uint64_t offset,
                 uint64_t length, void *buf, char *err, size_t errlen)
{
    sync_wait w;
    sync_wait_init(&w);
    struct iovec iov = {buf, (size_t)length};
    s3_status st = s3_get_async(c, key, etag, offset, length, &iov, 1, NULL, sync_done, &w);
    if (st == S3_OK) {
        sync_block(&w);
        st = w.st;
        if (st != S3_OK)
            set_err(err, errlen, "%s", w.msg);
    } else {
        set_err(err, errlen, "GET %s: %s", key, s3_status_name(st));
    }
    sync_wait_destroy(&w);
    return st;
}

/* ---- lifecycle ---------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_global(void) { curl_global_init(CURL_GLOBAL_ALL); }

s3_status s3_client_create(const s3_client_config *cfg, s3_client **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!cfg->bucket || !cfg->bucket[0] || !cfg->creds) {
        set_err(err, errlen, "no bucket or credentials given");
        return S3_ERR_INVALID;
    }
    pthread_once(&curl_once, curl_global);
    s3_client *c = calloc(1, sizeof *c);
    if (!c)
        return S3_ERR_NOMEM;
    c->cfg = *cfg;
    if (!c->cfg.max_connections)
        c->cfg.max_connections = 32;
    if (!c->cfg.connect_timeout_ms)
        c->cfg.connect_timeout_ms = 5000;
    if (!c->cfg.stall_timeout_ms)
        c->cfg.stall_timeout_ms = 10000;
    if (!c->cfg.low_speed_time_s)
        c->cfg.low_speed_time_s = 30;
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
            set_err(err, errlen, "endpoint '%s' must start with http:// or https://", ep);
            free(c);
            return S3_ERR_INVALID;
        }
        size_t eplen = strlen(ep);
        while (eplen > 0 && ep[eplen - 1] == '/')
            eplen--;
        char *bucket_enc = s3_uri_encode(cfg->bucket, false);
        n = eplen + (bucket_enc ? strlen(bucket_enc) : 0) + 2;
        c->base_url = malloc(n);
        if (c->base_url && bucket_enc)
            snprintf(c->base_url, n, "%.*s/%s", (int)eplen, ep, bucket_enc);
        free(bucket_enc);
        c->https = strncmp(ep, "https://", 8) == 0;
    } else {
        n = strlen(cfg->bucket) + strlen(region) + 64;
        c->base_url = malloc(n);
        if (c->base_url) {
            if (cfg->force_path_style || strchr(cfg->bucket, '.'))
                snprintf(c->base_url, n, "https://s3.%s.amazonaws.com/%s", region, cfg->bucket);
            else
                snprintf(c->base_url, n, "https://%s.s3.%s.amazonaws.com", cfg->bucket, region);
        }
        c->https = true;
    }
    if (!cr->anonymous && cr->access_key_id && cr->secret_access_key) {
        n = strlen(region) + 32;
        c->sigv4 = malloc(n);
        if (c->sigv4)
            snprintf(c->sigv4, n, "aws:amz:%s:s3", region);
        c->userpwd_user = strdup(cr->access_key_id);
        c->userpwd_pass = strdup(cr->secret_access_key);
        if (cr->session_token) {
            n = strlen(cr->session_token) + 32;
            c->token_header = malloc(n);
            if (c->token_header)
                snprintf(c->token_header, n, "x-amz-security-token: %s", cr->session_token);
        }
    }
    if (c->https && cfg->ca_bundle && cfg->ca_bundle[0])
        c->ca_bundle = strdup(cfg->ca_bundle);
    c->multi = curl_multi_init();
    if (!c->base_url || !c->multi ||
        (!cr->anonymous && (!c->sigv4 || !c->userpwd_user || !c->userpwd_pass)) ||
        (cr->session_token && !cr->anonymous && !c->token_header)) {
        s3_client_destroy(c);
        return S3_ERR_NOMEM;
    }
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)c->cfg.max_connections);
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c->cfg.max_connections);
    pthread_mutex_init(&c->lock, NULL);
    if (pthread_create(&c->thread, NULL, transfer_thread, c) != 0) {
        pthread_mutex_destroy(&c->lock);
        curl_multi_cleanup(c->multi);
        c->multi = NULL;
        s3_client_destroy(c);
        set_err(err, errlen, "cannot start the transfer thread");
        return S3_ERR_NOMEM;
    }
    log_debug("S3 client for %s ready", c->base_url);
    *out = c;
    return S3_OK;
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
                r->done(r->ud, S3_ERR_SHUTDOWN, r->errmsg);
                request_free(r);
            }
        }
        curl_multi_wakeup(c->multi);
        pthread_join(c->thread, NULL);
        pthread_mutex_destroy(&c->lock);
    }
    if (c->multi)
        curl_multi_cleanup(c->multi);
    free(c->base_url);
    free(c->sigv4);
    if (c->userpwd_pass) {
        explicit_bzero(c->userpwd_pass, strlen(c->userpwd_pass));
        free(c->userpwd_pass);
    }
    free(c->userpwd_user);
    if (c->token_header) {
        explicit_bzero(c->token_header, strlen(c->token_header));
        free(c->token_header);
    }
    free(c->ca_bundle);
    free(c);
}
