/* A whole column chunk decoded into its level entries: definition and
 * repetition levels and the value of every entry that has one, as
 * comparable values (pq_value.h). What the view's selection decodes filter
 * columns with, and what reads nested columns (a Delta checkpoint's add.path,
 * add.partitionValues) where rows hold several entries.
 *
 * FUSE-free and I/O-free: the caller supplies the chunk's bytes. Byte-array
 * values are copied into the result (max_value_bytes bounds them), so the
 * result outlives the chunk buffer. */
#ifndef SIEVE_CHUNK_VALUES_H
#define SIEVE_CHUNK_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parquet_meta.h"
#include "pq_value.h"
#include "sv_error.h"

typedef enum {
    PQ_CHUNK_OK = 0,
    PQ_CHUNK_E_CORRUPT,     /* pages that do not decode or do not add up */
    PQ_CHUNK_E_UNSUPPORTED, /* a type or encoding the decoders do not handle */
    PQ_CHUNK_E_LIMIT,       /* more entries or value bytes than allowed */
    PQ_CHUNK_E_NOMEM,
} pq_chunk_status;

typedef struct {
    uint32_t n_entries;  /* level entries (nulls and empty lists included) */
    uint32_t n_rows;     /* entries with repetition level 0 */
    uint16_t max_def, max_rep;
    uint16_t *def;       /* n_entries; NULL when max_def == 0 (every entry has a value) */
    uint16_t *rep;       /* n_entries; NULL when max_rep == 0 (one entry per row) */
    pqv *values;         /* n_entries; values[i] is set when def[i] == max_def, else zero */
    pqv_type type;
    uint8_t *arena;      /* byte-array payloads (values point into it) */
} pq_chunk_values;

typedef struct {
    uint32_t max_entries;     /* level entries of the chunk */
    uint64_t max_value_bytes; /* byte-array payload copied out */
} pq_chunk_limits;

/* Decode every page of column chunk (rg, leaf) of m from chunk[0..len), its
 * bytes from the chunk's start (pq_column_chunk_range). The entries must
 * add up to the chunk's num_values, and to expect_rows rows when it is not
 * negative. */
int pq_chunk_values_decode(const pq_file_meta *m, uint32_t rg, uint32_t leaf, const uint8_t *chunk, size_t len,
                           int64_t expect_rows, const pq_chunk_limits *limits, pq_chunk_values *out, sv_error *err);
void pq_chunk_values_free(pq_chunk_values *v);

/* Whether entry i has a value (its definition level is the leaf's maximum). */
static inline bool pq_chunk_has_value(const pq_chunk_values *v, uint32_t i)
{
    return !v->def || v->def[i] == v->max_def;
}

#endif
