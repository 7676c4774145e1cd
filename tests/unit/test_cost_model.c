/* The cost of a request (profiler/cost_model): what reads cost, the budget
 * of a partial read, and the pages too small to plan (docs/design.md: with
 * min_saving 0.25, pages below 5/3 of the request cost are read whole when
 * rows are selected, below 1/3 when none are). */
#include "cost_model.h"
#include "page_plan.h"

#include <criterion/criterion.h>

Test(cost_model, reads_cost_bytes_plus_requests)
{
    cr_expect_eq(cost_of_reads(0, 0, 4096), 0.0);
    cr_expect_eq(cost_of_reads(1000, 0, 4096), 1000.0);
    cr_expect_eq(cost_of_reads(1000, 3, 4096), 1000.0 + 3 * 4096.0);
    cr_expect_eq(cost_of_reads(1000, 3, 0), 1000.0);
}

Test(cost_model, budget_is_a_share_of_reading_whole)
{
    cr_expect_eq(cost_partial_budget(100000, 0, 0.25), 75000.0);
    cr_expect_eq(cost_partial_budget(100000, 20000, 0.25), 90000.0);
    cr_expect_eq(cost_partial_budget(100000, 20000, 0.0), 120000.0);
}

Test(cost_model, small_pages_are_read_whole)
{
    const uint32_t rc = COST_DEFAULT_REQUEST;
    /* 2 rc <= 0.75 (size + rc)  <=>  size >= 5/3 rc */
    const uint32_t sel = (uint32_t)((5.0 / 3.0) * rc);
    cr_expect(cost_partial_may_pay(sel + 1, true, rc, COST_MIN_SAVING));
    cr_expect_not(cost_partial_may_pay(sel - 1, true, rc, COST_MIN_SAVING));
    /* rc <= 0.75 (size + rc)  <=>  size >= rc / 3 */
    const uint32_t none = rc / 3;
    cr_expect(cost_partial_may_pay(none + 1, false, rc, COST_MIN_SAVING));
    cr_expect_not(cost_partial_may_pay(none - 1, false, rc, COST_MIN_SAVING));
    /* Free requests: every page may pay. */
    cr_expect(cost_partial_may_pay(1, true, 0, COST_MIN_SAVING));
}

Test(cost_model, the_planner_asks_the_cost_model)
{
    for (uint32_t size = 1; size < (1u << 22); size = size * 3 + 7)
        for (uint32_t rc = 0; rc < (1u << 20); rc = rc * 5 + 1000)
            for (int sel = 0; sel < 2; sel++)
                cr_assert_eq(pp_worth_planning(size, sel, rc, COST_MIN_SAVING),
                             cost_partial_may_pay(size, sel, rc, COST_MIN_SAVING));
}

Test(cost_model, gaps_below_a_request_are_read_through)
{
    cr_expect_eq(cost_gap_merge(0, COST_GAP_MERGE_MIN), COST_GAP_MERGE_MIN);
    cr_expect_eq(cost_gap_merge(COST_DEFAULT_REQUEST, COST_GAP_MERGE_MIN), COST_DEFAULT_REQUEST);
    cr_expect_eq(cost_gap_merge(100, COST_FETCH_MERGE_MIN), COST_FETCH_MERGE_MIN);
}

Test(cost_model, constants_keep_their_values)
{
    cr_expect_eq(COST_DEFAULT_REQUEST, 128u << 10);
    cr_expect_eq(COST_MIN_SAVING, 0.25);
    cr_expect_eq(COST_GAP_MERGE_MIN, 2u << 10);
    cr_expect_eq(COST_FETCH_MERGE_MIN, 2u << 10);
    cr_expect_eq(COST_MAX_FETCH, 8u << 20);
}
