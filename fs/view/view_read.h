/* An open file seen through a view. */
#ifndef SIEVE_VIEW_READ_H
#define SIEVE_VIEW_READ_H
#include <stdbool.h>
#include <stdint.h>

#include "plain.h"
#include "view.h"
#include "view_registry.h"

struct view_file;

struct view_reader {
    plain_file real;        /* the object behind the view's file, its footer and read pattern */
    sv_view *view;          /* referenced while open */
    struct view_file *vf;   /* the file's plan in that view, referenced */
    bool demoted;           /* the file was served real from its open on: the kernel drops its cached pages */
};

/* Open plain-path file base_ino in view v; the reader takes over the
 * caller's reference to v when it succeeds. 0 or -errno. tok: the opener's
 * (plain_file_open). */
int view_reader_open(view_registry *r, sv_view *v, uint64_t base_ino, view_reader **out, const sv_cancel *tok);

#endif
