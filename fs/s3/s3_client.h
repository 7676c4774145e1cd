/* S3 client on libcurl: one transfer thread drives a curl multi handle, so
 * connections are pooled (keep-alive) and many requests run at once. Callers
 * on any thread submit requests and either wait (sync calls) or get a callback
 * on the transfer thread (async GETs). Retries, backoff, stall detection and
 * response validation live here. The rest of fs/ sees it only through the
 * object-store interface (s3_client_store). FUSE-free. */
#ifndef SIEVE_S3_CLIENT_H
#define SIEVE_S3_CLIENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "aws_config.h"
#include "object_store.h"
#include "retry_policy.h"
#include "s3_listing.h"
#include "stats.h"

typedef struct s3_client s3_client;

/* Largest in-flight limit (config, s3_client_set_in_flight). */
#define S3_CLIENT_MAX_IN_FLIGHT 1024u

/* How long a response may take; 0 in a field = the default. The defaults
 * suit a 200 ms, 150 Mbit/s link with hundreds of requests sharing it (a
 * request's fair share is tens of KiB/s); a measured profile can tighten
 * them with s3_client_set_deadlines. A response that misses one is cut off
 * and retried on a new connection (counted like a stall). */
typedef struct {
    unsigned first_byte_ms;      /* no response headers within this (default 10000) */
    unsigned progress_window_ms; /* a body must bring min_body_rate bytes/s over
                                    every window this long (default 10000) */
    unsigned min_body_rate;      /* bytes/s (default 1024) */
    unsigned body_slack_ms;      /* a GET's body must end by first byte +
                                    length / min_body_rate + this (default 10000) */
} s3_deadlines;

typedef struct {
    const char *endpoint;      /* "http(s)://host[:port]" or NULL for AWS */
    const char *bucket;
    bool force_path_style;     /* custom endpoints always use path style */
    const aws_credentials *creds;
    const char *ca_bundle;     /* used for https only; NULL = system default */
    /* Requests in flight at once, process-wide (1..S3_CLIENT_MAX_IN_FLIGHT,
     * default 32), and the size of the keep-alive pool. A request holds its
     * slot from its first attempt until it completes, backoffs between
     * retries included, so a struggling server does not get more requests
     * because earlier ones are waiting to retry. */
    unsigned max_connections;
    /* Connection set-ups at once (default 64): a request that would need a
     * new connection waits while this many are being made. */
    unsigned max_connecting;
    unsigned connect_timeout_ms;
    unsigned stall_timeout_ms; /* first-byte deadline: s3_deadlines.first_byte_ms */
    unsigned progress_window_ms, min_body_rate, body_slack_ms; /* s3_deadlines */
    retry_policy retry;
    sv_stats *stats;           /* counters to update, may be NULL */
} s3_client_config;

store_status s3_client_create(const s3_client_config *cfg, s3_client **out, sv_error *err);
void s3_client_destroy(s3_client *c);

/* Change the in-flight limit (clamped to 1..S3_CLIENT_MAX_IN_FLIGHT) and the
 * keep-alive pool with it; from any thread. Requests already in flight keep
 * their slots; a lower limit only holds back new ones. */
void s3_client_set_in_flight(s3_client *c, unsigned n);
unsigned s3_client_in_flight_limit(s3_client *c);
/* Replace the deadlines' non-zero fields; from any thread. Attempts in flight
 * are judged by the new values from the next check on. */
void s3_client_set_deadlines(s3_client *c, const s3_deadlines *d);
s3_deadlines s3_client_deadlines(s3_client *c);

/* The client as an object store (object_store.h): ranged GETs, HEAD and
 * listing pages over HTTP. Valid until s3_client_destroy. */
object_store *s3_client_store(s3_client *c);

/* Percent-encode a key for a URL path per SigV4 rules ('/' kept). Returns a
 * malloc'd string or NULL. */
char *s3_uri_encode(const char *s, bool keep_slash);

#endif
