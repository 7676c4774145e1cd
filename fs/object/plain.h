/* The plain tree as a reader sees it: the namespace (attributes, directory
 * listings, extended attributes) and open files whose reads return the
 * objects' real bytes, fetched through the block cache ahead of the reader
 * (prefetch.h). Views build on it; it knows nothing of views.
 *
 * A plain_fs owns the tree, the block cache, the object reader and the footer
 * cache; all are thread-safe and it is read-only after creation. */
#ifndef SIEVE_PLAIN_H
#define SIEVE_PLAIN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "block_cache.h"
#include "footer_cache.h"
#include "log_files.h"
#include "object_read.h"
#include "object_store.h"
#include "prefetch.h"
#include "stats.h"
#include "table_ahead.h"
#include "tree.h"
#include "vfs_types.h"

#define SV_XATTR_KEY  "user.sievefs.key"
#define SV_XATTR_ETAG "user.sievefs.etag"

/* Cache blocks under --direct-io. Reads come unrounded, so each read's
 * first and last block are fetched past it: with 16 KiB blocks a reader
 * of one small page per column chunk (DuckDB on Spark's table) fetched
 * 1.24 times its preads, with 4 KiB 1.09. With the page cache, the
 * kernel's 128 KiB windows hide the rounding and larger blocks cost less
 * to track (docs/design.md, "Read path"). */
#define PLAIN_DIRECT_IO_BLOCK_SIZE (4u << 10)

typedef struct {
    const char *bucket;        /* the mounted bucket (absolute s3:// URIs into it are the mount's), or NULL */
    const char *prefix;        /* "" or ending in '/' */
    uint64_t cache_bytes;      /* block cache limit; footers get an eighth more */
    uint32_t block_size;       /* cache block, bytes */
    uint64_t max_request;      /* largest single ranged GET */
    uint64_t read_timeout_ms;  /* one read's deadline (0: none); also loading a footer */
    uint64_t tail_bytes;       /* fetched from the end of a file at open (a Parquet file's footer) */
    uint64_t dir_ttl_ms;       /* listing cache TTL */
    uint64_t delta_log_ttl_ms; /* same under _delta_log/ */
    double file_attr_timeout_s;
    double delta_log_attr_timeout_s;
    double dir_attr_timeout_s;
    prefetch_config prefetch;  /* max_window is at most a quarter of cache_bytes */
    /* --direct-io: data files are opened without the page cache, so the
     * kernel passes each read() as the reader made it (sets
     * prefetch.exact_reads; the mount uses PLAIN_DIRECT_IO_BLOCK_SIZE). */
    bool direct_io;
    /* --version / --timestamp: the Delta table version the mount shows;
     * _delta_log/ entries after it are hidden (zeroed: the latest, nothing
     * hidden). */
    delta_version_spec table_version;
} plain_config;

typedef struct {
    plain_config cfg;
    sv_stats *stats;
    /* The mount's one memory budget (cfg.cache_bytes) that the cache,
     * footers, tree and the views' buffers share (atomic). */
    memory_budget budget;
    tree *tree;
    block_cache *cache;
    object_io *io;
    footer_cache *footers;
    column_memory *columns; /* columns readers read, per table (thread-safe) */
    table_ahead *ahead;     /* footers of a table's next files (thread-safe) */
    int64_t start_time; /* mtime of nodes the store gives none */
} plain_fs;

plain_fs *plain_fs_create(object_store *store, sv_stats *stats, const plain_config *cfg);
void plain_fs_destroy(plain_fs *p);

/* List the root once, with few attempts (mount time): fails when the bucket
 * or prefix cannot be listed (unknown bucket, bad credentials, unreachable). */
store_status plain_check(plain_fs *p, sv_error *err);

/* Whether a key names a Parquet file (".parquet"). */
bool plain_is_parquet_name(const char *key);

/* Attributes of a tree node. */
void plain_attr(const plain_fs *p, const tree_attr *ta, sv_attr *out);
/* These return 0 or -errno. A lookup or readdir that has to list the
 * directory first obeys tok (may be NULL): when it fires, -ETIMEDOUT,
 * -EINTR or -ESHUTDOWN (its reason). */
int plain_lookup(plain_fs *p, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok);
int plain_getattr(plain_fs *p, uint64_t ino, sv_attr *out);
/* The children of a directory (no "." or ".."), without the _delta_log/
 * entries after the version the mount shows. */
int plain_readdir(plain_fs *p, uint64_t ino, tree_dir_snapshot *out, const sv_cancel *tok);
/* Whether name in directory parent is hidden: a _delta_log/ entry after
 * the version the mount shows. Lookups answer ENOENT for it. */
bool plain_hidden(plain_fs *p, uint64_t parent, const char *name, const sv_cancel *tok);
/* 0 or -errno of a tree call; a cancelled one gives its token's reason. */
int plain_tree_errno(store_status st, const sv_cancel *tok);
/* The object version a file inode stands for. */
int plain_bind_object(plain_fs *p, uint64_t ino, object_ref *out);
/* Readers will open the Parquet files of table directory dir_ino (a view's
 * hint names it); ft (may be NULL: none read): the parsed footer of one of
 * them, of size bytes, whose tail tells how much of each file's end to
 * fetch ahead (table_ahead_expect). Never waits for I/O. */
void plain_table_expected(plain_fs *p, uint64_t dir_ino, const parquet_footer *ft, uint64_t size);

ssize_t plain_getxattr(plain_fs *p, uint64_t ino, const char *name, char *buf, size_t size);
ssize_t plain_listxattr(plain_fs *p, uint64_t ino, char *buf, size_t size);

/* An open object: its version, its footer (Parquet files) and the pattern of
 * the reader's reads. */
typedef struct {
    object_ref obj;
    const parquet_footer *footer; /* referenced; NULL for other files */
    column_set *columns;          /* referenced: its table's columns read; NULL without a layout */
    read_pattern pattern;
} plain_file;

/* Open file inode ino. A .parquet file gets its footer (read once per
 * version); other files, with fetch_tail, their tail in the background in
 * case it is a footer. tok (may be NULL): the opener's; interrupted while
 * the footer loads, the open fails with -EINTR (-EIO on shutdown). */
int plain_file_open(plain_fs *p, uint64_t ino, bool fetch_tail, plain_file *f, const sv_cancel *tok);
void plain_file_close(plain_fs *p, plain_file *f);
/* The column-chunk layout when the file's footer parsed, else NULL. */
const parquet_layout *plain_file_layout(const plain_file *f);

/* A reader's read: the blocks of [off, off+size) pinned (iov points into
 * them until object_pins_release), with prefetch started for what the
 * reader will want next. The byte count, 0 at EOF, or -errno. */
ssize_t plain_file_read(plain_fs *p, plain_file *f, uint64_t off, size_t size, struct iovec *iov,
                        size_t maxiov, size_t *niov, object_pins *pins, object_read_tally *tally,
                        const sv_cancel *tok);

#endif
