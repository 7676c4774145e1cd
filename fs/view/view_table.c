#include "view_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta_partition.h"
#include "footer_cache.h"
#include "log.h"

/* The node at path (relative to dir; "" is dir itself), or STORE_ERR_NOT_FOUND. */
static store_status walk(tree *t, uint64_t dir, const char *path, tree_attr *out, const sv_cancel *tok)
{
    memset(out, 0, sizeof *out);
    out->ino = dir;
    out->is_dir = true;
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        const size_t n = slash ? (size_t)(slash - p) : strlen(p);
        char comp[TREE_NAME_MAX + 1];
        if (n == 0 || n > TREE_NAME_MAX || !out->is_dir)
            return STORE_ERR_NOT_FOUND;
        memcpy(comp, p, n);
        comp[n] = '\0';
        store_status st = tree_lookup(t, out->ino, comp, out, tok);
        if (st != STORE_OK)
            return st;
        p += n;
        if (*p == '/')
            p++;
    }
    return STORE_OK;
}

void view_table_free(view_table *t)
{
    if (!t)
        return;
    table_snap_put(t->snap);
    pred_free(t->pred);
    for (size_t i = 0; i < t->n_where_names; i++)
        free(t->where_names[i]);
    free(t->where_names);
    for (size_t i = 0; i < t->n_columns; i++)
        free(t->columns[i]);
    free(t->columns);
    free(t->path);
    free(t);
}

static const char *physical_of(void *ctx, const char *logical)
{
    const delta_field *f = delta_schema_find(ctx, logical);
    return f ? f->physical : NULL;
}

const delta_add *view_table_file(const view_table *t, const char *relpath)
{
    if (!t->snap)
        return NULL;
    const size_t n = strlen(t->path);
    if (n) {
        if (strncmp(relpath, t->path, n) != 0 || relpath[n] != '/')
            return NULL;
        relpath += n + 1;
    }
    return delta_snapshot_find(table_snap_get(t->snap), relpath);
}

bool view_table_constants(const view_table *t, const delta_add *f, pred_constant **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const delta_schema *sc = &table_snap_get(t->snap)->schema;
    size_t count = 0;
    for (size_t i = 0; i < sc->n_fields; i++)
        count += sc->fields[i].partition;
    if (count == 0)
        return true;
    pred_constant *k = calloc(count, sizeof *k);
    if (!k)
        return false;
    for (size_t i = 0; i < sc->n_fields; i++) {
        const delta_field *fd = &sc->fields[i];
        if (!fd->partition)
            continue;
        bool found;
        const char *text = delta_file_partition_value(f, fd->physical, &found);
        if (!delta_partition_constant(fd, text, &k[*n])) {
            free(k);
            *n = 0;
            return false;
        }
        (*n)++;
    }
    *out = k;
    return true;
}

/* The predicate checked against one file of the table: its types fit. */
static int check_against_a_file(const view_env *env, const view_table *t, const sv_hint *h, sv_error *err,
                                const sv_cancel *tok)
{
    const delta_snapshot *s = table_snap_get(t->snap);
    if (!t->pred || s->n_files == 0)
        return 0;
    const delta_add *f = &s->files[0];
    tree_attr ta;
    if (walk(env->plain->tree, t->dir_ino, f->path, &ta, tok) != STORE_OK || ta.is_dir)
        return 0; /* not readable here: each file is judged when read */
    object_ref o;
    if (plain_bind_object(env->plain, ta.ino, &o) < 0)
        return 0;
    const parquet_footer *ft = footer_cache_get(env->plain->footers, &o, tok);
    if (s->n_files > 1) /* readers of the view will open its files: their footers now */
        plain_table_expected(env->plain, t->dir_ino, ft, o.size);
    int rc = 0;
    pred_constant *k = NULL;
    size_t nk = 0;
    pred_expr *by_id = NULL;
    char **cols = NULL;
    size_t ncols = 0;
    if (ft->meta && s->schema.mode == DELTA_MAPPING_ID &&
        !view_table_names_for_file(t, h, ft->meta, &by_id, &cols, &ncols))
        rc = sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
    if (rc == 0 && ft->meta && view_table_constants(t, f, &k, &nk)) {
        pred_bound *b = NULL;
        pred_error perr;
        /* A column the file lacks (added to the table after it was written)
         * is no error of the hint: that file is served real when read. */
        const pred_status st = pred_bind_constants(by_id ? by_id : t->pred, ft->meta, k, nk, &b, &perr);
        if (st != PRED_OK && st != PRED_E_COLUMN)
            rc = sv_fail(err, HINT_E_TABLE, 0, "where: %s (table %s, file %s)", perr.msg,
                         t->path[0] ? t->path : "(mount root)", f->path);
        pred_bound_free(b);
    }
    view_table_free_names(by_id, cols, ncols);
    free(k);
    footer_cache_put(env->plain->footers, ft);
    object_ref_free(&o);
    return rc;
}

static const char *collect_name(void *ctx, const char *name)
{
    view_table *t = ctx;
    for (size_t i = 0; i < t->n_where_names; i++)
        if (strcmp(t->where_names[i], name) == 0)
            return name;
    char **more = realloc(t->where_names, (t->n_where_names + 1) * sizeof *more);
    char *copy = more ? strdup(name) : NULL;
    if (more)
        t->where_names = more;
    if (!copy)
        return NULL;
    t->where_names[t->n_where_names++] = copy;
    return name;
}

/* The logical names the hint's where uses. */
static bool collect_where_names(view_table *t, const sv_hint *h)
{
    pred_expr *e = NULL;
    pred_error perr;
    bool ok = pred_parse(h->where, strlen(h->where), &e, &perr) == PRED_OK &&
              pred_rename_columns(e, collect_name, t, &perr) == PRED_OK;
    pred_free(e);
    return ok;
}

/* Whether schema s binds each of the where's names as the snapshot's does:
 * the same field (physical name, field id), type and role, in the same
 * column mapping mode. A name s does not have is no other binding: a reader
 * of that version cannot filter on it (it may filter the same field under
 * its name then, which selects the same rows). */
static bool binds_as_bound(void *ctx, const delta_schema *s)
{
    const view_table *t = ctx;
    const delta_schema *at = &table_snap_get(t->snap)->schema;
    if (!s || s->mode != at->mode)
        return false;
    for (size_t i = 0; i < t->n_where_names; i++) {
        const delta_field *a = delta_schema_find(at, t->where_names[i]);
        const delta_field *b = delta_schema_find(s, t->where_names[i]);
        if (!b)
            continue;
        if (!a || strcmp(a->physical, b->physical) != 0 || a->field_id != b->field_id ||
            strcmp(a->type, b->type) != 0 || a->partition != b->partition)
            return false;
    }
    return true;
}

bool view_table_file_holds(const view_env *env, view_table *t, const delta_add *f, char *why, size_t why_len,
                           const sv_cancel *tok)
{
    why[0] = '\0';
    if (!t->n_where_names)
        return true; /* nothing a version changes: rows are file rows, deletion vectors are not used */
    table_history *hist = NULL;
    sv_error err = {0};
    if (table_registry_history_now(env->tables, t->dir_ino, &hist, &err, tok) != 0) {
        snprintf(why, why_len, "%s", err.msg);
        return false;
    }
    return table_history_check(hist, f->path, f->partition_values, f->n_partition_values, binds_as_bound, t, why,
                               why_len) == HISTORY_SAFE;
}

int view_table_bind(const view_env *env, const sv_hint *h, view_table **out, sv_error *err, const sv_cancel *tok)
{
    *out = NULL;
    const char *label = h->table[0] ? h->table : "(mount root)";
    tree_attr dir, log;
    store_status st = walk(env->plain->tree, TREE_ROOT_INO, h->table, &dir, tok);
    if (st != STORE_OK || !dir.is_dir)
        return sv_fail(err, HINT_E_TABLE, 0, "table: no directory '%s' in the mount", label);
    view_table *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(h->table))) {
        view_table_free(t);
        return sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
    }
    t->dir_ino = dir.ino;
    const bool delta = tree_lookup(env->plain->tree, dir.ino, "_delta_log", &log, tok) == STORE_OK && log.is_dir;
    int rc = 0;
    if (delta) {
        sv_error terr = {0};
        if (table_registry_snapshot(env->tables, dir.ino, &t->snap, &terr, tok) != 0)
            rc = sv_fail(err, HINT_E_TABLE, 0, "table %s: %s", label, terr.msg);
        else if (table_snap_get(t->snap)->unsupported[0])
            rc = sv_fail(err, HINT_E_TABLE, 0, "table %s: views cannot read it: %s", label,
                         table_snap_get(t->snap)->unsupported);
    }
    const delta_schema *sc = t->snap ? &table_snap_get(t->snap)->schema : NULL;
    if (rc == 0 && h->where) {
        pred_error perr;
        if (pred_parse(h->where, strlen(h->where), &t->pred, &perr) != PRED_OK ||
            (sc && pred_rename_columns(t->pred, physical_of, (void *)sc, &perr) != PRED_OK))
            rc = sv_fail(err, HINT_E_TABLE, 0, "where: %s (schema of table %s, version %lld)", perr.msg, label,
                         (long long)(t->snap ? table_snap_get(t->snap)->version : -1));
    }
    if (rc == 0 && h->n_columns && !(t->columns = calloc(h->n_columns, sizeof *t->columns)))
        rc = sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; rc == 0 && i < h->n_columns; i++) {
        const char *phys = sc ? physical_of((void *)sc, h->columns[i]) : h->columns[i];
        if (!phys)
            rc = sv_fail(err, HINT_E_TABLE, 0, "columns: unknown column \"%s\" (schema of table %s)", h->columns[i],
                         label);
        else if (!(t->columns[i] = strdup(phys)))
            rc = sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
        else
            t->n_columns++;
    }
    if (rc == 0 && t->snap)
        rc = check_against_a_file(env, t, h, err, tok);
    if (rc == 0 && t->snap && !t->pred && table_snap_get(t->snap)->n_files > 1)
        plain_table_expected(env->plain, t->dir_ino, NULL, 0); /* no footer read to accept it: learned ahead */
    if (rc == 0 && t->snap && h->where && !collect_where_names(t, h))
        rc = sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
    if (rc == 0 && t->n_where_names) {
        /* Walked now, so that the first read does not wait for it; a failure
         * here is retried by each open (files are served real meanwhile). */
        sv_error herr = {0};
        table_history *hist;
        if (table_registry_history(env->tables, t->dir_ino, &hist, &herr, tok) != 0)
            log_info("table %s: %s", label, herr.msg);
    }
    if (rc) {
        view_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}


/* The child of schema element parent whose field_id is id, or UINT32_MAX. */
static uint32_t child_with_id(const pq_file_meta *m, uint32_t parent, int64_t id)
{
    uint32_t c = parent + 1;
    for (int32_t k = 0; k < m->schema[parent].num_children && c < m->n_schema; k++) {
        if (m->schema[c].has_field_id && m->schema[c].field_id == id)
            return c;
        c = pq_schema_subtree_end(m, c);
    }
    return UINT32_MAX;
}

typedef struct {
    const delta_schema *sc;
    const pq_file_meta *m;
    char buf[4096];
} id_namer;

/* The field's path in the file by field ids, else its physical name. */
static const char *name_in_file(void *ctx, const char *logical)
{
    id_namer *n = ctx;
    const delta_field *f = delta_schema_find(n->sc, logical);
    if (!f)
        return NULL;
    uint32_t chain[DELTA_SCHEMA_MAX_DEPTH];
    size_t depth = 0;
    for (const delta_field *g = f; g && depth < DELTA_SCHEMA_MAX_DEPTH;
         g = g->parent == UINT32_MAX ? NULL : &n->sc->fields[g->parent])
        chain[depth++] = (uint32_t)(g - n->sc->fields);
    uint32_t at = 0;
    size_t len = 0;
    for (size_t k = depth; k-- > 0;) {
        const delta_field *g = &n->sc->fields[chain[k]];
        at = g->field_id >= 0 ? child_with_id(n->m, at, g->field_id) : UINT32_MAX;
        if (at == UINT32_MAX)
            return f->physical;
        const pq_schema_element *e = &n->m->schema[at];
        if (len + e->name_len + 2 > sizeof n->buf)
            return f->physical;
        if (len)
            n->buf[len++] = '.';
        memcpy(n->buf + len, e->name, e->name_len);
        len += e->name_len;
    }
    n->buf[len] = '\0';
    return n->buf;
}

void view_table_free_names(pred_expr *pred, char **columns, size_t n_columns)
{
    pred_free(pred);
    for (size_t i = 0; i < n_columns; i++)
        free(columns[i]);
    free(columns);
}

bool view_table_names_for_file(const view_table *t, const sv_hint *h, const pq_file_meta *m, pred_expr **pred,
                               char ***columns, size_t *n_columns)
{
    *pred = NULL;
    *columns = NULL;
    *n_columns = 0;
    id_namer n = {.sc = &table_snap_get(t->snap)->schema, .m = m};
    pred_error perr;
    if (h->where && (pred_parse(h->where, strlen(h->where), pred, &perr) != PRED_OK ||
                     pred_rename_columns(*pred, name_in_file, &n, &perr) != PRED_OK)) {
        pred_free(*pred);
        *pred = NULL;
        return false;
    }
    if (h->n_columns && !(*columns = calloc(h->n_columns, sizeof **columns))) {
        view_table_free_names(*pred, NULL, 0);
        *pred = NULL;
        return false;
    }
    for (size_t i = 0; i < h->n_columns; i++) {
        const char *name = name_in_file(&n, h->columns[i]);
        if (!name)
            continue; /* checked when the hint was accepted */
        char *copy = strdup(name);
        if (!copy) {
            view_table_free_names(*pred, *columns, *n_columns);
            *pred = NULL;
            *columns = NULL;
            *n_columns = 0;
            return false;
        }
        (*columns)[(*n_columns)++] = copy;
    }
    return true;
}
