/* A read-only byte source for the command-line tools: a size and positional
 * reads, over a local file (pread) or an S3 object (ranged GETs pinned to the
 * ETag seen at open, so a replaced object is an error rather than a mix of
 * versions). */
#ifndef SIEVE_BYTE_SOURCE_H
#define SIEVE_BYTE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "cli_common.h"

typedef struct byte_source byte_source;

struct byte_source {
    uint64_t size;
    /* Read exactly len bytes at off (off + len <= size). 0 on success; -1
     * with a one-line cause in err (the caller names the source). */
    int (*read)(byte_source *src, uint64_t off, size_t len, void *buf, sv_error *err);
    void (*close)(byte_source *src);
    /* Reads issued and bytes read, for diagnostics. */
    uint64_t n_reads, bytes_read;
};

/* Open a local file (regular files only; anything behind a sievefs mount
 * qualifies). NULL with the cause in err. */
byte_source *byte_source_open_file(const char *path, sv_error *err);

/* Open key in s's bucket (HEAD for size and ETag). where names the object in
 * messages ("s3://bucket/key"). NULL with a one-line cause in err. */
byte_source *byte_source_open_s3(cli_s3 *s, const char *key, const char *where, sv_error *err);

int byte_source_read(byte_source *src, uint64_t off, size_t len, void *buf, sv_error *err);
void byte_source_close(byte_source *src);

#endif
