/* One HTTP exchange with S3: the request record the transfer thread drives,
 * how an attempt is set up on a curl easy handle (Range, If-Match, SigV4,
 * TLS), the curl callbacks that scatter a body into the caller's buffers, and
 * how a finished attempt is judged (HTTP status, S3 error document, Content-
 * Range, ETag, length). Private to fs/s3; s3_client.c schedules requests. */
#ifndef SIEVE_S3_REQUEST_H
#define SIEVE_S3_REQUEST_H
#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "object_store.h"
#include "request_queue.h"
#include "retry_policy.h"

#define S3_REQUEST_MAX_IOV 1024
/* iovecs kept inside the request; longer arrays are allocated. Most GETs
 * are one run of blocks of one buffer each, a few blocks long. */
#define S3_REQUEST_INLINE_IOV 8

/* How every request reaches the server; fixed when the client is created. */
typedef struct {
    char *base_url; /* scheme://host[:port][/bucket] without trailing slash */
    char *sigv4;    /* "aws:amz:REGION:s3", NULL when anonymous */
    char *user, *pass;
    char *token_header;
    char *ca_bundle;
    bool https;
    unsigned connect_timeout_ms;
} s3_endpoint;

typedef enum { REQ_GET, REQ_HEAD, REQ_LIST, REQ_PUT } req_kind;

/* Built by the submitting thread; from submission on, touched only by the
 * transfer thread (the queue link under the client's submission lock). */
typedef struct s3_request {
    rq_entry queued; /* first: its place in the client's request_queue */
    req_kind kind;
    char *url;
    char *key; /* for messages */
    char etag[S3_ETAG_MAX + 1];
    bool have_etag;
    uint64_t offset, length;
    uint64_t object_size; /* store_request_opts.object_size: 0 unknown */
    struct iovec *iov; /* iov_inline, or allocated when longer */
    size_t iovcnt;
    struct iovec iov_inline[S3_REQUEST_INLINE_IOV];
    uint64_t received;
    const uint8_t *put_body; /* REQ_PUT: the caller's body, valid until done */
    size_t put_len, put_sent;
    store_priority priority;
    const void *owner;
    const sv_cancel *cancel; /* store_request_opts.cancel: valid until done runs */
    bool *sent;              /* store_request_opts.sent: likewise */
    uint32_t max_attempts;

    /* Body of a HEAD/LIST response or of an error response. */
    char *body;
    size_t body_len, body_cap, body_limit;
    bool body_overflow;

    /* Per attempt. */
    CURL *easy;
    struct curl_slist *headers;
    uint32_t attempt;
    int64_t first_attempt_ns; /* when attempt 1 started: the retry budget counts from it */
    bool fresh_connection;
    bool got_headers;
    bool has_connection; /* curl has a connection for it (PREREQFUNCTION ran) */
    bool aborted_bad;  /* our write callback refused the body */
    char abort_reason[160];
    int64_t started_ns;
    int64_t first_byte_ns;     /* when the first header line arrived, 0 = not yet */
    uint64_t body_bytes;       /* every body byte of this attempt (data or error document) */
    int64_t window_start_ns;   /* progress deadline: the current window */
    uint64_t window_start_bytes;
    int64_t due_ns;
    /* What was ahead of this attempt in the client when it went out:
     * requests awaiting their first byte and body bytes still to come
     * (load_meter.h: its first-byte deadline counts them). */
    uint64_t ahead_requests, ahead_bytes;
    uint32_t retry_cost;      /* the quota tokens its next retry takes (retry_quota.h) */
    uint32_t retry_paid;      /* tokens its retries took, returned when it succeeds */
    bool quota_waited;        /* its retry has waited for the quota (counted once) */
    long status;
    char resp_etag[S3_ETAG_MAX + 1];
    char content_range[128];
    bool have_content_range;
    char last_modified[64];
    uint64_t content_length;
    bool have_content_length;

    void *client; /* the s3_client scheduling it, for its curl callbacks */

    /* Completion. */
    store_status result;
    char errmsg[256];
    store_get_done_fn done;
    void *ud;
    struct s3_request *next, *prev;
} s3_request;

s3_request *s3_request_new(req_kind kind, const char *key);
void s3_request_free(s3_request *r);
/* Copy the caller's iovecs (1..S3_REQUEST_MAX_IOV); false when out of memory. */
bool s3_request_set_iov(s3_request *r, const struct iovec *iov, size_t iovcnt);
/* URL of an object key under the endpoint (malloc'd), or NULL. */
char *s3_object_url(const s3_endpoint *ep, const char *key);
/* The options every request shares, on a new easy handle. */
void s3_easy_defaults(const s3_endpoint *ep, CURL *easy);
/* Reset r for its next attempt and set it up on easy (a handle that has had
 * s3_easy_defaults, new or used before; r owns it until the attempt ends);
 * false when out of memory. */
bool s3_request_setup_attempt(const s3_endpoint *ep, s3_request *r, CURL *easy);

/* Judging an attempt. */
attempt_outcome s3_outcome_from_curl(CURLcode rc);
store_status s3_status_from_outcome(attempt_outcome o);
/* An HTTP error status (and the S3 error document) as a status and message. */
store_status s3_status_from_http(s3_request *r, char *msg, size_t msglen);
/* Check a 2xx GET response against what was asked: false (with *st and msg)
 * when the bytes cannot be trusted. */
bool s3_validate_get(s3_request *r, store_status *st, char *msg, size_t msglen);

#endif
