"""The soak benchmark (not a test): many concurrent readers on one mount for
minutes, with faults injected at a low rate, reporting what a long-running
mount must keep: no unexpected error, no wrong result, memory within the
budget, no leaked file descriptors or threads, and read latencies.

Setup: moto (signature checks on) behind the fault proxy (tests/e2e/
faultproxy.py) on 127.0.0.1; a table of Parquet files written by pyarrow and
by DuckDB plus raw objects; one sievefs mount (`--cache-size`, the budget
checked) and one view (a hint on the table). Each reader thread loops over a
random mix of:
  * raw pread of a random range of a raw object, compared with its bytes;
  * pyarrow reading a file with a filter, through the plain path or the view;
  * DuckDB counting and summing the table with a predicate, plain or view;
every result compared with the same read of the local files. Faults: a
fraction (--fault-rate) of GETs get a 503, a reset, a truncated body or a
stalled first byte, all of which the mount must retry invisibly.

Report: operations, unexpected errors, wrong results, daemon RSS (peak of
samples every 0.5 s, and VmHWM) against the cache size, fds and threads of
the daemon before and after, p50/p99 latency per kind of operation."""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts" / "lib"))
import s3env  # noqa: E402
from bench_mount import BIN, host_line  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402

MiB = 1 << 20
HINTED_K = 500  # the view's hint selects k < 500: readers of the view ask for k = K below it


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0, help="how long the readers run (default 10)")
    p.add_argument("--readers", type=int, default=64, help="concurrent reader threads (default 64)")
    p.add_argument("--cache-size", default="64M", help="the mount's --cache-size, the budget (default 64M, below the data)")
    p.add_argument("--fault-rate", type=float, default=0.01,
                   help="fraction of GETs given a fault (default 0.01)")
    p.add_argument("--rows", type=int, default=400_000, help="rows of the table, over 4 files")
    p.add_argument("--out", help="also write the report (markdown) here")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    return p.parse_args(argv)


def make_data(work: Path, rows: int) -> dict:
    """Local copies of everything uploaded: {key: Path}."""
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq
    files = {}
    per = rows // 4
    rng = random.Random(7)
    for i in range(4):
        n = per
        base = i * per
        t = pa.table({
            "id": pa.array(range(base, base + n), pa.int64()),
            "k": pa.array([rng.randrange(1000) for _ in range(n)], pa.int32()),
            "v": pa.array([rng.random() for _ in range(n)], pa.float64()),
            "s": pa.array([f"s{rng.randrange(50_000):06d}" for _ in range(n)]),
            "d": pa.array([rng.randrange(1 << 40) for _ in range(n)], pa.int64()),
        })
        key = f"tbl/part-{i}.parquet"
        path = work / "data" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        if i % 2 == 0:
            pq.write_table(t, path, row_group_size=50_000, write_page_index=True)
        else:
            con = duckdb.connect()
            con.register("t", t)
            con.execute(f"COPY t TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 50000)")
            con.close()
        files[key] = path
    for i in range(3):
        key = f"raw/blob-{i}.bin"
        path = work / "data" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        s3env.write_det_file(path, f"soak-{i}", 24 * MiB + i * 4097)
        files[key] = path
    return files


def proc_status(pid: int) -> dict:
    out = {}
    try:
        for line in open(f"/proc/{pid}/status"):
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "Threads"):
                out[k] = int(v.split()[0]) * (1024 if k != "Threads" else 1)
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    return out


class Soak:
    def __init__(self, mp: Path, files: dict, view: Path, deadline: float):
        self.mp, self.files, self.view, self.deadline = mp, files, view, deadline
        self.lat = {}
        self.errors = []
        self.wrong = []
        self.ops = 0
        self.lock = threading.Lock()
        self.raw = {k: p.read_bytes() for k, p in files.items() if k.startswith("raw/")}
        self.expect = {}  # (kind, file, param) -> result from the local files

    def record(self, kind, seconds, err=None, wrong=None):
        with self.lock:
            self.ops += 1
            self.lat.setdefault(kind, []).append(seconds)
            if err:
                self.errors.append(f"{kind}: {err}")
            if wrong:
                self.wrong.append(f"{kind}: {wrong}")

    def local(self, key, fn):
        with self.lock:
            if key in self.expect:
                return self.expect[key]
        v = fn()
        with self.lock:
            self.expect[key] = v
        return v

    def op_raw(self, rng):
        key = rng.choice(sorted(self.raw))
        data = self.raw[key]
        off = rng.randrange(len(data))
        n = rng.choice([4096, 65536, MiB, 4 * MiB])
        t0 = time.monotonic()
        with open(self.mp / key, "rb", buffering=0) as f:
            got = os.pread(f.fileno(), n, off)
        dt = time.monotonic() - t0
        self.record("raw pread", dt, wrong=None if got == data[off:off + n] else f"{key} at {off}")

    def op_pyarrow(self, rng):
        import pyarrow.parquet as pq
        key = rng.choice([k for k in self.files if k.startswith("tbl/")])
        k = rng.randrange(HINTED_K)
        in_view = rng.random() < 0.5
        path = self.view / key.split("/", 1)[1] if in_view else self.mp / key  # the view shows tbl/
        t0 = time.monotonic()
        t = pq.read_table(path, columns=["id", "k", "s"], filters=[("k", "=", k)])
        dt = time.monotonic() - t0
        want = self.local(("pa", key, k), lambda: sorted(
            pq.read_table(self.files[key], columns=["id", "k", "s"], filters=[("k", "=", k)])
            .column("id").to_pylist()))
        got = sorted(t.column("id").to_pylist())
        kind = "pyarrow " + ("view" if in_view else "plain")
        self.record(kind, dt, wrong=None if got == want else f"{key} k={k}: {len(got)} rows, want {len(want)}")

    def op_duckdb(self, rng):
        import duckdb
        k = rng.randrange(HINTED_K)
        in_view = rng.random() < 0.5
        root = self.view if in_view else self.mp / "tbl"
        sql = "SELECT count(*), sum(id), min(s) FROM read_parquet('{}/*.parquet') WHERE k = {}"
        t0 = time.monotonic()
        con = duckdb.connect()
        con.execute("SET threads = 2")
        got = con.execute(sql.format(root, k)).fetchone()
        con.close()
        dt = time.monotonic() - t0

        def local():
            c = duckdb.connect()
            v = c.execute(sql.format(self.files["tbl/part-0.parquet"].parent, k)).fetchone()
            c.close()
            return v
        want = self.local(("duck", k), local)
        kind = "duckdb " + ("view" if in_view else "plain")
        self.record(kind, dt, wrong=None if got == want else f"k={k}: {got} want {want}")

    def reader(self, seed):
        rng = random.Random(seed)
        while time.monotonic() < self.deadline:
            op = rng.choices([self.op_raw, self.op_pyarrow, self.op_duckdb], weights=[5, 3, 1])[0]
            try:
                op(rng)
            except Exception as e:  # noqa: BLE001
                self.record(op.__name__, 0.0, err=f"{type(e).__name__}: {e}")
                if len(self.errors) < 5:
                    traceback.print_exc()


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main(argv=None) -> int:
    a = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="sieve-soak-"))
    moto = s3env.MotoServer(auth=True, log_path=work / "moto.log").start()
    proxy = FaultProxy(moto.endpoint).start()
    proxy.record = False
    mp = work / "mnt"
    mp.mkdir()
    lines = []
    try:
        files = make_data(work, a.rows)
        s3 = moto.client()
        s3.create_bucket(Bucket="soak")
        for key, path in files.items():
            s3env.upload_file(s3, "soak", key, path)
        env = s3env.clean_env(extra=moto.creds.env())
        argv = [BIN, "mount", "s3://soak", str(mp), "--endpoint", proxy.endpoint, "--force-path-style",
                "--cache-size", a.cache_size, "--warmup", "none"]
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"mount failed: {r.stderr}")
        pid = s3env.procs_matching(BIN, str(mp))[0]
        hint = mp / ".sieve" / "hints" / "soak.json"
        hint.write_text(json.dumps({"table": "tbl", "where": f"k < {HINTED_K}", "columns": ["id", "k", "s"]}))
        err = mp / ".sieve" / "hints" / "soak.error"
        if err.exists() and err.read_text().strip():
            raise SystemExit(f"the hint was refused: {err.read_text()}")
        view = mp / ".sieve" / "views" / "soak"
        before = proc_status(pid)
        for kind in ("status", "reset", "truncate_body", "stall"):
            params = {"rate": a.fault_rate / 4}
            if kind == "status":
                params["status"] = 503
            if kind == "stall":
                params["seconds"] = 3
            proxy.add("get", kind, **params)
        t0 = time.monotonic()
        soak = Soak(mp, files, view, t0 + a.minutes * 60)

        peak = {"rss": 0, "held": 0, "cache": 0, "outside": 0}
        stop = threading.Event()

        def sample():
            # RSS, and what the one budget holds (cache blocks and the rest), at their peaks
            while not stop.wait(0.5):
                peak["rss"] = max(peak["rss"], proc_status(pid).get("VmRSS", 0))
                try:
                    s = json.loads((mp / ".sieve" / "stats").read_bytes())
                except (OSError, ValueError):
                    continue
                c, o = s.get("cache_bytes", 0), s.get("memory_outside_cache_bytes", 0)
                peak["cache"], peak["outside"] = max(peak["cache"], c), max(peak["outside"], o)
                peak["held"] = max(peak["held"], c + o)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        threads = [threading.Thread(target=soak.reader, args=(i,)) for i in range(a.readers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        elapsed = time.monotonic() - t0
        injected = sum(f.hits for f in proxy.faults)
        proxy.clear()
        time.sleep(2)
        after = proc_status(pid)
        st = json.loads((mp / ".sieve" / "stats").read_bytes())
        lines += [
            "# Soak", "",
            f"- {host_line()}; sievefs `{BIN}`",
            f"- {a.readers} reader threads for {elapsed / 60:.1f} min; moto behind the fault proxy; "
            f"`--cache-size {a.cache_size}`; faults on {a.fault_rate:.1%} of GETs (503, reset, truncated "
            f"body, 3 s stalled first byte): {injected} injected; mount retries {st.get('retries')}",
            f"- operations: {soak.ops}; unexpected errors: {len(soak.errors)}; wrong results: {len(soak.wrong)}",
            f"- daemon RSS: peak of samples {peak['rss'] / MiB:.0f} MiB, VmHWM {after.get('VmHWM', 0) / MiB:.0f} MiB "
            f"(cache size {a.cache_size}); before {before.get('VmRSS', 0) / MiB:.0f} MiB, after "
            f"{after.get('VmRSS', 0) / MiB:.0f} MiB",
            f"- the budget's peak use: {peak['held'] / MiB:.1f} MiB (cache blocks at most {peak['cache'] / MiB:.1f} "
            f"MiB, footers, page maps, partial reads and listings at most {peak['outside'] / MiB:.1f} MiB); "
            f"peak RSS less the budget's peak use: {(peak['rss'] - peak['held']) / MiB:.0f} MiB",
            f"- daemon fds {before.get('fds')} before, {after.get('fds')} after; threads {before.get('Threads')} "
            f"before, {after.get('Threads')} after",
            "", "| operation | count | p50 ms | p99 ms |", "|---|---:|---:|---:|",
        ]
        for kind in sorted(soak.lat):
            xs = soak.lat[kind]
            lines.append(f"| {kind} | {len(xs)} | {pct(xs, 0.5) * 1000:.0f} | {pct(xs, 0.99) * 1000:.0f} |")
        for e in (soak.errors[:10] + soak.wrong[:10]):
            lines.append(f"- {e}")
        text = "\n".join(lines)
        print(text)
        if a.out:
            Path(a.out).write_text(text + "\n")
        return 1 if soak.errors or soak.wrong else 0
    finally:
        s3env.unmount(mp, s3env.procs_matching(BIN, str(mp)))
        proxy.stop()
        moto.stop()
        if not a.keep:
            import shutil
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
