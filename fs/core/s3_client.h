/* S3 client on libcurl: one transfer thread drives a curl multi handle, so
 * connections are pooled (keep-alive) and many requests run at once. Callers
 * on any thread submit requests and either wait (sync calls) or get a callback
 * on the transfer thread (async GETs). Retries, backoff, stall detection and
 * response validation live here. FUSE-free. */
#ifndef SIEVE_S3_CLIENT_H
#define SIEVE_S3_CLIENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "aws_config.h"
#include "retry_policy.h"
#include "s3_listing.h"
#include "stats.h"

typedef enum {
    S3_OK = 0,
    S3_ERR_NOT_FOUND,  /* 404 NoSuchKey */
    S3_ERR_NO_BUCKET,  /* 404 NoSuchBucket */
    S3_ERR_ACCESS,     /* 401/403: bad credentials or no permission */
    S3_ERR_CHANGED,    /* 412/416 or a different ETag: the object was replaced */
    S3_ERR_NETWORK,    /* could not connect / connection lost, after retries */
    S3_ERR_TIMEOUT,    /* timed out or stalled, after retries */
    S3_ERR_TLS,        /* certificate or handshake failure */
    S3_ERR_PROTOCOL,   /* the server's response is malformed or inconsistent */
    S3_ERR_HTTP,       /* any other HTTP status */
    S3_ERR_NOMEM,
    S3_ERR_INVALID,    /* bad argument or configuration */
    S3_ERR_SHUTDOWN,   /* the client is being destroyed */
} s3_status;

const char *s3_status_name(s3_status st);
/* errno for a FUSE reply: EIO for data errors, ENOENT, EACCES, ... */
int s3_status_errno(s3_status st);

typedef struct s3_client s3_client;

typedef struct {
    const char *endpoint;      /* "http(s)://host[:port]" or NULL for AWS */
    const char *bucket;
    bool force_path_style;     /* custom endpoints always use path style */
    const aws_credentials *creds;
    const char *ca_bundle;     /* used for https only; NULL = system default */
    unsigned max_connections;  /* concurrent requests (and pooled connections) */
    unsigned connect_timeout_ms;
    unsigned stall_timeout_ms; /* no response headers within this => retry on a new connection */
    unsigned low_speed_time_s; /* body slower than 1 byte/s for this long => timeout */
    retry_policy retry;
    sv_stats *stats;           /* counters to update, may be NULL */
} s3_client_config;

s3_status s3_client_create(const s3_client_config *cfg, s3_client **out, char *err, size_t errlen);
void s3_client_destroy(s3_client *c);

typedef struct {
    uint64_t size;
    char etag[S3_ETAG_MAX + 1];
    int64_t mtime;
} s3_object_info;

/* Request options shared by the calls below. */
typedef struct {
    uint32_t max_attempts; /* 0 = the client's policy */
    bool high_priority;    /* demand reads go before prefetch */
} s3_request_opts;

s3_status s3_head(s3_client *c, const char *key, s3_object_info *out, char *err, size_t errlen);

/* One ListObjectsV2 page (max 1000 keys). token may be NULL. */
s3_status s3_list_page(s3_client *c, const char *prefix, const char *delimiter, const char *token,
                       const s3_request_opts *opts, s3_listing *out, char *err, size_t errlen);

/* Async ranged GET of [offset, offset+length) of key, with If-Match: etag
 * (when etag is non-NULL), scattered into iov (total iov length == length;
 * the iov array is copied, the buffers must stay valid until the callback).
 * The callback runs on the transfer thread and must not block. */
typedef void (*s3_get_done_fn)(void *ud, s3_status st, const char *errmsg);
s3_status s3_get_async(s3_client *c, const char *key, const char *etag, uint64_t offset,
                       uint64_t length, const struct iovec *iov, size_t iovcnt,
                       const s3_request_opts *opts, s3_get_done_fn done, void *ud);

/* Blocking ranged GET into buf. */
s3_status s3_get(s3_client *c, const char *key, const char *etag, uint64_t offset,
                 uint64_t length, void *buf, char *err, size_t errlen);

/* Percent-encode a key for a URL path per SigV4 rules ('/' kept). Returns a
 * malloc'd string or NULL. */
char *s3_uri_encode(const char *s, bool keep_slash);

#endif
