/* Decompression of Parquet page bodies by pq_codec. FUSE-free, I/O-free.
 *
 * Supported: UNCOMPRESSED, SNAPPY, GZIP (gzip or zlib wrapper, concatenated
 * gzip members), ZSTD (one or more frames, skippable frames), LZ4_RAW (one
 * LZ4 block), LZ4 (the deprecated Hadoop framing: repeated [4-byte BE
 * uncompressed length][4-byte BE compressed length][LZ4 block]; when the
 * input does not parse that way it is retried as one raw LZ4 block, as
 * parquet-cpp does), BROTLI. LZO and unknown codec numbers give
 * PQD_E_UNSUPPORTED.
 *
 * The caller states the exact decompressed size (uncompressed_page_size, or
 * its values part for V2 pages) and supplies a buffer of that size. Output
 * never goes past it; producing fewer or more bytes is PQD_E_MISMATCH.
 * Sizes above PQ_CODEC_MAX_OUTPUT / PQ_CODEC_MAX_INPUT are PQD_E_LIMIT.
 * pq_codec_precheck rejects, before the caller allocates anything, sizes no
 * stream of src_len bytes could legally decompress to (snappy and zstd
 * headers that state another size, expansion ratios beyond what snappy
 * (~21x), LZ4 (~255x), deflate (~1032x) and zstd (~32768x) can reach), so
 * a tiny page claiming a huge size costs no allocation. Trailing bytes after
 * a complete stream are an error for every codec. */
#ifndef SIEVE_CODEC_H
#define SIEVE_CODEC_H

#include "decode_error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQ_CODEC_MAX_OUTPUT (256u << 20)
#define PQ_CODEC_MAX_INPUT (320u << 20)

/* Reusable decompression state (zstd context, zlib stream). Not thread-safe:
 * one per thread. */
typedef struct pq_codec_ctx pq_codec_ctx;

pq_codec_ctx *pq_codec_ctx_new(void);
void pq_codec_ctx_free(pq_codec_ctx *c);

/* True for the codecs pq_decompress implements (codec is a pq_codec value). */
bool pq_codec_is_supported(int codec);

/* Cheap checks on a compressed stream and its claimed decompressed size,
 * meant to run before allocating dst_len bytes. */
pqd_status pq_codec_precheck(int codec, const uint8_t *src, size_t src_len, size_t dst_len,
                             pqd_error *err);

/* Decompress src into exactly dst_len bytes at dst (runs pq_codec_precheck
 * first). ctx may be NULL (a temporary one is used). dst may be NULL only
 * when dst_len is 0. */
pqd_status pq_decompress(pq_codec_ctx *ctx, int codec, const uint8_t *src, size_t src_len,
                         uint8_t *dst, size_t dst_len, pqd_error *err);

#endif
