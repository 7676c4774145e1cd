/* AWS credential and region resolution: environment, then the shared
 * credentials and config files, in the AWS CLI's order. FUSE-free. */
#ifndef SIEVE_AWS_CONFIG_H
#define SIEVE_AWS_CONFIG_H
#include <stdbool.h>
#include <stddef.h>

#include "sv_error.h"

#define AWS_INI_MAX_FILE   (1u << 20) /* larger credential/config files are refused */
#define AWS_INI_MAX_VALUE  4096u

typedef enum {
    AWS_CONFIG_OK = 0,
    AWS_CONFIG_ERR_NOT_FOUND, /* no credentials anywhere (and not anonymous) */
    AWS_CONFIG_ERR_PROFILE,   /* the named profile exists in neither file */
    AWS_CONFIG_ERR_PARSE,     /* a file is malformed (message names file and line) */
    AWS_CONFIG_ERR_LIMIT,     /* a file or value is too large */
    AWS_CONFIG_ERR_IO,        /* a file exists but cannot be read */
    AWS_CONFIG_ERR_NOMEM,
} aws_config_err;

/* One parsed INI file: sections of key = value pairs (keys lower-cased,
 * values trimmed; comment lines start with # or ;). Python configparser
 * syntax as botocore reads it: "key: value" also works, there are no inline
 * comments, indented lines continuing a value (the nested "s3 =" blocks) are
 * skipped, a repeated key or section merges with the last value winning, and
 * "[profile   NAME]" is stored as "profile NAME". text need not be
 * NUL-terminated; NUL bytes are an error. */
typedef struct aws_ini aws_ini;
aws_config_err aws_ini_parse(const char *text, size_t len, const char *filename,
                             aws_ini **out, sv_error *err);
/* Value of key in [section], or NULL. */
const char *aws_ini_get(const aws_ini *ini, const char *section, const char *key);
bool aws_ini_has_section(const aws_ini *ini, const char *section);
void aws_ini_free(aws_ini *ini);

/* Where to look. getenv_fn lets tests supply an environment; NULL = getenv. */
typedef struct {
    const char *profile;   /* --profile, or NULL: then AWS_PROFILE, then "default" */
    const char *region;    /* --region, or NULL */
    bool no_sign_request;  /* anonymous: no credentials are looked up */
    const char *(*getenv_fn)(const char *name);
    const char *home;      /* NULL = $HOME */
} aws_resolve_opts;

typedef struct {
    char *access_key_id;     /* NULL when anonymous */
    char *secret_access_key; /* NULL when anonymous */
    char *session_token;     /* may be NULL */
    char *region;            /* never NULL after success: defaults to "us-east-1" */
    char *endpoint_url;      /* AWS_ENDPOINT_URL or profile endpoint_url, else NULL */
    const char *source;      /* static: "environment", "credentials file", "config file", "anonymous" */
    bool anonymous;
} aws_credentials;

/* Order: credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY(/AWS_SESSION_TOKEN)
 * unless a profile was named explicitly with --profile; then the profile in
 * the credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, section
 * [NAME]), then the config file (AWS_CONFIG_FILE or ~/.aws/config, section
 * [profile NAME] or [default]). Region: opts.region, AWS_REGION,
 * AWS_DEFAULT_REGION, profile region, "us-east-1". Endpoint: AWS_ENDPOINT_URL_S3,
 * AWS_ENDPOINT_URL, profile endpoint_url. For profile keys present in both
 * files the credentials file wins (as botocore merges them). Empty variables
 * count as unset. Missing files are fine; a named profile (--profile or
 * AWS_PROFILE) that exists in neither file is an error, and so is a key id
 * without its secret. Messages never contain secret values. */
aws_config_err aws_resolve(const aws_resolve_opts *opts, aws_credentials *out,
                           sv_error *err);
void aws_credentials_free(aws_credentials *c);

#endif
