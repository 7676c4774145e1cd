#include "view_registry.h"
#include "view_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_file.h"

view_registry *views_create(const view_env *env)
{
    view_registry *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->env = *env;
    pthread_mutex_init(&r->lock, NULL);
    r->next_id = 1;
    return r;
}

void views_destroy(view_registry *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        view_unref(r->recs[i]);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void view_unref(sv_view *v)
{
    if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
        return;
    view_file *vf = v->files;
    while (vf) {
        view_file *next = vf->next;
        view_file_free(vf);
        vf = next;
    }
    hint_free(v->hint);
    view_table_free(v->table);
    free(v->json);
    free(v->error);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

bool views_owns(uint64_t ino)
{
    if (ino & SV_INO_TABLE_NS_FLAG)
        return false;
    return ino == SV_INO_HINTS || ino == SV_INO_VIEWS || (ino & VIEW_HINT_FLAG) || (ino >> VIEW_ID_SHIFT) != 0;
}

bool views_is_hint_file(uint64_t ino)
{
    return (ino & VIEW_HINT_FLAG) != 0;
}

uint64_t view_hint_ino(uint32_t id, hint_file_kind k)
{
    return VIEW_HINT_FLAG | ((uint64_t)id << 2) | (uint64_t)k;
}

uint64_t view_ino(uint32_t id, uint64_t base)
{
    return ((uint64_t)id << VIEW_ID_SHIFT) | base;
}

uint32_t view_id_of(uint64_t ino)
{
    if (ino & VIEW_HINT_FLAG)
        return (uint32_t)((ino & ~VIEW_HINT_FLAG) >> 2);
    return (uint32_t)(ino >> VIEW_ID_SHIFT);
}

bool view_parse_hint_filename(const char *fname, char *name, size_t cap, hint_file_kind *kind)
{
    const char *dot = strrchr(fname, '.');
    if (!dot)
        return false;
    if (strcmp(dot, ".json") == 0)
        *kind = HF_JSON;
    else if (strcmp(dot, ".error") == 0)
        *kind = HF_ERROR;
    else if (strcmp(dot, ".stats") == 0)
        *kind = HF_STATS;
    else
        return false;
    size_t n = (size_t)(dot - fname);
    if (!hint_name_valid(fname, n) || n >= cap)
        return false;
    memcpy(name, fname, n);
    name[n] = '\0';
    return true;
}

/* Lock held. */
static sv_view *find_locked(view_registry *r, const char *name, uint32_t id)
{
    for (size_t i = 0; i < r->n; i++)
        if (name ? strcmp(r->recs[i]->name, name) == 0 : r->recs[i]->id == id)
            return r->recs[i];
    return NULL;
}

static sv_view *find_ref(view_registry *r, const char *name, uint32_t id)
{
    pthread_mutex_lock(&r->lock);
    sv_view *v = find_locked(r, name, id);
    if (v)
        atomic_fetch_add(&v->refs, 1);
    pthread_mutex_unlock(&r->lock);
    return v;
}

sv_view *view_find_by_name(view_registry *r, const char *name)
{
    return find_ref(r, name, 0);
}

sv_view *view_find_by_id(view_registry *r, uint32_t id)
{
    return find_ref(r, NULL, id);
}

sv_view *view_find_hint_file(view_registry *r, const char *fname, hint_file_kind *k)
{
    char hname[VIEW_NAME_MAX + 1];
    if (!view_parse_hint_filename(fname, hname, sizeof hname, k))
        return NULL;
    return view_find_by_name(r, hname);
}

sv_view *view_open_for_writing(view_registry *r, const char *name, int *err)
{
    pthread_mutex_lock(&r->lock);
    sv_view *v = find_locked(r, name, 0);
    if (!v) {
        if (r->n >= VIEW_MAX_HINTS || r->next_id > VIEW_MAX_ID) {
            pthread_mutex_unlock(&r->lock);
            *err = -ENOSPC;
            return NULL;
        }
        v = calloc(1, sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&r->lock);
            *err = -ENOMEM;
            return NULL;
        }
        snprintf(v->name, sizeof v->name, "%s", name);
        v->id = r->next_id++;
        v->state = HINT_WRITING;
        atomic_init(&v->refs, 1);
        pthread_mutex_init(&v->lock, NULL);
        r->recs[r->n++] = v;
    } else if (v->state == HINT_REJECTED) {
        v->state = HINT_WRITING;
    }
    v->writers++;
    atomic_fetch_add(&v->refs, 1);
    pthread_mutex_unlock(&r->lock);
    return v;
}

void view_registry_remove(view_registry *r, sv_view *v)
{
    bool found = false;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        if (r->recs[i] == v) {
            r->recs[i] = r->recs[--r->n];
            v->detached = true;
            found = true;
            break;
        }
    pthread_mutex_unlock(&r->lock);
    if (found)
        view_unref(v);
}
