/* Why a view served a chunk or a page the way it did: stable words, counted
 * per view file and shown in NAME.stats, so every decision of the cost model
 * and the planner can be checked from outside. */
#ifndef SIEVE_PLAN_REASON_H
#define SIEVE_PLAN_REASON_H

/* Chunks: the first that applies. */
typedef enum {
    CHUNK_PLANNED = 0,     /* its pages were planned one by one */
    CHUNK_FILTER_COLUMN,   /* the predicate reads it: always real */
    CHUNK_NESTED,          /* repeated or nested column */
    CHUNK_NO_OFFSET_INDEX,
    CHUNK_OFFSET_INDEX_BAD, /* unreadable, malformed or contradicting the chunk */
    CHUNK_NO_PROFILE,      /* no measured link: nothing is read partially */
    CHUNK_FILE_COST,       /* the file's partial plan would not be 10 % cheaper */
    CHUNK_NOMEM,
    CHUNK_REASONS
} chunk_reason;

/* Data pages of planned chunks. */
typedef enum {
    PAGE_PARTIAL = 0,      /* selected values real, the rest synthesized */
    PAGE_SYNTHESIZED,      /* no selected row: rebuilt */
    PAGE_ALL_SELECTED,     /* every row selected: real */
    PAGE_NOT_DATA,         /* dictionary or index page, or no row count */
    PAGE_REQUEST_COST,     /* too small to pay for its requests */
    PAGE_SAVING,           /* the planner's bytes-and-requests budget */
    PAGE_ENCODING,
    PAGE_CODEC,
    PAGE_LEVELS,
    PAGE_ZSTD,
    PAGE_SNAPPY,           /* a snappy stream with copies (not literals only) under selected rows */
    PAGE_CRC,
    PAGE_ROUNDS,
    PAGE_CONTRADICTION,    /* the page's bytes contradict the file's metadata */
    PAGE_FETCH_FAILED,
    PAGE_PARTIAL_MEMORY,   /* the partial-read memory budget was spent */
    PAGE_OTHER,
    PAGE_REASONS
} page_reason;

const char *chunk_reason_name(chunk_reason r);
const char *page_reason_name(page_reason r);
/* The reason a planner result names: its first word ("saving: ..." -> PAGE_SAVING). */
page_reason page_reason_of_planner(const char *reason, int contradicts_file);

#endif
