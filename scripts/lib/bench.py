"""scripts/bench: sievefs against the other ways of reading a table in S3, on
one machine, over an emulated link. See docs/benchmarks.md for the method and
the latest results.

    scripts/bench --quick        # TPC-H SF 0.02, 90 columns, five writer layouts, wan: ~110 min here (estimated)
    scripts/bench --full         # TPC-H SF10, 90 and 416 columns, none/zstd, every link, every contender

The tables are written by real writers (bench_data.py layouts `pyarrow`, with
an OffsetIndex and ~1 MiB pages, `pyarrow_default`, pyarrow's defaults:
dictionary pages and no OffsetIndex, and `duckdb`, one page per column chunk,
all in 100,000-row groups; `deltalake` and `spark`, the Delta writers with
every default: Snappy, dictionary pages, their own row groups); after the upload `sievefs index --to-s3` builds
the page maps of the files without an OffsetIndex, as a user would. The full plan includes the deletion-vector variant
(Spark; read by deltalake only; --dv in the quick one). The Method section of
docs/benchmarks.md says what each mode runs and costs.

Steps: start the S3 server on 127.0.0.1 (--server: moto, the default, with no
signature checks since s3fs 1.90 signs listing queries in a way moto rejects;
or versitygw, the Versity S3 Gateway on a local directory, SigV4 checked, for
a server that is not the bottleneck for small ranged GETs: through the `wan`
link scripts/probe-requests measured ~1,100-1,400/s at 256-512 in flight on
versitygw, ~300/s on moto, on this 2-core machine; not installed by
scripts/setup, see s3servers.py);
generate the tables (bench_data.py) and upload
them; index them (`sievefs index --to-s3`); start the link emulator (wanproxy.py) in front of it; check every
contender returns the same result as the reader reading the local files
(a validation pass on the unshaped link); then for each link, table, query and
reader run the contenders in alternating order for --pairs rounds, each on a
fresh mount and in a fresh reader process; report medians.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402
import bench_contenders  # noqa: E402
import s3servers  # noqa: E402
import strace_reads  # noqa: E402

READER = HERE / "bench_reader.py"


def run_reader(spec: dict, timeout: float, between=None, trace: Path | None = None) -> dict:
    """Run one query in a fresh process; returns its JSON line plus the
    process's CPU seconds and peak RSS (from wait4). With spec["repeat"] > 1
    the reader stops after its first query until between() has returned.
    With trace, the reader runs under strace writing there (strace_reads.py;
    its times then mean nothing)."""
    import threading
    cmd = [sys.executable, str(READER), json.dumps(spec)]
    if trace is not None:
        cmd = strace_reads.traced(cmd, trace)
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.PIPE, stderr=err, text=True)
        killer = threading.Timer(timeout, p.kill)
        killer.start()
        try:
            if int(spec.get("repeat", 1)) > 1:
                p.stdout.readline()
                if between:
                    between()
                try:
                    p.stdin.write("\n")
                    p.stdin.flush()
                except BrokenPipeError:
                    pass
            p.stdin.close()
            out = p.stdout.read()
        finally:
            _, status, ru = os.wait4(p.pid, 0)
            killer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        if p.returncode != 0:
            raise RuntimeError(f"reader {spec['reader']} on {spec['location']} failed "
                               f"({p.returncode}): {err.read().strip()[-2000:]}")
        res = json.loads(out.strip().splitlines()[-1])
    res["cpu_s"] = ru.ru_utime + ru.ru_stime
    if not res.get("peak_bytes"):
        res["peak_bytes"] = ru.ru_maxrss * 1024   # includes the harness's RSS (see bench_reader.peak_rss)
    return res


def sum_reasons(stats) -> dict:
    """{"chunk_reasons": {reason: n}, "page_reasons": {reason: n}} of a view's
    NAME.stats: its top-level objects when it has them, else the sum over
    files[]; {} for a stats document without them (an older sievefs)."""
    out = {}
    if not isinstance(stats, dict):
        return out
    for key in ("chunk_reasons", "page_reasons"):
        if isinstance(stats.get(key), dict):
            out[key] = {k: v for k, v in stats[key].items() if isinstance(v, (int, float))}
            continue
        acc, seen = {}, False
        for f in stats.get("files") or []:
            if isinstance(f, dict) and isinstance(f.get(key), dict):
                seen = True
                for k, v in f[key].items():
                    if isinstance(v, (int, float)):
                        acc[k] = acc.get(k, 0) + v
        if seen:
            out[key] = acc
    return out


def one_run(contender, reader: str, query: dict, table_prefix: str, proxy, s3conf: dict,
            timeout: float, later: int = 0) -> dict:
    """One fresh mount (or none, for direct), one reader process: the first
    query, then `later` more in the same process on the same mount."""
    contender.trace_tag = f"{table_prefix.strip('/').replace('/', '_')}.{query['name']}.{reader}.{contender.name}"
    location = contender.setup(table_prefix, query)
    try:
        profile_at_start = contender.sieve_profile()
        before = proxy.stats()
        kernel_before = contender.kernel_read_bytes()
        spec = {"reader": reader, "location": location, "query": query, "s3": s3conf, "threads": 2,
                "repeat": 1 + later}
        mid = {}
        kernel_mid = []

        def between():
            mid.update(proxy.stats())
            kernel_mid.append(contender.kernel_read_bytes())
        res = run_reader(spec, timeout, between=between)
        after = proxy.stats()
        first = mid or after
        kernel_first = kernel_mid[0] if kernel_mid else contender.kernel_read_bytes()
        dcpu, dpeak = contender.daemon_usage()
        profile = contender.sieve_profile()
        vstats = contender.view_stats()
    finally:
        contender.teardown()
    later_s = res.get("later_seconds") or []
    return {
        "contender": contender.name, "reader": reader, "query": query["name"],
        "init_s": contender.init_seconds, "query_s": res["seconds"], "rows": res["rows"],
        "later_s": statistics.median(later_s) if later_s else None, "later_runs": later_s,
        "digest": res["digest"],
        "bytes": first["bytes_down"] - before["bytes_down"] + first["bytes_up"] - before["bytes_up"],
        "requests": first.get("requests", 0) - before.get("requests", 0),
        # what the kernel asked the mount for during the first query (sievefs only)
        "kernel_bytes": (kernel_first - kernel_before
                         if kernel_first is not None and kernel_before is not None else None),
        "later_bytes": (after["bytes_down"] - first["bytes_down"] + after["bytes_up"] - first["bytes_up"]) if mid else None,
        "later_requests": (after.get("requests", 0) - first.get("requests", 0)) if mid else None,
        "cpu_s": res["cpu_s"], "peak_bytes": res["peak_bytes"],
        "daemon_cpu_s": dcpu if contender.fuse else None, "daemon_peak_bytes": dpeak if contender.fuse else None,
        "sieve_profile": profile, "sieve_profile_at_start": profile_at_start, "view_stats": vstats,
        **sum_reasons(vstats),
    }


# -- plan ----
# The quick plan (see docs/benchmarks.md, Method): real writers' layouts (pyarrow with an
# OffsetIndex, pyarrow's defaults, DuckDB with one page per chunk) at ~1 MiB pages and
# 100,000-row groups.
QUICK_SCALE = 0.02
QUICK_FILE_MIB = 1024
QUICK_QUERIES = ["scattered_0_1pct", "clustered_0_1pct", "full_scan"]
QUICK_CONTENDERS = ["view", "plain", "s3fs"]
# sievefs's default --max-connections: the requests in flight the model assumes without a profile
ASSUMED_IN_FLIGHT = 32
QUICK = {"scale": QUICK_SCALE, "widths": [90], "codecs": ["none"],
         "layouts": ["pyarrow", "pyarrow_default", "duckdb", "deltalake", "spark"],
         "target_file_mib": QUICK_FILE_MIB, "dv": False, "profiles": ["wan"],
         "queries": QUICK_QUERIES, "pairs": 3, "later": 1, "later_contenders": ["view", "plain"],
         "contenders": QUICK_CONTENDERS}
FULL = {"scale": 10.0, "widths": [90, 416], "codecs": ["none", "zstd"],
        "layouts": ["pyarrow", "pyarrow_default", "duckdb"],
        "target_file_mib": None, "dv": True, "profiles": ["wan", "region", "lan"], "queries": None, "pairs": 3,
        "later": 1, "later_contenders": ["view", "plain"], "contenders": list(bench_contenders.CONTENDERS)}
READERS = ("duckdb", "pyarrow", "deltalake")


def reads_table(reader: str, table: dict, plan: dict) -> bool:
    """DuckDB's read_parquet and pyarrow.dataset read the Parquet files without
    the Delta log, so they would return deleted rows of a deletion-vector table;
    deltalake applies deletion vectors and reads the DV tables when the plan has
    them (the same files plus deletion vectors), else the others."""
    if reader == "deltalake":
        return bool(table.get("dv")) == bool(plan.get("dv"))
    return not table.get("dv")


def plan_cases(tables: dict, plan: dict, readers: list[str]):
    """(table name, table, query, its portable form, the readers of that
    table) for every table and planned query, in order."""
    import bench_data
    for name, t in tables.items():
        for q in bench_data.queries(t):
            if not plan["queries"] or q["name"] in plan["queries"]:
                yield name, t, q, portable(q), [r for r in readers if reads_table(r, t, plan)]


def pyarrow_filter_text(pred: str | None) -> str | None:
    """The query's predicate (only `c < N` and `c BETWEEN a AND b` are generated)
    as a pyarrow.compute expression the reader process can evaluate."""
    import re
    if not pred:
        return None
    m = re.fullmatch(r"(\w+) < (\d+)", pred)
    if m:
        return f"pc.field('{m[1]}') < {m[2]}"
    m = re.fullmatch(r"(\w+) BETWEEN (\d+) AND (\d+)", pred)
    if m:
        return f"(pc.field('{m[1]}') >= {m[2]}) & (pc.field('{m[1]}') <= {m[3]})"
    raise ValueError(f"no pyarrow form for {pred!r}")


def portable(q: dict) -> dict:
    """The parts of a query the reader process and the view contender need."""
    return {"name": q["name"], "sql_duckdb": q["sql_duckdb"], "sql_deltalake": q["sql_deltalake"],
            "columns": q["columns"],
            "pyarrow_filter": pyarrow_filter_text(q["predicate"]), "hint": q["hint"],
            "predicate": q["predicate"], "layout": q["layout"], "selectivity": q["selectivity"]}


def contenders_for(reader: str, wanted: list[str]) -> list[str]:
    # DuckDB reads S3 only through its httpfs extension, which cannot be downloaded here.
    return [c for c in wanted if not (c == "direct" and reader == "duckdb")]


def minimal_read(table: dict, q: dict):
    """The query's minimal read over all files (physical_model.MinimalRead)."""
    import physical_model as pm
    import pyarrow.parquet as pq
    parts = []
    first = 0
    for f in table["files"]:
        path = Path(table["path"]) / f["path"] if not os.path.isabs(f["path"]) else Path(f["path"])
        n = pq.ParquetFile(str(path)).metadata.num_rows
        rows = selected_rows(path, q, first, n)
        parts.append(pm.minimal_read(path, rows, q["columns"], q["filter_columns"] if q["predicate"] else ()))
        first += n
    return pm.MinimalRead.combine(parts)


def link_capacity(link, runs: list) -> tuple[float | None, str]:
    """Requests per second for the model's request term, and where it comes
    from: the median best capacity of the profiles the sievefs mounts of these
    runs measured, else ASSUMED_IN_FLIGHT requests per RTT (None = unlimited
    on a link without delay)."""
    import bench_report
    caps = [c for c in (bench_report.profile_summary(r.get("sieve_profile")).get("capacity_per_s") for r in runs) if c]
    if caps:
        return statistics.median(caps), f"measured (median of {len(caps)} mount profiles)"
    if link.rtt_ms:
        return ASSUMED_IN_FLIGHT / (link.rtt_ms / 1000), (f"assumed: {ASSUMED_IN_FLIGHT} in flight (sievefs's "
                                                          f"--max-connections) per {link.rtt_ms:g} ms RTT")
    return None, "assumed unlimited (no delay on this link)"


def physical_limit(mr, link, capacity: float | None, source: str) -> dict:
    """The bound for the link: nominal RTT and bandwidth, the given capacity."""
    rate = (link.mbit or 0) * 1e6 / 8 or 1e12
    rtt = (link.rtt_ms or 0) / 1000
    lim = mr.limit(rtt, rate, capacity)
    return dict(lim, capacity_per_s=capacity, capacity_source=source)


def selected_rows(path: Path, q: dict, first: int, n: int):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    if not q["predicate"]:
        return range(n)
    expr = eval(pyarrow_filter_text(q["predicate"]), {"pc": pc})
    t = pq.read_table(str(path), columns=q["filter_columns"])
    import pyarrow as pa
    t = t.append_column("__i", pa.array(range(n)))
    return t.filter(expr).column("__i").to_pylist()


def run_probe(a) -> dict:
    """The scheduler probe for the report: {"source", "markdown"?, "runs"?,
    "note"?}. --probe-json: that file's runs; --probe: scripts/probe-requests
    --json (its markdown and runs) when the script exists; else a note."""
    script = REPO / "scripts" / "probe-requests"
    if a.probe_json:
        try:
            return {"source": a.probe_json, "runs": json.loads(Path(a.probe_json).read_text())}
        except (OSError, ValueError) as e:
            return {"source": a.probe_json, "note": f"could not read {a.probe_json}: {e}"}
    if not a.probe:
        return {"note": "not run (scripts/bench --probe runs scripts/probe-requests, --probe-json PATH "
                        "embeds its --json output)"}
    if not script.exists():
        return {"note": "skipped: scripts/probe-requests does not exist in this checkout"}
    import shlex
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "probe.json"
        argv = [str(script), *shlex.split(a.probe_args), "--json", str(out)]
        print(f"bench: scheduler probe: {' '.join(argv)}", flush=True)
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        except (OSError, subprocess.SubprocessError) as e:
            return {"source": " ".join(argv), "note": f"failed to run: {e}"}
        doc = {"source": "scripts/probe-requests " + " ".join(argv[1:-2]),
               "markdown": r.stdout.strip()}
        if r.returncode != 0:
            doc["note"] = f"exit {r.returncode}: {r.stderr.strip()[-1500:]}"
        try:
            doc["runs"] = json.loads(out.read_text())
        except (OSError, ValueError):
            pass
        return doc


# -- run --------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help=f"TPC-H SF {QUICK_SCALE:g}, 90 columns, uncompressed, "
                      "pyarrow, pyarrow-default, DuckDB, deltalake and Spark layouts, wan link, 0.1%% scattered, 0.1%% clustered, "
                      "the full scan (default)")
    mode.add_argument("--full", action="store_true", help="TPC-H SF10, 90 and 416 columns, none and zstd, links wan/region/lan, "
                      "all seven queries")
    ap.add_argument("--scale", type=float)
    ap.add_argument("--widths")
    ap.add_argument("--codecs")
    ap.add_argument("--dv", action=argparse.BooleanOptionalAction, default=None,
                    help="the deletion-vector variant of the first codec's tables (written by "
                         "Spark; read by deltalake only; default on; --no-dv skips it)")
    ap.add_argument("--profiles", help="comma list of wan,region,lan")
    ap.add_argument("--queries", help="comma list of query names (see bench_data.py)")
    ap.add_argument("--layouts", help="comma list of sieve,pyarrow,pyarrow_default,duckdb,deltalake,spark (bench_data.py)")
    ap.add_argument("--target-file-mib", type=int)
    ap.add_argument("--readers", default=",".join(READERS))
    ap.add_argument("--contenders", help="comma list of " + ",".join(bench_contenders.CONTENDERS))
    ap.add_argument("--later", type=int, help="later queries per run after the first, in the same reader "
                    "process on the same mount, for the sievefs contenders (default 1)")
    ap.add_argument("--probe", action="store_true", help="run scripts/probe-requests (if it exists) and "
                    "put its table in the report")
    ap.add_argument("--probe-args", default="--profile wan,lan",
                    help="arguments for scripts/probe-requests (default: %(default)s)")
    ap.add_argument("--probe-json", help="a JSON file written by scripts/probe-requests --json: its runs go "
                    "into the report")
    ap.add_argument("--server", choices=s3servers.SERVERS, default="moto",
                    help="the S3 server every contender reads through the link emulator: moto (default; "
                         "Python, a few hundred small GETs/s on 2 cores) or versitygw (Go, posix backend, "
                         "SigV4 checked; install: go install github.com/versity/versitygw/cmd/versitygw@"
                         f"{s3servers.VERSITYGW_VERSION}, or set VERSITYGW_BIN)")
    ap.add_argument("--pairs", type=int)
    ap.add_argument("--sievefs-args", default="",
                    help="extra `sievefs mount` arguments for the view and plain contenders, e.g. "
                         "'--request-cost 0' (default: none, sievefs's defaults)")
    ap.add_argument("--trace", metavar="DIR",
                    help="keep each sievefs mount's trace log (every kernel read and every GET, tagged "
                         "demand or prefetch) in DIR/TABLE.QUERY.READER.CONTENDER.N.log; "
                         "scripts/lib/trace_waste.py breaks one down. The daemon runs in the foreground "
                         "and logs every read, so times are not comparable with untraced runs")
    ap.add_argument("--data-dir", default=str(REPO / "tests" / "e2e" / ".data" / "bench"))
    ap.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    ap.add_argument("--img", default=str(REPO / "docs" / "img"))
    ap.add_argument("--json", help="also write every run as JSON here")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per reader run")
    ap.add_argument("--report-from", help="only write the report (--out, --img) from the --json of an earlier run")
    a = ap.parse_args(argv)
    if a.report_from:
        import bench_report
        doc = json.loads(Path(a.report_from).read_text())
        bench_report.write(Path(a.out), Path(a.img), doc["plan"], doc["tables"], doc["runs"], doc["models"],
                           doc["calibrations"], elapsed=doc["elapsed"], probe=doc.get("probe"),
                           commit=doc.get("commit"), server=doc.get("server"))
        return 0
    missing = s3servers.check_available(a.server)
    if missing:
        print(f"bench: --server {a.server}: {missing}", file=sys.stderr)
        return 2
    plan = dict(FULL if a.full else QUICK)
    plan["server"] = a.server
    for k in ("scale", "pairs", "dv", "later", "target_file_mib"):
        if getattr(a, k) is not None:
            plan[k] = getattr(a, k)
    if a.layouts:
        plan["layouts"] = a.layouts.split(",")
    if a.contenders:
        plan["contenders"] = a.contenders.split(",")
    if a.widths:
        plan["widths"] = [int(x) for x in a.widths.split(",")]
    if a.codecs:
        plan["codecs"] = a.codecs.split(",")
    if a.profiles:
        plan["profiles"] = a.profiles.split(",")
    if a.queries:
        plan["queries"] = a.queries.split(",")
    readers = a.readers.split(",")
    if a.sievefs_args:
        plan["sievefs_args"] = a.sievefs_args
    bench_contenders.SIEVEFS_EXTRA[:] = a.sievefs_args.split()
    if a.trace:
        bench_contenders.TRACE_DIR = Path(a.trace).resolve()
    wanted = plan["contenders"]
    import bench_data
    import wanproxy

    started = time.time()
    import bench_report
    commit = bench_report.sievefs_commit()       # before this run writes docs/
    print(f"bench: plan {json.dumps(plan)}; sievefs {commit}", flush=True)
    probe = run_probe(a)
    gen = bench_data.generate(a.data_dir, scale=plan["scale"], widths=plan["widths"], codecs=plan["codecs"],
                             dv=plan["dv"], layouts=tuple(plan["layouts"]),
                             target_file_mib=plan.get("target_file_mib"))
    tables = gen["tables"]
    work = Path(tempfile.mkdtemp(prefix="sieve-bench-"))
    runs, models, calibrations, failures = [], [], {}, []
    reads = {}
    with s3servers.make(a.server, work, auth=False) as srv:
        server = srv.describe()
        print(f"bench: S3 server {server} on {srv.endpoint}", flush=True)
        s3 = srv.client()
        bucket = "sieve-bench"
        s3.create_bucket(Bucket=bucket)
        for name, t in tables.items():
            root = Path(t["path"])
            items = {}
            for p in root.rglob("*"):
                if p.is_file():
                    items[f"{name}/{p.relative_to(root)}"] = p
            for key, p in items.items():
                s3env.upload_file(s3, bucket, key, p)
        print(f"bench: {len(tables)} tables uploaded ({time.time() - started:.0f} s)", flush=True)
        # Page maps ahead of time, as a user of files without an OffsetIndex
        # would: `sievefs index --to-s3` on each table (unshaped link, not timed).
        for name in tables:
            r = subprocess.run([bench_contenders.BIN, "index", f"s3://{bucket}/{name}", "--to-s3", "-q",
                                "--endpoint", srv.endpoint], env=s3env.clean_env(extra=srv.creds.env()),
                               capture_output=True, text=True, timeout=3600)
            print(f"bench: sievefs index {name}: {(r.stdout or r.stderr).strip()}", flush=True)
            if r.returncode != 0:
                raise SystemExit(f"sievefs index failed on {name}: {r.stderr.strip()}")
        s3conf = {"access_key": srv.creds.access_key_id, "secret_key": srv.creds.secret_access_key}
        # Validation pass on the unshaped link: every contender's answer must
        # equal the reader's answer on the local files before anything is timed.
        reference = {}
        # What each reader itself reads of the local files (strace), the
        # reference of the "fetched ÷ reader's reads" column.
        reader_reads = {}
        cases = list(plan_cases(tables, plan, readers))
        with wanproxy.WanProxy("127.0.0.1", srv.port, "lan") as proxy:
            s3conf["endpoint"] = proxy.endpoint
            for name, t, q, pq_, table_readers in cases:
                for reader in table_readers:
                    trace = work / "reader-strace.txt" if strace_reads.available() else None
                    ref = run_reader({"reader": reader, "location": t["path"], "query": pq_, "threads": 2},
                                     a.timeout, trace=trace)
                    reference[(name, q["name"], reader)] = ref["digest"]
                    if trace is not None:
                        reader_reads[(name, q["name"], reader)] = strace_reads.bytes_read(trace, t["path"])[0]
                        trace.unlink(missing_ok=True)
                    if q["layout"] != "full" and ref["rows"] != q["expected_rows"]:
                        failures.append(f"{name} {q['name']} {reader}: the local read returned "
                                        f"{ref['rows']} rows, the generator selected {q['expected_rows']}")
                    for c in contenders_for(reader, wanted):
                        con = bench_contenders.make(c, work, bucket, proxy.endpoint, srv.creds)
                        r = one_run(con, reader, pq_, name, proxy, s3conf, a.timeout)
                        ok = r["digest"] == ref["digest"]
                        print(f"check {name} {q['name']} {reader} {c}: {'same' if ok else 'DIFFERENT'}"
                              f" ({r['rows']} rows)", flush=True)
                        if not ok:
                            failures.append(f"{name} {q['name']} {reader} {c}: result differs from local")
        if failures:
            print("bench: results differ; nothing timed:\n  " + "\n  ".join(failures), file=sys.stderr)
            return 1
        for profile in plan["profiles"]:
            link = wanproxy.PROFILES[profile]
            calibrations[profile] = wanproxy.format_calibration(wanproxy.calibrate(profile))
            print(f"bench: link {profile}: {calibrations[profile]}", flush=True)
            with wanproxy.WanProxy("127.0.0.1", srv.port, profile) as proxy:
                s3conf["endpoint"] = proxy.endpoint
                link_runs = []
                for name, t, q, pq_, table_readers in cases:
                    if (name, q["name"]) not in reads:
                        reads[(name, q["name"])] = minimal_read(t, q)
                    for reader in table_readers:
                        order = contenders_for(reader, wanted)
                        for pair in range(plan["pairs"]):
                            for c in (order if pair % 2 == 0 else list(reversed(order))):
                                con = bench_contenders.make(c, work, bucket, proxy.endpoint, srv.creds)
                                later = plan["later"] if c in plan["later_contenders"] else 0
                                r = one_run(con, reader, pq_, name, proxy, s3conf, a.timeout, later)
                                r.update(profile=profile, table=name, pair=pair,
                                         same=r["digest"] == reference[(name, q["name"], reader)],
                                         reader_bytes=reader_reads.get((name, q["name"], reader)))
                                runs.append(r)
                                link_runs.append(r)
                                lat = "" if r["later_s"] is None else f" (later {r['later_s']:.2f} s)"
                                print(f"{profile} {name} {q['name']} {reader} {c} pair {pair + 1}: "
                                      f"init {r['init_s']:.2f} s, {r['query_s']:.2f} s{lat}, "
                                      f"{r['bytes']:,} B, {r['requests']} req"
                                      f"{'' if r['same'] else '  RESULT DIFFERS'}"
                                      f"{'' if c not in ('view', 'plain') or r['sieve_profile'] is not None else '  (no profile)'}",
                                      flush=True)
                capacity, source = link_capacity(link, link_runs)
                for name, t, q, pq_, table_readers in cases:
                    m = physical_limit(reads[(name, q["name"])], link, capacity, source)
                    models.append({"profile": profile, "table": name, "query": q["name"], **m})
    elapsed = time.time() - started
    if a.json:
        Path(a.json).write_text(json.dumps({"plan": plan, "runs": runs, "models": models, "probe": probe,
                                            "tables": tables, "calibrations": calibrations, "elapsed": elapsed,
                                            "commit": commit, "server": server}, indent=1, default=str))
    bench_report.write(Path(a.out), Path(a.img), plan, tables, runs, models, calibrations,
                       elapsed=elapsed, probe=probe, commit=commit, server=server)
    bad = [r for r in runs if not r["same"]]
    print(f"bench: done in {time.time() - started:.0f} s; report {a.out}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
