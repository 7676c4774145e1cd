/* A batch of timed ranged GETs, the warmup's one instrument: requests sent
 * through the object-store interface with at most so many out at once, each
 * with the CLOCK_MONOTONIC times it was sent and completed. The bytes land
 * in the batch's own buffer and are not looked at.
 *
 * A batch outlives its runner when requests are still out at the deadline
 * (or a cancel): it is reference counted, and the last completion frees it,
 * so abandoning a batch never waits for the store. */
#ifndef SIEVE_GET_BATCH_H
#define SIEVE_GET_BATCH_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object_store.h"
#include "stats.h"

typedef struct get_batch get_batch;

/* Now on CLOCK_MONOTONIC, nanoseconds. */
int64_t get_batch_now_ns(void);

/* n requests (each set with get_batch_set before the run) and room for
 * buf_bytes of their bodies; every request sent adds to stats'
 * warmup_requests and every success to warmup_bytes (stats may be NULL).
 * NULL when out of memory. */
get_batch *get_batch_new(size_t n, uint64_t buf_bytes, sv_stats *stats);
/* Request i: [offset, offset + length) of key (If-Match etag, when not
 * NULL), its body at buf_offset of the buffer, on a new connection when
 * fresh. key and etag must stay valid until get_batch_run returns. */
void get_batch_set(get_batch *b, size_t i, const char *key, const char *etag, uint64_t offset,
                   uint64_t length, uint64_t buf_offset, bool fresh);
/* Send the requests in order, at most conc out at once and none after
 * submit_by; wait for them until done_by or a cancel (cancel may be NULL),
 * each wait at most 100 ms. One attempt each, low priority. Returns when
 * the first was sent. */
int64_t get_batch_run(get_batch *b, object_store *s, uint32_t conc, int64_t submit_by, int64_t done_by,
                      const atomic_bool *cancel);
/* Whether request i completed with STORE_OK; its send and completion times
 * (0 when it was not sent or did not complete). */
bool get_batch_result(get_batch *b, size_t i, int64_t *sent_ns, int64_t *done_ns);
/* Drop the caller's reference (requests still out keep theirs). */
void get_batch_release(get_batch *b);

#endif
