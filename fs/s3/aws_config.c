/* AWS shared config/credentials INI parsing and credential resolution,
 * following botocore's rules (configparser syntax, env > files).
 * Secret values never reach an error message. */
#include "aws_config.h"
#include "sv_grow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>


/* ---- INI model -------------------------------------------------------- */

typedef struct {
    char *key; /* lower-cased */
    char *value;
} ini_entry;

/* Each "[name]" header opens a new section block, even when the name repeats;
 * lookups scan blocks newest first, which makes later keys win without an
 * O(n^2) merge on insert. */
typedef struct {
    char *name;
    size_t first_entry;
    size_t n_entries;
} ini_section;

struct aws_ini {
    ini_section *sections;
    size_t n_sections, cap_sections;
    ini_entry *entries;
    size_t n_entries, cap_entries;
};

/* Overwrite a possible secret before freeing it so it does not linger in
 * freed heap memory. */
static void free_secret(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}


static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static bool add_section(aws_ini *ini, const char *name, size_t len)
{
    /* Counts are bounded by the input size (AWS_INI_MAX_FILE). */
    if (!sv_grow((void **)&ini->sections, &ini->cap_sections, ini->n_sections + 1, sizeof *ini->sections, 16,
                 AWS_INI_MAX_FILE))
        return false;
    char *copy = dup_range(name, len);
    if (!copy)
        return false;
    ini->sections[ini->n_sections++] =
        (ini_section){ .name = copy, .first_entry = ini->n_entries, .n_entries = 0 };
    return true;
}

static bool add_entry(aws_ini *ini, const char *key, size_t key_len, const char *value,
                      size_t value_len)
{
    if (!sv_grow((void **)&ini->entries, &ini->cap_entries, ini->n_entries + 1, sizeof *ini->entries, 16,
                 AWS_INI_MAX_FILE))
        return false;
    ini_entry e = { dup_range(key, key_len), dup_range(value, value_len) };
    if (!e.key || !e.value) {
        free(e.key);
        free(e.value);
        return false;
    }
    for (char *k = e.key; *k; k++) {
        if (*k >= 'A' && *k <= 'Z')
            *k = (char)(*k - 'A' + 'a');
    }
    ini->entries[ini->n_entries++] = e;
    ini->sections[ini->n_sections - 1].n_entries++;
    return true;
}

void aws_ini_free(aws_ini *ini)
{
    if (!ini)
        return;
    for (size_t i = 0; i < ini->n_sections; i++)
        free(ini->sections[i].name);
    for (size_t i = 0; i < ini->n_entries; i++) {
        free(ini->entries[i].key);
        free_secret(ini->entries[i].value); /* any value may be a key or token */
    }
    free(ini->sections);
    free(ini->entries);
    free(ini);
}

const char *aws_ini_get(const aws_ini *ini, const char *section, const char *key)
{
    if (!ini || !section || !key)
        return NULL;
    for (size_t s = ini->n_sections; s-- > 0;) {
        const ini_section *sec = &ini->sections[s];
        if (strcmp(sec->name, section) != 0)
            continue;
        for (size_t i = sec->first_entry + sec->n_entries; i-- > sec->first_entry;) {
            if (strcasecmp(ini->entries[i].key, key) == 0)
                return ini->entries[i].value;
        }
    }
    return NULL;
}

bool aws_ini_has_section(const aws_ini *ini, const char *section)
{
    if (!ini || !section)
        return false;
    for (size_t s = 0; s < ini->n_sections; s++) {
        if (strcmp(ini->sections[s].name, section) == 0)
            return true;
    }
    return false;
}

/* ---- INI parsing ------------------------------------------------------ */

static bool is_ini_space(char c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* Trim [*start, *end) of INI whitespace. */
static void trim_range(const char **start, const char **end)
{
    while (*start < *end && is_ini_space(**start))
        (*start)++;
    while (*end > *start && is_ini_space((*end)[-1]))
        (*end)--;
}

typedef struct {
    aws_ini *ini;
    const char *filename;
    unsigned line_no;
    sv_error *err;
} ini_parser;

__attribute__((format(printf, 3, 4)))
static aws_config_err parse_fail(const ini_parser *p, aws_config_err code, const char *fmt, ...)
{
    char cause[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    return sv_fail(p->err, code, 0, "%s:%u: %s", p->filename, p->line_no, cause);
}

/* "[name]" with an optional trailing comment. "[profile   x]" is stored as
 * "profile x", the way botocore splits it. */
static aws_config_err parse_section_header(ini_parser *p, const char *line, const char *end)
{
    const char *close = memchr(line, ']', (size_t)(end - line));
    if (!close)
        return parse_fail(p, AWS_CONFIG_ERR_PARSE, "section header is missing ']'");
    const char *after = close + 1;
    trim_range(&after, &end);
    if (after < end && *after != '#' && *after != ';')
        return parse_fail(p, AWS_CONFIG_ERR_PARSE, "unexpected text after section header");

    const char *name = line + 1, *name_end = close;
    trim_range(&name, &name_end);
    size_t name_len = (size_t)(name_end - name);
    if (name_len == 0)
        return parse_fail(p, AWS_CONFIG_ERR_PARSE, "empty section name");
    if (name_len > AWS_INI_MAX_VALUE)
        return parse_fail(p, AWS_CONFIG_ERR_LIMIT, "section name longer than %u bytes",
                          AWS_INI_MAX_VALUE);

    static const char profile_word[] = "profile";
    const size_t word_len = sizeof profile_word - 1;
    bool ok;
    if (name_len > word_len && memcmp(name, profile_word, word_len) == 0 &&
        is_ini_space(name[word_len])) {
        const char *rest = name + word_len;
        trim_range(&rest, &name_end);
        char normalized[sizeof profile_word + AWS_INI_MAX_VALUE + 1];
        const size_t rest_len = (size_t)(name_end - rest);
        memcpy(normalized, "profile ", word_len + 1);
        memcpy(normalized + word_len + 1, rest, rest_len);
        ok = add_section(p->ini, normalized, word_len + 1 + rest_len);
    } else {
        ok = add_section(p->ini, name, name_len);
    }
    return ok ? AWS_CONFIG_OK : parse_fail(p, AWS_CONFIG_ERR_NOMEM, "out of memory");
}

/* "key = value" (or "key: value", as configparser allows). */
static aws_config_err parse_key_value(ini_parser *p, const char *line, const char *end)
{
    if (p->ini->n_sections == 0)
        return parse_fail(p, AWS_CONFIG_ERR_PARSE, "key outside of any [section]");
    const char *delim = line;
    while (delim < end && *delim != '=' && *delim != ':')
        delim++;
    if (delim == end)
        return parse_fail(p, AWS_CONFIG_ERR_PARSE, "expected 'key = value' or '[section]'");
    const char *key = line, *key_end = delim;
    const char *value = delim + 1, *value_end = end;
    trim_range(&key, &key_end);
    trim_range(&value, &value_end);
    const size_t key_len = (size_t)(key_end - key), value_len = (size_t)(value_end - value);
    if (key_len == 0)
        return parse_fail(p, AWS_CONFIG_ERR_PARSE, "empty key before '%c'", *delim);
    if (key_len > AWS_INI_MAX_VALUE)
        return parse_fail(p, AWS_CONFIG_ERR_LIMIT, "key longer than %u bytes", AWS_INI_MAX_VALUE);
    /* The key may be named (it is not secret), but never the value. */
    if (value_len > AWS_INI_MAX_VALUE)
        return parse_fail(p, AWS_CONFIG_ERR_LIMIT, "value of '%.*s' is longer than %u bytes",
                          key_len > 64 ? 64 : (int)key_len, key, AWS_INI_MAX_VALUE);
    if (!add_entry(p->ini, key, key_len, value, value_len))
        return parse_fail(p, AWS_CONFIG_ERR_NOMEM, "out of memory");
    return AWS_CONFIG_OK;
}

aws_config_err aws_ini_parse(const char *text, size_t len, const char *filename, aws_ini **out,
                             sv_error *err)
{
    sv_error_clear(err);
    if (!filename)
        filename = "<config>";
    if (!out)
        return sv_fail(err, AWS_CONFIG_ERR_PARSE, 0, "%s: no output given", filename);
    *out = NULL;
    if (!text && len > 0)
        return sv_fail(err, AWS_CONFIG_ERR_PARSE, 0, "%s: no text given", filename);
    if (len > AWS_INI_MAX_FILE)
        return sv_fail(err, AWS_CONFIG_ERR_LIMIT, 0, "%s: %zu bytes exceeds the %u byte limit",
                    filename, len, AWS_INI_MAX_FILE);

    aws_ini *ini = calloc(1, sizeof *ini);
    if (!ini)
        return sv_fail(err, AWS_CONFIG_ERR_NOMEM, 0, "%s: out of memory", filename);
    ini_parser p = { .ini = ini, .filename = filename, .line_no = 0, .err = err };

    const char *pos = text, *const text_end = text ? text + len : NULL;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        pos += 3; /* UTF-8 byte order mark, as Windows editors write it */

    bool in_value = false;    /* the previous key line may continue on indented lines */
    size_t value_indent = 0;  /* indentation of that key line */
    aws_config_err rc = AWS_CONFIG_OK;
    while (pos && pos < text_end && rc == AWS_CONFIG_OK) {
        p.line_no++;
        /* Lines end at LF, CRLF or a lone CR (Python's universal newlines). */
        const char *line = pos, *end = pos;
        while (end < text_end && *end != '\n' && *end != '\r')
            end++;
        pos = end;
        if (pos < text_end && *pos == '\r')
            pos++;
        if (pos < text_end && *pos == '\n' && (pos == end || pos[-1] == '\r'))
            pos++;

        if (memchr(line, '\0', (size_t)(end - line))) {
            rc = parse_fail(&p, AWS_CONFIG_ERR_PARSE, "NUL byte in line");
            break;
        }
        const char *content = line;
        while (content < end && is_ini_space(*content))
            content++;
        const size_t indent = (size_t)(content - line);
        if (content == end || *content == '#' || *content == ';')
            continue; /* blank or comment */
        if (in_value && indent > value_indent)
            continue; /* continuation, e.g. the "s3 =" nested section: not needed here */

        if (*content == '[') {
            rc = parse_section_header(&p, content, end);
            in_value = false;
        } else {
            rc = parse_key_value(&p, content, end);
            in_value = true;
            value_indent = indent;
        }
    }
    if (rc != AWS_CONFIG_OK) {
        aws_ini_free(ini);
        return rc;
    }
    *out = ini;
    return AWS_CONFIG_OK;
}

/* ---- files ------------------------------------------------------------ */

/* Read a whole regular file of at most AWS_INI_MAX_FILE bytes. A missing file
 * is not an error: *text stays NULL. */
static aws_config_err read_small_file(const char *path, char **text, size_t *len, sv_error *err)
{
    *text = NULL;
    *len = 0;
    /* O_NONBLOCK: a FIFO planted at the path must not hang the mount. */
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return AWS_CONFIG_OK;
        return sv_fail(err, AWS_CONFIG_ERR_IO, 0, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sv_fail(err, AWS_CONFIG_ERR_IO, 0, "%s: not a regular file", path);
    }
    if (st.st_size > (off_t)AWS_INI_MAX_FILE) {
        close(fd);
        return sv_fail(err, AWS_CONFIG_ERR_LIMIT, 0, "%s: larger than %u bytes", path,
                    AWS_INI_MAX_FILE);
    }
    /* st_size is only a hint (the file may grow); read up to one byte past
     * the limit to notice. */
    size_t cap = (size_t)st.st_size + 1, used = 0;
    char *buf = malloc(cap);
    aws_config_err rc = AWS_CONFIG_OK;
    while (buf) {
        if (used == cap) {
            if (cap > AWS_INI_MAX_FILE) {
                rc = sv_fail(err, AWS_CONFIG_ERR_LIMIT, 0, "%s: larger than %u bytes", path,
                          AWS_INI_MAX_FILE);
                break;
            }
            if (!sv_grow((void **)&buf, &cap, cap + 1, 1, cap, AWS_INI_MAX_FILE + 1)) {
                free(buf);
                buf = NULL;
                break;
            }
        }
        const ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = sv_fail(err, AWS_CONFIG_ERR_IO, 0, "%s: read failed: %s", path, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    if (!buf)
        return sv_fail(err, AWS_CONFIG_ERR_NOMEM, 0, "%s: out of memory", path);
    if (rc != AWS_CONFIG_OK) {
        explicit_bzero(buf, used);
        free(buf);
        return rc;
    }
    *text = buf;
    *len = used;
    return AWS_CONFIG_OK;
}

/* Parse the file at path into *ini (NULL when the file does not exist). */
static aws_config_err load_ini(const char *path, aws_ini **ini, sv_error *err)
{
    *ini = NULL;
    if (!path)
        return AWS_CONFIG_OK;
    char *text;
    size_t len;
    aws_config_err rc = read_small_file(path, &text, &len, err);
    if (rc != AWS_CONFIG_OK || !text)
        return rc;
    rc = aws_ini_parse(text, len, path, ini, err);
    explicit_bzero(text, len); /* the file holds secrets */
    free(text);
    return rc;
}

/* ---- resolution ------------------------------------------------------- */

static const char *system_getenv(const char *name)
{
    return getenv(name);
}

typedef struct {
    const aws_resolve_opts *opts;
    const char *(*getenv_fn)(const char *name);
    sv_error *err;
} resolver;

/* An environment variable, with empty treated as unset (as the AWS CLI does). */
static const char *env_value(const resolver *r, const char *name)
{
    const char *v = r->getenv_fn(name);
    return (v && *v) ? v : NULL;
}

/* Where a shared file lives: the override variable (with "~/" expanded), else
 * HOME/.aws/NAME; NULL when neither is known. */
static aws_config_err shared_file_path(const resolver *r, const char *override_var,
                                       const char *default_name, const char *home, char **out)
{
    *out = NULL;
    const char *override = env_value(r, override_var);
    const char *prefix, *rest;
    if (override && override[0] == '~' && override[1] == '/' && home) {
        prefix = home;
        rest = override + 1;
    } else if (override) {
        prefix = "";
        rest = override;
    } else if (home) {
        prefix = home;
        rest = default_name;
    } else {
        return AWS_CONFIG_OK;
    }
    const size_t n = strlen(prefix) + strlen(rest);
    if (n > 4096)
        return sv_fail(r->err, AWS_CONFIG_ERR_LIMIT, 0, "%s: path longer than 4096 bytes",
                    override ? override_var : "HOME");
    *out = malloc(n + 1);
    if (!*out)
        return sv_fail(r->err, AWS_CONFIG_ERR_NOMEM, 0, "out of memory");
    snprintf(*out, n + 1, "%s%s", prefix, rest);
    return AWS_CONFIG_OK;
}

/* Copy a value into the result, bounded like INI values. `what` names the
 * variable or key in the message; the value itself is never shown. */
static aws_config_err take_value(const resolver *r, const char *value, const char *what,
                                 char **out)
{
    *out = NULL;
    if (!value)
        return AWS_CONFIG_OK;
    const size_t n = strnlen(value, AWS_INI_MAX_VALUE + 1);
    if (n > AWS_INI_MAX_VALUE)
        return sv_fail(r->err, AWS_CONFIG_ERR_LIMIT, 0, "%s is longer than %u bytes", what,
                    AWS_INI_MAX_VALUE);
    *out = dup_range(value, n);
    if (!*out)
        return sv_fail(r->err, AWS_CONFIG_ERR_NOMEM, 0, "out of memory");
    return AWS_CONFIG_OK;
}

/* One profile as found in the two files; either section may be absent. */
typedef struct {
    const char *name;
    const aws_ini *creds;       /* credentials file, or NULL */
    const char *creds_path;
    const char *creds_section;  /* NULL when the file lacks [NAME] */
    const aws_ini *config;      /* config file, or NULL */
    const char *config_path;
    const char *config_section; /* NULL when the file lacks the profile */
} profile_view;

/* botocore merges both files; for the same key the credentials file wins. */
static const char *profile_get(const profile_view *pv, const char *key)
{
    const char *v = NULL;
    if (pv->creds_section)
        v = aws_ini_get(pv->creds, pv->creds_section, key);
    if ((!v || !*v) && pv->config_section)
        v = aws_ini_get(pv->config, pv->config_section, key);
    return (v && *v) ? v : NULL;
}

/* Static keys from one section. Returns OK with *found false when the section
 * has no access key; a key id without its secret is an error. */
static aws_config_err credentials_from_section(const resolver *r, const aws_ini *ini,
                                               const char *path, const char *section,
                                               const char *profile, aws_credentials *out,
                                               bool *found)
{
    *found = false;
    if (!ini || !section)
        return AWS_CONFIG_OK;
    const char *id = aws_ini_get(ini, section, "aws_access_key_id");
    const char *secret = aws_ini_get(ini, section, "aws_secret_access_key");
    const char *token = aws_ini_get(ini, section, "aws_session_token");
    if (!token || !*token)
        token = aws_ini_get(ini, section, "aws_security_token"); /* legacy name */
    id = (id && *id) ? id : NULL;
    secret = (secret && *secret) ? secret : NULL;
    if (!id && !secret)
        return AWS_CONFIG_OK;
    if (!id || !secret)
        return sv_fail(r->err, AWS_CONFIG_ERR_NOT_FOUND, 0,
                    "%s: profile '%s' has %s but no %s", path, profile,
                    id ? "aws_access_key_id" : "aws_secret_access_key",
                    id ? "aws_secret_access_key" : "aws_access_key_id");
    aws_config_err rc;
    if ((rc = take_value(r, id, "aws_access_key_id", &out->access_key_id)) != AWS_CONFIG_OK ||
        (rc = take_value(r, secret, "aws_secret_access_key", &out->secret_access_key)) !=
            AWS_CONFIG_OK ||
        (rc = take_value(r, (token && *token) ? token : NULL, "aws_session_token",
                         &out->session_token)) != AWS_CONFIG_OK)
        return rc;
    *found = true;
    return AWS_CONFIG_OK;
}

static aws_config_err credentials_from_env(const resolver *r, aws_credentials *out, bool *found)
{
    *found = false;
    const char *id = env_value(r, "AWS_ACCESS_KEY_ID");
    const char *secret = env_value(r, "AWS_SECRET_ACCESS_KEY");
    if (!id && !secret)
        return AWS_CONFIG_OK;
    if (!id || !secret)
        return sv_fail(r->err, AWS_CONFIG_ERR_NOT_FOUND, 0, "%s is set but %s is not",
                    id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                    id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    const char *token = env_value(r, "AWS_SESSION_TOKEN");
    if (!token)
        token = env_value(r, "AWS_SECURITY_TOKEN");
    aws_config_err rc;
    if ((rc = take_value(r, id, "AWS_ACCESS_KEY_ID", &out->access_key_id)) != AWS_CONFIG_OK ||
        (rc = take_value(r, secret, "AWS_SECRET_ACCESS_KEY", &out->secret_access_key)) !=
            AWS_CONFIG_OK ||
        (rc = take_value(r, token, "AWS_SESSION_TOKEN", &out->session_token)) != AWS_CONFIG_OK)
        return rc;
    *found = true;
    return AWS_CONFIG_OK;
}

/* Explain a profile without static keys: name the unsupported mechanism. */
static aws_config_err no_credentials(const resolver *r, const profile_view *pv)
{
    static const char *const unsupported[] = { "sso_session", "sso_start_url", "role_arn",
                                               "credential_process", "web_identity_token_file" };
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        if (profile_get(pv, unsupported[i]))
            return sv_fail(r->err, AWS_CONFIG_ERR_NOT_FOUND, 0,
                        "profile '%s' uses %s, which is not supported: export "
                        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or use static keys",
                        pv->name, unsupported[i]);
    }
    return sv_fail(r->err, AWS_CONFIG_ERR_NOT_FOUND, 0,
                "no AWS credentials: AWS_ACCESS_KEY_ID is unset and profile '%s' has no "
                "aws_access_key_id in %s or %s (use --no-sign-request for public buckets)",
                pv->name, pv->creds_path ? pv->creds_path : "(no credentials file)",
                pv->config_path ? pv->config_path : "(no config file)");
}

static aws_config_err resolve(const resolver *r, aws_credentials *out, char **creds_path,
                              char **config_path, aws_ini **creds_ini, aws_ini **config_ini)
{
    const aws_resolve_opts *o = r->opts;
    const bool profile_from_cli = o->profile && *o->profile;
    const char *env_profile = env_value(r, "AWS_PROFILE");
    const char *profile = profile_from_cli ? o->profile : env_profile ? env_profile : "default";
    const bool profile_named = profile_from_cli || env_profile;
    aws_config_err rc;

    /* Environment keys beat files unless --profile asked for a profile. */
    bool have_keys = false;
    if (!o->no_sign_request && !profile_from_cli) {
        if ((rc = credentials_from_env(r, out, &have_keys)) != AWS_CONFIG_OK)
            return rc;
        if (have_keys)
            out->source = "environment";
    }

    const char *home = o->home ? o->home : env_value(r, "HOME");
    if ((rc = shared_file_path(r, "AWS_SHARED_CREDENTIALS_FILE", "/.aws/credentials", home,
                               creds_path)) != AWS_CONFIG_OK ||
        (rc = shared_file_path(r, "AWS_CONFIG_FILE", "/.aws/config", home, config_path)) !=
            AWS_CONFIG_OK ||
        (rc = load_ini(*creds_path, creds_ini, r->err)) != AWS_CONFIG_OK ||
        (rc = load_ini(*config_path, config_ini, r->err)) != AWS_CONFIG_OK)
        return rc;

    /* The config file spells profiles "[profile NAME]", except "[default]". */
    char config_section[AWS_INI_MAX_VALUE + 16];
    const bool is_default = strcmp(profile, "default") == 0;
    if (strlen(profile) > AWS_INI_MAX_VALUE)
        return sv_fail(r->err, AWS_CONFIG_ERR_LIMIT, 0, "profile name longer than %u bytes",
                    AWS_INI_MAX_VALUE);
    if (is_default && aws_ini_has_section(*config_ini, "default"))
        snprintf(config_section, sizeof config_section, "default");
    else
        snprintf(config_section, sizeof config_section, "profile %s", profile);

    profile_view pv = {
        .name = profile,
        .creds = *creds_ini,
        .creds_path = *creds_path,
        .creds_section = aws_ini_has_section(*creds_ini, profile) ? profile : NULL,
        .config = *config_ini,
        .config_path = *config_path,
        .config_section = aws_ini_has_section(*config_ini, config_section) ? config_section : NULL,
    };
    if (profile_named && !pv.creds_section && !pv.config_section)
        return sv_fail(r->err, AWS_CONFIG_ERR_PROFILE, 0,
                    "profile '%s' not found in %s or %s", profile,
                    pv.creds_path ? pv.creds_path : "(no credentials file)",
                    pv.config_path ? pv.config_path : "(no config file)");

    if (o->no_sign_request) {
        out->anonymous = true;
        out->source = "anonymous";
    } else if (!have_keys) {
        rc = credentials_from_section(r, pv.creds, pv.creds_path, pv.creds_section, profile, out,
                                      &have_keys);
        if (rc == AWS_CONFIG_OK && have_keys)
            out->source = "credentials file";
        if (rc == AWS_CONFIG_OK && !have_keys) {
            rc = credentials_from_section(r, pv.config, pv.config_path, pv.config_section,
                                          profile, out, &have_keys);
            if (rc == AWS_CONFIG_OK && have_keys)
                out->source = "config file";
        }
        if (rc != AWS_CONFIG_OK)
            return rc;
        if (!have_keys)
            return no_credentials(r, &pv);
    }

    const char *region = (o->region && *o->region) ? o->region : NULL;
    const char *region_from = "--region";
    static const char *const region_vars[] = { "AWS_REGION", "AWS_DEFAULT_REGION" };
    for (size_t i = 0; !region && i < 2; i++) {
        region = env_value(r, region_vars[i]);
        region_from = region_vars[i];
    }
    if (!region) {
        region = profile_get(&pv, "region");
        region_from = "profile region";
    }
    if ((rc = take_value(r, region ? region : "us-east-1", region_from, &out->region)) !=
        AWS_CONFIG_OK)
        return rc;

    /* The S3-specific variable is more precise than the global one. */
    const char *endpoint = env_value(r, "AWS_ENDPOINT_URL_S3");
    const char *endpoint_from = "AWS_ENDPOINT_URL_S3";
    if (!endpoint) {
        endpoint = env_value(r, "AWS_ENDPOINT_URL");
        endpoint_from = "AWS_ENDPOINT_URL";
    }
    if (!endpoint) {
        endpoint = profile_get(&pv, "endpoint_url");
        endpoint_from = "profile endpoint_url";
    }
    return take_value(r, endpoint, endpoint_from, &out->endpoint_url);
}

aws_config_err aws_resolve(const aws_resolve_opts *opts, aws_credentials *out, sv_error *err)
{
    sv_error_clear(err);
    if (!out)
        return sv_fail(err, AWS_CONFIG_ERR_NOT_FOUND, 0, "aws_resolve: no output given");
    memset(out, 0, sizeof *out);
    const aws_resolve_opts no_opts = { 0 };
    if (!opts)
        opts = &no_opts;
    const resolver r = {
        .opts = opts,
        .getenv_fn = opts->getenv_fn ? opts->getenv_fn : system_getenv,
        .err = err,
    };
    char *creds_path = NULL, *config_path = NULL;
    aws_ini *creds_ini = NULL, *config_ini = NULL;
    const aws_config_err rc = resolve(&r, out, &creds_path, &config_path, &creds_ini, &config_ini);
    aws_ini_free(creds_ini);
    aws_ini_free(config_ini);
    free(creds_path);
    free(config_path);
    if (rc != AWS_CONFIG_OK)
        aws_credentials_free(out);
    return rc;
}

void aws_credentials_free(aws_credentials *c)
{
    if (!c)
        return;
    free_secret(c->access_key_id);
    free_secret(c->secret_access_key);
    free_secret(c->session_token);
    free(c->region);
    free(c->endpoint_url);
    memset(c, 0, sizeof *c);
}
