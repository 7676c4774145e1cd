"""Decode throughput of the sievefs page decoders (tests/tools/pq_dump --bench)
against pyarrow decoding the same column in the same run. Not a test.

For each case a Parquet file with one column of --rows values (default 10M)
is written with pyarrow; both decoders then read it from memory, single
threaded, best of --repeat runs:
  * pq_dump --bench: page headers, decompression, levels, values (dictionary
    values gathered, strings as offsets + bytes); the file is mmap'd and
    populated before timing;
  * pyarrow: pq.read_table(BufferReader(file bytes), use_threads=False),
    i.e. the same work plus building Arrow arrays.
MB/s is decoded output per second (8 bytes per INT64/DOUBLE, 4 per
INT32/FLOAT, 1 per BOOLEAN, string bytes + 4 per string), the same figure
for both; ratio is pyarrow seconds / pq_dump seconds (above 1: pq_dump is
faster); the CPU ratio uses pyarrow's process CPU time, since pyarrow
decompresses pages ahead on a helper thread. Prints markdown.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]


def columns(n: int):
    """name -> pyarrow array, built with pyarrow compute (no numpy needed)."""
    r = pc.random(n, initializer=1)
    r2 = pc.random(n, initializer=2)
    i64 = pc.cast(pc.floor(pc.multiply(r, 1e12)), pa.int64())
    seq = pc.add(pc.cast(pc.floor(pc.multiply(r2, 100)), pa.int64()),
                 pa.array(range(0, n * 1000, 1000), pa.int64()))
    small = pc.cast(pc.floor(pc.multiply(r, 1000)), pa.int64())
    cat = pc.binary_join_element_wise("category-", pc.cast(pc.cast(pc.floor(pc.multiply(r2, 200)), pa.int64()),
                                                           pa.string()), "")
    url = pc.binary_join_element_wise("https://example.com/items/", pc.cast(seq, pa.string()), "")
    nulls = pc.less(r2, 0.1)
    return {
        "i64": i64,
        "i64_seq": seq,
        "i32_seq": pc.cast(pc.divide(seq, 1000), pa.int32()),
        "i64_small": small,
        "i64_nulls": pc.if_else(nulls, pa.scalar(None, pa.int64()), i64),
        "f64": pc.multiply(r, 1000.0),
        "f32": pc.cast(pc.multiply(r, 1000.0), pa.float32()),
        "str_cat": cat,
        "str_url": url,
        "bool": pc.less(r, 0.3),
    }


# (case name, column, writer options)
def cases():
    plain = dict(use_dictionary=False)
    out = [
        ("INT64 PLAIN", "i64", plain),
        ("INT64 PLAIN, 10% nulls", "i64_nulls", plain),
        ("INT64 RLE_DICTIONARY (1000 distinct)", "i64_small", {}),
        ("INT64 DELTA_BINARY_PACKED", "i64_seq", dict(use_dictionary=False, column_encoding={"i64_seq": "DELTA_BINARY_PACKED"})),
        ("INT32 DELTA_BINARY_PACKED", "i32_seq", dict(use_dictionary=False, column_encoding={"i32_seq": "DELTA_BINARY_PACKED"})),
        ("DOUBLE PLAIN", "f64", plain),
        ("DOUBLE BYTE_STREAM_SPLIT", "f64", dict(use_dictionary=False, column_encoding={"f64": "BYTE_STREAM_SPLIT"})),
        ("FLOAT BYTE_STREAM_SPLIT", "f32", dict(use_dictionary=False, column_encoding={"f32": "BYTE_STREAM_SPLIT"})),
        ("BOOLEAN PLAIN", "bool", plain),
        ("BOOLEAN RLE (V2)", "bool", dict(use_dictionary=False, data_page_version="2.0",
                                          column_encoding={"bool": "RLE"})),
        ("STRING PLAIN", "str_url", plain),
        ("STRING RLE_DICTIONARY (200 distinct)", "str_cat", {}),
        ("STRING DELTA_LENGTH_BYTE_ARRAY", "str_url", dict(use_dictionary=False, column_encoding={"str_url": "DELTA_LENGTH_BYTE_ARRAY"})),
        ("STRING DELTA_BYTE_ARRAY", "str_url", dict(use_dictionary=False, column_encoding={"str_url": "DELTA_BYTE_ARRAY"})),
    ]
    for codec in ("none", "snappy", "gzip", "zstd", "lz4", "brotli"):
        out.append((f"INT64 PLAIN, {codec}", "i64_seq", dict(use_dictionary=False, compression=codec)))
        out.append((f"STRING DICT, {codec}", "str_cat", dict(compression=codec)))
    return out


def bench_pyarrow(data: bytes, repeat: int):
    """Best wall time and the CPU time of that run (pyarrow decompresses pages
    ahead on a helper thread even with use_threads=False)."""
    best = (float("inf"), 0.0)
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        t = pq.read_table(pa.BufferReader(data), use_threads=False)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if wall < best[0]:
            best = (wall, cpu)
        del t
    return best


def bench_pq_dump(binary: str, path: Path, repeat: int) -> dict:
    r = subprocess.run([binary, "--bench", "--repeat", str(repeat), str(path)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.splitlines()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pq-dump", default=os.environ.get("PQ_DUMP_BIN", str(REPO / "build" / "pq_dump")))
    ap.add_argument("--filter", default="", help="only cases whose name contains this")
    ap.add_argument("--json", action="store_true", help="print JSON lines instead of markdown")
    args = ap.parse_args()
    cols = columns(args.rows)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-decode-") as tmp:
        for name, col, opts in cases():
            if args.filter and args.filter not in name:
                continue
            path = Path(tmp) / "case.parquet"
            opts = dict(opts)
            opts.setdefault("compression", "none")
            pq.write_table(pa.table({col: cols[col]}), path, **opts)
            data = path.read_bytes()
            ours = bench_pq_dump(args.pq_dump, path, args.repeat)
            theirs, theirs_cpu = bench_pyarrow(data, args.repeat)
            mb = ours["out_bytes"] / 1e6
            row = dict(case=name, values=ours["values"], pages=ours["pages"],
                       page_mb=round(ours["page_bytes"] / 1e6, 1), out_mb=round(mb, 1),
                       file_mb=round(len(data) / 1e6, 1), pq_dump_s=ours["seconds"], pyarrow_s=round(theirs, 6),
                       pq_dump_mb_s=round(mb / ours["seconds"], 1), pyarrow_mb_s=round(mb / theirs, 1),
                       pq_dump_mvals_s=round(ours["values"] / ours["seconds"] / 1e6, 1),
                       ratio=round(theirs / ours["seconds"], 2),
                       cpu_ratio=round(theirs_cpu / ours["seconds"], 2))
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"  {name}: ratio {row['ratio']}", file=sys.stderr, flush=True)
    if not args.json:
        print(f"Decode throughput, {args.rows:,} values per column, best of {args.repeat}, single thread "
              f"(pyarrow {pa.__version__}).\n")
        print("| case | pages | file MB | output MB | pq_dump Mvalues/s | pq_dump MB/s | pyarrow MB/s "
              "| ratio (wall) | ratio (CPU) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['case']} | {r['pages']} | {r['file_mb']} | {r['out_mb']} | {r['pq_dump_mvals_s']} | "
                  f"{r['pq_dump_mb_s']} | {r['pyarrow_mb_s']} | {r['ratio']} | {r['cpu_ratio']} |")
        print("\nratio = pyarrow time / pq_dump time (above 1: pq_dump faster). pq_dump is single threaded;"
              " pyarrow decompresses pages ahead on a helper thread even with use_threads=False, so"
              " 'CPU' compares pyarrow's process CPU time with pq_dump's wall time.")


if __name__ == "__main__":
    main()
