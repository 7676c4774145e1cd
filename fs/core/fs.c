/* The router: every call goes to the owner of its inode or handle, the
 * plain tree, the .sieve control files or the views, and the reader's
 * accounting (fuse_reads, bytes, cache hits) is done here, once. */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "cost_model.h"
#include "handle.h"
#include "log.h"
#include "page_map_remote.h"
#include "plain.h"
#include "table_namespace.h"
#include "table_registry.h"
#include "view.h"

struct sv_fs {
    sv_stats *stats;
    plain_fs *plain;     /* read-only after creation */
    view_registry *views;
    table_registry *tables; /* the Delta tables seen (thread-safe) */
    partial_memory partial_mem; /* the views' buffers and page images (atomic) */
    page_map_cache *page_maps;  /* walked page maps (thread-safe) */
    handle_list handles; /* every open file and directory */
    link_profile *profile; /* not owned; NULL: none */
    char control_dir[TREE_NAME_MAX + 1]; /* read-only after creation */
    bool destroying;     /* sv_fs_destroy is freeing leftover handles */
};

/* The kinds of handle.h. */
struct sv_dir {
    sv_handle h;
    sv_dirents list;
};

typedef struct {
    sv_handle h;
    plain_file f;
} plain_handle;

typedef struct {
    sv_handle h;
    char *text; /* a snapshot taken at open, so one reader sees one document */
    size_t len;
} text_handle;

typedef struct {
    sv_handle h;
    view_reader *r;
} view_handle;

typedef struct {
    sv_handle h;
    hint_writer *w;
} hint_handle;

void sv_fs_config_defaults(sv_fs_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    plain_config *p = &cfg->plain;
    p->prefix = "";
    p->cache_bytes = 512ull << 20;
    p->block_size = 16u << 10;
    p->max_request = 16ull << 20;
    p->read_timeout_ms = SV_READ_TIMEOUT_DEFAULT_MS;
    p->prefetch.max_window = 64ull << 20;
    p->prefetch.min_streak = 4ull << 20;
    p->tail_bytes = 64u << 10;
    p->dir_ttl_ms = 60000;
    p->delta_log_ttl_ms = 1000;
    p->file_attr_timeout_s = 3600;
    p->delta_log_attr_timeout_s = 1;
    p->dir_attr_timeout_s = 10;
    cfg->profile = NULL;
    cfg->request_cost_override = -1;
    cfg->partial_memory = PARTIAL_MEMORY_DEFAULT;
}

sv_fs *sv_fs_create(object_store *store, sv_stats *stats, const sv_fs_config *cfg)
{
    sv_fs *fs = calloc(1, sizeof *fs);
    if (!fs)
        return NULL;
    fs->stats = stats;
    fs->profile = cfg->profile;
    snprintf(fs->control_dir, sizeof fs->control_dir, "%s",
             cfg->control_dir && cfg->control_dir[0] ? cfg->control_dir : SV_CONTROL_DIR);
    handle_list_init(&fs->handles);
    fs->plain = plain_fs_create(store, stats, &cfg->plain);
    memory_budget *mb = fs->plain ? &fs->plain->budget : NULL;
    partial_memory_init(&fs->partial_mem, cfg->partial_memory, mb);
    /* Walked page maps take up to a sixteenth of the mount's budget, as
     * footers take an eighth (memory_budget.h). */
    fs->page_maps = page_map_cache_create(cfg->plain.cache_bytes / 16, cfg->cache_dir, stats);
    if (fs->page_maps)
        page_map_cache_share_budget(fs->page_maps, mb);
    fs->tables = fs->plain ? table_registry_create(fs->plain, &cfg->plain.table_version, true) : NULL;
    view_env env = {.plain = fs->plain, .profile = cfg->profile,
                    .request_cost_override = cfg->request_cost_override,
                    .partial_mem = &fs->partial_mem, .page_maps = fs->page_maps, .tables = fs->tables};
    fs->views = fs->plain && fs->page_maps && fs->tables ? views_create(&env) : NULL;
    if (!fs->plain || !fs->views || !fs->tables) {
        sv_fs_destroy(fs);
        return NULL;
    }
    return fs;
}

static void handle_free(sv_fs *fs, sv_handle *h);

void sv_fs_destroy(sv_fs *fs)
{
    if (!fs)
        return;
    /* Handles the kernel never released (the mount ended first). */
    fs->destroying = true;
    for (sv_handle *h; (h = handle_list_pop(&fs->handles));)
        handle_free(fs, h);
    handle_list_destroy(&fs->handles);
    views_destroy(fs->views);
    table_registry_destroy(fs->tables);
    page_map_cache_destroy(fs->page_maps);
    plain_fs_destroy(fs->plain);
    free(fs);
}

store_status sv_fs_check(sv_fs *fs, sv_error *err)
{
    return plain_check(fs->plain, err);
}

bool sv_fs_control_dir_collides(sv_fs *fs)
{
    tree_attr a;
    return tree_lookup(fs->plain->tree, TREE_ROOT_INO, fs->control_dir, &a, NULL) == STORE_OK;
}

bool sv_fs_key_is_current(sv_fs *fs, const char *key, const sv_cancel *tok)
{
    const char *prefix = fs->plain->cfg.prefix;
    const size_t pl = strlen(prefix);
    if (strncmp(key, prefix, pl) != 0)
        return true;
    const char *rel = key + pl;
    /* the directories on the key's path, from the root down, until a table */
    uint64_t dir = TREE_ROOT_INO;
    for (const char *p = rel;;) {
        tree_attr log;
        if (tree_lookup(fs->plain->tree, dir, "_delta_log", &log, tok) == STORE_OK && log.is_dir) {
            table_snap *t = NULL;
            sv_error err = {0};
            if (table_registry_snapshot(fs->tables, dir, &t, &err, tok) != 0)
                return true;
            const bool in = delta_snapshot_find(table_snap_get(t), p) != NULL;
            table_snap_put(t);
            return in;
        }
        const char *slash = strchr(p, '/');
        if (!slash || (size_t)(slash - p) > TREE_NAME_MAX)
            return true;
        char comp[TREE_NAME_MAX + 1];
        memcpy(comp, p, (size_t)(slash - p));
        comp[slash - p] = '\0';
        tree_attr ta;
        if (tree_lookup(fs->plain->tree, dir, comp, &ta, tok) != STORE_OK || !ta.is_dir)
            return true;
        dir = ta.ino;
        p = slash + 1;
    }
}

/* ---- the namespace ------------------------------------------------------------ */

static int lookup_in_namespaces(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok);

/* What a lookup or opendir that gave up waiting for a listing tells the
 * caller, as gave_up does for reads. */
static int listing_gave_up(sv_fs *fs, const char *what, const char *name, int r)
{
    if (r == -EINTR) {
        log_debug("%s %s interrupted by the caller", what, name);
        return r;
    }
    if (r == -ETIMEDOUT) {
        STAT_ADD(fs->stats, read_timeouts, 1);
        log_warn("%s %s timed out after %llu ms waiting for a listing (--read-timeout): EIO", what, name,
                 (unsigned long long)object_io_read_timeout_ms(fs->plain->io));
        return -EIO;
    }
    if (r == -ESHUTDOWN)
        return -EIO;
    return r;
}

int sv_fs_lookup(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok)
{
    int r = lookup_in_namespaces(fs, parent, name, out, tok);
    return r < 0 ? listing_gave_up(fs, "lookup of", name, r) : r;
}

static int lookup_in_namespaces(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok)
{
    if (strlen(name) > TREE_NAME_MAX)
        return -ENAMETOOLONG;
    if (parent == TREE_ROOT_INO && strcmp(name, fs->control_dir) == 0) {
        control_attr(fs->plain, fs->profile, SV_INO_CONTROL, out);
        return 0;
    }
    if (parent == SV_INO_CONTROL) {
        if (strcmp(name, "tables") == 0)
            return tables_ns_getattr(fs->tables, fs->plain, SV_INO_TABLES, out);
        int r = control_lookup(fs->plain, fs->profile, name, out);
        return r == -ENOENT ? views_lookup(fs->views, parent, name, out, tok) : r;
    }
    if (parent == SV_INO_STATS || parent == SV_INO_PROFILE)
        return -ENOTDIR;
    if (tables_ns_owns(parent))
        return tables_ns_lookup(fs->tables, fs->plain, parent, name, out, tok);
    if (views_owns(parent))
        return views_lookup(fs->views, parent, name, out, tok);
    int r = plain_lookup(fs->plain, parent, name, out, tok);
    if (r == 0 && S_ISDIR(out->mode) && strcmp(name, "_delta_log") == 0)
        table_registry_saw(fs->tables, parent);
    return r;
}

int sv_fs_getattr(sv_fs *fs, uint64_t ino, sv_attr *out)
{
    if (control_owns(ino)) {
        control_attr(fs->plain, fs->profile, ino, out);
        return 0;
    }
    if (tables_ns_owns(ino))
        return tables_ns_getattr(fs->tables, fs->plain, ino, out);
    if (views_owns(ino))
        return views_getattr(fs->views, ino, out);
    return plain_getattr(fs->plain, ino, out);
}

/* The plain tree's directory: ".", ".." and its children. .sieve is
 * deliberately absent: globs and table scans must not see it. So are the
 * page maps `sievefs index --to-s3` keeps next to a table (_sieve/,
 * reachable by its name): readers that walk a table's directory tree
 * (pyarrow.dataset) otherwise list _sieve/, pagemaps/ and each shard, one
 * round trip each (0.6 s of a 4.1 s query at 200 ms). */
static int plain_dir(sv_fs *fs, uint64_t ino, sv_dirents *d, const sv_cancel *tok)
{
    plain_fs *p = fs->plain;
    tree_dir_snapshot snap;
    int r = plain_readdir(p, ino, &snap, tok);
    if (r < 0)
        return r;
    bool ok = sv_dirents_push(d, ".", ino, S_IFDIR) && sv_dirents_push(d, "..", tree_parent(p->tree, ino), S_IFDIR);
    for (size_t i = 0; ok && i < snap.n; i++) {
        if (ino == TREE_ROOT_INO && strcmp(snap.entries[i].name, fs->control_dir) == 0)
            continue; /* the bucket's own: the control directory hides it (lookups never reach it) */
        if (snap.entries[i].is_dir && strcmp(snap.entries[i].name, PAGE_MAP_REMOTE_DIR) == 0)
            continue;
        ok = sv_dirents_push(d, snap.entries[i].name, snap.entries[i].ino, snap.entries[i].is_dir ? S_IFDIR : S_IFREG);
        if (snap.entries[i].is_dir && strcmp(snap.entries[i].name, "_delta_log") == 0)
            table_registry_saw(fs->tables, ino);
    }
    tree_dir_snapshot_free(&snap);
    return ok ? 0 : -ENOMEM;
}

int sv_fs_opendir(sv_fs *fs, uint64_t ino, sv_dir **out, const sv_cancel *tok)
{
    *out = NULL;
    if (ino == SV_INO_STATS || ino == SV_INO_PROFILE)
        return -ENOTDIR;
    sv_dir *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    int r = ino == SV_INO_CONTROL ? control_readdir(&d->list)
            : tables_ns_owns(ino) ? tables_ns_readdir(fs->tables, fs->plain, ino, &d->list, tok)
            : views_owns(ino)     ? views_readdir(fs->views, ino, &d->list, tok)
                                  : plain_dir(fs, ino, &d->list, tok);
    if (r < 0) {
        sv_dirents_free(&d->list);
        free(d);
        char name[32];
        snprintf(name, sizeof name, "inode %llu", (unsigned long long)ino);
        return listing_gave_up(fs, "opendir of", name, r);
    }
    handle_list_add(&fs->handles, &d->h, HANDLE_DIR);
    *out = d;
    return 0;
}

const sv_dirents *sv_dir_entries(const sv_dir *d)
{
    return &d->list;
}

void sv_fs_releasedir(sv_fs *fs, sv_dir *d)
{
    if (!d)
        return;
    handle_list_remove(&fs->handles, &d->h);
    handle_free(fs, &d->h);
}

/* ---- open files ----------------------------------------------------------------- */

static sv_handle *text_handle_new(char *text, size_t len)
{
    text_handle *t = calloc(1, sizeof *t);
    if (!t) {
        free(text);
        return NULL;
    }
    t->text = text;
    t->len = len;
    return &t->h;
}

/* Wrap what the views opened in a handle (freeing it when out of memory). */
static sv_handle *view_handle_new(sv_fs *fs, view_opened *vo, handle_kind *kind)
{
    if (vo->kind == VIEW_OPENED_TEXT) {
        *kind = HANDLE_TEXT;
        return text_handle_new(vo->text, vo->len);
    }
    if (vo->kind == VIEW_OPENED_FILE) {
        view_handle *v = calloc(1, sizeof *v);
        if (!v)
            view_reader_close(fs->views, vo->reader);
        else
            v->r = vo->reader;
        *kind = HANDLE_VIEW;
        return v ? &v->h : NULL;
    }
    hint_handle *w = calloc(1, sizeof *w);
    if (!w)
        hint_writer_close(fs->views, vo->writer, true);
    else
        w->w = vo->writer;
    *kind = HANDLE_HINT;
    return w ? &w->h : NULL;
}

int sv_fs_open(sv_fs *fs, uint64_t ino, int flags, sv_file **out, sv_open_flags *of, const sv_cancel *tok)
{
    *out = NULL;
    memset(of, 0, sizeof *of);
    if (ino == SV_INO_CONTROL)
        return -EISDIR;
    if ((flags & O_ACCMODE) != O_RDONLY && !views_owns(ino))
        return -EROFS;
    sv_handle *h = NULL;
    handle_kind kind;
    if (tables_ns_owns(ino)) {
        char *text = NULL;
        size_t len = 0;
        int r = tables_ns_open(fs->tables, fs->plain, ino, &text, &len, tok);
        if (r < 0)
            return r;
        h = text_handle_new(text, len);
        kind = HANDLE_TEXT;
        of->direct_io = true;
    } else if (ino == SV_INO_STATS || ino == SV_INO_PROFILE) {
        size_t len = 0;
        char *text = ino == SV_INO_STATS ? control_render_stats(fs->plain, &len)
                                         : control_render_profile(fs->profile, (int64_t)time(NULL), &len);
        h = text ? text_handle_new(text, len) : NULL;
        kind = HANDLE_TEXT;
        of->direct_io = true;
    } else if (views_owns(ino)) {
        view_opened vo;
        int r = views_open(fs->views, ino, flags, &vo, of, tok);
        if (r < 0)
            return r;
        h = view_handle_new(fs, &vo, &kind);
    } else {
        plain_handle *p = calloc(1, sizeof *p);
        if (!p)
            return -ENOMEM;
        int r = plain_file_open(fs->plain, ino, true, &p->f, tok);
        if (r < 0) {
            free(p);
            return r;
        }
        /* An inode is one immutable object version: its pages stay valid. */
        of->keep_cache = true;
        h = &p->h;
        kind = HANDLE_PLAIN;
    }
    if (!h)
        return -ENOMEM;
    if (fs->plain->cfg.direct_io && (kind == HANDLE_PLAIN || kind == HANDLE_VIEW))
        of->direct_io = true;
    handle_list_add(&fs->handles, h, kind);
    *out = h;
    return 0;
}

int sv_fs_create_file(sv_fs *fs, uint64_t parent, const char *name, int flags, sv_file **out, sv_attr *attr)
{
    (void)flags;
    *out = NULL;
    if (!views_owns(parent))
        return -EROFS;
    hint_writer *w = NULL;
    int r = views_create_hint(fs->views, parent, name, &w, attr);
    if (r < 0)
        return r;
    view_opened vo = {.kind = VIEW_OPENED_HINT, .writer = w};
    handle_kind kind;
    sv_handle *h = view_handle_new(fs, &vo, &kind);
    if (!h)
        return -ENOMEM;
    handle_list_add(&fs->handles, h, kind);
    *out = h;
    return 0;
}

void sv_fs_release(sv_fs *fs, sv_file *f)
{
    if (!f)
        return;
    handle_list_remove(&fs->handles, f);
    handle_free(fs, f);
}

static void handle_free(sv_fs *fs, sv_handle *h)
{
    switch (h->kind) {
    case HANDLE_DIR:
        sv_dirents_free(&((sv_dir *)h)->list);
        break;
    case HANDLE_PLAIN:
        plain_file_close(fs->plain, &((plain_handle *)h)->f);
        break;
    case HANDLE_TEXT:
        free(((text_handle *)h)->text);
        break;
    case HANDLE_VIEW:
        view_reader_close(fs->views, ((view_handle *)h)->r);
        break;
    case HANDLE_HINT:
        hint_writer_close(fs->views, ((hint_handle *)h)->w, fs->destroying);
        break;
    }
    free(h);
}

/* ---- reading ------------------------------------------------------------------- */

/* A private copy of [off, off+size) of text: the handle (and its snapshot)
 * may be released while the reply is still being written. */
static ssize_t read_text(sv_fs *fs, const text_handle *t, uint64_t off, size_t size, struct iovec *iov,
                         size_t *niov, sv_read_pins *pins)
{
    if (off >= t->len || size == 0)
        return 0;
    size_t n = t->len - (size_t)off < size ? t->len - (size_t)off : size;
    pins->owned = malloc(n);
    if (!pins->owned)
        return -ENOMEM;
    memcpy(pins->owned, t->text + off, n);
    pins->owned_bytes = n;
    memory_budget_charge(&fs->plain->budget, n);
    iov[0].iov_base = pins->owned;
    iov[0].iov_len = n;
    *niov = 1;
    return (ssize_t)n;
}

/* A view's real bytes are replied from the block cache, as on the plain
 * path; a read with synthesized bytes from a private buffer. */
static ssize_t read_view(sv_fs *fs, view_handle *v, uint64_t off, size_t size, struct iovec *iov, size_t maxiov,
                         size_t *niov, sv_read_pins *pins, const sv_cancel *tok)
{
    view_reply out = {.iov = iov, .maxiov = maxiov};
    ssize_t r = view_reader_reply(fs->views, v->r, off, size, &out, tok);
    if (r > 0) {
        pins->obj = out.pins;
        pins->owned = out.owned;
        pins->synthesized = out.synthesized;
        if (out.owned) {
            pins->owned_bytes = size; /* what view_reader_reply allocated */
            memory_budget_charge(&fs->plain->budget, size);
        }
        *niov = out.niov;
    }
    return r;
}

void sv_fs_cancel_init(sv_fs *fs, sv_cancel *tok)
{
    object_io_cancel_init(fs->plain->io, tok);
}

void sv_fs_shutdown(sv_fs *fs)
{
    object_io_shutdown(fs->plain->io);
}

/* What a read that gave up tells the reader, said once here: an interrupt is
 * the reader's own doing (EINTR, quiet); a deadline or shutdown is EIO, with
 * the object and offset in the log. */
static ssize_t gave_up(sv_fs *fs, const char *key, bool view, uint64_t off, size_t size, ssize_t r)
{
    if (r == -EINTR) {
        STAT_ADD(fs->stats, read_interrupts, 1);
        log_debug("read of %s at offset %llu (%zu bytes) interrupted by the reader", key,
                  (unsigned long long)off, size);
        return r;
    }
    if (r == -ETIMEDOUT) {
        STAT_ADD(fs->stats, read_timeouts, 1);
        log_warn("read of %s%s at offset %llu (%zu bytes) timed out after %llu ms (--read-timeout): EIO", key,
                 view ? " (view)" : "", (unsigned long long)off, size,
                 (unsigned long long)object_io_read_timeout_ms(fs->plain->io));
        return -EIO;
    }
    if (r == -ESHUTDOWN) {
        log_info("read of %s at offset %llu (%zu bytes) abandoned: unmounting", key, (unsigned long long)off, size);
        return -EIO;
    }
    return r;
}

ssize_t sv_fs_read_pinned(sv_fs *fs, sv_file *f, uint64_t off, size_t size, struct iovec *iov, size_t maxiov,
                          size_t *niov, sv_read_pins *pins, const sv_cancel *tok)
{
    *niov = 0;
    memset(pins, 0, sizeof *pins);
    if (maxiov == 0)
        return 0;
    if (f->kind == HANDLE_TEXT)
        return read_text(fs, (const text_handle *)f, off, size, iov, niov, pins);
    if (f->kind != HANDLE_PLAIN && f->kind != HANDLE_VIEW)
        return -EBADF;
    STAT_ADD(fs->stats, fuse_reads, 1);
    ssize_t r;
    if (f->kind == HANDLE_VIEW) {
        log_trace("read %s offset %llu size %zu (view)", view_reader_key(((view_handle *)f)->r),
                  (unsigned long long)off, size);
        r = read_view(fs, (view_handle *)f, off, size, iov, maxiov, niov, pins, tok);
        if (r < 0 && r != -EINTR)
            STAT_ADD(fs->stats, errors, 1);
        r = gave_up(fs, view_reader_key(((view_handle *)f)->r), true, off, size, r);
    } else {
        plain_handle *p = (plain_handle *)f;
        log_trace("read %s offset %llu size %zu", p->f.obj.key, (unsigned long long)off, size);
        object_read_tally tally = {0};
        r = plain_file_read(fs->plain, &p->f, off, size, iov, maxiov, niov, &pins->obj, &tally, tok);
        r = gave_up(fs, p->f.obj.key, false, off, size, r);
        STAT_ADD(fs->stats, cache_hit_bytes, tally.hit_bytes);
        STAT_ADD(fs->stats, cache_miss_bytes, tally.miss_bytes);
    }
    if (r > 0)
        STAT_ADD(fs->stats, fuse_read_bytes, (uint64_t)r);
    return r;
}

void sv_fs_read_release(sv_fs *fs, sv_read_pins *pins)
{
    if (pins->synthesized)
        view_reply_sent(pins->synthesized);
    pins->synthesized = NULL;
    free(pins->owned);
    pins->owned = NULL;
    memory_budget_uncharge(&fs->plain->budget, pins->owned_bytes);
    pins->owned_bytes = 0;
    object_pins_release(fs->plain->io, &pins->obj);
}

/* ---- writing hints ---------------------------------------------------------------- */

ssize_t sv_fs_write(sv_fs *fs, sv_file *f, uint64_t off, const char *buf, size_t size)
{
    (void)fs;
    if (f->kind != HANDLE_HINT)
        return -EBADF;
    return hint_writer_write(((hint_handle *)f)->w, off, buf, size);
}

int sv_fs_flush(sv_fs *fs, sv_file *f)
{
    return f->kind == HANDLE_HINT ? hint_writer_flush(fs->views, ((hint_handle *)f)->w) : 0;
}

int sv_fs_truncate(sv_fs *fs, uint64_t ino, sv_file *f, uint64_t size)
{
    if (!views_owns(ino))
        return -EROFS;
    return views_truncate(fs->views, ino, f && f->kind == HANDLE_HINT ? ((hint_handle *)f)->w : NULL, size);
}

bool sv_fs_is_writable(sv_fs *fs, uint64_t ino)
{
    (void)fs;
    return views_is_hint_file(ino);
}

int sv_fs_unlink(sv_fs *fs, uint64_t parent, const char *name, sv_stale_entry *stale)
{
    stale->parent = 0;
    if (!views_owns(parent))
        return -EROFS;
    return views_unlink(fs->views, parent, name, stale);
}

size_t sv_fs_take_stale(sv_fs *fs, sv_stale_entry *out, size_t max)
{
    tree_stale got[16];
    size_t n = 0;
    while (n < max) {
        size_t want = max - n < 16 ? max - n : 16;
        size_t k = tree_take_stale(fs->plain->tree, got, want);
        for (size_t i = 0; i < k; i++, n++) {
            out[n].parent = got[i].parent;
            snprintf(out[n].name, sizeof out[n].name, "%s", got[i].name);
        }
        if (k < want)
            break;
    }
    return n;
}

/* ---- extended attributes ------------------------------------------------------- */

ssize_t sv_fs_getxattr(sv_fs *fs, uint64_t ino, const char *name, char *buf, size_t size)
{
    if (control_owns(ino) || views_owns(ino) || tables_ns_owns(ino))
        return -ENODATA;
    return plain_getxattr(fs->plain, ino, name, buf, size);
}

ssize_t sv_fs_listxattr(sv_fs *fs, uint64_t ino, char *buf, size_t size)
{
    if (control_owns(ino) || views_owns(ino) || tables_ns_owns(ino))
        return 0;
    return plain_listxattr(fs->plain, ino, buf, size);
}
