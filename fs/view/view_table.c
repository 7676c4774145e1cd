#include "view_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta_partition.h"
#include "footer_cache.h"

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
        if (pred_bind_constants(by_id ? by_id : t->pred, ft->meta, k, nk, &b, &perr) != PRED_OK)
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

/* An absolute deletion vector path (a percent-encoded URI, as add.path) as a
 * path relative to the mount: only s3://BUCKET/KEY (or s3a://) of the
 * mounted bucket under its prefix; anything else is not readable here. */
static int mount_path_of_uri(const plain_fs *p, const char *uri, char **out, sv_error *err)
{
    *out = NULL;
    char *dec = NULL;
    if (!uri || delta_path_decode(uri, strlen(uri), &dec, err) != 0)
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: a bad absolute path");
    const char *rest = !strncmp(dec, "s3://", 5) ? dec + 5 : !strncmp(dec, "s3a://", 6) ? dec + 6 : NULL;
    const size_t bl = p->cfg.bucket ? strlen(p->cfg.bucket) : 0, pl = strlen(p->cfg.prefix);
    if (rest && bl && !strncmp(rest, p->cfg.bucket, bl) && rest[bl] == '/' &&
        !strncmp(rest + bl + 1, p->cfg.prefix, pl))
        *out = strdup(rest + bl + 1 + pl);
    int rc = *out ? 0
                  : sv_fail(err, DV_E_UNSUPPORTED, 0, "deletion vector at %.200s: not in the mounted bucket and prefix",
                            dec);
    free(dec);
    return rc;
}

int view_table_deletion_vector(const view_env *env, const view_table *t, const delta_add *f, dv_bitmap **out,
                               sv_error *err, const sv_cancel *tok)
{
    *out = NULL;
    if (f->dv.storage_type == 'i')
        return dv_bitmap_from_inline(&f->dv, out, err);
    char *rel = NULL;
    uint64_t off, len, from = t->dir_ino;
    int rc = 0;
    if (f->dv.storage_type == 'p') {
        rc = mount_path_of_uri(env->plain, dv_absolute_path(&f->dv), &rel, err);
        from = TREE_ROOT_INO;
    } else {
        rc = dv_relative_path(&f->dv, &rel, err);
    }
    if (rc == 0)
        rc = dv_file_range(&f->dv, &off, &len, err);
    tree_attr ta;
    if (rc == 0 && walk(env->plain->tree, from, rel, &ta, tok) != STORE_OK)
        rc = sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector %s of %s: not found", rel, f->path);
    object_ref o = {0};
    if (rc == 0 && plain_bind_object(env->plain, ta.ino, &o) < 0)
        rc = sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector %s: cannot open", rel);
    uint8_t *buf = NULL;
    if (rc == 0 && (off >= o.size || len > o.size - off || !(buf = malloc(len + 1))))
        rc = sv_fail(err, DV_E_CORRUPT, 0, "deletion vector %s: range %llu+%llu outside its %llu bytes, or no memory",
                     rel, (unsigned long long)off, (unsigned long long)len, (unsigned long long)o.size);
    if (rc == 0) {
        /* the file's version byte, then the frame */
        ssize_t n0 = object_read(env->plain->io, &o, 0, 1, buf, tok);
        if (n0 != 1 || (rc = dv_file_check_version(buf[0], err)) != 0) {
            if (rc == 0)
                rc = sv_fail(err, DV_E_CORRUPT, 0, "deletion vector %s: read failed", rel);
        } else if (object_read(env->plain->io, &o, off, (size_t)len, buf, tok) != (ssize_t)len) {
            rc = sv_fail(err, DV_E_CORRUPT, 0, "deletion vector %s: read failed", rel);
        } else {
            rc = dv_bitmap_from_file_bytes(buf, (size_t)len, &f->dv, out, err);
        }
    }
    if (rc)
        sv_error_prefix(err, "table %s", t->path[0] ? t->path : "(mount root)");
    free(buf);
    object_ref_free(&o);
    free(rel);
    return rc;
}
