/* Input layout of tests/fuzz/fuzz_decode_page.c (also written by
 * `pq_dump --fuzz-seeds DIR`): a fixed 52-byte little-endian header, then
 * dict_len bytes of dictionary page body, then the data page body.
 *
 *   0  u8  physical type (taken mod 8)
 *   1  u8  flags: 1 V2 page, 2 is_compressed, 4 has dictionary page,
 *          8 indices only (materialize_dict off)
 *   2  u8  codec (raw; unknown values exercise the error path)
 *   3  u8  values encoding (raw)
 *   4  u8  V1 definition level encoding
 *   5  u8  V1 repetition level encoding
 *   6  u8  max_def
 *   7  u8  max_rep
 *   8  i32 type_length
 *  12  i32 num_values
 *  16  i32 num_nulls (V2)
 *  20  i32 num_rows (V2)
 *  24  i32 definition_levels_byte_length (V2)
 *  28  i32 repetition_levels_byte_length (V2)
 *  32  i32 uncompressed_page_size of the data page
 *  36  i32 dictionary num_values
 *  40  i32 dictionary uncompressed_page_size
 *  44  u32 dict_len
 *  48  u8  dictionary page encoding
 *  49  3 bytes reserved */
#ifndef SIEVE_FUZZ_DECODE_PAGE_H
#define SIEVE_FUZZ_DECODE_PAGE_H

#define FUZZ_PAGE_HEADER_LEN 52u

enum {
    FUZZ_PAGE_V2 = 1,
    FUZZ_PAGE_COMPRESSED = 2,
    FUZZ_PAGE_HAS_DICT = 4,
    FUZZ_PAGE_INDICES_ONLY = 8,
};

#endif
