#include "table_ahead.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "partition_path.h"
#include "prefetch.h"
#include "sv_grow.h"

#define IDLE_WAKE_MS 1000 /* workers wake this often to forget idle tables */
#define DATA_FILES 8      /* files opened that tell whether the reader reads the files' data */
#define DATA_AHEAD_FLOOR (8u << 20) /* data ahead allowed past what the reader has read */
#define TAIL_MARGIN 4096u /* a learned tail is a quarter and this much longer, rounded to it */

typedef struct {
    char *key;
    uint64_t hash; /* of key */
    uint64_t ino, size;
    char etag[S3_ETAG_MAX + 1];
    bool opened, requested;
    uint32_t tail;       /* bytes of its end fetched ahead (when requested) */
    bool data_started;   /* its known columns' chunks are being fetched ahead */
    bool data_read;      /* a reader read its data (a file closed having read chunks) */
    uint64_t data_bytes; /* ... this many bytes */
} ahead_file;

typedef enum { DIR_TO_LIST, DIR_LISTING, DIR_LISTED } dir_state;

typedef struct {
    char *key;     /* its prefix, ending in '/' */
    uint64_t ino;
    uint8_t depth; /* partition levels below the table */
    uint8_t state; /* dir_state */
} ahead_dir;

/* One table a reader is opening files of. */
typedef struct {
    uint64_t gen;        /* 0: the slot is free */
    char *root;          /* the table directory's key */
    uint64_t root_ino;
    int64_t last_ms;     /* its latest open */
    uint32_t n_opened;   /* distinct files opened */
    uint64_t *opened;    /* their key hashes (files may be listed after they were opened) */
    size_t n_opened_hashes, cap_opened;
    uint64_t *read;      /* key hashes of files whose data was read (listed later too) */
    size_t n_read_hashes, cap_read;
    char *latest;        /* key of the latest file opened */
    char *latest_data;   /* key of the latest file closed having read its data */
    ahead_dir *dirs;
    size_t n_dirs, cap_dirs;
    ahead_file *files;   /* sorted by key when `sorted` */
    size_t n_files, cap_files;
    bool sorted;
    bool expected;       /* a view's hint named the table: its files will be read (table_ahead_expect) */
    bool probing;        /* expected, its footers' length unknown: one file's footer being read for it */
    unsigned listing;    /* listings and data fetches in progress: the slot is not reused meanwhile */
    uint64_t data_ahead; /* bytes of data fetched ahead for files not opened yet */
    uint64_t data_read;  /* bytes the reader read of the files it closed */
    uint64_t tail_seen;  /* the longest footer and page index of the files opened */
    uint64_t run_on_seen; /* the furthest the kernel read on past a run of chunks read */
} ahead_run;

/* A tail to fetch, copied out of a run so that it is fetched unlocked. */
typedef struct {
    object_ref obj;
    uint64_t tail;
} ahead_fetch;

struct table_ahead {
    tree *tree;
    object_io *io;
    footer_cache *footers;
    column_memory *columns;
    uint64_t data_window; /* bytes of data fetched ahead of a reader, at most */
    uint64_t run_on;      /* how far the kernel reads past a reader's read */
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t work;  /* a directory to list, or stop */
    bool stop;
    uint64_t next_gen;
    size_t files_known;   /* files of every run together */
    ahead_run runs[TABLE_AHEAD_RUNS];
    table_ahead_counts counts;
    pthread_t threads[TABLE_AHEAD_THREADS];
    size_t n_threads;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static void run_clear(table_ahead *ta, ahead_run *r)
{
    for (size_t i = 0; i < r->n_files; i++)
        free(r->files[i].key);
    ta->files_known -= r->n_files;
    for (size_t i = 0; i < r->n_dirs; i++)
        free(r->dirs[i].key);
    free(r->files);
    free(r->dirs);
    free(r->opened);
    free(r->read);
    free(r->root);
    free(r->latest);
    free(r->latest_data);
    memset(r, 0, sizeof *r);
}

/* ---- the table of a file ---------------------------------------------------------- */

/* The table directory of file ino: its directory, above any col=value/
 * directories. Returns the inode, its key in *key (malloc'd), or 0. */
static uint64_t table_root(tree *t, uint64_t ino, char **key)
{
    uint64_t dir = tree_parent(t, ino);
    for (unsigned level = 0;; level++) {
        char *k = tree_key(t, dir);
        if (!k)
            return 0;
        size_t len;
        const char *name = partition_dir_name(k, &len);
        if (dir == TREE_ROOT_INO || level >= PARTITION_MAX_DEPTH || !partition_name(name, len)) {
            *key = k;
            return dir;
        }
        free(k);
        dir = tree_parent(t, dir);
    }
}

/* ---- what to fetch ---------------------------------------------------------------- */

static int file_cmp(const void *a, const void *b)
{
    return strcmp(((const ahead_file *)a)->key, ((const ahead_file *)b)->key);
}

static void sort_files(ahead_run *r)
{
    if (!r->sorted) {
        qsort(r->files, r->n_files, sizeof *r->files, file_cmp);
        r->sorted = true;
    }
}

/* The first file whose key sorts after key (r->files sorted). */
static size_t after_key(const ahead_run *r, const char *key)
{
    size_t lo = 0, hi = r->n_files;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(r->files[mid].key, key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How much of the end of a file of size bytes to fetch ahead: what the
 * opened files' footers and page indexes took, with a margin, once known
 * (one writer's files have footers of one size); else what an open reads. */
static uint64_t tail_ahead(const table_ahead *ta, const ahead_run *r, uint64_t size)
{
    uint64_t tail = footer_cache_tail_len(ta->footers, size);
    if (r->tail_seen) {
        const uint64_t with_margin = r->tail_seen + r->tail_seen / 4 + TAIL_MARGIN;
        const uint64_t learned = (with_margin + TAIL_MARGIN - 1) / TAIL_MARGIN * TAIL_MARGIN;
        tail = learned < tail ? learned : tail;
    }
    return tail < size ? tail : size;
}

/* Mark files ahead of the latest open to fetch, into out (up to
 * TABLE_AHEAD_MAX_FILES); how many. Called with ta->lock held. */
static size_t take_window(table_ahead *ta, ahead_run *r, ahead_fetch *out)
{
    if ((r->n_opened < 2 && !r->expected) || (!r->latest && !r->expected) || r->n_files == 0)
        return 0;
    if (r->n_opened < 2 && !r->tail_seen)
        return 0; /* expected: once a file's footer shows how long its tail is (claim_probe) */
    sort_files(r);
    uint64_t target = TABLE_AHEAD_GROWTH * (uint64_t)r->n_opened;
    if (target < TABLE_AHEAD_MIN_FILES)
        target = TABLE_AHEAD_MIN_FILES;
    uint64_t unread_max = 2 * TABLE_AHEAD_GROWTH * (uint64_t)r->n_opened + TABLE_AHEAD_MIN_FILES;
    if (r->expected) {
        target = target > TABLE_AHEAD_EXPECT_FILES ? target : TABLE_AHEAD_EXPECT_FILES;
        unread_max = unread_max > TABLE_AHEAD_EXPECT_FILES ? unread_max : TABLE_AHEAD_EXPECT_FILES;
    }
    if (target > TABLE_AHEAD_MAX_FILES)
        target = TABLE_AHEAD_MAX_FILES;
    const size_t pos = r->latest ? after_key(r, r->latest) : 0;
    /* Files past a directory not listed yet may not be the next ones. */
    const char *unknown = NULL;
    for (size_t i = 0; i < r->n_dirs; i++)
        if (r->dirs[i].state != DIR_LISTED && (!unknown || strcmp(r->dirs[i].key, unknown) < 0))
            unknown = r->dirs[i].key;
    uint64_t ahead = 0, unread = 0;
    for (size_t i = 0; i < r->n_files; i++) {
        if (r->files[i].requested && !r->files[i].opened) {
            unread++;
            ahead += i >= pos;
        }
    }
    size_t n = 0;
    for (size_t i = pos; i < r->n_files && ahead < target && unread < unread_max && n < TABLE_AHEAD_MAX_FILES;
         i++) {
        ahead_file *f = &r->files[i];
        if (unknown && strcmp(f->key, unknown) > 0)
            break;
        if (f->opened || f->requested)
            continue;
        object_ref o = {.id = f->ino, .key = strdup(f->key), .size = f->size};
        if (!o.key)
            break;
        memcpy(o.etag, f->etag, sizeof o.etag);
        f->requested = true;
        f->tail = (uint32_t)tail_ahead(ta, r, f->size);
        out[n].obj = o;
        out[n++].tail = f->tail;
        ahead++;
        unread++;
    }
    return n;
}

/* Start the tail fetches of a window (no lock held) and free it. */
static void fetch_window(table_ahead *ta, ahead_fetch *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const object_ref *o = &w[i].obj;
        const uint64_t tail = w[i].tail;
        if (tail > 0)
            object_prefetch(ta->io, o, o->size - tail, o->size, 0, false);
        object_ref_free(&w[i].obj);
    }
}

/* ---- data ahead ---------------------------------------------------------------------- */

/* Whether the reader reads the data of the table's files, not only their
 * footers (to skip them by their statistics): of the latest DATA_FILES files
 * it opened up to the latest whose data it read, in key order, it read the
 * data of at least two and of all but a quarter. A file's handles are
 * counted together: DuckDB reads a file's footer on one and scans it on
 * another, later. Called with ta->lock held. */
static bool reads_data(ahead_run *r)
{
    if (!r->latest_data || r->n_files == 0)
        return false;
    sort_files(r);
    unsigned opened = 0, read = 0;
    for (size_t k = after_key(r, r->latest_data); k > 0 && opened < DATA_FILES; k--) {
        const ahead_file *f = &r->files[k - 1];
        opened += f->opened;
        read += f->opened && f->data_read;
    }
    return read >= 2 && 4 * read >= 3 * opened;
}

static ahead_file *file_by_hash(ahead_run *r, uint64_t hash)
{
    for (size_t i = 0; i < r->n_files; i++)
        if (r->files[i].hash == hash)
            return &r->files[i];
    return NULL;
}

/* A file of some run whose data to fetch ahead, claimed (its ref copied to
 * *out, its run to *run): the first one after the latest whose data the
 * reader read, with its tail fetched or read, its data not read yet (a
 * reader may open a file for its footer long before it scans it, as
 * DuckDB does), while the run's data ahead is under the window. Called
 * with ta->lock held. */
static bool claim_data(table_ahead *ta, size_t *run, object_ref *out, uint64_t *hash, uint64_t *run_on)
{
    for (size_t i = 0; i < TABLE_AHEAD_RUNS; i++) {
        ahead_run *r = &ta->runs[i];
        /* never more ahead than the reader has read and DATA_AHEAD_FLOOR:
         * one that stops has cost at most that */
        const uint64_t read = r->data_read + DATA_AHEAD_FLOOR;
        const uint64_t window = read < ta->data_window ? read : ta->data_window;
        if (!r->gen || !r->latest_data || !reads_data(r) || r->data_ahead >= window || !r->sorted)
            continue;
        for (size_t k = after_key(r, r->latest_data); k < r->n_files; k++) {
            ahead_file *f = &r->files[k];
            if (!(f->requested || f->opened) || f->data_read || f->data_started)
                continue;
            *out = (object_ref){.id = f->ino, .key = strdup(f->key), .size = f->size};
            if (!out->key)
                return false;
            memcpy(out->etag, f->etag, sizeof out->etag);
            f->data_started = true;
            r->listing++;
            *run = i;
            *hash = f->hash;
            /* what the kernel was seen to read on, a page more; never more
             * than its readahead */
            const uint64_t seen = (r->run_on_seen + 2 * 4096 - 1) / 4096 * 4096;
            *run_on = seen < ta->run_on ? seen : ta->run_on;
            return true;
        }
    }
    return false;
}

/* Fetch the chunks of o's columns that the table's readers read (no lock
 * held), once its footer is in (its tail is on the way): the bytes asked. */
static uint64_t fetch_data(table_ahead *ta, const object_ref *o, uint64_t run_on)
{
    sv_cancel tok;
    object_io_cancel_init(ta->io, &tok);
    const parquet_footer *ft = footer_cache_get(ta->footers, o, &tok);
    uint64_t bytes = 0;
    if (ft->meta) {
        column_set *cs = column_memory_get(ta->columns, column_memory_key(o->key, ft->meta), ft->meta->n_leaves);
        const parquet_layout *l = &ft->layout;
        uint64_t run_start = 0, run_end = 0;
        for (size_t i = 0; cs && l->column && i <= l->n_chunks; i++) {
            const bool take = i < l->n_chunks && column_set_has_covered(cs, l->column[i]);
            if (take && run_end > run_start && l->chunks[i].start <= run_end + PREFETCH_ADJACENT_GAP) {
                run_end = l->chunks[i].end;
                continue;
            }
            if (run_end > run_start) {
                /* and what the kernel reads on past a read of the chunk's end:
                 * the reader waits for it too */
                const uint64_t end = run_end + run_on < o->size ? run_end + run_on : o->size;
                object_prefetch(ta->io, o, run_start, end, 0, false);
                bytes += end - run_start;
            }
            run_start = run_end = 0;
            if (take)
                run_start = l->chunks[i].start, run_end = l->chunks[i].end;
        }
        column_memory_put(ta->columns, cs);
    }
    footer_cache_put(ta->footers, ft);
    return bytes;
}

void table_ahead_closed(table_ahead *ta, const char *key, uint64_t bytes_read, uint64_t run_on)
{
    const bool read_data = bytes_read > 0;
    if (!ta)
        return;
    const size_t table_len = partition_table_dir_len(key);
    const uint64_t hash = key_hash(key);
    char *latest = read_data ? strdup(key) : NULL;
    pthread_mutex_lock(&ta->lock);
    for (size_t i = 0; i < TABLE_AHEAD_RUNS; i++) {
        ahead_run *r = &ta->runs[i];
        if (r->gen && strlen(r->root) == table_len && strncmp(r->root, key, table_len) == 0) {
            r->data_read += bytes_read;
            if (read_data && run_on > r->run_on_seen)
                r->run_on_seen = run_on;
            if (read_data && r->n_read_hashes < TABLE_AHEAD_MAX_TABLE_FILES &&
                sv_grow((void **)&r->read, &r->cap_read, r->n_read_hashes + 1, sizeof *r->read, 16, SIZE_MAX / 64))
                r->read[r->n_read_hashes++] = hash;
            ahead_file *f = read_data ? file_by_hash(r, hash) : NULL;
            if (f && !f->data_read) {
                f->data_read = true;
                if (f->data_started) {
                    r->data_ahead -= f->data_bytes < r->data_ahead ? f->data_bytes : r->data_ahead;
                    ta->counts.data_hits++;
                }
            }
            if (latest) {
                free(r->latest_data);
                r->latest_data = latest;
                latest = NULL;
            }
            if (reads_data(r))
                pthread_cond_broadcast(&ta->work);
            break;
        }
    }
    pthread_mutex_unlock(&ta->lock);
    free(latest);
}

/* ---- opens ------------------------------------------------------------------------- */

/* The run of table root (created, or an idle one reused), or NULL. Called
 * with ta->lock held. */
static ahead_run *run_of(table_ahead *ta, const char *root, uint64_t root_ino, int64_t now)
{
    ahead_run *free_slot = NULL, *oldest = NULL;
    for (size_t i = 0; i < TABLE_AHEAD_RUNS; i++) {
        ahead_run *r = &ta->runs[i];
        if (r->gen && r->root_ino == root_ino && strcmp(r->root, root) == 0)
            return r;
        if (!r->gen && !free_slot)
            free_slot = r;
        else if (r->gen && r->listing == 0 && (!oldest || r->last_ms < oldest->last_ms))
            oldest = r;
    }
    ahead_run *r = free_slot ? free_slot : oldest;
    if (!r)
        return NULL;
    if (r->gen)
        run_clear(ta, r);
    r->root = strdup(root);
    if (!r->root)
        return NULL;
    r->gen = ++ta->next_gen;
    r->root_ino = root_ino;
    r->last_ms = now;
    return r;
}

/* Queue the listing of r's table directory, once. Called with ta->lock held. */
static void list_root(table_ahead *ta, ahead_run *r)
{
    if (r->n_dirs == 0 && sv_grow((void **)&r->dirs, &r->cap_dirs, 1, sizeof *r->dirs, 16, SIZE_MAX / 64)) {
        char *k = strdup(r->root);
        if (k) {
            r->dirs[r->n_dirs++] = (ahead_dir){.key = k, .ino = r->root_ino, .depth = 0, .state = DIR_TO_LIST};
            pthread_cond_signal(&ta->work);
        }
    }
}

void table_ahead_expect(table_ahead *ta, uint64_t dir_ino, uint64_t tail_need)
{
    if (!ta)
        return;
    char *root = tree_key(ta->tree, dir_ino);
    if (!root)
        return;
    pthread_mutex_lock(&ta->lock);
    ahead_run *r = run_of(ta, root, dir_ino, now_ms());
    if (r) {
        r->last_ms = now_ms();
        r->expected = true;
        if (tail_need > r->tail_seen)
            r->tail_seen = tail_need;
        list_root(ta, r); /* its listings take the window (the workers), or a probe of one file's footer */
    }
    pthread_mutex_unlock(&ta->lock);
    free(root);
}

void table_ahead_opened(table_ahead *ta, uint64_t ino, const char *key, uint64_t tail_need)
{
    if (!ta)
        return;
    char *root = NULL;
    const uint64_t root_ino = table_root(ta->tree, ino, &root);
    if (!root_ino)
        return;
    const uint64_t hash = key_hash(key);
    const int64_t now = now_ms();
    ahead_fetch window[TABLE_AHEAD_MAX_FILES];
    size_t n = 0;
    pthread_mutex_lock(&ta->lock);
    ahead_run *r = run_of(ta, root, root_ino, now);
    if (r) {
        r->last_ms = now;
        if (tail_need > r->tail_seen)
            r->tail_seen = tail_need;
        bool seen = false;
        for (size_t i = 0; i < r->n_opened_hashes && !seen; i++)
            seen = r->opened[i] == hash;
        if (!seen) {
            if (r->n_opened_hashes < TABLE_AHEAD_MAX_TABLE_FILES &&
                sv_grow((void **)&r->opened, &r->cap_opened, r->n_opened_hashes + 1, sizeof *r->opened, 16,
                        SIZE_MAX / 64))
                r->opened[r->n_opened_hashes++] = hash;
            r->n_opened++;
        }
        for (size_t i = 0; i < r->n_files; i++) {
            ahead_file *f = &r->files[i];
            if (f->hash == hash && !f->opened) {
                f->opened = true;
                ta->counts.hits += f->requested;
            }
        }
        char *latest = strdup(key);
        if (latest) {
            free(r->latest);
            r->latest = latest;
        }
        if (r->n_opened >= 2)
            list_root(ta, r);
        n = take_window(ta, r, window);
        ta->counts.tails += n;
        if (n && reads_data(r))
            pthread_cond_broadcast(&ta->work); /* their data, once their footers are in */
    }
    pthread_mutex_unlock(&ta->lock);
    free(root);
    fetch_window(ta, window, n);
}

/* ---- listing ----------------------------------------------------------------------- */

static bool ends_with_parquet(const char *name)
{
    size_t n = strlen(name);
    return n > 8 && strcmp(name + n - 8, ".parquet") == 0;
}

/* What one directory's listing adds to its table. */
typedef struct {
    ahead_dir *dirs;
    size_t n_dirs;
    ahead_file *files;
    size_t n_files;
} dir_found;

static void found_free(dir_found *d)
{
    for (size_t i = 0; i < d->n_files; i++)
        free(d->files[i].key);
    for (size_t i = 0; i < d->n_dirs; i++)
        free(d->dirs[i].key);
    free(d->files);
    free(d->dirs);
}

/* List dir (no lock held): its partition directories and Parquet files. */
static void list_dir(table_ahead *ta, ahead_dir dir, dir_found *out)
{
    memset(out, 0, sizeof *out);
    sv_cancel tok;
    object_io_cancel_init(ta->io, &tok);
    tree_dir_snapshot snap;
    if (tree_readdir(ta->tree, dir.ino, &snap, &tok) != STORE_OK)
        return;
    out->dirs = calloc(snap.n ? snap.n : 1, sizeof *out->dirs);
    out->files = calloc(snap.n ? snap.n : 1, sizeof *out->files);
    if (out->dirs && out->files) {
        for (size_t i = 0; i < snap.n; i++) {
            const tree_dirent *e = &snap.entries[i];
            if (e->name[0] == '_' || e->name[0] == '.')
                continue; /* _delta_log/, _SUCCESS, hidden files */
            if (e->is_dir) {
                char *key;
                if (dir.depth < PARTITION_MAX_DEPTH && partition_name(e->name, strlen(e->name)) &&
                    (key = tree_key(ta->tree, e->ino)) != NULL)
                    out->dirs[out->n_dirs++] = (ahead_dir){
                        .key = key, .ino = e->ino, .depth = (uint8_t)(dir.depth + 1), .state = DIR_TO_LIST};
                continue;
            }
            tree_attr a;
            if (!ends_with_parquet(e->name) || tree_getattr(ta->tree, e->ino, &a) != STORE_OK)
                continue;
            char *key = tree_key(ta->tree, e->ino);
            if (!key)
                continue;
            ahead_file *f = &out->files[out->n_files++];
            *f = (ahead_file){.key = key, .hash = key_hash(key), .ino = e->ino, .size = a.size};
            memcpy(f->etag, a.etag, sizeof f->etag);
        }
    }
    tree_dir_snapshot_free(&snap);
}

/* Add what a listing found to run r. Called with ta->lock held. */
static void add_found(table_ahead *ta, ahead_run *r, dir_found *d)
{
    for (size_t i = 0; i < d->n_dirs && r->n_dirs < TABLE_AHEAD_MAX_DIRS; i++)
        if (sv_grow((void **)&r->dirs, &r->cap_dirs, r->n_dirs + 1, sizeof *r->dirs, 16, SIZE_MAX / 64)) {
            r->dirs[r->n_dirs++] = d->dirs[i];
            d->dirs[i].key = NULL; /* the run's now */
        }
    for (size_t i = 0; i < d->n_files && ta->files_known < TABLE_AHEAD_MAX_TABLE_FILES; i++) {
        if (!sv_grow((void **)&r->files, &r->cap_files, r->n_files + 1, sizeof *r->files, 16, SIZE_MAX / 64))
            break;
        ahead_file *f = &d->files[i];
        for (size_t k = 0; k < r->n_opened_hashes && !f->opened; k++)
            f->opened = r->opened[k] == f->hash;
        for (size_t k = 0; k < r->n_read_hashes && !f->data_read; k++)
            f->data_read = r->read[k] == f->hash;
        r->files[r->n_files++] = *f;
        f->key = NULL; /* the run's now */
        ta->files_known++;
        r->sorted = false;
    }
}

/* A directory of some run to list, claimed; false when there is none.
 * Called with ta->lock held. */
static bool claim_dir(table_ahead *ta, size_t *run, size_t *dir)
{
    for (size_t i = 0; i < TABLE_AHEAD_RUNS; i++) {
        ahead_run *r = &ta->runs[i];
        if (!r->gen)
            continue;
        size_t best = SIZE_MAX; /* the first in key order: the reader's next files are there */
        for (size_t k = 0; k < r->n_dirs; k++)
            if (r->dirs[k].state == DIR_TO_LIST && (best == SIZE_MAX || strcmp(r->dirs[k].key, r->dirs[best].key) < 0))
                best = k;
        if (best != SIZE_MAX) {
            r->dirs[best].state = DIR_LISTING;
            r->listing++;
            *run = i;
            *dir = best;
            return true;
        }
    }
    return false;
}

/* An expected table whose footers' length is not known yet, with a file
 * listed: that file claimed (its ref to *out) to read its footer, whose
 * length is then every tail's. Called with ta->lock held. */
static bool claim_probe(table_ahead *ta, size_t *run, object_ref *out)
{
    for (size_t i = 0; i < TABLE_AHEAD_RUNS; i++) {
        ahead_run *r = &ta->runs[i];
        if (!r->gen || !r->expected || r->tail_seen || r->probing || r->n_files == 0)
            continue;
        sort_files(r);
        const ahead_file *f = &r->files[0];
        *out = (object_ref){.id = f->ino, .key = strdup(f->key), .size = f->size};
        if (!out->key)
            return false;
        memcpy(out->etag, f->etag, sizeof out->etag);
        r->probing = true;
        r->listing++;
        *run = i;
        return true;
    }
    return false;
}

/* The bytes from the start of o's page index (or footer) to its end, as
 * its footer shows (read now, no lock held); 0 when it does not parse. */
static uint64_t probe_tail(table_ahead *ta, const object_ref *o)
{
    sv_cancel tok;
    object_io_cancel_init(ta->io, &tok);
    const parquet_footer *ft = footer_cache_get(ta->footers, o, &tok);
    uint64_t tail = 0;
    if (ft->meta)
        tail = parquet_layout_meta_len(&ft->layout, o->size);
    footer_cache_put(ta->footers, ft);
    return tail;
}

static void forget_idle(table_ahead *ta, int64_t now)
{
    for (size_t i = 0; i < TABLE_AHEAD_RUNS; i++) {
        ahead_run *r = &ta->runs[i];
        if (r->gen && r->listing == 0 && now - r->last_ms > TABLE_AHEAD_TTL_MS)
            run_clear(ta, r);
    }
}

static void *worker(void *arg)
{
    table_ahead *ta = arg;
    pthread_mutex_lock(&ta->lock);
    while (!ta->stop) {
        size_t ri, di;
        object_ref data;
        uint64_t data_hash, data_run_on;
        if (claim_data(ta, &ri, &data, &data_hash, &data_run_on)) {
            pthread_mutex_unlock(&ta->lock);
            const uint64_t bytes = fetch_data(ta, &data, data_run_on);
            object_ref_free(&data);
            pthread_mutex_lock(&ta->lock);
            ahead_run *r = &ta->runs[ri];
            r->listing--;
            ahead_file *f = file_by_hash(r, data_hash);
            if (f && !f->data_read) {
                f->data_bytes = bytes;
                r->data_ahead += bytes;
            }
            ta->counts.data_bytes += bytes;
            if (bytes)
                ta->counts.data_files++;
            continue;
        }
        if (claim_probe(ta, &ri, &data)) {
            pthread_mutex_unlock(&ta->lock);
            const uint64_t tail = probe_tail(ta, &data);
            object_ref_free(&data);
            ahead_fetch window[TABLE_AHEAD_MAX_FILES];
            pthread_mutex_lock(&ta->lock);
            ahead_run *r = &ta->runs[ri];
            r->listing--;
            r->probing = false;
            size_t n = 0;
            if (tail == 0) {
                r->expected = false; /* not Parquet: nothing to fetch ahead until readers open files */
            } else {
                if (tail > r->tail_seen)
                    r->tail_seen = tail;
                n = take_window(ta, r, window);
            }
            pthread_mutex_unlock(&ta->lock);
            fetch_window(ta, window, n);
            pthread_mutex_lock(&ta->lock);
            ta->counts.tails += n; /* counted once their fetches are started */
            continue;
        }
        if (!claim_dir(ta, &ri, &di)) {
            forget_idle(ta, now_ms());
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += IDLE_WAKE_MS / 1000;
            pthread_cond_timedwait(&ta->work, &ta->lock, &until);
            continue;
        }
        ahead_run *r = &ta->runs[ri];
        const ahead_dir dir = r->dirs[di];
        pthread_mutex_unlock(&ta->lock);
        dir_found found;
        list_dir(ta, dir, &found);
        ahead_fetch window[TABLE_AHEAD_MAX_FILES];
        pthread_mutex_lock(&ta->lock);
        /* The slot is not reused while it lists (r->listing). */
        r->dirs[di].state = DIR_LISTED;
        r->listing--;
        add_found(ta, r, &found);
        if (found.n_dirs)
            pthread_cond_broadcast(&ta->work);
        const size_t n = take_window(ta, r, window);
        ta->counts.tails += n;
        if (n && reads_data(r))
            pthread_cond_broadcast(&ta->work);
        pthread_mutex_unlock(&ta->lock);
        found_free(&found);
        fetch_window(ta, window, n);
        pthread_mutex_lock(&ta->lock);
        ta->counts.listings++; /* counted once its fetches are started */
    }
    pthread_mutex_unlock(&ta->lock);
    return NULL;
}

uint64_t table_ahead_fetched_tail(void *arg, const object_ref *o)
{
    table_ahead *ta = arg;
    const size_t table_len = partition_table_dir_len(o->key);
    const uint64_t hash = key_hash(o->key);
    uint64_t tail = 0;
    pthread_mutex_lock(&ta->lock);
    for (size_t i = 0; i < TABLE_AHEAD_RUNS && !tail; i++) {
        ahead_run *r = &ta->runs[i];
        if (!r->gen || strlen(r->root) != table_len || strncmp(r->root, o->key, table_len) != 0)
            continue;
        const ahead_file *f = file_by_hash(r, hash);
        if (f && f->requested && f->ino == o->id)
            tail = f->tail;
    }
    pthread_mutex_unlock(&ta->lock);
    return tail;
}

/* ---- life -------------------------------------------------------------------------- */

table_ahead *table_ahead_create(tree *t, object_io *io, footer_cache *footers, column_memory *columns,
                                uint64_t data_window, uint64_t run_on)
{
    table_ahead *ta = calloc(1, sizeof *ta);
    if (!ta)
        return NULL;
    ta->run_on = run_on;
    ta->tree = t;
    ta->io = io;
    ta->footers = footers;
    ta->columns = columns;
    ta->data_window = data_window;
    pthread_mutex_init(&ta->lock, NULL);
    pthread_cond_init(&ta->work, NULL);
    for (; ta->n_threads < TABLE_AHEAD_THREADS; ta->n_threads++)
        if (pthread_create(&ta->threads[ta->n_threads], NULL, worker, ta) != 0) {
            table_ahead_destroy(ta);
            return NULL;
        }
    return ta;
}

void table_ahead_destroy(table_ahead *ta)
{
    if (!ta)
        return;
    pthread_mutex_lock(&ta->lock);
    ta->stop = true;
    pthread_cond_broadcast(&ta->work);
    pthread_mutex_unlock(&ta->lock);
    for (size_t i = 0; i < ta->n_threads; i++)
        pthread_join(ta->threads[i], NULL);
    for (size_t i = 0; i < TABLE_AHEAD_RUNS; i++)
        if (ta->runs[i].gen)
            run_clear(ta, &ta->runs[i]);
    pthread_cond_destroy(&ta->work);
    pthread_mutex_destroy(&ta->lock);
    free(ta);
}

table_ahead_counts table_ahead_counts_get(table_ahead *ta)
{
    table_ahead_counts c = {0};
    if (!ta)
        return c;
    pthread_mutex_lock(&ta->lock);
    c = ta->counts;
    pthread_mutex_unlock(&ta->lock);
    return c;
}
