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

#define LARGE_RANGE   (2u << 20) /* bytes of one large range at most */
#define LATENCY_CONC  4u         /* requests out at once before the waves (at most max_in_flight) */
#define WARM_SAMPLES  16u
#define FRESH_SAMPLES 4u
#define WAVE_ROUNDS   3u         /* a wave sends this many times its level */
#define WAVE_DRAIN_MAX_S 3.0     /* longest a wave waits past the budget for what it has out */
#define MAX_PREFIXES  32u        /* prefixes queued by the listing walk */
#define MAX_SAMPLED_FILES (WARMUP_MAX_FILES + WARMUP_MAX_SMALL_FILES)
#define DELIVERY_LATENCY_SHARE 0.9 /* of a large range's time at most counted as its latency */
/* Ranges of the bandwidth sample: ~8 MiB as 2 MiB ranges of large files,
 * or as one whole small file each. */
#define LARGE_MAX_RANGES MAX_SAMPLED_FILES

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

/* Files of one kind found by the walk, at most cap. */
typedef struct {
    data_file *f;
    size_t n, cap;
    uint64_t bytes;
    /* Full: a larger file replaces the smallest (small files: the bandwidth
     * sample wants bytes); otherwise the first found are kept. */
    bool keep_largest;
} file_set;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static size_t smallest_in(const file_set *set)
{
    size_t k = 0;
    for (size_t i = 1; i < set->n; i++)
        if (set->f[i].size < set->f[k].size)
            k = i;
    return k;
}

/* Where a file of this size would go in set: an index, or set->cap when it
 * would not be taken. */
static size_t slot_for(const file_set *set, uint64_t size)
{
    if (set->n < set->cap)
        return set->n;
    if (!set->keep_largest || set->n == 0)
        return set->cap;
    size_t k = smallest_in(set);
    return size > set->f[k].size ? k : set->cap;
}

static void take_file(file_set *set, size_t at, const store_object_entry *e)
{
    char *key = strdup(e->key);
    char *etag = e->etag && e->etag[0] ? strdup(e->etag) : NULL;
    if (!key || (e->etag && e->etag[0] && !etag)) {
        free(key);
        free(etag);
        return;
    }
    if (at < set->n) {
        set->bytes -= set->f[at].size;
        free(set->f[at].key);
        free(set->f[at].etag);
    } else {
        set->n++;
    }
    set->f[at] = (data_file){key, etag, e->size};
    set->bytes += e->size;
}

static void free_files(data_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].key);
        free(f[i].etag);
    }
}

/* Whether the walk has what it needs: as many large files as are sampled,
 * or a full set of small ones holding a whole bandwidth sample (listing
 * pages are round trips: more would only delay the measurement). */
static bool enough_files(const file_set *large, const file_set *small)
{
    return large->n >= large->cap || (small->n >= small->cap && small->bytes >= WARMUP_BANDWIDTH_BYTES);
}

/* Move set's files to the end of files (at most max in all); free the rest. */
static void append_files(data_file *files, size_t *n_files, size_t max, file_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        if (*n_files < max)
            files[(*n_files)++] = set->f[i];
        else
            free_files(&set->f[i], 1);
    }
    set->n = 0;
}

/* Up to WARMUP_MAX_FILES files of WARMUP_MIN_FILE bytes or more, and with
 * fewer than that up to WARMUP_MAX_SMALL_FILES of WARMUP_MIN_SMALL_FILE or
 * more (large files first in files[], *.parquet first of each size), from
 * at most max_list_pages pages breadth first under prefix. files[] has room
 * for MAX_SAMPLED_FILES. */
static bool find_files(object_store *s, const warmup_config *c, const atomic_bool *cancel,
                       data_file *files, size_t *n_files, sv_error *err)
{
    data_file large_pq_f[WARMUP_MAX_FILES], large_other_f[WARMUP_MAX_FILES];
    data_file small_pq_f[WARMUP_MAX_SMALL_FILES], small_other_f[WARMUP_MAX_SMALL_FILES];
    file_set large_pq = {large_pq_f, 0, WARMUP_MAX_FILES, 0, false};
    file_set large_other = {large_other_f, 0, WARMUP_MAX_FILES, 0, false};
    file_set small_pq = {small_pq_f, 0, WARMUP_MAX_SMALL_FILES, 0, true};
    file_set small_other = {small_other_f, 0, WARMUP_MAX_SMALL_FILES, 0, true};
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
    while (head < tail && pages < c->max_list_pages && !enough_files(&large_pq, &small_pq) &&
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
                if (e->size < WARMUP_MIN_SMALL_FILE)
                    continue;
                const bool parquet = ends_with(e->key, ".parquet");
                file_set *set = e->size >= WARMUP_MIN_FILE ? (parquet ? &large_pq : &large_other)
                                                           : (parquet ? &small_pq : &small_other);
                size_t at = slot_for(set, e->size);
                if (at == set->cap)
                    continue;
                /* Asked only of a file that would be taken: it may look up its table. */
                if (!parquet || !c->sample_ok || c->sample_ok(c->sample_ud, e->key))
                    take_file(set, at, e);
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
        } while (token && pages < c->max_list_pages && !enough_files(&large_pq, &small_pq) &&
                 !cancelled(cancel));
        free(token);
        free(prefix);
    }
    while (head < tail)
        free(queue[head++]);
    append_files(files, n_files, WARMUP_MAX_FILES, &large_pq);
    append_files(files, n_files, WARMUP_MAX_FILES, &large_other);
    const size_t n_large = *n_files;
    /* Enough large files: the sample as it always was, on them alone. */
    const size_t max_small = n_large < WARMUP_MAX_FILES ? n_large + WARMUP_MAX_SMALL_FILES : n_large;
    append_files(files, n_files, max_small, &small_pq);
    append_files(files, n_files, max_small, &small_other);
    uint64_t bytes = 0;
    for (size_t i = 0; i < *n_files; i++)
        bytes += files[i].size;
    if (n_large > 0 || (*n_files > 0 && bytes >= WARMUP_MIN_BANDWIDTH_BYTES))
        return true;
    free_files(files, *n_files);
    *n_files = 0;
    const char *where = c->prefix ? c->prefix : "";
    if (cancelled(cancel))
        return sv_fail(err, STORE_ERR_SHUTDOWN, 0, "cancelled"), false;
    if (!listed)
        return sv_fail(err, last, 0, "cannot list '%s': %s", where, lastmsg), false;
    /* Not a store failure: the listing worked, nothing in it is large enough. */
    if (bytes == 0)
        return sv_fail(err, STORE_ERR_INVALID, 0,
                       "no object of at least %llu bytes within %u listing pages of '%s'",
                       (unsigned long long)WARMUP_MIN_SMALL_FILE, pages, where),
               false;
    return sv_fail(err, STORE_ERR_INVALID, 0,
                   "objects of at least %llu bytes within %u listing pages of '%s' hold %llu bytes in all: "
                   "a bandwidth sample needs %llu",
                   (unsigned long long)WARMUP_MIN_SMALL_FILE, pages, where, (unsigned long long)bytes,
                   (unsigned long long)WARMUP_MIN_BANDWIDTH_BYTES),
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
    size_t next_file; /* the small ranges' turn: every batch goes on where the last stopped */
    uint64_t rng;
    uint64_t bytes_left;
    uint32_t requests_left;
    uint32_t conc;  /* requests out at once in the latency phases */
    int64_t end_ns; /* the budget's end: no wait goes past it */
} sampler;

static void progress(const sampler *sm, const char *what)
{
    if (sm->c->progress)
        sm->c->progress(sm->c->progress_ud, what);
}

/* A block-aligned offset where len bytes fit in a file of size (>= len). */
static uint64_t random_offset(sampler *sm, uint64_t size, uint64_t len)
{
    uint64_t blocks = (size - len) / WARMUP_SMALL + 1;
    return (mix(&sm->rng) % blocks) * WARMUP_SMALL;
}

/* A batch of n small ranges at scattered, block-aligned offsets of the
 * files (in turn); NULL when the budgets do not allow n. */
static get_batch *make_batch(sampler *sm, size_t n, bool fresh)
{
    if (n == 0 || n > sm->requests_left || n * WARMUP_SMALL > sm->bytes_left)
        return NULL;
    get_batch *b = get_batch_new(n, n * WARMUP_SMALL, sm->c->stats);
    if (!b)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        /* Every file is at least WARMUP_MIN_SMALL_FILE, far above a small range. */
        const data_file *f = &sm->files[sm->next_file];
        sm->next_file = (sm->next_file + 1) % sm->n_files;
        get_batch_set(b, i, f->key, f->etag, random_offset(sm, f->size, WARMUP_SMALL), WARMUP_SMALL,
                      i * WARMUP_SMALL, fresh);
    }
    sm->requests_left -= (uint32_t)n;
    sm->bytes_left -= n * WARMUP_SMALL;
    return b;
}

/* The bandwidth batch: about WARMUP_BANDWIDTH_BYTES in ranges of up to
 * LARGE_RANGE, each capped at its file's size, over the files in turn; a
 * file read whole is not read again (the same bytes). Each range's length
 * goes into len[] (room for LARGE_MAX_RANGES). NULL when there is nothing
 * to read or the budgets do not allow it all: a smaller sample than planned
 * would measure less than the files allow. */
static get_batch *make_large_batch(sampler *sm, uint64_t *len, size_t *n_out)
{
    const data_file *file[LARGE_MAX_RANGES];
    uint64_t offset[LARGE_MAX_RANGES];
    size_t n = 0;
    uint64_t total = 0;
    *n_out = 0;
    /* Passes over the files: enough for WARMUP_BANDWIDTH_BYTES from one large file. */
    const size_t steps = sm->n_files * (WARMUP_BANDWIDTH_BYTES / LARGE_RANGE);
    for (size_t k = 0; k < steps && n < LARGE_MAX_RANGES && total < WARMUP_BANDWIDTH_BYTES; k++) {
        const data_file *f = &sm->files[k % sm->n_files];
        const uint64_t l = f->size < LARGE_RANGE ? f->size : LARGE_RANGE;
        if (k >= sm->n_files && l == f->size)
            continue;
        file[n] = f;
        offset[n] = random_offset(sm, f->size, l);
        len[n++] = l;
        total += l;
    }
    if (n == 0 || n > sm->requests_left || total > sm->bytes_left)
        return NULL;
    get_batch *b = get_batch_new(n, total, sm->c->stats);
    if (!b)
        return NULL;
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        get_batch_set(b, i, file[i]->key, file[i]->etag, offset[i], len[i], at, false);
        at += len[i];
    }
    sm->requests_left -= (uint32_t)n;
    sm->bytes_left -= total;
    *n_out = n;
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

/* n small ranges, conc at once; out (may be NULL: a priming round) gets
 * their first-byte times. */
static size_t latency_samples(sampler *sm, bool fresh, size_t n, uint32_t conc, double submit_share,
                              latency_sample *out)
{
    get_batch *b = make_batch(sm, n, fresh);
    if (!b)
        return 0;
    run(sm, b, conc, share(sm, submit_share));
    for (size_t i = 0; out && i < n; i++) {
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
    data_file files[MAX_SAMPLED_FILES];
    size_t n_files = 0;
    progress(&(sampler){.c = c}, "looking for data files");
    if (!find_files(s, c, cancel, files, &n_files, err))
        return false;
    sampler sm = {.s = s, .c = c, .cancel = cancel, .files = files, .n_files = n_files,
                  .rng = 0x5eed, .bytes_left = c->max_bytes, .requests_left = c->max_requests,
                  .end_ns = get_batch_now_ns() + (int64_t)(c->budget_s * 1e9)};
    /* More out at once than the store lets through would time its queue. */
    const uint32_t store_conc = c->max_in_flight ? c->max_in_flight : 1;
    sm.conc = store_conc < LATENCY_CONC ? store_conc : LATENCY_CONC;
    latency_sample warm[WARM_SAMPLES], fresh[FRESH_SAMPLES];
    delivery_sample large[LARGE_MAX_RANGES];
    capacity_wave waves[sizeof wave_levels / sizeof wave_levels[0]];
    wave_request *wave_reqs[sizeof wave_levels / sizeof wave_levels[0]] = {0};
    size_t n_warm = 0, n_fresh = 0, n_large = 0, n_waves = 0;

    /* 1. Open sm.conc connections, then time requests on them. */
    progress(&sm, "latency");
    latency_samples(&sm, false, sm.conc, sm.conc, 0.1, NULL);
    n_warm = latency_samples(&sm, false, WARM_SAMPLES, sm.conc, 0.25, warm);
    /* 2. The same on new connections. */
    progress(&sm, "connect");
    n_fresh = latency_samples(&sm, true, FRESH_SAMPLES, sm.conc, 0.1, fresh);
    double warm_med = 0, warm_p90 = 0;
    profile_latency(warm, n_warm, PROFILE_MIN_LATENCY_SAMPLES, &warm_med, &warm_p90);

    /* 3. Large ranges at once. A range's bytes start flowing about one
     * latency after it is sent: its delivery interval starts there. */
    progress(&sm, "bandwidth");
    uint64_t large_len[LARGE_MAX_RANGES];
    size_t n_ranges = 0;
    get_batch *lb = cancelled(cancel) ? NULL : make_large_batch(&sm, large_len, &n_ranges);
    if (lb) {
        const uint32_t conc = n_ranges < store_conc ? (uint32_t)n_ranges : store_conc;
        /* Small files give more ranges than there are warm connections: a
         * range on a new one would count its handshake as delivery time,
         * so a priming round opens them first (32 whole 100 KB files at
         * wan: 74 Mbit/s of 150 without it, 134-151 with it). */
        if (conc > sm.conc)
            latency_samples(&sm, false, conc, conc, 0.1, NULL);
        run(&sm, lb, conc, share(&sm, 0.4));
        for (size_t i = 0; i < n_ranges; i++) {
            int64_t a, z;
            bool ok = get_batch_result(lb, i, &a, &z);
            /* A range that took less than its latency (jitter, or a fast
             * local server) keeps its last tenth: the bytes still flowed. Not
             * more: ranges at once overlap, so a start too early stretches
             * the union for all of them, where one too late is covered by
             * the others (whole 100 KB files at wan, whose delivery is
             * shorter than the latency: 96-105 Mbit/s of 150 with half the
             * range kept, 137-151 with a tenth). */
            double took = (double)(z - a) / 1e9;
            double shift = warm_med < took * DELIVERY_LATENCY_SHARE ? warm_med : took * DELIVERY_LATENCY_SHARE;
            large[i] = (delivery_sample){(double)a / 1e9 + shift, (double)z / 1e9, large_len[i], ok};
        }
        n_large = n_ranges;
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
        get_batch *wb = make_batch(&sm, n, false);
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
        log_info("warmup: latency %.1f ms (p90 %.1f), connect %.1f ms, %.1f Mbit/s (over %.1f MiB), "
                 "%u in flight suggested",
                 p.latency_s * 1e3, p.latency_p90_s * 1e3, p.connect_s * 1e3, p.bandwidth_Bps * 8 / 1e6,
                 (double)p.bandwidth_bytes / (1 << 20), p.suggested_in_flight);
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
