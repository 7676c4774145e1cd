/* Reason words; see plan_reason.h. */
#include "plan_reason.h"

#include <string.h>

static const char *const chunk_names[CHUNK_REASONS] = {
    [CHUNK_PLANNED] = "planned",
    [CHUNK_FILTER_COLUMN] = "filter_column",
    [CHUNK_NESTED] = "nested",
    [CHUNK_NO_OFFSET_INDEX] = "no_offset_index",
    [CHUNK_OFFSET_INDEX_BAD] = "offset_index_bad",
    [CHUNK_NO_PROFILE] = "no_profile",
    [CHUNK_FILE_COST] = "file_cost",
    [CHUNK_NOMEM] = "nomem",
};

static const char *const page_names[PAGE_REASONS] = {
    [PAGE_PARTIAL] = "partial",
    [PAGE_SYNTHESIZED] = "synthesized",
    [PAGE_ALL_SELECTED] = "all_selected",
    [PAGE_NOT_DATA] = "not_data",
    [PAGE_REQUEST_COST] = "request_cost",
    [PAGE_SAVING] = "saving",
    [PAGE_ENCODING] = "encoding",
    [PAGE_CODEC] = "codec",
    [PAGE_LEVELS] = "levels",
    [PAGE_ZSTD] = "zstd",
    [PAGE_SNAPPY] = "snappy",
    [PAGE_CRC] = "crc",
    [PAGE_ROUNDS] = "rounds",
    [PAGE_CONTRADICTION] = "contradiction",
    [PAGE_FETCH_FAILED] = "fetch_failed",
    [PAGE_PARTIAL_MEMORY] = "partial_memory",
    [PAGE_OTHER] = "other",
};

const char *chunk_reason_name(chunk_reason r)
{
    return (unsigned)r < CHUNK_REASONS ? chunk_names[r] : "other";
}

const char *page_reason_name(page_reason r)
{
    return (unsigned)r < PAGE_REASONS ? page_names[r] : "other";
}

page_reason page_reason_of_planner(const char *reason, int contradicts_file)
{
    static const struct {
        const char *word;
        page_reason r;
    } words[] = {
        {"saving", PAGE_SAVING}, {"encoding", PAGE_ENCODING}, {"codec", PAGE_CODEC},
        {"levels", PAGE_LEVELS}, {"zstd", PAGE_ZSTD},         {"crc", PAGE_CRC},
        {"rounds", PAGE_ROUNDS}, {"snappy", PAGE_SNAPPY},
    };
    if (contradicts_file)
        return PAGE_CONTRADICTION;
    if (!reason)
        return PAGE_OTHER;
    const char *colon = strchr(reason, ':');
    const size_t n = colon ? (size_t)(colon - reason) : strlen(reason);
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i].word) == n && strncmp(reason, words[i].word, n) == 0)
            return words[i].r;
    return PAGE_OTHER;
}
