/* The warmup's sampler; see warmup.h. */
#include "warmup.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "get_batch.h"
#include "log.h"
#include "profile_estimate.h"

#define LARGE_RANGE   (2u << 20) /* bytes of one large range */
#define LARGE_RANGES  4u         /* at once (LATENCY_CONC): 8 MiB */
#define LATENCY_CONC  4u         /* requests out at once before the waves (at most max_in_flight) */
#define WARM_SAMPLES  16u
#define FRESH_SAMPLES 4u
#define WAVE_ROUNDS   3u         /* a wave sends this many times its level */
#define WAVE_DRAIN_MAX_S 3.0     /* longest a wave waits past the budget for what it has out */
#define MAX_PREFIXES  32u        /* prefixes queued by the listing walk */

static const uint32_t wave_levels[] = {8, 32, 128, 256, 512};

void warmup_config_defaults(warmup_config *c)
{
    memset(c, 0, sizeof *c);
    c->prefix = "";
    c->budget_s = 5.0;
    c->max_bytes = 25ull << 20;
    c->max_requests = 3200;
    c->max_in_flight = 512;
    c->max_list_pages = 16;
}

static bool cancelled(const atomic_bool *cancel)
{
    return cancel && atomic_load(cancel);
}

/* ---- the files ------------------------------------------------------------------ */

typedef struct {
    char *key;
    char *etag; /* for If-Match; NULL when the listing had none */
    uint64_t size;
} data_file;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool take_file(data_file *files, size_t *n, const store_object_entry *e)
{
    if (*n >= WARMUP_MAX_FILES)
        return false;
    files[*n].key = strdup(e->key);
    files[*n].etag = e->etag && e->etag[0] ? strdup(e->etag) : NULL;
    files[*n].size = e->size;
    if (!files[*n].key) {
        free(files[*n].etag);
        return false;
    }
    (*n)++;
    return true;
}

static void free_files(data_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].key);
        free(f[i].etag);
    }
}

/* Up to WARMUP_MAX_FILES files of WARMUP_MIN_FILE bytes or more, *.parquet
 * first, from at most max_list_pages pages breadth first under prefix. */
static bool find_files(object_store *s, const warmup_config *c, const atomic_bool *cancel,
                       data_file *files, size_t *n_files, sv_error *err)
{
    data_file other[WARMUP_MAX_FILES];
    size_t n_other = 0;
    char *queue[MAX_PREFIXES];
    size_t head = 0, tail = 0;
    *n_files = 0;
    queue[tail++] = strdup(c->prefix ? c->prefix : "");
    if (!queue[0])
        return sv_fail(err, STORE_ERR_NOMEM, 0, "out of memory"), false;
    uint32_t pages = 0;
    bool listed = false;
    store_status last = STORE_OK;
    char lastmsg[sizeof err->msg] = "";
    store_request_opts opts = {.max_attempts = 2, .priority = STORE_PRIO_PREFETCH};
    while (head < tail && pages < c->max_list_pages && *n_files < WARMUP_MAX_FILES &&
           !cancelled(cancel)) {
        char *prefix = queue[head++];
        char *token = NULL;
        do {
            store_listing l;
            sv_error lerr = {0};
            pages++;
            last = store_list_page(s, prefix, "/", token, &opts, &l, &lerr);
            free(token);
            token = NULL;
            if (last != STORE_OK) {
                snprintf(lastmsg, sizeof lastmsg, "%s", lerr.msg);
                break;
            }
            listed = true;
            for (size_t i = 0; i < l.n_objects; i++) {
                const store_object_entry *e = &l.objects[i];
                if (e->size < WARMUP_MIN_FILE)
                    continue;
                if (ends_with(e->key, ".parquet")) {
                    if (!c->sample_ok || c->sample_ok(c->sample_ud, e->key))
                        take_file(files, n_files, e);
                }
                else
                    take_file(other, &n_other, e);
            }
            for (size_t i = 0; i < l.n_prefixes && tail < MAX_PREFIXES; i++) {
                /* The log holds small JSON and checkpoints, not the data. */
                if (ends_with(l.prefixes[i], "_delta_log/"))
                    continue;
                char *q = strdup(l.prefixes[i]);
                if (q)
                    queue[tail++] = q;
            }
            if (l.truncated && l.next_token)
                token = strdup(l.next_token);
            store_listing_free(&l);
        } while (token && pages < c->max_list_pages && *n_files < WARMUP_MAX_FILES &&
                 !cancelled(cancel));
        free(token);
        free(prefix);
    }
    while (head < tail)
        free(queue[head++]);
    for (size_t i = 0; i < n_other; i++) {
        if (*n_files < WARMUP_MAX_FILES) {
            files[(*n_files)++] = other[i];
        } else {
            free(other[i].key);
            free(other[i].etag);
        }
    }
    if (*n_files > 0)
        return true;
    if (cancelled(cancel))
        return sv_fail(err, STORE_ERR_SHUTDOWN, 0, "cancelled"), false;
    if (!listed)
        return sv_fail(err, last, 0, "cannot list '%s': %s", c->prefix ? c->prefix : "", lastmsg), false;
    /* Not a store failure: the listing worked, nothing in it is large enough. */
    return sv_fail(err, STORE_ERR_INVALID, 0,
                   "no object of at least %llu bytes within %u listing pages of '%s'",
                   (unsigned long long)WARMUP_MIN_FILE, pages, c->prefix ? c->prefix : ""),
           false;
}

/* ---- the sampling ------------------------------------------------------------------- */

static uint64_t mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct {
    object_store *s;
    const warmup_config *c;
    const atomic_bool *cancel;
    const data_file *files;
    size_t n_files;
    uint64_t rng;
    uint64_t bytes_left;
    uint32_t requests_left;
    uint32_t conc;  /* requests out at once in the latency and bandwidth phases */
    int64_t end_ns; /* the budget's end: no wait goes past it */
} sampler;

static void progress(const sampler *sm, const char *what)
{
    if (sm->c->progress)
        sm->c->progress(sm->c->progress_ud, what);
}

/* A batch of n ranges of len bytes at scattered, block-aligned offsets of
 * the files (in turn); NULL when the budgets do not allow n. */
static get_batch *make_batch(sampler *sm, size_t n, uint64_t len, bool fresh)
{
    if (n == 0 || n > sm->requests_left || n * len > sm->bytes_left)
        return NULL;
    get_batch *b = get_batch_new(n, n * len, sm->c->stats);
    if (!b)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const data_file *f = &sm->files[i % sm->n_files];
        /* Files are at least WARMUP_MIN_FILE, ranges at most LARGE_RANGE. */
        uint64_t blocks = (f->size - len) / WARMUP_SMALL + 1;
        uint64_t offset = (mix(&sm->rng) % blocks) * WARMUP_SMALL;
        get_batch_set(b, i, f->key, f->etag, offset, len, i * len, fresh);
    }
    sm->requests_left -= (uint32_t)n;
    sm->bytes_left -= n * len;
    return b;
}

/* Run a batch until submit_by (completions until the budget's end). */
static int64_t run(sampler *sm, get_batch *b, uint32_t conc, int64_t submit_by)
{
    if (submit_by > sm->end_ns)
        submit_by = sm->end_ns;
    return get_batch_run(b, sm->s, conc, submit_by, sm->end_ns, sm->cancel);
}

/* The share of what is left of the budget from now. */
static int64_t share(const sampler *sm, double f)
{
    int64_t t = get_batch_now_ns();
    return t + (int64_t)((double)(sm->end_ns - t) * f);
}

static size_t latency_samples(sampler *sm, bool fresh, size_t n, double submit_share,
                              latency_sample *out)
{
    get_batch *b = make_batch(sm, n, WARMUP_SMALL, fresh);
    if (!b)
        return 0;
    run(sm, b, sm->conc, share(sm, submit_share));
    for (size_t i = 0; i < n; i++) {
        int64_t a, z;
        bool ok = get_batch_result(b, i, &a, &z);
        out[i] = (latency_sample){ok ? (double)(z - a) / 1e9 : 0, ok};
    }
    get_batch_release(b);
    return n;
}

bool warmup_measure(object_store *s, const warmup_config *c, const atomic_bool *cancel,
                    conn_profile *out, sv_error *err)
{
    memset(out, 0, sizeof *out);
    data_file files[WARMUP_MAX_FILES];
    size_t n_files = 0;
    progress(&(sampler){.c = c}, "looking for data files");
    if (!find_files(s, c, cancel, files, &n_files, err))
        return false;
    sampler sm = {.s = s, .c = c, .cancel = cancel, .files = files, .n_files = n_files,
                  .rng = 0x5eed, .bytes_left = c->max_bytes, .requests_left = c->max_requests,
                  .end_ns = get_batch_now_ns() + (int64_t)(c->budget_s * 1e9)};
    /* More out at once than the store lets through would time its queue. */
    sm.conc = c->max_in_flight < LATENCY_CONC ? (c->max_in_flight ? c->max_in_flight : 1) : LATENCY_CONC;
    latency_sample warm[WARM_SAMPLES], fresh[FRESH_SAMPLES];
    delivery_sample large[LARGE_RANGES];
    capacity_wave waves[sizeof wave_levels / sizeof wave_levels[0]];
    wave_request *wave_reqs[sizeof wave_levels / sizeof wave_levels[0]] = {0};
    size_t n_warm = 0, n_fresh = 0, n_large = 0, n_waves = 0;

    /* 1. Open sm.conc connections, then time requests on them. */
    progress(&sm, "latency");
    latency_sample prime[LATENCY_CONC];
    latency_samples(&sm, false, sm.conc, 0.1, prime);
    n_warm = latency_samples(&sm, false, WARM_SAMPLES, 0.25, warm);
    /* 2. The same on new connections. */
    progress(&sm, "connect");
    n_fresh = latency_samples(&sm, true, FRESH_SAMPLES, 0.1, fresh);
    double warm_med = 0, warm_p90 = 0;
    profile_latency(warm, n_warm, PROFILE_MIN_LATENCY_SAMPLES, &warm_med, &warm_p90);

    /* 3. Large ranges at once. A range's bytes start flowing about one
     * latency after it is sent: its delivery interval starts there. */
    progress(&sm, "bandwidth");
    get_batch *lb = cancelled(cancel) ? NULL : make_batch(&sm, LARGE_RANGES, LARGE_RANGE, false);
    if (lb) {
        run(&sm, lb, sm.conc, share(&sm, 0.4));
        for (size_t i = 0; i < LARGE_RANGES; i++) {
            int64_t a, z;
            bool ok = get_batch_result(lb, i, &a, &z);
            /* A range that took under two latencies (a fast local server)
             * gives its first half to the latency: the bytes still flowed. */
            double took = (double)(z - a) / 1e9, shift = warm_med < took / 2 ? warm_med : took / 2;
            large[i] = (delivery_sample){(double)a / 1e9 + shift, (double)z / 1e9, LARGE_RANGE, ok};
        }
        n_large = LARGE_RANGES;
        get_batch_release(lb);
    }

    /* 4. Waves: each level kept in flight for WAVE_ROUNDS times its size. */
    size_t n_levels = 0;
    while (n_levels < sizeof wave_levels / sizeof wave_levels[0] && wave_levels[n_levels] <= c->max_in_flight)
        n_levels++;
    /* The most completions per second a wave got so far (ok over its span):
     * below it the link's round trips limit a wave, at it the server. */
    double best = 0;
    for (size_t k = 0; k < n_levels && !cancelled(cancel); k++) {
        const uint32_t level = wave_levels[k];
        /* The remaining levels share what is left of the budget evenly: a
         * wave sends until its share ends, then waits for what it has out,
         * past the budget's end if need be, by as long as that should take
         * (level / the best throughput so far, plus two latencies, at most
         * WAVE_DRAIN_MAX_S). Requests left running at the server would delay
         * the mount's first queries (measured: a listing took 1.1 s instead
         * of 8 ms right after a warmup on loopback). */
        double drain_s = (best > 0 ? (double)level / best : 0) + 2 * warm_med;
        if (drain_s > WAVE_DRAIN_MAX_S)
            drain_s = WAVE_DRAIN_MAX_S;
        const int64_t submit_by = share(&sm, 1.0 / (double)(n_levels - k));
        const int64_t done_by = sm.end_ns + (int64_t)(drain_s * 1e9);
        size_t n = (size_t)level * WAVE_ROUNDS;
        if (n > sm.requests_left)
            n = sm.requests_left;
        if (n * WARMUP_SMALL > sm.bytes_left)
            n = sm.bytes_left / WARMUP_SMALL;
        if (n < level + PROFILE_MIN_WAVE_SAMPLES)
            break;
        char what[64];
        snprintf(what, sizeof what, "capacity at %u in flight", level);
        progress(&sm, what);
        get_batch *wb = make_batch(&sm, n, WARMUP_SMALL, false);
        wave_request *req = wb ? malloc(n * sizeof *req) : NULL;
        if (!req) {
            if (wb)
                get_batch_release(wb);
            break;
        }
        int64_t first = get_batch_run(wb, sm.s, level, submit_by < sm.end_ns ? submit_by : sm.end_ns, done_by,
                                      sm.cancel);
        size_t sent = 0, ok = 0;
        double last_done = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t a, z;
            bool good = get_batch_result(wb, i, &a, &z);
            if (a == 0)
                continue; /* not sent before the wave's deadline: no sample, not a failure */
            req[sent++] = (wave_request){(double)(a - first) / 1e9, (double)(z - first) / 1e9, good};
            ok += good;
            if (good && req[sent - 1].done_s > last_done)
                last_done = req[sent - 1].done_s;
        }
        get_batch_release(wb);
        const capacity_wave wave = {level, req, sent};
        const double rate = profile_wave_rate(&wave);
        log_debug("warmup: wave of %u in flight: %zu sent, %zu ok, %.1f/s", level, sent, ok, rate);
        const double throughput = last_done > 0 ? (double)ok / last_done : 0;
        wave_reqs[n_waves] = req;
        waves[n_waves++] = wave;
        /* A level that brought less than a tenth more than the best before
         * it: the server is saturated, higher levels would only queue there. */
        if (k > 0 && throughput < best * 1.1) {
            log_debug("warmup: %.0f/s at %u in flight, no gain on %.0f/s: no higher level", throughput, level,
                      best);
            break;
        }
        if (throughput > best)
            best = throughput;
    }

    profile_samples ps = {warm, n_warm, fresh, n_fresh, large, n_large, waves, n_waves};
    profile_estimate(&ps, out);
    out->measured_at_s = (int64_t)time(NULL);
    for (size_t k = 0; k < n_waves; k++)
        free(wave_reqs[k]);
    free_files(files, n_files);
    if (cancelled(cancel)) {
        memset(out, 0, sizeof *out);
        return sv_fail(err, STORE_ERR_SHUTDOWN, 0, "cancelled"), false;
    }
    return true;
}

/* ---- in the background ------------------------------------------------------------------ */

struct warmup {
    pthread_t thread;
    object_store *store;
    warmup_config cfg; /* read-only after start; prefix is owned */
    char *prefix;
    link_profile *lp;
    warmup_done_fn done;
    void *ud;
    atomic_bool cancel;
};

static void *warmup_main(void *arg)
{
    warmup *w = arg;
    conn_profile p;
    sv_error err = {0};
    bool ran = warmup_measure(w->store, &w->cfg, &w->cancel, &p, &err);
    bool ok = ran && p.valid;
    if (ran)
        link_profile_set(w->lp, &p);
    if (ran && !ok)
        snprintf(err.msg, sizeof err.msg, "too few samples succeeded for a profile");
    link_profile_set_state(w->lp, ok ? LINK_WARMUP_DONE : LINK_WARMUP_FAILED);
    if (ok)
        log_info("warmup: latency %.1f ms (p90 %.1f), connect %.1f ms, %.1f Mbit/s, %u in flight suggested",
                 p.latency_s * 1e3, p.latency_p90_s * 1e3, p.connect_s * 1e3, p.bandwidth_Bps * 8 / 1e6,
                 p.suggested_in_flight);
    else
        log_info("warmup: no profile: %s", err.msg);
    if (w->done)
        w->done(w->ud, ok, &p, ok ? NULL : err.msg);
    return NULL;
}

warmup *warmup_start(object_store *s, const warmup_config *c, link_profile *lp, warmup_done_fn done,
                     void *ud)
{
    warmup *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->store = s;
    w->cfg = *c;
    w->prefix = strdup(c->prefix ? c->prefix : "");
    w->cfg.prefix = w->prefix;
    w->lp = lp;
    w->done = done;
    w->ud = ud;
    atomic_init(&w->cancel, false);
    if (!w->prefix) {
        free(w);
        return NULL;
    }
    link_profile_set_state(lp, LINK_WARMUP_RUNNING);
    int rc = pthread_create(&w->thread, NULL, warmup_main, w);
    if (rc != 0) {
        log_warn("warmup: cannot start its thread: %s", strerror(rc));
        link_profile_set_state(lp, LINK_WARMUP_FAILED);
        free(w->prefix);
        free(w);
        return NULL;
    }
    return w;
}

void warmup_stop(warmup *w)
{
    if (!w)
        return;
    atomic_store(&w->cancel, true);
    /* Bounded: the sampler sees the cancel within 100 ms of a wait, and a
     * listing page within its request's own timeout. */
    pthread_join(w->thread, NULL);
    free(w->prefix);
    free(w);
}
