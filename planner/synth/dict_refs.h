/* The dictionary entries the selected rows of a chunk reference: what a
 * view must keep of the chunk's dictionary page (page_plan.h,
 * pp_input.dictionary). Pure: the caller fetches the data pages. */
#ifndef SIEVE_DICT_REFS_H
#define SIEVE_DICT_REFS_H
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "page_plan.h"

typedef enum {
    DR_OK = 0,     /* the page's selected non-null values' entries were appended */
    DR_NOT_DICT,   /* the page's values are not dictionary-encoded: it references nothing */
    DR_BAD,        /* the page does not parse or decode, or disagrees with rows: keep the dictionary real */
    DR_NOMEM,
} dict_refs_status;

typedef struct {
    uint32_t *v;
    size_t n, cap;
} dict_refs;

/* page: one whole data page (header and body) of a flat column; num_rows:
 * its rows as the page map says; rows: its selected rows (pp_input.rows).
 * Appends the entries of the selected rows' non-null values to refs. */
dict_refs_status dict_refs_add_page(dict_refs *refs, const pq_column_desc *col, const uint8_t *page, size_t len,
                                    int64_t num_rows, const pp_range *rows, uint32_t n_rows);
/* Sort and drop repeats. */
void dict_refs_finish(dict_refs *refs);
void dict_refs_free(dict_refs *refs);

#endif
