/* The filesystem core: namespace (tree), open files, the read path with its
 * block cache and prefetcher, and the virtual .sieve control directory. No
 * FUSE types appear here: the adapter in fs/fuse translates calls and maps
 * the negative errno values these functions return. */
#ifndef SIEVE_FS_H
#define SIEVE_FS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "s3_client.h"
#include "stats.h"

#define SV_INO_CONTROL 2u /* MOUNTPOINT/.sieve (hidden from the root listing) */
#define SV_INO_STATS   3u /* MOUNTPOINT/.sieve/stats */
#define SV_CONTROL_DIR ".sieve"

#define SV_XATTR_KEY  "user.sievefs.key"
#define SV_XATTR_ETAG "user.sievefs.etag"

/* 150 Mbit/s x 200 ms / 32 requests in flight is about 117 KB; 1 Gbit/s x
 * 25 ms / 32 about 98 KB. Too high costs a view little (pages read whole);
 * too low costs many small requests, so the default leans high. */
#define SV_DEFAULT_REQUEST_COST (128u << 10)

typedef struct {
    const char *prefix;        /* "" or ending in '/' */
    uint64_t cache_bytes;      /* block cache limit */
    uint32_t block_size;       /* cache block, bytes */
    uint64_t max_request;      /* largest single ranged GET */
    uint64_t max_window;       /* largest sequential prefetch window */
    uint64_t min_streak;       /* sequential bytes read before prefetch starts */
    uint64_t tail_bytes;       /* fetched from the end of a file at open (footer) */
    uint64_t dir_ttl_ms;       /* listing cache TTL */
    uint64_t delta_log_ttl_ms; /* same under _delta_log/ */
    double file_attr_timeout_s;
    double delta_log_attr_timeout_s;
    double dir_attr_timeout_s;
    /* What one more S3 request is worth in transferred bytes, for the views'
     * partial-read decisions: gaps shorter than this are read through, and a
     * page is read partially only when that still saves after this much per
     * request. 0: bytes alone count. Until the connection profiler measures
     * it, about bandwidth x round trip / parallel requests. */
    uint32_t request_cost;
} sv_fs_config;

void sv_fs_config_defaults(sv_fs_config *cfg);

typedef struct sv_fs sv_fs;
typedef struct sv_file sv_file;

typedef struct {
    uint64_t ino;
    mode_t mode;   /* S_IFDIR|0555 or S_IFREG|0444 */
    uint64_t size;
    int64_t mtime;
    uint32_t nlink;
    double timeout; /* seconds the kernel may cache this entry and its attributes */
} sv_attr;

sv_fs *sv_fs_create(s3_client *client, sv_stats *stats, const sv_fs_config *cfg);
void sv_fs_destroy(sv_fs *fs);

/* List the root once; fails (with a message) when the bucket or prefix cannot
 * be listed, e.g. unknown bucket, bad credentials, unreachable endpoint. */
s3_status sv_fs_check(sv_fs *fs, char *err, size_t errlen);

int sv_fs_lookup(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out);
int sv_fs_getattr(sv_fs *fs, uint64_t ino, sv_attr *out);

typedef struct {
    char *name;
    uint64_t ino;
    mode_t mode;
} sv_dirent;

/* Open files and directories are registered with their sv_fs, so that the
 * ones the kernel has not released yet when the mount ends (RELEASE is sent
 * asynchronously after close) are freed by sv_fs_destroy. */
typedef struct sv_handle {
    struct sv_handle *prev, *next;
    bool is_dir;
} sv_handle;

typedef struct {
    sv_handle handle;   /* private */
    sv_dirent *entries; /* ".", ".." and the children */
    size_t n;
} sv_dir;

int sv_fs_opendir(sv_fs *fs, uint64_t ino, sv_dir **out);
void sv_fs_releasedir(sv_fs *fs, sv_dir *d);

typedef struct {
    bool direct_io;  /* only for virtual files whose content changes */
    bool keep_cache; /* data files: objects are immutable per inode */
} sv_open_flags;

int sv_fs_open(sv_fs *fs, uint64_t ino, int flags, sv_file **out, sv_open_flags *of);
/* Read up to size bytes at off into buf: the byte count (0 at EOF) or -errno.
 * Reads longer than (SV_READ_MAX_IOV - 1) blocks are shortened. */
ssize_t sv_fs_read(sv_fs *fs, sv_file *f, uint64_t off, size_t size, char *buf);

/* Zero-copy read: iov entries point into cache blocks that stay pinned until
 * sv_fs_read_release. Returns the byte count (iov filled, *niov set) or -errno
 * (nothing pinned). -EINVAL when the read spans more than maxiov blocks. */
#define SV_READ_MAX_IOV 128
typedef struct {
    struct cache_block **blocks;
    size_t n;
    void *owned; /* a private copy (virtual files), freed on release */
    bool streaming;    /* part of a long sequential read: blocks read past are recycled */
    uint64_t read_end; /* end offset of the read */
} sv_read_pins;
ssize_t sv_fs_read_pinned(sv_fs *fs, sv_file *f, uint64_t off, size_t size, struct iovec *iov,
                          size_t maxiov, size_t *niov, sv_read_pins *pins);
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
int sv_fs_unlink(sv_fs *fs, uint64_t parent, const char *name);
/* Whether ino is a hint file (the only files whose attributes may change). */
bool sv_fs_is_writable(sv_fs *fs, uint64_t ino);

/* Value length, or -errno (-ENODATA, -ERANGE when size is too small and non-zero). */
ssize_t sv_fs_getxattr(sv_fs *fs, uint64_t ino, const char *name, char *buf, size_t size);
ssize_t sv_fs_listxattr(sv_fs *fs, uint64_t ino, char *buf, size_t size);

#endif
