#include "stats.h"

#include <inttypes.h>
#include <stdio.h>

size_t sv_stats_render_json(const sv_stats *st, uint64_t cache_bytes, uint64_t cache_limit,
                            char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "{\n"
                     "  \"fuse_reads\": %" PRIu64 ",\n"
                     "  \"fuse_read_bytes\": %" PRIu64 ",\n"
                     "  \"s3_requests\": %" PRIu64 ",\n"
                     "  \"s3_get_requests\": %" PRIu64 ",\n"
                     "  \"s3_list_requests\": %" PRIu64 ",\n"
                     "  \"s3_head_requests\": %" PRIu64 ",\n"
                     "  \"s3_bytes_fetched\": %" PRIu64 ",\n"
                     "  \"cache_hit_bytes\": %" PRIu64 ",\n"
                     "  \"cache_miss_bytes\": %" PRIu64 ",\n"
                     "  \"prefetch_bytes\": %" PRIu64 ",\n"
                     "  \"cache_evictions\": %" PRIu64 ",\n"
                     "  \"cache_bytes\": %" PRIu64 ",\n"
                     "  \"cache_limit_bytes\": %" PRIu64 ",\n"
                     "  \"retries\": %" PRIu64 ",\n"
                     "  \"errors\": %" PRIu64 "\n"
                     "}\n",
                     STAT_GET(st, fuse_reads), STAT_GET(st, fuse_read_bytes),
                     STAT_GET(st, s3_requests), STAT_GET(st, s3_get_requests),
                     STAT_GET(st, s3_list_requests), STAT_GET(st, s3_head_requests),
                     STAT_GET(st, s3_bytes_fetched), STAT_GET(st, cache_hit_bytes),
                     STAT_GET(st, cache_miss_bytes), STAT_GET(st, prefetch_bytes),
                     STAT_GET(st, cache_evictions), cache_bytes, cache_limit,
                     STAT_GET(st, retries), STAT_GET(st, errors));
    if (n < 0 || (size_t)n >= cap)
        return 0;
    return (size_t)n;
}
