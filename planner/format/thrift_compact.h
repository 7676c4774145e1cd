/* Thrift compact-protocol reader over a caller-supplied, bounded buffer.
 *
 * No I/O, no allocation. Every read checks the remaining bytes; every
 * container count is checked against the bytes left (each compact-protocol
 * element occupies at least one byte, doubles eight, UUIDs sixteen), nesting
 * is capped at TC_MAX_DEPTH, and a global element budget caps the total work
 * of any one reader. The first error sticks: once `failed` is set every
 * further read fails at once, so decoders may check it only at the end of a
 * struct.
 *
 * Errors carry a code, the byte offset into the buffer where the problem was
 * found, and a message that starts with the path of the value being decoded
 * ("row_groups[3].columns[1].meta_data.total_compressed_size: ...") when the
 * decoder maintains one with tc_path_push/tc_path_pop.
 *
 * Integers are accepted in non-minimal varint form (padding 0x80 bytes) as
 * long as the varint has at most 10 bytes and its value fits the target
 * type: the page-CRC rewriter relies on this. */
#ifndef SIEVE_THRIFT_COMPACT_H
#define SIEVE_THRIFT_COMPACT_H

#include "sv_error.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One error enum for the thrift reader and everything built on it
 * (parquet_meta, page_map). */
typedef enum {
    TC_OK = 0,
    TC_E_TRUNCATED,  /* the buffer ends inside a value (more bytes may help) */
    TC_E_VARINT,     /* varint longer than 10 bytes, or too large for its type */
    TC_E_TYPE,       /* invalid compact type, or a field of the wrong type */
    TC_E_FIELD_ID,   /* field id outside int16 */
    TC_E_LENGTH,     /* binary/string length past the buffer or over the limit */
    TC_E_COUNT,      /* container count past the buffer or over a limit */
    TC_E_DEPTH,      /* nesting deeper than the limit */
    TC_E_BUDGET,     /* element budget exhausted */
    TC_E_MISSING,    /* a required field is absent */
    TC_E_RANGE,      /* a value outside what the format allows */
    TC_E_LIMIT,      /* a documented size limit exceeded */
    TC_E_MAGIC,      /* bad magic bytes */
    TC_E_ENCRYPTED,  /* encrypted Parquet footer ("PARE") */
    TC_E_NEED_MORE,  /* well-formed so far; the caller must supply more bytes */
    TC_E_NOMEM,      /* allocation failed or the decoded-size cap was hit */
    TC_E_INVALID,    /* structurally inconsistent (schema tree, counts, offsets) */
    TC_E_MISMATCH,   /* two sources of the same fact disagree */
} tc_status;

/* Short stable name of a status, e.g. "truncated", "bad_varint". */
const char *tc_status_name(tc_status s);

/* The one error shape (common/sv_error.h): code is a tc_status, offset the
 * byte offset into the parsed buffer, msg "path: what went wrong". Fill it
 * with sv_fail. */
typedef sv_error tc_error;

/* Compact-protocol wire types (field headers and element types). Field
 * headers use BOOL_TRUE/BOOL_FALSE to carry the value; element headers use
 * either of them (writers disagree: the spec says 2, Java and C++ write 1). */
typedef enum {
    TC_STOP = 0,
    TC_BOOL_TRUE = 1,
    TC_BOOL_FALSE = 2,
    TC_I8 = 3,
    TC_I16 = 4,
    TC_I32 = 5,
    TC_I64 = 6,
    TC_DOUBLE = 7,
    TC_BINARY = 8,
    TC_LIST = 9,
    TC_SET = 10,
    TC_MAP = 11,
    TC_STRUCT = 12,
    TC_UUID = 13,
} tc_type;

const char *tc_type_name(int t);

#define TC_MAX_DEPTH 64                 /* struct/container nesting */
#define TC_DEFAULT_BUDGET (1ull << 28)  /* fields + elements per reader */
#define TC_DEFAULT_MAX_STRING (16u << 20)
#define TC_PATH_MAX 24

typedef struct {
    const char *name; /* static string */
    int64_t index;    /* -1: no subscript */
} tc_path_entry;

typedef struct {
    const uint8_t *buf;
    size_t len;
    size_t pos;
    unsigned depth;      /* current struct/container nesting */
    unsigned max_depth;  /* TC_MAX_DEPTH unless changed after init */
    uint64_t budget;     /* remaining fields + elements */
    uint32_t max_string; /* longest binary/string accepted */
    bool failed;
    tc_error err;
    unsigned path_len;
    tc_path_entry path[TC_PATH_MAX];
} tc_reader;

typedef struct {
    int16_t id;
    uint8_t type;    /* tc_type; TC_BOOL_TRUE/FALSE for bool fields */
    bool bool_value; /* for bool fields */
    size_t offset;   /* offset of the field header */
} tc_field;

void tc_reader_init(tc_reader *r, const void *buf, size_t len);

static inline size_t tc_remaining(const tc_reader *r)
{
    return r->len - r->pos;
}

/* Fail the reader (first error wins). The message is prefixed with the
 * current path. Always returns false. */
bool tc_fail(tc_reader *r, tc_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool tc_failv(tc_reader *r, tc_status s, size_t offset, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
bool tc_fail_at(tc_reader *r, tc_status s, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Decoder path for error messages: push a name (index -1 for none), update
 * the top index while walking a list, pop when done. Pushing past
 * TC_PATH_MAX only counts. */
void tc_path_push(tc_reader *r, const char *name, int64_t index);
void tc_path_set_index(tc_reader *r, int64_t index);
void tc_path_pop(tc_reader *r);
/* Format the current path ("a.b[3].c") into buf. */
void tc_path_format(const tc_reader *r, char *buf, size_t buflen);

/* Primitive reads. All return false on error (and set r->failed). */
bool tc_read_byte(tc_reader *r, uint8_t *out);
bool tc_read_varint(tc_reader *r, uint64_t *out);
bool tc_read_i8(tc_reader *r, int8_t *out);
bool tc_read_i16(tc_reader *r, int16_t *out);
bool tc_read_i32(tc_reader *r, int32_t *out);
bool tc_read_i64(tc_reader *r, int64_t *out);
bool tc_read_double(tc_reader *r, double *out);
/* Zero-copy: *data points into the reader's buffer. */
bool tc_read_binary(tc_reader *r, const uint8_t **data, uint32_t *len);
bool tc_read_uuid(tc_reader *r, const uint8_t **data);
/* Element-form bool (inside lists, sets and maps). */
bool tc_read_bool_elem(tc_reader *r, bool *out);

static inline int64_t tc_zigzag_decode(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
static inline uint64_t tc_zigzag_encode(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Structs: tc_struct_begin before the first field, tc_struct_end after the
 * stop field. *last_id must start at 0 and be kept per struct.
 * tc_next_field returns true with a field, or false at the stop field or on
 * error (check r->failed). */
bool tc_struct_begin(tc_reader *r);
void tc_struct_end(tc_reader *r);
bool tc_next_field(tc_reader *r, int16_t *last_id, tc_field *f);

/* A whole struct: field(r, f, ctx) for each field, which must consume the
 * value (tc_skip_field one it does not want) and returns false on error. */
typedef bool (*tc_field_fn)(tc_reader *r, const tc_field *f, void *ctx);
bool tc_read_struct(tc_reader *r, tc_field_fn field, void *ctx);

/* Containers. Counts are checked against the remaining bytes and the
 * element type; *elem_type is normalised (bools become TC_BOOL_TRUE).
 * Each begin must be paired with tc_container_end, which only undoes the
 * nesting; reading the elements is up to the caller. The whole count is
 * charged to the element budget at begin. */
bool tc_list_begin(tc_reader *r, uint8_t *elem_type, uint32_t *count);
bool tc_map_begin(tc_reader *r, uint8_t *key_type, uint8_t *val_type, uint32_t *count);
void tc_container_end(tc_reader *r);
bool tc_charge(tc_reader *r, uint64_t n);

/* Skip one value of the given wire type (any nesting, bounded by depth and
 * budget). For field values use tc_skip_field: bool fields have no value. */
bool tc_skip(tc_reader *r, uint8_t type);
bool tc_skip_field(tc_reader *r, const tc_field *f);

/* Typed field readers: check the field's wire type and range, then read.
 * Integer fields accept any integer wire type (i8..i64) when the value fits. */
bool tc_field_bool(tc_reader *r, const tc_field *f, bool *out);
bool tc_field_i8(tc_reader *r, const tc_field *f, int8_t *out);
bool tc_field_i16(tc_reader *r, const tc_field *f, int16_t *out);
bool tc_field_i32(tc_reader *r, const tc_field *f, int32_t *out);
bool tc_field_i64(tc_reader *r, const tc_field *f, int64_t *out);
bool tc_field_binary(tc_reader *r, const tc_field *f, const uint8_t **data, uint32_t *len);
/* Fails unless f is a struct field (nothing is consumed). */
bool tc_field_expect(tc_reader *r, const tc_field *f, uint8_t type);

#endif
