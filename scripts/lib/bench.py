"""scripts/bench: sievefs against the other ways of reading a table in S3, on
one machine, over an emulated link. See docs/benchmarks.md for the method and
the latest results.

    scripts/bench --quick        # TPC-H SF 0.005, 90 columns, wan link: ~10 min here
    scripts/bench --full         # TPC-H SF10, 90 and 416 columns, none/zstd, every link

Both include the deletion-vector variant (Spark; read by deltalake only). The
Method section of docs/benchmarks.md says what each mode runs and costs.

Steps: start moto (no signature checks: s3fs 1.90 signs listing queries in a
way moto rejects) on 127.0.0.1; generate the tables (bench_data.py) and upload
them; start the link emulator (wanproxy.py) in front of moto; check every
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

READER = HERE / "bench_reader.py"


def run_reader(spec: dict, timeout: float) -> dict:
    """Run one query in a fresh process; returns its JSON line plus the
    process's CPU seconds and peak RSS (from wait4)."""
    import threading
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([sys.executable, str(READER), json.dumps(spec)], stdout=out, stderr=err)
        killer = threading.Timer(timeout, p.kill)
        killer.start()
        _, status, ru = os.wait4(p.pid, 0)
        killer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise RuntimeError(f"reader {spec['reader']} on {spec['location']} failed "
                               f"({p.returncode}): {err.read().strip()[-2000:]}")
        res = json.loads(out.read().strip().splitlines()[-1])
    res["cpu_s"] = ru.ru_utime + ru.ru_stime
    res["peak_bytes"] = ru.ru_maxrss * 1024
    return res


def one_run(contender, reader: str, query: dict, table_prefix: str, proxy, s3conf: dict,
            timeout: float) -> dict:
    location = contender.setup(table_prefix, query)
    try:
        before = proxy.stats()
        spec = {"reader": reader, "location": location, "query": query, "s3": s3conf, "threads": 2}
        res = run_reader(spec, timeout)
        after = proxy.stats()
        dcpu, dpeak = contender.daemon_usage()
    finally:
        contender.teardown()
    return {
        "contender": contender.name, "reader": reader, "query": query["name"],
        "init_s": contender.init_seconds, "query_s": res["seconds"], "rows": res["rows"],
        "digest": res["digest"],
        "bytes": after["bytes_down"] - before["bytes_down"] + after["bytes_up"] - before["bytes_up"],
        "requests": after.get("requests", 0) - before.get("requests", 0),
        "cpu_s": res["cpu_s"], "peak_bytes": res["peak_bytes"],
        "daemon_cpu_s": dcpu if contender.fuse else None, "daemon_peak_bytes": dpeak if contender.fuse else None,
    }


# -- plan -------------------------------------------------------------------------------------
QUICK = {"scale": 0.005, "widths": [90], "codecs": ["none"], "dv": True, "profiles": ["wan"],
         "queries": ["scattered_0_1pct", "clustered_0_1pct", "full_scan"], "pairs": 3}
FULL = {"scale": 10.0, "widths": [90, 416], "codecs": ["none", "zstd"], "dv": True,
        "profiles": ["wan", "region", "lan"], "queries": None, "pairs": 3}
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


def physical_limit(table: dict, q: dict, link) -> dict:
    """Minimal bytes and rounds of the query over all files (physical_model.py)."""
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
    mr = pm.MinimalRead.combine(parts)
    rate = (link.mbit or 0) * 1e6 / 8
    rtt = (link.rtt_ms or 0) / 1000
    secs = mr.total / rate + mr.rounds * rtt if rate else mr.rounds * rtt
    return {"bytes": mr.total, "rounds": mr.rounds, "seconds": secs}


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


# -- run --------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="TPC-H SF 0.005, 90 columns, uncompressed, wan link, 0.1%% "
                      "scattered and clustered and the full scan (default)")
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
    ap.add_argument("--readers", default=",".join(READERS))
    ap.add_argument("--contenders", default=",".join(bench_contenders.CONTENDERS))
    ap.add_argument("--pairs", type=int)
    ap.add_argument("--sievefs-args", default="",
                    help="extra `sievefs mount` arguments for the view and plain contenders, e.g. "
                         "'--request-cost 0' (default: none, sievefs's defaults)")
    ap.add_argument("--data-dir", default=str(REPO / "tests" / "e2e" / ".data" / "bench"))
    ap.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    ap.add_argument("--img", default=str(REPO / "docs" / "img"))
    ap.add_argument("--json", help="also write every run as JSON here")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per reader run")
    a = ap.parse_args(argv)
    plan = dict(FULL if a.full else QUICK)
    for k in ("scale", "pairs", "dv"):
        if getattr(a, k) is not None:
            plan[k] = getattr(a, k)
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
    wanted = a.contenders.split(",")
    import bench_data
    import wanproxy

    started = time.time()
    print(f"bench: plan {json.dumps(plan)}", flush=True)
    gen = bench_data.generate(a.data_dir, scale=plan["scale"], widths=plan["widths"], codecs=plan["codecs"],
                             dv=plan["dv"])
    tables = gen["tables"]
    work = Path(tempfile.mkdtemp(prefix="sieve-bench-"))
    runs, models, calibrations, failures = [], [], {}, []
    with s3env.MotoServer(auth=False, log_path=work / "moto.log") as moto:
        s3 = moto.client()
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
        s3conf = {"access_key": moto.creds.access_key_id, "secret_key": moto.creds.secret_access_key}
        # Validation pass on the unshaped link: every contender's answer must
        # equal the reader's answer on the local files before anything is timed.
        reference = {}
        cases = list(plan_cases(tables, plan, readers))
        with wanproxy.WanProxy("127.0.0.1", moto.port, "lan") as proxy:
            s3conf["endpoint"] = proxy.endpoint
            for name, t, q, pq_, table_readers in cases:
                for reader in table_readers:
                    ref = run_reader({"reader": reader, "location": t["path"], "query": pq_, "threads": 2},
                                     a.timeout)
                    reference[(name, q["name"], reader)] = ref["digest"]
                    if q["layout"] != "full" and ref["rows"] != q["expected_rows"]:
                        failures.append(f"{name} {q['name']} {reader}: the local read returned "
                                        f"{ref['rows']} rows, the generator selected {q['expected_rows']}")
                    for c in contenders_for(reader, wanted):
                        con = bench_contenders.make(c, work, bucket, proxy.endpoint, moto.creds)
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
            with wanproxy.WanProxy("127.0.0.1", moto.port, profile) as proxy:
                s3conf["endpoint"] = proxy.endpoint
                for name, t, q, pq_, table_readers in cases:
                    m = physical_limit(t, q, link)
                    models.append({"profile": profile, "table": name, "query": q["name"], **m})
                    for reader in table_readers:
                        order = contenders_for(reader, wanted)
                        for pair in range(plan["pairs"]):
                            for c in (order if pair % 2 == 0 else list(reversed(order))):
                                con = bench_contenders.make(c, work, bucket, proxy.endpoint, moto.creds)
                                r = one_run(con, reader, pq_, name, proxy, s3conf, a.timeout)
                                r.update(profile=profile, table=name, pair=pair,
                                         same=r["digest"] == reference[(name, q["name"], reader)])
                                runs.append(r)
                                print(f"{profile} {name} {q['name']} {reader} {c} pair {pair + 1}: "
                                      f"{r['query_s']:.2f} s, {r['bytes']:,} B, {r['requests']} req"
                                      f"{'' if r['same'] else '  RESULT DIFFERS'}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"plan": plan, "runs": runs, "models": models}, indent=1))
    import bench_report
    bench_report.write(Path(a.out), Path(a.img), plan, tables, runs, models, calibrations,
                       elapsed=time.time() - started)
    bad = [r for r in runs if not r["same"]]
    print(f"bench: done in {time.time() - started:.0f} s; report {a.out}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
