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

typedef struct {
    const char *endpoint;      /* "http(s)://host[:port]" or NULL for AWS */
    const char *bucket;
    bool force_path_style;     /* custom endpoints always use path style */
    const aws_credentials *creds;
    const char *ca_bundle;     /* used for https only; NULL = system default */
    unsigned max_connections;  /* concurrent requests (and pooled connections) */
    unsigned max_connecting;   /* connection set-ups at once; 0 = 64 */
    unsigned connect_timeout_ms;
    unsigned stall_timeout_ms; /* no response headers within this => retry on a new connection */
    unsigned low_speed_time_s; /* body slower than 1 byte/s for this long => timeout */
    retry_policy retry;
    sv_stats *stats;           /* counters to update, may be NULL */
} s3_client_config;

store_status s3_client_create(const s3_client_config *cfg, s3_client **out, sv_error *err);
void s3_client_destroy(s3_client *c);

/* The client as an object store (object_store.h): ranged GETs, HEAD and
 * listing pages over HTTP. Valid until s3_client_destroy. */
object_store *s3_client_store(s3_client *c);

/* Percent-encode a key for a URL path per SigV4 rules ('/' kept). Returns a
 * malloc'd string or NULL. */
char *s3_uri_encode(const char *s, bool keep_slash);

#endif
