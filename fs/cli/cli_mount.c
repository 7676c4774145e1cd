/* `sievefs mount`: its options, the mountpoint checks, daemon start-up with
 * a readiness pipe (the parent exits only once the mount answers, or with
 * the child's one-line error), and serving until unmounted. */
#include "cli_mount.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_common.h"
#include "cost_model.h"
#include "fs.h"
#include "fuse_adapter.h"
#include "log.h"
#include "mountinfo.h"
#include "s3_client.h"

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
    "  --cache-size BYTES    in-memory block cache limit, with optional K/M/G suffix\n"
    "                        (default 512M, minimum 16M)\n"
    "  --log-level LEVEL     error, warn, info, debug or trace (default warn)\n"
    "  --max-connections N   S3 requests in flight at once, retries waiting for\n"
    "                        their turn included, and pooled connections (1 to\n"
    "                        1024, default 32)\n"
    "  --stall-timeout MS    retry a request on a new connection when no response\n"
    "                        arrives within MS milliseconds (default 10000)\n"
    "  --progress-timeout MS retry a request on a new connection when its body\n"
    "                        brings less than 1 KiB/s over MS milliseconds\n"
    "                        (default 10000)\n"
    "  --dir-ttl SECONDS     how long a directory listing is reused (default 60;\n"
    "                        _delta_log/ directories: 1)\n"
    "  --read-ahead BYTES    kernel readahead of the mount (default 2M; as root).\n"
    "                        A read() up to this size is fetched exactly; larger\n"
    "                        values make memory-mapped readers (polars) fetch more\n"
    "  --request-cost BYTES  what one more S3 request is worth in bytes, for views:\n"
    "                        gaps shorter than this are read through, and a page is\n"
    "                        read partially only if that saves 25% of it counting\n"
    "                        this per request (default 128K; 0: bytes alone count).\n"
    "                        Until the connection profiler sets it: about bandwidth\n"
    "                        x round trip / --max-connections\n"
    "  -f, --foreground      stay in the foreground, log to stderr\n"
    "  -d, --debug-fuse      libfuse debug output (implies -f)\n"
    "  -o OPTS               extra FUSE mount options, e.g. allow_other\n"
    "  -h, --help            show this help\n"
    "\n"
    CLI_CREDENTIALS_HELP
    "\n"
    "MOUNTPOINT/.sieve/stats (hidden from listings) shows read and S3 counters.\n";

typedef struct {
    const char *source;
    const char *mountpoint;
    cli_s3_opts s3;
    uint64_t cache_size;
    int log_level;
    unsigned max_connections;
    unsigned stall_ms;
    unsigned progress_ms;
    uint64_t dir_ttl_s;
    uint64_t read_ahead;
    uint64_t request_cost;
    bool foreground;
    bool debug_fuse;
    const char *fuse_opts;
} mount_opts;

/* Errors before and during start-up are one line on stderr (or, in the
 * daemon child, one line down the pipe to the waiting parent). */
static int ready_fd = -1;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    sv_vformat_line(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ready_fd >= 0) {
        dprintf(ready_fd, "ERR %s\n", msg);
        close(ready_fd);
    } else {
        fprintf(stderr, "sievefs: error: %s\n", msg);
    }
    exit(1);
}

static void parse_mount_args(int argc, char **argv, mount_opts *o)
{
    enum { OPT_CACHE = CLI_OPT_S3_END, OPT_LOG, OPT_MAXCONN, OPT_STALL, OPT_PROGRESS, OPT_DIRTTL, OPT_READAHEAD, OPT_REQCOST };
    static const struct option longopts[] = {
        CLI_S3_LONGOPTS,
        {"cache-size", required_argument, NULL, OPT_CACHE},
        {"log-level", required_argument, NULL, OPT_LOG},
        {"max-connections", required_argument, NULL, OPT_MAXCONN},
        {"stall-timeout", required_argument, NULL, OPT_STALL},
        {"progress-timeout", required_argument, NULL, OPT_PROGRESS},
        {"dir-ttl", required_argument, NULL, OPT_DIRTTL},
        {"read-ahead", required_argument, NULL, OPT_READAHEAD},
        {"request-cost", required_argument, NULL, OPT_REQCOST},
        {"foreground", no_argument, NULL, 'f'},
        {"debug-fuse", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->cache_size = 512ull << 20;
    o->log_level = SV_LOG_WARN;
    o->max_connections = 32;
    o->stall_ms = 10000;
    o->progress_ms = 10000;
    o->dir_ttl_s = 60;
    o->read_ahead = 2u << 20;
    o->request_cost = COST_DEFAULT_REQUEST;
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
            break;
        case OPT_STALL:
            if (!cli_parse_uint(optarg, 100, 600000, &u))
                fail("--stall-timeout '%s': expected milliseconds from 100 to 600000", optarg);
            o->stall_ms = u;
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
        case OPT_REQCOST:
            if (!cli_parse_size(optarg, &o->request_cost) || o->request_cost > (64ull << 20))
                fail("--request-cost '%s': expected a size from 0 to 64M, like 0, 16K or 128K", optarg);
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
    if (ready_fd >= 0) {
        dprintf(ready_fd, "OK\n");
        close(ready_fd);
        ready_fd = -1;
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

/* Parent side of the daemon start: wait for the child's verdict. */
static int wait_for_daemon(int fd, pid_t child, const char *mountpoint)
{
    char buf[1200];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len == sizeof buf - 1 || memchr(buf, '\n', len))
            break;
    }
    buf[len] = 0;
    close(fd);
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = 0;
    if (strcmp(buf, "OK") == 0) {
        /* The mount is in place; make sure it answers before returning. */
        struct stat st;
        if (stat(mountpoint, &st) != 0) {
            fprintf(stderr, "sievefs: error: mount on %s does not answer: %s\n", mountpoint,
                    strerror(errno));
            return 1;
        }
        return 0;
    }
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

/* The resolved mountpoint: an existing directory with nothing mounted on it. */
static void check_mountpoint(const char *arg, char mountpoint[PATH_MAX])
{
    if (!realpath(arg, mountpoint))
        fail("mountpoint %s: %s", arg, strerror(errno));
    struct stat st;
    if (stat(mountpoint, &st) != 0)
        fail("mountpoint %s: %s", mountpoint, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        fail("mountpoint %s is not a directory", mountpoint);
    if (mountinfo_find(mountpoint, NULL, NULL))
        fail("mountpoint %s is busy: something is already mounted there", mountpoint);
}

/* Fork the daemon. The parent waits for the child's verdict and returns the
 * exit status; the child returns -1, detached from the terminal's session,
 * and reports its start-up through ready_fd. */
static int start_daemon(const char *mountpoint)
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
        return wait_for_daemon(p[0], pid, mountpoint);
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
    sv_error err;
    const cli_s3_tuning tuning = {.max_connections = o->max_connections,
                                  .stall_timeout_ms = o->stall_ms,
                                  .progress_window_ms = o->progress_ms, .stats = &stats};
    if (!cli_s3_connect(&o->s3, bucket, &tuning, &s3, &err))
        fail("%s", err.msg);

    sv_fs_config fc;
    sv_fs_config_defaults(&fc);
    fc.plain.prefix = prefix;
    fc.plain.cache_bytes = o->cache_size;
    fc.plain.dir_ttl_ms = o->dir_ttl_s * 1000;
    fc.request_cost = (uint32_t)o->request_cost;
    sv_fs *fs = sv_fs_create(s3_client_store(s3.client), &stats, &fc);
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
    if (rc != 0 && ready_fd >= 0)
        fail("%s", err.msg);
    if (rc != 0)
        log_error("%s", err.msg);
    /* The client first: stopping its transfer thread completes every fetch
     * still in flight, and those completions touch the filesystem's cache. */
    s3_client_destroy(s3.client);
    s3.client = NULL;
    sv_fs_destroy(fs);
    cli_s3_close(&s3);
    return rc == 0 ? 0 : 1;
}

int cli_mount(int argc, char **argv)
{
    mount_opts o;
    parse_mount_args(argc, argv, &o);
    parse_source(o.source, &bucket, &prefix);
    char mountpoint[PATH_MAX];
    check_mountpoint(o.mountpoint, mountpoint);
    int rc = o.foreground ? -1 : start_daemon(mountpoint);
    if (rc < 0) {
        /* The daemon (or the foreground process) from here on. */
        sv_log_init((sv_log_level)o.log_level, !o.foreground);
        rc = serve(&o, mountpoint);
    }
    free(bucket);
    free(prefix);
    return rc;
}
