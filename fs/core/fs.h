/* The filesystem as the FUSE adapter calls it. fs.c only routes: an inode
 * belongs to the plain tree (fs/object/plain.h), to the .sieve control files
 * (control.h) or to the hints and views (fs/view/view.h), and each call goes
 * to its owner. No FUSE types appear here; calls return 0 or a byte count,
 * or a negative errno, which the adapter passes back as it is. */
#ifndef SIEVE_FS_H
#define SIEVE_FS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "link_profile.h"
#include "object_read.h"
#include "link_profile.h"
#include "object_store.h"
#include "partial_memory.h"
#include "plain.h"
#include "stats.h"
#include "sv_cancel.h"
#include "sv_error.h"
#include "vfs_types.h"

/* --read-timeout's default. A read that has not completed in this long is
 * not coming: a healthy link moves the largest read (1 MiB, or a 16 MiB
 * GET it waits on) in well under a second, and the store's own retries of a
 * stalled request take tens of seconds; a reader (DuckDB, Spark) rather
 * gets EIO and its own retry than hangs for minutes. */
#define SV_READ_TIMEOUT_DEFAULT_MS 60000u

typedef struct {
    plain_config plain;    /* the plain tree, its caches and prefetch; plain.read_timeout_ms: --read-timeout;
                              plain.table_version: --version, --timestamp */
    /* The mount's measured link, which views price their plans with
     * (profiler/cost_model.h); NULL: no profile, so views read pages with
     * selected rows whole. Owned by the caller; must outlive the fs. */
    link_profile *profile;
    /* --request-cost: >= 0 prices every request at this many bytes (rounds
     * free) instead of the profile; for experiments. Default -1. */
    int64_t request_cost_override;
    /* Bytes the views may hold for partial reads (planning buffers and page
     * images, --partial-memory); over it, pages are read the ordinary way.
     * Default PARTIAL_MEMORY_DEFAULT. */
    uint64_t partial_memory;
    /* --cache-dir: where walked page maps are kept across mounts (an
     * existing directory), or NULL. Owned by the caller. */
    const char *cache_dir;
    /* --control-dir: the name of the control directory in the mount's root
     * (default SV_CONTROL_DIR, ".sieve"); copied at creation. A bucket's
     * own object or prefix of that name is hidden behind it. */
    const char *control_dir;
} sv_fs_config;

void sv_fs_config_defaults(sv_fs_config *cfg);

typedef struct sv_fs sv_fs;
typedef struct sv_handle sv_file; /* an open file: one of the handle kinds of handle.h */
typedef struct sv_dir sv_dir;

/* The store must outlive the filesystem. */
sv_fs *sv_fs_create(object_store *store, sv_stats *stats, const sv_fs_config *cfg);
void sv_fs_destroy(sv_fs *fs);

/* List the root once; fails (with err) when the bucket or prefix cannot be
 * listed, e.g. unknown bucket, bad credentials, unreachable endpoint. */
store_status sv_fs_check(sv_fs *fs, sv_error *err);
/* After sv_fs_check: whether the root holds an object or prefix named like
 * the control directory, which the control directory then hides. */
bool sv_fs_control_dir_collides(sv_fs *fs);

/* Whether object key (a full S3 key) is a file the mount's Delta tables
 * read now: not under a table, or in its table's current snapshot (which is
 * loaded if need be). True when that cannot be told. */
bool sv_fs_key_is_current(sv_fs *fs, const char *key, const sv_cancel *tok);

/* Lookups and opendir may list a directory first: tok (from
 * sv_fs_cancel_init, may be NULL) bounds that as it bounds a read; past its
 * deadline they fail with -EIO (logged), interrupted with -EINTR. */
int sv_fs_lookup(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok);
int sv_fs_getattr(sv_fs *fs, uint64_t ino, sv_attr *out);

/* A snapshot of a directory's entries, "." and ".." first. */
int sv_fs_opendir(sv_fs *fs, uint64_t ino, sv_dir **out, const sv_cancel *tok);
const sv_dirents *sv_dir_entries(const sv_dir *d);
void sv_fs_releasedir(sv_fs *fs, sv_dir *d);

/* tok (from sv_fs_cancel_init, may be NULL): an open waits for a Parquet
 * footer to load, and fails with -EINTR when tok is cancelled meanwhile. */
int sv_fs_open(sv_fs *fs, uint64_t ino, int flags, sv_file **out, sv_open_flags *of, const sv_cancel *tok);

/* A read's cancellation token: the mount's read deadline (--read-timeout)
 * from now, cancelled by sv_fs_shutdown. The caller may cancel it too
 * (sv_cancel_fire(tok, EINTR) when the kernel interrupts the request). */
void sv_fs_cancel_init(sv_fs *fs, sv_cancel *tok);
/* The mount is going away: every wait of a read in progress, and of every
 * later one, gives up within a wait slice, and the reads fail with EIO.
 * Fetches in flight go on until the store is destroyed. Async-signal-safe. */
void sv_fs_shutdown(sv_fs *fs);

/* Zero-copy read: iov entries point into cache blocks (or a private copy)
 * held until sv_fs_read_release. Returns the byte count (iov filled, *niov
 * set) or -errno (nothing held). Reads longer than (SV_READ_MAX_IOV - 1)
 * blocks get -EINVAL. Waits obey tok (from sv_fs_cancel_init): past its
 * deadline the read fails with -EIO (logged with the object and offset),
 * cancelled with EINTR it fails with -EINTR at once; the fetches it started
 * go on in the background. */
#define SV_READ_MAX_IOV 264 /* a 1 MiB read (the largest) of 4 KiB blocks, unaligned: 257 */
typedef struct {
    object_pins obj; /* blocks of the plain path */
    void *owned;     /* a private copy (virtual files, view reads with synthesized bytes), freed on release */
    size_t owned_bytes; /* its size, counted in the mount's memory budget until release */
    struct view_file *synthesized; /* a view file whose synthesized bytes these are (view_reply_sent) */
} sv_read_pins;
ssize_t sv_fs_read_pinned(sv_fs *fs, sv_file *f, uint64_t off, size_t size, struct iovec *iov,
                          size_t maxiov, size_t *niov, sv_read_pins *pins, const sv_cancel *tok);
void sv_fs_read_release(sv_fs *fs, sv_read_pins *pins);
void sv_fs_release(sv_fs *fs, sv_file *f);

/* Writable files exist only under MOUNTPOINT/.sieve/hints (see view.h);
 * everywhere else these return -EROFS. */
int sv_fs_create_file(sv_fs *fs, uint64_t parent, const char *name, int flags, sv_file **out,
                      sv_attr *attr);
ssize_t sv_fs_write(sv_fs *fs, sv_file *f, uint64_t off, const char *buf, size_t size);
/* Called on every close(): a hint written through f is checked here, so the
 * writer's close() reports a rejected hint. */
int sv_fs_flush(sv_fs *fs, sv_file *f);
/* Truncate ino (f is the open handle, when the kernel names one). */
int sv_fs_truncate(sv_fs *fs, uint64_t ino, sv_file *f, uint64_t size);
/* *stale: an entry elsewhere the removal made stale (parent 0 if none). */
int sv_fs_unlink(sv_fs *fs, uint64_t parent, const char *name, sv_stale_entry *stale);
/* Names the kernel may still map to a replaced or removed object's inode
 * (listing refreshes found them changed): up to max, oldest first; the
 * adapter invalidates them. */
size_t sv_fs_take_stale(sv_fs *fs, sv_stale_entry *out, size_t max);
/* Whether ino is a hint file (the only files whose attributes may change). */
bool sv_fs_is_writable(sv_fs *fs, uint64_t ino);

/* Value length, or -errno (-ENODATA, -ERANGE when size is too small and non-zero). */
ssize_t sv_fs_getxattr(sv_fs *fs, uint64_t ino, const char *name, char *buf, size_t size);
ssize_t sv_fs_listxattr(sv_fs *fs, uint64_t ino, char *buf, size_t size);

#endif
