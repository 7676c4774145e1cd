/* The object-store interface: all that the rest of fs/ needs from S3 — a
 * ranged GET of one object version, a HEAD, one page of a listing, and a PUT
 * for the one command that writes (`sievefs index --to-s3`) — with S3's
 * semantics (ETags, If-Match, delimiter listings, continuation tokens).
 *
 *   s3_client.c   the real thing, over HTTP (curl multi, SigV4, retries)
 *   mem_store.c   objects in memory, for unit tests of the core
 *   fault_store.c wraps another store and injects failures
 *
 * A store is used from any thread. Every call either completes (sync calls)
 * or calls its done function exactly once (async GETs), also on shutdown. */
#ifndef SIEVE_OBJECT_STORE_H
#define SIEVE_OBJECT_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "sv_cancel.h"
#include "sv_error.h"

#define S3_KEY_MAX   1024u /* S3's own key-length limit, bytes */
#define S3_ETAG_MAX  256u
#define S3_TOKEN_MAX 4096u /* continuation token, bytes */

/* Outcome of a store request: the code of an sv_error from a store. */
typedef enum {
    STORE_OK = 0,
    STORE_ERR_NOT_FOUND,  /* 404 NoSuchKey */
    STORE_ERR_NO_BUCKET,  /* 404 NoSuchBucket */
    STORE_ERR_ACCESS,     /* 401/403: bad credentials or no permission */
    STORE_ERR_CHANGED,    /* 412/416 or a different ETag: the object was replaced */
    STORE_ERR_NETWORK,    /* could not connect / connection lost, after retries */
    STORE_ERR_TIMEOUT,    /* timed out or stalled, after retries */
    STORE_ERR_TLS,        /* certificate or handshake failure */
    STORE_ERR_PROTOCOL,   /* the server's response is malformed or inconsistent */
    STORE_ERR_HTTP,       /* any other HTTP status */
    STORE_ERR_NOMEM,
    STORE_ERR_INVALID,    /* bad argument or configuration */
    STORE_ERR_SHUTDOWN,   /* the store is being destroyed */
    STORE_ERR_CANCELLED,  /* the caller's token (store_request_opts.cancel) fired first */
} store_status;

const char *store_status_name(store_status st);
/* The errno a reader gets: EIO for data errors, ENOENT, EACCES, ENOMEM. */
int store_status_errno(store_status st);

typedef struct {
    uint64_t size;
    char etag[S3_ETAG_MAX + 1];
    int64_t mtime;
} store_object_info;

/* Who waits on a request, most urgent first: a store serves a lower class
 * before a higher one (demand reads of a reader, then a view's planning
 * rounds, then prefetch). The zero value is demand. */
typedef enum {
    STORE_PRIO_DEMAND = 0,
    STORE_PRIO_PLAN,
    STORE_PRIO_PREFETCH,
} store_priority;
#define STORE_PRIO_COUNT 3

/* Request options shared by the calls below. */
typedef struct {
    uint32_t max_attempts;   /* 0 = the store's policy */
    store_priority priority; /* STORE_PRIO_DEMAND by default */
    /* Who submitted it (a query, an open file), or NULL: within a priority
     * class a store takes turns between owners, so one busy owner cannot
     * starve another. Compared by address only. */
    const void *owner;
    bool fresh_connection;   /* on a new connection, closed after (the warmup's connect cost) */
    /* When it fires (or its deadline passes) before the request is done, the
     * request ends with STORE_ERR_CANCELLED: a queued or backing-off one is
     * never sent, one in flight is cut off (within a sweep, a few hundred ms
     * at most). NULL: none. It must stay valid until done is called, so it
     * belongs in the done function's ud (a fetch group, a batch), not on the
     * stack of a caller that may stop waiting. */
    const sv_cancel *cancel;
    /* Set to true, on the store's thread before done runs, once an attempt
     * has gone out (so a caller can tell a cancelled request that was sent
     * from one that never was). NULL: not wanted. Valid until done, as cancel. */
    bool *sent;
    /* GET: the size of the version the etag names, or 0 when unknown. A
     * response giving the object another total size (Content-Range
     * "a-b/TOTAL", or the length of a 200) is rejected: it is another object. */
    uint64_t object_size;
} store_request_opts;

typedef struct {
    char *key;      /* full object key (NUL-free UTF-8, 1..S3_KEY_MAX bytes) */
    uint64_t size;
    char *etag;     /* exactly as sent, quotes included (used for If-Match); "" when none */
    int64_t mtime;  /* Unix seconds (UTC) */
} store_object_entry;

/* One page of a delimiter listing (ListObjectsV2). */
typedef struct {
    store_object_entry *objects;
    size_t n_objects;
    char **prefixes;   /* common prefixes, each ending in the delimiter */
    size_t n_prefixes;
    bool truncated;    /* more pages follow */
    char *next_token;  /* continuation token, NULL if absent */
    uint32_t key_count;
} store_listing;

void store_listing_free(store_listing *l);

/* Async GET completion; runs on a store thread and must not block. */
typedef void (*store_get_done_fn)(void *ud, store_status st, const char *errmsg);

typedef struct object_store object_store;

typedef struct {
    /* GET [offset, offset+length) of key with If-Match: etag (when non-NULL),
     * scattered into iov (total length == length; the array is copied, the
     * buffers must stay valid until done). Exactly length bytes or an error:
     * never a short success. A status other than STORE_OK means the request
     * was not started and done will not be called. */
    store_status (*get_async)(object_store *s, const char *key, const char *etag, uint64_t offset,
                              uint64_t length, const struct iovec *iov, size_t iovcnt,
                              const store_request_opts *opts, store_get_done_fn done, void *ud);
    store_status (*head)(object_store *s, const char *key, store_object_info *out, sv_error *err);
    /* One page (at most 1000 keys) of the keys under prefix; token may be NULL.
     * On success *out owns its strings (store_listing_free). */
    store_status (*list_page)(object_store *s, const char *prefix, const char *delimiter,
                              const char *token, const store_request_opts *opts,
                              store_listing *out, sv_error *err);
    /* Complete every pending request (STORE_ERR_SHUTDOWN) and free. */
    void (*destroy)(object_store *s);
    /* PUT a whole object (body copied or sent before it returns); NULL when
     * the store cannot write. Only `sievefs index --to-s3` writes. */
    store_status (*put)(object_store *s, const char *key, const void *body, size_t len, sv_error *err);
} object_store_ops;

struct object_store {
    const object_store_ops *ops;
};

static inline store_status store_get_async(object_store *s, const char *key, const char *etag,
                                           uint64_t offset, uint64_t length, const struct iovec *iov,
                                           size_t iovcnt, const store_request_opts *opts,
                                           store_get_done_fn done, void *ud)
{
    return s->ops->get_async(s, key, etag, offset, length, iov, iovcnt, opts, done, ud);
}

static inline store_status store_head(object_store *s, const char *key, store_object_info *out,
                                      sv_error *err)
{
    return s->ops->head(s, key, out, err);
}

static inline store_status store_list_page(object_store *s, const char *prefix, const char *delimiter,
                                           const char *token, const store_request_opts *opts,
                                           store_listing *out, sv_error *err)
{
    return s->ops->list_page(s, prefix, delimiter, token, opts, out, err);
}

static inline store_status store_put(object_store *s, const char *key, const void *body, size_t len,
                                     sv_error *err)
{
    if (!s->ops->put)
        return (store_status)sv_fail(err, STORE_ERR_INVALID, 0, "PUT %s: this store cannot write", key);
    return s->ops->put(s, key, body, len, err);
}

static inline void store_destroy(object_store *s)
{
    if (s)
        s->ops->destroy(s);
}

/* Blocking ranged GET into buf, on top of get_async. */
store_status store_get(object_store *s, const char *key, const char *etag, uint64_t offset,
                       uint64_t length, void *buf, sv_error *err);

#endif
