/* Fuzz the Delta log's per-file statistics: the input is a stats JSON text.
 * It is parsed and judged against fixed predicates bound to a small schema
 * (an INT64, a DATE, a string, a double, a nested int); nothing may crash,
 * and a document the parser refuses must never exclude a file. */
#include "file_stats.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { C_I, C_DT, C_S, C_F, C_XY, NCOLS };

static pq_leaf leaves[NCOLS];
static uint8_t orders[NCOLS];
static pq_file_meta meta;
static pred_bound *bound[6];
static size_t n_bound;

static void leaf(int i, const char *path, pq_physical_type t, int32_t ct, uint16_t depth)
{
    pq_leaf *l = &leaves[i];
    memset(l, 0, sizeof *l);
    l->path = (char *)path;
    l->type = t;
    l->type_length = -1;
    l->converted_type = ct;
    l->scale = l->precision = -1;
    l->repetition = PQ_OPTIONAL;
    l->max_def = depth;
    l->depth = depth;
    l->nested = depth > 1;
}

static void setup(void)
{
    leaf(C_I, "i", PQ_INT64, PQ_CT_NONE, 1);
    leaf(C_DT, "dt", PQ_INT32, PQ_CT_DATE, 1);
    leaf(C_S, "s", PQ_BYTE_ARRAY, PQ_CT_UTF8, 1);
    leaf(C_F, "f", PQ_DOUBLE, PQ_CT_NONE, 1);
    leaf(C_XY, "x.y", PQ_INT32, PQ_CT_NONE, 2);
    for (int i = 0; i < NCOLS; i++)
        orders[i] = PQ_ORDER_TYPE_DEFINED;
    meta.leaves = leaves;
    meta.n_leaves = NCOLS;
    meta.column_orders = orders;
    meta.n_column_orders = NCOLS;
    static const char *const preds[] = {
        "i > 10", "dt = DATE '2024-01-01'", "s = 'a' OR i IS NULL", "f IS NOT NULL AND i < 0",
        "x.y = 3", "NOT (i BETWEEN 1 AND 5)",
    };
    for (size_t k = 0; k < sizeof preds / sizeof preds[0]; k++) {
        pred_expr *e = NULL;
        pred_error err;
        if (pred_parse(preds[k], strlen(preds[k]), &e, &err) != PRED_OK)
            abort();
        if (pred_bind(e, &meta, &bound[n_bound], &err) != PRED_OK)
            abort();
        n_bound++;
        pred_free(e);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setup();
        ready = true;
    }
    delta_file_stats *s = delta_file_stats_parse((const char *)data, size);
    for (size_t k = 0; k < n_bound; k++) {
        bool may = delta_file_stats_may_match(s, bound[k], &meta);
        if (!s && !may)
            abort();
    }
    (void)delta_file_stats_num_records(s);
    delta_file_stats_free(s);
    return 0;
}
