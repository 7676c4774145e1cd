/* What the plain path fetches ahead of a reader, from the pattern of its
 * reads on one open file:
 *  - Parquet-aware: a read that starts inside a column chunk fetches the rest
 *    of that chunk, in parallel parts, and nothing beyond it. A chunk the
 *    reads merely run on into (kernel readahead past the end of a read) is
 *    fetched only once they have gone further into it than the kernel reads
 *    ahead (prefetch_continuation_proof): readahead alone never fetches a
 *    chunk the reader does not read.
 *  - Column pattern: readers read the same columns in every row group. Once
 *    a chunk of a column counts as read, a stream running on into another
 *    chunk of that column fetches it at once, and a stream in a chunk it
 *    reads fetches the run of adjacent chunks after it whose columns were
 *    read (up to max_window), so a reader's long read across many chunks
 *    waits for one round trip, not one per chunk.
 *  - Speculation: past them, a stream fetches 1/20 of what the reader has
 *    read of the file (less what its other live streams keep ahead beyond
 *    the proof; at least 1/20 of its own streak), and at least the proof (what the kernel's readahead asks for past the run's
 *    end whether or not the reader wants it), spread over the following
 *    chunks whose columns are neither known to be read nor known to be
 *    skipped (the reader jumped over a chunk of it, or left a row group
 *    before it). The reader that reads on into the next chunk then waits
 *    one round trip for it, not two, and one stopping there has caused at
 *    most 5 % extra bytes or the proof, only until its pattern is known.
 *  - Long runs: a stream that has read three chunks in a row (readers
 *    read a run of adjacent projected columns as one read) fetches the
 *    next whole, if no larger than what it has read.
 *  - Chunks smaller than the proof are never proven by reads past their
 *    own start: once a stream's reads are the proof past the start of a
 *    chunk it ran on into, the reader reads on through them, and each read
 *    fetches the proof's worth of bytes past it.
 *  - Page skipping: a reader that skips pages by the page index (DuckDB,
 *    parquet-mr) reads a chunk first at a data page inside it, often with
 *    a pread of exactly that page (the OffsetIndex gives the page starts,
 *    when the page index is in the footer's tail). Such a read fetches its
 *    page alone, not the rest of the chunk; so does a first read of the
 *    kernel's whole window at a page that goes on past it (a pread of a
 *    page larger than the window), with the rest of the kernel's last
 *    window of the pread (the kernel reads it in windows from its start). Once the
 *    reader has read two pages so, every chunk it reads is fetched a page
 *    at a time (its dictionary page, then the pages it reads, each to the
 *    end of the kernel's window it ends in after a read of a whole
 *    window), and nothing past a chunk is fetched for it, until its reads
 *    have run on across three page starts of that chunk; then the rest of
 *    the chunk comes whole.
 *  - Across files: a file's columns read are shared with the other files
 *    of its table (column_memory.h). Once this file's reads have followed
 *    them (the reader went on from one shared column's chunk into the
 *    next's, as far as the proof), they count as read here too.
 *  - Otherwise sequential: after min_streak sequential bytes, a window of
 *    half the streak (at most max_window) is kept ahead of the reader, so a
 *    reader that stops early has caused at most 50% extra transfer.
 * The bytes served are never affected, only what is fetched and when. */
#ifndef SIEVE_PREFETCH_H
#define SIEVE_PREFETCH_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "column_memory.h"
#include "object_read.h"
#include "parquet_layout.h"

typedef struct {
    uint64_t min_streak;       /* sequential bytes read before prefetch starts */
    uint64_t max_window;       /* largest sequential prefetch window */
    uint64_t kernel_readahead; /* the mount's kernel readahead window (0: the kernel's 128 KiB) */
    /* --direct-io: the kernel passes each read() as the reader made it, in
     * pieces of at most PREFETCH_DIRECT_IO_PIECE, and reads nothing ahead:
     * every byte asked for is the reader's own. */
    bool exact_reads;
    /* Nothing speculated past the chunks the reader reads: views, whose
     * next chunk may be served partially, fetch what they serve themselves. */
    bool no_speculation;
} prefetch_config;

/* Column chunks this close count as one run of bytes: a read runs on from
 * one into the next. */
#define PREFETCH_ADJACENT_GAP 4096u

/* The kernel sends a read() larger than the mount's readahead in pieces of
 * up to 128 KiB (the backing device's I/O size) and reads ahead past it in
 * windows as large, whatever that readahead: with --read-ahead 32K, DuckDB's
 * reads still arrive as 128 KiB. A mount's kernel_readahead is never taken
 * as less. */
#define PREFETCH_KERNEL_IO_WINDOW (128u << 10)

/* A direct read() larger than this arrives in pieces of it (the largest
 * FUSE request: the adapter's max_write, 256 pages). */
#define PREFETCH_DIRECT_IO_PIECE (1u << 20)

/* The size of the pieces a long read() arrives in: the kernel's readahead
 * window of the mount (cfg's, else the kernel's default,
 * PREFETCH_KERNEL_IO_WINDOW), or with exact reads PREFETCH_DIRECT_IO_PIECE. */
uint64_t prefetch_kernel_readahead(const prefetch_config *cfg);

/* How far the kernel asks past the end of a reader's read: its readahead
 * window, or nothing with exact reads. */
uint64_t prefetch_kernel_runs_on(const prefetch_config *cfg);

/* How far reads must run on into a chunk before it counts as read: past
 * what the kernel's readahead can request beyond a reader's last byte (its
 * current window and the next, asynchronous one), plus page rounding; with
 * exact reads, a page's worth. */
uint64_t prefetch_continuation_proof(const prefetch_config *cfg);

/* One stream of reads through the column chunks: a reader's thread reading
 * a run of chunks, and the kernel's readahead running on after it. */
typedef struct {
    uint64_t next;        /* where the stream would read next; 0: slot unused */
    uint64_t last_use;    /* read_pattern.clock at its latest read */
    size_t chunk;         /* chunk of its previous read, or SIZE_MAX */
    size_t entered_chunk; /* chunk it ran on into, or SIZE_MAX */
    size_t run_start;     /* first chunk of its run of adjacent chunks (jumped or hopped into), or SIZE_MAX */
    size_t reached;       /* furthest chunk the reader is shown to read in it, or SIZE_MAX */
    bool proven;          /* its current chunk counts as read by the reader */
    uint64_t streak;      /* bytes it has read without a jump */
    uint64_t ahead_to;    /* end of what it has speculated past its chunk */
    uint64_t read_mark;   /* read_pattern.bytes_read after its latest read */
} read_stream;

/* Readers read several row groups at once from one handle (pyarrow, DuckDB
 * threads): each is followed as a stream of its own, so one thread's
 * readahead is not mistaken for another's jump into a new chunk. pyarrow's
 * pre_buffer reads a row group's ~20 coalesced ranges at once: with 8
 * streams they pushed each other out (docs/design.md, Read path). */
#define READ_STREAMS 32

/* What the reads of one column chunk have been, for page reads. */
typedef struct {
    uint64_t read_end; /* end of its furthest read; 0: not read yet */
    uint8_t pages_run; /* page starts reads have run on across, from the read before (capped) */
    bool page_first;   /* its first read was a pread of a data page inside it */
    bool rows_ahead;   /* pages of rows [rows_lo, rows_hi) and its dictionary fetched ahead of the reader */
    uint64_t rows_lo, rows_hi;
    bool rows_read;    /* the reader read data pages of it: their rows [read_lo, read_hi) (hull) */
    uint64_t read_lo, read_hi;
    uint64_t window_lo, window_hi; /* the file's row window when it read the first of them */
    uint64_t covered;  /* bytes of it the reads covered (the kernel's readahead's included) */
    uint64_t covered_data; /* ... by reads that began before the file's last tens of KiB */
} chunk_reads;

/* The read pattern of one open file. The kernel sends reads of one handle
 * from several FUSE threads at once, so it has its own lock. */
typedef struct {
    pthread_mutex_t lock;     /* guards the fields below */
    uint64_t seq_next;        /* where a sequential reader would read next (outside chunks) */
    uint64_t streak_bytes;    /* bytes read in the current sequential streak */
    uint64_t prefetched_to;   /* end of what prefetch has already requested */
    read_stream streams[READ_STREAMS];
    uint64_t clock;           /* counts reads into chunks, to age streams */
    uint64_t bytes_read;      /* bytes of all reads into chunks */
    uint64_t data_read;       /* bytes of reads starting well before the footer: not an open's read of it */
    uint8_t *chunk_fetched;   /* per layout chunk: whole-chunk prefetch started */
    size_t n_chunks;
    uint8_t *column_read;     /* per column: the reader has read one of its chunks */
    uint8_t *column_skipped;  /* per column: the reader jumped over or left one of its chunks */
    uint32_t n_columns;
    column_set *shared;       /* the table's columns (column_memory.h), or NULL; set at init */
    bool shared_confirmed;    /* this file's reads have followed the shared columns */
    chunk_reads *chunk_reads; /* per layout chunk */
    uint8_t page_jumps;       /* pages inside chunks read by a pread of their own (capped) */
    /* The rows the reader selects, as far as its page reads show: the rows
     * every chunk it read pages of holds in them (rows_window: known). */
    bool rows_window;
    uint8_t page_backsteps;   /* data pages read in a chunk before the previous one's (capped) */
    size_t last_page_chunk;   /* chunk of the previous data page read, plus 1; 0: none */
    uint32_t window_group;
    uint64_t window_lo, window_hi;
} read_pattern;

/* layout may be NULL (not Parquet): sequential prefetch only. shared (may
 * be NULL): the table's column set, referenced by the caller for the
 * pattern's life. False when out of memory. */
bool read_pattern_init(read_pattern *p, const parquet_layout *layout, column_set *shared);
void read_pattern_destroy(read_pattern *p);

/* After a reader's read of [off, off+size): start what it will want next.
 * Returns whether the read is part of a long sequential stream (its blocks
 * can be recycled once read past). */
bool prefetch_after_read(object_io *io, const prefetch_config *cfg, const object_ref *o,
                         const parquet_layout *layout, read_pattern *p, uint64_t off, size_t size);

/* At a file's close: the columns whose chunks its reads covered (nine
 * tenths or more of every chunk's bytes before the file's last tens of KiB,
 * which an open's read of the footer may have brought into the kernel's
 * cache) into the table's set s (column_set_add_covered; may be NULL), what
 * the next files' readers will read too. Returns data_read:
 * the file's data the reader read, not its footer (readers read the
 * footer with a read of the file's last tens of KiB, data included); and
 * in *run_on the most its reads covered of a chunk after a covered one
 * without covering it: how far the kernel reads on past a run of chunks
 * (a page's rounding for small preads, its readahead for long reads). */
uint64_t read_pattern_note_covered(read_pattern *p, const parquet_layout *layout, column_set *s, uint64_t *run_on);

/* The Parquet-aware rule alone (views use it for chunks served real): false
 * when the read is outside every chunk. */
bool prefetch_chunk_of_read(object_io *io, const prefetch_config *cfg, const object_ref *o,
                            const parquet_layout *layout, read_pattern *p, uint64_t off, size_t size);

#endif
