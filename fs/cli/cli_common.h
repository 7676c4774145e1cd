/* Command-line pieces shared by `sievefs mount` and `sievefs inspect`: the S3
 * connection options (--endpoint, --region, --profile, --no-sign-request,
 * --force-path-style) with their help text, s3:// URL parsing, credential
 * resolution plus S3 client creation, one-line descriptions of S3 failures,
 * and number parsing. */
#ifndef SIEVE_CLI_COMMON_H
#define SIEVE_CLI_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws_config.h"
#include "s3_client.h"
#include "stats.h"

/* getopt_long ids of the S3 options; a command's own ids start at
 * CLI_OPT_S3_END. */
enum {
    CLI_OPT_ENDPOINT = 1000,
    CLI_OPT_REGION,
    CLI_OPT_PROFILE,
    CLI_OPT_NO_SIGN,
    CLI_OPT_PATH_STYLE,
    CLI_OPT_S3_END,
};

/* Entries for a `struct option` array. */
#define CLI_S3_LONGOPTS                                                   \
    {"endpoint", required_argument, NULL, CLI_OPT_ENDPOINT},              \
    {"region", required_argument, NULL, CLI_OPT_REGION},                  \
    {"profile", required_argument, NULL, CLI_OPT_PROFILE},                \
    {"no-sign-request", no_argument, NULL, CLI_OPT_NO_SIGN},              \
    {"force-path-style", no_argument, NULL, CLI_OPT_PATH_STYLE}

/* Help lines for those options (two-space indent, descriptions at column 24). */
#define CLI_S3_OPTIONS_HELP                                                          \
    "  --endpoint URL        S3 endpoint (default: AWS_ENDPOINT_URL, else AWS S3 for\n" \
    "                        the region); custom endpoints use path-style addressing\n" \
    "  --region R            region for signing (default: AWS_REGION,\n"                \
    "                        AWS_DEFAULT_REGION, the profile's region, us-east-1)\n"    \
    "  --profile NAME        profile in ~/.aws/credentials and ~/.aws/config\n"         \
    "                        (default: AWS_PROFILE, else \"default\")\n"                \
    "  --no-sign-request     anonymous requests, no credentials\n"                      \
    "  --force-path-style    path-style addressing on AWS too\n"

#define CLI_CREDENTIALS_HELP                                                      \
    "Credentials, in order: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /\n"        \
    "AWS_SESSION_TOKEN; then the profile in ~/.aws/credentials and ~/.aws/config\n" \
    "(AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE). https endpoints verify\n"    \
    "certificates, with AWS_CA_BUNDLE when set.\n"

typedef struct {
    const char *endpoint; /* --endpoint, or NULL */
    const char *region;   /* --region, or NULL */
    const char *profile;  /* --profile, or NULL */
    bool no_sign;
    bool path_style;
} cli_s3_opts;

/* Apply getopt result c (with optarg arg) when it is one of the S3 options;
 * false otherwise. */
bool cli_s3_option(cli_s3_opts *o, int c, const char *arg);

/* Split "s3://BUCKET[/REST]": *bucket gets a malloc'd copy of a valid bucket
 * name, *rest points into url just after "BUCKET/" ("" when absent). form
 * names the expected shape in messages, e.g. "s3://BUCKET[/PREFIX]". False
 * with a message in err when url is malformed. */
bool cli_parse_s3_url(const char *url, const char *form, char **bucket, const char **rest,
                      sv_error *err);

/* An S3 client for one bucket with resolved credentials. */
typedef struct {
    aws_credentials creds;
    const char *endpoint; /* effective endpoint (option, environment or profile); NULL = AWS */
    const char *bucket;
    s3_client *client;
} cli_s3;

typedef struct {
    unsigned max_connections;    /* in-flight limit */
    unsigned stall_timeout_ms;   /* first-byte deadline */
    unsigned progress_window_ms; /* body progress deadline; 0 = the client's default */
    /* How long a request keeps retrying transient failures (503/429 bursts,
     * resets): 0 = RETRY_BUDGET_DEFAULT_MS. */
    uint32_t retry_budget_ms;
    bool no_retries; /* one attempt per request */
    sv_stats *stats; /* may be NULL */
} cli_s3_tuning;

/* Resolve credentials and region as `sievefs mount` does (environment,
 * profile files, options) and create the client. bucket must outlive s.
 * False with a one-line message in err. */
bool cli_s3_connect(const cli_s3_opts *o, const char *bucket, const cli_s3_tuning *t, cli_s3 *s,
                    sv_error *err);
void cli_s3_close(cli_s3 *s);

/* One-line description of an S3 failure st while doing something to where
 * (e.g. "listing" / "list" s3://b/p/), detail being the client's message:
 *   bucket 'B' does not exist at ENDPOINT (detail)
 *   access denied listing WHERE: check credentials and permissions (detail)
 *   cannot reach ENDPOINT: detail
 *   TLS failure talking to ENDPOINT: detail
 *   WHERE does not exist (detail)
 *   WHERE changed while being read: detail
 *   cannot list WHERE: detail
 * out gets st as its code; detail must not be out's own message. */
void cli_s3_explain(const cli_s3 *s, store_status st, const char *where, const char *doing,
                    const char *verb, const char *detail, sv_error *out);

/* Usage errors of command cmd ("index", "profile", ...): one line
 * "sievefs: error: MSG (see sievefs CMD --help)" on stderr; returns 2, the
 * exit status of a usage error. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The usage error for the option getopt_long just refused. Returns 2. */
int cli_bad_option(const char *cmd, char **argv);

/* getopt_long over a command taking one positional argument, which goes
 * into *positional wherever it stands, and the S3 options, which go into
 * *s3 (may be NULL): the next other option, -1 at the end, or
 * CLI_GETOPT_USAGE after reporting a second positional argument. The first
 * call of a parse passes first = true (getopt starts over, quietly). */
#define CLI_GETOPT_USAGE (-2)
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts, bool first,
               const char **positional, cli_s3_opts *s3, const char *cmd);

/* "512M", "2G", "1048576", "64KiB" -> bytes. */
bool cli_parse_size(const char *s, uint64_t *out);
/* Decimal in [lo, hi]. */
bool cli_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);
/* "5", "5s", "2.5s", "500ms" -> seconds in [0, max_s]. */
bool cli_parse_duration(const char *s, double max_s, double *out);
/* "60", "60s", "1500ms", "2m" -> milliseconds in [lo_ms, hi_ms] (a bare
 * number is seconds). */
bool cli_parse_duration_ms(const char *s, uint64_t lo_ms, uint64_t hi_ms, uint64_t *out);

#endif
