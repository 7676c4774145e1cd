/* prefetch_replay: replays a reader's reads of one local Parquet file through
 * the plain path's prefetch (fs/object/prefetch.c) over an in-memory store,
 * to see what a change to the prefetch rules would fetch for a traced query
 * without a server, a link or a reader.
 *
 *   prefetch_replay [--read-ahead BYTES] [--trace] FILE.parquet READS
 *
 * READS is a sievefs trace log (`scripts/bench --trace DIR`, or `sievefs
 * mount -f --log-level trace`): its lines "read KEY offset N size M" whose
 * KEY ends with FILE's name are replayed in order, each as the daemon
 * handles a kernel read (prefetch first, then the read itself). Lines of
 * the form "N M" (offset, size) are replayed too. The footer comes from the
 * file's last 64 KiB, as the daemon's footer cache reads it.
 *
 * Prints one line: reads, the bytes the reads cover (their union), GETs and
 * bytes fetched. With --trace the replay's own trace (the reads and every
 * GET with its tag, in the daemon's format) goes to stderr, for
 * scripts/lib/trace_waste.py.
 *
 * Timing is not replayed: every GET completes before the next read, so a
 * rule that depends on what is still in flight may differ from a live run.
 * Exit status 0, 1 on an unreadable file or footer, 2 on usage errors. */
#include "block_cache.h"
#include "footer_cache.h"
#include "log.h"
#include "mem_store.h"
#include "object_read.h"
#include "prefetch.h"
#include "sv_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE (16u << 10) /* the daemon's cache block */
#define MAX_READ (4u << 20)
#define MAX_FILE ((size_t)4 << 30) /* files this tool replays are read whole */

typedef struct {
    uint64_t start, end;
} span;

static int by_start(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Bytes covered by the union of n spans (sorted in place). */
static uint64_t union_bytes(span *s, size_t n)
{
    qsort(s, n, sizeof *s, by_start);
    uint64_t total = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = s[i].start > at ? s[i].start : at;
        if (s[i].end > a)
            total += s[i].end - a;
        if (s[i].end > at)
            at = s[i].end;
    }
    return total;
}

/* The read of a trace line (for key) or of an "offset size" line. */
static bool parse_read(const char *line, const char *key, uint64_t *off, uint64_t *size)
{
    const char *r = strstr(line, "trace: read ");
    if (!r) {
        unsigned long long o, s;
        char extra;
        if (sscanf(line, "%llu %llu %c", &o, &s, &extra) == 2) {
            *off = o, *size = s;
            return true;
        }
        return false;
    }
    char k[1024];
    unsigned long long o, s;
    if (sscanf(r, "trace: read %1023s offset %llu size %llu", k, &o, &s) != 3 || strstr(r, "(view)"))
        return false;
    size_t kl = strlen(k), nl = strlen(key);
    if (kl < nl || strcmp(k + kl - nl, key) != 0 || (kl > nl && k[kl - nl - 1] != '/'))
        return false;
    *off = o, *size = s;
    return true;
}

int main(int argc, char **argv)
{
    uint64_t read_ahead = 0;
    bool trace = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--trace") == 0)
            trace = true;
        else if (strcmp(argv[i], "--read-ahead") == 0 && i + 1 < argc)
            read_ahead = strtoull(argv[++i], NULL, 10);
        else
            break;
    }
    if (argc - i != 2) {
        fprintf(stderr, "usage: prefetch_replay [--read-ahead BYTES] [--trace] FILE.parquet READS\n");
        return 2;
    }
    const char *path = argv[i], *reads_path = argv[i + 1];
    const char *key = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    sv_log_init(trace ? SV_LOG_TRACE : SV_LOG_ERROR, false);
    size_t n = 0;
    uint8_t *data = sv_read_file(path, MAX_FILE, &n);
    FILE *rf = fopen(reads_path, "r");
    if (!data || n < 12 || !rf) {
        fprintf(stderr, "prefetch_replay: cannot read %s\n", !data || n < 12 ? path : reads_path);
        return 1;
    }
    parquet_footer footer;
    memset(&footer, 0, sizeof footer);
    uint64_t tail = parquet_layout_tail_hint(n), need = 0;
    int r = parquet_footer_from_tail(data + n - tail, (size_t)tail, n, &footer, &need);
    if (r == 1 && need <= n) {
        parquet_footer_clear(&footer);
        tail = need;
        r = parquet_footer_from_tail(data + n - tail, (size_t)tail, n, &footer, &need);
    }
    if (r != FOOTER_OK) {
        fprintf(stderr, "prefetch_replay: %s: %s\n", path, r == 1 ? "footer does not fit" : footer.err.msg);
        return 1;
    }
    mem_store *m = mem_store_create();
    sv_stats stats;
    memset(&stats, 0, sizeof stats);
    block_cache *cache = block_cache_create(BLOCK_SIZE, 4ull << 30, &stats);
    object_io *io = m && cache ? object_io_create(mem_store_base(m), cache, &stats, 1u << 20, 0) : NULL;
    object_ref o = {.id = 1, .key = strdup(key), .size = n};
    if (!io || !o.key || !mem_store_put(m, key, data, n) || !mem_store_etag(m, key, o.etag)) {
        fprintf(stderr, "prefetch_replay: out of memory\n");
        return 1;
    }
    prefetch_config cfg = {.min_streak = 4ull << 20, .max_window = 64ull << 20, .kernel_readahead = read_ahead};
    read_pattern pattern;
    if (!read_pattern_init(&pattern, &footer.layout, NULL)) {
        fprintf(stderr, "prefetch_replay: out of memory\n");
        return 1;
    }
    uint8_t *buf = malloc(MAX_READ);
    span *reads = NULL;
    size_t n_reads = 0, cap = 0;
    char line[4096];
    while (buf && fgets(line, sizeof line, rf)) {
        uint64_t off, size;
        if (!parse_read(line, key, &off, &size) || off >= n || size == 0)
            continue;
        if (size > MAX_READ)
            size = MAX_READ;
        if (off + size > n)
            size = n - off;
        if (n_reads == cap) {
            cap = cap ? 2 * cap : 1024;
            span *grown = realloc(reads, cap * sizeof *reads);
            if (!grown)
                break;
            reads = grown;
        }
        reads[n_reads++] = (span){off, off + size};
        log_trace("read %s offset %" PRIu64 " size %" PRIu64, key, off, size);
        prefetch_after_read(io, &cfg, &o, &footer.layout, &pattern, off, (size_t)size);
        if (object_read(io, &o, off, (size_t)size, buf, NULL) != (ssize_t)size) {
            fprintf(stderr, "prefetch_replay: read at %" PRIu64 " failed\n", off);
            return 1;
        }
        mem_store_drain(m);
    }
    fclose(rf);
    mem_store_counts c = mem_store_counts_now(m);
    printf("%s: %zu reads covering %" PRIu64 " B; fetched %" PRIu64 " B in %" PRIu64 " GETs\n", key, n_reads,
           union_bytes(reads, n_reads), c.get_bytes, c.gets);
    free(reads);
    free(buf);
    read_pattern_destroy(&pattern);
    object_io_destroy(io);
    block_cache_destroy(cache);
    store_destroy(mem_store_base(m));
    parquet_footer_clear(&footer);
    object_ref_free(&o);
    free(data);
    return 0;
}
