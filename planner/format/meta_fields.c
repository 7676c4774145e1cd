/* Reading a thrift struct of parquet.thrift by a table of its fields
 * (parquet_meta_internal.h): one loop for every struct, the field's name on
 * the error path while it is read, ranges, required fields, lists. */
#include "parquet_meta_internal.h"

#include <stdlib.h>

static bool f_bytes(tc_reader *r, const tc_field *f, const char *name, pq_bytes *out)
{
    tc_path_push(r, name, -1);
    const uint8_t *p;
    uint32_t n;
    const bool ok = tc_field_binary(r, f, &p, &n);
    tc_path_pop(r);
    if (ok) {
        out->ptr = p;
        out->len = n;
    }
    return ok;
}

/* The integer kinds: any integer wire type that fits, then the kind's range
 * ("negative value -1", "value 9 is not a valid type (0..7)") at the value. */
static bool f_int(tc_reader *r, const tc_field *f, const pqm_field *fd, void *out)
{
    tc_path_push(r, fd->name, -1);
    const size_t at = r->pos;
    bool ok;
    switch (fd->kind) {
    case PQM_I8: ok = tc_field_i8(r, f, out); break;
    case PQM_I16: ok = tc_field_i16(r, f, out); break;
    case PQM_I64: ok = tc_field_i64(r, f, out); break;
    case PQM_I64_NONNEG:
        ok = tc_field_i64(r, f, out);
        if (ok && *(int64_t *)out < 0)
            ok = tc_fail_at(r, TC_E_RANGE, at, "negative value %lld", (long long)*(int64_t *)out);
        break;
    default: { /* PQM_I32, PQM_I32_NONNEG, PQM_ENUM */
        int32_t *v = out;
        ok = tc_field_i32(r, f, v);
        if (ok && fd->kind == PQM_I32_NONNEG && *v < 0)
            ok = tc_fail_at(r, TC_E_RANGE, at, "negative value %d", (int)*v);
        else if (ok && fd->kind == PQM_ENUM && (*v < 0 || *v > fd->max))
            ok = tc_fail_at(r, TC_E_RANGE, at, "value %d is not a valid %s (0..%d)", (int)*v,
                            fd->name, (int)fd->max);
        break;
    }
    }
    tc_path_pop(r);
    return ok;
}

/* A struct-valued field: its name on the path, its wire type checked. */
static bool f_struct(pm *d, const tc_field *f, const pqm_field *fd, void *obj)
{
    tc_reader *r = &d->r;
    tc_path_push(r, fd->name, -1);
    bool ok = tc_field_expect(r, f, TC_STRUCT);
    if (ok)
        ok = fd->kind == PQM_STATS ? pqm_statistics(d, (pq_statistics *)((char *)obj + fd->at))
                                   : pqm_struct(d, fd->sub, obj);
    tc_path_pop(r);
    return ok;
}

static bool read_field(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    tc_reader *r = &d->r;
    void *v = (char *)obj + fd->at;
    bool ok;
    switch (fd->kind) {
    case PQM_BOOL: ok = f_bool(r, f, fd->name, v); break;
    case PQM_BYTES: ok = f_bytes(r, f, fd->name, v); break;
    case PQM_STATS:
    case PQM_STRUCT: ok = f_struct(d, f, fd, obj); break;
    case PQM_LIST: ok = pqm_list_read(d, fd, f, obj); break;
    case PQM_SKIP: ok = tc_skip_field(r, f); break;
    case PQM_CALL: ok = fd->call(d, fd, f, obj); break;
    default: ok = f_int(r, f, fd, v); break;
    }
    /* Whether the field was read: for a struct, whether any copy was (a
     * failed parse leaves that in the page header), else whether the last was. */
    bool *has = fd->has ? (bool *)((char *)obj + fd->has - 1) : NULL;
    if (has && (ok || fd->kind != PQM_STRUCT))
        *has = ok;
    return ok;
}

static const pqm_field *find_field(const pqm_table *t, int16_t id)
{
    /* Most tables list ids 1, 2, 3, ... in order. */
    if (id >= 1 && (size_t)id <= t->n && t->fields[id - 1].id == id)
        return &t->fields[id - 1];
    for (size_t i = 0; i < t->n; i++)
        if (t->fields[i].id == id)
            return &t->fields[i];
    return NULL;
}

/* The bit of a field id in a struct's `seen` mask (ids 1..31 are tracked). */
static uint32_t field_bit(const tc_field *f)
{
    return f->id > 0 && f->id < 32 ? BIT(f->id) : 0;
}

typedef struct {
    pm *d;
    const pqm_table *t;
    void *obj;
    uint32_t *seen;
} fields_ctx;

static bool table_field(tc_reader *r, const tc_field *f, void *ctx)
{
    const fields_ctx *c = ctx;
    const pqm_field *fd = find_field(c->t, f->id);
    if (!(fd ? read_field(c->d, fd, f, c->obj) : tc_skip_field(r, f)))
        return false;
    *c->seen |= field_bit(f);
    return true;
}

bool pqm_read(pm *d, const pqm_table *t, void *obj, uint32_t *seen)
{
    *seen = 0;
    fields_ctx c = {d, t, obj, seen};
    return tc_read_struct(&d->r, table_field, &c);
}

bool pqm_required(tc_reader *r, const pqm_table *t, uint32_t seen, size_t struct_start)
{
    const pqm_field *missing = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const pqm_field *fd = &t->fields[i];
        if (fd->required && !(seen & BIT(fd->id)) && (!missing || fd->id < missing->id))
            missing = fd;
    }
    if (!missing)
        return true;
    return tc_fail_at(r, TC_E_MISSING, struct_start, "missing required field %s (id %d)",
                      missing->name, (int)missing->id);
}

bool pqm_struct(pm *d, const pqm_table *t, void *obj)
{
    const size_t start = d->r.pos;
    uint32_t seen;
    return pqm_read(d, t, obj, &seen) && pqm_required(&d->r, t, seen, start);
}

bool pqm_list_open(tc_reader *r, const tc_field *f, uint8_t want_elem, uint32_t max,
                   const char *what, uint32_t *count, uint8_t *et)
{
    if (r->failed)
        return false;
    if (f->type != TC_LIST && f->type != TC_SET)
        return tc_fail_at(r, TC_E_TYPE, f->offset, "field %d has wire type %s, expected list",
                          (int)f->id, tc_type_name(f->type));
    const size_t at = r->pos;
    if (!tc_list_begin(r, et, count))
        return false;
    if (*count > 0 && *et != want_elem) {
        const bool int_ok = (want_elem == TC_I32 || want_elem == TC_I64) &&
                            (*et == TC_I8 || *et == TC_I16 || *et == TC_I32 || *et == TC_I64);
        if (!int_ok)
            return tc_fail_at(r, TC_E_TYPE, at, "%s list has %s elements, expected %s", what,
                              tc_type_name(*et), tc_type_name(want_elem));
    }
    if (max && *count > max)
        return tc_fail_at(r, TC_E_LIMIT, at, "%u %s exceed the limit of %u", *count, what, max);
    return true;
}

static bool read_elem(pm *d, const pqm_list *L, uint8_t et, void *e, uint32_t i)
{
    tc_reader *r = &d->r;
    switch (L->elem) {
    case TC_STRUCT:
        tc_path_set_index(r, i);
        return L->sub ? pqm_struct(d, L->sub, e) : L->read(d, e, i);
    case TC_BINARY: {
        pq_bytes *b = e;
        const uint8_t *p;
        uint32_t len;
        if (!tc_read_binary(r, &p, &len))
            return false;
        *b = (pq_bytes){p, len};
        return true;
    }
    case TC_BOOL_TRUE: return tc_read_bool_elem(r, e);
    default: return elem_int(r, et, e); /* TC_I64 */
    }
}

bool pqm_list_read(pm *d, const pqm_field *fd, const tc_field *f, void *obj)
{
    tc_reader *r = &d->r;
    const pqm_list *L = fd->list;
    void **arr = (void **)((char *)obj + fd->at);
    if (L->once && *arr)
        return tc_fail_at(r, TC_E_INVALID, f->offset, "%s listed twice", fd->name);
    tc_path_push(r, fd->name, -1);
    const size_t at = r->pos;
    uint32_t n;
    uint8_t et;
    if (!pqm_list_open(r, f, L->elem, L->max, L->what ? L->what : fd->name, &n, &et))
        return false;
    if (L->count && !L->count(d, n, at))
        return false;
    uint8_t *v = pm_alloc(d, n ? n : 1, L->size);
    if (!v)
        return false;
    if (!d->a)
        free(*arr);
    *arr = v;
    for (uint32_t i = 0; i < n; i++)
        if (!read_elem(d, L, et, v + (size_t)i * L->size, i))
            return false;
    tc_container_end(r);
    tc_path_pop(r);
    *(uint32_t *)((char *)obj + fd->count_at) = n;
    return true;
}

void pqm_free_lists(const pqm_table *t, void *obj)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->fields[i].kind == PQM_LIST)
            free(*(void **)((char *)obj + t->fields[i].at));
}

const pqm_list pqm_bytes_list = {.elem = TC_BINARY, .size = sizeof(pq_bytes)};
const pqm_list pqm_i64_list = {.elem = TC_I64, .size = sizeof(int64_t)};
const pqm_list pqm_bool_list = {.elem = TC_BOOL_TRUE, .size = sizeof(bool)};

typedef struct {
    int16_t max_id;
    const char *twice;
    int16_t *out;
} union_ctx;

static bool union_field(tc_reader *r, const tc_field *f, void *ctx)
{
    const union_ctx *u = ctx;
    if (f->id >= 1 && f->id <= u->max_id && f->type == TC_STRUCT) {
        if (u->twice && *u->out)
            return tc_fail_at(r, TC_E_INVALID, f->offset, "%s", u->twice);
        *u->out = f->id;
    }
    return tc_skip_field(r, f);
}

bool pqm_union_member(pm *d, int16_t max_id, const char *twice, int16_t *out)
{
    *out = 0;
    union_ctx u = {max_id, twice, out};
    return tc_read_struct(&d->r, union_field, &u);
}
