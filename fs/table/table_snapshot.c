#include "table_snapshot.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_read.h"
#include "log_files.h"

void table_log_listing_free(table_log_listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    free(l->entries);
    free(l->inos);
    memset(l, 0, sizeof *l);
}

static int io_fail(sv_error *err, store_status st, const sv_cancel *tok, const char *what)
{
    int e = plain_tree_errno(st, tok);
    return sv_fail(err, st == STORE_ERR_NOT_FOUND ? TABLE_E_NOT_A_TABLE : TABLE_E_IO, 0, "%s: %s", what,
                   strerror(-e));
}

static int log_list(plain_fs *p, uint64_t table_dir, table_log_listing *out, bool *stale, sv_error *err,
                    const sv_cancel *tok)
{
    memset(out, 0, sizeof *out);
    tree_attr ta;
    store_status st = stale ? tree_lookup_cached(p->tree, table_dir, "_delta_log", &ta, stale, tok)
                            : tree_lookup(p->tree, table_dir, "_delta_log", &ta, tok);
    if (st != STORE_OK || !ta.is_dir)
        return st == STORE_OK ? sv_fail(err, TABLE_E_NOT_A_TABLE, 0, "_delta_log is not a directory")
                              : io_fail(err, st, tok, "_delta_log");
    out->log_dir = ta.ino;
    tree_dir_snapshot snap = {0};
    st = stale ? tree_readdir_cached(p->tree, ta.ino, &snap, stale, tok) : tree_readdir(p->tree, ta.ino, &snap, tok);
    if (st != STORE_OK)
        return io_fail(err, st, tok, "listing _delta_log");
    out->entries = calloc(snap.n ? snap.n : 1, sizeof *out->entries);
    out->inos = calloc(snap.n ? snap.n : 1, sizeof *out->inos);
    out->names = calloc(snap.n ? snap.n : 1, sizeof *out->names);
    int rc = out->entries && out->inos && out->names ? 0 : sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; rc == 0 && i < snap.n; i++) {
        if (snap.entries[i].is_dir || tree_getattr(p->tree, snap.entries[i].ino, &ta) != STORE_OK)
            continue;
        char *name = strdup(snap.entries[i].name);
        if (!name) {
            rc = sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
            break;
        }
        out->names[out->n] = name;
        out->inos[out->n] = snap.entries[i].ino;
        out->entries[out->n] = (delta_log_entry){name, ta.size, ta.mtime * 1000};
        out->n++;
    }
    tree_dir_snapshot_free(&snap);
    if (rc)
        table_log_listing_free(out);
    return rc;
}

int table_log_list(plain_fs *p, uint64_t table_dir, table_log_listing *out, sv_error *err, const sv_cancel *tok)
{
    return log_list(p, table_dir, out, NULL, err, tok);
}

int table_log_list_cached(plain_fs *p, uint64_t table_dir, table_log_listing *out, bool *stale, sv_error *err,
                          const sv_cancel *tok)
{
    *stale = false;
    return log_list(p, table_dir, out, stale, err, tok);
}

int table_log_read(plain_fs *p, uint64_t ino, const char *name, uint8_t **buf, size_t *len, sv_error *err,
                      const sv_cancel *tok)
{
    *buf = NULL;
    *len = 0;
    object_ref o;
    int r = plain_bind_object(p, ino, &o);
    if (r < 0)
        return sv_fail(err, TABLE_E_IO, 0, "%s: %s", name, strerror(-r));
    int rc = 0;
    if (o.size > TABLE_LOG_MAX_FILE) {
        rc = sv_fail(err, TABLE_E_LOG, 0, "%s: %llu bytes (limit %llu)", name, (unsigned long long)o.size,
                     (unsigned long long)TABLE_LOG_MAX_FILE);
    } else if (!(*buf = malloc(o.size ? (size_t)o.size : 1))) {
        rc = sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
    } else {
        if (o.size > (4u << 20))
            object_prefetch_parts(p->io, &o, 0, o.size); /* parallel parts */
        ssize_t n = object_read(p->io, &o, 0, (size_t)o.size, *buf, tok);
        if (n != (ssize_t)o.size)
            rc = sv_fail(err, TABLE_E_IO, 0, "%s: %s", name, n < 0 ? strerror((int)-n) : "short read");
        *len = (size_t)o.size;
    }
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    object_ref_free(&o);
    return rc;
}

void table_log_prefetch(plain_fs *p, const uint64_t *inos, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        object_ref o;
        if (plain_bind_object(p, inos[i], &o) < 0)
            continue;
        if (o.size <= TABLE_LOG_MAX_FILE)
            object_prefetch(p->io, &o, 0, o.size, 0, true);
        object_ref_free(&o);
    }
}

/* Every line of a JSON log file (a commit, a compaction, a V2 checkpoint)
 * into the replay; sidecars found are appended to *sidecars. */
typedef struct {
    delta_replay *replay;
    delta_sidecar *sidecars;
    size_t n_sidecars;
    sv_error *err;
} feed;

static int feed_action(void *ud, delta_action *a)
{
    feed *f = ud;
    if (a->kind == DELTA_ACTION_SIDECAR) {
        delta_sidecar *more = realloc(f->sidecars, (f->n_sidecars + 1) * sizeof *more);
        if (!more) {
            delta_action_free(a);
            return sv_fail(f->err, TABLE_E_NOMEM, 0, "out of memory");
        }
        f->sidecars = more;
        f->sidecars[f->n_sidecars++] = a->sidecar;
        memset(&a->sidecar, 0, sizeof a->sidecar);
        delta_action_free(a);
        return 0;
    }
    return delta_replay_apply(f->replay, a, f->err) ? TABLE_E_LOG : 0;
}

static int feed_json(feed *f, const uint8_t *buf, size_t len, const char *name)
{
    size_t line = 0;
    for (size_t at = 0; at < len; line++) {
        const uint8_t *nl = memchr(buf + at, '\n', len - at);
        const size_t end = nl ? (size_t)(nl - buf) : len;
        delta_action a;
        if (delta_action_parse((const char *)buf + at, end - at, &a, f->err) != 0) {
            sv_error_prefix(f->err, "%s line %zu", name, line + 1);
            return TABLE_E_LOG;
        }
        int rc = feed_action(f, &a);
        if (rc) {
            sv_error_prefix(f->err, "%s line %zu", name, line + 1);
            return rc;
        }
        at = end + 1;
    }
    return 0;
}

/* _last_checkpoint's version and parts; false when absent or unreadable
 * (the listing then decides on its own). */
static bool read_hint(plain_fs *p, const table_log_listing *l, delta_log_hint *hint, const sv_cancel *tok)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->names[i], "_last_checkpoint") != 0)
            continue;
        uint8_t *buf;
        size_t len;
        sv_error e;
        if (l->entries[i].size > (1u << 20) || table_log_read(p, l->inos[i], "_last_checkpoint", &buf, &len, &e, tok))
            return false;
        json_t *doc = json_loadb((const char *)buf, len, 0, NULL);
        free(buf);
        json_t *v = json_object_get(doc, "version"), *parts = json_object_get(doc, "parts");
        bool ok = json_is_integer(v) && json_integer_value(v) >= 0;
        if (ok) {
            hint->version = json_integer_value(v);
            hint->parts = json_is_integer(parts) ? json_integer_value(parts) : 0;
        }
        json_decref(doc);
        return ok;
    }
    return false;
}

static uint64_t ino_of(const table_log_listing *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0)
            return l->inos[i];
    return 0;
}

/* A V2 checkpoint's sidecars, each a Parquet file of adds and removes. */
static int read_sidecars(plain_fs *p, const table_log_listing *l, feed *f, const sv_cancel *tok)
{
    if (f->n_sidecars == 0)
        return 0;
    tree_attr dir;
    store_status st = tree_lookup(p->tree, l->log_dir, "_sidecars", &dir, tok);
    if (st != STORE_OK)
        return io_fail(f->err, st, tok, "_delta_log/_sidecars");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < f->n_sidecars; i++) {
        const char *name = f->sidecars[i].path;
        tree_attr ta;
        if (strchr(name, '/'))
            rc = sv_fail(f->err, TABLE_E_LOG, 0, "sidecar \"%s\": not a file of _delta_log/_sidecars/", name);
        else if ((st = tree_lookup(p->tree, dir.ino, name, &ta, tok)) != STORE_OK)
            rc = io_fail(f->err, st, tok, name);
        uint8_t *buf = NULL;
        size_t len = 0;
        if (rc == 0 && (rc = table_log_read(p, ta.ino, name, &buf, &len, f->err, tok)) == 0 &&
            delta_checkpoint_read(buf, len, feed_action, f, f->err) != 0) {
            sv_error_prefix(f->err, "sidecar %s", name);
            rc = TABLE_E_LOG;
        }
        free(buf);
    }
    return rc;
}

static void prefetch_plan(plain_fs *p, const table_log_listing *l, const delta_log_plan *plan)
{
    const size_t n = plan->n_commits + plan->n_compactions;
    uint64_t *inos = malloc((n ? n : 1) * sizeof *inos);
    if (!inos)
        return;
    for (size_t i = 0; i < plan->n_commits; i++)
        inos[i] = ino_of(l, plan->commits[i].name);
    for (size_t i = 0; i < plan->n_compactions; i++)
        inos[plan->n_commits + i] = ino_of(l, plan->compactions[i].name);
    table_log_prefetch(p, inos, n);
    free(inos);
}

int64_t table_version_resolve(const delta_log_entry *entries, size_t n, const table_version_spec *spec,
                              sv_error *err)
{
    if (spec && spec->kind == DELTA_VERSION_AT)
        return spec->version;
    int64_t v = -1;
    if (spec && spec->kind == DELTA_VERSION_AS_OF) {
        if (delta_log_version_at(entries, n, spec->timestamp_ms, &v, err) != 0)
            return -1;
        return v;
    }
    v = delta_log_latest_version(entries, n);
    if (v < 0)
        sv_fail(err, TABLE_E_NOT_A_TABLE, 0, "_delta_log holds no commit or checkpoint");
    return v;
}

int table_snapshot_load(plain_fs *p, uint64_t table_dir, const table_version_spec *spec, delta_snapshot **out,
                        sv_error *err, const sv_cancel *tok)
{
    *out = NULL;
    table_log_listing l;
    int rc = table_log_list(p, table_dir, &l, err, tok);
    if (rc)
        return rc;
    const int64_t version = table_version_resolve(l.entries, l.n, spec, err);
    if (version < 0) {
        table_log_listing_free(&l);
        return TABLE_E_LOG;
    }
    delta_log_hint hint;
    const bool has_hint = read_hint(p, &l, &hint, tok);
    delta_log_plan plan;
    if (delta_log_plan_build(l.entries, l.n, version, has_hint ? &hint : NULL, &plan, err) != 0) {
        table_log_listing_free(&l);
        return TABLE_E_LOG;
    }
    feed f = {.replay = delta_replay_new(), .err = err};
    rc = f.replay ? 0 : sv_fail(err, TABLE_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; rc == 0 && i < plan.n_checkpoint; i++) {
        const delta_log_plan_file *cp = &plan.checkpoint[i];
        uint8_t *buf = NULL;
        size_t len = 0;
        rc = table_log_read(p, ino_of(&l, cp->name), cp->name, &buf, &len, err, tok);
        const size_t nl = strlen(cp->name);
        const bool json = nl > 5 && strcmp(cp->name + nl - 5, ".json") == 0;
        if (rc == 0 && json)
            rc = feed_json(&f, buf, len, cp->name);
        else if (rc == 0 && delta_checkpoint_read(buf, len, feed_action, &f, err) != 0) {
            sv_error_prefix(err, "%s", cp->name);
            rc = TABLE_E_LOG;
        }
        free(buf);
    }
    if (rc == 0)
        rc = read_sidecars(p, &l, &f, tok);
    /* then commits and compactions in version order, fetched all at once
     * (one round trip, not one each) */
    prefetch_plan(p, &l, &plan);
    size_t ci = 0, ki = 0;
    while (rc == 0 && (ci < plan.n_commits || ki < plan.n_compactions)) {
        const bool commit = ki >= plan.n_compactions ||
                            (ci < plan.n_commits && plan.commits[ci].version < plan.compactions[ki].version);
        const delta_log_plan_file *pf = commit ? &plan.commits[ci++] : &plan.compactions[ki++];
        uint8_t *buf = NULL;
        size_t len = 0;
        if ((rc = table_log_read(p, ino_of(&l, pf->name), pf->name, &buf, &len, err, tok)) == 0)
            rc = feed_json(&f, buf, len, pf->name);
        free(buf);
    }
    int64_t ts = -1; /* the snapshot commit's time, even when a compaction stood in for it */
    for (size_t i = 0; i < l.n; i++) {
        delta_log_file lf;
        if (delta_log_classify(l.names[i], strlen(l.names[i]), &lf) == DELTA_LOG_FILE_COMMIT &&
            lf.version == plan.version)
            ts = l.entries[i].mtime_ms;
    }
    if (rc == 0 && delta_replay_finish(f.replay, plan.version, ts, out, err) != 0)
        rc = TABLE_E_LOG;
    for (size_t i = 0; i < f.n_sidecars; i++)
        delta_sidecar_free(&f.sidecars[i]);
    free(f.sidecars);
    delta_replay_free(f.replay);
    delta_log_plan_free(&plan);
    table_log_listing_free(&l);
    if (rc)
        sv_error_prefix(err, "table log");
    return rc;
}
