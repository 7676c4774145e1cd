/* Process-wide counters shown in MOUNTPOINT/.sieve/stats (rendered by
 * fs/core/control.c). Lock-free: every field is an atomic counter updated
 * with relaxed ordering. */
#ifndef SIEVE_STATS_H
#define SIEVE_STATS_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    atomic_uint_fast64_t fuse_reads;       /* read requests answered */
    atomic_uint_fast64_t fuse_read_bytes;  /* bytes returned to the kernel */
    atomic_uint_fast64_t s3_requests;      /* HTTP requests sent (all attempts) */
    atomic_uint_fast64_t s3_get_requests;  /* ranged GET attempts */
    atomic_uint_fast64_t s3_list_requests;
    atomic_uint_fast64_t s3_head_requests;
    atomic_uint_fast64_t s3_bytes_fetched; /* response body bytes received for GETs */
    atomic_uint_fast64_t cache_hit_bytes;  /* bytes served from the block cache without waiting */
    atomic_uint_fast64_t cache_miss_bytes; /* bytes that had to wait for a fetch */
    atomic_uint_fast64_t prefetch_bytes;   /* bytes requested ahead of the reader */
    atomic_uint_fast64_t cache_evictions;
    atomic_uint_fast64_t retries;
    atomic_uint_fast64_t stalls;           /* attempts a deadline cut off (also in retries when retried) */
    atomic_uint_fast64_t retry_quota_waits; /* retries that waited for the retry quota (retry_quota.h) */
    atomic_uint_fast64_t errors;           /* requests that failed for good, EIO replies */
    atomic_uint_fast64_t warmup_requests;  /* GETs the warmup sent (also in s3_requests) */
    atomic_uint_fast64_t warmup_bytes;     /* bytes they delivered (also in s3_bytes_fetched) */
    atomic_uint_fast64_t read_timeouts;    /* reads failed at their --read-timeout (also in errors) */
    atomic_uint_fast64_t read_interrupts;  /* reads the kernel interrupted (the reader got a signal) */
    atomic_uint_fast64_t requests_cancelled; /* requests dropped because their caller gave up */
    atomic_uint_fast64_t page_maps_walked;   /* chunk page maps walked from page headers */
    atomic_uint_fast64_t page_maps_from_disk; /* ... read back from --cache-dir instead */
} sv_stats;

#define STAT_ADD(st, field, n) atomic_fetch_add_explicit(&(st)->field, (uint_fast64_t)(n), memory_order_relaxed)
#define STAT_GET(st, field) ((uint64_t)atomic_load_explicit(&(st)->field, memory_order_relaxed))

#endif
