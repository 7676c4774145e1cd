/* Hint records: one per name under .sieve/hints, with its document, its
 * verdict and, once accepted, its view. Records get an id that is never
 * reused, so a view made again under the same name has new inodes (and a
 * new mtime on every file): no cache keyed by inode or mtime can replay the
 * old view's bytes.
 *
 * Inodes: .sieve/hints and .sieve/views are fixed (vfs_types.h); a hint's
 * files carry VIEW_HINT_FLAG with the record's id; a file or directory in a
 * view is (id << VIEW_ID_SHIFT) | its plain-path inode.
 *
 * Locking: the registry lock guards the list of records and the fields of
 * each record marked so below; a record's own lock guards its file plans.
 * Records are reference counted so that removing a hint never pulls a plan
 * from under an open file. */
#ifndef SIEVE_VIEW_REGISTRY_H
#define SIEVE_VIEW_REGISTRY_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hint.h"
#include "view.h"

#define VIEW_ID_SHIFT 40
#define VIEW_BASE_MASK ((1ull << VIEW_ID_SHIFT) - 1)
#define VIEW_HINT_FLAG (1ull << 62)
#define VIEW_MAX_HINTS 256u /* records (accepted, rejected or being written) */
#define VIEW_MAX_ID ((1u << 21) - 1)
#define VIEW_NAME_MAX 128u

/* WRITING: created, no verdict yet; CHECKING: one writer's document is being
 * judged (others get EBUSY meanwhile); then ACCEPTED or REJECTED. */
typedef enum { HINT_WRITING = 0, HINT_CHECKING, HINT_ACCEPTED, HINT_REJECTED } hint_state;

/* The three files of a record under .sieve/hints. */
typedef enum { HF_JSON = 0, HF_ERROR = 1, HF_STATS = 2 } hint_file_kind;

struct view_file;

typedef struct sv_view {
    char name[VIEW_NAME_MAX + 1];
    uint32_t id;           /* unique for the life of the mount */
    atomic_int refs;       /* the registry's (while listed) + open handles */
    /* Under the registry lock: */
    hint_state state;
    int64_t mtime;         /* of every file in the view */
    char *json;            /* the accepted document */
    size_t json_len;
    char *error;           /* the last rejection, or NULL */
    sv_hint *hint;         /* set once, when accepted; read without the lock after */
    struct view_table *table; /* the hint's table (view_table.h), or NULL; set with hint */
    int writers;           /* handles open for writing NAME.json */
    bool detached;         /* removed from the registry */

    pthread_mutex_t lock;  /* guards files */
    struct view_file *files;
} sv_view;

struct view_registry {
    view_env env;          /* read-only */
    pthread_mutex_t lock;  /* guards recs, n, next_id, last_mtime and the record fields above */
    sv_view *recs[VIEW_MAX_HINTS];
    size_t n;
    uint32_t next_id;
    int64_t last_mtime;
};

uint64_t view_hint_ino(uint32_t id, hint_file_kind k);
uint64_t view_ino(uint32_t id, uint64_t base);
/* The record id of a hint-file inode or of an inode in a view. */
uint32_t view_id_of(uint64_t ino);

/* Split "NAME.ext" into a record name and a hint file kind. */
bool view_parse_hint_filename(const char *fname, char *name, size_t cap, hint_file_kind *kind);

/* A new reference to the record of that name or id, or NULL. */
sv_view *view_find_by_name(view_registry *r, const char *name);
sv_view *view_find_by_id(view_registry *r, uint32_t id);
/* The record a file name under .sieve/hints belongs to (a new reference),
 * and which of its files it names; NULL when none. */
sv_view *view_find_hint_file(view_registry *r, const char *fname, hint_file_kind *k);
/* The record of that name for a new writer (created WRITING when absent, a
 * rejected one writing again), its writer count raised and a reference
 * taken; NULL with *err -ENOSPC (no room) or -ENOMEM. */
sv_view *view_open_for_writing(view_registry *r, const char *name, int *err);
/* Remove v from the registry (drops the registry's reference). */
void view_registry_remove(view_registry *r, sv_view *v);
void view_unref(sv_view *v);

#endif
