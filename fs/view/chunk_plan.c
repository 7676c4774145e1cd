#include "chunk_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_model.h"
#include "dict_refs.h"
#include "header_walk.h"
#include "log.h"
#include "page_map_cache.h"
#include "page_map_remote.h"
#include "parquet_meta.h"
#include "sv_grow.h"

typedef struct {
    vchunk *ch;
    uint32_t page;
    pp_bytes *known;
    pp_range *rows;
    uint32_t n_rows;
    pp_result res;
    bool done;
    page_reason why_real; /* when it is served real without a planner verdict */
    /* The chunk's dictionary page, keeping the entries its selected rows
     * reference (owned, sorted). */
    bool dictionary;
    uint32_t *entries;
    uint32_t n_entries;
    int64_t dict_values; /* pp_input.dict_values: 1 when the footer shows an entry */
} page_job;

/* Dictionary pages this small are read whole: the entries' round does not pay. */
#define DICT_PLAN_MIN (64u << 10)

typedef object_range fetch_span; /* a file range and the buffer it is fetched into */

static int cmp_span(const void *a, const void *b)
{
    const fetch_span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

/* Sort spans and join neighbours closer than merge (up to COST_MAX_FETCH a
 * request), as the planning rounds fetch them; returns the spans left. */
static size_t join_spans(fetch_span *spans, size_t n, uint64_t merge)
{
    if (n == 0)
        return 0;
    qsort(spans, n, sizeof *spans, cmp_span);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && spans[i].off <= spans[w - 1].off + spans[w - 1].len + merge &&
            spans[i].off + spans[i].len - spans[w - 1].off <= COST_MAX_FETCH) {
            uint64_t end = spans[i].off + spans[i].len;
            if (end > spans[w - 1].off + spans[w - 1].len)
                spans[w - 1].len = end - spans[w - 1].off;
        } else {
            spans[w++] = spans[i];
        }
    }
    return w;
}

static void finish_page(const view_file *vf, view_counters *vt, page_job *j)
{
    vpage *vp = &j->ch->pages[j->page];
    if (j->res.outcome == PP_SPARSE) {
        /* The image is held as long as the view: it must fit the budget. */
        uint64_t image = 0;
        for (uint32_t k = 0; k < j->res.n_pieces; k++)
            image += j->res.pieces[k].len;
        if (partial_memory_reserve(vf->mem, image)) {
            j->ch->image_bytes += image;
        } else {
            pp_result_free(&j->res);
            j->res.outcome = PP_NEED; /* no verdict: why_real counts */
            j->why_real = PAGE_PARTIAL_MEMORY;
        }
    }
    if (j->res.outcome == PP_SPARSE) {
        vp->kind = VP_SPARSE;
        vp->pieces = j->res.pieces;
        vp->n_pieces = j->res.n_pieces;
        j->res.pieces = NULL;
        j->res.n_pieces = 0;
        if (j->dictionary) {
            vt->dict_pages_sparse++;
            vt->dict_entries_kept += j->res.selected_values;
            vt->dict_entries += j->res.dict_entries;
        } else if (j->res.synthesized) {
            vt->pages_synth++;
            vt->pages[PAGE_SYNTHESIZED]++;
        } else {
            vt->pages_partial++;
            vt->pages[PAGE_PARTIAL]++;
        }
    } else {
        vp->kind = VP_REAL;
        vt->pages_real++;
        vt->pages[j->res.outcome == PP_REAL
                      ? page_reason_of_planner(j->res.reason, j->res.contradicts_file)
                      : j->why_real]++;
        vt->bytes_fetched += j->ch->pm.pages[j->page].total_size;
        /* A page whose bytes contradict the file's own metadata is worth
         * telling the operator about; ordinary declines are debug noise. */
        if (j->res.outcome == PP_REAL)
            SV_LOG(j->res.contradicts_file ? SV_LOG_INFO : SV_LOG_DEBUG, "%s: page at %llu served real: %s",
                   vf->relpath, (unsigned long long)j->ch->pm.pages[j->page].offset, j->res.reason);
    }
    pp_result_free(&j->res);
}

/* Serve every unfinished page real (a fetch or an allocation failed). */
static void give_up_pending(const view_file *vf, view_counters *vt, page_job *jobs, size_t njobs,
                            page_reason why)
{
    for (size_t i = 0; i < njobs; i++)
        if (!jobs[i].done) {
            pp_result_free(&jobs[i].res);
            jobs[i].res.outcome = PP_NEED; /* no verdict: why_real counts */
            jobs[i].why_real = why;
            jobs[i].done = true;
            finish_page(vf, vt, &jobs[i]);
        }
}

cost_link view_cost_link(const view_env *env, const sv_cancel *tok)
{
    if (env->request_cost_override >= 0)
        return cost_link_from_request_cost(env->request_cost_override > COST_REQUEST_BYTES_MAX
                                               ? COST_REQUEST_BYTES_MAX
                                               : (uint32_t)env->request_cost_override);
    conn_profile prof;
    if (!link_profile_get(env->profile, &prof) && !link_profile_retry_once(env->profile, tok, &prof))
        return cost_link_none();
    return cost_link_from_profile(&prof, 0);
}

/* What one page's partial plan is expected to fetch before any byte of it is
 * known: the header probe, then the selected rows' share of the page (values
 * spread evenly), ranges closer than gap_merge read as one. */
typedef struct {
    uint64_t bytes, requests;
    uint32_t rounds;
} plan_estimate;

static plan_estimate estimate_page(const pq_page *pg, const page_job *j, uint32_t gap_merge)
{
    plan_estimate e = {pg->total_size < PP_HEADER_PROBE ? pg->total_size : PP_HEADER_PROBE, 1, 1};
    if (j->dictionary) {
        /* The referenced entries, runs closer than gap_merge read as one
         * (entries taken as 8 bytes; the planner weighs the real widths). */
        uint64_t bytes = 0, requests = 0;
        for (uint32_t i = 0; i < j->n_entries; i++) {
            const uint64_t gap = i ? (uint64_t)(j->entries[i] - j->entries[i - 1] - 1) * 8 : UINT64_MAX;
            if (gap >= gap_merge)
                requests++;
            else
                bytes += gap;
            bytes += 8;
        }
        e.bytes += bytes < pg->total_size ? bytes : pg->total_size;
        e.requests += requests;
        e.rounds = 2; /* header, then entries (and literal headers) */
        return e;
    }
    if (j->n_rows == 0)
        return e; /* synthesized: the header (and levels) only */
    const double per_row = (double)pg->total_size / (double)pg->num_rows;
    uint64_t bytes = 0, requests = 0;
    uint32_t prev_end = 0;
    for (uint32_t r = 0; r < j->n_rows; r++) {
        const double gap = (j->rows[r].off - prev_end) * per_row;
        if (requests == 0 || gap >= gap_merge)
            requests++;
        else
            bytes += (uint64_t)gap;
        bytes += (uint64_t)(j->rows[r].len * per_row + 1);
        prev_end = j->rows[r].off + j->rows[r].len;
    }
    e.bytes += bytes < pg->total_size ? bytes : pg->total_size;
    e.requests += requests;
    e.rounds = 2; /* header, then values */
    return e;
}

/* A data page with no selected row: synthesized when the file's partial
 * plan is declined too, if synthesis_pays. */
static bool job_synthesized_either_way(const page_job *j)
{
    return !j->dictionary && j->n_rows == 0;
}

/* Whether the pages without a selected row of a declined plan are cheaper
 * synthesized than read whole with the rest: their header probes, joined as
 * the planning rounds join them (pages closer than fetch_merge are read
 * through), ride in one round with the real pages; read whole, they cost
 * their bytes and a request per chunk. Small pages close together save
 * little and cost a request each. */
static bool synthesis_pays(const cost_link *link, const view_file *vf, const page_job *jobs, size_t njobs,
                           uint64_t fetch_merge)
{
    fetch_span *probes = malloc((njobs ? njobs : 1) * sizeof *probes);
    if (!probes)
        return false; /* read whole, as without a plan */
    size_t n = 0;
    uint64_t whole_bytes = 0, whole_requests = 0;
    const vchunk *last = NULL;
    for (size_t i = 0; i < njobs; i++) {
        if (!job_synthesized_either_way(&jobs[i]))
            continue;
        const pq_page *pg = &jobs[i].ch->pm.pages[jobs[i].page];
        probes[n++] = (fetch_span){pg->offset, pg->total_size < PP_HEADER_PROBE ? pg->total_size : PP_HEADER_PROBE,
                                   NULL};
        whole_bytes += pg->total_size;
        if (jobs[i].ch != last)
            whole_requests++;
        last = jobs[i].ch;
    }
    if (n == 0) {
        free(probes);
        return true;
    }
    const size_t probe_requests = join_spans(probes, n, fetch_merge);
    uint64_t probe_bytes = 0;
    for (size_t i = 0; i < probe_requests; i++)
        probe_bytes += probes[i].len;
    free(probes);
    const double synth = cost_whole_time(link, probe_bytes, probe_requests);
    const double whole = cost_whole_time(link, whole_bytes, whole_requests);
    const bool pays = synth <= (1 - COST_MIN_SAVING) * whole;
    log_debug("%s: %zu pages without a selected row: header probes %llu B in %llu requests, %.3f s; whole %llu B, "
              "%.3f s: %s",
              vf->relpath, n, (unsigned long long)probe_bytes, (unsigned long long)probe_requests, synth,
              (unsigned long long)whole_bytes, whole, pays ? "synthesized" : "read whole");
    return pays;
}

/* Judge the file's partial plan as a whole: its pages share the planning
 * rounds, so 70 columns pay for two round trips once, not 70 times. One debug
 * line per chunk gives both estimates and the choice. */
static bool file_plan_pays(const cost_link *link, const view_file *vf, const page_job *jobs, size_t njobs,
                           uint32_t gap_merge)
{
    uint64_t part_bytes = 0, whole_bytes = 0, whole_requests = 0;
    uint32_t rounds = 0;
    uint64_t round_requests[2] = {0, 0}; /* the header probes, then the values */
    const page_job *prev = NULL;
    for (size_t i = 0; i < njobs; i++) {
        if (job_synthesized_either_way(&jobs[i]))
            continue;
        const pq_page *pg = &jobs[i].ch->pm.pages[jobs[i].page];
        const plan_estimate e = estimate_page(pg, &jobs[i], gap_merge);
        part_bytes += e.bytes;
        rounds = e.rounds > rounds ? e.rounds : rounds;
        round_requests[0]++;
        round_requests[1] += e.requests - 1;
        whole_bytes += pg->total_size;
        if (!prev || jobs[i].ch != prev->ch)
            whole_requests++; /* a reader reads a chunk's pages in one go */
        prev = &jobs[i];
    }
    if (!prev)
        return true; /* only pages without a selected row: synthesis_pays judges them */
    const bool pays = cost_file_pays_rounds(link, round_requests, rounds, part_bytes, whole_bytes,
                                            whole_requests, COST_MIN_SAVING);
    if (SV_LOG_DEBUG <= sv_log_threshold) {
        const double tp = cost_partial_time(link, round_requests, rounds, part_bytes);
        const double tw = cost_whole_time(link, whole_bytes, whole_requests);
        /* Per chunk: its pages' share, with the file's rounds. */
        for (size_t i = 0; i < njobs;) {
            size_t k = i;
            plan_estimate c = {0, 0, 0};
            uint64_t cw = 0;
            for (; k < njobs && jobs[k].ch == jobs[i].ch; k++) {
                const pq_page *pg = &jobs[k].ch->pm.pages[jobs[k].page];
                const plan_estimate e = estimate_page(pg, &jobs[k], gap_merge);
                c.bytes += e.bytes;
                c.requests += e.requests;
                cw += pg->total_size;
            }
            log_debug("%s: chunk plan rg %u column %u: partial %llu B in %llu requests, whole %llu B; "
                      "file partial %.3f s in %u rounds, whole %.3f s (%s prices): %s (%s)",
                      vf->relpath, jobs[i].ch->rg, jobs[i].ch->col, (unsigned long long)c.bytes,
                      (unsigned long long)c.requests, (unsigned long long)cw, tp, rounds, tw,
                      cost_source_name(link->source), pays ? "partial" : "real",
                      pays ? "cheaper" : "file_cost");
            i = k;
        }
    }
    return pays;
}

/* Real bytes to fetch while the rest is planned: sorted, exact neighbours
 * joined, each started in parallel parts. */
static void prefetch_spans(object_io *io, const object_ref *o, fetch_span *spans, size_t n)
{
    if (n == 0)
        return; /* spans may be NULL, which qsort must not get */
    qsort(spans, n, sizeof *spans, cmp_span);
    prefetch_run run = {0, 0, true};
    for (size_t i = 0; i < n; i++)
        prefetch_run_add(io, o, &run, spans[i].off, spans[i].off + spans[i].len);
    prefetch_run_flush(io, o, &run);
}

/* Rounds a chunk's header walk may take: a regular chunk takes two (its
 * first header, then the rest predicted); one whose first page shows it
 * cannot be regular is given up after the first, as is one the second
 * round does not finish: a round trip per page would not pay. */
#define HEADER_WALK_ROUNDS 2

/* Whether chunk ch (not served real for another reason) gets its page map
 * from a walk of its headers (view_chunk_wants_header_walk). */
static bool chunk_wants_walk(const pq_file_meta *m, const vchunk *ch, uint64_t size)
{
    return !ch->real && view_chunk_wants_header_walk(m, ch->rg, ch->col, size);
}

/* Whether walking the headers of the chunks chunk_wants_walk picks can pay
 * on this link: at least two rounds of walking and one of values, and the
 * selected rows' share of the bytes, against reading the chunks whole. The
 * file's plan is judged again once the maps are known (file_plan_pays);
 * this keeps a chunk read alone, too small to repay two round trips, from
 * waiting for them. The --request-cost override prices rounds at nothing.
 * Only chunks candidate[k] count; chunks cached[k] cost no round. */
static bool walk_may_pay(const cost_link *link, const view_file *vf, vchunk *const *chs, size_t n,
                         const bool *candidate, const bool *cached)
{
    uint64_t bytes = 0, chunks = 0;
    double selected_bytes = 0;
    for (size_t k = 0; k < n; k++) {
        const vchunk *ch = chs[k];
        if (!candidate[k] || cached[k])
            continue;
        const int64_t rows = vf->meta->row_groups[ch->rg].num_rows;
        const uint64_t len = ch->end - ch->start;
        bytes += len;
        chunks++;
        if (rows > 0)
            selected_bytes += (double)len * (double)row_ranges_count_in(&vf->sel[ch->rg], 0, (uint64_t)rows) /
                              (double)rows;
    }
    if (chunks == 0)
        return false;
    if (link->source != COST_SOURCE_PROFILE)
        return true;
    const double walk = 3 * link->round_s + selected_bytes * link->byte_s;
    return walk < (1 - COST_MIN_SAVING) * cost_whole_time(link, bytes, chunks);
}

/* The page maps of the chunks (walked[k] set) that chunk_wants_walk picks,
 * from their page headers: each round fetches the header windows every
 * unfinished walk asks for, all at once. A walk that fails or does not
 * finish leaves its chunk without a map (served real). Returns the walks
 * (one per chunk; their windows seed the page planner unless no_seed[k]),
 * freed with free_walks, or NULL. */
static pq_header_walk *walk_headers(const view_env *env, const object_ref *o, const view_file *vf,
                                    vchunk *const *chs, size_t n, bool *walked, bool *no_seed,
                                    const cost_link *link, const sv_cancel *tok, uint64_t *bytes,
                                    uint64_t *requests)
{
    object_io *io = env->plain->io;
    const pq_file_meta *m = vf->meta;
    pq_header_walk *walks = calloc(n ? n : 1, sizeof *walks);
    bool *active = calloc(n ? n : 1, sizeof *active);
    bool *cached = calloc(n ? n : 1, sizeof *cached);
    bool *candidate = calloc(n ? n : 1, sizeof *candidate);
    pq_header_want *wants = malloc(PQ_HEADER_WALK_MAX_WANTS * sizeof *wants);
    size_t n_active = 0;
    const bool ready = walks && active && cached && candidate && wants;
    size_t n_candidates = 0;
    for (size_t k = 0; ready && k < n; k++)
        n_candidates += candidate[k] = chunk_wants_walk(m, chs[k], o->size);
    /* Maps built ahead of time, unless the selection looked for them. */
    if (n_candidates > 0)
        page_map_prebuilt_load(env, o, vf->base_ino, tok);
    /* Walked before (another view, an earlier open): no round at all. */
    for (size_t k = 0; ready && k < n; k++) {
        if (!candidate[k])
            continue;
        pq_column_ctx ctx = pq_column_ctx_of(m, chs[k]->rg, chs[k]->col);
        bool from_s3 = false;
        cached[k] = page_map_cache_get(env->page_maps, o, chs[k]->rg, chs[k]->col, &ctx, &walks[k], &from_s3);
        /* Header bytes read back from the cache directory are not served:
         * the page planner reads them from S3. */
        if (cached[k] && !from_s3)
            no_seed[k] = true;
    }
    const bool walk = ready && walk_may_pay(link, vf, chs, n, candidate, cached);
    for (size_t k = 0; walk && k < n; k++) {
        if (!candidate[k] || cached[k])
            continue;
        pq_column_ctx ctx = pq_column_ctx_of(m, chs[k]->rg, chs[k]->col);
        tc_error err;
        if (pq_header_walk_init(&walks[k], &ctx, &err) == TC_OK)
            active[k] = true, n_active++;
        else
            log_debug("%s: chunk rg %u column %s: no header walk: %s", vf->relpath, chs[k]->rg,
                      m->leaves[chs[k]->col].path, err.msg);
    }
    for (int round = 0; n_active > 0 && round < HEADER_WALK_ROUNDS; round++) {
        fetch_span *spans = NULL;
        size_t *owner = NULL; /* the chunk of each span */
        size_t nspans = 0, cap = 0, capo = 0;
        uint64_t round_bytes = 0;
        bool failed = false;
        for (size_t k = 0; k < n && !failed; k++) {
            if (!active[k])
                continue;
            size_t nw = pq_header_walk_wants(&walks[k], wants, PQ_HEADER_WALK_MAX_WANTS);
            for (size_t i = 0; i < nw && !failed; i++) {
                failed = !sv_grow((void **)&spans, &cap, nspans + 1, sizeof *spans, 64, SIZE_MAX / 64) ||
                         !sv_grow((void **)&owner, &capo, nspans + 1, sizeof *owner, 64, SIZE_MAX / 64);
                if (!failed) {
                    owner[nspans] = k;
                    spans[nspans++] = (fetch_span){wants[i].offset, wants[i].len, NULL};
                    round_bytes += wants[i].len;
                }
            }
        }
        if (!failed && !partial_memory_reserve(vf->mem, round_bytes))
            failed = true, round_bytes = 0;
        for (size_t i = 0; i < nspans && !failed; i++)
            failed = !(spans[i].buf = malloc((size_t)spans[i].len));
        size_t started = 0;
        if (!failed && nspans > 0)
            failed = object_fetch_ranges(io, o, spans, nspans, &started, tok) != 0;
        *requests += started;
        for (size_t i = 0; i < started; i++)
            *bytes += spans[i].len;
        for (size_t i = 0; i < nspans && !failed; i++)
            if (pq_header_walk_feed(&walks[owner[i]], spans[i].off, spans[i].buf, (size_t)spans[i].len) != TC_OK)
                walks[owner[i]].failed = true;
        for (size_t i = 0; i < nspans; i++)
            free(spans[i].buf);
        free(spans);
        free(owner);
        partial_memory_release(vf->mem, round_bytes);
        log_debug("%s: header walk round %d: %zu chunks, %zu requests, %llu bytes%s", vf->relpath, round, n_active,
                  nspans, (unsigned long long)round_bytes, failed ? ", failed" : "");
        for (size_t k = 0; k < n; k++) {
            if (!active[k])
                continue;
            if (failed)
                walks[k].failed = true;
            else
                pq_header_walk_advance(&walks[k]);
            if (!walks[k].done && !walks[k].failed && !pq_header_walk_predictable(&walks[k])) {
                sv_fail(&walks[k].err, TC_E_INVALID, 0, "pages of different sizes: a round trip per page");
                walks[k].failed = true;
            }
            if (walks[k].done || walks[k].failed) {
                active[k] = false;
                n_active--;
            }
        }
    }
    for (size_t k = 0; walks && active && k < n; k++) {
        vchunk *ch = chs[k];
        tc_error err;
        if (walks[k].done && pq_header_walk_map(&walks[k], &ch->pm, &err) == TC_OK) {
            walked[k] = true;
            if (!cached[k])
                page_map_cache_put(env->page_maps, o, ch->rg, ch->col, &walks[k]);
        }
        else if (walks[k].failed)
            log_info("%s: chunk rg %u column %s: page headers do not make a page map: %s", vf->relpath, ch->rg,
                     m->leaves[ch->col].path, walks[k].err.msg);
    }
    free(wants);
    free(active);
    free(cached);
    free(candidate);
    return walks;
}

static void free_walks(pq_header_walk *walks, size_t n)
{
    for (size_t k = 0; walks && k < n; k++)
        pq_header_walk_free(&walks[k]);
    free(walks);
}

/* Give page p of walked chunk k the header window its walk fetched. */
static void seed_from_walk(const pq_header_walk *walks, const bool *walked, const bool *no_seed, size_t k,
                           const vchunk *ch, uint32_t p, pp_bytes *known)
{
    if (!walks || !walked || !walked[k] || no_seed[k])
        return;
    const uint32_t first = ch->pm.dict_page >= 0 ? 1 : 0;
    if (p < first || p - first >= walks[k].n_pages)
        return;
    const pq_header_window *win = &walks[k].confirmed[p - first];
    if (win->offset != ch->pm.pages[p].offset)
        return;
    const uint32_t len = win->len < ch->pm.pages[p].total_size ? win->len : ch->pm.pages[p].total_size;
    (void)pp_bytes_put(known, 0, win->bytes, len); /* out of memory: the planner asks for it */
}

/* Whether the chunk's encoding stats say no data page of it can be read in
 * part (every data page in an encoding such as dictionary indices, which
 * pp_encoding_reads_partially refuses): its pages holding selected rows are
 * real from the start rather than jobs priced as partial reads. Without
 * encoding stats: unknown, false. */
static bool data_pages_never_partial(const pq_column_chunk *cc, pq_physical_type type)
{
    bool any = false;
    for (uint32_t i = 0; i < cc->n_encoding_stats; i++) {
        const pq_encoding_stats *es = &cc->encoding_stats[i];
        if (es->page_type != PQ_PAGE_DATA && es->page_type != PQ_PAGE_DATA_V2)
            continue;
        if (es->count > 0 && pp_encoding_reads_partially(es->encoding, type))
            return false;
        any = true;
    }
    return any;
}

/* Whether the chunk's dictionary holds an entry, from the footer alone: the
 * encoding stats list dictionary-encoded data pages only and the
 * statistics count fewer nulls than values, so some value is a reference
 * into it. A synthesized data page may then reference entry 0, which lets
 * it take sizes that nulls alone cannot fill. */
static bool dictionary_has_entries(const pq_column_chunk *cc)
{
    if (cc->n_encoding_stats == 0 || !cc->has_statistics || !cc->statistics.has_null_count ||
        cc->statistics.null_count < 0 || cc->statistics.null_count >= cc->num_values)
        return false;
    bool any = false;
    for (uint32_t i = 0; i < cc->n_encoding_stats; i++) {
        const pq_encoding_stats *es = &cc->encoding_stats[i];
        if ((es->page_type != PQ_PAGE_DATA && es->page_type != PQ_PAGE_DATA_V2) || es->count <= 0)
            continue;
        if (es->encoding != PQ_ENC_RLE_DICTIONARY && es->encoding != PQ_ENC_PLAIN_DICTIONARY)
            return false;
        any = true;
    }
    return any;
}

/* Whether a chunk's dictionary page may be kept in part: fixed-width
 * entries, a codec the planner reads through, rows selected, and big enough
 * for the entries' round to pay. */
static bool dict_candidate(const vchunk *ch, const pq_leaf *lf, int32_t codec, const row_ranges *sel,
                           const pq_page *pg, uint32_t rc)
{
    if (ch->pm.dict_page < 0 || pg != &ch->pm.pages[ch->pm.dict_page] || sel->n == 0)
        return false;
    switch (lf->type) {
    case PQ_INT32: case PQ_INT64: case PQ_INT96: case PQ_FLOAT: case PQ_DOUBLE: case PQ_FIXED_LEN_BYTE_ARRAY: break;
    default: return false;
    }
    if (codec != PQ_CODEC_UNCOMPRESSED && codec != PQ_CODEC_ZSTD && codec != PQ_CODEC_SNAPPY)
        return false;
    return pg->total_size >= DICT_PLAN_MIN && pp_worth_planning(pg->total_size, true, rc, COST_MIN_SAVING);
}

/* Serve the dictionary page of chunk ch real, as any page that is not data. */
static void dict_page_real(const vchunk *ch, bool early, const row_ranges *sel, page_reason why,
                           view_counters *vt, fetch_span **reals, size_t *nreals, size_t *capreals)
{
    const pq_page *pg = &ch->pm.pages[ch->pm.dict_page];
    vt->pages_real++;
    vt->pages[why]++;
    vt->bytes_fetched += pg->total_size;
    if (early && sel->n > 0 && sv_grow((void **)reals, capreals, *nreals + 1, sizeof **reals, 64, SIZE_MAX / 64))
        (*reals)[(*nreals)++] = (fetch_span){pg->offset, pg->total_size, NULL};
}

/* Whether keeping entries of the candidates' dictionary pages may pay, priced
 * before their data pages are read (so a plan that cannot pay costs no
 * stall): each keeps at most one entry per selected row (8 bytes each, spread
 * evenly; entries closer than gap_merge read as one), found in four dependent
 * rounds: the data pages, the page header, the literal or block headers of a
 * compressed body, the entries. Against: the pages read whole with the rest. */
static bool dictionaries_may_pay(const cost_link *link, const view_file *vf, vchunk *const *chs,
                                 const size_t *cands, size_t ncands, uint32_t gap_merge)
{
    uint64_t round_requests[4] = {0, 0, 0, 0}, part_bytes = 0, whole_bytes = 0;
    for (size_t c = 0; c < ncands; c++) {
        const vchunk *ch = chs[cands[c]];
        const pq_page *pg = &ch->pm.pages[ch->pm.dict_page];
        const row_ranges *sel = &vf->sel[ch->rg];
        const int32_t codec = vf->meta->row_groups[ch->rg].columns[ch->col].codec;
        uint64_t rows = 0;
        for (uint32_t p = 0; p < ch->pm.n_pages; p++) {
            const pq_page *dp = &ch->pm.pages[p];
            if (!dp->is_data || dp->first_row < 0 || dp->num_rows <= 0)
                continue;
            const uint64_t n = row_ranges_count_in(sel, (uint64_t)dp->first_row,
                                                   (uint64_t)(dp->first_row + dp->num_rows));
            if (n) {
                rows += n;
                round_requests[0]++;
            }
        }
        const uint64_t size = pg->total_size;
        uint64_t entries = rows, entry_bytes = rows * 8;
        if (entries * (uint64_t)gap_merge >= size) {
            entries = 1; /* the gaps merge: the page is read (nearly) whole */
            entry_bytes = size;
        }
        round_requests[1]++;
        if (codec != PQ_CODEC_UNCOMPRESSED)
            round_requests[2] += size / (64u << 10) + 1; /* Snappy fragments, Zstd blocks */
        round_requests[3] += entries;
        part_bytes += PP_HEADER_PROBE + entry_bytes;
        whole_bytes += size;
    }
    const double t_keep = cost_partial_time(link, round_requests, 4, part_bytes);
    const double t_whole = cost_whole_time(link, whole_bytes, ncands);
    const bool pays = t_keep <= (1.0 - COST_MIN_SAVING) * t_whole;
    log_debug("%s: %zu dictionary pages, %llu B whole: keeping entries estimated %.3f s (%llu B, %llu "
              "entry requests), whole %.3f s: %s", vf->relpath, ncands, (unsigned long long)whole_bytes, t_keep,
              (unsigned long long)part_bytes, (unsigned long long)round_requests[3], t_whole,
              pays ? "keep entries" : "read whole");
    return pays;
}

/* The dictionary pages of the candidate chunks: their data pages with
 * selected rows are read through the block cache (the reader reads them
 * next, real), decoded for the entries those rows reference, and each
 * dictionary page becomes a job keeping them. Any doubt (a page that does
 * not read or decode, no memory): the dictionary page is real. */
static void dictionary_jobs(const view_env *env, const object_ref *o, const view_file *vf, vchunk *const *chs,
                            const size_t *cands, size_t ncands, bool early, view_counters *vt, page_job **jobs,
                            size_t *njobs, size_t *capjobs, fetch_span **reals, size_t *nreals, size_t *capreals,
                            const sv_cancel *tok)
{
    object_io *io = env->plain->io;
    const pq_file_meta *m = vf->meta;
    /* Every data page with selected rows, of every candidate, is asked for at once. */
    for (size_t c = 0; c < ncands; c++) {
        const vchunk *ch = chs[cands[c]];
        const row_ranges *sel = &vf->sel[ch->rg];
        for (uint32_t p = 0; p < ch->pm.n_pages; p++) {
            const pq_page *pg = &ch->pm.pages[p];
            if (pg->is_data && pg->first_row >= 0 && pg->num_rows > 0 &&
                row_ranges_count_in(sel, (uint64_t)pg->first_row, (uint64_t)(pg->first_row + pg->num_rows)))
                object_prefetch(io, o, pg->offset, pg->offset + pg->total_size, 0, true);
        }
    }
    for (size_t c = 0; c < ncands; c++) {
        vchunk *ch = chs[cands[c]];
        const row_ranges *sel = &vf->sel[ch->rg];
        const pq_leaf *lf = &m->leaves[ch->col];
        const pq_column_desc col = {lf->type, lf->type_length, lf->max_def, lf->max_rep,
                                    m->row_groups[ch->rg].columns[ch->col].codec};
        dict_refs refs = {0};
        bool ok = true;
        for (uint32_t p = 0; ok && p < ch->pm.n_pages; p++) {
            const pq_page *pg = &ch->pm.pages[p];
            if (!pg->is_data)
                continue;
            if (pg->first_row < 0 || pg->num_rows <= 0) {
                ok = false; /* rows unknown: which entries they use is unknown */
                break;
            }
            const uint64_t a = (uint64_t)pg->first_row, e = a + (uint64_t)pg->num_rows;
            if (!row_ranges_count_in(sel, a, e))
                continue;
            row_ranges pr = {0};
            pp_range *rows = NULL;
            uint8_t *buf = NULL;
            const bool reserved = partial_memory_reserve(vf->mem, pg->total_size);
            ok = reserved && row_ranges_slice(sel, a, e, &pr) && (rows = malloc(pr.n * sizeof *rows)) &&
                 (buf = malloc(pg->total_size)) &&
                 object_read(io, o, pg->offset, pg->total_size, buf, tok) == (ssize_t)pg->total_size;
            for (size_t r = 0; ok && r < pr.n; r++)
                rows[r] = (pp_range){(uint32_t)pr.r[r].start, (uint32_t)(pr.r[r].end - pr.r[r].start)};
            if (ok) {
                const dict_refs_status st =
                    dict_refs_add_page(&refs, &col, buf, pg->total_size, pg->num_rows, rows, (uint32_t)pr.n);
                ok = st == DR_OK || st == DR_NOT_DICT;
                if (!ok)
                    log_debug("%s: chunk rg %u column %s: data page at %llu gives no entries: dictionary real",
                              vf->relpath, ch->rg, lf->path, (unsigned long long)pg->offset);
            }
            free(buf);
            free(rows);
            row_ranges_free(&pr);
            if (reserved)
                partial_memory_release(vf->mem, pg->total_size);
        }
        dict_refs_finish(&refs);
        const uint32_t dp = (uint32_t)ch->pm.dict_page;
        page_job *j = NULL;
        if (ok && refs.n <= UINT32_MAX &&
            sv_grow((void **)jobs, capjobs, *njobs + 1, sizeof **jobs, 64, SIZE_MAX / 256)) {
            j = &(*jobs)[*njobs];
            memset(j, 0, sizeof *j);
            j->ch = ch;
            j->page = dp;
            j->dictionary = true;
            j->known = pp_bytes_new(ch->pm.pages[dp].total_size);
            j->entries = refs.v;
            j->n_entries = (uint32_t)refs.n;
            refs.v = NULL;
        }
        if (j && j->known) {
            (*njobs)++;
        } else {
            if (j) {
                free(j->entries);
                j = NULL;
            }
            dict_page_real(ch, early, sel, PAGE_NOT_DATA, vt, reals, nreals, capreals);
        }
        dict_refs_free(&refs);
    }
}

/* Plan the given chunks (claimed by this thread: state CH_PLANNING). early:
 * the reader is expected to read them (columns the hint names), so pages
 * found real before any round are fetched during the rounds, not after. */
static void plan_chunks(const view_env *env, const plain_file *pf, const view_file *vf, vchunk *const *chs,
                        size_t n, bool early, view_counters *vt, const sv_cancel *reader)
{
    object_io *io = env->plain->io;
    /* The whole planning: one read deadline of its own, shutdown, and the
     * interrupt of the reader whose thread plans (given up, the pages left
     * are real, as on a failed fetch). TODO: plan off the reader's thread. */
    sv_cancel tok;
    object_io_cancel_init_under(io, &tok, reader);
    const object_ref *o = &pf->obj;
    const pq_file_meta *m = vf->meta;
    page_job *jobs = NULL;
    size_t njobs = 0, capjobs = 0;
    fetch_span *reals = NULL;
    size_t nreals = 0, capreals = 0;
    uint64_t plan_bytes = 0, plan_requests = 0;
    const cost_link link = view_cost_link(env, &tok);
    const uint32_t rc = cost_request_bytes(&link);
    const uint32_t gap_merge = cost_gap_merge(rc, COST_GAP_MERGE_MIN);
    const uint64_t fetch_merge = cost_gap_merge(rc, COST_FETCH_MERGE_MIN);
    bool *walked = calloc(n ? n : 1, sizeof *walked), *no_seed = calloc(n ? n : 1, sizeof *no_seed);
    size_t *dcands = NULL, ndcands = 0, capdcands = 0; /* chunks whose dictionary page may be kept in part */
    pq_header_walk *walks = NULL;
    if (walked && no_seed && vf->selection == SEL_DONE && cost_link_allows_partial(&link))
        walks = walk_headers(env, o, vf, chs, n, walked, no_seed, &link, &tok, &plan_bytes, &plan_requests);
    for (size_t k = 0; k < n; k++) {
        vchunk *ch = chs[k];
        const pq_column_chunk *cc = &m->row_groups[ch->rg].columns[ch->col];
        const pq_leaf *lf = &m->leaves[ch->col];
        /* Why the chunk is served real, and how loud to say so: a chunk whose
         * offset index contradicts the file is worth telling the operator
         * about; ordinary declines are debug noise. */
        const char *why = NULL;
        chunk_reason reason = CHUNK_PLANNED;
        sv_log_level level = SV_LOG_DEBUG;
        if (ch->real)
            why = "filter column", reason = CHUNK_FILTER_COLUMN;
        else if (!view_leaf_is_flat(lf))
            why = "nested column", reason = CHUNK_NESTED;
        else if (!cost_link_allows_partial(&link))
            why = "no connection profile", reason = CHUNK_NO_PROFILE;
        /* Without an OffsetIndex, a chunk the metadata allows to be one data
         * page is mapped as one; the page planner's header check confirms
         * it (or serves the page real) before any byte of it is changed. */
        bool predicted = false;
        if (walked && walked[k] && why) {
            pq_page_map_free(&ch->pm); /* walked, but served real after all */
        } else if (walked && walked[k]) {
            predicted = true; /* its map comes from its headers (walk_headers) */
        } else if (!why && !view_chunk_has_offset_index(cc, o->size)) {
            pq_column_ctx ctx = pq_column_ctx_of(m, ch->rg, ch->col);
            tc_error terr;
            if (pq_page_map_predict_single_page(&ctx, &ch->pm, &terr) == TC_OK)
                predicted = true;
            else
                why = "no offset index", reason = CHUNK_NO_OFFSET_INDEX;
        }
        if (!why && !predicted) {
            uint8_t *oib = malloc((size_t)cc->offset_index_length);
            pq_offset_index oi;
            tc_error terr;
            memset(&terr, 0, sizeof terr);
            level = SV_LOG_INFO;
            if (!oib || object_read(io, o, (uint64_t)cc->offset_index_offset, (size_t)cc->offset_index_length,
                                    oib, &tok) != cc->offset_index_length) {
                why = "offset index unreadable", reason = CHUNK_OFFSET_INDEX_BAD;
            } else if (pq_offset_index_parse(oib, (size_t)cc->offset_index_length, &oi, &terr) != TC_OK) {
                why = "offset index malformed", reason = CHUNK_OFFSET_INDEX_BAD;
            } else {
                pq_column_ctx ctx = pq_column_ctx_of(m, ch->rg, ch->col);
                if (pq_page_map_from_offset_index(&ctx, &oi, &ch->pm, &terr) != TC_OK)
                    why = "offset index disagrees with the chunk", reason = CHUNK_OFFSET_INDEX_BAD;
                pq_offset_index_free(&oi);
            }
            free(oib);
        }
        if (!why) {
            ch->pages = calloc(ch->pm.n_pages ? ch->pm.n_pages : 1, sizeof *ch->pages);
            if (!ch->pages) {
                why = "out of memory", reason = CHUNK_NOMEM;
                level = SV_LOG_DEBUG;
            }
        }
        vt->chunks[reason]++;
        const row_ranges *sel = &vf->sel[ch->rg];
        if (why) {
            if (!ch->real)
                SV_LOG(level, "%s: chunk rg %u column %s served real: %s", vf->relpath, ch->rg, lf->path, why);
            pq_page_map_free(&ch->pm);
            ch->real = true;
            vt->bytes_fetched += ch->end - ch->start;
            /* A named column the reader will read whole: fetched with the rest. */
            if (early && sel->n > 0 && reason != CHUNK_FILTER_COLUMN &&
                sv_grow((void **)&reals, &capreals, nreals + 1, sizeof *reals, 64, SIZE_MAX / 64))
                reals[nreals++] = (fetch_span){ch->start, ch->end - ch->start, NULL};
            continue;
        }
        const bool never_partial = data_pages_never_partial(cc, lf->type);
        for (uint32_t p = 0; p < ch->pm.n_pages; p++) {
            const pq_page *pg = &ch->pm.pages[p];
            ch->pages[p].kind = VP_REAL;
            if (!pg->is_data && dict_candidate(ch, lf, cc->codec, sel, pg, rc)) {
                if (sv_grow((void **)&dcands, &capdcands, ndcands + 1, sizeof *dcands, 16, SIZE_MAX / 64)) {
                    dcands[ndcands++] = k; /* its entries are known once its data pages are read */
                    continue;
                }
            }
            if (!pg->is_data || pg->first_row < 0 || pg->num_rows <= 0) {
                vt->pages_real++;
                vt->pages[PAGE_NOT_DATA]++;
                vt->bytes_fetched += pg->total_size;
                /* A dictionary page is read before any data page of its chunk. */
                if (early && sel->n > 0 &&
                    sv_grow((void **)&reals, &capreals, nreals + 1, sizeof *reals, 64, SIZE_MAX / 64))
                    reals[nreals++] = (fetch_span){pg->offset, pg->total_size, NULL};
                continue;
            }
            uint64_t a = (uint64_t)pg->first_row, e = a + (uint64_t)pg->num_rows;
            uint64_t cnt = row_ranges_count_in(sel, a, e);
            if (cnt == e - a || (cnt > 0 && never_partial) ||
                !pp_worth_planning(pg->total_size, cnt > 0, rc, COST_MIN_SAVING)) {
                /* every row selected, an encoding read only whole, or too
                 * small to pay for its requests */
                vt->pages_real++;
                vt->pages[cnt == e - a ? PAGE_ALL_SELECTED : cnt > 0 && never_partial ? PAGE_ENCODING
                                                                                      : PAGE_REQUEST_COST]++;
                vt->bytes_fetched += pg->total_size;
                /* Without memory for it, a page is fetched when read, as usual. */
                if (early && sel->n > 0 &&
                    sv_grow((void **)&reals, &capreals, nreals + 1, sizeof *reals, 64, SIZE_MAX / 64))
                    reals[nreals++] = (fetch_span){pg->offset, pg->total_size, NULL};
                continue;
            }
            if (!sv_grow((void **)&jobs, &capjobs, njobs + 1, sizeof *jobs, 64, SIZE_MAX / 256)) {
                vt->pages_real++;
                vt->pages[PAGE_OTHER]++;
                vt->bytes_fetched += pg->total_size;
                continue;
            }
            page_job *j = &jobs[njobs];
            memset(j, 0, sizeof *j);
            j->ch = ch;
            j->page = p;
            j->known = pp_bytes_new(pg->total_size);
            j->dict_values = ch->pm.dict_page >= 0 && dictionary_has_entries(cc) ? 1 : 0;
            if (j->known)
                seed_from_walk(walks, walked, no_seed, k, ch, p, j->known);
            row_ranges pr = {0};
            bool ok = j->known && row_ranges_slice(sel, a, e, &pr);
            if (ok && pr.n) {
                j->rows = malloc(pr.n * sizeof *j->rows);
                ok = j->rows != NULL;
                for (size_t r = 0; ok && r < pr.n; r++)
                    j->rows[r] = (pp_range){(uint32_t)pr.r[r].start, (uint32_t)(pr.r[r].end - pr.r[r].start)};
                j->n_rows = (uint32_t)pr.n;
            }
            row_ranges_free(&pr);
            if (!ok) {
                pp_bytes_free(j->known);
                free(j->rows);
                vt->pages_real++;
                vt->pages[PAGE_OTHER]++;
                vt->bytes_fetched += pg->total_size;
                continue;
            }
            njobs++;
        }
    }
    free_walks(walks, n);
    if (ndcands > 0 && link.source == COST_SOURCE_PROFILE &&
        !dictionaries_may_pay(&link, vf, chs, dcands, ndcands, gap_merge)) {
        for (size_t c = 0; c < ndcands; c++)
            dict_page_real(chs[dcands[c]], early, &vf->sel[chs[dcands[c]]->rg], PAGE_SAVING, vt, &reals, &nreals,
                           &capreals);
        ndcands = 0;
    }
    if (ndcands > 0) {
        /* The real pages start now, not after the dictionaries' data pages. */
        prefetch_spans(io, o, reals, nreals);
        nreals = 0;
        dictionary_jobs(env, o, vf, chs, dcands, ndcands, early, vt, &jobs, &njobs, &capjobs, &reals, &nreals,
                        &capreals, &tok);
    }
    free(dcands);
    /* The --request-cost override keeps the per-page model (rounds free). */
    const bool priced = njobs > 0 && link.source == COST_SOURCE_PROFILE;
    const bool partial = !priced || file_plan_pays(&link, vf, jobs, njobs, gap_merge);
    const bool synthesize = !priced || synthesis_pays(&link, vf, jobs, njobs, fetch_merge);
    if (!partial || !synthesize) {
        /* The pages the model declines are read whole: those with a selected
         * row when the file's partial plan does not pay, those without one
         * when their synthesis does not. Their chunk counts as file_cost
         * (once: a chunk's dictionary job comes after the data pages' jobs). */
        for (size_t i = 0; i < njobs; i++) {
            if (job_synthesized_either_way(&jobs[i]) ? synthesize : partial)
                continue;
            const pq_page *pg = &jobs[i].ch->pm.pages[jobs[i].page];
            if (!jobs[i].ch->file_cost) {
                jobs[i].ch->file_cost = true;
                vt->chunks[CHUNK_PLANNED]--;
                vt->chunks[CHUNK_FILE_COST]++;
            }
            jobs[i].done = true;
            jobs[i].why_real = PAGE_SAVING;
            jobs[i].res.outcome = PP_NEED; /* no verdict: why_real counts */
            finish_page(vf, vt, &jobs[i]);
            if (early && vf->sel[jobs[i].ch->rg].n > 0 &&
                sv_grow((void **)&reals, &capreals, nreals + 1, sizeof *reals, 64, SIZE_MAX / 64))
                reals[nreals++] = (fetch_span){pg->offset, pg->total_size, NULL};
        }
    }
    /* The kernel's readahead past the end of a named chunk runs on into the
     * next one when the hint leaves that column out: what it will ask for
     * comes with the rest, not a round trip after the reader's last read. */
    const uint64_t ra = prefetch_kernel_runs_on(&env->plain->cfg.prefetch);
    for (size_t k = 0; early && ra > 0 && k < n; k++) {
        if (vf->sel[chs[k]->rg].n == 0)
            continue;
        size_t ci;
        const vchunk *next = view_chunk_at(vf, chs[k]->end, &ci);
        if (!next && ci < vf->n_chunks && vf->chunks[vf->by_start[ci]].start < chs[k]->end + PREFETCH_ADJACENT_GAP)
            next = &vf->chunks[vf->by_start[ci]];
        if (!next || vf->want_col[next->col] || vf->filter_col[next->col])
            continue;
        const uint64_t len = next->end - next->start < ra ? next->end - next->start : ra;
        if (sv_grow((void **)&reals, &capreals, nreals + 1, sizeof *reals, 64, SIZE_MAX / 64))
            reals[nreals++] = (fetch_span){next->start, len, NULL};
    }
    prefetch_spans(io, o, reals, nreals);
    free(reals);
    /* Rounds: ask every unfinished page what it needs, fetch it all at once. */
    for (int round = 0; round <= PP_MAX_ROUNDS + 1; round++) {
        fetch_span *spans = NULL;
        size_t nspans = 0, capspans = 0;
        bool oom = false;
        for (size_t i = 0; i < njobs; i++) {
            page_job *j = &jobs[i];
            if (j->done)
                continue;
            const pq_leaf *lf = &m->leaves[j->ch->col];
            pp_input in = {
                .pm = &j->ch->pm,
                .page = j->page,
                .col = {lf->type, lf->type_length, lf->max_def, lf->max_rep,
                        m->row_groups[j->ch->rg].columns[j->ch->col].codec},
                .rows = j->rows,
                .n_rows = j->n_rows,
                .gap_merge = gap_merge,
                .min_saving = COST_MIN_SAVING,
                .request_cost = rc,
                .dict_values = j->dict_values,
                .dictionary = j->dictionary,
                .dict_entries = j->entries,
                .n_dict_entries = j->n_entries,
            };
            pp_result_free(&j->res);
            pp_plan(&in, j->known, &j->res);
            if (j->res.outcome != PP_NEED || round > PP_MAX_ROUNDS) {
                if (j->res.outcome == PP_NEED) {
                    pp_result_free(&j->res);
                    j->why_real = PAGE_ROUNDS; /* still needing bytes after the last round */
                }
                j->done = true;
                finish_page(vf, vt, j);
                continue;
            }
            uint64_t base = j->ch->pm.pages[j->page].offset;
            for (uint32_t r = 0; r < j->res.n_need; r++) {
                if (!sv_grow((void **)&spans, &capspans, nspans + 1, sizeof *spans, 256, SIZE_MAX / 64)) {
                    oom = true;
                    break;
                }
                spans[nspans++] = (fetch_span){base + j->res.need[r].off, j->res.need[r].len, NULL};
            }
        }
        if (nspans == 0 || oom) {
            free(spans);
            if (oom)
                give_up_pending(vf, vt, jobs, njobs, PAGE_FETCH_FAILED);
            break;
        }
        /* Coalesce neighbouring ranges (across pages) into requests. */
        nspans = join_spans(spans, nspans, fetch_merge);
        uint64_t round_bytes = 0;
        for (size_t i = 0; i < nspans; i++)
            round_bytes += spans[i].len;
        log_debug("%s: planning round %d: %zu requests, %llu bytes", vf->relpath, round, nspans,
                  (unsigned long long)round_bytes);
        if (!partial_memory_reserve(vf->mem, round_bytes)) {
            /* Over the budget: these pages are read the ordinary way. */
            free(spans);
            give_up_pending(vf, vt, jobs, njobs, PAGE_PARTIAL_MEMORY);
            break;
        }
        bool failed = false;
        for (size_t i = 0; i < nspans && !failed; i++) {
            spans[i].buf = malloc((size_t)spans[i].len);
            failed = !spans[i].buf;
        }
        size_t started = 0;
        if (!failed)
            failed = object_fetch_ranges(io, o, spans, nspans, &started, &tok) != 0;
        for (size_t i = 0; i < started; i++) {
            plan_bytes += spans[i].len;
            plan_requests++;
        }
        /* Hand each page the fetched bytes that fall inside it. */
        for (size_t i = 0; i < njobs && !failed; i++) {
            page_job *j = &jobs[i];
            if (j->done)
                continue;
            const pq_page *pg = &j->ch->pm.pages[j->page];
            for (uint32_t r = 0; r < j->res.n_need; r++) {
                uint64_t off = pg->offset + j->res.need[r].off, end = off + j->res.need[r].len;
                /* The span holding it (spans are sorted and disjoint). */
                size_t lo = 0, hi = nspans;
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (spans[mid].off + spans[mid].len <= off)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo < nspans && spans[lo].off <= off && end <= spans[lo].off + spans[lo].len &&
                    spans[lo].buf)
                    pp_bytes_put(j->known, j->res.need[r].off, spans[lo].buf + (off - spans[lo].off),
                                 j->res.need[r].len);
            }
        }
        for (size_t i = 0; i < nspans; i++)
            free(spans[i].buf);
        free(spans);
        partial_memory_release(vf->mem, round_bytes);
        if (failed) {
            give_up_pending(vf, vt, jobs, njobs, PAGE_FETCH_FAILED);
            break;
        }
    }
    for (size_t i = 0; i < njobs; i++) {
        if (!jobs[i].done) {
            pp_result_free(&jobs[i].res);
            jobs[i].res.outcome = PP_NEED; /* no verdict: why_real counts */
            jobs[i].why_real = PAGE_OTHER;
            finish_page(vf, vt, &jobs[i]);
        }
        pp_bytes_free(jobs[i].known);
        free(jobs[i].rows);
        free(jobs[i].entries);
    }
    free(jobs);
    free(walked);
    free(no_seed);
    vt->bytes_fetched += plan_bytes;
    vt->requests += plan_requests;
}

/* One trace line per planned chunk: its bytes and each page's kind (R real,
 * S sparse: synthesized or read in part), for following a plan by hand. */
static void log_chunk_plan(const view_file *vf, const vchunk *c)
{
    if ((int)SV_LOG_TRACE > sv_log_threshold)
        return;
    char kinds[65];
    uint32_t n = 0;
    for (; !c->real && c->pages && n < c->pm.n_pages && n < sizeof kinds - 1; n++)
        kinds[n] = c->pages[n].kind == VP_SPARSE ? 'S' : 'R';
    kinds[n] = '\0';
    log_trace("%s: chunk rg %u column %s bytes %llu-%llu planned: %s", vf->relpath, c->rg,
              vf->meta->leaves[c->col].path, (unsigned long long)c->start, (unsigned long long)c->end,
              c->real ? "real" : kinds);
}

/* Make sure chunk ci is planned (and, with a hint naming columns, all chunks
 * of those columns on the first touch). Called with vf->lock held; may
 * release it while planning. */
int chunk_plan_ensure(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf, size_t ci,
                      const sv_cancel *tok)
{
    for (;;) {
        vchunk *ch = &vf->chunks[ci];
        if (ch->state == CH_PLANNED)
            return 0;
        if (ch->state == CH_PLANNING) {
            int e = sv_cancel_wait(tok, &vf->cond, &vf->lock);
            if (e && ch->state == CH_PLANNING)
                return -e;
            continue;
        }
        vchunk **chs = malloc(vf->n_chunks * sizeof *chs);
        if (!chs) {
            ch->real = true;
            ch->all_real = true;
            ch->state = CH_PLANNED;
            return 0;
        }
        size_t n = 0;
        chs[n++] = ch;
        ch->state = CH_PLANNING;
        /* The hint's columns are planned together once the selection is
         * known; a chunk planned before it (a filter column, one without an
         * OffsetIndex) is planned alone. */
        bool named = v->hint->n_columns > 0 && vf->want_col[ch->col] && !ch->real && vf->selection == SEL_DONE;
        if (named && !vf->columns_planned) {
            vf->columns_planned = true;
            for (size_t i = 0; i < vf->n_chunks; i++) {
                vchunk *o = &vf->chunks[i];
                /* Row groups with no selected row are left until a reader
                 * touches them: readers usually skip them by statistics. */
                if (i != ci && o->state == CH_UNPLANNED && vf->want_col[o->col] && !o->real &&
                    vf->sel[o->rg].n > 0) {
                    o->state = CH_PLANNING;
                    chs[n++] = o;
                }
            }
        }
        uint64_t ordinary = 0;
        for (size_t i = 0; i < n; i++) {
            if (!chs[i]->counted) {
                chs[i]->counted = true;
                ordinary += chs[i]->end - chs[i]->start;
            }
        }
        pthread_mutex_unlock(&vf->lock);
        view_counters t = {0};
        plan_chunks(env, pf, vf, chs, n, named, &t, tok);
        pthread_mutex_lock(&vf->lock);
        t.ordinary_bytes = ordinary;
        view_counters_add(&vf->counts, &t);
        for (size_t i = 0; i < n; i++) {
            vchunk *c = chs[i];
            bool sparse = false;
            for (uint32_t p = 0; !c->real && c->pages && p < c->pm.n_pages && !sparse; p++)
                sparse = c->pages[p].kind == VP_SPARSE;
            c->all_real = !sparse;
            c->state = CH_PLANNED;
            log_chunk_plan(vf, c);
        }
        pthread_cond_broadcast(&vf->cond);
        pthread_mutex_unlock(&vf->lock);
        /* Start fetching the real bytes these chunks will need, all at once
         * (into the block cache, only while it has room). */
        for (size_t i = 0; i < n; i++) {
            const vchunk *c = chs[i];
            /* Chunks planned ahead in a row group with no selected row may
             * never be read (readers skip such groups by statistics). */
            if (i > 0 && vf->sel[c->rg].n == 0)
                continue;
            /* Chunks with nothing sparse are read like on the plain path:
             * fetched when the reader really starts them, not when kernel
             * readahead merely brushes them. */
            if (c->all_real)
                continue;
            for (uint32_t p = 0; p < c->pm.n_pages; p++)
                if (c->pages[p].kind == VP_REAL)
                    object_prefetch(env->plain->io, &pf->obj, c->pm.pages[p].offset,
                                    c->pm.pages[p].offset + c->pm.pages[p].total_size, 0, true);
        }
        pthread_mutex_lock(&vf->lock);
        free(chs);
        return 0;
    }
}

