#include "mem_store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_grow.h"

typedef struct {
    char *key;
    uint8_t *data;
    size_t len;
    char etag[S3_ETAG_MAX + 1];
    int64_t mtime;
} mem_object;

typedef struct get_req {
    struct get_req *next;
    char *key;
    char etag[S3_ETAG_MAX + 1];
    bool have_etag;
    uint64_t offset, length;
    struct iovec *iov;
    size_t iovcnt;
    const sv_cancel *cancel;
    bool *sent;
    store_get_done_fn done;
    void *ud;
} get_req;

struct mem_store {
    object_store base;         /* first: the interface */
    pthread_mutex_t lock;      /* guards everything below */
    pthread_cond_t work;       /* a GET was queued, or stopping */
    pthread_cond_t idle;       /* the queue ran empty */
    mem_object *objects;       /* sorted by key */
    size_t n, cap;
    unsigned page_keys;
    uint64_t next_etag;
    get_req *head, *tail;
    bool busy;                 /* the worker is completing a GET */
    bool holding;              /* mem_store_hold: queued GETs wait */
    bool stopping;
    mem_store_counts counts;
    pthread_t worker;
};

static size_t find(const mem_store *m, const char *key, bool *found)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->objects[mid].key, key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* Serve one GET (lock held): the status and, when OK, the bytes copied. */
static store_status serve(mem_store *m, get_req *r, char *msg, size_t msglen)
{
    bool found;
    size_t i = find(m, r->key, &found);
    if (!found) {
        snprintf(msg, msglen, "GET %s: HTTP 404 NoSuchKey", r->key);
        return STORE_ERR_NOT_FOUND;
    }
    const mem_object *o = &m->objects[i];
    if (r->have_etag && strcmp(o->etag, r->etag) != 0) {
        snprintf(msg, msglen, "GET %s: HTTP 412 PreconditionFailed", r->key);
        return STORE_ERR_CHANGED;
    }
    if (r->offset >= o->len || r->length > o->len - r->offset) {
        snprintf(msg, msglen, "GET %s: HTTP 416 InvalidRange", r->key);
        return STORE_ERR_CHANGED;
    }
    uint64_t pos = r->offset;
    for (size_t k = 0; k < r->iovcnt; k++) {
        memcpy(r->iov[k].iov_base, o->data + pos, r->iov[k].iov_len);
        pos += r->iov[k].iov_len;
    }
    m->counts.get_bytes += r->length;
    return STORE_OK;
}

static void req_free(get_req *r)
{
    free(r->key);
    free(r->iov);
    free(r);
}

static void *worker_main(void *arg)
{
    mem_store *m = arg;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while ((!m->head || m->holding) && !m->stopping)
            pthread_cond_wait(&m->work, &m->lock);
        get_req *r = m->head;
        if (!r)
            break; /* stopping with nothing queued */
        m->head = r->next;
        if (!m->head)
            m->tail = NULL;
        char msg[SV_ERROR_MSG] = "";
        store_status st;
        if (m->stopping) {
            st = STORE_ERR_SHUTDOWN;
            snprintf(msg, sizeof msg, "%s: store shutting down", r->key);
        } else if (sv_cancel_check(r->cancel)) {
            st = STORE_ERR_CANCELLED;
            m->counts.cancelled++;
            snprintf(msg, sizeof msg, "%s: cancelled", r->key);
        } else {
            if (r->sent)
                *r->sent = true;
            st = serve(m, r, msg, sizeof msg);
        }
        m->busy = true;
        pthread_mutex_unlock(&m->lock);
        r->done(r->ud, st, msg);
        req_free(r);
        pthread_mutex_lock(&m->lock);
        m->busy = false;
        if (!m->head)
            pthread_cond_broadcast(&m->idle);
    }
    pthread_cond_broadcast(&m->idle);
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

static store_status mem_get_async(object_store *s, const char *key, const char *etag, uint64_t offset,
                                  uint64_t length, const struct iovec *iov, size_t iovcnt,
                                  const store_request_opts *opts, store_get_done_fn done, void *ud)
{
    mem_store *m = (mem_store *)s;
    uint64_t total = 0;
    for (size_t i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (length == 0 || iovcnt == 0 || total != length || offset > UINT64_MAX - length ||
        (etag && strlen(etag) > S3_ETAG_MAX))
        return STORE_ERR_INVALID;
    get_req *r = calloc(1, sizeof *r);
    if (r) {
        r->key = strdup(key);
        r->iov = malloc(iovcnt * sizeof *iov);
    }
    if (!r || !r->key || !r->iov) {
        if (r)
            req_free(r);
        return STORE_ERR_NOMEM;
    }
    memcpy(r->iov, iov, iovcnt * sizeof *iov);
    r->iovcnt = iovcnt;
    if (etag) {
        snprintf(r->etag, sizeof r->etag, "%s", etag);
        r->have_etag = true;
    }
    r->offset = offset;
    r->length = length;
    r->cancel = opts ? opts->cancel : NULL;
    r->sent = opts ? opts->sent : NULL;
    r->done = done;
    r->ud = ud;
    pthread_mutex_lock(&m->lock);
    if (m->stopping) {
        pthread_mutex_unlock(&m->lock);
        req_free(r);
        return STORE_ERR_SHUTDOWN;
    }
    m->counts.gets++;
    if (m->tail)
        m->tail->next = r;
    else
        m->head = r;
    m->tail = r;
    pthread_cond_signal(&m->work);
    pthread_mutex_unlock(&m->lock);
    return STORE_OK;
}

static store_status mem_head(object_store *s, const char *key, store_object_info *out, sv_error *err)
{
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->lock);
    m->counts.heads++;
    bool found;
    size_t i = find(m, key, &found);
    if (found) {
        memset(out, 0, sizeof *out);
        out->size = m->objects[i].len;
        snprintf(out->etag, sizeof out->etag, "%s", m->objects[i].etag);
        out->mtime = m->objects[i].mtime;
    }
    pthread_mutex_unlock(&m->lock);
    if (!found)
        return (store_status)sv_fail(err, STORE_ERR_NOT_FOUND, 0, "HEAD %s: HTTP 404 NoSuchKey", key);
    return STORE_OK;
}

static bool push_prefix(store_listing *l, size_t *cap, const char *p, size_t n)
{
    if (!sv_grow((void **)&l->prefixes, cap, l->n_prefixes + 1, sizeof *l->prefixes, 16, SIZE_MAX / 16))
        return false;
    char *c = strndup(p, n);
    if (!c)
        return false;
    l->prefixes[l->n_prefixes++] = c;
    return true;
}

static bool push_object(store_listing *l, size_t *cap, const mem_object *o)
{
    if (!sv_grow((void **)&l->objects, cap, l->n_objects + 1, sizeof *l->objects, 16, SIZE_MAX / 64))
        return false;
    store_object_entry *e = &l->objects[l->n_objects];
    e->key = strdup(o->key);
    e->etag = strdup(o->etag);
    e->size = o->len;
    e->mtime = o->mtime;
    if (!e->key || !e->etag) {
        free(e->key);
        free(e->etag);
        return false;
    }
    l->n_objects++;
    return true;
}

/* Compare the first n bytes of a with the string b, as strcmp would the
 * string of those n bytes. */
static int cmp_n(const char *a, size_t n, const char *b)
{
    size_t bl = strlen(b);
    int c = memcmp(a, b, n < bl ? n : bl);
    return c ? c : (n > bl) - (n < bl);
}

/* A listing page. Entries (keys, or common prefixes ending in the
 * delimiter) come in sorted order; the continuation token is the last entry
 * served. */
static store_status mem_list_page(object_store *s, const char *prefix, const char *delimiter, const char *token,
                                  const store_request_opts *opts, store_listing *out, sv_error *err)
{
    mem_store *m = (mem_store *)s;
    memset(out, 0, sizeof *out);
    if (opts && sv_cancel_check(opts->cancel))
        return sv_fail(err, STORE_ERR_CANCELLED, 0, "list %s: cancelled", prefix), STORE_ERR_CANCELLED;
    size_t plen = strlen(prefix), dlen = delimiter ? strlen(delimiter) : 0;
    size_t cap_o = 0, cap_p = 0, last_len = 0;
    const char *last = NULL;
    bool ok = true;
    pthread_mutex_lock(&m->lock);
    m->counts.lists++;
    unsigned served = 0;
    for (size_t i = 0; ok && i < m->n; i++) {
        const char *k = m->objects[i].key;
        if (strncmp(k, prefix, plen) != 0)
            continue;
        const char *cut = dlen ? strstr(k + plen, delimiter) : NULL;
        size_t elen = cut ? (size_t)(cut + dlen - k) : strlen(k);
        if (token && cmp_n(k, elen, token) <= 0)
            continue;
        if (cut && last && last_len == elen && memcmp(last, k, elen) == 0)
            continue; /* more keys under the prefix just listed */
        if (served == m->page_keys) {
            out->truncated = true;
            ok = (out->next_token = strndup(last, last_len)) != NULL;
            break;
        }
        ok = cut ? push_prefix(out, &cap_p, k, elen) : push_object(out, &cap_o, &m->objects[i]);
        last = k;
        last_len = elen;
        served++;
    }
    pthread_mutex_unlock(&m->lock);
    out->key_count = (uint32_t)(out->n_objects + out->n_prefixes);
    if (!ok) {
        store_listing_free(out);
        return (store_status)sv_fail(err, STORE_ERR_NOMEM, 0, "listing '%s': out of memory", prefix);
    }
    return STORE_OK;
}

static void mem_destroy(object_store *s)
{
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->lock);
    m->stopping = true;
    pthread_cond_broadcast(&m->work);
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->worker, NULL); /* queued GETs complete with STORE_ERR_SHUTDOWN */
    for (size_t i = 0; i < m->n; i++) {
        free(m->objects[i].key);
        free(m->objects[i].data);
    }
    free(m->objects);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->work);
    pthread_cond_destroy(&m->idle);
    free(m);
}

static store_status mem_put_op(object_store *s, const char *key, const void *body, size_t len, sv_error *err)
{
    if (!mem_store_put((mem_store *)s, key, body, len))
        return (store_status)sv_fail(err, STORE_ERR_NOMEM, 0, "PUT %s: out of memory", key);
    return STORE_OK;
}

static const object_store_ops mem_ops = {
    .get_async = mem_get_async,
    .head = mem_head,
    .list_page = mem_list_page,
    .put = mem_put_op,
    .destroy = mem_destroy,
};

mem_store *mem_store_create(void)
{
    mem_store *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->base.ops = &mem_ops;
    m->page_keys = 1000;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->work, NULL);
    pthread_cond_init(&m->idle, NULL);
    if (pthread_create(&m->worker, NULL, worker_main, m) != 0) {
        pthread_mutex_destroy(&m->lock);
        pthread_cond_destroy(&m->work);
        pthread_cond_destroy(&m->idle);
        free(m);
        return NULL;
    }
    return m;
}

object_store *mem_store_base(mem_store *m)
{
    return &m->base;
}

bool mem_store_put_etag(mem_store *m, const char *key, const void *data, size_t len, const char *etag)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return false;
    if (len)
        memcpy(copy, data, len);
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    if (!found) {
        char *k = strdup(key);
        if (!k || !sv_grow((void **)&m->objects, &m->cap, m->n + 1, sizeof *m->objects, 16, SIZE_MAX / 64)) {
            pthread_mutex_unlock(&m->lock);
            free(k);
            free(copy);
            return false;
        }
        memmove(&m->objects[i + 1], &m->objects[i], (m->n - i) * sizeof *m->objects);
        memset(&m->objects[i], 0, sizeof *m->objects);
        m->objects[i].key = k;
        m->n++;
    }
    mem_object *o = &m->objects[i];
    free(o->data);
    o->data = copy;
    o->len = len;
    o->mtime = 1700000000 + (int64_t)m->next_etag;
    if (etag)
        snprintf(o->etag, sizeof o->etag, "%s", etag);
    else
        snprintf(o->etag, sizeof o->etag, "\"mem-%llu\"", (unsigned long long)++m->next_etag);
    pthread_mutex_unlock(&m->lock);
    return true;
}

bool mem_store_put(mem_store *m, const char *key, const void *data, size_t len)
{
    return mem_store_put_etag(m, key, data, len, NULL);
}

bool mem_store_delete(mem_store *m, const char *key)
{
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    if (found) {
        free(m->objects[i].key);
        free(m->objects[i].data);
        memmove(&m->objects[i], &m->objects[i + 1], (m->n - i - 1) * sizeof *m->objects);
        m->n--;
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

bool mem_store_etag(mem_store *m, const char *key, char *etag)
{
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    if (found)
        snprintf(etag, S3_ETAG_MAX + 1, "%s", m->objects[i].etag);
    pthread_mutex_unlock(&m->lock);
    return found;
}

void mem_store_set_page_keys(mem_store *m, unsigned keys)
{
    pthread_mutex_lock(&m->lock);
    m->page_keys = keys ? keys : 1;
    pthread_mutex_unlock(&m->lock);
}

mem_store_counts mem_store_counts_now(mem_store *m)
{
    pthread_mutex_lock(&m->lock);
    mem_store_counts c = m->counts;
    pthread_mutex_unlock(&m->lock);
    return c;
}

void mem_store_hold(mem_store *m, bool hold)
{
    pthread_mutex_lock(&m->lock);
    m->holding = hold;
    pthread_cond_broadcast(&m->work);
    pthread_mutex_unlock(&m->lock);
}

void mem_store_drain(mem_store *m)
{
    pthread_mutex_lock(&m->lock);
    while ((m->head || m->busy) && !m->stopping)
        pthread_cond_wait(&m->idle, &m->lock);
    pthread_mutex_unlock(&m->lock);
}
