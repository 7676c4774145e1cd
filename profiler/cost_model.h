/* What a plan costs, in time, on the measured link; and whether reading part
 * of a page pays. Every constant that derives from the link lives here or in
 * the profile (connection_profile.h). docs/cost_model.md has the formulas.
 *
 *   time(plan) = rounds x latency + max(bytes / bandwidth, requests / capacity(in flight))
 *
 * with capacity the profile's curve of completions per second. A cost_link
 * holds the three prices at the load a plan runs at. The page planner works
 * in bytes: one request is worth request_s / byte_s bytes, one dependent
 * round round_s / byte_s bytes (cost_request_bytes, cost_round_bytes).
 *
 * A page is read partially only when that plan is more than COST_MIN_SAVING
 * cheaper than reading it whole; a file's partial plan is judged as a whole
 * (its pages share the same rounds) by cost_file_pays_rounds: each round at
 * the capacity of its own size, against the whole pages' transfer less what
 * hides behind the reader's decoding (COST_READER_BYTES_PER_S).
 *
 * Pure arithmetic: no I/O, no state, and no knowledge of the planner or the
 * filesystem (they call in; this includes neither). */
#ifndef SIEVE_COST_MODEL_H
#define SIEVE_COST_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "connection_profile.h"

/* A partial read must be at least this much cheaper than reading whole. */
#define COST_MIN_SAVING 0.10

/* The rate at which a reader consumes the pages it reads (decoding them).
 * Whole pages stream in while the reader decodes the ones before (the read
 * path prefetches), so of their transfer only what exceeds this rate delays
 * the query; a partial plan's rounds happen before the first page is served
 * and delay it in full. Measured here: DuckDB with 2 threads over the quick
 * benchmark's 70 uncompressed columns spent 164 ms serving 65 MB once the
 * bytes were local, and 209 ms on the plain path at 4.6 Gbit/s, so ~68 ms of
 * the 113 ms transfer hid behind decoding: about 1 GB/s. A reader that
 * decodes faster hides less; one that decodes slower makes partial reads
 * pay more rarely than they could (the safe side). Not a link constant. */
#define COST_READER_BYTES_PER_S 1e9

/* Gaps within a page (between the value ranges one fetch asks for) are read
 * through below the larger of this and the request cost. */
#define COST_GAP_MERGE_MIN (2u << 10)

/* Fetches of neighbouring pages are merged across gaps below the larger of
 * this and the request cost, ... */
#define COST_FETCH_MERGE_MIN (2u << 10)
/* ... into requests of at most this many bytes. */
#define COST_MAX_FETCH (8u << 20)

/* The most one request is counted as, in bytes (a price above this reads
 * every page with selected rows whole anyway). */
#define COST_REQUEST_BYTES_MAX (64u << 20)

/* Where the prices come from (shown in stats and logs). */
typedef enum {
    COST_SOURCE_NONE = 0, /* no profile: no partial reads of pages with selected rows */
    COST_SOURCE_PROFILE,  /* the measured connection profile */
    COST_SOURCE_OVERRIDE, /* --request-cost: a fixed byte price, rounds free (experiments) */
} cost_source;

typedef struct {
    cost_source source;
    double byte_s;       /* seconds per byte: 1 / bandwidth */
    double request_s;    /* seconds one more request adds at this load: 1 / capacity */
    double round_s;      /* seconds one more dependent round adds: latency */
    uint32_t in_flight;  /* the load the prices are for */
    conn_profile profile; /* COST_SOURCE_PROFILE: the curve rounds are priced on */
} cost_link;

/* Prices of a measured link with in_flight requests outstanding (0: the
 * profile's suggested level). An invalid or missing profile gives
 * COST_SOURCE_NONE. */
cost_link cost_link_from_profile(const conn_profile *p, uint32_t in_flight);
/* The --request-cost override: a request costs request_bytes bytes, rounds
 * nothing (the model before the profiler; 0 = bytes alone count). */
cost_link cost_link_from_request_cost(uint32_t request_bytes);
/* No profile: pages with selected rows are read whole. */
cost_link cost_link_none(void);
/* Whether pages with selected rows may be read partially at all. */
bool cost_link_allows_partial(const cost_link *l);

const char *cost_source_name(cost_source s);

/* Estimated seconds of a plan (the formula above). */
double cost_plan_time(const cost_link *l, uint32_t rounds, uint64_t bytes, uint64_t requests);

/* One request, and one dependent round, in bytes of transfer (the planner's
 * currency); clamped to COST_REQUEST_BYTES_MAX. */
uint32_t cost_request_bytes(const cost_link *l);
uint64_t cost_round_bytes(const cost_link *l);

/* Seconds one dependent round of `requests` requests sent at once takes: the
 * latency, then the requests at the capacity of that many in flight (at most
 * the link's in_flight): a round of 79 requests does not run at the
 * capacity of 512 in flight. 0 for no request. */
double cost_round_time(const cost_link *l, uint64_t requests);

/* Seconds the whole pages' transfer delays a reader that decodes them as
 * they come (COST_READER_BYTES_PER_S): bytes at the link's rate less what
 * hides behind decoding, plus their requests. */
double cost_whole_time(const cost_link *l, uint64_t bytes, uint64_t requests);

/* Seconds a partial plan takes: a latency per dependent round that has
 * requests, then (with a profile) the longer of the rounds' requests at
 * their capacity (cost_round_time less the latency) and the bytes at the
 * link's rate, which overlap; with the --request-cost override their sum. */
double cost_partial_time(const cost_link *l, const uint64_t *round_requests, uint32_t rounds,
                         uint64_t bytes);

/* A file's partial plan judged on its rounds: cost_partial_time against
 * cost_whole_time of the same pages read whole. True when the partial
 * plan's time is at most (1 - min_saving) of the whole's. */
bool cost_file_pays_rounds(const cost_link *l, const uint64_t *round_requests, uint32_t rounds,
                           uint64_t partial_bytes, uint64_t whole_bytes, uint64_t whole_requests,
                           double min_saving);

/* What reading bytes in requests costs, in bytes. */
double cost_of_reads(uint64_t bytes, uint32_t requests, uint32_t request_cost);

/* The most a partial read of a page_size-byte page may cost:
 * (1 - min_saving) of reading it whole (its bytes and one request). */
double cost_partial_budget(uint32_t page_size, uint32_t request_cost, double min_saving);

/* Whether a partial read of a page_size-byte page can pay at all: with
 * selected rows it needs at least two requests (the header, then values),
 * without at least one; their cost alone must fit the budget. False: read
 * the page whole, without asking. */
bool cost_partial_may_pay(uint32_t page_size, bool rows_selected, uint32_t request_cost,
                          double min_saving);

/* The gap below which two ranges are read as one: the larger of floor and
 * the request cost (reading the gap costs less than another request). */
uint32_t cost_gap_merge(uint32_t request_cost, uint32_t floor);

#endif
