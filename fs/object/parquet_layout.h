/* Where a Parquet file's column chunks and page index lie, from its footer,
 * so the read path can fetch a whole column chunk (and nothing beyond it)
 * when a reader touches it. Used only to decide what to fetch: the bytes
 * served always come from S3 unchanged. Built once per object version by the
 * footer cache. */
#ifndef SIEVE_PARQUET_LAYOUT_H
#define SIEVE_PARQUET_LAYOUT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t start, end; /* [start, end) */
} byte_span;

typedef struct {
    byte_span *chunks;    /* column chunks, sorted by start */
    uint32_t *column;     /* per chunk: its column (leaf) index; NULL: unknown */
    uint32_t *row_group;  /* per chunk: its row group; NULL: unknown */
    size_t n_chunks;
    uint32_t n_columns;   /* bound of column[] values */
    byte_span page_index; /* column and offset indexes; empty when absent */
    uint64_t *page_starts; /* data page offsets from the OffsetIndexes, ascending; NULL: none known */
    uint64_t *page_rows;   /* per page start: the page's first row in its row group; NULL: unknown */
    size_t n_page_starts;
    byte_span footer;     /* FileMetaData plus the 8-byte trailer */
} parquet_layout;

/* Where the file's metadata begins: its page index when before the
 * footer, else its footer. */
uint64_t parquet_layout_meta_start(const parquet_layout *l);
/* The bytes from that start to the end of a file of file_size bytes: what
 * an open reads of the file's end (its whole size when the start lies past it). */
uint64_t parquet_layout_meta_len(const parquet_layout *l, uint64_t file_size);

/* Tail length worth reading at open: 64 KiB, never more than the file. */
uint64_t parquet_layout_tail_hint(uint64_t file_size);

struct pq_file_meta;

/* The layout of a file of file_size bytes from its parsed footer: false when
 * out of memory. */
bool parquet_layout_from_meta(const struct pq_file_meta *m, uint64_t file_size, parquet_layout *out);
void parquet_layout_free(parquet_layout *l);

/* Adds the data page offsets of the OffsetIndexes found in buf, the bytes
 * [buf_off, buf_off + len) of the file (its tail, usually holding the page
 * index): a reader that skips pages can then be fetched a page at a time.
 * Indexes outside buf, malformed, or with pages outside their chunk are
 * ignored (their chunks keep no page map). False only when out of memory. */
bool parquet_layout_add_pages(parquet_layout *l, const struct pq_file_meta *m, const uint8_t *buf,
                              uint64_t buf_off, size_t len);

/* The page of chunk holding offset, from the page starts (before the first
 * data page: the dictionary page); false when the chunk has no page map. */
bool parquet_layout_page_at(const parquet_layout *l, const byte_span *chunk, uint64_t offset, byte_span *page);

/* The rows [*row_lo, *row_hi) of the data page of chunk starting at
 * page_start (*row_hi is UINT64_MAX for the chunk's last page); false when
 * unknown or page_start is not one of its data pages. */
bool parquet_layout_page_rows(const parquet_layout *l, const byte_span *chunk, uint64_t page_start, uint64_t *row_lo,
                              uint64_t *row_hi);

/* Of chunk, the bytes before its first data page (its dictionary page;
 * empty when none) to *dictionary, and the run of its data pages holding
 * any of rows [row_lo, row_hi) to *pages; false when its pages or their
 * rows are unknown. */
bool parquet_layout_pages_of_rows(const parquet_layout *l, const byte_span *chunk, uint64_t row_lo, uint64_t row_hi,
                                  byte_span *dictionary, byte_span *pages);

/* The chunk containing offset, or NULL; *index gets its position. */
const byte_span *parquet_layout_chunk_at(const parquet_layout *l, uint64_t offset, size_t *index);

#endif
