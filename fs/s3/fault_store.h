/* A store that wraps another and makes requests fail on demand, for tests
 * of what the core does with errors: failed and refused GETs, failed
 * listings. A failing GET still goes to the inner store, so its completion
 * arrives on a store thread as a real failure's would. */
#ifndef SIEVE_FAULT_STORE_H
#define SIEVE_FAULT_STORE_H
#include <stdint.h>

#include "object_store.h"

typedef struct {
    uint32_t fail_gets;        /* the next this many GETs complete with get_status */
    store_status get_status;   /* STORE_ERR_NETWORK when 0 */
    uint64_t only_from, only_to; /* when only_to > only_from: only GETs overlapping [from, to) count */
    uint32_t refuse_gets;      /* the next this many GETs are refused when submitted */
    uint32_t fail_lists;       /* the next this many listing pages fail with list_status */
    store_status list_status;  /* STORE_ERR_NETWORK when 0 */
} fault_plan;

typedef struct fault_store fault_store;

/* inner is not owned: destroy it after this one. */
fault_store *fault_store_create(object_store *inner);
object_store *fault_store_base(fault_store *f);
/* Replace the plan (counters start again). */
void fault_store_set(fault_store *f, const fault_plan *plan);
/* Faults injected so far. */
uint64_t fault_store_injected(fault_store *f);

#endif
