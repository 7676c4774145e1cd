/* The .sieve/hints and .sieve/views trees: lookup, attributes, listings and
 * opening. A view mirrors the plain tree (its nodes' attributes, with the
 * view's inodes and mtime); its files open as view readers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint_writer.h"
#include "view.h"
#include "view_read.h"
#include "view_registry.h"
#include "view_stats.h"
#include "view_table.h"

static void dir_attr(uint64_t ino, int64_t mtime, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ino;
    out->mode = S_IFDIR | (ino == SV_INO_HINTS ? 0755 : 0555);
    out->nlink = 2;
    out->mtime = mtime;
    out->timeout = 0;
}

/* Takes the registry lock (the caller must not hold it). */
static int hint_file_attr(view_registry *r, sv_view *v, hint_file_kind k, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = view_hint_ino(v->id, k);
    out->nlink = 1;
    out->timeout = 0;
    int rc = 0;
    pthread_mutex_lock(&r->lock);
    out->mtime = v->mtime ? v->mtime : r->env.plain->start_time;
    hint_state state = v->state;
    if (k == HF_JSON) {
        out->mode = S_IFREG | 0644;
        out->size = state == HINT_ACCEPTED ? v->json_len : 0;
        if (state == HINT_REJECTED)
            rc = -ENOENT;
    } else if (k == HF_ERROR) {
        out->mode = S_IFREG | 0444;
        if (v->error)
            out->size = strlen(v->error);
        else
            rc = -ENOENT;
    } else {
        out->mode = S_IFREG | 0444;
        if (state != HINT_ACCEPTED)
            rc = -ENOENT;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc == 0 && k == HF_STATS) {
        size_t len = 0;
        free(view_stats_render(v, &len));
        out->size = len;
    }
    return rc;
}

/* A plain-path node as seen in view v: its own inode and the view's mtime. */
static void tree_attr_in_view(const view_registry *r, const sv_view *v, const tree_attr *ta, sv_attr *out)
{
    plain_attr(r->env.plain, ta, out);
    out->ino = view_ino(v->id, ta->ino);
    out->mtime = v->mtime;
}

/* The plain-path directory a view shows: its table's, or the mount's root. */
static uint64_t view_root(const sv_view *v)
{
    return v->table ? v->table->dir_ino : TREE_ROOT_INO;
}

/* The accepted record an inode inside a view belongs to (a new reference), or NULL. */
static sv_view *view_of(view_registry *r, uint64_t ino)
{
    return view_find_by_id(r, view_id_of(ino));
}

int views_lookup(view_registry *r, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok)
{
    if (parent == SV_INO_CONTROL) {
        if (strcmp(name, "hints") == 0)
            return views_getattr(r, SV_INO_HINTS, out);
        if (strcmp(name, "views") == 0)
            return views_getattr(r, SV_INO_VIEWS, out);
        return -ENOENT;
    }
    if (parent == SV_INO_HINTS) {
        hint_file_kind k;
        sv_view *v = view_find_hint_file(r, name, &k);
        if (!v)
            return -ENOENT;
        int rc = hint_file_attr(r, v, k, out);
        view_unref(v);
        return rc;
    }
    if (parent == SV_INO_VIEWS) {
        sv_view *v = view_find_by_name(r, name);
        if (!v)
            return -ENOENT;
        int rc = -ENOENT;
        pthread_mutex_lock(&r->lock);
        if (v->state == HINT_ACCEPTED) {
            dir_attr(view_ino(v->id, view_root(v)), v->mtime, out);
            /* Cached like the plain tree's directories: removing the hint
             * invalidates the entry (a view made again under the name is a
             * new inode). */
            out->timeout = r->env.plain->cfg.dir_attr_timeout_s;
            rc = 0;
        }
        pthread_mutex_unlock(&r->lock);
        view_unref(v);
        return rc;
    }
    if ((parent & VIEW_HINT_FLAG) || (parent >> VIEW_ID_SHIFT) == 0)
        return -ENOTDIR;
    sv_view *v = view_of(r, parent);
    if (!v)
        return -ENOENT;
    tree_attr ta;
    store_status st = plain_hidden(r->env.plain, parent & VIEW_BASE_MASK, name, tok)
                          ? STORE_ERR_NOT_FOUND
                          : tree_lookup(r->env.plain->tree, parent & VIEW_BASE_MASK, name, &ta, tok);
    if (st == STORE_OK)
        tree_attr_in_view(r, v, &ta, out);
    view_unref(v);
    return plain_tree_errno(st, tok);
}

int views_getattr(view_registry *r, uint64_t ino, sv_attr *out)
{
    if (ino == SV_INO_HINTS || ino == SV_INO_VIEWS) {
        dir_attr(ino, r->env.plain->start_time, out);
        /* Fixed directories: their entries never change. */
        out->timeout = r->env.plain->cfg.dir_attr_timeout_s;
        return 0;
    }
    sv_view *v = view_of(r, ino);
    if (!v)
        return -ENOENT;
    int rc;
    if (ino & VIEW_HINT_FLAG) {
        rc = hint_file_attr(r, v, (hint_file_kind)(ino & 3), out);
    } else {
        tree_attr ta;
        store_status st = tree_getattr(r->env.plain->tree, ino & VIEW_BASE_MASK, &ta);
        if (st == STORE_OK)
            tree_attr_in_view(r, v, &ta, out);
        rc = -store_status_errno(st);
    }
    view_unref(v);
    return rc;
}

/* .sieve/hints or .sieve/views: one entry per record (lock held by the caller). */
static bool list_records(view_registry *r, uint64_t ino, sv_dirents *d)
{
    bool ok = true;
    for (size_t i = 0; ok && i < r->n; i++) {
        sv_view *v = r->recs[i];
        char fname[VIEW_NAME_MAX + 16];
        if (ino == SV_INO_VIEWS) {
            if (v->state == HINT_ACCEPTED)
                ok = sv_dirents_push(d, v->name, view_ino(v->id, view_root(v)), S_IFDIR);
            continue;
        }
        if (v->state != HINT_REJECTED) {
            snprintf(fname, sizeof fname, "%s.json", v->name);
            ok = ok && sv_dirents_push(d, fname, view_hint_ino(v->id, HF_JSON), S_IFREG);
        }
        if (v->error) {
            snprintf(fname, sizeof fname, "%s.error", v->name);
            ok = ok && sv_dirents_push(d, fname, view_hint_ino(v->id, HF_ERROR), S_IFREG);
        }
        if (v->state == HINT_ACCEPTED) {
            snprintf(fname, sizeof fname, "%s.stats", v->name);
            ok = ok && sv_dirents_push(d, fname, view_hint_ino(v->id, HF_STATS), S_IFREG);
        }
    }
    return ok;
}

int views_readdir(view_registry *r, uint64_t ino, sv_dirents *d, const sv_cancel *tok)
{
    if (ino == SV_INO_HINTS || ino == SV_INO_VIEWS) {
        bool ok = sv_dirents_push(d, ".", ino, S_IFDIR) && sv_dirents_push(d, "..", SV_INO_CONTROL, S_IFDIR);
        pthread_mutex_lock(&r->lock);
        ok = ok && list_records(r, ino, d);
        pthread_mutex_unlock(&r->lock);
        return ok ? 0 : -ENOMEM;
    }
    if (ino & VIEW_HINT_FLAG)
        return -ENOTDIR;
    uint32_t id = view_id_of(ino);
    sv_view *v = view_of(r, ino);
    if (!v)
        return -ENOENT;
    uint64_t base = ino & VIEW_BASE_MASK;
    tree_dir_snapshot snap;
    int rc = plain_readdir(r->env.plain, base, &snap, tok);
    if (rc < 0) {
        view_unref(v);
        return rc;
    }
    uint64_t parent = base == view_root(v) ? SV_INO_VIEWS : view_ino(id, tree_parent(r->env.plain->tree, base));
    bool ok = sv_dirents_push(d, ".", ino, S_IFDIR) && sv_dirents_push(d, "..", parent, S_IFDIR);
    for (size_t i = 0; ok && i < snap.n; i++)
        ok = sv_dirents_push(d, snap.entries[i].name, view_ino(id, snap.entries[i].ino),
                             snap.entries[i].is_dir ? S_IFDIR : S_IFREG);
    tree_dir_snapshot_free(&snap);
    view_unref(v);
    return ok ? 0 : -ENOMEM;
}

/* A snapshot of NAME.json, NAME.error or NAME.stats (lock not held). */
static int open_hint_text(view_registry *r, sv_view *v, hint_file_kind k, view_opened *out)
{
    out->kind = VIEW_OPENED_TEXT;
    if (k == HF_STATS) {
        out->text = view_stats_render(v, &out->len);
        return out->text ? 0 : -ENOMEM;
    }
    pthread_mutex_lock(&r->lock);
    if (k == HF_JSON) {
        out->text = malloc(v->json_len + 1);
        out->len = v->state == HINT_ACCEPTED ? v->json_len : 0;
        if (out->text && out->len)
            memcpy(out->text, v->json, out->len);
    } else {
        out->text = strdup(v->error ? v->error : "");
        out->len = out->text ? strlen(out->text) : 0;
    }
    pthread_mutex_unlock(&r->lock);
    return out->text ? 0 : -ENOMEM;
}

int views_open(view_registry *r, uint64_t ino, int flags, view_opened *out, sv_open_flags *of,
               const sv_cancel *tok)
{
    memset(out, 0, sizeof *out);
    if (ino == SV_INO_HINTS || ino == SV_INO_VIEWS)
        return -EISDIR;
    int acc = flags & O_ACCMODE;
    if (!(ino & VIEW_HINT_FLAG) && acc != O_RDONLY)
        return -EROFS;
    sv_view *v = view_of(r, ino);
    if (!v)
        return -ENOENT;
    if (ino & VIEW_HINT_FLAG) {
        hint_file_kind k = (hint_file_kind)(ino & 3);
        of->direct_io = true;
        if (acc == O_RDONLY) {
            int rc = open_hint_text(r, v, k, out);
            view_unref(v);
            return rc;
        }
        if (k != HF_JSON || acc == O_RDWR) {
            view_unref(v);
            return -EACCES;
        }
        /* Writing an existing hint again: allowed, but only the same
         * content is accepted (hints are immutable). */
        pthread_mutex_lock(&r->lock);
        v->writers++;
        pthread_mutex_unlock(&r->lock);
        out->kind = VIEW_OPENED_HINT;
        out->writer = hint_writer_new(r, v); /* takes the reference */
        return out->writer ? 0 : -ENOMEM;
    }
    pthread_mutex_lock(&r->lock);
    bool usable = v->state == HINT_ACCEPTED && v->hint;
    pthread_mutex_unlock(&r->lock);
    if (!usable) {
        view_unref(v);
        return -ENOENT;
    }
    int rc = view_reader_open(r, v, ino & VIEW_BASE_MASK, &out->reader, tok);
    if (rc < 0) {
        view_unref(v);
        return rc;
    }
    out->kind = VIEW_OPENED_FILE;
    /* A file served real since a version changed what its plan means may
     * have synthesized pages in the kernel's cache: dropped at this open. */
    of->keep_cache = !out->reader->demoted;
    return 0;
}
