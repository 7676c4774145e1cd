/* The vocabulary of filesystem operations, shared by the plain tree, the
 * views, the .sieve control files and the FUSE adapter: attributes, open
 * flags and directory listings. No FUSE types. */
#ifndef SIEVE_VFS_TYPES_H
#define SIEVE_VFS_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Inodes of the virtual files; the tree numbers its nodes from TREE_FIRST_INO. */
#define SV_INO_CONTROL 2u /* MOUNTPOINT/.sieve (hidden from the root listing) */
#define SV_INO_STATS   3u /* MOUNTPOINT/.sieve/stats */
#define SV_INO_HINTS   4u /* MOUNTPOINT/.sieve/hints */
#define SV_INO_VIEWS   5u /* MOUNTPOINT/.sieve/views */
#define SV_INO_PROFILE 6u /* MOUNTPOINT/.sieve/profile */
#define SV_INO_TABLES  7u /* MOUNTPOINT/.sieve/tables */
/* Inodes under .sieve/tables carry this bit (fs/table/table_namespace.h);
 * no other namespace uses it. */
#define SV_INO_TABLE_NS_FLAG (1ull << 61)
#define SV_CONTROL_DIR ".sieve"

typedef struct {
    uint64_t ino;
    mode_t mode;   /* S_IFDIR|0555, S_IFREG|0444, ... */
    uint64_t size;
    int64_t mtime;
    uint32_t nlink;
    double timeout; /* seconds the kernel may cache this entry and its attributes */
    /* When > 0, seconds the kernel may keep the name -> inode mapping, if
     * shorter than timeout: a file inode (one object version) never changes,
     * but the version a name stands for does. */
    double entry_timeout;
} sv_attr;

/* A name an operation removed from a directory other than the one it
 * operated in (removing a hint removes its view's directory): the adapter
 * tells the kernel to drop what it cached for it. */
#define SV_STALE_NAME_MAX 256
typedef struct {
    uint64_t parent; /* 0: nothing became stale */
    char name[SV_STALE_NAME_MAX];
} sv_stale_entry;

typedef struct {
    bool direct_io;  /* only for virtual files whose content changes */
    bool keep_cache; /* data files: objects are immutable per inode */
} sv_open_flags;

typedef struct {
    char *name;
    uint64_t ino;
    mode_t mode;
} sv_dirent;

/* A directory's entries, as opendir snapshots them. */
typedef struct {
    sv_dirent *entries;
    size_t n, cap;
} sv_dirents;

/* Append a copy of name: false when out of memory. */
bool sv_dirents_push(sv_dirents *d, const char *name, uint64_t ino, mode_t mode);
void sv_dirents_free(sv_dirents *d);

#endif
