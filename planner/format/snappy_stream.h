/* A snappy stream's layout, read without decompressing: whether it is made
 * of literal elements only (what compressors write for incompressible
 * bytes), so that its content sits at computable offsets. Untrusted input:
 * bounds-checked, one pass, no allocation. */
#ifndef SIEVE_SNAPPY_STREAM_H
#define SIEVE_SNAPPY_STREAM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    PQ_SNAPPY_LITERALS = 0, /* literals only, holding exactly the preamble's length */
    PQ_SNAPPY_COPIES,       /* a well-formed element that is a copy */
    PQ_SNAPPY_MALFORMED,    /* preamble, element or length does not add up */
} pq_snappy_layout;

/* The layout of buf[0, len); *content (may be NULL): the preamble's length. */
pq_snappy_layout pq_snappy_inspect(const uint8_t *buf, size_t len, uint64_t *content);

#endif
