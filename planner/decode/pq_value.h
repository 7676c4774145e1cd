/* Parquet values as comparable logical values, for predicate evaluation on
 * decoded pages and on statistics (min/max are PLAIN-encoded values).
 *
 * A column's pqv_type is resolved once from its physical type, LogicalType
 * and legacy ConvertedType (the LogicalType wins when both are set):
 *   BOOL       BOOLEAN
 *   INT        INT32/INT64, signed INTEGER/INT_* (int64)
 *   UINT       unsigned INTEGER/UINT_* (uint64; INT32 bits read as uint32)
 *   FLOAT      FLOAT, DOUBLE, FLOAT16 (FIXED_LEN_BYTE_ARRAY(2)), held as double
 *   DECIMAL    INT32, INT64, FIXED_LEN_BYTE_ARRAY, BYTE_ARRAY (big-endian two's
 *              complement), precision <= 38: 128-bit unscaled value + scale
 *   DATE       INT32 days since 1970-01-01
 *   TIME       INT32 millis / INT64 micros or nanos since midnight
 *   TIMESTAMP  INT64 millis/micros/nanos since the epoch; INT96 (8-byte LE
 *              nanos of day, then 4-byte LE Julian day) as nanos, with
 *              adjusted_to_utc false (what pyarrow reads it as)
 *   BYTES      BYTE_ARRAY/FIXED_LEN_BYTE_ARRAY: STRING, ENUM, JSON, BSON, UUID
 *              or no annotation; compared byte-wise unsigned, then by length
 * INTERVAL, GEOMETRY, GEOGRAPHY, VARIANT, UNKNOWN and union members this
 * decoder does not know give PQD_E_UNSUPPORTED (no defined order).
 *
 * Comparison (pqv_compare) gives PQV_LT / PQV_EQ / PQV_GT, or
 * PQV_INCOMPARABLE when the kinds do not mix:
 *   - INT, UINT and DECIMAL compare with each other by numeric value, at any
 *     scales (exact 128-bit arithmetic; a value whose rescaling overflows is
 *     beyond every 38-digit decimal, so its sign decides);
 *   - FLOAT compares only with FLOAT. NaN handling: -0.0 == +0.0; every NaN
 *     (any sign or payload) equals every other NaN and is greater than all
 *     non-NaN values, +Infinity included (the total order of Spark, DuckDB
 *     and PostgreSQL). Callers wanting IEEE/SQL semantics, where a NaN
 *     matches no range predicate, check pqv_is_nan first;
 *   - TIME with TIME and TIMESTAMP with TIMESTAMP at any units (scaled to
 *     nanoseconds in 128 bits), but only with equal adjusted_to_utc: a UTC
 *     instant and a local wall-clock time are incomparable;
 *   - BOOL with BOOL (false < true), DATE with DATE, BYTES with BYTES;
 *   - anything else, and any kind mixed with FLOAT, is incomparable. */
#ifndef SIEVE_PQ_VALUE_H
#define SIEVE_PQ_VALUE_H

#include "decode.h"
#include "decode_error.h"
#include "parquet_meta.h"
#include "parquet_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

__extension__ typedef __int128 pq_i128;

typedef enum {
    PQV_BOOL = 1,
    PQV_INT,
    PQV_UINT,
    PQV_FLOAT,
    PQV_DECIMAL,
    PQV_DATE,
    PQV_TIME,
    PQV_TIMESTAMP,
    PQV_BYTES,
} pqv_kind;

const char *pqv_kind_name(pqv_kind k);

/* How a column's values map to comparable values. */
typedef struct {
    pqv_kind kind;
    pq_physical_type physical;
    int32_t type_length;   /* FIXED_LEN_BYTE_ARRAY */
    int32_t scale;         /* DECIMAL */
    int32_t precision;     /* DECIMAL */
    pq_time_unit unit;     /* TIME, TIMESTAMP */
    bool adjusted_to_utc;  /* TIME, TIMESTAMP */
    uint8_t int_bits;      /* INT/UINT declared width: 8, 16, 32, 64 */
    bool float16;          /* FLOAT from FIXED_LEN_BYTE_ARRAY(2) */
} pqv_type;

/* logical may be NULL or of kind PQ_LT_NONE; converted_type PQ_CT_NONE when
 * unset; scale/precision are the SchemaElement's (used with the legacy
 * DECIMAL converted type). Rejects annotations that do not fit the physical
 * type (PQD_E_INVALID) and unordered ones (PQD_E_UNSUPPORTED). */
pqd_status pqv_type_resolve(pq_physical_type physical, int32_t type_length,
                            int32_t converted_type, int32_t scale, int32_t precision,
                            const pq_logical_type *logical, pqv_type *out, pqd_error *err);
pqd_status pqv_type_from_leaf(const pq_leaf *leaf, pqv_type *out, pqd_error *err);

typedef enum {
    PQV_LT = -1,
    PQV_EQ = 0,
    PQV_GT = 1,
    PQV_INCOMPARABLE = 2,
} pqv_order;

typedef struct {
    pqv_kind kind;
    pq_time_unit unit;    /* TIME, TIMESTAMP */
    bool adjusted_to_utc; /* TIME, TIMESTAMP */
    int32_t scale;        /* DECIMAL */
    union {
        bool b;           /* BOOL */
        int64_t i;        /* INT, DATE (days), TIME, TIMESTAMP (in unit) */
        uint64_t u;       /* UINT */
        double f;         /* FLOAT */
        pq_i128 dec;      /* DECIMAL unscaled */
        struct {
            const uint8_t *ptr; /* borrowed */
            uint32_t len;
        } bytes;          /* BYTES */
    } v;
} pqv;

/* One value in PLAIN form (BYTE_ARRAY without its length prefix, BOOLEAN as
 * one byte 0/1): the form of Statistics min_value/max_value and of
 * ColumnIndex bounds. Fixed-width types need exactly their width
 * (PQD_E_CORRUPT otherwise). BYTES values borrow p. */
pqd_status pqv_from_plain(const pqv_type *t, const uint8_t *p, size_t len, pqv *out,
                          pqd_error *err);

/* The i-th non-null value of a decoded page (i < pv->num_non_null). */
pqd_status pqv_from_page(const pqv_type *t, const pq_page_values *pv, uint32_t i, pqv *out,
                         pqd_error *err);

/* Entry i of a decoded dictionary (i < d->count): evaluate a predicate once
 * per entry, then map a page's dict_indices through the results. */
pqd_status pqv_from_dict(const pqv_type *t, const pq_dictionary *d, uint32_t i, pqv *out,
                         pqd_error *err);

/* Literals. */
pqv pqv_bool(bool b);
pqv pqv_int(int64_t i);
pqv pqv_uint(uint64_t u);
pqv pqv_double(double f);
pqv pqv_decimal(pq_i128 unscaled, int32_t scale);
pqv pqv_date(int32_t days);
pqv pqv_time(int64_t t, pq_time_unit unit, bool adjusted_to_utc);
pqv pqv_timestamp(int64_t t, pq_time_unit unit, bool adjusted_to_utc);
pqv pqv_bytes(const void *p, uint32_t len);
pqv pqv_string(const char *s);

bool pqv_is_nan(const pqv *v);

pqv_order pqv_compare(const pqv *a, const pqv *b);

/* Text form, always NUL-terminated (truncated to n): BOOL true/false; INT,
 * UINT, DATE (days), TIME and TIMESTAMP (in their unit) as integers; FLOAT
 * as %.17g or NaN / Infinity / -Infinity; DECIMAL as [-]digits[.digits]
 * with exactly `scale` fraction digits; BYTES as lowercase hex. Returns the
 * length the full text needs. */
size_t pqv_format(const pqv *v, char *buf, size_t n);

/* INT96 (12 bytes) to nanoseconds since the epoch; false when out of int64. */
bool pqv_int96_to_nanos(const uint8_t p[12], int64_t *nanos);

#endif
