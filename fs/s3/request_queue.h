/* The S3 client's queue of requests waiting for an in-flight slot: three
 * priority classes (store_priority: demand, plan, prefetch) served strictly
 * in that order, and within a class round-robin between owners (the
 * store_request_opts owner tag; NULL is one owner like any other), FIFO per
 * owner. So one query that queues thousands of GETs delays another query's
 * next GET by at most one GET per other owner, not by its whole backlog.
 *
 * Intrusive (a request embeds its rq_entry) and not thread-safe: the client
 * guards it with its submission lock. Pure: no I/O. Push allocates only when
 * an owner has nothing queued in that class (a lane; freed lanes are reused). */
#ifndef SIEVE_REQUEST_QUEUE_H
#define SIEVE_REQUEST_QUEUE_H
#include <stdbool.h>
#include <stddef.h>

#include "object_store.h"

typedef struct rq_entry {
    struct rq_entry *next; /* within its owner's lane, or in a drained list */
} rq_entry;

/* One owner's FIFO within a class; the lanes of a class form a ring. */
typedef struct rq_lane {
    const void *owner;
    rq_entry *head, *tail;
    struct rq_lane *next; /* ring of the class's lanes, or the free list */
} rq_lane;

typedef struct {
    /* Per class, the ring's last lane: last->next is served next, new lanes
     * go after last (the end of the round). NULL = the class is empty. */
    rq_lane *last[STORE_PRIO_COUNT];
    size_t queued[STORE_PRIO_COUNT];
    rq_lane *free_lanes;
} request_queue;

void request_queue_init(request_queue *q);
/* Queue e (not queued elsewhere) at the tail of owner's lane in class prio.
 * False when out of memory (nothing changed). Out-of-range prio = demand. */
bool request_queue_push(request_queue *q, rq_entry *e, store_priority prio, const void *owner);
/* The next entry to start: the most urgent non-empty class, the head of its
 * current lane; the class then moves on to its next lane. NULL when empty. */
rq_entry *request_queue_pop(request_queue *q);
size_t request_queue_len(const request_queue *q);
/* Remove every entry, most urgent first, as a list linked by next. */
rq_entry *request_queue_drain(request_queue *q);
/* Free the lanes; the queue must be empty (entries belong to the caller). */
void request_queue_destroy(request_queue *q);

#endif
