/* The Delta log's per-file statistics as predicate statistics: integer and
 * date bounds and null counts prove a file excluded; strings, doubles,
 * missing keys, wrong JSON types and broken documents never do. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "file_stats.h"
#include "fixture_files.h"

static pq_file_meta *m; /* id int32, big int64, maybe_double double, name string, day date, price double */

static void setup(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/duckdb_v1_none.parquet", FIXTURE_DIR);
    size_t len;
    uint8_t *data = fixture_read(path, &len);
    tc_error err;
    cr_assert_eq(pq_file_meta_from_tail(data, len, len, &m, NULL, &err), TC_OK, "%s", err.msg);
    free(data);
}

static void teardown(void)
{
    pq_file_meta_free(m);
}

TestSuite(file_stats, .init = setup, .fini = teardown);

static const char *STATS = "{\"numRecords\":100,"
                           "\"minValues\":{\"id\":10,\"big\":-5,\"name\":\"b\",\"day\":\"2024-01-10\",\"price\":1.5},"
                           "\"maxValues\":{\"id\":20,\"big\":5,\"name\":\"c\",\"day\":\"2024-01-20\",\"price\":2.5},"
                           "\"nullCount\":{\"id\":0,\"big\":0,\"name\":3,\"day\":0,\"price\":100,\"maybe_double\":0}}";

/* Whether the file may hold a row matching where, going by stats. */
static bool may(const char *stats, const char *where)
{
    pred_expr *e = NULL;
    pred_error perr;
    cr_assert_eq(pred_parse(where, strlen(where), &e, &perr), PRED_OK, "%s", perr.msg);
    pred_bound *b = NULL;
    cr_assert_eq(pred_bind(e, m, &b, &perr), PRED_OK, "%s", perr.msg);
    delta_file_stats *s = stats ? delta_file_stats_parse(stats, strlen(stats)) : NULL;
    bool r = delta_file_stats_may_match(s, b, m);
    delta_file_stats_free(s);
    pred_bound_free(b);
    pred_free(e);
    return r;
}

Test(file_stats, integer_and_date_bounds_exclude)
{
    cr_expect_not(may(STATS, "id > 20"));
    cr_expect_not(may(STATS, "id < 10"));
    cr_expect_not(may(STATS, "id IN (1, 2, 30)"));
    cr_expect_not(may(STATS, "big >= 6"));
    cr_expect_not(may(STATS, "day < DATE '2024-01-10'"));
    cr_expect_not(may(STATS, "day > DATE '2024-01-20'"));
    cr_expect_not(may(STATS, "id = 15 AND day = DATE '2024-02-01'"));
    cr_expect_not(may(STATS, "id IS NULL"), "nullCount 0");
    cr_expect_not(may(STATS, "price IS NOT NULL"), "every price is null");
}

Test(file_stats, what_may_match_is_kept)
{
    cr_expect(may(STATS, "id = 20"));
    cr_expect(may(STATS, "id >= 10 AND id <= 10"));
    cr_expect(may(STATS, "big BETWEEN -5 AND -5"));
    cr_expect(may(STATS, "day = DATE '2024-01-15'"));
    cr_expect(may(STATS, "id > 20 OR day = DATE '2024-01-20'"));
    cr_expect(may(STATS, "name IS NULL"));
}

Test(file_stats, inexact_bounds_are_not_used)
{
    /* Strings are truncated by writers and doubles may hide NaN: no min/max. */
    cr_expect(may(STATS, "name = 'zzz'"));
    cr_expect(may(STATS, "name < 'a'"));
    cr_expect(may(STATS, "maybe_double > 1e300"));
}

Test(file_stats, nothing_known_keeps_the_file)
{
    cr_expect(may(NULL, "id > 1000"));
    cr_expect(may("", "id > 1000"));
    cr_expect(may("not json", "id > 1000"));
    cr_expect(may("[1,2]", "id > 1000"));
    cr_expect(may("{\"numRecords\":5}", "id > 1000"));
    /* wrong JSON types, unparseable dates, inverted bounds */
    cr_expect(may("{\"numRecords\":5,\"minValues\":{\"id\":\"1\"},\"maxValues\":{\"id\":\"2\"}}", "id > 1000"));
    cr_expect(may("{\"numRecords\":5,\"minValues\":{\"id\":1.0},\"maxValues\":{\"id\":2.0}}", "id > 1000"));
    cr_expect(may("{\"numRecords\":5,\"minValues\":{\"day\":\"2024-13-01\"},\"maxValues\":{\"day\":\"2024-01-01\"}}",
                  "day > DATE '2025-01-01'"));
    cr_expect(may("{\"numRecords\":5,\"minValues\":{\"id\":9},\"maxValues\":{\"id\":1}}", "id > 1000"));
    cr_expect(may("{\"numRecords\":5,\"minValues\":[],\"maxValues\":7}", "id > 1000"));
    /* a null count without a row count cannot tell "all null" */
    cr_expect(may("{\"nullCount\":{\"price\":100}}", "price IS NOT NULL"));
    /* duplicate keys: refused as a whole */
    cr_expect(may("{\"numRecords\":5,\"minValues\":{\"id\":1},\"maxValues\":{\"id\":2},\"maxValues\":{\"id\":2000}}",
                  "id > 1000"));
}

Test(file_stats, record_count)
{
    delta_file_stats *s = delta_file_stats_parse(STATS, strlen(STATS));
    cr_assert_not_null(s);
    cr_expect_eq(delta_file_stats_num_records(s), 100);
    delta_file_stats_free(s);
    cr_expect_eq(delta_file_stats_num_records(NULL), -1);
}
