/* The schema: SchemaElements with their logical and converted types, and
 * the tree resolved into leaf columns (dotted paths, max levels). */
#include "parquet_meta_internal.h"

#include <string.h>

/* TimeType and TimestampType share their layout. */
static bool read_time_unit(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    tc_reader *r = &d->r;
    pq_logical_type *lt = obj;
    tc_path_push(r, fd->name, -1);
    int16_t unit = 0;
    bool ok = tc_field_expect(r, f, TC_STRUCT) &&
              pqm_union_member(d, 3, "TimeUnit union has two members", &unit);
    lt->unit = (pq_time_unit)unit;
    if (ok && lt->unit == PQ_UNIT_NONE)
        ok = tc_fail_at(r, TC_E_INVALID, f->offset, "unknown or empty time unit");
    tc_path_pop(r);
    return ok;
}

static const pqm_field time_fields[] = {
    {1, PQM_BOOL, "isAdjustedToUTC", PQM_AT(pq_logical_type, adjusted_to_utc), PQM_REQ},
    {2, PQM_CALL, "unit", .call = read_time_unit, PQM_REQ},
};
static const pqm_field decimal_fields[] = {
    {1, PQM_I32, "scale", PQM_AT(pq_logical_type, decimal_scale), PQM_REQ},
    {2, PQM_I32, "precision", PQM_AT(pq_logical_type, decimal_precision), PQM_REQ},
};
static const pqm_field int_fields[] = {
    {1, PQM_I8, "bitWidth", PQM_AT(pq_logical_type, bit_width), PQM_REQ},
    {2, PQM_BOOL, "isSigned", PQM_AT(pq_logical_type, is_signed), PQM_REQ},
};

/* The LogicalType members with fields; the others are empty structs. */
static const struct {
    int16_t id;
    const char *name;
    pqm_table fields;
} logical_members[] = {
    {PQ_LT_DECIMAL, "DECIMAL", PQM_TABLE(decimal_fields)},
    {PQ_LT_TIME, "TIME", PQM_TABLE(time_fields)},
    {PQ_LT_TIMESTAMP, "TIMESTAMP", PQM_TABLE(time_fields)},
    {PQ_LT_INTEGER, "INTEGER", PQM_TABLE(int_fields)},
};

typedef struct {
    pm *d;
    pq_logical_type *lt;
} logical_ctx;

/* One member of the LogicalType union (there must be one at most). */
static bool logical_member(tc_reader *r, const tc_field *f, void *ctx)
{
    const logical_ctx *c = ctx;
    pq_logical_type *lt = c->lt;
    if (lt->kind != PQ_LT_NONE)
        return tc_fail_at(r, TC_E_INVALID, f->offset, "LogicalType union has two members");
    if (f->type != TC_STRUCT)
        return tc_fail_at(r, TC_E_TYPE, f->offset,
                          "LogicalType member %d has wire type %s, expected struct", (int)f->id,
                          tc_type_name(f->type));
    lt->raw_id = f->id;
    const size_t n = sizeof logical_members / sizeof logical_members[0];
    size_t k = 0;
    while (k < n && logical_members[k].id != f->id)
        k++;
    bool ok;
    if (k < n) {
        tc_path_push(r, logical_members[k].name, -1);
        ok = pqm_struct(c->d, &logical_members[k].fields, lt);
        tc_path_pop(r);
    } else {
        ok = tc_skip_field(r, f);
    }
    if (!ok)
        return false;
    switch (f->id) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8:
    case 10: case 11: case 12: case 13: case 14: case 15: case 16: case 17: case 18: case 19:
        lt->kind = (pq_logical_kind)f->id;
        break;
    default:
        lt->kind = PQ_LT_OTHER;
        break;
    }
    return true;
}

static bool parse_logical_type(pm *d, pq_logical_type *lt)
{
    memset(lt, 0, sizeof *lt);
    logical_ctx c = {d, lt};
    return tc_read_struct(&d->r, logical_member, &c);
}

/* Writers that predate LogicalType (DuckDB, old parquet-java) set only the
 * ConvertedType; the format maps each to a LogicalType, so leaves always carry
 * one when either is set. MAP_KEY_VALUE and INTERVAL have none. */
static const struct {
    uint8_t kind, unit, bit_width; /* pq_logical_kind, pq_time_unit (TIME, TIMESTAMP) */
    bool is_signed;
} from_converted[] = {
    [PQ_CT_UTF8] = {.kind = PQ_LT_STRING},
    [PQ_CT_MAP] = {.kind = PQ_LT_MAP},
    [PQ_CT_LIST] = {.kind = PQ_LT_LIST},
    [PQ_CT_ENUM] = {.kind = PQ_LT_ENUM},
    [PQ_CT_DECIMAL] = {.kind = PQ_LT_DECIMAL},
    [PQ_CT_DATE] = {.kind = PQ_LT_DATE},
    [PQ_CT_TIME_MILLIS] = {.kind = PQ_LT_TIME, .unit = PQ_UNIT_MILLIS},
    [PQ_CT_TIME_MICROS] = {.kind = PQ_LT_TIME, .unit = PQ_UNIT_MICROS},
    [PQ_CT_TIMESTAMP_MILLIS] = {.kind = PQ_LT_TIMESTAMP, .unit = PQ_UNIT_MILLIS},
    [PQ_CT_TIMESTAMP_MICROS] = {.kind = PQ_LT_TIMESTAMP, .unit = PQ_UNIT_MICROS},
    [PQ_CT_UINT_8] = {.kind = PQ_LT_INTEGER, .bit_width = 8},
    [PQ_CT_UINT_16] = {.kind = PQ_LT_INTEGER, .bit_width = 16},
    [PQ_CT_UINT_32] = {.kind = PQ_LT_INTEGER, .bit_width = 32},
    [PQ_CT_UINT_64] = {.kind = PQ_LT_INTEGER, .bit_width = 64},
    [PQ_CT_INT_8] = {.kind = PQ_LT_INTEGER, .bit_width = 8, .is_signed = true},
    [PQ_CT_INT_16] = {.kind = PQ_LT_INTEGER, .bit_width = 16, .is_signed = true},
    [PQ_CT_INT_32] = {.kind = PQ_LT_INTEGER, .bit_width = 32, .is_signed = true},
    [PQ_CT_INT_64] = {.kind = PQ_LT_INTEGER, .bit_width = 64, .is_signed = true},
    [PQ_CT_JSON] = {.kind = PQ_LT_JSON},
    [PQ_CT_BSON] = {.kind = PQ_LT_BSON},
};

static pq_logical_type logical_from_converted(const pq_schema_element *e)
{
    pq_logical_type lt;
    memset(&lt, 0, sizeof lt);
    const int32_t ct = e->converted_type;
    if (ct < 0 || (size_t)ct >= sizeof from_converted / sizeof from_converted[0] ||
        from_converted[ct].kind == PQ_LT_NONE)
        return lt;
    lt.kind = (pq_logical_kind)from_converted[ct].kind;
    lt.raw_id = (int16_t)lt.kind;
    lt.unit = (pq_time_unit)from_converted[ct].unit;
    lt.adjusted_to_utc = lt.unit != PQ_UNIT_NONE; /* TIME and TIMESTAMP are UTC */
    lt.bit_width = (int8_t)from_converted[ct].bit_width;
    lt.is_signed = from_converted[ct].is_signed;
    if (lt.kind == PQ_LT_DECIMAL) {
        lt.decimal_scale = e->scale < 0 ? 0 : e->scale;
        lt.decimal_precision = e->precision;
    }
    return lt;
}

static bool read_logical_type(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    tc_reader *r = &d->r;
    tc_path_push(r, fd->name, -1);
    const bool ok = tc_field_expect(r, f, TC_STRUCT) &&
                    parse_logical_type(d, (pq_logical_type *)((char *)obj + fd->at));
    tc_path_pop(r);
    return ok;
}

/* A SchemaElement as read: its name is copied once the struct is complete. */
typedef struct {
    pq_schema_element e;
    pq_bytes name;
} schema_read;

#define SE(m) PQM_AT(schema_read, e.m)
static const pqm_field schema_element_fields[] = {
    {1, PQM_ENUM, "type", SE(type), .max = PQ_FIXED_LEN_BYTE_ARRAY},
    {2, PQM_I32, "type_length", SE(type_length)},
    {3, PQM_ENUM, "repetition_type", SE(repetition), .max = PQ_VECTOR},
    {4, PQM_BYTES, "name", PQM_AT(schema_read, name), PQM_REQ},
    {5, PQM_I32_NONNEG, "num_children", SE(num_children)},
    {6, PQM_I32, "converted_type", SE(converted_type)},
    {7, PQM_I32, "scale", SE(scale)},
    {8, PQM_I32, "precision", SE(precision)},
    {9, PQM_I32, "field_id", SE(field_id), PQM_HAS(schema_read, e.has_field_id)},
    {10, PQM_CALL, "logicalType", SE(logical), .call = read_logical_type},
};
static const pqm_table schema_element_table = PQM_TABLE(schema_element_fields);

bool pqm_schema_element(pm *d, void *elem, uint32_t i)
{
    (void)i;
    schema_read s = {.e = {.type = -1,
                           .type_length = -1,
                           .repetition = -1,
                           .num_children = -1,
                           .converted_type = PQ_CT_NONE,
                           .scale = -1,
                           .precision = -1}};
    if (!pqm_struct(d, &schema_element_table, &s))
        return false;
    s.e.name = pm_alloc(d, (size_t)s.name.len + 1, 1);
    if (!s.e.name)
        return false;
    if (s.name.len)
        memcpy(s.e.name, s.name.ptr, s.name.len);
    s.e.name_len = s.name.len;
    *(pq_schema_element *)elem = s.e;
    return true;
}

/* Walk the depth-first schema list with num_children and produce the
 * leaves, their dotted paths and max levels. */
#define PQ_MAX_PATH_BYTES (64u << 20)

bool pqm_resolve_leaves(pm *d)
{
    tc_reader *r = &d->r;
    pq_file_meta *m = d->m;
    const size_t at = r->pos;
    if (m->n_schema == 0)
        return tc_fail_at(r, TC_E_INVALID, at, "schema list is empty (no root element)");
    const pq_schema_element *root = &m->schema[0];
    if (root->num_children < 0 && root->type >= 0)
        return tc_fail_at(r, TC_E_INVALID, at, "schema root '%s' is not a group", root->name);

    struct frame {
        uint32_t elem;      /* schema index of the group */
        uint32_t remaining; /* children still to visit */
        uint16_t def, rep;
        bool vector;
    } stack[PQ_MAX_SCHEMA_DEPTH + 1];
    unsigned top = 0;
    stack[0] = (struct frame){0, root->num_children > 0 ? (uint32_t)root->num_children : 0, 0, 0,
                              false};

    /* First pass: count leaves and path bytes. Second pass: fill. */
    uint32_t n_leaves = 0;
    uint64_t path_bytes = 0;
    for (int pass = 0; pass < 2; pass++) {
        top = 0;
        stack[0].remaining = root->num_children > 0 ? (uint32_t)root->num_children : 0;
        uint32_t idx = 1, leaf = 0;
        char *path_buf = NULL;
        if (pass == 1) {
            m->leaves = pm_alloc(d, n_leaves ? n_leaves : 1, sizeof *m->leaves);
            path_buf = pm_alloc(d, (size_t)path_bytes + 1, 1);
            if (!m->leaves || !path_buf)
                return false;
            m->n_leaves = n_leaves;
        }
        for (;;) {
            if (stack[top].remaining == 0) {
                if (top == 0)
                    break;
                top--;
                continue;
            }
            stack[top].remaining--;
            if (idx >= m->n_schema)
                return tc_fail_at(r, TC_E_INVALID, at,
                                  "schema element %u ('%s') declares more children than the "
                                  "%u schema elements hold",
                                  stack[top].elem, m->schema[stack[top].elem].name, m->n_schema);
            const pq_schema_element *e = &m->schema[idx];
            if (e->repetition < 0)
                return tc_fail_at(r, TC_E_INVALID, at,
                                  "schema element %u ('%s') has no repetition_type", idx, e->name);
            uint16_t def = stack[top].def, rep = stack[top].rep;
            if (e->repetition == PQ_OPTIONAL)
                def++;
            else if (e->repetition == PQ_REPEATED) {
                def++;
                rep++;
            }
            const bool vector = stack[top].vector || e->repetition == PQ_VECTOR;
            if (e->num_children > 0) {
                if (top + 1 >= PQ_MAX_SCHEMA_DEPTH)
                    return tc_fail_at(r, TC_E_DEPTH, at,
                                      "schema nesting at element %u deeper than %u levels", idx,
                                      PQ_MAX_SCHEMA_DEPTH);
                top++;
                stack[top] = (struct frame){idx, (uint32_t)e->num_children, def, rep, vector};
            } else if (e->type >= 0) {
                /* Dotted path: names of the open groups (not the root), then the leaf. */
                uint64_t plen = e->name_len;
                for (unsigned k = 1; k <= top; k++)
                    plen += m->schema[stack[k].elem].name_len + 1u;
                if (pass == 0) {
                    path_bytes += plen + 1;
                    if (path_bytes > PQ_MAX_PATH_BYTES)
                        return tc_fail_at(r, TC_E_LIMIT, at,
                                          "leaf column paths exceed %u bytes in total",
                                          PQ_MAX_PATH_BYTES);
                    if (n_leaves == UINT32_MAX)
                        return tc_fail_at(r, TC_E_LIMIT, at, "too many leaves");
                    n_leaves++;
                } else {
                    pq_leaf *L = &m->leaves[leaf];
                    char *p = path_buf;
                    for (unsigned k = 1; k <= top; k++) {
                        const pq_schema_element *g = &m->schema[stack[k].elem];
                        memcpy(p, g->name, g->name_len);
                        p += g->name_len;
                        *p++ = '.';
                    }
                    memcpy(p, e->name, e->name_len);
                    p += e->name_len;
                    *p++ = '\0';
                    L->path = path_buf;
                    path_buf = p;
                    L->schema_index = idx;
                    L->type = (pq_physical_type)e->type;
                    L->type_length = e->type_length;
                    L->converted_type = e->converted_type;
                    L->logical = e->logical;
                    if (L->logical.kind == PQ_LT_NONE)
                        L->logical = logical_from_converted(e);
                    L->scale = e->scale;
                    L->precision = e->precision;
                    L->repetition = (pq_repetition)e->repetition;
                    L->max_def = def;
                    L->max_rep = rep;
                    L->depth = (uint16_t)(top + 1);
                    L->nested = top > 0 || rep > 0 || vector;
                    if (L->type == PQ_FIXED_LEN_BYTE_ARRAY && L->type_length <= 0)
                        return tc_fail_at(r, TC_E_INVALID, at,
                                          "FIXED_LEN_BYTE_ARRAY leaf '%s' has no positive "
                                          "type_length",
                                          L->path);
                }
                leaf++;
            } else if (e->num_children == 0) {
                /* empty group: no leaves */
            } else {
                return tc_fail_at(r, TC_E_INVALID, at,
                                  "schema element %u ('%s') has neither type nor num_children",
                                  idx, e->name);
            }
            idx++;
        }
        if (idx != m->n_schema)
            return tc_fail_at(r, TC_E_INVALID, at,
                              "schema tree ends after %u elements but the list has %u", idx,
                              m->n_schema);
    }
    return true;
}
