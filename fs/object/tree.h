/* The namespace: S3 keys under the mount prefix seen as a tree of inodes.
 *
 * Directories are listed with ListObjectsV2 (delimiter '/') on first use and
 * again after a TTL; a table's partition directories, together (below). A file inode names one version of an object (key + ETag):
 * a new ETag gets a new inode, so the kernel can never mix cached pages of two
 * versions. Nodes live until the tree is destroyed (memory grows with the
 * number of distinct objects seen; each directory is capped at
 * TREE_MAX_DIR_ENTRIES). One mutex guards all nodes; no I/O runs under it. */
#ifndef SIEVE_TREE_H
#define SIEVE_TREE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory_budget.h"
#include "object_store.h"
#include "partition_path.h"

#define TREE_ROOT_INO 1u
#define TREE_FIRST_INO 16u           /* inodes below are reserved for virtual files */
#define TREE_MAX_DIR_ENTRIES 2000000u
#define TREE_NAME_MAX 255u
#define TREE_MAX_LIST_PAGES 20000u   /* pages of one directory's listing (S3 pages hold up to 1000 keys) */
/* A partition directory's listing, first or past its TTL (col=value/ under a
 * directory with more of them), lists its siblings' keys flat, in up to this many pages, and
 * installs every partition directory's listing they cover whole (nested up
 * to PARTITION_MAX_DEPTH levels): one round trip, not one per directory. */
#define TREE_FLAT_LIST_PAGES 16u

typedef struct {
    uint64_t ino;
    bool is_dir;
    bool in_delta_log; /* lives under a _delta_log/ directory: short TTLs */
    uint64_t size;
    int64_t mtime;
    char etag[S3_ETAG_MAX + 1]; /* empty for directories */
} tree_attr;

typedef struct {
    char *name;
    uint64_t ino;
    bool is_dir;
} tree_dirent;

typedef struct {
    tree_dirent *entries;
    size_t n;
} tree_dir_snapshot;

typedef struct tree tree;

/* A name whose inode a listing refresh changed (the object was replaced) or
 * removed: the kernel's cached entry for it is stale. */
#define TREE_STALE_MAX 1024u
typedef struct {
    uint64_t parent;
    char name[TREE_NAME_MAX + 1];
} tree_stale;

/* prefix: "" or ending in '/'. */
tree *tree_create(object_store *store, const char *prefix, uint64_t dir_ttl_ms,
                  uint64_t delta_log_ttl_ms);
void tree_destroy(tree *t);
/* Count its nodes and listings in mb (memory_budget.h). Call before use; mb
 * must outlive the tree. */
void tree_share_budget(tree *t, memory_budget *mb);

/* Load (or refresh) a directory's listing now, with request options (e.g. fewer
 * attempts at mount time; NULL = defaults). Returns STORE_OK or the listing error
 * (in err). */
store_status tree_refresh_dir(tree *t, uint64_t dir_ino, const store_request_opts *opts, sv_error *err);

/* Child `name` of dir_ino: STORE_OK and its attributes, STORE_ERR_NOT_FOUND, or an error.
 * Lookups and readdir may have to list the directory first: tok (may be
 * NULL) bounds that wait and the listing's requests; when it fires they end
 * with STORE_ERR_CANCELLED (sv_cancel_check(tok) tells why). */
store_status tree_lookup(tree *t, uint64_t dir_ino, const char *name, tree_attr *out, const sv_cancel *tok);
store_status tree_getattr(tree *t, uint64_t ino, tree_attr *out);
/* Snapshot of a directory's children (sorted by name); free with tree_dir_snapshot_free. */
store_status tree_readdir(tree *t, uint64_t dir_ino, tree_dir_snapshot *out, const sv_cancel *tok);
void tree_dir_snapshot_free(tree_dir_snapshot *s);
/* tree_lookup and tree_readdir that take a listing past its TTL as it is
 * (only a directory never listed is listed), setting *stale when they did:
 * what the mount last showed, without a round trip. */
store_status tree_lookup_cached(tree *t, uint64_t dir_ino, const char *name, tree_attr *out, bool *stale,
                                const sv_cancel *tok);
store_status tree_readdir_cached(tree *t, uint64_t dir_ino, tree_dir_snapshot *out, bool *stale,
                                 const sv_cancel *tok);
/* Take up to max stale names, oldest first (see tree_stale). */
size_t tree_take_stale(tree *t, tree_stale *out, size_t max);
/* Parent inode of a directory (root's parent is root). */
uint64_t tree_parent(tree *t, uint64_t ino);
/* Full S3 key (file) or prefix (directory) of ino, malloc'd; NULL if unknown. */
char *tree_key(tree *t, uint64_t ino);

#endif
