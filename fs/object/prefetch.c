#include "prefetch.h"

#include <stdlib.h>
#include <string.h>

#define CONTINUATION_TOLERANCE (1u << 20) /* kernel reads arrive out of order across FUSE threads */
#define PAGE_ROUNDING 4096u /* the kernel rounds a reader's last byte up to its page */
#define SPECULATED_CHUNKS 64 /* chunks one read may start fetching ahead */
#define SPECULATION_SHARE 20 /* speculation into unread columns: 1/20 of what was read */
#define STREAM_ENDED_AFTER (16u << 20) /* a stream others have read this far past has ended */
#define LONG_RUN_CHUNKS 3 /* a stream that has read this many chunks in a row reads on */
#define PAGE_JUMPS_TO_SKIP 2 /* pages read alone by a pread of their own: the reader skips pages */
#define PAGES_RUN_TO_WHOLE 3 /* page starts read on across: the reader reads the chunk's pages in turn */
#define ROWS_AHEAD_CHUNKS 32 /* chunks one page read may fetch the same rows of */
/* Reads this close to the footer (at most a quarter of the way to it) may be
 * an open's read of it. */
#define FOOTER_READ_SPAN (64u << 10)
#define ROWS_AHEAD_BACKSTEPS 2 /* a reader reading pages out of chunk order more often reads them in parallel */

uint64_t prefetch_kernel_readahead(const prefetch_config *cfg)
{
    if (cfg->exact_reads)
        return PREFETCH_DIRECT_IO_PIECE;
    return cfg->kernel_readahead ? cfg->kernel_readahead : PREFETCH_KERNEL_IO_WINDOW;
}

uint64_t prefetch_kernel_runs_on(const prefetch_config *cfg)
{
    return cfg->exact_reads ? 0 : prefetch_kernel_readahead(cfg);
}

uint64_t prefetch_continuation_proof(const prefetch_config *cfg)
{
    return cfg->exact_reads ? PAGE_ROUNDING : 2 * prefetch_kernel_readahead(cfg) + PAGE_ROUNDING;
}

bool read_pattern_init(read_pattern *p, const parquet_layout *layout, column_set *shared)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    if (layout) {
        p->n_chunks = layout->n_chunks;
        p->chunk_fetched = calloc(p->n_chunks ? p->n_chunks : 1, 1);
        p->chunk_reads = calloc(p->n_chunks ? p->n_chunks : 1, sizeof *p->chunk_reads);
        if (!p->chunk_fetched || !p->chunk_reads)
            return false;
        if (layout->column) {
            p->n_columns = layout->n_columns;
            p->column_read = calloc(p->n_columns ? p->n_columns : 1, 1);
            p->column_skipped = calloc(p->n_columns ? p->n_columns : 1, 1);
            if (!p->column_read || !p->column_skipped)
                return false;
            p->shared = shared && shared->n_columns == p->n_columns ? shared : NULL;
        }
    }
    return true;
}

void read_pattern_destroy(read_pattern *p)
{
    pthread_mutex_destroy(&p->lock);
    free(p->chunk_fetched);
    free(p->chunk_reads);
    free(p->column_read);
    free(p->column_skipped);
    p->chunk_fetched = NULL;
    p->chunk_reads = NULL;
    p->column_read = p->column_skipped = NULL;
}

/* The stream a read at off continues (the nearest whose next read is within
 * the tolerance), or NULL. Called with p->lock held. */
static read_stream *stream_of_read(read_pattern *p, uint64_t off)
{
    read_stream *best = NULL;
    uint64_t best_gap = UINT64_MAX;
    for (size_t i = 0; i < READ_STREAMS; i++) {
        read_stream *s = &p->streams[i];
        if (s->next == 0)
            continue;
        uint64_t gap = off > s->next ? off - s->next : s->next - off;
        if (gap <= CONTINUATION_TOLERANCE && gap < best_gap)
            best = s, best_gap = gap;
    }
    return best;
}

/* A slot for a new stream: an unused one, or the least recently used,
 * reset. Called with p->lock held. */
static read_stream *stream_slot(read_pattern *p)
{
    read_stream *s = &p->streams[0];
    for (size_t i = 1; i < READ_STREAMS && s->next != 0; i++)
        if (p->streams[i].next == 0 || p->streams[i].last_use < s->last_use)
            s = &p->streams[i];
    *s = (read_stream){.chunk = SIZE_MAX, .entered_chunk = SIZE_MAX, .reached = SIZE_MAX, .run_start = SIZE_MAX};
    return s;
}

/* Whether the reader has read a chunk of chunk i's column. Called with
 * p->lock held. */
static bool column_known(const parquet_layout *layout, const read_pattern *p, size_t i)
{
    if (!p->column_read || !layout->column)
        return false;
    uint32_t c = layout->column[i];
    if (c >= p->n_columns)
        return false;
    return p->column_read[c] || (p->shared_confirmed && !p->column_skipped[c] && column_set_has(p->shared, c));
}

/* Mark the column of chunk i read, here and for the table. Called with
 * p->lock held. */
static void column_mark_read(const parquet_layout *layout, read_pattern *p, size_t i)
{
    if (!p->column_read || !layout->column || layout->column[i] >= p->n_columns)
        return;
    p->column_read[layout->column[i]] = 1;
    column_set_add(p->shared, layout->column[i]);
}

/* Stream s is shown to read chunk i: the furthest it reads, and its column
 * read. Called with p->lock held. */
static void stream_reads_chunk(const parquet_layout *layout, read_pattern *p, read_stream *s, size_t i)
{
    if (s->reached == SIZE_MAX || s->reached < i)
        s->reached = i;
    column_mark_read(layout, p, i);
}

/* Whether the reader, going on from chunk i-1 into chunk i as far as the
 * proof, follows the table's columns: both are shared columns. */
static bool follows_shared(const parquet_layout *layout, const read_pattern *p, size_t i)
{
    return p->shared && layout->column && i > 0 && column_set_has(p->shared, layout->column[i]) &&
           column_set_has(p->shared, layout->column[i - 1]);
}

/* Whether the reader has jumped over a chunk of chunk i's column and read
 * none. Called with p->lock held. */
static bool column_skipped(const parquet_layout *layout, const read_pattern *p, size_t i)
{
    if (!p->column_skipped || !layout->column)
        return false;
    uint32_t c = layout->column[i];
    return c < p->n_columns && p->column_skipped[c] && !p->column_read[c];
}

/* Whether chunk j directly follows chunk j-1 (a long read runs on into it). */
static bool chunk_adjacent(const parquet_layout *layout, size_t j)
{
    return j > 0 && j < layout->n_chunks && layout->chunks[j].start <= layout->chunks[j - 1].end + PREFETCH_ADJACENT_GAP;
}

/* A stream that read its chunk to the end (or ran on into the next only as
 * far as the kernel reads ahead) and has not gone on while the reader read
 * STREAM_ENDED_AFTER bytes elsewhere has left its row group: the column of
 * the chunk after its last one is one the reader skips. reading is the
 * stream of the read being handled. Called with p->lock held. */
static void mark_columns_left_unread(const parquet_layout *layout, read_pattern *p, const read_stream *reading)
{
    if (!p->column_skipped)
        return;
    for (size_t i = 0; i < READ_STREAMS; i++) {
        const read_stream *s = &p->streams[i];
        if (s == reading || s->next == 0 || s->chunk == SIZE_MAX || p->bytes_read - s->read_mark < STREAM_ENDED_AFTER)
            continue;
        size_t k;
        if (s->proven && s->next + PAGE_ROUNDING >= layout->chunks[s->chunk].end)
            k = s->chunk + 1; /* it read its chunk and went no further */
        else if (!s->proven && s->entered_chunk == s->chunk)
            k = s->chunk; /* only the kernel's readahead ran on into it */
        else
            continue;
        if (chunk_adjacent(layout, k) && !column_known(layout, p, k) && layout->column[k] < p->n_columns)
            p->column_skipped[layout->column[k]] = 1;
    }
}

/* Speculation: budget bytes from at, through chunk j and the chunks
 * adjacent after it, as far as one whose column is known to be read (a
 * stream entering it fetches it whole), known to be skipped, or already
 * fetched. Of a chunk j that directly follows the stream's run (at == 0),
 * the first reach bytes are taken even if its column is skipped: the
 * kernel's readahead asks for about that much anyway, and a column wrongly
 * taken for skipped (the one before a filter column a reader reads first)
 * then costs its reader no extra round trip. The range to fetch goes to
 * *from, *to (empty: equal). Called with p->lock held. */
static void speculate(const parquet_layout *layout, const read_pattern *p, const read_stream *s, size_t j,
                      uint64_t at, uint64_t budget, uint64_t reach, uint64_t *from, uint64_t *to)
{
    *from = *to = 0;
    for (size_t k = j; budget > 0 && k < j + SPECULATED_CHUNKS && k < layout->n_chunks &&
                       (k > j ? chunk_adjacent(layout, k) : at > layout->chunks[k].start || chunk_adjacent(layout, k)) &&
                       !column_known(layout, p, k) && !p->chunk_fetched[k];
         k++) {
        const bool skipped = column_skipped(layout, p, k);
        if (skipped && !(k == j && at == 0))
            break;
        const byte_span *nx = &layout->chunks[k];
        const uint64_t start = at > nx->start ? at : nx->start;
        if (start >= nx->end)
            continue;
        uint64_t part = nx->end - start < budget ? nx->end - start : budget;
        if (skipped && part > reach)
            part = reach;
        if (*to == 0)
            *from = s->ahead_to > start ? s->ahead_to : start;
        *to = start + part;
        budget -= part;
        if (skipped)
            break;
    }
    if (*to < *from)
        *to = *from;
}

/* Page reads of rows [lo, hi): a reader that selects rows by the page
 * index (arrow-rs, DuckDB) reads the same rows of each column it
 * projects, a chunk after the other (arrow-rs, as delta-rs and DataFusion
 * read local files: one pread at a time, each a round trip). The pages
 * holding those rows in the chunks after idx in its row group, with their
 * dictionaries, go to out[] (at most max_out ranges), as far as budget
 * bytes reach; pages already fetched so count against it, and chunks
 * already read, fetched whole or of a column known to be skipped are
 * passed over. window: the kernel's readahead (0: exact reads, nothing
 * past the pages). Called with p->lock held. */
static size_t speculate_rows(const parquet_layout *layout, read_pattern *p, size_t idx, uint64_t lo, uint64_t hi,
                             uint64_t budget, uint64_t window, byte_span *out, size_t max_out)
{
    size_t n = 0;
    uint64_t used = 0;
    for (size_t j = idx + 1; j < layout->n_chunks && j <= idx + ROWS_AHEAD_CHUNKS && n + 2 <= max_out; j++) {
        if (layout->row_group[j] != layout->row_group[idx])
            break;
        chunk_reads *cr = &p->chunk_reads[j];
        if (p->chunk_fetched[j] || cr->read_end != 0 || column_skipped(layout, p, j))
            continue;
        byte_span dict, pages;
        if (!parquet_layout_pages_of_rows(layout, &layout->chunks[j], lo, hi, &dict, &pages))
            continue;
        /* A pread of pages larger than the kernel's window arrives in
         * windows from its first 4 KiB page: the last one runs on past the
         * pages (as page_to has it for a page read). */
        const uint64_t from4k = pages.start / PAGE_ROUNDING * PAGE_ROUNDING;
        if (window > 0 && pages.end - from4k > window) {
            pages.end = from4k + (pages.end - from4k + window - 1) / window * window;
            if (pages.end > layout->chunks[j].end)
                pages.end = layout->chunks[j].end;
        }
        used += (dict.end - dict.start) + (pages.end - pages.start);
        if (used > budget)
            break;
        if (cr->rows_ahead && cr->rows_lo <= lo && hi <= cr->rows_hi)
            continue;
        if (!cr->rows_ahead && dict.end > dict.start)
            out[n++] = dict;
        if (n > 0 && out[n - 1].end == pages.start)
            out[n - 1].end = pages.end;
        else
            out[n++] = pages;
        cr->rows_lo = cr->rows_ahead && cr->rows_lo < lo ? cr->rows_lo : lo;
        cr->rows_hi = cr->rows_ahead && cr->rows_hi > hi ? cr->rows_hi : hi;
        cr->rows_ahead = true;
    }
    return n;
}

/* The reader read the data page of chunk idx holding rows [*lo, *hi):
 * the rows it selects lie in the pages it reads of every chunk, so the
 * file's row window becomes the rows of this chunk's pages within the
 * window as it was when the reader came to this chunk (a selection that
 * crosses a page boundary of this chunk widens it again), or, outside it
 * (another row range, or row group), those rows alone. *lo, *hi get the
 * window. Called with p->lock held. */
static void narrow_rows_window(const parquet_layout *layout, read_pattern *p, size_t idx, uint64_t *lo, uint64_t *hi)
{
    chunk_reads *cr = &p->chunk_reads[idx];
    const uint32_t g = layout->row_group[idx];
    if (!cr->rows_read) {
        cr->rows_read = true;
        cr->read_lo = *lo;
        cr->read_hi = *hi;
        const bool window = p->rows_window && p->window_group == g;
        cr->window_lo = window ? p->window_lo : 0;
        cr->window_hi = window ? p->window_hi : UINT64_MAX;
    } else {
        cr->read_lo = *lo < cr->read_lo ? *lo : cr->read_lo;
        cr->read_hi = *hi > cr->read_hi ? *hi : cr->read_hi;
    }
    uint64_t wlo = cr->read_lo > cr->window_lo ? cr->read_lo : cr->window_lo;
    uint64_t whi = cr->read_hi < cr->window_hi ? cr->read_hi : cr->window_hi;
    if (wlo >= whi)
        wlo = cr->read_lo, whi = cr->read_hi;
    p->rows_window = true;
    p->window_group = g;
    p->window_lo = *lo = wlo;
    p->window_hi = *hi = whi;
}

/* How far past the chunks known to be read stream s may speculate into
 * unread columns: 1/20 of what the reader has read of the file, all its
 * streams together, less what the other streams still going have
 * speculated and not read yet beyond the proof past their reads, or past
 * their chunks' ends where those are further (an ended stream's is spent;
 * the rest of the chunk a stream reads is the reader's; the proof is what
 * the kernel's readahead asks for anyway: pyarrow's short ranges, ending at
 * skipped columns, each hold one, and would otherwise starve its long
 * range of any share); never less than 1/20 of s's own streak, nor more
 * than max_window. A reader that stops anywhere has cost at most about
 * 5 % more than it read. A reader whose threads have read most of a row
 * group already (DuckDB reads the last columns of the first row group in
 * one sequential run, after its other threads) keeps several chunks of
 * that run in flight, not one a round trip. Called with p->lock held. */
static uint64_t speculation_budget(const prefetch_config *cfg, const parquet_layout *layout, const read_pattern *p,
                                   const read_stream *s)
{
    const uint64_t proof = prefetch_continuation_proof(cfg);
    uint64_t others = 0;
    for (size_t i = 0; i < READ_STREAMS; i++) {
        const read_stream *t = &p->streams[i];
        if (t == s || !t->next || p->bytes_read - t->read_mark >= STREAM_ENDED_AFTER)
            continue;
        /* The rest of the chunk it reads is the reader's, not speculation. */
        uint64_t at = t->next;
        if (t->chunk < layout->n_chunks && layout->chunks[t->chunk].end > at)
            at = layout->chunks[t->chunk].end;
        if (t->ahead_to > at + proof)
            others += t->ahead_to - at - proof;
    }
    const uint64_t own = s->streak / SPECULATION_SHARE, file = p->bytes_read / SPECULATION_SHARE;
    const uint64_t budget = file > others && file - others > own ? file - others : own;
    return cfg->max_window && budget > cfg->max_window ? cfg->max_window : budget;
}

/* Where a reader's read of the footer (and page index) may begin: reads
 * from there on may be an open's, not the reader's reads of data. */
static uint64_t footer_reads_from(const parquet_layout *layout)
{
    const uint64_t meta = parquet_layout_meta_start(layout);
    const uint64_t span = FOOTER_READ_SPAN < meta / 4 ? FOOTER_READ_SPAN : meta / 4;
    return meta - span;
}

/* Count the read's bytes in every chunk it overlaps (capped at the chunk's
 * size). Called with p->lock held. */
static void note_coverage(const parquet_layout *layout, read_pattern *p, uint64_t off, uint64_t end)
{
    const bool data = off < footer_reads_from(layout);
    if (data)
        p->data_read += end - off;
    size_t lo = 0, hi = layout->n_chunks < p->n_chunks ? layout->n_chunks : p->n_chunks;
    const size_t n = hi;
    while (lo < hi) { /* the first chunk ending after off */
        size_t mid = lo + (hi - lo) / 2;
        if (layout->chunks[mid].end <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < n && layout->chunks[i].start < end; i++) {
        const byte_span *c = &layout->chunks[i];
        const uint64_t a = off > c->start ? off : c->start, b = end < c->end ? end : c->end;
        const uint64_t size = c->end - c->start;
        chunk_reads *cr = &p->chunk_reads[i];
        cr->covered = cr->covered + (b - a) < size ? cr->covered + (b - a) : size;
        if (data)
            cr->covered_data = cr->covered_data + (b - a) < size ? cr->covered_data + (b - a) : size;
    }
}

uint64_t read_pattern_note_covered(read_pattern *p, const parquet_layout *layout, column_set *s, uint64_t *run_on)
{
    *run_on = 0;
    if (!layout || !p->chunk_reads)
        return 0;
    pthread_mutex_lock(&p->lock);
    const uint64_t data = p->data_read;
    bool was_covered = false;
    const uint64_t tail_start = footer_reads_from(layout);
    for (size_t i = 0; i < layout->n_chunks && i < p->n_chunks; i++) {
        const byte_span *c = &layout->chunks[i];
        /* What an open read of the file's end (the footer and what comes
         * before it) is in the kernel's cache: no read of it comes (DuckDB
         * reads the footer on one handle and scans on another). A chunk
         * is judged by its bytes before that, by reads that began before
         * it; one wholly after it, by all its bytes and reads. */
        const uint64_t before = c->end < tail_start   ? c->end - c->start
                                : tail_start > c->start ? tail_start - c->start
                                                        : 0;
        const bool by_data = before > 0;
        const uint64_t size = by_data ? before : c->end - c->start;
        const uint64_t covered = by_data ? p->chunk_reads[i].covered_data : p->chunk_reads[i].covered;
        const bool is_covered = size > 0 && covered * 10 >= size * 9;
        if (is_covered && layout->column)
            column_set_add_covered(s, layout->column[i]);
        /* reads into a chunk after a covered one, short of covering it:
         * how far the kernel read on past the reader's reads */
        const uint64_t into = p->chunk_reads[i].covered_data;
        if (was_covered && !is_covered && into > *run_on && i > 0 && layout->chunks[i - 1].end + 4096 >= c->start)
            *run_on = into;
        was_covered = is_covered;
    }
    pthread_mutex_unlock(&p->lock);
    return data;
}

bool prefetch_chunk_of_read(object_io *io, const prefetch_config *cfg, const object_ref *o,
                            const parquet_layout *layout, read_pattern *p, uint64_t off, size_t size)
{
    if (!layout || !p->chunk_fetched || size == 0)
        return false;
    /* The kernel aligns reads down to its 4 KiB pages, so a read of a chunk
     * from its first byte may start in the tail of the chunk before it. */
    uint64_t probe = off + (size > 4095 ? 4095 : size - 1);
    size_t idx;
    const byte_span *c = parquet_layout_chunk_at(layout, probe, &idx);
    if (!c || idx >= p->n_chunks)
        return false;
    const uint64_t from = off > c->start ? off : c->start;
    const uint64_t end = off + size;
    size_t whole[SPECULATED_CHUNKS + 1]; /* chunks to fetch whole */
    size_t n_whole = 0;
    uint64_t spec_from = 0, spec_to = 0; /* the start of an unread column's chunk */
    uint64_t page_to = 0; /* end of the page a page-skipping reader reads, with readahead */
    byte_span rows_ahead[2 * ROWS_AHEAD_CHUNKS]; /* the same rows' pages of the chunks after */
    size_t n_rows_ahead = 0;
    pthread_mutex_lock(&p->lock);
    note_coverage(layout, p, off, end);
    read_stream *s = stream_of_read(p, off);
    const bool continues = s != NULL;
    if (!continues && idx + 1 == layout->n_chunks && end > c->end) {
        /* The reader's read of the file's tail (the footer, which a reader
         * reads first, with the end of the last chunk before it) reads
         * nothing of that chunk's column: taken for a jump into the chunk,
         * it marked the column read, and the chunk came whole with the
         * chunk before it even when the reader skips its column. */
        pthread_mutex_unlock(&p->lock);
        return false;
    }
    if (!s)
        s = stream_slot(p);
    /* Page reads: a reader that skips pages by the page index (DuckDB,
     * parquet-mr) reads a chunk first at a data page inside it (the kernel
     * aligns the read's start down to 4 KiB), often with a pread of exactly
     * that page: a read that ends where the page does. Such a read fetches
     * its page alone. Once the reader has read two pages so, each chunk it
     * reads is fetched a page at a time (its dictionary page, then the
     * pages it reads) until its reads run on across three page starts: it
     * reads that chunk's pages in turn, and the rest comes whole. Per chunk,
     * not per stream: streams are told apart by distance alone, and such a
     * reader's threads read pages of neighbouring chunks. The kernel reads
     * of a long pread, arriving out of order, may start at a page too, but
     * they are the kernel's window in size. */
    byte_span page = {0, 0};
    const bool in_page = layout->n_page_starts > 0 && !p->chunk_fetched[idx] &&
                         parquet_layout_page_at(layout, c, probe, &page);
    chunk_reads *cr = &p->chunk_reads[idx];
    const bool first_read = cr->read_end == 0;
    const bool at_page = in_page && page.start > c->start && page.start >= off && first_read;
    if (in_page && !first_read && off <= cr->read_end + PAGE_ROUNDING &&
        off + prefetch_continuation_proof(cfg) >= cr->read_end && cr->pages_run < UINT8_MAX) {
        /* Running on from the chunk's last read across a page start. */
        byte_span last;
        const uint64_t last_byte = end < c->end ? end - 1 : c->end - 1;
        if ((page.start >= off && page.start > c->start) ||
            (parquet_layout_page_at(layout, c, last_byte, &last) && last.start != page.start))
            cr->pages_run++;
    }
    if (end > cr->read_end)
        cr->read_end = end;
    const bool reads_pages_in_turn = cr->pages_run >= PAGES_RUN_TO_WHOLE;
    const bool page_pread = at_page && size != prefetch_kernel_readahead(cfg) && page.end < c->end &&
                            page.end <= end && page.end + PAGE_ROUNDING > end;
    if (page_pread && p->page_jumps < PAGE_JUMPS_TO_SKIP)
        p->page_jumps++;
    if (page_pread && first_read)
        cr->page_first = true;
    /* Back at the chunk's first page after a pread of a page inside it:
     * the reader reads the dictionary that page needs (DuckDB, before two
     * page preads have shown it skips pages), not the chunk. Taken for a
     * chunk read, it fetched this chunk and the next ones whole (Spark
     * table, clustered 0.1 %: 0.9 MB of 12.5 MB never read). */
    const bool dictionary_of_page = in_page && !first_read && cr->page_first && page.start == c->start;
    const bool skipping = p->page_jumps >= PAGE_JUMPS_TO_SKIP;
    /* Not the kernel's readahead running on from the chunk before. */
    const bool ran_on = continues && s->chunk != idx && off <= s->next + PAGE_ROUNDING &&
                        off + prefetch_continuation_proof(cfg) >= s->next;
    /* A first read of the kernel's whole window at a data page inside the
     * chunk whose page goes on past it: a pread of a page larger than the
     * window (DuckDB's parallel first reads of a file), or the window of a
     * long read that happened to arrive first. Either way the page comes,
     * not yet the rest of the chunk (the long read's window at the chunk's
     * start still fetches that); not counted as a page pread. */
    const bool window_of_page = at_page && size == prefetch_kernel_readahead(cfg) && page.end > end;
    const bool page_read =
        in_page && !ran_on &&
        (page_pread || window_of_page || dictionary_of_page || (skipping && (at_page || !reads_pages_in_turn)));
    if (!continues) {
        s->proven = true; /* a jump into a chunk is the reader's own */
        s->run_start = idx;
        s->streak = size;
        /* Jumping to a chunk's start skips the chunk before it. */
        if (chunk_adjacent(layout, idx) && from < c->start + CONTINUATION_TOLERANCE && p->column_skipped &&
            layout->column[idx - 1] < p->n_columns)
            p->column_skipped[layout->column[idx - 1]] = 1;
    } else {
        s->streak += size;
        if (s->chunk != idx && s->entered_chunk != idx) {
            /* A short hop forward over whole chunks skips their columns,
             * and starts a new run: chunks read apart are no long read
             * (Spark's small second file: a hop from l_shipdate to rownum
             * took them for one, and the next column came whole). */
            if (s->chunk != SIZE_MAX && idx > s->chunk + 1) {
                s->run_start = idx;
                if (p->column_skipped)
                    for (size_t k = s->chunk + 1; k < idx && k < s->chunk + 1 + SPECULATED_CHUNKS; k++)
                        if (layout->column[k] < p->n_columns)
                            p->column_skipped[layout->column[k]] = 1;
            }
            s->entered_chunk = idx; /* entered by running on from another chunk */
            s->proven = column_known(layout, p, idx);
        }
        /* Readahead reaches at most the proof past the reader's last byte,
         * which, for a reader that reads nothing of this chunk, is before
         * its start. */
        if (s->entered_chunk == idx && end >= c->start + prefetch_continuation_proof(cfg)) {
            s->proven = true;
            if (!p->shared_confirmed && chunk_adjacent(layout, idx) && follows_shared(layout, p, idx))
                p->shared_confirmed = true;
        } else if (!s->proven && !cfg->no_speculation && s->reached != SIZE_MAX &&
                   end > prefetch_continuation_proof(cfg)) {
            /* Chunks smaller than the proof: the reader is at least at
             * end - proof. Once that is in a chunk past the furthest one
             * it was shown to read, it reads on through small chunks one
             * after the other: its column is read, and the proof's worth
             * of bytes past what the kernel asked for is fetched ahead. */
            size_t r;
            if (parquet_layout_chunk_at(layout, end - prefetch_continuation_proof(cfg), &r) && r > s->reached &&
                r < idx) {
                column_mark_read(layout, p, r);
                s->reached = r;
                speculate(layout, p, s, idx, end, prefetch_continuation_proof(cfg), 0, &spec_from, &spec_to);
                if (spec_to > spec_from + object_io_block_size(io))
                    s->ahead_to = spec_to;
                else
                    spec_to = spec_from;
            }
        }
    }
    if (page_read) {
        s->proven = true; /* the reader's own page */
        stream_reads_chunk(layout, p, s, idx);
        /* The page, and what the kernel reads ahead past it: only when
         * this read is its whole window and ends inside the page, so the
         * pread goes on, and the kernel reads it in windows from this
         * read's start, the last one running past the page's end to the
         * window's (Spark's table, DuckDB's preads of 160 KB pages: the
         * kernel asked 61 to 64 KiB-pages from the first, 86-100 KB past
         * the page; a whole window past the page fetched 30-45 KB per
         * page that it never asked for). A read that ends at or past the
         * page's end is all of the pread (DuckDB's page of 126 KB read as
         * one 128 KiB window: traced, no read followed it). Not the rest
         * of the chunk, nor the chunks after it. Exact reads have no
         * window: the pread's last piece ends where it does. */
        const uint64_t window = prefetch_kernel_runs_on(cfg);
        const bool pread_goes_on = window > 0 && size >= window && page.end > end;
        page_to = pread_goes_on ? off + (page.end - off + window - 1) / window * window : page.end;
        if (page_to < end)
            page_to = end; /* the read itself, in the same request */
        if (page_to > c->end)
            page_to = c->end;
        uint64_t row_lo, row_hi;
        const bool data_page = page.start > c->start;
        if (data_page && p->last_page_chunk > idx + 1 && p->page_backsteps < UINT8_MAX)
            p->page_backsteps++;
        if (data_page)
            p->last_page_chunk = idx + 1;
        if (!cfg->no_speculation && layout->row_group && data_page && p->page_backsteps <= ROWS_AHEAD_BACKSTEPS &&
            parquet_layout_page_rows(layout, c, page.start, &row_lo, &row_hi)) {
            narrow_rows_window(layout, p, idx, &row_lo, &row_hi);
            /* At least the proof, as a stream's speculation past its run:
             * a few chunks' pages (Spark's 160 KB pages: one or two). */
            uint64_t budget = speculation_budget(cfg, layout, p, s);
            if (budget < prefetch_continuation_proof(cfg))
                budget = prefetch_continuation_proof(cfg);
            n_rows_ahead = speculate_rows(layout, p, idx, row_lo, row_hi, budget, window, rows_ahead,
                                          sizeof rows_ahead / sizeof *rows_ahead);
        }
    } else if (s->proven && skipping) {
        /* A reader that skips pages reads each chunk it wants with reads
         * of its own: nothing is fetched for it past this chunk, and this
         * one comes whole only once it reads its pages in turn. */
        stream_reads_chunk(layout, p, s, idx);
        if (!p->chunk_fetched[idx] && reads_pages_in_turn) {
            if (from < c->start + PAGE_ROUNDING)
                p->chunk_fetched[idx] = 1;
            whole[n_whole++] = idx;
        }
    } else if (s->proven) {
        stream_reads_chunk(layout, p, s, idx);
        if (!p->chunk_fetched[idx]) {
            /* Fetched from the read on. A read past the chunk's start (a
             * page near its end read first, as DuckDB does, or pages
             * skipped) leaves it unmarked: a later read of the chunk from
             * further back still fetches the rest at once, not read by
             * read (blocks already on their way are not fetched again). */
            if (from < c->start + PAGE_ROUNDING)
                p->chunk_fetched[idx] = 1;
            whole[n_whole++] = idx;
        }
        /* The run of adjacent chunks after this one whose columns the
         * reader reads: its long read will run through them. */
        uint64_t window = 0;
        size_t j = idx + 1;
        for (; chunk_adjacent(layout, j) && column_known(layout, p, j) && n_whole <= SPECULATED_CHUNKS; j++) {
            window += layout->chunks[j].end - layout->chunks[j].start;
            if (window > cfg->max_window)
                break;
            if (!p->chunk_fetched[j]) {
                p->chunk_fetched[j] = 1;
                whole[n_whole++] = j;
            }
        }
        /* The chunks after that run, whose columns are not known to be
         * read: a share of this stream's streak, spread over as many of
         * them as it covers (a reader stopping there has caused 5 % extra
         * bytes), so a stream reading unknown columns one after the other
         * keeps several chunks in flight once its streak is long. */
        mark_columns_left_unread(layout, p, s);
        uint64_t budget = cfg->no_speculation ? 0 : speculation_budget(cfg, layout, p, s);
        /* Once the reader reaches the end of the run, the kernel reads
         * ahead into the next chunk whether or not the reader wants it:
         * fetched now, with the run, it costs no extra bytes and saves the
         * reader a round trip before it can read on into that chunk. */
        if (!cfg->no_speculation && budget < prefetch_continuation_proof(cfg))
            budget = prefetch_continuation_proof(cfg);
        /* A reader that has read LONG_RUN_CHUNKS chunks in a row in one
         * read (DuckDB and pyarrow read each run of adjacent columns they
         * project as one read) reads on into the next: it comes whole, if
         * no larger than what the stream has read, so a long run waits one
         * round trip per two chunks at most, and a run ending there has
         * cost at most one chunk. */
        if (!cfg->no_speculation && s->run_start != SIZE_MAX && idx + 1 >= s->run_start + LONG_RUN_CHUNKS &&
            j < layout->n_chunks) {
            const uint64_t next = layout->chunks[j].end - layout->chunks[j].start;
            if (next <= s->streak && budget < next + prefetch_continuation_proof(cfg))
                budget = next + prefetch_continuation_proof(cfg);
        }
        speculate(layout, p, s, j, 0, budget, prefetch_kernel_runs_on(cfg), &spec_from, &spec_to);
        if (spec_to > spec_from + object_io_block_size(io))
            s->ahead_to = spec_to;
        else
            spec_to = spec_from;
    }
    s->chunk = idx;
    if (!continues || end > s->next)
        s->next = end;
    s->last_use = ++p->clock;
    p->bytes_read += size;
    s->read_mark = p->bytes_read;
    pthread_mutex_unlock(&p->lock);
    for (size_t k = 0; k < n_whole; k++) {
        const byte_span *w = &layout->chunks[whole[k]];
        object_prefetch_parts(io, o, k == 0 && whole[k] == idx ? from : w->start, w->end);
    }
    if (spec_to > spec_from)
        object_prefetch(io, o, spec_from, spec_to, 0, false);
    if (page_to > from)
        object_prefetch_parts(io, o, from, page_to);
    for (size_t k = 0; k < n_rows_ahead; k++)
        object_prefetch(io, o, rows_ahead[k].start, rows_ahead[k].end, 0, false);
    return true;
}

bool prefetch_after_read(object_io *io, const prefetch_config *cfg, const object_ref *o,
                         const parquet_layout *layout, read_pattern *p, uint64_t off, size_t size)
{
    if (prefetch_chunk_of_read(io, cfg, o, layout, p, off, size))
        return false;
    const uint64_t bs = object_io_block_size(io);
    uint64_t end = off + size;
    uint64_t from = 0, to = 0;
    pthread_mutex_lock(&p->lock);
    uint64_t window = p->streak_bytes / 2;
    if (window > cfg->max_window)
        window = cfg->max_window;
    uint64_t tol = 2ull * bs + window;
    bool sequential = p->seq_next > 0 && off + tol >= p->seq_next && off <= p->seq_next + tol;
    if (sequential) {
        p->streak_bytes += size;
        if (end > p->seq_next)
            p->seq_next = end;
    } else {
        p->streak_bytes = size;
        p->seq_next = end;
        p->prefetched_to = 0;
    }
    window = p->streak_bytes / 2;
    if (window > cfg->max_window)
        window = cfg->max_window;
    /* Top the window up only once half of it is used, so GETs stay large. */
    uint64_t ahead = p->prefetched_to > p->seq_next ? p->prefetched_to - p->seq_next : 0;
    if (sequential && p->streak_bytes >= cfg->min_streak && window >= bs && ahead <= window / 2) {
        from = p->seq_next > p->prefetched_to ? p->seq_next : p->prefetched_to;
        to = p->seq_next + window;
        if (to > o->size)
            to = o->size;
        if (to > from)
            p->prefetched_to = to;
    }
    bool streaming = sequential && p->streak_bytes >= cfg->min_streak;
    pthread_mutex_unlock(&p->lock);
    if (to > from)
        object_prefetch(io, o, from, to, 0, false);
    return streaming;
}
