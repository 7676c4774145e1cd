#include "log_files.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_error.h"
#include "sv_grow.h"

#define VERSION_DIGITS 20
#define PART_DIGITS 10
#define UUID_LEN 36

/* n decimal digits at s as an int64; false when not all digits or too big. */
static bool parse_digits(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* 8-4-4-4-12 hex digits. */
static bool is_uuid(const char *s)
{
    for (size_t i = 0; i < UUID_LEN; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !is_hex(s[i]))
            return false;
    }
    return true;
}

/* Whether s[0..len) is exactly lit. */
static bool is(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len == n && memcmp(s, lit, n) == 0;
}

static delta_log_file_kind classify(const char *name, size_t len, delta_log_file *f)
{
    if (is(name, len, "_last_checkpoint"))
        return f->kind = DELTA_LOG_FILE_LAST_CHECKPOINT;
    if (len < VERSION_DIGITS + 1 || name[VERSION_DIGITS] != '.' || !parse_digits(name, VERSION_DIGITS, &f->version))
        return DELTA_LOG_FILE_OTHER;
    const char *r = name + VERSION_DIGITS + 1;
    size_t rl = len - VERSION_DIGITS - 1;
    f->end_version = f->version;
    if (is(r, rl, "json"))
        return f->kind = DELTA_LOG_FILE_COMMIT;
    if (is(r, rl, "crc"))
        return f->kind = DELTA_LOG_FILE_CHECKSUM;
    static const char compacted[] = ".compacted.json";
    if (rl == VERSION_DIGITS + sizeof compacted - 1 && is(r + VERSION_DIGITS, rl - VERSION_DIGITS, compacted)) {
        if (!parse_digits(r, VERSION_DIGITS, &f->end_version) || f->end_version < f->version)
            return DELTA_LOG_FILE_OTHER;
        return f->kind = DELTA_LOG_FILE_COMPACTION;
    }
    static const char cp[] = "checkpoint.";
    if (rl < sizeof cp - 1 || memcmp(r, cp, sizeof cp - 1) != 0)
        return DELTA_LOG_FILE_OTHER;
    r += sizeof cp - 1;
    rl -= sizeof cp - 1;
    f->part = f->parts = 1;
    if (is(r, rl, "parquet"))
        return f->kind = DELTA_LOG_FILE_CHECKPOINT;
    if (rl == 2 * PART_DIGITS + 1 + strlen(".parquet") && r[PART_DIGITS] == '.' &&
        is(r + 2 * PART_DIGITS + 1, rl - 2 * PART_DIGITS - 1, ".parquet")) {
        if (!parse_digits(r, PART_DIGITS, &f->part) || !parse_digits(r + PART_DIGITS + 1, PART_DIGITS, &f->parts) ||
            f->part < 1 || f->part > f->parts)
            return DELTA_LOG_FILE_OTHER;
        return f->kind = DELTA_LOG_FILE_CHECKPOINT_PART;
    }
    if (rl > UUID_LEN && r[UUID_LEN] == '.' && is_uuid(r)) {
        f->json = is(r + UUID_LEN, rl - UUID_LEN, ".json");
        if (!f->json && !is(r + UUID_LEN, rl - UUID_LEN, ".parquet"))
            return DELTA_LOG_FILE_OTHER;
        f->uuid_offset = (size_t)(r - name);
        f->uuid_len = UUID_LEN;
        return f->kind = DELTA_LOG_FILE_CHECKPOINT_V2;
    }
    return DELTA_LOG_FILE_OTHER;
}

delta_log_file_kind delta_log_classify(const char *name, size_t len, delta_log_file *out)
{
    delta_log_file f = {.kind = DELTA_LOG_FILE_OTHER, .version = -1, .end_version = -1};
    delta_log_file_kind k = name ? classify(name, len, &f) : DELTA_LOG_FILE_OTHER;
    if (k == DELTA_LOG_FILE_OTHER || k == DELTA_LOG_FILE_LAST_CHECKPOINT) {
        /* A prefix that parsed as a version is no version of this file. */
        f = (delta_log_file){.kind = k, .version = -1, .end_version = -1};
    }
    if (out)
        *out = f;
    return k;
}

void delta_log_plan_free(delta_log_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_checkpoint; i++)
        free(p->checkpoint[i].name);
    for (size_t i = 0; i < p->n_commits; i++)
        free(p->commits[i].name);
    for (size_t i = 0; i < p->n_compactions; i++)
        free(p->compactions[i].name);
    free(p->checkpoint);
    free(p->commits);
    free(p->compactions);
    memset(p, 0, sizeof *p);
    p->checkpoint_version = -1;
}

/* A listed file of one of the kinds a plan uses. */
typedef struct {
    delta_log_file f;
    const delta_log_entry *e;
} listed;

typedef struct {
    listed *v;
    size_t n, cap;
} listed_vec;

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

/* Ascending version. */
static int cmp_commit(const void *a, const void *b)
{
    return cmp_i64(((const listed *)a)->f.version, ((const listed *)b)->f.version);
}

/* Ascending start, then the longest first. */
static int cmp_compaction(const void *a, const void *b)
{
    const delta_log_file *x = &((const listed *)a)->f, *y = &((const listed *)b)->f;
    int c = cmp_i64(x->version, y->version);
    return c ? c : cmp_i64(y->end_version, x->end_version);
}

/* The preference among checkpoints at one version, highest first. */
static int checkpoint_rank(delta_log_file_kind k)
{
    return k == DELTA_LOG_FILE_CHECKPOINT_V2 ? 3 : k == DELTA_LOG_FILE_CHECKPOINT_PART ? 2 : 1;
}

/* Newest version first; at one version the preferred kind first: V2 by
 * descending name, multi-part by descending part count then ascending part. */
static int cmp_checkpoint(const void *a, const void *b)
{
    const listed *x = a, *y = b;
    int c = cmp_i64(y->f.version, x->f.version);
    if (c)
        return c;
    c = checkpoint_rank(y->f.kind) - checkpoint_rank(x->f.kind);
    if (c)
        return c;
    if (x->f.kind == DELTA_LOG_FILE_CHECKPOINT_V2)
        return strcmp(y->e->name, x->e->name);
    c = cmp_i64(y->f.parts, x->f.parts);
    return c ? c : cmp_i64(x->f.part, y->f.part);
}

typedef struct {
    listed_vec commits, checkpoints, compactions;
} sorted_listing;

static void sorted_listing_free(sorted_listing *s)
{
    free(s->commits.v);
    free(s->checkpoints.v);
    free(s->compactions.v);
}

static int push(listed_vec *vec, const listed *l, sv_error *err)
{
    if (!sv_grow((void **)&vec->v, &vec->cap, vec->n + 1, sizeof *vec->v, 64, DELTA_LOG_MAX_ENTRIES))
        return sv_fail(err, DELTA_LOG_E_NOMEM, 0, "out of memory");
    vec->v[vec->n++] = *l;
    return 0;
}

/* Sort; a file listed twice is an error. */
static int sort_unique(listed_vec *vec, int (*cmp)(const void *, const void *), sv_error *err)
{
    if (vec->n > 1) /* an empty vector's NULL is no qsort argument */
        qsort(vec->v, vec->n, sizeof *vec->v, cmp);
    for (size_t i = 1; i < vec->n; i++) {
        if (cmp(&vec->v[i - 1], &vec->v[i]) == 0 && strcmp(vec->v[i - 1].e->name, vec->v[i].e->name) == 0)
            return sv_fail(err, DELTA_LOG_E_INVALID, 0, "%s is listed twice", vec->v[i].e->name);
    }
    return 0;
}

/* Classify and sort the entries a plan can use. */
static int sort_listing(const delta_log_entry *entries, size_t n, sorted_listing *s, sv_error *err)
{
    memset(s, 0, sizeof *s);
    if (n > DELTA_LOG_MAX_ENTRIES)
        return sv_fail(err, DELTA_LOG_E_LIMIT, 0, "the listing has %zu entries; the limit is %u", n,
                       DELTA_LOG_MAX_ENTRIES);
    if (n && !entries)
        return sv_fail(err, DELTA_LOG_E_INVALID, 0, "no listing");
    for (size_t i = 0; i < n; i++) {
        if (!entries[i].name)
            return sv_fail(err, DELTA_LOG_E_INVALID, 0, "listing entry %zu has no name", i);
        listed l = {.e = &entries[i]};
        listed_vec *to = NULL;
        switch (delta_log_classify(entries[i].name, strlen(entries[i].name), &l.f)) {
        case DELTA_LOG_FILE_COMMIT:
            to = &s->commits;
            break;
        case DELTA_LOG_FILE_CHECKPOINT:
        case DELTA_LOG_FILE_CHECKPOINT_PART:
        case DELTA_LOG_FILE_CHECKPOINT_V2:
            to = &s->checkpoints;
            break;
        case DELTA_LOG_FILE_COMPACTION:
            to = &s->compactions;
            break;
        default:
            break;
        }
        int rc = to ? push(to, &l, err) : 0;
        if (rc)
            return rc;
    }
    int rc = sort_unique(&s->commits, cmp_commit, err);
    if (!rc)
        rc = sort_unique(&s->checkpoints, cmp_checkpoint, err);
    if (!rc)
        rc = sort_unique(&s->compactions, cmp_compaction, err);
    return rc;
}

/* The preferred complete checkpoint at or before version: its first file in
 * s->checkpoints and the number of its files; *count = 0 when none. */
static size_t choose_checkpoint(const listed_vec *cps, int64_t version, size_t *count)
{
    size_t i = 0;
    while (i < cps->n && cps->v[i].f.version > version)
        i++;
    while (i < cps->n) {
        const listed *c = &cps->v[i];
        if (c->f.kind != DELTA_LOG_FILE_CHECKPOINT_PART) {
            *count = 1;
            return i;
        }
        /* Parts of one multi-part checkpoint are adjacent, in part order. */
        size_t j = i;
        while (j < cps->n && cps->v[j].f.version == c->f.version &&
               cps->v[j].f.kind == DELTA_LOG_FILE_CHECKPOINT_PART && cps->v[j].f.parts == c->f.parts)
            j++;
        bool complete = (int64_t)(j - i) == c->f.parts;
        for (size_t k = i; complete && k < j; k++)
            complete = cps->v[k].f.part == (int64_t)(k - i) + 1;
        if (complete) {
            *count = j - i;
            return i;
        }
        i = j;
    }
    *count = 0;
    return 0;
}

static int plan_file(delta_log_plan_file *out, const listed *l, sv_error *err)
{
    out->name = strdup(l->e->name);
    if (!out->name)
        return sv_fail(err, DELTA_LOG_E_NOMEM, 0, "out of memory");
    out->version = l->f.version;
    out->end_version = l->f.end_version;
    out->size = l->e->size;
    out->mtime_ms = l->e->mtime_ms;
    return 0;
}

/* The index of the first commit after version v (commits sorted). */
static size_t first_after(const listed_vec *commits, int64_t v)
{
    size_t lo = 0, hi = commits->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (commits->v[mid].f.version <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Version cp + 1 + i without overflow (the result is at most the snapshot version). */
static int64_t after(int64_t cp, uint64_t i)
{
    return (int64_t)((uint64_t)cp + 1 + i);
}

/* The latest version a listing shows: its last commit's, or a later
 * complete checkpoint's (a log whose commits were cleaned up keeps its
 * checkpoint); -1 when neither. */
static int64_t latest_of(const sorted_listing *s)
{
    size_t n_cp = 0;
    const size_t cp = choose_checkpoint(&s->checkpoints, INT64_MAX, &n_cp);
    int64_t v = s->commits.n ? s->commits.v[s->commits.n - 1].f.version : -1;
    if (n_cp && s->checkpoints.v[cp].f.version > v)
        v = s->checkpoints.v[cp].f.version;
    return v;
}

static int build(const sorted_listing *s, int64_t version, const delta_log_hint *hint, delta_log_plan *p,
                 sv_error *err)
{
    const listed_vec *commits = &s->commits;
    p->latest_version = latest_of(s);
    if (p->latest_version < 0)
        return sv_fail(err, DELTA_LOG_E_EMPTY, 0, "no commit (%0*d.json) or checkpoint in the listing",
                       VERSION_DIGITS, 0);
    if (version < 0)
        version = p->latest_version;
    if (version > p->latest_version)
        return sv_fail(err, DELTA_LOG_E_VERSION, 0, "version %" PRId64 " does not exist: the latest is %" PRId64,
                       version, p->latest_version);
    p->version = version;

    size_t n_cp = 0;
    size_t cp_at = choose_checkpoint(&s->checkpoints, version, &n_cp);
    if (n_cp) {
        p->checkpoint_version = s->checkpoints.v[cp_at].f.version;
        p->checkpoint_kind = s->checkpoints.v[cp_at].f.kind;
    }
    const int64_t cp = p->checkpoint_version;
    if (hint && hint->version <= version && cp < hint->version) {
        char parts[48] = "";
        if (hint->parts > 1)
            snprintf(parts, sizeof parts, " (%" PRId64 " parts)", hint->parts);
        return sv_fail(err, DELTA_LOG_E_CHECKPOINT, 0,
                       "_last_checkpoint names the checkpoint at version %" PRId64
                       "%s, but no complete checkpoint at or after it is listed",
                       hint->version, parts);
    }

    /* Every commit after the checkpoint must be listed, compactions or not;
     * versions as offsets from the checkpoint so that none overflows. */
    const uint64_t needed = (uint64_t)version - (uint64_t)cp;
    const size_t c0 = first_after(commits, cp);
    for (uint64_t i = 0; i < needed; i++) {
        int64_t v = after(cp, i);
        if (c0 + i >= commits->n || commits->v[c0 + i].f.version != v) {
            if (cp < 0)
                return sv_fail(err, DELTA_LOG_E_GAP, 0,
                               "commit %0*" PRId64 ".json (version %" PRId64
                               ") is missing, and there is no checkpoint at or before version %" PRId64
                               " to start from",
                               VERSION_DIGITS, v, v, version);
            return sv_fail(err, DELTA_LOG_E_GAP, 0,
                           "commit %0*" PRId64 ".json (version %" PRId64
                           ") is missing after the checkpoint at version %" PRId64,
                           VERSION_DIGITS, v, v, cp);
        }
    }
    /* needed <= commits->n now. */

    p->checkpoint = calloc(n_cp ? n_cp : 1, sizeof *p->checkpoint);
    p->commits = calloc(needed ? needed : 1, sizeof *p->commits);
    p->compactions = calloc(needed ? needed : 1, sizeof *p->compactions);
    if (!p->checkpoint || !p->commits || !p->compactions)
        return sv_fail(err, DELTA_LOG_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; i < n_cp; i++) {
        SV_TRY(plan_file(&p->checkpoint[i], &s->checkpoints.v[cp_at + i], err));
        p->n_checkpoint++;
    }

    const listed_vec *comp = &s->compactions;
    size_t ci = 0;
    for (uint64_t i = 0; i < needed;) {
        int64_t v = after(cp, i);
        while (ci < comp->n && comp->v[ci].f.version < v)
            ci++;
        const listed *use = NULL;
        for (size_t j = ci; j < comp->n && comp->v[j].f.version == v && !use; j++) {
            if (comp->v[j].f.end_version <= version && comp->v[j].f.end_version > v)
                use = &comp->v[j];
        }
        if (use) {
            SV_TRY(plan_file(&p->compactions[p->n_compactions], use, err));
            p->n_compactions++;
            i += (uint64_t)use->f.end_version - (uint64_t)v + 1;
        } else {
            SV_TRY(plan_file(&p->commits[p->n_commits], &commits->v[c0 + i], err));
            p->n_commits++;
            i++;
        }
    }
    return 0;
}

int delta_log_plan_build(const delta_log_entry *entries, size_t n, int64_t version, const delta_log_hint *hint,
                         delta_log_plan *out, sv_error *err)
{
    memset(out, 0, sizeof *out);
    out->checkpoint_version = -1;
    out->version = out->latest_version = -1;
    if (version < -1)
        return sv_fail(err, DELTA_LOG_E_INVALID, 0, "version %" PRId64 " is negative", version);
    if (hint && hint->version < 0)
        return sv_fail(err, DELTA_LOG_E_INVALID, 0, "_last_checkpoint version %" PRId64 " is negative",
                       hint->version);
    sorted_listing s;
    int rc = sort_listing(entries, n, &s, err);
    if (!rc)
        rc = build(&s, version, hint, out, err);
    sorted_listing_free(&s);
    if (rc)
        delta_log_plan_free(out);
    return rc;
}

int delta_log_version_at(const delta_log_entry *entries, size_t n, int64_t timestamp_ms, int64_t *version,
                         sv_error *err)
{
    *version = -1;
    sorted_listing s;
    int rc = sort_listing(entries, n, &s, err);
    if (!rc && s.commits.n == 0)
        rc = sv_fail(err, DELTA_LOG_E_EMPTY, 0, "no commit (%0*d.json) in the listing", VERSION_DIGITS, 0);
    if (!rc) {
        const listed *first = &s.commits.v[0];
        int64_t t = first->e->mtime_ms;
        if (timestamp_ms < t) {
            rc = sv_fail(err, DELTA_LOG_E_TIMESTAMP, 0,
                         "time %" PRId64 " is before the first commit (version %" PRId64 " at %" PRId64 ")",
                         timestamp_ms, first->f.version, t);
        } else {
            *version = first->f.version;
            for (size_t i = 1; i < s.commits.n; i++) {
                int64_t m = s.commits.v[i].e->mtime_ms;
                t = m > t ? m : (t == INT64_MAX ? t : t + 1);
                if (t > timestamp_ms)
                    break;
                *version = s.commits.v[i].f.version;
            }
        }
    }
    sorted_listing_free(&s);
    return rc;
}

bool delta_version_spec_restricts(const delta_version_spec *spec)
{
    return spec && spec->kind != DELTA_VERSION_LATEST;
}

bool delta_log_name_visible(const char *name, int64_t max_version)
{
    delta_log_file f;
    switch (delta_log_classify(name, strlen(name), &f)) {
    case DELTA_LOG_FILE_COMMIT:
    case DELTA_LOG_FILE_CHECKPOINT:
    case DELTA_LOG_FILE_CHECKPOINT_PART:
    case DELTA_LOG_FILE_CHECKPOINT_V2:
    case DELTA_LOG_FILE_CHECKSUM:
        return f.version <= max_version;
    case DELTA_LOG_FILE_COMPACTION:
        return f.end_version <= max_version;
    case DELTA_LOG_FILE_LAST_CHECKPOINT:
        return false;
    case DELTA_LOG_FILE_OTHER:
        break;
    }
    return true;
}

int64_t delta_log_latest_version(const delta_log_entry *entries, size_t n)
{
    sorted_listing s;
    if (sort_listing(entries, n, &s, NULL) != 0)
        return -1;
    const int64_t v = latest_of(&s);
    sorted_listing_free(&s);
    return v;
}
