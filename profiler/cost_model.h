/* What a request costs, and whether reading part of a page pays: every
 * constant that derives from the link lives here, until the connection
 * profiler measures it.
 *
 * A request is counted as request_cost bytes (--request-cost): reading a
 * page whole costs its size plus one request; reading it in part costs the
 * bytes fetched plus request_cost per request, and is taken only when that
 * stays within (1 - min_saving) of reading it whole. The default request
 * cost is about bandwidth x round trip / requests in flight for 150 Mbit/s
 * at 200 ms and for 1 Gbit/s at 25 ms, with 32 connections; on loopback 0
 * is right. Erring high costs a view its savings on small pages (read
 * whole); erring low costs many small requests, each a round trip.
 *
 * Pure arithmetic: no I/O, no state, and no knowledge of the planner or the
 * filesystem (they call in; this includes neither). */
#ifndef SIEVE_COST_MODEL_H
#define SIEVE_COST_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* 150 Mbit/s x 200 ms / 32 requests in flight is about 117 KB; 1 Gbit/s x
 * 25 ms / 32 about 98 KB. Too high costs a view little (pages read whole);
 * too low costs many small requests, so the default leans high. */
#define COST_DEFAULT_REQUEST (128u << 10)

/* A partial read must save at least this share of reading the page whole. */
#define COST_MIN_SAVING 0.25

/* Gaps within a page (between the value ranges one fetch asks for) are read
 * through below the larger of this and the request cost. */
#define COST_GAP_MERGE_MIN (2u << 10)

/* Fetches of neighbouring pages are merged across gaps below the larger of
 * this and the request cost, ... */
#define COST_FETCH_MERGE_MIN (2u << 10)
/* ... into requests of at most this many bytes. */
#define COST_MAX_FETCH (8u << 20)

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
