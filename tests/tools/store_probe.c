/* store_probe: N small ranged GETs of one object, K in flight, through
 * sievefs's own S3 client or through a reference client, timed. The driver is
 * scripts/probe-requests (scripts/lib/probe_requests.py), which starts moto
 * and the WAN emulator and alternates the two clients.
 *
 *   store_probe --client sievefs|curl --endpoint URL --bucket B --key K
 *               --size OBJECT_BYTES [--etag ETAG] [-n N] [-k K] [--range BYTES]
 *               [--seed S] [--connects C] [--submit thread|callback]
 *               [--stall-timeout MS]
 *
 * Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (region us-east-1,
 * or AWS_REGION). Prints one JSON line:
 *   {"client":"sievefs","n":1000,"k":64,"seconds":1.23,"rps":813.0,"errors":0,
 *    "cpu_us_per_req":41.2,"attempts":1000,"retries":0}
 * (attempts and retries: sievefs's counters; the reference has none.)
 * cpu_us_per_req is the process's user + system CPU time over the run (both
 * clients' set-up and tear-down included) per request: what the client
 * costs, independent of how loaded the machine is.
 *
 * `curl` is the reference: one curl multi handle driven by
 * curl_multi_socket_action over epoll, K easy handles reused for the whole
 * run (keep-alive, one per connection), the same SigV4 signing and headers
 * as sievefs. It is what a client with no scheduler of its own costs on
 * libcurl. `sievefs` creates an s3_client with an in-flight limit of K and
 * keeps K store_get_async outstanding: from one submitting thread that
 * waits for room (--submit thread, the default: like FUSE readers, every
 * completion wakes another thread), or from the done callback itself
 * (--submit callback: the next GET is submitted on the transfer thread, so
 * the figure is the scheduler and curl without a thread hand-off).
 *
 * Exit status 0 when every GET succeeded, 1 otherwise, 2 on bad usage. */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "aws_config.h"
#include "object_store.h"
#include "s3_client.h"

#define EMPTY_PAYLOAD_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define PROBE_MAX_K 4096
#define PROBE_WAIT_MS 120000 /* a run that makes no progress for this long is abandoned */

static sv_stats probe_stats; /* the sievefs client's counters */

typedef struct {
    const char *client, *endpoint, *bucket, *key, *etag, *region;
    uint64_t size, range;
    unsigned n, k, connects, stall_ms;
    uint64_t seed;
    bool chain; /* --submit callback */
} probe_opts;

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
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static uint64_t next_offset(uint64_t *rng, const probe_opts *o)
{
    /* xorshift64: the same offsets for the same seed in both clients. */
    uint64_t x = *rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rng = x;
    return x % (o->size - o->range + 1);
}

/* ---- sievefs ------------------------------------------------------------ */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    unsigned outstanding; /* guarded by lock */
    unsigned completed;   /* guarded by lock */
    unsigned errors;      /* guarded by lock */
    /* --submit callback: the done callback submits the next GET itself. */
    bool chain;           /* read-only during the run */
    object_store *store;  /* read-only during the run */
    const probe_opts *o;  /* read-only during the run */
    unsigned started;     /* guarded by lock (chain mode) */
    uint64_t rng;         /* guarded by lock (chain mode) */
} probe_window;

typedef struct {
    probe_window *w;
    char *buf;
} probe_slot;

static void probe_get_done(void *ud, store_status st, const char *errmsg);

static store_status probe_submit(probe_window *w, probe_slot *slot, uint64_t offset)
{
    struct iovec iov = {.iov_base = slot->buf, .iov_len = w->o->range};
    store_request_opts ro = {.priority = STORE_PRIO_DEMAND};
    return store_get_async(w->store, w->o->key, w->o->etag, offset, w->o->range, &iov, 1, &ro,
                           probe_get_done, slot);
}

static void probe_get_done(void *ud, store_status st, const char *errmsg)
{
    probe_slot *s = ud;
    probe_window *w = s->w;
    pthread_mutex_lock(&w->lock);
    if (st != STORE_OK) {
        if (w->errors < 5)
            fprintf(stderr, "store_probe: %s: %s\n", store_status_name(st), errmsg);
        w->errors++;
    }
    w->completed++;
    bool again = w->chain && w->started < w->o->n;
    uint64_t offset = 0;
    if (again) {
        w->started++;
        offset = next_offset(&w->rng, w->o);
    } else {
        w->outstanding--;
        pthread_cond_signal(&w->cv);
    }
    pthread_mutex_unlock(&w->lock);
    if (again && probe_submit(w, s, offset) == STORE_OK)
        return;
    if (again) {
        pthread_mutex_lock(&w->lock);
        w->errors++;
        w->completed++;
        w->outstanding--;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->lock);
    }
    free(s->buf);
    free(s);
}

/* Wait on w->cv until pred holds or PROBE_WAIT_MS pass without a change;
 * false on timeout. Called with w->lock held. */
static bool window_wait(probe_window *w, bool (*pred)(const probe_window *, unsigned), unsigned arg)
{
    unsigned seen = w->completed;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += PROBE_WAIT_MS / 1000;
    while (!pred(w, arg)) {
        int rc = pthread_cond_timedwait(&w->cv, &w->lock, &dl);
        if (rc == ETIMEDOUT) {
            if (w->completed == seen)
                return false;
            seen = w->completed;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_sec += PROBE_WAIT_MS / 1000;
        }
    }
    return true;
}

static bool has_room(const probe_window *w, unsigned k) { return w->outstanding < k; }
static bool all_done(const probe_window *w, unsigned n) { return w->completed >= n; }

static int run_sievefs(const probe_opts *o, double *seconds, unsigned *errors)
{
    aws_credentials creds = {
        .access_key_id = getenv("AWS_ACCESS_KEY_ID"),
        .secret_access_key = getenv("AWS_SECRET_ACCESS_KEY"),
        .session_token = getenv("AWS_SESSION_TOKEN"),
        .region = (char *)o->region,
        .source = "environment",
    };
    creds.anonymous = !creds.access_key_id || !creds.secret_access_key;
    s3_client_config cfg = {
        .endpoint = o->endpoint,
        .bucket = o->bucket,
        .creds = &creds,
        .max_connections = o->k,
        .max_connecting = o->connects,
        .connect_timeout_ms = 3000,
        .stall_timeout_ms = o->stall_ms ? o->stall_ms : 10000,
        .retry = RETRY_POLICY_DEFAULT,
        .stats = &probe_stats,
    };
    s3_client *c = NULL;
    sv_error err = {0};
    if (s3_client_create(&cfg, &c, &err) != STORE_OK) {
        fprintf(stderr, "store_probe: %s\n", err.msg);
        return 1;
    }
    probe_window w = {.store = s3_client_store(c), .o = o, .chain = o->chain, .rng = o->seed | 1};
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.cv, NULL);
    bool stuck = false;
    double t0 = now_s();
    unsigned first_wave = o->chain ? (o->k < o->n ? o->k : o->n) : o->n;
    if (o->chain)
        w.started = first_wave; /* before any callback can run */
    for (unsigned i = 0; i < first_wave && !stuck; i++) {
        pthread_mutex_lock(&w.lock);
        stuck = !window_wait(&w, has_room, o->k);
        uint64_t offset = 0;
        if (!stuck) {
            w.outstanding++;
            offset = next_offset(&w.rng, o);
        }
        pthread_mutex_unlock(&w.lock);
        if (stuck)
            break;
        probe_slot *slot = malloc(sizeof *slot);
        char *buf = slot ? malloc(o->range) : NULL;
        if (!buf) {
            free(slot);
            fprintf(stderr, "store_probe: out of memory\n");
            return 1;
        }
        slot->w = &w;
        slot->buf = buf;
        store_status st = probe_submit(&w, slot, offset);
        if (st != STORE_OK) {
            fprintf(stderr, "store_probe: submit: %s\n", store_status_name(st));
            free(buf);
            free(slot);
            pthread_mutex_lock(&w.lock);
            w.outstanding--;
            w.completed++;
            w.errors++;
            pthread_mutex_unlock(&w.lock);
        }
    }
    pthread_mutex_lock(&w.lock);
    if (!stuck)
        stuck = !window_wait(&w, all_done, o->n);
    *errors = w.errors + (stuck ? o->n - w.completed : 0);
    pthread_mutex_unlock(&w.lock);
    *seconds = now_s() - t0;
    if (stuck)
        fprintf(stderr, "store_probe: no progress for %d ms, giving up\n", PROBE_WAIT_MS);
    s3_client_destroy(c);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.lock);
    return 0;
}

/* ---- reference: curl multi, socket_action, epoll ----------------------------- */

typedef struct {
    int epfd;
    CURLM *multi;
    long timeout_ms; /* -1 = none; what curl asked for last */
} ref_loop;

typedef struct {
    CURL *easy;
    struct curl_slist *headers;
    char *buf;
    uint64_t received;
    char range_line[96];
} ref_slot;

static int ref_on_socket(CURL *easy, curl_socket_t fd, int what, void *ud, void *sockp)
{
    (void)easy;
    (void)sockp;
    ref_loop *l = ud;
    struct epoll_event ev = {.data.fd = fd};
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
    return 0;
}

static int ref_on_timer(CURLM *multi, long timeout_ms, void *ud)
{
    (void)multi;
    ((ref_loop *)ud)->timeout_ms = timeout_ms;
    return 0;
}

static size_t ref_on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    ref_slot *s = ud;
    size_t n = size * nmemb;
    /* Copy the bytes as sievefs's scatter does; the reference keeps no data. */
    size_t at = (size_t)(s->received % 4096), take = n < 4096 - at ? n : 4096 - at;
    memcpy(s->buf + at, data, take);
    s->received += n;
    return n;
}

static bool ref_start(ref_loop *l, ref_slot *s, const probe_opts *o, uint64_t off)
{
    snprintf(s->range_line, sizeof s->range_line, "Range: bytes=%" PRIu64 "-%" PRIu64, off,
             off + o->range - 1);
    curl_slist_free_all(s->headers);
    s->headers = curl_slist_append(NULL, "x-amz-content-sha256: " EMPTY_PAYLOAD_SHA256);
    s->headers = curl_slist_append(s->headers, s->range_line);
    if (o->etag) {
        char line[300];
        snprintf(line, sizeof line, "If-Match: %s", o->etag);
        s->headers = curl_slist_append(s->headers, line);
    }
    s->received = 0;
    curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->headers);
    return curl_multi_add_handle(l->multi, s->easy) == CURLM_OK;
}

static int run_curl(const probe_opts *o, double *seconds, unsigned *errors)
{
    const char *id = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
    char url[2048], sigv4[128];
    snprintf(url, sizeof url, "%s/%s/%s", o->endpoint, o->bucket, o->key);
    snprintf(sigv4, sizeof sigv4, "aws:amz:%s:s3", o->region);
    ref_loop l = {.epfd = epoll_create1(EPOLL_CLOEXEC), .multi = curl_multi_init(), .timeout_ms = -1};
    curl_multi_setopt(l.multi, CURLMOPT_SOCKETFUNCTION, ref_on_socket);
    curl_multi_setopt(l.multi, CURLMOPT_SOCKETDATA, &l);
    curl_multi_setopt(l.multi, CURLMOPT_TIMERFUNCTION, ref_on_timer);
    curl_multi_setopt(l.multi, CURLMOPT_TIMERDATA, &l);
    curl_multi_setopt(l.multi, CURLMOPT_MAXCONNECTS, (long)o->k);
    curl_multi_setopt(l.multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)o->k);
    ref_slot *slots = calloc(o->k, sizeof *slots);
    if (!slots)
        return 1;
    for (unsigned i = 0; i < o->k; i++) {
        ref_slot *s = &slots[i];
        s->easy = curl_easy_init();
        s->buf = malloc(4096);
        curl_easy_setopt(s->easy, CURLOPT_URL, url);
        curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
        curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, ref_on_body);
        curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
        curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(s->easy, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(s->easy, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
        if (id && secret) {
            curl_easy_setopt(s->easy, CURLOPT_AWS_SIGV4, sigv4);
            curl_easy_setopt(s->easy, CURLOPT_USERNAME, id);
            curl_easy_setopt(s->easy, CURLOPT_PASSWORD, secret);
        }
    }
    uint64_t rng = o->seed | 1;
    unsigned started = 0, completed = 0, errs = 0;
    double t0 = now_s(), last_progress = t0;
    for (unsigned i = 0; i < o->k && started < o->n; i++, started++)
        ref_start(&l, &slots[i], o, next_offset(&rng, o));
    int running = 0;
    curl_multi_socket_action(l.multi, CURL_SOCKET_TIMEOUT, 0, &running);
    struct epoll_event evs[256];
    while (completed < o->n) {
        int wait = l.timeout_ms < 0 ? 1000 : (int)l.timeout_ms;
        int ne = epoll_wait(l.epfd, evs, 256, wait);
        if (ne <= 0) {
            curl_multi_socket_action(l.multi, CURL_SOCKET_TIMEOUT, 0, &running);
        } else {
            for (int i = 0; i < ne; i++) {
                int mask = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                           (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                           (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
                curl_multi_socket_action(l.multi, evs[i].data.fd, mask, &running);
            }
        }
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(l.multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            ref_slot *s = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            long status = 0;
            curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
            if (m->data.result != CURLE_OK || status != 206 || s->received != o->range) {
                if (errs < 5)
                    fprintf(stderr, "store_probe: reference GET: %s, HTTP %ld, %" PRIu64 " bytes\n",
                            curl_easy_strerror(m->data.result), status, s->received);
                errs++;
            }
            completed++;
            last_progress = now_s();
            curl_multi_remove_handle(l.multi, s->easy);
            if (started < o->n) {
                started++;
                ref_start(&l, s, o, next_offset(&rng, o));
            }
        }
        if (now_s() - last_progress > PROBE_WAIT_MS / 1000.0) {
            fprintf(stderr, "store_probe: no progress for %d ms, giving up\n", PROBE_WAIT_MS);
            errs += o->n - completed;
            break;
        }
    }
    *seconds = now_s() - t0;
    *errors = errs;
    for (unsigned i = 0; i < o->k; i++) {
        curl_multi_remove_handle(l.multi, slots[i].easy);
        curl_easy_cleanup(slots[i].easy);
        curl_slist_free_all(slots[i].headers);
        free(slots[i].buf);
    }
    free(slots);
    curl_multi_cleanup(l.multi);
    close(l.epfd);
    return 0;
}

/* ---- main --------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: store_probe --client sievefs|curl --endpoint URL --bucket B --key K "
                    "--size BYTES [--etag E] [-n N] [-k K] [--range BYTES] [--seed S] "
                    "[--connects C] [--submit thread|callback] [--stall-timeout MS]\n");
}

int main(int argc, char **argv)
{
    probe_opts o = {.n = 1000, .k = 64, .range = 4096, .seed = 1, .region = getenv("AWS_REGION")};
    if (!o.region)
        o.region = "us-east-1";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        i++;
        if (!strcmp(a, "--client"))
            o.client = v;
        else if (!strcmp(a, "--endpoint"))
            o.endpoint = v;
        else if (!strcmp(a, "--bucket"))
            o.bucket = v;
        else if (!strcmp(a, "--key"))
            o.key = v;
        else if (!strcmp(a, "--etag"))
            o.etag = v;
        else if (!strcmp(a, "--size"))
            o.size = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--range"))
            o.range = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-n"))
            o.n = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "-k"))
            o.k = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--seed"))
            o.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--connects"))
            o.connects = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--stall-timeout"))
            o.stall_ms = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--submit") && (!strcmp(v, "thread") || !strcmp(v, "callback")))
            o.chain = !strcmp(v, "callback");
        else {
            usage();
            return 2;
        }
    }
    if (!o.client || !o.endpoint || !o.bucket || !o.key || o.range == 0 || o.size < o.range ||
        o.n == 0 || o.k == 0 || o.k > PROBE_MAX_K) {
        usage();
        return 2;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    double seconds = 0;
    unsigned errors = 0;
    int rc;
    double cpu0 = cpu_s();
    if (!strcmp(o.client, "sievefs"))
        rc = run_sievefs(&o, &seconds, &errors);
    else if (!strcmp(o.client, "curl"))
        rc = run_curl(&o, &seconds, &errors);
    else {
        usage();
        return 2;
    }
    if (rc)
        return rc;
    double cpu = cpu_s() - cpu0;
    printf("{\"client\":\"%s\",\"n\":%u,\"k\":%u,\"seconds\":%.4f,\"rps\":%.1f,\"errors\":%u,"
           "\"cpu_us_per_req\":%.1f,\"attempts\":%" PRIu64 ",\"retries\":%" PRIu64 "}\n",
           o.client, o.n, o.k, seconds, seconds > 0 ? o.n / seconds : 0.0, errors, cpu * 1e6 / o.n,
           STAT_GET(&probe_stats, s3_requests), STAT_GET(&probe_stats, retries));
    return errors ? 1 : 0;
}
