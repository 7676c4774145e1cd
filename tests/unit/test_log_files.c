/* delta_log_classify, delta_log_plan_build, delta_log_version_at: file names
 * of _delta_log/, the choice of checkpoint, commits and compactions for a
 * version, gaps, the _last_checkpoint hint, time travel by timestamp. */
#include "log_files.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UUID1 "80a083e8-7026-4e79-81be-64bd76c43a11"
#define UUID2 "f5ee283b-37c7-46af-b64c-8f77c6a5c43a"

static delta_log_file classify(const char *name)
{
    delta_log_file f;
    delta_log_classify(name, strlen(name), &f);
    return f;
}

static void expect_other(const char *name)
{
    delta_log_file f = classify(name);
    cr_assert_eq(f.kind, DELTA_LOG_FILE_OTHER, "%s is not OTHER (kind %d)", name, f.kind);
    cr_assert_eq(f.version, -1);
}

Test(log_files, classify_names)
{
    delta_log_file f = classify("00000000000000000042.json");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_COMMIT);
    cr_assert_eq(f.version, 42);
    cr_assert_eq(f.end_version, 42);

    f = classify("00000000000000000042.checkpoint.parquet");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_CHECKPOINT);
    cr_assert_eq(f.version, 42);
    cr_assert_eq(f.part, 1);
    cr_assert_eq(f.parts, 1);

    f = classify("00000000000000000010.checkpoint.0000000002.0000000003.parquet");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_CHECKPOINT_PART);
    cr_assert_eq(f.version, 10);
    cr_assert_eq(f.part, 2);
    cr_assert_eq(f.parts, 3);

    const char *v2 = "00000000000000000010.checkpoint." UUID1 ".json";
    f = classify(v2);
    cr_assert_eq(f.kind, DELTA_LOG_FILE_CHECKPOINT_V2);
    cr_assert_eq(f.version, 10);
    cr_assert(f.json);
    cr_assert_eq(f.uuid_len, 36);
    cr_assert_eq(memcmp(v2 + f.uuid_offset, UUID1, 36), 0);
    f = classify("00000000000000000020.checkpoint." UUID1 ".parquet");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_CHECKPOINT_V2);
    cr_assert_not(f.json);

    f = classify("00000000000000000004.00000000000000000006.compacted.json");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_COMPACTION);
    cr_assert_eq(f.version, 4);
    cr_assert_eq(f.end_version, 6);

    f = classify("00000000000000000007.crc");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_CHECKSUM);
    cr_assert_eq(f.version, 7);

    f = classify("_last_checkpoint");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_LAST_CHECKPOINT);
    cr_assert_eq(f.version, -1);

    f = classify("09223372036854775807.json");
    cr_assert_eq(f.kind, DELTA_LOG_FILE_COMMIT, "INT64_MAX fits");
    cr_assert_eq(f.version, INT64_MAX);
    cr_assert_eq(delta_log_classify("x", 1, NULL), DELTA_LOG_FILE_OTHER, "out may be NULL");
    cr_assert_eq(delta_log_classify("00000000000000000001.jsonX", 25, NULL), DELTA_LOG_FILE_COMMIT,
                 "only len bytes count");
}

Test(log_files, classify_is_strict)
{
    expect_other("");
    expect_other("0000000000000000042.json");            /* 19 digits */
    expect_other("000000000000000000042.json");          /* 21 digits */
    expect_other("0000000000000000004a.json");
    expect_other("09223372036854775808.json");           /* past INT64_MAX */
    expect_other("99999999999999999999.json");
    expect_other("00000000000000000001.json.tmp");
    expect_other(".00000000000000000001.json.crc");
    expect_other("..00000000000000000000.json.c6b312ca-665d-46ab-93a9-9f87ad2baa92.tmp.crc");
    expect_other("00000000000000000001." UUID1 ".json"); /* a staged commit's name */
    expect_other("_sidecars");
    expect_other("_delta_log/00000000000000000001.json");
    expect_other("00000000000000000001.checkpoint");
    expect_other("00000000000000000001.checkpoint.json");
    expect_other("00000000000000000001.checkpoint.0000000000.0000000003.parquet"); /* part 0 */
    expect_other("00000000000000000001.checkpoint.0000000004.0000000003.parquet"); /* part > total */
    expect_other("00000000000000000001.checkpoint.000000001.0000000003.parquet");  /* 9 digits */
    expect_other("00000000000000000001.checkpoint.0000000001.0000000003.json");
    expect_other("00000000000000000001.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a1.json"); /* short UUID */
    expect_other("00000000000000000001.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a1g.json");
    expect_other("00000000000000000001.checkpoint.80a083e807026-4e79-81be-64bd76c43a11.json");
    expect_other("00000000000000000001.checkpoint." UUID1 ".avro");
    expect_other("00000000000000000006.00000000000000000004.compacted.json"); /* X > Y */
    expect_other("00000000000000000004.0000000000000000006.compacted.json");
    expect_other("00000000000000000004.00000000000000000006.compacted.parquet");
    expect_other("00000000000000000004.crc.crc");
    expect_other("_last_checkpoint.tmp");
    expect_other("00000000000000000001.JSON");
    char nul[] = "00000000000000000001.json";
    nul[3] = '\0';
    cr_assert_eq(delta_log_classify(nul, sizeof nul - 1, NULL), DELTA_LOG_FILE_OTHER);
}

/* A listing from names; size and mtime from the version for checks. */
typedef struct {
    delta_log_entry e[64];
    size_t n;
} listing;

static void add(listing *l, const char *name, int64_t mtime)
{
    cr_assert_lt(l->n, 64);
    l->e[l->n] = (delta_log_entry){.name = name, .size = 100 + l->n, .mtime_ms = mtime};
    l->n++;
}

static const char *const commit_names[] = {
    "00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json",
    "00000000000000000003.json", "00000000000000000004.json", "00000000000000000005.json",
    "00000000000000000006.json", "00000000000000000007.json", "00000000000000000008.json",
    "00000000000000000009.json", "00000000000000000010.json", "00000000000000000011.json",
    "00000000000000000012.json",
};

static void add_commits(listing *l, int from, int to)
{
    for (int v = from; v <= to; v++)
        add(l, commit_names[v], 1000 * (v + 1));
}

static delta_log_plan plan_ok(const listing *l, int64_t version, const delta_log_hint *hint)
{
    delta_log_plan p;
    sv_error e = {0};
    int rc = delta_log_plan_build(l->e, l->n, version, hint, &p, &e);
    cr_assert_eq(rc, DELTA_LOG_OK, "plan failed: %s", e.msg);
    return p;
}

static void plan_fails(const listing *l, int64_t version, const delta_log_hint *hint, int code, const char *needle)
{
    delta_log_plan p;
    sv_error e = {0};
    int rc = delta_log_plan_build(l->e, l->n, version, hint, &p, &e);
    cr_assert_eq(rc, code, "code %d (%s), expected %d", rc, e.msg, code);
    cr_assert(strstr(e.msg, needle), "error '%s' does not mention '%s'", e.msg, needle);
    cr_assert_null(p.commits);
    cr_assert_eq(p.n_checkpoint, 0);
}

static void expect_commits(const delta_log_plan *p, int64_t first, int64_t last)
{
    cr_assert_eq(p->n_commits, (size_t)(last - first + 1), "%zu commits, expected %lld..%lld", p->n_commits,
                 (long long)first, (long long)last);
    for (size_t i = 0; i < p->n_commits; i++) {
        cr_assert_eq(p->commits[i].version, first + (int64_t)i);
        cr_assert_str_eq(p->commits[i].name, commit_names[first + (int64_t)i]);
    }
}

Test(log_files, commits_only)
{
    listing l = {0};
    add(&l, "_last_checkpoint", 1);
    add_commits(&l, 0, 3);
    add(&l, "00000000000000000002.crc", 1);
    delta_log_plan p = plan_ok(&l, -1, NULL);
    cr_assert_eq(p.version, 3);
    cr_assert_eq(p.latest_version, 3);
    cr_assert_eq(p.checkpoint_version, -1);
    cr_assert_eq(p.checkpoint_kind, DELTA_LOG_FILE_OTHER);
    cr_assert_eq(p.n_checkpoint, 0);
    cr_assert_eq(p.n_compactions, 0);
    expect_commits(&p, 0, 3);
    cr_assert_eq(p.commits[2].mtime_ms, 3000);
    cr_assert_eq(p.commits[0].size, 101, "size passed through");
    delta_log_plan_free(&p);

    p = plan_ok(&l, 1, NULL);
    cr_assert_eq(p.version, 1);
    cr_assert_eq(p.latest_version, 3);
    expect_commits(&p, 0, 1);
    delta_log_plan_free(&p);
}

Test(log_files, classic_checkpoint_and_commits)
{
    listing l = {0};
    /* Listing order does not matter; commits before the checkpoint were cleaned up. */
    add_commits(&l, 8, 12);
    add(&l, "00000000000000000010.checkpoint.parquet", 1);
    add(&l, "00000000000000000005.checkpoint.parquet", 1);
    add_commits(&l, 5, 7);
    delta_log_plan p = plan_ok(&l, -1, NULL);
    cr_assert_eq(p.version, 12);
    cr_assert_eq(p.checkpoint_version, 10);
    cr_assert_eq(p.checkpoint_kind, DELTA_LOG_FILE_CHECKPOINT);
    cr_assert_eq(p.n_checkpoint, 1);
    cr_assert_str_eq(p.checkpoint[0].name, "00000000000000000010.checkpoint.parquet");
    expect_commits(&p, 11, 12);
    delta_log_plan_free(&p);

    /* Time travel: the checkpoint must not be newer than the version. */
    p = plan_ok(&l, 9, NULL);
    cr_assert_eq(p.checkpoint_version, 5);
    expect_commits(&p, 6, 9);
    delta_log_plan_free(&p);
    p = plan_ok(&l, 10, NULL);
    cr_assert_eq(p.checkpoint_version, 10);
    cr_assert_eq(p.n_commits, 0);
    delta_log_plan_free(&p);
    plan_fails(&l, 4, NULL, DELTA_LOG_E_GAP,
               "commit 00000000000000000000.json (version 0) is missing, and there is no checkpoint at or before "
               "version 4");
    plan_fails(&l, 13, NULL, DELTA_LOG_E_VERSION, "version 13 does not exist: the latest is 12");
}

Test(log_files, incomplete_multi_part_checkpoint_is_skipped)
{
    listing l = {0};
    add_commits(&l, 0, 12);
    add(&l, "00000000000000000004.checkpoint.0000000001.0000000002.parquet", 1);
    add(&l, "00000000000000000004.checkpoint.0000000002.0000000002.parquet", 1);
    /* Version 10: parts 1 and 3 of 3 (part 2 missing), and 1 of 2 of another attempt. */
    add(&l, "00000000000000000010.checkpoint.0000000001.0000000003.parquet", 1);
    add(&l, "00000000000000000010.checkpoint.0000000003.0000000003.parquet", 1);
    add(&l, "00000000000000000010.checkpoint.0000000001.0000000002.parquet", 1);
    delta_log_plan p = plan_ok(&l, -1, NULL);
    cr_assert_eq(p.checkpoint_version, 4);
    cr_assert_eq(p.checkpoint_kind, DELTA_LOG_FILE_CHECKPOINT_PART);
    cr_assert_eq(p.n_checkpoint, 2);
    cr_assert_str_eq(p.checkpoint[0].name, "00000000000000000004.checkpoint.0000000001.0000000002.parquet");
    cr_assert_str_eq(p.checkpoint[1].name, "00000000000000000004.checkpoint.0000000002.0000000002.parquet");
    expect_commits(&p, 5, 12);
    delta_log_plan_free(&p);

    /* The missing part arrives: version 10 is complete with 3 parts. */
    add(&l, "00000000000000000010.checkpoint.0000000002.0000000003.parquet", 1);
    p = plan_ok(&l, -1, NULL);
    cr_assert_eq(p.checkpoint_version, 10);
    cr_assert_eq(p.n_checkpoint, 3);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(strstr(p.checkpoint[i].name, ".checkpoint.000000000")[21], (char)('1' + i));
    expect_commits(&p, 11, 12);
    delta_log_plan_free(&p);
}

Test(log_files, v2_checkpoint_and_preference_at_one_version)
{
    listing l = {0};
    add_commits(&l, 0, 9);
    add(&l, "00000000000000000006.checkpoint." UUID2 ".json", 1);
    add(&l, "00000000000000000006.checkpoint.parquet", 1);
    add(&l, "00000000000000000006.checkpoint." UUID1 ".parquet", 1);
    add(&l, "00000000000000000006.checkpoint.0000000001.0000000001.parquet", 1);
    add(&l, "00000000000000000008.checkpoint.parquet", 1);
    add(&l, "00000000000000000008.checkpoint.0000000001.0000000002.parquet", 1);
    add(&l, "00000000000000000008.checkpoint.0000000002.0000000002.parquet", 1);
    add(&l, "00000000000000000008.checkpoint.0000000001.0000000001.parquet", 1);

    /* V2 first; of two V2, the greatest name (the reference implementation's order). */
    delta_log_plan p = plan_ok(&l, 7, NULL);
    cr_assert_eq(p.checkpoint_version, 6);
    cr_assert_eq(p.checkpoint_kind, DELTA_LOG_FILE_CHECKPOINT_V2);
    cr_assert_eq(p.n_checkpoint, 1);
    cr_assert_str_eq(p.checkpoint[0].name, "00000000000000000006.checkpoint." UUID2 ".json");
    expect_commits(&p, 7, 7);
    delta_log_plan_free(&p);

    /* Then the multi-part one with the most parts, then the classic one. */
    p = plan_ok(&l, -1, NULL);
    cr_assert_eq(p.checkpoint_version, 8);
    cr_assert_eq(p.checkpoint_kind, DELTA_LOG_FILE_CHECKPOINT_PART);
    cr_assert_eq(p.n_checkpoint, 2);
    expect_commits(&p, 9, 9);
    delta_log_plan_free(&p);
}

Test(log_files, compaction_replaces_commits)
{
    listing l = {0};
    add_commits(&l, 0, 12);
    add(&l, "00000000000000000003.checkpoint.parquet", 1);
    add(&l, "00000000000000000002.00000000000000000006.compacted.json", 1); /* starts before the checkpoint */
    add(&l, "00000000000000000004.00000000000000000006.compacted.json", 1);
    add(&l, "00000000000000000004.00000000000000000008.compacted.json", 1); /* longer: preferred */
    add(&l, "00000000000000000009.00000000000000000009.compacted.json", 1); /* one commit: no gain */
    add(&l, "00000000000000000010.00000000000000000013.compacted.json", 1); /* past the version */
    add(&l, "00000000000000000010.00000000000000000011.compacted.json", 1);
    delta_log_plan p = plan_ok(&l, 12, NULL);
    cr_assert_eq(p.checkpoint_version, 3);
    cr_assert_eq(p.n_compactions, 2);
    cr_assert_str_eq(p.compactions[0].name, "00000000000000000004.00000000000000000008.compacted.json");
    cr_assert_eq(p.compactions[0].version, 4);
    cr_assert_eq(p.compactions[0].end_version, 8);
    cr_assert_str_eq(p.compactions[1].name, "00000000000000000010.00000000000000000011.compacted.json");
    cr_assert_eq(p.n_commits, 2);
    cr_assert_eq(p.commits[0].version, 9);
    cr_assert_eq(p.commits[1].version, 12);
    delta_log_plan_free(&p);

    /* At version 7 the 4..6 compaction fits and 4..8 does not. */
    p = plan_ok(&l, 7, NULL);
    cr_assert_eq(p.n_compactions, 1);
    cr_assert_eq(p.compactions[0].end_version, 6);
    expect_commits(&p, 7, 7);
    delta_log_plan_free(&p);

    /* Compactions do not stand in for missing commits. */
    listing g = {0};
    add_commits(&g, 0, 3);
    add_commits(&g, 5, 6);
    add(&g, "00000000000000000003.00000000000000000005.compacted.json", 1);
    plan_fails(&g, -1, NULL, DELTA_LOG_E_GAP, "commit 00000000000000000004.json (version 4) is missing");
}

Test(log_files, gap_after_checkpoint)
{
    listing l = {0};
    add(&l, "00000000000000000005.checkpoint.parquet", 1);
    add_commits(&l, 5, 7);
    add_commits(&l, 9, 10);
    plan_fails(&l, -1, NULL, DELTA_LOG_E_GAP,
               "commit 00000000000000000008.json (version 8) is missing after the checkpoint at version 5");
    delta_log_plan p = plan_ok(&l, 7, NULL);
    expect_commits(&p, 6, 7);
    delta_log_plan_free(&p);
}

Test(log_files, last_checkpoint_hint)
{
    /* A listing started at the hint: commits before it were not listed. */
    listing l = {0};
    add(&l, "00000000000000000008.checkpoint.0000000001.0000000002.parquet", 1);
    add(&l, "00000000000000000008.checkpoint.0000000002.0000000002.parquet", 1);
    add_commits(&l, 8, 10);
    delta_log_hint hint = {.version = 8, .parts = 2};
    delta_log_plan p = plan_ok(&l, -1, &hint);
    cr_assert_eq(p.checkpoint_version, 8);
    expect_commits(&p, 9, 10);
    delta_log_plan_free(&p);

    /* A newer checkpoint than the hint is fine; one older than it is not. */
    hint.version = 6;
    p = plan_ok(&l, -1, &hint);
    cr_assert_eq(p.checkpoint_version, 8);
    delta_log_plan_free(&p);
    hint = (delta_log_hint){.version = 9, .parts = 0};
    plan_fails(&l, -1, &hint, DELTA_LOG_E_CHECKPOINT,
               "_last_checkpoint names the checkpoint at version 9, but no complete checkpoint");
    /* The hint does not apply to versions before it. */
    p = plan_ok(&l, 8, &hint);
    cr_assert_eq(p.checkpoint_version, 8);
    delta_log_plan_free(&p);

    /* The hinted multi-part checkpoint misses a part. */
    listing m = {0};
    add(&m, "00000000000000000008.checkpoint.0000000001.0000000002.parquet", 1);
    add_commits(&m, 8, 10);
    hint = (delta_log_hint){.version = 8, .parts = 2};
    plan_fails(&m, -1, &hint, DELTA_LOG_E_CHECKPOINT, "version 8 (2 parts)");

    hint.version = -3;
    plan_fails(&l, -1, &hint, DELTA_LOG_E_INVALID, "negative");
}

Test(log_files, bad_listings)
{
    listing l = {0};
    plan_fails(&l, -1, NULL, DELTA_LOG_E_EMPTY, "no commit");
    add(&l, "00000000000000000003.checkpoint.parquet", 1);
    add(&l, "_last_checkpoint", 1);
    /* A log whose commits were cleaned up keeps its checkpoint: version 3
     * (as delta-rs reads such a table). */
    delta_log_plan cp_only = plan_ok(&l, -1, NULL);
    cr_expect_eq(cp_only.version, 3);
    cr_expect_eq(cp_only.n_checkpoint, 1);
    cr_expect_eq(cp_only.n_commits, 0);
    delta_log_plan_free(&cp_only);
    cr_expect_eq(delta_log_latest_version(l.e, l.n), 3);
    add_commits(&l, 3, 4);
    add(&l, "00000000000000000004.json", 1);
    plan_fails(&l, -1, NULL, DELTA_LOG_E_INVALID, "00000000000000000004.json is listed twice");
    plan_fails(&l, -2, NULL, DELTA_LOG_E_INVALID, "negative");

    listing d = {0};
    add_commits(&d, 0, 1);
    add(&d, "00000000000000000001.checkpoint." UUID1 ".json", 1);
    add(&d, "00000000000000000001.checkpoint." UUID1 ".json", 1);
    plan_fails(&d, -1, NULL, DELTA_LOG_E_INVALID, "listed twice");

    delta_log_plan p;
    sv_error e = {0};
    cr_assert_eq(delta_log_plan_build(NULL, DELTA_LOG_MAX_ENTRIES + 1, -1, NULL, &p, &e), DELTA_LOG_E_LIMIT);
    cr_assert(strstr(e.msg, "the limit is 1000000"), "%s", e.msg);
    cr_assert_eq(delta_log_plan_build(NULL, 1, -1, NULL, &p, &e), DELTA_LOG_E_INVALID);
    delta_log_entry unnamed = {0};
    cr_assert_eq(delta_log_plan_build(&unnamed, 1, -1, NULL, &p, &e), DELTA_LOG_E_INVALID);
    delta_log_plan_free(&p);
    delta_log_plan_free(NULL);
}

Test(log_files, many_commits)
{
    /* A long log with a checkpoint near the end: only the tail is planned. */
    size_t n = 5000;
    delta_log_entry *e = calloc(n + 1, sizeof *e);
    char (*names)[64] = calloc(n + 1, sizeof *names);
    cr_assert(e && names);
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "%020zu.json", n - 1 - i); /* descending: order is irrelevant */
        e[i] = (delta_log_entry){.name = names[i], .size = 1, .mtime_ms = (int64_t)(n - i)};
    }
    snprintf(names[n], sizeof names[n], "%020zu.checkpoint.parquet", (size_t)4990);
    e[n] = (delta_log_entry){.name = names[n], .size = 1, .mtime_ms = 0};
    delta_log_plan p;
    sv_error err = {0};
    cr_assert_eq(delta_log_plan_build(e, n + 1, -1, NULL, &p, &err), DELTA_LOG_OK, "%s", err.msg);
    cr_assert_eq(p.version, 4999);
    cr_assert_eq(p.checkpoint_version, 4990);
    cr_assert_eq(p.n_commits, 9);
    cr_assert_str_eq(p.commits[8].name, "00000000000000004999.json");
    delta_log_plan_free(&p);
    cr_assert_eq(delta_log_plan_build(e, n, -1, NULL, &p, &err), DELTA_LOG_OK, "%s", err.msg);
    cr_assert_eq(p.n_commits, n);
    delta_log_plan_free(&p);
    free(e);
    free(names);
}

static int64_t version_at(const listing *l, int64_t t)
{
    int64_t v = -2;
    sv_error e = {0};
    int rc = delta_log_version_at(l->e, l->n, t, &v, &e);
    cr_assert_eq(rc, DELTA_LOG_OK, "version_at(%lld): %s", (long long)t, e.msg);
    return v;
}

Test(log_files, version_at_timestamp)
{
    listing l = {0};
    add(&l, "00000000000000000003.checkpoint.parquet", 50000); /* checkpoints do not count */
    add(&l, commit_names[3], 3000);
    add(&l, commit_names[4], 4000);
    add(&l, commit_names[6], 6000);
    add(&l, commit_names[5], 5000);
    add(&l, "00000000000000000005.crc", 1);
    cr_assert_eq(version_at(&l, 3000), 3);
    cr_assert_eq(version_at(&l, 3999), 3);
    cr_assert_eq(version_at(&l, 4000), 4);
    cr_assert_eq(version_at(&l, 5500), 5);
    cr_assert_eq(version_at(&l, INT64_MAX), 6);

    int64_t v = 0;
    sv_error e = {0};
    cr_assert_eq(delta_log_version_at(l.e, l.n, 2999, &v, &e), DELTA_LOG_E_TIMESTAMP);
    cr_assert(strstr(e.msg, "time 2999 is before the first commit (version 3 at 3000)"), "%s", e.msg);
    cr_assert_eq(v, -1);
    cr_assert_eq(delta_log_version_at(l.e, 0, 0, &v, &e), DELTA_LOG_E_EMPTY);
}

Test(log_files, version_at_monotonizes_times)
{
    /* Version 2's file is older than version 1's (copied, clock skew): it
     * counts as 1 ms after version 1, so it never precedes it. */
    listing l = {0};
    add(&l, commit_names[0], 1000);
    add(&l, commit_names[1], 5000);
    add(&l, commit_names[2], 2000);
    add(&l, commit_names[3], 9000);
    cr_assert_eq(version_at(&l, 2500), 0, "not version 2, whose raw time is 2000");
    cr_assert_eq(version_at(&l, 5000), 1);
    cr_assert_eq(version_at(&l, 5001), 2);
    cr_assert_eq(version_at(&l, 8999), 2);
    cr_assert_eq(version_at(&l, 9000), 3);

    listing s = {0};
    add(&s, commit_names[0], INT64_MAX);
    add(&s, commit_names[1], 0);
    cr_assert_eq(version_at(&s, INT64_MAX), 1, "saturates instead of overflowing");
}

Test(log_files, versions_up_to_int64_max)
{
    listing l = {0};
    add(&l, "09223372036854775806.checkpoint.parquet", 1);
    add(&l, "09223372036854775806.json", 1);
    add(&l, "09223372036854775807.json", 2);
    delta_log_plan p = plan_ok(&l, -1, NULL);
    cr_assert_eq(p.version, INT64_MAX);
    cr_assert_eq(p.checkpoint_version, INT64_MAX - 1);
    cr_assert_eq(p.n_commits, 1);
    cr_assert_eq(p.commits[0].version, INT64_MAX);
    delta_log_plan_free(&p);

    add(&l, "09223372036854775807.checkpoint.parquet", 1);
    add(&l, "09223372036854775806.09223372036854775807.compacted.json", 1);
    p = plan_ok(&l, -1, NULL);
    cr_assert_eq(p.checkpoint_version, INT64_MAX);
    cr_assert_eq(p.n_commits, 0);
    cr_assert_eq(p.n_compactions, 0);
    delta_log_plan_free(&p);
    p = plan_ok(&l, INT64_MAX - 1, NULL);
    cr_assert_eq(p.checkpoint_version, INT64_MAX - 1);
    cr_assert_eq(p.n_commits, 0);
    delta_log_plan_free(&p);

    listing g = {0};
    add(&g, "09223372036854775807.json", 1);
    plan_fails(&g, -1, NULL, DELTA_LOG_E_GAP, "commit 00000000000000000000.json (version 0) is missing");
    cr_assert_eq(version_at(&g, INT64_MAX), INT64_MAX);
}
