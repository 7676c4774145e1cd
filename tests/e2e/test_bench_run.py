"""scripts/bench end to end on a tiny plan: s3link on `lan` (the link emulated
inside the server; its counters give the bytes and requests), every
contender (sievefs view and plain path, s3fs, rclone, and pyarrow's,
DuckDB's httpfs, deltalake's and polars' own S3 clients), the validation
pass, timed pairs and the report; TLS; moto behind the Python link emulator
(--server moto). Timing is not asserted (benchmarks measure, tests check):
what is checked is that every run returned the local answer, that the
traffic the server counted is plausible, and that the report and plots are
written. With CI=true a missing tool (s3fs, rclone, s3link, Spark, DuckDB's
httpfs package) fails the test instead of skipping it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import s3env

BENCH = s3env.REPO / "scripts" / "lib" / "bench.py"
BIN = os.environ.get("SIEVEFS_BIN", str(s3env.REPO / "build" / "sievefs"))
CI = os.environ.get("CI", "").lower() == "true"
sys.path.insert(0, str(s3env.REPO / "scripts" / "lib"))
# the small-files table, tiny: SF 0.01 in 2 appends of 3 days (6 files)
APPENDS = "0.01,2,3"
APPENDS_TABLE = "lineitem_w18_snappy_appends_2x3"
WRITER_TABLES = {"lineitem_w90_none_pyarrow", "lineitem_w90_none_pyarrow_default", "lineitem_w90_none_duckdb",
                 "lineitem_w90_snappy_deltalake", "lineitem_w90_snappy_spark"}


def _missing(reason: str):
    """Skip, or fail when CI=true (where everything the test needs must be there)."""
    if CI:
        pytest.fail(f"{reason} (CI=true: a missing tool fails the test)")
    pytest.skip(reason)


def _need_tools(*tools: str):
    """s3link (the default server) and the given programs."""
    for tool in tools:
        if not shutil.which(tool):
            _missing(f"{tool} not installed (scripts/setup installs it)")
    import s3servers
    if s3servers.s3link_bin(build=True) is None:
        _missing(s3servers.S3LINK_HINT)


def _bench(tmp: Path, *args: str, timeout: float = 900) -> tuple[subprocess.CompletedProcess, dict]:
    env = dict(os.environ, SIEVEFS_BIN=BIN)
    out = tmp / "bench.md"
    r = subprocess.run([sys.executable, str(BENCH), "--scale", "0.001", "--profiles", "lan", "--pairs", "1",
                        "--data-dir", str(tmp / "data"), "--out", str(out), "--img", str(tmp / "img"),
                        "--json", str(tmp / "runs.json"), *args],
                       capture_output=True, text=True, timeout=timeout, env=env)
    runs = json.loads((tmp / "runs.json").read_text()) if (tmp / "runs.json").exists() else {}
    return r, runs


@pytest.mark.timeout(1500)
def test_quick_plan_on_lan(tmp_path):
    _need_tools("s3fs", "rclone")
    import bench_data as bd
    if bd.spark_python() is None:
        _missing("no Spark with delta-spark for the spark layout (scripts/setup creates tests/e2e/.data/spark-venv)")
    # Requests are free on loopback: --request-cost 0 lets the view sieve the
    # tiny table's small pages (at the default it reads them whole).
    r, doc = _bench(tmp_path, "--no-dv", "--queries", "scattered_0_1pct,full_scan,point_id", "--appends", APPENDS,
                    "--readers", "duckdb,pyarrow", "--direct-readers", "pyarrow,duckdb,deltalake,polars",
                    "--contenders", "view,plain,s3fs,rclone,direct", "--sievefs-args=--request-cost 0",
                    "--note", "test note")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "duckdb-httpfs" in r.stdout, "the direct DuckDB reader did not run (no httpfs?): " + r.stdout[-2000:]
    runs = doc["runs"]
    assert not doc["errors"] and not doc["notes"], (doc["errors"], doc["notes"])
    seen = {(x["table"], x["query"], x["label"]) for x in runs}
    mounts = [f"{c}/{rd}" for c in ("view", "plain", "s3fs", "rclone") for rd in ("duckdb", "pyarrow")]
    direct = ["pyarrow-s3", "duckdb-httpfs", "deltalake-s3", "polars-s3"]
    for t in WRITER_TABLES:
        for q in ("scattered_0_1pct", "full_scan"):
            for lab in mounts + direct:
                assert (t, q, lab) in seen, (t, q, lab)
    for lab in mounts + direct:
        assert (APPENDS_TABLE, "point_id", lab) in seen, lab
    assert {x["table"] for x in runs} == WRITER_TABLES | {APPENDS_TABLE}
    assert all(x["same"] for x in runs)
    # s3link's counters: every run made GETs and got bytes back; nothing throttled on this tiny plan
    assert all(x["bytes"] > 0 and x["requests"] > 0 and x["rows"] > 0 for x in runs)
    assert all(x["requests_by_kind"].get("get", 0) > 0 and x["body_bytes"] <= x["bytes"] for x in runs)
    assert all(x["slowdown_503"] == 0 for x in runs)
    assert all(x["daemon_peak_bytes"] > 0 for x in runs if x["contender"] != "direct")
    assert doc["plan"]["sievefs_args"] == "--request-cost 0" and doc["plan"]["server"] == "s3link"
    point = [x for x in runs if x["query"] == "point_id"]
    assert {x["rows"] for x in point} == {4}
    for x in runs:
        sieve = x["contender"] in ("view", "plain")
        # a later query in the same process on the same mount, for the sievefs contenders only
        assert (x["later_s"] is not None and x["later_bytes"] is not None) == sieve, x["label"]
        assert "sieve_profile" in x and (x["sieve_profile"] is None or sieve)
        assert (x["view_stats"] is not None) == (x["contender"] == "view"), x["label"]
        # what the kernel asked the mount for (sievefs only), what the reader reads of a local copy
        assert (x["kernel_bytes"] is not None and x["kernel_bytes"] > 0) == sieve, x["label"]
        assert x["reader_bytes"] > 0, x["label"]
    # The scattered query's view reads far fewer bytes than the plain path on the layout with an
    # OffsetIndex, for every reader through the mounts.
    for reader in ("duckdb", "pyarrow"):
        by = {x["contender"]: x["bytes"] for x in runs if x["reader"] == reader and x["query"] == "scattered_0_1pct"
              and x["table"] == "lineitem_w90_none_pyarrow" and x["contender"] in ("view", "plain")}
        assert by["view"] < 0.8 * by["plain"], (reader, by)
    for m in doc["models"]:
        assert m["requests"] >= m["rounds"] > 0 and m["seconds"] >= 0 and m["capacity_source"]
        assert m["min_bytes"] > 0 and m["capacity_per_s"] == 5500, m
    appends_model = next(m for m in doc["models"] if m["table"] == APPENDS_TABLE)
    assert appends_model["files"] == 1, appends_model     # the other files' statistics rule them out
    md = (tmp_path / "bench.md").read_text()
    head = md[:md.index("## Results per link")]
    assert "## Headline" in head and "### lan" in head and "view ÷ best direct" in head and "| limit |" in head
    assert "appends (6 files)" in head and "4 rows by id" in head and "test note" in md
    assert "**NO**" not in md and "**WRONG**" not in md
    assert "| view/duckdb |" in md and "| rclone/pyarrow |" in md and "| polars-s3 |" in md
    assert "| limit (model) |" in md and "later query s" in md
    assert "## Connection profile of each sievefs mount" in md and "## Scheduler probe" in md
    assert "sievefs measured: commit `" in md and "## Bytes fetched against the reader's own reads" in md
    assert "## Method" in md and "s3link" in md
    pngs = sorted(p.name for p in (tmp_path / "img").glob("*.png"))
    assert pngs == ["bench-lan.png"] and "](img/bench-lan.png)" in md, pngs
    assert "sievefs index lineitem_w90_none_pyarrow_default" in r.stdout, r.stdout[-3000:]
    # the report can be written again from the JSON
    r2 = subprocess.run([sys.executable, str(BENCH), "--report-from", str(tmp_path / "runs.json"), "--out",
                         str(tmp_path / "again.md"), "--img", str(tmp_path / "img")], capture_output=True, text=True,
                        timeout=300)
    assert r2.returncode == 0, r2.stderr
    assert (tmp_path / "again.md").read_text().split("## Headline")[1] == md.split("## Headline")[1]


@pytest.mark.timeout(900)
def test_tls(tmp_path):
    """--tls: s3link over HTTPS with its self-signed certificate; sievefs,
    s3fs and the direct readers all reach it and return the local answer."""
    _need_tools("s3fs")
    r, doc = _bench(tmp_path, "--tls", "--no-dv", "--queries", "scattered_0_1pct", "--layouts", "pyarrow",
                    "--appends", "none", "--contenders", "view,plain,s3fs,direct")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = doc["runs"]
    assert {x["label"] for x in runs} == {"view", "plain", "s3fs", "pyarrow-s3", "duckdb-httpfs", "deltalake-s3",
                                         "polars-s3"}, {x["label"] for x in runs}
    assert all(x["same"] and x["bytes"] > 0 for x in runs)
    assert doc["plan"]["tls"] is True and "HTTPS" in doc["server"]
    assert "HTTPS" in (tmp_path / "bench.md").read_text()


@pytest.mark.timeout(900)
def test_moto_behind_the_proxy(tmp_path):
    """--server moto: the server behind scripts/lib/wanproxy.py, whose counters
    give the bytes and requests, as before s3link."""
    r, doc = _bench(tmp_path, "--server", "moto", "--no-dv", "--queries", "scattered_0_1pct", "--layouts", "pyarrow",
                    "--appends", "none", "--readers", "pyarrow", "--contenders", "view,plain,direct",
                    "--direct-readers", "pyarrow,deltalake")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = doc["runs"]
    assert {x["label"] for x in runs} == {"view", "plain", "pyarrow-s3", "deltalake-s3"}
    assert all(x["same"] and x["bytes"] > 0 and x["requests"] > 0 for x in runs)
    assert "wanproxy" in doc["server"] and "moto" in doc["server"]


def test_probe_json_is_embedded(tmp_path):
    """--probe-json: the scheduler probe's runs become a table in the report
    (what scripts/probe-requests --json writes: one object per run)."""
    _need_tools()
    probe = [{"client": c, "n": 100, "k": 16, "profile": "wan", "seconds": s, "rps": 100 / s}
             for c, s in (("curl", 1.0), ("sievefs", 1.2), ("curl", 1.1), ("sievefs", 1.3))]
    (tmp_path / "probe.json").write_text(json.dumps(probe))
    r, doc = _bench(tmp_path, "--no-dv", "--queries", "full_scan", "--readers", "pyarrow", "--contenders", "plain",
                    "--layouts", "pyarrow", "--appends", "none", "--probe-json", str(tmp_path / "probe.json"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    md = (tmp_path / "bench.md").read_text()
    assert "## Scheduler probe" in md and "| wan | 100 | 16 |" in md, md[:3000]
    assert doc["probe"]["runs"] == probe


@pytest.mark.timeout(900)
def test_trace_logs_break_down_and_replay(tmp_path):
    """--trace keeps each sievefs mount's trace log; trace_waste.py breaks a
    log down per file and prefetch_replay replays its reads through the
    prefetch rules: both find the same bytes asked (the union of the
    kernel's reads, computed once in Python and once in C), and the replay
    fetches at least that and at most the file."""
    _need_tools()
    traces = tmp_path / "traces"
    r, doc = _bench(tmp_path, "--no-dv", "--queries", "scattered_0_1pct", "--readers", "pyarrow",
                    "--contenders", "plain", "--layouts", "pyarrow", "--appends", "none", "--no-validation-pair",
                    "--trace", str(traces))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    logs = sorted(traces.glob("lineitem_w90_none_pyarrow.scattered_0_1pct.pyarrow.plain.*.log"))
    assert len(logs) >= 2, sorted(p.name for p in traces.iterdir())  # the validation pass and the timed run
    table = tmp_path / "data" / "lineitem_w90_none_pyarrow"
    local = sorted(table.glob("*.parquet"))
    assert local
    replay = next((p for p in (Path(BIN).parent / "prefetch_replay", s3env.REPO / "build" / "prefetch_replay")
                   if p.exists()), None)
    if replay is None:
        _missing("prefetch_replay not built (cmake --build build)")
    for log in logs:
        text = log.read_text(errors="replace")
        assert "trace: read " in text and "trace: GET " in text, log
        w = subprocess.run([sys.executable, str(s3env.REPO / "scripts" / "lib" / "trace_waste.py"), str(log),
                            str(table)], capture_output=True, text=True, timeout=120)
        assert w.returncode == 0, w.stderr
        for f in local:
            line = next((ln for ln in w.stdout.splitlines() if ln.startswith(f"{table.name}/{f.name}:")), None)
            assert line is not None, w.stdout
            asked = int(line.split("kernel asked ")[1].split(" B")[0].replace(",", ""))
            rp = subprocess.run([str(replay), str(f), str(log)], capture_output=True, text=True, timeout=120)
            assert rp.returncode == 0, rp.stderr
            covered = int(rp.stdout.split("covering ")[1].split(" B")[0])
            fetched = int(rp.stdout.split("fetched ")[1].split(" B")[0])
            assert covered == asked > 0, (rp.stdout, line)
            assert covered <= fetched <= f.stat().st_size, rp.stdout


@pytest.mark.timeout(900)
def test_deletion_vector_table_read_by_deltalake_only(tmp_path):
    _need_tools()
    import bench_data as bd
    if bd.spark_python() is None:
        _missing("no Spark with delta-spark (scripts/setup creates tests/e2e/.data/spark-venv)")
    r, doc = _bench(tmp_path, "--dv", "--queries", "scattered_0_1pct", "--contenders", "view,plain,direct",
                    "--layouts", "pyarrow,pyarrow_default,duckdb", "--appends", "none",
                    "--readers", "duckdb,pyarrow,deltalake", "--direct-readers", "pyarrow,deltalake")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = doc["runs"]
    # the deletion vectors go into a copy of the first layout's table
    assert {x["table"] for x in runs if x["reader"] == "deltalake"} == {"lineitem_w90_none_pyarrow_dv"}
    assert {x["table"] for x in runs if x["reader"] != "deltalake"} == {"lineitem_w90_none_pyarrow",
                                                                        "lineitem_w90_none_pyarrow_default",
                                                                        "lineitem_w90_none_duckdb"}
    assert all(x["same"] for x in runs)
    # deltalake returned the live rows only (bench.py also checks every local
    # read against the generator's count before timing anything).
    tables = bd.generate(tmp_path / "data", scale=0.001, widths=(90,), codecs=("none",), dv=True,
                         layouts=tuple(doc["plan"]["layouts"]),
                         target_file_mib=doc["plan"]["target_file_mib"])["tables"]
    for name, t in tables.items():
        want = next(q["expected_rows"] for q in bd.queries(t) if q["name"] == "scattered_0_1pct")
        got = {x["rows"] for x in runs if x["table"] == name}
        assert got == {want}, (name, got, want)
