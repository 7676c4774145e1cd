#include "tree.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "partition_path.h"
#include "sv_grow.h"

typedef struct node {
    uint64_t ino;
    uint64_t parent;
    char *key;  /* object key, or directory prefix ("" or ending in '/') */
    bool is_dir;
    bool in_delta_log;
    uint64_t size;
    int64_t mtime;
    char etag[S3_ETAG_MAX + 1];
    /* Directories only. */
    tree_dirent *children; /* sorted by name */
    size_t n_children;
    bool listed;
    bool listing; /* a listing is in flight; others wait on tree.listed_cv */
    int64_t listed_at_ns;
    /* A flat listing of its partition directories is in flight (others wait
     * on tree.listed_cv), or when the latest one started. */
    bool flat_listing;
    int64_t flat_at_ns;
    struct node *hash_next; /* index by (key, etag) */
} node;

struct tree {
    pthread_mutex_t lock; /* guards every field below and every node */
    pthread_cond_t listed_cv;
    object_store *store;
    node **nodes;   /* by ino; NULL for reserved numbers */
    size_t n_nodes, cap_nodes;
    node **index;   /* hash of (key, etag) -> node, so listings reuse inodes */
    size_t index_buckets;
    size_t index_count;
    int64_t dir_ttl_ns, delta_log_ttl_ns;
    /* Names a listing refresh gave another inode (a replaced object) or
     * dropped: the kernel may still map them to the old inode. A ring of
     * TREE_STALE_MAX; when full the oldest go (the kernel's entry timeout
     * still bounds how long those stay). */
    tree_stale stale[TREE_STALE_MAX];
    size_t stale_head, stale_count;
    memory_budget *mem; /* the mount's, charged `bytes`; NULL: none (set before use) */
    uint64_t bytes;     /* nodes and listings held */
};

/* What a node costs: its struct, key, inode slot and index link. */
static uint64_t node_cost(const char *key)
{
    return sizeof(node) + strlen(key) + 1 + 2 * sizeof(node *);
}

/* What a directory's listing costs. */
static uint64_t listing_cost(const tree_dirent *c, size_t n)
{
    uint64_t b = n * sizeof *c;
    for (size_t i = 0; i < n; i++)
        b += strlen(c[i].name) + 1;
    return b;
}

static void charge(tree *t, uint64_t n)
{
    t->bytes += n;
    memory_budget_charge(t->mem, n);
}

static void uncharge(tree *t, uint64_t n)
{
    t->bytes -= n;
    memory_budget_uncharge(t->mem, n);
}

void tree_share_budget(tree *t, memory_budget *mb)
{
    t->mem = mb;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t hash_str(const char *s, uint64_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

static size_t index_slot(const tree *t, const char *key, const char *etag)
{
    uint64_t h = hash_str(etag, hash_str(key, 0xCBF29CE484222325ull) ^ 0xFF);
    return (size_t)(h & (t->index_buckets - 1));
}

static node *index_find(tree *t, const char *key, const char *etag, bool is_dir)
{
    for (node *n = t->index[index_slot(t, key, etag)]; n; n = n->hash_next)
        if (n->is_dir == is_dir && strcmp(n->key, key) == 0 && strcmp(n->etag, etag) == 0)
            return n;
    return NULL;
}

static bool index_grow(tree *t)
{
    size_t nb = t->index_buckets * 2;
    node **ni = calloc(nb, sizeof *ni);
    if (!ni)
        return false;
    node **old = t->index;
    size_t ob = t->index_buckets;
    t->index = ni;
    t->index_buckets = nb;
    for (size_t i = 0; i < ob; i++) {
        for (node *n = old[i], *nx; n; n = nx) {
            nx = n->hash_next;
            size_t s = index_slot(t, n->key, n->etag);
            n->hash_next = ni[s];
            ni[s] = n;
        }
    }
    free(old);
    return true;
}

static bool is_delta_log_key(const char *key)
{
    return strncmp(key, "_delta_log/", 11) == 0 || strstr(key, "/_delta_log/") != NULL;
}

/* Create a node (lock held). */
static node *node_new(tree *t, uint64_t parent, const char *key, bool is_dir, uint64_t size,
                      int64_t mtime, const char *etag)
{
    size_t old_cap = t->cap_nodes;
    if (!sv_grow((void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof *t->nodes, 1024, SIZE_MAX / 16))
        return NULL;
    memset(t->nodes + old_cap, 0, (t->cap_nodes - old_cap) * sizeof *t->nodes);
    if (t->index_count >= t->index_buckets && !index_grow(t))
        return NULL;
    node *n = calloc(1, sizeof *n);
    if (!n || !(n->key = strdup(key))) {
        free(n);
        return NULL;
    }
    n->ino = t->n_nodes;
    n->parent = parent;
    n->is_dir = is_dir;
    n->in_delta_log = is_delta_log_key(key);
    n->size = size;
    n->mtime = mtime;
    snprintf(n->etag, sizeof n->etag, "%s", etag ? etag : "");
    t->nodes[t->n_nodes++] = n;
    charge(t, node_cost(key));
    size_t s = index_slot(t, n->key, n->etag);
    n->hash_next = t->index[s];
    t->index[s] = n;
    t->index_count++;
    return n;
}

static node *get_node(tree *t, uint64_t ino)
{
    return ino < t->n_nodes ? t->nodes[ino] : NULL;
}

tree *tree_create(object_store *store, const char *prefix, uint64_t dir_ttl_ms,
                  uint64_t delta_log_ttl_ms)
{
    tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->store = store;
    t->dir_ttl_ns = (int64_t)dir_ttl_ms * 1000000;
    t->delta_log_ttl_ns = (int64_t)delta_log_ttl_ms * 1000000;
    t->index_buckets = 1024;
    t->index = calloc(t->index_buckets, sizeof *t->index);
    pthread_mutex_init(&t->lock, NULL);
    sv_cond_init(&t->listed_cv); /* CLOCK_MONOTONIC, for sv_cancel_wait */
    /* Reserve inode numbers below TREE_FIRST_INO; the root is TREE_ROOT_INO. */
    t->n_nodes = TREE_FIRST_INO;
    t->cap_nodes = 1024;
    t->nodes = calloc(t->cap_nodes, sizeof *t->nodes);
    node *root = calloc(1, sizeof *root);
    if (!t->index || !t->nodes || !root || !(root->key = strdup(prefix))) {
        free(root);
        tree_destroy(t);
        return NULL;
    }
    root->ino = TREE_ROOT_INO;
    root->parent = TREE_ROOT_INO;
    root->is_dir = true;
    root->in_delta_log = is_delta_log_key(prefix);
    t->nodes[TREE_ROOT_INO] = root;
    return t;
}

static void free_children(tree_dirent *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].name);
    free(c);
}

void tree_destroy(tree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_nodes && t->nodes; i++) {
        node *n = t->nodes[i];
        if (!n)
            continue;
        free_children(n->children, n->n_children);
        free(n->key);
        free(n);
    }
    free(t->nodes);
    free(t->index);
    memory_budget_uncharge(t->mem, t->bytes);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->listed_cv);
    free(t);
}

/* ---- listing --------------------------------------------------------------- */

typedef struct {
    char *name;
    char *key;
    bool is_dir;
    uint64_t size;
    int64_t mtime;
    char *etag;
} raw_entry;

typedef struct {
    raw_entry *v;
    size_t n, cap;
} raw_list;

static void raw_list_free(raw_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].key);
        free(l->v[i].etag);
    }
    free(l->v);
}

/* A usable file name for key under prefix, or NULL (marker objects, empty or
 * dot names, names over NAME_MAX). */
static const char *child_name(const char *prefix, const char *key, size_t *len, bool is_dir)
{
    size_t pl = strlen(prefix);
    if (strncmp(key, prefix, pl) != 0)
        return NULL;
    const char *name = key + pl;
    size_t n = strlen(name);
    if (is_dir && n > 0 && name[n - 1] == '/')
        n--;
    if (n == 0 || n > TREE_NAME_MAX || memchr(name, '/', n))
        return NULL;
    if ((n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
        return NULL;
    *len = n;
    return name;
}

static bool raw_push(raw_list *l, const char *name, size_t nlen, const char *key, bool is_dir,
                     uint64_t size, int64_t mtime, const char *etag)
{
    if (!sv_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v, 256, SIZE_MAX / 64))
        return false;
    raw_entry *e = &l->v[l->n];
    e->name = strndup(name, nlen);
    e->key = strdup(key);
    e->etag = strdup(etag ? etag : "");
    e->is_dir = is_dir;
    e->size = size;
    e->mtime = mtime;
    if (!e->name || !e->key || !e->etag) {
        free(e->name);
        free(e->key);
        free(e->etag);
        return false;
    }
    l->n++;
    return true;
}

static int raw_cmp(const void *a, const void *b)
{
    const raw_entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    /* Directories sort first so that a file shadowed by a same-named prefix is dropped. */
    return (int)y->is_dir - (int)x->is_dir;
}

/* Fetch every page of the listing of prefix (no lock held). A server that
 * says a page is truncated but gives no token, gives the token it was just
 * asked with, or goes on for more than TREE_MAX_LIST_PAGES pages would loop
 * a listing forever: the directory's listing fails instead. */
static store_status fetch_listing(tree *t, const char *prefix, const store_request_opts *opts,
                                  raw_list *out, sv_error *err)
{
    char *token = NULL;
    store_status st = STORE_OK;
    size_t total = 0;
    uint32_t pages = 0;
    for (;; pages++) {
        if (pages >= TREE_MAX_LIST_PAGES) {
            st = (store_status)sv_fail(err, STORE_ERR_PROTOCOL, 0,
                                       "listing '%s': more than %u pages (the server keeps saying there is more)",
                                       prefix, TREE_MAX_LIST_PAGES);
            log_warn("listing '%s': more than %u pages: the listing fails", prefix, TREE_MAX_LIST_PAGES);
            break;
        }
        char *asked = token ? strdup(token) : NULL;
        store_listing page;
        st = store_list_page(t->store, prefix, "/", token, opts, &page, err);
        free(token);
        token = NULL;
        if (st != STORE_OK) {
            free(asked);
            break;
        }
        for (size_t i = 0; i < page.n_prefixes && st == STORE_OK; i++) {
            size_t nl;
            const char *name = child_name(prefix, page.prefixes[i], &nl, true);
            if (!name) {
                log_debug("skipping prefix '%s': not a usable directory name", page.prefixes[i]);
                continue;
            }
            if (!raw_push(out, name, nl, page.prefixes[i], true, 0, 0, ""))
                st = STORE_ERR_NOMEM;
        }
        for (size_t i = 0; i < page.n_objects && st == STORE_OK; i++) {
            const store_object_entry *o = &page.objects[i];
            size_t nl;
            const char *name = child_name(prefix, o->key, &nl, false);
            if (!name) {
                if (strcmp(o->key, prefix) != 0)
                    log_debug("skipping key '%s': not a usable file name", o->key);
                continue;
            }
            if (!raw_push(out, name, nl, o->key, false, o->size, o->mtime, o->etag))
                st = STORE_ERR_NOMEM;
        }
        total += page.n_objects + page.n_prefixes;
        bool more = page.truncated;
        if (more && st == STORE_OK) {
            if (!page.next_token || !page.next_token[0])
                st = (store_status)sv_fail(err, STORE_ERR_PROTOCOL, 0,
                                           "listing '%s': page %u says it is truncated but gives no continuation "
                                           "token", prefix, pages + 1);
            else if (asked && strcmp(asked, page.next_token) == 0)
                st = (store_status)sv_fail(err, STORE_ERR_PROTOCOL, 0,
                                           "listing '%s': page %u gives back the continuation token it was asked "
                                           "with (the listing would never end)", prefix, pages + 1);
            else
                token = strdup(page.next_token);
            if (st == STORE_ERR_PROTOCOL)
                log_warn("listing '%s': page %u: a truncated page without a new continuation token: the listing "
                         "fails", prefix, pages + 1);
        }
        free(asked);
        store_listing_free(&page);
        if (st != STORE_OK)
            break;
        if (!more)
            break;
        if (!token) {
            st = STORE_ERR_NOMEM;
            break;
        }
        if (total >= TREE_MAX_DIR_ENTRIES) {
            log_warn("directory '%s' has more than %u entries; showing the first %zu", prefix,
                     TREE_MAX_DIR_ENTRIES, total);
            break;
        }
    }
    if (st == STORE_ERR_NOMEM)
        sv_fail(err, st, 0, "listing '%s': out of memory", prefix);
    free(token);
    return st;
}

static void note_stale(tree *t, uint64_t parent, const char *name)
{
    size_t slot = (t->stale_head + t->stale_count) % TREE_STALE_MAX;
    if (t->stale_count == TREE_STALE_MAX)
        t->stale_head = (t->stale_head + 1) % TREE_STALE_MAX; /* overwrite the oldest */
    else
        t->stale_count++;
    t->stale[slot].parent = parent;
    snprintf(t->stale[slot].name, sizeof t->stale[slot].name, "%s", name);
}

/* Old children whose name now maps to another inode, or to none (lock held;
 * both arrays sorted by name). */
static void note_changed_names(tree *t, const node *dir, const tree_dirent *now, size_t n_now)
{
    size_t j = 0;
    for (size_t i = 0; i < dir->n_children; i++) {
        const tree_dirent *old = &dir->children[i];
        while (j < n_now && strcmp(now[j].name, old->name) < 0)
            j++;
        if (j < n_now && strcmp(now[j].name, old->name) == 0 && now[j].ino == old->ino)
            continue;
        note_stale(t, dir->ino, old->name);
    }
}

/* Install a fresh listing into dir (lock held). */
static store_status install_listing(tree *t, node *dir, raw_list *l)
{
    if (l->n > 0) /* an empty listing has no array: qsort wants one */
        qsort(l->v, l->n, sizeof *l->v, raw_cmp);
    tree_dirent *children = calloc(l->n ? l->n : 1, sizeof *children);
    if (!children)
        return STORE_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        raw_entry *e = &l->v[i];
        if (n > 0 && strcmp(children[n - 1].name, e->name) == 0)
            continue; /* a file named like a directory: the directory wins */
        node *c = index_find(t, e->key, e->etag, e->is_dir);
        if (c) {
            c->size = e->size;
            c->mtime = e->mtime;
        } else {
            c = node_new(t, dir->ino, e->key, e->is_dir, e->size, e->mtime, e->etag);
            if (!c) {
                free_children(children, n);
                return STORE_ERR_NOMEM;
            }
        }
        children[n].name = e->name;
        e->name = NULL; /* moved */
        children[n].ino = c->ino;
        children[n].is_dir = e->is_dir;
        n++;
    }
    if (dir->listed)
        note_changed_names(t, dir, children, n);
    charge(t, listing_cost(children, n));
    uncharge(t, listing_cost(dir->children, dir->n_children));
    free_children(dir->children, dir->n_children);
    dir->children = children;
    dir->n_children = n;
    dir->listed = true;
    dir->listed_at_ns = now_ns();
    return STORE_OK;
}

static bool listing_fresh(const tree *t, const node *dir)
{
    if (!dir->listed)
        return false;
    int64_t ttl = dir->in_delta_log ? t->delta_log_ttl_ns : t->dir_ttl_ns;
    return now_ns() - dir->listed_at_ns < ttl;
}

static int dirent_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const tree_dirent *)elem)->name);
}

/* ---- partition directories, listed together ------------------------------------ */
/* A table partitioned by a column has a directory per value (day=2024-01-01/),
 * often with a file or two each; readers look them up one after another, and
 * a listing per directory is a round trip per file. A lookup into one whose
 * listing is missing or past its TTL lists all its sibling partitions' keys
 * at once, flat (no delimiter, under the parent's prefix and the column's
 * "name="), and installs the listing of every partition directory (nested
 * ones too) that the flat listing covers whole and that has no fresh one;
 * the others are listed on their own as before. */

static node *child_node(tree *t, const node *dir, const char *name)
{
    tree_dirent *e = bsearch(name, dir->children, dir->n_children, sizeof *dir->children, dirent_cmp);
    return e ? get_node(t, e->ino) : NULL;
}

/* Whether dir's listing (its first, or a refresh past its TTL) should be
 * its parent's partitions listed flat (lock held): dir is a partition
 * directory, at least three of its siblings (itself included) have no fresh
 * listing, and no flat listing of them was tried within the TTL. */
static bool flat_listing_pays(tree *t, const node *dir)
{
    size_t n;
    const char *name = partition_dir_name(dir->key, &n);
    node *parent = get_node(t, dir->parent);
    if (dir->in_delta_log || !partition_name(name, n) || !parent || parent == dir ||
        !parent->listed || parent->flat_listing ||
        (parent->flat_at_ns && now_ns() - parent->flat_at_ns < t->dir_ttl_ns))
        return false;
    size_t unlisted = 0;
    for (size_t i = 0; i < parent->n_children && unlisted < 3; i++) {
        const tree_dirent *c = &parent->children[i];
        const node *cn = c->is_dir ? get_node(t, c->ino) : NULL;
        unlisted += cn && !listing_fresh(t, cn) && partition_name(c->name, strlen(c->name));
    }
    return unlisted >= 3;
}

/* The keys of a flat listing, sorted, relative to its prefix's directory. */
typedef struct {
    raw_list keys;     /* name: the key relative to the parent directory */
    bool truncated;    /* more keys follow the last */
} flat_keys;

/* Fetch up to TREE_FLAT_LIST_PAGES pages of the keys under prefix (no lock
 * held); dir_key: the directory the names are made relative to. */
static store_status fetch_flat(tree *t, const char *dir_key, const char *prefix, const store_request_opts *opts,
                               flat_keys *out)
{
    memset(out, 0, sizeof *out);
    const size_t dl = strlen(dir_key);
    char *token = NULL;
    store_status st = STORE_OK;
    for (uint32_t pages = 0;; pages++) {
        if (pages >= TREE_FLAT_LIST_PAGES) {
            out->truncated = true;
            break;
        }
        store_listing page;
        sv_error err = {0};
        char *asked = token;
        st = store_list_page(t->store, prefix, NULL, asked, opts, &page, &err);
        token = NULL;
        if (st != STORE_OK) {
            free(asked);
            break;
        }
        for (size_t i = 0; i < page.n_objects && st == STORE_OK; i++) {
            const store_object_entry *o = &page.objects[i];
            if (strncmp(o->key, dir_key, dl) != 0)
                continue;
            /* sorted, as S3 lists: the directories' ranges below rely on it */
            if (out->keys.n && strcmp(out->keys.v[out->keys.n - 1].key, o->key) >= 0)
                st = STORE_ERR_PROTOCOL;
            else if (!raw_push(&out->keys, o->key + dl, strlen(o->key + dl), o->key, false, o->size, o->mtime,
                               o->etag))
                st = STORE_ERR_NOMEM;
        }
        const bool more = page.truncated && page.next_token && page.next_token[0] &&
                          !(asked && strcmp(asked, page.next_token) == 0);
        if (more && st == STORE_OK)
            token = strdup(page.next_token);
        free(asked);
        store_listing_free(&page);
        if (st != STORE_OK || !more)
            break;
        if (!token) {
            st = STORE_ERR_NOMEM;
            break;
        }
    }
    free(token);
    if (st != STORE_OK)
        raw_list_free(&out->keys);
    return st;
}

/* The first key at or after rel (keys sorted). */
static size_t first_key_from(const raw_list *keys, const char *rel)
{
    size_t lo = 0, hi = keys->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(keys->v[mid].name, rel) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Install the listing of partition directory rel (relative, ending in '/')
 * from the flat keys when they cover it whole (lock held). */
static void install_from_flat(tree *t, node *parent, flat_keys *f, const char *rel)
{
    const size_t rl = strlen(rel);
    size_t i = first_key_from(&f->keys, rel);
    if (f->truncated) {
        /* Whole only when a key past its range came back. */
        size_t end = i;
        while (end < f->keys.n && strncmp(f->keys.v[end].name, rel, rl) == 0)
            end++;
        if (end >= f->keys.n)
            return;
    }
    /* Find its node: every directory above it was installed before it. */
    node *d = parent;
    for (const char *c = rel; *c && d;) {
        const char *slash = strchr(c, '/');
        char name[TREE_NAME_MAX + 1];
        if (!slash || (size_t)(slash - c) > TREE_NAME_MAX)
            return;
        memcpy(name, c, (size_t)(slash - c));
        name[slash - c] = '\0';
        d = child_node(t, d, name);
        if (d && !d->is_dir)
            return;
        c = slash + 1;
    }
    if (!d || !d->is_dir || d->listing || listing_fresh(t, d))
        return;
    raw_list l = {0};
    for (; i < f->keys.n && strncmp(f->keys.v[i].name, rel, rl) == 0; i++) {
        const raw_entry *k = &f->keys.v[i];
        const char *rest = k->name + rl;
        const char *slash = strchr(rest, '/');
        size_t nl;
        const char *name;
        bool ok = true;
        if (!slash) {
            if ((name = child_name(d->key, k->key, &nl, false)) != NULL)
                ok = raw_push(&l, name, nl, k->key, false, k->size, k->mtime, k->etag);
        } else {
            /* a subdirectory: once, however many keys it holds */
            const size_t sl = (size_t)(slash - rest);
            if (l.n && l.v[l.n - 1].is_dir && strlen(l.v[l.n - 1].name) == sl &&
                strncmp(l.v[l.n - 1].name, rest, sl) == 0)
                continue;
            char *sub = malloc(strlen(d->key) + sl + 2);
            if (!sub) {
                ok = false;
            } else {
                sprintf(sub, "%s%.*s/", d->key, (int)sl, rest);
                if ((name = child_name(d->key, sub, &nl, true)) != NULL)
                    ok = raw_push(&l, name, nl, sub, true, 0, 0, "");
                free(sub);
            }
        }
        if (!ok) {
            raw_list_free(&l);
            return;
        }
    }
    if (install_listing(t, d, &l) == STORE_OK)
        log_debug("listing of '%s' from its table's partitions listed together", d->key);
    raw_list_free(&l);
}

/* List parent's partition directories flat, under the prefix of dir's
 * column (lock held; dropped while listing), and install every partition
 * directory's listing the keys cover whole, nested ones included. */
static void list_partitions_flat(tree *t, node *parent, const node *dir, const store_request_opts *opts)
{
    size_t n;
    const char *name = partition_dir_name(dir->key, &n);
    const char *eq = memchr(name, '=', n);
    char *prefix = malloc(strlen(parent->key) + (size_t)(eq - name) + 2);
    char *parent_key = strdup(parent->key);
    if (!prefix || !parent_key) {
        free(prefix);
        free(parent_key);
        return;
    }
    sprintf(prefix, "%s%.*s", parent->key, (int)(eq - name + 1), name);
    parent->flat_listing = true;
    parent->flat_at_ns = now_ns();
    pthread_mutex_unlock(&t->lock);
    flat_keys f;
    store_status st = fetch_flat(t, parent_key, prefix, opts, &f);
    pthread_mutex_lock(&t->lock);
    parent->flat_listing = false;
    if (st == STORE_OK) {
        /* Every partition directory with a key, outermost first (a prefix
         * sorts before its extensions; keys are sorted). */
        char *last[PARTITION_MAX_DEPTH] = {0};
        for (size_t i = 0; i < f.keys.n; i++) {
            const char *rel = f.keys.v[i].name;
            size_t depth = 0;
            for (const char *c = rel, *slash; depth < PARTITION_MAX_DEPTH && (slash = strchr(c, '/'));
                 c = slash + 1, depth++) {
                if (!partition_name(c, (size_t)(slash - c)))
                    break;
                const size_t len = (size_t)(slash + 1 - rel);
                if (last[depth] && strlen(last[depth]) == len && strncmp(last[depth], rel, len) == 0)
                    continue;
                free(last[depth]);
                last[depth] = strndup(rel, len);
                if (last[depth])
                    install_from_flat(t, parent, &f, last[depth]);
            }
        }
        for (size_t k = 0; k < PARTITION_MAX_DEPTH; k++)
            free(last[k]);
        raw_list_free(&f.keys);
    } else {
        log_debug("listing '%s' flat: %s; its directories are listed one by one", prefix, store_status_name(st));
    }
    pthread_cond_broadcast(&t->listed_cv);
    free(prefix);
    free(parent_key);
}

/* Make sure dir has a listing no older than its TTL. Called and returns with
 * the lock held; drops it while listing. A failed refresh keeps serving the
 * previous listing (with a warning); only a directory never listed fails. */
static store_status ensure_listed(tree *t, node *dir, bool force, const store_request_opts *opts,
                                  sv_error *err, const sv_cancel *tok)
{
    for (node *parent = get_node(t, dir->parent);
         dir->listing || (parent && parent != dir && parent->flat_listing);) {
        int why = sv_cancel_wait(tok, &t->listed_cv, &t->lock);
        if (why) {
            sv_fail(err, STORE_ERR_CANCELLED, 0, "waiting for the listing of '%s': cancelled", dir->key);
            return STORE_ERR_CANCELLED;
        }
    }
    if (!force && listing_fresh(t, dir))
        return STORE_OK;
    store_request_opts with_tok = opts ? *opts : (store_request_opts){0};
    if (tok)
        with_tok.cancel = tok;
    opts = &with_tok;
    if (!force && flat_listing_pays(t, dir)) {
        list_partitions_flat(t, get_node(t, dir->parent), dir, opts);
        if (listing_fresh(t, dir))
            return STORE_OK;
        while (dir->listing) /* another thread began its own meanwhile */
            if (sv_cancel_wait(tok, &t->listed_cv, &t->lock)) {
                sv_fail(err, STORE_ERR_CANCELLED, 0, "waiting for the listing of '%s': cancelled", dir->key);
                return STORE_ERR_CANCELLED;
            }
        if (listing_fresh(t, dir))
            return STORE_OK;
    }
    dir->listing = true;
    char *prefix = strdup(dir->key);
    pthread_mutex_unlock(&t->lock);
    raw_list l = {0};
    sv_error lerr = {0};
    store_status st = prefix ? fetch_listing(t, prefix, opts, &l, &lerr) : STORE_ERR_NOMEM;
    const char *local_err = lerr.msg;
    pthread_mutex_lock(&t->lock);
    if (st == STORE_OK)
        st = install_listing(t, dir, &l);
    dir->listing = false;
    pthread_cond_broadcast(&t->listed_cv);
    raw_list_free(&l);
    if (st != STORE_OK) {
        sv_fail(err, st, 0, "%s", local_err[0] ? local_err : store_status_name(st));
        if (dir->listed) {
            log_warn("keeping the previous listing of '%s': %s", prefix ? prefix : "?", local_err);
            dir->listed_at_ns = now_ns(); /* do not hammer a failing server */
            st = STORE_OK;
        } else if (st == STORE_ERR_CANCELLED) {
            log_info("listing of '%s' given up: %s", prefix ? prefix : "?", local_err);
        } else {
            log_error("cannot list '%s': %s", prefix ? prefix : "?", local_err);
        }
    }
    free(prefix);
    return st;
}

store_status tree_refresh_dir(tree *t, uint64_t dir_ino, const store_request_opts *opts, sv_error *err)
{
    pthread_mutex_lock(&t->lock);
    node *d = get_node(t, dir_ino);
    store_status st = d && d->is_dir ? ensure_listed(t, d, true, opts, err, NULL) : STORE_ERR_NOT_FOUND;
    pthread_mutex_unlock(&t->lock);
    return st;
}

size_t tree_take_stale(tree *t, tree_stale *out, size_t max)
{
    pthread_mutex_lock(&t->lock);
    size_t n = 0;
    for (; n < max && t->stale_count; n++) {
        out[n] = t->stale[t->stale_head];
        t->stale_head = (t->stale_head + 1) % TREE_STALE_MAX;
        t->stale_count--;
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}

static void fill_attr(const node *n, tree_attr *out)
{
    out->ino = n->ino;
    out->is_dir = n->is_dir;
    out->in_delta_log = n->in_delta_log;
    out->size = n->size;
    out->mtime = n->mtime;
    snprintf(out->etag, sizeof out->etag, "%s", n->etag);
}


/* ensure_listed, or with stale (not NULL) a listing past its TTL as it is:
 * *stale is set when one was. */
static store_status listed_or_cached(tree *t, node *dir, bool *stale, const sv_cancel *tok)
{
    if (stale && dir->listed && !dir->listing) {
        *stale = *stale || !listing_fresh(t, dir);
        return STORE_OK;
    }
    return ensure_listed(t, dir, false, NULL, NULL, tok);
}

static store_status lookup(tree *t, uint64_t dir_ino, const char *name, tree_attr *out, bool *stale,
                           const sv_cancel *tok)
{
    pthread_mutex_lock(&t->lock);
    node *d = get_node(t, dir_ino);
    store_status st = STORE_ERR_NOT_FOUND;
    if (d && d->is_dir) {
        st = listed_or_cached(t, d, stale, tok);
        if (st == STORE_OK) {
            tree_dirent *e = bsearch(name, d->children, d->n_children, sizeof *d->children, dirent_cmp);
            node *c = e ? get_node(t, e->ino) : NULL;
            if (c)
                fill_attr(c, out);
            else
                st = STORE_ERR_NOT_FOUND;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

store_status tree_lookup(tree *t, uint64_t dir_ino, const char *name, tree_attr *out, const sv_cancel *tok)
{
    return lookup(t, dir_ino, name, out, NULL, tok);
}

store_status tree_lookup_cached(tree *t, uint64_t dir_ino, const char *name, tree_attr *out, bool *stale,
                                const sv_cancel *tok)
{
    return lookup(t, dir_ino, name, out, stale, tok);
}

store_status tree_getattr(tree *t, uint64_t ino, tree_attr *out)
{
    pthread_mutex_lock(&t->lock);
    node *n = get_node(t, ino);
    if (n)
        fill_attr(n, out);
    pthread_mutex_unlock(&t->lock);
    return n ? STORE_OK : STORE_ERR_NOT_FOUND;
}

static store_status readdir_of(tree *t, uint64_t dir_ino, tree_dir_snapshot *out, bool *stale, const sv_cancel *tok)
{
    out->entries = NULL;
    out->n = 0;
    pthread_mutex_lock(&t->lock);
    node *d = get_node(t, dir_ino);
    store_status st = d && d->is_dir ? listed_or_cached(t, d, stale, tok) : STORE_ERR_NOT_FOUND;
    if (st == STORE_OK) {
        out->entries = calloc(d->n_children ? d->n_children : 1, sizeof *out->entries);
        if (!out->entries)
            st = STORE_ERR_NOMEM;
        for (size_t i = 0; st == STORE_OK && i < d->n_children; i++) {
            out->entries[i] = d->children[i];
            out->entries[i].name = strdup(d->children[i].name);
            out->n = i + 1;
            if (!out->entries[i].name)
                st = STORE_ERR_NOMEM;
        }
        if (st != STORE_OK)
            tree_dir_snapshot_free(out);
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

store_status tree_readdir(tree *t, uint64_t dir_ino, tree_dir_snapshot *out, const sv_cancel *tok)
{
    return readdir_of(t, dir_ino, out, NULL, tok);
}

store_status tree_readdir_cached(tree *t, uint64_t dir_ino, tree_dir_snapshot *out, bool *stale,
                                 const sv_cancel *tok)
{
    return readdir_of(t, dir_ino, out, stale, tok);
}

void tree_dir_snapshot_free(tree_dir_snapshot *s)
{
    free_children(s->entries, s->n);
    s->entries = NULL;
    s->n = 0;
}

uint64_t tree_parent(tree *t, uint64_t ino)
{
    pthread_mutex_lock(&t->lock);
    node *n = get_node(t, ino);
    uint64_t p = n ? n->parent : TREE_ROOT_INO;
    pthread_mutex_unlock(&t->lock);
    return p;
}

char *tree_key(tree *t, uint64_t ino)
{
    pthread_mutex_lock(&t->lock);
    node *n = get_node(t, ino);
    char *k = n ? strdup(n->key) : NULL;
    pthread_mutex_unlock(&t->lock);
    return k;
}
