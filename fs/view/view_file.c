#include "view_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column_resolve.h"
#include "file_stats.h"
#include "header_walk.h"
#include "log.h"
#include "page_map_remote.h"
#include "predicate.h"
#include "selection.h"
#include "selection_ahead.h"
#include "view_table.h"

view_file *view_file_get(sv_view *v, uint64_t base_ino, const char *relpath, footer_cache *footers,
                         partial_memory *mem)
{
    pthread_mutex_lock(&v->lock);
    view_file *vf = v->files;
    while (vf && vf->base_ino != base_ino)
        vf = vf->next;
    if (vf) {
        vf->refs++;
        pthread_mutex_unlock(&v->lock);
        return vf;
    }
    vf = calloc(1, sizeof *vf);
    if (vf && !(vf->relpath = strdup(relpath))) {
        free(vf);
        vf = NULL;
    }
    if (vf) {
        vf->base_ino = base_ino;
        vf->footers = footers;
        vf->mem = mem;
        vf->refs = 2; /* the view's list and the caller */
        pthread_mutex_init(&vf->lock, NULL);
        sv_cond_init(&vf->cond);
        vf->next = v->files;
        v->files = vf;
    }
    pthread_mutex_unlock(&v->lock);
    return vf;
}

void view_file_put(sv_view *v, view_file *vf)
{
    /* Plans stay with the view (the list's reference) until the view goes. */
    pthread_mutex_lock(&v->lock);
    vf->refs--;
    pthread_mutex_unlock(&v->lock);
}

static void vchunk_free(partial_memory *mem, vchunk *c)
{
    partial_memory_release(mem, c->image_bytes);
    if (c->pages) {
        for (uint32_t i = 0; i < c->pm.n_pages; i++) {
            for (uint32_t k = 0; k < c->pages[i].n_pieces; k++)
                free(c->pages[i].pieces[k].data);
            free(c->pages[i].pieces);
        }
        free(c->pages);
    }
    pq_page_map_free(&c->pm);
}

void view_file_free(view_file *vf)
{
    for (size_t i = 0; i < vf->n_chunks; i++)
        vchunk_free(vf->mem, &vf->chunks[i]);
    free(vf->chunks);
    free(vf->by_start);
    if (vf->sel && vf->meta)
        for (uint32_t g = 0; g < vf->meta->n_row_groups; g++)
            row_ranges_free(&vf->sel[g]);
    free(vf->sel);
    free(vf->filter_col);
    free(vf->want_col);
    pred_bound_free(vf->pred);
    footer_cache_put(vf->footers, vf->footer);
    free(vf->relpath);
    pthread_mutex_destroy(&vf->lock);
    pthread_cond_destroy(&vf->cond);
    free(vf);
}

static void vf_real(view_file *vf, const char *what, const char *detail)
{
    snprintf(vf->why_real, sizeof vf->why_real, "%s%s", what, detail);
}

static int cmp_chunk_start(const void *a, const void *b, void *ud)
{
    const vchunk *c = ud;
    uint64_t x = c[*(const size_t *)a].start, y = c[*(const size_t *)b].start;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Whether maps built ahead of time could serve vf now: the link allows
 * partial reads and a chunk the hint wants (not a filter column) would walk
 * its headers. filter_col and want_col are fixed once the file is
 * prepared; chunks' own state is not read (this runs without vf->lock). */
static bool prebuilt_maps_may_help(const view_env *env, const view_file *vf, uint64_t size)
{
    conn_profile prof;
    if (env->request_cost_override < 0 && !link_profile_get(env->profile, &prof))
        return false; /* no partial reads (yet): left to the planner, which may have a profile by then */
    const pq_file_meta *m = vf->meta;
    for (uint32_t g = 0; g < m->n_row_groups; g++)
        for (uint32_t c = 0; c < m->n_leaves; c++)
            if (vf->want_col[c] && !vf->filter_col[c] && view_chunk_wants_header_walk(m, g, c, size))
                return true;
    return false;
}

/* The selection of every row group: the predicate's rows (evaluated on the
 * filter columns) intersected with the hint's rows for this file. Deletion
 * vectors are not applied: a reader of another version may not delete the
 * rows this snapshot's does (docs/delta.md, "Views across versions"). */
static int select_rows(const view_env *env, const sv_hint *h, const plain_file *pf, view_file *vf,
                       const pred_bound *b, uint64_t *selected_rows, sv_error *err, const sv_cancel *tok)
{
    const pq_file_meta *m = vf->meta;
    const hint_file_rows *fr = hint_rows_for(h, vf->relpath);
    uint64_t first = 0, selected = 0;
    selection_ahead ahead;
    if (b)
        selection_ahead_init(&ahead, env->plain->io, &pf->obj, m, b);
    /* With the filter chunks on their way: the round trips of the lookup
     * overlap their transfer, instead of following the selection. */
    if (prebuilt_maps_may_help(env, vf, pf->obj.size))
        page_map_prebuilt_load(env, &pf->obj, vf->base_ino, tok);
    int rc = 0;
    for (uint32_t g = 0; g < m->n_row_groups && rc == 0; g++) {
        int64_t n = m->row_groups[g].num_rows;
        if (n < 0) {
            rc = sv_fail(err, SELECTION_E_LAYOUT, 0, "row group %u: negative row count", g);
            break;
        }
        row_ranges from_where = {0};
        bool ok = true;
        if (vf->select_none) {
            /* nothing selected: the log excludes the file (partition values or statistics) */
        } else if (b) {
            selection_ahead_advance(&ahead, g);
            if (selection_of_row_group(env->plain->io, &pf->obj, m, b, g, &from_where, err, tok) != 0) {
                rc = -1;
                break;
            }
        } else {
            ok = row_ranges_append(&from_where, 0, (uint64_t)n);
        }
        if (ok && fr) {
            row_ranges from_rows = {0};
            ok = row_ranges_slice(&fr->ranges, first, first + (uint64_t)n, &from_rows) &&
                 row_ranges_intersect(&from_where, &from_rows, &vf->sel[g]);
            row_ranges_free(&from_rows);
            row_ranges_free(&from_where);
        } else {
            vf->sel[g] = from_where;
        }
        if (!ok) {
            rc = sv_fail(err, SELECTION_E_NOMEM, 0, "out of memory");
            break;
        }
        selected += row_ranges_count(&vf->sel[g]);
        first += (uint64_t)n;
    }
    if (b)
        selection_ahead_end(&ahead, sv_cancel_check(tok) != 0);
    *selected_rows = selected;
    return rc;
}

/* The chunk table, sorted by offset. Columns the hint's `columns` leaves
 * out (the reader is not expected to read them; kernel alignment and
 * readahead brush them) are planned at once: served like the plain path,
 * without waiting for a plan or the selection. */
static bool build_chunks(const plain_file *pf, view_file *vf)
{
    const pq_file_meta *m = vf->meta;
    for (uint32_t g = 0; g < m->n_row_groups; g++)
        for (uint32_t c = 0; c < m->n_leaves; c++) {
            size_t i = (size_t)g * m->n_leaves + c;
            vchunk *ch = &vf->chunks[i];
            uint64_t off = 0, len = 0;
            ch->rg = g;
            ch->col = c;
            if (!pq_column_chunk_range(&m->row_groups[g].columns[c], &off, &len) || off + len > pf->obj.size) {
                vf_real(vf, "", "a column chunk lies outside the file");
                return false;
            }
            ch->start = off;
            ch->end = off + len;
            ch->real = vf->filter_col[c];
            vf->by_start[i] = i;
            if (!ch->real && !vf->want_col[c]) {
                ch->real = true;
                ch->all_real = true;
                ch->state = CH_PLANNED;
            }
        }
    qsort_r(vf->by_start, vf->n_chunks, sizeof *vf->by_start, cmp_chunk_start, vf->chunks);
    for (size_t i = 1; i < vf->n_chunks; i++)
        if (vf->chunks[vf->by_start[i]].start < vf->chunks[vf->by_start[i - 1]].end) {
            vf_real(vf, "", "column chunks overlap");
            return false;
        }
    return true;
}

bool view_chunk_has_offset_index(const pq_column_chunk *cc, uint64_t size)
{
    return cc->has_offset_index && cc->offset_index_length > 0 && cc->offset_index_length <= (16 << 20) &&
           cc->offset_index_offset >= 0 &&
           (uint64_t)cc->offset_index_offset + (uint64_t)cc->offset_index_length <= size;
}

bool view_leaf_is_flat(const pq_leaf *lf)
{
    return lf->max_rep == 0 && lf->max_def <= 1;
}

bool view_chunk_has_page_map(const pq_file_meta *m, uint32_t rg, uint32_t col, uint64_t size)
{
    if (view_chunk_has_offset_index(&m->row_groups[rg].columns[col], size))
        return true;
    pq_column_ctx ctx = pq_column_ctx_of(m, rg, col);
    if (pq_page_map_single_page_ruled_out(&ctx) == NULL)
        return true;
    /* Several pages: a map from walking its headers (chunk_plan). */
    pq_header_walk w;
    bool walkable = pq_header_walk_init(&w, &ctx, NULL) == TC_OK;
    pq_header_walk_free(&w);
    return walkable;
}

bool view_chunk_wants_header_walk(const pq_file_meta *m, uint32_t rg, uint32_t col, uint64_t size)
{
    if (!view_leaf_is_flat(&m->leaves[col]) || view_chunk_has_offset_index(&m->row_groups[rg].columns[col], size))
        return false;
    pq_column_ctx ctx = pq_column_ctx_of(m, rg, col);
    return pq_page_map_single_page_ruled_out(&ctx) != NULL;
}

bool view_chunk_needs_selection(const view_file *vf, const vchunk *ch, uint64_t size)
{
    /* A chunk being planned (CH_PLANNING) belongs to its planner, which
     * writes ch->real without the lock; it was claimed with the selection
     * it needs already made, so only an unplanned chunk can need one. */
    return ch->state == CH_UNPLANNED && !ch->real && view_leaf_is_flat(&vf->meta->leaves[ch->col]) &&
           view_chunk_has_page_map(vf->meta, ch->rg, ch->col, size);
}

static void prepare_names(view_file *vf, const pq_file_meta *m, const view_table *tb, const pred_expr *pred,
                          char *const *columns, size_t n_columns);

/* Footer and chunk table. On any failure the file is served real (why_real
 * says why). Called with vf->lock not held. */
static void prepare(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf,
                    const sv_cancel *reader)
{
    const sv_hint *h = v->hint;
    vf->footer = footer_cache_get(env->plain->footers, &pf->obj, reader);
    if (!vf->footer->meta) {
        vf_real(vf, "footer: ", vf->footer->err.msg);
        return;
    }
    const pq_file_meta *m = vf->meta = vf->footer->meta;
    if (m->has_encryption_algorithm) {
        vf_real(vf, "", "encrypted file");
        return;
    }
    vf->total_rows = (uint64_t)(m->num_rows > 0 ? m->num_rows : 0);
    vf->sel = calloc(m->n_row_groups ? m->n_row_groups : 1, sizeof *vf->sel);
    vf->filter_col = calloc(m->n_leaves ? m->n_leaves : 1, sizeof *vf->filter_col);
    vf->want_col = calloc(m->n_leaves ? m->n_leaves : 1, sizeof *vf->want_col);
    vf->n_chunks = (size_t)m->n_row_groups * m->n_leaves;
    vf->chunks = calloc(vf->n_chunks ? vf->n_chunks : 1, sizeof *vf->chunks);
    vf->by_start = calloc(vf->n_chunks ? vf->n_chunks : 1, sizeof *vf->by_start);
    if (!vf->sel || !vf->filter_col || !vf->want_col || !vf->chunks || !vf->by_start) {
        vf_real(vf, "", "out of memory");
        return;
    }
    const view_table *tb = v->table;
    if (tb && tb->snap && !(vf->add = view_table_file(tb, vf->relpath))) {
        vf_real(vf, "", "not a file of the table's snapshot");
        return;
    }
    const pred_expr *pred = tb ? tb->pred : h->pred;
    char *const *columns = tb ? tb->columns : h->columns;
    size_t n_columns = tb ? tb->n_columns : h->n_columns;
    /* mode id: the file's columns found by their field ids */
    pred_expr *file_pred = NULL;
    char **file_columns = NULL;
    size_t n_file_columns = 0;
    if (tb && tb->snap && table_snap_get(tb->snap)->schema.mode == DELTA_MAPPING_ID) {
        if (!view_table_names_for_file(tb, h, m, &file_pred, &file_columns, &n_file_columns)) {
            vf_real(vf, "", "column names by field id: out of memory");
            return;
        }
        pred = file_pred;
        columns = file_columns;
        n_columns = n_file_columns;
    }
    prepare_names(vf, m, tb, pred, columns, n_columns);
    view_table_free_names(file_pred, file_columns, n_file_columns);
    /* Every row selected and no columns to fetch together: nothing to sieve
     * and nothing to gain over the plain path, whose prefetch reads on into
     * the chunks ahead (a view's does not: it may sieve them). */
    if (!vf->why_real[0] && !vf->pred && !vf->select_none && n_columns == 0 && !hint_rows_for(h, vf->relpath))
        vf_real(vf, "", "the hint selects every row and names no columns");
    if (!vf->why_real[0])
        (void)build_chunks(pf, vf);
}

/* Bind the predicate (with the file's partition constants) and mark the
 * filter and wanted columns; on failure vf_real says why. */
static void prepare_names(view_file *vf, const pq_file_meta *m, const view_table *tb, const pred_expr *pred,
                          char *const *columns, size_t n_columns)
{
    if (pred) {
        pred_error perr;
        pred_constant *k = NULL;
        size_t nk = 0;
        if (vf->add && !view_table_constants(tb, vf->add, &k, &nk)) {
            vf_real(vf, "", "a partition value cannot be read with certainty");
            return;
        }
        pred_status st = pred_bind_constants(pred, m, k, nk, &vf->pred, &perr);
        free(k);
        if (st != PRED_OK) {
            vf_real(vf, "where does not fit this file: ", perr.msg);
            return;
        }
        /* Filter columns are real even in a file selected empty: a reader that
         * reads the file anyway (by hand, without the log's statistics) must
         * evaluate its filter on real values, not on synthesized ones. */
        for (size_t i = 0; i < pred_bound_ncols(vf->pred); i++)
            vf->filter_col[pred_bound_leaf(vf->pred, i)] = true;
        const pred_truth truth = pred_bound_truth(vf->pred);
        if (truth != PRED_TRUTH_VARIES) { /* decided by the partition values */
            vf->select_none = truth != PRED_TRUTH_TRUE;
            vf->excluded_by = vf->select_none ? "partition_values" : NULL;
            pred_bound_free(vf->pred);
            vf->pred = NULL;
        } else if (vf->add && vf->add->stats) {
            /* The log's per-file statistics, before any filter chunk is fetched. */
            delta_file_stats *fst = delta_file_stats_parse(vf->add->stats, strlen(vf->add->stats));
            if (fst && !delta_file_stats_may_match(fst, vf->pred, m)) {
                vf->select_none = true;
                vf->excluded_by = "log_stats";
                pred_bound_free(vf->pred);
                vf->pred = NULL;
            }
            delta_file_stats_free(fst);
        }
    }
    for (uint32_t i = 0; i < m->n_leaves; i++)
        vf->want_col[i] = n_columns == 0;
    pq_column_resolver *names = n_columns ? pq_column_resolver_new(m) : NULL;
    if (n_columns && !names) {
        vf_real(vf, "", "out of memory");
        return;
    }
    for (size_t i = 0; i < n_columns; i++) {
        pq_column_match cm;
        if (pq_column_resolve(names, columns[i], &cm) == PQ_RESOLVE_OK)
            vf->want_col[cm.leaf] = true;
    }
    pq_column_resolver_free(names);
}

/* The selection of every row group (select_rows) with the predicate bound
 * by prepare: 0, or -1 with err set. Called with vf->lock not held. */
static int evaluate_selection(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf,
                              uint64_t *selected_rows, sv_error *err, const sv_cancel *reader)
{
    /* A deadline of its own (the reader's may be nearly spent), and the
     * interrupt of the reader whose thread evaluates: given up, it is a
     * failed selection (the file is served real, as on a failed fetch).
     * TODO: evaluate off the reader's thread, so no interrupt costs it. */
    sv_cancel tok;
    object_io_cancel_init_under(env->plain->io, &tok, reader);
    return select_rows(env, v->hint, pf, vf, vf->pred, selected_rows, err, &tok);
}

int view_file_ensure_selected(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf,
                              const sv_cancel *tok)
{
    if (vf->state == VF_READY && vf->selection == SEL_PENDING) {
        vf->selection = SEL_RUNNING;
        pthread_mutex_unlock(&vf->lock);
        sv_error err = {0};
        uint64_t selected = 0;
        int rc = evaluate_selection(env, v, pf, vf, &selected, &err, tok);
        pthread_mutex_lock(&vf->lock);
        vf->selected_rows = selected;
        if (rc != 0) {
            vf_real(vf, "selection: ", err.msg);
            vf->state = VF_REAL;
            log_info("view %s: %s served real: %s", v->name, vf->relpath, vf->why_real);
        } else {
            /* Row groups whose every row is selected have nothing to sieve. */
            for (size_t i = 0; i < vf->n_chunks; i++) {
                vchunk *ch = &vf->chunks[i];
                if (ch->state == CH_UNPLANNED && !ch->real &&
                    row_ranges_count(&vf->sel[ch->rg]) >= (uint64_t)vf->meta->row_groups[ch->rg].num_rows) {
                    ch->real = true;
                    ch->all_real = true;
                    ch->state = CH_PLANNED;
                }
            }
        }
        vf->selection = SEL_DONE;
        pthread_cond_broadcast(&vf->cond);
    }
    int e = 0;
    while (vf->state == VF_READY && vf->selection == SEL_RUNNING && !e)
        e = sv_cancel_wait(tok, &vf->cond, &vf->lock);
    return vf->state == VF_READY && vf->selection == SEL_RUNNING ? -e : 0;
}

int view_file_ensure_prepared(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf,
                              const sv_cancel *tok)
{
    if (vf->state == VF_NEW) {
        if (!plain_is_parquet_name(pf->obj.key)) {
            vf->state = VF_REAL;
            vf_real(vf, "", "not a .parquet file");
        } else {
            vf->state = VF_PREPARING;
            pthread_mutex_unlock(&vf->lock);
            prepare(env, v, pf, vf, tok);
            pthread_mutex_lock(&vf->lock);
            vf->state = vf->why_real[0] ? VF_REAL : VF_READY;
            if (vf->state == VF_REAL)
                log_info("view %s: %s served real: %s", v->name, vf->relpath, vf->why_real);
            pthread_cond_broadcast(&vf->cond);
        }
    }
    int e = 0;
    while (vf->state == VF_PREPARING && !e)
        e = sv_cancel_wait(tok, &vf->cond, &vf->lock);
    return vf->state == VF_PREPARING ? -e : 0;
}

int view_file_demote(view_file *vf, const char *why, const sv_cancel *tok)
{
    pthread_mutex_lock(&vf->lock);
    if (!vf->demoted) {
        vf->demoted = true;
        snprintf(vf->why_demoted, sizeof vf->why_demoted, "%s", why);
    }
    int e = 0;
    while (vf->synth_in_flight > 0 && !e)
        e = sv_cancel_wait(tok, &vf->cond, &vf->lock);
    pthread_mutex_unlock(&vf->lock);
    return -e;
}

void view_file_synth_done(view_file *vf)
{
    pthread_mutex_lock(&vf->lock);
    if (--vf->synth_in_flight == 0)
        pthread_cond_broadcast(&vf->cond);
    pthread_mutex_unlock(&vf->lock);
}

const vchunk *view_chunk_at(const view_file *vf, uint64_t off, size_t *ci)
{
    size_t lo = 0, hi = vf->n_chunks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vf->chunks[vf->by_start[mid]].end <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < vf->n_chunks && vf->chunks[vf->by_start[lo]].start <= off) {
        *ci = vf->by_start[lo];
        return &vf->chunks[*ci];
    }
    *ci = lo; /* position of the next chunk in by_start */
    return NULL;
}

uint64_t view_piece_at(const view_file *vf, uint64_t pos, uint64_t end, const vchunk **ch)
{
    size_t ci;
    *ch = view_chunk_at(vf, pos, &ci);
    uint64_t stop = *ch ? (*ch)->end : ci < vf->n_chunks ? vf->chunks[vf->by_start[ci]].start : end;
    return stop < end ? stop : end;
}

uint32_t vchunk_first_page_after(const vchunk *ch, uint64_t off)
{
    uint32_t lo = 0, hi = ch->pm.n_pages;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ch->pm.pages[mid].offset + ch->pm.pages[mid].total_size <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
