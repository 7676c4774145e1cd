"""The slow world (scripts/bench-retries): DuckDB through sievefs's plain path
on a wide Parquet file served by s3link with a low per-prefix request cap (S3
answers 503 SlowDown past it) over a link the query saturates, with sievefs's
retries on (its defaults) and off (--retry-budget 0), alternating, medians.
What it shows: the bytes on the wire against the bytes the reader needed
(a retry storm sends the same bytes again and again), the time, and
sievefs's own counters (retries, stalls, waits for the retry quota, errors).

    scripts/bench-retries [--file F] [--get-rate 300] [--profile wan] [--pairs 3]
                          [--bin A --bin B ...]     # several binaries: each gets both runs
    scripts/bench-retries --probe-bin build/store_probe [--probe-bin OLD/store_probe] \
                          [--workers 4 --service-ms 20] [-k 512] [-n 3000] [--stall-timeout 2200]

The second form drives the S3 client alone (tests/tools/store_probe: N
ranged GETs of 4 KiB, K in flight) against the same server: a server slower
than the load (--workers/--service-ms: FIFO service) or a request cap
(--get-rate) show whether the client's deadlines and retries add load.

Not a test: it prints markdown. Results are checked against DuckDB reading
the local file; a run whose answer differs (or that fails) is reported as such.
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
sys.path.insert(0, str(REPO / "scripts" / "lib"))
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402
import s3servers  # noqa: E402

DEFAULT_FILE = REPO / "tests" / "e2e" / ".data" / "bench" / "lineitem_w90_none_pyarrow" / "part-00000.parquet"

QUERY = r"""
import duckdb, json, sys, time
path, pred = sys.argv[1], sys.argv[2]
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()]
nums = [c for c in cols if c.endswith(("_i64", "_f64", "_dec")) or c in ("l_quantity", "l_extendedprice")][:70]
sql = f"SELECT count(*), " + ", ".join(f"sum({c})" for c in nums) + f" FROM read_parquet('{path}') WHERE {pred}"
t = time.monotonic()
row = con.execute(sql).fetchone()
print(json.dumps({"s": time.monotonic() - t, "row": [str(v) for v in row]}))
"""


def run_query(path: Path, pred: str, timeout: float) -> dict:
    r = subprocess.run([sys.executable, "-c", QUERY, str(path), pred], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def mount(binary: str, srv, bucket: str, mp: Path, args: list[str]) -> subprocess.Popen:
    env = s3env.clean_env()
    env.update(srv.creds.env())
    argv = [binary, "mount", f"s3://{bucket}", str(mp), "--endpoint", srv.endpoint, "--force-path-style",
            "--region", "us-east-1", "-f", *args]
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env, start_new_session=True)
    s3env.wait_mounted(mp, p, 60)
    return p


def one_run(binary: str, srv, bucket: str, key: str, pred: str, retries: bool, warmup: str, timeout: float,
            work: Path, view: bool, extra: list[str]) -> dict:
    mp = Path(tempfile.mkdtemp(prefix="mnt-", dir=work))
    args = ["--warmup", warmup] + ([] if retries else ["--retry-budget", "0"]) + extra
    p = mount(binary, srv, bucket, mp, args)
    try:
        path = mp / key
        if view:
            r = subprocess.run([binary, "hint", str(mp), "q", "--where", pred], capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"hint rejected: {r.stderr}")
            path = mp / ".sieve" / "views" / "q" / key
        if warmup != "none":  # the profile first, as a user's mount has it before a query
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                prof = json.loads((mp / ".sieve" / "profile").read_text() or "{}")
                if prof.get("state") in ("done", "failed"):
                    break
                time.sleep(0.5)
        srv.reset_stats()
        before = json.loads((mp / ".sieve" / "stats").read_text())
        t = time.monotonic()
        res = run_query(path, pred, timeout)
        res["wall_s"] = time.monotonic() - t
        after = json.loads((mp / ".sieve" / "stats").read_text())
        wire = srv.stats()
        res["sievefs"] = {k: after.get(k, 0) - before.get(k, 0) for k in
                          ("s3_get_requests", "s3_bytes_fetched", "retries", "stalls", "retry_quota_waits",
                           "errors")}
        res["wire_bytes"] = wire.get("bytes_sent_body", wire.get("body_bytes_sent", 0))
        res["wire_requests"] = wire.get("requests", {}).get("get", 0) if isinstance(wire.get("requests"), dict) \
            else wire.get("requests", 0)
        res["slowdown_503"] = wire.get("slowdown_503", 0)
    finally:
        subprocess.run(["fusermount3", "-u", str(mp)], capture_output=True)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
        shutil.rmtree(mp, ignore_errors=True)
    return res


def probe_runs(a, srv, bucket: str, key: str, size: int) -> None:
    env = s3env.clean_env()
    env.update(srv.creds.env())
    rows = {}
    for pair in range(a.pairs):
        order = list(a.probe_bin) if pair % 2 == 0 else list(reversed(a.probe_bin))
        for b in order:
            srv.reset_stats()
            r = subprocess.run([b, "--client", "sievefs", "--endpoint", srv.endpoint, "--bucket", bucket, "--key", key,
                                "--size", str(size), "-n", str(a.n), "-k", str(a.k), "--range", "4096",
                                "--stall-timeout", str(a.stall_timeout)], capture_output=True, text=True, env=env,
                               timeout=a.timeout)
            out = json.loads(r.stdout) if r.stdout.strip() else {"error": r.stderr.strip()[-200:]}
            st = srv.stats()
            out.update(wire=st["bytes_sent_body"], server_gets=st["requests"].get("get", 0),
                       slowdown=st["slowdown_503"])
            rows.setdefault(b, []).append(out)
            print(f"pair {pair + 1} {b}: {out}", file=sys.stderr, flush=True)
    print(f"# The S3 client under load: s3link `{a.profile}`, {a.get_rate:g} GETs/s per prefix"
          f"{f', a server of {a.workers or 1} worker(s) taking {a.service_ms:g} ms a request' if a.service_ms else ''}\n")
    print(f"`store_probe`: {a.n} ranged GETs of 4 KiB, {a.k} in flight, first-byte deadline {a.stall_timeout} ms "
          f"(as the warmup sets on a quiet link); {a.pairs} alternating runs, medians.\n")
    print("| client | seconds | GETs the server saw (for %d) | 503s | retries | failed GETs | wire ÷ needed |" % a.n)
    print("|---|---|---|---|---|---|---|")
    for b, rs in rows.items():
        med = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
        print(f"| `{b}` | {med(lambda r: r.get('seconds', float('nan'))):.1f} | {med(lambda r: r['server_gets']):.0f} | "
              f"{med(lambda r: r['slowdown']):.0f} | {med(lambda r: r.get('retries', 0)):.0f} | "
              f"{med(lambda r: r.get('errors', 0)):.0f} | {med(lambda r: r['wire']) / (a.n * 4096):.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE, help="a wide Parquet file (default: the bench's "
                    "90-column pyarrow file; scripts/bench --quick makes it)")
    ap.add_argument("--pred", default="l_quantity >= 0", help="DuckDB WHERE (default: every row, a full scan)")
    ap.add_argument("--profile", default="wan")
    ap.add_argument("--mbit", type=float, default=None, help="override the profile's bandwidth")
    ap.add_argument("--get-rate", type=float, default=300.0, help="s3link's GETs/s per prefix (503 past it; 0: none)")
    ap.add_argument("--workers", type=int, default=0, help="s3link --workers: a slow server (with --service-ms)")
    ap.add_argument("--service-ms", type=float, default=0.0, help="s3link --service-ms: each request's service time")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--bin", action="append", help="sievefs binaries (default build/sievefs)")
    ap.add_argument("--warmup", default="automatic", help="sievefs --warmup (automatic: as users mount)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--view", action="store_true", help="read through a view of a hint with the same predicate "
                    "(many small GETs) instead of the plain path")
    ap.add_argument("--sievefs-args", default="", help="extra sievefs mount arguments, e.g. '--request-cost 0'")
    ap.add_argument("--probe-bin", action="append", help="store_probe binaries: drive the S3 client alone")
    ap.add_argument("-k", type=int, default=512, help="--probe-bin: GETs in flight")
    ap.add_argument("-n", type=int, default=3000, help="--probe-bin: GETs")
    ap.add_argument("--stall-timeout", type=int, default=2200, help="--probe-bin: first-byte deadline (ms)")
    a = ap.parse_args()
    if not a.file.exists():
        raise SystemExit(f"{a.file} not found: run scripts/bench --quick once, or give --file")
    binaries = a.bin or [str(REPO / "build" / "sievefs")]
    want = None if a.probe_bin else run_query(a.file, a.pred, a.timeout)["row"]
    work = Path(tempfile.mkdtemp(prefix="bench-retries-"))
    root = work / "root"
    bucket, key = "retries", f"t/{a.file.name}"
    (root / bucket / "t").mkdir(parents=True)
    os.link(a.file, root / bucket / key) if os.stat(a.file).st_dev == os.stat(root).st_dev else \
        shutil.copy(a.file, root / bucket / key)
    extra = [f"--workers={a.workers}", f"--service-ms={a.service_ms}"] if a.service_ms else []
    srv = s3servers.S3Link(root=root, log_path=work / "s3link.log", profile=a.profile, mbit=a.mbit,
                           get_rate=a.get_rate, extra_args=extra).start()
    try:
        if a.probe_bin:
            probe_runs(a, srv, bucket, key, a.file.stat().st_size)
            return
        runs: dict = {}
        for pair in range(a.pairs):
            order = [(b, r) for b in binaries for r in (True, False)]
            if pair % 2:
                order.reverse()
            for b, retries in order:
                res = one_run(b, srv, bucket, key, a.pred, retries, a.warmup, a.timeout, work, a.view,
                              a.sievefs_args.split())
                res["same"] = res.get("row") == want
                runs.setdefault((b, retries), []).append(res)
                print(f"pair {pair + 1} {Path(b).name} retries={'on' if retries else 'off'}: "
                      f"{res.get('wall_s', 0):.1f} s, wire {res.get('wire_bytes', 0) / 1e6:.1f} MB, "
                      f"sievefs {res.get('sievefs', {})}, 503s {res.get('slowdown_503')}, "
                      f"{'same' if res['same'] else 'DIFFERENT: ' + str(res.get('error') or res.get('row'))}",
                      file=sys.stderr, flush=True)
        size = a.file.stat().st_size
        print(f"# Retries in the slow world: s3link `{a.profile}`"
              f"{f' at {a.mbit:g} Mbit/s' if a.mbit else ''}, {a.get_rate:g} GETs/s per prefix"
              f"{f', a server of {a.workers or 1} worker(s) taking {a.service_ms:g} ms a request' if a.service_ms else ''}\n")
        print(f"DuckDB, `count(*)` and 70 sums `WHERE {a.pred}` over `{a.file.name}` ({size / 1e6:.1f} MB) through "
              f"{'a view of a hint with that predicate' if a.view else 'the plain path'}"
              f"{f' (mount arguments `{a.sievefs_args}`)' if a.sievefs_args else ''}; {a.pairs} alternating runs "
              f"per row, medians; wire = body bytes s3link sent.\n")
        print("| sievefs | retries | query s | wire MB | wire ÷ file | GETs sent | 503s | retries | stalls | "
              "quota waits | errors | right answers |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for (b, retries), rs in runs.items():
            def med(f):
                vals = [f(r) for r in rs if "error" not in r]
                return statistics.median(vals) if vals else float("nan")
            ok = sum(r["same"] for r in rs)
            print(f"| `{Path(b).name}` | {'on' if retries else 'off'} | {med(lambda r: r['wall_s']):.1f} | "
                  f"{med(lambda r: r['wire_bytes']) / 1e6:.1f} | {med(lambda r: r['wire_bytes']) / size:.2f} | "
                  f"{med(lambda r: r['sievefs']['s3_get_requests']):.0f} | {med(lambda r: r['slowdown_503']):.0f} | "
                  f"{med(lambda r: r['sievefs']['retries']):.0f} | {med(lambda r: r['sievefs']['stalls']):.0f} | "
                  f"{med(lambda r: r['sievefs']['retry_quota_waits']):.0f} | "
                  f"{med(lambda r: r['sievefs']['errors']):.0f} | {ok}/{len(rs)} |")
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
