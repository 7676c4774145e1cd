/* Fuzz the Delta log readers: every line of the input is parsed as an action
 * (log_actions.c) and classified as a _delta_log/ file name; the lines are
 * also a listing to plan (log_files.c). Nothing may read out of bounds or
 * leak, and a plan must cover the versions after its checkpoint exactly. */
#include "log_actions.h"
#include "log_files.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LINES 4096u

/* Offsets from the checkpoint, in unsigned arithmetic: versions reach INT64_MAX. */
static void check_plan(const delta_log_plan *p)
{
    if (p->version > p->latest_version || p->checkpoint_version > p->version ||
        (p->checkpoint_version < 0) != (p->n_checkpoint == 0))
        abort();
    const uint64_t base = (uint64_t)p->checkpoint_version + 1;
    const uint64_t needed = (uint64_t)p->version - (uint64_t)p->checkpoint_version;
    uint64_t next = 0;
    size_t c = 0, k = 0;
    while (c < p->n_commits || k < p->n_compactions) {
        if (k < p->n_compactions && (uint64_t)p->compactions[k].version - base == next) {
            const delta_log_plan_file *f = &p->compactions[k++];
            if (f->end_version <= f->version)
                abort();
            next += (uint64_t)f->end_version - (uint64_t)f->version + 1;
        } else if (c < p->n_commits && (uint64_t)p->commits[c].version - base == next) {
            c++;
            next++;
        } else {
            abort();
        }
        if (next > needed)
            abort();
    }
    if (next != needed)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* NUL-terminated copy, so that lines can serve as listing names. */
    char *text = malloc(size + 1);
    delta_log_entry *entries = calloc(MAX_LINES, sizeof *entries);
    if (!text || !entries) {
        free(text);
        free(entries);
        return 0;
    }
    if (size)
        memcpy(text, data, size);
    text[size] = '\0';
    size_t n = 0;
    char *line = text;
    for (;;) {
        char *nl = memchr(line, '\n', (size_t)(text + size - line));
        size_t len = nl ? (size_t)(nl - line) : (size_t)(text + size - line);
        delta_action a;
        if (delta_action_parse(line, len, &a, NULL) == DELTA_ACTION_OK)
            delta_action_free(&a);
        else if (a.kind != DELTA_ACTION_BLANK)
            abort(); /* a failed parse leaves nothing behind */
        delta_log_file f;
        if (delta_log_classify(line, len, &f) == DELTA_LOG_FILE_COMPACTION && f.end_version < f.version)
            abort();
        if (n < MAX_LINES) {
            line[len] = '\0';
            entries[n] = (delta_log_entry){.name = line, .size = len, .mtime_ms = (int64_t)(len * 7 % 13) + (int64_t)n};
            n++;
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    delta_log_plan p;
    if (delta_log_plan_build(entries, n, -1, NULL, &p, NULL) == DELTA_LOG_OK) {
        check_plan(&p);
        /* Again with the plan's checkpoint as the hint: it must still plan. */
        delta_log_hint hint = {.version = p.checkpoint_version, .parts = (int64_t)p.n_checkpoint};
        int64_t version = p.version;
        delta_log_plan_free(&p);
        if (hint.version >= 0) {
            if (delta_log_plan_build(entries, n, version, &hint, &p, NULL) != DELTA_LOG_OK)
                abort();
            check_plan(&p);
            delta_log_plan_free(&p);
        }
    }
    int64_t v;
    delta_log_version_at(entries, n, (int64_t)size, &v, NULL);
    free(entries);
    free(text);
    return 0;
}
