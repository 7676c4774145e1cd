/* What a plan costs; see cost_model.h and docs/cost_model.md. */
#include "cost_model.h"

/* Prices in the override's unit: a byte is a nanosecond. */
#define OVERRIDE_BYTE_S 1e-9

cost_link cost_link_none(void)
{
    cost_link l = {.source = COST_SOURCE_NONE, .byte_s = OVERRIDE_BYTE_S};
    return l;
}

cost_link cost_link_from_request_cost(uint32_t request_bytes)
{
    cost_link l = {.source = COST_SOURCE_OVERRIDE, .byte_s = OVERRIDE_BYTE_S,
                   .request_s = OVERRIDE_BYTE_S * request_bytes};
    return l;
}

cost_link cost_link_from_profile(const conn_profile *p, uint32_t in_flight)
{
    if (!p || !p->valid || !(p->bandwidth_Bps > 0) || !(p->latency_s >= 0))
        return cost_link_none();
    if (in_flight == 0)
        in_flight = p->suggested_in_flight;
    if (in_flight == 0 && p->n_capacity > 0)
        in_flight = p->capacity[p->n_capacity - 1].in_flight;
    if (in_flight == 0)
        in_flight = 1;
    cost_link l = {COST_SOURCE_PROFILE, 1.0 / p->bandwidth_Bps, 0.0, p->latency_s, in_flight, *p};
    double cap = conn_profile_capacity_at(p, in_flight);
    /* Without a capacity curve, requests complete at most in_flight per
     * latency: the link's own bound. */
    if (!(cap > 0) && p->latency_s > 0)
        cap = in_flight / p->latency_s;
    l.request_s = cap > 0 ? 1.0 / cap : 0.0;
    return l;
}

bool cost_link_allows_partial(const cost_link *l)
{
    return l->source != COST_SOURCE_NONE;
}

const char *cost_source_name(cost_source s)
{
    switch (s) {
    case COST_SOURCE_PROFILE: return "profile";
    case COST_SOURCE_OVERRIDE: return "request-cost";
    default: return "none";
    }
}

double cost_plan_time(const cost_link *l, uint32_t rounds, uint64_t bytes, uint64_t requests)
{
    return rounds * l->round_s + (double)bytes * l->byte_s + (double)requests * l->request_s;
}

static uint64_t in_bytes(const cost_link *l, double seconds, uint64_t max)
{
    if (!(l->byte_s > 0))
        return max;
    const double b = seconds / l->byte_s;
    return b >= (double)max ? max : b > 0 ? (uint64_t)(b + 0.5) : 0;
}

uint32_t cost_request_bytes(const cost_link *l)
{
    if (l->source == COST_SOURCE_NONE)
        return COST_REQUEST_BYTES_MAX;
    return (uint32_t)in_bytes(l, l->request_s, COST_REQUEST_BYTES_MAX);
}

uint64_t cost_round_bytes(const cost_link *l)
{
    return in_bytes(l, l->round_s, UINT64_MAX / 4);
}

double cost_round_time(const cost_link *l, uint64_t requests)
{
    if (requests == 0)
        return 0.0;
    double cap = 0.0;
    if (l->source == COST_SOURCE_PROFILE) {
        const uint64_t k = requests < l->in_flight ? requests : l->in_flight;
        cap = conn_profile_capacity_at(&l->profile, (uint32_t)(k ? k : 1));
    }
    const double t = cap > 0 ? (double)requests / cap : (double)requests * l->request_s;
    return l->round_s + t;
}

double cost_whole_time(const cost_link *l, uint64_t bytes, uint64_t requests)
{
    double exposed = l->byte_s - 1.0 / COST_READER_BYTES_PER_S;
    if (l->source != COST_SOURCE_PROFILE)
        exposed = l->byte_s; /* the override's byte unit is not a time */
    return (exposed > 0 ? (double)bytes * exposed : 0.0) + (double)requests * l->request_s;
}

double cost_partial_time(const cost_link *l, const uint64_t *round_requests, uint32_t rounds,
                         uint64_t bytes)
{
    const double transfer = (double)bytes * l->byte_s;
    double waits = 0.0, requests = 0.0;
    for (uint32_t i = 0; i < rounds; i++) {
        if (round_requests[i] == 0)
            continue;
        waits += l->round_s;
        requests += cost_round_time(l, round_requests[i]) - l->round_s;
    }
    /* With a profile, a round's requests wait out their latency while the
     * bytes of others flow: the longer of the two is what the rounds take
     * (measured at wan: a 2-round plan of 6,900 value requests and 38 MB took
     * about 5 s, where their sum priced it 7.5 s and kept the pages whole).
     * The --request-cost override prices in bytes, which add up. */
    if (l->source == COST_SOURCE_PROFILE)
        return waits + (requests > transfer ? requests : transfer);
    return waits + requests + transfer;
}

bool cost_file_pays_rounds(const cost_link *l, const uint64_t *round_requests, uint32_t rounds,
                           uint64_t partial_bytes, uint64_t whole_bytes, uint64_t whole_requests,
                           double min_saving)
{
    return cost_partial_time(l, round_requests, rounds, partial_bytes) <=
           (1.0 - min_saving) * cost_whole_time(l, whole_bytes, whole_requests);
}

double cost_of_reads(uint64_t bytes, uint32_t requests, uint32_t request_cost)
{
    return (double)bytes + (double)request_cost * requests;
}

double cost_partial_budget(uint32_t page_size, uint32_t request_cost, double min_saving)
{
    return (1.0 - min_saving) * ((double)page_size + request_cost);
}

bool cost_partial_may_pay(uint32_t page_size, bool rows_selected, uint32_t request_cost,
                          double min_saving)
{
    const double least = (rows_selected ? 2.0 : 1.0) * request_cost;
    return least <= cost_partial_budget(page_size, request_cost, min_saving);
}

uint32_t cost_gap_merge(uint32_t request_cost, uint32_t floor)
{
    return request_cost > floor ? request_cost : floor;
}
