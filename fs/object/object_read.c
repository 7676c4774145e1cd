#include "object_read.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct object_io {
    object_store *store;
    block_cache *cache;
    sv_stats *stats;
    uint32_t block_size;
    uint64_t max_request;
    uint64_t read_timeout_ms;
    sv_cancel shutdown; /* fired once, at unmount (atomic: any thread or a signal handler) */
};

void object_ref_free(object_ref *o)
{
    if (!o)
        return;
    free(o->key);
    o->key = NULL;
}

object_io *object_io_create(object_store *store, block_cache *cache, sv_stats *stats, uint64_t max_request,
                            uint64_t read_timeout_ms)
{
    object_io *io = calloc(1, sizeof *io);
    if (!io)
        return NULL;
    io->read_timeout_ms = read_timeout_ms;
    sv_cancel_init(&io->shutdown, NULL, 0);
    io->store = store;
    io->cache = cache;
    io->stats = stats;
    io->block_size = block_cache_block_size(cache);
    io->max_request = max_request;
    if (io->max_request > (uint64_t)io->block_size * OBJECT_MAX_RUN_BLOCKS)
        io->max_request = (uint64_t)io->block_size * OBJECT_MAX_RUN_BLOCKS;
    if (io->max_request < io->block_size)
        io->max_request = io->block_size;
    return io;
}

void object_io_destroy(object_io *io)
{
    free(io);
}

uint32_t object_io_block_size(const object_io *io)
{
    return io->block_size;
}

uint64_t object_io_max_request(const object_io *io)
{
    return io->max_request;
}

uint64_t object_io_read_timeout_ms(const object_io *io)
{
    return io->read_timeout_ms;
}

uint64_t object_io_cache_limit(const object_io *io)
{
    return block_cache_limit(io->cache);
}

void object_io_cancel_init(object_io *io, sv_cancel *tok)
{
    sv_cancel_init(tok, &io->shutdown, io->read_timeout_ms);
}

void object_io_cancel_init_under(object_io *io, sv_cancel *tok, const sv_cancel *parent)
{
    sv_cancel_init(tok, parent ? parent : &io->shutdown, io->read_timeout_ms);
}

void object_io_shutdown(object_io *io)
{
    sv_cancel_fire(&io->shutdown, ESHUTDOWN);
}

/* ---- fetching runs of blocks ------------------------------------------------ */

typedef struct {
    object_io *io;
    size_t n;
    cache_block *blocks[OBJECT_MAX_RUN_BLOCKS];
    struct iovec iov[OBJECT_MAX_RUN_BLOCKS];
    block_fetch fetch; /* cancelled when every reader of the run gave up */
} fetch_job;

static void fetch_done(void *ud, store_status st, const char *errmsg)
{
    fetch_job *job = ud;
    /* A fetch failed by the store's shutdown, or dropped because its readers
     * gave up, is not a failure of the mount. */
    if (st == STORE_ERR_SHUTDOWN || st == STORE_ERR_CANCELLED)
        log_info("fetch abandoned: %s", errmsg && errmsg[0] ? errmsg : store_status_name(st));
    else if (st != STORE_OK)
        log_error("read failed: %s", errmsg && errmsg[0] ? errmsg : store_status_name(st));
    block_cache_complete_run(job->io->cache, job->blocks, job->n, st == STORE_OK ? 0 : EIO);
    free(job);
}

/* Fetch a run of consecutive LOADING blocks, each pinned for the job, in one
 * ranged GET. On submission failure the blocks fail at once. */
static void fetch_run(object_io *io, const object_ref *o, cache_block **run, size_t n, bool demand)
{
    if (n == 0)
        return;
    fetch_job *job = malloc(sizeof *job);
    store_status st = STORE_ERR_NOMEM;
    if (job) {
        uint64_t len = 0;
        for (size_t i = 0; i < n; i++) {
            job->iov[i].iov_base = run[i]->data;
            job->iov[i].iov_len = run[i]->len;
            len += run[i]->len;
        }
        job->io = io;
        job->n = n;
        memcpy(job->blocks, run, n * sizeof *run);
        sv_cancel_init(&job->fetch.cancel, NULL, 0);
        job->fetch.blocks = job->blocks;
        job->fetch.n = n;
        block_cache_set_fetch(io->cache, &job->fetch);
        store_request_opts opts = {.priority = demand ? STORE_PRIO_DEMAND : STORE_PRIO_PREFETCH,
                                   .owner = o, /* turns between open files */
                                   .cancel = &job->fetch.cancel,
                                   .object_size = o->size};
        uint64_t offset = run[0]->index * io->block_size;
        log_trace("GET %s bytes %llu-%llu (%s)", o->key, (unsigned long long)offset,
                  (unsigned long long)(offset + len - 1), demand ? "demand" : "prefetch");
        st = store_get_async(io->store, o->key, o->etag, offset, len, job->iov, n, &opts, fetch_done, job);
    }
    if (st != STORE_OK) {
        log_error("cannot start GET of %s: %s", o->key, store_status_name(st));
        block_cache_complete_run(io->cache, run, n, EIO); /* before the job goes: its fetch is listed */
        free(job);
    }
}

static uint32_t block_len(const object_io *io, const object_ref *o, uint64_t index)
{
    uint64_t start = index * io->block_size;
    uint64_t left = o->size - start;
    return left < io->block_size ? (uint32_t)left : io->block_size;
}

static size_t run_limit(const object_io *io, uint64_t run_bytes)
{
    size_t limit = (size_t)(io->max_request / io->block_size);
    size_t want = (size_t)(run_bytes / io->block_size);
    if (want >= 1 && want < limit)
        limit = want;
    return limit < 1 ? 1 : limit > OBJECT_MAX_RUN_BLOCKS ? OBJECT_MAX_RUN_BLOCKS : limit;
}

void object_prefetch(object_io *io, const object_ref *o, uint64_t start, uint64_t end, uint64_t run_bytes,
                     bool demand)
{
    if (end > o->size)
        end = o->size;
    if (start >= end)
        return;
    cache_block *run[OBJECT_MAX_RUN_BLOCKS];
    size_t n = 0, limit = run_limit(io, run_bytes);
    uint64_t first = start / io->block_size, last = (end - 1) / io->block_size;
    for (uint64_t i = first; i <= last; i++) {
        bool created = false;
        cache_block *b = block_cache_acquire(io->cache, o->id, i, block_len(io, o, i), true, &created);
        if (b && created) {
            run[n++] = b; /* the acquire pin becomes the job's pin */
            STAT_ADD(io->stats, prefetch_bytes, b->len);
        } else if (b) {
            block_cache_release(io->cache, b);
        }
        if ((!created && n) || n == limit) {
            fetch_run(io, o, run, n, demand);
            n = 0;
        }
        if (!b)
            break; /* no room: stop prefetching */
    }
    fetch_run(io, o, run, n, demand);
}

size_t object_cancel_prefetch(object_io *io, const object_ref *o)
{
    size_t n = block_cache_cancel_unwanted(io->cache, o->id);
    if (n)
        log_debug("%s: %zu prefetches cancelled: no reader left", o->key, n);
    return n;
}

void object_prefetch_parts(object_io *io, const object_ref *o, uint64_t start, uint64_t end)
{
    uint64_t part = end > start ? (end - start) / 4 : 0;
    if (part < (1u << 20))
        part = 1u << 20;
    if (part > io->max_request)
        part = io->max_request;
    object_prefetch(io, o, start, end, part, true);
}

void prefetch_run_flush(object_io *io, const object_ref *o, prefetch_run *r)
{
    if (r->end > r->start && r->parts)
        object_prefetch_parts(io, o, r->start, r->end);
    else if (r->end > r->start)
        object_prefetch(io, o, r->start, r->end, 0, true);
    r->start = r->end = 0;
}

void prefetch_run_add(object_io *io, const object_ref *o, prefetch_run *r, uint64_t start, uint64_t end)
{
    if (r->end > r->start && start > r->end)
        prefetch_run_flush(io, o, r);
    if (r->end == r->start)
        r->start = r->end = start;
    if (end > r->end)
        r->end = end;
}

/* ---- reading through the cache --------------------------------------------- */

int object_pin(object_io *io, const object_ref *o, uint64_t off, size_t size, size_t maxiov, object_pins *pins)
{
    memset(pins, 0, sizeof *pins);
    if (off >= o->size || size == 0)
        return 0;
    if (size > o->size - off)
        size = (size_t)(o->size - off);
    const uint64_t bs = io->block_size;
    uint64_t first = off / bs, last = (off + size - 1) / bs;
    size_t nblocks = (size_t)(last - first + 1);
    if (nblocks > maxiov)
        return -EINVAL;
    pins->blocks = calloc(nblocks, sizeof *pins->blocks);
    pins->was_ready = calloc(nblocks, sizeof *pins->was_ready);
    if (!pins->blocks || !pins->was_ready) {
        object_pins_release(io, pins);
        return -ENOMEM;
    }
    pins->off = off;
    pins->size = size;
    /* Pin every block; start one GET per run of consecutive missing blocks. */
    cache_block *run[OBJECT_MAX_RUN_BLOCKS];
    size_t nrun = 0, limit = run_limit(io, 0);
    int result = 0;
    for (size_t i = 0; i < nblocks; i++) {
        bool created = false;
        uint64_t idx = first + i;
        cache_block *b = block_cache_acquire(io->cache, o->id, idx, block_len(io, o, idx), false, &created);
        if (!b) {
            result = -ENOMEM;
            break;
        }
        pins->blocks[pins->n++] = b;
        if (created) {
            /* One pin for this read (taken by acquire), one for the fetch job. */
            block_cache_pin(io->cache, b);
            run[nrun++] = b;
        } else {
            pins->was_ready[i] = block_cache_is_ready(io->cache, b);
        }
        if ((!created && nrun) || nrun == limit) {
            fetch_run(io, o, run, nrun, true);
            nrun = 0;
        }
    }
    fetch_run(io, o, run, nrun, true);
    if (result < 0)
        object_pins_release(io, pins); /* started fetches hold pins of their own */
    return result;
}

ssize_t object_pins_wait(object_io *io, object_pins *pins, struct iovec *iov, size_t *niov,
                         object_read_tally *tally, const sv_cancel *tok)
{
    *niov = 0;
    const uint64_t bs = io->block_size;
    const uint64_t off = pins->off, end = pins->off + pins->size;
    size_t total = 0;
    int result = 0;
    for (size_t i = 0; i < pins->n; i++) {
        cache_block *b = pins->blocks[i];
        int e = block_cache_wait(io->cache, b, tok);
        if (e) {
            /* Interrupted readers are not errors of the mount. */
            if (e != EINTR)
                STAT_ADD(io->stats, errors, 1);
            result = -e;
            if (sv_cancel_check(tok)) {
                /* Gave up waiting: the fetches nobody else waits for are cut off. */
                object_pins_abandon(io, pins);
                return result;
            }
            break;
        }
        uint64_t bstart = b->index * bs;
        uint64_t from = off > bstart ? off - bstart : 0;
        uint64_t until = end - bstart < b->len ? end - bstart : b->len;
        if (until <= from) {
            result = -EIO; /* cannot happen unless the object size changed */
            break;
        }
        iov[i].iov_base = b->data + from;
        iov[i].iov_len = (size_t)(until - from);
        total += iov[i].iov_len;
        if (tally && pins->was_ready[i])
            tally->hit_bytes += until - from;
        else if (tally)
            tally->miss_bytes += until - from;
    }
    if (result < 0) {
        object_pins_release(io, pins);
        return result;
    }
    *niov = pins->n;
    return (ssize_t)total;
}

/* The pin arrays, once every block is released. */
static void pins_clear(object_pins *pins)
{
    free(pins->blocks);
    free(pins->was_ready);
    pins->blocks = NULL;
    pins->was_ready = NULL;
    pins->n = 0;
}

void object_pins_abandon(object_io *io, object_pins *pins)
{
    for (size_t i = 0; i < pins->n; i++)
        block_cache_release_abandoned(io->cache, pins->blocks[i]);
    pins_clear(pins);
}

void object_pins_release(object_io *io, object_pins *pins)
{
    uint64_t bs = io->block_size;
    for (size_t i = 0; i < pins->n; i++) {
        cache_block *b = pins->blocks[i];
        /* A streaming reader never comes back for a block it has read past. */
        if (pins->streaming && b->index * bs + b->len <= pins->off + pins->size)
            block_cache_release_consumed(io->cache, b);
        else
            block_cache_release(io->cache, b);
    }
    pins_clear(pins);
}

#define COPY_MAX_IOV 128

ssize_t object_read(object_io *io, const object_ref *o, uint64_t off, size_t size, uint8_t *buf,
                    const sv_cancel *tok)
{
    if (off >= o->size)
        return 0;
    if (size > o->size - off)
        size = (size_t)(o->size - off);
    const size_t step = (size_t)((COPY_MAX_IOV - 1) * (uint64_t)io->block_size);
    size_t done = 0;
    while (done < size) {
        struct iovec iov[COPY_MAX_IOV];
        size_t niov = 0;
        object_pins pins;
        size_t want = size - done < step ? size - done : step;
        int r = object_pin(io, o, off + done, want, COPY_MAX_IOV, &pins);
        if (r < 0)
            return r;
        ssize_t n = object_pins_wait(io, &pins, iov, &niov, NULL, tok);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        for (size_t i = 0; i < niov; i++) {
            memcpy(buf + done, iov[i].iov_base, iov[i].iov_len);
            done += iov[i].iov_len;
        }
        object_pins_release(io, &pins);
    }
    return (ssize_t)done;
}

/* ---- ranges outside the cache ------------------------------------------------ */

/* The requests of one object_fetch_ranges. Heap-allocated: a waiter that
 * gives up (deadline, interrupt) leaves it, and the buffers of the requests
 * still running, to the last completion. */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    size_t pending;   /* under m: started, not yet completed */
    bool failed;      /* under m */
    bool abandoned;   /* under m: the waiter is gone; the last completion frees everything */
    /* Fired when the waiter gives up, so the store drops what it has not
     * sent and cuts off what is in flight: nobody wants those bytes now.
     * Lives here, not on the waiter's stack, as the requests point to it. */
    sv_cancel cancel;
    uint8_t **bufs;   /* under m: the started requests' buffers, taken over when abandoned */
    size_t nbufs;
} fetch_group;

static void group_free(fetch_group *g)
{
    for (size_t i = 0; g->abandoned && i < g->nbufs; i++)
        free(g->bufs[i]);
    free(g->bufs);
    pthread_mutex_destroy(&g->m);
    pthread_cond_destroy(&g->c);
    free(g);
}

static void group_done(void *ud, store_status st, const char *errmsg)
{
    fetch_group *g = ud;
    pthread_mutex_lock(&g->m);
    if (st != STORE_OK) {
        g->failed = true;
        if (!g->abandoned && st != STORE_ERR_CANCELLED)
            log_warn("view fetch failed: %s", errmsg && *errmsg ? errmsg : store_status_name(st));
    }
    g->pending--;
    bool last = g->abandoned && g->pending == 0;
    pthread_cond_broadcast(&g->c);
    pthread_mutex_unlock(&g->m);
    if (last)
        group_free(g);
}

int object_fetch_ranges(object_io *io, const object_ref *o, object_range *ranges, size_t n, size_t *started,
                        const sv_cancel *tok)
{
    if (started)
        *started = 0;
    fetch_group *g = calloc(1, sizeof *g);
    if (!g || !(g->bufs = calloc(n ? n : 1, sizeof *g->bufs))) {
        free(g);
        return -ENOMEM;
    }
    pthread_mutex_init(&g->m, NULL);
    sv_cond_init(&g->c);
    sv_cancel_init(&g->cancel, NULL, 0);
    size_t sent = 0;
    bool refused = false;
    for (size_t i = 0; i < n; i++) {
        struct iovec iov = {ranges[i].buf, (size_t)ranges[i].len};
        store_request_opts opts = {.priority = STORE_PRIO_PLAN, .owner = o, .cancel = &g->cancel,
                                   .object_size = o->size};
        pthread_mutex_lock(&g->m);
        g->pending++;
        g->bufs[g->nbufs++] = ranges[i].buf;
        pthread_mutex_unlock(&g->m);
        if (store_get_async(io->store, o->key, o->etag, ranges[i].off, ranges[i].len, &iov, 1, &opts,
                            group_done, g) != STORE_OK) {
            pthread_mutex_lock(&g->m);
            g->pending--;
            g->nbufs--;
            pthread_mutex_unlock(&g->m);
            refused = true;
            break;
        }
        sent++;
    }
    if (started)
        *started = sent;
    /* The store completes every started request (on shutdown too), but a
     * stalled one may take longer than the caller's deadline. */
    pthread_mutex_lock(&g->m);
    int e = 0;
    while (g->pending && !e)
        e = sv_cancel_wait(tok, &g->c, &g->m);
    if (g->pending) {
        g->abandoned = true;
        sv_cancel_fire(&g->cancel, e);
        for (size_t i = 0; i < sent; i++)
            ranges[i].buf = NULL; /* the group's now: requests still write into them */
        pthread_mutex_unlock(&g->m);
        return -e;
    }
    bool failed = g->failed || refused;
    pthread_mutex_unlock(&g->m);
    group_free(g);
    return failed ? -EIO : 0;
}

int object_find_exact(object_io *io, const char *key, object_ref *out, const sv_cancel *tok)
{
    memset(out, 0, sizeof *out);
    store_request_opts opts = {.priority = STORE_PRIO_PLAN, .cancel = tok};
    store_listing l;
    sv_error err;
    /* Keys that merely begin with key come too (as objects or prefixes);
     * the exact one sorts first, so the first page holds it if it exists. */
    store_status st = store_list_page(io->store, key, "/", NULL, &opts, &l, &err);
    if (st != STORE_OK)
        return -store_status_errno(st);
    int rc = -ENOENT;
    for (size_t i = 0; i < l.n_objects && rc == -ENOENT; i++) {
        const store_object_entry *e = &l.objects[i];
        if (strcmp(e->key, key) != 0)
            continue;
        out->key = strdup(key);
        if (!out->key) {
            rc = -ENOMEM;
            break;
        }
        snprintf(out->etag, sizeof out->etag, "%s", e->etag ? e->etag : "");
        out->size = e->size;
        rc = 0;
    }
    store_listing_free(&l);
    return rc;
}
