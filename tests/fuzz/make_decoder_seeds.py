#!/usr/bin/env python3
"""Regenerate the seed corpora of the value-decoding fuzz targets:

  tests/fuzz/corpus/decode_page/  real pages written by pyarrow (and DuckDB when
                                  importable), every encoding, codec and page
                                  version, extracted by `pq_dump --fuzz-seeds`
  tests/fuzz/corpus/codec/        the compressed bodies of those pages
  tests/fuzz/corpus/rle_hybrid/   hand-made hybrid and DELTA_BINARY_PACKED streams

Usage: make_decoder_seeds.py PQ_DUMP_BIN   (run from anywhere; overwrites the
three directories). Needs pyarrow.
"""
from __future__ import annotations

import hashlib
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def table(n: int, seed: int):
    import decimal
    rnd = random.Random(seed)

    def nul(v):
        return None if rnd.random() < 0.2 else v
    return pa.table({
        "b": pa.array([nul(rnd.random() < 0.5) for _ in range(n)], pa.bool_()),
        "i32": pa.array([nul(rnd.randrange(-1000, 1000)) for _ in range(n)], pa.int32()),
        "i64": pa.array([nul(rnd.randrange(-2**63, 2**63)) for _ in range(n)], pa.int64()),
        "f32": pa.array([nul(rnd.uniform(-5, 5)) for _ in range(n)], pa.float32()),
        "f64": pa.array([nul(rnd.uniform(-5, 5)) for _ in range(n)], pa.float64()),
        "s": pa.array([nul(f"item-{rnd.randrange(40)}-{i // 9}") for i in range(n)], pa.string()),
        "fsb": pa.array([nul(bytes([i % 5]) * 6) for i in range(n)], pa.binary(6)),
        "dec": pa.array([nul(decimal.Decimal(rnd.randrange(-10**6, 10**6)).scaleb(-2)) for _ in range(n)],
                        pa.decimal128(30, 2)),
        "ts": pa.array([nul(rnd.randrange(10**15)) for _ in range(n)], pa.timestamp("ns")),
        "lst": pa.array([nul([rnd.randrange(9) for _ in range(rnd.randrange(3))]) for _ in range(n)],
                        pa.list_(pa.int32())),
    })


def encodings(t, kind):
    plan = {}
    for f in t.schema:
        ty = f.type
        if kind == "delta":
            if pa.types.is_integer(ty) or pa.types.is_timestamp(ty):
                plan[f.name] = "DELTA_BINARY_PACKED"
            elif pa.types.is_string(ty):
                plan[f.name] = "DELTA_LENGTH_BYTE_ARRAY"
            elif pa.types.is_boolean(ty):
                plan[f.name] = "RLE"
        elif kind == "dba":
            if pa.types.is_string(ty) or pa.types.is_fixed_size_binary(ty) or pa.types.is_decimal(ty):
                plan[f.name] = "DELTA_BYTE_ARRAY"
        elif kind == "bss":
            if pa.types.is_floating(ty) or pa.types.is_fixed_size_binary(ty) or ty in (pa.int32(), pa.int64()):
                plan[f.name] = "BYTE_STREAM_SPLIT"
    return plan


def write_files(d: Path):
    t = table(300, 1)
    files = []
    k = 0
    for version in ("1.0", "2.0"):
        for codec in ("none", "snappy", "gzip", "zstd", "lz4", "brotli"):
            p = d / f"f{k}.parquet"
            k += 1
            pq.write_table(t, p, compression=codec, data_page_version=version, data_page_size=512,
                           row_group_size=150)
            files.append((p, f"dict_{codec}_v{version[0]}"))
        for kind in ("plain", "delta", "dba", "bss"):
            p = d / f"f{k}.parquet"
            k += 1
            pq.write_table(t, p, use_dictionary=False, column_encoding=encodings(t, kind) or None,
                           data_page_version=version, compression="none", data_page_size=512,
                           store_decimal_as_integer=kind != "dba")
            files.append((p, f"{kind}_v{version[0]}"))
    p = d / "int96.parquet"
    pq.write_table(t.select(["ts"]), p, use_deprecated_int96_timestamps=True, compression="none")
    files.append((p, "int96"))
    try:
        import duckdb
        con = duckdb.connect()
        q = "SELECT i::INTEGER a, (i * 7)::BIGINT b, 'v' || (i % 13) s, i / 3.0 d FROM range(400) t(i)"
        for opts, name in (("PARQUET_VERSION V2, COMPRESSION uncompressed", "duck_v2"),
                           ("COMPRESSION snappy", "duck_v1")):
            p = d / f"{name}.parquet"
            con.execute(f"COPY ({q}) TO '{p}' (FORMAT parquet, {opts})")
            files.append((p, name))
    except ImportError:
        pass
    return files


def uleb(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def bitpack(vals, w):
    acc = 0
    for i, v in enumerate(vals):
        acc |= v << (i * w)
    return acc.to_bytes((len(vals) * w + 7) // 8, "little")


def rle_seeds():
    seeds = {}
    rnd = random.Random(3)
    for w in (0, 1, 2, 3, 5, 8, 12, 16, 20, 31, 32, 33):
        vals = [rnd.randrange(1 << w) if w else 0 for _ in range(24)]
        body = uleb((3 << 1) | 1) + bitpack(vals, w)
        body += uleb(10 << 1) + (vals[0].to_bytes((w + 7) // 8, "little") if w else b"")
        n = 34
        seeds[f"hybrid_w{w}"] = bytes([w, n & 0xFF, n >> 8, 5]) + body
    # DELTA_BINARY_PACKED: block 128, 4 miniblocks, 5 values 1..5 (one block, width 0).
    delta = uleb(128) + uleb(4) + uleb(5) + uleb(2) + uleb(2) + bytes([0, 0, 0, 0])
    seeds["delta_example"] = bytes([1, 5, 0, 7]) + delta
    # 40 values with deltas 0..39 (min 0, width 6 in the first two miniblocks).
    vals = list(range(40))
    rel = vals[1:] + [0] * (64 - 39)
    delta = uleb(128) + uleb(4) + uleb(40) + uleb(0) + uleb(0) + bytes([6, 6, 0, 0])
    delta += bitpack(rel[:32], 6) + bitpack(rel[32:64], 6)
    seeds["delta_widths"] = bytes([6, 40, 0, 16]) + delta
    seeds["truncated_header"] = bytes([3, 10, 0, 1, 0x80])
    seeds["empty"] = bytes([4, 0, 0, 1])
    return seeds


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    pq_dump = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out = tmp / "seeds"
        (out / "decode_page").mkdir(parents=True)
        (out / "codec").mkdir()
        for path, prefix in write_files(tmp):
            subprocess.run([pq_dump, "--fuzz-seeds", str(out), "--seed-prefix", prefix, str(path)],
                           check=True, stdout=subprocess.DEVNULL)
        for name in ("decode_page", "codec"):
            dst = CORPUS / name
            shutil.rmtree(dst, ignore_errors=True)
            dst.mkdir(parents=True)
            seen = set()
            for f in sorted((out / name).iterdir()):
                data = f.read_bytes()
                h = hashlib.sha1(data).hexdigest()
                # Keep the first two pages of each chunk only, and no duplicates.
                if h in seen or "_p2" in f.name or "_p3" in f.name or "_rg1_" in f.name:
                    continue
                seen.add(h)
                (dst / f.name).write_bytes(data)
    dst = CORPUS / "rle_hybrid"
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for name, data in rle_seeds().items():
        (dst / f"{name}.bin").write_bytes(data)
    for name in ("decode_page", "codec", "rle_hybrid"):
        files = list((CORPUS / name).iterdir())
        print(f"{name}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
