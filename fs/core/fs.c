#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "block_cache.h"
#include "fs_internal.h"
#include "log.h"
#include "parquet_layout.h"
#include "tree.h"
#include "view.h"

void fs_handle_register(sv_fs *fs, sv_handle *h, bool is_dir)
{
    h->is_dir = is_dir;
    pthread_mutex_lock(&fs->handles_lock);
    h->prev = &fs->handles;
    h->next = fs->handles.next;
    fs->handles.next->prev = h;
    fs->handles.next = h;
    pthread_mutex_unlock(&fs->handles_lock);
}

static void handle_unregister(sv_fs *fs, sv_handle *h)
{
    pthread_mutex_lock(&fs->handles_lock);
    h->prev->next = h->next;
    h->next->prev = h->prev;
    h->prev = h->next = NULL;
    pthread_mutex_unlock(&fs->handles_lock);
}

static void handle_register(sv_fs *fs, sv_handle *h, bool is_dir)
{
    fs_handle_register(fs, h, is_dir);
}

static void dir_free(sv_dir *d);
static void file_free(sv_fs *fs, sv_file *f);

void sv_fs_config_defaults(sv_fs_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->prefix = "";
    cfg->cache_bytes = 512ull << 20;
    cfg->block_size = 16u << 10;
    cfg->max_request = 16ull << 20;
    cfg->max_window = 64ull << 20;
    cfg->min_streak = 4ull << 20;
    cfg->tail_bytes = 64u << 10;
    cfg->dir_ttl_ms = 60000;
    cfg->delta_log_ttl_ms = 1000;
    cfg->file_attr_timeout_s = 3600;
    cfg->delta_log_attr_timeout_s = 1;
    cfg->dir_attr_timeout_s = 10;
    cfg->request_cost = SV_DEFAULT_REQUEST_COST;
}

sv_fs *sv_fs_create(s3_client *client, sv_stats *stats, const sv_fs_config *cfg)
{
    sv_fs *fs = calloc(1, sizeof *fs);
    if (!fs)
        return NULL;
    fs->cfg = *cfg;
    if (fs->cfg.max_window > fs->cfg.cache_bytes / 4)
        fs->cfg.max_window = fs->cfg.cache_bytes / 4;
    if (fs->cfg.max_request > (uint64_t)fs->cfg.block_size * MAX_RUN_BLOCKS)
        fs->cfg.max_request = (uint64_t)fs->cfg.block_size * MAX_RUN_BLOCKS;
    fs->client = client;
    fs->stats = stats;
    fs->uid = getuid();
    fs->gid = getgid();
    fs->start_time = (int64_t)time(NULL);
    pthread_mutex_init(&fs->handles_lock, NULL);
    fs->handles.prev = fs->handles.next = &fs->handles;
    fs->tree = tree_create(client, cfg->prefix, cfg->dir_ttl_ms, cfg->delta_log_ttl_ms);
    fs->cache = block_cache_create(cfg->block_size, cfg->cache_bytes, stats);
    fs->views = views_create();
    if (!fs->tree || !fs->cache || !fs->views) {
        sv_fs_destroy(fs);
        return NULL;
    }
    return fs;
}

void sv_fs_destroy(sv_fs *fs)
{
    if (!fs)
        return;
    /* Handles the kernel never released (the mount ended first). */
    fs->destroying = true;
    if (fs->handles.next) {
        while (fs->handles.next != &fs->handles) {
            sv_handle *h = fs->handles.next;
            h->prev->next = h->next;
            h->next->prev = h->prev;
            if (h->is_dir)
                dir_free((sv_dir *)h);
            else
                file_free(fs, (sv_file *)h);
        }
        pthread_mutex_destroy(&fs->handles_lock);
    }
    views_destroy(fs->views);
    tree_destroy(fs->tree);
    block_cache_destroy(fs->cache);
    free(fs);
}

s3_status sv_fs_check(sv_fs *fs, char *err, size_t errlen)
{
    /* Fail fast at mount time: two attempts, not the full retry budget. */
    s3_request_opts opts = {.max_attempts = 2, .high_priority = true};
    return tree_refresh_dir(fs->tree, TREE_ROOT_INO, &opts, err, errlen);
}

/* ---- attributes ------------------------------------------------------------ */

static size_t render_stats(sv_fs *fs, char *buf, size_t cap)
{
    return sv_stats_render_json(fs->stats, block_cache_bytes(fs->cache), block_cache_limit(fs->cache),
                                buf, cap);
}

static void virtual_attr(sv_fs *fs, uint64_t ino, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ino;
    out->mtime = fs->start_time;
    out->timeout = 0;
    if (ino == SV_INO_CONTROL) {
        out->mode = S_IFDIR | 0555;
        out->nlink = 2;
    } else {
        char buf[2048];
        out->mode = S_IFREG | 0444;
        out->nlink = 1;
        out->size = render_stats(fs, buf, sizeof buf);
    }
}

void fs_tree_attr(const sv_fs *fs, const tree_attr *ta, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ta->ino;
    out->size = ta->size;
    out->mtime = ta->mtime ? ta->mtime : fs->start_time;
    if (ta->is_dir) {
        out->mode = S_IFDIR | 0555;
        out->nlink = 2;
        out->timeout = fs->cfg.dir_attr_timeout_s;
    } else {
        out->mode = S_IFREG | 0444;
        out->nlink = 1;
        out->timeout = ta->in_delta_log ? fs->cfg.delta_log_attr_timeout_s : fs->cfg.file_attr_timeout_s;
    }
}

int fs_status_errno(s3_status st)
{
    return st == S3_OK ? 0 : -s3_status_errno(st);
}

int sv_fs_lookup(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out)
{
    if (strlen(name) > TREE_NAME_MAX)
        return -ENAMETOOLONG;
    if (parent == TREE_ROOT_INO && strcmp(name, SV_CONTROL_DIR) == 0) {
        virtual_attr(fs, SV_INO_CONTROL, out);
        return 0;
    }
    if (parent == SV_INO_CONTROL) {
        if (strcmp(name, "stats") == 0) {
            virtual_attr(fs, SV_INO_STATS, out);
            return 0;
        }
        if (strcmp(name, "hints") == 0)
            return views_getattr(fs, SV_INO_HINTS, out);
        if (strcmp(name, "views") == 0)
            return views_getattr(fs, SV_INO_VIEWS, out);
        return -ENOENT;
    }
    if (parent == SV_INO_STATS)
        return -ENOTDIR;
    if (views_owns(parent))
        return views_lookup(fs, parent, name, out);
    tree_attr ta;
    s3_status st = tree_lookup(fs->tree, parent, name, &ta);
    if (st != S3_OK)
        return fs_status_errno(st);
    fs_tree_attr(fs, &ta, out);
    return 0;
}

int sv_fs_getattr(sv_fs *fs, uint64_t ino, sv_attr *out)
{
    if (ino == SV_INO_CONTROL || ino == SV_INO_STATS) {
        virtual_attr(fs, ino, out);
        return 0;
    }
    if (views_owns(ino))
        return views_getattr(fs, ino, out);
    tree_attr ta;
    s3_status st = tree_getattr(fs->tree, ino, &ta);
    if (st != S3_OK)
        return fs_status_errno(st);
    fs_tree_attr(fs, &ta, out);
    return 0;
}

/* ---- directories ----------------------------------------------------------- */

static bool dir_push(sv_dir *d, const char *name, uint64_t ino, mode_t mode)
{
    char *n = strdup(name);
    if (!n)
        return false;
    d->entries[d->n].name = n;
    d->entries[d->n].ino = ino;
    d->entries[d->n].mode = mode;
    d->n++;
    return true;
}

int sv_fs_opendir(sv_fs *fs, uint64_t ino, sv_dir **out)
{
    *out = NULL;
    sv_dir *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    if (ino == SV_INO_CONTROL) {
        d->entries = calloc(5, sizeof *d->entries);
        if (!d->entries || !dir_push(d, ".", ino, S_IFDIR) || !dir_push(d, "..", TREE_ROOT_INO, S_IFDIR) ||
            !dir_push(d, "stats", SV_INO_STATS, S_IFREG) || !dir_push(d, "hints", SV_INO_HINTS, S_IFDIR) ||
            !dir_push(d, "views", SV_INO_VIEWS, S_IFDIR)) {
            dir_free(d);
            return -ENOMEM;
        }
        handle_register(fs, &d->handle, true);
        *out = d;
        return 0;
    }
    if (views_owns(ino)) {
        int r = views_opendir(fs, ino, d);
        if (r < 0) {
            dir_free(d);
            return r;
        }
        handle_register(fs, &d->handle, true);
        *out = d;
        return 0;
    }
    tree_attr ta;
    s3_status st = tree_getattr(fs->tree, ino, &ta);
    if (st == S3_OK && !ta.is_dir) {
        free(d);
        return -ENOTDIR;
    }
    tree_dir_snapshot snap = {0};
    if (st == S3_OK)
        st = tree_readdir(fs->tree, ino, &snap);
    if (st != S3_OK) {
        free(d);
        return fs_status_errno(st);
    }
    /* .sieve is deliberately absent: globs and table scans must not see it. */
    d->entries = calloc(snap.n + 2, sizeof *d->entries);
    bool ok = d->entries && dir_push(d, ".", ino, S_IFDIR) &&
              dir_push(d, "..", tree_parent(fs->tree, ino), S_IFDIR);
    for (size_t i = 0; ok && i < snap.n; i++)
        ok = dir_push(d, snap.entries[i].name, snap.entries[i].ino,
                      snap.entries[i].is_dir ? S_IFDIR : S_IFREG);
    tree_dir_snapshot_free(&snap);
    if (!ok) {
        dir_free(d);
        return -ENOMEM;
    }
    handle_register(fs, &d->handle, true);
    *out = d;
    return 0;
}

void sv_fs_releasedir(sv_fs *fs, sv_dir *d)
{
    if (!d)
        return;
    handle_unregister(fs, &d->handle);
    dir_free(d);
}

static void dir_free(sv_dir *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->entries[i].name);
    free(d->entries);
    free(d);
}

/* ---- fetching blocks -------------------------------------------------------- */

typedef struct {
    sv_fs *fs;
    size_t n;
    cache_block *blocks[MAX_RUN_BLOCKS];
    struct iovec iov[MAX_RUN_BLOCKS];
} fetch_job;

static void fetch_done(void *ud, s3_status st, const char *errmsg)
{
    fetch_job *job = ud;
    if (st != S3_OK)
        log_error("read failed: %s", errmsg && errmsg[0] ? errmsg : s3_status_name(st));
    block_cache_complete_run(job->fs->cache, job->blocks, job->n, st == S3_OK ? 0 : EIO);
    free(job);
}

/* Fetch a run of consecutive LOADING blocks, each pinned for the job, in one
 * ranged GET. On submission failure the blocks fail at once. */
static void fetch_run(sv_fs *fs, const sv_file *f, cache_block **run, size_t n, bool high_priority)
{
    if (n == 0)
        return;
    fetch_job *job = malloc(sizeof *job);
    s3_status st = S3_ERR_NOMEM;
    if (job) {
        uint64_t len = 0;
        for (size_t i = 0; i < n; i++) {
            job->iov[i].iov_base = run[i]->data;
            job->iov[i].iov_len = run[i]->len;
            len += run[i]->len;
        }
        job->fs = fs;
        job->n = n;
        memcpy(job->blocks, run, n * sizeof *run);
        s3_request_opts opts = {.high_priority = high_priority};
        uint64_t offset = run[0]->index * fs->cfg.block_size;
        log_trace("GET %s bytes %llu-%llu (%s)", f->key, (unsigned long long)offset,
                  (unsigned long long)(offset + len - 1), high_priority ? "demand" : "prefetch");
        st = s3_get_async(fs->client, f->key, f->etag, offset, len, job->iov, n, &opts, fetch_done,
                          job);
    }
    if (st != S3_OK) {
        log_error("cannot start GET of %s: %s", f->key, s3_status_name(st));
        free(job);
        block_cache_complete_run(fs->cache, run, n, EIO);
    }
}

static uint32_t block_len(const sv_fs *fs, const sv_file *f, uint64_t index)
{
    uint64_t start = index * fs->cfg.block_size;
    uint64_t left = f->size - start;
    return left < fs->cfg.block_size ? (uint32_t)left : fs->cfg.block_size;
}

static size_t run_limit(const sv_fs *fs)
{
    size_t n = (size_t)(fs->cfg.max_request / fs->cfg.block_size);
    return n < 1 ? 1 : n > MAX_RUN_BLOCKS ? MAX_RUN_BLOCKS : n;
}

/* Start fetches for blocks [first, last] that nobody holds yet, in runs of
 * consecutive missing blocks of at most run_bytes. Prefetch gives up quietly
 * when the cache has no room; it never waits. */
static void prefetch_blocks(sv_fs *fs, sv_file *f, uint64_t first, uint64_t last, uint64_t run_bytes,
                            bool high_priority)
{
    cache_block *run[MAX_RUN_BLOCKS];
    size_t n = 0, limit = run_limit(fs);
    size_t want = (size_t)(run_bytes / fs->cfg.block_size);
    if (want >= 1 && want < limit)
        limit = want;
    for (uint64_t i = first; i <= last; i++) {
        bool created = false;
        cache_block *b = block_cache_acquire(fs->cache, f->ino, i, block_len(fs, f, i), true, &created);
        if (b && created) {
            run[n++] = b; /* the acquire pin becomes the job's pin */
            STAT_ADD(fs->stats, prefetch_bytes, b->len);
        } else if (b) {
            block_cache_release(fs->cache, b);
        }
        if ((!created && n) || n == limit) {
            fetch_run(fs, f, run, n, high_priority);
            n = 0;
        }
        if (!b)
            break; /* no room: stop prefetching */
    }
    fetch_run(fs, f, run, n, high_priority);
}

static void prefetch_span(sv_fs *fs, sv_file *f, uint64_t start, uint64_t end, uint64_t run_bytes,
                          bool high_priority)
{
    if (end > f->size)
        end = f->size;
    if (start >= end)
        return;
    prefetch_blocks(fs, f, start / fs->cfg.block_size, (end - 1) / fs->cfg.block_size, run_bytes,
                    high_priority);
}

/* Parquet-aware prefetch: a read that starts inside a column chunk fetches
 * the rest of that chunk, in parallel parts, and nothing beyond it.
 *
 * The kernel reads up to a few hundred KiB past the end of each read(), so a
 * read that merely continues the previous one into the next chunk is not
 * proof that the reader wants that chunk. Such a chunk is fetched only once
 * the reads have gone CONTINUATION_PROOF bytes into it; until then its reads
 * are served block by block. Returns false when the read is outside every
 * chunk. */
#define CONTINUATION_TOLERANCE (1u << 20) /* kernel reads arrive out of order across FUSE threads */
#define CONTINUATION_PROOF (512u << 10)

static bool chunk_prefetch(sv_fs *fs, sv_file *f, uint64_t off, size_t size)
{
    /* The kernel aligns reads down to its 4 KiB pages, so a read of a chunk
     * from its first byte may start in the tail of the chunk before it. */
    uint64_t probe = off + (size > 4095 ? 4095 : size - 1);
    size_t idx;
    const byte_span *c = parquet_layout_chunk_at(&f->layout, probe, &idx);
    if (!c)
        return false;
    const uint64_t from = off > c->start ? off : c->start;
    const uint64_t end = off + size;
    bool trigger = false;
    pthread_mutex_lock(&f->seq_lock);
    bool continues = f->seq_next > 0 && off + CONTINUATION_TOLERANCE >= f->seq_next &&
                     off <= f->seq_next + CONTINUATION_TOLERANCE;
    if (!f->chunk_fetched[idx]) {
        if (!continues) {
            trigger = true;
        } else if (f->last_chunk != idx && f->entered_chunk != idx) {
            f->entered_chunk = idx; /* entered by running on from another chunk */
            f->entered_at = from;
        }
        if (f->entered_chunk == idx && end >= f->entered_at + CONTINUATION_PROOF)
            trigger = true;
        if (trigger)
            f->chunk_fetched[idx] = 1;
    }
    f->last_chunk = idx;
    if (!continues || end > f->seq_next)
        f->seq_next = end;
    pthread_mutex_unlock(&f->seq_lock);
    if (trigger)
        fs_prefetch_real_parts(fs, f, from, c->end);
    return true;
}

/* Sequential detection. A read that starts near where the last one ended
 * (within a tolerance, since the kernel delivers readahead out of order across
 * FUSE threads) extends the streak; anything else ends it. The window is half
 * the bytes read in the streak, so a reader that stops early has caused at most
 * 50% extra transfer, and a long stream reaches max_window quickly. */
static bool maybe_prefetch(sv_fs *fs, sv_file *f, uint64_t off, size_t size)
{
    if (f->has_layout && chunk_prefetch(fs, f, off, size))
        return false;
    uint64_t end = off + size;
    uint64_t from = 0, to = 0;
    pthread_mutex_lock(&f->seq_lock);
    uint64_t window = f->streak_bytes / 2;
    if (window > fs->cfg.max_window)
        window = fs->cfg.max_window;
    uint64_t tol = 2ull * fs->cfg.block_size + window;
    bool sequential = f->seq_next > 0 && off + tol >= f->seq_next && off <= f->seq_next + tol;
    if (sequential) {
        f->streak_bytes += size;
        if (end > f->seq_next)
            f->seq_next = end;
    } else {
        f->streak_bytes = size;
        f->seq_next = end;
        f->prefetched_to = 0;
    }
    window = f->streak_bytes / 2;
    if (window > fs->cfg.max_window)
        window = fs->cfg.max_window;
    /* Top the window up only once half of it is used, so GETs stay large. */
    uint64_t ahead = f->prefetched_to > f->seq_next ? f->prefetched_to - f->seq_next : 0;
    if (sequential && f->streak_bytes >= fs->cfg.min_streak && window >= fs->cfg.block_size &&
        ahead <= window / 2) {
        from = f->seq_next > f->prefetched_to ? f->seq_next : f->prefetched_to;
        to = f->seq_next + window;
        if (to > f->size)
            to = f->size;
        if (to > from)
            f->prefetched_to = to;
    }
    bool streaming = sequential && f->streak_bytes >= fs->cfg.min_streak;
    pthread_mutex_unlock(&f->seq_lock);
    if (to > from)
        prefetch_span(fs, f, from, to, fs->cfg.max_request, false);
    return streaming;
}

/* ---- open / read / release ------------------------------------------------- */

static void load_layout(sv_fs *fs, sv_file *f);

void fs_file_init_seq(sv_file *f)
{
    f->last_chunk = SIZE_MAX;
    f->entered_chunk = SIZE_MAX;
    pthread_mutex_init(&f->seq_lock, NULL);
}

int fs_file_bind_object(sv_fs *fs, sv_file *f, uint64_t base_ino)
{
    tree_attr ta;
    s3_status st = tree_getattr(fs->tree, base_ino, &ta);
    if (st != S3_OK)
        return fs_status_errno(st);
    if (ta.is_dir)
        return -EISDIR;
    f->key = tree_key(fs->tree, base_ino);
    if (!f->key)
        return -ENOMEM;
    f->ino = base_ino;
    snprintf(f->etag, sizeof f->etag, "%s", ta.etag);
    f->size = ta.size;
    return 0;
}

bool fs_is_parquet_name(const char *key)
{
    size_t klen = strlen(key);
    return klen > 8 && strcmp(key + klen - 8, ".parquet") == 0;
}

int sv_fs_open(sv_fs *fs, uint64_t ino, int flags, sv_file **out, sv_open_flags *of)
{
    *out = NULL;
    memset(of, 0, sizeof *of);
    if (ino == SV_INO_CONTROL)
        return -EISDIR;
    if ((flags & O_ACCMODE) != O_RDONLY && !views_owns(ino))
        return -EROFS;
    sv_file *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->ino = ino;
    fs_file_init_seq(f);
    if (ino == SV_INO_STATS) {
        /* A snapshot at open, so one reader sees one consistent document. */
        f->kind = SV_FILE_VIRTUAL;
        f->is_virtual = true;
        f->virt = malloc(2048);
        f->virt_len = f->virt ? render_stats(fs, f->virt, 2048) : 0;
        if (!f->virt) {
            file_free(fs, f);
            return -ENOMEM;
        }
        of->direct_io = true;
        handle_register(fs, &f->handle, false);
        *out = f;
        return 0;
    }
    if (views_owns(ino)) {
        int r = views_open(fs, ino, flags, f, of);
        if (r < 0) {
            file_free(fs, f);
            return r;
        }
        handle_register(fs, &f->handle, false);
        *out = f;
        if (f->kind == SV_FILE_VIEW && fs_is_parquet_name(f->key) && f->size >= 12)
            load_layout(fs, f); /* the footer and page index, real and cached */
        return 0;
    }
    int r = fs_file_bind_object(fs, f, ino);
    if (r < 0) {
        file_free(fs, f);
        return r;
    }
    /* An inode is one immutable object version: its pages stay valid. */
    of->keep_cache = true;
    handle_register(fs, &f->handle, false);
    *out = f;
    if (fs_is_parquet_name(f->key) && f->size >= 12) {
        load_layout(fs, f);
    } else if (f->size > 0 && fs->cfg.tail_bytes > 0) {
        /* Other files: the tail, in the background, in case it is a footer. */
        uint64_t tail = fs->cfg.tail_bytes < f->size ? fs->cfg.tail_bytes : f->size;
        prefetch_span(fs, f, f->size - tail, f->size, fs->cfg.max_request, true);
    }
    return 0;
}

int sv_fs_create_file(sv_fs *fs, uint64_t parent, const char *name, int flags, sv_file **out,
                      sv_attr *attr)
{
    *out = NULL;
    if (!views_owns(parent))
        return -EROFS;
    sv_file *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    fs_file_init_seq(f);
    int r = views_create_file(fs, parent, name, flags, f, attr);
    if (r < 0) {
        file_free(fs, f);
        return r;
    }
    f->ino = attr->ino;
    handle_register(fs, &f->handle, false);
    *out = f;
    return 0;
}

ssize_t sv_fs_write(sv_fs *fs, sv_file *f, uint64_t off, const char *buf, size_t size)
{
    return views_write(fs, f, off, buf, size);
}

int sv_fs_flush(sv_fs *fs, sv_file *f)
{
    return f->kind == SV_FILE_HINT_WRITE ? views_flush(fs, f) : 0;
}

int sv_fs_truncate(sv_fs *fs, uint64_t ino, sv_file *f, uint64_t size)
{
    if (!views_owns(ino))
        return -EROFS;
    return views_truncate(fs, ino, f, size);
}

bool sv_fs_is_writable(sv_fs *fs, uint64_t ino)
{
    (void)fs;
    return views_is_hint_file(ino);
}

int sv_fs_unlink(sv_fs *fs, uint64_t parent, const char *name)
{
    if (!views_owns(parent))
        return -EROFS;
    return views_unlink(fs, parent, name);
}

static ssize_t read_pinned(sv_fs *fs, sv_file *f, uint64_t off, size_t size, struct iovec *iov,
                           size_t maxiov, size_t *niov, sv_read_pins *pins, bool from_reader)
{
    *niov = 0;
    pins->blocks = NULL;
    pins->n = 0;
    pins->owned = NULL;
    pins->streaming = false;
    pins->read_end = 0;
    if (f->is_virtual) {
        if (off >= f->virt_len || size == 0 || maxiov == 0)
            return 0;
        size_t n = f->virt_len - (size_t)off < size ? f->virt_len - (size_t)off : size;
        /* A private copy: the handle (and its snapshot) may be released while
         * the reply is still being written. */
        pins->owned = malloc(n);
        if (!pins->owned)
            return -ENOMEM;
        memcpy(pins->owned, f->virt + off, n);
        iov[0].iov_base = pins->owned;
        iov[0].iov_len = n;
        *niov = 1;
        return (ssize_t)n;
    }
    if (f->kind == SV_FILE_HINT_WRITE)
        return -EBADF;
    if (from_reader) {
        STAT_ADD(fs->stats, fuse_reads, 1);
        log_trace("read %s offset %llu size %zu%s", f->key, (unsigned long long)off, size,
                  f->kind == SV_FILE_VIEW ? " (view)" : "");
    }
    if (f->kind == SV_FILE_VIEW && from_reader) {
        /* A view's bytes are assembled per page into a private buffer. */
        if (off >= f->size || size == 0 || maxiov == 0)
            return 0;
        size_t n = f->size - off < size ? (size_t)(f->size - off) : size;
        uint8_t *buf = malloc(n);
        if (!buf)
            return -ENOMEM;
        ssize_t r = views_read(fs, f, off, n, buf);
        if (r <= 0) {
            free(buf);
            if (r < 0)
                STAT_ADD(fs->stats, errors, 1);
            return r;
        }
        pins->owned = buf;
        iov[0].iov_base = buf;
        iov[0].iov_len = (size_t)r;
        *niov = 1;
        STAT_ADD(fs->stats, fuse_read_bytes, (uint64_t)r);
        return r;
    }
    if (off >= f->size || size == 0)
        return 0;
    if (size > f->size - off)
        size = (size_t)(f->size - off);
    const uint64_t bs = fs->cfg.block_size;
    uint64_t first = off / bs, last = (off + size - 1) / bs;
    size_t nblocks = (size_t)(last - first + 1);
    if (nblocks > maxiov)
        return -EINVAL;
    cache_block **blocks = calloc(nblocks, sizeof *blocks);
    bool *was_ready = calloc(nblocks, sizeof *was_ready);
    if (!blocks || !was_ready) {
        free(blocks);
        free(was_ready);
        return -ENOMEM;
    }
    /* Pin every block; start one GET per run of consecutive missing blocks. */
    cache_block *run[MAX_RUN_BLOCKS];
    size_t nrun = 0, limit = run_limit(fs);
    int result = 0;
    size_t npinned = 0;
    for (size_t i = 0; i < nblocks; i++) {
        bool created = false;
        uint64_t idx = first + i;
        blocks[i] = block_cache_acquire(fs->cache, f->ino, idx, block_len(fs, f, idx), false, &created);
        if (!blocks[i]) {
            result = -ENOMEM;
            break;
        }
        npinned++;
        if (created) {
            /* One pin for this read (taken by acquire), one for the fetch job. */
            block_cache_pin(fs->cache, blocks[i]);
            run[nrun++] = blocks[i];
        } else {
            was_ready[i] = blocks[i]->state == BLOCK_READY;
        }
        if ((!created && nrun) || nrun == limit) {
            fetch_run(fs, f, run, nrun, true);
            nrun = 0;
        }
    }
    fetch_run(fs, f, run, nrun, true);
    if (result == 0 && from_reader)
        pins->streaming = maybe_prefetch(fs, f, off, size);
    pins->read_end = off + size;
    /* Wait for each block in order and point the iovec into it. */
    size_t total = 0;
    for (size_t i = 0; i < npinned && result == 0; i++) {
        cache_block *b = blocks[i];
        int e = block_cache_wait(fs->cache, b);
        if (e) {
            STAT_ADD(fs->stats, errors, 1);
            result = -e;
            break;
        }
        uint64_t bstart = b->index * bs;
        uint64_t from = off > bstart ? off - bstart : 0;
        uint64_t until = off + size - bstart < b->len ? off + size - bstart : b->len;
        if (until <= from) {
            result = -EIO; /* cannot happen unless the object size changed */
            break;
        }
        iov[i].iov_base = b->data + from;
        iov[i].iov_len = (size_t)(until - from);
        total += iov[i].iov_len;
        if (!from_reader)
            ;
        else if (was_ready[i])
            STAT_ADD(fs->stats, cache_hit_bytes, until - from);
        else
            STAT_ADD(fs->stats, cache_miss_bytes, until - from);
    }
    free(was_ready);
    pins->blocks = blocks;
    pins->n = npinned;
    if (result < 0) {
        sv_fs_read_release(fs, pins);
        return result;
    }
    *niov = npinned;
    if (from_reader)
        STAT_ADD(fs->stats, fuse_read_bytes, total);
    return (ssize_t)total;
}

ssize_t sv_fs_read_pinned(sv_fs *fs, sv_file *f, uint64_t off, size_t size, struct iovec *iov,
                          size_t maxiov, size_t *niov, sv_read_pins *pins)
{
    return read_pinned(fs, f, off, size, iov, maxiov, niov, pins, true);
}

void sv_fs_read_release(sv_fs *fs, sv_read_pins *pins)
{
    free(pins->owned);
    pins->owned = NULL;
    uint64_t bs = fs->cfg.block_size;
    for (size_t i = 0; i < pins->n; i++) {
        cache_block *b = pins->blocks[i];
        /* A streaming reader never comes back for a block it has read past. */
        if (pins->streaming && b->index * bs + b->len <= pins->read_end)
            block_cache_release_consumed(fs->cache, b);
        else
            block_cache_release(fs->cache, b);
    }
    free(pins->blocks);
    pins->blocks = NULL;
    pins->n = 0;
}

/* Copying read; from_reader says whether it counts as the reader's (stats,
 * prefetch) or is sievefs's own (the footer at open). */
static ssize_t read_copy(sv_fs *fs, sv_file *f, uint64_t off, size_t size, char *buf, bool from_reader)
{
    struct iovec iov[SV_READ_MAX_IOV];
    size_t niov = 0;
    sv_read_pins pins;
    uint64_t bs = fs->cfg.block_size;
    if (size > (SV_READ_MAX_IOV - 1) * bs)
        size = (size_t)((SV_READ_MAX_IOV - 1) * bs);
    ssize_t n = read_pinned(fs, f, off, size, iov, SV_READ_MAX_IOV, &niov, &pins, from_reader);
    if (n <= 0)
        return n;
    size_t copied = 0;
    for (size_t i = 0; i < niov; i++) {
        memcpy(buf + copied, iov[i].iov_base, iov[i].iov_len);
        copied += iov[i].iov_len;
    }
    sv_fs_read_release(fs, &pins);
    return n;
}

ssize_t sv_fs_read(sv_fs *fs, sv_file *f, uint64_t off, size_t size, char *buf)
{
    return read_copy(fs, f, off, size, buf, true);
}

ssize_t fs_read_real(sv_fs *fs, sv_file *f, uint64_t off, size_t size, uint8_t *buf)
{
    if (off >= f->size)
        return 0;
    if (size > f->size - off)
        size = (size_t)(f->size - off);
    size_t done = 0;
    while (done < size) {
        ssize_t n = read_copy(fs, f, off + done, size - done, (char *)buf + done, false);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

void fs_chunk_prefetch(sv_fs *fs, sv_file *f, uint64_t off, size_t size)
{
    if (f->has_layout && size > 0)
        (void)chunk_prefetch(fs, f, off, size);
}

void fs_prefetch_real(sv_fs *fs, sv_file *f, uint64_t start, uint64_t end)
{
    prefetch_span(fs, f, start, end, fs->cfg.max_request, true);
}

void fs_prefetch_real_parts(sv_fs *fs, sv_file *f, uint64_t start, uint64_t end)
{
    /* Parallel parts: a quarter of the span each, 1 MiB to max_request. */
    uint64_t part = end > start ? (end - start) / 4 : 0;
    if (part < (1u << 20))
        part = 1u << 20;
    if (part > fs->cfg.max_request)
        part = fs->cfg.max_request;
    prefetch_span(fs, f, start, end, part, true);
}

/* Read exactly [off, off+len) into buf for sievefs's own use. */
static bool read_exact(sv_fs *fs, sv_file *f, uint64_t off, size_t len, uint8_t *buf)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = read_copy(fs, f, off + done, len - done, (char *)buf + done, false);
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

/* Parse the footer of a .parquet file at open: read the tail (64 KiB), once
 * more if the footer is longer, then start fetching the page index if the
 * tail missed it. Any failure just leaves the file without a layout (generic
 * prefetch). */
static void load_layout(sv_fs *fs, sv_file *f)
{
    uint64_t tail = parquet_layout_tail_hint(f->size);
    for (int attempt = 0; attempt < 2; attempt++) {
        uint8_t *buf = malloc((size_t)tail);
        if (!buf)
            return;
        if (!read_exact(fs, f, f->size - tail, (size_t)tail, buf)) {
            free(buf);
            log_info("%s: cannot read the footer; no Parquet-aware prefetch", f->key);
            return;
        }
        char err[320];
        uint64_t need = 0;
        int r = parquet_layout_from_tail(buf, (size_t)tail, f->size, &f->layout, &need, err, sizeof err);
        free(buf);
        if (r == 1 && need > tail && need <= f->size && attempt == 0) {
            tail = need;
            continue;
        }
        if (r != 0) {
            log_info("%s: not using Parquet layout: %s", f->key, r == 1 ? "footer too large" : err);
            return;
        }
        f->chunk_fetched = calloc(f->layout.n_chunks ? f->layout.n_chunks : 1, 1);
        if (!f->chunk_fetched) {
            parquet_layout_free(&f->layout);
            return;
        }
        f->has_layout = true;
        if (f->layout.page_index.end > f->layout.page_index.start &&
            f->layout.page_index.start < f->size - tail)
            prefetch_span(fs, f, f->layout.page_index.start, f->layout.page_index.end,
                          fs->cfg.max_request, true);
        log_debug("%s: %zu column chunks, footer at %llu", f->key, f->layout.n_chunks,
                  (unsigned long long)f->layout.footer.start);
        return;
    }
}

void sv_fs_release(sv_fs *fs, sv_file *f)
{
    if (!f)
        return;
    handle_unregister(fs, &f->handle);
    file_free(fs, f);
}

static void file_free(sv_fs *fs, sv_file *f)
{
    views_release(fs, f);
    pthread_mutex_destroy(&f->seq_lock);
    parquet_layout_free(&f->layout);
    free(f->chunk_fetched);
    free(f->virt);
    free(f->key);
    free(f);
}

/* ---- extended attributes --------------------------------------------------- */

static ssize_t xattr_value(const char *value, char *buf, size_t size)
{
    size_t n = strlen(value);
    if (size == 0)
        return (ssize_t)n;
    if (size < n)
        return -ERANGE;
    memcpy(buf, value, n);
    return (ssize_t)n;
}

ssize_t sv_fs_getxattr(sv_fs *fs, uint64_t ino, const char *name, char *buf, size_t size)
{
    if (ino == SV_INO_CONTROL || ino == SV_INO_STATS || views_owns(ino))
        return -ENODATA;
    tree_attr ta;
    if (tree_getattr(fs->tree, ino, &ta) != S3_OK)
        return -ENOENT;
    if (strcmp(name, SV_XATTR_KEY) == 0) {
        char *key = tree_key(fs->tree, ino);
        if (!key)
            return -ENOMEM;
        ssize_t r = xattr_value(key, buf, size);
        free(key);
        return r;
    }
    if (strcmp(name, SV_XATTR_ETAG) == 0 && !ta.is_dir)
        return xattr_value(ta.etag, buf, size);
    return -ENODATA;
}

ssize_t sv_fs_listxattr(sv_fs *fs, uint64_t ino, char *buf, size_t size)
{
    static const char file_names[] = SV_XATTR_KEY "\0" SV_XATTR_ETAG "\0";
    static const char dir_names[] = SV_XATTR_KEY "\0";
    if (ino == SV_INO_CONTROL || ino == SV_INO_STATS || views_owns(ino))
        return 0;
    tree_attr ta;
    if (tree_getattr(fs->tree, ino, &ta) != S3_OK)
        return -ENOENT;
    const char *names = ta.is_dir ? dir_names : file_names;
    size_t n = ta.is_dir ? sizeof dir_names - 1 : sizeof file_names - 1;
    if (size == 0)
        return (ssize_t)n;
    if (size < n)
        return -ERANGE;
    memcpy(buf, names, n);
    return (ssize_t)n;
}
