/* The connection profile from samples (connection_profile.h): what the
 * warmup (fs/warmup/warmup.c) measured, turned into latency, connect cost,
 * bandwidth and the capacity curve.
 *
 *   latency    median and p90 of first-byte times of small ranges on warm
 *              connections (a small range's completion is its first byte)
 *   connect    median on fresh connections minus the warm median (>= 0)
 *   bandwidth  bytes of large ranges (each sample's own length) over the
 *              union of their delivery intervals, so ranges delivered at
 *              once share the time; bandwidth_bytes is their sum
 *   capacity   per wave of small reads kept at in_flight outstanding:
 *              completions per second by Little's law, in_flight over the
 *              mean time a request took once the wave is steady (after its
 *              first in_flight requests, which pay for new connections).
 *              Counting completions over time instead would be biased by
 *              how they bunch into round trips. suggested_in_flight is the
 *              smallest level within PROFILE_CAPACITY_SHARE of the best
 *
 * Failed samples, and durations that are zero, negative or not finite, are
 * discarded. Too few samples of a kind leave that part 0; the profile is
 * valid only with a latency and a bandwidth (what the cost model needs).
 * Pure: no I/O, no clock; times are seconds the caller measured. */
#ifndef SIEVE_PROFILE_ESTIMATE_H
#define SIEVE_PROFILE_ESTIMATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connection_profile.h"

#define PROFILE_MIN_LATENCY_SAMPLES 3 /* warm samples for a latency */
#define PROFILE_MIN_FRESH_SAMPLES   2 /* fresh samples for a connect cost */
#define PROFILE_MIN_WAVE_SAMPLES    4 /* steady requests for a capacity point */
#define PROFILE_CAPACITY_SHARE      0.95

typedef struct {
    double seconds; /* request sent to first (= last) byte */
    bool ok;
} latency_sample;

typedef struct {
    double start_s, end_s; /* first and last byte, on the caller's clock */
    uint64_t bytes;
    bool ok;
} delivery_sample;

typedef struct {
    double sent_s, done_s; /* on the caller's clock */
    bool ok;               /* false: failed, or still out at the deadline */
} wave_request;

typedef struct {
    uint32_t in_flight;      /* requests kept outstanding */
    const wave_request *req; /* every request sent (any order); more failed than ok: discarded */
    size_t n;
} capacity_wave;

typedef struct {
    const latency_sample *warm;
    size_t n_warm;
    const latency_sample *fresh;
    size_t n_fresh;
    const delivery_sample *large;
    size_t n_large;
    const capacity_wave *waves;
    size_t n_waves;
} profile_samples;

/* Median and p90 (nearest rank) of the usable samples: false when fewer than
 * min_samples are usable (or out of memory). */
bool profile_latency(const latency_sample *s, size_t n, size_t min_samples, double *median,
                     double *p90);
/* Bytes per second over the union of the usable intervals; 0 when none. */
double profile_bandwidth(const delivery_sample *d, size_t n);
/* The bytes of the usable samples (what profile_bandwidth divides). */
uint64_t profile_bandwidth_bytes(const delivery_sample *d, size_t n);
/* Completions per second of one wave once steady; 0 when it is unusable. */
double profile_wave_rate(const capacity_wave *w);

/* The whole profile (measured_at_s left 0 for the caller). */
void profile_estimate(const profile_samples *s, conn_profile *out);

#endif
