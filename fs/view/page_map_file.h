/* The on-disk form of one walked page map (--cache-dir): the object version
 * (key, ETag, size), row group and column it belongs to, and the header
 * windows of its walk. Little-endian:
 *
 *   "SIEVEPM1"  u32 key_len  key  u32 etag_len  etag  u64 size  u32 rg  u32 col
 *   u32 n  n x (u64 offset  u32 len  len bytes)  u32 crc32 of everything before
 *
 * A file read back is untrusted: page_map_file_parse checks every length
 * against the buffer and the limits below and the CRC, and the windows are
 * then only a prediction: replayed through a new walk against the file's
 * metadata, and their bytes not served (the page planner reads the headers
 * from S3 again). */
#ifndef SIEVE_PAGE_MAP_FILE_H
#define SIEVE_PAGE_MAP_FILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "header_walk.h"

#define PAGE_MAP_FILE_MAX (16u << 20) /* larger files are not read */

typedef struct {
    char *key;
    char *etag;
    uint64_t size;
    uint32_t rg, col;
    pq_header_window *windows; /* bytes point into the parsed buffer */
    uint32_t n;
} page_map_file;

/* Parse buf (not copied: out's strings are allocated, windows point into
 * buf). False with out zeroed when anything is out of bounds, over a limit
 * or the CRC differs. */
bool page_map_file_parse(const uint8_t *buf, size_t len, page_map_file *out);
void page_map_file_free(page_map_file *f);

/* The bytes of a file for a done walk; *len set; NULL when out of memory. */
uint8_t *page_map_file_encode(const char *key, const char *etag, uint64_t size, uint32_t rg, uint32_t col,
                              const pq_header_walk *w, size_t *len);

/* FNV-1a of the version (key, ETag, size): what names its files. */
uint64_t page_map_version_hash(const char *key, const char *etag, uint64_t size);

/* The file name for (key, etag, size, rg, col): 16 hex digits of a hash of
 * the version, then -RG-COL.pm; into out (at least 48 bytes). */
void page_map_file_name(const char *key, const char *etag, uint64_t size, uint32_t rg, uint32_t col, char *out,
                        size_t out_len);

#endif
