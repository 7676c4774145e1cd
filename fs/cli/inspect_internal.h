/* What the files of `sievefs inspect` share (private to fs/cli): the run's
 * state, reading bytes of the file (cli_inspect.c), the page scan
 * (inspect_pages.c), the two renderings (inspect_text.c, inspect_json.c) and
 * the strings both print (inspect_format.c). */
#ifndef SIEVE_INSPECT_INTERNAL_H
#define SIEVE_INSPECT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "byte_source.h"
#include "cli_common.h"
#include "page_map.h"
#include "parquet_meta.h"

/* One counter per eligibility reason (pq_elig). */
#define N_REASONS PQ_ELIG_N

typedef struct {
    const char *file;
    bool json;
    bool pages;
    cli_s3_opts s3;
    int log_level;
} inspect_opts;

typedef struct {
    const inspect_opts *o;
    byte_source *src;
    pq_file_meta *m;
    FILE *out;
    /* Bytes already read and kept for the whole run. */
    uint8_t *tail;
    size_t tail_len;
    uint8_t *index;     /* OffsetIndex span */
    uint64_t index_off;
    size_t index_len;
    /* Error message (without the "FILE: " prefix). */
    char err[1024];
    /* Totals over all pages listed. */
    uint64_t n_pages, n_data_pages, n_eligible;
    uint64_t reasons[N_REASONS];
    /* JSON output: no comma before the next row group / column yet. */
    bool first_rg, first_col;
} inspector;

/* A column chunk: row group g, column c (leaf path). */
typedef struct {
    uint32_t g, c;
    const char *path;
} col_ref;

/* Set in->err; false, for `return ins_fail(...)`. */
bool ins_fail(inspector *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The bytes [off, off+len): a pointer into bytes already held, or into
 * *scratch (malloc'd here; the caller frees it). NULL on error (in->err). */
const uint8_t *ins_view(inspector *in, uint64_t off, size_t len, uint8_t **scratch);

/* Build the page map of one column chunk: page headers and eligibility.
 * *have is false when the chunk lives in another file (ColumnChunk.file_path).
 * False on error (in->err). */
bool ins_build_pages(inspector *in, const col_ref *r, pq_page_map *pm, bool *have);

/* One rendering of the file, called in file order: begin, then per row group
 * row_group, column for each of its chunks (pm and have as ins_build_pages
 * left them; pm is empty without --pages) and row_group_end, then end. A
 * false return is out of memory. */
typedef struct {
    bool (*begin)(inspector *in);
    bool (*row_group)(inspector *in, uint32_t g);
    bool (*column)(inspector *in, const col_ref *r, const pq_page_map *pm, bool have);
    void (*row_group_end)(inspector *in);
    void (*end)(inspector *in);
} ins_output;

extern const ins_output ins_text_output; /* aligned tables, human sizes */
extern const ins_output ins_json_output; /* one document (docs/inspect.md) */

/* Copy of s[0..len) that is valid UTF-8 (invalid bytes become U+FFFD) and,
 * when printable is set, free of control characters (shown as '?'). NULL
 * when out of memory. Footer strings are whatever the writer put there. */
char *ins_clean_str(const char *s, size_t len, bool printable);

/* ConvertedType name ("UTF8", ..., "NONE", "UNKNOWN"). */
const char *ins_converted_name(int32_t ct);

#endif
