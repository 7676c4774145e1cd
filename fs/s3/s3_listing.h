/* ListObjectsV2 and S3 <Error> response parsing (libxml2). FUSE-free, no I/O.
 * Every input is untrusted: sizes, counts and lengths are limited below. */
#ifndef SIEVE_S3_LISTING_H
#define SIEVE_S3_LISTING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object_store.h"

#define S3_LISTING_MAX_XML      (32u << 20) /* refuse bigger responses */
#define S3_LISTING_MAX_ENTRIES  10000u      /* objects + prefixes per page */

typedef enum {
    S3_LISTING_OK = 0,
    S3_LISTING_ERR_PARSE,   /* not well-formed XML or not a ListBucketResult */
    S3_LISTING_ERR_LIMIT,   /* a size/count limit above was exceeded */
    S3_LISTING_ERR_INVALID, /* well-formed but a field is missing or bad */
    S3_LISTING_ERR_NOMEM,
} s3_listing_err;


/* Parse one ListObjectsV2 page. On success *out owns its strings (free with
 * store_listing_free). On failure *out is left empty and err gets a one-line
 * message naming the cause. A truncated page without a continuation token is
 * S3_LISTING_ERR_INVALID. With <EncodingType>url</EncodingType> keys and
 * prefixes are URL-decoded ('+' is a space); a DOCTYPE is always refused. */
s3_listing_err s3_listing_parse(const char *xml, size_t len, store_listing *out, sv_error *err);

/* Parse an S3 <Error> document into code ("NoSuchBucket", ...) and message
 * (either may be empty strings). Returns S3_LISTING_OK when the document is an
 * <Error>, S3_LISTING_ERR_PARSE otherwise. Output is always NUL-terminated and
 * truncated to its buffer; control characters are replaced by '?'. */
s3_listing_err s3_error_parse(const char *xml, size_t len, char *code, size_t codelen,
                              char *message, size_t messagelen);

/* Parse an RFC 3339 / ISO 8601 UTC timestamp ("2024-01-02T03:04:05.000Z").
 * Returns 0 and sets *out on success, -1 on malformed input. */
int s3_parse_iso8601(const char *s, int64_t *out);

#endif
