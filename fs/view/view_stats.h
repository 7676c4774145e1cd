/* What a view did, per file and in total, as NAME.stats shows it. */
#ifndef SIEVE_VIEW_STATS_H
#define SIEVE_VIEW_STATS_H
#include <stddef.h>
#include <stdint.h>

#include "plan_reason.h"

struct sv_view;

typedef struct {
    uint64_t pages_real;     /* data pages served with their real bytes */
    uint64_t pages_synth;    /* pages with no selected row, rebuilt */
    uint64_t pages_partial;  /* pages read partially (selected values real, the rest synthesized) */
    uint64_t bytes_fetched;  /* bytes the plans fetch or leave to fetch real */
    uint64_t ordinary_bytes; /* what the plain path would fetch for the same chunks */
    uint64_t requests;       /* requests of the planning rounds */
    uint64_t dict_pages_sparse;  /* dictionary pages served keeping only the entries selected rows use */
    uint64_t dict_entries_kept;  /* their entries fetched (kept real) */
    uint64_t dict_entries;       /* their entries in all */
    uint64_t chunks[CHUNK_REASONS]; /* column chunks by why they were served so */
    uint64_t pages[PAGE_REASONS];   /* data pages of planned chunks, by reason */
} view_counters;

void view_counters_add(view_counters *to, const view_counters *add);

/* NAME.stats of v: a JSON document (malloc'd, newline-terminated; *len its
 * length), or NULL when out of memory. The totals are the sums over the
 * view's files. Takes v's lock and each file's. */
char *view_stats_render(struct sv_view *v, size_t *len);

#endif
