/* The toolkit every metadata decoder of planner/format/ shares (FileMetaData,
 * schema, statistics, page index, page headers): the decoding state with its
 * arena, and structs read by a table of their fields, one loop for all, that
 * puts each field's name on the error path
 * ("row_groups[2].columns[0].meta_data.total_compressed_size: ...") and checks
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
    struct pq_arena *a; /* NULL: decoding without an arena (page index, page headers) */
    pq_file_meta *m;    /* the FileMetaData being decoded (meta_file.c); NULL otherwise */
    uint64_t data_end;  /* where column chunks must end (pq_file_meta_parse); 0: unchecked */
} pm;

/* n zeroed elements of size bytes from the arena; fails the reader
 * (TC_E_NOMEM) on overflow or past the cap. Without an arena they are
 * calloc'd, for the caller to free. */
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

/* ---------------- structs read by a table of their fields (meta_fields.c) ---------------- */

/* How a field is read. Scalars go through the named readers below. */
typedef enum {
    PQM_I8,
    PQM_I16,
    PQM_I32,
    PQM_I64,
    PQM_BOOL,
    PQM_BYTES,
    PQM_I32_NONNEG,
    PQM_I64_NONNEG,
    PQM_ENUM,   /* i32 in [0, max] */
    PQM_STATS,  /* a Statistics struct (pqm_statistics: a repeated copy replaces the first) */
    PQM_STRUCT, /* a struct whose fields (sub) land in the same C struct */
    PQM_LIST,   /* a list into a fresh array (list) and its count */
    PQM_SKIP,   /* skipped: only has says that it was there */
    PQM_CALL,   /* read by call */
} pqm_kind;

typedef struct pqm_field pqm_field;
typedef struct pqm_list pqm_list;

/* The fields of one thrift struct that are decoded; the others are skipped. */
typedef struct {
    const pqm_field *fields;
    size_t n;
} pqm_table;

#define PQM_TABLE(fields) {fields, sizeof fields / sizeof fields[0]}

struct pqm_field {
    int16_t id;
    uint8_t kind;     /* pqm_kind */
    const char *name; /* the thrift name: on the error path and in "missing required field" */
    bool required;
    size_t at;        /* offsetof the value in the C struct (PQM_LIST: of the array) */
    size_t has;       /* 0, or 1 + offsetof a bool set when the field is read (read_field) */
    int32_t max;      /* PQM_ENUM: the largest valid value */
    const pqm_table *sub; /* PQM_STRUCT */
    const pqm_list *list; /* PQM_LIST (and PQM_CALL fields that read one with pqm_list_read) */
    size_t count_at;      /* PQM_LIST: offsetof the uint32_t element count */
    bool (*call)(pm *d, const pqm_field *fd, const tc_field *f, void *obj); /* PQM_CALL */
};

/* Row parts: the value at member m of T, whether it is required, where its
 * has_ flag is, and a list with its count. */
#define PQM_AT(T, m) .at = offsetof(T, m)
#define PQM_REQ .required = true
#define PQM_HAS(T, m) .has = 1 + offsetof(T, m)
#define PQM_LIST_AT(T, arr, count) .at = offsetof(T, arr), .count_at = offsetof(T, count)

struct pqm_list {
    uint8_t elem;     /* wire type: TC_STRUCT, TC_BINARY (pq_bytes), TC_I64 (int64_t, written
                         with any integer width), TC_BOOL_TRUE (bool) */
    size_t size;      /* bytes per element */
    uint32_t max;     /* 0: only the bytes left limit the count */
    const char *what; /* the elements, in the limit and type messages; NULL: the field name */
    bool once;        /* a second copy of the field is invalid ("<name> listed twice") */
    bool (*count)(pm *d, uint32_t n, size_t at); /* NULL, or checks the count (list at at) */
    const pqm_table *sub;                        /* TC_STRUCT: the elements' fields, or */
    bool (*read)(pm *d, void *elem, uint32_t i); /* TC_STRUCT: reads element i */
};

/* Scalar lists. */
extern const pqm_list pqm_bytes_list, pqm_i64_list, pqm_bool_list;

/* Read the struct at the reader into obj; *seen gets the bit of every field
 * read. Checks across fields may follow: a failure after the struct is
 * closed reads the same. */
bool pqm_read(pm *d, const pqm_table *t, void *obj, uint32_t *seen);
/* The lowest required field of t not in seen fails the reader (TC_E_MISSING
 * at struct_start). */
bool pqm_required(tc_reader *r, const pqm_table *t, uint32_t seen, size_t struct_start);
/* pqm_read, then pqm_required. */
bool pqm_struct(pm *d, const pqm_table *t, void *obj);
/* The list field fd of obj: its name on the path, elements (structs with
 * their index on the path) into a fresh array from pm_alloc (a malloc'd one
 * replaces and frees the array of an earlier copy), then the count. */
bool pqm_list_read(pm *d, const pqm_field *fd, const tc_field *f, void *obj);
/* Free the arrays of t's PQM_LIST fields in obj (read without an arena). */
void pqm_free_lists(const pqm_table *t, void *obj);

/* The id of the member of a union of empty structs (TimeUnit, ColumnOrder)
 * among ids 1..max_id, 0 when none. The last one wins, unless twice (e.g.
 * "TimeUnit union has two members") is not NULL: then a second one fails. */
bool pqm_union_member(pm *d, int16_t max_id, const char *twice, int16_t *out);

/* ---------------- parts of FileMetaData ---------------- */

/* Statistics struct at the reader (meta_statistics.c). */
bool pqm_statistics(pm *d, pq_statistics *s);
/* One SchemaElement (meta_schema.c). */
bool pqm_schema_element(pm *d, void *elem, uint32_t i);
/* d->m->schema, walked depth-first, into d->m->leaves: paths and levels (meta_schema.c). */
bool pqm_resolve_leaves(pm *d);

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
PQM_NAMED_FIELD(f_i32, int32_t, tc_field_i32)
PQM_NAMED_FIELD(f_bool, bool, tc_field_bool)
#undef PQM_NAMED_FIELD

#define BIT(id) (1u << (id))

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

/* Open a list field, checking the wire type of the field and of the elements
 * and that the count does not exceed max (0: no extra limit). Integer lists
 * may be written with any integer width; *et gets the element type. */
bool pqm_list_open(tc_reader *r, const tc_field *f, uint8_t want_elem, uint32_t max,
                   const char *what, uint32_t *count, uint8_t *et);

#endif
