/* The plain path over an in-memory store, as the Delta table tests use it:
 * a 64 MiB cache and listings kept for log_ttl_ms (0: listed again at every
 * use, so that objects put later are seen). */
#ifndef SIEVE_TEST_TABLE_FIXTURE_H
#define SIEVE_TEST_TABLE_FIXTURE_H
#include <string.h>

#include "mem_store.h"
#include "plain.h"

static inline plain_fs *table_fixture_plain(mem_store *m, sv_stats *stats, uint64_t log_ttl_ms)
{
    memset(stats, 0, sizeof *stats);
    plain_config cfg = {.prefix = "", .cache_bytes = 64u << 20, .block_size = 16u << 10, .max_request = 1u << 20,
                        .tail_bytes = 64u << 10, .dir_ttl_ms = log_ttl_ms, .delta_log_ttl_ms = log_ttl_ms,
                        .file_attr_timeout_s = 3600, .delta_log_attr_timeout_s = 1, .dir_attr_timeout_s = 10,
                        .prefetch = {.min_streak = 4u << 20, .max_window = 16u << 20}};
    return plain_fs_create(mem_store_base(m), stats, &cfg);
}

#endif
