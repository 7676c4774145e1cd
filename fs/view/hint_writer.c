#include "hint_writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hint_accept.h"
#include "view_table.h"
#include "log.h"
#include "sv_grow.h"

/* The record's writer count drops with each writer; a name created but never
 * given a document disappears with its last writer. */
static void writer_gone(view_registry *r, sv_view *v)
{
    pthread_mutex_lock(&r->lock);
    bool abandoned = --v->writers == 0 && v->state == HINT_WRITING && !v->detached;
    pthread_mutex_unlock(&r->lock);
    if (abandoned)
        view_registry_remove(r, v);
    view_unref(v);
}

hint_writer *hint_writer_new(view_registry *r, sv_view *v)
{
    hint_writer *w = calloc(1, sizeof *w);
    if (!w) {
        writer_gone(r, v);
        return NULL;
    }
    w->view = v;
    pthread_mutex_init(&w->lock, NULL);
    return w;
}

int views_create_hint(view_registry *r, uint64_t parent, const char *name, hint_writer **out, sv_attr *attr)
{
    *out = NULL;
    if (parent != SV_INO_HINTS)
        return -EROFS;
    char hname[VIEW_NAME_MAX + 1];
    hint_file_kind k;
    if (!view_parse_hint_filename(name, hname, sizeof hname, &k) || k != HF_JSON)
        return -EINVAL; /* only NAME.json can be written */
    int err = 0;
    sv_view *v = view_open_for_writing(r, hname, &err);
    if (!v)
        return err;
    hint_writer *w = hint_writer_new(r, v);
    if (!w)
        return -ENOMEM;
    int rc = views_getattr(r, view_hint_ino(v->id, HF_JSON), attr);
    if (rc < 0) {
        /* The attributes of a name being written always exist. */
        memset(attr, 0, sizeof *attr);
        attr->ino = view_hint_ino(v->id, HF_JSON);
        attr->mode = S_IFREG | 0644;
        attr->nlink = 1;
    }
    *out = w;
    return 0;
}

ssize_t hint_writer_write(hint_writer *w, uint64_t off, const char *buf, size_t size)
{
    pthread_mutex_lock(&w->lock);
    ssize_t rc = (ssize_t)size;
    if (off > HINT_MAX_BYTES || size > HINT_MAX_BYTES - off) {
        w->too_big = true; /* reported by flush, so NAME.error names the limit */
        w->written = true;
        rc = -EFBIG;
    } else if (!sv_grow((void **)&w->buf, &w->cap, (size_t)off + size, 1, 4096, HINT_MAX_BYTES)) {
        rc = -ENOMEM;
    } else {
        size_t end = (size_t)off + size;
        if (off > w->len)
            memset(w->buf + w->len, ' ', (size_t)off - w->len);
        memcpy(w->buf + off, buf, size);
        if (end > w->len)
            w->len = end;
        w->written = true;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int views_truncate(view_registry *r, uint64_t ino, hint_writer *w, uint64_t size)
{
    (void)r;
    if (!(ino & VIEW_HINT_FLAG) || (ino & 3) != HF_JSON)
        return -EROFS;
    if (w) {
        pthread_mutex_lock(&w->lock);
        if (size < w->len)
            w->len = (size_t)size;
        pthread_mutex_unlock(&w->lock);
        return 0;
    }
    /* Not through an open writer (truncate(1)): a hint is immutable once
     * judged, and O_TRUNC comes with the open (FUSE_CAP_ATOMIC_O_TRUNC). */
    return -EPERM;
}

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

/* Judge the document of one writer. Called with the writer's lock held. */
static int judge(view_registry *reg, hint_writer *w)
{
    sv_view *v = w->view;
    pthread_mutex_lock(&reg->lock);
    if (v->detached) {
        pthread_mutex_unlock(&reg->lock);
        return -ENOENT; /* removed while being written */
    }
    if (v->state == HINT_ACCEPTED) {
        bool same = v->json_len == w->len && memcmp(v->json, w->buf, w->len) == 0;
        pthread_mutex_unlock(&reg->lock);
        if (!same)
            log_warn("hint %s: rejected a different document (hints are immutable; remove it first)", v->name);
        return same ? 0 : -EEXIST;
    }
    if (v->state == HINT_CHECKING) {
        pthread_mutex_unlock(&reg->lock);
        return -EBUSY; /* another writer's document of this name is being judged */
    }
    v->state = HINT_CHECKING;
    pthread_mutex_unlock(&reg->lock);

    sv_error err = {0};
    sv_hint *h = NULL;
    struct view_table *table = NULL;
    int r = 0;
    if (w->too_big) {
        sv_fail(&err, HINT_E_LIMIT, 0, "hint is larger than the limit of %u bytes", HINT_MAX_BYTES);
        r = -EFBIG;
    } else if (!(h = hint_parse(w->buf ? w->buf : "", w->len, &err))) {
        r = -EINVAL;
    } else if (hint_accept(&reg->env, h, &table, &err) != 0) {
        r = -EINVAL;
    }
    char *json = NULL;
    if (r == 0 && !(json = malloc(w->len ? w->len : 1))) {
        r = -ENOMEM;
        sv_fail(&err, HINT_E_NOMEM, 0, "out of memory");
    }
    pthread_mutex_lock(&reg->lock);
    if (v->detached && r == 0) {
        r = -ENOENT;
        sv_fail(&err, HINT_E_INVALID, 0, "the hint was removed while it was being checked");
    }
    if (r == 0) {
        memcpy(json, w->buf, w->len);
        v->json = json;
        json = NULL;
        v->json_len = w->len;
        v->hint = h;
        h = NULL;
        v->table = table;
        table = NULL;
        int64_t now = (int64_t)time(NULL);
        /* Strictly increasing: a view made again within the same second
         * still gets a new mtime. */
        v->mtime = now > reg->last_mtime ? now : reg->last_mtime + 1;
        reg->last_mtime = v->mtime;
        free(v->error);
        v->error = NULL;
        v->state = HINT_ACCEPTED;
    } else {
        set_error(v, err.msg);
        v->state = HINT_REJECTED;
    }
    pthread_mutex_unlock(&reg->lock);
    free(json);
    hint_free(h);
    view_table_free(table);
    if (r != 0)
        log_info("hint %s rejected: %s", v->name, err.msg);
    else
        log_info("hint %s accepted: view .sieve/views/%s", v->name, v->name);
    return r;
}

int hint_writer_flush(view_registry *r, hint_writer *w)
{
    pthread_mutex_lock(&w->lock);
    /* A name created and closed without a document is judged too: an empty
     * hint is refused, with NAME.error saying so. */
    pthread_mutex_lock(&r->lock);
    const bool never_judged = w->view->state == HINT_WRITING;
    pthread_mutex_unlock(&r->lock);
    if (w->written || never_judged) {
        w->written = false;
        w->verdict = judge(r, w);
    }
    int rc = w->verdict;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void hint_writer_close(view_registry *r, hint_writer *w, bool unmounting)
{
    if (!w)
        return;
    /* At unmount the store is gone: no verdicts then. */
    if (!unmounting)
        (void)hint_writer_flush(r, w);
    writer_gone(r, w->view);
    pthread_mutex_destroy(&w->lock);
    free(w->buf);
    free(w);
}

int views_unlink(view_registry *r, uint64_t parent, const char *name, sv_stale_entry *stale)
{
    stale->parent = 0;
    if (parent != SV_INO_HINTS)
        return -EROFS;
    hint_file_kind k;
    sv_view *v = view_find_hint_file(r, name, &k);
    if (!v)
        return -ENOENT;
    int rc = 0;
    if (k == HF_STATS) {
        rc = -EPERM;
    } else if (k == HF_ERROR) {
        pthread_mutex_lock(&r->lock);
        if (!v->error)
            rc = -ENOENT;
        free(v->error);
        v->error = NULL;
        bool gone = v->state == HINT_REJECTED;
        pthread_mutex_unlock(&r->lock);
        if (gone && rc == 0)
            view_registry_remove(r, v);
    } else {
        pthread_mutex_lock(&r->lock);
        hint_state st = v->state;
        pthread_mutex_unlock(&r->lock);
        if (st == HINT_REJECTED) {
            rc = -ENOENT;
        } else {
            view_registry_remove(r, v); /* open files keep their reference */
            if (st == HINT_ACCEPTED) {
                stale->parent = SV_INO_VIEWS;
                snprintf(stale->name, sizeof stale->name, "%s", v->name);
            }
        }
    }
    view_unref(v);
    return rc;
}
