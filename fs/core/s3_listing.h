/* ListObjectsV2 and S3 <Error> response parsing (libxml2). FUSE-free, no I/O.
 * Every input is untrusted: sizes, counts and lengths are limited below. */
#ifndef SIEVE_S3_LISTING_H
#define SIEVE_S3_LISTING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define S3_LISTING_MAX_XML      (32u << 20) /* refuse bigger responses */
#define S3_LISTING_MAX_ENTRIES  10000u      /* objects + prefixes per page */
#define S3_KEY_MAX              1024u       /* S3's own key-length limit, bytes */
#define S3_ETAG_MAX             256u
#define S3_TOKEN_MAX            4096u       /* <NextContinuationToken>, bytes */

typedef enum {
    S3_LISTING_OK = 0,
    S3_LISTING_ERR_PARSE,   /* not well-formed XML or not a ListBucketResult */
    S3_LISTING_ERR_LIMIT,   /* a size/count limit above was exceeded */
    S3_LISTING_ERR_INVALID, /* well-formed but a field is missing or bad */
    S3_LISTING_ERR_NOMEM,
} s3_listing_err;

typedef struct {
    char *key;      /* full object key (NUL-free UTF-8, 1..S3_KEY_MAX bytes) */
    uint64_t size;  /* <Size> */
    char *etag;     /* <ETag> exactly as sent, quotes included (used for If-Match);
                       "" (never NULL) when the server sent none */
    int64_t mtime;  /* <LastModified> as Unix seconds (UTC) */
} s3_object_entry;

typedef struct {
    s3_object_entry *objects;
    size_t n_objects;
    char **prefixes;   /* <CommonPrefixes><Prefix>, full prefixes ending in the delimiter */
    size_t n_prefixes;
    bool truncated;    /* <IsTruncated>true */
    char *next_token;  /* <NextContinuationToken>, NULL if absent */
    uint32_t key_count;/* <KeyCount>, 0 if absent */
} s3_listing;

/* Parse one ListObjectsV2 page. On success *out owns its strings (free with
 * s3_listing_free). On failure *out is left empty and err gets a one-line
 * message naming the cause. A truncated page without a continuation token is
 * S3_LISTING_ERR_INVALID. With <EncodingType>url</EncodingType> keys and
 * prefixes are URL-decoded ('+' is a space); a DOCTYPE is always refused. */
s3_listing_err s3_listing_parse(const char *xml, size_t len, s3_listing *out,
                                char *err, size_t errlen);
void s3_listing_free(s3_listing *l);

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
