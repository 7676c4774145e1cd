/* A file's partition values as typed constants for the predicate
 * (pred_bind_constants): the text the log stores, read as the partition
 * column's Delta type (the protocol's "Partition Value Serialization").
 *
 * A value whose meaning is not certain gives no constant (false): a
 * timestamp without a zone ("2024-01-01 10:00:00", which writers put in
 * their session's zone), a type this reader does not handle. A predicate on
 * that column then does not bind to the file, which is served real. */
#ifndef SIEVE_DELTA_PARTITION_H
#define SIEVE_DELTA_PARTITION_H
#include <stdbool.h>

#include "delta_schema.h"
#include "predicate.h"

/* The constant of partition column f for a file whose value is text (NULL:
 * the null value); BYTES values borrow text. */
bool delta_partition_constant(const delta_field *f, const char *text, pred_constant *out);

#endif
