/* Shared command-line pieces; see cli_common.h. */
#include "cli_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    sv_vformat_line(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "sievefs: error: %s (see sievefs %s --help)\n", msg, cmd);
    return 2;
}

int cli_bad_option(const char *cmd, char **argv)
{
    if (optopt && optopt < 256)
        return cli_usage_error(cmd, "unknown or incomplete option '-%c'", optopt);
    return cli_usage_error(cmd, "unknown or incomplete option '%s'", argv[optind - 1]);
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts, bool first,
               const char **positional, cli_s3_opts *s3, const char *cmd)
{
    if (first) {
        optind = 1;
        opterr = 0;
    }
    for (;;) {
        int c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c != -1 && s3 && cli_s3_option(s3, c, optarg))
            continue;
        if (c != -1)
            return c;
        if (optind >= argc)
            return -1;
        if (*positional) {
            cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
            return CLI_GETOPT_USAGE;
        }
        *positional = argv[optind++];
    }
}

bool cli_s3_option(cli_s3_opts *o, int c, const char *arg)
{
    switch (c) {
    case CLI_OPT_ENDPOINT: o->endpoint = arg; return true;
    case CLI_OPT_REGION: o->region = arg; return true;
    case CLI_OPT_PROFILE: o->profile = arg; return true;
    case CLI_OPT_NO_SIGN: o->no_sign = true; return true;
    case CLI_OPT_PATH_STYLE: o->path_style = true; return true;
    default: return false;
    }
}

bool cli_parse_s3_url(const char *url, const char *form, char **bucket, const char **rest,
                      sv_error *err)
{
    *bucket = NULL;
    *rest = NULL;
    if (strncmp(url, "s3://", 5) != 0) {
        sv_fail(err, EINVAL, 0, "source '%s' must look like %s", url, form);
        return false;
    }
    const char *b = url + 5;
    const char *slash = strchr(b, '/');
    const size_t blen = slash ? (size_t)(slash - b) : strlen(b);
    if (blen == 0 || blen > 255) {
        sv_fail(err, EINVAL, 0, "source '%s' has no valid bucket name", url);
        return false;
    }
    for (size_t i = 0; i < blen; i++) {
        const char ch = b[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '.' || ch == '_')) {
            sv_fail(err, EINVAL, 0, "bucket name '%.*s' contains '%c'", (int)blen, b, ch);
            return false;
        }
    }
    *bucket = strndup(b, blen);
    if (!*bucket) {
        sv_fail(err, ENOMEM, 0, "out of memory");
        return false;
    }
    *rest = slash ? slash + 1 : b + blen;
    return true;
}

bool cli_s3_connect(const cli_s3_opts *o, const char *bucket, const cli_s3_tuning *t, cli_s3 *s,
                    sv_error *err)
{
    memset(s, 0, sizeof *s);
    s->bucket = bucket;
    aws_resolve_opts ro = {.profile = o->profile, .region = o->region,
                           .no_sign_request = o->no_sign};
    if (aws_resolve(&ro, &s->creds, err) != AWS_CONFIG_OK) {
        /* aws_resolve frees what it allocated on failure. */
        memset(&s->creds, 0, sizeof s->creds);
        return false;
    }
    s->endpoint = o->endpoint ? o->endpoint : s->creds.endpoint_url;
    log_info("credentials from %s, region %s, endpoint %s", s->creds.source, s->creds.region,
             s->endpoint ? s->endpoint : "(AWS)");
    s3_client_config cc = {
        .endpoint = s->endpoint,
        .bucket = bucket,
        .force_path_style = o->path_style,
        .creds = &s->creds,
        .ca_bundle = getenv("AWS_CA_BUNDLE"),
        .max_connections = t->max_connections,
        .connect_timeout_ms = 3000,
        .stall_timeout_ms = t->stall_timeout_ms,
        .progress_window_ms = t->progress_window_ms,
        .retry = RETRY_POLICY_DEFAULT,
        .stats = t->stats,
    };
    if (t->retry_budget_ms)
        cc.retry.budget_ms = t->retry_budget_ms;
    if (t->no_retries)
        cc.retry.max_attempts = 1;
    if (s3_client_create(&cc, &s->client, err) != STORE_OK) {
        s->client = NULL;
        aws_credentials_free(&s->creds);
        return false;
    }
    return true;
}

void cli_s3_close(cli_s3 *s)
{
    if (!s)
        return;
    if (s->client)
        s3_client_destroy(s->client);
    aws_credentials_free(&s->creds);
    memset(s, 0, sizeof *s);
}

void cli_s3_explain(const cli_s3 *s, store_status st, const char *where, const char *doing,
                    const char *verb, const char *detail, sv_error *out)
{
    const char *ep = s->endpoint ? s->endpoint : "AWS S3";
    switch (st) {
    case STORE_ERR_NO_BUCKET:
        sv_fail(out, st, 0, "bucket '%s' does not exist at %s (%s)", s->bucket, ep, detail);
        break;
    case STORE_ERR_ACCESS:
        sv_fail(out, st, 0, "access denied %s %s: check credentials and permissions (%s)", doing,
                 where, detail);
        break;
    case STORE_ERR_NETWORK:
    case STORE_ERR_TIMEOUT:
        sv_fail(out, st, 0, "cannot reach %s: %s", ep, detail);
        break;
    case STORE_ERR_TLS:
        sv_fail(out, st, 0, "TLS failure talking to %s: %s", ep, detail);
        break;
    case STORE_ERR_NOT_FOUND:
        sv_fail(out, st, 0, "%s does not exist (%s)", where, detail);
        break;
    case STORE_ERR_CHANGED:
        sv_fail(out, st, 0, "%s changed while being read: %s", where, detail);
        break;
    default:
        sv_fail(out, st, 0, "cannot %s %s: %s", verb, where, detail);
        break;
    }
}

bool cli_parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return false;
    uint64_t mult = 1;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': mult = 1ull << 10; end++; break;
    case 'm': case 'M': mult = 1ull << 20; end++; break;
    case 'g': case 'G': mult = 1ull << 30; end++; break;
    default: return false;
    }
    if (*end == 'i' || *end == 'B')
        end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
    if (*end || v > UINT64_MAX / mult)
        return false;
    *out = v * mult;
    return true;
}

bool cli_parse_duration_ms(const char *s, uint64_t lo_ms, uint64_t hi_ms, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-' || s[0] == '+' || s[0] == ' ')
        return false;
    uint64_t mult;
    if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
        mult = 1000;
    else if (strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        mult = 60000;
    else
        return false;
    if (v > hi_ms / mult || v * mult < lo_ms)
        return false;
    *out = v * mult;
    return true;
}

bool cli_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

bool cli_parse_duration(const char *s, double max_s, double *out)
{
    if (!s || !(s[0] >= '0' && s[0] <= '9'))
        return false; /* no sign, no "inf", no "nan" */
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        return false;
    if (strcmp(end, "ms") == 0)
        v /= 1000;
    else if (*end && strcmp(end, "s") != 0)
        return false;
    if (!(v >= 0 && v <= max_s))
        return false;
    *out = v;
    return true;
}
