#include "table_registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct table_snap {
    atomic_int refs;
    delta_snapshot *s;
};

const delta_snapshot *table_snap_get(const table_snap *t)
{
    return t->s;
}

void table_snap_put(table_snap *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) {
        delta_snapshot_free(t->s);
        free(t);
    }
}

typedef struct {
    uint64_t dir_ino;
    char *path;
    /* under the registry lock */
    table_snap *snap;    /* the registry's reference; NULL until loaded */
    bool loading;        /* a load is under way: others wait for it */
    table_history *hist; /* made on first use, freed with the registry (its own lock) */
    bool hist_refreshing; /* a background thread brings hist up to a fresh listing */
} table_entry;

struct table_registry {
    plain_fs *p;
    table_version_spec spec;
    bool background;
    pthread_mutex_t lock;    /* guards the fields below and every entry's snap and loading */
    pthread_cond_t loaded;   /* signalled when a load ends */
    table_entry *tables;
    size_t n, cap;
    int background_loads;    /* threads still running */
    bool closing;
};

char *table_relative_path(plain_fs *p, uint64_t dir_ino)
{
    char *key = tree_key(p->tree, dir_ino);
    if (!key)
        return NULL;
    const size_t plen = strlen(p->cfg.prefix);
    const char *rel = strncmp(key, p->cfg.prefix, plen) == 0 ? key + plen : key;
    char *out = strdup(rel);
    free(key);
    if (out) {
        size_t n = strlen(out);
        if (n && out[n - 1] == '/')
            out[n - 1] = '\0';
    }
    return out;
}

table_registry *table_registry_create(plain_fs *p, const table_version_spec *spec, bool background)
{
    table_registry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->p = p;
    if (spec)
        r->spec = *spec;
    r->background = background;
    pthread_mutex_init(&r->lock, NULL);
    sv_cond_init(&r->loaded);
    return r;
}

void table_registry_destroy(table_registry *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->closing = true;
    while (r->background_loads > 0)
        pthread_cond_wait(&r->loaded, &r->lock);
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < r->n; i++) {
        table_snap_put(r->tables[i].snap);
        table_history_free(r->tables[i].hist);
        free(r->tables[i].path);
    }
    free(r->tables);
    pthread_cond_destroy(&r->loaded);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* The entry of dir_ino, added when new (NULL when full or out of memory).
 * Called with the lock held. */
static table_entry *entry_of(table_registry *r, uint64_t dir_ino, char *path, bool *added)
{
    *added = false;
    for (size_t i = 0; i < r->n; i++)
        if (r->tables[i].dir_ino == dir_ino)
            return &r->tables[i];
    if (!path || r->n >= TABLE_MAX_TABLES)
        return NULL;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        table_entry *t = realloc(r->tables, cap * sizeof *t);
        if (!t)
            return NULL;
        r->tables = t;
        r->cap = cap;
    }
    table_entry *e = &r->tables[r->n++];
    memset(e, 0, sizeof *e);
    e->dir_ino = dir_ino;
    e->path = path;
    *added = true;
    return e;
}

static bool known(table_registry *r, uint64_t dir_ino)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->tables[i].dir_ino == dir_ino)
            return true;
    return false;
}

/* A background job: load the table's snapshot, or bring its history up to
 * a fresh listing. The starter counts it in background_loads (and sets the
 * entry's hist_refreshing for a history job) under the lock. */
typedef struct {
    table_registry *r;
    uint64_t dir_ino;
    bool history;
} load_job;

/* A job ended (or never started): its count and flag undone. Lock held. */
static void job_done_locked(table_registry *r, const load_job *j)
{
    bool added;
    table_entry *e = j->history ? entry_of(r, j->dir_ino, NULL, &added) : NULL;
    if (e)
        e->hist_refreshing = false;
    r->background_loads--;
    pthread_cond_broadcast(&r->loaded);
}

static void *background_job(void *arg)
{
    load_job *j = arg;
    table_registry *r = j->r;
    sv_cancel tok;
    object_io_cancel_init(r->p->io, &tok);
    sv_error err = {0};
    if (j->history) {
        table_history *h = NULL;
        if (table_registry_history(r, j->dir_ino, &h, &err, &tok) != 0)
            log_info("table %llu: history: %s", (unsigned long long)j->dir_ino, err.msg);
    } else {
        table_snap *t = NULL;
        if (table_registry_snapshot(r, j->dir_ino, &t, &err, &tok) != 0)
            log_info("table %llu: background load: %s", (unsigned long long)j->dir_ino, err.msg);
        table_snap_put(t);
    }
    pthread_mutex_lock(&r->lock);
    job_done_locked(r, j);
    pthread_mutex_unlock(&r->lock);
    free(j);
    return NULL;
}

/* Run a counted job in a detached thread (undone when no thread starts). */
static void start_job(table_registry *r, uint64_t dir_ino, bool history)
{
    load_job *j = malloc(sizeof *j);
    bool started = false;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (j) {
        *j = (load_job){r, dir_ino, history};
        started = pthread_create(&th, &attr, background_job, j) == 0;
    }
    pthread_attr_destroy(&attr);
    if (!started) {
        const load_job undo = {r, dir_ino, history};
        free(j);
        pthread_mutex_lock(&r->lock);
        job_done_locked(r, &undo);
        pthread_mutex_unlock(&r->lock);
    }
}

void table_registry_saw(table_registry *r, uint64_t dir_ino)
{
    pthread_mutex_lock(&r->lock);
    const bool have = known(r, dir_ino);
    pthread_mutex_unlock(&r->lock);
    if (have)
        return;
    char *path = table_relative_path(r->p, dir_ino); /* no I/O: the tree's own names */
    pthread_mutex_lock(&r->lock);
    bool added = false;
    table_entry *e = entry_of(r, dir_ino, path, &added);
    if (!added)
        free(path);
    bool start = e && added && r->background && !r->closing;
    if (start)
        r->background_loads++;
    pthread_mutex_unlock(&r->lock);
    if (start)
        start_job(r, dir_ino, false);
}

/* The version the mount shows of this table now (lists _delta_log/, cached
 * for its TTL; with stale not NULL, as last listed, *stale telling whether
 * that was past the TTL). */
static int64_t current_version(table_registry *r, uint64_t dir_ino, bool *stale, sv_error *err,
                               const sv_cancel *tok)
{
    table_log_listing l;
    if ((stale ? table_log_list_cached(r->p, dir_ino, &l, stale, err, tok) : table_log_list(r->p, dir_ino, &l, err, tok)) !=
        0)
        return -1;
    int64_t v = table_version_resolve(l.entries, l.n, &r->spec, err);
    table_log_listing_free(&l);
    return v;
}

/* The entry of dir_ino, added when new, with the lock taken (NULL when
 * full or out of memory; the lock is taken either way). */
static table_entry *lock_entry(table_registry *r, uint64_t dir_ino)
{
    char *path = table_relative_path(r->p, dir_ino); /* no I/O, but not under the lock */
    pthread_mutex_lock(&r->lock);
    bool added = false;
    table_entry *e = entry_of(r, dir_ino, path, &added);
    if (!added)
        free(path);
    return e;
}

int table_registry_snapshot(table_registry *r, uint64_t dir_ino, table_snap **out, sv_error *err,
                            const sv_cancel *tok)
{
    *out = NULL;
    const int64_t want = current_version(r, dir_ino, NULL, err, tok);
    if (want < 0)
        return err && err->code ? err->code : TABLE_E_LOG;
    table_entry *e = lock_entry(r, dir_ino);
    if (!e) {
        pthread_mutex_unlock(&r->lock);
        return sv_fail(err, TABLE_E_NOMEM, 0, "more than %u tables, or out of memory", TABLE_MAX_TABLES);
    }
    bool added;
    for (;;) {
        if (e->snap && e->snap->s->version == want) {
            atomic_fetch_add(&e->snap->refs, 1);
            *out = e->snap;
            pthread_mutex_unlock(&r->lock);
            return 0;
        }
        if (!e->loading)
            break;
        /* another thread loads it: wait as long as tok allows */
        int c = sv_cancel_wait(tok, &r->loaded, &r->lock);
        e = entry_of(r, dir_ino, NULL, &added); /* the array may have moved */
        if (c) {
            pthread_mutex_unlock(&r->lock);
            return sv_fail(err, TABLE_E_IO, 0, "waiting for the table's log: %s", strerror(c));
        }
    }
    e->loading = true;
    pthread_mutex_unlock(&r->lock);

    delta_snapshot *s = NULL;
    table_version_spec at = {.kind = DELTA_VERSION_AT, .version = want};
    int rc = table_snapshot_load(r->p, dir_ino, &at, &s, err, tok);
    table_snap *t = NULL;
    if (rc == 0 && !(t = calloc(1, sizeof *t))) {
        delta_snapshot_free(s);
        rc = sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
    }
    if (t) {
        t->s = s;
        atomic_init(&t->refs, 2); /* the registry's and the caller's */
    }
    pthread_mutex_lock(&r->lock);
    e = entry_of(r, dir_ino, NULL, &added);
    e->loading = false;
    if (t) {
        table_snap_put(e->snap);
        e->snap = t;
        *out = t;
        log_debug("table %s: version %lld, %zu files", e->path[0] ? e->path : "(root)", (long long)s->version,
                  s->n_files);
    }
    pthread_cond_broadcast(&r->loaded);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

/* A job that runs table_registry_history on a fresh listing, unless one
 * runs already (or the registry is closing). */
static void refresh_in_background(table_registry *r, uint64_t dir_ino)
{
    pthread_mutex_lock(&r->lock);
    bool added;
    table_entry *e = entry_of(r, dir_ino, NULL, &added);
    const bool start = e && !e->hist_refreshing && r->background && !r->closing;
    if (start) {
        e->hist_refreshing = true;
        r->background_loads++;
    }
    pthread_mutex_unlock(&r->lock);
    if (start)
        start_job(r, dir_ino, true);
}

static int history_to(table_registry *r, uint64_t dir_ino, bool cached, table_history **out, sv_error *err,
                      const sv_cancel *tok)
{
    *out = NULL;
    bool stale = false;
    const int64_t want = current_version(r, dir_ino, cached ? &stale : NULL, err, tok);
    if (want < 0)
        return err && err->code ? err->code : TABLE_E_LOG;
    table_entry *e = lock_entry(r, dir_ino);
    if (e && !e->hist)
        e->hist = table_history_new();
    table_history *h = e ? e->hist : NULL;
    pthread_mutex_unlock(&r->lock);
    if (!h)
        return sv_fail(err, TABLE_E_NOMEM, 0, "more than %u tables, or out of memory", TABLE_MAX_TABLES);
    int rc = table_history_extend(h, r->p, dir_ino, want, err, tok);
    if (rc == 0)
        *out = h;
    if (stale)
        refresh_in_background(r, dir_ino);
    return rc;
}

int table_registry_history(table_registry *r, uint64_t dir_ino, table_history **out, sv_error *err,
                           const sv_cancel *tok)
{
    return history_to(r, dir_ino, false, out, err, tok);
}

int table_registry_history_now(table_registry *r, uint64_t dir_ino, table_history **out, sv_error *err,
                               const sv_cancel *tok)
{
    return history_to(r, dir_ino, true, out, err, tok);
}

int table_registry_list(table_registry *r, table_list *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&r->lock);
    out->dir_inos = calloc(r->n ? r->n : 1, sizeof *out->dir_inos);
    out->paths = calloc(r->n ? r->n : 1, sizeof *out->paths);
    int rc = out->dir_inos && out->paths ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < r->n; i++) {
        out->paths[i] = strdup(r->tables[i].path);
        out->dir_inos[i] = r->tables[i].dir_ino;
        if (!out->paths[i])
            rc = -ENOMEM;
        out->n++;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc)
        table_list_free(out);
    return rc;
}

void table_list_free(table_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    free(l->dir_inos);
    memset(l, 0, sizeof *l);
}
