/* Parquet metadata decoding; see parquet_meta.h. */
#include "parquet_meta.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * Names
 * ====================================================================== */

const char *pq_logical_kind_name(pq_logical_kind k)
{
    switch (k) {
    case PQ_LT_NONE: return "NONE";
    case PQ_LT_STRING: return "STRING";
    case PQ_LT_MAP: return "MAP";
    case PQ_LT_LIST: return "LIST";
    case PQ_LT_ENUM: return "ENUM";
    case PQ_LT_DECIMAL: return "DECIMAL";
    case PQ_LT_DATE: return "DATE";
    case PQ_LT_TIME: return "TIME";
    case PQ_LT_TIMESTAMP: return "TIMESTAMP";
    case PQ_LT_INTEGER: return "INTEGER";
    case PQ_LT_UNKNOWN: return "UNKNOWN";
    case PQ_LT_JSON: return "JSON";
    case PQ_LT_BSON: return "BSON";
    case PQ_LT_UUID: return "UUID";
    case PQ_LT_FLOAT16: return "FLOAT16";
    case PQ_LT_VARIANT: return "VARIANT";
    case PQ_LT_GEOMETRY: return "GEOMETRY";
    case PQ_LT_GEOGRAPHY: return "GEOGRAPHY";
    case PQ_LT_VECTOR: return "VECTOR";
    case PQ_LT_OTHER: return "OTHER";
    }
    return "OTHER";
}

const char *pq_physical_type_name(int t)
{
    static const char *const n[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                    "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t < 8 ? n[t] : "UNKNOWN";
}

const char *pq_encoding_name(int e)
{
    static const char *const n[] = {"PLAIN",
                                    "GROUP_VAR_INT",
                                    "PLAIN_DICTIONARY",
                                    "RLE",
                                    "BIT_PACKED",
                                    "DELTA_BINARY_PACKED",
                                    "DELTA_LENGTH_BYTE_ARRAY",
                                    "DELTA_BYTE_ARRAY",
                                    "RLE_DICTIONARY",
                                    "BYTE_STREAM_SPLIT"};
    return e >= 0 && e < 10 ? n[e] : "UNKNOWN";
}

const char *pq_codec_name(int c)
{
    static const char *const n[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                    "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
    return c >= 0 && c < 8 ? n[c] : "UNKNOWN";
}

const char *pq_page_type_name(int t)
{
    static const char *const n[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
    return t >= 0 && t < 4 ? n[t] : "UNKNOWN";
}

/* ======================================================================
 * Arena: every allocation of a pq_file_meta, freed at once, with a cap.
 * ====================================================================== */

struct pq_arena_block {
    struct pq_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

struct pq_arena {
    struct pq_arena_block *head;
    uint64_t total; /* bytes requested from malloc */
    uint64_t limit;
};

static struct pq_arena *arena_new(uint64_t limit)
{
    struct pq_arena *a = calloc(1, sizeof *a);
    if (a)
        a->limit = limit;
    return a;
}

static void arena_free(struct pq_arena *a)
{
    if (!a)
        return;
    struct pq_arena_block *b = a->head;
    while (b) {
        struct pq_arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

/* Zeroed memory, 16-byte aligned; NULL on failure or when over the cap. */
static void *arena_alloc(struct pq_arena *a, size_t size)
{
    if (size == 0)
        size = 1;
    if (size > a->limit)
        return NULL;
    size = (size + 15) & ~(size_t)15;
    struct pq_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        const size_t block = size > (64u << 10) ? size : (64u << 10);
        if (a->total + block + sizeof *b > a->limit)
            return NULL;
        struct pq_arena_block *nb = malloc(sizeof *nb + block);
        if (!nb)
            return NULL;
        nb->cap = block;
        nb->used = 0;
        a->total += block + sizeof *nb;
        /* A big one-off block goes behind the current one so the current
         * block's free space stays usable. */
        if (b && size > (64u << 10)) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->head = nb;
        }
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

/* ======================================================================
 * Decoding helpers
 * ====================================================================== */

typedef struct {
    tc_reader r;
    struct pq_arena *a; /* NULL when decoding without an arena (page headers) */
} pm;

static void *pm_alloc(pm *d, size_t n, size_t size)
{
    if (d->r.failed)
        return NULL;
    if (size && n > SIZE_MAX / size) {
        tc_fail(&d->r, TC_E_NOMEM, "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    void *p = arena_alloc(d->a, n * size);
    if (!p)
        tc_fail(&d->r, TC_E_NOMEM, "cannot allocate %zu bytes (decoded metadata is capped at %llu)",
                n * size, (unsigned long long)d->a->limit);
    return p;
}

/* Named field reads: the name goes on the error path while reading. */
static bool f_i8(tc_reader *r, const tc_field *f, const char *name, int8_t *out)
{
    tc_path_push(r, name, -1);
    const bool ok = tc_field_i8(r, f, out);
    tc_path_pop(r);
    return ok;
}

static bool f_i16(tc_reader *r, const tc_field *f, const char *name, int16_t *out)
{
    tc_path_push(r, name, -1);
    const bool ok = tc_field_i16(r, f, out);
    tc_path_pop(r);
    return ok;
}

static bool f_i32(tc_reader *r, const tc_field *f, const char *name, int32_t *out)
{
    tc_path_push(r, name, -1);
    const bool ok = tc_field_i32(r, f, out);
    tc_path_pop(r);
    return ok;
}

static bool f_i64(tc_reader *r, const tc_field *f, const char *name, int64_t *out)
{
    tc_path_push(r, name, -1);
    const bool ok = tc_field_i64(r, f, out);
    tc_path_pop(r);
    return ok;
}

static bool f_bool(tc_reader *r, const tc_field *f, const char *name, bool *out)
{
    tc_path_push(r, name, -1);
    const bool ok = tc_field_bool(r, f, out);
    tc_path_pop(r);
    return ok;
}

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

/* An i32 enum field whose value must lie in [0, max]. */
static bool f_enum(tc_reader *r, const tc_field *f, const char *name, int32_t max, int32_t *out)
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
static bool f_i32_nonneg(tc_reader *r, const tc_field *f, const char *name, int32_t *out)
{
    tc_path_push(r, name, -1);
    const size_t at = r->pos;
    bool ok = tc_field_i32(r, f, out);
    if (ok && *out < 0)
        ok = tc_fail_at(r, TC_E_RANGE, at, "negative value %d", (int)*out);
    tc_path_pop(r);
    return ok;
}

static bool f_i64_nonneg(tc_reader *r, const tc_field *f, const char *name, int64_t *out)
{
    tc_path_push(r, name, -1);
    const size_t at = r->pos;
    bool ok = tc_field_i64(r, f, out);
    if (ok && *out < 0)
        ok = tc_fail_at(r, TC_E_RANGE, at, "negative value %lld", (long long)*out);
    tc_path_pop(r);
    return ok;
}

static bool f_skip(tc_reader *r, const tc_field *f)
{
    return tc_skip_field(r, f);
}

#define BIT(id) (1u << (id))

/* After a struct's stop field: every id in `need` must be in `seen`. */
static bool require(tc_reader *r, uint32_t seen, uint32_t need, const char *const *names,
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

/* Open a list field, checking the wire type of the field and of the elements
 * and that the count does not exceed max (0: no extra limit). Integer lists
 * may be written with any integer width; *et gets the element type. */
static bool list_open_t(tc_reader *r, const tc_field *f, uint8_t want_elem, uint32_t max,
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

static bool list_open(tc_reader *r, const tc_field *f, uint8_t want_elem, uint32_t max,
                      const char *what, uint32_t *count)
{
    uint8_t et;
    return list_open_t(r, f, want_elem, max, what, count, &et);
}

/* One integer element of a list whose element type is et. */
static bool elem_int(tc_reader *r, uint8_t et, int64_t *out)
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

/* ======================================================================
 * Statistics
 * ====================================================================== */

static bool parse_statistics(tc_reader *r, pq_statistics *s)
{
    memset(s, 0, sizeof *s);
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_bytes(r, &f, "max", &s->max); s->has_max = ok; break;
        case 2: ok = f_bytes(r, &f, "min", &s->min); s->has_min = ok; break;
        case 3: ok = f_i64(r, &f, "null_count", &s->null_count); s->has_null_count = ok; break;
        case 4:
            ok = f_i64(r, &f, "distinct_count", &s->distinct_count);
            s->has_distinct_count = ok;
            break;
        case 5: ok = f_bytes(r, &f, "max_value", &s->max_value); s->has_max_value = ok; break;
        case 6: ok = f_bytes(r, &f, "min_value", &s->min_value); s->has_min_value = ok; break;
        case 7:
            ok = f_bool(r, &f, "is_max_value_exact", &s->is_max_value_exact);
            s->has_is_max_value_exact = ok;
            break;
        case 8:
            ok = f_bool(r, &f, "is_min_value_exact", &s->is_min_value_exact);
            s->has_is_min_value_exact = ok;
            break;
        case 9: ok = f_i64(r, &f, "nan_count", &s->nan_count); s->has_nan_count = ok; break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
    }
    if (r->failed)
        return false;
    tc_struct_end(r);
    return true;
}

static bool f_statistics(tc_reader *r, const tc_field *f, const char *name, pq_statistics *s)
{
    tc_path_push(r, name, -1);
    const bool ok = tc_field_expect(r, f, TC_STRUCT) && parse_statistics(r, s);
    tc_path_pop(r);
    return ok;
}

tc_status pq_statistics_parse(const uint8_t *buf, size_t len, pq_statistics *out,
                              size_t *consumed, tc_error *err)
{
    tc_reader r;
    tc_reader_init(&r, buf, len);
    r.max_string = PQ_MAX_STRING_LEN;
    tc_path_push(&r, "Statistics", -1);
    if (!parse_statistics(&r, out)) {
        if (err)
            *err = r.err;
        return r.err.code;
    }
    if (consumed)
        *consumed = r.pos;
    return TC_OK;
}

/* ======================================================================
 * Schema
 * ====================================================================== */

static bool parse_time_unit(tc_reader *r, pq_time_unit *unit)
{
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    *unit = PQ_UNIT_NONE;
    while (tc_next_field(r, &last, &f)) {
        if (f.id >= 1 && f.id <= 3 && f.type == TC_STRUCT) {
            if (*unit != PQ_UNIT_NONE)
                return tc_fail_at(r, TC_E_INVALID, f.offset, "TimeUnit union has two members");
            *unit = (pq_time_unit)f.id;
        }
        if (!f_skip(r, &f))
            return false;
    }
    if (r->failed)
        return false;
    tc_struct_end(r);
    return true;
}

/* TimeType and TimestampType share their layout. */
static bool parse_time_type(tc_reader *r, pq_logical_type *lt, size_t start)
{
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_bool(r, &f, "isAdjustedToUTC", &lt->adjusted_to_utc); break;
        case 2:
            tc_path_push(r, "unit", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_time_unit(r, &lt->unit);
            if (ok && lt->unit == PQ_UNIT_NONE)
                ok = tc_fail_at(r, TC_E_INVALID, f.offset, "unknown or empty time unit");
            tc_path_pop(r);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "isAdjustedToUTC", "unit"};
    if (!require(r, seen, BIT(1) | BIT(2), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_decimal_type(tc_reader *r, pq_logical_type *lt, size_t start)
{
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32(r, &f, "scale", &lt->decimal_scale); break;
        case 2: ok = f_i32(r, &f, "precision", &lt->decimal_precision); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "scale", "precision"};
    if (!require(r, seen, BIT(1) | BIT(2), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_int_type(tc_reader *r, pq_logical_type *lt, size_t start)
{
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i8(r, &f, "bitWidth", &lt->bit_width); break;
        case 2: ok = f_bool(r, &f, "isSigned", &lt->is_signed); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "bitWidth", "isSigned"};
    if (!require(r, seen, BIT(1) | BIT(2), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_logical_type(tc_reader *r, pq_logical_type *lt)
{
    memset(lt, 0, sizeof *lt);
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    while (tc_next_field(r, &last, &f)) {
        if (lt->kind != PQ_LT_NONE)
            return tc_fail_at(r, TC_E_INVALID, f.offset, "LogicalType union has two members");
        if (f.type != TC_STRUCT)
            return tc_fail_at(r, TC_E_TYPE, f.offset,
                              "LogicalType member %d has wire type %s, expected struct",
                              (int)f.id, tc_type_name(f.type));
        lt->raw_id = f.id;
        const size_t start = r->pos;
        bool ok;
        switch (f.id) {
        case PQ_LT_DECIMAL:
            tc_path_push(r, "DECIMAL", -1);
            ok = parse_decimal_type(r, lt, start);
            tc_path_pop(r);
            break;
        case PQ_LT_TIME:
        case PQ_LT_TIMESTAMP:
            tc_path_push(r, f.id == PQ_LT_TIME ? "TIME" : "TIMESTAMP", -1);
            ok = parse_time_type(r, lt, start);
            tc_path_pop(r);
            break;
        case PQ_LT_INTEGER:
            tc_path_push(r, "INTEGER", -1);
            ok = parse_int_type(r, lt, start);
            tc_path_pop(r);
            break;
        default:
            ok = f_skip(r, &f);
            break;
        }
        if (!ok)
            return false;
        switch (f.id) {
        case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8:
        case 10: case 11: case 12: case 13: case 14: case 15: case 16: case 17: case 18: case 19:
            lt->kind = (pq_logical_kind)f.id;
            break;
        default:
            lt->kind = PQ_LT_OTHER;
            break;
        }
    }
    if (r->failed)
        return false;
    tc_struct_end(r);
    return true;
}

/* Writers that predate LogicalType (DuckDB, old parquet-java) set only the
 * ConvertedType; the format maps each to a LogicalType, so leaves always carry
 * one when either is set. */
static pq_logical_type logical_from_converted(const pq_schema_element *e)
{
    pq_logical_type lt;
    memset(&lt, 0, sizeof lt);
    lt.kind = PQ_LT_NONE;
    switch (e->converted_type) {
    case PQ_CT_UTF8: lt.kind = PQ_LT_STRING; break;
    case PQ_CT_MAP: lt.kind = PQ_LT_MAP; break;
    case PQ_CT_LIST: lt.kind = PQ_LT_LIST; break;
    case PQ_CT_ENUM: lt.kind = PQ_LT_ENUM; break;
    case PQ_CT_JSON: lt.kind = PQ_LT_JSON; break;
    case PQ_CT_BSON: lt.kind = PQ_LT_BSON; break;
    case PQ_CT_DATE: lt.kind = PQ_LT_DATE; break;
    case PQ_CT_DECIMAL:
        lt.kind = PQ_LT_DECIMAL;
        lt.decimal_scale = e->scale < 0 ? 0 : e->scale;
        lt.decimal_precision = e->precision;
        break;
    case PQ_CT_TIME_MILLIS:
    case PQ_CT_TIME_MICROS:
        lt.kind = PQ_LT_TIME;
        lt.adjusted_to_utc = true;
        lt.unit = e->converted_type == PQ_CT_TIME_MILLIS ? PQ_UNIT_MILLIS : PQ_UNIT_MICROS;
        break;
    case PQ_CT_TIMESTAMP_MILLIS:
    case PQ_CT_TIMESTAMP_MICROS:
        lt.kind = PQ_LT_TIMESTAMP;
        lt.adjusted_to_utc = true;
        lt.unit = e->converted_type == PQ_CT_TIMESTAMP_MILLIS ? PQ_UNIT_MILLIS : PQ_UNIT_MICROS;
        break;
    case PQ_CT_UINT_8: case PQ_CT_UINT_16: case PQ_CT_UINT_32: case PQ_CT_UINT_64:
    case PQ_CT_INT_8: case PQ_CT_INT_16: case PQ_CT_INT_32: case PQ_CT_INT_64: {
        static const int8_t widths[] = {8, 16, 32, 64};
        bool is_unsigned = e->converted_type <= PQ_CT_UINT_64;
        int base = is_unsigned ? PQ_CT_UINT_8 : PQ_CT_INT_8;
        lt.kind = PQ_LT_INTEGER;
        lt.bit_width = widths[e->converted_type - base];
        lt.is_signed = !is_unsigned;
        break;
    }
    default: break;
    }
    if (lt.kind != PQ_LT_NONE)
        lt.raw_id = (int16_t)lt.kind;
    return lt;
}

static bool parse_schema_element(pm *d, pq_schema_element *e)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    e->type = -1;
    e->type_length = -1;
    e->repetition = -1;
    e->num_children = -1;
    e->converted_type = PQ_CT_NONE;
    e->scale = -1;
    e->precision = -1;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    pq_bytes name = {0};
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_enum(r, &f, "type", PQ_FIXED_LEN_BYTE_ARRAY, &e->type); break;
        case 2: ok = f_i32(r, &f, "type_length", &e->type_length); break;
        case 3: ok = f_enum(r, &f, "repetition_type", PQ_VECTOR, &e->repetition); break;
        case 4: ok = f_bytes(r, &f, "name", &name); break;
        case 5: ok = f_i32_nonneg(r, &f, "num_children", &e->num_children); break;
        case 6: ok = f_i32(r, &f, "converted_type", &e->converted_type); break;
        case 7: ok = f_i32(r, &f, "scale", &e->scale); break;
        case 8: ok = f_i32(r, &f, "precision", &e->precision); break;
        case 9: ok = f_i32(r, &f, "field_id", &e->field_id); e->has_field_id = ok; break;
        case 10:
            tc_path_push(r, "logicalType", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_logical_type(r, &e->logical);
            tc_path_pop(r);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, NULL, NULL, NULL, "name"};
    if (!require(r, seen, BIT(4), names, start))
        return false;
    tc_struct_end(r);
    e->name = pm_alloc(d, (size_t)name.len + 1, 1);
    if (!e->name)
        return false;
    if (name.len)
        memcpy(e->name, name.ptr, name.len);
    e->name_len = name.len;
    return true;
}

/* Walk the depth-first schema list with num_children and produce the
 * leaves, their dotted paths and max levels. */
#define PQ_MAX_PATH_BYTES (64u << 20)

static bool resolve_leaves(pm *d, pq_file_meta *m)
{
    tc_reader *r = &d->r;
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

static bool parse_key_value(pm *d, pq_key_value *kv)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_bytes(r, &f, "key", &kv->key); break;
        case 2: ok = f_bytes(r, &f, "value", &kv->value); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "key"};
    if (!require(r, seen, BIT(1), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_kv_list(pm *d, const tc_field *f, const char *name, pq_key_value **out,
                          uint32_t *n_out)
{
    tc_reader *r = &d->r;
    tc_path_push(r, name, -1);
    uint32_t n;
    if (!list_open(r, f, TC_STRUCT, 0, name, &n))
        return false;
    pq_key_value *kv = pm_alloc(d, n ? n : 1, sizeof *kv);
    if (!kv)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        tc_path_set_index(r, i);
        if (!parse_key_value(d, &kv[i]))
            return false;
    }
    tc_container_end(r);
    tc_path_pop(r);
    *out = kv;
    *n_out = n;
    return true;
}

/* ======================================================================
 * Column chunks and row groups
 * ====================================================================== */

static bool parse_encoding_stats(tc_reader *r, pq_encoding_stats *es)
{
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32(r, &f, "page_type", &es->page_type); break;
        case 2: ok = f_i32(r, &f, "encoding", &es->encoding); break;
        case 3: ok = f_i32(r, &f, "count", &es->count); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "page_type", "encoding", "count"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_column_meta(pm *d, pq_column_chunk *c)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok = true;
        switch (f.id) {
        case 1: {
            int32_t t;
            ok = f_enum(r, &f, "type", PQ_FIXED_LEN_BYTE_ARRAY, &t);
            c->type = (pq_physical_type)t;
            break;
        }
        case 2: {
            tc_path_push(r, "encodings", -1);
            uint32_t n;
            uint8_t et;
            ok = list_open_t(r, &f, TC_I32, 0, "encodings", &n, &et);
            for (uint32_t i = 0; ok && i < n; i++) {
                const size_t at = r->pos;
                int64_t e;
                ok = elem_int(r, et, &e);
                if (ok && (e < 0 || e > 31))
                    ok = tc_fail_at(r, TC_E_RANGE, at, "encoding %lld out of range",
                                    (long long)e);
                if (ok)
                    c->encodings_mask |= 1u << e;
            }
            if (ok) {
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 3: {
            tc_path_push(r, "path_in_schema", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_BINARY, 0, "path_in_schema", &n);
            if (ok) {
                c->path_in_schema = pm_alloc(d, n ? n : 1, sizeof *c->path_in_schema);
                ok = c->path_in_schema != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                const uint8_t *p;
                uint32_t len;
                ok = tc_read_binary(r, &p, &len);
                c->path_in_schema[i] = (pq_bytes){p, len};
            }
            if (ok) {
                c->n_path = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 4: {
            int32_t v = 0;
            ok = f_i32(r, &f, "codec", &v);
            c->codec = (pq_codec)v;
            break;
        }
        case 5: ok = f_i64_nonneg(r, &f, "num_values", &c->num_values); break;
        case 6:
            ok = f_i64_nonneg(r, &f, "total_uncompressed_size", &c->total_uncompressed_size);
            break;
        case 7:
            ok = f_i64_nonneg(r, &f, "total_compressed_size", &c->total_compressed_size);
            break;
        case 8: ok = parse_kv_list(d, &f, "key_value_metadata", &c->kv, &c->n_kv); break;
        case 9: ok = f_i64_nonneg(r, &f, "data_page_offset", &c->data_page_offset); break;
        case 10:
            ok = f_i64(r, &f, "index_page_offset", &c->index_page_offset);
            c->has_index_page_offset = ok;
            break;
        case 11:
            ok = f_i64(r, &f, "dictionary_page_offset", &c->dictionary_page_offset);
            c->has_dictionary_page_offset = ok;
            break;
        case 12:
            ok = f_statistics(r, &f, "statistics", &c->statistics);
            c->has_statistics = ok;
            break;
        case 13: {
            tc_path_push(r, "encoding_stats", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "encoding_stats", &n);
            if (ok) {
                c->encoding_stats = pm_alloc(d, n ? n : 1, sizeof *c->encoding_stats);
                ok = c->encoding_stats != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_encoding_stats(r, &c->encoding_stats[i]);
            }
            if (ok) {
                c->n_encoding_stats = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 14:
            ok = f_i64(r, &f, "bloom_filter_offset", &c->bloom_filter_offset);
            c->has_bloom_filter_offset = ok;
            break;
        case 15:
            ok = f_i32(r, &f, "bloom_filter_length", &c->bloom_filter_length);
            c->has_bloom_filter_length = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL,
                                        "type",
                                        "encodings",
                                        "path_in_schema",
                                        "codec",
                                        "num_values",
                                        "total_uncompressed_size",
                                        "total_compressed_size",
                                        NULL,
                                        "data_page_offset"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(9),
                 names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool range_check(tc_reader *r, size_t at, const char *what, int64_t off, int64_t len,
                        uint64_t data_end)
{
    if (off < 0 || len < 0)
        return tc_fail_at(r, TC_E_RANGE, at, "%s range [%lld, +%lld) is negative", what,
                          (long long)off, (long long)len);
    /* An empty range names no bytes: pyarrow writes [0, 0) for the chunks of an
     * empty row group. */
    if (data_end == 0 || len == 0)
        return true;
    if ((uint64_t)off < 4 || (uint64_t)off > data_end || (uint64_t)len > data_end - (uint64_t)off)
        return tc_fail_at(r, TC_E_RANGE, at,
                          "%s range [%lld, %lld) lies outside the data area [4, %llu)", what,
                          (long long)off, (long long)off + (long long)len,
                          (unsigned long long)data_end);
    return true;
}

static bool parse_column_chunk(pm *d, pq_column_chunk *c, const pq_leaf *leaf, uint64_t data_end)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    bool has_oi_off = false, has_oi_len = false, has_ci_off = false, has_ci_len = false;
    bool has_crypto = false;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_bytes(r, &f, "file_path", &c->file_path); break;
        case 2: ok = f_i64(r, &f, "file_offset", &c->file_offset); break;
        case 3:
            tc_path_push(r, "meta_data", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_column_meta(d, c);
            if (ok)
                tc_path_pop(r);
            break;
        case 4:
            ok = f_i64(r, &f, "offset_index_offset", &c->offset_index_offset);
            has_oi_off = ok;
            break;
        case 5:
            ok = f_i32(r, &f, "offset_index_length", &c->offset_index_length);
            has_oi_len = ok;
            break;
        case 6:
            ok = f_i64(r, &f, "column_index_offset", &c->column_index_offset);
            has_ci_off = ok;
            break;
        case 7:
            ok = f_i32(r, &f, "column_index_length", &c->column_index_length);
            has_ci_len = ok;
            break;
        case 8:
        case 9:
            has_crypto = true;
            ok = f_skip(r, &f);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    if (!(seen & BIT(3)))
        return tc_fail_at(r, has_crypto ? TC_E_ENCRYPTED : TC_E_MISSING, start,
                          has_crypto ? "column is encrypted (no plaintext meta_data)"
                                     : "missing required field meta_data (id 3)");
    c->has_offset_index = has_oi_off && has_oi_len;
    c->has_column_index = has_ci_off && has_ci_len;
    tc_struct_end(r);

    /* Consistency with the schema and the file. */
    if (c->type != leaf->type)
        return tc_fail_at(r, TC_E_MISMATCH, start,
                          "meta_data.type %s differs from schema leaf '%s' (%s)",
                          pq_physical_type_name(c->type), leaf->path,
                          pq_physical_type_name(leaf->type));
    if (c->file_path.ptr == NULL) {
        uint64_t off, len;
        if (!pq_column_chunk_range(c, &off, &len))
            return tc_fail_at(r, TC_E_RANGE, start, "column chunk byte range overflows");
        if (!range_check(r, start, "column chunk", (int64_t)off, (int64_t)len, data_end))
            return false;
        if (c->has_offset_index &&
            !range_check(r, start, "offset index", c->offset_index_offset,
                         c->offset_index_length, data_end))
            return false;
        if (c->has_column_index &&
            !range_check(r, start, "column index", c->column_index_offset,
                         c->column_index_length, data_end))
            return false;
    }
    return true;
}

static bool parse_row_group(pm *d, pq_row_group *g, const pq_file_meta *m, uint64_t data_end)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: {
            if (g->columns)
                return tc_fail_at(r, TC_E_INVALID, f.offset, "columns listed twice");
            tc_path_push(r, "columns", -1);
            const size_t at = r->pos;
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "columns", &n);
            if (ok && n != m->n_leaves)
                ok = tc_fail_at(r, TC_E_MISMATCH, at,
                                "row group has %u columns but the schema has %u leaves", n,
                                m->n_leaves);
            if (ok) {
                g->columns = pm_alloc(d, n ? n : 1, sizeof *g->columns);
                ok = g->columns != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_column_chunk(d, &g->columns[i], &m->leaves[i], data_end);
            }
            if (ok) {
                g->n_columns = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 2: ok = f_i64(r, &f, "total_byte_size", &g->total_byte_size); break;
        case 3: ok = f_i64_nonneg(r, &f, "num_rows", &g->num_rows); break;
        case 4:
            g->has_sorting_columns = true;
            ok = f_skip(r, &f);
            break;
        case 5:
            ok = f_i64(r, &f, "file_offset", &g->file_offset);
            g->has_file_offset = ok;
            break;
        case 6:
            ok = f_i64(r, &f, "total_compressed_size", &g->total_compressed_size);
            g->has_total_compressed_size = ok;
            break;
        case 7:
            ok = f_i16(r, &f, "ordinal", &g->ordinal);
            g->has_ordinal = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "columns", "total_byte_size", "num_rows"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_column_order(tc_reader *r, uint8_t *out)
{
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    *out = PQ_ORDER_UNKNOWN;
    while (tc_next_field(r, &last, &f)) {
        if (f.id >= 1 && f.id <= 3 && f.type == TC_STRUCT)
            *out = (uint8_t)f.id;
        if (!f_skip(r, &f))
            return false;
    }
    if (r->failed)
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_file_meta_struct(pm *d, pq_file_meta *m, uint64_t data_end)
{
    tc_reader *r = &d->r;
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32(r, &f, "version", &m->version); break;
        case 2: {
            if (seen & BIT(2))
                return tc_fail_at(r, TC_E_INVALID, f.offset, "schema listed twice");
            tc_path_push(r, "schema", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, PQ_MAX_SCHEMA_ELEMENTS, "schema elements", &n);
            if (ok) {
                m->schema = pm_alloc(d, n ? n : 1, sizeof *m->schema);
                ok = m->schema != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_schema_element(d, &m->schema[i]);
            }
            if (ok) {
                m->n_schema = n;
                tc_container_end(r);
                tc_path_set_index(r, -1);
                ok = resolve_leaves(d, m);
            }
            if (ok)
                tc_path_pop(r);
            break;
        }
        case 3: ok = f_i64_nonneg(r, &f, "num_rows", &m->num_rows); break;
        case 4: {
            if (!(seen & BIT(2)))
                return tc_fail_at(r, TC_E_INVALID, f.offset,
                                  "row_groups appear before the schema");
            if (seen & BIT(4))
                return tc_fail_at(r, TC_E_INVALID, f.offset, "row_groups listed twice");
            tc_path_push(r, "row_groups", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, PQ_MAX_ROW_GROUPS, "row groups", &n);
            if (ok) {
                m->row_groups = pm_alloc(d, n ? n : 1, sizeof *m->row_groups);
                ok = m->row_groups != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_row_group(d, &m->row_groups[i], m, data_end);
            }
            if (ok) {
                m->n_row_groups = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 5: ok = parse_kv_list(d, &f, "key_value_metadata", &m->kv, &m->n_kv); break;
        case 6: ok = f_bytes(r, &f, "created_by", &m->created_by); break;
        case 7: {
            tc_path_push(r, "column_orders", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "column_orders", &n);
            if (ok) {
                m->column_orders = pm_alloc(d, n ? n : 1, 1);
                ok = m->column_orders != NULL;
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_column_order(r, &m->column_orders[i]);
            }
            if (ok) {
                m->n_column_orders = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 8:
            m->has_encryption_algorithm = true;
            ok = f_skip(r, &f);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "version", "schema", "num_rows", "row_groups"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), names, start))
        return false;
    tc_struct_end(r);
    /* Row counts must add up. */
    int64_t total = 0;
    for (uint32_t i = 0; i < m->n_row_groups; i++) {
        if (m->row_groups[i].num_rows > INT64_MAX - total)
            return tc_fail_at(r, TC_E_RANGE, start, "row group row counts overflow");
        total += m->row_groups[i].num_rows;
    }
    if (total != m->num_rows)
        return tc_fail_at(r, TC_E_MISMATCH, start,
                          "num_rows is %lld but the row groups hold %lld rows",
                          (long long)m->num_rows, (long long)total);
    return true;
}

/* ======================================================================
 * FileMetaData entry points
 * ====================================================================== */

void pq_file_meta_free(pq_file_meta *m)
{
    if (!m)
        return;
    arena_free(m->arena);
    free(m);
}

tc_status pq_file_meta_parse(const uint8_t *buf, size_t len, uint64_t data_end,
                             pq_file_meta **out, tc_error *err)
{
    *out = NULL;
    if (!buf && len)
        return sv_fail(err, TC_E_INVALID, 0, "no buffer");
    if (len > PQ_MAX_FOOTER_LEN)
        return sv_fail(err, TC_E_LIMIT, 0, "footer of %zu bytes exceeds the %u-byte limit",
                       len, PQ_MAX_FOOTER_LEN);
    pq_file_meta *m = calloc(1, sizeof *m);
    struct pq_arena *a = arena_new(PQ_MAX_DECODED_BYTES);
    if (!m || !a) {
        free(m);
        arena_free(a);
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory");
    }
    m->arena = a;
    pm d;
    d.a = a;
    uint8_t *copy = arena_alloc(a, len);
    if (!copy) {
        pq_file_meta_free(m);
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory copying the footer");
    }
    if (len)
        memcpy(copy, buf, len);
    tc_reader_init(&d.r, copy, len);
    d.r.max_string = PQ_MAX_STRING_LEN;
    if (!parse_file_meta_struct(&d, m, data_end)) {
        if (err)
            *err = d.r.err;
        pq_file_meta_free(m);
        return d.r.err.code;
    }
    *out = m;
    return TC_OK;
}

tc_status pq_footer_locate(uint64_t file_size, const uint8_t last8[PQ_TAIL_LEN],
                           pq_footer_loc *loc, tc_error *err)
{
    if (file_size < 12)
        return sv_fail(err, TC_E_TRUNCATED, 0,
                       "file of %llu bytes is too short to be Parquet (needs 12)",
                       (unsigned long long)file_size);
    const uint64_t magic_at = file_size - 4;
    if (memcmp(last8 + 4, "PARE", 4) == 0)
        return sv_fail(err, TC_E_ENCRYPTED, magic_at,
                       "file ends with \"PARE\": encrypted footer is not supported");
    if (memcmp(last8 + 4, "PAR1", 4) != 0)
        return sv_fail(err, TC_E_MAGIC, magic_at,
                       "file does not end with \"PAR1\" (found %02x %02x %02x %02x)",
                       last8[4], last8[5], last8[6], last8[7]);
    const uint32_t flen = (uint32_t)last8[0] | (uint32_t)last8[1] << 8 |
                          (uint32_t)last8[2] << 16 | (uint32_t)last8[3] << 24;
    if (flen == 0)
        return sv_fail(err, TC_E_RANGE, file_size - 8, "footer length is zero");
    if (flen > PQ_MAX_FOOTER_LEN)
        return sv_fail(err, TC_E_LIMIT, file_size - 8,
                       "footer length %u exceeds the %u-byte limit", flen,
                       PQ_MAX_FOOTER_LEN);
    if ((uint64_t)flen + 12 > file_size)
        return sv_fail(err, TC_E_RANGE, file_size - 8,
                       "footer length %u runs past the start of a %llu-byte file", flen,
                       (unsigned long long)file_size);
    loc->footer_len = flen;
    loc->footer_offset = file_size - 8 - flen;
    return TC_OK;
}

tc_status pq_file_meta_from_tail(const uint8_t *tail, size_t tail_len, uint64_t file_size,
                                 pq_file_meta **out, uint64_t *need_tail, tc_error *err)
{
    *out = NULL;
    if (tail_len > file_size)
        return sv_fail(err, TC_E_INVALID, 0, "tail of %zu bytes is longer than the file",
                       tail_len);
    if (tail_len < PQ_TAIL_LEN) {
        if (need_tail)
            *need_tail = PQ_TAIL_LEN;
        if (file_size < 12)
            return sv_fail(err, TC_E_TRUNCATED, 0,
                           "file of %llu bytes is too short to be Parquet (needs 12)",
                           (unsigned long long)file_size);
        return sv_fail(err, TC_E_NEED_MORE, 0, "need the last %u bytes of the file",
                       PQ_TAIL_LEN);
    }
    pq_footer_loc loc;
    const tc_status s = pq_footer_locate(file_size, tail + tail_len - PQ_TAIL_LEN, &loc, err);
    if (s != TC_OK)
        return s;
    const uint64_t need = (uint64_t)loc.footer_len + PQ_TAIL_LEN;
    if (need_tail)
        *need_tail = need;
    if (tail_len < need)
        return sv_fail(err, TC_E_NEED_MORE, 0,
                       "need the last %llu bytes of the file for a %u-byte footer",
                       (unsigned long long)need, loc.footer_len);
    const uint8_t *footer = tail + tail_len - need;
    /* Errors inside the footer report offsets relative to the footer. */
    const tc_status ps = pq_file_meta_parse(footer, loc.footer_len, loc.footer_offset, out, err);
    if (ps != TC_OK)
        return ps;
    (*out)->file_size = file_size;
    (*out)->footer_offset = loc.footer_offset;
    (*out)->footer_len = loc.footer_len;
    return TC_OK;
}

bool pq_column_chunk_range(const pq_column_chunk *c, uint64_t *offset, uint64_t *length)
{
    int64_t start = c->data_page_offset;
    /* A chunk without data pages (pyarrow's empty row groups) has
     * data_page_offset 0 and only a dictionary page. */
    if (c->has_dictionary_page_offset && c->dictionary_page_offset > 0 &&
        (c->dictionary_page_offset < start || start == 0))
        start = c->dictionary_page_offset;
    if (start < 0 || c->total_compressed_size < 0 ||
        c->total_compressed_size > INT64_MAX - start)
        return false;
    *offset = (uint64_t)start;
    *length = (uint64_t)c->total_compressed_size;
    return true;
}

/* ======================================================================
 * OffsetIndex
 * ====================================================================== */

static bool parse_page_location(tc_reader *r, pq_page_location *pl)
{
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i64_nonneg(r, &f, "offset", &pl->offset); break;
        case 2: ok = f_i32(r, &f, "compressed_page_size", &pl->compressed_page_size); break;
        case 3: ok = f_i64_nonneg(r, &f, "first_row_index", &pl->first_row_index); break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "offset", "compressed_page_size",
                                        "first_row_index"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3), names, start))
        return false;
    if (pl->compressed_page_size <= 0)
        return tc_fail_at(r, TC_E_RANGE, start, "compressed_page_size %d is not positive",
                          (int)pl->compressed_page_size);
    tc_struct_end(r);
    return true;
}

void pq_offset_index_free(pq_offset_index *oi)
{
    if (!oi)
        return;
    free(oi->pages);
    free(oi->unencoded_byte_array_data_bytes);
    memset(oi, 0, sizeof *oi);
}

static bool parse_i64_list(tc_reader *r, const tc_field *f, const char *name, int64_t **out,
                           uint32_t *n_out)
{
    tc_path_push(r, name, -1);
    uint32_t n;
    uint8_t et;
    if (!list_open_t(r, f, TC_I64, 0, name, &n, &et))
        return false;
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return tc_fail(r, TC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++)
        if (!elem_int(r, et, &v[i])) {
            free(v);
            return false;
        }
    tc_container_end(r);
    tc_path_pop(r);
    free(*out);
    *out = v;
    *n_out = n;
    return true;
}

tc_status pq_offset_index_parse(const uint8_t *buf, size_t len, pq_offset_index *out,
                                tc_error *err)
{
    memset(out, 0, sizeof *out);
    tc_reader rr, *r = &rr;
    tc_reader_init(r, buf, len);
    r->max_string = PQ_MAX_STRING_LEN;
    tc_path_push(r, "OffsetIndex", -1);
    const size_t start = r->pos;
    bool ok = tc_struct_begin(r);
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (ok && tc_next_field(r, &last, &f)) {
        switch (f.id) {
        case 1: {
            if (out->pages) {
                ok = tc_fail_at(r, TC_E_INVALID, f.offset, "page_locations listed twice");
                break;
            }
            tc_path_push(r, "page_locations", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_STRUCT, 0, "page_locations", &n);
            if (ok) {
                out->pages = calloc(n ? n : 1, sizeof *out->pages);
                if (!out->pages)
                    ok = tc_fail(r, TC_E_NOMEM, "out of memory");
            }
            for (uint32_t i = 0; ok && i < n; i++) {
                tc_path_set_index(r, i);
                ok = parse_page_location(r, &out->pages[i]);
                if (ok && i > 0) {
                    const pq_page_location *p = &out->pages[i - 1], *c = &out->pages[i];
                    if (c->offset <= p->offset)
                        ok = tc_fail(r, TC_E_INVALID,
                                     "page offset %lld does not increase (previous %lld)",
                                     (long long)c->offset, (long long)p->offset);
                    else if (c->first_row_index <= p->first_row_index)
                        ok = tc_fail(r, TC_E_INVALID,
                                     "first_row_index %lld does not increase (previous %lld)",
                                     (long long)c->first_row_index,
                                     (long long)p->first_row_index);
                }
            }
            if (ok) {
                out->n_pages = n;
                tc_container_end(r);
                tc_path_pop(r);
            }
            break;
        }
        case 2:
            ok = parse_i64_list(r, &f, "unencoded_byte_array_data_bytes",
                                &out->unencoded_byte_array_data_bytes, &out->n_unencoded);
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (ok && f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (ok && !r->failed) {
        static const char *const names[] = {NULL, "page_locations"};
        ok = require(r, seen, BIT(1), names, start);
    }
    if (ok && !r->failed && out->unencoded_byte_array_data_bytes &&
        out->n_unencoded != out->n_pages)
        ok = tc_fail_at(r, TC_E_MISMATCH, start,
                        "%u unencoded_byte_array_data_bytes entries for %u pages",
                        out->n_unencoded, out->n_pages);
    if (!ok || r->failed) {
        if (err)
            *err = r->err;
        pq_offset_index_free(out);
        return r->err.code;
    }
    return TC_OK;
}

/* ======================================================================
 * ColumnIndex
 * ====================================================================== */

void pq_column_index_free(pq_column_index *ci)
{
    if (!ci)
        return;
    free(ci->null_pages);
    free(ci->min_values);
    free(ci->max_values);
    free(ci->null_counts);
    free(ci->owned);
    memset(ci, 0, sizeof *ci);
}

static bool parse_bytes_list(tc_reader *r, const tc_field *f, const char *name, pq_bytes **out,
                             uint32_t *n_out)
{
    tc_path_push(r, name, -1);
    uint32_t n;
    if (!list_open(r, f, TC_BINARY, 0, name, &n))
        return false;
    pq_bytes *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return tc_fail(r, TC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p;
        uint32_t len;
        if (!tc_read_binary(r, &p, &len)) {
            free(v);
            return false;
        }
        v[i] = (pq_bytes){p, len};
    }
    tc_container_end(r);
    tc_path_pop(r);
    free(*out);
    *out = v;
    *n_out = n;
    return true;
}

tc_status pq_column_index_parse(const uint8_t *buf, size_t len, pq_column_index *out,
                                tc_error *err)
{
    memset(out, 0, sizeof *out);
    out->owned = malloc(len ? len : 1);
    if (!out->owned)
        return sv_fail(err, TC_E_NOMEM, 0, "out of memory");
    if (len)
        memcpy(out->owned, buf, len);
    tc_reader rr, *r = &rr;
    tc_reader_init(r, out->owned, len);
    r->max_string = PQ_MAX_STRING_LEN;
    tc_path_push(r, "ColumnIndex", -1);
    const size_t start = r->pos;
    bool ok = tc_struct_begin(r);
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    uint32_t n_null = 0, n_min = 0, n_max = 0, n_counts = 0;
    while (ok && tc_next_field(r, &last, &f)) {
        switch (f.id) {
        case 1: {
            tc_path_push(r, "null_pages", -1);
            uint32_t n;
            ok = list_open(r, &f, TC_BOOL_TRUE, 0, "null_pages", &n);
            bool *v = NULL;
            if (ok) {
                v = calloc(n ? n : 1, sizeof *v);
                if (!v)
                    ok = tc_fail(r, TC_E_NOMEM, "out of memory");
            }
            for (uint32_t i = 0; ok && i < n; i++)
                ok = tc_read_bool_elem(r, &v[i]);
            if (ok) {
                free(out->null_pages);
                out->null_pages = v;
                n_null = n;
                tc_container_end(r);
                tc_path_pop(r);
            } else {
                free(v);
            }
            break;
        }
        case 2: ok = parse_bytes_list(r, &f, "min_values", &out->min_values, &n_min); break;
        case 3: ok = parse_bytes_list(r, &f, "max_values", &out->max_values, &n_max); break;
        case 4:
            ok = f_enum(r, &f, "boundary_order", PQ_BOUNDARY_DESCENDING, &out->boundary_order);
            break;
        case 5: ok = parse_i64_list(r, &f, "null_counts", &out->null_counts, &n_counts); break;
        default: ok = f_skip(r, &f); break;
        }
        if (ok && f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (ok && !r->failed) {
        static const char *const names[] = {NULL, "null_pages", "min_values", "max_values",
                                            "boundary_order"};
        ok = require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), names, start);
    }
    if (ok && !r->failed && (n_min != n_null || n_max != n_null))
        ok = tc_fail_at(r, TC_E_MISMATCH, start,
                        "null_pages, min_values and max_values have %u, %u and %u entries",
                        n_null, n_min, n_max);
    if (ok && !r->failed && out->null_counts && n_counts != n_null)
        ok = tc_fail_at(r, TC_E_MISMATCH, start, "%u null_counts entries for %u pages", n_counts,
                        n_null);
    if (!ok || r->failed) {
        if (err)
            *err = r->err;
        pq_column_index_free(out);
        return r->err.code;
    }
    out->n_pages = n_null;
    return TC_OK;
}

/* ======================================================================
 * PageHeader
 * ====================================================================== */

static bool parse_data_page_header(tc_reader *r, pq_page_header *h)
{
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32_nonneg(r, &f, "num_values", &h->data.num_values); break;
        case 2: ok = f_i32(r, &f, "encoding", &h->data.encoding); break;
        case 3:
            ok = f_i32(r, &f, "definition_level_encoding", &h->data.definition_level_encoding);
            break;
        case 4:
            ok = f_i32(r, &f, "repetition_level_encoding", &h->data.repetition_level_encoding);
            break;
        case 5:
            ok = f_statistics(r, &f, "statistics", &h->data.statistics);
            h->data.has_statistics = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "num_values", "encoding",
                                        "definition_level_encoding",
                                        "repetition_level_encoding"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_dict_page_header(tc_reader *r, pq_page_header *h)
{
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32_nonneg(r, &f, "num_values", &h->dict.num_values); break;
        case 2: ok = f_i32(r, &f, "encoding", &h->dict.encoding); break;
        case 3:
            ok = f_bool(r, &f, "is_sorted", &h->dict.is_sorted);
            h->dict.has_is_sorted = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL, "num_values", "encoding"};
    if (!require(r, seen, BIT(1) | BIT(2), names, start))
        return false;
    tc_struct_end(r);
    return true;
}

static bool parse_v2_page_header(tc_reader *r, pq_page_header *h)
{
    const size_t start = r->pos;
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    h->v2.is_compressed = true;
    while (tc_next_field(r, &last, &f)) {
        bool ok;
        switch (f.id) {
        case 1: ok = f_i32_nonneg(r, &f, "num_values", &h->v2.num_values); break;
        case 2: ok = f_i32_nonneg(r, &f, "num_nulls", &h->v2.num_nulls); break;
        case 3: ok = f_i32_nonneg(r, &f, "num_rows", &h->v2.num_rows); break;
        case 4: ok = f_i32(r, &f, "encoding", &h->v2.encoding); break;
        case 5:
            ok = f_i32_nonneg(r, &f, "definition_levels_byte_length",
                              &h->v2.definition_levels_byte_length);
            break;
        case 6:
            ok = f_i32_nonneg(r, &f, "repetition_levels_byte_length",
                              &h->v2.repetition_levels_byte_length);
            break;
        case 7: ok = f_bool(r, &f, "is_compressed", &h->v2.is_compressed); break;
        case 8:
            ok = f_statistics(r, &f, "statistics", &h->v2.statistics);
            h->v2.has_statistics = ok;
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (!ok)
            return false;
        if (f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (r->failed)
        return false;
    static const char *const names[] = {NULL,
                                        "num_values",
                                        "num_nulls",
                                        "num_rows",
                                        "encoding",
                                        "definition_levels_byte_length",
                                        "repetition_levels_byte_length"};
    if (!require(r, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6), names, start))
        return false;
    if (h->v2.num_nulls > h->v2.num_values)
        return tc_fail_at(r, TC_E_RANGE, start, "num_nulls %d exceeds num_values %d",
                          (int)h->v2.num_nulls, (int)h->v2.num_values);
    tc_struct_end(r);
    return true;
}

tc_status pq_page_header_parse(const uint8_t *buf, size_t len, pq_page_header *h,
                               size_t *header_len, tc_error *err)
{
    memset(h, 0, sizeof *h);
    tc_reader rr, *r = &rr;
    tc_reader_init(r, buf, len);
    r->max_string = PQ_MAX_STRING_LEN;
    tc_path_push(r, "PageHeader", -1);
    const size_t start = r->pos;
    bool ok = tc_struct_begin(r);
    int16_t last = 0;
    tc_field f;
    uint32_t seen = 0;
    while (ok && tc_next_field(r, &last, &f)) {
        switch (f.id) {
        case 1: ok = f_enum(r, &f, "type", PQ_PAGE_DATA_V2, &h->type); break;
        case 2:
            ok = f_i32_nonneg(r, &f, "uncompressed_page_size", &h->uncompressed_page_size);
            break;
        case 3: ok = f_i32_nonneg(r, &f, "compressed_page_size", &h->compressed_page_size); break;
        case 4: {
            const size_t at = r->pos;
            int32_t v = 0;
            ok = f_i32(r, &f, "crc", &v);
            if (ok) {
                /* Only a single zigzag-varint i32 can be rewritten in place: with
                 * a repeated field, a rewrite of one copy could leave a reader
                 * looking at another. */
                const bool repeated = h->has_crc;
                h->has_crc = true;
                h->crc = (uint32_t)v;
                if (f.type == TC_I32 && !repeated) {
                    h->crc_offset = (uint32_t)at;
                    h->crc_len = (uint32_t)(r->pos - at);
                } else {
                    h->crc_offset = 0;
                    h->crc_len = 0;
                }
            }
            break;
        }
        case 5:
            tc_path_push(r, "data_page_header", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_data_page_header(r, h);
            if (ok) {
                h->has_data_page_header = true;
                tc_path_pop(r);
            }
            break;
        case 6:
            tc_path_push(r, "index_page_header", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && f_skip(r, &f);
            if (ok) {
                h->has_index_page_header = true;
                tc_path_pop(r);
            }
            break;
        case 7:
            tc_path_push(r, "dictionary_page_header", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_dict_page_header(r, h);
            if (ok) {
                h->has_dictionary_page_header = true;
                tc_path_pop(r);
            }
            break;
        case 8:
            tc_path_push(r, "data_page_header_v2", -1);
            ok = tc_field_expect(r, &f, TC_STRUCT) && parse_v2_page_header(r, h);
            if (ok) {
                h->has_data_page_header_v2 = true;
                tc_path_pop(r);
            }
            break;
        default: ok = f_skip(r, &f); break;
        }
        if (ok && f.id > 0 && f.id < 32)
            seen |= BIT(f.id);
    }
    if (ok && !r->failed) {
        static const char *const names[] = {NULL, "type", "uncompressed_page_size",
                                            "compressed_page_size"};
        ok = require(r, seen, BIT(1) | BIT(2) | BIT(3), names, start);
    }
    if (ok && !r->failed) {
        switch (h->type) {
        case PQ_PAGE_DATA:
            if (!h->has_data_page_header)
                ok = tc_fail_at(r, TC_E_MISSING, start,
                                "DATA_PAGE without data_page_header (id 5)");
            break;
        case PQ_PAGE_DICTIONARY:
            if (!h->has_dictionary_page_header)
                ok = tc_fail_at(r, TC_E_MISSING, start,
                                "DICTIONARY_PAGE without dictionary_page_header (id 7)");
            break;
        case PQ_PAGE_DATA_V2:
            if (!h->has_data_page_header_v2)
                ok = tc_fail_at(r, TC_E_MISSING, start,
                                "DATA_PAGE_V2 without data_page_header_v2 (id 8)");
            else {
                const int64_t levels = (int64_t)h->v2.definition_levels_byte_length +
                                       h->v2.repetition_levels_byte_length;
                if (levels > h->compressed_page_size || levels > h->uncompressed_page_size)
                    ok = tc_fail_at(r, TC_E_RANGE, start,
                                    "level bytes (%lld) exceed the page size (compressed %d, "
                                    "uncompressed %d)",
                                    (long long)levels, (int)h->compressed_page_size,
                                    (int)h->uncompressed_page_size);
            }
            break;
        default:
            break;
        }
    }
    if (!ok || r->failed) {
        if (err)
            *err = r->err;
        return r->err.code;
    }
    tc_struct_end(r);
    *header_len = r->pos;
    return TC_OK;
}

/* ======================================================================
 * CRC
 * ====================================================================== */

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t pq_crc32(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = buf;
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint64_t crc_zigzag(uint32_t crc)
{
    const int32_t v = (int32_t)crc;
    return (uint64_t)(((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

bool pq_crc_fits(uint32_t crc_len, uint32_t new_crc)
{
    if (crc_len == 0 || crc_len > 10)
        return false;
    if (crc_len >= 5)
        return true;
    return crc_zigzag(new_crc) < (1ull << (7 * crc_len));
}

bool pq_crc_rewrite(uint8_t *header, size_t header_len, const pq_page_header *h,
                    uint32_t new_crc)
{
    if (!h->has_crc || h->crc_len == 0 || h->crc_len > 10 || h->crc_offset > header_len ||
        h->crc_len > header_len - h->crc_offset || !pq_crc_fits(h->crc_len, new_crc))
        return false;
    uint64_t v = crc_zigzag(new_crc);
    uint8_t *p = header + h->crc_offset;
    for (uint32_t i = 0; i < h->crc_len; i++) {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (i + 1 < h->crc_len)
            b |= 0x80;
        p[i] = b;
    }
    return true;
}
