/* Writing a hint: NAME.json under .sieve/hints opened for writing collects
 * the document; every close() (FUSE flush) judges what was written, so the
 * writer's close() reports a rejected hint, with the reason in NAME.error.
 * Hints are immutable: writing an accepted name again is accepted only with
 * the same document. */
#ifndef SIEVE_HINT_WRITER_H
#define SIEVE_HINT_WRITER_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "view.h"
#include "view_registry.h"

struct hint_writer {
    sv_view *view;        /* the record, referenced; its writer count includes this */
    pthread_mutex_t lock; /* guards the fields below: writes of one handle come from several threads */
    char *buf;            /* the document written so far */
    size_t len, cap;
    bool written;         /* a write arrived since the last verdict */
    bool too_big;         /* a write went past HINT_MAX_BYTES */
    int verdict;          /* 0 or -errno of the last verdict */
};

/* A writer of record v (whose writer count the caller has raised and whose
 * reference it hands over), or NULL when out of memory (then both are
 * given back). */
hint_writer *hint_writer_new(view_registry *r, sv_view *v);

#endif
