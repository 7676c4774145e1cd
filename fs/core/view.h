/* Selection hints and query views (the .sieve/hints and .sieve/views trees).
 *
 *   MOUNTPOINT/.sieve/hints/NAME.json    written by the query; read back as written
 *   MOUNTPOINT/.sieve/hints/NAME.error   why the last NAME.json was rejected
 *   MOUNTPOINT/.sieve/hints/NAME.stats   JSON counters of the view
 *   MOUNTPOINT/.sieve/views/NAME/        a mirror of the mount, served through the hint
 *
 * Inodes: .sieve/hints and .sieve/views are fixed; a hint's files carry
 * VIEW_HINT_FLAG with the hint's id; a file or directory in a view is
 * (view id << VIEW_ID_SHIFT) | its plain-path inode. Ids are never reused,
 * so a view created again under the same name has new inodes (and a new
 * mtime on every file): no cache keyed by inode or mtime can replay the old
 * view's bytes.
 *
 * Locking: the registry lock guards the list of hint records; a view's own
 * lock guards its per-file plans; a view file's lock guards its state and
 * chunk plans (planning and fetching run outside it, claimed by one thread).
 * Views and view files are reference counted so that removing a hint never
 * pulls a plan from under an open file. */
#ifndef SIEVE_VIEW_H
#define SIEVE_VIEW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs.h"

#define SV_INO_HINTS 4u
#define SV_INO_VIEWS 5u
#define VIEW_ID_SHIFT 40
#define VIEW_BASE_MASK ((1ull << VIEW_ID_SHIFT) - 1)
#define VIEW_HINT_FLAG (1ull << 62)
#define VIEW_MAX_HINTS 256u       /* hint records (accepted, rejected or being written) */
#define VIEW_MAX_ID ((1u << 21) - 1)

struct view_registry;

struct view_registry *views_create(void);
void views_destroy(struct view_registry *r);

/* Whether ino belongs to the hints/views namespace (served by this module). */
bool views_owns(uint64_t ino);

/* Whether ino is a file under .sieve/hints. */
bool views_is_hint_file(uint64_t ino);

int views_lookup(sv_fs *fs, uint64_t parent, const char *name, sv_attr *out);
int views_getattr(sv_fs *fs, uint64_t ino, sv_attr *out);
int views_opendir(sv_fs *fs, uint64_t ino, sv_dir *d);
int views_open(sv_fs *fs, uint64_t ino, int flags, sv_file *f, sv_open_flags *of);
/* Reads of SV_FILE_VIEW handles: bytes into buf, or -errno. */
ssize_t views_read(sv_fs *fs, sv_file *f, uint64_t off, size_t size, uint8_t *buf);
void views_release(sv_fs *fs, sv_file *f);

/* Writing hints. */
int views_create_file(sv_fs *fs, uint64_t parent, const char *name, int flags, sv_file *f,
                      sv_attr *out);
ssize_t views_write(sv_fs *fs, sv_file *f, uint64_t off, const char *buf, size_t size);
/* Validate what was written and create the view: 0 or -errno (the message
 * goes to NAME.error). Runs on flush and again on release if needed. */
int views_flush(sv_fs *fs, sv_file *f);
int views_truncate(sv_fs *fs, uint64_t ino, sv_file *f, uint64_t size);
int views_unlink(sv_fs *fs, uint64_t parent, const char *name);

#endif
