/* The filter chunks of the row groups ahead of the one a view's selection
 * evaluates, fetched while it evaluates: a file of N row groups waits about
 * one round trip for its selection instead of N.
 *
 * The chunks are pinned in the block cache by the preparing reader, so they
 * are its fetches: when it gives up (interrupted, deadline), abandoning them
 * cancels every GET no other reader waits for. At most
 * SELECTION_AHEAD_MAX_CHUNKS chunks and a quarter of the cache (at most
 * SELECTION_AHEAD_MAX_BYTES) are held at once; each group's chunks are
 * released once it is evaluated and the window moves on.
 *
 * Not thread-safe: one preparing reader owns it. */
#ifndef SIEVE_SELECTION_AHEAD_H
#define SIEVE_SELECTION_AHEAD_H
#include <stdbool.h>
#include <stdint.h>

#include "object_read.h"
#include "parquet_meta.h"
#include "predicate.h"

#define SELECTION_AHEAD_MAX_CHUNKS 64
#define SELECTION_AHEAD_MAX_BYTES (64ull << 20)

typedef struct {
    object_io *io;
    const object_ref *o;
    const pq_file_meta *m;
    const pred_bound *b;
    uint64_t max_bytes;
    object_pins pins[SELECTION_AHEAD_MAX_CHUNKS]; /* a ring: [head, head+n) */
    uint64_t bytes_of[SELECTION_AHEAD_MAX_CHUNKS];
    uint32_t group_of[SELECTION_AHEAD_MAX_CHUNKS];
    size_t head, n;
    uint64_t bytes;      /* pinned now */
    uint32_t next_group; /* the next chunk to pin: (next_group, next_col) */
    size_t next_col;
    bool next_group_needed; /* selection_group_needs_filter(next_group), checked at its first column */
} selection_ahead;

void selection_ahead_init(selection_ahead *a, object_io *io, const object_ref *o, const pq_file_meta *m,
                          const pred_bound *b);
/* Group g is evaluated next: release the chunks of the groups before it and
 * pin the chunks of g and the groups after it, within the window. */
void selection_ahead_advance(selection_ahead *a, uint32_t g);
/* Release everything; gave_up: the reader gave up, so cancel what only
 * this window waits for. */
void selection_ahead_end(selection_ahead *a, bool gave_up);

#endif
