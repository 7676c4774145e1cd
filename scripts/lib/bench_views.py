"""scripts/bench-views: the query-view acceptance benchmark (loopback).

  "For a DuckDB query selecting about 0.1 % of the rows (scattered) of a
   1M-row, 20-column PLAIN uncompressed table, the view fetches at most 10 %
   of the bytes the plain path fetches, with identical results."

Table: --rows rows (default 1,000,000) in one Parquet file: `id` int64 (the
row number), `sel` int32 (deterministic pseudo-random 0..999, so `sel = 0`
hits about 0.1 % of the rows, scattered), 9 int64 and 9 double payload
columns. PLAIN (no dictionary), uncompressed, data page V1, page index,
row groups of 128k rows.

Queries (DuckDB, separate process per run):
  agg   SELECT count(*), sum/avg/min/max of every payload column WHERE sel = 0
  rows  SELECT * WHERE sel = 0 ORDER BY id

For each query, N alternating pairs of runs: (a) the plain path, (b) a view
MOUNT/.sieve/views/q with the hint {"where": "sel = 0"}. Every run uses a
fresh mount (cold block cache and page cache), with --request-cost 0 by
default (a request costs next to nothing on loopback). Measured per run, as deltas of
MOUNT/.sieve/stats over the run (for the view: from before the hint is
written, so the hint's own checks count): s3_bytes_fetched, s3_get_requests;
wall time of the query (and, for the view, of hint + query). Results must be
identical across all runs and equal to the query on the local file.

Exit status: 0 when every query's median view/plain bytes ratio is <= 0.10
and all results are identical; 1 otherwise. moto is started through
tests/e2e/moto_launch.py (ranged GETs read only the range, SigV4 verified).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402
from bench_mount import Mount, fmt_bytes, host_line, moto_version, unmount_all  # noqa: E402

BIN = os.environ.get("SIEVEFS_BIN", str(REPO / "build" / "sievefs"))
RATIO_LIMIT = 0.10
KEY = "tables/wide/part-00000.parquet"
INTS = [f"i{k}" for k in range(9)]
DBLS = [f"x{k}" for k in range(9)]
HINT = {"where": "sel = 0"}

AGG_COLS = ", ".join([f"sum({c}::HUGEINT), min({c}), max({c})" for c in INTS]
                     + [f"sum({c}::DECIMAL(38,6)), min({c}), max({c})" for c in DBLS])
QUERIES = {
    "agg": f"SELECT count(*), sum(id), {AGG_COLS} FROM read_parquet('{{f}}') WHERE sel = 0",
    "rows": "SELECT * FROM read_parquet('{f}') WHERE sel = 0 ORDER BY id",
}


# -- data ------------------------------------------------------------------------------------
def make_table(path: Path, rows: int) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = pa.schema([("id", pa.int64()), ("sel", pa.int32())]
                       + [(c, pa.int64()) for c in INTS] + [(c, pa.float64()) for c in DBLS])
    rg = 128 * 1024
    selected = 0
    with pq.ParquetWriter(path, schema, compression="NONE", use_dictionary=False,
                          write_page_index=True, data_page_version="1.0") as w:
        for base in range(0, rows, rg):
            n = min(rg, rows - base)
            rnd = random.Random(f"bench-views:{base}")
            sel = [rnd.randrange(1000) for _ in range(n)]
            selected += sel.count(0)
            cols = {"id": pa.array(range(base, base + n), pa.int64()), "sel": pa.array(sel, pa.int32())}
            for c in INTS:
                cols[c] = pa.array([rnd.randrange(-2**62, 2**62) for _ in range(n)], pa.int64())
            for c in DBLS:
                cols[c] = pa.array([rnd.uniform(-1e9, 1e9) for _ in range(n)], pa.float64())
            w.write_table(pa.table(cols, schema=schema), row_group_size=rg)
    return {"rows": rows, "selected": selected, "row_groups": (rows + rg - 1) // rg}


def ensure_data(data_dir: Path, rows: int) -> tuple[Path, dict]:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / f"views-{rows}.parquet"
    meta_path = path.with_suffix(".json")
    if not path.exists() or not meta_path.exists():
        print(f"generating {path} ...", flush=True)
        tmp = path.with_suffix(".tmp")
        meta = make_table(tmp, rows)
        tmp.rename(path)
        meta_path.write_text(json.dumps(meta))
    return path, json.loads(meta_path.read_text())


# -- mounts and runs -------------------------------------------------------------------------
DUCK_SCRIPT = r"""
import duckdb, json, math, sys, time
con = duckdb.connect(config={"threads": int(sys.argv[2])})
con.execute("SET enable_progress_bar = false")
t = time.perf_counter()
rows = con.execute(sys.argv[1]).fetchall()
dt = time.perf_counter() - t
def norm(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v if isinstance(v, (int, float, str)) or v is None else str(v)
print("\nRESULT " + json.dumps({"rows": [[norm(v) for v in r] for r in rows], "seconds": dt}))
"""


def run_duck(query: str, threads: int) -> dict:
    r = subprocess.run([sys.executable, "-c", DUCK_SCRIPT, query, str(threads)], capture_output=True,
                       text=True, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(f"duckdb run failed: {r.stderr[-3000:]}")
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        raise SystemExit(f"duckdb run printed no result: {r.stdout[-2000:]!r} {r.stderr[-2000:]!r}")
    return json.loads(lines[-1][len("RESULT "):])


def write_hint(mp: Path, name: str, doc: dict) -> None:
    path = mp / ".sieve" / "hints" / f"{name}.json"
    try:
        with open(path, "w") as f:
            f.write(json.dumps(doc))
    except OSError as e:
        err = ""
        try:
            err = (mp / ".sieve" / "hints" / f"{name}.error").read_text().strip()
        except OSError:
            pass
        raise SystemExit(f"hint {doc} rejected: {e} {err}")


def one_run(moto, bucket: str, work: Path, tag: str, qname: str, mode: str, threads: int,
            request_cost: str) -> dict:
    with Mount(moto, bucket, work / f"mnt-{tag}",
               extra=("--force-path-style", "--request-cost", request_cost, "--warmup", "none")) as m:
        before = m.stats()
        t0 = time.perf_counter()
        root = m.mp
        if mode == "view":
            write_hint(m.mp, "q", HINT)
            root = m.mp / ".sieve" / "views" / "q"
        res = run_duck(QUERIES[qname].format(f=root / KEY), threads)
        total = time.perf_counter() - t0
        after = m.stats()
        vstats = None
        if mode == "view":
            vstats = json.loads((m.mp / ".sieve" / "hints" / "q.stats").read_bytes())
    return {"bytes": after["s3_bytes_fetched"] - before["s3_bytes_fetched"],
            "requests": after["s3_get_requests"] - before["s3_get_requests"],
            "query_s": res["seconds"], "total_s": total, "rows": res["rows"], "view_stats": vstats}


# -- report ------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--pairs", type=int, default=3, help="alternating plain/view pairs per query (>= 1)")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads")
    ap.add_argument("--queries", default="agg,rows", help="comma-separated subset of: agg, rows")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (moto log, mountpoints)")
    ap.add_argument("--data-dir", default=str(REPO / "tests" / "e2e" / ".data" / "bench"),
                    help="where the generated table is cached (deterministic, gitignored)")
    ap.add_argument("--out", help="also write the markdown report here")
    ap.add_argument("--request-cost", default="0",
                    help="sievefs --request-cost (default 0: on loopback a request costs next to nothing)")
    args = ap.parse_args()
    if args.pairs < 1:
        ap.error("--pairs must be >= 1")
    if args.rows < 10_000:
        ap.error("--rows must be >= 10000")
    qnames = [q for q in args.queries.split(",") if q]
    if not qnames or any(q not in QUERIES for q in qnames):
        ap.error(f"--queries: choose from {', '.join(QUERIES)}")
    if not os.access(BIN, os.X_OK):
        raise SystemExit(f"{BIN} not found: build first (or set SIEVEFS_BIN)")

    path, meta = ensure_data(Path(args.data_dir), args.rows)
    local = {q: run_duck(QUERIES[q].format(f=path), args.threads)["rows"] for q in qnames}
    work = Path(tempfile.mkdtemp(prefix="sievefs-bench-views-"))
    moto = s3env.MotoServer(auth=True, log_path=work / "moto.log")
    runs = {q: {"plain": [], "view": []} for q in qnames}
    try:
        moto.start()
        s3 = moto.client("s3")
        bucket = "bench-views"
        s3.create_bucket(Bucket=bucket)
        s3env.upload_file(s3, bucket, KEY, path)
        n = 0
        for q in qnames:
            for i in range(args.pairs):
                order = ("plain", "view") if i % 2 == 0 else ("view", "plain")
                for mode in order:
                    n += 1
                    r = one_run(moto, bucket, work, f"{n}-{q}-{mode}", q, mode, args.threads,
                                args.request_cost)
                    runs[q][mode].append(r)
                    print(f"{q} pair {i + 1}/{args.pairs} {mode:5}: {r['bytes']:>12,} B in {r['requests']:>6} GETs, "
                          f"query {r['query_s']:.2f} s", flush=True)
    finally:
        unmount_all(work)
        moto.stop()
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    size = path.stat().st_size
    ok = True
    out = ["# sievefs query-view benchmark (loopback)", "",
           f"{host_line()}; moto {moto_version()} via "
           f"tests/e2e/moto_launch.py; {time.strftime('%Y-%m-%d %H:%M')}", "",
           f"Table: {meta['rows']:,} rows x 20 columns (id, sel, 9 int64, 9 double), PLAIN, uncompressed, "
           f"page index, {meta['row_groups']} row groups, {fmt_bytes(size)}. "
           f"`sel = 0` selects {meta['selected']:,} rows ({100 * meta['selected'] / meta['rows']:.3f} %, scattered). "
           f"Hint: `{json.dumps(HINT)}`. {args.pairs} alternating pairs per query, fresh mount per run, "
           f"medians; DuckDB threads={args.threads}.", "",
           "| query | path | S3 bytes fetched | GET requests | query time | hint + query | same result |",
           "|---|---|---|---|---|---|---|"]
    summary = []
    for q in qnames:
        med = {}
        for mode in ("plain", "view"):
            rs = runs[q][mode]
            same = all(r["rows"] == local[q] for r in rs)
            ok &= same
            med[mode] = {k: statistics.median(r[k] for r in rs) for k in ("bytes", "requests", "query_s", "total_s")}
            out.append(f"| {q} | {mode} | {med[mode]['bytes']:,.0f} ({fmt_bytes(med[mode]['bytes'])}) | "
                       f"{med[mode]['requests']:,.0f} | {med[mode]['query_s']:.2f} s | {med[mode]['total_s']:.2f} s | "
                       f"{'yes' if same else 'NO'} |")
        ratio = med["view"]["bytes"] / med["plain"]["bytes"] if med["plain"]["bytes"] else float("inf")
        passed = ratio <= RATIO_LIMIT
        ok &= passed
        vs = runs[q]["view"][-1]["view_stats"] or {}
        summary.append(f"| {q} | **{ratio:.4f}** | {'pass' if passed else 'FAIL'} | "
                       f"{med['view']['requests'] / max(1, med['plain']['requests']):.2f} | "
                       f"{vs.get('pages_real', '?')} / {vs.get('pages_synthesized', '?')} / {vs.get('pages_partial', '?')} |")
    out += ["", f"| query | view / plain bytes (limit {RATIO_LIMIT}) | verdict | view / plain GETs | "
                "view pages real / synthesized / partial (last run) |", "|---|---|---|---|---|"] + summary
    out.append("")
    out.append("Result: " + ("PASS" if ok else "FAIL") + " (every result identical to the local file's, "
               f"every median ratio <= {RATIO_LIMIT})")
    text = "\n".join(out)
    print()
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
