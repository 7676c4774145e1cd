/* twalk_r and tdestroy are GNU: the build defines _GNU_SOURCE. */
#include "table_history.h"

#include <pthread.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_files.h"
#include "log_replay.h"
#include "table_snapshot.h"

typedef struct {
    int64_t from_version;
    char *key;            /* mode, partition columns and schema string: equal keys, one epoch */
    delta_schema schema;
    bool schema_ok;       /* schema parsed */
} history_epoch;

typedef struct {
    char *path;           /* the tree's key */
    char *pv;             /* its first add's partition values (partition_key) */
    bool pv_varies;
    bool active;
    char *dv;             /* the deletion vector id of the add that made it active, or NULL */
    uint32_t *epochs;     /* epochs it was active in, ascending */
    uint32_t n_epochs, cap_epochs;
    uint64_t touched;     /* the commit that last touched it (walk step) */
} path_record;

struct table_history {
    pthread_mutex_t lock;   /* guards everything below */
    pthread_cond_t done;    /* an extension ended */
    bool extending;         /* a thread walks the log (without the lock while it reads) */
    bool started;           /* the first version is known */
    int64_t last_version;   /* walked up to (-1: nothing yet) */
    char incomplete[256];   /* "" or why the walk cannot go on */
    history_epoch *epochs;
    size_t n_epochs, cap_epochs;
    void *records;          /* tsearch tree of path_record, by path */
    size_t n_records;
    uint64_t commits_read;
    uint64_t step;          /* counts applied commits (path_record.touched) */
    path_record **touched;  /* records the commit being applied added */
    size_t n_touched, cap_touched;
};

static int cmp_record(const void *a, const void *b)
{
    return strcmp(((const path_record *)a)->path, ((const path_record *)b)->path);
}

static void free_record(void *p)
{
    path_record *r = p;
    free(r->path);
    free(r->pv);
    free(r->dv);
    free(r->epochs);
    free(r);
}

table_history *table_history_new(void)
{
    table_history *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    pthread_mutex_init(&h->lock, NULL);
    sv_cond_init(&h->done);
    h->last_version = -1;
    return h;
}

void table_history_free(table_history *h)
{
    if (!h)
        return;
    tdestroy(h->records, free_record);
    for (size_t i = 0; i < h->n_epochs; i++) {
        free(h->epochs[i].key);
        delta_schema_free(&h->epochs[i].schema);
    }
    free(h->epochs);
    free(h->touched);
    pthread_cond_destroy(&h->done);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

int64_t table_history_last_version(table_history *h)
{
    pthread_mutex_lock(&h->lock);
    int64_t v = h->last_version;
    pthread_mutex_unlock(&h->lock);
    return v;
}

/* ---- keys ---------------------------------------------------------------------------- */

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const delta_kv *)a)->key, ((const delta_kv *)b)->key);
}

/* Partition values in one string, sorted by key, each part length-prefixed
 * (no two maps give the same string); NULL when out of memory. */
static char *partition_key(const delta_kv *pv, size_t n)
{
    delta_kv *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return NULL;
    if (n) {
        memcpy(sorted, pv, n * sizeof *pv);
        qsort(sorted, n, sizeof *sorted, cmp_kv);
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    for (size_t i = 0; f && i < n; i++) {
        fprintf(f, "%zu:%s", strlen(sorted[i].key), sorted[i].key);
        if (sorted[i].value)
            fprintf(f, "%zu:%s", strlen(sorted[i].value), sorted[i].value);
        else
            fputs("-:", f);
    }
    if (f && fclose(f) != 0) {
        free(out);
        out = NULL;
    }
    free(sorted);
    return out;
}

static const char *config_value(const delta_metadata *m, const char *key)
{
    for (size_t i = 0; i < m->n_configuration; i++)
        if (strcmp(m->configuration[i].key, key) == 0)
            return m->configuration[i].value;
    return NULL;
}

/* What makes two metaData actions one epoch: the column mapping mode, the
 * partition columns and the schema string. */
static char *epoch_key(const delta_metadata *m)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    const char *mode = config_value(m, "delta.columnMapping.mode");
    fprintf(f, "%s\x1f", mode ? mode : "none");
    for (size_t i = 0; i < m->n_partition_columns; i++)
        fprintf(f, "%zu:%s", strlen(m->partition_columns[i]), m->partition_columns[i]);
    fprintf(f, "\x1f%s", m->schema_string ? m->schema_string : "");
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---- the walk's state (lock held) --------------------------------------------------- */

static void set_incomplete(table_history *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_incomplete(table_history *h, const char *fmt, ...)
{
    if (h->incomplete[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->incomplete, sizeof h->incomplete, fmt, ap);
    va_end(ap);
}

static bool append_epoch(path_record *r, uint32_t e)
{
    if (r->n_epochs && r->epochs[r->n_epochs - 1] == e)
        return true;
    if (r->n_epochs == r->cap_epochs) {
        uint32_t cap = r->cap_epochs ? 2 * r->cap_epochs : 2;
        uint32_t *more = realloc(r->epochs, cap * sizeof *more);
        if (!more)
            return false;
        r->epochs = more;
        r->cap_epochs = cap;
    }
    r->epochs[r->n_epochs++] = e;
    return true;
}

typedef struct {
    uint32_t epoch;
    bool deactivate; /* instead of appending: a checkpoint replaces the state */
    bool ok;
} walk_ctx;

static void visit_record(const void *node, VISIT which, void *ud)
{
    if (which != postorder && which != leaf)
        return;
    path_record *r = *(path_record *const *)node;
    walk_ctx *w = ud;
    if (w->deactivate)
        r->active = false;
    else if (r->active && !append_epoch(r, w->epoch))
        w->ok = false;
}

/* The epoch of metaData m at version v: the current one when its key is the
 * same, else a new one, which every active file joins. false: out of memory
 * (or too many epochs: then the history is incomplete and true). */
static bool enter_epoch(table_history *h, const delta_metadata *m, int64_t v)
{
    char *key = epoch_key(m);
    if (!key)
        return false;
    if (h->n_epochs && strcmp(h->epochs[h->n_epochs - 1].key, key) == 0) {
        free(key);
        return true;
    }
    if (h->n_epochs >= TABLE_HISTORY_MAX_EPOCHS) {
        free(key);
        set_incomplete(h, "more than %u schema changes", TABLE_HISTORY_MAX_EPOCHS);
        return true;
    }
    if (h->n_epochs == h->cap_epochs) {
        size_t cap = h->cap_epochs ? 2 * h->cap_epochs : 4;
        history_epoch *more = realloc(h->epochs, cap * sizeof *more);
        if (!more) {
            free(key);
            return false;
        }
        h->epochs = more;
        h->cap_epochs = cap;
    }
    history_epoch *e = &h->epochs[h->n_epochs++];
    memset(e, 0, sizeof *e);
    e->from_version = v;
    e->key = key;
    sv_error ignored = {0};
    e->schema_ok = delta_metadata_schema(m, &e->schema, &ignored) == 0;
    walk_ctx w = {.epoch = (uint32_t)(h->n_epochs - 1), .ok = true};
    twalk_r(h->records, visit_record, &w);
    return w.ok;
}

static path_record *find_record(table_history *h, const char *path)
{
    path_record probe = {.path = (char *)path};
    path_record *const *found = tfind(&probe, &h->records, cmp_record);
    return found ? *found : NULL;
}

/* An add of path (partition values pv, deletion vector dv): the file is
 * active, in the current epoch. false: out of memory. */
static bool record_add(table_history *h, const char *path, const delta_kv *pv, size_t n_pv, bool has_dv,
                       const delta_action_dv *dv)
{
    char *key = partition_key(pv, n_pv);
    char *dv_id = has_dv ? dv_unique_id(dv) : NULL;
    if (!key || (has_dv && !dv_id)) {
        free(key);
        free(dv_id);
        return false;
    }
    path_record *r = find_record(h, path);
    if (!r) {
        if (h->n_records >= TABLE_HISTORY_MAX_PATHS) {
            set_incomplete(h, "more than %u files", TABLE_HISTORY_MAX_PATHS);
            free(key);
            free(dv_id);
            return true;
        }
        r = calloc(1, sizeof *r);
        if (!r || !(r->path = strdup(path)) || !tsearch(r, &h->records, cmp_record)) {
            if (r)
                free(r->path);
            free(r);
            free(key);
            free(dv_id);
            return false;
        }
        h->n_records++;
        r->pv = key;
        key = NULL;
    } else if (strcmp(r->pv, key) != 0) {
        r->pv_varies = true;
    }
    free(key);
    free(r->dv);
    r->dv = dv_id;
    r->active = true;
    if (r->touched != h->step) {
        r->touched = h->step;
        if (h->n_touched == h->cap_touched) {
            size_t cap = h->cap_touched ? 2 * h->cap_touched : 64;
            path_record **more = realloc(h->touched, cap * sizeof *more);
            if (!more)
                return false;
            h->touched = more;
            h->cap_touched = cap;
        }
        h->touched[h->n_touched++] = r;
    }
    return true;
}

/* A remove: the file is no longer active when it removes the add that made
 * it so (another deletion vector's remove leaves it active: the safe side). */
static bool record_remove(table_history *h, const char *path, bool has_dv, const delta_action_dv *dv)
{
    path_record *r = find_record(h, path);
    if (!r || !r->active)
        return true;
    char *dv_id = has_dv ? dv_unique_id(dv) : NULL;
    if (has_dv && !dv_id)
        return false;
    if ((!dv_id && !r->dv) || (dv_id && r->dv && strcmp(dv_id, r->dv) == 0))
        r->active = false;
    free(dv_id);
    return true;
}

/* The files touched by the step just applied join the current epoch. */
static bool end_step(table_history *h)
{
    const uint32_t e = (uint32_t)(h->n_epochs ? h->n_epochs - 1 : 0);
    bool ok = true;
    for (size_t i = 0; i < h->n_touched; i++)
        if (h->touched[i]->active && h->n_epochs)
            ok = append_epoch(h->touched[i], e) && ok;
    h->n_touched = 0;
    return ok;
}

/* One commit's lines (version v). */
static int apply_commit(table_history *h, int64_t v, const uint8_t *buf, size_t len, const char *name,
                        sv_error *err)
{
    h->step++;
    delta_metadata meta = {0};
    bool has_meta = false, ok = true;
    size_t line = 0;
    for (size_t at = 0; at < len && ok; line++) {
        const uint8_t *nl = memchr(buf + at, '\n', len - at);
        const size_t end = nl ? (size_t)(nl - buf) : len;
        delta_action a;
        if (delta_action_parse((const char *)buf + at, end - at, &a, err) != 0) {
            delta_metadata_free(&meta);
            sv_error_prefix(err, "%s line %zu", name, line + 1);
            return TABLE_E_LOG;
        }
        if (a.kind == DELTA_ACTION_METADATA) {
            delta_metadata_free(&meta);
            meta = a.metadata;
            memset(&a.metadata, 0, sizeof a.metadata);
            has_meta = true;
        } else if (a.kind == DELTA_ACTION_ADD) {
            ok = record_add(h, a.add.path, a.add.partition_values, a.add.n_partition_values, a.add.has_dv,
                            &a.add.dv);
        } else if (a.kind == DELTA_ACTION_REMOVE) {
            ok = record_remove(h, a.remove.path, a.remove.has_dv, &a.remove.dv);
        }
        delta_action_free(&a);
        at = end + 1;
    }
    if (ok && has_meta)
        ok = enter_epoch(h, &meta, v);
    delta_metadata_free(&meta);
    ok = ok && end_step(h);
    h->last_version = v;
    return ok ? 0 : sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
}

/* A snapshot (a checkpoint the walk starts or resumes from) replaces the state. */
static int apply_snapshot(table_history *h, const delta_snapshot *s, sv_error *err)
{
    h->step++;
    walk_ctx w = {.deactivate = true, .ok = true};
    twalk_r(h->records, visit_record, &w);
    bool ok = enter_epoch(h, &s->metadata, s->version);
    for (size_t i = 0; ok && i < s->n_files; i++) {
        const delta_add *f = &s->files[i];
        ok = record_add(h, f->path, f->partition_values, f->n_partition_values, f->has_dv, &f->dv);
    }
    ok = ok && end_step(h);
    h->last_version = s->version;
    return ok ? 0 : sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
}

/* ---- the walk ------------------------------------------------------------------------- */

typedef struct {
    int64_t version;
    size_t entry; /* index in the listing */
} listed;

static int cmp_listed(const void *a, const void *b)
{
    const int64_t x = ((const listed *)a)->version, y = ((const listed *)b)->version;
    return (x > y) - (x < y);
}

static int cmp_version(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The listing's commits and checkpoint versions, each ascending. */
typedef struct {
    listed *commits;
    size_t n_commits;
    int64_t *checkpoints;
    size_t n_checkpoints;
} log_index;

static void log_index_free(log_index *x)
{
    free(x->commits);
    free(x->checkpoints);
}

static bool log_index_build(const table_log_listing *l, log_index *x)
{
    memset(x, 0, sizeof *x);
    x->commits = malloc((l->n ? l->n : 1) * sizeof *x->commits);
    x->checkpoints = malloc((l->n ? l->n : 1) * sizeof *x->checkpoints);
    if (!x->commits || !x->checkpoints)
        return false;
    for (size_t i = 0; i < l->n; i++) {
        delta_log_file f;
        const delta_log_file_kind k = delta_log_classify(l->names[i], strlen(l->names[i]), &f);
        if (k == DELTA_LOG_FILE_COMMIT)
            x->commits[x->n_commits++] = (listed){f.version, i};
        else if (k == DELTA_LOG_FILE_CHECKPOINT || k == DELTA_LOG_FILE_CHECKPOINT_PART ||
                 k == DELTA_LOG_FILE_CHECKPOINT_V2)
            x->checkpoints[x->n_checkpoints++] = f.version;
    }
    qsort(x->commits, x->n_commits, sizeof *x->commits, cmp_listed);
    qsort(x->checkpoints, x->n_checkpoints, sizeof *x->checkpoints, cmp_version);
    return true;
}

static const listed *commit_at(const log_index *x, int64_t v)
{
    listed key = {v, 0};
    return bsearch(&key, x->commits, x->n_commits, sizeof *x->commits, cmp_listed);
}

/* The oldest complete checkpoint at a version in [from, to] that a reader
 * can start from, or -1. */
static int64_t checkpoint_from(const table_log_listing *l, const log_index *x, int64_t from, int64_t to)
{
    for (size_t i = 0; i < x->n_checkpoints; i++) {
        const int64_t c = x->checkpoints[i];
        if (c < from || c > to || (i && x->checkpoints[i - 1] == c))
            continue;
        delta_log_plan plan;
        sv_error ignored = {0};
        if (delta_log_plan_build(l->entries, l->n, c, NULL, &plan, &ignored) == 0) {
            const bool there = plan.checkpoint_version == c;
            delta_log_plan_free(&plan);
            if (there)
                return c;
        }
    }
    return -1;
}

static int start_at_checkpoint(table_history *h, plain_fs *p, uint64_t dir, int64_t c, sv_error *err,
                               const sv_cancel *tok)
{
    delta_snapshot *s = NULL;
    table_version_spec at = {.kind = DELTA_VERSION_AT, .version = c};
    int rc = table_snapshot_load(p, dir, &at, &s, err, tok);
    if (rc)
        return rc;
    pthread_mutex_lock(&h->lock);
    rc = apply_snapshot(h, s, err);
    h->started = true;
    pthread_mutex_unlock(&h->lock);
    delta_snapshot_free(s);
    return rc;
}

enum { BATCH = 256 }; /* commits fetched at once */

static int walk(table_history *h, plain_fs *p, uint64_t dir, int64_t to, sv_error *err, const sv_cancel *tok)
{
    table_log_listing l;
    int rc = table_log_list(p, dir, &l, err, tok);
    if (rc)
        return rc;
    log_index x;
    if (!log_index_build(&l, &x)) {
        log_index_free(&x);
        table_log_listing_free(&l);
        return sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
    }
    pthread_mutex_lock(&h->lock);
    bool started = h->started;
    int64_t next = h->last_version + 1;
    pthread_mutex_unlock(&h->lock);
    if (!started) {
        if (commit_at(&x, 0)) {
            pthread_mutex_lock(&h->lock);
            h->started = true; /* from the empty table before commit 0 */
            pthread_mutex_unlock(&h->lock);
            next = 0;
        } else {
            const int64_t c = checkpoint_from(&l, &x, 0, to);
            if (c < 0) {
                pthread_mutex_lock(&h->lock);
                set_incomplete(h, "no commit 0 and no checkpoint a reader can start from");
                pthread_mutex_unlock(&h->lock);
            } else if ((rc = start_at_checkpoint(h, p, dir, c, err, tok)) == 0) {
                next = c + 1;
            }
        }
    }
    while (rc == 0 && next <= to) {
        pthread_mutex_lock(&h->lock);
        const bool stop = h->incomplete[0] || !h->started;
        pthread_mutex_unlock(&h->lock);
        if (stop)
            break;
        if (!commit_at(&x, next)) { /* a gap: readers go on from a later checkpoint, if any */
            const int64_t c = checkpoint_from(&l, &x, next, to);
            if (c < 0) {
                pthread_mutex_lock(&h->lock);
                set_incomplete(h, "commit %lld is missing and no later checkpoint bridges the gap", (long long)next);
                pthread_mutex_unlock(&h->lock);
                break;
            }
            if ((rc = start_at_checkpoint(h, p, dir, c, err, tok)) == 0)
                next = c + 1;
            continue;
        }
        /* the run of listed commits from next, fetched together */
        uint64_t inos[BATCH];
        size_t n = 0;
        for (const listed *c; n < BATCH && next + (int64_t)n <= to && (c = commit_at(&x, next + (int64_t)n)); n++)
            inos[n] = l.inos[c->entry];
        pthread_mutex_lock(&h->lock);
        const bool too_many = h->commits_read + n > TABLE_HISTORY_MAX_COMMITS;
        if (too_many)
            set_incomplete(h, "more than %u commits to read", TABLE_HISTORY_MAX_COMMITS);
        pthread_mutex_unlock(&h->lock);
        if (too_many)
            break;
        table_log_prefetch(p, inos, n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const char *name = l.names[commit_at(&x, next)->entry];
            uint8_t *buf = NULL;
            size_t len = 0;
            rc = table_log_read(p, inos[i], name, &buf, &len, err, tok);
            if (rc == 0) {
                pthread_mutex_lock(&h->lock);
                h->commits_read++;
                rc = apply_commit(h, next, buf, len, name, err);
                if (rc == TABLE_E_LOG) { /* readers cannot read past it either */
                    set_incomplete(h, "%s does not parse: %s", name, err->msg);
                    rc = 0;
                    next = to + 1;
                }
                pthread_mutex_unlock(&h->lock);
            }
            free(buf);
            if (next <= to)
                next++;
        }
    }
    log_index_free(&x);
    table_log_listing_free(&l);
    return rc;
}

int table_history_extend(table_history *h, plain_fs *p, uint64_t table_dir, int64_t to, sv_error *err,
                         const sv_cancel *tok)
{
    pthread_mutex_lock(&h->lock);
    for (;;) {
        if ((h->started && h->last_version >= to) || h->incomplete[0]) {
            pthread_mutex_unlock(&h->lock);
            return 0;
        }
        if (!h->extending)
            break;
        int c = sv_cancel_wait(tok, &h->done, &h->lock);
        if (c) {
            pthread_mutex_unlock(&h->lock);
            return sv_fail(err, TABLE_E_IO, 0, "waiting for the table's history: %s", strerror(c));
        }
    }
    h->extending = true;
    pthread_mutex_unlock(&h->lock);
    int rc = walk(h, p, table_dir, to, err, tok);
    pthread_mutex_lock(&h->lock);
    h->extending = false;
    pthread_cond_broadcast(&h->done);
    pthread_mutex_unlock(&h->lock);
    if (rc)
        sv_error_prefix(err, "table history");
    return rc;
}

history_verdict table_history_check(table_history *h, const char *path, const delta_kv *pv, size_t n_pv,
                                    bool (*schema_ok)(void *ctx, const delta_schema *schema), void *ctx,
                                    char *why, size_t why_len)
{
    char scratch[8];
    if (!why) {
        why = scratch;
        why_len = sizeof scratch;
    }
    why[0] = '\0';
    char *key = partition_key(pv, n_pv);
    pthread_mutex_lock(&h->lock);
    history_verdict v = HISTORY_SAFE;
    const path_record *r = NULL;
    if (h->incomplete[0]) {
        v = HISTORY_INCOMPLETE;
        snprintf(why, why_len, "the table's log cannot be followed: %s", h->incomplete);
    } else if (!(r = find_record(h, path))) {
        v = HISTORY_UNKNOWN_FILE;
        snprintf(why, why_len, "not added in the versions walked (up to %lld)", (long long)h->last_version);
    } else if (!key || r->pv_varies || strcmp(key, r->pv) != 0) {
        v = HISTORY_PARTITION_VALUES;
        snprintf(why, why_len, "its partition values differ between versions");
    } else {
        for (uint32_t i = 0; i < r->n_epochs; i++) {
            const history_epoch *e = &h->epochs[r->epochs[i]];
            if (!schema_ok(ctx, e->schema_ok ? &e->schema : NULL)) {
                v = HISTORY_SCHEMA;
                snprintf(why, why_len, "the schema of version %lld binds the hint's columns otherwise",
                         (long long)e->from_version);
                break;
            }
        }
    }
    pthread_mutex_unlock(&h->lock);
    free(key);
    return v;
}
