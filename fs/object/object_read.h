/* Real bytes of object versions: reads through the block cache (a read pins
 * the blocks it covers and starts one ranged GET per run of missing blocks),
 * prefetch into the cache, and parallel fetches of byte ranges that bypass
 * the cache (a view's planning rounds). Every byte returned is the object's
 * own; nothing here knows about readers, prefetch policy or views.
 *
 * Thread-safe: the block cache has its own lock; an object_io is read-only
 * after creation but for its shutdown token (atomic).
 *
 * Deadlines: every wait takes a token (sv_cancel.h). A reader that gives up
 * releases only its own pins; each fetch holds a pin of its own on the
 * blocks it fills, so they stay valid (LOADING) until the store completes
 * it, and later reads of those bytes wait on the same fetch. */
#ifndef SIEVE_OBJECT_READ_H
#define SIEVE_OBJECT_READ_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "block_cache.h"
#include "object_store.h"
#include "stats.h"
#include "sv_cancel.h"

#define OBJECT_MAX_RUN_BLOCKS 1024 /* blocks per ranged GET; also bounded by max_request */

/* One immutable version of an object (key + ETag). */
typedef struct {
    uint64_t id;                /* names the version in the block cache (its plain-path inode) */
    char *key;                  /* owned */
    char etag[S3_ETAG_MAX + 1];
    uint64_t size;
} object_ref;

void object_ref_free(object_ref *o);

typedef struct object_io object_io;

/* max_request: the largest single ranged GET (clamped to
 * OBJECT_MAX_RUN_BLOCKS blocks). read_timeout_ms: the deadline of one read
 * (object_io_cancel_init), 0 for none. */
object_io *object_io_create(object_store *store, block_cache *cache, sv_stats *stats,
                            uint64_t max_request, uint64_t read_timeout_ms);
void object_io_destroy(object_io *io);
uint32_t object_io_block_size(const object_io *io);
uint64_t object_io_max_request(const object_io *io);
uint64_t object_io_read_timeout_ms(const object_io *io);
/* The block cache's memory limit (what a caller pinning ahead stays well within). */
uint64_t object_io_cache_limit(const object_io *io);

/* A token for one read: its deadline is the read timeout from now, and it
 * is cancelled (ESHUTDOWN) by object_io_shutdown. */
void object_io_cancel_init(object_io *io, sv_cancel *tok);
/* The same, also cancelled with parent (a token from object_io_cancel_init,
 * or NULL): work done for a reader with a deadline of its own. */
void object_io_cancel_init_under(object_io *io, sv_cancel *tok, const sv_cancel *parent);
/* Make every wait in progress and every later one give up with ESHUTDOWN
 * (within a wait slice). Fetches in flight go on until the store completes
 * them; their blocks and buffers stay theirs. Async-signal-safe. */
void object_io_shutdown(object_io *io);

/* Blocks pinned by a read, released with object_pins_release. */
typedef struct {
    cache_block **blocks;
    size_t n;
    bool *was_ready;   /* per block: cached before this read (for the tally) */
    uint64_t off;      /* the read, clipped at the object's end */
    size_t size;
    bool streaming;    /* part of a long sequential read: blocks read past are recycled */
} object_pins;

/* What a pinned read found in the cache, for the reader's statistics. */
typedef struct {
    uint64_t hit_bytes;  /* ready without waiting */
    uint64_t miss_bytes; /* waited for a fetch */
} object_read_tally;

/* A read in two steps, so that a caller can start prefetch between them:
 * object_pin pins every block of [off, off+size) (clipped at the object's
 * end; pins->size is what is left) and starts one GET per run of missing
 * blocks: 0 or -errno (nothing pinned); -EINVAL when the read spans more
 * than maxiov blocks. object_pins_wait waits for the blocks and points iov
 * into them (pinned until object_pins_release): the byte count or -errno
 * (released then). tally may be NULL. Waits obey tok (may be NULL: no
 * deadline): -ETIMEDOUT, -EINTR or -ESHUTDOWN when it gives up; the fetches
 * go on, holding pins of their own on the blocks they fill. */
int object_pin(object_io *io, const object_ref *o, uint64_t off, size_t size, size_t maxiov,
               object_pins *pins);
ssize_t object_pins_wait(object_io *io, object_pins *pins, struct iovec *iov, size_t *niov,
                         object_read_tally *tally, const sv_cancel *tok);
void object_pins_release(object_io *io, object_pins *pins);
/* The same for a reader that gave up waiting (object_pins_wait does it when
 * tok fires): GETs that no other reader waits for are cancelled. */
void object_pins_abandon(object_io *io, object_pins *pins);

/* Cancel the fetches of version o that no reader waits for (its prefetch,
 * once the last file of that version closed); how many. */
size_t object_cancel_prefetch(object_io *io, const object_ref *o);

/* Copy exactly [off, off+size) into buf (clipped at the object's end): the
 * byte count or -errno. Waits obey tok, as object_pins_wait. */
ssize_t object_read(object_io *io, const object_ref *o, uint64_t off, size_t size, uint8_t *buf,
                    const sv_cancel *tok);

/* Start fetching [start, end) into the cache, in GETs of at most run_bytes
 * (0: max_request). Blocks already cached or loading are skipped; it gives up
 * quietly when the cache has no room and never waits. demand: ahead of
 * prefetch in the store's queues. */
void object_prefetch(object_io *io, const object_ref *o, uint64_t start, uint64_t end,
                     uint64_t run_bytes, bool demand);
/* The same in parallel parts (a quarter of the span each, 1 MiB to
 * max_request), as a column chunk is fetched. */
void object_prefetch_parts(object_io *io, const object_ref *o, uint64_t start, uint64_t end);

/* Neighbouring byte ranges joined into one prefetch: ranges are added in
 * increasing order, and one past a gap starts the next prefetch. */
typedef struct {
    uint64_t start, end; /* the range gathered so far; empty when equal */
    bool parts;          /* started in parallel parts (object_prefetch_parts) */
} prefetch_run;

void prefetch_run_add(object_io *io, const object_ref *o, prefetch_run *r, uint64_t start, uint64_t end);
/* Start what was gathered (demand priority) and empty the run. */
void prefetch_run_flush(object_io *io, const object_ref *o, prefetch_run *r);

/* A byte range fetched outside the cache into buf (allocated by the caller). */
typedef struct {
    uint64_t off, len;
    uint8_t *buf;
} object_range;

/* Fetch every range at once (planning priority: the caller is a view's planning rounds) and wait for all: 0, or -EIO
 * when any failed (each failure is logged). Bypasses the block cache.
 * *started (may be NULL): how many requests went out. When tok gives up
 * first (-ETIMEDOUT, -EINTR, -ESHUTDOWN), the buffers of the started
 * requests are taken over (their buf set to NULL) and freed once the store
 * completes them, since it still writes into them. */
int object_fetch_ranges(object_io *io, const object_ref *o, object_range *ranges, size_t n,
                        size_t *started, const sv_cancel *tok);

/* The current version of key, found by one listing of its exact name (one
 * round trip, no listing of the directories above it): 0 with *out set
 * (id 0: not a plain-path inode, so not for the block cache), -ENOENT, or
 * -errno (the listing failed or tok fired). */
int object_find_exact(object_io *io, const char *key, object_ref *out, const sv_cancel *tok);

#endif
