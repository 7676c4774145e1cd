/* Selection hints and query views, as the router (fs/core/fs.c) sees them:
 *
 *   MOUNTPOINT/.sieve/hints/NAME.json    written by the query; read back as written
 *   MOUNTPOINT/.sieve/hints/NAME.error   why the last NAME.json was rejected
 *   MOUNTPOINT/.sieve/hints/NAME.stats   JSON counters of the view
 *   MOUNTPOINT/.sieve/views/NAME/        a mirror of the mount, served through the hint
 *
 * The module, one file per concept:
 *   view_registry  hint records (one per name), their ids and lifecycle
 *   view_namespace lookup, attributes, listings and opening under .sieve/hints and .sieve/views
 *   hint, hint_writer, hint_accept   parsing, writing and judging a hint
 *   view_file      a file's plan in a view: footer, selection, chunk table
 *   selection      evaluating the hint's predicate on a row group
 *   selection_ahead the filter chunks of the row groups ahead, fetched meanwhile
 *   chunk_plan     planning column chunks page by page, fetched in rounds
 *   plan_reason    the reason words of its decisions
 *   partial_memory the budget of planning buffers and page images
 *   view_read      serving a reader's reads from the plan
 *   view_stats     NAME.stats
 * Views read real bytes only through the plain path's object layer
 * (plain.h); the plain path never calls views. */
#ifndef SIEVE_VIEW_H
#define SIEVE_VIEW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "link_profile.h"
#include "page_map_cache.h"
#include "partial_memory.h"
#include "plain.h"
#include "table_registry.h"
#include "vfs_types.h"

typedef struct view_registry view_registry;
typedef struct view_reader view_reader;
typedef struct hint_writer hint_writer;

/* What views need from the rest of the filesystem. */
typedef struct {
    plain_fs *plain;       /* namespace, real bytes, footers */
    /* The measured link (may be NULL: no profile, no partial reads of pages
     * with selected rows). Read once per plan. */
    link_profile *profile;
    /* --request-cost: when >= 0, a request is priced at this many bytes and
     * rounds are free, whatever the profile says (experiments and tests). */
    int64_t request_cost_override;
    /* The budget of planning buffers and page images (NULL: unlimited). */
    partial_memory *partial_mem;
    /* Page maps walked from page headers, per object version (may be NULL). */
    page_map_cache *page_maps;
    /* The mount's Delta tables: hints naming a table bind to its snapshot. */
    table_registry *tables;
} view_env;

view_registry *views_create(const view_env *env);
void views_destroy(view_registry *r);

/* Whether ino belongs to the hints/views namespace (served by this module). */
bool views_owns(uint64_t ino);
/* Whether ino is a file under .sieve/hints (the only files whose attributes may change). */
bool views_is_hint_file(uint64_t ino);

/* parent: SV_INO_CONTROL (names "hints" and "views") or an inode views_owns. */
int views_lookup(view_registry *r, uint64_t parent, const char *name, sv_attr *out, const sv_cancel *tok);
int views_getattr(view_registry *r, uint64_t ino, sv_attr *out);
/* Every entry of a directory, "." and ".." first. */
int views_readdir(view_registry *r, uint64_t ino, sv_dirents *out, const sv_cancel *tok);

/* What opening an inode of this namespace gave. */
typedef struct {
    enum { VIEW_OPENED_TEXT, VIEW_OPENED_FILE, VIEW_OPENED_HINT } kind;
    char *text;            /* TEXT: a snapshot of NAME.json, .error or .stats (malloc'd) */
    size_t len;
    view_reader *reader;   /* FILE: a file seen through a view */
    hint_writer *writer;   /* HINT: NAME.json opened for writing */
} view_opened;

/* tok: the opener's (may be NULL), as plain_file_open. */
int views_open(view_registry *r, uint64_t ino, int flags, view_opened *out, sv_open_flags *of,
               const sv_cancel *tok);

/* Reads of a file through its view: bytes into buf (short only at EOF), or
 * -errno. Waits obey tok (the reader's deadline and interrupt; NULL: none). */
ssize_t view_reader_read(view_registry *r, view_reader *vr, uint64_t off, size_t size, uint8_t *buf,
                         const sv_cancel *tok);
/* The same read as iovecs for a reply without a copy: real bytes stay in
 * the block cache, pinned in pins (release with object_pins_release), and
 * a read with synthesized bytes is assembled into owned (malloc'd, the
 * caller frees it). iov has room for maxiov entries (SV_READ_MAX_IOV). */
typedef struct {
    struct iovec *iov;
    size_t maxiov, niov;
    object_pins pins;
    uint8_t *owned;
    /* Set when owned holds synthesized bytes: the caller calls
     * view_reply_sent with it once the reply has reached the kernel, so that
     * a file served real from then on (view_file.h, demoted) knows no such
     * reply is still on its way into the page cache. */
    struct view_file *synthesized;
} view_reply;
ssize_t view_reader_reply(view_registry *r, view_reader *vr, uint64_t off, size_t size, view_reply *out,
                          const sv_cancel *tok);
void view_reply_sent(struct view_file *synthesized);
void view_reader_close(view_registry *r, view_reader *vr);
uint64_t view_reader_size(const view_reader *vr);
const char *view_reader_key(const view_reader *vr); /* for messages */

/* Writing hints: create NAME.json in .sieve/hints, write it, and on flush
 * (every close()) judge it: 0, or -errno with the reason in NAME.error. */
int views_create_hint(view_registry *r, uint64_t parent, const char *name, hint_writer **out,
                      sv_attr *attr);
ssize_t hint_writer_write(hint_writer *w, uint64_t off, const char *buf, size_t size);
int hint_writer_flush(view_registry *r, hint_writer *w);
/* unmounting: the store is gone, so no verdict is reached any more. */
void hint_writer_close(view_registry *r, hint_writer *w, bool unmounting);
/* Truncate ino; w is the open writer when the kernel names one. */
int views_truncate(view_registry *r, uint64_t ino, hint_writer *w, uint64_t size);
/* Remove a hint file; removing an accepted hint's NAME.json also removes
 * .sieve/views/NAME, reported in *stale. */
int views_unlink(view_registry *r, uint64_t parent, const char *name, sv_stale_entry *stale);

#endif
