/* What a request costs; see cost_model.h. */
#include "cost_model.h"

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
