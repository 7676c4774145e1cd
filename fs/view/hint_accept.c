#include "hint_accept.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column_resolve.h"
#include "footer_cache.h"
#include "plain.h"
#include "predicate.h"
#include "view_table.h"

/* Walk a relative path from the root; the plain-path inode of a file, or 0. */
static uint64_t resolve_path(tree *t, const char *rel, tree_attr *out)
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
        if (tree_lookup(t, ino, comp, out, NULL) != STORE_OK)
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
static uint64_t find_parquet(tree *t, uint64_t dir, int depth, size_t *budget, const uint64_t *skip,
                             size_t nskip)
{
    if (depth > 16)
        return 0;
    tree_dir_snapshot snap = {0};
    if (tree_readdir(t, dir, &snap, NULL) != STORE_OK)
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
            found = find_parquet(t, snap.entries[i].ino, depth + 1, budget, skip, nskip);
    }
    tree_dir_snapshot_free(&snap);
    return found;
}

/* Check h against one file: 0 fits; -1 does not (err set); -2 the file is not
 * readable Parquet (err set; a file named in rows must be, others are passed
 * over). */
static int check_against_file(const view_env *env, const sv_hint *h, uint64_t ino, const hint_file_rows *fr,
                              bool check_schema, sv_error *err)
{
    plain_fs *p = env->plain;
    object_ref o;
    int r = plain_bind_object(p, ino, &o);
    if (r < 0) {
        sv_fail(err, HINT_E_TABLE, 0, "%s: cannot open (%s)", fr ? fr->path : "table file", strerror(-r));
        return -1;
    }
    const parquet_footer *ft = footer_cache_get(p->footers, &o, NULL); /* its own deadline */
    const pq_file_meta *m = ft->meta;
    int rc = 0;
    if (!m) {
        sv_fail(err, HINT_E_TABLE, 0, "%s", ft->err.msg);
        rc = fr ? -1 : -2; /* a file named in rows must be readable */
    }
    if (rc == 0 && fr && fr->ranges.n && fr->ranges.r[fr->ranges.n - 1].end > (uint64_t)m->num_rows) {
        sv_fail(err, HINT_E_TABLE, 0, "rows[\"%s\"]: range ends at row %llu but the file has %lld rows", fr->path,
                (unsigned long long)fr->ranges.r[fr->ranges.n - 1].end, (long long)m->num_rows);
        rc = -1;
    }
    if (rc == 0 && check_schema && h->pred) {
        pred_bound *b = NULL;
        pred_error perr;
        if (pred_bind(h->pred, m, &b, &perr) != PRED_OK) {
            sv_fail(err, HINT_E_TABLE, 0, "where: %s (schema of %s)", perr.msg, o.key);
            rc = -1;
        }
        pred_bound_free(b);
    }
    pq_column_resolver *names = rc == 0 && check_schema && h->n_columns ? pq_column_resolver_new(m) : NULL;
    if (rc == 0 && check_schema && h->n_columns && !names) {
        sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && names && i < h->n_columns; i++) {
        pq_resolve_status rs = pq_column_resolve(names, h->columns[i], NULL);
        if (rs != PQ_RESOLVE_OK) {
            sv_fail(err, HINT_E_TABLE, 0, "columns: %s column \"%s\" (schema of %s)",
                    rs == PQ_RESOLVE_AMBIGUOUS ? "ambiguous" : "unknown", h->columns[i], o.key);
            rc = -1;
        }
    }
    pq_column_resolver_free(names);
    footer_cache_put(p->footers, ft);
    object_ref_free(&o);
    return rc;
}

/* Checks that need the table: every file named in rows exists and has those
 * rows; the predicate and the columns fit the schema of a table file. */
int hint_accept(const view_env *env, const sv_hint *h, struct view_table **table, sv_error *err)
{
    *table = NULL;
    tree *t = env->plain->tree;
    bool schema_checked = false;
    for (size_t i = 0; i < h->n_files; i++) {
        tree_attr ta;
        uint64_t ino = resolve_path(t, h->files[i].path, &ta);
        if (!ino) {
            sv_fail(err, HINT_E_TABLE, 0, "rows: no such file '%s' in the mount", h->files[i].path);
            return -1;
        }
        if (check_against_file(env, h, ino, &h->files[i], !schema_checked && !h->table, err) != 0)
            return -1;
        schema_checked = true;
    }
    uint64_t root = TREE_ROOT_INO;
    if (h->table) {
        sv_cancel tok;
        object_io_cancel_init(env->plain->io, &tok);
        if (view_table_bind(env, h, table, err, &tok) != 0)
            return -1;
        if ((*table)->snap)
            return 0; /* checked against the Delta schema and a file of the snapshot */
        root = (*table)->dir_ino; /* a directory of Parquet files: its first file's schema */
        schema_checked = false;
    }
    if (!schema_checked && (h->pred || h->n_columns)) {
        /* A table file to check the schema against; files that are not
         * readable Parquet are passed over (they are served real anyway). */
        uint64_t tried[8];
        size_t ntried = 0;
        bool misfit = false;
        while (ntried < 8 && !misfit) {
            size_t budget = 10000;
            uint64_t ino = find_parquet(t, root, 0, &budget, tried, ntried);
            if (!ino)
                break;
            tried[ntried++] = ino;
            int rc = check_against_file(env, h, ino, NULL, true, err);
            if (rc == 0)
                return 0;
            misfit = rc == -1; /* the file is Parquet and the hint does not fit it */
        }
        if (misfit) {
            view_table_free(*table);
            *table = NULL;
            return -1;
        }
    }
    return 0;
}

