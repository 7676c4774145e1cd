/* request_queue: strict priority between classes, round-robin between owners
 * within a class, FIFO per owner, lanes reused. */
#include "request_queue.h"

#include <criterion/criterion.h>

typedef struct {
    rq_entry link; /* first: an rq_entry * is an item * */
    int id;
} item;

static int pop_id(request_queue *q)
{
    rq_entry *e = request_queue_pop(q);
    return e ? ((item *)e)->id : -1;
}

Test(request_queue, empty_pops_null)
{
    request_queue q;
    request_queue_init(&q);
    cr_assert_null(request_queue_pop(&q));
    cr_assert_eq(request_queue_len(&q), 0);
    request_queue_destroy(&q);
}

Test(request_queue, classes_are_served_most_urgent_first)
{
    request_queue q;
    request_queue_init(&q);
    item it[6];
    const store_priority prio[6] = {STORE_PRIO_PREFETCH, STORE_PRIO_PLAN,    STORE_PRIO_DEMAND,
                                    STORE_PRIO_PREFETCH, STORE_PRIO_DEMAND, STORE_PRIO_PLAN};
    for (int i = 0; i < 6; i++) {
        it[i].id = i;
        cr_assert(request_queue_push(&q, &it[i].link, prio[i], NULL));
    }
    cr_assert_eq(request_queue_len(&q), 6);
    const int want[6] = {2, 4, 1, 5, 0, 3};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(pop_id(&q), want[i], "pop %d", i);
    cr_assert_eq(pop_id(&q), -1);
    request_queue_destroy(&q);
}

Test(request_queue, one_owner_backlog_does_not_starve_another)
{
    request_queue q;
    request_queue_init(&q);
    int owner_a, owner_b, owner_c;
    item a[100], b[3], c[1];
    for (int i = 0; i < 100; i++) {
        a[i].id = i;
        cr_assert(request_queue_push(&q, &a[i].link, STORE_PRIO_DEMAND, &owner_a));
    }
    for (int i = 0; i < 3; i++) {
        b[i].id = 1000 + i;
        cr_assert(request_queue_push(&q, &b[i].link, STORE_PRIO_DEMAND, &owner_b));
    }
    /* A's first request was next before B queued; then the owners alternate. */
    cr_assert_eq(pop_id(&q), 0);
    cr_assert_eq(pop_id(&q), 1000);
    c[0].id = 2000;
    cr_assert(request_queue_push(&q, &c[0].link, STORE_PRIO_DEMAND, &owner_c));
    cr_assert_eq(pop_id(&q), 1);
    cr_assert_eq(pop_id(&q), 1001);
    cr_assert_eq(pop_id(&q), 2000); /* a newcomer waits at most one round */
    cr_assert_eq(pop_id(&q), 2);
    cr_assert_eq(pop_id(&q), 1002);
    /* B and C are done: A's backlog follows in order. */
    for (int i = 3; i < 100; i++)
        cr_assert_eq(pop_id(&q), i);
    cr_assert_eq(pop_id(&q), -1);
    request_queue_destroy(&q);
}

Test(request_queue, null_owner_is_one_fifo_lane)
{
    request_queue q;
    request_queue_init(&q);
    int owner;
    item it[4];
    for (int i = 0; i < 4; i++) {
        it[i].id = i;
        cr_assert(request_queue_push(&q, &it[i].link, STORE_PRIO_PLAN, i == 3 ? &owner : NULL));
    }
    cr_assert_eq(pop_id(&q), 0);
    cr_assert_eq(pop_id(&q), 3);
    cr_assert_eq(pop_id(&q), 1);
    cr_assert_eq(pop_id(&q), 2);
    request_queue_destroy(&q);
}

Test(request_queue, drain_returns_everything_in_service_order)
{
    request_queue q;
    request_queue_init(&q);
    int o1, o2;
    item it[5];
    const store_priority prio[5] = {STORE_PRIO_PREFETCH, STORE_PRIO_DEMAND, STORE_PRIO_DEMAND,
                                    STORE_PRIO_DEMAND, STORE_PRIO_PLAN};
    const void *owner[5] = {&o1, &o1, &o1, &o2, &o2};
    for (int i = 0; i < 5; i++) {
        it[i].id = i;
        cr_assert(request_queue_push(&q, &it[i].link, prio[i], owner[i]));
    }
    const int want[5] = {1, 3, 2, 4, 0};
    int n = 0;
    for (rq_entry *e = request_queue_drain(&q); e; e = e->next, n++)
        cr_assert_eq(((item *)e)->id, want[n], "entry %d", n);
    cr_assert_eq(n, 5);
    cr_assert_eq(request_queue_len(&q), 0);
    cr_assert_null(request_queue_pop(&q));
    request_queue_destroy(&q);
}

Test(request_queue, lanes_are_reused_and_out_of_range_priority_is_demand)
{
    request_queue q;
    request_queue_init(&q);
    int owners[50];
    item it[50];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 50; i++) {
            it[i].id = i;
            cr_assert(request_queue_push(&q, &it[i].link, STORE_PRIO_PREFETCH, &owners[i]));
        }
        for (int i = 0; i < 50; i++)
            cr_assert_eq(pop_id(&q), i);
        cr_assert_null(request_queue_pop(&q));
    }
    item odd = {.id = 7}, prefetch = {.id = 8};
    cr_assert(request_queue_push(&q, &prefetch.link, STORE_PRIO_PREFETCH, NULL));
    cr_assert(request_queue_push(&q, &odd.link, (store_priority)42, NULL));
    cr_assert_eq(pop_id(&q), 7);
    cr_assert_eq(pop_id(&q), 8);
    request_queue_destroy(&q);
}
