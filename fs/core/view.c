/* Hints and views: the namespace (.sieve/hints, .sieve/views), hint
 * acceptance, and the read path of files seen through a view. See view.h. */
#include "view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "fs_internal.h"
#include "hint.h"
#include "log.h"
#include "page_map.h"
#include "page_plan.h"
#include "parquet_meta.h"
#include "pq_value.h"
#include "predicate.h"
#include "row_ranges.h"

#define VIEW_MAX_FILTER_CHUNK (256ull << 20) /* larger filter chunks: the file is served real */
#define VIEW_MAX_FILTER_BYTES (256ull << 20) /* decoded BYTES values of one filter column */
#define VIEW_MAX_ROWS_PER_GROUP (8u << 20) /* the filter columns of a row group are held decoded */
/* Gaps are merged below the larger of these and --request-cost. */
#define VIEW_GAP_MERGE (2u << 10)
#define VIEW_MIN_SAVING 0.25
#define VIEW_FETCH_MERGE (2u << 10)           /* merge fetches of neighbouring pages */
#define VIEW_MAX_FETCH (8u << 20)

/* WRITING: created, no verdict yet; CHECKING: one writer's document is being
 * judged (others get EBUSY meanwhile); then ACCEPTED or REJECTED. */
typedef enum { HINT_WRITING = 0, HINT_CHECKING, HINT_ACCEPTED, HINT_REJECTED } hint_state;

typedef struct view_file view_file;

/* One hint name: its document, its verdict and (when accepted) its view. */
typedef struct sv_view {
    char name[129];
    uint32_t id;           /* unique for the life of the mount */
    hint_state state;
    int64_t mtime;         /* of every file in the view */
    char *json;            /* the accepted document */
    size_t json_len;
    char *error;           /* the last rejection, or NULL */
    sv_hint *hint;
    atomic_int refs;       /* the registry's (while listed) + open handles */
    /* Under the registry lock: state, mtime, json, json_len, error, hint
     * (set once, when accepted), writers, detached. */
    int writers;           /* handles open for writing NAME.json */
    bool detached;         /* removed from the registry */

    pthread_mutex_t lock;  /* guards files */
    view_file *files;

    /* Counters over all files of the view (relaxed atomics). */
    atomic_uint_fast64_t pages_real, pages_synth, pages_partial;
    atomic_uint_fast64_t bytes_fetched, ordinary_bytes, requests;
} sv_view;

struct view_registry {
    pthread_mutex_t lock; /* guards recs, n, next_id, last_mtime */
    sv_view *recs[VIEW_MAX_HINTS];
    size_t n;
    uint32_t next_id;
    int64_t last_mtime;
};

/* ------------------------------------------------------------------------ */
/* Per-file plan                                                             */

typedef enum { VP_REAL = 0, VP_SPARSE } vpage_kind;

typedef struct {
    vpage_kind kind;
    pp_piece *pieces;
    uint32_t n_pieces;
} vpage;

typedef enum { CH_UNPLANNED = 0, CH_PLANNING, CH_PLANNED } chunk_state;

typedef struct {
    uint64_t start, end;   /* the column chunk's bytes */
    uint32_t rg, col;
    chunk_state state;
    bool real;             /* the whole chunk is served real */
    bool all_real;         /* real, or planned with no sparse page: read like the plain path */
    bool counted;          /* its bytes were added to the ordinary total */
    pq_page_map pm;
    vpage *pages;          /* per pm page when !real */
} vchunk;

typedef enum { VF_NEW = 0, VF_PREPARING, VF_READY, VF_REAL } vf_state;

struct view_file {
    view_file *next;
    uint64_t base_ino;
    int refs;              /* under the view's lock */
    char *relpath;

    pthread_mutex_t lock;  /* guards everything below */
    pthread_cond_t cond;
    vf_state state;
    char why_real[256];
    pq_file_meta *meta;
    bool has_meta;
    row_ranges *sel;       /* per row group, rows relative to the group */
    bool *filter_col;      /* per leaf */
    bool *want_col;        /* per leaf: named by the hint's columns (or all) */
    vchunk *chunks;        /* n_row_groups * n_leaves */
    size_t n_chunks;
    size_t *by_start;      /* chunk indices sorted by start */
    uint64_t total_rows, selected_rows;
    bool columns_planned;  /* the hint's columns were planned together */
    uint64_t pages_real, pages_synth, pages_partial;
    uint64_t bytes_fetched, ordinary_bytes, requests;
};

/* ------------------------------------------------------------------------ */
/* Registry                                                                  */

struct view_registry *views_create(void)
{
    struct view_registry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    pthread_mutex_init(&r->lock, NULL);
    r->next_id = 1;
    return r;
}

static void vchunk_free(vchunk *c)
{
    if (c->pages) {
        for (uint32_t i = 0; i < c->pm.n_pages; i++) {
            for (uint32_t k = 0; k < c->pages[i].n_pieces; k++)
                free(c->pages[i].pieces[k].data);
            free(c->pages[i].pieces);
        }
        free(c->pages);
    }
    pq_page_map_free(&c->pm);
}

static void view_file_free(view_file *vf)
{
    for (size_t i = 0; i < vf->n_chunks; i++)
        vchunk_free(&vf->chunks[i]);
    free(vf->chunks);
    free(vf->by_start);
    if (vf->sel && vf->has_meta) {
        for (uint32_t g = 0; g < vf->meta->n_row_groups; g++)
            row_ranges_free(&vf->sel[g]);
    }
    free(vf->sel);
    free(vf->filter_col);
    free(vf->want_col);
    pq_file_meta_free(vf->meta);
    free(vf->relpath);
    pthread_mutex_destroy(&vf->lock);
    pthread_cond_destroy(&vf->cond);
    free(vf);
}

static void view_unref(sv_view *v)
{
    if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
        return;
    view_file *vf = v->files;
    while (vf) {
        view_file *next = vf->next;
        view_file_free(vf);
        vf = next;
    }
    hint_free(v->hint);
    free(v->json);
    free(v->error);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

void views_destroy(struct view_registry *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        view_unref(r->recs[i]);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

bool views_owns(uint64_t ino)
{
    return ino == SV_INO_HINTS || ino == SV_INO_VIEWS || (ino & VIEW_HINT_FLAG) ||
           (ino >> VIEW_ID_SHIFT) != 0;
}

typedef enum { HF_JSON = 0, HF_ERROR = 1, HF_STATS = 2 } hint_file_kind;

bool views_is_hint_file(uint64_t ino)
{
    return (ino & VIEW_HINT_FLAG) != 0;
}

static uint64_t hint_ino(uint32_t id, hint_file_kind k)
{
    return VIEW_HINT_FLAG | ((uint64_t)id << 2) | (uint64_t)k;
}

static uint64_t view_ino(uint32_t id, uint64_t base)
{
    return ((uint64_t)id << VIEW_ID_SHIFT) | base;
}

/* Split "NAME.ext" into a name and a hint file kind. */
static bool parse_hint_filename(const char *fname, char *name, size_t cap, hint_file_kind *kind)
{
    const char *dot = strrchr(fname, '.');
    if (!dot)
        return false;
    if (strcmp(dot, ".json") == 0)
        *kind = HF_JSON;
    else if (strcmp(dot, ".error") == 0)
        *kind = HF_ERROR;
    else if (strcmp(dot, ".stats") == 0)
        *kind = HF_STATS;
    else
        return false;
    size_t n = (size_t)(dot - fname);
    if (!hint_name_valid(fname, n) || n >= cap)
        return false;
    memcpy(name, fname, n);
    name[n] = '\0';
    return true;
}

/* Find by name or id under the registry lock; returns a new reference. */
static sv_view *find_by_name(struct view_registry *r, const char *name)
{
    sv_view *v = NULL;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->recs[i]->name, name) == 0) {
            v = r->recs[i];
            atomic_fetch_add(&v->refs, 1);
            break;
        }
    pthread_mutex_unlock(&r->lock);
    return v;
}

static sv_view *find_by_id(struct view_registry *r, uint32_t id)
{
    sv_view *v = NULL;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        if (r->recs[i]->id == id) {
            v = r->recs[i];
            atomic_fetch_add(&v->refs, 1);
            break;
        }
    pthread_mutex_unlock(&r->lock);
    return v;
}

/* Remove v from the registry (drops the registry's reference). */
static void registry_remove(struct view_registry *r, sv_view *v)
{
    bool found = false;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        if (r->recs[i] == v) {
            r->recs[i] = r->recs[--r->n];
            v->detached = true;
            found = true;
            break;
        }
    pthread_mutex_unlock(&r->lock);
    if (found)
        view_unref(v);
}

/* ------------------------------------------------------------------------ */
/* Attributes and directories                                               */

static void dir_attr(uint64_t ino, int64_t mtime, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ino;
    out->mode = S_IFDIR | (ino == SV_INO_HINTS ? 0755 : 0555);
    out->nlink = 2;
    out->mtime = mtime;
    out->timeout = 0;
}

static size_t render_view_stats(sv_view *v, char **out);

/* Takes the registry lock (the caller must not hold it). */
static int hint_file_attr(sv_fs *fs, sv_view *v, hint_file_kind k, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = hint_ino(v->id, k);
    out->nlink = 1;
    out->timeout = 0;
    int r = 0;
    pthread_mutex_lock(&fs->views->lock);
    out->mtime = v->mtime ? v->mtime : fs->start_time;
    hint_state state = v->state;
    if (k == HF_JSON) {
        out->mode = S_IFREG | 0644;
        out->size = state == HINT_ACCEPTED ? v->json_len : 0;
        if (state == HINT_REJECTED)
            r = -ENOENT;
    } else if (k == HF_ERROR) {
        out->mode = S_IFREG | 0444;
        if (v->error)
            out->size = strlen(v->error);
        else
            r = -ENOENT;
    } else {
        out->mode = S_IFREG | 0444;
        if (state != HINT_ACCEPTED)
            r = -ENOENT;
    }
    pthread_mutex_unlock(&fs->views->lock);
    if (r == 0 && k == HF_STATS) {
        char *text = NULL;
        out->size = render_view_stats(v, &text);
        free(text);
    }
    return r;
}

/* A plain-path node as seen in view v: its own inode and the view's mtime. */
static void tree_attr_in_view(const sv_fs *fs, const sv_view *v, const tree_attr *ta, sv_attr *out)
{
    fs_tree_attr(fs, ta, out);
    out->ino = view_ino(v->id, ta->ino);
    out->mtime = v->mtime;
}

/* The hint record a file name under .sieve/hints belongs to (a new
 * reference), and which of its files it names; NULL when none. */
static sv_view *find_hint_file(sv_fs *fs, const char *fname, hint_file_kind *k)
{
    char hname[129];
    if (!parse_hint_filename(fname, hname, sizeof hname, k))
        return NULL;
    return find_by_name(fs->views, hname);
}

int views_lookup(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out)
{
    if (parent == SV_INO_HINTS) {
        hint_file_kind k;
        sv_view *v = find_hint_file(fs, name, &k);
        if (!v)
            return -ENOENT;
        int r = hint_file_attr(fs, v, k, out);
        view_unref(v);
        return r;
    }
    if (parent == SV_INO_VIEWS) {
        sv_view *v = find_by_name(fs->views, name);
        if (!v)
            return -ENOENT;
        int r = -ENOENT;
        pthread_mutex_lock(&fs->views->lock);
        if (v->state == HINT_ACCEPTED) {
            dir_attr(view_ino(v->id, TREE_ROOT_INO), v->mtime, out);
            r = 0;
        }
        pthread_mutex_unlock(&fs->views->lock);
        view_unref(v);
        return r;
    }
    if ((parent & VIEW_HINT_FLAG) || (parent >> VIEW_ID_SHIFT) == 0)
        return -ENOTDIR;
    uint32_t id = (uint32_t)(parent >> VIEW_ID_SHIFT);
    sv_view *v = find_by_id(fs->views, id);
    if (!v)
        return -ENOENT;
    tree_attr ta;
    s3_status st = tree_lookup(fs->tree, parent & VIEW_BASE_MASK, name, &ta);
    int r = fs_status_errno(st);
    if (st == S3_OK)
        tree_attr_in_view(fs, v, &ta, out);
    view_unref(v);
    return r;
}

int views_getattr(sv_fs *fs, uint64_t ino, sv_attr *out)
{
    if (ino == SV_INO_HINTS || ino == SV_INO_VIEWS) {
        dir_attr(ino, fs->start_time, out);
        return 0;
    }
    if (ino & VIEW_HINT_FLAG) {
        uint32_t id = (uint32_t)((ino & ~VIEW_HINT_FLAG) >> 2);
        sv_view *v = find_by_id(fs->views, id);
        if (!v)
            return -ENOENT;
        int r = hint_file_attr(fs, v, (hint_file_kind)(ino & 3), out);
        view_unref(v);
        return r;
    }
    sv_view *v = find_by_id(fs->views, (uint32_t)(ino >> VIEW_ID_SHIFT));
    if (!v)
        return -ENOENT;
    tree_attr ta;
    s3_status st = tree_getattr(fs->tree, ino & VIEW_BASE_MASK, &ta);
    int r = fs_status_errno(st);
    if (st == S3_OK)
        tree_attr_in_view(fs, v, &ta, out);
    view_unref(v);
    return r;
}

static bool push(sv_dir *d, size_t *cap, const char *name, uint64_t ino, mode_t mode)
{
    if (d->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        sv_dirent *e = realloc(d->entries, ncap * sizeof *e);
        if (!e)
            return false;
        d->entries = e;
        *cap = ncap;
    }
    char *n = strdup(name);
    if (!n)
        return false;
    d->entries[d->n++] = (sv_dirent){n, ino, mode};
    return true;
}

int views_opendir(sv_fs *fs, uint64_t ino, sv_dir *d)
{
    size_t cap = 0;
    if (ino == SV_INO_HINTS || ino == SV_INO_VIEWS) {
        bool ok = push(d, &cap, ".", ino, S_IFDIR) && push(d, &cap, "..", SV_INO_CONTROL, S_IFDIR);
        pthread_mutex_lock(&fs->views->lock);
        for (size_t i = 0; ok && i < fs->views->n; i++) {
            sv_view *v = fs->views->recs[i];
            char fname[160];
            if (ino == SV_INO_VIEWS) {
                if (v->state == HINT_ACCEPTED)
                    ok = push(d, &cap, v->name, view_ino(v->id, TREE_ROOT_INO), S_IFDIR);
                continue;
            }
            if (v->state != HINT_REJECTED) {
                snprintf(fname, sizeof fname, "%s.json", v->name);
                ok = ok && push(d, &cap, fname, hint_ino(v->id, HF_JSON), S_IFREG);
            }
            if (v->error) {
                snprintf(fname, sizeof fname, "%s.error", v->name);
                ok = ok && push(d, &cap, fname, hint_ino(v->id, HF_ERROR), S_IFREG);
            }
            if (v->state == HINT_ACCEPTED) {
                snprintf(fname, sizeof fname, "%s.stats", v->name);
                ok = ok && push(d, &cap, fname, hint_ino(v->id, HF_STATS), S_IFREG);
            }
        }
        pthread_mutex_unlock(&fs->views->lock);
        return ok ? 0 : -ENOMEM;
    }
    if (ino & VIEW_HINT_FLAG)
        return -ENOTDIR;
    uint32_t id = (uint32_t)(ino >> VIEW_ID_SHIFT);
    sv_view *v = find_by_id(fs->views, id);
    if (!v)
        return -ENOENT;
    uint64_t base = ino & VIEW_BASE_MASK;
    tree_attr ta;
    s3_status st = tree_getattr(fs->tree, base, &ta);
    if (st == S3_OK && !ta.is_dir) {
        view_unref(v);
        return -ENOTDIR;
    }
    tree_dir_snapshot snap = {0};
    if (st == S3_OK)
        st = tree_readdir(fs->tree, base, &snap);
    if (st != S3_OK) {
        view_unref(v);
        return fs_status_errno(st);
    }
    uint64_t parent = base == TREE_ROOT_INO ? SV_INO_VIEWS : view_ino(id, tree_parent(fs->tree, base));
    bool ok = push(d, &cap, ".", ino, S_IFDIR) && push(d, &cap, "..", parent, S_IFDIR);
    for (size_t i = 0; ok && i < snap.n; i++)
        ok = push(d, &cap, snap.entries[i].name, view_ino(id, snap.entries[i].ino),
                  snap.entries[i].is_dir ? S_IFDIR : S_IFREG);
    tree_dir_snapshot_free(&snap);
    view_unref(v);
    return ok ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */

static view_file *view_file_get(sv_fs *fs, sv_view *v, uint64_t base_ino, const char *key)
{
    pthread_mutex_lock(&v->lock);
    view_file *vf = v->files;
    while (vf && vf->base_ino != base_ino)
        vf = vf->next;
    if (vf) {
        vf->refs++;
        pthread_mutex_unlock(&v->lock);
        return vf;
    }
    vf = calloc(1, sizeof *vf);
    if (vf) {
        size_t plen = strlen(fs->cfg.prefix);
        vf->relpath = strdup(strncmp(key, fs->cfg.prefix, plen) == 0 ? key + plen : key);
        if (!vf->relpath) {
            free(vf);
            vf = NULL;
        }
    }
    if (vf) {
        vf->base_ino = base_ino;
        vf->refs = 2; /* the view's list and the caller */
        pthread_mutex_init(&vf->lock, NULL);
        pthread_cond_init(&vf->cond, NULL);
        vf->next = v->files;
        v->files = vf;
    }
    pthread_mutex_unlock(&v->lock);
    return vf;
}

static void view_file_put(sv_view *v, view_file *vf)
{
    /* Plans stay with the view (the list's reference) until the view goes. */
    pthread_mutex_lock(&v->lock);
    vf->refs--;
    pthread_mutex_unlock(&v->lock);
}

int views_open(sv_fs *fs, uint64_t ino, int flags, sv_file *f, sv_open_flags *of)
{
    if (ino == SV_INO_HINTS || ino == SV_INO_VIEWS)
        return -EISDIR;
    if (ino & VIEW_HINT_FLAG) {
        uint32_t id = (uint32_t)((ino & ~VIEW_HINT_FLAG) >> 2);
        hint_file_kind k = (hint_file_kind)(ino & 3);
        sv_view *v = find_by_id(fs->views, id);
        if (!v)
            return -ENOENT;
        int acc = flags & O_ACCMODE;
        if (acc != O_RDONLY) {
            if (k != HF_JSON || acc == O_RDWR) {
                view_unref(v);
                return -EACCES;
            }
            /* Writing an existing hint again: allowed, but only the same
             * content is accepted (hints are immutable). */
            f->kind = SV_FILE_HINT_WRITE;
            f->hint_name = strdup(v->name);
            if (!f->hint_name) {
                view_unref(v);
                return -ENOMEM;
            }
            pthread_mutex_lock(&fs->views->lock);
            v->writers++;
            pthread_mutex_unlock(&fs->views->lock);
            f->view = v; /* the handle keeps the record's reference */
            of->direct_io = true;
            return 0;
        }
        f->kind = SV_FILE_VIRTUAL;
        f->is_virtual = true;
        of->direct_io = true;
        if (k == HF_STATS) {
            f->virt_len = render_view_stats(v, &f->virt);
        } else {
            pthread_mutex_lock(&fs->views->lock);
            if (k == HF_JSON) {
                f->virt = malloc(v->json_len + 1);
                f->virt_len = v->state == HINT_ACCEPTED ? v->json_len : 0;
                if (f->virt && f->virt_len)
                    memcpy(f->virt, v->json, f->virt_len);
            } else {
                f->virt = strdup(v->error ? v->error : "");
                f->virt_len = f->virt ? strlen(f->virt) : 0;
            }
            pthread_mutex_unlock(&fs->views->lock);
        }
        view_unref(v);
        return f->virt ? 0 : -ENOMEM;
    }
    if ((flags & O_ACCMODE) != O_RDONLY)
        return -EROFS;
    uint32_t id = (uint32_t)(ino >> VIEW_ID_SHIFT);
    sv_view *v = find_by_id(fs->views, id);
    if (!v)
        return -ENOENT;
    int r = fs_file_bind_object(fs, f, ino & VIEW_BASE_MASK);
    if (r < 0) {
        view_unref(v);
        return r;
    }
    pthread_mutex_lock(&fs->views->lock);
    bool usable = v->state == HINT_ACCEPTED && v->hint;
    pthread_mutex_unlock(&fs->views->lock);
    if (!usable) {
        view_unref(v);
        return -ENOENT;
    }
    f->kind = SV_FILE_VIEW;
    f->view = v; /* keeps the reference */
    f->vf = view_file_get(fs, v, ino & VIEW_BASE_MASK, f->key);
    if (!f->vf)
        return -ENOMEM;
    of->keep_cache = true;
    return 0;
}

void views_release(sv_fs *fs, sv_file *f)
{
    if (f->kind == SV_FILE_HINT_WRITE) {
        /* At unmount the S3 client is gone: no verdicts then. */
        if (f->written && !fs->destroying)
            (void)views_flush(fs, f);
        /* A name created but never given a document disappears with its
         * last writer. */
        sv_view *v = f->view;
        if (v) {
            pthread_mutex_lock(&fs->views->lock);
            bool abandoned = --v->writers == 0 && v->state == HINT_WRITING && !v->detached;
            pthread_mutex_unlock(&fs->views->lock);
            if (abandoned)
                registry_remove(fs->views, v);
            view_unref(v);
            f->view = NULL;
        }
        free(f->hint_name);
        free(f->wbuf);
        return;
    }
    if (f->kind == SV_FILE_VIEW && f->view) {
        if (f->vf)
            view_file_put(f->view, f->vf);
        view_unref(f->view);
        f->view = NULL;
        f->vf = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Writing hints                                                            */

int views_create_file(sv_fs *fs, uint64_t parent, const char *name, int flags, sv_file *f,
                      sv_attr *out)
{
    (void)flags;
    if (parent != SV_INO_HINTS)
        return -EROFS;
    char hname[129];
    hint_file_kind k;
    if (!parse_hint_filename(name, hname, sizeof hname, &k) || k != HF_JSON)
        return -EINVAL; /* only NAME.json can be written */
    struct view_registry *r = fs->views;
    pthread_mutex_lock(&r->lock);
    sv_view *v = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->recs[i]->name, hname) == 0)
            v = r->recs[i];
    if (!v) {
        if (r->n >= VIEW_MAX_HINTS || r->next_id > VIEW_MAX_ID) {
            pthread_mutex_unlock(&r->lock);
            return -ENOSPC;
        }
        v = calloc(1, sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&r->lock);
            return -ENOMEM;
        }
        snprintf(v->name, sizeof v->name, "%s", hname);
        v->id = r->next_id++;
        v->state = HINT_WRITING;
        atomic_init(&v->refs, 1);
        pthread_mutex_init(&v->lock, NULL);
        r->recs[r->n++] = v;
    } else if (v->state == HINT_REJECTED) {
        v->state = HINT_WRITING;
    }
    v->writers++;
    atomic_fetch_add(&v->refs, 1);
    pthread_mutex_unlock(&r->lock);
    f->kind = SV_FILE_HINT_WRITE;
    f->view = v; /* released (and the writer count dropped) by views_release */
    f->hint_name = strdup(hname);
    hint_file_attr(fs, v, HF_JSON, out);
    return f->hint_name ? 0 : -ENOMEM;
}

static ssize_t hint_buffer_write(sv_file *f, uint64_t off, const char *buf, size_t size);

ssize_t views_write(sv_fs *fs, sv_file *f, uint64_t off, const char *buf, size_t size)
{
    (void)fs;
    if (f->kind != SV_FILE_HINT_WRITE)
        return -EBADF;
    pthread_mutex_lock(&f->seq_lock); /* the handle's write buffer */
    ssize_t r = hint_buffer_write(f, off, buf, size);
    pthread_mutex_unlock(&f->seq_lock);
    return r;
}

static ssize_t hint_buffer_write(sv_file *f, uint64_t off, const char *buf, size_t size)
{
    if (off > HINT_MAX_BYTES || size > HINT_MAX_BYTES - off) {
        f->too_big = true; /* reported by flush, so NAME.error names the limit */
        f->written = true;
        return -EFBIG;
    }
    size_t end = (size_t)off + size;
    if (end > f->wcap) {
        size_t cap = f->wcap ? f->wcap : 4096;
        while (cap < end)
            cap *= 2;
        char *b = realloc(f->wbuf, cap);
        if (!b)
            return -ENOMEM;
        f->wbuf = b;
        f->wcap = cap;
    }
    if (off > f->wlen)
        memset(f->wbuf + f->wlen, ' ', (size_t)off - f->wlen);
    memcpy(f->wbuf + off, buf, size);
    if (end > f->wlen)
        f->wlen = end;
    f->written = true;
    return (ssize_t)size;
}

int views_truncate(sv_fs *fs, uint64_t ino, sv_file *f, uint64_t size)
{
    (void)fs;
    if (!(ino & VIEW_HINT_FLAG) || (ino & 3) != HF_JSON)
        return -EROFS;
    if (f && f->kind == SV_FILE_HINT_WRITE) {
        pthread_mutex_lock(&f->seq_lock);
        if (size < f->wlen)
            f->wlen = (size_t)size;
        pthread_mutex_unlock(&f->seq_lock);
        return 0;
    }
    /* O_TRUNC of a hint being rewritten: the content is judged on flush. */
    return size == 0 ? 0 : -EPERM;
}

static int accept_hint(sv_fs *fs, sv_hint *h, char *err, size_t errlen);

static void set_error(sv_view *v, const char *msg)
{
    free(v->error);
    size_t n = strlen(msg);
    v->error = malloc(n + 2);
    if (v->error) {
        memcpy(v->error, msg, n);
        v->error[n] = '\n';
        v->error[n + 1] = '\0';
    }
}

/* Judge the document of one handle. Called with the handle's lock held. */
static int judge(sv_fs *fs, sv_file *f)
{
    sv_view *v = f->view;
    struct view_registry *reg = fs->views;
    pthread_mutex_lock(&reg->lock);
    if (v->detached) {
        pthread_mutex_unlock(&reg->lock);
        return -ENOENT; /* removed while being written */
    }
    if (v->state == HINT_ACCEPTED) {
        bool same = v->json_len == f->wlen && memcmp(v->json, f->wbuf, f->wlen) == 0;
        pthread_mutex_unlock(&reg->lock);
        if (!same)
            log_warn("hint %s: rejected a different document (hints are immutable; remove it first)",
                     v->name);
        return same ? 0 : -EEXIST;
    }
    if (v->state == HINT_CHECKING) {
        pthread_mutex_unlock(&reg->lock);
        return -EBUSY; /* another writer's document of this name is being judged */
    }
    v->state = HINT_CHECKING;
    pthread_mutex_unlock(&reg->lock);

    char err[1024];
    sv_hint *h = NULL;
    int r = 0;
    if (f->too_big) {
        snprintf(err, sizeof err, "hint is larger than the limit of %u bytes", HINT_MAX_BYTES);
        r = -EFBIG;
    } else if (!(h = hint_parse(f->wbuf ? f->wbuf : "", f->wlen, err, sizeof err))) {
        r = -EINVAL;
    } else if (accept_hint(fs, h, err, sizeof err) != 0) {
        r = -EINVAL;
    }
    char *json = NULL;
    if (r == 0 && !(json = malloc(f->wlen ? f->wlen : 1))) {
        r = -ENOMEM;
        snprintf(err, sizeof err, "out of memory");
    }
    pthread_mutex_lock(&reg->lock);
    if (v->detached && r == 0) {
        r = -ENOENT;
        snprintf(err, sizeof err, "the hint was removed while it was being checked");
    }
    if (r == 0) {
        memcpy(json, f->wbuf, f->wlen);
        v->json = json;
        json = NULL;
        v->json_len = f->wlen;
        v->hint = h;
        h = NULL;
        int64_t now = (int64_t)time(NULL);
        /* Strictly increasing: a view made again within the same second
         * still gets a new mtime. */
        v->mtime = now > reg->last_mtime ? now : reg->last_mtime + 1;
        reg->last_mtime = v->mtime;
        free(v->error);
        v->error = NULL;
        v->state = HINT_ACCEPTED;
    } else {
        set_error(v, err);
        v->state = HINT_REJECTED;
    }
    pthread_mutex_unlock(&reg->lock);
    free(json);
    hint_free(h);
    if (r != 0)
        log_info("hint %s rejected: %s", v->name, err);
    else
        log_info("hint %s accepted: view .sieve/views/%s", v->name, v->name);
    return r;
}

int views_flush(sv_fs *fs, sv_file *f)
{
    if (f->kind != SV_FILE_HINT_WRITE || !f->view)
        return 0;
    pthread_mutex_lock(&f->seq_lock);
    if (f->written) {
        f->written = false;
        f->verdict = judge(fs, f);
    }
    int r = f->verdict;
    pthread_mutex_unlock(&f->seq_lock);
    return r;
}

int views_unlink(sv_fs *fs, uint64_t parent, const char *name)
{
    if (parent != SV_INO_HINTS)
        return -EROFS;
    hint_file_kind k;
    sv_view *v = find_hint_file(fs, name, &k);
    if (!v)
        return -ENOENT;
    int r = 0;
    if (k == HF_STATS) {
        r = -EPERM;
    } else if (k == HF_ERROR) {
        pthread_mutex_lock(&fs->views->lock);
        if (!v->error)
            r = -ENOENT;
        free(v->error);
        v->error = NULL;
        bool gone = v->state == HINT_REJECTED;
        pthread_mutex_unlock(&fs->views->lock);
        if (gone && r == 0)
            registry_remove(fs->views, v);
    } else {
        pthread_mutex_lock(&fs->views->lock);
        hint_state st = v->state;
        pthread_mutex_unlock(&fs->views->lock);
        if (st == HINT_REJECTED)
            r = -ENOENT;
        else
            registry_remove(fs->views, v); /* open files keep their reference */
    }
    view_unref(v);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Reading a Parquet footer through the plain path                          */

static int load_meta(sv_fs *fs, sv_file *f, pq_file_meta **out, char *err, size_t errlen)
{
    *out = NULL;
    if (f->size < 12) {
        snprintf(err, errlen, "%s: too small to be Parquet", f->key);
        return -1;
    }
    uint64_t tail = f->size < (64u << 10) ? f->size : (64u << 10);
    for (int attempt = 0; attempt < 2; attempt++) {
        uint8_t *buf = malloc((size_t)tail);
        if (!buf) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        ssize_t n = fs_read_real(fs, f, f->size - tail, (size_t)tail, buf);
        if (n != (ssize_t)tail) {
            free(buf);
            snprintf(err, errlen, "%s: cannot read the footer", f->key);
            return -1;
        }
        tc_error terr;
        memset(&terr, 0, sizeof terr);
        uint64_t need = 0;
        tc_status st = pq_file_meta_from_tail(buf, (size_t)tail, f->size, out, &need, &terr);
        free(buf);
        if (st == TC_OK)
            return 0;
        if (st == TC_E_NEED_MORE && attempt == 0 && need > tail && need <= f->size) {
            tail = need;
            continue;
        }
        snprintf(err, errlen, "%s: %s", f->key, terr.msg);
        return -1;
    }
    snprintf(err, errlen, "%s: footer unreadable", f->key);
    return -1;
}

/* Walk a relative path from the root; the plain-path inode of a file, or 0. */
static uint64_t resolve_path(sv_fs *fs, const char *rel, tree_attr *out)
{
    uint64_t ino = TREE_ROOT_INO;
    const char *p = rel;
    char comp[TREE_NAME_MAX + 1];
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || n > TREE_NAME_MAX)
            return 0;
        memcpy(comp, p, n);
        comp[n] = '\0';
        if (tree_lookup(fs->tree, ino, comp, out) != S3_OK)
            return 0;
        ino = out->ino;
        p += n;
        if (*p == '/')
            p++;
        if (*p && !out->is_dir)
            return 0;
    }
    return ino == TREE_ROOT_INO || out->is_dir ? 0 : ino;
}

/* The first *.parquet file outside _delta_log and hidden directories whose
 * inode is not in skip[0..nskip), depth first, looking at no more than
 * `budget` entries. */
static uint64_t find_parquet(sv_fs *fs, uint64_t dir, int depth, size_t *budget, const uint64_t *skip,
                             size_t nskip)
{
    if (depth > 16)
        return 0;
    tree_dir_snapshot snap = {0};
    if (tree_readdir(fs->tree, dir, &snap) != S3_OK)
        return 0;
    uint64_t found = 0;
    for (size_t i = 0; !found && i < snap.n && *budget; i++, (*budget)--) {
        const char *n = snap.entries[i].name;
        size_t len = strlen(n);
        bool skipped = false;
        for (size_t k = 0; k < nskip; k++)
            skipped |= skip[k] == snap.entries[i].ino;
        if (!snap.entries[i].is_dir && len > 8 && strcmp(n + len - 8, ".parquet") == 0 && !skipped)
            found = snap.entries[i].ino;
    }
    for (size_t i = 0; !found && i < snap.n && *budget; i++) {
        const char *n = snap.entries[i].name;
        if (snap.entries[i].is_dir && n[0] != '_' && n[0] != '.')
            found = find_parquet(fs, snap.entries[i].ino, depth + 1, budget, skip, nskip);
    }
    tree_dir_snapshot_free(&snap);
    return found;
}

/* Resolve a hint column name against a schema like the predicate does:
 * exact path, else a unique case-insensitive match. */
static int find_leaf(const pq_file_meta *m, const char *name)
{
    int hit = -1, n = 0;
    for (uint32_t i = 0; i < m->n_leaves; i++)
        if (strcmp(m->leaves[i].path, name) == 0)
            return (int)i;
    for (uint32_t i = 0; i < m->n_leaves; i++)
        if (strcasecmp(m->leaves[i].path, name) == 0) {
            hit = (int)i;
            n++;
        }
    return n == 1 ? hit : n > 1 ? -2 : -1;
}

static int check_against_file(sv_fs *fs, sv_hint *h, uint64_t ino, const hint_file_rows *fr,
                              bool check_schema, char *err, size_t errlen)
{
    sv_file f;
    memset(&f, 0, sizeof f);
    int r = fs_file_bind_object(fs, &f, ino);
    if (r < 0) {
        snprintf(err, errlen, "%s: cannot open (%s)", fr ? fr->path : "table file", strerror(-r));
        return -1;
    }
    pq_file_meta *m = NULL;
    if (load_meta(fs, &f, &m, err, errlen) != 0) {
        free(f.key);
        return fr ? -1 : -2; /* a file named in rows must be readable */
    }
    int rc = 0;
    if (fr && fr->ranges.n && fr->ranges.r[fr->ranges.n - 1].end > (uint64_t)m->num_rows) {
        snprintf(err, errlen, "rows[\"%s\"]: range ends at row %llu but the file has %lld rows", fr->path,
                 (unsigned long long)fr->ranges.r[fr->ranges.n - 1].end, (long long)m->num_rows);
        rc = -1;
    }
    if (rc == 0 && check_schema && h->pred) {
        pred_bound *b = NULL;
        pred_error perr;
        if (pred_bind(h->pred, m, &b, &perr) != PRED_OK) {
            snprintf(err, errlen, "where: %s (schema of %s)", perr.msg, f.key);
            rc = -1;
        }
        pred_bound_free(b);
    }
    for (size_t i = 0; rc == 0 && check_schema && i < h->n_columns; i++) {
        int leaf = find_leaf(m, h->columns[i]);
        if (leaf < 0) {
            snprintf(err, errlen, "columns: %s column \"%s\" (schema of %s)",
                     leaf == -2 ? "ambiguous" : "unknown", h->columns[i], f.key);
            rc = -1;
        }
    }
    pq_file_meta_free(m);
    free(f.key);
    return rc;
}

/* Checks that need the table: every file named in rows exists and has those
 * rows; the predicate and the columns fit the schema of a table file. */
static int accept_hint(sv_fs *fs, sv_hint *h, char *err, size_t errlen)
{
    bool schema_checked = false;
    for (size_t i = 0; i < h->n_files; i++) {
        tree_attr ta;
        uint64_t ino = resolve_path(fs, h->files[i].path, &ta);
        if (!ino) {
            snprintf(err, errlen, "rows: no such file '%s' in the mount", h->files[i].path);
            return -1;
        }
        if (check_against_file(fs, h, ino, &h->files[i], !schema_checked, err, errlen) != 0)
            return -1;
        schema_checked = true;
    }
    if (!schema_checked && (h->pred || h->n_columns)) {
        /* A table file to check the schema against; files that are not
         * readable Parquet are passed over (they are served real anyway). */
        uint64_t tried[8];
        size_t ntried = 0;
        while (ntried < 8) {
            size_t budget = 10000;
            uint64_t ino = find_parquet(fs, TREE_ROOT_INO, 0, &budget, tried, ntried);
            if (!ino)
                break;
            tried[ntried++] = ino;
            int rc = check_against_file(fs, h, ino, NULL, true, err, errlen);
            if (rc == 0)
                return 0;
            if (rc == -1)
                return -1; /* the file is Parquet and the hint does not fit it */
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Preparing a file: footer, selection                                      */

static void vf_real(view_file *vf, const char *what, const char *detail)
{
    snprintf(vf->why_real, sizeof vf->why_real, "%s%s", what, detail);
}

/* Decode one filter column chunk of a row group into per-row values. BYTES
 * values are copied into *arena (pointers fixed up at the end). */
typedef struct {
    pqv *values;
    uint8_t *nulls;
    uint8_t *arena;
    size_t arena_len, arena_cap;
} col_vec;

static void col_vec_free(col_vec *c)
{
    free(c->values);
    free(c->nulls);
    free(c->arena);
}

static int decode_filter_chunk(const pq_file_meta *m, uint32_t rg, uint32_t leaf, const uint8_t *chunk,
                               size_t chunk_len, uint32_t nrows, col_vec *out, char *err, size_t errlen)
{
    const pq_leaf *lf = &m->leaves[leaf];
    pqv_type t;
    pqd_error derr;
    if (pqv_type_from_leaf(lf, &t, &derr) != PQD_OK) {
        snprintf(err, errlen, "column %s: %s", lf->path, derr.msg);
        return -1;
    }
    pq_column_ctx ctx = pq_column_ctx_of(m, rg, leaf);
    pq_page_map pm;
    tc_error terr;
    memset(&terr, 0, sizeof terr);
    if (pq_page_map_from_chunk(&ctx, chunk, chunk_len, &pm, &terr) != TC_OK) {
        snprintf(err, errlen, "column %s: %s", lf->path, terr.msg);
        return -1;
    }
    out->values = calloc(nrows ? nrows : 1, sizeof *out->values);
    out->nulls = calloc(nrows ? nrows : 1, 1);
    pq_decoder *dec = pq_decoder_new(NULL);
    pq_dictionary dict;
    memset(&dict, 0, sizeof dict);
    bool have_dict = false;
    int rc = 0;
    if (!out->values || !out->nulls || !dec) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    pq_column_desc cd = {lf->type, lf->type_length, lf->max_def, lf->max_rep, ctx.chunk->codec};
    uint32_t row = 0;
    for (uint32_t i = 0; rc == 0 && i < pm.n_pages; i++) {
        const pq_page *pg = &pm.pages[i];
        uint64_t rel = pg->offset - pm.chunk_offset;
        pq_page_header h;
        size_t hlen = 0;
        if (pq_page_header_parse(chunk + rel, pg->total_size, &h, &hlen, &terr) != TC_OK) {
            snprintf(err, errlen, "column %s: %s", lf->path, terr.msg);
            rc = -1;
            break;
        }
        const uint8_t *body = chunk + rel + hlen;
        size_t blen = pg->total_size - hlen;
        if (h.type == PQ_PAGE_DICTIONARY) {
            pq_dict_page_info di;
            if (have_dict || pq_dict_page_info_from_header(&h, &di, &derr) != PQD_OK ||
                pq_decode_dictionary(dec, &cd, &di, body, blen, &dict, &derr) != PQD_OK) {
                snprintf(err, errlen, "column %s dictionary: %s", lf->path,
                         have_dict ? "two dictionary pages" : derr.msg);
                rc = -1;
                break;
            }
            have_dict = true;
            continue;
        }
        if (!pg->is_data)
            continue;
        pq_data_page_info info;
        pq_page_values pv;
        if (pq_data_page_info_from_header(&h, &info, &derr) != PQD_OK ||
            pq_decode_data_page(dec, &cd, &info, body, blen, have_dict ? &dict : NULL, &pv, &derr) != PQD_OK) {
            snprintf(err, errlen, "column %s page at %llu: %s", lf->path, (unsigned long long)pg->offset,
                     derr.msg);
            rc = -1;
            break;
        }
        if (pv.num_values > nrows - row) {
            snprintf(err, errlen, "column %s: more values than the row group's %u rows", lf->path, nrows);
            rc = -1;
            break;
        }
        uint32_t k = 0;
        for (uint32_t e = 0; e < pv.num_values; e++, row++) {
            if (pv.def_levels && pv.def_levels[e] < lf->max_def) {
                out->nulls[row] = 1;
                continue;
            }
            pqv val;
            if (pqv_from_page(&t, &pv, k++, &val, &derr) != PQD_OK) {
                snprintf(err, errlen, "column %s: %s", lf->path, derr.msg);
                rc = -1;
                break;
            }
            if (val.kind == PQV_BYTES) {
                size_t need = out->arena_len + val.v.bytes.len;
                if (need > VIEW_MAX_FILTER_BYTES) {
                    snprintf(err, errlen, "column %s: more than %llu bytes of values in a row group",
                             lf->path, (unsigned long long)VIEW_MAX_FILTER_BYTES);
                    rc = -1;
                    break;
                }
                if (need > out->arena_cap) {
                    size_t cap = out->arena_cap ? out->arena_cap : 65536;
                    while (cap < need)
                        cap *= 2;
                    uint8_t *a = realloc(out->arena, cap);
                    if (!a) {
                        snprintf(err, errlen, "out of memory");
                        rc = -1;
                        break;
                    }
                    out->arena = a;
                    out->arena_cap = cap;
                }
                if (val.v.bytes.len)
                    memcpy(out->arena + out->arena_len, val.v.bytes.ptr, val.v.bytes.len);
                val.v.bytes.ptr = (const uint8_t *)(uintptr_t)out->arena_len; /* fixed up below */
                out->arena_len = need;
            }
            out->values[row] = val;
        }
    }
    if (rc == 0 && row != nrows) {
        snprintf(err, errlen, "column %s: %u values for %u rows", lf->path, row, nrows);
        rc = -1;
    }
    if (rc == 0 && t.kind == PQV_BYTES)
        for (uint32_t r = 0; r < nrows; r++)
            if (!out->nulls[r])
                out->values[r].v.bytes.ptr = out->arena + (uintptr_t)out->values[r].v.bytes.ptr;
    if (have_dict)
        pq_dictionary_free(&dict);
    pq_decoder_free(dec);
    pq_page_map_free(&pm);
    return rc;
}

typedef struct {
    const pred_bound *b;
    const pq_row_group *rg;
} stats_ctx;

static bool rg_stats(void *ud, size_t col, pred_col_stats *out)
{
    stats_ctx *c = ud;
    const pq_column_chunk *cc = &c->rg->columns[pred_bound_leaf(c->b, col)];
    if (!cc->has_statistics)
        return false;
    return pred_stats_from_parquet(c->b, col, &cc->statistics, c->rg->num_rows, out);
}

/* Evaluate the predicate on row group g; selected rows appended to *sel
 * (relative to the group). */
static int eval_row_group(sv_fs *fs, sv_file *f, view_file *vf, const pred_bound *b, uint32_t g,
                          row_ranges *sel, char *err, size_t errlen)
{
    const pq_row_group *rg = &vf->meta->row_groups[g];
    if (rg->num_rows < 0 || rg->num_rows > VIEW_MAX_ROWS_PER_GROUP) {
        snprintf(err, errlen, "row group %u has %lld rows (limit %u)", g, (long long)rg->num_rows,
                 VIEW_MAX_ROWS_PER_GROUP);
        return -1;
    }
    uint32_t nrows = (uint32_t)rg->num_rows;
    if (nrows == 0)
        return 0;
    stats_ctx sc = {b, rg};
    if (!pred_may_match(b, rg_stats, &sc))
        return 0; /* statistics prove no row matches */
    size_t ncols = pred_bound_ncols(b);
    col_vec *cols = calloc(ncols, sizeof *cols);
    pred_column_vec *pc = calloc(ncols, sizeof *pc);
    uint8_t *bits = malloc(nrows);
    int rc = (cols && pc && bits) ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; rc == 0 && i < ncols; i++) {
        uint32_t leaf = pred_bound_leaf(b, i);
        uint64_t off, len;
        if (!pq_column_chunk_range(&rg->columns[leaf], &off, &len) || off + len > f->size ||
            len > VIEW_MAX_FILTER_CHUNK) {
            snprintf(err, errlen, "filter column %s: chunk out of range or too large",
                     vf->meta->leaves[leaf].path);
            rc = -1;
            break;
        }
        uint8_t *buf = malloc(len ? (size_t)len : 1);
        if (!buf) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        fs_prefetch_real(fs, f, off, off + len);
        if (fs_read_real(fs, f, off, (size_t)len, buf) != (ssize_t)len) {
            snprintf(err, errlen, "filter column %s: read failed", vf->meta->leaves[leaf].path);
            rc = -1;
        } else {
            rc = decode_filter_chunk(vf->meta, g, leaf, buf, (size_t)len, nrows, &cols[i], err, errlen);
        }
        free(buf);
        pc[i].is_null = cols ? cols[i].nulls : NULL;
        pc[i].values = cols ? cols[i].values : NULL;
    }
    if (rc == 0) {
        pred_error perr;
        if (pred_eval(b, pc, nrows, bits, &perr) != PRED_OK) {
            snprintf(err, errlen, "where: %s", perr.msg);
            rc = -1;
        } else if (!row_ranges_from_bitmap(sel, bits, nrows, 0)) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    for (size_t i = 0; cols && i < ncols; i++)
        col_vec_free(&cols[i]);
    free(cols);
    free(pc);
    free(bits);
    return rc;
}

static int cmp_chunk_start(const void *a, const void *b, void *ud)
{
    const vchunk *c = ud;
    uint64_t x = c[*(const size_t *)a].start, y = c[*(const size_t *)b].start;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Footer, selection per row group, chunk table. On any failure the file is
 * served real (why_real says why). Called with vf->lock not held. */
static void prepare(sv_fs *fs, sv_view *v, sv_file *f, view_file *vf)
{
    char err[512] = "";
    const sv_hint *h = v->hint;
    if (load_meta(fs, f, &vf->meta, err, sizeof err) != 0) {
        vf_real(vf, "footer: ", err);
        return;
    }
    vf->has_meta = true;
    pq_file_meta *m = vf->meta;
    if (m->has_encryption_algorithm) {
        vf_real(vf, "", "encrypted file");
        return;
    }
    vf->total_rows = (uint64_t)(m->num_rows > 0 ? m->num_rows : 0);
    vf->sel = calloc(m->n_row_groups ? m->n_row_groups : 1, sizeof *vf->sel);
    vf->filter_col = calloc(m->n_leaves ? m->n_leaves : 1, sizeof *vf->filter_col);
    vf->want_col = calloc(m->n_leaves ? m->n_leaves : 1, sizeof *vf->want_col);
    vf->n_chunks = (size_t)m->n_row_groups * m->n_leaves;
    vf->chunks = calloc(vf->n_chunks ? vf->n_chunks : 1, sizeof *vf->chunks);
    vf->by_start = calloc(vf->n_chunks ? vf->n_chunks : 1, sizeof *vf->by_start);
    if (!vf->sel || !vf->filter_col || !vf->want_col || !vf->chunks || !vf->by_start) {
        vf_real(vf, "", "out of memory");
        return;
    }
    pred_bound *b = NULL;
    if (h->pred) {
        pred_error perr;
        if (pred_bind(h->pred, m, &b, &perr) != PRED_OK) {
            vf_real(vf, "where does not fit this file: ", perr.msg);
            return;
        }
        for (size_t i = 0; i < pred_bound_ncols(b); i++)
            vf->filter_col[pred_bound_leaf(b, i)] = true;
    }
    for (uint32_t i = 0; i < m->n_leaves; i++)
        vf->want_col[i] = h->n_columns == 0;
    for (size_t i = 0; i < h->n_columns; i++) {
        int leaf = find_leaf(m, h->columns[i]);
        if (leaf >= 0)
            vf->want_col[leaf] = true;
    }
    const hint_file_rows *fr = hint_rows_for(h, vf->relpath);
    uint64_t first = 0;
    int rc = 0;
    for (uint32_t g = 0; rc == 0 && g < m->n_row_groups; g++) {
        int64_t n = m->row_groups[g].num_rows;
        if (n < 0) {
            snprintf(err, sizeof err, "row group %u: negative row count", g);
            rc = -1;
            break;
        }
        row_ranges from_where = {0};
        bool ok = true;
        if (b)
            rc = eval_row_group(fs, f, vf, b, g, &from_where, err, sizeof err);
        else
            ok = row_ranges_append(&from_where, 0, (uint64_t)n);
        if (rc == 0 && ok && fr) {
            row_ranges from_rows = {0};
            ok = row_ranges_slice(&fr->ranges, first, first + (uint64_t)n, &from_rows) &&
                 row_ranges_intersect(&from_where, &from_rows, &vf->sel[g]);
            row_ranges_free(&from_rows);
            row_ranges_free(&from_where);
        } else {
            vf->sel[g] = from_where;
        }
        if (!ok && rc == 0) {
            snprintf(err, sizeof err, "out of memory");
            rc = -1;
        }
        vf->selected_rows += row_ranges_count(&vf->sel[g]);
        first += (uint64_t)n;
    }
    pred_bound_free(b);
    if (rc != 0) {
        vf_real(vf, "selection: ", err);
        return;
    }
    for (uint32_t g = 0; g < m->n_row_groups; g++)
        for (uint32_t c = 0; c < m->n_leaves; c++) {
            size_t i = (size_t)g * m->n_leaves + c;
            vchunk *ch = &vf->chunks[i];
            uint64_t off = 0, len = 0;
            ch->rg = g;
            ch->col = c;
            if (!pq_column_chunk_range(&m->row_groups[g].columns[c], &off, &len) || off + len > f->size) {
                vf_real(vf, "", "a column chunk lies outside the file");
                return;
            }
            ch->start = off;
            ch->end = off + len;
            ch->real = vf->filter_col[c];
            vf->by_start[i] = i;
            /* Nothing to sieve: a column the hint's `columns` leaves out (the
             * reader is not expected to read it; kernel alignment and readahead
             * brush it), or a row group whose every row is selected. Served like
             * the plain path at once, without waiting for a plan. */
            bool every_row = row_ranges_count(&vf->sel[g]) >= (uint64_t)m->row_groups[g].num_rows;
            if (!ch->real && (!vf->want_col[c] || every_row)) {
                ch->real = true;
                ch->all_real = true;
                ch->state = CH_PLANNED;
            }
        }
    qsort_r(vf->by_start, vf->n_chunks, sizeof *vf->by_start, cmp_chunk_start, vf->chunks);
    for (size_t i = 1; i < vf->n_chunks; i++)
        if (vf->chunks[vf->by_start[i]].start < vf->chunks[vf->by_start[i - 1]].end) {
            vf_real(vf, "", "column chunks overlap");
            return;
        }
}

/* ------------------------------------------------------------------------ */
/* Planning chunks: the page plans, fetched in rounds                       */

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    size_t pending;
    bool failed;
} fetch_group;

typedef struct {
    fetch_group *g;
} fetch_req;

static void group_done(void *ud, s3_status st, const char *errmsg)
{
    fetch_group *g = ud;
    pthread_mutex_lock(&g->m);
    if (st != S3_OK) {
        g->failed = true;
        log_warn("view fetch failed: %s", errmsg && *errmsg ? errmsg : s3_status_name(st));
    }
    g->pending--;
    pthread_cond_broadcast(&g->c);
    pthread_mutex_unlock(&g->m);
}

/* Counters of one planning pass, added to the file and the view under the
 * file's lock afterwards (planning runs without it). */
typedef struct {
    uint64_t pages_real, pages_synth, pages_partial, bytes_fetched, requests;
} plan_tally;

typedef struct {
    vchunk *ch;
    uint32_t page;
    pp_bytes *known;
    pp_range *rows;
    uint32_t n_rows;
    pp_result res;
    bool done;
} page_job;

typedef struct {
    uint64_t off, len; /* file range */
    uint8_t *buf;
} fetch_span;

static int cmp_span(const void *a, const void *b)
{
    const fetch_span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

static void finish_page(const view_file *vf, plan_tally *vt, page_job *j)
{
    vpage *vp = &j->ch->pages[j->page];
    if (j->res.outcome == PP_SPARSE) {
        vp->kind = VP_SPARSE;
        vp->pieces = j->res.pieces;
        vp->n_pieces = j->res.n_pieces;
        j->res.pieces = NULL;
        j->res.n_pieces = 0;
        if (j->res.synthesized)
            vt->pages_synth++;
        else
            vt->pages_partial++;
    } else {
        vp->kind = VP_REAL;
        vt->pages_real++;
        vt->bytes_fetched += j->ch->pm.pages[j->page].total_size;
        /* A page whose bytes contradict the file's own metadata is worth
         * telling the operator about; ordinary declines are debug noise. */
        if (j->res.outcome == PP_REAL && (strncmp(j->res.reason, "layout", 6) == 0 ||
                                          strncmp(j->res.reason, "verify", 6) == 0))
            log_info("%s: page at %llu served real: %s", vf->relpath,
                     (unsigned long long)j->ch->pm.pages[j->page].offset, j->res.reason);
        else if (j->res.outcome == PP_REAL)
            log_debug("%s: page at %llu served real (%s)", vf->relpath,
                      (unsigned long long)j->ch->pm.pages[j->page].offset, j->res.reason);
    }
    pp_result_free(&j->res);
}

/* Serve every unfinished page real (a fetch or an allocation failed). */
static void give_up_pending(const view_file *vf, plan_tally *vt, page_job *jobs, size_t njobs)
{
    for (size_t i = 0; i < njobs; i++)
        if (!jobs[i].done) {
            pp_result_free(&jobs[i].res);
            jobs[i].res.outcome = PP_REAL;
            jobs[i].done = true;
            finish_page(vf, vt, &jobs[i]);
        }
}

/* Real bytes gathered for one prefetch: [start, end), empty when equal;
 * parts: started in parallel parts (fs_prefetch_real_parts). */
typedef struct {
    uint64_t start, end;
    bool parts;
} byte_run;

static void run_flush(sv_fs *fs, sv_file *f, byte_run *r)
{
    if (r->end > r->start && r->parts)
        fs_prefetch_real_parts(fs, f, r->start, r->end);
    else if (r->end > r->start)
        fs_prefetch_real(fs, f, r->start, r->end);
    r->start = r->end = 0;
}

/* Extend the run with [a, b), or start a new one past a gap. */
static void run_add(sv_fs *fs, sv_file *f, byte_run *r, uint64_t a, uint64_t b)
{
    if (r->end > r->start && a > r->end)
        run_flush(fs, f, r);
    if (r->end == r->start)
        r->start = r->end = a;
    if (b > r->end)
        r->end = b;
}

/* Real bytes to fetch while the rest is planned: sorted, exact neighbours
 * joined, each started in parallel parts. */
static void prefetch_spans(sv_fs *fs, sv_file *f, fetch_span *spans, size_t n)
{
    if (n == 0)
        return; /* spans may be NULL, which qsort must not get */
    qsort(spans, n, sizeof *spans, cmp_span);
    byte_run run = {0, 0, true};
    for (size_t i = 0; i < n; i++)
        run_add(fs, f, &run, spans[i].off, spans[i].off + spans[i].len);
    run_flush(fs, f, &run);
}

/* Plan the given chunks (claimed by this thread: state CH_PLANNING). early:
 * the reader is expected to read them (columns the hint names), so pages
 * found real before any round are fetched during the rounds, not after. */
static void plan_chunks(sv_fs *fs, sv_file *f, const view_file *vf, vchunk *const *chs, size_t n,
                        bool early, plan_tally *vt)
{
    const pq_file_meta *m = vf->meta;
    page_job *jobs = NULL;
    size_t njobs = 0, capjobs = 0;
    fetch_span *reals = NULL;
    size_t nreals = 0, capreals = 0;
    uint64_t plan_bytes = 0, plan_requests = 0;
    const uint32_t rc = fs->cfg.request_cost;
    const uint32_t gap_merge = rc > VIEW_GAP_MERGE ? rc : VIEW_GAP_MERGE;
    const uint64_t fetch_merge = rc > VIEW_FETCH_MERGE ? rc : VIEW_FETCH_MERGE;
    for (size_t k = 0; k < n; k++) {
        vchunk *ch = chs[k];
        const pq_column_chunk *cc = &m->row_groups[ch->rg].columns[ch->col];
        const pq_leaf *lf = &m->leaves[ch->col];
        const char *why = NULL;
        if (ch->real)
            why = "filter column";
        else if (lf->max_rep > 0 || lf->max_def > 1)
            why = "nested column";
        else if (!cc->has_offset_index || cc->offset_index_length <= 0 ||
                 cc->offset_index_length > (16 << 20) || cc->offset_index_offset < 0 ||
                 (uint64_t)cc->offset_index_offset + (uint64_t)cc->offset_index_length > f->size)
            why = "no offset index";
        if (!why) {
            uint8_t *oib = malloc((size_t)cc->offset_index_length);
            pq_offset_index oi;
            tc_error terr;
            memset(&terr, 0, sizeof terr);
            if (!oib || fs_read_real(fs, f, (uint64_t)cc->offset_index_offset, (size_t)cc->offset_index_length,
                                     oib) != cc->offset_index_length) {
                why = "offset index unreadable";
            } else if (pq_offset_index_parse(oib, (size_t)cc->offset_index_length, &oi, &terr) != TC_OK) {
                why = "offset index malformed";
            } else {
                pq_column_ctx ctx = pq_column_ctx_of(m, ch->rg, ch->col);
                if (pq_page_map_from_offset_index(&ctx, &oi, &ch->pm, &terr) != TC_OK)
                    why = "offset index disagrees with the chunk";
                pq_offset_index_free(&oi);
            }
            free(oib);
        }
        if (!why) {
            ch->pages = calloc(ch->pm.n_pages ? ch->pm.n_pages : 1, sizeof *ch->pages);
            if (!ch->pages)
                why = "out of memory";
        }
        if (why) {
            if (!ch->real && strncmp(why, "offset index ", 13) == 0 && strcmp(why, "no offset index") != 0)
                log_info("%s: chunk rg %u column %s served real: %s", vf->relpath, ch->rg, lf->path, why);
            else if (!ch->real)
                log_debug("%s: chunk rg %u column %s served real (%s)", vf->relpath, ch->rg, lf->path, why);
            pq_page_map_free(&ch->pm);
            ch->real = true;
            vt->bytes_fetched += ch->end - ch->start;
            continue;
        }
        const row_ranges *sel = &vf->sel[ch->rg];
        for (uint32_t p = 0; p < ch->pm.n_pages; p++) {
            const pq_page *pg = &ch->pm.pages[p];
            ch->pages[p].kind = VP_REAL;
            if (!pg->is_data || pg->first_row < 0 || pg->num_rows <= 0) {
                vt->pages_real++;
                vt->bytes_fetched += pg->total_size;
                continue;
            }
            uint64_t a = (uint64_t)pg->first_row, e = a + (uint64_t)pg->num_rows;
            uint64_t cnt = row_ranges_count_in(sel, a, e);
            if (cnt == e - a || !pp_worth_planning(pg->total_size, cnt > 0, rc, VIEW_MIN_SAVING)) {
                vt->pages_real++; /* every row selected, or too small to pay for its requests */
                vt->bytes_fetched += pg->total_size;
                if (early && sel->n > 0) {
                    if (nreals == capreals) {
                        size_t nc = capreals ? capreals * 2 : 64;
                        fetch_span *nr = realloc(reals, nc * sizeof *nr);
                        if (nr) {
                            reals = nr;
                            capreals = nc;
                        }
                    }
                    if (nreals < capreals) /* else fetched when read, as usual */
                        reals[nreals++] = (fetch_span){pg->offset, pg->total_size, NULL};
                }
                continue;
            }
            if (njobs == capjobs) {
                size_t nc = capjobs ? capjobs * 2 : 64;
                page_job *nj = realloc(jobs, nc * sizeof *nj);
                if (!nj) {
                    vt->pages_real++;
                    vt->bytes_fetched += pg->total_size;
                    continue;
                }
                jobs = nj;
                capjobs = nc;
            }
            page_job *j = &jobs[njobs];
            memset(j, 0, sizeof *j);
            j->ch = ch;
            j->page = p;
            j->known = pp_bytes_new(pg->total_size);
            row_ranges pr = {0};
            bool ok = j->known && row_ranges_slice(sel, a, e, &pr);
            if (ok && pr.n) {
                j->rows = malloc(pr.n * sizeof *j->rows);
                ok = j->rows != NULL;
                for (size_t r = 0; ok && r < pr.n; r++)
                    j->rows[r] = (pp_range){(uint32_t)pr.r[r].start, (uint32_t)(pr.r[r].end - pr.r[r].start)};
                j->n_rows = (uint32_t)pr.n;
            }
            row_ranges_free(&pr);
            if (!ok) {
                pp_bytes_free(j->known);
                free(j->rows);
                vt->pages_real++;
                vt->bytes_fetched += pg->total_size;
                continue;
            }
            njobs++;
        }
    }
    prefetch_spans(fs, f, reals, nreals);
    free(reals);
    /* Rounds: ask every unfinished page what it needs, fetch it all at once. */
    for (int round = 0; round <= PP_MAX_ROUNDS + 1; round++) {
        fetch_span *spans = NULL;
        size_t nspans = 0, capspans = 0;
        bool oom = false;
        for (size_t i = 0; i < njobs; i++) {
            page_job *j = &jobs[i];
            if (j->done)
                continue;
            const pq_leaf *lf = &m->leaves[j->ch->col];
            pp_input in = {
                .pm = &j->ch->pm,
                .page = j->page,
                .col = {lf->type, lf->type_length, lf->max_def, lf->max_rep,
                        m->row_groups[j->ch->rg].columns[j->ch->col].codec},
                .rows = j->rows,
                .n_rows = j->n_rows,
                .gap_merge = gap_merge,
                .min_saving = VIEW_MIN_SAVING,
                .request_cost = fs->cfg.request_cost,
            };
            pp_result_free(&j->res);
            pp_plan(&in, j->known, &j->res);
            if (j->res.outcome != PP_NEED || round > PP_MAX_ROUNDS) {
                if (j->res.outcome == PP_NEED) {
                    pp_result_free(&j->res);
                    j->res.outcome = PP_REAL;
                }
                j->done = true;
                finish_page(vf, vt, j);
                continue;
            }
            uint64_t base = j->ch->pm.pages[j->page].offset;
            for (uint32_t r = 0; r < j->res.n_need; r++) {
                if (nspans == capspans) {
                    size_t nc = capspans ? capspans * 2 : 256;
                    fetch_span *ns = realloc(spans, nc * sizeof *ns);
                    if (!ns) {
                        oom = true;
                        break;
                    }
                    spans = ns;
                    capspans = nc;
                }
                spans[nspans++] = (fetch_span){base + j->res.need[r].off, j->res.need[r].len, NULL};
            }
        }
        if (nspans == 0 || oom) {
            free(spans);
            if (oom)
                give_up_pending(vf, vt, jobs, njobs);
            break;
        }
        /* Coalesce neighbouring ranges (across pages) into requests. */
        qsort(spans, nspans, sizeof *spans, cmp_span);
        size_t w = 0;
        for (size_t i = 0; i < nspans; i++) {
            if (w && spans[i].off <= spans[w - 1].off + spans[w - 1].len + fetch_merge &&
                spans[i].off + spans[i].len - spans[w - 1].off <= VIEW_MAX_FETCH) {
                uint64_t end = spans[i].off + spans[i].len;
                if (end > spans[w - 1].off + spans[w - 1].len)
                    spans[w - 1].len = end - spans[w - 1].off;
            } else {
                spans[w++] = spans[i];
            }
        }
        nspans = w;
        if (SV_LOG_DEBUG <= sv_log_threshold) {
            uint64_t round_bytes = 0;
            for (size_t i = 0; i < nspans; i++)
                round_bytes += spans[i].len;
            log_debug("%s: planning round %d: %zu requests, %llu bytes", vf->relpath, round, nspans,
                      (unsigned long long)round_bytes);
        }
        fetch_group g = {.pending = 0, .failed = false};
        pthread_mutex_init(&g.m, NULL);
        pthread_cond_init(&g.c, NULL);
        for (size_t i = 0; i < nspans; i++) {
            spans[i].buf = malloc((size_t)spans[i].len);
            if (!spans[i].buf) {
                g.failed = true;
                break;
            }
            struct iovec iov = {spans[i].buf, (size_t)spans[i].len};
            s3_request_opts opts = {.high_priority = true};
            pthread_mutex_lock(&g.m);
            g.pending++;
            pthread_mutex_unlock(&g.m);
            if (s3_get_async(fs->client, f->key, f->etag, spans[i].off, spans[i].len, &iov, 1, &opts, group_done,
                             &g) != S3_OK) {
                pthread_mutex_lock(&g.m);
                g.pending--;
                g.failed = true;
                pthread_mutex_unlock(&g.m);
                break;
            }
            plan_bytes += spans[i].len;
            plan_requests++;
        }
        pthread_mutex_lock(&g.m);
        while (g.pending)
            pthread_cond_wait(&g.c, &g.m);
        pthread_mutex_unlock(&g.m);
        pthread_mutex_destroy(&g.m);
        pthread_cond_destroy(&g.c);
        /* Hand each page the fetched bytes that fall inside it. */
        for (size_t i = 0; i < njobs && !g.failed; i++) {
            page_job *j = &jobs[i];
            if (j->done)
                continue;
            const pq_page *pg = &j->ch->pm.pages[j->page];
            for (uint32_t r = 0; r < j->res.n_need; r++) {
                uint64_t off = pg->offset + j->res.need[r].off, end = off + j->res.need[r].len;
                /* The span holding it (spans are sorted and disjoint). */
                size_t lo = 0, hi = nspans;
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (spans[mid].off + spans[mid].len <= off)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo < nspans && spans[lo].off <= off && end <= spans[lo].off + spans[lo].len &&
                    spans[lo].buf)
                    pp_bytes_put(j->known, j->res.need[r].off, spans[lo].buf + (off - spans[lo].off),
                                 j->res.need[r].len);
            }
        }
        for (size_t i = 0; i < nspans; i++)
            free(spans[i].buf);
        free(spans);
        if (g.failed) {
            give_up_pending(vf, vt, jobs, njobs);
            break;
        }
    }
    for (size_t i = 0; i < njobs; i++) {
        if (!jobs[i].done) {
            pp_result_free(&jobs[i].res);
            jobs[i].res.outcome = PP_REAL;
            finish_page(vf, vt, &jobs[i]);
        }
        pp_bytes_free(jobs[i].known);
        free(jobs[i].rows);
    }
    free(jobs);
    vt->bytes_fetched += plan_bytes;
    vt->requests += plan_requests;
}

/* Make sure chunk ci is planned (and, with a hint naming columns, all chunks
 * of those columns on the first touch). Called with vf->lock held; may
 * release it while planning. */
static void ensure_planned(sv_fs *fs, sv_view *v, sv_file *f, view_file *vf, size_t ci)
{
    for (;;) {
        vchunk *ch = &vf->chunks[ci];
        if (ch->state == CH_PLANNED)
            return;
        if (ch->state == CH_PLANNING) {
            pthread_cond_wait(&vf->cond, &vf->lock);
            continue;
        }
        vchunk **chs = malloc(vf->n_chunks * sizeof *chs);
        if (!chs) {
            ch->real = true;
            ch->all_real = true;
            ch->state = CH_PLANNED;
            return;
        }
        size_t n = 0;
        chs[n++] = ch;
        ch->state = CH_PLANNING;
        bool named = v->hint->n_columns > 0 && vf->want_col[ch->col];
        if (named && !vf->columns_planned) {
            vf->columns_planned = true;
            for (size_t i = 0; i < vf->n_chunks; i++) {
                vchunk *o = &vf->chunks[i];
                /* Row groups with no selected row are left until a reader
                 * touches them: readers usually skip them by statistics. */
                if (i != ci && o->state == CH_UNPLANNED && vf->want_col[o->col] && !o->real &&
                    vf->sel[o->rg].n > 0) {
                    o->state = CH_PLANNING;
                    chs[n++] = o;
                }
            }
        }
        uint64_t ordinary = 0;
        for (size_t i = 0; i < n; i++) {
            if (!chs[i]->counted) {
                chs[i]->counted = true;
                ordinary += chs[i]->end - chs[i]->start;
            }
        }
        pthread_mutex_unlock(&vf->lock);
        plan_tally t = {0};
        plan_chunks(fs, f, vf, chs, n, named, &t);
        pthread_mutex_lock(&vf->lock);
        vf->pages_real += t.pages_real;
        vf->pages_synth += t.pages_synth;
        vf->pages_partial += t.pages_partial;
        vf->bytes_fetched += t.bytes_fetched;
        vf->requests += t.requests;
        vf->ordinary_bytes += ordinary;
        atomic_fetch_add(&v->pages_real, t.pages_real);
        atomic_fetch_add(&v->pages_synth, t.pages_synth);
        atomic_fetch_add(&v->pages_partial, t.pages_partial);
        atomic_fetch_add(&v->bytes_fetched, t.bytes_fetched);
        atomic_fetch_add(&v->requests, t.requests);
        atomic_fetch_add(&v->ordinary_bytes, ordinary);
        for (size_t i = 0; i < n; i++) {
            vchunk *c = chs[i];
            bool sparse = false;
            for (uint32_t p = 0; !c->real && c->pages && p < c->pm.n_pages && !sparse; p++)
                sparse = c->pages[p].kind == VP_SPARSE;
            c->all_real = !sparse;
            c->state = CH_PLANNED;
        }
        pthread_cond_broadcast(&vf->cond);
        pthread_mutex_unlock(&vf->lock);
        /* Start fetching the real bytes these chunks will need, all at once
         * (into the block cache, only while it has room). */
        for (size_t i = 0; i < n; i++) {
            const vchunk *c = chs[i];
            /* Chunks planned ahead in a row group with no selected row may
             * never be read (readers skip such groups by statistics). */
            if (i > 0 && vf->sel[c->rg].n == 0)
                continue;
            /* Chunks with nothing sparse are read like on the plain path:
             * fetched when the reader really starts them, not when kernel
             * readahead merely brushes them. */
            if (c->all_real)
                continue;
            for (uint32_t p = 0; p < c->pm.n_pages; p++)
                if (c->pages[p].kind == VP_REAL)
                    fs_prefetch_real(fs, f, c->pm.pages[p].offset,
                                     c->pm.pages[p].offset + c->pm.pages[p].total_size);
        }
        pthread_mutex_lock(&vf->lock);
        free(chs);
        return;
    }
}

/* ------------------------------------------------------------------------ */
/* Serving reads                                                            */

static const vchunk *chunk_at(const view_file *vf, uint64_t off, size_t *ci)
{
    size_t lo = 0, hi = vf->n_chunks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vf->chunks[vf->by_start[mid]].end <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < vf->n_chunks && vf->chunks[vf->by_start[lo]].start <= off) {
        *ci = vf->by_start[lo];
        return &vf->chunks[*ci];
    }
    *ci = lo; /* position of the next chunk in by_start */
    return NULL;
}

/* fs_read_real already loops until done; short only at EOF, which inside
 * the object's size means it changed under us. */
static ssize_t read_real_into(sv_fs *fs, sv_file *f, uint64_t off, size_t len, uint8_t *dst)
{
    ssize_t n = fs_read_real(fs, f, off, len, dst);
    return n < 0 ? n : (size_t)n == len ? (ssize_t)len : -EIO;
}

/* Index of the first page of a planned chunk that ends after off. */
static uint32_t first_page_after(const vchunk *ch, uint64_t off)
{
    uint32_t lo = 0, hi = ch->pm.n_pages;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ch->pm.pages[mid].offset + ch->pm.pages[mid].total_size <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The piece of [pos, end) a read serves in one go: the chunk holding pos (set
 * in *ch), or the gap before the next chunk (*ch NULL). Returns its end. */
static uint64_t piece_at(const view_file *vf, uint64_t pos, uint64_t end, const vchunk **ch)
{
    size_t ci;
    *ch = chunk_at(vf, pos, &ci);
    uint64_t stop = *ch ? (*ch)->end : ci < vf->n_chunks ? vf->chunks[vf->by_start[ci]].start : end;
    return stop < end ? stop : end;
}

/* Serve [off, off+len) of one planned chunk. */
static ssize_t serve_chunk(sv_fs *fs, sv_file *f, const vchunk *ch, uint64_t off, size_t len, uint8_t *dst)
{
    if (ch->all_real)
        return read_real_into(fs, f, off, len, dst);
    uint64_t end = off + len;
    uint64_t pos = off;
    for (uint32_t p = first_page_after(ch, off); p < ch->pm.n_pages && pos < end; p++) {
        const pq_page *pg = &ch->pm.pages[p];
        uint64_t pend = pg->offset + pg->total_size;
        if (pg->offset > pos) /* cannot happen: pages tile the chunk */
            return -EIO;
        uint64_t stop = pend < end ? pend : end;
        const vpage *vp = &ch->pages[p];
        if (vp->kind == VP_SPARSE) {
            pp_image_read(vp->pieces, vp->n_pieces, (uint32_t)(pos - pg->offset), (uint32_t)(stop - pos),
                          dst + (pos - off));
        } else {
            ssize_t r = read_real_into(fs, f, pos, (size_t)(stop - pos), dst + (pos - off));
            if (r < 0)
                return r;
        }
        pos = stop;
    }
    return pos == end ? (ssize_t)len : -EIO;
}

/* Start every fetch a read needs before waiting for any, or each piece of
 * the read (a chunk's tail, the next chunk, a real page) would cost a round
 * trip of its own. The chunk the read is about (chunk_prefetch's rule: the
 * kernel aligns reads down into the tail of the chunk before) is fetched whole
 * when it has nothing sparse, as on the plain path; of the rest, only what the
 * read covers: the bytes of gaps and of chunks with nothing sparse, and whole
 * real pages (a page read kernel-read by kernel-read would take a round trip
 * each), neighbours joined into one span (a large read across many chunks
 * would otherwise make a request per chunk). Planned chunks are immutable, so
 * this needs no lock. */
static void start_fetches(sv_fs *fs, sv_file *f, const view_file *vf, uint64_t off, size_t size)
{
    size_t ci;
    const vchunk *probe = chunk_at(vf, off + (size > 4096 ? 4096 : size) - 1, &ci);
    if (probe && probe->all_real)
        fs_chunk_prefetch(fs, f, off, size);
    uint64_t end = off + size;
    byte_run run = {0, 0, false};
    for (uint64_t pos = off; pos < end;) {
        const vchunk *ch;
        uint64_t stop = piece_at(vf, pos, end, &ch);
        if (!ch || ch->all_real) {
            run_add(fs, f, &run, pos, stop);
        } else {
            for (uint32_t p = first_page_after(ch, pos); p < ch->pm.n_pages; p++) {
                const pq_page *pg = &ch->pm.pages[p];
                if (pg->offset >= stop)
                    break;
                if (ch->pages[p].kind == VP_REAL)
                    run_add(fs, f, &run, pg->offset, pg->offset + pg->total_size);
            }
        }
        pos = stop;
    }
    run_flush(fs, f, &run);
}

ssize_t views_read(sv_fs *fs, sv_file *f, uint64_t off, size_t size, uint8_t *buf)
{
    view_file *vf = f->vf;
    sv_view *v = f->view;
    if (off >= f->size || size == 0)
        return 0;
    if (size > f->size - off)
        size = (size_t)(f->size - off);
    bool parquet = fs_is_parquet_name(f->key);
    pthread_mutex_lock(&vf->lock);
    if (vf->state == VF_NEW) {
        if (!parquet) {
            vf->state = VF_REAL;
            vf_real(vf, "", "not a .parquet file");
        } else {
            vf->state = VF_PREPARING;
            pthread_mutex_unlock(&vf->lock);
            prepare(fs, v, f, vf);
            pthread_mutex_lock(&vf->lock);
            vf->state = vf->why_real[0] ? VF_REAL : VF_READY;
            if (vf->state == VF_REAL)
                log_info("view %s: %s served real: %s", v->name, vf->relpath, vf->why_real);
            pthread_cond_broadcast(&vf->cond);
        }
    }
    while (vf->state == VF_PREPARING)
        pthread_cond_wait(&vf->cond, &vf->lock);
    if (vf->state == VF_REAL) {
        pthread_mutex_unlock(&vf->lock);
        return read_real_into(fs, f, off, size, buf);
    }
    /* Plan every chunk the read touches. */
    uint64_t end = off + size;
    size_t ci;
    for (uint64_t pos = off; pos < end;) {
        const vchunk *ch = chunk_at(vf, pos, &ci);
        if (!ch) {
            if (ci >= vf->n_chunks)
                break;
            pos = vf->chunks[vf->by_start[ci]].start;
            continue;
        }
        ensure_planned(fs, v, f, vf, ci);
        pos = vf->chunks[ci].end;
    }
    pthread_mutex_unlock(&vf->lock);
    /* Planned chunks are immutable from here on: serve without the lock. */
    start_fetches(fs, f, vf, off, size);
    for (uint64_t pos = off; pos < end;) {
        const vchunk *ch;
        uint64_t stop = piece_at(vf, pos, end, &ch);
        ssize_t r = ch ? serve_chunk(fs, f, ch, pos, (size_t)(stop - pos), buf + (pos - off))
                       : read_real_into(fs, f, pos, (size_t)(stop - pos), buf + (pos - off));
        if (r < 0)
            return r;
        pos = stop;
    }
    return (ssize_t)size;
}

/* ------------------------------------------------------------------------ */
/* Stats                                                                    */

/* Copy s into a JSON string body (quotes and backslashes escaped, control
 * characters dropped), truncated to fit cap. */
static void json_escape(const char *s, char *out, size_t cap)
{
    size_t k = 0;
    for (const char *p = s; *p && k + 3 < cap; p++) {
        if ((unsigned char)*p < 0x20)
            continue;
        if (*p == '"' || *p == '\\')
            out[k++] = '\\';
        out[k++] = *p;
    }
    out[k] = '\0';
}

static size_t render_view_stats(sv_view *v, char **out)
{
    size_t cap = 4096, len = 0;
    bool full = false; /* out of memory: the document is cut short */
    char *s = malloc(cap);
    if (!s) {
        *out = NULL;
        return 0;
    }
#define EMIT(...)                                                                          \
    do {                                                                                   \
        for (;;) {                                                                         \
            int w_ = snprintf(s + len, cap - len, __VA_ARGS__);                            \
            if (w_ >= 0 && (size_t)w_ < cap - len) {                                       \
                len += (size_t)w_;                                                         \
                break;                                                                     \
            }                                                                              \
            char *ns_ = full || cap >= (64u << 20) ? NULL : realloc(s, cap * 2);           \
            if (!ns_) {                                                                    \
                s[len] = '\0';                                                             \
                full = true;                                                               \
                break;                                                                     \
            }                                                                              \
            s = ns_;                                                                       \
            cap *= 2;                                                                      \
        }                                                                                  \
    } while (0)
    EMIT("{\"name\": \"%s\", \"pages_real\": %llu, \"pages_synthesized\": %llu, \"pages_partial\": %llu, "
         "\"bytes_fetched\": %llu, \"ordinary_bytes\": %llu, \"requests\": %llu, \"files\": [",
         v->name, (unsigned long long)atomic_load(&v->pages_real),
         (unsigned long long)atomic_load(&v->pages_synth), (unsigned long long)atomic_load(&v->pages_partial),
         (unsigned long long)atomic_load(&v->bytes_fetched), (unsigned long long)atomic_load(&v->ordinary_bytes),
         (unsigned long long)atomic_load(&v->requests));
    pthread_mutex_lock(&v->lock);
    bool first = true;
    for (view_file *vf = v->files; vf; vf = vf->next) {
        pthread_mutex_lock(&vf->lock);
        char path[1024];
        json_escape(vf->relpath, path, sizeof path);
        const char *state = vf->state == VF_READY ? "view" : vf->state == VF_REAL ? "real" : "pending";
        if (vf->state == VF_NEW || vf->state == VF_PREPARING) {
            /* prepare() is filling the plan without the lock: report nothing yet. */
            EMIT("%s{\"path\": \"%s\", \"state\": \"pending\"}", first ? "" : ", ", path);
            pthread_mutex_unlock(&vf->lock);
            first = false;
            continue;
        }
        EMIT("%s{\"path\": \"%s\", \"state\": \"%s\", \"rows\": %llu, \"selected_rows\": %llu, "
             "\"pages_real\": %llu, \"pages_synthesized\": %llu, \"pages_partial\": %llu, "
             "\"bytes_fetched\": %llu, \"ordinary_bytes\": %llu, \"requests\": %llu",
             first ? "" : ", ", path, state, (unsigned long long)vf->total_rows,
             (unsigned long long)vf->selected_rows, (unsigned long long)vf->pages_real,
             (unsigned long long)vf->pages_synth, (unsigned long long)vf->pages_partial,
             (unsigned long long)vf->bytes_fetched, (unsigned long long)vf->ordinary_bytes,
             (unsigned long long)vf->requests);
        if (vf->state == VF_REAL) {
            char why[600];
            json_escape(vf->why_real, why, sizeof why);
            EMIT(", \"why_real\": \"%s\"", why);
        }
        EMIT("}");
        pthread_mutex_unlock(&vf->lock);
        first = false;
    }
    pthread_mutex_unlock(&v->lock);
    EMIT("]}\n");
#undef EMIT
    *out = s;
    return len;
}
