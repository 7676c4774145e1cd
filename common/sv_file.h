/* Whole files on local disk, for the caches that outlive a mount
 * (--cache-dir, `sievefs index --cache-dir`): written under a temporary name
 * and renamed, so a reader sees a file whole or not at all, and read back
 * with a size limit. */
#ifndef SIEVE_SV_FILE_H
#define SIEVE_SV_FILE_H
#include <stddef.h>
#include <stdint.h>

/* Write buf to path through path.tmp.PID.SEQ (seq tells apart the writers
 * of one process) and rename it: 0, or the errno of what failed (nothing is
 * left behind then). */
int sv_write_file_atomic(const char *path, const void *buf, size_t len, unsigned seq);

/* The contents of regular file path, 1 to max bytes (*len set; the caller
 * frees it), or NULL when it is missing, empty, larger or unreadable. */
uint8_t *sv_read_file(const char *path, size_t max, size_t *len);

#endif
