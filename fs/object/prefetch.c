#include "prefetch.h"

#include <stdlib.h>
#include <string.h>

#define CONTINUATION_TOLERANCE (1u << 20) /* kernel reads arrive out of order across FUSE threads */
#define KERNEL_DEFAULT_READAHEAD (128u << 10)
#define PAGE_ROUNDING 4096u /* the kernel rounds a reader's last byte up to its page */

uint64_t prefetch_continuation_proof(const prefetch_config *cfg)
{
    const uint64_t ra = cfg->kernel_readahead ? cfg->kernel_readahead : KERNEL_DEFAULT_READAHEAD;
    return 2 * ra + PAGE_ROUNDING;
}

bool read_pattern_init(read_pattern *p, const parquet_layout *layout)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    if (layout) {
        p->n_chunks = layout->n_chunks;
        p->chunk_fetched = calloc(p->n_chunks ? p->n_chunks : 1, 1);
        if (!p->chunk_fetched)
            return false;
    }
    return true;
}

void read_pattern_destroy(read_pattern *p)
{
    pthread_mutex_destroy(&p->lock);
    free(p->chunk_fetched);
    p->chunk_fetched = NULL;
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
    *s = (read_stream){.chunk = SIZE_MAX, .entered_chunk = SIZE_MAX};
    return s;
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
    bool trigger = false;
    pthread_mutex_lock(&p->lock);
    read_stream *s = stream_of_read(p, off);
    const bool continues = s != NULL;
    if (!s)
        s = stream_slot(p);
    if (!p->chunk_fetched[idx]) {
        if (!continues) {
            trigger = true;
        } else if (s->chunk != idx && s->entered_chunk != idx) {
            s->entered_chunk = idx; /* entered by running on from another chunk */
            s->entered_at = from;
        }
        if (s->entered_chunk == idx && end >= s->entered_at + prefetch_continuation_proof(cfg))
            trigger = true;
        if (trigger)
            p->chunk_fetched[idx] = 1;
    }
    s->chunk = idx;
    if (!continues || end > s->next)
        s->next = end;
    s->last_use = ++p->clock;
    pthread_mutex_unlock(&p->lock);
    if (trigger)
        object_prefetch_parts(io, o, from, c->end);
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
