"""scripts/bench: sievefs against the other ways of reading a Delta table in
S3, on one machine, in a world that behaves like S3. See docs/benchmarks.md
for the method and the latest results.

    scripts/bench --quick        # the default: writer layouts + a table of many small files, wan/region/lan
    scripts/bench --full         # TPC-H SF10, 90 and 416 columns, none/zstd, every link, every contender

The S3 server is s3link (tests/tools/s3link, --server s3link, the default):
it serves a directory of the generated tables over the S3 API and emulates
the link inside itself (profiles `wan` 200 +- 20 ms / 150 Mbit/s, `region`
25 ms / 1 Gbit/s, `lan`) and S3's per-prefix request-rate limit (5,500
GET/s, 503 SlowDown beyond), with optional TLS (--tls); one s3link per
profile serves the same directory, and its counters, reset before every run,
give each run's bytes and requests. --server moto|versitygw runs those
servers behind the Python link emulator scripts/lib/wanproxy.py instead, as
the benchmark did before s3link (bench_link.py).

The tables are written by real writers (bench_data.py layouts `pyarrow`, with
an OffsetIndex and ~1 MiB pages, `pyarrow_default`, `duckdb`, `deltalake`,
`spark`) plus a table that grew by appends (`appends`: many small files,
partitioned by day, written by deltalake.write_deltalake appends); after the
upload `sievefs index --to-s3` builds the page maps of the files without an
OffsetIndex, as a user would.

Contenders (bench_contenders.py): the reader through a sievefs view made
from the query's hint, through the sievefs plain path and through s3fs-fuse
(rclone mount on request), and the readers reading S3 directly with their
own clients (bench_reader.py): pyarrow's S3FileSystem, DuckDB's httpfs
(bench_duckdb_httpfs.py), deltalake and polars with s3:// URIs.

Steps: generate the tables; lay them out for s3link (symbolic links to the
generated files) or upload them; index them; check every contender returns
the same result as the same reader on the local files (a validation pass on
`lan`); then for each link, table, query run the contenders in alternating
order for --pairs rounds, each on a fresh mount and in a fresh reader
process; model the physical limit; report medians (bench_report.py).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
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
BUCKET = "sieve-bench"
# the direct readers' names in reports: the reader and its S3 client
DIRECT_LABEL = {"pyarrow": "pyarrow-s3", "duckdb": "duckdb-httpfs", "deltalake": "deltalake-s3",
                "polars": "polars-s3"}
READERS = ("duckdb", "pyarrow", "deltalake", "polars")


def run_reader(spec: dict, timeout: float, between=None, trace: Path | None = None,
               env: dict | None = None) -> dict:
    """Run one query in a fresh process; returns its JSON line plus the
    process's CPU seconds and peak RSS (from wait4). With spec["repeat"] > 1
    the reader stops after its first query until between() has returned,
    and skips the later ones when the first took over spec["later_max_s"].
    With trace, the reader runs under strace writing there (strace_reads.py;
    its times then mean nothing). env: variables added to the reader's."""
    import threading
    cmd = [sys.executable, str(READER), json.dumps(spec)]
    if trace is not None:
        cmd = strace_reads.traced(cmd, trace)
    penv = dict(os.environ, **(env or {}))
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.PIPE, stderr=err, text=True, env=penv)
        killer = threading.Timer(timeout, p.kill)
        killer.start()
        try:
            answer = "\n"
            if int(spec.get("repeat", 1)) > 1:
                first = p.stdout.readline()
                if between:
                    between()
                try:
                    if json.loads(first).get("seconds", 0) > spec.get("later_max_s", float("inf")):
                        answer = "skip\n"
                except ValueError:
                    pass
                try:
                    p.stdin.write(answer)
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


class Reader:
    """How a reader process runs: the library, and for DuckDB on S3 the
    DuckDB that has an httpfs extension (bench_duckdb_httpfs.py)."""

    def __init__(self, name: str, httpfs: dict | None = None):
        self.name = name
        self.httpfs = httpfs

    @property
    def key(self) -> str:
        return self.name + ("@httpfs" if self.httpfs else "")

    def env(self) -> dict | None:
        return {"PYTHONPATH": self.httpfs["pythonpath"]} if self.httpfs else None

    def spec(self, **kw) -> dict:
        s = {"reader": self.name, "threads": 2, **kw}
        if self.httpfs:
            s["duckdb_httpfs"] = self.httpfs["extension"]
        return s


def one_run(contender, reader: Reader, query: dict, table_prefix: str, world, s3conf: dict,
            timeout: float, later: int = 0, later_max_s: float = float("inf")) -> dict:
    """One fresh mount (or none, for direct), one reader process: the first
    query, then `later` more in the same process on the same mount. The
    world's counters are reset once the contender is set up (a mount's
    warmup, s3fs's first listing are not the query's)."""
    contender.trace_tag = f"{table_prefix.strip('/').replace('/', '_')}.{query['name']}.{reader.name}.{contender.name}"
    location = contender.setup(table_prefix, query)
    try:
        profile_at_start = contender.sieve_profile()
        world.reset()
        kernel_before = contender.kernel_read_bytes()
        spec = reader.spec(location=location, query=query, s3=s3conf, repeat=1 + later,
                           **({"later_max_s": later_max_s} if later_max_s != float("inf") else {}))
        mid = {}
        kernel_mid = []

        def between():
            mid.update(world.stats())
            kernel_mid.append(contender.kernel_read_bytes())
        res = run_reader(spec, timeout, between=between, env=reader.env())
        after = world.stats()
        first = mid or after
        kernel_first = kernel_mid[0] if kernel_mid else contender.kernel_read_bytes()
        dcpu, dpeak = contender.daemon_usage()
        profile = contender.sieve_profile()
        vstats = contender.view_stats()
    finally:
        contender.teardown()
    later_s = res.get("later_seconds") or []
    return {
        "contender": contender.name, "reader": reader.name,
        "query": query["name"],
        "init_s": contender.init_seconds, "query_s": res["seconds"], "rows": res["rows"],
        "later_s": statistics.median(later_s) if later_s else None, "later_runs": later_s,
        "digest": res["digest"],
        "bytes": first["bytes"], "body_bytes": first.get("body_bytes"), "requests": first["requests"],
        "requests_by_kind": first.get("by_kind"), "slowdown_503": first.get("slowdown_503"),
        "connections": first.get("connections"),
        # what the kernel asked the mount for during the first query (sievefs only)
        "kernel_bytes": (kernel_first - kernel_before
                         if kernel_first is not None and kernel_before is not None else None),
        "later_bytes": (after["bytes"] - first["bytes"]) if mid else None,
        "later_requests": (after["requests"] - first["requests"]) if mid else None,
        "cpu_s": res["cpu_s"], "peak_bytes": res["peak_bytes"],
        "daemon_cpu_s": dcpu if contender.fuse else None, "daemon_peak_bytes": dpeak if contender.fuse else None,
        "sieve_profile": profile, "sieve_profile_at_start": profile_at_start, "view_stats": vstats,
        **sum_reasons(vstats),
    }


# -- plan ----
# The quick plan (docs/benchmarks.md, Method): fits in about 25 minutes on a 2-core machine.
QUICK_SCALE = 0.02
QUICK_FILE_MIB = 1024
QUICK_QUERIES = ["scattered_0_1pct", "clustered_0_1pct", "full_scan", "point_id"]
QUICK = {"scale": QUICK_SCALE, "widths": [90], "codecs": ["none"],
         "layouts": ["pyarrow", "pyarrow_default", "duckdb", "deltalake", "spark"],
         "target_file_mib": QUICK_FILE_MIB, "dv": False,
         # the table of many small files: 10 appends of 10 days, 100 files of ~0.6 MB
         "appends": {"scale": 0.2, "appends": 10, "days": 10},
         "profiles": ["wan", "region", "lan"],
         # per link, the tables (by layout) timed there; a link not named here times them all
         "profile_layouts": {"wan": ["pyarrow", "duckdb", "appends"], "region": ["pyarrow", "duckdb", "appends"]},
         # runs left out, PROFILE:LAYOUT:CONTENDER: s3fs takes about 1.2 s per small file at wan
         # (HEADs and a listing per file, one at a time), 2 minutes a run on 100 files
         "skip": ["wan:appends:s3fs"],
         "queries": QUICK_QUERIES, "pairs": 2, "validation_pair": True,
         "later": 1, "later_max_s": 10, "later_contenders": ["view", "plain"],
         "contenders": ["view", "plain", "s3fs", "direct"], "readers": ["duckdb"],
         "direct_readers": ["pyarrow", "duckdb", "deltalake", "polars"],
         "server": "s3link", "tls": False}
FULL = {"scale": 10.0, "widths": [90, 416], "codecs": ["none", "zstd"],
        "layouts": ["pyarrow", "pyarrow_default", "duckdb", "deltalake", "spark"],
        "target_file_mib": None, "dv": True, "appends": {"scale": 0.6, "appends": 10, "days": 30},
        "profiles": ["wan", "region", "lan"], "profile_layouts": {}, "skip": [], "queries": None, "pairs": 3,
        "validation_pair": False, "later": 1, "later_max_s": None, "later_contenders": ["view", "plain"],
        "contenders": ["view", "plain", "s3fs", "rclone", "direct"], "readers": list(READERS),
        "direct_readers": list(READERS), "server": "s3link", "tls": False}


def reads_table(reader: str, table: dict, plan: dict) -> bool:
    """DuckDB's read_parquet, pyarrow.dataset and polars read the Parquet
    files without the Delta log, so they would return deleted rows of a
    deletion-vector table; deltalake applies deletion vectors and reads the
    DV tables when the plan has them (the same files plus deletion vectors),
    else the others."""
    if reader == "deltalake":
        return bool(table.get("dv")) == bool(plan.get("dv"))
    return not table.get("dv")


def plan_cases(tables: dict, plan: dict):
    """(table name, table, query, its portable form) for every table and
    planned query, in order."""
    import bench_data
    for name, t in tables.items():
        for q in bench_data.queries(t):
            if not plan["queries"] or q["name"] in plan["queries"]:
                yield name, t, q, portable(q)


def entries(table: dict, plan: dict) -> list[tuple[str, str]]:
    """(contender, reader) of one table's runs: each mount contender with each
    mount reader, then each direct reader."""
    out = []
    for c in plan["contenders"]:
        rs = plan["direct_readers"] if c == "direct" else plan["readers"]
        out += [(c, r) for r in rs if reads_table(r, table, plan)]
    return out


def label(contender: str, reader: str, plan: dict) -> str:
    """A run's name in the report: the direct readers by their client, the
    mounts by name (and reader, when the plan has several through mounts)."""
    if contender == "direct":
        return DIRECT_LABEL.get(reader, f"{reader}-s3")
    return contender if len(plan["readers"]) == 1 else f"{contender}/{reader}"


def pyarrow_filter_text(pred: str | None) -> str | None:
    """The query's predicate (only `c < N`, `c = N` and `c BETWEEN a AND b` are
    generated) as a pyarrow.compute expression the reader process can evaluate."""
    if not pred:
        return None
    m = re.fullmatch(r"(\w+) (<|=) (\d+)", pred)
    if m:
        return f"pc.field('{m[1]}') {'==' if m[2] == '=' else '<'} {m[3]}"
    m = re.fullmatch(r"(\w+) BETWEEN (\d+) AND (\d+)", pred)
    if m:
        return f"(pc.field('{m[1]}') >= {m[2]}) & (pc.field('{m[1]}') <= {m[3]})"
    raise ValueError(f"no pyarrow form for {pred!r}")


def predicate_bounds(pred: str | None):
    """(column, lo, hi) of a generated predicate (None = unbounded), None
    without one."""
    if not pred:
        return None
    m = re.fullmatch(r"(\w+) (<|=) (\d+)", pred)
    if m:
        return (m[1], None, int(m[3]) - 1) if m[2] == "<" else (m[1], int(m[3]), int(m[3]))
    m = re.fullmatch(r"(\w+) BETWEEN (\d+) AND (\d+)", pred)
    if m:
        return m[1], int(m[2]), int(m[3])
    return None


def portable(q: dict) -> dict:
    """The parts of a query the reader process and the view contender need."""
    return {"name": q["name"], "sql_duckdb": q["sql_duckdb"], "sql_deltalake": q["sql_deltalake"],
            "columns": q["columns"], "files": q.get("files"),
            "pyarrow_filter": pyarrow_filter_text(q["predicate"]), "hint": q["hint"],
            "predicate": q["predicate"], "layout": q["layout"], "selectivity": q["selectivity"]}


def minimal_read(table: dict, q: dict):
    """The query's minimal read over all files (physical_model.MinimalRead):
    files whose statistics rule the predicate out are left out (every
    table's Delta log has them), and so are such row groups of the others."""
    import physical_model as pm
    import pyarrow.parquet as pq
    parts = []
    bounds = predicate_bounds(q["predicate"])
    for f in table["files"]:
        path = Path(table["path"]) / f["path"] if not os.path.isabs(f["path"]) else Path(f["path"])
        n = pq.ParquetFile(str(path)).metadata.num_rows
        rgs = pm.row_groups_by_stats(path, *bounds) if bounds else None
        if rgs == []:
            continue
        rows = selected_rows(path, q, n)
        parts.append(pm.minimal_read(path, rows, q["columns"], q["filter_columns"] if q["predicate"] else (),
                                     filter_row_groups=rgs))
    return pm.MinimalRead.combine(parts)


def selected_rows(path: Path, q: dict, n: int):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    if not q["predicate"]:
        return range(n)
    expr = eval(pyarrow_filter_text(q["predicate"]), {"pc": pc})
    t = pq.read_table(str(path), columns=q["filter_columns"])
    t = t.append_column("__i", pa.array(range(n)))
    return t.filter(expr).column("__i").to_pylist()


def link_capacity(nominal: dict, runs: list) -> tuple[float | None, str]:
    """Requests per second for the model's request term behind wanproxy: the
    median best capacity of the profiles the sievefs mounts of these runs
    measured, else 32 requests in flight per RTT (None = unlimited on a link
    without delay)."""
    import bench_report
    caps = [c for c in (bench_report.profile_summary(r.get("sieve_profile")).get("capacity_per_s") for r in runs) if c]
    if caps:
        return statistics.median(caps), f"measured (median of {len(caps)} mount profiles)"
    if nominal.get("rtt_ms"):
        return 32 / (nominal["rtt_ms"] / 1000), f"assumed: 32 in flight per {nominal['rtt_ms']:g} ms RTT"
    return None, "assumed unlimited (no delay on this link)"


def physical_limit(mr, nominal: dict, capacity: float | None, source: str) -> dict:
    """The bound for the link: nominal RTT and bandwidth, the given capacity."""
    rate = (nominal.get("mbit") or 0) * 1e6 / 8 or 1e12
    rtt = (nominal.get("rtt_ms") or 0) / 1000
    lim = mr.limit(rtt, rate, capacity)
    return dict(lim, capacity_per_s=capacity, capacity_source=source, rtt_s=rtt, bandwidth_Bps=rate, files=mr.files)


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


def lay_out(root: Path, tables: dict) -> None:
    """ROOT/BUCKET/TABLE/... for s3link: real directories, the generated
    files as symbolic links (s3link lists and serves them; nothing copied)."""
    b = root / BUCKET
    shutil.rmtree(b, ignore_errors=True)
    for name, t in tables.items():
        src = Path(t["path"])
        for p in src.rglob("*"):
            if p.is_file():
                dst = b / name / p.relative_to(src)
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(p.resolve(), dst)


def upload(srv, tables: dict) -> None:
    s3 = srv.client()
    s3.create_bucket(Bucket=BUCKET)
    for name, t in tables.items():
        root = Path(t["path"])
        for p in root.rglob("*"):
            if p.is_file():
                s3env.upload_file(s3, BUCKET, f"{name}/{p.relative_to(root)}", p)


def versions(httpfs: dict | None) -> str:
    out = []
    for name, argv in (("sievefs", [bench_contenders.BIN, "--version"]), ("s3fs", ["s3fs", "--version"])):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            text = (r.stdout or r.stderr).strip()
            m = re.search(r"\bV(\d[\w.]*)", text) if name == "s3fs" else None
            v = (m[1] if m else "?") if name == "s3fs" else (text.split() or ["?"])[-1]
            out.append(f"{name} {v}")
        except (OSError, subprocess.SubprocessError):
            out.append(f"{name} ?")
    for mod in ("duckdb", "pyarrow", "deltalake", "polars", "moto"):
        try:
            import importlib.metadata
            out.append(f"{mod} {importlib.metadata.version(mod)}")
        except Exception:  # noqa: BLE001
            out.append(f"{mod} ?")
    if httpfs:
        out.append(f"DuckDB {httpfs['duckdb']} with httpfs from {httpfs['package']} (direct DuckDB runs)")
    return ", ".join(out)


# -- run --------------------------------------------------------------------------------------
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="the quick plan (default; docs/benchmarks.md, Method)")
    mode.add_argument("--full", action="store_true", help="TPC-H SF10, 90 and 416 columns, none and zstd, links "
                      "wan/region/lan, all queries, every contender and reader")
    ap.add_argument("--scale", type=float)
    ap.add_argument("--widths")
    ap.add_argument("--codecs")
    ap.add_argument("--dv", action=argparse.BooleanOptionalAction, default=None,
                    help="the deletion-vector variant of the first codec's tables (written by "
                         "Spark; read by deltalake only)")
    ap.add_argument("--profiles", help="comma list of wan,region,lan")
    ap.add_argument("--queries", help="comma list of query names (see bench_data.py; point_id: the appends table's)")
    ap.add_argument("--layouts", help="comma list of sieve,pyarrow,pyarrow_default,duckdb,deltalake,spark "
                    "(bench_data.py); the appends table is --appends")
    ap.add_argument("--appends", help="the table of many small files: SCALE,APPENDS,DAYS (quick: 0.2,10,10: "
                    "1.2 M rows in 100 files; full: 0.6,10,30, 300 files), or 'none'")
    ap.add_argument("--profile-layouts", help="tables timed per link, e.g. 'region=pyarrow+appends;lan=duckdb' "
                    "(layouts, 'appends' for the small-files table; a link not named times every table)")
    ap.add_argument("--skip", action="append", help="leave out runs: PROFILE:LAYOUT:CONTENDER ('*' for any; "
                    "repeatable; replaces the plan's list, quick: wan:appends:s3fs); --skip none clears it")
    ap.add_argument("--validation-pair", action=argparse.BooleanOptionalAction, default=None,
                    help="count the validation pass (on lan) as lan's first timed pair (quick: on)")
    ap.add_argument("--later-max-s", type=float, help="no later query after a first query slower than this "
                    "(quick: 10 s)")
    ap.add_argument("--target-file-mib", type=int)
    ap.add_argument("--readers", help="comma list of readers through the mounts (quick: duckdb; " +
                    ",".join(READERS) + ")")
    ap.add_argument("--direct-readers", help="comma list of readers reading S3 directly, the `direct` contender "
                    "(quick: all four)")
    ap.add_argument("--contenders", help="comma list of " + ",".join(bench_contenders.CONTENDERS))
    ap.add_argument("--later", type=int, help="later queries per run after the first, in the same reader "
                    "process on the same mount, for the sievefs contenders (default 1)")
    ap.add_argument("--probe", action="store_true", help="run scripts/probe-requests (if it exists) and "
                    "put its table in the report")
    ap.add_argument("--probe-args", default="--profile wan,lan",
                    help="arguments for scripts/probe-requests (default: %(default)s)")
    ap.add_argument("--probe-json", help="a JSON file written by scripts/probe-requests --json: its runs go "
                    "into the report")
    ap.add_argument("--server", choices=s3servers.SERVERS,
                    help="s3link (default: the link and S3's request-rate limit emulated in the server), or "
                         "moto / versitygw behind scripts/lib/wanproxy.py (versitygw: go install "
                         f"github.com/versity/versitygw/cmd/versitygw@{s3servers.VERSITYGW_VERSION})")
    ap.add_argument("--tls", action="store_true", help="s3link over HTTPS (its self-signed certificate given "
                    "to every contender; s3link only)")
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
    ap.add_argument("--json", help="also write every run as JSON here (default: --out with .json, "
                    "docs/benchmarks.json: the reason words and profiles of every run)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per reader run")
    ap.add_argument("--report-from", help="only write the report (--out, --img) from the --json of an earlier run")
    ap.add_argument("--commit", help="what the report says about the sievefs that ran (default: this "
                    "checkout's HEAD and whether it is dirty); for a SIEVEFS_BIN built elsewhere")
    ap.add_argument("--note", action="append", default=[], help="a line for the report's header (e.g. what else "
                    "ran on the machine); repeatable")
    a = ap.parse_args(argv)
    if a.json is None and not a.report_from:
        a.json = str(Path(a.out).with_suffix(".json"))
    return a


def make_plan(a) -> dict:
    import copy
    plan = copy.deepcopy(FULL if a.full else QUICK)
    for k in ("scale", "pairs", "dv", "later", "target_file_mib", "server", "validation_pair", "later_max_s"):
        if getattr(a, k) is not None:
            plan[k] = getattr(a, k)
    plan["tls"] = bool(a.tls)
    for k, attr in (("layouts", "layouts"), ("contenders", "contenders"), ("codecs", "codecs"),
                    ("profiles", "profiles"), ("queries", "queries"), ("readers", "readers"),
                    ("direct_readers", "direct_readers")):
        v = getattr(a, attr)
        if v is not None:
            plan[k] = [x for x in v.split(",") if x]
    if a.widths:
        plan["widths"] = [int(x) for x in a.widths.split(",")]
    if a.skip is not None:
        plan["skip"] = [x for x in a.skip if x != "none"]
    if a.appends:
        if a.appends == "none":
            plan["appends"] = None
        else:
            sc, n, d = a.appends.split(",")
            plan["appends"] = {"scale": float(sc), "appends": int(n), "days": int(d)}
    if a.profile_layouts is not None:
        plan["profile_layouts"] = {}
        for part in filter(None, a.profile_layouts.split(";")):
            p, _, lays = part.partition("=")
            plan["profile_layouts"][p.strip()] = [x for x in lays.replace("+", ",").split(",") if x]
    if a.sievefs_args:
        plan["sievefs_args"] = a.sievefs_args
    if a.note:
        plan["notes"] = list(a.note)
    return plan


def skipped(plan: dict, profile: str, table: dict, lab: str) -> bool:
    """plan["skip"]: "PROFILE:LAYOUT:CONTENDER" rules ('*' matches anything)
    naming runs the plan leaves out."""
    for rule in plan.get("skip") or []:
        p, lay, c = (rule.split(":") + ["*", "*"])[:3]
        if p in ("*", profile) and lay in ("*", table.get("layout")) and c in ("*", lab):
            return True
    return False


def timed_here(plan: dict, profile: str, table: dict) -> bool:
    wanted = (plan.get("profile_layouts") or {}).get(profile)
    return wanted is None or table.get("layout") in wanted


def main(argv=None) -> int:
    a = parse_args(argv)
    if a.report_from:
        import bench_report
        doc = json.loads(Path(a.report_from).read_text())
        bench_report.write(Path(a.out), Path(a.img), doc)
        return 0
    plan = make_plan(a)
    if plan["tls"] and plan["server"] != "s3link":
        print("bench: --tls needs --server s3link (wanproxy does not speak TLS)", file=sys.stderr)
        return 2
    missing = s3servers.check_available(plan["server"])
    if missing:
        print(f"bench: --server {plan['server']}: {missing}", file=sys.stderr)
        return 2
    bench_contenders.SIEVEFS_EXTRA[:] = a.sievefs_args.split()
    if a.trace:
        bench_contenders.TRACE_DIR = Path(a.trace).resolve()
    import bench_data
    import bench_link
    import bench_report

    started = time.time()
    commit = a.commit or bench_report.sievefs_commit()       # before this run writes docs/
    print(f"bench: plan {json.dumps(plan)}; sievefs {commit}", flush=True)
    notes, dropped = [], {}
    httpfs = None
    if "direct" in plan["contenders"] and "duckdb" in plan["direct_readers"]:
        import bench_duckdb_httpfs
        try:
            httpfs = bench_duckdb_httpfs.ensure()
            print(f"bench: DuckDB {httpfs['duckdb']} with httpfs ({httpfs['package']}) for the direct DuckDB runs",
                  flush=True)
        except RuntimeError as e:
            if os.environ.get("CI", "").lower() == "true":
                raise
            plan["direct_readers"] = [r for r in plan["direct_readers"] if r != "duckdb"]
            notes.append(f"duckdb-httpfs left out: {e}")
            print(f"bench: {notes[-1]}", file=sys.stderr, flush=True)
    probe = run_probe(a)
    gen = bench_data.generate(a.data_dir, scale=plan["scale"], widths=plan["widths"], codecs=plan["codecs"],
                              dv=plan["dv"], layouts=tuple(plan["layouts"]),
                              target_file_mib=plan.get("target_file_mib")) if plan["layouts"] else {"tables": {}}
    tables = dict(gen["tables"])
    if plan.get("appends"):
        ap_ = plan["appends"]
        tables.update(bench_data.generate_appends(a.data_dir, ap_["scale"], ap_["appends"], ap_["days"]))
    readers = {}
    for r in set(plan["readers"]) | set(plan["direct_readers"]):
        readers[("mount", r)] = Reader(r)
        readers[("direct", r)] = Reader(r, httpfs if r == "duckdb" else None)

    def reader_of(c: str, r: str) -> Reader:
        return readers[("direct" if c == "direct" else "mount", r)]
    work = Path(tempfile.mkdtemp(prefix="sieve-bench-"))
    runs, models, calibrations, failures, run_errors = [], [], {}, [], []
    nominals, capacities, link_runs = {}, {}, {}
    cases = list(plan_cases(tables, plan))
    biggest = max(((n, f) for n, t in tables.items() for f in t["files"]), key=lambda x: x[1]["bytes"])
    # At `lan` the validation pass is the first timed pair (when the plan says so).
    val_pair = bool(plan.get("validation_pair")) and "lan" in plan["profiles"]
    later_max_s = float(plan.get("later_max_s") or float("inf"))

    def record(r: dict, profile: str, name: str, t: dict, q: dict, rd: Reader, pair: int, lab: str) -> None:
        r.update(profile=profile, table=name, layout=t.get("layout"), pair=pair, label=lab,
                 same=r["digest"] == reference[(name, q["name"], rd.key)],
                 reader_bytes=reader_reads.get((name, q["name"], rd.key)))
        runs.append(r)
        link_runs.setdefault(profile, []).append(r)
        lat = "" if r["later_s"] is None else f" (later {r['later_s']:.2f} s)"
        slow = f", {r['slowdown_503']} x 503 SlowDown" if r.get("slowdown_503") else ""
        print(f"{profile} {name} {q['name']} {lab} pair {pair + 1}: init {r['init_s']:.2f} s, {r['query_s']:.2f} s"
              f"{lat}, {r['bytes']:,} B, {r['requests']} req{slow}{'' if r['same'] else '  RESULT DIFFERS'}"
              f"{'' if r['contender'] not in ('view', 'plain') or r['sieve_profile'] is not None else '  (no profile)'}",
              flush=True)

    def s3conf(w) -> dict:
        return {"endpoint": w.endpoint, "access_key": w.creds.access_key_id,
                "secret_key": w.creds.secret_access_key, "ca_bundle": w.ca_bundle}

    def later_for(c: str) -> int:
        return plan["later"] if c in plan["later_contenders"] else 0
    reference, reader_reads = {}, {}
    with contextlib.ExitStack() as stack:
        if plan["server"] == "s3link":
            root = work / "s3root"
            lay_out(root, tables)

            def open_world(profile):
                return bench_link.S3LinkWorld(root, profile, tls=plan["tls"], log_path=work / f"s3link-{profile}.log")
        else:
            srv = stack.enter_context(s3servers.make(plan["server"], work, auth=False))
            upload(srv, tables)

            def open_world(profile):
                return bench_link.ProxyWorld(srv, profile)
        print(f"bench: {len(tables)} tables ready ({time.time() - started:.0f} s)", flush=True)
        world = open_world("lan")
        stack.callback(world.close)
        server = world.describe()
        print(f"bench: S3 server {server} on {world.endpoint}", flush=True)
        # Page maps ahead of time, as a user of files without an OffsetIndex would:
        # `sievefs index --to-s3` on each table (lan, not timed).
        ienv = s3env.clean_env(extra=world.creds.env())
        if world.ca_bundle:
            ienv["AWS_CA_BUNDLE"] = world.ca_bundle
        for name in tables:
            r = subprocess.run([bench_contenders.BIN, "index", f"s3://{BUCKET}/{name}", "--to-s3", "-q",
                                "--endpoint", world.endpoint], env=ienv, capture_output=True, text=True,
                               timeout=3600)
            print(f"bench: sievefs index {name}: {(r.stdout or r.stderr).strip()}", flush=True)
            if r.returncode != 0:
                raise SystemExit(f"sievefs index failed on {name}: {r.stderr.strip()}")
        if val_pair:
            nominals["lan"], capacities["lan"] = world.nominal, world.capacity()
            calibrations["lan"] = world.calibrate(BUCKET, f"{biggest[0]}/{biggest[1]['path']}", biggest[1]["bytes"])
            print(f"bench: {calibrations['lan']}", flush=True)
        # Validation pass (lan): every contender's answer must equal the same
        # reader's answer on the local files before anything is timed. The
        # reader's own reads of the local files (strace) are the reference of
        # the "fetched / reader's reads" column.
        for name, t, q, pq_ in cases:
            for c, rname in entries(t, plan):
                rd = reader_of(c, rname)
                key = (name, q["name"], rd.key)
                if key not in reference:
                    trace = work / "reader-strace.txt" if strace_reads.available() else None
                    ref = run_reader(rd.spec(location=t["path"], query=pq_), a.timeout, trace=trace, env=rd.env())
                    reference[key] = ref["digest"]
                    if trace is not None:
                        reader_reads[key] = strace_reads.bytes_read(trace, t["path"])[0]
                        trace.unlink(missing_ok=True)
                    if q["layout"] != "full" and ref["rows"] != q["expected_rows"]:
                        failures.append(f"{name} {q['name']} {rd.key}: the local read returned "
                                        f"{ref['rows']} rows, the generator selected {q['expected_rows']}")
                con = bench_contenders.make(c, work, BUCKET, world.endpoint, world.creds, world.ca_bundle)
                lab = label(c, rname, plan)
                try:
                    r = one_run(con, rd, pq_, name, world, s3conf(world), a.timeout,
                                later_for(c) if val_pair else 0, later_max_s)
                except RuntimeError as e:
                    if c in ("view", "plain"):
                        raise
                    dropped[(name, q["name"], c, rname)] = str(e)[-600:]
                    print(f"check {name} {q['name']} {lab}: FAILED, left out: {str(e)[-300:]}", flush=True)
                    continue
                ok = r["digest"] == reference[key]
                print(f"check {name} {q['name']} {lab}: {'same' if ok else 'DIFFERENT'} ({r['rows']} rows)",
                      flush=True)
                if not ok:
                    failures.append(f"{name} {q['name']} {lab}: result differs from local")
                elif val_pair and timed_here(plan, "lan", t) and not skipped(plan, "lan", t, lab):
                    record(r, "lan", name, t, q, rd, 0, lab)
        world.close()
        if failures:
            print("bench: results differ; nothing timed:\n  " + "\n  ".join(failures), file=sys.stderr)
            return 1
        for (name, qn, c, rname), why in dropped.items():
            notes.append(f"{label(c, rname, plan)} on {name} {qn}: left out, it failed in the validation pass: {why}")
        for profile in plan["profiles"]:
            first_pair = 1 if (val_pair and profile == "lan") else 0
            if first_pair >= plan["pairs"]:
                continue
            with open_world(profile) as world:
                nominals[profile], capacities[profile] = world.nominal, world.capacity()
                if profile not in calibrations:
                    calibrations[profile] = world.calibrate(BUCKET, f"{biggest[0]}/{biggest[1]['path']}",
                                                            biggest[1]["bytes"])
                    print(f"bench: {calibrations[profile]}", flush=True)
                for name, t, q, pq_ in cases:
                    if not timed_here(plan, profile, t):
                        continue
                    order = [(c, rn) for c, rn in entries(t, plan) if (name, q["name"], c, rn) not in dropped
                             and not skipped(plan, profile, t, label(c, rn, plan))]
                    for pair in range(first_pair, plan["pairs"]):
                        for c, rname in (order if pair % 2 == 0 else list(reversed(order))):
                            rd = reader_of(c, rname)
                            lab = label(c, rname, plan)
                            con = bench_contenders.make(c, work, BUCKET, world.endpoint, world.creds, world.ca_bundle)
                            try:
                                r = one_run(con, rd, pq_, name, world, s3conf(world), a.timeout, later_for(c),
                                            later_max_s)
                            except RuntimeError as e:
                                run_errors.append(f"{profile} {name} {q['name']} {lab} pair {pair + 1}: {str(e)[-500:]}")
                                print(f"{profile} {name} {q['name']} {lab} pair {pair + 1}: FAILED {str(e)[-300:]}",
                                      flush=True)
                                continue
                            record(r, profile, name, t, q, rd, pair, lab)
    # the physical limit of every timed cell
    reads = {}
    for profile in plan["profiles"]:
        if profile not in nominals:
            continue
        capacity, source = capacities[profile]
        if plan["server"] != "s3link":
            capacity, source = link_capacity(nominals[profile], link_runs.get(profile, []))
        for name, t, q, pq_ in cases:
            if not any(r["table"] == name and r["query"] == q["name"] for r in link_runs.get(profile, [])):
                continue
            if (name, q["name"]) not in reads:
                reads[(name, q["name"])] = minimal_read(t, q)
            m = physical_limit(reads[(name, q["name"])], nominals[profile], capacity, source)
            models.append({"profile": profile, "table": name, "query": q["name"], **m})
    shutil.rmtree(work, ignore_errors=True)
    elapsed = time.time() - started
    for (p_, lay, c) in [tuple((rule.split(":") + ["*", "*"])[:3]) for rule in plan.get("skip") or []]:
        if (p_ != "*" and p_ not in plan["profiles"]) or (lay != "*" and not any(
                t.get("layout") == lay for t in tables.values())):
            continue     # the rule names nothing this run timed
        notes.append(f"the plan leaves out {c if c != '*' else 'every contender'} on "
                     f"{'the ' + lay + ' table' if lay != '*' else 'every table'} at "
                     f"{'link ' + p_ if p_ != '*' else 'every link'}")
    doc = {"plan": plan, "runs": runs, "models": models, "probe": probe, "tables": tables,
           "calibrations": calibrations, "nominal": nominals, "elapsed": elapsed, "commit": commit, "server": server,
           "versions": versions(httpfs), "httpfs": httpfs, "notes": notes, "errors": run_errors,
           "host": {"cpus": os.cpu_count(), "machine": os.uname().machine, "kernel": os.uname().release,
                    "node": os.uname().nodename}}
    if a.json:
        Path(a.json).write_text(json.dumps(doc, indent=1, default=str))
    bench_report.write(Path(a.out), Path(a.img), doc)
    bad = [r for r in runs if not r["same"]]
    print(f"bench: done in {time.time() - started:.0f} s; report {a.out}"
          + (f"; {len(run_errors)} runs failed" if run_errors else ""), flush=True)
    return 1 if bad or run_errors else 0


if __name__ == "__main__":
    sys.exit(main())
