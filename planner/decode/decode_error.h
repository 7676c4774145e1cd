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

#define PQD_ERROR_MSG 256

typedef struct {
    pqd_status code;
    size_t offset;           /* byte offset into the decoded buffer; 0 if unknown */
    char msg[PQD_ERROR_MSG]; /* NUL-terminated */
} pqd_error;

/* Fill err (if not NULL) and return s. */
pqd_status pqd_fail(pqd_error *err, pqd_status s, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prefix err->msg with "what: " (used when a lower layer reports an error). */
void pqd_error_prefix(pqd_error *err, const char *what);

#endif
