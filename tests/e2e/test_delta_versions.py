"""Views read at other table versions than the one their hint was bound to
give the plain path's rows (delta_versions.py): a generated run, and the
cases it or users found, each kept as a fixed regression test."""
from __future__ import annotations

import json
import os

import pytest

import delta_versions as dvs
import viewdata as vd

MOUNT_ARGS = vd.EVERY_PARTIAL + ("--dir-ttl", "1")


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    try:
        d = dvs.Driver(tmp_path_factory.mktemp("spark") / "driver.log")
    except RuntimeError as e:
        pytest.fail(str(e))
    yield d
    d.close()


def scenario(seed, driver, s3, bucket, mount, tmp_path, readers=dvs.READERS) -> dvs.Scenario:
    b = bucket()
    m = mount(bucket=b, args=MOUNT_ARGS)
    return dvs.Scenario(seed, driver, s3, b, m.mp, tmp_path, readers=readers)


def report(runs) -> str:
    lines = [r.summary() for r in runs]
    for r in runs:
        for x in r.mismatches[:5]:
            lines.append(json.dumps(x, default=str)[:3000])
    return "\n".join(lines)


@pytest.mark.timeout(int(os.environ.get("SIEVE_DELTA_VERSIONS_TIMEOUT", "1500")))
def test_generated_histories_read_through_views_at_every_version(driver, s3, bucket, mount, tmp_path):
    """Seeded random histories; SIEVE_DELTA_VERSIONS_READS view reads in all
    (150 by default: two seeds; 2,000 in the full run), SIEVE_DELTA_VERSIONS_SEED the first seed."""
    want = dvs.reads_wanted()
    seed = int(os.environ.get("SIEVE_DELTA_VERSIONS_SEED", "1"))
    runs = []
    while sum(r.reads for r in runs) < want:
        r = scenario(seed, driver, s3, bucket, mount, tmp_path)
        r.run(steps=12, reads_per_step=8)
        runs.append(r)
        r.sieved = r.sieved_pages()
        print(r.summary(), f"{r.sieved} pages sieved", flush=True)
        seed += 1
    reads = sum(r.reads for r in runs)
    assert not any(r.mismatches for r in runs), report(runs)
    # the run exercised what it is for: rows compared, and hints read at other versions
    assert sum(r.reads_with_rows for r in runs) >= reads // 3, report(runs)
    assert sum(r.sieved for r in runs) > 0, report(runs)
    assert any(o["req"]["cmd"] in ("rename", "drop", "restore") for r in runs for o in r.ops), report(runs)


# -- the reproductions -------------------------------------------------------------------------
def history_with_deletes_after_optimize(r: dvs.Scenario):
    """The issue's table: v1 data, later appends and a delete, an OPTIMIZE that
    leaves files without deletion vectors, then a DELETE that adds them to the
    same files (k = 3 and r < 150: a few rows of every page)."""
    assert r.do({"cmd": "create", "path": str(r.local), "rows": 9000, "files": 2})["ok"]
    assert r.do({"cmd": "append", "start": 9000, "rows": 9000, "files": 2})["ok"]
    assert r.do({"cmd": "delete", "where": "id % 13 = 0"})["ok"]
    assert r.do({"cmd": "optimize"})["ok"]
    optimized = r.schema()["version"]
    assert r.do({"cmd": "delete", "where": "k = 3 OR r < 150"})["ok"]
    r.sync()
    return optimized


@pytest.mark.timeout(900)
def test_a_hint_bound_after_a_delete_serves_the_rows_it_deleted_to_earlier_versions(driver, s3, bucket, mount,
                                                                                    tmp_path):
    r = scenario(101, driver, s3, bucket, mount, tmp_path)
    optimized = history_with_deletes_after_optimize(r)
    deleted_at = r.schema()["version"]
    for where in (("cmp", "r", "<", 400), ("and", ("in", "k", [1, 2, 3]), ("cmp", "r", "<", 3000))):
        name = f"q{len(r.hints)}"
        assert vd.write_hint(r.mp, name, {"table": dvs.TABLE, "where": dvs.Render.sql(where)}).ok
        h = dvs.Hint(name, where, deleted_at, None)
        r.hints.append(h)
        for reader in dvs.READERS:
            for version in (optimized, deleted_at, None):
                r.check_read(h, reader, version)
    # the earlier version has rows the later one deleted, so the comparison means something
    assert r.plain_cache[("spark", "q0", optimized)] != r.plain_cache[("spark", "q0", deleted_at)]
    assert not r.mismatches, report([r])


@pytest.mark.timeout(900)
def test_a_restore_that_re_adds_files_without_their_deletion_vectors(driver, s3, bucket, mount, tmp_path):
    r = scenario(102, driver, s3, bucket, mount, tmp_path)
    optimized = history_with_deletes_after_optimize(r)
    deleted_at = r.schema()["version"]
    where = ("cmp", "r", "<", 500)
    assert vd.write_hint(r.mp, "before", {"table": dvs.TABLE, "where": dvs.Render.sql(where)}).ok
    before = dvs.Hint("before", where, deleted_at, None)
    assert r.do({"cmd": "restore", "version": optimized})["ok"]
    r.sync()
    assert vd.write_hint(r.mp, "after", {"table": dvs.TABLE, "where": dvs.Render.sql(where)}).ok
    after = dvs.Hint("after", where, deleted_at + 1, None)
    r.hints += [before, after]
    for reader in dvs.READERS:
        for h in (before, after):
            r.check_read(h, reader, None)
    assert not r.mismatches, report([r])


@pytest.mark.asan  # demotion and the kernel's cached pages under ASan and TSan
@pytest.mark.timeout(900)
def test_a_column_renamed_or_re_added_after_the_hint(driver, s3, bucket, mount, tmp_path):
    """k's and r's names move to other columns (swaps with s and x), then k
    to a new column (drop and re-add): readers of later and earlier versions filter other
    physical columns than the hint was bound to."""
    r = scenario(103, driver, s3, bucket, mount, tmp_path)
    assert r.do({"cmd": "create", "path": str(r.local), "rows": 9000, "files": 2})["ok"]
    r.sync()
    for where in (("cmp", "k", "=", 7), ("null", "k"), ("cmp", "s", "=", "s5"), ("cmp", "r", "<", 300)):
        name = f"c{len(r.hints)}"
        assert vd.write_hint(r.mp, name, {"table": dvs.TABLE, "where": dvs.Render.sql(where)}).ok
        r.hints.append(dvs.Hint(name, where, 1, None))
    # read (and cache in the kernel) the files through the views while the plans hold
    for h in r.hints:
        for reader in ("pyarrow", "deltalake"):
            r.check_read(h, reader, None)
    assert vd.synthesized(vd.view_stats(r.mp, "c3")) > 0
    for old, new in (("k", "tmp"), ("s", "k"), ("tmp", "s"), ("r", "tmp"), ("x", "r"), ("tmp", "x")):
        assert r.do({"cmd": "rename", "old": old, "new": new})["ok"]
    assert r.do({"cmd": "append", "start": 9000, "rows": 3000, "files": 1})["ok"]
    swapped = r.schema()["version"]
    assert r.do({"cmd": "drop", "column": "k"})["ok"]
    assert r.do({"cmd": "add_column", "column": "k", "type": "int"})["ok"]
    assert r.do({"cmd": "append", "start": 12000, "rows": 3000, "files": 1})["ok"]
    r.sync()
    for h in r.hints:
        for reader in ("spark", "deltalake", "duckdb", "pyarrow"):
            for version in (1, swapped, None):
                r.check_read(h, reader, version)
    assert not r.mismatches, report([r])
    # the files the swap rebinds are served real from the first open after it, and say why
    demoted = [f for f in vd.view_stats(r.mp, "c3")["files"] if "binds the hint's columns otherwise"
               in (f.get("why_real") or "")]
    assert demoted, vd.view_stats(r.mp, "c3")["files"]
