/* Serving a reader's reads of a file through its view: prepare the file,
 * plan the chunks the read touches, start every fetch the read needs, then
 * reply: a read of real bytes only from the plain path's pinned cache
 * blocks, any other assembled piece by piece from real bytes and the
 * planned images of pages. */
#include "view_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_plan.h"
#include "log.h"
#include "view_file.h"
#include "view_table.h"

/* At each open: readers may read the table at a version it did not have
 * when the plan was made (or at an older one), so the table's history is
 * brought up to the version the mount shows now and the file is served
 * real from now on unless the plan holds for every version it is in. */
static int check_versions(const view_env *env, sv_view *v, view_file *vf, const sv_cancel *tok)
{
    view_table *tb = v->table;
    if (!tb || !tb->snap || !tb->n_where_names)
        return 0;
    pthread_mutex_lock(&vf->lock);
    const bool demoted = vf->demoted;
    pthread_mutex_unlock(&vf->lock);
    const delta_add *f = view_table_file(tb, vf->relpath);
    if (demoted || !f) /* not in the snapshot: served real anyway */
        return 0;
    char why[256];
    if (view_table_file_holds(env, tb, f, why, sizeof why, tok))
        return 0;
    log_info("view %s: %s served real from now on: %s", v->name, vf->relpath, why);
    return view_file_demote(vf, why, tok);
}

int view_reader_open(view_registry *r, sv_view *v, uint64_t base_ino, view_reader **out, const sv_cancel *tok)
{
    *out = NULL;
    view_reader *vr = calloc(1, sizeof *vr);
    if (!vr)
        return -ENOMEM;
    plain_fs *p = r->env.plain;
    int rc = plain_file_open(p, base_ino, false, &vr->real, tok);
    if (rc < 0) {
        free(vr);
        return rc;
    }
    const char *key = vr->real.obj.key;
    size_t plen = strlen(p->cfg.prefix);
    vr->vf = view_file_get(v, base_ino, strncmp(key, p->cfg.prefix, plen) == 0 ? key + plen : key, p->footers,
                           r->env.partial_mem);
    if (!vr->vf) {
        plain_file_close(p, &vr->real);
        free(vr);
        return -ENOMEM;
    }
    vr->view = v;
    rc = check_versions(&r->env, v, vr->vf, tok);
    if (rc < 0) {
        view_file_put(v, vr->vf);
        plain_file_close(p, &vr->real);
        free(vr);
        return rc;
    }
    pthread_mutex_lock(&vr->vf->lock);
    vr->demoted = vr->vf->demoted;
    pthread_mutex_unlock(&vr->vf->lock);
    *out = vr;
    return 0;
}

uint64_t view_reader_size(const view_reader *vr)
{
    return vr->real.obj.size;
}

const char *view_reader_key(const view_reader *vr)
{
    return vr->real.obj.key;
}

void view_reader_close(view_registry *r, view_reader *vr)
{
    if (!vr)
        return;
    view_file_put(vr->view, vr->vf);
    view_unref(vr->view);
    plain_file_close(r->env.plain, &vr->real);
    free(vr);
}

/* object_read already loops until done; short only at EOF, which inside
 * the object's size means it changed under us. */
static ssize_t read_real_into(object_io *io, const object_ref *o, uint64_t off, size_t len, uint8_t *dst,
                              const sv_cancel *tok)
{
    ssize_t n = object_read(io, o, off, len, dst, tok);
    return n < 0 ? n : (size_t)n == len ? (ssize_t)len : -EIO;
}

/* Serve [off, off+len) of one planned chunk. */
static ssize_t serve_chunk(object_io *io, const object_ref *o, const vchunk *ch, uint64_t off, size_t len,
                           uint8_t *dst, const sv_cancel *tok)
{
    if (ch->all_real)
        return read_real_into(io, o, off, len, dst, tok);
    uint64_t end = off + len;
    uint64_t pos = off;
    for (uint32_t p = vchunk_first_page_after(ch, off); p < ch->pm.n_pages && pos < end; p++) {
        const pq_page *pg = &ch->pm.pages[p];
        uint64_t pend = pg->offset + pg->total_size;
        if (pg->offset > pos) /* cannot happen: pages tile the chunk */
            return -EIO;
        uint64_t stop = pend < end ? pend : end;
        const vpage *vp = &ch->pages[p];
        if (vp->kind == VP_SPARSE) {
            pp_image_read(vp->pieces, vp->n_pieces, (uint32_t)(pos - pg->offset), (uint32_t)(stop - pos),
                          dst + (pos - off));
        } else {
            ssize_t r = read_real_into(io, o, pos, (size_t)(stop - pos), dst + (pos - off), tok);
            if (r < 0)
                return r;
        }
        pos = stop;
    }
    return pos == end ? (ssize_t)len : -EIO;
}

/* Whether a read ending at end, in the first bytes of chunk ch, may be the
 * kernel's readahead past the chunk before rather than the reader: ch's
 * column is neither named by the hint nor filtered on, and the read ends
 * within the proof of a continuation (prefetch_continuation_proof) past the
 * chunk's start. The plain path's pattern sees such reads continue a
 * stream; a view's reads of sparse chunks never reach that pattern, so
 * without this the readahead would look like a jump into the chunk and
 * fetch a column the query does not read, whole. A reader that does read
 * the column reads past the proof and gets it whole from there. */
static bool readahead_into_unnamed(const view_file *vf, const vchunk *ch, uint64_t end,
                                   const prefetch_config *cfg)
{
    return !vf->want_col[ch->col] && !vf->filter_col[ch->col] &&
           end < ch->start + prefetch_continuation_proof(cfg);
}

/* Start every fetch a read needs before waiting for any, or each piece of
 * the read (a chunk's tail, the next chunk, a real page) would cost a round
 * trip of its own. The chunk the read is about (chunk_prefetch's rule: the
 * kernel aligns reads down into the tail of the chunk before) is fetched whole
 * when it has nothing sparse, as on the plain path; of the rest, only what the
 * read covers: the bytes of gaps and of chunks with nothing sparse, and whole
 * real pages (a page read kernel-read by kernel-read would take a round trip
 * each), neighbours joined into one span (a large read across many chunks
 * would otherwise make a request per chunk). Planned chunks are immutable, so
 * this needs no lock. */
static void start_fetches(object_io *io, const prefetch_config *cfg, plain_file *pf, const view_file *vf,
                          uint64_t off, size_t size)
{
    const object_ref *o = &pf->obj;
    uint64_t end = off + size;
    prefetch_run run = {0, 0, false};
    for (uint64_t pos = off; pos < end;) {
        const vchunk *ch;
        uint64_t stop = view_piece_at(vf, pos, end, &ch);
        if (!ch || ch->all_real) {
            prefetch_run_add(io, o, &run, pos, stop);
        } else {
            for (uint32_t p = vchunk_first_page_after(ch, pos); p < ch->pm.n_pages; p++) {
                const pq_page *pg = &ch->pm.pages[p];
                if (pg->offset >= stop)
                    break;
                if (ch->pages[p].kind == VP_REAL)
                    prefetch_run_add(io, o, &run, pg->offset, pg->offset + pg->total_size);
            }
        }
        pos = stop;
    }
    prefetch_run_flush(io, o, &run);
    /* After the read's own bytes, as on the plain path (object_pin, then
     * prefetch_after_read): the read goes out as one request, and the rest
     * of its chunk as another, not split at the chunk's end. */
    size_t ci;
    const vchunk *probe = view_chunk_at(vf, off + (size > 4096 ? 4096 : size) - 1, &ci);
    if (probe && probe->all_real && !readahead_into_unnamed(vf, probe, off + size, cfg)) {
        prefetch_config real_only = *cfg;
        real_only.no_speculation = true;
        (void)prefetch_chunk_of_read(io, &real_only, o, plain_file_layout(pf), &pf->pattern, off, size);
    }
}

/* Whether every byte of [off, end) is real: in no chunk, in a chunk served
 * real, or in real pages of a planned one. The chunks it covers are planned. */
static bool read_is_real(const view_file *vf, uint64_t off, uint64_t end)
{
    for (uint64_t pos = off; pos < end;) {
        const vchunk *ch;
        uint64_t stop = view_piece_at(vf, pos, end, &ch);
        if (ch && !ch->all_real)
            for (uint32_t p = vchunk_first_page_after(ch, pos); p < ch->pm.n_pages; p++) {
                if (ch->pm.pages[p].offset >= stop)
                    break;
                if (ch->pages[p].kind == VP_SPARSE)
                    return false;
            }
        pos = stop;
    }
    return true;
}

typedef enum { READ_NOTHING = 0, READ_FILE_REAL, READ_REAL, READ_SYNTHESIZED } read_kind;

/* Clip the read at the object's end (READ_NOTHING past it), prepare the
 * file and plan every chunk [off, off+*size) touches: what the read is made
 * of, or -errno. */
static int plan_read(const view_env *env, view_reader *vr, uint64_t off, size_t *sizep, const sv_cancel *tok)
{
    const uint64_t osize = vr->real.obj.size;
    if (off >= osize || *sizep == 0)
        return READ_NOTHING;
    if (*sizep > osize - off)
        *sizep = (size_t)(osize - off);
    const size_t size = *sizep;
    view_file *vf = vr->vf;
    pthread_mutex_lock(&vf->lock);
    int e = view_file_ensure_prepared(env, vr->view, &vr->real, vf, tok);
    if (e < 0 || vf->state == VF_REAL || vf->demoted) {
        pthread_mutex_unlock(&vf->lock);
        return e < 0 ? e : READ_FILE_REAL;
    }
    uint64_t end = off + size;
    size_t ci;
    for (uint64_t pos = off; pos < end;) {
        const vchunk *ch = view_chunk_at(vf, pos, &ci);
        if (!ch) {
            if (ci >= vf->n_chunks)
                break;
            pos = vf->chunks[vf->by_start[ci]].start;
            continue;
        }
        if (view_chunk_needs_selection(vf, &vf->chunks[ci], vr->real.obj.size)) {
            e = view_file_ensure_selected(env, vr->view, &vr->real, vf, tok);
            if (e < 0 || vf->state == VF_REAL) {
                pthread_mutex_unlock(&vf->lock);
                return e < 0 ? e : READ_FILE_REAL;
            }
        }
        e = chunk_plan_ensure(env, vr->view, &vr->real, vf, ci, tok);
        if (e < 0) {
            pthread_mutex_unlock(&vf->lock);
            return e;
        }
        pos = vf->chunks[ci].end;
    }
    pthread_mutex_unlock(&vf->lock);
    /* Planned chunks are immutable from here on: read them without the lock. */
    if (read_is_real(vf, off, end))
        return READ_REAL;
    /* Counted until its reply is sent, unless the file was demoted meanwhile. */
    pthread_mutex_lock(&vf->lock);
    const bool demoted = vf->demoted;
    if (!demoted)
        vf->synth_in_flight++;
    pthread_mutex_unlock(&vf->lock);
    return demoted ? READ_FILE_REAL : READ_SYNTHESIZED;
}

void view_reply_sent(struct view_file *synthesized)
{
    view_file_synth_done(synthesized);
}

/* Assemble [off, off+size) of a file with planned chunks into buf. */
static ssize_t assemble(object_io *io, view_reader *vr, uint64_t off, size_t size, uint8_t *buf,
                        const sv_cancel *tok)
{
    const object_ref *o = &vr->real.obj;
    uint64_t end = off + size;
    for (uint64_t pos = off; pos < end;) {
        const vchunk *ch;
        uint64_t stop = view_piece_at(vr->vf, pos, end, &ch);
        ssize_t n = ch ? serve_chunk(io, o, ch, pos, (size_t)(stop - pos), buf + (pos - off), tok)
                       : read_real_into(io, o, pos, (size_t)(stop - pos), buf + (pos - off), tok);
        if (n < 0)
            return n;
        pos = stop;
    }
    return (ssize_t)size;
}

ssize_t view_reader_read(view_registry *r, view_reader *vr, uint64_t off, size_t size, uint8_t *buf,
                         const sv_cancel *tok)
{
    object_io *io = r->env.plain->io;
    int kind = plan_read(&r->env, vr, off, &size, tok);
    if (kind <= READ_NOTHING)
        return kind;
    if (kind == READ_FILE_REAL)
        return read_real_into(io, &vr->real.obj, off, size, buf, tok);
    start_fetches(io, &r->env.plain->cfg.prefetch, &vr->real, vr->vf, off, size);
    ssize_t n = assemble(io, vr, off, size, buf, tok);
    if (kind == READ_SYNTHESIZED)
        view_file_synth_done(vr->vf);
    return n;
}

ssize_t view_reader_reply(view_registry *r, view_reader *vr, uint64_t off, size_t size, view_reply *out,
                          const sv_cancel *tok)
{
    object_io *io = r->env.plain->io;
    out->niov = 0;
    out->owned = NULL;
    out->synthesized = NULL;
    memset(&out->pins, 0, sizeof out->pins);
    int kind = plan_read(&r->env, vr, off, &size, tok);
    if (kind <= READ_NOTHING)
        return kind;
    /* A file served real is read as on the plain path, prefetch included. */
    if (kind == READ_FILE_REAL)
        return plain_file_read(r->env.plain, &vr->real, off, size, out->iov, out->maxiov, &out->niov,
                               &out->pins, NULL, tok);
    start_fetches(io, &r->env.plain->cfg.prefetch, &vr->real, vr->vf, off, size);
    /* Real bytes go out from the cache's blocks, as on the plain path: a
     * copy into a fresh buffer cost a full scan through a view about 10 %
     * on loopback. */
    if (kind == READ_REAL) {
        int e = object_pin(io, &vr->real.obj, off, size, out->maxiov, &out->pins);
        return e < 0 ? e : object_pins_wait(io, &out->pins, out->iov, &out->niov, NULL, tok);
    }
    uint8_t *buf = out->maxiov ? malloc(size) : NULL;
    ssize_t n = !out->maxiov ? -EINVAL : !buf ? -ENOMEM : assemble(io, vr, off, size, buf, tok);
    if (n <= 0) {
        free(buf);
        view_file_synth_done(vr->vf);
        return n;
    }
    out->synthesized = vr->vf;
    out->owned = buf;
    out->iov[0] = (struct iovec){buf, (size_t)n};
    out->niov = 1;
    return n;
}
