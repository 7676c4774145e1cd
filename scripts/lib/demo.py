"""scripts/demo: moto + generated table + sievefs mount + DuckDB query.

The table is written as a Delta table with the `deltalake` package when it is
importable (3 appends and a delete, so the _delta_log matters), otherwise as
plain Parquet files. Run through scripts/demo (it prepares .venv and the build).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402

BIN = os.environ.get("SIEVEFS_BIN", str(REPO / "build" / "sievefs"))
BUCKET = "sievefs-demo"
TABLE = "tables/trips"
CITIES = ["Amsterdam", "Berlin", "Lisbon", "Oslo", "Prague", "Vienna", "Warsaw"]


def batch(seed: int, n: int):
    import pyarrow as pa
    rnd = random.Random(seed)
    return pa.table({
        "trip_id": pa.array(range(seed * n, seed * n + n), pa.int64()),
        "city": pa.array([rnd.choice(CITIES) for _ in range(n)]),
        "distance_km": pa.array([round(rnd.expovariate(1 / 4.0), 2) for _ in range(n)], pa.float64()),
        "fare_eur": pa.array([round(2.5 + rnd.random() * 30, 2) for _ in range(n)], pa.float64()),
        "passengers": pa.array([rnd.randint(1, 4) for _ in range(n)], pa.int8()),
    })


def write_table(root: Path) -> str:
    """Write the sample table under root; returns 'delta' or 'parquet'."""
    try:
        import deltalake
        from deltalake import DeltaTable, write_deltalake
    except Exception as e:  # noqa: BLE001
        print(f"(deltalake not usable: {e}; writing plain Parquet)")
    else:
        try:
            for seed in range(3):
                write_deltalake(str(root), batch(seed, 40_000), mode="append")
            DeltaTable(str(root)).delete("passengers = 4 AND city = 'Oslo'")
            print(f"wrote a Delta table with deltalake {deltalake.__version__}: "
                  f"version {DeltaTable(str(root)).version()}, {len(DeltaTable(str(root)).file_uris())} active files")
            return "delta"
        except Exception as e:  # noqa: BLE001
            print(f"(deltalake failed: {e}; writing plain Parquet)")
            shutil.rmtree(root, ignore_errors=True)
    import pyarrow.parquet as pq
    root.mkdir(parents=True, exist_ok=True)
    for seed in range(3):
        pq.write_table(batch(seed, 40_000), root / f"part-{seed:05d}.parquet", row_group_size=10_000)
    print("wrote 3 plain Parquet files")
    return "parquet"


def parquet_files(table_dir: Path, kind: str) -> list[str]:
    if kind == "delta":
        from deltalake import DeltaTable
        # delta-rs reads _delta_log/ itself -- through the mount when table_dir is on it
        return sorted(u.removeprefix("file://") for u in DeltaTable(str(table_dir)).file_uris())
    return sorted(str(p) for p in table_dir.glob("*.parquet"))


QUERY = """
SELECT city, count(*) AS trips, round(sum(distance_km), 1) AS km, round(avg(fare_eur), 2) AS avg_fare
FROM read_parquet({files})
WHERE passengers >= 2
GROUP BY city ORDER BY trips DESC
"""


def main() -> int:
    import duckdb
    work = Path(tempfile.mkdtemp(prefix="sievefs-demo-"))
    moto = s3env.MotoServer(auth=True, log_path=work / "moto.log")
    mp = work / "mnt"
    mp.mkdir()
    mounted = False
    try:
        print(f"starting moto (SigV4 enforced) ...")
        moto.start()
        print(f"moto on {moto.endpoint}")
        s3 = moto.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        local = work / "trips"
        kind = write_table(local)
        n = 0
        for p in sorted(local.rglob("*")):
            if p.is_file():
                s3.upload_file(str(p), BUCKET, f"{TABLE}/{p.relative_to(local).as_posix()}")
                n += 1
        print(f"uploaded {n} objects to s3://{BUCKET}/{TABLE}/")

        env = s3env.clean_env(extra=moto.creds.env())
        argv = [BIN, "mount", f"s3://{BUCKET}/tables", str(mp), "--endpoint", moto.endpoint]
        print("$ " + " ".join(argv))
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print(f"mount failed ({r.returncode}): {r.stderr.strip()}")
            return 1
        mounted = True
        print(f"mounted; {mp}/trips contains: {sorted(os.listdir(mp / 'trips'))}")

        files = parquet_files(mp / "trips", kind)
        q = QUERY.format(files="[" + ", ".join(f"'{f}'" for f in files) + "]")
        print(f"\nDuckDB {duckdb.__version__}, reading {len(files)} active Parquet files through the mount:")
        print(q.strip())
        con = duckdb.connect()
        t = time.perf_counter()
        rel = con.sql(q)
        rows = rel.fetchall()
        dt = time.perf_counter() - t
        con.sql(q).show()
        print(f"({len(rows)} rows in {dt:.2f} s)")

        local_files = parquet_files(local, kind)
        want = duckdb.connect().sql(QUERY.format(files="[" + ", ".join(f"'{f}'" for f in local_files) + "]")).fetchall()
        print("same result as the local copy:", "yes" if rows == want else "NO")

        stats = json.loads((mp / ".sieve" / "stats").read_text())
        print("\n.sieve/stats:")
        print(json.dumps(stats, indent=2))
        return 0 if rows == want else 1
    finally:
        if mounted:
            pids = s3env.procs_matching(BIN, str(mp))
            notes = s3env.unmount(mp, pids)
            print("\nunmounted" + (f" ({'; '.join(notes)})" if notes else ""))
        moto.stop()
        print("moto stopped")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
