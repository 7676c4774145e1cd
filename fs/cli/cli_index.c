/* `sievefs index`; see cli_index.h. */
#include "cli_index.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "log.h"
#include "page_map_bundle.h"
#include "page_map_index.h"
#include "page_map_remote.h"
#include "plain.h"
#include "sv_file.h"
#include "sv_grow.h"

static const char usage_index[] =
    "usage: sievefs index s3://BUCKET[/PREFIX] (--cache-dir DIR | --to-s3) [OPTIONS]\n"
    "\n"
    "Builds, ahead of time, the page maps a view needs for the column chunks of\n"
    "every Parquet file under PREFIX that have no OffsetIndex (DuckDB's and\n"
    "pyarrow's defaults), by reading their page headers: as many rounds of\n"
    "small reads as the pages take, every chunk of a file at once. A mount that\n"
    "finds a file's maps reads them in one request instead of walking the\n"
    "headers itself, and can sieve chunks of irregular pages it would otherwise\n"
    "serve real. The maps are kept per object version (key, ETag, size): a\n"
    "replaced file is indexed anew, and its old maps are never used for it.\n"
    "Files whose maps exist already are skipped. Keys ending in .parquet are\n"
    "indexed, except those named _* or .* or below such a directory\n"
    "(_delta_log, _sieve).\n"
    "\n"
    "where the maps go (one of):\n"
    "  --cache-dir DIR       into DIR (created if missing), which\n"
    "                        `sievefs mount --cache-dir DIR` reads\n"
    "  --to-s3               next to the table, as PREFIX/_sieve/pagemaps/*/*.pmb,\n"
    "                        which every mount of PREFIX (or of a directory above\n"
    "                        it) reads; needs permission to PUT there\n"
    "\n"
    "options:\n"
    "  --force               index files whose maps exist already\n"
    "  --jobs N              files indexed at once, 1 to 64 (default 8)\n"
    "  --max-connections N   requests in flight, 1 to 1024 (default 64)\n"
    CLI_S3_OPTIONS_HELP
    "  --log-level LEVEL     error, warn, info, debug or trace (default: errors only)\n"
    "  -q, --quiet           no line per file, only the summary\n"
    "  -h, --help            show this help\n"
    "\n"
    CLI_CREDENTIALS_HELP
    "\n"
    "Exit status: 0 when every file was indexed or skipped, 1 when any failed\n"
    "(each named on stderr), 2 on usage errors.\n";

#define MAX_FILES 1000000u       /* keys indexed in one run */
#define MAX_LIST_PAGES 100000u   /* listing pages followed */

typedef struct {
    const char *source;
    const char *cache_dir;
    bool to_s3, force, quiet;
    unsigned jobs, max_connections;
    cli_s3_opts s3;
    int log_level;
} index_opts;

static int parse_args(int argc, char **argv, index_opts *o)
{
    enum { OPT_CACHE_DIR = CLI_OPT_S3_END, OPT_TO_S3, OPT_FORCE, OPT_JOBS, OPT_CONN, OPT_LOG };
    static const struct option longopts[] = {
        CLI_S3_LONGOPTS,
        {"cache-dir", required_argument, NULL, OPT_CACHE_DIR},
        {"to-s3", no_argument, NULL, OPT_TO_S3},
        {"force", no_argument, NULL, OPT_FORCE},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"max-connections", required_argument, NULL, OPT_CONN},
        {"log-level", required_argument, NULL, OPT_LOG},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->jobs = 8;
    o->max_connections = 64;
    o->log_level = -1;
    for (bool first = true;; first = false) {
        int c = cli_getopt(argc, argv, "+hq", longopts, first, &o->source, &o->s3, "index");
        if (c == -1)
            break;
        if (c == CLI_GETOPT_USAGE)
            return 2;
        switch (c) {
        case OPT_CACHE_DIR: o->cache_dir = optarg; break;
        case OPT_TO_S3: o->to_s3 = true; break;
        case OPT_FORCE: o->force = true; break;
        case OPT_JOBS:
            if (!cli_parse_uint(optarg, 1, 64, &o->jobs))
                return cli_usage_error("index", "--jobs '%s': expected a number from 1 to 64", optarg);
            break;
        case OPT_CONN:
            if (!cli_parse_uint(optarg, 1, 1024, &o->max_connections))
                return cli_usage_error("index", "--max-connections '%s': expected a number from 1 to 1024", optarg);
            break;
        case OPT_LOG:
            o->log_level = sv_log_parse_level(optarg);
            if (o->log_level < 0)
                return cli_usage_error("index", "--log-level '%s': expected error, warn, info, debug or trace", optarg);
            break;
        case 'q': o->quiet = true; break;
        case 'h': fputs(usage_index, stdout); return 0;
        default: return cli_bad_option("index", argv);
        }
    }
    if (!o->source)
        return cli_usage_error("index", "index needs s3://BUCKET[/PREFIX]");
    if (!o->cache_dir == !o->to_s3)
        return cli_usage_error("index", "index needs one of --cache-dir DIR and --to-s3");
    if (o->cache_dir) {
        struct stat st;
        if (stat(o->cache_dir, &st) != 0 && errno == ENOENT)
            (void)mkdir(o->cache_dir, 0755); /* created if missing, as by `sievefs mount` */
        if (stat(o->cache_dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return cli_usage_error("index", "--cache-dir '%s': not a directory", o->cache_dir);
        if (access(o->cache_dir, W_OK) != 0)
            return cli_usage_error("index", "--cache-dir '%s': not writable", o->cache_dir);
    }
    return -1;
}

/* Whether key (below prefix) is a Parquet file to index: neither it nor a
 * directory above it (below prefix) is named _* or .* (hidden from table
 * readers, as Spark's and Delta's are). */
static bool wanted(const char *key, size_t prefix_len)
{
    if (!plain_is_parquet_name(key))
        return false;
    for (const char *s = key + prefix_len; s;) {
        if (*s == '_' || *s == '.')
            return false;
        const char *slash = strchr(s, '/');
        s = slash ? slash + 1 : NULL;
    }
    return true;
}

typedef struct {
    char *key, *etag;
    uint64_t size;
} file_entry;

typedef struct {
    file_entry *files;
    size_t n, cap;
    char **have; /* bundle names present (sorted), --to-s3 */
    size_t n_have, cap_have;
} listing;

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->files[i].key), free(l->files[i].etag);
    for (size_t i = 0; i < l->n_have; i++)
        free(l->have[i]);
    free(l->files);
    free(l->have);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every key under prefix (no delimiter), each handed to take(). */
static store_status list_all(object_store *s, const char *prefix, bool (*take)(listing *, const store_object_entry *,
                                                                               size_t),
                             listing *l, size_t skip, sv_error *err)
{
    char *token = NULL;
    store_status st = STORE_OK;
    for (unsigned page = 0; page < MAX_LIST_PAGES; page++) {
        store_listing out;
        st = store_list_page(s, prefix, NULL, token, NULL, &out, err);
        free(token);
        token = NULL;
        if (st != STORE_OK)
            break;
        bool ok = true;
        for (size_t i = 0; i < out.n_objects && ok; i++)
            ok = take(l, &out.objects[i], skip);
        if (ok && out.truncated && out.next_token)
            token = strdup(out.next_token);
        store_listing_free(&out);
        if (!ok) {
            st = (store_status)sv_fail(err, STORE_ERR_NOMEM, 0, "listing %s: out of memory or over %u files",
                                       prefix, MAX_FILES);
            break;
        }
        if (!token)
            break;
    }
    free(token);
    return st;
}

static bool take_file(listing *l, const store_object_entry *e, size_t prefix_len)
{
    if (!wanted(e->key, prefix_len) || !e->etag || !e->etag[0] || e->size == 0)
        return true;
    if (l->n >= MAX_FILES || !sv_grow((void **)&l->files, &l->cap, l->n + 1, sizeof *l->files, 64, MAX_FILES))
        return false;
    file_entry *f = &l->files[l->n];
    f->key = strdup(e->key);
    f->etag = strdup(e->etag);
    f->size = e->size;
    if (!f->key || !f->etag) {
        free(f->key), free(f->etag);
        return false;
    }
    l->n++;
    return true;
}

static bool take_bundle(listing *l, const store_object_entry *e, size_t prefix_len)
{
    const char *rel = e->key + prefix_len, *name = strchr(rel, '/'); /* SHARD/NAME */
    if (!name || strchr(++name, '/'))
        return true; /* not a bundle's key */
    if (!sv_grow((void **)&l->have, &l->cap_have, l->n_have + 1, sizeof *l->have, 64, MAX_FILES))
        return false;
    if (!(l->have[l->n_have] = strdup(name)))
        return false;
    l->n_have++;
    return true;
}

typedef struct {
    const index_opts *o;
    object_store *store;
    const char *bucket, *prefix;
    listing *files;
    atomic_size_t next;
    pthread_mutex_t out_lock; /* guards the counters below and stdout/stderr */
    uint64_t indexed, skipped, nothing, failed, chunks_walked, chunks_failed, requests, bytes;
} index_run;

typedef struct {
    page_map_bundle_writer w;
    const file_entry *f;
} bundle_sink;

static void sink_walk(void *ud, uint32_t rg, uint32_t col, const pq_header_walk *w)
{
    bundle_sink *b = ud;
    page_map_bundle_writer_add(&b->w, b->f->key, b->f->etag, b->f->size, rg, col, w);
}

static bool have_bundle(index_run *r, const char *name)
{
    if (r->o->cache_dir) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", r->o->cache_dir, name);
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode);
    }
    const char *key = name;
    return r->files->n_have > 0 &&
           bsearch(&key, r->files->have, r->files->n_have, sizeof *r->files->have, cmp_str) != NULL;
}

/* Write the bundle where it goes: 0, or -1 with the cause in err. */
static int put_bundle(index_run *r, const char *name, const uint8_t *buf, size_t len, sv_error *err)
{
    if (r->o->to_s3) {
        char key[S3_KEY_MAX + 64], shard[PAGE_MAP_REMOTE_SHARD_LEN + 1];
        page_map_remote_shard(name, shard);
        snprintf(key, sizeof key, "%s%s/%s/%s/%s", r->prefix, PAGE_MAP_REMOTE_DIR, PAGE_MAP_REMOTE_SUBDIR, shard,
                 name);
        return store_put(r->store, key, buf, len, err) == STORE_OK ? 0 : -1;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", r->o->cache_dir, name);
    int e = sv_write_file_atomic(path, buf, len, 0);
    if (e)
        return sv_fail(err, STORE_ERR_INVALID, 0, "cannot write %s: %s", path, strerror(e)), -1;
    return 0;
}

static void index_one(index_run *r, const file_entry *f)
{
    char name[32];
    page_map_bundle_name(f->key, f->etag, f->size, name, sizeof name);
    if (!r->o->force && have_bundle(r, name)) {
        pthread_mutex_lock(&r->out_lock);
        r->skipped++;
        if (!r->o->quiet)
            printf("s3://%s/%s: maps exist already (%s)\n", r->bucket, f->key, name);
        pthread_mutex_unlock(&r->out_lock);
        return;
    }
    sv_error err = {0};
    pq_file_meta *m = NULL;
    page_map_index_counts n = {0};
    bundle_sink sink = {.f = f};
    int rc = page_map_index_read_meta(r->store, f->key, f->etag, f->size, &m, &err);
    if (rc == 0)
        rc = page_map_index_file(r->store, f->key, f->etag, f->size, m, sink_walk, &sink, &n, &err);
    pq_file_meta_free(m);
    size_t len = 0;
    uint8_t *buf = page_map_bundle_writer_finish(&sink.w, &len);
    if (rc == 0 && n.walked > 0 && !buf)
        rc = -1, (void)sv_fail(&err, STORE_ERR_NOMEM, 0, "out of memory or over %u MiB encoding its maps",
                     PAGE_MAP_BUNDLE_MAX >> 20);
    if (rc == 0 && buf)
        rc = put_bundle(r, name, buf, len, &err);
    free(buf);
    pthread_mutex_lock(&r->out_lock);
    r->requests += n.requests;
    r->bytes += n.bytes;
    if (rc != 0) {
        r->failed++;
        fprintf(stderr, "sievefs: error: s3://%s/%s: %s\n", r->bucket, f->key, err.msg);
    } else {
        r->chunks_walked += n.walked;
        r->chunks_failed += n.failed;
        if (n.walked > 0)
            r->indexed++;
        else
            r->nothing++;
        if (!r->o->quiet)
            printf("s3://%s/%s: %u of %u column chunks mapped in %u rounds (%llu requests, %llu bytes)"
                   "%s%s; %u need no map, %u nested, %u not mappable\n",
                   r->bucket, f->key, n.walked, n.chunks, n.rounds, (unsigned long long)n.requests,
                   (unsigned long long)n.bytes, n.walked ? " -> " : "", n.walked ? name : "", n.need_none, n.nested,
                   n.failed);
    }
    fflush(stdout);
    pthread_mutex_unlock(&r->out_lock);
}

static void *worker(void *ud)
{
    index_run *r = ud;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->files->n)
            break;
        index_one(r, &r->files->files[i]);
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cli_index(int argc, char **argv)
{
    index_opts o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0)
        return status;
    sv_log_init(o.log_level >= 0 ? (sv_log_level)o.log_level : SV_LOG_ERROR, false);
    char *bucket = NULL;
    const char *rest;
    sv_error err = {0};
    if (!cli_parse_s3_url(o.source, "s3://BUCKET[/PREFIX]", &bucket, &rest, &err))
        return cli_usage_error("index", "%s", err.msg);
    while (*rest == '/')
        rest++;
    const size_t plen = strlen(rest);
    if (plen > S3_KEY_MAX - 64) {
        free(bucket);
        return cli_usage_error("index", "prefix is longer than %u bytes", S3_KEY_MAX - 64);
    }
    char prefix[S3_KEY_MAX + 2];
    snprintf(prefix, sizeof prefix, "%s%s", rest, plen && rest[plen - 1] != '/' ? "/" : "");

    cli_s3 s3;
    memset(&s3, 0, sizeof s3);
    const cli_s3_tuning tuning = {.max_connections = o.max_connections, .stall_timeout_ms = 10000};
    listing files = {0};
    status = 1;
    if (!cli_s3_connect(&o.s3, bucket, &tuning, &s3, &err)) {
        fprintf(stderr, "sievefs: error: %s\n", err.msg);
        goto out;
    }
    object_store *store = s3_client_store(s3.client);
    const double t0 = now_s();
    char where[S3_KEY_MAX + 600];
    snprintf(where, sizeof where, "s3://%s/%s", bucket, prefix);
    store_status st = list_all(store, prefix, take_file, &files, strlen(prefix), &err);
    if (st == STORE_OK && o.to_s3) {
        char maps[S3_KEY_MAX + 64];
        snprintf(maps, sizeof maps, "%s%s/%s/", prefix, PAGE_MAP_REMOTE_DIR, PAGE_MAP_REMOTE_SUBDIR);
        st = list_all(store, maps, take_bundle, &files, strlen(maps), &err);
        if (files.n_have > 1)
            qsort(files.have, files.n_have, sizeof *files.have, cmp_str);
    }
    if (st != STORE_OK) {
        sv_error why;
        char detail[sizeof err.msg];
        snprintf(detail, sizeof detail, "%s", err.msg);
        cli_s3_explain(&s3, st, where, "listing", "list", detail, &why);
        fprintf(stderr, "sievefs: error: %s\n", why.msg);
        goto out;
    }
    index_run run = {.o = &o, .store = store, .bucket = bucket, .prefix = prefix, .files = &files};
    pthread_mutex_init(&run.out_lock, NULL);
    const unsigned jobs = files.n < o.jobs ? (unsigned)(files.n ? files.n : 1) : o.jobs;
    pthread_t threads[64];
    unsigned started = 0;
    for (; started < jobs; started++)
        if (pthread_create(&threads[started], NULL, worker, &run) != 0)
            break;
    if (started == 0)
        worker(&run);
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&run.out_lock);
    printf("%s: %zu Parquet files: %llu indexed (%llu column chunks mapped, %llu not mappable), %llu with maps "
           "already, %llu needing none, %llu failed; %llu requests, %llu bytes, %.1f s\n",
           where, files.n, (unsigned long long)run.indexed, (unsigned long long)run.chunks_walked,
           (unsigned long long)run.chunks_failed, (unsigned long long)run.skipped, (unsigned long long)run.nothing,
           (unsigned long long)run.failed, (unsigned long long)run.requests, (unsigned long long)run.bytes,
           now_s() - t0);
    status = run.failed ? 1 : 0;
    if (fflush(stdout) != 0)
        status = 1;
out:
    listing_free(&files);
    cli_s3_close(&s3);
    free(bucket);
    return status;
}
