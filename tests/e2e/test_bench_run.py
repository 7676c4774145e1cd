"""scripts/bench end to end on a tiny plan: moto, the link emulator on `lan`,
every contender (sievefs view and plain path, s3fs, rclone, pyarrow's and
deltalake's own S3 clients), the validation pass, timed pairs and the report.
Timing is not asserted (benchmarks measure, tests check); what is checked is
that every run returned the local answer, that the traffic the proxy counted
is plausible, and that the report and plots are written."""
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


def _bench(tmp: Path, *args: str, timeout: float = 900) -> tuple[subprocess.CompletedProcess, dict]:
    env = dict(os.environ, SIEVEFS_BIN=BIN)
    out = tmp / "bench.md"
    r = subprocess.run([sys.executable, str(BENCH), "--scale", "0.001", "--profiles", "lan", "--pairs", "1",
                        "--data-dir", str(tmp / "data"), "--out", str(out), "--img", str(tmp / "img"),
                        "--json", str(tmp / "runs.json"), *args],
                       capture_output=True, text=True, timeout=timeout, env=env)
    runs = json.loads((tmp / "runs.json").read_text()) if (tmp / "runs.json").exists() else {}
    return r, runs


@pytest.mark.timeout(900)
def test_quick_plan_on_lan(tmp_path):
    for tool in ("s3fs", "rclone"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} not installed (scripts/setup installs it)")
    # Requests are free on loopback: --request-cost 0 lets the view sieve the
    # tiny table's small pages (at the default it reads them whole).
    r, doc = _bench(tmp_path, "--no-dv", "--queries", "scattered_0_1pct,full_scan",
                    "--contenders", "view,plain,s3fs,rclone,direct", "--sievefs-args=--request-cost 0")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = doc["runs"]
    seen = {(x["reader"], x["query"], x["contender"]) for x in runs}
    for q in ("scattered_0_1pct", "full_scan"):
        for c in ("view", "plain", "s3fs", "rclone"):
            assert ("duckdb", q, c) in seen and ("pyarrow", q, c) in seen and ("deltalake", q, c) in seen
        assert ("pyarrow", q, "direct") in seen and ("deltalake", q, "direct") in seen
        assert ("duckdb", q, "direct") not in seen     # no httpfs extension here
    assert all(x["same"] for x in runs)
    assert all(x["bytes"] > 0 and x["requests"] > 0 and x["rows"] > 0 for x in runs)
    assert all(x["daemon_peak_bytes"] > 0 for x in runs if x["contender"] != "direct")
    assert doc["plan"]["sievefs_args"] == "--request-cost 0"
    # the quick plan's five real-writer layouts, every reader on each
    assert {x["table"] for x in runs} == {"lineitem_w90_none_pyarrow", "lineitem_w90_none_pyarrow_default",
                                          "lineitem_w90_none_duckdb", "lineitem_w90_snappy_deltalake",
                                          "lineitem_w90_snappy_spark"}
    for x in runs:
        sieve = x["contender"] in ("view", "plain")
        # a later query in the same process on the same mount, for the sievefs contenders only
        assert (x["later_s"] is not None and x["later_bytes"] is not None) == sieve, x
        assert "sieve_profile" in x and (x["sieve_profile"] is None or sieve)
        assert (x["view_stats"] is not None) == (x["contender"] == "view"), x
        # what the kernel asked the mount for (sievefs only), what the reader reads of a local copy
        assert (x["kernel_bytes"] is not None and x["kernel_bytes"] > 0) == sieve, x
        assert x["reader_bytes"] > 0, x
    # The scattered query's view reads far fewer bytes than the plain path on the layout with an
    # OffsetIndex, for every reader (DuckDB's one page per chunk without an OffsetIndex has no
    # page to leave out at 0.1 % scattered).
    for reader in ("duckdb", "pyarrow", "deltalake"):
        by = {x["contender"]: x["bytes"] for x in runs if x["reader"] == reader and x["query"] == "scattered_0_1pct"
              and x["table"] == "lineitem_w90_none_pyarrow"}
        assert by["view"] < 0.8 * by["plain"], (reader, by)
    for m in doc["models"]:
        assert m["requests"] >= m["rounds"] > 0 and m["seconds"] >= 0 and m["capacity_source"]
    md = (tmp_path / "bench.md").read_text()
    assert "## Headline" in md and "**NO**" not in md
    assert "| view |" in md and "| rclone |" in md and "| physical limit |" in md
    assert "later query s" in md and "## Connection profile of each sievefs mount" in md
    assert "## Scheduler probe" in md and "sievefs measured: commit `" in md
    assert "## Bytes fetched against the reader's own reads" in md
    pngs = sorted(p.name for p in (tmp_path / "img").glob("*.png"))
    assert len(pngs) == 5 * 3 * 2 and all(f"![{p}](" in md for p in pngs), pngs   # 5 tables x 3 readers x (time, bytes)
    assert "sievefs index lineitem_w90_none_pyarrow_default" in r.stdout, r.stdout[-3000:]


def test_probe_json_is_embedded(tmp_path):
    """--probe-json: the scheduler probe's runs become a table in the report
    (what scripts/probe-requests --json writes: one object per run)."""
    probe = [{"client": c, "n": 100, "k": 16, "profile": "wan", "seconds": s, "rps": 100 / s}
             for c, s in (("curl", 1.0), ("sievefs", 1.2), ("curl", 1.1), ("sievefs", 1.3))]
    (tmp_path / "probe.json").write_text(json.dumps(probe))
    r, doc = _bench(tmp_path, "--no-dv", "--queries", "full_scan", "--readers", "pyarrow", "--contenders", "plain",
                    "--layouts", "pyarrow", "--probe-json", str(tmp_path / "probe.json"))
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
    traces = tmp_path / "traces"
    r, doc = _bench(tmp_path, "--no-dv", "--queries", "scattered_0_1pct", "--readers", "pyarrow",
                    "--contenders", "plain", "--layouts", "pyarrow", "--trace", str(traces))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    logs = sorted(traces.glob("lineitem_w90_none_pyarrow.scattered_0_1pct.pyarrow.plain.*.log"))
    assert len(logs) >= 2, sorted(p.name for p in traces.iterdir())  # the validation pass and the timed run
    table = tmp_path / "data" / "lineitem_w90_none_pyarrow"
    local = sorted(table.glob("*.parquet"))
    assert local
    replay = next((p for p in (Path(BIN).parent / "prefetch_replay", s3env.REPO / "build" / "prefetch_replay")
                   if p.exists()), None)
    assert replay is not None, "prefetch_replay not built"
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
    sys.path.insert(0, str(s3env.REPO / "scripts" / "lib"))
    import bench_data as bd
    if bd.spark_python() is None:
        pytest.skip("no Spark with delta-spark (scripts/setup creates tests/e2e/.data/spark-venv)")
    r, doc = _bench(tmp_path, "--dv", "--queries", "scattered_0_1pct", "--contenders", "view,plain,direct",
                    "--layouts", "pyarrow,pyarrow_default,duckdb")
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
