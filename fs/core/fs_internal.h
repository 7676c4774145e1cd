/* Private to fs.c and view.c: the filesystem's state and the read-path
 * helpers views build on. Nothing here is FUSE-specific. */
#ifndef SIEVE_FS_INTERNAL_H
#define SIEVE_FS_INTERNAL_H
#include <pthread.h>

#include "block_cache.h"
#include "fs.h"
#include "parquet_layout.h"
#include "tree.h"

#define MAX_RUN_BLOCKS 1024 /* blocks per ranged GET; also bounded by max_request */

struct sv_view;
struct view_registry;

struct sv_fs {
    s3_client *client;
    sv_stats *stats;
    tree *tree;
    block_cache *cache;
    sv_fs_config cfg;
    uid_t uid;
    gid_t gid;
    int64_t start_time;
    pthread_mutex_t handles_lock; /* guards the handles list */
    sv_handle handles;            /* sentinel of the open files and directories */
    struct view_registry *views;  /* hints and views (view.c); has its own lock */
    bool destroying;              /* sv_fs_destroy is freeing leftover handles */
};

/* What an open handle is. */
typedef enum {
    SV_FILE_DATA = 0,   /* an S3 object (plain path) */
    SV_FILE_VIRTUAL,    /* a snapshot of generated text (stats, hint .error/.stats) */
    SV_FILE_VIEW,       /* an S3 object seen through a view */
    SV_FILE_HINT_WRITE, /* a hint being written */
} sv_file_kind;

/* Per open file. The sequential-read state has its own lock because the
 * kernel sends reads of one handle from several FUSE threads at once. */
struct sv_file {
    sv_handle handle; /* first member: the registry links it */
    sv_file_kind kind;
    uint64_t ino;      /* object id in the block cache: the plain-path inode */
    bool is_virtual;
    char *virt;        /* rendered content of a virtual file */
    size_t virt_len;
    char *key;
    char etag[S3_ETAG_MAX + 1];
    uint64_t size;

    pthread_mutex_t seq_lock; /* guards the fields below */
    uint64_t seq_next;        /* where a sequential reader would read next */
    uint64_t streak_bytes;    /* bytes read in the current sequential streak */
    uint64_t prefetched_to;   /* end of what prefetch has already requested */
    size_t last_chunk;        /* chunk of the previous read, or SIZE_MAX */
    size_t entered_chunk;     /* chunk the reads ran on into, or SIZE_MAX */
    uint64_t entered_at;      /* where they entered it */
    uint8_t *chunk_fetched;   /* per layout chunk: whole-chunk prefetch started */

    bool has_layout;          /* a Parquet file whose footer parsed */
    parquet_layout layout;

    /* SV_FILE_VIEW */
    struct sv_view *view;     /* referenced while open */
    struct view_file *vf;     /* the file's plan in that view, referenced */

    /* SV_FILE_HINT_WRITE */
    char *hint_name;          /* NAME of NAME.json */
    char *wbuf;               /* the document written so far */
    size_t wlen, wcap;
    bool written;             /* a write arrived since the last check */
    bool too_big;             /* a write went past HINT_MAX_BYTES */
    int verdict;              /* 0 or -errno of the last check */
};

/* Real bytes of the object behind f (through the block cache), for sievefs's
 * own use: no reader statistics, no prefetch decisions. Returns the byte
 * count (short only at EOF) or -errno. */
ssize_t fs_read_real(sv_fs *fs, sv_file *f, uint64_t off, size_t size, uint8_t *buf);
/* The plain path's column-chunk prefetch for a reader's read at [off, off+size)
 * (whole chunk once the reader has really started it). */
void fs_chunk_prefetch(sv_fs *fs, sv_file *f, uint64_t off, size_t size);
/* Start fetching [start, end) of f into the block cache (demand priority). */
void fs_prefetch_real(sv_fs *fs, sv_file *f, uint64_t start, uint64_t end);
/* The same in parallel parts, as a column chunk is fetched on the plain path. */
void fs_prefetch_real_parts(sv_fs *fs, sv_file *f, uint64_t start, uint64_t end);
/* Reader-facing read of real bytes into buf (counts as the reader's). */
ssize_t fs_read_for_reader(sv_fs *fs, sv_file *f, uint64_t off, size_t size, uint8_t *buf);

/* Fill the object fields of f (key, etag, size, ino) for plain-path inode
 * base_ino; 0 or -errno. */
int fs_file_bind_object(sv_fs *fs, sv_file *f, uint64_t base_ino);
void fs_file_init_seq(sv_file *f);
/* Whether a key names a Parquet file (".parquet"). */
bool fs_is_parquet_name(const char *key);
void fs_handle_register(sv_fs *fs, sv_handle *h, bool is_dir);
/* Attributes of a plain-path node, and the errno (negative) of a status. */
void fs_tree_attr(const sv_fs *fs, const tree_attr *ta, sv_attr *out);
int fs_status_errno(s3_status st);

#endif
