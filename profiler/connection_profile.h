/* The connection profile: what the link to the object store costs, as
 * measured by the warmup (fs/warmup) and refined by uncontended reads.
 *
 *   latency    first byte of a small range on a warm connection (median, p90)
 *   connect    what a new connection adds to that
 *   bandwidth  bytes per second of large ranges (bytes over the union of
 *              their delivery intervals)
 *   capacity   completions per second of small requests, as a curve over
 *              the number in flight: where the link (or the server) caps
 *              request rate, more in flight stops helping
 *
 * Pure data and arithmetic: no I/O, no clock. The estimators take samples
 * (durations the caller measured) and produce a profile; the cost model
 * (cost_model.h) turns a profile into the price of a plan. */
#ifndef SIEVE_CONNECTION_PROFILE_H
#define SIEVE_CONNECTION_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_MAX_CAPACITY_POINTS 8

typedef struct {
    uint32_t in_flight;  /* requests kept in flight during the wave */
    double per_s;        /* completions per second measured at that level */
} capacity_point;

typedef struct {
    bool valid;               /* false: nothing measured, views make no partial reads */
    double latency_s;         /* median first-byte time of small ranges, warm connections */
    double latency_p90_s;
    double connect_s;         /* extra time of a request on a new connection */
    double bandwidth_Bps;     /* bytes per second of large ranges */
    uint64_t bandwidth_bytes; /* bytes of the large ranges behind bandwidth_Bps (the
                               * warmup's ~8 MiB; fewer on a table of small files) */
    uint32_t n_capacity;      /* points in capacity[], in_flight ascending */
    capacity_point capacity[PROFILE_MAX_CAPACITY_POINTS];
    uint32_t suggested_in_flight; /* smallest level reaching ~95 % of the best capacity */
    uint64_t samples;         /* requests behind the estimates */
    int64_t measured_at_s;    /* Unix seconds of the last update (caller's clock) */
} conn_profile;

/* Completions per second with in_flight requests outstanding: linear
 * between measured points, proportional below the first (in_flight /
 * latency when that is lower), flat above the last. 0 when the profile has
 * no capacity points. */
double conn_profile_capacity_at(const conn_profile *p, uint32_t in_flight);

#endif
