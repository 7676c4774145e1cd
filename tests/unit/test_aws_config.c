/* AWS shared-file INI parsing and credential/region resolution, with a fake
 * environment and real files under a temporary HOME. */
#include "aws_config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- fake environment and temporary HOME -------------------------------- */

#define MAX_ENV 32
static struct {
    const char *name;
    const char *value;
} fake_env[MAX_ENV];
static size_t n_fake_env;
static char home[256];
static sv_error last_err;
#define err (last_err.msg) /* the message of the last call */

static const char *fake_getenv(const char *name)
{
    for (size_t i = 0; i < n_fake_env; i++) {
        if (strcmp(fake_env[i].name, name) == 0)
            return fake_env[i].value;
    }
    return NULL;
}

static void set_env(const char *name, const char *value)
{
    cr_assert_lt(n_fake_env, MAX_ENV);
    fake_env[n_fake_env].name = name;
    fake_env[n_fake_env].value = value;
    n_fake_env++;
}

static void setup_home(void)
{
    n_fake_env = 0;
    err[0] = '\0';
    snprintf(home, sizeof home, "/tmp/sievefs-aws-test-XXXXXX");
    cr_assert_not_null(mkdtemp(home), "mkdtemp: %s", strerror(errno));
    char dir[300];
    snprintf(dir, sizeof dir, "%s/.aws", home);
    cr_assert_eq(mkdir(dir, 0700), 0);
    set_env("HOME", home);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void teardown_home(void)
{
    nftw(home, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write text to HOME-relative path. */
static void write_file(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", home, rel);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

static aws_resolve_opts opts_default(void)
{
    return (aws_resolve_opts){ .getenv_fn = fake_getenv };
}

static aws_config_err resolve(const aws_resolve_opts *o, aws_credentials *c)
{
    err[0] = '\0';
    return aws_resolve(o, c, &last_err);
}

/* ---- INI parsing ---------------------------------------------------------- */

static aws_ini *parse_ok(const char *text)
{
    aws_ini *ini = NULL;
    const aws_config_err rc = aws_ini_parse(text, strlen(text), "test.ini", &ini, &last_err);
    cr_assert_eq(rc, AWS_CONFIG_OK, "parse failed (%d): %s", rc, err);
    cr_assert_not_null(ini);
    return ini;
}

static void expect_parse_error(const char *text, aws_config_err want, const char *needle)
{
    aws_ini *ini = (aws_ini *)0x1;
    err[0] = '\0';
    const aws_config_err rc = aws_ini_parse(text, strlen(text), "cfg", &ini, &last_err);
    cr_expect_eq(rc, want, "text \"%s\": got %d want %d (%s)", text, rc, want, err);
    cr_expect_null(ini);
    cr_expect_null(strchr(err, '\n'));
    if (needle)
        cr_expect(strstr(err, needle) != NULL, "message \"%s\" lacks \"%s\"", err, needle);
    cr_expect_null(strstr(err, "SECRET"), "secret leaked into \"%s\"", err);
}

Test(aws_ini, credentials_file)
{
    aws_ini *ini = parse_ok("# AWS credentials\n"
                            "[default]\n"
                            "aws_access_key_id = AKIADEFAULT\n"
                            "aws_secret_access_key = SECRETdefault/abc+xyz\n"
                            "\n"
                            "; another comment\n"
                            "[dev]\n"
                            "aws_access_key_id=AKIADEV\n"
                            "aws_secret_access_key=SECRETdev\n"
                            "aws_session_token = FwoGZXIvYXdzEJr//////////wEaDA==\n");
    cr_expect(aws_ini_has_section(ini, "default"));
    cr_expect(aws_ini_has_section(ini, "dev"));
    cr_expect_not(aws_ini_has_section(ini, "prod"));
    cr_expect_str_eq(aws_ini_get(ini, "default", "aws_access_key_id"), "AKIADEFAULT");
    cr_expect_str_eq(aws_ini_get(ini, "default", "aws_secret_access_key"), "SECRETdefault/abc+xyz");
    cr_expect_str_eq(aws_ini_get(ini, "dev", "aws_access_key_id"), "AKIADEV");
    cr_expect_str_eq(aws_ini_get(ini, "dev", "aws_session_token"),
                     "FwoGZXIvYXdzEJr//////////wEaDA==", "'=' inside values is kept");
    cr_expect_null(aws_ini_get(ini, "default", "aws_session_token"));
    cr_expect_null(aws_ini_get(ini, "prod", "aws_access_key_id"));
    aws_ini_free(ini);
}

Test(aws_ini, whitespace_case_and_crlf)
{
    aws_ini *ini = parse_ok("\xEF\xBB\xBF[ default ]\r\n"
                            "  AWS_Access_Key_ID   =   AKIA   \r\n"
                            "\tRegion\t=\teu-west-1\t\r\n"
                            "empty =\r\n"
                            "colon: value: with colon\r\n"
                            "hash = not # a comment\r\n"
                            "\r\n"
                            "[profile    spaced   name]\r\n"
                            "region = ap-south-1");
    cr_expect_str_eq(aws_ini_get(ini, "default", "aws_access_key_id"), "AKIA");
    cr_expect_str_eq(aws_ini_get(ini, "default", "AWS_ACCESS_KEY_ID"), "AKIA",
                     "lookups ignore key case");
    cr_expect_str_eq(aws_ini_get(ini, "default", "region"), "eu-west-1");
    cr_expect_str_eq(aws_ini_get(ini, "default", "empty"), "");
    cr_expect_str_eq(aws_ini_get(ini, "default", "colon"), "value: with colon");
    cr_expect_str_eq(aws_ini_get(ini, "default", "hash"), "not # a comment",
                     "configparser has no inline comments");
    /* Only the blanks after "profile" are collapsed; the name keeps its own. */
    cr_expect_str_eq(aws_ini_get(ini, "profile spaced   name", "region"), "ap-south-1");
    aws_ini_free(ini);
}

Test(aws_ini, profile_section_name_normalised)
{
    aws_ini *ini = parse_ok("[profile    dev   ]\nregion = ap-south-1\n"
                            "[profile\tqa]\nregion = us-west-2\n"
                            "[profiledev]\nregion = nope\n");
    cr_expect_str_eq(aws_ini_get(ini, "profile dev", "region"), "ap-south-1");
    cr_expect_str_eq(aws_ini_get(ini, "profile qa", "region"), "us-west-2");
    cr_expect(aws_ini_has_section(ini, "profiledev"), "not a profile header, kept as is");
    aws_ini_free(ini);
}

Test(aws_ini, lone_cr_line_endings)
{
    aws_ini *ini = parse_ok("[a]\rk1 = v1\rk2 = v2\r");
    cr_expect_str_eq(aws_ini_get(ini, "a", "k1"), "v1");
    cr_expect_str_eq(aws_ini_get(ini, "a", "k2"), "v2");
    aws_ini_free(ini);
}

Test(aws_ini, nested_sections_are_skipped)
{
    aws_ini *ini = parse_ok("[profile dev]\n"
                            "region = us-west-2\n"
                            "s3 =\n"
                            "    max_concurrent_requests = 20\n"
                            "    addressing_style = path\n"
                            "\n"
                            "    multipart_threshold = 64MB\n"
                            "output = json\n"
                            "[default]\n"
                            "    region = eu-central-1\n"
                            "    output = text\n");
    cr_expect_str_eq(aws_ini_get(ini, "profile dev", "region"), "us-west-2");
    cr_expect_str_eq(aws_ini_get(ini, "profile dev", "s3"), "");
    cr_expect_null(aws_ini_get(ini, "profile dev", "max_concurrent_requests"));
    cr_expect_null(aws_ini_get(ini, "profile dev", "addressing_style"));
    cr_expect_null(aws_ini_get(ini, "profile dev", "multipart_threshold"));
    cr_expect_str_eq(aws_ini_get(ini, "profile dev", "output"), "json");
    /* Indented keys right after a header are ordinary keys (no value to continue). */
    cr_expect_str_eq(aws_ini_get(ini, "default", "region"), "eu-central-1");
    cr_expect_str_eq(aws_ini_get(ini, "default", "output"), "text");
    aws_ini_free(ini);
}

Test(aws_ini, duplicates_last_wins)
{
    aws_ini *ini = parse_ok("[default]\nregion = one\nregion = two\nonly_first = x\n"
                            "[other]\nregion = other\n"
                            "[default]\nregion = three\nonly_second = y\n");
    cr_expect_str_eq(aws_ini_get(ini, "default", "region"), "three");
    cr_expect_str_eq(aws_ini_get(ini, "default", "only_first"), "x", "repeated sections merge");
    cr_expect_str_eq(aws_ini_get(ini, "default", "only_second"), "y");
    cr_expect_str_eq(aws_ini_get(ini, "other", "region"), "other");
    aws_ini_free(ini);
}

Test(aws_ini, comments_and_blank_lines_anywhere)
{
    aws_ini *ini = parse_ok("\n\n   # indented comment\n;semi\n[a] # trailing comment\n"
                            "  ; indented semi\nk = v\n[b] ; another\n");
    cr_expect_str_eq(aws_ini_get(ini, "a", "k"), "v");
    cr_expect(aws_ini_has_section(ini, "b"));
    aws_ini_free(ini);
}

Test(aws_ini, empty_input)
{
    aws_ini *ini = parse_ok("");
    cr_expect_not(aws_ini_has_section(ini, "default"));
    aws_ini_free(ini);
    ini = NULL;
    cr_expect_eq(aws_ini_parse(NULL, 0, "x", &ini, &last_err), AWS_CONFIG_OK);
    aws_ini_free(ini);
    cr_expect_null(aws_ini_get(NULL, "a", "b"));
    cr_expect_not(aws_ini_has_section(NULL, "a"));
    aws_ini_free(NULL);
}

Test(aws_ini, errors_name_file_and_line)
{
    expect_parse_error("key = value\n", AWS_CONFIG_ERR_PARSE, "cfg:1:");
    expect_parse_error("[default]\nok = 1\n[broken\n", AWS_CONFIG_ERR_PARSE, "cfg:3:");
    expect_parse_error("[default]\r\nok = 1\r\n\r\nAKIASECRETWITHOUTEQUALS\r\n", AWS_CONFIG_ERR_PARSE,
                       "cfg:4:");
    expect_parse_error("[]\n", AWS_CONFIG_ERR_PARSE, "empty section");
    expect_parse_error("[   ]\n", AWS_CONFIG_ERR_PARSE, "empty section");
    expect_parse_error("[default]\n= SECRETvalue\n", AWS_CONFIG_ERR_PARSE, "empty key");
    expect_parse_error("[default] junk\n", AWS_CONFIG_ERR_PARSE, "after section");
}

Test(aws_ini, nul_byte_rejected)
{
    static const char text[] = "[default]\nkey = va\0lue\n";
    aws_ini *ini = NULL;
    cr_expect_eq(aws_ini_parse(text, sizeof text - 1, "cfg", &ini, &last_err),
                 AWS_CONFIG_ERR_PARSE);
    cr_expect(strstr(err, "cfg:2:") != NULL, "%s", err);
    cr_expect_null(ini);
}

Test(aws_ini, value_length_limit)
{
    char *text = malloc(AWS_INI_MAX_VALUE + 64);
    cr_assert_not_null(text);
    int n = sprintf(text, "[default]\naws_secret_access_key = ");
    memset(text + n, 'S', AWS_INI_MAX_VALUE);
    text[n + AWS_INI_MAX_VALUE] = '\0';
    aws_ini *ini = parse_ok(text);
    cr_expect_eq(strlen(aws_ini_get(ini, "default", "aws_secret_access_key")), AWS_INI_MAX_VALUE);
    aws_ini_free(ini);

    strcpy(text + n + AWS_INI_MAX_VALUE, "S\n");
    expect_parse_error(text, AWS_CONFIG_ERR_LIMIT, "cfg:2: value of 'aws_secret_access_key'");
    cr_expect_null(strstr(err, "SSSS"), "value leaked into \"%s\"", err);
    free(text);
}

Test(aws_ini, file_size_limit)
{
    const size_t n = AWS_INI_MAX_FILE + 1;
    char *text = malloc(n);
    cr_assert_not_null(text);
    memset(text, '\n', n);
    aws_ini *ini = NULL;
    cr_expect_eq(aws_ini_parse(text, n, "big", &ini, &last_err), AWS_CONFIG_ERR_LIMIT);
    cr_expect(strstr(err, "big") != NULL, "%s", err);
    cr_expect_eq(aws_ini_parse(text, n - 1, "big", &ini, &last_err), AWS_CONFIG_OK);
    aws_ini_free(ini);
    free(text);
}

Test(aws_ini, many_sections_parse_fast)
{
    /* ~100k one-line sections: lookups stay linear, parsing does not go quadratic. */
    const size_t per = 10;
    const size_t count = AWS_INI_MAX_FILE / per - 1;
    char *text = malloc(count * per + 1);
    cr_assert_not_null(text);
    for (size_t i = 0; i < count; i++)
        memcpy(text + i * per, (i % 2) ? "[s]\nk = 1\n" : "[t]\nk = 2\n", per);
    text[count * per] = '\0';
    aws_ini *ini = parse_ok(text);
    cr_expect_str_eq(aws_ini_get(ini, "s", "k"), "1");
    cr_expect_str_eq(aws_ini_get(ini, "t", "k"), "2");
    aws_ini_free(ini);
    free(text);
}

/* ---- resolution ------------------------------------------------------------- */

static const char creds_file[] = "[default]\n"
                                 "aws_access_key_id = AKIAFILEDEFAULT\n"
                                 "aws_secret_access_key = SECRETfiledefault\n"
                                 "[dev]\n"
                                 "aws_access_key_id = AKIAFILEDEV\n"
                                 "aws_secret_access_key = SECRETfiledev\n"
                                 "aws_session_token = TOKENfiledev\n";

static const char config_file[] = "[default]\n"
                                  "region = eu-west-1\n"
                                  "[profile dev]\n"
                                  "region = us-west-2\n"
                                  "endpoint_url = http://127.0.0.1:9000\n"
                                  "s3 =\n"
                                  "  addressing_style = path\n"
                                  "[profile cfgonly]\n"
                                  "aws_access_key_id = AKIACFGONLY\n"
                                  "aws_secret_access_key = SECRETcfgonly\n"
                                  "region = ca-central-1\n"
                                  "[profile sso]\n"
                                  "sso_session = corp\n"
                                  "sso_account_id = 123456789012\n";

TestSuite(aws_resolve, .init = setup_home, .fini = teardown_home);

/* The shared credentials and config files above, in their usual places. */
static void write_shared_files(void)
{
    write_file(".aws/credentials", creds_file);
    write_file(".aws/config", config_file);
}

/* A key pair in the environment. */
static void set_env_keys(void)
{
    set_env("AWS_ACCESS_KEY_ID", "AKIAENV");
    set_env("AWS_SECRET_ACCESS_KEY", "SECRETenv");
}

/* Resolve with o, which must succeed; the caller frees the result. */
static aws_credentials resolve_ok(const aws_resolve_opts *o)
{
    aws_credentials c;
    cr_assert_eq(resolve(o, &c), AWS_CONFIG_OK, "%s", err);
    return c;
}

/* Resolve with o into c, which must fail with want and a message holding needle. */
static void expect_resolve_error(const aws_resolve_opts *o, aws_credentials *c,
                                 aws_config_err want, const char *needle)
{
    const aws_config_err rc = resolve(o, c);
    cr_expect_eq(rc, want, "resolve: got %d want %d (%s)", rc, want, err);
    cr_expect(strstr(err, needle) != NULL, "message \"%s\" lacks \"%s\"", err, needle);
}

/* o resolves (which must succeed) to region want, or to endpoint want. */
static void expect_region(const aws_resolve_opts *o, const char *want, const char *why)
{
    aws_credentials c = resolve_ok(o);
    cr_expect_str_eq(c.region, want, "%s", why);
    aws_credentials_free(&c);
}

static void expect_endpoint(const aws_resolve_opts *o, const char *want)
{
    aws_credentials c = resolve_ok(o);
    cr_expect_str_eq(c.endpoint_url, want);
    aws_credentials_free(&c);
}

Test(aws_resolve, environment_first)
{
    write_shared_files();
    set_env_keys();
    set_env("AWS_SESSION_TOKEN", "TOKENenv");
    aws_resolve_opts o = opts_default();
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAENV");
    cr_expect_str_eq(c.secret_access_key, "SECRETenv");
    cr_expect_str_eq(c.session_token, "TOKENenv");
    cr_expect_str_eq(c.source, "environment");
    cr_expect_str_eq(c.region, "eu-west-1", "region still from the default profile");
    cr_expect_null(c.endpoint_url);
    cr_expect_not(c.anonymous);
    aws_credentials_free(&c);
    cr_expect_null(c.access_key_id);
}

Test(aws_resolve, env_beats_aws_profile_but_not_cli_profile)
{
    write_shared_files();
    set_env_keys();
    set_env("AWS_PROFILE", "dev");
    aws_resolve_opts o = opts_default();
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAENV", "as the AWS CLI: env keys beat AWS_PROFILE");
    cr_expect_null(c.session_token);
    cr_expect_str_eq(c.region, "us-west-2", "but AWS_PROFILE picks the region");
    cr_expect_str_eq(c.endpoint_url, "http://127.0.0.1:9000");
    aws_credentials_free(&c);

    o.profile = "dev"; /* --profile dev */
    c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAFILEDEV");
    cr_expect_str_eq(c.secret_access_key, "SECRETfiledev");
    cr_expect_str_eq(c.session_token, "TOKENfiledev");
    cr_expect_str_eq(c.source, "credentials file");
    aws_credentials_free(&c);
}

Test(aws_resolve, default_profile_from_credentials_file)
{
    write_file(".aws/credentials", creds_file);
    aws_resolve_opts o = opts_default();
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAFILEDEFAULT");
    cr_expect_str_eq(c.source, "credentials file");
    cr_expect_null(c.session_token);
    cr_expect_str_eq(c.region, "us-east-1", "no config file: the default region");
    aws_credentials_free(&c);
}

Test(aws_resolve, keys_from_config_file)
{
    write_shared_files();
    aws_resolve_opts o = opts_default();
    o.profile = "cfgonly";
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIACFGONLY");
    cr_expect_str_eq(c.source, "config file");
    cr_expect_str_eq(c.region, "ca-central-1");
    aws_credentials_free(&c);
}

Test(aws_resolve, credentials_file_beats_config_file)
{
    write_file(".aws/credentials", "[both]\naws_access_key_id = AKIACRED\n"
                                   "aws_secret_access_key = SECRETcred\nregion = sa-east-1\n");
    write_file(".aws/config", "[profile both]\naws_access_key_id = AKIACFG\n"
                              "aws_secret_access_key = SECRETcfg\nregion = af-south-1\n");
    set_env("AWS_PROFILE", "both");
    aws_resolve_opts o = opts_default();
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIACRED");
    cr_expect_str_eq(c.region, "sa-east-1", "botocore merges, credentials file wins");
    aws_credentials_free(&c);
}

Test(aws_resolve, profile_default_spelled_as_profile)
{
    write_file(".aws/config", "[profile default]\naws_access_key_id = AKIAPD\n"
                              "aws_secret_access_key = SECRETpd\nregion = eu-north-1\n");
    aws_resolve_opts o = opts_default();
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAPD");
    cr_expect_str_eq(c.region, "eu-north-1");
    aws_credentials_free(&c);
}

Test(aws_resolve, region_order)
{
    write_shared_files();
    aws_resolve_opts o = opts_default();
    expect_region(&o, "eu-west-1", "profile region");
    set_env("AWS_DEFAULT_REGION", "ap-northeast-1");
    expect_region(&o, "ap-northeast-1", "AWS_DEFAULT_REGION beats the profile");
    set_env("AWS_REGION", "ap-southeast-2");
    expect_region(&o, "ap-southeast-2", "AWS_REGION beats AWS_DEFAULT_REGION");
    o.region = "me-south-1";
    expect_region(&o, "me-south-1", "--region beats everything");
}

Test(aws_resolve, empty_variables_count_as_unset)
{
    write_file(".aws/credentials", creds_file);
    set_env("AWS_ACCESS_KEY_ID", "");
    set_env("AWS_SECRET_ACCESS_KEY", "");
    set_env("AWS_REGION", "");
    set_env("AWS_PROFILE", "");
    aws_resolve_opts o = opts_default();
    o.region = "";
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAFILEDEFAULT");
    cr_expect_str_eq(c.region, "us-east-1");
    aws_credentials_free(&c);
}

Test(aws_resolve, endpoint_order)
{
    write_shared_files();
    aws_resolve_opts o = opts_default();
    o.profile = "dev";
    expect_endpoint(&o, "http://127.0.0.1:9000");
    set_env("AWS_ENDPOINT_URL", "http://global:1");
    expect_endpoint(&o, "http://global:1");
    set_env("AWS_ENDPOINT_URL_S3", "http://s3only:2");
    expect_endpoint(&o, "http://s3only:2");
}

Test(aws_resolve, anonymous_skips_credentials_but_not_region)
{
    write_file(".aws/config", config_file);
    set_env_keys();
    aws_resolve_opts o = opts_default();
    o.no_sign_request = true;
    o.profile = "dev";
    aws_credentials c = resolve_ok(&o);
    cr_expect(c.anonymous);
    cr_expect_str_eq(c.source, "anonymous");
    cr_expect_null(c.access_key_id);
    cr_expect_null(c.secret_access_key);
    cr_expect_null(c.session_token);
    cr_expect_str_eq(c.region, "us-west-2");
    aws_credentials_free(&c);
}

Test(aws_resolve, anonymous_without_any_files)
{
    aws_resolve_opts o = opts_default();
    o.no_sign_request = true;
    aws_credentials c = resolve_ok(&o);
    cr_expect(c.anonymous);
    cr_expect_str_eq(c.region, "us-east-1");
    aws_credentials_free(&c);
}

Test(aws_resolve, no_credentials_anywhere)
{
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_NOT_FOUND, "no AWS credentials");
    cr_expect_null(c.region, "output left empty on failure");

    write_file(".aws/config", config_file); /* a default profile with only a region */
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_NOT_FOUND, "'default'");
}

Test(aws_resolve, missing_named_profile)
{
    write_shared_files();
    aws_resolve_opts o = opts_default();
    o.profile = "nosuch";
    aws_credentials c;
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_PROFILE, "'nosuch'");
    cr_expect(strstr(err, ".aws/credentials") != NULL, "%s", err);

    o.profile = NULL;
    set_env("AWS_PROFILE", "alsonot");
    set_env_keys();
    cr_expect_eq(resolve(&o, &c), AWS_CONFIG_ERR_PROFILE, "a named profile must exist");
    cr_expect(strstr(err, "'alsonot'") != NULL, "%s", err);
    cr_expect_null(strstr(err, "SECRET"), "%s", err);
}

Test(aws_resolve, missing_named_profile_without_files)
{
    aws_resolve_opts o = opts_default();
    o.profile = "dev";
    aws_credentials c;
    cr_expect_eq(resolve(&o, &c), AWS_CONFIG_ERR_PROFILE);
}

Test(aws_resolve, unsupported_profile_kind_is_named)
{
    write_file(".aws/config", config_file);
    aws_resolve_opts o = opts_default();
    o.profile = "sso";
    aws_credentials c;
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_NOT_FOUND, "sso_session");
}

Test(aws_resolve, partial_keys_are_errors_without_secrets)
{
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    set_env("AWS_ACCESS_KEY_ID", "AKIAONLY");
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_NOT_FOUND, "AWS_SECRET_ACCESS_KEY");
    cr_expect_null(strstr(err, "AKIAONLY"), "%s", err);

    n_fake_env = 0;
    set_env("HOME", home);
    write_file(".aws/credentials", "[default]\naws_secret_access_key = SECRETlonely\n");
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_NOT_FOUND, "aws_access_key_id");
    cr_expect(strstr(err, "credentials") != NULL, "names the file: %s", err);
    cr_expect_null(strstr(err, "SECRET"), "%s", err);
}

Test(aws_resolve, file_locations_from_environment)
{
    write_file("creds.ini", "[default]\naws_access_key_id = AKIAALT\naws_secret_access_key = S\n");
    write_file("conf.ini", "[default]\nregion = eu-south-1\n");
    write_file(".aws/credentials", creds_file);
    char conf_path[512];
    snprintf(conf_path, sizeof conf_path, "%s/conf.ini", home);
    set_env("AWS_SHARED_CREDENTIALS_FILE", "~/creds.ini");
    set_env("AWS_CONFIG_FILE", conf_path);
    aws_resolve_opts o = opts_default();
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAALT");
    cr_expect_str_eq(c.region, "eu-south-1");
    aws_credentials_free(&c);
}

Test(aws_resolve, explicit_home_option)
{
    write_file(".aws/credentials", creds_file);
    n_fake_env = 0; /* no HOME in the environment */
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    cr_expect_eq(resolve(&o, &c), AWS_CONFIG_ERR_NOT_FOUND, "no HOME: no files");
    o.home = home;
    c = resolve_ok(&o);
    cr_expect_str_eq(c.access_key_id, "AKIAFILEDEFAULT");
    aws_credentials_free(&c);
}

Test(aws_resolve, malformed_file_named_with_line)
{
    write_file(".aws/credentials", "[default]\naws_access_key_id = AKIA\n"
                                   "aws_secret_access_key SECRETnoequals\n");
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    char want[400];
    snprintf(want, sizeof want, "%s/.aws/credentials:3:", home);
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_PARSE, want);
    cr_expect_null(strstr(err, "SECRET"), "%s", err);
}

Test(aws_resolve, malformed_config_is_an_error_even_with_env_keys)
{
    write_file(".aws/config", "region = x\n");
    set_env_keys();
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_PARSE, "config:1:");
    cr_expect_null(c.access_key_id, "nothing leaks out on failure");
}

Test(aws_resolve, unreadable_files)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/.aws/credentials", home);
    cr_assert_eq(mkdir(dir, 0700), 0);
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_IO, "credentials");
    rmdir(dir);

    /* A FIFO must be refused, not block the caller forever. */
    cr_assert_eq(mkfifo(dir, 0600), 0);
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_IO, "not a regular file");
}

Test(aws_resolve, oversized_file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/.aws/credentials", home);
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, AWS_INI_MAX_FILE + 1), 0);
    close(fd);
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_LIMIT, "credentials");
}

Test(aws_resolve, oversized_environment_value)
{
    char *big = malloc(AWS_INI_MAX_VALUE + 2);
    cr_assert_not_null(big);
    memset(big, 'S', AWS_INI_MAX_VALUE + 1);
    big[AWS_INI_MAX_VALUE + 1] = '\0';
    set_env("AWS_ACCESS_KEY_ID", "AKIAENV");
    set_env("AWS_SECRET_ACCESS_KEY", big);
    aws_resolve_opts o = opts_default();
    aws_credentials c;
    expect_resolve_error(&o, &c, AWS_CONFIG_ERR_LIMIT, "AWS_SECRET_ACCESS_KEY");
    cr_expect_null(strstr(err, "SSSS"), "%s", err);
    free(big);
}

Test(aws_resolve, security_token_legacy_names)
{
    write_file(".aws/credentials", "[default]\naws_access_key_id = A\n"
                                   "aws_secret_access_key = S\naws_security_token = LEGACY\n");
    aws_resolve_opts o = opts_default();
    aws_credentials c = resolve_ok(&o);
    cr_expect_str_eq(c.session_token, "LEGACY");
    aws_credentials_free(&c);
    aws_credentials_free(&c); /* idempotent after the reset */
    aws_credentials_free(NULL);
}
