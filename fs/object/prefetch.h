/* What the plain path fetches ahead of a reader, from the pattern of its
 * reads on one open file:
 *  - Parquet-aware: a read that starts inside a column chunk fetches the rest
 *    of that chunk, in parallel parts, and nothing beyond it. A chunk the
 *    reads merely run on into (kernel readahead past the end of a read) is
 *    fetched only once they have gone CONTINUATION_PROOF bytes into it.
 *  - Otherwise sequential: after min_streak sequential bytes, a window of
 *    half the streak (at most max_window) is kept ahead of the reader, so a
 *    reader that stops early has caused at most 50% extra transfer.
 * The bytes served are never affected, only what is fetched and when. */
#ifndef SIEVE_PREFETCH_H
#define SIEVE_PREFETCH_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object_read.h"
#include "parquet_layout.h"

typedef struct {
    uint64_t min_streak; /* sequential bytes read before prefetch starts */
    uint64_t max_window; /* largest sequential prefetch window */
} prefetch_config;

/* The read pattern of one open file. The kernel sends reads of one handle
 * from several FUSE threads at once, so it has its own lock. */
typedef struct {
    pthread_mutex_t lock;     /* guards the fields below */
    uint64_t seq_next;        /* where a sequential reader would read next */
    uint64_t streak_bytes;    /* bytes read in the current sequential streak */
    uint64_t prefetched_to;   /* end of what prefetch has already requested */
    size_t last_chunk;        /* chunk of the previous read, or SIZE_MAX */
    size_t entered_chunk;     /* chunk the reads ran on into, or SIZE_MAX */
    uint64_t entered_at;      /* where they entered it */
    uint8_t *chunk_fetched;   /* per layout chunk: whole-chunk prefetch started */
    size_t n_chunks;
} read_pattern;

/* layout may be NULL (not Parquet): sequential prefetch only. False when
 * out of memory. */
bool read_pattern_init(read_pattern *p, const parquet_layout *layout);
void read_pattern_destroy(read_pattern *p);

/* After a reader's read of [off, off+size): start what it will want next.
 * Returns whether the read is part of a long sequential stream (its blocks
 * can be recycled once read past). */
bool prefetch_after_read(object_io *io, const prefetch_config *cfg, const object_ref *o,
                         const parquet_layout *layout, read_pattern *p, uint64_t off, size_t size);

/* The Parquet-aware rule alone (views use it for chunks served real): false
 * when the read is outside every chunk. */
bool prefetch_chunk_of_read(object_io *io, const object_ref *o, const parquet_layout *layout,
                            read_pattern *p, uint64_t off, size_t size);

#endif
