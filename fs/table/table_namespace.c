#include "table_namespace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "table_json.h"

bool tables_ns_owns(uint64_t ino)
{
    return ino == SV_INO_TABLES || (ino & SV_INO_TABLE_NS_FLAG) != 0;
}

/* The plain-path directory an inode of this namespace stands for. */
static uint64_t dir_of(uint64_t ino)
{
    return ino == SV_INO_TABLES ? TREE_ROOT_INO : ino & ~(SV_INO_TABLE_NS_FLAG | TABLE_NS_SNAPSHOT);
}

static uint64_t dir_ino(uint64_t plain_dir)
{
    return plain_dir == TREE_ROOT_INO ? SV_INO_TABLES : SV_INO_TABLE_NS_FLAG | plain_dir;
}

static void dir_attr(const plain_fs *p, uint64_t ino, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ino;
    out->mode = S_IFDIR | 0555;
    out->nlink = 2;
    out->mtime = p->start_time;
}

static void file_attr(const plain_fs *p, uint64_t ino, sv_attr *out)
{
    memset(out, 0, sizeof *out);
    out->ino = ino;
    out->mode = S_IFREG | 0444;
    out->nlink = 1;
    out->mtime = p->start_time; /* read with direct I/O: the size is what the read gives */
}

/* What the tables seen hold at directory path rel: whether rel is itself a
 * table, and (when name is given) whether rel/name leads to one. */
static int scan(table_registry *r, const char *rel, const char *name, bool *is_table, bool *leads)
{
    table_list l;
    if (table_registry_list(r, &l) != 0)
        return -ENOMEM;
    *is_table = *leads = false;
    const size_t rl = strlen(rel), nl = name ? strlen(name) : 0;
    for (size_t i = 0; i < l.n; i++) {
        const char *t = l.paths[i];
        if (strcmp(t, rel) == 0) {
            *is_table = true;
            continue;
        }
        const char *rest = rl == 0 ? t : strncmp(t, rel, rl) == 0 && t[rl] == '/' ? t + rl + 1 : NULL;
        if (rest && name && strncmp(rest, name, nl) == 0 && (rest[nl] == '/' || rest[nl] == '\0'))
            *leads = true;
    }
    table_list_free(&l);
    return 0;
}

int tables_ns_lookup(table_registry *r, plain_fs *p, uint64_t parent, const char *name, sv_attr *out,
                     const sv_cancel *tok)
{
    if (parent & TABLE_NS_SNAPSHOT)
        return -ENOTDIR;
    const uint64_t d = dir_of(parent);
    char *rel = table_relative_path(p, d);
    if (!rel)
        return -ENOENT;
    bool is_table, leads;
    int rc = scan(r, rel, name, &is_table, &leads);
    free(rel);
    if (rc)
        return rc;
    if (strcmp(name, TABLE_NS_SNAPSHOT_NAME) == 0 && is_table) {
        file_attr(p, SV_INO_TABLE_NS_FLAG | TABLE_NS_SNAPSHOT | d, out);
        return 0;
    }
    tree_attr ta;
    store_status st = tree_lookup(p->tree, d, name, &ta, tok);
    if (st != STORE_OK || !ta.is_dir)
        return st == STORE_OK || st == STORE_ERR_NOT_FOUND ? -ENOENT : plain_tree_errno(st, tok);
    if (!leads) {
        /* A table not seen yet, asked for by its path (a driver reading
         * its snapshot.json first): the directories on the way are looked
         * up like this too, and the table is one once it holds _delta_log/. */
        tree_attr log;
        st = tree_lookup(p->tree, ta.ino, "_delta_log", &log, tok);
        if (st == STORE_OK && log.is_dir)
            table_registry_saw(r, ta.ino);
        else if (st != STORE_OK && st != STORE_ERR_NOT_FOUND)
            return plain_tree_errno(st, tok);
    }
    dir_attr(p, dir_ino(ta.ino), out);
    return 0;
}

int tables_ns_getattr(table_registry *r, plain_fs *p, uint64_t ino, sv_attr *out)
{
    (void)r;
    if (ino & TABLE_NS_SNAPSHOT)
        file_attr(p, ino, out);
    else
        dir_attr(p, ino, out);
    return 0;
}

int tables_ns_readdir(table_registry *r, plain_fs *p, uint64_t ino, sv_dirents *out, const sv_cancel *tok)
{
    if (ino & TABLE_NS_SNAPSHOT)
        return -ENOTDIR;
    const uint64_t d = dir_of(ino);
    char *rel = table_relative_path(p, d);
    table_list l;
    if (!rel || table_registry_list(r, &l) != 0) {
        free(rel);
        return rel ? -ENOMEM : -ENOENT;
    }
    const uint64_t up = ino == SV_INO_TABLES ? SV_INO_CONTROL : dir_ino(tree_parent(p->tree, d));
    bool ok = sv_dirents_push(out, ".", ino, S_IFDIR) && sv_dirents_push(out, "..", up, S_IFDIR);
    const size_t rl = strlen(rel);
    int rc = 0;
    for (size_t i = 0; ok && rc == 0 && i < l.n; i++) {
        const char *t = l.paths[i];
        if (strcmp(t, rel) == 0) {
            ok = sv_dirents_push(out, TABLE_NS_SNAPSHOT_NAME, SV_INO_TABLE_NS_FLAG | TABLE_NS_SNAPSHOT | d, S_IFREG);
            continue;
        }
        const char *rest = rl == 0 ? t : strncmp(t, rel, rl) == 0 && t[rl] == '/' ? t + rl + 1 : NULL;
        if (!rest || !*rest)
            continue;
        const size_t cl = strcspn(rest, "/");
        char comp[TREE_NAME_MAX + 1];
        if (cl > TREE_NAME_MAX)
            continue;
        memcpy(comp, rest, cl);
        comp[cl] = '\0';
        bool dup = false;
        for (size_t k = 0; k < out->n; k++)
            dup |= strcmp(out->entries[k].name, comp) == 0;
        if (dup)
            continue;
        tree_attr ta;
        store_status st = tree_lookup(p->tree, d, comp, &ta, tok);
        if (st == STORE_OK && ta.is_dir)
            ok = sv_dirents_push(out, comp, dir_ino(ta.ino), S_IFDIR);
        else if (st != STORE_OK && st != STORE_ERR_NOT_FOUND)
            rc = plain_tree_errno(st, tok);
    }
    free(rel);
    table_list_free(&l);
    return rc ? rc : ok ? 0 : -ENOMEM;
}

int tables_ns_open(table_registry *r, plain_fs *p, uint64_t ino, char **text, size_t *len, const sv_cancel *tok)
{
    *text = NULL;
    if (!(ino & TABLE_NS_SNAPSHOT))
        return -EISDIR;
    const uint64_t d = dir_of(ino);
    table_snap *t = NULL;
    sv_error err = {0};
    if (table_registry_snapshot(r, d, &t, &err, tok) != 0) {
        int c = sv_cancel_check(tok);
        if (!c)
            log_warn("%s: %s", TABLE_NS_SNAPSHOT_NAME, err.msg);
        return c ? -c : err.code == TABLE_E_NOMEM ? -ENOMEM : -EIO;
    }
    char *rel = table_relative_path(p, d);
    *text = rel ? table_snapshot_json(table_snap_get(t), rel, len) : NULL;
    free(rel);
    table_snap_put(t);
    return *text ? 0 : -ENOMEM;
}
