/* Status codes and error reports shared by the value-decoding layer:
 * codec.h (decompression), rle_hybrid.h (RLE/bit-packed hybrid), decode.h
 * (data and dictionary pages) and pq_value.h (comparable logical values).
 *
 * Every function of that layer returns PQD_OK or one of the error codes and,
 * when given a non-NULL pqd_error, fills it with the code, the byte offset
 * into the buffer being decoded (where known) and a message such as
 * "def levels: RLE run header at byte 12 is truncated". */
#ifndef SIEVE_DECODE_ERROR_H
#define SIEVE_DECODE_ERROR_H

#include "sv_error.h"

#include <stddef.h>

typedef enum {
    PQD_OK = 0,
    PQD_E_TRUNCATED,   /* the data ends before what its headers announce */
    PQD_E_CORRUPT,     /* malformed data (bad varint, bad run, codec error) */
    PQD_E_UNSUPPORTED, /* valid but not implemented: LZO, ALP, unknown encoding */
    PQD_E_LIMIT,       /* a documented size or count limit was exceeded */
    PQD_E_RANGE,       /* a value outside what the format allows (index, level, width) */
    PQD_E_MISMATCH,    /* two counts or sizes that must agree do not */
    PQD_E_NOMEM,       /* allocation failed */
    PQD_E_INVALID,     /* bad arguments from the caller (type/encoding pairing, NULLs) */
} pqd_status;

/* Short stable name, e.g. "truncated", "corrupt". */
const char *pqd_status_name(pqd_status s);

/* The one error shape (common/sv_error.h): code is a pqd_status. Fill it
 * with sv_fail; a caller adding context uses sv_error_prefix. */
typedef sv_error pqd_error;

#endif
