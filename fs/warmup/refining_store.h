/* An object store that refines the mount's connection profile with the GETs
 * that run alone: it wraps the real store, counts requests in flight, times
 * each GET from submission to completion, and hands a GET that no other
 * request overlapped to link_profile_refine. Reads that overlap others
 * measure the load, not the link, and are left out. Everything else passes
 * through unchanged. */
#ifndef SIEVE_REFINING_STORE_H
#define SIEVE_REFINING_STORE_H
#include <stdint.h>

#include "link_profile.h"
#include "object_store.h"

typedef struct refining_store refining_store;

/* inner and lp must outlive the wrapper; store_destroy of the wrapper frees
 * only the wrapper. */
refining_store *refining_store_create(object_store *inner, link_profile *lp);
object_store *refining_store_base(refining_store *r);
/* GETs that ran alone and were folded into the profile. */
uint64_t refining_store_samples(refining_store *r);

#endif
