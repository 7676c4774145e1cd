/* Delta deletion vectors (PROTOCOL.md, "Deletion Vectors"): the rows of a
 * data file that a table version no longer has, as an add action's
 * deletionVector descriptor and the bitmap it points to. Pure: the caller
 * fetches the bytes (dv_file_range says which) and this module checks and
 * decodes them.
 *
 * The bitmap ("RoaringBitmapArray", all little-endian):
 *
 *   u32 magic 1681511377  u64 n  n x (u32 key  portable 32-bit Roaring bitmap)
 *
 * row = key << 32 | value. Keys strictly increase and have their top bit
 * clear (the protocol requires it, so rows are below 2^63). Every 32-bit
 * bitmap is checked in full (container keys, sorted values, runs, bitset
 * cardinalities) before CRoaring sees it, so a decoded bitmap is exactly what
 * the bytes say and costs memory in proportion to them.
 *
 * Where the bytes are, by storageType:
 *   'i' pathOrInlineDv is the Z85 of the bitmap above, magic included,
 *       zero-padded to a multiple of 4 bytes; sizeInBytes is without padding.
 *   'u' a file under the table: pathOrInlineDv is a random prefix (may be
 *       empty) and the 20-character Z85 of a UUID (dv_relative_path).
 *   'p' a file at an absolute URI (dv_absolute_path).
 * A DV file starts with a version byte (1) and holds DVs back to back, each
 * framed as
 *
 *   u32 BE sizeInBytes  bitmap (sizeInBytes bytes)  u32 BE CRC-32 (zlib's) of the bitmap
 *
 * starting at the descriptor's offset (absent: 1, right after the version
 * byte, as delta-kernel-rs reads it). */
#ifndef SIEVE_DELETION_VECTOR_H
#define SIEVE_DELETION_VECTOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_error.h"

#define DV_MAGIC 1681511377u        /* the protocol's RoaringBitmapArray format */
#define DV_MAGIC_NATIVE 1681511376u /* delta-spark's other format, not in the protocol: refused, as
                                       is a big-endian magic (PROTOCOL.md's inline example has one:
                                       delta-spark cannot read it either) */
#define DV_FILE_VERSION 1u
#define DV_MAX_BYTES (256u << 20)   /* larger bitmaps (sizeInBytes) are refused */
#define DV_MAX_BITMAPS 65536u       /* 32-bit bitmaps in one DV: 2^48 rows */

typedef enum {
    DV_OK = 0,
    DV_E_DESCRIPTOR,  /* a descriptor the protocol does not allow: storage type, path, sizes */
    DV_E_CORRUPT,     /* bytes that are not a deletion vector: truncated, magic, order, trailing */
    DV_E_UNSUPPORTED, /* a DV file version or bitmap format this reader does not know */
    DV_E_MISMATCH,    /* bytes that disagree with the descriptor: size, cardinality */
    DV_E_CHECKSUM,    /* a file's CRC-32 differs */
    DV_E_LIMIT,       /* over DV_MAX_BYTES or DV_MAX_BITMAPS */
    DV_E_NOMEM,
} dv_status;

typedef struct {
    char storage_type;    /* 'u', 'i' or 'p' */
    char *path_or_inline; /* owned; NUL-terminated */
    int64_t offset;       /* -1 when absent */
    int32_t size_in_bytes;
    int64_t cardinality;
} dv_descriptor;

/* Free d's string and zero it (d itself is the caller's). */
void dv_descriptor_free(dv_descriptor *d);

/* DV_OK when d's fields are what the protocol allows for its storage type
 * (sizes, offset, path); the from_* functions below check this first. */
int dv_descriptor_check(const dv_descriptor *d, sv_error *err);

/* The protocol's uniqueId: storageType, pathOrInlineDv, then "@offset" when
 * an offset is present. Malloc'd; NULL when out of memory. */
char *dv_unique_id(const dv_descriptor *d);

/* For 'u': "<prefix>/deletion_vector_<uuid>.bin" (no "<prefix>/" when the
 * prefix is empty), relative to the table's root, the UUID in lowercase
 * 8-4-4-4-12 form. *out is malloc'd. A prefix may not contain '/', '\' or
 * control characters, nor be "." or "..", so that the path stays under
 * the table. */
int dv_relative_path(const dv_descriptor *d, char **out, sv_error *err);

/* For 'p': pathOrInlineDv as is, a URI in the form of an add action's path
 * (percent-encoded: the caller decodes it as it decodes add paths). NULL
 * for other storage types. */
const char *dv_absolute_path(const dv_descriptor *d);

/* For 'u' and 'p': the bytes of the DV file to fetch, offset .. offset +
 * length: the frame (size, bitmap, CRC) dv_bitmap_from_file_bytes reads. */
int dv_file_range(const dv_descriptor *d, uint64_t *offset, uint64_t *length, sv_error *err);

/* DV_OK when a DV file's first byte is the version this reader knows.
 * Reading it costs nothing extra when the offset is 1 (the first DV of a
 * file): fetch from byte 0 and pass buf + 1 on. */
int dv_file_check_version(uint8_t first_byte, sv_error *err);

/* A parsed deletion vector. The queries below only read it: threads may
 * share one. */
typedef struct dv_bitmap dv_bitmap;

/* Parse the serialized bitmap (magic included). *out is NULL on failure. */
int dv_bitmap_parse(const uint8_t *buf, size_t len, dv_bitmap **out, sv_error *err);

/* For 'i': Z85-decode pathOrInlineDv, parse the first sizeInBytes bytes
 * (the rest, under 4 bytes, is padding) and check the cardinality. An
 * offset, which the protocol says an inline DV lacks, is ignored. */
int dv_bitmap_from_inline(const dv_descriptor *d, dv_bitmap **out, sv_error *err);

/* For 'u' and 'p': buf holds the file from the descriptor's offset on (at
 * least dv_file_range's length; bytes past the frame, the file's next DVs,
 * are ignored): the size must be sizeInBytes, the CRC match, the bitmap
 * parse and its cardinality be the descriptor's. Offsets in err are into
 * buf. */
int dv_bitmap_from_file_bytes(const uint8_t *buf, size_t len, const dv_descriptor *d, dv_bitmap **out,
                              sv_error *err);

/* The number of deleted rows. */
uint64_t dv_bitmap_cardinality(const dv_bitmap *b);

bool dv_bitmap_contains(const dv_bitmap *b, uint64_t row);

/* The deleted rows within [from, to), ascending, into out: the number
 * written, at most max. When it is max there may be more: call again from
 * out[max - 1] + 1. */
size_t dv_bitmap_rows_in_range(const dv_bitmap *b, uint64_t from, uint64_t to, uint64_t *out, size_t max);

void dv_bitmap_free(dv_bitmap *b);

#endif
