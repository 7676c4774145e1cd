/* `sievefs profile`; see cli_profile.h. */
#include "cli_profile.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "control.h"
#include "link_profile.h"
#include "log.h"
#include "warmup.h"

static const char usage_profile[] =
    "usage: sievefs profile s3://BUCKET[/PREFIX] [OPTIONS]\n"
    "\n"
    "Measures the link to the object store as a mount's warmup does and prints\n"
    "the connection profile: latency (median and p90 of small ranges on warm\n"
    "connections), what a new connection adds, bandwidth of large ranges, and\n"
    "completions per second of small ranges at several numbers in flight, with\n"
    "the smallest number that reaches 95% of the best. Reads ranges of up to 3\n"
    "data files of at least 4 MiB under the prefix (*.parquet first), and with\n"
    "fewer of those, of up to 32 files of at least 64 KiB (whole ones for the\n"
    "bandwidth): at most 25 MiB and 3,200 requests.\n"
    "\n"
    "options:\n"
    "  --json                one JSON document on stdout, the one\n"
    "                        MOUNTPOINT/.sieve/profile shows\n"
    "  --duration DURATION   sampling time, like 5s or 800ms (default 5s, at most\n"
    "                        60s)\n"
    "  --max-in-flight N     highest number of requests in flight measured, from 8\n"
    "                        to 512 (default 512)\n"
    CLI_S3_OPTIONS_HELP
    "  --log-level LEVEL     error, warn, info, debug or trace (default: errors only)\n"
    "  -h, --help            show this help\n"
    "\n"
    CLI_CREDENTIALS_HELP
    "\n"
    "Exit status: 0 with a profile, 1 when none could be measured (no data file\n"
    "large enough, requests failing), 2 on usage errors.\n";

typedef struct {
    const char *source;
    cli_s3_opts s3;
    bool json;
    double duration_s;
    unsigned max_in_flight;
    int log_level;
} profile_opts;

static int parse_args(int argc, char **argv, profile_opts *o)
{
    enum { OPT_JSON = CLI_OPT_S3_END, OPT_DURATION, OPT_INFLIGHT, OPT_LOG };
    static const struct option longopts[] = {
        CLI_S3_LONGOPTS,
        {"json", no_argument, NULL, OPT_JSON},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"max-in-flight", required_argument, NULL, OPT_INFLIGHT},
        {"log-level", required_argument, NULL, OPT_LOG},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->duration_s = 5.0;
    o->max_in_flight = 512;
    o->log_level = -1;
    for (bool first = true;; first = false) {
        int c = cli_getopt(argc, argv, "+h", longopts, first, &o->source, &o->s3, "profile");
        if (c == -1)
            break;
        if (c == CLI_GETOPT_USAGE)
            return 2;
        switch (c) {
        case OPT_JSON: o->json = true; break;
        case OPT_DURATION:
            if (!cli_parse_duration(optarg, 60, &o->duration_s) || o->duration_s <= 0)
                return cli_usage_error("profile",
                                       "--duration '%s': expected a duration above 0 and up to 60s, like 5s or 800ms",
                                       optarg);
            break;
        case OPT_INFLIGHT:
            if (!cli_parse_uint(optarg, 8, 512, &o->max_in_flight))
                return cli_usage_error("profile", "--max-in-flight '%s': expected a number from 8 to 512", optarg);
            break;
        case OPT_LOG:
            o->log_level = sv_log_parse_level(optarg);
            if (o->log_level < 0)
                return cli_usage_error("profile", "--log-level '%s': expected error, warn, info, debug or trace",
                                       optarg);
            break;
        case 'h': fputs(usage_profile, stdout); return 0;
        default: return cli_bad_option("profile", argv);
        }
    }
    if (!o->source)
        return cli_usage_error("profile", "profile needs s3://BUCKET[/PREFIX]");
    return -1;
}

void cli_profile_format(const conn_profile *p, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
#define PUT(...)                                                              \
    do {                                                                      \
        if (len < n) {                                                        \
            int k = snprintf(buf + len, n - len, __VA_ARGS__);                \
            len += k > 0 ? (size_t)k : 0;                                     \
        }                                                                     \
    } while (0)
    PUT("latency    %.1f ms median, %.1f ms p90\n", p->latency_s * 1e3, p->latency_p90_s * 1e3);
    PUT("connect    %.1f ms\n", p->connect_s * 1e3);
    PUT("bandwidth  %.1f Mbit/s over %.1f MiB\n", p->bandwidth_Bps * 8 / 1e6,
        (double)p->bandwidth_bytes / (1 << 20));
    PUT("capacity  ");
    if (p->n_capacity == 0)
        PUT(" not measured");
    for (uint32_t i = 0; i < p->n_capacity && i < PROFILE_MAX_CAPACITY_POINTS; i++)
        PUT(" %u: %.0f/s%s", p->capacity[i].in_flight, p->capacity[i].per_s,
            i + 1 < p->n_capacity ? "," : "");
    PUT("\n");
    if (p->suggested_in_flight)
        PUT("suggested  %u in flight\n", p->suggested_in_flight);
    else
        PUT("suggested  -\n");
    PUT("samples    %llu requests\n", (unsigned long long)p->samples);
#undef PUT
}

static void on_progress(void *ud, const char *what)
{
    (void)ud;
    log_info("profile: %s", what);
}

int cli_profile(int argc, char **argv)
{
    profile_opts o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0)
        return status;
    sv_log_init(o.log_level >= 0 ? (sv_log_level)o.log_level : SV_LOG_ERROR, false);
    char *bucket = NULL;
    const char *rest;
    sv_error err = {0};
    if (!cli_parse_s3_url(o.source, "s3://BUCKET[/PREFIX]", &bucket, &rest, &err))
        return cli_usage_error("profile", "%s", err.msg);
    while (*rest == '/')
        rest++;
    size_t plen = strlen(rest);
    if (plen > S3_KEY_MAX) {
        free(bucket);
        return cli_usage_error("profile", "prefix is longer than %u bytes", S3_KEY_MAX);
    }
    char *prefix = malloc(plen + 2);
    if (!prefix) {
        free(bucket);
        fprintf(stderr, "sievefs: error: out of memory\n");
        return 1;
    }
    memcpy(prefix, rest, plen + 1);
    if (plen && rest[plen - 1] != '/')
        memcpy(prefix + plen, "/", 2);

    /* As many connections as the highest level measured: the client's own
     * limit must not be what the capacity curve shows. */
    cli_s3 s3;
    const cli_s3_tuning tuning = {.max_connections = o.max_in_flight, .stall_timeout_ms = 10000};
    status = 1;
    if (!cli_s3_connect(&o.s3, bucket, &tuning, &s3, &err)) {
        fprintf(stderr, "sievefs: error: %s\n", err.msg);
        goto out;
    }
    warmup_config wc;
    warmup_config_defaults(&wc);
    wc.prefix = prefix;
    wc.budget_s = o.duration_s;
    wc.max_in_flight = o.max_in_flight;
    wc.progress = on_progress;
    conn_profile p;
    bool ran = warmup_measure(s3_client_store(s3.client), &wc, NULL, &p, &err);
    char where[S3_KEY_MAX + 600];
    snprintf(where, sizeof where, "s3://%s/%s", bucket, prefix);
    if (!ran) {
        if (err.code == STORE_ERR_INVALID || err.code == STORE_ERR_NOMEM) {
            fprintf(stderr, "sievefs: error: %s: %s\n", where, err.msg);
        } else {
            sv_error why;
            char detail[sizeof err.msg];
            snprintf(detail, sizeof detail, "%s", err.msg);
            cli_s3_explain(&s3, (store_status)err.code, where, "listing", "list", detail, &why);
            fprintf(stderr, "sievefs: error: %s\n", why.msg);
        }
    } else if (o.json) {
        link_profile *lp = link_profile_create();
        link_profile_set(lp, &p);
        link_profile_set_state(lp, LINK_WARMUP_RUNNING); /* one run: the document says runs 1 */
        link_profile_set_state(lp, p.valid ? LINK_WARMUP_DONE : LINK_WARMUP_FAILED);
        size_t len = 0;
        char *text = lp ? control_render_profile(lp, (int64_t)time(NULL), &len) : NULL;
        link_profile_destroy(lp);
        if (text) {
            fwrite(text, 1, len, stdout);
            free(text);
        }
        status = p.valid ? 0 : 1;
    } else if (p.valid) {
        char text[2048];
        cli_profile_format(&p, text, sizeof text);
        printf("%s\n%s", where, text);
        status = 0;
    }
    if (ran && !p.valid)
        fprintf(stderr, "sievefs: error: %s: too few requests succeeded for a profile (%llu samples)\n",
                where, (unsigned long long)p.samples);
    if (fflush(stdout) != 0)
        status = 1;
out:
    cli_s3_close(&s3);
    free(prefix);
    free(bucket);
    return status;
}
