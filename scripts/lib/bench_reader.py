"""One query by one unmodified reader, run by scripts/bench in a fresh process
(so no reader cache survives between runs). Usage:

    python bench_reader.py SPEC_JSON

SPEC: {"reader": "duckdb" | "pyarrow" | "deltalake", "location": DIR or s3://BUCKET/PREFIX,
       "query": {"sql_duckdb": template with {table}, "sql_deltalake": SQL over
       the table registered as t, "pyarrow_filter": a Python expression over pc
       (pyarrow.compute) or null, "columns": [...]},
       "s3": {"endpoint", "access_key", "secret_key"} (for s3:// locations),
       "threads": N, "repeat": R (default 1)}

Prints one JSON line: {"seconds": query wall time, "rows": row count,
"digest": sha256 of the sorted, normalised result, "later_seconds": [...]}.
The digest is compared between contenders of the same reader (types differ
between readers). With repeat R > 1 the same query runs R - 1 more times in
this process, each opening the table again (DuckDB: a new connection),
their wall times in later_seconds: the warm mount (its connections, caches
and link profile) against the first query's cold one.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
import time


def _norm(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return repr(v)
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    return v if isinstance(v, (int, str, bool)) or v is None else str(v)


def digest(rows) -> str:
    keyed = sorted(json.dumps(_norm(r), sort_keys=True, default=str) for r in rows)
    h = hashlib.sha256()
    for k in keyed:
        h.update(k.encode())
        h.update(b"\n")
    return h.hexdigest()


def run_duckdb(spec: dict):
    import duckdb
    con = duckdb.connect(config={"threads": int(spec.get("threads", 2))})
    con.execute("SET enable_progress_bar = false")
    loc = spec["location"]
    if loc.startswith("s3://"):
        raise SystemExit("duckdb: no direct S3 reads here (the httpfs extension cannot be downloaded)")
    sql = spec["query"]["sql_duckdb"].replace("{table}", loc.replace("'", "''"))
    t = time.perf_counter()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - t, rows


def run_pyarrow(spec: dict):
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs
    q = spec["query"]
    loc = spec["location"]
    t = time.perf_counter()
    fs = None
    if loc.startswith("s3://"):
        s3 = spec["s3"]
        scheme, _, host = s3["endpoint"].partition("://")
        fs = pafs.S3FileSystem(access_key=s3["access_key"], secret_key=s3["secret_key"],
                               endpoint_override=host, scheme=scheme, region="us-east-1")
        loc = loc[len("s3://"):]
    dataset = ds.dataset(loc, format="parquet", filesystem=fs)
    expr = eval(q["pyarrow_filter"], {"ds": ds, "pc": __import__("pyarrow.compute").compute}) \
        if q.get("pyarrow_filter") else None
    table = dataset.to_table(columns=q.get("columns") or None, filter=expr)
    seconds = time.perf_counter() - t
    return seconds, table.to_pylist()


def run_deltalake(spec: dict):
    """delta-rs: opens the Delta log, applies deletion vectors, scans with
    DataFusion (QueryBuilder). s3:// locations go through its object store."""
    from deltalake import DeltaTable, QueryBuilder
    loc = spec["location"]
    opts = None
    if loc.startswith("s3://"):
        s3 = spec["s3"]
        opts = {"AWS_ENDPOINT_URL": s3["endpoint"], "AWS_ACCESS_KEY_ID": s3["access_key"],
                "AWS_SECRET_ACCESS_KEY": s3["secret_key"], "AWS_REGION": "us-east-1",
                "AWS_ALLOW_HTTP": "true", "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
                "AWS_FORCE_PATH_STYLE": "true"}
    t = time.perf_counter()
    dt = DeltaTable(loc, storage_options=opts)
    import pyarrow as pa
    table = pa.table(QueryBuilder().register("t", dt).execute(spec["query"]["sql_deltalake"]).read_all())
    seconds = time.perf_counter() - t
    return seconds, table.to_pylist()


RUNNERS = {"duckdb": run_duckdb, "pyarrow": run_pyarrow, "deltalake": run_deltalake}


def main():
    spec = json.loads(sys.argv[1])
    seconds, rows = RUNNERS[spec["reader"]](spec)
    later = []
    if int(spec.get("repeat", 1)) > 1:
        # the harness counts the first query's traffic, then lets the later ones run
        print(json.dumps({"first_done": True, "seconds": seconds}), flush=True)
        sys.stdin.readline()
    for _ in range(int(spec.get("repeat", 1)) - 1):
        s, again = RUNNERS[spec["reader"]](spec)
        if len(again) != len(rows):
            raise SystemExit(f"a later query returned {len(again)} rows, the first {len(rows)}")
        later.append(s)
    print(json.dumps({"seconds": seconds, "rows": len(rows), "digest": digest(rows), "later_seconds": later,
                      "peak_bytes": peak_rss()}))


def peak_rss() -> int | None:
    """This process's peak RSS (VmHWM: the memory of this exec only; wait4's
    ru_maxrss also counts the harness's RSS, inherited across fork and exec)."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


if __name__ == "__main__":
    main()
