"""scripts/bench-foundation: loopback measurements of the sievefs foundation.

(a) Read amplification of a selective DuckDB query on a ~150 MB Parquet file:
    s3_bytes_fetched (from MOUNT/.sieve/stats, delta over the query) divided by
    the bytes DuckDB itself read from the file. The latter is measured by
    running the same query on the local copy under
      strace -f -y -s 0 -e trace=read,pread64,preadv,preadv2 -e signal=none
    and summing the return values of the calls whose fd is that file (-y makes
    strace print each fd's path). As a cross-check the query is also run
    through a second, fresh mount under strace: the bytes DuckDB reads there
    should equal the local figure.

(b) Throughput: `cat MOUNT/obj > /dev/null` (1 GiB) vs `curl` downloading the
    same object from the same moto with SigV4 signing, alternating which goes
    first, N pairs, medians. Each sievefs run uses a fresh mount (no page cache,
    empty block cache); only the cat is timed.

moto is started through tests/e2e/moto_launch.py, whose ranged-GET patch makes
moto read only the requested bytes (stock moto reads the whole object for every
ranged GET, which would make (b) measure moto). SigV4 verification stays on.
Timings on a 2-core VM are noisy; the numbers are informative, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
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
import strace_reads  # noqa: E402
from bench_mount import Mount, fmt_bytes, host_line, moto_version, unmount_all  # noqa: E402

BIN = os.environ.get("SIEVEFS_BIN", str(REPO / "build" / "sievefs"))
MiB = 1 << 20

SELECTIVE_QUERY = ("SELECT count(*), sum(qty), min(price), max(price) FROM read_parquet('{f}') "
                   "WHERE id BETWEEN {lo} AND {hi}")


# -- data -------------------------------------------------------------------------------
def make_parquet(path: Path, target_mb: int) -> dict:
    """~target_mb of Parquet: 14 columns, row groups of 100k rows, id sorted
    (so row-group statistics let a range filter skip most of the file),
    payload columns of incompressible-ish data."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import random
    rows_per_group = 100_000
    # ~120 bytes/row after compression with the columns below
    groups = max(2, int(target_mb * MiB / (rows_per_group * 118)))
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("ms")), ("qty", pa.int32()),
                        ("price", pa.float64()), ("cat", pa.string())]
                       + [(f"m{i}", pa.float64()) for i in range(7)]
                       + [("tag", pa.string()), ("blob", pa.binary())])
    with pq.ParquetWriter(path, schema, compression="snappy") as w:
        for g in range(groups):
            rnd = random.Random(f"bench-parquet-{g}")
            base = g * rows_per_group
            n = rows_per_group
            cols = {
                "id": pa.array(range(base, base + n), pa.int64()),
                "ts": pa.array([1_700_000_000_000 + (base + i) * 10 for i in range(n)], pa.timestamp("ms")),
                "qty": pa.array([rnd.randrange(1000) for _ in range(n)], pa.int32()),
                "price": pa.array([rnd.random() * 100 for _ in range(n)], pa.float64()),
                "cat": pa.array([rnd.choice("abcdefgh") for _ in range(n)], pa.string()),
            }
            for i in range(7):
                cols[f"m{i}"] = pa.array([rnd.random() for _ in range(n)], pa.float64())
            cols["tag"] = pa.array([f"t{rnd.randrange(10**6)}" for _ in range(n)], pa.string())
            cols["blob"] = pa.array([rnd.randbytes(24) for _ in range(n)], pa.binary())
            w.write_table(pa.table(cols, schema=schema), row_group_size=rows_per_group)
    rows = groups * rows_per_group
    return {"rows": rows, "row_groups": groups}


def ensure_data(data_dir: Path, parquet_mb: int, big_gib: float) -> tuple[Path, Path, dict]:
    data_dir.mkdir(parents=True, exist_ok=True)
    pq_path = data_dir / f"bench-{parquet_mb}mb.parquet"
    meta_path = pq_path.with_suffix(".json")
    if not pq_path.exists() or not meta_path.exists():
        print(f"generating {pq_path} ...", flush=True)
        meta = make_parquet(pq_path.with_suffix(".tmp"), parquet_mb)
        pq_path.with_suffix(".tmp").rename(pq_path)
        meta_path.write_text(json.dumps(meta))
    meta = json.loads(meta_path.read_text())
    big_size = int(big_gib * (1 << 30))
    big_path = data_dir / f"bench-{big_size}.bin"
    if not big_path.exists() or big_path.stat().st_size != big_size:
        print(f"generating {big_path} ...", flush=True)
        s3env.write_det_file(big_path.with_suffix(".tmp"), "bench-big", big_size)
        big_path.with_suffix(".tmp").rename(big_path)
    return pq_path, big_path, meta


# -- mount helpers --------------------------------------------------------------------------
# -- (a) -------------------------------------------------------------------------------------
DUCK_SCRIPT = r"""
import duckdb, json, sys, time
con = duckdb.connect(config={"threads": int(sys.argv[2])})
t = time.perf_counter()
rows = con.execute(sys.argv[1]).fetchall()
print(json.dumps({"rows": rows, "seconds": time.perf_counter() - t}))
"""


def run_duck(query: str, threads: int, trace: Path | None = None) -> dict:
    cmd = [sys.executable, "-c", DUCK_SCRIPT, query, str(threads)]
    if trace is not None:
        cmd = strace_reads.traced(cmd, trace)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise SystemExit(f"duckdb run failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench_a(moto, work: Path, pq_path: Path, meta: dict, threads: int) -> dict:
    s3 = moto.client("s3")
    bucket = "bench-parquet"
    s3.create_bucket(Bucket=bucket)
    key = "tables/bench/part-00000.parquet"
    s3env.upload_file(s3, bucket, key, pq_path)
    size = pq_path.stat().st_size
    rows = meta["rows"]
    lo, hi = rows // 2, rows // 2 + rows // 100  # 1% of the rows, inside one or two row groups

    # through the mount, not traced
    with Mount(moto, bucket, work / "mnt-a") as m:
        f = m.mp / key
        before = m.stats()
        res_mount = run_duck(SELECTIVE_QUERY.format(f=f, lo=lo, hi=hi), threads)
        after = m.stats()
    d = {k: after[k] - before[k] for k in after if isinstance(after[k], int) and k in before}

    # local copy under strace: what DuckDB itself reads
    trace_local = work / "strace-local.txt"
    res_local = run_duck(SELECTIVE_QUERY.format(f=pq_path, lo=lo, hi=hi), threads, trace_local)
    duck_bytes, duck_calls = strace_reads.bytes_read(trace_local, str(pq_path))

    # cross-check: fresh mount, traced
    trace_mount = work / "strace-mount.txt"
    with Mount(moto, bucket, work / "mnt-a2") as m2:
        f2 = m2.mp / key
        b2 = m2.stats()
        run_duck(SELECTIVE_QUERY.format(f=f2, lo=lo, hi=hi), threads, trace_mount)
        a2 = m2.stats()
        duck_bytes_mount, _ = strace_reads.bytes_read(trace_mount, str(f2))
    return {
        "file_size": size, "rows": rows, "row_groups": meta["row_groups"],
        "query": SELECTIVE_QUERY.format(f="FILE", lo=lo, hi=hi),
        "same_result": res_mount["rows"] == res_local["rows"],
        "duck_bytes_local": duck_bytes, "duck_calls_local": duck_calls,
        "duck_bytes_mount": duck_bytes_mount,
        "s3_bytes_fetched": d["s3_bytes_fetched"], "s3_requests": d["s3_requests"],
        "fuse_read_bytes": d["fuse_read_bytes"], "fuse_reads": d["fuse_reads"],
        "s3_bytes_fetched_traced_run": a2["s3_bytes_fetched"] - b2["s3_bytes_fetched"],
        "seconds_mount": res_mount["seconds"], "seconds_local": res_local["seconds"],
    }


# -- (b) -------------------------------------------------------------------------------------
def bench_b(moto, work: Path, big_path: Path, pairs: int) -> dict:
    s3 = moto.client("s3")
    bucket = "bench-big"
    s3.create_bucket(Bucket=bucket)
    key = "blobs/big.bin"
    t = time.perf_counter()
    s3env.upload_file(s3, bucket, key, big_path)
    print(f"uploaded {big_path.stat().st_size / MiB:.0f} MiB to moto in {time.perf_counter() - t:.1f} s", flush=True)
    size = big_path.stat().st_size
    url = f"{moto.endpoint}/{bucket}/{key}"
    cat_s, curl_s, fetched = [], [], []

    def run_cat(i):
        with Mount(moto, bucket, work / f"mnt-b{i}") as m:
            p = m.mp / key
            assert p.stat().st_size == size
            before = m.stats()
            t0 = time.perf_counter()
            r = subprocess.run(["cat", str(p)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=1800)
            dt = time.perf_counter() - t0
            if r.returncode != 0:
                raise SystemExit(f"cat failed: {r.stderr.decode()}")
            fetched.append(m.stats()["s3_bytes_fetched"] - before["s3_bytes_fetched"])
        cat_s.append(dt)

    def run_curl():
        t0 = time.perf_counter()
        r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                            *s3env.curl_sigv4_args(moto.creds), url],
                           capture_output=True, text=True, env=s3env.clean_env(), timeout=1800)
        dt = time.perf_counter() - t0
        code, got = r.stdout.split()
        if r.returncode != 0 or code != "200" or int(got) != size:
            raise SystemExit(f"curl failed: {r.stdout} {r.stderr}")
        curl_s.append(dt)

    for i in range(pairs):
        order = (run_cat, run_curl) if i % 2 == 0 else (run_curl, run_cat)
        for fn in order:
            fn(i) if fn is run_cat else fn()
        print(f"pair {i + 1}/{pairs}: cat {cat_s[-1]:.2f} s, curl {curl_s[-1]:.2f} s", flush=True)
    return {"size": size, "pairs": pairs, "cat_s": cat_s, "curl_s": curl_s, "fetched": fetched}


# -- report ----------------------------------------------------------------------------------
def report(a: dict | None, b: dict | None, args) -> str:
    out = ["# sievefs foundation benchmark (loopback)", ""]
    out.append(f"{host_line()}; "
               f"server: moto {moto_version()} via tests/e2e/moto_launch.py (ranged GETs read only the range; "
               f"SigV4 verified); {time.strftime('%Y-%m-%d %H:%M')}")
    out.append("")
    if a:
        ratio = a["s3_bytes_fetched"] / a["duck_bytes_local"] if a["duck_bytes_local"] else float("nan")
        out += ["## (a) Read amplification, selective DuckDB query", "",
                f"File: {fmt_bytes(a['file_size'])}, {a['rows']:,} rows, {a['row_groups']} row groups, 14 columns. "
                f"Query: `{a['query']}` (DuckDB threads={args.threads}).", "",
                "| measure | value |", "|---|---|",
                f"| bytes DuckDB read from the local copy (strace) | {a['duck_bytes_local']:,} ({fmt_bytes(a['duck_bytes_local'])}, {a['duck_calls_local']} calls) |",
                f"| bytes DuckDB read through the mount (strace, fresh mount) | {a['duck_bytes_mount']:,} |",
                f"| FUSE read bytes (kernel → sievefs) | {a['fuse_read_bytes']:,} in {a['fuse_reads']} reads |",
                f"| **S3 bytes fetched** | **{a['s3_bytes_fetched']:,}** ({fmt_bytes(a['s3_bytes_fetched'])}) in {a['s3_requests']} requests |",
                f"| **ratio S3 bytes fetched / DuckDB bytes** | **{ratio:.2f}** |",
                f"| S3 bytes fetched / file size | {a['s3_bytes_fetched'] / a['file_size']:.3f} |",
                f"| same result as local | {'yes' if a['same_result'] else 'NO'} |",
                f"| query time mount / local (informative) | {a['seconds_mount']:.2f} s / {a['seconds_local']:.2f} s |",
                ""]
    if b:
        mc, mu = statistics.median(b["cat_s"]), statistics.median(b["curl_s"])
        tc, tu = b["size"] / mc / MiB, b["size"] / mu / MiB
        out += ["## (b) Sequential throughput, 1 object", "",
                f"Object: {fmt_bytes(b['size'])}; {b['pairs']} alternating pairs; each `cat` on a fresh mount.", "",
                "| run | `cat` via sievefs (s) | `curl` SigV4 (s) |", "|---|---|---|"]
        out += [f"| {i + 1} | {c:.2f} | {u:.2f} |" for i, (c, u) in enumerate(zip(b["cat_s"], b["curl_s"]))]
        out += ["",
                "| | sievefs `cat` | `curl` |", "|---|---|---|",
                f"| median time | {mc:.2f} s | {mu:.2f} s |",
                f"| median throughput | {tc:,.0f} MiB/s | {tu:,.0f} MiB/s |",
                f"| **throughput ratio sievefs / curl** | **{tc / tu:.2f}** | |",
                f"| S3 bytes fetched per cat (median) | {fmt_bytes(statistics.median(b['fetched']))} | |",
                ""]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parquet-mb", type=int, default=150)
    ap.add_argument("--big-gib", type=float, default=1.0)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads")
    ap.add_argument("--only", choices=["a", "b"])
    ap.add_argument("--data-dir", default=str(REPO / "tests" / "e2e" / ".data" / "bench"),
                    help="where generated inputs are cached (deterministic, gitignored)")
    ap.add_argument("--out", help="also write the markdown report here")
    args = ap.parse_args()
    if args.pairs < 1:
        ap.error("--pairs must be >= 1")
    if not os.access(BIN, os.X_OK):
        raise SystemExit(f"{BIN} not found: build first")
    if not strace_reads.available() and args.only != "b":
        raise SystemExit("strace is needed for (a): apt-get install strace (scripts/setup does)")
    pq_path, big_path, meta = ensure_data(Path(args.data_dir), args.parquet_mb,
                                          args.big_gib if args.only != "a" else 0.001)
    work = Path(tempfile.mkdtemp(prefix="sievefs-bench-"))
    moto = s3env.MotoServer(auth=True, log_path=work / "moto.log")
    a = b = None
    try:
        moto.start()
        if args.only in (None, "a"):
            print("(a) read amplification ...", flush=True)
            a = bench_a(moto, work, pq_path, meta, args.threads)
        if args.only in (None, "b"):
            print("(b) throughput ...", flush=True)
            b = bench_b(moto, work, big_path, args.pairs)
    finally:
        unmount_all(work)
        moto.stop()
        shutil.rmtree(work, ignore_errors=True)
    text = report(a, b, args)
    print()
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
