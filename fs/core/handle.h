/* Open files and directories as the FUSE adapter holds them: one tagged
 * handle per open, its kind saying which of the structs in fs.c it heads.
 * Every handle is on its filesystem's list, so the ones the kernel has not
 * released yet when the mount ends (RELEASE is sent asynchronously after
 * close) are freed by sv_fs_destroy. */
#ifndef SIEVE_HANDLE_H
#define SIEVE_HANDLE_H
#include <pthread.h>

typedef enum {
    HANDLE_DIR = 1, /* a directory listing snapshot */
    HANDLE_PLAIN,   /* an object of the plain tree */
    HANDLE_TEXT,    /* a snapshot of generated text: stats, NAME.json, .error, .stats */
    HANDLE_VIEW,    /* an object seen through a view */
    HANDLE_HINT,    /* NAME.json being written */
} handle_kind;

typedef struct sv_handle {
    struct sv_handle *prev, *next; /* under the list's lock */
    handle_kind kind;              /* set once, before the handle is listed */
} sv_handle;

typedef struct {
    pthread_mutex_t lock; /* guards the links of every handle on the list */
    sv_handle head;       /* sentinel */
} handle_list;

void handle_list_init(handle_list *l);
void handle_list_destroy(handle_list *l);
void handle_list_add(handle_list *l, sv_handle *h, handle_kind kind);
void handle_list_remove(handle_list *l, sv_handle *h);
/* Take any handle off the list (NULL when empty), for freeing at unmount. */
sv_handle *handle_list_pop(handle_list *l);

#endif
