/* Sets of row numbers as sorted, disjoint, non-adjacent half-open ranges.
 * Used for hint row ranges, predicate results and per-page selections.
 * FUSE-free and I/O-free; every function that grows a set can fail only
 * with out-of-memory (false). */
#ifndef SIEVE_ROW_RANGES_H
#define SIEVE_ROW_RANGES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t start, end; /* [start, end) */
} row_range;

typedef struct {
    row_range *r;
    size_t n, cap;
} row_ranges;

void row_ranges_free(row_ranges *s);
/* Append [start, end) where start >= the current last end (merged when it
 * touches the last range). Empty ranges are ignored. */
bool row_ranges_append(row_ranges *s, uint64_t start, uint64_t end);
/* Sort and merge an arbitrary list in place. */
void row_ranges_normalize(row_ranges *s);
/* out = a ∩ b (out must be empty and distinct from a and b). */
bool row_ranges_intersect(const row_ranges *a, const row_ranges *b, row_ranges *out);
/* Rows of s inside [start, end), shifted by -start, appended to out. */
bool row_ranges_slice(const row_ranges *s, uint64_t start, uint64_t end, row_ranges *out);
/* Number of rows in s. */
uint64_t row_ranges_count(const row_ranges *s);
/* Number of rows of s inside [start, end). */
uint64_t row_ranges_count_in(const row_ranges *s, uint64_t start, uint64_t end);
/* Append the runs of 1 bytes of sel[0..n) as rows base + i. */
bool row_ranges_from_bitmap(row_ranges *s, const uint8_t *sel, size_t n, uint64_t base);

#endif
