#include "cli_hint.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_hint[] =
    "usage: sievefs hint MOUNTPOINT[/TABLE] NAME [--where PREDICATE] [--columns A,B,...]\n"
    "                    [--rows FILE:START-END[,FILE:START-END...]] [--table TABLE]\n"
    "       sievefs hint MOUNTPOINT NAME --remove\n"
    "\n"
    "Hands a running mount a selection hint and prints the path of the view it\n"
    "creates, MOUNTPOINT/.sieve/views/NAME. Queries that read the table through\n"
    "the view must select a subset of the hinted rows (see docs/hints.md).\n"
    "A path below the mount point names the hint's table (a Delta table or a\n"
    "directory of Parquet files): its view shows that directory, and the\n"
    "predicate and columns use the table's (logical) column names.\n"
    "\n"
    "options:\n"
    "  --table TABLE       the table's directory relative to the mount (instead\n"
    "                      of giving it in the first argument)\n"
    "  --where PREDICATE   rows to select, e.g. \"l_orderkey IN (7, 42) AND l_tax > 0.05\"\n"
    "  --columns A,B       the columns the query projects (fetched together)\n"
    "  --rows FILE:S-E     file rows [S, E) (0-based, relative to the mount); repeat\n"
    "                      or separate with commas\n"
    "  --remove            remove the hint and its view\n"
    "  --control-dir NAME  the mount's control directory, when it was mounted\n"
    "                      with --control-dir (default .sieve)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 accepted (or removed), 1 rejected or the mount refused it (the\n"
    "reason is printed), 2 usage error.\n";

static const char *control_dir = ".sieve"; /* --control-dir */

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "sievefs hint: error: %s%s%s\n(see sievefs hint --help)\n", msg, arg ? ": " : "",
            arg ? arg : "");
    return 2;
}

/* "path:START-END"; the path may itself contain ':' (the last one splits). */
static int add_rows(json_t *rows, const char *spec)
{
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec)
        return -1;
    char *end;
    errno = 0;
    unsigned long long a = strtoull(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end != '-' || colon[1] == '-')
        return -1;
    const char *bstr = end + 1;
    unsigned long long b = strtoull(bstr, &end, 10);
    if (errno || end == bstr || *end || *bstr == '-' || a > (unsigned long long)INT64_MAX ||
        b > (unsigned long long)INT64_MAX)
        return -1;
    char *path = strndup(spec, (size_t)(colon - spec));
    if (!path)
        return -1;
    json_t *arr = json_object_get(rows, path);
    if (!arr) {
        arr = json_array();
        json_object_set_new(rows, path, arr);
    }
    free(path);
    json_array_append_new(arr, json_pack("[II]", (json_int_t)a, (json_int_t)b));
    return 0;
}

static void print_rejection(const char *dir, const char *name, int err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.error", dir, name);
    FILE *f = fopen(path, "r");
    char msg[4096] = "";
    if (f) {
        size_t n = fread(msg, 1, sizeof msg - 1, f);
        msg[n] = '\0';
        fclose(f);
        while (n && (msg[n - 1] == '\n'))
            msg[--n] = '\0';
    }
    if (msg[0])
        fprintf(stderr, "sievefs hint: rejected: %s\n", msg);
    else
        fprintf(stderr, "sievefs hint: error: cannot write %s/%s.json: %s\n", dir, name, strerror(err));
}

/* The mount a path lies in (the nearest directory holding CONTROL/hints)
 * into mount, and the path below it into table ("" when path is the mount
 * point). False when path is in no sievefs mount. */
static bool split_mount_path(const char *path, char *mount, size_t msz, char *table, size_t tsz)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return false;
    char probe[PATH_MAX + 300];
    for (size_t n = strlen(real);;) {
        snprintf(probe, sizeof probe, "%.*s/%s/hints", (int)n, real, control_dir);
        struct stat st;
        if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(mount, msz, "%.*s", (int)(n ? n : 1), n ? real : "/");
            const char *rest = real + n;
            snprintf(table, tsz, "%s", *rest == '/' ? rest + 1 : rest);
            return true;
        }
        while (n > 0 && real[n - 1] != '/')
            n--;
        if (n <= 1)
            return false;
        n--; /* drop the slash */
    }
}

int cli_hint(int argc, char **argv)
{
    enum { OPT_WHERE = 1000, OPT_COLUMNS, OPT_ROWS, OPT_REMOVE, OPT_TABLE, OPT_CONTROL };
    static const struct option opts[] = {
        {"table", required_argument, NULL, OPT_TABLE},
        {"where", required_argument, NULL, OPT_WHERE},
        {"columns", required_argument, NULL, OPT_COLUMNS},
        {"rows", required_argument, NULL, OPT_ROWS},
        {"remove", no_argument, NULL, OPT_REMOVE},
        {"control-dir", required_argument, NULL, OPT_CONTROL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    json_t *doc = json_object();
    json_t *rows = json_object();
    json_t *cols = NULL;
    bool remove_hint = false;
    int rc = 0;
    optind = 1;
    opterr = 0;
    int c;
    while (rc == 0 && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(usage_hint, stdout);
            json_decref(doc);
            json_decref(rows);
            return 0;
        case OPT_WHERE:
            json_object_set_new(doc, "where", json_string(optarg));
            break;
        case OPT_TABLE:
            json_object_set_new(doc, "table", json_string(optarg));
            break;
        case OPT_COLUMNS: {
            if (!cols)
                cols = json_array();
            char *copy = strdup(optarg), *save = NULL;
            for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
                json_array_append_new(cols, json_string(t));
            free(copy);
            break;
        }
        case OPT_ROWS: {
            char *copy = strdup(optarg), *save = NULL;
            for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && rc == 0; t = strtok_r(NULL, ",", &save))
                if (add_rows(rows, t) != 0)
                    rc = usage_error("--rows expects FILE:START-END", t);
            free(copy);
            break;
        }
        case OPT_REMOVE:
            remove_hint = true;
            break;
        case OPT_CONTROL:
            if (!optarg[0] || strchr(optarg, '/') || strlen(optarg) > 255)
                return usage_error("--control-dir expects a file name", optarg);
            control_dir = optarg;
            break;
        default:
            rc = usage_error("unknown option", argv[optind - 1]);
        }
    }
    if (rc == 0 && argc - optind != 2)
        rc = usage_error("expected MOUNTPOINT and NAME", NULL);
    if (rc != 0) {
        json_decref(doc);
        json_decref(rows);
        json_decref(cols);
        return rc;
    }
    const char *name = argv[optind + 1];
    char mp[PATH_MAX], table[PATH_MAX];
    if (!split_mount_path(argv[optind], mp, sizeof mp, table, sizeof table)) {
        /* not (yet) a mount: let the write below say why */
        snprintf(mp, sizeof mp, "%s", argv[optind]);
        table[0] = '\0';
    }
    if (table[0] && !remove_hint) {
        if (json_object_get(doc, "table")) {
            json_decref(doc);
            json_decref(rows);
            json_decref(cols);
            return usage_error("the table is given twice (a path below the mount point and --table)", table);
        }
        json_object_set_new(doc, "table", json_string(table));
    }
    if (!name[0] || strchr(name, '/') || name[0] == '.') {
        json_decref(doc);
        json_decref(rows);
        json_decref(cols);
        return usage_error("NAME must be a plain name (letters, digits, '_', '-', '.')", name);
    }
    char dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s/hints", mp, control_dir);
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    if (remove_hint) {
        json_decref(doc);
        json_decref(rows);
        json_decref(cols);
        if (unlink(path) != 0) {
            fprintf(stderr, "sievefs hint: error: cannot remove %s: %s\n", path, strerror(errno));
            return 1;
        }
        return 0;
    }
    if (json_object_size(rows))
        json_object_set(doc, "rows", rows);
    if (cols)
        json_object_set(doc, "columns", cols);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    json_decref(rows);
    json_decref(cols);
    if (!text) {
        fprintf(stderr, "sievefs hint: error: out of memory\n");
        return 1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        int e = errno;
        free(text);
        fprintf(stderr, "sievefs hint: error: cannot create %s: %s%s\n", path, strerror(e),
                e == ENOENT ? " (is a sievefs mount there?)" : "");
        return 1;
    }
    size_t len = strlen(text), done = 0;
    int err = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        done += (size_t)n;
    }
    free(text);
    if (close(fd) != 0 && !err)
        err = errno;
    if (err) {
        print_rejection(dir, name, err);
        return 1;
    }
    printf("%s/%s/views/%s\n", mp, control_dir, name);
    return 0;
}
