#include "plain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

plain_fs *plain_fs_create(object_store *store, sv_stats *stats, const plain_config *cfg)
{
    plain_fs *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cfg = *cfg;
    if (p->cfg.prefetch.max_window > p->cfg.cache_bytes / 4)
        p->cfg.prefetch.max_window = p->cfg.cache_bytes / 4;
    p->cfg.prefetch.exact_reads = cfg->direct_io;
    p->stats = stats;
    p->start_time = (int64_t)time(NULL);
    p->tree = tree_create(store, cfg->prefix, cfg->dir_ttl_ms, cfg->delta_log_ttl_ms);
    p->cache = block_cache_create(cfg->block_size, cfg->cache_bytes, stats);
    p->io = p->cache ? object_io_create(store, p->cache, stats, cfg->max_request, cfg->read_timeout_ms) : NULL;
    p->footers = p->io ? footer_cache_create(p->io, cfg->cache_bytes / 8, cfg->tail_bytes) : NULL;
    p->columns = column_memory_create();
    p->ahead = p->footers && p->columns
                   ? table_ahead_create(p->tree, p->io, p->footers, p->columns, p->cfg.prefetch.max_window,
                                        prefetch_kernel_runs_on(&p->cfg.prefetch))
                   : NULL;
    if (!p->tree || !p->cache || !p->io || !p->footers || !p->columns || !p->ahead) {
        plain_fs_destroy(p);
        return NULL;
    }
    footer_cache_set_tail_source(p->footers, table_ahead_fetched_tail, p->ahead);
    memory_budget_init(&p->budget, cfg->cache_bytes);
    tree_share_budget(p->tree, &p->budget);
    block_cache_share_budget(p->cache, &p->budget);
    footer_cache_share_budget(p->footers, &p->budget);
    return p;
}

void plain_fs_destroy(plain_fs *p)
{
    if (!p)
        return;
    table_ahead_destroy(p->ahead); /* first: it reads through the rest */
    footer_cache_destroy(p->footers);
    column_memory_destroy(p->columns);
    object_io_destroy(p->io);
    tree_destroy(p->tree);
    block_cache_destroy(p->cache);
    free(p);
}

store_status plain_check(plain_fs *p, sv_error *err)
{
    /* Fail fast at mount time: two attempts, not the full retry budget. */
    store_request_opts opts = {.max_attempts = 2, .priority = STORE_PRIO_DEMAND};
    return tree_refresh_dir(p->tree, TREE_ROOT_INO, &opts, err);
}

bool plain_is_parquet_name(const char *key)
{
    size_t klen = strlen(key);
    return klen > 8 && strcmp(key + klen - 8, ".parquet") == 0;
}

/* ---- namespace ---------------------------------------------------------------- */

void plain_attr(const plain_fs *p, const tree_attr *ta, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ta->ino;
    out->size = ta->size;
    out->mtime = ta->mtime ? ta->mtime : p->start_time;
    if (ta->is_dir) {
        out->mode = S_IFDIR | 0555;
        out->nlink = 2;
        out->timeout = p->cfg.dir_attr_timeout_s;
    } else {
        out->mode = S_IFREG | 0444;
        out->nlink = 1;
        out->timeout = ta->in_delta_log ? p->cfg.delta_log_attr_timeout_s : p->cfg.file_attr_timeout_s;
        /* After a listing's TTL a lookup lists again and finds a replaced
         * object's new inode; the old inode's attributes stay true. */
        out->entry_timeout = (double)p->cfg.dir_ttl_ms / 1000.0;
    }
}

int plain_tree_errno(store_status st, const sv_cancel *tok)
{
    if (st == STORE_ERR_CANCELLED) {
        int why = sv_cancel_check(tok);
        return -(why ? why : EINTR);
    }
    return -store_status_errno(st);
}

/* Whether dir is a _delta_log/ directory. */
static bool is_delta_log(plain_fs *p, uint64_t dir)
{
    char *key = tree_key(p->tree, dir);
    const size_t n = key ? strlen(key) : 0;
    const bool yes = n >= 11 && strcmp(key + n - 11, "_delta_log/") == 0 && (n == 11 || key[n - 12] == '/');
    free(key);
    return yes;
}

/* The latest version the mount shows of the log in directory dir (listed
 * in snap): INT64_MAX when it shows all; -1 when the time asked for is
 * before the table's first commit. */
static int64_t log_max_version(plain_fs *p, const tree_dir_snapshot *snap)
{
    const delta_version_spec *spec = &p->cfg.table_version;
    if (spec->kind == DELTA_VERSION_AT)
        return spec->version;
    delta_log_entry *e = calloc(snap->n ? snap->n : 1, sizeof *e);
    if (!e)
        return INT64_MAX; /* nothing known to hide */
    size_t n = 0;
    for (size_t i = 0; i < snap->n; i++) {
        tree_attr ta;
        if (!snap->entries[i].is_dir && tree_getattr(p->tree, snap->entries[i].ino, &ta) == STORE_OK)
            e[n++] = (delta_log_entry){snap->entries[i].name, ta.size, ta.mtime * 1000};
    }
    int64_t v = -1;
    if (delta_log_version_at(e, n, spec->timestamp_ms, &v, NULL) != 0)
        v = -1;
    free(e);
    return v;
}

/* Drop the entries after max from snap. */
static void hide_later(tree_dir_snapshot *snap, int64_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < snap->n; i++) {
        if (snap->entries[i].is_dir || delta_log_name_visible(snap->entries[i].name, max))
            snap->entries[k++] = snap->entries[i];
        else
            free(snap->entries[i].name);
    }
    snap->n = k;
}

bool plain_hidden(plain_fs *p, uint64_t parent, const char *name, const sv_cancel *tok)
{
    if (!delta_version_spec_restricts(&p->cfg.table_version) || !is_delta_log(p, parent))
        return false;
    if (p->cfg.table_version.kind == DELTA_VERSION_AT)
        return !delta_log_name_visible(name, p->cfg.table_version.version);
    tree_dir_snapshot snap;
    if (tree_readdir(p->tree, parent, &snap, tok) != STORE_OK)
        return false; /* the lookup itself will fail or find it: nothing to hide yet */
    const int64_t max = log_max_version(p, &snap);
    tree_dir_snapshot_free(&snap);
    return !delta_log_name_visible(name, max);
}

int plain_lookup(plain_fs *p, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok)
{
    if (plain_hidden(p, parent, name, tok))
        return -ENOENT;
    tree_attr ta;
    store_status st = tree_lookup(p->tree, parent, name, &ta, tok);
    if (st != STORE_OK)
        return plain_tree_errno(st, tok);
    plain_attr(p, &ta, out);
    return 0;
}

int plain_getattr(plain_fs *p, uint64_t ino, sv_attr *out)
{
    tree_attr ta;
    store_status st = tree_getattr(p->tree, ino, &ta);
    if (st != STORE_OK)
        return -store_status_errno(st);
    plain_attr(p, &ta, out);
    return 0;
}

int plain_readdir(plain_fs *p, uint64_t ino, tree_dir_snapshot *out, const sv_cancel *tok)
{
    memset(out, 0, sizeof *out);
    tree_attr ta;
    store_status st = tree_getattr(p->tree, ino, &ta);
    if (st == STORE_OK && !ta.is_dir)
        return -ENOTDIR;
    if (st == STORE_OK)
        st = tree_readdir(p->tree, ino, out, tok);
    if (st == STORE_OK && delta_version_spec_restricts(&p->cfg.table_version) && is_delta_log(p, ino))
        hide_later(out, log_max_version(p, out));
    return plain_tree_errno(st, tok);
}

int plain_bind_object(plain_fs *p, uint64_t ino, object_ref *out)
{
    memset(out, 0, sizeof *out);
    tree_attr ta;
    store_status st = tree_getattr(p->tree, ino, &ta);
    if (st != STORE_OK)
        return -store_status_errno(st);
    if (ta.is_dir)
        return -EISDIR;
    out->key = tree_key(p->tree, ino);
    if (!out->key)
        return -ENOMEM;
    out->id = ino;
    snprintf(out->etag, sizeof out->etag, "%s", ta.etag);
    out->size = ta.size;
    return 0;
}

/* The xattr protocol: size 0 asks for the length. */
static ssize_t xattr_bytes(const char *value, size_t n, char *buf, size_t size)
{
    if (size == 0)
        return (ssize_t)n;
    if (size < n)
        return -ERANGE;
    memcpy(buf, value, n);
    return (ssize_t)n;
}

ssize_t plain_getxattr(plain_fs *p, uint64_t ino, const char *name, char *buf, size_t size)
{
    tree_attr ta;
    if (tree_getattr(p->tree, ino, &ta) != STORE_OK)
        return -ENOENT;
    if (strcmp(name, SV_XATTR_KEY) == 0) {
        char *key = tree_key(p->tree, ino);
        if (!key)
            return -ENOMEM;
        ssize_t r = xattr_bytes(key, strlen(key), buf, size);
        free(key);
        return r;
    }
    if (strcmp(name, SV_XATTR_ETAG) == 0 && !ta.is_dir)
        return xattr_bytes(ta.etag, strlen(ta.etag), buf, size);
    return -ENODATA;
}

ssize_t plain_listxattr(plain_fs *p, uint64_t ino, char *buf, size_t size)
{
    static const char file_names[] = SV_XATTR_KEY "\0" SV_XATTR_ETAG "\0";
    static const char dir_names[] = SV_XATTR_KEY "\0";
    tree_attr ta;
    if (tree_getattr(p->tree, ino, &ta) != STORE_OK)
        return -ENOENT;
    if (ta.is_dir)
        return xattr_bytes(dir_names, sizeof dir_names - 1, buf, size);
    return xattr_bytes(file_names, sizeof file_names - 1, buf, size);
}

/* ---- open files ---------------------------------------------------------------- */

void plain_table_expected(plain_fs *p, uint64_t dir_ino, const parquet_footer *ft, uint64_t size)
{
    table_ahead_expect(p->ahead, dir_ino, ft && ft->meta ? parquet_layout_meta_len(&ft->layout, size) : 0);
}

int plain_file_open(plain_fs *p, uint64_t ino, bool fetch_tail, plain_file *f, const sv_cancel *tok)
{
    memset(f, 0, sizeof *f);
    int r = plain_bind_object(p, ino, &f->obj);
    if (r < 0)
        return r;
    if (plain_is_parquet_name(f->obj.key)) {
        f->footer = footer_cache_get(p->footers, &f->obj, tok);
        int why = sv_cancel_check(tok);
        if (!f->footer->meta && (why == EINTR || why == ESHUTDOWN)) {
            /* The opener is gone: no open without its footer. */
            footer_cache_put(p->footers, f->footer);
            f->footer = NULL;
            object_ref_free(&f->obj);
            return why == EINTR ? -EINTR : -EIO;
        }
        if (!f->footer->meta)
            log_info("%s: not using Parquet layout: %s", f->obj.key, f->footer->err.msg);
        else
            table_ahead_opened(p->ahead, ino, f->obj.key, parquet_layout_meta_len(&f->footer->layout, f->obj.size));
    } else if (fetch_tail && f->obj.size > 0 && p->cfg.tail_bytes > 0) {
        /* Other files: the tail, in the background, in case it is a footer. */
        uint64_t tail = p->cfg.tail_bytes < f->obj.size ? p->cfg.tail_bytes : f->obj.size;
        object_prefetch(p->io, &f->obj, f->obj.size - tail, f->obj.size, 0, true);
    }
    if (plain_file_layout(f))
        f->columns = column_memory_get(p->columns, column_memory_key(f->obj.key, f->footer->meta),
                                       f->footer->meta->n_leaves);
    if (!read_pattern_init(&f->pattern, plain_file_layout(f), f->columns)) {
        plain_file_close(p, f);
        return -ENOMEM;
    }
    return 0;
}

void plain_file_close(plain_fs *p, plain_file *f)
{
    if (plain_file_layout(f)) {
        uint64_t run_on;
        const uint64_t data = read_pattern_note_covered(&f->pattern, plain_file_layout(f), f->columns, &run_on);
        table_ahead_closed(p->ahead, f->obj.key, data, run_on);
    }
    read_pattern_destroy(&f->pattern);
    column_memory_put(p->columns, f->columns);
    f->columns = NULL;
    /* The reader stopped: what was prefetched for it and nobody waits for
     * is not fetched on (the last open file of the version, as its
     * footer's references count them). */
    if (footer_cache_put(p->footers, f->footer) && f->obj.key)
        object_cancel_prefetch(p->io, &f->obj);
    f->footer = NULL;
    object_ref_free(&f->obj);
}

const parquet_layout *plain_file_layout(const plain_file *f)
{
    return f->footer && f->footer->meta ? &f->footer->layout : NULL;
}

ssize_t plain_file_read(plain_fs *p, plain_file *f, uint64_t off, size_t size, struct iovec *iov, size_t maxiov,
                        size_t *niov, object_pins *pins, object_read_tally *tally, const sv_cancel *tok)
{
    *niov = 0;
    int r = object_pin(p->io, &f->obj, off, size, maxiov, pins);
    if (r < 0)
        return r;
    if (pins->size == 0)
        return 0;
    /* Prefetch starts before the wait for the read's own blocks. */
    pins->streaming = prefetch_after_read(p->io, &p->cfg.prefetch, &f->obj, plain_file_layout(f), &f->pattern,
                                          pins->off, pins->size);
    return object_pins_wait(p->io, pins, iov, niov, tally, tok);
}
