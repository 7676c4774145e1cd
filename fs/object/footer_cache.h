/* One parsed footer per object version, shared by the plain path and every
 * view: the FileMetaData and the byte layout the plain path prefetches by.
 * However many handles open a version, its tail is read and parsed once.
 *
 * Loading reads the tail (64 KiB; once more if the footer is longer) through
 * the block cache, parses it, and starts fetching the page index when the
 * tail missed it. A footer that does not parse is remembered (the version is
 * immutable); a read that failed is not, so the next open tries again.
 *
 * Locking: one mutex guards the entries; loading runs outside it, claimed by
 * one thread while others wait. Entries are reference counted; unreferenced
 * ones are evicted, least recently used first, beyond the byte budget. */
#ifndef SIEVE_FOOTER_CACHE_H
#define SIEVE_FOOTER_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory_budget.h"
#include "object_read.h"
#include "parquet_layout.h"
#include "parquet_meta.h"
#include "sv_error.h"

/* Why a footer is missing: the code of parquet_footer.err. */
typedef enum {
    FOOTER_OK = 0,
    FOOTER_E_READ,   /* the tail could not be read (not remembered) */
    FOOTER_E_PARSE,  /* not Parquet, or a malformed or too large footer */
    FOOTER_E_NOMEM,
} footer_status;

typedef struct {
    pq_file_meta *meta;    /* NULL when err says why */
    parquet_layout layout; /* empty without meta */
    sv_error err;          /* "KEY: footer: what went wrong" */
} parquet_footer;

/* Parse the footer in the last tail_len bytes of a file of file_size bytes
 * (pure): FOOTER_OK; 1 with *need set when a longer tail is needed; or
 * FOOTER_E_PARSE / FOOTER_E_NOMEM with out->err set. */
int parquet_footer_from_tail(const uint8_t *tail, size_t tail_len, uint64_t file_size,
                             parquet_footer *out, uint64_t *need);
void parquet_footer_clear(parquet_footer *f);

typedef struct footer_cache footer_cache;

/* budget_bytes: estimated memory of unreferenced footers kept for reuse;
 * tail_bytes: how much of the end of a file the first read takes (0: the
 * 64 KiB of parquet_layout_tail_hint). */
footer_cache *footer_cache_create(object_io *io, uint64_t budget_bytes, uint64_t tail_bytes);
void footer_cache_destroy(footer_cache *fc);
/* Count every footer held (referenced or idle) in mb (memory_budget.h).
 * Call before use; mb must outlive the cache. */
void footer_cache_share_budget(footer_cache *fc, memory_budget *mb);

/* The footer of o (a reference; give it back with footer_cache_put). Never
 * NULL: a footer that could not be had has meta NULL and err set. Loading
 * has a read deadline of its own; waiting for it (this opener's load, or
 * another's) also ends when tok is cancelled (may be NULL). */
const parquet_footer *footer_cache_get(footer_cache *fc, const object_ref *o, const sv_cancel *tok);
/* True when that was the last reference to the version's footer: no file
 * of that version is open any more. */
bool footer_cache_put(footer_cache *fc, const parquet_footer *f);

/* How much of the end of a file of size bytes loading reads first. */
uint64_t footer_cache_tail_len(const footer_cache *fc, uint64_t size);
/* Where loading asks what tail of o was fetched ahead of its open
 * (table_ahead.h), to read that instead (0: nothing was). Set before use. */
void footer_cache_set_tail_source(footer_cache *fc, uint64_t (*fetched_tail)(void *ud, const object_ref *o),
                                  void *ud);

/* Loads from the store so far (each a read and a parse), for tests. */
uint64_t footer_cache_loads(footer_cache *fc);

#endif
