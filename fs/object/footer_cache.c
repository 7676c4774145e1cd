#include "footer_cache.h"

#include <pthread.h>
#include <sys/queue.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define FOOTER_MIN_FILE 12 /* "PAR1" + footer length + "PAR1" */

int parquet_footer_from_tail(const uint8_t *tail, size_t tail_len, uint64_t file_size, parquet_footer *out,
                             uint64_t *need)
{
    memset(out, 0, sizeof *out);
    *need = 0;
    tc_error te;
    memset(&te, 0, sizeof te);
    tc_status st = pq_file_meta_from_tail(tail, tail_len, file_size, &out->meta, need, &te);
    if (st == TC_E_NEED_MORE)
        return 1;
    if (st != TC_OK)
        return sv_fail(&out->err, st == TC_E_NOMEM ? FOOTER_E_NOMEM : FOOTER_E_PARSE, te.offset, "%s", te.msg);
    if (!parquet_layout_from_meta(out->meta, file_size, &out->layout)) {
        pq_file_meta_free(out->meta);
        out->meta = NULL;
        return sv_fail(&out->err, FOOTER_E_NOMEM, 0, "out of memory");
    }
    /* The page index usually sits just before the footer, in this tail:
     * its page starts let the plain path fetch a page-skipping reader's
     * pages alone. Missing them only costs bytes. */
    if (tail_len <= file_size &&
        !parquet_layout_add_pages(&out->layout, out->meta, tail, file_size - tail_len, tail_len))
        log_debug("page starts not kept: out of memory");
    return FOOTER_OK;
}

void parquet_footer_clear(parquet_footer *f)
{
    pq_file_meta_free(f->meta);
    parquet_layout_free(&f->layout);
    memset(f, 0, sizeof *f);
}

/* Handed out when not even an entry can be allocated; never freed. */
static const parquet_footer no_memory = {.meta = NULL, .err = {FOOTER_E_NOMEM, 0, "out of memory"}};
/* What an opener gets when it stops waiting for another's load. */
static const parquet_footer gave_up = {.meta = NULL, .err = {FOOTER_E_READ, 0, "gave up waiting for the footer"}};

typedef struct footer_entry {
    parquet_footer f;              /* first: footer_cache_put finds the entry from it */
    uint64_t id;
    int refs;
    bool loading;                  /* claimed by one thread; others wait on fc->loaded */
    bool detached;                 /* out of the index (a failed read): freed at the last put */
    uint64_t cost;                 /* estimated bytes, counted while unreferenced */
    struct footer_entry *hash_next;
    TAILQ_ENTRY(footer_entry) idle; /* on the idle list iff unreferenced and loaded */
} footer_entry;

struct footer_cache {
    object_io *io;
    uint64_t budget;
    memory_budget *mem;     /* the mount's, charged every entry's cost; NULL: none (set before use) */
    uint64_t tail_bytes;    /* first read of a file's end; 0: parquet_layout_tail_hint */
    /* What was fetched ahead of an open (0: nothing); set before use. */
    uint64_t (*fetched_tail)(void *ud, const object_ref *o);
    void *fetched_tail_ud;
    pthread_mutex_t lock;   /* guards everything below and every entry's fields but f */
    pthread_cond_t loaded;
    footer_entry **buckets;
    size_t nbuckets, count;
    TAILQ_HEAD(idle_list, footer_entry) idle; /* unreferenced entries, most recent first */
    uint64_t idle_bytes;    /* cost of the entries on the idle list */
    uint64_t loads;
};

footer_cache *footer_cache_create(object_io *io, uint64_t budget_bytes, uint64_t tail_bytes)
{
    footer_cache *fc = calloc(1, sizeof *fc);
    if (!fc)
        return NULL;
    fc->nbuckets = 256;
    fc->buckets = calloc(fc->nbuckets, sizeof *fc->buckets);
    if (!fc->buckets) {
        free(fc);
        return NULL;
    }
    fc->io = io;
    fc->budget = budget_bytes;
    fc->tail_bytes = tail_bytes;
    TAILQ_INIT(&fc->idle);
    pthread_mutex_init(&fc->lock, NULL);
    sv_cond_init(&fc->loaded);
    return fc;
}

void footer_cache_share_budget(footer_cache *fc, memory_budget *mb)
{
    fc->mem = mb;
}

static void entry_free(footer_cache *fc, footer_entry *e)
{
    memory_budget_uncharge(fc->mem, e->cost);
    parquet_footer_clear(&e->f);
    free(e);
}

void footer_cache_destroy(footer_cache *fc)
{
    if (!fc)
        return;
    for (size_t i = 0; i < fc->nbuckets; i++)
        for (footer_entry *e = fc->buckets[i], *nx; e; e = nx) {
            nx = e->hash_next;
            entry_free(fc, e);
        }
    free(fc->buckets);
    pthread_mutex_destroy(&fc->lock);
    pthread_cond_destroy(&fc->loaded);
    free(fc);
}

static size_t slot_of(const footer_cache *fc, uint64_t id)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ull;
    return (size_t)((h ^ (h >> 29)) & (fc->nbuckets - 1));
}

/* Lock held. */
static void index_remove(footer_cache *fc, footer_entry *e)
{
    for (footer_entry **pp = &fc->buckets[slot_of(fc, e->id)]; *pp; pp = &(*pp)->hash_next)
        if (*pp == e) {
            *pp = e->hash_next;
            fc->count--;
            return;
        }
}

/* Lock held. Doubling keeps chains short for tables of many files. */
static void index_insert(footer_cache *fc, footer_entry *e)
{
    if (fc->count >= fc->nbuckets * 2) {
        size_t nb = fc->nbuckets * 2;
        footer_entry **b = calloc(nb, sizeof *b);
        if (b) {
            footer_entry **old = fc->buckets;
            size_t ob = fc->nbuckets;
            fc->buckets = b;
            fc->nbuckets = nb;
            for (size_t i = 0; i < ob; i++)
                for (footer_entry *x = old[i], *nx; x; x = nx) {
                    nx = x->hash_next;
                    size_t s = slot_of(fc, x->id);
                    x->hash_next = b[s];
                    b[s] = x;
                }
            free(old);
        }
    }
    size_t s = slot_of(fc, e->id);
    e->hash_next = fc->buckets[s];
    fc->buckets[s] = e;
    fc->count++;
}

static void idle_remove(footer_cache *fc, footer_entry *e)
{
    TAILQ_REMOVE(&fc->idle, e, idle);
    fc->idle_bytes -= e->cost;
}

void footer_cache_set_tail_source(footer_cache *fc, uint64_t (*fetched_tail)(void *ud, const object_ref *o), void *ud)
{
    fc->fetched_tail = fetched_tail;
    fc->fetched_tail_ud = ud;
}

uint64_t footer_cache_tail_len(const footer_cache *fc, uint64_t size)
{
    uint64_t tail = fc->tail_bytes ? fc->tail_bytes : parquet_layout_tail_hint(size);
    return tail < size ? tail : size;
}

/* Read and parse the footer of o into f (no lock held). */
static void load(footer_cache *fc, const object_ref *o, parquet_footer *f, const sv_cancel *opener)
{
    memset(f, 0, sizeof *f);
    if (o->size < FOOTER_MIN_FILE) {
        sv_fail(&f->err, FOOTER_E_PARSE, 0, "%s: too small to be Parquet", o->key);
        return;
    }
    uint64_t tail = fc->fetched_tail ? fc->fetched_tail(fc->fetched_tail_ud, o) : 0;
    if (tail == 0 || tail > o->size)
        tail = footer_cache_tail_len(fc, o->size);
    for (int attempt = 0; attempt < 2; attempt++) {
        uint8_t *buf = malloc((size_t)tail);
        if (!buf) {
            sv_fail(&f->err, FOOTER_E_NOMEM, 0, "%s: out of memory", o->key);
            return;
        }
        /* A read deadline of its own, and the opener's interrupt: given up,
         * it is a failed read, which is not remembered. */
        sv_cancel tok;
        object_io_cancel_init_under(fc->io, &tok, opener);
        ssize_t n = object_read(fc->io, o, o->size - tail, (size_t)tail, buf, &tok);
        if (n != (ssize_t)tail) {
            free(buf);
            sv_fail(&f->err, FOOTER_E_READ, 0, "%s: cannot read the footer", o->key);
            return;
        }
        uint64_t need = 0;
        int r = parquet_footer_from_tail(buf, (size_t)tail, o->size, f, &need);
        free(buf);
        if (r == 1 && need > tail && need <= o->size && attempt == 0) {
            tail = need;
            continue;
        }
        if (r == 1)
            sv_fail(&f->err, FOOTER_E_PARSE, 0, "footer of %llu bytes does not fit the file",
                    (unsigned long long)need);
        if (r != FOOTER_OK) {
            sv_error_prefix(&f->err, "%s", o->key);
            return;
        }
        const byte_span *pi = &f->layout.page_index;
        if (pi->end > pi->start && pi->start < o->size - tail)
            object_prefetch(fc->io, o, pi->start, pi->end, 0, true);
        log_debug("%s: %zu column chunks, %zu page starts, footer at %llu", o->key, f->layout.n_chunks,
                  f->layout.n_page_starts, (unsigned long long)f->layout.footer.start);
        return;
    }
}

/* What an idle footer is taken to cost: the decoded metadata is a few times
 * its thrift bytes. */
static uint64_t cost_of(const parquet_footer *f)
{
    return (f->meta ? (uint64_t)f->meta->footer_len * 4 : 0) + f->layout.n_chunks * (sizeof(byte_span) + 2 * sizeof(uint32_t)) +
           f->layout.n_page_starts * 2 * sizeof(uint64_t) +
           sizeof(footer_entry);
}

const parquet_footer *footer_cache_get(footer_cache *fc, const object_ref *o, const sv_cancel *tok)
{
    pthread_mutex_lock(&fc->lock);
    footer_entry *e = fc->buckets[slot_of(fc, o->id)];
    while (e && e->id != o->id)
        e = e->hash_next;
    if (e) {
        if (e->refs++ == 0 && !e->loading)
            idle_remove(fc, e);
        /* Another opener loads it, within its own read deadline. */
        int w = 0;
        while (e->loading && !w)
            w = sv_cancel_wait(tok, &fc->loaded, &fc->lock);
        if (e->loading) {
            e->refs--; /* the loader holds one: the entry stays */
            pthread_mutex_unlock(&fc->lock);
            return &gave_up;
        }
        pthread_mutex_unlock(&fc->lock);
        return &e->f;
    }
    e = calloc(1, sizeof *e);
    if (!e) {
        pthread_mutex_unlock(&fc->lock);
        return &no_memory;
    }
    e->id = o->id;
    e->refs = 1;
    e->loading = true;
    index_insert(fc, e);
    fc->loads++;
    pthread_mutex_unlock(&fc->lock);
    load(fc, o, &e->f, tok);
    pthread_mutex_lock(&fc->lock);
    e->loading = false;
    e->cost = cost_of(&e->f);
    memory_budget_charge(fc->mem, e->cost);
    if (!e->f.meta && e->f.err.code != FOOTER_E_PARSE) {
        index_remove(fc, e); /* a failed read or allocation: the next open tries again */
        e->detached = true;
    }
    pthread_cond_broadcast(&fc->loaded);
    pthread_mutex_unlock(&fc->lock);
    return &e->f;
}

bool footer_cache_put(footer_cache *fc, const parquet_footer *f)
{
    if (!f || f == &no_memory || f == &gave_up)
        return false;
    footer_entry *e = (footer_entry *)(uintptr_t)f;
    pthread_mutex_lock(&fc->lock);
    if (--e->refs > 0) {
        pthread_mutex_unlock(&fc->lock);
        return false;
    }
    if (e->detached) {
        pthread_mutex_unlock(&fc->lock);
        entry_free(fc, e);
        return true;
    }
    TAILQ_INSERT_HEAD(&fc->idle, e, idle);
    fc->idle_bytes += e->cost;
    footer_entry *evicted = NULL;
    for (footer_entry *x; fc->idle_bytes > fc->budget && (x = TAILQ_LAST(&fc->idle, idle_list));) {
        idle_remove(fc, x);
        index_remove(fc, x);
        x->hash_next = evicted;
        evicted = x;
    }
    pthread_mutex_unlock(&fc->lock);
    while (evicted) {
        footer_entry *nx = evicted->hash_next;
        entry_free(fc, evicted);
        evicted = nx;
    }
    return true;
}

uint64_t footer_cache_loads(footer_cache *fc)
{
    pthread_mutex_lock(&fc->lock);
    uint64_t n = fc->loads;
    pthread_mutex_unlock(&fc->lock);
    return n;
}
