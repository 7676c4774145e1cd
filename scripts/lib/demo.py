"""scripts/demo: what sievefs is for, on one machine.

A local S3 endpoint (tests/tools/s3link: S3's API over a directory, behind a
slow emulated link, 100 ms round trips and 100 Mbit/s, as a remote region
over a modest line would be) holds a Delta table of taxi trips. sievefs
mounts it, measures the link (its warmup, as a user's mount does), and one
selective DuckDB query (the trips of one vehicle) runs twice:

  1. through the plain path, MOUNT/trips/, which serves the objects' real bytes;
  2. through a view, after `sievefs hint MOUNT NAME --where 'vehicle_id = ...'`:
     the same query reads MOUNT/.sieve/views/NAME/trips/, where pages of the
     columns it does not filter on are served with only the selected rows'
     values fetched from S3.

Both results and the same query on the local copy of the table are printed
and compared; then, per path, the bytes fetched from S3 and the GET requests
(deltas of MOUNT/.sieve/stats across the measured steps; for the view also
its own counters, MOUNT/.sieve/hints/NAME.stats).

Self-checking: exits 1 when a result differs, when the view did not fetch
fewer bytes than the plain path, or when it served no page partially or
synthesized; 0 otherwise. Whether the view was also faster is printed, with
why (times are measured, not asserted). Run through scripts/demo (it
prepares .venv, the build and s3link); SIEVEFS_BIN picks another binary.

The table is written with the `deltalake` package (3 appends and a delete, so
the _delta_log matters: the delete rewrites a file and the old one stays in
the bucket), or as plain Parquet files with pyarrow when deltalake is not
usable. Its layout is chosen so that a view can serve it selectively:

  * one filter column, `vehicle_id` (dictionary-encoded; a filter column is
    always read for real, whatever its encoding);
  * payload columns PLAIN-encoded (no dictionary), uncompressed, fixed-width
    (TIMESTAMP, DOUBLE, DECIMAL(9,2) stored as INT32), non-nullable;
  * data pages of about 256 KiB and a page index (the view needs the
    OffsetIndex to find pages and rows without reading them).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "scripts" / "lib"))
import s3env  # noqa: E402
import s3servers  # noqa: E402

BIN = os.environ.get("SIEVEFS_BIN", str(REPO / "build" / "sievefs"))
BUCKET = "sievefs-demo"
PREFIX = "tables"
TABLE = "trips"
MONTHS = 3                 # one append per month
ROWS_PER_MONTH = 250_000
VEHICLES = 20_000          # vehicle_id = V selects about 1 row in 20,000
VEHICLE = 4711
PAGE_SIZE = 256 << 10      # data page size limit: "a few hundred KiB"
HINT_NAME = f"vehicle-{VEHICLE}"
WHERE = f"vehicle_id = {VEHICLE}"
PAYLOAD = ["pickup_at", "dropoff_at", "distance_km", "fare_eur", "tip_eur"]

# The emulated link: a view pays where bytes cost time, and here they do.
LINK_RTT_MS = 100
LINK_MBIT = 100
# Each mount measures the link first (a view prices its plans with that
# profile, docs/cost_model.md): a short warmup, waited for before the query.
WARMUP = "network=3s"
# --request-cost for experiments (overrides the profile); None: the profile decides.
REQUEST_COST = None

QUERY = f"""
SELECT strftime(pickup_at, '%Y-%m') AS month, count(*) AS trips,
       sum(date_diff('minute', pickup_at, dropoff_at)) AS minutes,
       max(distance_km) AS longest_km, sum(fare_eur) AS fares_eur, sum(tip_eur) AS tips_eur
FROM read_parquet({{files}})
WHERE {WHERE}
GROUP BY month ORDER BY month
"""

MiB = 1 << 20


def fmt_bytes(n: float) -> str:
    if n >= MiB:
        return f"{n / MiB:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n:.0f} B"


# -- the table -------------------------------------------------------------------------
def month_batch(m: int):
    """One month of trips, deterministic (seeded)."""
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(1000 + m)
    n = ROWS_PER_MONTH
    month_us = int((dt.datetime(2024, m + 1, 1) - dt.datetime(1970, 1, 1)).total_seconds()) * 10**6
    pickup = month_us + np.sort(rng.integers(0, 28 * 86400, n)) * 10**6
    dist = np.round(rng.exponential(4.0, n), 2)
    minutes = np.round(dist * 1.8 + rng.integers(1, 10, n)).astype(np.int64)
    fare = np.round(250 + dist * 190 + minutes * 30 + rng.integers(0, 100, n)).astype(np.int64)  # cents
    tip = rng.integers(0, 5, n) * fare // 20
    cols = {
        "vehicle_id": pa.array(rng.integers(0, VEHICLES, n, dtype=np.int32)),
        "pickup_at": pa.array(pickup, pa.timestamp("us")),
        "dropoff_at": pa.array(pickup + minutes * 60 * 10**6 + rng.integers(0, 60, n) * 10**6,
                               pa.timestamp("us")),
        "distance_km": pa.array(dist),
        # whole cents as DECIMAL(9,2) (stored as INT32): exact sums, whatever order
        # DuckDB's threads add them in
        "fare_eur": pa.array(fare / 100).cast(pa.decimal128(9, 2)),
        "tip_eur": pa.array(tip / 100).cast(pa.decimal128(9, 2)),
    }
    schema = pa.schema([pa.field(k, v.type, nullable=False) for k, v in cols.items()])
    return pa.table(cols, schema=schema)


def write_table(root: Path) -> str:
    """Write the sample table under root; returns 'delta' or 'parquet'."""
    try:
        import deltalake
        from deltalake import ColumnProperties, DeltaTable, WriterProperties, write_deltalake
    except Exception as e:  # noqa: BLE001
        print(f"(deltalake not usable: {e}; writing plain Parquet)")
    else:
        try:
            plain = ColumnProperties(dictionary_enabled=False, statistics_enabled="PAGE")
            # pages end at PAGE_SIZE bytes (arrow-rs would also end them at 20,000 rows)
            wp = WriterProperties(compression="UNCOMPRESSED", data_page_size_limit=PAGE_SIZE,
                                  data_page_row_count_limit=1 << 20, max_row_group_size=1 << 20,
                                  default_column_properties=plain,
                                  column_properties={"vehicle_id": ColumnProperties(
                                      dictionary_enabled=True, statistics_enabled="PAGE")})
            for m in range(MONTHS):
                write_deltalake(str(root), month_batch(m), mode="append", writer_properties=wp)
            # rewrites the March file without that day; the old file stays in the bucket,
            # and only the _delta_log says it is no longer part of the table
            gone = f"pickup_at >= '2024-{MONTHS:02d}-01' AND pickup_at < '2024-{MONTHS:02d}-02'"
            DeltaTable(str(root)).delete(gone, writer_properties=wp)
            dtab = DeltaTable(str(root))
            print(f"wrote a Delta table with deltalake {deltalake.__version__}: {MONTHS} appends "
                  f"(one a month), then a delete\n  ({gone}): version {dtab.version()}, "
                  f"{len(dtab.file_uris())} active files")
            return "delta"
        except Exception as e:  # noqa: BLE001
            print(f"(deltalake failed: {e}; writing plain Parquet)")
            shutil.rmtree(root, ignore_errors=True)
    import pyarrow.parquet as pq
    root.mkdir(parents=True, exist_ok=True)
    for m in range(MONTHS):
        pq.write_table(month_batch(m), root / f"part-{m:05d}.parquet", row_group_size=1 << 20,
                       compression="NONE", use_dictionary=["vehicle_id"], data_page_size=PAGE_SIZE,
                       max_rows_per_page=1 << 20, store_decimal_as_integer=True,
                       write_page_index=True)
    print(f"wrote {MONTHS} plain Parquet files")
    return "parquet"


def parquet_files(table_dir: Path, kind: str) -> list[str]:
    if kind == "delta":
        from deltalake import DeltaTable
        # delta-rs reads _delta_log/ itself -- through the mount (or the view) when
        # table_dir is on it
        return sorted(u.removeprefix("file://") for u in DeltaTable(str(table_dir)).file_uris())
    return sorted(str(p) for p in table_dir.glob("*.parquet"))


def layout(files: list[str]) -> dict:
    """What `sievefs inspect --pages --json` says about the files: the payload
    columns' data pages (how many, their sizes, how many a view could read
    partially) and the bytes of the filter column's chunks."""
    out = {"pages": 0, "eligible": 0, "sizes": [], "filter_bytes": 0}
    for f in files:
        r = subprocess.run([BIN, "inspect", f, "--pages", "--json"], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            raise SystemExit(f"sievefs inspect {f} failed: {r.stderr.strip()}")
        for rg in json.loads(r.stdout)["row_groups"]:
            for c in rg["columns"]:
                if c["path"] == "vehicle_id":
                    out["filter_bytes"] += c["length"]
                if c["path"] not in PAYLOAD:
                    continue
                for pg in c["pages"] or []:
                    if pg["type"] in ("DATA_PAGE", "DATA_PAGE_V2"):
                        out["pages"] += 1
                        out["eligible"] += pg["eligible"]
                        out["sizes"].append(pg["compressed_size"])
    out["sizes"].sort()
    return out


# -- mounts, queries ---------------------------------------------------------------------
def shown(path) -> str:
    """A path as printed: relative to the repository when under it."""
    p = Path(path)
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)


def stats(mp: Path) -> dict:
    return json.loads((mp / ".sieve" / "stats").read_bytes())


@contextmanager
def mounted(srv, mp: Path):
    mp.mkdir()
    env = s3env.clean_env(extra=srv.creds.env())
    argv = [BIN, "mount", f"s3://{BUCKET}/{PREFIX}", str(mp), "--endpoint", srv.endpoint, "--warmup", WARMUP]
    if REQUEST_COST is not None:
        argv += ["--request-cost", REQUEST_COST]
    print("$ " + " ".join([shown(BIN)] + argv[1:]))
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise SystemExit(f"mount failed ({r.returncode}): {r.stderr.strip()}")
    try:
        prof = wait_for_profile(mp)
        print(f"  the mount measured the link: {prof}")
        yield mp
    finally:
        notes = s3env.unmount(mp, s3env.procs_matching(BIN, str(mp)))
        if notes:
            print(f"(unmount: {'; '.join(notes)})")


def wait_for_profile(mp: Path, timeout: float = 30.0) -> str:
    """Wait for the mount's warmup (MOUNT/.sieve/profile); a line saying what it measured."""
    deadline = time.monotonic() + timeout
    doc = {}
    while time.monotonic() < deadline:
        doc = json.loads((mp / ".sieve" / "profile").read_bytes() or b"{}")
        if doc.get("state") in ("done", "failed"):
            break
        time.sleep(0.2)
    if doc.get("state") != "done":
        return f"warmup {doc.get('state', 'unknown')} ({doc.get('error') or 'no profile'}): views read pages whole"
    p = doc.get("profile") or {}
    parts = []
    if p.get("latency_ms"):
        parts.append(f"round trip {p['latency_ms']:.0f} ms")
    if p.get("bandwidth_mbit"):
        parts.append(f"{p['bandwidth_mbit']:.0f} Mbit/s")
    if p.get("capacity"):
        best = max(c["per_s"] for c in p["capacity"])
        parts.append(f"up to {best:,.0f} requests/s")
    return ", ".join(parts) or "done"


def sql(files: list[str]) -> str:
    return QUERY.format(files="[" + ", ".join(f"'{f}'" for f in files) + "]")


def run_query(files: list[str]):
    """Run the query once on a fresh DuckDB connection: (rows, a relation over
    the stored result for show(), seconds)."""
    import duckdb
    con = duckdb.connect()
    t = time.perf_counter()
    con.execute(f"CREATE TEMP TABLE result AS {sql(files)}")
    dt_s = time.perf_counter() - t
    rel = con.sql("SELECT * FROM result ORDER BY month")
    return rel.fetchall(), rel, dt_s


def delta(after: dict, before: dict) -> dict:
    return {"bytes": after["s3_bytes_fetched"] - before["s3_bytes_fetched"],
            "gets": after["s3_get_requests"] - before["s3_get_requests"]}


def table_listing(d: Path, active: list[str]) -> str:
    names = sorted(os.listdir(d))
    pq_names = [n for n in names if n.endswith(".parquet")]
    act = {os.path.basename(f) for f in active}
    other = [n + "/" if (d / n).is_dir() else n for n in names if not n.endswith(".parquet")]
    return ", ".join(other + [f"{len(pq_names)} Parquet files ({len(act & set(pq_names))} of them active)"])


def main() -> int:
    global REQUEST_COST
    ap = argparse.ArgumentParser(description="sievefs demo (see scripts/demo)")
    ap.add_argument("--request-cost", default=None,
                    help="sievefs --request-cost of both mounts (default: none, the measured profile decides)")
    REQUEST_COST = ap.parse_args().request_cost
    import duckdb
    t_start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="sievefs-demo-"))
    srv = s3servers.S3Link(root=work / "s3", log_path=work / "s3link.log", profile="wan", rtt_ms=LINK_RTT_MS,
                           jitter_ms=0, mbit=LINK_MBIT)
    try:
        print("sievefs demo: one selective DuckDB query over a table in S3, through the plain path "
              "and\nthrough a view made from a selection hint\n")
        local = work / TABLE
        kind = write_table(local)
        local_files = parquet_files(local, kind)
        lay = layout(local_files)
        print(f"  layout: {MONTHS * ROWS_PER_MONTH:,} trips; payload columns PLAIN, uncompressed, "
              f"data pages up to {fmt_bytes(PAGE_SIZE)},\n  page index; vehicle_id dictionary-encoded")
        print(f"  sievefs inspect: {lay['pages']} data pages in the payload columns, median "
              f"{fmt_bytes(lay['sizes'][len(lay['sizes']) // 2])},\n  {lay['eligible']} of them "
              f"eligible for partial reads")
        served = work / "s3" / BUCKET / PREFIX / TABLE
        shutil.copytree(local, served)
        n = sum(1 for p in served.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in served.rglob("*") if p.is_file())
        print(f"starting s3link (S3's API over a directory; the link emulated inside it: "
              f"{LINK_RTT_MS} ms round trips,\n{LINK_MBIT} Mbit/s) ...", end=" ", flush=True)
        srv.start()
        print(f"on {srv.endpoint}\n  serving s3://{BUCKET}/{PREFIX}/{TABLE}/: {n} objects ({fmt_bytes(size)})")

        print(f"\nThe query (DuckDB {duckdb.__version__}): the trips of one vehicle among {VEHICLES:,}")
        print("  " + QUERY.format(files="[...the table's active files...]").strip().replace("\n", "\n  "))
        want, _, _ = run_query(local_files)

        if REQUEST_COST is not None:
            print(f"\nBoth mounts get --request-cost {REQUEST_COST} (given on the command line; "
                  f"it overrides the\nmeasured connection profile)")

        # Each path gets its own fresh mount: its own daemon, an empty block cache
        # and new inodes (so no kernel page cache either), so neither path profits
        # from bytes the other fetched. Counters are deltas of .sieve/stats across
        # the measured steps: delta-rs reading the _delta_log (through the mount) and
        # the query; for the view also the hint (sievefs reads a footer to check it).
        print("\n== 1. the plain path, MOUNT/trips/ (the objects' real bytes), on a fresh mount")
        with mounted(srv, work / "mnt-plain") as mp:
            before = stats(mp)
            t = time.perf_counter()
            files = parquet_files(mp / TABLE, kind)
            plain_rows, rel, q_s = run_query(files)
            plain_s = time.perf_counter() - t
            plain = delta(stats(mp), before)
            print(f"MOUNT/{TABLE}/: {table_listing(mp / TABLE, files)}")
            rel.show()
            print(f"query {q_s:.2f} s")

        print(f"\n== 2. the view, MOUNT/.sieve/views/{HINT_NAME}/trips/, on a fresh mount")
        with mounted(srv, work / "mnt-view") as mp:
            before = stats(mp)
            t = time.perf_counter()
            argv = [BIN, "hint", str(mp), HINT_NAME, "--columns", ",".join(PAYLOAD), "--where", WHERE]
            print("$ " + " ".join([shown(BIN)] + argv[1:-1]) + f" '{WHERE}'")
            r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                print(f"hint failed ({r.returncode}): {r.stderr.strip()}")
                return 1
            view = Path(r.stdout.strip())
            print(view)
            files = parquet_files(view / TABLE, kind)
            if not files or not all(f.startswith(str(view) + "/") for f in files):
                print(f"the files to read are not in the view: {files}")
                return 1
            view_rows, rel, q_s = run_query(files)
            view_s = time.perf_counter() - t
            viewd = delta(stats(mp), before)
            vst = json.loads((mp / ".sieve" / "hints" / f"{HINT_NAME}.stats").read_bytes())
            rel.show()
            print(f"hint + query {view_s:.2f} s (query {q_s:.2f} s)")

        same = plain_rows == want and view_rows == want
        print(f"\nidentical: {'yes' if same else 'NO'} (plain path, view, and the query on the local copy)")
        if not same:
            print(f"  local: {want}\n  plain: {plain_rows}\n  view:  {view_rows}")

        ratio = viewd["bytes"] / plain["bytes"] if plain["bytes"] else float("inf")
        rows = [("", "bytes from S3", "GET requests", "time"),
                ("plain path", fmt_bytes(plain["bytes"]), f"{plain['gets']:,}", f"{plain_s:.2f} s"),
                ("view", fmt_bytes(viewd["bytes"]), f"{viewd['gets']:,}", f"{view_s:.2f} s"),
                ("view / plain", f"{100 * ratio:.1f} %", f"{viewd['gets'] / max(1, plain['gets']):.1f} x",
                 f"{view_s / plain_s:.1f} x")]
        w = [max(len(r[i]) for r in rows) for i in range(4)]
        print("\nper path, deltas of .sieve/stats (s3_bytes_fetched, s3_get_requests) across "
              "listing the table's\nfiles (delta-rs reads the _delta_log) and the query, for the "
              "view also the hint:")
        for r in rows:
            print("  " + r[0].ljust(w[0]) + "  " + "  ".join(r[i].rjust(w[i]) for i in range(1, 4)))
        npages = vst["pages_partial"] + vst["pages_synthesized"] + vst["pages_real"]
        print(f".sieve/hints/{HINT_NAME}.stats: bytes_fetched {fmt_bytes(vst['bytes_fetched'])} in "
              f"{vst['requests']:,} requests (ordinary_bytes {fmt_bytes(vst['ordinary_bytes'])}:\n"
              f"  what the plain path fetches for the same column chunks)\n"
              f"  vehicle_id, the filter column, read whole: {fmt_bytes(lay['filter_bytes'])}\n"
              f"  the other columns' {npages} data pages: "
              f"{fmt_bytes(vst['bytes_fetched'] - lay['filter_bytes'])}; {vst['pages_partial']} partial, "
              f"{vst['pages_synthesized']} synthesized, {vst['pages_real']} real\n"
              f"  why (NAME.stats reason words): chunks {vst.get('chunk_reasons')}, pages {vst.get('page_reasons')}")
        link_bps = LINK_MBIT * 1e6 / 8
        why = (f"at {LINK_MBIT} Mbit/s the plain path's {fmt_bytes(plain['bytes'])} take "
               f"{plain['bytes'] / link_bps:.1f} s to arrive; the view's {fmt_bytes(viewd['bytes'])} take "
               f"{viewd['bytes'] / link_bps:.2f} s, and its {viewd['gets']:,} requests go out in parallel "
               f"rounds of {LINK_RTT_MS} ms")
        faster = view_s < plain_s
        print(f"\nview faster: {'yes' if faster else 'no'} ({view_s:.2f} s vs {plain_s:.2f} s, "
              f"{plain_s / view_s:.1f}x): {why}")

        fewer = viewd["bytes"] < plain["bytes"]
        served = vst["pages_partial"] + vst["pages_synthesized"] > 0
        print(f"\nview fetched fewer bytes: {'yes' if fewer else 'NO'} "
              f"({fmt_bytes(viewd['bytes'])} vs {fmt_bytes(plain['bytes'])}, {100 * ratio:.1f} %)")
        if not served:
            print("NO page was served partially or synthesized through the view")
        ok = same and fewer and served
        print(f"demo {'OK' if ok else 'FAILED'} in {time.perf_counter() - t_start:.1f} s")
        return 0 if ok else 1
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
