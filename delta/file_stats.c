/* Per-file statistics of the Delta log as predicate statistics. */
#include "file_stats.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pq_value.h"
#include "sv_civil.h"

struct delta_file_stats {
    json_t *doc; /* the stats object */
    long long num_records;
};

delta_file_stats *delta_file_stats_parse(const char *text, size_t len)
{
    if (!text || len == 0 || len > DELTA_FILE_STATS_MAX_BYTES)
        return NULL;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return NULL;
    }
    delta_file_stats *s = calloc(1, sizeof *s);
    if (!s) {
        json_decref(doc);
        return NULL;
    }
    s->doc = doc;
    json_t *n = json_object_get(doc, "numRecords");
    s->num_records = json_is_integer(n) && json_integer_value(n) >= 0 ? (long long)json_integer_value(n) : -1;
    return s;
}

void delta_file_stats_free(delta_file_stats *s)
{
    if (!s)
        return;
    json_decref(s->doc);
    free(s);
}

long long delta_file_stats_num_records(const delta_file_stats *s)
{
    return s ? s->num_records : -1;
}

typedef struct {
    const delta_file_stats *s;
    const pred_bound *b;
    const pq_file_meta *m;
} stats_ctx;

/* One bound: an exact value of the column's kind, or false. */
static bool bound_value(const json_t *j, const pqv_type *t, pqv *out)
{
    if (t->kind == PQV_INT && json_is_integer(j)) {
        *out = pqv_int((int64_t)json_integer_value(j));
        return true;
    }
    if (t->kind == PQV_DATE && json_is_string(j)) {
        int32_t days;
        if (!sv_parse_date(json_string_value(j), json_string_length(j), &days))
            return false;
        *out = pqv_date(days);
        return true;
    }
    return false;
}

static bool column_stats(void *ud, size_t col, pred_col_stats *out)
{
    const stats_ctx *c = ud;
    const uint32_t leaf = pred_bound_leaf(c->b, col);
    if (leaf >= c->m->n_leaves)
        return false;
    const pq_leaf *l = &c->m->leaves[leaf];
    if (l->depth != 1 || l->nested)
        return false; /* nested values are keyed by nested objects: not read */
    const char *name = l->path;
    memset(out, 0, sizeof *out);
    out->num_values = c->s->num_records;
    const json_t *nulls = json_object_get(json_object_get(c->s->doc, "nullCount"), name);
    if (json_is_integer(nulls) && json_integer_value(nulls) >= 0 &&
        (c->s->num_records < 0 || json_integer_value(nulls) <= c->s->num_records)) {
        out->has_null_count = true;
        out->null_count = (int64_t)json_integer_value(nulls);
    }
    const pqv_type *t = pred_bound_type(c->b, col);
    const json_t *lo = json_object_get(json_object_get(c->s->doc, "minValues"), name);
    const json_t *hi = json_object_get(json_object_get(c->s->doc, "maxValues"), name);
    if (t && lo && hi && bound_value(lo, t, &out->min) && bound_value(hi, t, &out->max) &&
        pqv_compare(&out->min, &out->max) != PQV_GT)
        out->has_min_max = true;
    /* Without a row count, a null count cannot tell "all null". */
    if (out->num_values < 0)
        out->has_null_count = false;
    return out->has_min_max || out->has_null_count;
}

bool delta_file_stats_may_match(const delta_file_stats *s, const pred_bound *b, const pq_file_meta *m)
{
    if (!s || !b || !m)
        return true;
    stats_ctx c = {s, b, m};
    return pred_may_match(b, column_stats, &c);
}
