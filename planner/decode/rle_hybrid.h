/* RLE / bit-packed hybrid decoding (parquet-format Encodings.md, "RLE = 3"),
 * LSB-first bit unpacking, and the deprecated MSB-first BIT_PACKED levels.
 * FUSE-free, I/O-free, no allocation.
 *
 * The hybrid stream is a sequence of runs:
 *   bit-packed run: ULEB128((groups << 1) | 1), then groups * bit_width bytes
 *                   holding groups * 8 values packed LSB first;
 *   RLE run:        ULEB128(count << 1), then the value in ceil(bit_width/8)
 *                   little-endian bytes.
 * The caller strips any 4-byte length prefix and passes exactly the run
 * bytes. Bit widths are 0..32. Errors: run headers past the end or longer
 * than 5 bytes, RLE values with bits above bit_width (PQD_E_RANGE), asking
 * for more values than the runs hold (PQD_E_TRUNCATED). A bit-packed run
 * whose data is cut short by the end of the buffer yields the values its
 * bytes do hold (as other readers accept). Zero-length runs are skipped.
 *
 * Full 8-value groups of bit-packed runs are unpacked with width-specialised
 * code reading unaligned 64-bit little-endian words. */
#ifndef SIEVE_RLE_HYBRID_H
#define SIEVE_RLE_HYBRID_H

#include "decode_error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *buf;
    size_t len;
    size_t pos;          /* next run header */
    unsigned bit_width;  /* 0..32 */
    bool rle;            /* current run kind */
    uint32_t rle_value;
    uint64_t run_left;   /* values left in the current run */
    size_t bp_data;      /* bit-packed run: byte offset of its first group */
    size_t bp_bytes;     /* bit-packed run: data bytes present in the buffer */
    uint64_t bp_index;   /* bit-packed run: index of the next value */
} pq_rle_decoder;

/* bit_width > 32 is PQD_E_RANGE. buf may be NULL when len is 0. */
pqd_status pq_rle_init(pq_rle_decoder *d, const uint8_t *buf, size_t len, unsigned bit_width,
                       pqd_error *err);

/* Decode exactly n values. The u16 and u8 forms need bit_width <= 16 / 8
 * (PQD_E_INVALID otherwise). On error the decoder state is unspecified. */
pqd_status pq_rle_get_u32(pq_rle_decoder *d, uint32_t *out, size_t n, pqd_error *err);
pqd_status pq_rle_get_u16(pq_rle_decoder *d, uint16_t *out, size_t n, pqd_error *err);
pqd_status pq_rle_get_u8(pq_rle_decoder *d, uint8_t *out, size_t n, pqd_error *err);

/* Levels (bit_width <= 15, so levels <= 32767): decode exactly n values like pq_rle_get_u16
 * and, in the same pass, count the values equal to target (*count) and
 * find the largest (*max). RLE runs cost O(1) for the statistics. */
pqd_status pq_rle_get_levels(pq_rle_decoder *d, uint16_t *out, size_t n, uint16_t target,
                             size_t *count, uint16_t *max, pqd_error *err);

/* Byte offset just past the run last started (all of a bit-packed run's
 * groups, as far as the buffer holds them). */
size_t pq_rle_consumed(const pq_rle_decoder *d);

/* Number of bits needed for values 0..max_value: 0 for 0, else
 * floor(log2(max_value)) + 1. */
unsigned pq_bit_width(uint64_t max_value);

/* Unpack n values of bit_width bits, packed LSB first from in[0] (as in
 * hybrid bit-packed runs, PLAIN booleans and DELTA_BINARY_PACKED
 * miniblocks). in_len must be at least ceil(n * bit_width / 8) (not
 * checked beyond that: PQD_E_TRUNCATED if shorter). bit_width limits:
 * u8 <= 8, u32 <= 32, u64 <= 64. */
pqd_status pq_unpack_u8(const uint8_t *in, size_t in_len, unsigned bit_width, uint8_t *out,
                        size_t n, pqd_error *err);
pqd_status pq_unpack_u32(const uint8_t *in, size_t in_len, unsigned bit_width, uint32_t *out,
                         size_t n, pqd_error *err);
pqd_status pq_unpack_u64(const uint8_t *in, size_t in_len, unsigned bit_width, uint64_t *out,
                         size_t n, pqd_error *err);

/* Deprecated BIT_PACKED level encoding: n values of bit_width (0..16) bits
 * packed MSB first, no length prefix; it occupies ceil(n * bit_width / 8)
 * bytes, which must be present. */
pqd_status pq_bitpacked_msb_u16(const uint8_t *in, size_t in_len, unsigned bit_width,
                                uint16_t *out, size_t n, pqd_error *err);

/* ULEB128 reads used by the hybrid and delta decoders: at most 5 (u32) or 10
 * (u64) bytes, value must fit. Advance *pos. */
bool pq_read_uleb32(const uint8_t *buf, size_t len, size_t *pos, uint32_t *out);
bool pq_read_uleb64(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out);

#endif
