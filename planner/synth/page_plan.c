/* The page planner's driver: the contract of page_plan.h (inputs checked,
 * the page header read, a mode chosen, the rounds merged and weighed
 * against the saving). The modes and their files: page_plan_internal.h. */
#include "page_plan_internal.h"

#include "cost_model.h"
#include "sv_grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

st pp_reason(plan *p, bool contradicts, const char *fmt, ...)
{
    if (p->out->outcome != PP_REAL) { /* the first reason wins */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->out->reason, sizeof p->out->reason, fmt, ap);
        va_end(ap);
        p->out->outcome = PP_REAL;
        p->out->contradicts_file = contradicts;
    }
    return ST_REAL;
}

st pp_nomem(plan *p, const char *what)
{
    return pp_real(p, "nomem: %s", what);
}

st pp_need(plan *p, uint64_t off, uint64_t len)
{
    if (off >= p->total || len == 0)
        return ST_NEED;
    if (len > p->total - off)
        len = p->total - off;
    if (!pp_rv_push(&p->need, off, len))
        return pp_nomem(p, "need ranges");
    return ST_NEED;
}

/* Ask for every unknown byte of [off, off+len); OK when all are known. */
st pp_want(plan *p, uint64_t off, uint64_t len)
{
    if (len == 0)
        return ST_OK;
    if (pp_bytes_get(p->kb, (uint32_t)off, (uint32_t)len))
        return ST_OK;
    return pp_need(p, off, len);
}

bool pp_rv_push(rvec *r, uint64_t off, uint64_t len)
{
    if (len == 0)
        return true;
    if (!sv_grow((void **)&r->v, &r->cap, (size_t)r->n + 1, sizeof *r->v, 16, UINT32_MAX))
        return false;
    r->v[r->n++] = (pp_range){(uint32_t)off, (uint32_t)len};
    return true;
}

static int range_cmp(const void *a, const void *b)
{
    const pp_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

st pp_header_read(plan *p)
{
    const uint32_t have = pp_known_run(p->kb, 0);
    const uint32_t probe = p->total < PP_HEADER_PROBE ? p->total : PP_HEADER_PROBE;
    if (have == 0)
        return pp_need(p, 0, probe);
    tc_error e;
    size_t hl = 0;
    const tc_status ts = pq_page_header_parse(pp_bytes_get(p->kb, 0, have), have, &p->h, &hl, &e);
    /* Cut short, or a length / count past the bytes known: more may help. */
    if (ts == TC_E_TRUNCATED || ts == TC_E_LENGTH || ts == TC_E_COUNT || ts == TC_E_NEED_MORE) {
        if (have >= p->total)
            return pp_contradiction(p, "layout: page header runs past the %u-byte page", p->total);
        uint64_t want_len = (uint64_t)have * 2;
        want_len = want_len < probe ? probe : want_len;
        want_len = want_len > p->total ? p->total : want_len;
        return pp_need(p, have, want_len - have);
    }
    if (ts != TC_OK)
        return pp_contradiction(p, "layout: page header: %s", e.msg);
    if ((uint64_t)hl + (uint64_t)p->h.compressed_page_size != p->total)
        return pp_contradiction(p, "layout: header %zu + body %d bytes, the page map says %u", hl,
                                p->h.compressed_page_size, p->total);
    p->hl = (uint32_t)hl;
    return ST_OK;
}

static st step_header(plan *p)
{
    const st hs = pp_header_read(p);
    if (hs != ST_OK)
        return hs;
    const size_t hl = p->hl;
    const pq_page_header *h = &p->h;
    if (h->type != PQ_PAGE_DATA && h->type != PQ_PAGE_DATA_V2)
        return pp_contradiction(p, "layout: page is a %s", pq_page_type_name(h->type));
    pqd_error de;
    if (pq_data_page_info_from_header(h, &p->info, &de) != PQD_OK)
        return pp_contradiction(p, "layout: %s", de.msg);
    p->hl = (uint32_t)hl;
    p->body = (uint32_t)h->compressed_page_size;
    if (h->uncompressed_page_size < 0)
        return pp_contradiction(p, "layout: negative uncompressed size");
    p->unc = (uint32_t)h->uncompressed_page_size;
    p->v2 = h->type == PQ_PAGE_DATA_V2;
    p->enc = p->info.encoding;
    if (p->info.num_values < 0)
        return pp_contradiction(p, "layout: negative num_values");
    p->n = (uint32_t)p->info.num_values;
    const int64_t rows = p->v2 ? h->v2.num_rows : h->data.num_values;
    if (rows != p->pg->num_rows || p->n != p->pg->num_rows)
        return pp_contradiction(p, "layout: header holds %d values / %lld rows, the page map %lld rows",
                       p->info.num_values, (long long)rows, (long long)p->pg->num_rows);
    if (p->pg->has_header && (p->pg->header_len != p->hl || p->pg->page_type != h->type))
        return pp_contradiction(p, "layout: header differs from the page map's");
    if (p->v2) {
        if (h->v2.repetition_levels_byte_length < 0 || h->v2.definition_levels_byte_length < 0)
            return pp_contradiction(p, "layout: negative V2 level lengths");
        p->rl = (uint32_t)h->v2.repetition_levels_byte_length;
        p->dl = (uint32_t)h->v2.definition_levels_byte_length;
        p->lv = p->rl + p->dl;
        if (p->lv > p->body || p->lv > p->unc)
            return pp_contradiction(p, "layout: V2 levels past the body");
        if (p->rl != 0)
            return pp_real(p, "levels: %u bytes of repetition levels in a flat column", p->rl);
        if (p->in->col.max_def == 0 && p->dl != 0)
            return pp_real(p, "levels: %u bytes of definition levels in a required column", p->dl);
        if (p->in->col.max_def == 1 && p->dl == 0 && p->n > 0)
            return pp_real(p, "levels: no definition levels in an optional column");
        p->compressed = p->in->col.codec != PQ_CODEC_UNCOMPRESSED && h->v2.is_compressed;
    } else {
        p->compressed = p->in->col.codec != PQ_CODEC_UNCOMPRESSED;
    }
    if (!p->compressed && p->body != p->unc)
        return pp_contradiction(p, "layout: uncompressed page stores %u bytes but says %u", p->body, p->unc);
    return ST_OK;
}

static st check_input(plan *p)
{
    const pp_input *in = p->in;
    if (!in->pm || in->page >= in->pm->n_pages)
        return pp_contradiction(p, "layout: page %u not in the page map", in->page);
    p->pg = &in->pm->pages[in->page];
    const pq_page_map *pm = in->pm;
    if (in->dictionary) {
        if (p->pg->is_data || pm->dict_page != (int32_t)in->page)
            return pp_contradiction(p, "layout: page %u is not the chunk's dictionary page", in->page);
    } else if (!p->pg->is_data) {
        return pp_contradiction(p, "layout: page %u is not a data page", in->page);
    }
    if (p->pg->total_size != p->kb->size)
        return pp_contradiction(p, "layout: known bytes sized %u for a page of %u", p->kb->size,
                       p->pg->total_size);
    p->total = p->pg->total_size;
    if (in->col.max_rep > 0 || in->col.max_def > 1 || pm->max_rep > 0 || pm->max_def > 1 ||
        pm->nested)
        return pp_real(p, "nested: max_def %u, max_rep %u", in->col.max_def, in->col.max_rep);
    if (in->col.type != pm->type || in->col.max_def != pm->max_def ||
        in->col.codec != (int32_t)pm->codec)
        return pp_contradiction(p, "layout: column description differs from the page map");
    const int64_t w = pq_value_width(in->col.type, in->col.type_length);
    if (w < 0)
        return pp_contradiction(p, "layout: bad type %d / length %d", (int)in->col.type,
                       (int)in->col.type_length);
    p->width = (uint32_t)w;
    if (in->dictionary) {
        if (in->col.codec != PQ_CODEC_UNCOMPRESSED && in->col.codec != PQ_CODEC_ZSTD &&
            in->col.codec != PQ_CODEC_SNAPPY)
            return pp_real(p, "codec: %s", pq_codec_name(in->col.codec));
        return ST_OK;
    }
    if (p->pg->num_rows < 0 || p->pg->num_rows > INT32_MAX)
        return pp_contradiction(p, "layout: rows of the page unknown");
    if (in->n_rows && !in->rows)
        return pp_contradiction(p, "layout: no row ranges");
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < in->n_rows; i++) {
        const pp_range *r = &in->rows[i];
        if (r->len == 0 || r->off < prev_end ||
            (uint64_t)r->off + r->len > (uint64_t)p->pg->num_rows)
            return pp_contradiction(p, "layout: selected rows [%u, +%u) out of order or past %lld rows",
                           r->off, r->len, (long long)p->pg->num_rows);
        prev_end = (uint64_t)r->off + r->len;
    }
    if (in->col.codec != PQ_CODEC_UNCOMPRESSED && in->col.codec != PQ_CODEC_ZSTD &&
        in->col.codec != PQ_CODEC_SNAPPY)
        return pp_real(p, "codec: %s", pq_codec_name(in->col.codec));
    return ST_OK;
}

/* Sort the asked ranges, drop known bytes, merge small gaps; account the
 * round and the byte budget. */
static st finish_need(plan *p)
{
    rvec *nv = &p->need;
    qsort(nv->v, nv->n, sizeof *nv->v, range_cmp);
    rvec out = {0};
    uint64_t cur_a = 0, cur_b = 0;
    bool have = false;
    for (uint32_t i = 0; i <= nv->n; i++) {
        if (i < nv->n && have && nv->v[i].off <= cur_b) {
            const uint64_t e = (uint64_t)nv->v[i].off + nv->v[i].len;
            cur_b = e > cur_b ? e : cur_b;
            continue;
        }
        if (have) {
            /* Subtract known bytes. */
            uint64_t a = cur_a;
            while (a < cur_b) {
                const kb_span *sp = pp_span_at(p->kb, (uint32_t)a);
                if (sp) {
                    a = pp_span_end(sp);
                    continue;
                }
                uint32_t j = pp_first_ending_at(p->kb, (uint32_t)a);
                if (j < p->kb->n && pp_span_end(&p->kb->s[j]) == a)
                    j++;
                uint64_t b = cur_b;
                if (j < p->kb->n && p->kb->s[j].off < b)
                    b = p->kb->s[j].off;
                if (!pp_rv_push(&out, a, b - a)) {
                    free(out.v);
                    return pp_nomem(p, "need ranges");
                }
                a = b;
            }
        }
        if (i < nv->n) {
            cur_a = nv->v[i].off;
            cur_b = (uint64_t)nv->v[i].off + nv->v[i].len;
            have = true;
        }
    }
    /* Merge gaps below gap_merge that hold no known byte. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < out.n; i++) {
        if (m > 0) {
            pp_range *last = &out.v[m - 1];
            const uint32_t le = last->off + last->len;
            if (out.v[i].off - le < p->in->gap_merge && !pp_any_known(p->kb, le, out.v[i].off)) {
                last->len = out.v[i].off + out.v[i].len - last->off;
                continue;
            }
        }
        out.v[m++] = out.v[i];
    }
    out.n = m;
    if (out.n == 0) {
        free(out.v);
        return pp_real(p, "rounds: nothing left to fetch but the plan is not complete");
    }
    uint64_t asked = 0;
    for (uint32_t i = 0; i < out.n; i++)
        asked += out.v[i].len;
    if (p->in->n_rows > 0 || p->in->dictionary) {
        /* Every byte so far and this round's requests, against reading the
         * page whole. */
        const uint32_t rc = p->in->request_cost;
        const uint64_t bytes = pp_bytes_total(p->kb) + asked;
        const double budget = cost_partial_budget(p->total, rc, p->in->min_saving);
        if (cost_of_reads(bytes, out.n, rc) > budget) {
            free(out.v);
            return pp_real(p, "saving: would fetch %llu of %u bytes in %u requests, budget %.0f",
                           (unsigned long long)bytes, p->total, out.n, budget);
        }
    }
    kb_rounds *r = p->kb->rounds;
    if (!(r->asked && r->seen_puts == p->kb->puts)) {
        if (r->rounds >= PP_MAX_ROUNDS) {
            free(out.v);
            return pp_real(p, "rounds: %u rounds were not enough", PP_MAX_ROUNDS);
        }
        r->rounds++;
        r->asked = true;
        r->seen_puts = p->kb->puts;
    }
    p->out->need = out.v;
    p->out->n_need = out.n;
    p->out->outcome = PP_NEED;
    return ST_NEED;
}

static st run(plan *p)
{
    if (check_input(p) != ST_OK)
        return ST_REAL;
    if (p->in->dictionary)
        return pp_run_dictionary(p);
    const pq_page *pg = p->pg;
    if (p->in->n_rows > 0 && p->in->col.max_def == 0 && pg->has_header && pg->encoding >= 0) {
        p->enc = pg->encoding;
        if (!pp_partial_encoding(p))
            return pp_real(p, "encoding: %s %s values of selected rows",
                           pq_encoding_name(p->enc), pq_physical_type_name(p->in->col.type));
    }
    const st hs = step_header(p);
    if (hs != ST_OK)
        return hs;
    if (p->in->n_rows > 0)
        return pp_run_partial(p);
    if (!p->compressed)
        return pp_run_synth_plain(p);
    return pp_run_synth_compressed(p);
}

bool pp_worth_planning(uint32_t total_size, bool rows_selected, uint32_t request_cost,
                       double min_saving)
{
    return cost_partial_may_pay(total_size, rows_selected, request_cost, min_saving);
}

void pp_plan(const pp_input *in, const pp_bytes *known, pp_result *out)
{
    memset(out, 0, sizeof *out);
    out->outcome = PP_NEED;
    if (!in || !known) {
        out->outcome = PP_REAL;
        out->contradicts_file = true;
        snprintf(out->reason, sizeof out->reason, "layout: no input");
        return;
    }
    plan p;
    memset(&p, 0, sizeof p);
    p.in = in;
    p.kb = known;
    p.out = out;
    st r = run(&p);
    if (r == ST_NEED && out->outcome != PP_REAL)
        r = finish_need(&p);
    if (out->outcome == PP_REAL || r == ST_REAL) {
        out->outcome = PP_REAL;
        if (!out->reason[0]) {
            snprintf(out->reason, sizeof out->reason, "layout: unknown");
            out->contradicts_file = true;
        }
        free(out->need);
        out->need = NULL;
        out->n_need = 0;
    } else if (r == ST_OK) {
        out->outcome = PP_SPARSE;
        out->pieces = p.pc;
        out->n_pieces = p.n_pc;
        p.pc = NULL;
        p.n_pc = 0;
        out->synthesized = p.rebuilt;
        out->selected_values = p.k_sel;
    }
    out->fetched = pp_bytes_total(known);
    for (uint32_t i = 0; i < p.n_pc; i++)
        free(p.pc[i].data);
    free(p.pc);
    free(p.need.v);
    free(p.lev);
    free(p.vr);
    free(p.s.b);
}
