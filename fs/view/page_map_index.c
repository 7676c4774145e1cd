/* Page maps built ahead of time; see page_map_index.h. */
#include "page_map_index.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page_map.h"
#include "sv_grow.h"
#include "view_file.h"

#define TAIL_FIRST (64u << 10)       /* bytes read from the end for the footer at first */
#define ROUND_BYTES_MAX (64u << 20)  /* header windows fetched at once */

/* A batch of GETs waited for together. */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    size_t pending;
    store_status st;
    char msg[256];
} batch;

static void batch_done(void *ud, store_status st, const char *errmsg)
{
    batch *b = ud;
    pthread_mutex_lock(&b->m);
    if (st != STORE_OK && b->st == STORE_OK) {
        b->st = st;
        snprintf(b->msg, sizeof b->msg, "%s", errmsg ? errmsg : store_status_name(st));
    }
    if (--b->pending == 0)
        pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->m);
}

typedef struct {
    uint64_t off;
    uint32_t len;
    uint8_t *buf;
    size_t walk;
} span;

/* Fetch every span at once and wait for all (the store completes every
 * request it started, each within its own deadlines). */
static int fetch_all(object_store *s, const char *key, const char *etag, span *sp, size_t n, sv_error *err)
{
    batch b = {.pending = 1, .st = STORE_OK};
    pthread_mutex_init(&b.m, NULL);
    pthread_cond_init(&b.cv, NULL);
    store_request_opts opts = {.priority = STORE_PRIO_PLAN};
    store_status refused = STORE_OK;
    for (size_t i = 0; i < n && refused == STORE_OK; i++) {
        struct iovec iov = {sp[i].buf, sp[i].len};
        pthread_mutex_lock(&b.m);
        b.pending++;
        pthread_mutex_unlock(&b.m);
        refused = store_get_async(s, key, etag, sp[i].off, sp[i].len, &iov, 1, &opts, batch_done, &b);
        if (refused != STORE_OK) {
            pthread_mutex_lock(&b.m);
            b.pending--;
            pthread_mutex_unlock(&b.m);
        }
    }
    pthread_mutex_lock(&b.m);
    b.pending--; /* the submitter's own count */
    while (b.pending > 0)
        pthread_cond_wait(&b.cv, &b.m);
    pthread_mutex_unlock(&b.m);
    pthread_mutex_destroy(&b.m);
    pthread_cond_destroy(&b.cv);
    if (refused != STORE_OK)
        return sv_fail(err, refused, 0, "GET %s: %s", key, store_status_name(refused)), -1;
    if (b.st != STORE_OK)
        return sv_fail(err, b.st, 0, "%s", b.msg), -1;
    return 0;
}

int page_map_index_read_meta(object_store *s, const char *key, const char *etag, uint64_t size,
                             pq_file_meta **out, sv_error *err)
{
    uint64_t want = size < TAIL_FIRST ? size : TAIL_FIRST;
    for (int attempt = 0; attempt < 2; attempt++) {
        uint8_t *tail = malloc(want ? (size_t)want : 1);
        if (!tail)
            return sv_fail(err, STORE_ERR_NOMEM, 0, "%s: out of memory reading its footer", key), -1;
        span sp = {size - want, (uint32_t)want, tail, 0};
        if (want == 0 || fetch_all(s, key, etag, &sp, 1, err) != 0) {
            if (want == 0)
                sv_fail(err, TC_E_TRUNCATED, 0, "%s: empty object", key);
            free(tail);
            return -1;
        }
        uint64_t need = 0;
        tc_error te;
        tc_status st = pq_file_meta_from_tail(tail, (size_t)want, size, out, &need, &te);
        free(tail);
        if (st == TC_OK)
            return 0;
        if (st == TC_E_NEED_MORE && attempt == 0 && need > want && need <= size && need <= UINT32_MAX) {
            want = need;
            continue;
        }
        return sv_fail(err, st, 0, "%s: not a readable Parquet footer: %s", key, te.msg), -1;
    }
    return sv_fail(err, TC_E_INVALID, 0, "%s: footer not found", key), -1;
}

/* Whether a view would walk chunk (rg, col): see chunk_wants_walk. */
static bool needs_walk(const pq_file_meta *m, uint32_t rg, uint32_t col, uint64_t size, page_map_index_counts *n)
{
    const pq_column_chunk *cc = &m->row_groups[rg].columns[col];
    if (!view_leaf_is_flat(&m->leaves[col])) {
        n->nested++;
        return false;
    }
    pq_column_ctx ctx = pq_column_ctx_of(m, rg, col);
    if (view_chunk_has_offset_index(cc, size) || !pq_page_map_single_page_ruled_out(&ctx)) {
        n->need_none++;
        return false;
    }
    return true;
}

int page_map_index_file(object_store *s, const char *key, const char *etag, uint64_t size, const pq_file_meta *m,
                        page_map_index_sink sink, void *ud, page_map_index_counts *counts, sv_error *err)
{
    memset(counts, 0, sizeof *counts);
    size_t n = 0, cap = 0;
    pq_header_walk *walks = NULL;
    uint32_t *rgs = NULL, *cols = NULL;
    size_t cap_rg = 0, cap_col = 0;
    int rc = 0;
    for (uint32_t g = 0; g < m->n_row_groups && rc == 0; g++) {
        for (uint32_t c = 0; c < m->row_groups[g].n_columns && c < m->n_leaves && rc == 0; c++) {
            counts->chunks++;
            if (!needs_walk(m, g, c, size, counts))
                continue;
            if (!sv_grow((void **)&walks, &cap, n + 1, sizeof *walks, 64, SIZE_MAX / 64) ||
                !sv_grow((void **)&rgs, &cap_rg, n + 1, sizeof *rgs, 64, SIZE_MAX / 64) ||
                !sv_grow((void **)&cols, &cap_col, n + 1, sizeof *cols, 64, SIZE_MAX / 64)) {
                rc = -1, (void)sv_fail(err, STORE_ERR_NOMEM, 0, "%s: out of memory", key);
                break;
            }
            pq_column_ctx ctx = pq_column_ctx_of(m, g, c);
            if (pq_header_walk_init(&walks[n], &ctx, NULL) != TC_OK) {
                counts->failed++;
                continue;
            }
            rgs[n] = g, cols[n] = c, n++;
        }
    }
    pq_header_want *wants = malloc(PQ_HEADER_WALK_MAX_WANTS * sizeof *wants);
    span *sp = NULL;
    size_t cap_sp = 0;
    if (!wants && rc == 0)
        rc = -1, (void)sv_fail(err, STORE_ERR_NOMEM, 0, "%s: out of memory", key);
    /* Each round, every unfinished walk gets what it asks for; a chunk's
     * page count bounds its rounds (a walk advances a page a round at
     * least, or fails). */
    for (uint32_t round = 0; rc == 0 && round <= PQ_HEADER_WALK_MAX_PAGES + 1; round++) {
        size_t nsp = 0;
        uint64_t bytes = 0;
        for (size_t k = 0; k < n && rc == 0 && bytes < ROUND_BYTES_MAX; k++) {
            if (walks[k].done || walks[k].failed)
                continue;
            size_t nw = pq_header_walk_wants(&walks[k], wants, PQ_HEADER_WALK_MAX_WANTS);
            for (size_t i = 0; i < nw && rc == 0; i++) {
                if (!sv_grow((void **)&sp, &cap_sp, nsp + 1, sizeof *sp, 256, SIZE_MAX / 256) ||
                    !(sp[nsp].buf = malloc(wants[i].len))) {
                    rc = -1, (void)sv_fail(err, STORE_ERR_NOMEM, 0, "%s: out of memory", key);
                    break;
                }
                sp[nsp].off = wants[i].offset, sp[nsp].len = wants[i].len, sp[nsp].walk = k;
                bytes += wants[i].len;
                nsp++;
            }
        }
        if (nsp == 0)
            break;
        if (rc == 0)
            rc = fetch_all(s, key, etag, sp, nsp, err);
        counts->rounds++;
        counts->requests += nsp;
        counts->bytes += bytes;
        for (size_t i = 0; i < nsp; i++) {
            pq_header_walk *w = &walks[sp[i].walk];
            if (rc == 0 && !w->failed && pq_header_walk_feed(w, sp[i].off, sp[i].buf, sp[i].len) != TC_OK)
                w->failed = true;
            free(sp[i].buf);
        }
        for (size_t k = 0; k < n && rc == 0; k++)
            if (!walks[k].done && !walks[k].failed)
                pq_header_walk_advance(&walks[k]);
    }
    for (size_t k = 0; k < n; k++) {
        if (rc == 0 && walks[k].done && walks[k].n_pages > 0) {
            counts->walked++;
            sink(ud, rgs[k], cols[k], &walks[k]);
        } else if (rc == 0) {
            counts->failed++;
        }
        pq_header_walk_free(&walks[k]);
    }
    free(sp);
    free(wants);
    free(walks);
    free(rgs);
    free(cols);
    return rc;
}
