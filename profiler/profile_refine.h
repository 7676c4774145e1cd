/* Refining a measured profile with reads that ran alone: a GET with no other
 * request in flight from its start to its end measures the link, not the
 * load. Small ones refine the latency, large ones the bandwidth; each sample
 * moves the estimate by PROFILE_REFINE_WEIGHT of the difference, so one odd
 * read cannot swing the model. Pure: the caller times the read. */
#ifndef SIEVE_PROFILE_REFINE_H
#define SIEVE_PROFILE_REFINE_H
#include <stdbool.h>
#include <stdint.h>

#include "connection_profile.h"

#define PROFILE_REFINE_WEIGHT 0.1
#define PROFILE_REFINE_SMALL_MAX (64u << 10) /* GETs up to this refine the latency */
#define PROFILE_REFINE_LARGE_MIN (1u << 20)  /* GETs from this size refine the bandwidth */

/* Fold one uncontended GET of bytes that took seconds (submission to last
 * byte) into p, stamped now_s. False (p unchanged) when p is not a measured
 * profile or the sample cannot be right (zero or negative time, not finite,
 * a size between the two classes). */
bool conn_profile_refine(conn_profile *p, uint64_t bytes, double seconds, int64_t now_s);

#endif
