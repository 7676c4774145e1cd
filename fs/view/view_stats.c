#include "view_stats.h"

#include <stdlib.h>
#include <string.h>

#include "sv_json.h"
#include "view_file.h"
#include "view_registry.h"

void view_counters_add(view_counters *to, const view_counters *add)
{
    to->pages_real += add->pages_real;
    to->pages_synth += add->pages_synth;
    to->pages_partial += add->pages_partial;
    to->bytes_fetched += add->bytes_fetched;
    to->ordinary_bytes += add->ordinary_bytes;
    to->requests += add->requests;
    to->dict_pages_sparse += add->dict_pages_sparse;
    to->dict_entries_kept += add->dict_entries_kept;
    to->dict_entries += add->dict_entries;
    for (int i = 0; i < CHUNK_REASONS; i++)
        to->chunks[i] += add->chunks[i];
    for (int i = 0; i < PAGE_REASONS; i++)
        to->pages[i] += add->pages[i];
}

/* {"word": count, ...} of the non-zero counters. */
static json_t *reason_object(const uint64_t *counts, int n, const char *(*name)(int))
{
    json_t *o = json_object();
    for (int i = 0; o && i < n; i++)
        if (counts[i] && json_object_set_new(o, name(i), json_integer((json_int_t)counts[i]))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static const char *chunk_word(int r) { return chunk_reason_name((chunk_reason)r); }
static const char *page_word(int r) { return page_reason_name((page_reason)r); }

static int put_counters(json_t *o, const view_counters *c)
{
    return json_object_set_new(o, "pages_real", json_integer((json_int_t)c->pages_real)) |
           json_object_set_new(o, "pages_synthesized", json_integer((json_int_t)c->pages_synth)) |
           json_object_set_new(o, "pages_partial", json_integer((json_int_t)c->pages_partial)) |
           json_object_set_new(o, "bytes_fetched", json_integer((json_int_t)c->bytes_fetched)) |
           json_object_set_new(o, "ordinary_bytes", json_integer((json_int_t)c->ordinary_bytes)) |
           json_object_set_new(o, "requests", json_integer((json_int_t)c->requests)) |
           json_object_set_new(o, "dictionary_pages_partial", json_integer((json_int_t)c->dict_pages_sparse)) |
           json_object_set_new(o, "dictionary_entries_fetched", json_integer((json_int_t)c->dict_entries_kept)) |
           json_object_set_new(o, "dictionary_entries", json_integer((json_int_t)c->dict_entries)) |
           json_object_set_new(o, "chunk_reasons", reason_object(c->chunks, CHUNK_REASONS, chunk_word)) |
           json_object_set_new(o, "page_reasons", reason_object(c->pages, PAGE_REASONS, page_word));
}

/* One file's entry; called with vf->lock held. */
static json_t *file_entry(const view_file *vf)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "path", json_string(vf->relpath));
    if (vf->state == VF_NEW || vf->state == VF_PREPARING) {
        /* view_file_prepare is filling the plan without the lock: nothing yet. */
        bad |= json_object_set_new(o, "state", json_string("pending"));
    } else {
        const bool real = vf->state == VF_REAL || vf->demoted;
        bad |= json_object_set_new(o, "state", json_string(real ? "real" : "view"));
        bad |= json_object_set_new(o, "rows", json_integer((json_int_t)vf->total_rows));
        /* null until a read needed the selection (one that only read real
         * chunks did not evaluate it) */
        bad |= json_object_set_new(o, "selected_rows", vf->state == VF_READY && vf->selection == SEL_DONE
                                                           ? json_integer((json_int_t)vf->selected_rows)
                                                           : json_null());
        bad |= put_counters(o, &vf->counts);
        if (vf->state == VF_READY && vf->select_none && vf->excluded_by)
            bad |= json_object_set_new(o, "excluded_by", json_string(vf->excluded_by));
        if (real)
            bad |= json_object_set_new(o, "why_real", json_string(vf->state == VF_REAL ? vf->why_real : vf->why_demoted));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *view_stats_render(sv_view *v, size_t *len)
{
    *len = 0;
    json_t *doc = json_object(), *files = json_array();
    view_counters total = {0};
    int bad = !doc || !files;
    pthread_mutex_lock(&v->lock);
    for (view_file *vf = v->files; vf && !bad; vf = vf->next) {
        pthread_mutex_lock(&vf->lock);
        view_counters_add(&total, &vf->counts);
        bad |= json_array_append_new(files, file_entry(vf));
        pthread_mutex_unlock(&vf->lock);
    }
    pthread_mutex_unlock(&v->lock);
    if (!bad) {
        bad |= json_object_set_new(doc, "name", json_string(v->name));
        bad |= put_counters(doc, &total);
        bad |= json_object_set(doc, "files", files);
    }
    json_decref(files);
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return sv_json_text(doc, 0, len); /* one line per document */
}
