#include "request_queue.h"

#include <stdlib.h>
#include <string.h>

void request_queue_init(request_queue *q)
{
    memset(q, 0, sizeof *q);
}

static rq_lane *find_lane(rq_lane *last, const void *owner)
{
    /* Linear in the class's owners: a mount has few concurrent queries. */
    if (!last)
        return NULL;
    rq_lane *l = last;
    do {
        if (l->owner == owner)
            return l;
        l = l->next;
    } while (l != last);
    return NULL;
}

bool request_queue_push(request_queue *q, rq_entry *e, store_priority prio, const void *owner)
{
    unsigned cls = (unsigned)prio < STORE_PRIO_COUNT ? (unsigned)prio : STORE_PRIO_DEMAND;
    rq_lane *lane = find_lane(q->last[cls], owner);
    if (!lane) {
        lane = q->free_lanes;
        if (lane)
            q->free_lanes = lane->next;
        else if (!(lane = malloc(sizeof *lane)))
            return false;
        lane->owner = owner;
        lane->head = lane->tail = NULL;
        if (q->last[cls]) {
            lane->next = q->last[cls]->next;
            q->last[cls]->next = lane;
        } else {
            lane->next = lane;
        }
        q->last[cls] = lane; /* a new owner waits for the end of the current round */
    }
    e->next = NULL;
    if (lane->tail)
        lane->tail->next = e;
    else
        lane->head = e;
    lane->tail = e;
    q->queued[cls]++;
    return true;
}

rq_entry *request_queue_pop(request_queue *q)
{
    for (unsigned cls = 0; cls < STORE_PRIO_COUNT; cls++) {
        rq_lane *last = q->last[cls];
        if (!last)
            continue;
        rq_lane *lane = last->next;
        rq_entry *e = lane->head;
        lane->head = e->next;
        e->next = NULL;
        q->queued[cls]--;
        if (lane->head) {
            q->last[cls] = lane; /* its next entry waits for the other owners */
        } else {
            if (lane == last)
                q->last[cls] = NULL;
            else
                last->next = lane->next;
            lane->tail = NULL;
            lane->next = q->free_lanes;
            q->free_lanes = lane;
        }
        return e;
    }
    return NULL;
}

size_t request_queue_len(const request_queue *q)
{
    size_t n = 0;
    for (unsigned cls = 0; cls < STORE_PRIO_COUNT; cls++)
        n += q->queued[cls];
    return n;
}

rq_entry *request_queue_drain(request_queue *q)
{
    rq_entry *head = NULL, **tail = &head;
    rq_entry *e;
    while ((e = request_queue_pop(q))) {
        *tail = e;
        tail = &e->next;
    }
    return head;
}

void request_queue_destroy(request_queue *q)
{
    for (unsigned cls = 0; cls < STORE_PRIO_COUNT; cls++) {
        /* Entries belong to the caller; only the lanes are ours. */
        rq_lane *last = q->last[cls];
        if (!last)
            continue;
        rq_lane *l = last->next;
        last->next = NULL;
        while (l) {
            rq_lane *nx = l->next;
            free(l);
            l = nx;
        }
        q->last[cls] = NULL;
    }
    while (q->free_lanes) {
        rq_lane *nx = q->free_lanes->next;
        free(q->free_lanes);
        q->free_lanes = nx;
    }
}
