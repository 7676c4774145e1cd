"""One query by one unmodified reader, run by scripts/bench in a fresh process
(so no reader cache survives between runs). Usage:

    python bench_reader.py SPEC_JSON

SPEC: {"reader": "duckdb" | "pyarrow" | "deltalake" | "polars",
       "location": DIR or s3://BUCKET/PREFIX (the table),
       "query": {"sql_duckdb": template with {table} (the table directory) or
       {files} (a DuckDB list of the table's active files), "sql_deltalake": SQL
       over the table registered as t (deltalake's QueryBuilder, polars'
       SQLContext), "pyarrow_filter": a Python expression over pc
       (pyarrow.compute) or null, "columns": [...], "files": the table's active
       files from its Delta log, relative to the table, or null (then the
       Parquet files directly in the table directory)},
       "s3": {"endpoint", "access_key", "secret_key", "ca_bundle"} (s3:// locations),
       "duckdb_httpfs": path of DuckDB's httpfs extension file (DuckDB on s3://),
       "threads": N, "repeat": R (default 1)}

The readers, as a user would call them:
  duckdb     read_parquet over the files (a glob or the log's list); on s3://
             through the httpfs extension (LOAD by path, a CREATE SECRET with
             the endpoint, path-style URLs)
  pyarrow    pyarrow.dataset over the files, ParquetFragmentScanOptions(pre_buffer=True),
             to_table(columns, filter); on s3:// through pyarrow.fs.S3FileSystem
  deltalake  DeltaTable + QueryBuilder (DataFusion; reads the log, prunes files by
             its statistics, applies deletion vectors); s3:// through its object store
  polars     pl.scan_parquet over the files + pl.SQLContext (lazy: predicate and
             projection pushed into the scan); s3:// through polars' object store
             (storage_options with the endpoint, path style)
With TLS (an https endpoint): DuckDB `SET ca_cert_file`, pyarrow
tls_ca_file_path, deltalake and polars allow_invalid_certificates (their
rustls refuses s3link's self-signed certificate, a CA used as the server's
own certificate, whatever the trust store: CaUsedAsEndEntity).

Prints one JSON line: {"seconds": query wall time, "rows": row count,
"digest": sha256 of the sorted, normalised result, "later_seconds": [...]}.
The digest is compared between contenders of the same reader (types differ
between readers). With repeat R > 1 the same query runs R - 1 more times in
this process, each opening the table again (DuckDB: a new connection),
unless the harness answers "skip" once the first is done, their wall times in later_seconds: the warm mount (its connections, caches
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


def file_paths(spec: dict) -> list[str] | None:
    """The active files' full paths (or s3:// URIs), None without a list."""
    files = spec["query"].get("files")
    if not files:
        return None
    loc = spec["location"].rstrip("/")
    return [f"{loc}/{f}" for f in files]


def _s3_parts(spec: dict) -> tuple[str, str, bool]:
    """(scheme, host:port, tls) of the endpoint."""
    scheme, _, host = spec["s3"]["endpoint"].partition("://")
    return scheme, host.rstrip("/"), scheme == "https"


def run_duckdb(spec: dict):
    import duckdb
    loc = spec["location"]
    s3 = loc.startswith("s3://")
    con = duckdb.connect(config={"threads": int(spec.get("threads", 2)),
                                 **({"allow_unsigned_extensions": "true"} if s3 else {})})
    con.execute("SET enable_progress_bar = false")
    if s3:   # set-up of the connection, before the clock starts (like connect())
        ext = spec.get("duckdb_httpfs")
        if not ext:
            raise SystemExit("duckdb: an s3:// location needs spec['duckdb_httpfs'] (bench_duckdb_httpfs.py)")
        con.execute(f"LOAD '{ext}'")
        _, host, tls = _s3_parts(spec)
        c = spec["s3"]
        con.execute(f"CREATE SECRET bench (TYPE s3, KEY_ID '{c['access_key']}', SECRET '{c['secret_key']}', "
                    f"REGION 'us-east-1', ENDPOINT '{host}', URL_STYLE 'path', USE_SSL {'true' if tls else 'false'})")
        if tls and c.get("ca_bundle"):
            con.execute(f"SET ca_cert_file = '{c['ca_bundle']}'")
    t = time.perf_counter()
    sql = spec["query"]["sql_duckdb"].replace("{table}", loc.rstrip("/").replace("'", "''"))
    paths = file_paths(spec)
    if "{files}" in sql:
        if paths is None:
            raise SystemExit("duckdb: the query reads {files} but the spec has no files")
        sql = sql.replace("{files}", "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]")
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - t, rows


def _pyarrow_fs(spec: dict):
    import pyarrow.fs as pafs
    c = spec["s3"]
    scheme, host, tls = _s3_parts(spec)
    kw = {}
    if tls and c.get("ca_bundle"):
        kw["tls_ca_file_path"] = c["ca_bundle"]
    return pafs.S3FileSystem(access_key=c["access_key"], secret_key=c["secret_key"], endpoint_override=host,
                             scheme=scheme, region="us-east-1", **kw)


def run_pyarrow(spec: dict):
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    q = spec["query"]
    loc = spec["location"]
    t = time.perf_counter()
    fs = None
    paths = file_paths(spec)
    if loc.startswith("s3://"):
        fs = _pyarrow_fs(spec)
        strip = lambda p: p[len("s3://"):]  # noqa: E731
        loc = strip(loc)
        paths = [strip(p) for p in paths] if paths else None
    fmt = ds.ParquetFileFormat(default_fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=True))
    dataset = ds.dataset(paths or loc, format=fmt, filesystem=fs)
    expr = eval(q["pyarrow_filter"], {"ds": ds, "pc": pc}) if q.get("pyarrow_filter") else None
    table = dataset.to_table(columns=q.get("columns") or None, filter=expr)
    seconds = time.perf_counter() - t
    return seconds, table.to_pylist()


def _object_store_options(spec: dict, keys: dict) -> dict:
    c = spec["s3"]
    _, _, tls = _s3_parts(spec)
    opts = {keys["endpoint"]: c["endpoint"], keys["key"]: c["access_key"], keys["secret"]: c["secret_key"],
            keys["region"]: "us-east-1"}
    opts.update(keys["extra"])
    if tls:
        opts["allow_invalid_certificates"] = "true"
    else:
        opts[keys["http"]] = "true"
    return opts


def run_deltalake(spec: dict):
    """delta-rs: opens the Delta log, applies deletion vectors, scans with
    DataFusion (QueryBuilder). s3:// locations go through its object store."""
    from deltalake import DeltaTable, QueryBuilder
    loc = spec["location"]
    opts = None
    if loc.startswith("s3://"):
        opts = _object_store_options(spec, {"endpoint": "AWS_ENDPOINT_URL", "key": "AWS_ACCESS_KEY_ID",
                                            "secret": "AWS_SECRET_ACCESS_KEY", "region": "AWS_REGION",
                                            "http": "AWS_ALLOW_HTTP",
                                            "extra": {"AWS_S3_ALLOW_UNSAFE_RENAME": "true",
                                                      "AWS_FORCE_PATH_STYLE": "true"}})
    t = time.perf_counter()
    dt = DeltaTable(loc, storage_options=opts)
    import pyarrow as pa
    table = pa.table(QueryBuilder().register("t", dt).execute(spec["query"]["sql_deltalake"]).read_all())
    seconds = time.perf_counter() - t
    return seconds, table.to_pylist()


def run_polars(spec: dict):
    """polars: scan_parquet over the files (its own object store on s3://),
    the query as SQL over the lazy frame."""
    import polars as pl
    loc = spec["location"].rstrip("/")
    opts = None
    if loc.startswith("s3://"):
        opts = _object_store_options(spec, {"endpoint": "aws_endpoint_url", "key": "aws_access_key_id",
                                            "secret": "aws_secret_access_key", "region": "aws_region",
                                            "http": "aws_allow_http",
                                            "extra": {"aws_virtual_hosted_style_request": "false"}})
    t = time.perf_counter()
    src = file_paths(spec) or f"{loc}/*.parquet"
    lf = pl.scan_parquet(src, storage_options=opts)
    df = pl.SQLContext(t=lf).execute(spec["query"]["sql_deltalake"]).collect()
    seconds = time.perf_counter() - t
    return seconds, df.rows()


RUNNERS = {"duckdb": run_duckdb, "pyarrow": run_pyarrow, "deltalake": run_deltalake, "polars": run_polars}


def main():
    spec = json.loads(sys.argv[1])
    seconds, rows = RUNNERS[spec["reader"]](spec)
    later = []
    repeat = int(spec.get("repeat", 1))
    if repeat > 1:
        # the harness counts the first query's traffic, then lets the later ones run
        # (or answers "skip": the first query took too long to repeat)
        print(json.dumps({"first_done": True, "seconds": seconds}), flush=True)
        if sys.stdin.readline().strip() == "skip":
            repeat = 1
    for _ in range(repeat - 1):
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
