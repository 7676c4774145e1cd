/* s3link_curlref: the curl-multi reference client of scripts/probe-requests
 * for the s3link server: N ranged GETs with K in flight over K keep-alive
 * connections, spread round-robin over several keys (prefixes), timed.
 * Standalone (libcurl only), so it works without the sievefs build; it
 * follows the reference client of tests/tools/store_probe.c (multi handles
 * driven by curl_multi_socket_action on one epoll, K reused easy handles),
 * with requests unsigned (s3link does not check signatures), and one multi
 * handle per 64 connections (see GROUP_CONNS).
 *
 *   s3link_curlref --endpoint URL --bucket B --keys K1[,K2...] --size OBJECT_BYTES
 *                  [-n N] [-k K] [--range BYTES] [--seed S] [--cafile PEM]
 *                  [--no-warm] [--big]
 *
 * Before the clock starts, each of the K connections is opened and used
 * once (one GET each, all at once: the warm-up, reported as warm_seconds),
 * unless --no-warm. --big: one GET of --range bytes at offset 0 of the
 * first key; reports when the first and last body bytes came.
 * Prints one JSON line, e.g.
 *   {"client":"curlref","n":10000,"k":256,"seconds":8.1,"rps":1234.5,"errors":0,
 *    "cpu_s":0.9,"cpu_us_per_req":90.1,"warm_seconds":0.41,"lat_p50_ms":201.2,...}
 * Exit status 0 when every GET succeeded, 1 otherwise, 2 on bad usage.
 *
 * Build: cc -O2 -o s3link_curlref s3link_curlref.c -lcurl
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_K 4096
#define MAX_KEYS 1024
#define WAIT_S 120.0

typedef struct {
    const char *endpoint, *bucket, *cafile;
    char *keys[MAX_KEYS];
    char *urls[MAX_KEYS];
    unsigned nkeys;
    uint64_t size, range, seed;
    unsigned n, k;
    bool warm, big;
} opts;

/* One multi handle per group of at most GROUP_CONNS connections, all on
 * one epoll: libcurl's per-request work grows with the connections one
 * multi handle holds (its connection cache is searched linearly), which
 * would make a single multi handle at K=1024 twice as costly per request
 * as at K=64. */
#define GROUP_CONNS 64
#define MAX_GROUPS (MAX_K / GROUP_CONNS)

typedef struct {
    int epfd;
    unsigned idx;
    CURLM *multi;
    double deadline; /* < 0: no timer */
} group;

typedef struct {
    int epfd;
    group groups[MAX_GROUPS];
    unsigned ngroups;
} loop;

typedef struct {
    CURL *easy;
    struct curl_slist *headers;
    char range_line[96];
    const char *url;
    uint64_t received, expect;
    double started, first_byte;
    group *g;
} slot;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static uint64_t next_rand(uint64_t *rng)
{
    uint64_t x = *rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *rng = x;
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *ud, void *sockp)
{
    (void)easy;
    (void)sockp;
    group *g = ud;
    struct epoll_event ev = {.data.u64 = ((uint64_t)g->idx << 32) | (uint32_t)fd};
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(g->epfd, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    if (epoll_ctl(g->epfd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
        epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev);
    return 0;
}

static double now_s(void);

static int on_timer(CURLM *multi, long timeout_ms, void *ud)
{
    (void)multi;
    group *g = ud;
    g->deadline = timeout_ms < 0 ? -1 : now_s() + (double)timeout_ms / 1000;
    return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    (void)data;
    slot *s = ud;
    size_t n = size * nmemb;
    if (s->received == 0 && n > 0)
        s->first_byte = now_s();
    s->received += n;
    return n;
}

static bool start(slot *s, const opts *o, unsigned i, uint64_t *rng)
{
    uint64_t off = 0;
    if (!o->big && o->size > o->range)
        off = next_rand(rng) % (o->size - o->range + 1);
    snprintf(s->range_line, sizeof s->range_line, "Range: bytes=%" PRIu64 "-%" PRIu64, off, off + o->range - 1);
    s->url = o->urls[i % o->nkeys];
    curl_slist_free_all(s->headers);
    s->headers = curl_slist_append(NULL, s->range_line);
    s->headers = curl_slist_append(s->headers, "Expect:");
    s->received = 0;
    s->first_byte = 0;
    s->expect = o->range;
    s->started = now_s();
    curl_easy_setopt(s->easy, CURLOPT_URL, s->url);
    curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->headers);
    return curl_multi_add_handle(s->g->multi, s->easy) == CURLM_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs `total` GETs, K at a time; latencies (s) into lat when non-NULL.
 * Returns the number of failed GETs. */
static unsigned run(loop *l, slot *slots, const opts *o, unsigned total, unsigned k, uint64_t *rng, double *lat,
                    unsigned *req_counter)
{
    unsigned started = 0, completed = 0, errs = 0;
    double last_progress = now_s();
    for (unsigned i = 0; i < k && started < total; i++, started++)
        start(&slots[i], o, (*req_counter)++, rng);
    int running = 0;
    for (unsigned g = 0; g < l->ngroups; g++)
        curl_multi_socket_action(l->groups[g].multi, CURL_SOCKET_TIMEOUT, 0, &running);
    struct epoll_event evs[512];
    while (completed < total) {
        double now = now_s(), first = -1;
        for (unsigned g = 0; g < l->ngroups; g++) {
            double d = l->groups[g].deadline;
            if (d >= 0 && (first < 0 || d < first))
                first = d;
        }
        int wait = 1000;
        if (first >= 0)
            wait = first <= now ? 0 : (int)((first - now) * 1000) + 1;
        int ne = epoll_wait(l->epfd, evs, 512, wait);
        for (int i = 0; i < ne; i++) {
            int mask = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            group *g = &l->groups[evs[i].data.u64 >> 32];
            curl_multi_socket_action(g->multi, (curl_socket_t)(uint32_t)evs[i].data.u64, mask, &running);
        }
        now = now_s();
        for (unsigned g = 0; g < l->ngroups; g++) {
            if (l->groups[g].deadline >= 0 && l->groups[g].deadline <= now) {
                l->groups[g].deadline = -1;
                curl_multi_socket_action(l->groups[g].multi, CURL_SOCKET_TIMEOUT, 0, &running);
            }
        }
        for (unsigned g = 0; g < l->ngroups; g++) {
            CURLMsg *m;
            int left;
            while ((m = curl_multi_info_read(l->groups[g].multi, &left))) {
                if (m->msg != CURLMSG_DONE)
                    continue;
                slot *s = NULL;
                curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
                long status = 0;
                curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
                double t = now_s();
                if (m->data.result != CURLE_OK || status != 206 || s->received != s->expect) {
                    if (errs < 5)
                        fprintf(stderr, "s3link_curlref: GET %s: %s, HTTP %ld, %" PRIu64 " bytes\n", s->url,
                                curl_easy_strerror(m->data.result), status, s->received);
                    errs++;
                }
                if (lat)
                    lat[completed] = t - s->started;
                completed++;
                last_progress = t;
                curl_multi_remove_handle(s->g->multi, s->easy);
                if (started < total) {
                    started++;
                    start(s, o, (*req_counter)++, rng);
                }
            }
        }
        if (now_s() - last_progress > WAIT_S) {
            fprintf(stderr, "s3link_curlref: no progress for %.0f s, giving up\n", WAIT_S);
            errs += total - completed;
            break;
        }
    }
    return errs;
}

static void usage(void)
{
    fprintf(stderr, "usage: s3link_curlref --endpoint URL --bucket B --keys K1[,K2...] --size BYTES [-n N] [-k K] "
                    "[--range BYTES] [--seed S] [--cafile PEM] [--no-warm] [--big]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    opts o = {.n = 1000, .k = 64, .range = 4096, .seed = 1, .warm = true};
    char *keys = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-warm")) {
            o.warm = false;
            continue;
        }
        if (!strcmp(a, "--big")) {
            o.big = true;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--endpoint"))
            o.endpoint = v;
        else if (!strcmp(a, "--bucket"))
            o.bucket = v;
        else if (!strcmp(a, "--keys"))
            keys = strdup(v);
        else if (!strcmp(a, "--size"))
            o.size = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--range"))
            o.range = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--seed"))
            o.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-n"))
            o.n = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "-k"))
            o.k = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--cafile"))
            o.cafile = v;
        else
            usage();
    }
    if (!o.endpoint || !o.bucket || !keys || !o.size || !o.range || !o.n || !o.k || o.k > MAX_K ||
        o.range > o.size)
        usage();
    for (char *save = NULL, *t = strtok_r(keys, ",", &save); t && o.nkeys < MAX_KEYS; t = strtok_r(NULL, ",", &save))
        o.keys[o.nkeys++] = t;
    if (!o.nkeys)
        usage();
    for (unsigned i = 0; i < o.nkeys; i++) {
        size_t ulen = strlen(o.endpoint) + strlen(o.bucket) + strlen(o.keys[i]) + 3;
        o.urls[i] = malloc(ulen);
        if (!o.urls[i])
            return 1;
        snprintf(o.urls[i], ulen, "%s/%s/%s", o.endpoint, o.bucket, o.keys[i]);
    }
    if (o.big) {
        o.n = 1;
        o.k = 1;
    }
    if (o.k > o.n)
        o.k = o.n;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    static loop l;
    l.epfd = epoll_create1(EPOLL_CLOEXEC);
    l.ngroups = (o.k + GROUP_CONNS - 1) / GROUP_CONNS;
    for (unsigned g = 0; g < l.ngroups; g++) {
        group *gr = &l.groups[g];
        long conns = (long)((o.k - g + l.ngroups - 1) / l.ngroups); /* slots i with i % ngroups == g */
        gr->epfd = l.epfd;
        gr->idx = g;
        gr->deadline = -1;
        gr->multi = curl_multi_init();
        curl_multi_setopt(gr->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(gr->multi, CURLMOPT_SOCKETDATA, gr);
        curl_multi_setopt(gr->multi, CURLMOPT_TIMERFUNCTION, on_timer);
        curl_multi_setopt(gr->multi, CURLMOPT_TIMERDATA, gr);
        curl_multi_setopt(gr->multi, CURLMOPT_MAXCONNECTS, conns);
        curl_multi_setopt(gr->multi, CURLMOPT_MAX_HOST_CONNECTIONS, conns);
    }
    slot *slots = calloc(o.k, sizeof *slots);
    double *lat = calloc(o.n, sizeof *lat);
    if (!slots || !lat)
        return 1;
    for (unsigned i = 0; i < o.k; i++) {
        slot *s = &slots[i];
        s->easy = curl_easy_init();
        s->g = &l.groups[i % l.ngroups];
        curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
        curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
        curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(s->easy, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(s->easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
        curl_easy_setopt(s->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        if (o.cafile)
            curl_easy_setopt(s->easy, CURLOPT_CAINFO, o.cafile);
    }
    uint64_t rng = o.seed | 1;
    unsigned counter = 0, errs = 0;
    double warm = 0;
    if (o.warm && !o.big) {
        /* Open and use every connection once, all at once. */
        opts w = o;
        double t = now_s();
        uint64_t wrng = (o.seed ^ 0x9e3779b97f4a7c15ull) | 1;
        unsigned wc = 0;
        errs += run(&l, slots, &w, o.k, o.k, &wrng, NULL, &wc);
        warm = now_s() - t;
    }
    double c0 = cpu_s(), t0 = now_s();
    errs += run(&l, slots, &o, o.n, o.k, &rng, lat, &counter);
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    qsort(lat, o.n, sizeof *lat, cmp_double);
    printf("{\"client\":\"curlref\",\"n\":%u,\"k\":%u,\"multis\":%u,\"keys\":%u,\"range\":%" PRIu64 ",\"seconds\":%.6f,"
           "\"rps\":%.1f,\"errors\":%u,\"cpu_s\":%.4f,\"cpu_us_per_req\":%.2f,\"warm_seconds\":%.6f,"
           "\"lat_p50_ms\":%.3f,\"lat_p90_ms\":%.3f,\"lat_p99_ms\":%.3f,\"lat_max_ms\":%.3f",
           o.n, o.k, l.ngroups, o.nkeys, o.range, secs, o.n / secs, errs, cpu, cpu / o.n * 1e6, warm, lat[o.n / 2] * 1e3,
           lat[(size_t)(o.n * 0.9)] * 1e3, lat[(size_t)(o.n * 0.99)] * 1e3, lat[o.n - 1] * 1e3);
    if (o.big) {
        double first = slots[0].first_byte - t0;
        double body = secs - first;
        printf(",\"first_byte_s\":%.6f,\"body_s\":%.6f,\"body_mbit_s\":%.3f", first, body,
               body > 0 ? (double)o.range * 8 / body / 1e6 : 0.0);
    }
    printf("}\n");
    for (unsigned i = 0; i < o.k; i++) {
        curl_multi_remove_handle(slots[i].g->multi, slots[i].easy);
        curl_easy_cleanup(slots[i].easy);
        curl_slist_free_all(slots[i].headers);
    }
    free(slots);
    free(lat);
    free(keys);
    for (unsigned g = 0; g < l.ngroups; g++)
        curl_multi_cleanup(l.groups[g].multi);
    close(l.epfd);
    curl_global_cleanup();
    return errs ? 1 : 0;
}
