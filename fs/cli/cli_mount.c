/* `sievefs mount`: its options, the mountpoint checks, daemon start-up with
 * a readiness pipe (the parent exits only once the mount answers, or with
 * the child's one-line error), and serving until unmounted. */
#include "cli_mount.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_profile.h"
#include "cost_model.h"
#include "fs.h"
#include "fuse_adapter.h"
#include "link_profile.h"
#include "refining_store.h"
#include "log.h"
#include "mountinfo.h"
#include "s3_client.h"
#include "sv_civil.h"
#include "warmup.h"

static const char usage_mount[] =
    "usage: sievefs mount s3://BUCKET[/PREFIX] MOUNTPOINT [OPTIONS]\n"
    "\n"
    "Mounts the objects under s3://BUCKET/PREFIX read-only on MOUNTPOINT. Returns\n"
    "once the mount answers, leaving the daemon in the background (logging to\n"
    "syslog); with -f it stays in the foreground and logs to stderr. SIGTERM or\n"
    "`fusermount3 -u MOUNTPOINT` unmounts.\n"
    "\n"
    "options:\n"
    CLI_S3_OPTIONS_HELP
    "  --cache-size BYTES    the mount's memory budget, with optional K/M/G suffix\n"
    "                        (default 512M, minimum 16M): cache blocks, parsed\n"
    "                        footers (up to an eighth), walked page maps (a\n"
    "                        sixteenth), partial reads and listings share it; the\n"
    "                        process adds a fixed overhead (docs/design.md)\n"
    "  --log-level LEVEL     error, warn, info, debug or trace (default warn)\n"
    "  --max-connections N   S3 requests in flight at once, retries waiting for\n"
    "                        their turn included, and pooled connections (1 to\n"
    "                        1024). Default: 64 until the warmup has measured the\n"
    "                        link, then its suggestion (32 to 512)\n"
    "  --stall-timeout MS    retry a request on a new connection when no response\n"
    "                        arrives within MS milliseconds, plus what the requests\n"
    "                        ahead of it in sievefs's own queue take at the rate\n"
    "                        responses arrive (default 10000; the warmup lowers it\n"
    "                        to 10 slow round trips, at least 2 s)\n"
    "  --progress-timeout MS retry a request on a new connection when its body\n"
    "                        brings less than 1 KiB/s over MS milliseconds\n"
    "                        (default 10000)\n"
    "  --read-timeout DURATION\n"
    "                        a read that has not completed after DURATION fails\n"
    "                        with EIO, logged with the object and offset, e.g.\n"
    "                        30s, 1500ms, 2m; a bare number is seconds (default\n"
    "                        60s; 1s to 1h); so do lookups and ls waiting on a\n"
    "                        listing. A reader killed while it waits returns at\n"
    "                        once in any case; what it leaves unfetched is\n"
    "                        cancelled\n"
    "  --retry-budget DURATION\n"
    "                        how long a request keeps retrying 503 SlowDown, 429,\n"
    "                        5xx, resets and stalls, with jittered backoff of up\n"
    "                        to 3 s a wait (default 20s, enough for a 10 s\n"
    "                        throttling burst; 0 to 10m; 0: no retries). Retries\n"
    "                        draw on the AWS SDKs' retry quota: when successes do\n"
    "                        not refill it, they wait. Other 4xx fail at once\n"
    "  --dir-ttl SECONDS     how long a directory listing is reused (default 60;\n"
    "                        _delta_log/ directories: 1)\n"
    "  --read-ahead BYTES    kernel readahead of the mount (default 128K, the\n"
    "                        kernel's own; other values need root). The kernel\n"
    "                        reads up to twice this past the end of a large\n"
    "                        read(), and that much is fetched: larger values fetch\n"
    "                        more for column-chunk readers and mmap (polars).\n"
    "                        Smaller values shrink only the readahead of small\n"
    "                        reads: larger ones still come in 128 KiB pieces\n"
    "  --direct-io           files bypass the kernel's page cache: each read()\n"
    "                        reaches sievefs as the reader made it, with no\n"
    "                        readahead or page rounding, so only what readers\n"
    "                        read is fetched (full scans: about 1.2-1.5x less),\n"
    "                        in 4 KiB cache blocks, not 16 KiB; every read is a\n"
    "                        request to the daemon, served from its cache, and\n"
    "                        a later query finds only what --cache-size holds.\n"
    "                        A shared memory map (pyarrow's memory_map=True)\n"
    "                        fails with ENODEV, which libfuse 3.14 cannot lift;\n"
    "                        a private one (polars falls back to it) reads\n"
    "                        through the page cache\n"
    "  --warmup MODE         automatic (default): measure the link in the background\n"
    "                        once the mount answers (about 5 s, up to 25 MiB);\n"
    "                        network=DURATION: the same for DURATION (0: skip);\n"
    "                        none: no measurement. On a terminal, waits for it and\n"
    "                        prints the profile (MOUNTPOINT/.sieve/profile)\n"
    "  --request-cost BYTES  for experiments: price every S3 request at this many\n"
    "                        bytes (planning rounds free) instead of the measured\n"
    "                        connection profile (0: bytes alone count). Without it\n"
    "                        and without a profile, views read no page partially\n"
    "  --cache-dir DIR       keep page maps walked from page headers (files\n"
    "                        without an OffsetIndex) in DIR, created if missing,\n"
    "                        so later mounts need not walk them again (default:\n"
    "                        in memory only). Entries name the object's ETag: a\n"
    "                        changed object is walked afresh\n"
    "  --partial-memory SIZE memory views may hold for partial reads (planning\n"
    "                        buffers, page images), within --cache-size: at most\n"
    "                        half of it, the default; over it, pages are read the\n"
    "                        ordinary way\n"
    "  --version N           show every Delta table of the mount as of version N:\n"
    "                        _delta_log/ entries after it are hidden from listings\n"
    "                        and lookups (and _last_checkpoint), so Delta readers\n"
    "                        read that version (default: the latest)\n"
    "  --timestamp TIME      the same as of a time: for each table, the latest\n"
    "                        version committed at or before TIME (UTC, like\n"
    "                        2024-05-01T12:00:00Z or 2024-05-01)\n"
    "  --control-dir NAME    name the control directory NAME instead of .sieve\n"
    "                        (when the bucket has its own .sieve/ under the\n"
    "                        mount, which the control directory hides; the mount\n"
    "                        warns); give sievefs hint the same --control-dir\n"
    "  --force               a stale mount on MOUNTPOINT (its daemon killed:\n"
    "                        'Transport endpoint is not connected') is unmounted\n"
    "                        first (fusermount3 -uz); without it, the mount fails\n"
    "                        and says so\n"
    "  -f, --foreground      stay in the foreground, log to stderr\n"
    "  -d, --debug-fuse      libfuse debug output (implies -f)\n"
    "  -o OPTS               extra FUSE mount options, e.g. allow_other\n"
    "  -h, --help            show this help\n"
    "\n"
    CLI_CREDENTIALS_HELP
    "\n"
    "MOUNTPOINT/.sieve/stats (hidden from listings) shows read and S3 counters;\n"
    "MOUNTPOINT/.sieve/profile the connection profile and the warmup's state;\n"
    "MOUNTPOINT/.sieve/tables/TABLE/snapshot.json each Delta table's snapshot.\n";

typedef struct {
    const char *source;
    const char *mountpoint;
    cli_s3_opts s3;
    uint64_t cache_size;
    int log_level;
    unsigned max_connections;
    bool max_connections_set; /* given: the profile does not change it */
    unsigned stall_ms;
    bool stall_set;
    unsigned progress_ms;
    uint64_t dir_ttl_s;
    uint64_t read_ahead;
    bool direct_io;
    uint64_t request_cost;
    bool request_cost_set; /* --request-cost given: overrides the profile */
    uint64_t partial_memory;
    const char *cache_dir; /* NULL: none */
    delta_version_spec table_version; /* --version, --timestamp */
    double warmup_s;      /* --warmup: sampling time, 0 for none */
    uint64_t read_timeout_ms;
    uint64_t retry_budget_ms;
    bool foreground;
    bool debug_fuse;
    bool force;            /* --force: unmount a stale mount on the mountpoint first */
    const char *control_dir; /* --control-dir NAME, or NULL: .sieve */
    const char *fuse_opts;
} mount_opts;

/* Requests in flight without --max-connections: before the warmup has
 * measured the link, and the range its suggestion is kept in. */
#define MOUNT_IN_FLIGHT_BEFORE_PROFILE 64u
#define MOUNT_IN_FLIGHT_MIN 32u
#define MOUNT_IN_FLIGHT_MAX 512u

/* Errors before and during start-up are one line on stderr (or, in the
 * daemon child, one line down the pipe to the waiting parent). The pipe's
 * lines: "OK" or "ERR message"; after OK, when the parent waits for the
 * warmup (its stdout is a terminal), "W what" for progress, then "P line"
 * for each line of the profile or "E why", then end of file. */
static const char *control_name = SV_CONTROL_DIR; /* --control-dir, for messages */
static int ready_fd = -1;           /* guarded by report_lock once the warmup runs */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static bool report_warmup;          /* set before the fork: the parent waits for the warmup's lines */
static bool mounted_reported;       /* guarded by report_lock: OK was sent */
static bool warmup_ended;           /* guarded by report_lock: the final lines are in warmup_final */
static char warmup_final[2048];     /* guarded by report_lock */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    sv_vformat_line(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&report_lock);
    int fd = ready_fd;
    ready_fd = -1;
    pthread_mutex_unlock(&report_lock);
    if (fd >= 0) {
        dprintf(fd, "ERR %s\n", msg);
        close(fd);
    } else {
        fprintf(stderr, "sievefs: error: %s\n", msg);
    }
    exit(1);
}

/* A start-up warning the user must see: through the parent when it waits
 * (a "WARN" line before OK), else on stderr; and in the log. */
static void warn_user(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn_user(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    sv_vformat_line(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_warn("%s", msg);
    pthread_mutex_lock(&report_lock);
    if (ready_fd >= 0)
        dprintf(ready_fd, "WARN %s\n", msg);
    else
        fprintf(stderr, "sievefs: warning: %s\n", msg);
    pthread_mutex_unlock(&report_lock);
}

static void parse_mount_args(int argc, char **argv, mount_opts *o)
{
    enum { OPT_CACHE = CLI_OPT_S3_END, OPT_LOG, OPT_MAXCONN, OPT_STALL, OPT_PROGRESS, OPT_DIRTTL, OPT_READAHEAD,
           OPT_REQCOST, OPT_PARTIALMEM, OPT_WARMUP, OPT_READTIMEOUT, OPT_CACHEDIR, OPT_VERSION, OPT_TIMESTAMP,
           OPT_FORCE, OPT_RETRYBUDGET, OPT_CONTROLDIR, OPT_DIRECTIO };
    static const struct option longopts[] = {
        CLI_S3_LONGOPTS,
        {"cache-size", required_argument, NULL, OPT_CACHE},
        {"log-level", required_argument, NULL, OPT_LOG},
        {"max-connections", required_argument, NULL, OPT_MAXCONN},
        {"stall-timeout", required_argument, NULL, OPT_STALL},
        {"progress-timeout", required_argument, NULL, OPT_PROGRESS},
        {"dir-ttl", required_argument, NULL, OPT_DIRTTL},
        {"read-ahead", required_argument, NULL, OPT_READAHEAD},
        {"direct-io", no_argument, NULL, OPT_DIRECTIO},
        {"request-cost", required_argument, NULL, OPT_REQCOST},
        {"partial-memory", required_argument, NULL, OPT_PARTIALMEM},
        {"cache-dir", required_argument, NULL, OPT_CACHEDIR},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"read-timeout", required_argument, NULL, OPT_READTIMEOUT},
        {"version", required_argument, NULL, OPT_VERSION},
        {"timestamp", required_argument, NULL, OPT_TIMESTAMP},
        {"force", no_argument, NULL, OPT_FORCE},
        {"retry-budget", required_argument, NULL, OPT_RETRYBUDGET},
        {"control-dir", required_argument, NULL, OPT_CONTROLDIR},
        {"foreground", no_argument, NULL, 'f'},
        {"debug-fuse", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->cache_size = 512ull << 20;
    o->log_level = SV_LOG_WARN;
    o->max_connections = MOUNT_IN_FLIGHT_BEFORE_PROFILE;
    o->stall_ms = 10000;
    o->progress_ms = 10000;
    o->dir_ttl_s = 60;
    o->read_ahead = 128u << 10;
    o->partial_memory = PARTIAL_MEMORY_DEFAULT;
    o->warmup_s = 5.0;
    o->read_timeout_ms = SV_READ_TIMEOUT_DEFAULT_MS;
    o->retry_budget_ms = RETRY_BUDGET_DEFAULT_MS;
    const char *positional[2] = {NULL, NULL};
    int npos = 0;
    optind = 1;
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, "+fdho:", longopts, NULL);
        if (c == -1) {
            if (optind >= argc)
                break;
            /* A positional argument: take it and keep parsing options after it. */
            if (npos == 2)
                fail("unexpected argument '%s' (see sievefs mount --help)", argv[optind]);
            positional[npos++] = argv[optind++];
            continue;
        }
        unsigned u;
        if (cli_s3_option(&o->s3, c, optarg))
            continue;
        switch (c) {
        case OPT_CACHE:
            if (!cli_parse_size(optarg, &o->cache_size) || o->cache_size < (16ull << 20))
                fail("--cache-size '%s': expected a size of at least 16M, like 512M or 2G", optarg);
            break;
        case OPT_LOG:
            o->log_level = sv_log_parse_level(optarg);
            if (o->log_level < 0)
                fail("--log-level '%s': expected error, warn, info, debug or trace", optarg);
            break;
        case OPT_MAXCONN:
            if (!cli_parse_uint(optarg, 1, 1024, &u))
                fail("--max-connections '%s': expected a number from 1 to 1024", optarg);
            o->max_connections = u;
            o->max_connections_set = true;
            break;
        case OPT_STALL:
            if (!cli_parse_uint(optarg, 100, 600000, &u))
                fail("--stall-timeout '%s': expected milliseconds from 100 to 600000", optarg);
            o->stall_ms = u;
            o->stall_set = true;
            break;
        case OPT_PROGRESS:
            if (!cli_parse_uint(optarg, 100, 600000, &u))
                fail("--progress-timeout '%s': expected milliseconds from 100 to 600000", optarg);
            o->progress_ms = u;
            break;
        case OPT_DIRTTL:
            if (!cli_parse_uint(optarg, 0, 86400, &u))
                fail("--dir-ttl '%s': expected seconds from 0 to 86400", optarg);
            o->dir_ttl_s = u;
            break;
        case OPT_READAHEAD:
            if (!cli_parse_size(optarg, &o->read_ahead) || o->read_ahead < 4096 ||
                o->read_ahead > (64ull << 20))
                fail("--read-ahead '%s': expected a size from 4K to 64M, like 128K or 2M", optarg);
            break;
        case OPT_DIRECTIO:
            o->direct_io = true;
            break;
        case OPT_REQCOST:
            if (!cli_parse_size(optarg, &o->request_cost) || o->request_cost > (64ull << 20))
                fail("--request-cost '%s': expected a size from 0 to 64M, like 0, 16K or 128K", optarg);
            o->request_cost_set = true;
            break;
        case OPT_CACHEDIR:
            if (!optarg[0])
                fail("--cache-dir: expected a directory");
            o->cache_dir = optarg;
            break;
        case OPT_PARTIALMEM:
            if (!cli_parse_size(optarg, &o->partial_memory) || o->partial_memory > (1ull << 40))
                fail("--partial-memory '%s': expected a size from 0 to 1T, like 64M or 512M", optarg);
            break;
        case OPT_WARMUP:
            if (strcmp(optarg, "automatic") == 0)
                o->warmup_s = 5.0;
            else if (strcmp(optarg, "none") == 0)
                o->warmup_s = 0;
            else if (strncmp(optarg, "network=", 8) != 0 || !cli_parse_duration(optarg + 8, 60, &o->warmup_s))
                fail("--warmup '%s': expected automatic, none or network=DURATION (like 5s, 800ms, 0; at most 60s)",
                     optarg);
            break;
        case OPT_READTIMEOUT:
            if (!cli_parse_duration_ms(optarg, 1000, 3600000, &o->read_timeout_ms))
                fail("--read-timeout '%s': expected a duration from 1s to 1h, like 30s, 1500ms or 2m", optarg);
            break;
        case OPT_VERSION: {
            char *end;
            errno = 0;
            long long v = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 0 || o->table_version.kind == DELTA_VERSION_AS_OF)
                fail("--version '%s': expected a table version (0 or more), and not with --timestamp", optarg);
            o->table_version = (delta_version_spec){.kind = DELTA_VERSION_AT, .version = v};
            break;
        }
        case OPT_TIMESTAMP: {
            size_t n = strlen(optarg);
            int64_t secs;
            uint32_t nanos;
            if (n && optarg[n - 1] == 'Z')
                n--;
            if (!sv_parse_timestamp(optarg, n, &secs, &nanos) || o->table_version.kind == DELTA_VERSION_AT)
                fail("--timestamp '%s': expected a UTC time like 2024-05-01T12:00:00Z or 2024-05-01, and not with "
                     "--version",
                     optarg);
            o->table_version = (delta_version_spec){.kind = DELTA_VERSION_AS_OF,
                                                    .timestamp_ms = secs * 1000 + nanos / 1000000};
            break;
        }
        case OPT_FORCE: o->force = true; break;
        case OPT_CONTROLDIR:
            if (!optarg[0] || strchr(optarg, '/') || strcmp(optarg, ".") == 0 || strcmp(optarg, "..") == 0 ||
                strlen(optarg) > 255)
                fail("--control-dir '%s': expected a file name (no '/', not '.' or '..', at most 255 bytes)",
                     optarg);
            o->control_dir = control_name = optarg;
            break;
        case OPT_RETRYBUDGET:
            if (!cli_parse_duration_ms(optarg, 0, 600000, &o->retry_budget_ms))
                fail("--retry-budget '%s': expected a duration from 0 to 10m, like 20s, 1500ms or 2m", optarg);
            break;
        case 'f': o->foreground = true; break;
        case 'd': o->debug_fuse = o->foreground = true; break;
        case 'o': o->fuse_opts = optarg; break;
        case 'h': fputs(usage_mount, stdout); exit(0);
        case '?':
        default:
            if (optopt && optopt < 256)
                fail("unknown or incomplete option '-%c' (see sievefs mount --help)", optopt);
            fail("unknown or incomplete option '%s' (see sievefs mount --help)", argv[optind - 1]);
        }
    }
    if (npos < 2)
        fail("mount needs s3://BUCKET[/PREFIX] and MOUNTPOINT (see sievefs mount --help)");
    o->source = positional[0];
    o->mountpoint = positional[1];
}

/* s3://bucket[/prefix] -> bucket and prefix ("" or ending in '/'). */
static void parse_source(const char *src, char **bucket, char **prefix)
{
    sv_error err;
    const char *p;
    if (!cli_parse_s3_url(src, "s3://BUCKET[/PREFIX]", bucket, &p, &err))
        fail("%s", err.msg);
    while (*p == '/')
        p++;
    size_t plen = strlen(p);
    if (plen > S3_KEY_MAX)
        fail("prefix is longer than %u bytes", S3_KEY_MAX);
    *prefix = malloc(plen + 2);
    if (!*prefix)
        fail("out of memory");
    memcpy(*prefix, p, plen);
    (*prefix)[plen] = 0;
    if (plen && p[plen - 1] != '/') {
        (*prefix)[plen] = '/';
        (*prefix)[plen + 1] = 0;
    }
}

static void on_mounted(void *ud)
{
    (void)ud;
    pthread_mutex_lock(&report_lock);
    bool had_pipe = ready_fd >= 0;
    if (had_pipe) {
        dprintf(ready_fd, "OK\n");
        mounted_reported = true;
        /* The parent waits for the warmup's lines: keep the pipe until it ends. */
        if (report_warmup && warmup_ended)
            dprintf(ready_fd, "%s", warmup_final);
        if (!report_warmup || warmup_ended) {
            close(ready_fd);
            ready_fd = -1;
        }
    }
    pthread_mutex_unlock(&report_lock);
    if (had_pipe) {
        /* Detach from the terminal now that the parent has its answer. */
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
            if (devnull > STDERR_FILENO)
                close(devnull);
        }
    }
}

/* The warmup's progress, on its thread: down the pipe once OK was sent. */
static void on_warmup_progress(void *ud, const char *what)
{
    (void)ud;
    log_debug("warmup: %s", what);
    pthread_mutex_lock(&report_lock);
    if (report_warmup && mounted_reported && ready_fd >= 0)
        dprintf(ready_fd, "W %s\n", what);
    pthread_mutex_unlock(&report_lock);
}

/* What the warmup's profile may change in the client: the in-flight limit
 * and the first-byte deadline, unless given on the command line. */
typedef struct {
    s3_client *client;
    unsigned in_flight;    /* the limit to keep (given, or the default before a profile) */
    bool in_flight_fixed;  /* --max-connections given */
    unsigned first_byte_ms;
    bool first_byte_fixed; /* --stall-timeout given */
} warmup_apply;

static void apply_profile(const warmup_apply *a, const conn_profile *p)
{
    unsigned n = a->in_flight;
    if (p && !a->in_flight_fixed && p->suggested_in_flight > 0) {
        n = p->suggested_in_flight;
        n = n < MOUNT_IN_FLIGHT_MIN ? MOUNT_IN_FLIGHT_MIN : n > MOUNT_IN_FLIGHT_MAX ? MOUNT_IN_FLIGHT_MAX : n;
    }
    s3_client_set_in_flight(a->client, n);
    if (p && !a->first_byte_fixed && p->latency_p90_s > 0) {
        /* Ten slow round trips (and a new connection) before a response is
         * taken for a stall, within 2 s .. the default. */
        double ms = 10.0 * (p->latency_p90_s + p->connect_s) * 1000.0;
        ms = ms < 2000 ? 2000 : ms > a->first_byte_ms ? a->first_byte_ms : ms;
        s3_deadlines d = {0};
        d.first_byte_ms = (unsigned)ms;
        s3_client_set_deadlines(a->client, &d);
        log_info("warmup: %u requests in flight, first-byte deadline %u ms", n, d.first_byte_ms);
    } else {
        log_info("warmup: %u requests in flight", n);
    }
}

static void on_warmup_done(void *ud, bool ok, const conn_profile *p, const char *why);

/* The warmup samples files of the tables' current snapshots (a sample_ok). */
static bool sample_current_file(void *ud, const char *key)
{
    sv_cancel tok;
    sv_fs_cancel_init(ud, &tok);
    return sv_fs_key_is_current(ud, key, &tok);
}

/* The mount's warmup and its one retry (link_profile_retry_once, from the
 * first query that wants a profile the warmup failed to measure). */
typedef struct {
    warmup_config cfg;     /* set before the first run, read-only after */
    warmup_apply apply;
    object_store *store;
    link_profile *profile;
    pthread_mutex_t lock;  /* guards runs */
    warmup *runs[2];       /* the first and the retry, stopped at unmount */
    unsigned n_runs;
} mount_warmups;

static mount_warmups warmups = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Start a run in the background (a link_retry_fn). */
static void run_warmup(void *ud)
{
    mount_warmups *w = ud;
    pthread_mutex_lock(&w->lock);
    if (w->n_runs < sizeof w->runs / sizeof w->runs[0]) {
        s3_client_set_in_flight(w->apply.client, w->cfg.max_in_flight);
        warmup *run = warmup_start(w->store, &w->cfg, w->profile, on_warmup_done, &w->apply);
        if (run)
            w->runs[w->n_runs++] = run;
        else
            on_warmup_done(&w->apply, false, NULL, "cannot start the warmup");
        if (w->n_runs > 1)
            log_info("warmup: retrying it for a query that wants a connection profile");
    } else {
        link_profile_set_state(w->profile, LINK_WARMUP_FAILED); /* unmounting: nobody waits */
    }
    pthread_mutex_unlock(&w->lock);
}

static void stop_warmups(mount_warmups *w)
{
    pthread_mutex_lock(&w->lock);
    unsigned n = w->n_runs;
    warmup *runs[2] = {w->runs[0], w->runs[1]};
    w->n_runs = sizeof w->runs / sizeof w->runs[0]; /* no retry from now on */
    w->runs[0] = w->runs[1] = NULL;
    pthread_mutex_unlock(&w->lock);
    for (unsigned i = 0; i < n; i++)
        warmup_stop(runs[i]);
}

static void on_warmup_done(void *ud, bool ok, const conn_profile *p, const char *why)
{
    const warmup_apply *a = ud;
    apply_profile(a, ok ? p : NULL);
    /* The final lines are built here and handed over under the lock. */
    char final[sizeof warmup_final];
    size_t len = 0;
    final[0] = 0;
    if (ok) {
        char text[1536];
        cli_profile_format(p, text, sizeof text);
        /* Each line of the text as a "P" line. */
        for (char *line = text; *line && len < sizeof final;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            int k = snprintf(final + len, sizeof final - len, "P %s\n", line);
            len += k > 0 ? (size_t)k : 0;
            if (!nl)
                break;
            line = nl + 1;
        }
    } else {
        snprintf(final, sizeof final, "E %s\n", why ? why : "no profile");
    }
    pthread_mutex_lock(&report_lock);
    memcpy(warmup_final, final, sizeof final);
    warmup_ended = true;
    if (report_warmup && mounted_reported && ready_fd >= 0) {
        dprintf(ready_fd, "%s", warmup_final);
        close(ready_fd);
        ready_fd = -1;
    }
    pthread_mutex_unlock(&report_lock);
}

/* Lines from the daemon's pipe, each read with a deadline. */
typedef struct {
    int fd;
    char buf[4096];
    size_t len;
} line_reader;

/* The next line into out (without its newline): 1, or 0 at end of file or
 * an error, -1 when deadline_ns (CLOCK_MONOTONIC; 0: none) passes first. */
static int next_line(line_reader *r, char *out, size_t n, int64_t deadline_ns)
{
    for (;;) {
        char *nl = memchr(r->buf, '\n', r->len);
        if (nl || r->len == sizeof r->buf) {
            size_t k = nl ? (size_t)(nl - r->buf) : r->len;
            snprintf(out, n, "%.*s", (int)k, r->buf);
            size_t used = nl ? k + 1 : k;
            memmove(r->buf, r->buf + used, r->len - used);
            r->len -= used;
            return 1;
        }
        int timeout = -1;
        if (deadline_ns) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            int64_t left = deadline_ns - ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
            if (left <= 0)
                return -1;
            timeout = (int)(left / 1000000) + 1;
        }
        struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
        int pr = poll(&pfd, 1, timeout);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            continue; /* the deadline is checked above */
        ssize_t got = pr < 0 ? -1 : read(r->fd, r->buf + r->len, sizeof r->buf - r->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (r->len == 0)
                return 0;
            /* A last line without its newline. */
            snprintf(out, n, "%.*s", (int)r->len, r->buf);
            r->len = 0;
            return 1;
        }
        r->len += (size_t)got;
    }
}

/* After OK, on a terminal: the warmup's progress and its profile, for at
 * most wait_s (then it goes on in the background). */
static void show_warmup(line_reader *r, const char *mountpoint, double wait_s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const int64_t deadline = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (int64_t)(wait_s * 1e9);
    char line[1200];
    bool progress_shown = false, header = false;
    int got;
    while ((got = next_line(r, line, sizeof line, deadline)) == 1) {
        if (strncmp(line, "W ", 2) == 0) {
            /* One line rewritten in place. */
            printf("\rwarmup: %-40.40s", line + 2);
            progress_shown = true;
        } else if (strncmp(line, "P ", 2) == 0) {
            if (progress_shown) {
                printf("\r%-48s\r", "");
                progress_shown = false;
            }
            if (!header)
                printf("connection profile (%s/%s/profile):\n", mountpoint, control_name);
            header = true;
            printf("  %s\n", line + 2);
        } else if (strncmp(line, "E ", 2) == 0) {
            if (progress_shown)
                printf("\n");
            progress_shown = false;
            printf("warmup: no connection profile: %s (the mount works without one)\n", line + 2);
        }
        fflush(stdout);
    }
    if (progress_shown)
        printf("\n");
    if (got < 0)
        printf("warmup: still running in the background (see %s/%s/profile)\n", mountpoint, control_name);
    fflush(stdout);
}

/* Parent side of the daemon start: wait for the child's verdict (and, when
 * report_warmup, the warmup's lines for at most warmup_wait_s). */
static int wait_for_daemon(int fd, pid_t child, const char *mountpoint, double warmup_wait_s)
{
    static line_reader r; /* static: 4 KiB off the stack */
    r.fd = fd;
    r.len = 0;
    char buf[1200];
    /* No deadline: the child's start-up has its own (connect and listing timeouts). */
    int got;
    while ((got = next_line(&r, buf, sizeof buf, 0)) == 1 && strncmp(buf, "WARN ", 5) == 0)
        fprintf(stderr, "sievefs: warning: %s\n", buf + 5);
    if (got != 1)
        buf[0] = 0;
    if (strcmp(buf, "OK") == 0) {
        /* The mount is in place; make sure it answers before returning. */
        struct stat st;
        if (stat(mountpoint, &st) != 0) {
            close(fd);
            fprintf(stderr, "sievefs: error: mount on %s does not answer: %s\n", mountpoint,
                    strerror(errno));
            return 1;
        }
        if (report_warmup)
            show_warmup(&r, mountpoint, warmup_wait_s);
        close(fd);
        return 0;
    }
    close(fd);
    int status = 0;
    waitpid(child, &status, 0);
    if (strncmp(buf, "ERR ", 4) == 0)
        fprintf(stderr, "sievefs: error: %s\n", buf + 4);
    else
        fprintf(stderr, "sievefs: error: the daemon exited during start-up (status %d)\n",
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 1;
}

/* Kept in static storage so that they stay reachable (not leaked) on every
 * exit path, including fail(). */
static char *bucket, *prefix;

/* Lazily unmount a stale mount at path (its daemon is gone): true when
 * fusermount3 succeeded. */
static bool unmount_stale(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, STDERR_FILENO);
        execlp("fusermount3", "fusermount3", "-uz", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The resolved mountpoint: an existing directory with nothing mounted on it.
 * A stale mount there (its daemon killed: ENOTCONN) is unmounted with
 * force, else reported with what to do. */
static void check_mountpoint(const char *arg, char mountpoint[PATH_MAX], bool force)
{
    /* realpath() may resolve a dead mount without touching it; stat() cannot. */
    struct stat st;
    bool resolved = realpath(arg, mountpoint) != NULL;
    if ((!resolved && errno == ENOTCONN) || (resolved && stat(mountpoint, &st) != 0 && errno == ENOTCONN)) {
        char abs[PATH_MAX];
        if (resolved)
            snprintf(abs, sizeof abs, "%s", mountpoint);
        else if (arg[0] == '/' || !getcwd(abs, sizeof abs))
            snprintf(abs, sizeof abs, "%s", arg);
        else
            snprintf(abs + strlen(abs), sizeof abs - strlen(abs), "/%s", arg);
        if (!force)
            fail("mountpoint %s: a previous mount there has lost its daemon (%s); unmount it with "
                 "'fusermount3 -u %s', or mount with --force",
                 abs, strerror(ENOTCONN), abs);
        if (!unmount_stale(abs))
            fail("mountpoint %s: a stale mount is there and 'fusermount3 -uz %s' failed", abs, abs);
        fprintf(stderr, "sievefs: unmounted the stale mount on %s (--force)\n", abs);
    }
    if (!realpath(arg, mountpoint))
        fail("mountpoint %s: %s", arg, strerror(errno));
    if (stat(mountpoint, &st) != 0)
        fail("mountpoint %s: %s", mountpoint, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        fail("mountpoint %s is not a directory", mountpoint);
    if (mountinfo_find(mountpoint, NULL, NULL))
        fail("mountpoint %s is busy: something is already mounted there", mountpoint);
}

/* --cache-dir: created when missing (its parent must exist), resolved to
 * an absolute path (the daemon leaves the working directory). */
static void check_cache_dir(const char *arg, char dir[PATH_MAX])
{
    if (mkdir(arg, 0755) != 0 && errno != EEXIST)
        fail("--cache-dir %s: cannot create it: %s", arg, strerror(errno));
    struct stat st;
    if (!realpath(arg, dir) || stat(dir, &st) != 0)
        fail("--cache-dir %s: %s", arg, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        fail("--cache-dir %s is not a directory", arg);
    if (access(dir, W_OK | X_OK) != 0)
        fail("--cache-dir %s: not writable: %s", dir, strerror(errno));
}

/* Fork the daemon. The parent waits for the child's verdict and returns the
 * exit status; the child returns -1, detached from the terminal's session,
 * and reports its start-up through ready_fd. */
static int start_daemon(const char *mountpoint, double warmup_wait_s)
{
    int p[2];
    if (pipe(p) != 0)
        fail("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid > 0) {
        close(p[1]);
        return wait_for_daemon(p[0], pid, mountpoint, warmup_wait_s);
    }
    close(p[0]);
    ready_fd = p[1];
    setsid();
    signal(SIGPIPE, SIG_IGN);
    return -1;
}

/* Connect, check that the bucket and prefix can be listed, mount and serve
 * until unmounted. The exit status. */
static int serve(const mount_opts *o, const char *mountpoint)
{
    static sv_stats stats;
    static cli_s3 s3; /* static: reachable on every exit path */
    static link_profile *profile;
    sv_error err;
    const cli_s3_tuning tuning = {.max_connections = o->max_connections,
                                  .stall_timeout_ms = o->stall_ms,
                                  .progress_window_ms = o->progress_ms,
                                  .retry_budget_ms = (uint32_t)o->retry_budget_ms,
                                  .no_retries = o->retry_budget_ms == 0, .stats = &stats};
    if (!cli_s3_connect(&o->s3, bucket, &tuning, &s3, &err))
        fail("%s", err.msg);

    sv_fs_config fc;
    sv_fs_config_defaults(&fc);
    fc.plain.bucket = bucket;
    fc.plain.prefix = prefix;
    fc.plain.cache_bytes = o->cache_size;
    fc.plain.dir_ttl_ms = o->dir_ttl_s * 1000;
    fc.plain.read_timeout_ms = o->read_timeout_ms;
    /* Smaller values shrink the kernel's readahead of small reads only. */
    fc.plain.prefetch.kernel_readahead =
        o->read_ahead > PREFETCH_KERNEL_IO_WINDOW ? o->read_ahead : PREFETCH_KERNEL_IO_WINDOW;
    fc.plain.direct_io = o->direct_io;
    if (o->direct_io)
        fc.plain.block_size = PLAIN_DIRECT_IO_BLOCK_SIZE;
    fc.plain.table_version = o->table_version;
    fc.request_cost_override = o->request_cost_set ? (int64_t)o->request_cost : -1;
    fc.partial_memory = o->partial_memory;
    fc.cache_dir = o->cache_dir;
    fc.control_dir = o->control_dir;
    profile = link_profile_create();
    if (!profile)
        fail("out of memory creating the filesystem");
    fc.profile = profile;
    /* The filesystem's GETs that run alone keep refining the profile. */
    refining_store *refiner = refining_store_create(s3_client_store(s3.client), profile);
    if (!refiner)
        fail("out of memory creating the filesystem");
    sv_fs *fs = sv_fs_create(refining_store_base(refiner), &stats, &fc);
    if (!fs)
        fail("out of memory creating the filesystem");

    char where[600];
    snprintf(where, sizeof where, "s3://%s/%s", bucket, prefix);
    sv_error cerr = {0};
    store_status cst = sv_fs_check(fs, &cerr);
    if (cst != STORE_OK) {
        cli_s3_explain(&s3, cst, where, "listing", "list", cerr.msg, &err);
        fail("%s", err.msg);
    }
    if (sv_fs_control_dir_collides(fs))
        warn_user("%s has its own '%s' in the mount's root: sievefs's control directory of that name hides "
                  "it; mount with --control-dir NAME to see it",
                  where, o->control_dir ? o->control_dir : SV_CONTROL_DIR);

    /* The mount is usable at once; the warmup measures the link meanwhile. */
    if (o->warmup_s > 0) {
        warmup_config_defaults(&warmups.cfg);
        warmups.cfg.prefix = prefix;
        warmups.cfg.budget_s = o->warmup_s;
        warmups.cfg.stats = &stats;
        /* Levels above the client's limit would only queue in it: unless
         * the limit was given, it is raised for the warmup, which then sets
         * it from the profile (apply_profile). */
        warmups.apply = (warmup_apply){s3.client, o->max_connections, o->max_connections_set, o->stall_ms,
                                       o->stall_set};
        warmups.cfg.max_in_flight = o->max_connections_set ? o->max_connections : MOUNT_IN_FLIGHT_MAX;
        warmups.cfg.progress = on_warmup_progress;
        warmups.cfg.sample_ok = sample_current_file;
        warmups.cfg.sample_ud = fs;
        warmups.store = s3_client_store(s3.client);
        warmups.profile = profile;
        run_warmup(&warmups);
        link_profile_set_retry(profile, run_warmup, &warmups);
    }

    char fsname[700];
    snprintf(fsname, sizeof fsname, "sievefs#%s", where);
    for (char *q = fsname; *q; q++)
        if (*q == ',' || *q == ' ')
            *q = '_'; /* the option parser splits on commas */
    sv_fuse_config fuse_cfg = {
        .mountpoint = mountpoint,
        .fsname = fsname,
        .extra_opts = o->fuse_opts,
        .max_threads = 16,
        .max_readahead = (unsigned)o->read_ahead,
        .debug = o->debug_fuse,
        .on_mounted = on_mounted,
    };
    int rc = sv_fuse_serve(fs, &fuse_cfg, &err);
    pthread_mutex_lock(&report_lock);
    bool unreported = ready_fd >= 0 && !mounted_reported;
    pthread_mutex_unlock(&report_lock);
    if (rc != 0 && unreported)
        fail("%s", err.msg);
    if (rc != 0)
        log_error("%s", err.msg);
    /* The warmup first (it uses the client), then the client: stopping its
     * transfer thread completes every fetch still in flight, and those
     * completions touch the filesystem's cache (and the warmup's batches). */
    stop_warmups(&warmups);
    s3_client_destroy(s3.client);
    s3.client = NULL;
    sv_fs_destroy(fs);
    store_destroy(refining_store_base(refiner));
    link_profile_destroy(profile);
    profile = NULL;
    cli_s3_close(&s3);
    return rc == 0 ? 0 : 1;
}

int cli_mount(int argc, char **argv)
{
    mount_opts o;
    parse_mount_args(argc, argv, &o);
    parse_source(o.source, &bucket, &prefix);
    char mountpoint[PATH_MAX];
    check_mountpoint(o.mountpoint, mountpoint, o.force);
    static char cache_dir[PATH_MAX];
    if (o.cache_dir) {
        check_cache_dir(o.cache_dir, cache_dir);
        o.cache_dir = cache_dir;
    }
    /* On a terminal the command shows the warmup and its profile; elsewhere
     * (scripts, tests) it returns as soon as the mount answers. */
    report_warmup = !o.foreground && o.warmup_s > 0 && isatty(STDOUT_FILENO);
    /* The listing walk, the sampling and its requests' tails. */
    const double warmup_wait_s = o.warmup_s + 30;
    int rc = o.foreground ? -1 : start_daemon(mountpoint, warmup_wait_s);
    if (rc < 0) {
        /* The daemon (or the foreground process) from here on. */
        sv_log_init((sv_log_level)o.log_level, !o.foreground);
        rc = serve(&o, mountpoint);
    }
    free(bucket);
    free(prefix);
    return rc;
}
