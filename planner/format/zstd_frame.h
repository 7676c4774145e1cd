/* The layout of zstd frames (RFC 8878), read without decompressing: frame
 * header fields and block headers. Used to judge whether a ZSTD page body
 * is one frame of raw blocks (page_map.c) and to walk such a body a few
 * bytes at a time (the page planner's section streams). FUSE-free and
 * I/O-free. */
#ifndef SIEVE_ZSTD_FRAME_H
#define SIEVE_ZSTD_FRAME_H

#include "thrift_compact.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQ_ZSTD_MAGIC 0xFD2FB528u
#define PQ_ZSTD_SKIPPABLE_MAGIC 0x184D2A50u /* low 4 bits free: 0x184D2A5? */
#define PQ_ZSTD_BLOCK_MAX (128u << 10)      /* Block_Maximum_Size cap */
#define PQ_ZSTD_FRAME_HEADER_MAX 18u        /* magic + the longest frame header */

/* Little-endian integer of n bytes (n <= 8), as zstd stores its fields. */
static inline uint64_t pq_zstd_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* What the Frame_Header_Descriptor (the byte after the magic) announces. */
typedef struct {
    bool single_segment;  /* no Window_Descriptor; the content size is the window */
    bool has_checksum;    /* Content_Checksum after the last block */
    bool reserved_bit;    /* must be 0 */
    unsigned dict_id_len; /* Dictionary_ID bytes: 0, 1, 2 or 4 */
    unsigned fcs_len;     /* Frame_Content_Size bytes: 0, 1, 2, 4 or 8 */
    unsigned header_len;  /* magic + descriptor + Window_Descriptor + the two fields */
} pq_zstd_descriptor;

pq_zstd_descriptor pq_zstd_descriptor_of(uint8_t fhd);

/* Window size of a Window_Descriptor byte. */
uint64_t pq_zstd_window_size(uint8_t wd);

/* Frame_Content_Size stored in len bytes (two-byte sizes are stored less 256). */
uint64_t pq_zstd_content_size(const uint8_t *p, unsigned len);

typedef enum {
    PQ_ZSTD_RAW = 0,
    PQ_ZSTD_RLE = 1,
    PQ_ZSTD_COMPRESSED = 2,
} pq_zstd_block_type;

typedef struct {
    uint32_t header_offset;       /* of the 3-byte block header, from the buffer start */
    uint32_t size;                /* Block_Size: content bytes (raw, compressed) or run (RLE) */
    uint8_t type;                 /* pq_zstd_block_type */
    bool last;
    uint64_t decompressed_offset; /* UINT64_MAX once a compressed block came before */
} pq_zstd_block;

typedef struct {
    uint32_t header_len;     /* magic + frame header */
    uint32_t frame_len;      /* the first frame, checksum included */
    bool single_frame;       /* that frame spans the whole buffer */
    bool single_segment;
    bool has_dict_id;        /* a non-zero Dictionary_ID */
    uint32_t dict_id;
    bool has_content_size;
    uint64_t content_size;
    bool has_checksum;
    uint64_t window_size;
    bool all_raw;            /* every block is a raw block */
    bool has_compressed;     /* some block is compressed */
    uint64_t known_size;     /* decompressed bytes when no block is compressed */
    uint32_t n_blocks;
    pq_zstd_block *blocks;   /* only when asked for; free with pq_zstd_frame_free */
} pq_zstd_frame;

/* Walk the frame header and every block header of the zstd frame at the
 * start of buf. Malformed frames (bad magic, skippable frame first, reserved
 * bit or block type, truncated, block over Block_Maximum_Size) are errors;
 * otherwise the facts are reported and single_frame says whether bytes
 * follow the frame. */
tc_status pq_zstd_inspect(const uint8_t *buf, size_t len, bool want_blocks, pq_zstd_frame *out,
                          tc_error *err);
void pq_zstd_frame_free(pq_zstd_frame *f);

#endif
