/* A file's plan in a view. Prepared on the first read: the footer (shared
 * with the plain path) and a table of column chunks sorted by offset. The
 * hint's selection per row group is evaluated when a read first touches a
 * chunk that can be sieved (view_chunk_needs_selection): the footer, the
 * filter columns and chunks no page of which can be sieved are served
 * without waiting for it. Chunks are then planned page by page when first
 * read (chunk_plan.h). Anything that fails leaves the file served real, with
 * why_real saying why.
 *
 * Locking: the view's lock guards its list of files and each file's refs;
 * a file's lock guards its state, its chunks' state and its counters.
 * Preparing and planning run outside the lock, claimed by one thread (state
 * VF_PREPARING, CH_PLANNING) while others wait on cond. A planned chunk is
 * immutable, so reads serve it without the lock. */
#ifndef SIEVE_VIEW_FILE_H
#define SIEVE_VIEW_FILE_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "footer_cache.h"
#include "log_actions.h"
#include "page_map.h"
#include "page_plan.h"
#include "plain.h"
#include "predicate.h"
#include "row_ranges.h"
#include "view_registry.h"
#include "view_stats.h"

typedef enum { VP_REAL = 0, VP_SPARSE } vpage_kind;

/* One page of a planned chunk: real, or an image of pieces over zeros. */
typedef struct {
    vpage_kind kind;
    pp_piece *pieces;
    uint32_t n_pieces;
} vpage;

typedef enum { CH_UNPLANNED = 0, CH_PLANNING, CH_PLANNED } chunk_state;

typedef struct {
    uint64_t start, end;   /* the column chunk's bytes */
    uint32_t rg, col;
    chunk_state state;
    bool real;             /* the whole chunk is served real */
    bool all_real;         /* real, or planned with no sparse page: read like the plain path */
    bool counted;          /* its bytes were added to the ordinary total */
    bool file_cost;        /* counted as file_cost once (set by its planning thread) */
    pq_page_map pm;
    vpage *pages;          /* per pm page when !real */
    uint64_t image_bytes;  /* bytes of its page images, held in the partial-memory budget */
} vchunk;

typedef enum { VF_NEW = 0, VF_PREPARING, VF_READY, VF_REAL } vf_state;
typedef enum { SEL_PENDING = 0, SEL_RUNNING, SEL_DONE } sel_state;

typedef struct view_file {
    struct view_file *next;
    uint64_t base_ino;
    int refs;                     /* under the view's lock */
    char *relpath;
    footer_cache *footers;        /* where footer came from */
    partial_memory *mem;          /* the budget its page images are held in (read-only) */

    pthread_mutex_t lock;         /* guards everything below */
    pthread_cond_t cond;
    vf_state state;
    char why_real[256];
    const parquet_footer *footer; /* referenced once prepared */
    const pq_file_meta *meta;     /* footer->meta */
    sel_state selection;          /* sel and selected_rows are valid once SEL_DONE */
    row_ranges *sel;              /* per row group, rows relative to the group */
    pred_bound *pred;             /* the hint's predicate bound to meta; NULL without one */
    bool select_none;             /* the Delta log excludes every row of the file: */
    const char *excluded_by;      /* "partition_values" or "log_stats" (static strings) when select_none */
    const delta_add *add;         /* the file in the view's table snapshot (view_table.h), or NULL */
    bool *filter_col;             /* per leaf */
    bool *want_col;               /* per leaf: named by the hint's columns (or all) */
    vchunk *chunks;               /* n_row_groups * n_leaves */
    size_t n_chunks;
    size_t *by_start;             /* chunk indices sorted by start */
    uint64_t total_rows, selected_rows;
    bool columns_planned;         /* the hint's columns were planned together */
    /* Served real from now on: a version the table gained since the plan
     * was made would read the file otherwise (why_demoted says why; not
     * why_real, which preparation writes without the lock). */
    bool demoted;
    char why_demoted[256];
    uint32_t synth_in_flight;     /* replies with synthesized bytes not yet sent to the kernel */
    view_counters counts;
} view_file;

/* The plan of a plain-path file in view v (created on first use), with a
 * reference taken; NULL when out of memory. Plans stay with the view until
 * it goes. */
view_file *view_file_get(sv_view *v, uint64_t base_ino, const char *relpath, footer_cache *footers,
                         partial_memory *mem);
void view_file_put(sv_view *v, view_file *vf);
void view_file_free(view_file *vf);

/* Make the file ready: VF_READY, or VF_REAL with why_real. Called with
 * vf->lock held; may release it while preparing. 0, or -errno when tok
 * gave up waiting for another reader's preparation (which goes on). */
int view_file_ensure_prepared(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf,
                              const sv_cancel *tok);

/* Whether chunk ch (of a VF_READY file) must wait for the selection before
 * it is planned: a column the hint wants, not a filter column, not nested,
 * with a page map (view_chunk_has_page_map) in an object of `size` bytes:
 * without one, no page of it can be sieved yet. */
bool view_chunk_needs_selection(const view_file *vf, const vchunk *ch, uint64_t size);

/* Whether a leaf is flat enough to sieve: not repeated, at most optional. */
bool view_leaf_is_flat(const pq_leaf *lf);

/* Whether a page map of chunk (rg, col) can be had: an OffsetIndex within
 * the object's `size` bytes, metadata that allows one data page
 * (pq_page_map_predict_single_page), or else page headers a walk can start
 * at (header_walk.h; whether it finishes is known once walked). */
bool view_chunk_has_page_map(const pq_file_meta *m, uint32_t rg, uint32_t col, uint64_t size);

/* Whether cc's OffsetIndex lies within a file of `size` bytes, at a sane size. */
bool view_chunk_has_offset_index(const pq_column_chunk *cc, uint64_t size);

/* Whether chunk (rg, col) gets its page map from a walk of its headers:
 * flat, no OffsetIndex, and its metadata rules out the one-page prediction. */
bool view_chunk_wants_header_walk(const pq_file_meta *m, uint32_t rg, uint32_t col, uint64_t size);

/* Evaluate the selection of a VF_READY file: SEL_DONE, or VF_REAL with
 * why_real when it failed or tok gave up on it (every byte served until then
 * was real: nothing sieved waits for it). Called with vf->lock held; may
 * release it. 0, or -errno when tok gave up waiting for another reader's
 * evaluation (which goes on). */
int view_file_ensure_selected(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf,
                              const sv_cancel *tok);

/* Serve the file real from now on (why goes to why_demoted), and wait until
 * the replies with synthesized bytes already made have reached the kernel,
 * so that an open that then drops the kernel's cached pages drops them all:
 * 0, or -errno when tok gave up waiting. Called without vf->lock. */
int view_file_demote(view_file *vf, const char *why, const sv_cancel *tok);
/* A reply counted in synth_in_flight has been sent. */
void view_file_synth_done(view_file *vf);

/* The chunk holding off, or NULL (then *ci is the position in by_start of
 * the next chunk). */
const vchunk *view_chunk_at(const view_file *vf, uint64_t off, size_t *ci);
/* The piece of [pos, end) a read serves in one go: the chunk holding pos
 * (set in *ch), or the gap before the next chunk (*ch NULL). Returns its end. */
uint64_t view_piece_at(const view_file *vf, uint64_t pos, uint64_t end, const vchunk **ch);
/* Index of the first page of a planned chunk that ends after off. */
uint32_t vchunk_first_page_after(const vchunk *ch, uint64_t off);

#endif
