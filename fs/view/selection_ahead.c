#include "selection_ahead.h"

#include <string.h>

#include "selection.h"

void selection_ahead_init(selection_ahead *a, object_io *io, const object_ref *o, const pq_file_meta *m,
                          const pred_bound *b)
{
    memset(a, 0, sizeof *a);
    a->io = io;
    a->o = o;
    a->m = m;
    a->b = b;
    uint64_t quarter = object_io_cache_limit(io) / 4;
    a->max_bytes = quarter < SELECTION_AHEAD_MAX_BYTES ? quarter : SELECTION_AHEAD_MAX_BYTES;
}

static void drop_oldest(selection_ahead *a, bool gave_up)
{
    object_pins *p = &a->pins[a->head];
    if (gave_up)
        object_pins_abandon(a->io, p);
    else
        object_pins_release(a->io, p);
    a->bytes -= a->bytes_of[a->head];
    a->head = (a->head + 1) % SELECTION_AHEAD_MAX_CHUNKS;
    a->n--;
}

void selection_ahead_advance(selection_ahead *a, uint32_t g)
{
    while (a->n && a->group_of[a->head] < g)
        drop_oldest(a, false);
    if (a->next_group < g) {
        a->next_group = g;
        a->next_col = 0;
    }
    const size_t ncols = pred_bound_ncols(a->b);
    const uint64_t bs = object_io_block_size(a->io);
    while (a->next_group < a->m->n_row_groups && a->n < SELECTION_AHEAD_MAX_CHUNKS) {
        uint64_t off, len;
        if (a->next_col == 0)
            a->next_group_needed = selection_group_needs_filter(a->m, a->b, a->next_group);
        if (a->next_group_needed && a->next_col < ncols &&
            selection_filter_chunk(a->m, a->o, a->b, a->next_group, a->next_col, &off, &len)) {
            if (a->bytes + len > a->max_bytes)
                return; /* wait for the window to move */
            size_t slot = (a->head + a->n) % SELECTION_AHEAD_MAX_CHUNKS;
            size_t blocks = (size_t)((off + len - 1) / bs - off / bs + 1);
            if (object_pin(a->io, a->o, off, (size_t)len, blocks, &a->pins[slot]) != 0)
                return; /* out of memory: the selection reads it itself */
            a->bytes_of[slot] = len;
            a->group_of[slot] = a->next_group;
            a->bytes += len;
            a->n++;
        }
        if (++a->next_col >= ncols) {
            a->next_col = 0;
            a->next_group++;
        }
    }
}

void selection_ahead_end(selection_ahead *a, bool gave_up)
{
    while (a->n)
        drop_oldest(a, gave_up);
}
