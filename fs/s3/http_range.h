/* Byte-range helpers for ranged GETs: Content-Range parsing and splitting a
 * read into parallel parts. Pure functions, FUSE-free. */
#ifndef SIEVE_HTTP_RANGE_H
#define SIEVE_HTTP_RANGE_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t first; /* inclusive */
    uint64_t last;  /* inclusive */
    uint64_t total; /* UINT64_MAX when the server sent "*" */
} http_content_range;

/* Parse a Content-Range header value: "bytes FIRST-LAST/TOTAL" or
 * "bytes FIRST-LAST/ *"(no space). Leading/trailing whitespace allowed, the
 * unit is case-insensitive; anything else (missing "bytes", last < first,
 * last >= TOTAL, numbers overflowing uint64, a numeric TOTAL of UINT64_MAX,
 * trailing junk) returns -1 and leaves *out untouched. Returns 0 on success.
 * value need not be NUL-terminated. */
int http_parse_content_range(const char *value, size_t len, http_content_range *out);

typedef struct {
    uint64_t offset;
    uint64_t length;
} byte_range;

/* Split [offset, offset+length) into consecutive parts of part_size bytes
 * (the last may be shorter), at most max_parts; when more would be needed the
 * part size grows so that exactly max_parts parts cover the range, each a
 * multiple of align (align >= 1; the final part absorbs the remainder). If
 * even one align unit per part is more than the range holds, parts of align
 * bytes are used (then fewer than max_parts). Writes at most max_parts
 * entries into out, returns the count (0 when length == 0, offset+length
 * wraps past 2^64, or arguments are invalid). */
size_t byte_range_split(uint64_t offset, uint64_t length, uint64_t part_size,
                        uint64_t align, byte_range *out, size_t max_parts);

#endif
