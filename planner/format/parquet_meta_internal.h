/* The toolkit every metadata decoder of planner/format/ shares (FileMetaData,
 * schema, statistics, page index, page headers): the decoding state with its
 * arena, and named field readers that put the field name on the error path
 * ("row_groups[2].columns[0].meta_data.total_compressed_size: ..."), check
 * ranges, required fields and list element types. Private to planner/format/. */
#ifndef SIEVE_PARQUET_META_INTERNAL_H
#define SIEVE_PARQUET_META_INTERNAL_H

#include "parquet_meta.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------- arena (meta_arena.c) ---------------- */

/* Every allocation of a pq_file_meta, freed at once, with a cap. */
struct pq_arena *pqm_arena_new(uint64_t limit);
void pqm_arena_free(struct pq_arena *a);
/* Zeroed memory, 16-byte aligned; NULL on failure or when over the cap. */
void *pqm_arena_alloc(struct pq_arena *a, size_t size);

typedef struct {
    tc_reader r;
    struct pq_arena *a; /* NULL when decoding without an arena (page headers) */
} pm;

/* n elements of size bytes from the arena; fails the reader (TC_E_NOMEM)
 * on overflow or past the cap. */
void *pm_alloc(pm *d, size_t n, size_t size);

/* A reader for one standalone struct of parquet.thrift: strings up to
 * PQ_MAX_STRING_LEN, and root (when not NULL) first on the error path. */
static inline void meta_reader_init(tc_reader *r, const void *buf, size_t len, const char *root)
{
    tc_reader_init(r, buf, len);
    r->max_string = PQ_MAX_STRING_LEN;
    if (root)
        tc_path_push(r, root, -1);
}

/* The reader's error into err (when not NULL); returns its code. */
static inline tc_status meta_reader_error(const tc_reader *r, tc_error *err)
{
    if (err)
        *err = r->err;
    return (tc_status)r->err.code;
}

/* ---------------- parts of FileMetaData ---------------- */

/* Statistics struct at the reader (meta_statistics.c). */
bool pqm_statistics(tc_reader *r, pq_statistics *s);
/* One SchemaElement (meta_schema.c). */
bool pqm_schema_element(pm *d, pq_schema_element *e);
/* m->schema, walked depth-first, into m->leaves: paths and levels (meta_schema.c). */
bool pqm_resolve_leaves(pm *d, pq_file_meta *m);

/* ---------------- named field readers ---------------- */

/* Named field reads: the name goes on the error path while reading. */
#define PQM_NAMED_FIELD(fn, T, read)                                                  \
    static inline bool fn(tc_reader *r, const tc_field *f, const char *name, T *out) \
    {                                                                                \
        tc_path_push(r, name, -1);                                                   \
        const bool ok = read(r, f, out);                                             \
        tc_path_pop(r);                                                              \
        return ok;                                                                   \
    }
PQM_NAMED_FIELD(f_i8, int8_t, tc_field_i8)
PQM_NAMED_FIELD(f_i16, int16_t, tc_field_i16)
PQM_NAMED_FIELD(f_i32, int32_t, tc_field_i32)
PQM_NAMED_FIELD(f_i64, int64_t, tc_field_i64)
PQM_NAMED_FIELD(f_bool, bool, tc_field_bool)
#undef PQM_NAMED_FIELD

static inline bool f_bytes(tc_reader *r, const tc_field *f, const char *name, pq_bytes *out)
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

/* An i32 enum field whose value must lie in [0, max]. */
static inline bool f_enum(tc_reader *r, const tc_field *f, const char *name, int32_t max,
                          int32_t *out)
{
    tc_path_push(r, name, -1);
    const size_t at = r->pos;
    bool ok = tc_field_i32(r, f, out);
    if (ok && (*out < 0 || *out > max))
        ok = tc_fail_at(r, TC_E_RANGE, at, "value %d is not a valid %s (0..%d)", (int)*out, name,
                        (int)max);
    tc_path_pop(r);
    return ok;
}

/* Non-negative integer fields. */
static inline bool f_i32_nonneg(tc_reader *r, const tc_field *f, const char *name, int32_t *out)
{
    tc_path_push(r, name, -1);
    const size_t at = r->pos;
    bool ok = tc_field_i32(r, f, out);
    if (ok && *out < 0)
        ok = tc_fail_at(r, TC_E_RANGE, at, "negative value %d", (int)*out);
    tc_path_pop(r);
    return ok;
}

static inline bool f_i64_nonneg(tc_reader *r, const tc_field *f, const char *name, int64_t *out)
{
    tc_path_push(r, name, -1);
    const size_t at = r->pos;
    bool ok = tc_field_i64(r, f, out);
    if (ok && *out < 0)
        ok = tc_fail_at(r, TC_E_RANGE, at, "negative value %lld", (long long)*out);
    tc_path_pop(r);
    return ok;
}

static inline bool f_skip(tc_reader *r, const tc_field *f)
{
    return tc_skip_field(r, f);
}

#define BIT(id) (1u << (id))

/* After a struct's stop field: every id in `need` must be in `seen`. */
static inline bool require(tc_reader *r, uint32_t seen, uint32_t need, const char *const *names,
                           size_t struct_start)
{
    const uint32_t missing = need & ~seen;
    if (!missing)
        return true;
    int id = 0;
    while (!(missing & BIT(id)))
        id++;
    return tc_fail_at(r, TC_E_MISSING, struct_start, "missing required field %s (id %d)",
                      names[id] ? names[id] : "?", id);
}

/* The bit of a field id in a struct's `seen` mask (ids 1..31 are tracked). */
static inline uint32_t field_bit(const tc_field *f)
{
    return f->id > 0 && f->id < 32 ? BIT(f->id) : 0;
}

/* After a struct's stop field: close it unless the reader failed. */
static inline bool struct_close(tc_reader *r)
{
    if (r->failed)
        return false;
    tc_struct_end(r);
    return true;
}

/* The same, once every id in `need` is in `seen` (require). */
static inline bool struct_done(tc_reader *r, uint32_t seen, uint32_t need,
                               const char *const *names, size_t struct_start)
{
    if (r->failed || !require(r, seen, need, names, struct_start))
        return false;
    tc_struct_end(r);
    return true;
}

/* Open a list field, checking the wire type of the field and of the elements
 * and that the count does not exceed max (0: no extra limit). Integer lists
 * may be written with any integer width; *et gets the element type. */
static inline bool list_open_t(tc_reader *r, const tc_field *f, uint8_t want_elem, uint32_t max,
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

static inline bool list_open(tc_reader *r, const tc_field *f, uint8_t want_elem, uint32_t max,
                             const char *what, uint32_t *count)
{
    uint8_t et;
    return list_open_t(r, f, want_elem, max, what, count, &et);
}

/* One integer element of a list whose element type is et. */
static inline bool elem_int(tc_reader *r, uint8_t et, int64_t *out)
{
    if (et == TC_I8) {
        int8_t b = 0;
        if (!tc_read_i8(r, &b))
            return false;
        *out = b;
        return true;
    }
    return tc_read_i64(r, out);
}

static inline bool f_statistics(tc_reader *r, const tc_field *f, const char *name, pq_statistics *s)
{
    tc_path_push(r, name, -1);
    const bool ok = tc_field_expect(r, f, TC_STRUCT) && pqm_statistics(r, s);
    tc_path_pop(r);
    return ok;
}

#endif
