"""The page decoders (planner/decode/: page_decode.c, value_decode.c, codec.c,
rle_hybrid.c, pq_value.c), driven by tests/tools/pq_dump over local files,
must produce exactly the values pyarrow reads back from the same files.

Fixtures are written at test time with pyarrow and cover data page V1 and V2,
every codec pyarrow writes (none, snappy, gzip, zstd, lz4 (written as
LZ4_RAW), brotli), dictionary / PLAIN / RLE / DELTA_BINARY_PACKED /
DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY / BYTE_STREAM_SPLIT values, with
and without nulls, tiny and large pages, several row groups, INT96
timestamps, and nested (list, struct) columns whose definition and
repetition levels are checked too. No mount or S3 is involved.

Environment: PQ_DUMP_BIN; by default pq_dump next to SIEVEFS_BIN (so the
ASan+UBSan e2e run uses the sanitizer build), else <repo>/build/pq_dump.
"""
from __future__ import annotations

import decimal
import json
import math
import os
import random
import re
import struct
import subprocess
from pathlib import Path

import pytest

import s3env

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pc = pytest.importorskip("pyarrow.compute")

REPO = Path(__file__).resolve().parents[2]
N_ROWS = 3000
SANITIZER_RE = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:")

pytestmark = pytest.mark.asan  # ~10 s under ASan; runs in the sanitizer e2e subset too

decimal.getcontext().prec = 100


@pytest.fixture(scope="session")
def pq_dump_bin() -> str:
    return s3env.build_tool("pq_dump", "PQ_DUMP_BIN", pytest.fail,
                            "cmake -S . -B build -G Ninja && cmake --build build")


# -- fixture data ---------------------------------------------------------------

def _maybe_null(rnd, v, nulls, p=0.15):
    return None if nulls and rnd.random() < p else v


def make_table(n: int, nulls: bool, seed: int = 1):
    rnd = random.Random(seed)
    i32_edge = [-2**31, 2**31 - 1, 0, -1, 1]
    i64_edge = [-2**63, 2**63 - 1, 0, -1, 1]
    f_edge = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-45, 3.4e38]
    d_edge = [float("nan"), float("inf"), float("-inf"), -0.0, 5e-324, 1.7976931348623157e308]
    words = ["", "a", "alpha", "beta", "gamma", "δέλτα", "emoji \U0001F600", "x" * 300]

    def col(gen):
        return [_maybe_null(rnd, gen(i), nulls) for i in range(n)]

    def pick(edges, gen):
        return lambda i: edges[i % len(edges)] if i % 97 < len(edges) else gen(i)

    ts0 = 1_600_000_000
    cols = {
        "b": pa.array(col(lambda i: rnd.random() < 0.3), pa.bool_()),
        "b_runs": pa.array(col(lambda i: (i // 300) % 2 == 0), pa.bool_()),
        "i8": pa.array(col(lambda i: rnd.randrange(-128, 128)), pa.int8()),
        "i16": pa.array(col(lambda i: rnd.randrange(-2**15, 2**15)), pa.int16()),
        "i32": pa.array(col(pick(i32_edge, lambda i: rnd.randrange(-2**31, 2**31))), pa.int32()),
        "i32_small": pa.array(col(lambda i: rnd.randrange(0, 20)), pa.int32()),
        "i32_seq": pa.array(col(lambda i: 1000 + 3 * i), pa.int32()),
        "i64": pa.array(col(pick(i64_edge, lambda i: rnd.randrange(-2**63, 2**63))), pa.int64()),
        "i64_seq": pa.array(col(lambda i: 10**12 + i * 7 - (i % 5) * 3), pa.int64()),
        "u8": pa.array(col(lambda i: rnd.randrange(0, 256)), pa.uint8()),
        "u16": pa.array(col(lambda i: rnd.randrange(0, 2**16)), pa.uint16()),
        "u32": pa.array(col(lambda i: rnd.randrange(2**31 - 50, 2**32)), pa.uint32()),
        "u64": pa.array(col(lambda i: rnd.randrange(2**63 - 50, 2**64)), pa.uint64()),
        "f32": pa.array(col(pick(f_edge, lambda i: rnd.uniform(-1e6, 1e6))), pa.float32()),
        "f64": pa.array(col(pick(d_edge, lambda i: rnd.uniform(-1e12, 1e12))), pa.float64()),
        "f16": pa.array(col(lambda i: [0.5, -2.0, 65504.0, 1.0 / 1024, 0.0][i % 5]), pa.float16()),
        "s_dict": pa.array(col(lambda i: words[rnd.randrange(len(words))]), pa.string()),
        "s_prefix": pa.array(col(lambda i: f"https://example.com/path/{i // 7:06d}/item-{i}"), pa.string()),
        "s_rand": pa.array(col(lambda i: "".join(chr(rnd.randrange(32, 127)) for _ in range(rnd.randrange(0, 40)))),
                           pa.string()),
        "bin": pa.array(col(lambda i: bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 20)))), pa.binary()),
        "fsb": pa.array(col(lambda i: bytes([i % 7] * 8) + struct.pack("<q", i // 3)), pa.binary(16)),
        "dec9": pa.array(col(lambda i: decimal.Decimal(rnd.randrange(-10**9 + 1, 10**9)).scaleb(-2)),
                         pa.decimal128(9, 2)),
        "dec18": pa.array(col(lambda i: decimal.Decimal(rnd.randrange(-10**18 + 1, 10**18)).scaleb(-4)),
                          pa.decimal128(18, 4)),
        "dec38": pa.array(col(lambda i: decimal.Decimal(rnd.randrange(-10**38 + 1, 10**38)).scaleb(-10)),
                          pa.decimal128(38, 10)),
        "date": pa.array(col(lambda i: rnd.randrange(-100000, 100000)), pa.date32()),
        "t_ms": pa.array(col(lambda i: rnd.randrange(0, 86400 * 1000)), pa.time32("ms")),
        "t_us": pa.array(col(lambda i: rnd.randrange(0, 86400 * 10**6)), pa.time64("us")),
        "t_ns": pa.array(col(lambda i: rnd.randrange(0, 86400 * 10**9)), pa.time64("ns")),
        "ts_ms": pa.array(col(lambda i: (ts0 + i) * 1000), pa.timestamp("ms")),
        "ts_us_utc": pa.array(col(lambda i: (ts0 + rnd.randrange(-10**8, 10**8)) * 10**6), pa.timestamp("us", tz="UTC")),
        "ts_ns": pa.array(col(lambda i: (ts0 + i) * 10**9 + rnd.randrange(10**9)), pa.timestamp("ns")),
        "lst": pa.array(col(lambda i: [_maybe_null(rnd, rnd.randrange(-50, 50), nulls, 0.2)
                                       for _ in range(rnd.randrange(0, 4))]), pa.list_(pa.int32())),
        "st": pa.array(col(lambda i: {"x": _maybe_null(rnd, i, nulls, 0.2), "y": f"y{i % 11}"}),
                       pa.struct([("x", pa.int64()), ("y", pa.string())])),
    }
    return pa.table(cols)


# -- expected values ----------------------------------------------------------

def _float_token(v, f32: bool):
    if v is None:
        return None
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return struct.unpack("<f", struct.pack("<f", v))[0] if f32 else float(v)


def _dec_token(v):
    return None if v is None else format(v, "f")


def _hex(v):
    if v is None:
        return None
    return (v.encode("utf-8") if isinstance(v, str) else bytes(v)).hex()


def expected_leaf_values(arr):
    """Python values of a flat pyarrow array, in pq_dump's representation."""
    t = arr.type
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        return arr.to_pylist()
    if pa.types.is_float16(t):
        return [_float_token(v, True) for v in pc.cast(arr, pa.float32()).to_pylist()]
    if pa.types.is_floating(t):
        return [_float_token(v, t == pa.float32()) for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [_dec_token(v) for v in arr.to_pylist()]
    if pa.types.is_date32(t):
        return pc.cast(arr, pa.int32()).to_pylist()
    if pa.types.is_time32(t):
        return pc.cast(arr, pa.int32()).to_pylist()
    if pa.types.is_time64(t) or pa.types.is_timestamp(t):
        return pc.cast(arr, pa.int64()).to_pylist()
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return [_hex(v) for v in arr.to_pylist()]
    if isinstance(t, pa.BaseExtensionType):
        return expected_leaf_values(arr.storage)
    if pa.types.is_null(t):
        return [None] * len(arr)
    raise AssertionError(f"no expectation for {t}")


def normalize_got(values, physical: str):
    if physical == "FLOAT" or physical == "FIXED_LEN_BYTE_ARRAY":
        return [struct.unpack("<f", struct.pack("<f", v))[0] if isinstance(v, float) else v for v in values]
    return values


def _storage(t):
    return t.storage_type if isinstance(t, pa.BaseExtensionType) else t


def leaf_paths(t, path):
    """Parquet leaf paths under a field, as pyarrow names them."""
    t = _storage(t)
    if pa.types.is_map(t):
        return [f"{path}.key_value.key"] + leaf_paths(t.item_type, f"{path}.key_value.value")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return leaf_paths(t.value_type, f"{path}.list.element")
    if pa.types.is_struct(t):
        return [p for f in t for p in leaf_paths(f.type, f"{path}.{f.name}")]
    return [path]


def shred(t, nullable, v, d, r, rdepth, path, out):
    """Dremel shredding of one value: append (def, rep) to out[leaf] for every
    leaf entry it produces. d/r: levels reached so far; rdepth: number of
    repeated ancestors."""
    if nullable:
        if v is None:
            for p in leaf_paths(t, path):
                out[p].append((d, r))
            return
        d += 1
    t = _storage(t)
    if pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        if pa.types.is_map(t):
            children = [(t.key_type, False, f"{path}.key_value.key", 0),
                        (t.item_type, t.item_field.nullable, f"{path}.key_value.value", 1)]
            group = f"{path}.key_value"
        else:
            children = [(t.value_type, t.value_field.nullable, f"{path}.list.element", None)]
            group = f"{path}.list"
        if not v:  # empty: one entry at the group's level for every leaf below
            for p in leaf_paths(t, path):
                out[p].append((d, r))
            return
        del group
        for i, e in enumerate(v):
            rr = r if i == 0 else rdepth + 1
            for ct, cn, cp, k in children:
                shred(ct, cn, e if k is None else e[k], d + 1, rr, rdepth + 1, cp, out)
        return
    if pa.types.is_struct(t):
        for f in t:
            shred(f.type, f.nullable, v[f.name], d, r, rdepth, f"{path}.{f.name}", out)
        return
    out[path].append((d, r))


def flat_leaves(arr, path):
    """{leaf path: array of the leaf's entries} with parent nulls applied."""
    t = arr.type
    if isinstance(t, pa.BaseExtensionType):
        return flat_leaves(arr.storage, path)
    if pa.types.is_map(t):
        as_list = pa.ListArray.from_arrays(
            arr.offsets, pa.StructArray.from_arrays([arr.keys, arr.items], ["key", "value"]),
            mask=arr.is_null())
        entries = as_list.flatten()  # struct<key, value> of the entries of non-null maps
        out = {f"{path}.key_value.key": entries.field("key")}
        out.update(flat_leaves(entries.field("value"), f"{path}.key_value.value"))
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return flat_leaves(arr.flatten(), f"{path}.list.element")
    if pa.types.is_struct(t):
        out = {}
        for f, child in zip(t, arr.flatten()):
            out.update(flat_leaves(child, f"{path}.{f.name}"))
        return out
    return {path: arr}


def expected_columns(table):
    """{leaf path: dict(values=..., def=..., rep=...)}; def/rep only for
    nested leaves (the flat ones list nulls among the values)."""
    exp = {}
    for field in table.schema:
        chunked = table.column(field.name)
        arr = pa.concat_arrays(chunked.chunks) if chunked.num_chunks != 1 else chunked.chunk(0)
        t = _storage(field.type)
        if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t)
                or pa.types.is_map(t)):
            exp[field.name] = {"values": expected_leaf_values(flat_leaves(arr, field.name)[field.name])}
            continue
        levels = {p: [] for p in leaf_paths(field.type, field.name)}
        for v in arr.to_pylist():
            shred(field.type, field.nullable, v, 0, 0, 0, field.name, levels)
        for p, leaf in flat_leaves(arr, field.name).items():
            vals = [v for v in expected_leaf_values(leaf) if v is not None]
            exp[p] = {"values": vals, "def": [d for d, _ in levels[p]], "rep": [r for _, r in levels[p]]}
    return exp


# -- running pq_dump ----------------------------------------------------------

def run_dump(pq_dump_bin, path):
    r = subprocess.run([pq_dump_bin, str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"pq_dump failed ({r.returncode}): {r.stderr.strip()}"
    assert r.stderr == "", r.stderr
    return {c["column"]: c for c in (json.loads(line) for line in r.stdout.splitlines())}


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first difference at {i}: got {x!r}, expected {y!r}"
    return f"lengths differ: got {len(a)}, expected {len(b)}"


def _flat_from_levels(e, max_def):
    it = iter(e["values"])
    return [next(it) if d == max_def else None for d in e["def"]]


def check_file(pq_dump_bin, path, expect_encodings=None, expect_codec=None, expect_version=None):
    """pq_dump's output for every column equals what pyarrow reads from path."""
    got = run_dump(pq_dump_bin, path)
    exp = expected_columns(pq.read_table(path, coerce_int96_timestamp_unit="ns"))
    assert sorted(got) == sorted(exp)
    for col, e in exp.items():
        g = got[col]
        if "def" in e and "def" not in g:
            # Nested for pyarrow but flat for Parquet (a required struct's
            # optional field): compare the flat form.
            e = {"values": _flat_from_levels(e, g["max_def"])}
        values = normalize_got(g["values"], g["physical"]) if g["kind"] == "FLOAT" else g["values"]
        assert values == e["values"], f"{path.name}: column {col} values: {first_diff(values, e['values'])}"
        if "def" in g:
            assert "def" in e, f"{col}: pq_dump treats it as nested, pyarrow as flat"
            assert g["def"] == e["def"], f"{col} def levels: {first_diff(g['def'], e['def'])}"
            assert g["rep"] == e["rep"], f"{col} rep levels: {first_diff(g['rep'], e['rep'])}"
        if expect_codec:
            assert g["codecs"] == [expect_codec], (col, g["codecs"])
        if expect_version:
            assert g["page_versions"] == [expect_version], (col, g["page_versions"])
    for col, enc in (expect_encodings or {}).items():
        leaf = next(k for k in got if k == col or k.startswith(col + "."))
        assert enc in got[leaf]["encodings"], f"{col}: wanted {enc}, pages used {got[leaf]['encodings']}"
    return got


# -- the matrix ----------------------------------------------------------------

CODECS = [("none", "UNCOMPRESSED"), ("snappy", "SNAPPY"), ("gzip", "GZIP"), ("zstd", "ZSTD"),
          ("lz4", "LZ4_RAW"), ("brotli", "BROTLI")]


@pytest.fixture(scope="module")
def tables():
    return {True: make_table(N_ROWS, True), False: make_table(N_ROWS, False, seed=2)}


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("codec,codec_name", CODECS)
def test_codecs_dictionary(pq_dump_bin, tables, tmp_path, version, codec, codec_name):
    t = tables[True]
    p = tmp_path / f"codec_{codec}_{version}.parquet"
    pq.write_table(t, p, compression=codec, data_page_version=version, row_group_size=1000,
                   data_page_size=2048)
    check_file(pq_dump_bin, p, expect_codec=codec_name, expect_version=int(version[0]),
               expect_encodings={"s_dict": "RLE_DICTIONARY", "i32_small": "RLE_DICTIONARY"})


def _encoding_plan(table, kind):
    """column_encoding for one family of encodings, by column type."""
    plan = {}
    for f in table.schema:
        t = f.type
        if kind == "plain":
            if not (pa.types.is_list(t) or pa.types.is_struct(t)):
                plan[f.name] = "PLAIN"
        elif kind == "delta":
            if (pa.types.is_integer(t) or pa.types.is_date32(t) or pa.types.is_time32(t)
                    or pa.types.is_time64(t) or pa.types.is_timestamp(t)):
                plan[f.name] = "DELTA_BINARY_PACKED"
            elif pa.types.is_string(t) or pa.types.is_binary(t):
                plan[f.name] = "DELTA_LENGTH_BYTE_ARRAY"
            elif pa.types.is_boolean(t):
                plan[f.name] = "RLE"
        elif kind == "delta_strings":
            if (pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t)
                    or (pa.types.is_decimal(t) and t.precision > 18)):
                plan[f.name] = "DELTA_BYTE_ARRAY"
            elif pa.types.is_decimal(t):
                plan[f.name] = "DELTA_BINARY_PACKED"
        elif kind == "bss":
            if (pa.types.is_floating(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_decimal(t)
                    or t in (pa.int32(), pa.int64())):
                plan[f.name] = "BYTE_STREAM_SPLIT"
    return plan


ENCODING_CHECKS = {
    "plain": {"i32": "PLAIN", "s_rand": "PLAIN", "b": "PLAIN", "fsb": "PLAIN", "dec38": "PLAIN"},
    "delta": {"i32": "DELTA_BINARY_PACKED", "i64_seq": "DELTA_BINARY_PACKED", "u64": "DELTA_BINARY_PACKED",
              "s_prefix": "DELTA_LENGTH_BYTE_ARRAY", "bin": "DELTA_LENGTH_BYTE_ARRAY", "b": "RLE"},
    "delta_strings": {"s_prefix": "DELTA_BYTE_ARRAY", "fsb": "DELTA_BYTE_ARRAY", "dec38": "DELTA_BYTE_ARRAY",
                      "dec9": "DELTA_BINARY_PACKED"},
    "bss": {"f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT", "i32": "BYTE_STREAM_SPLIT",
            "i64": "BYTE_STREAM_SPLIT", "fsb": "BYTE_STREAM_SPLIT", "dec38": "BYTE_STREAM_SPLIT"},
}


@pytest.mark.parametrize("nulls", [True, False], ids=["nulls", "no_nulls"])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("kind", ["plain", "delta", "delta_strings", "bss"])
def test_encodings(pq_dump_bin, tables, tmp_path, kind, version, nulls):
    t = tables[nulls]
    p = tmp_path / f"enc_{kind}_{version}_{nulls}.parquet"
    pq.write_table(t, p, use_dictionary=False, column_encoding=_encoding_plan(t, kind),
                   data_page_version=version, compression="zstd", row_group_size=1200,
                   data_page_size=4096, store_decimal_as_integer=True)
    check_file(pq_dump_bin, p, expect_version=int(version[0]), expect_encodings=ENCODING_CHECKS[kind])


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("pages", ["tiny", "large"])
def test_page_sizes(pq_dump_bin, tables, tmp_path, version, pages):
    t = tables[True]
    p = tmp_path / f"pages_{pages}_{version}.parquet"
    if pages == "tiny":
        opts = dict(data_page_size=1, write_batch_size=7, row_group_size=500, dictionary_pagesize_limit=64)
    else:
        opts = dict(data_page_size=64 << 20, row_group_size=N_ROWS * 10)
    pq.write_table(t, p, data_page_version=version, compression="snappy", **opts)
    check_file(pq_dump_bin, p, expect_version=int(version[0]))


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_int96_and_legacy_types(pq_dump_bin, tmp_path, version):
    rnd = random.Random(5)
    ns = [rnd.randrange(-2**62, 2**62) // 1000 * 1000 for _ in range(2000)] + [None] * 10
    t = pa.table({"ts96": pa.array(ns, pa.timestamp("ns")),
                  "ts_ms": pa.array([(v or 0) // 10**6 for v in ns], pa.timestamp("ms"))})
    p = tmp_path / f"int96_{version}.parquet"
    pq.write_table(t, p, use_deprecated_int96_timestamps=True, data_page_version=version,
                   use_dictionary=False)
    got = check_file(pq_dump_bin, p)
    assert got["ts96"]["physical"] == "INT96"
    # Parquet format 1.0 output: legacy converted types instead of logical types.
    p1 = tmp_path / f"legacy_{version}.parquet"
    t2 = make_table(800, True, seed=9).drop_columns(["f16", "u64", "t_ns", "ts_ns"])
    pq.write_table(t2, p1, version="1.0", data_page_version=version)
    check_file(pq_dump_bin, p1, expect_encodings={"s_dict": "PLAIN_DICTIONARY"} if version == "1.0" else None)


def test_required_columns(pq_dump_bin, tmp_path):
    schema = pa.schema([pa.field("r32", pa.int32(), nullable=False),
                        pa.field("rs", pa.string(), nullable=False),
                        pa.field("rb", pa.bool_(), nullable=False)])
    t = pa.table({"r32": list(range(5000)), "rs": [f"v{i % 300}" for i in range(5000)],
                  "rb": [i % 3 == 0 for i in range(5000)]}, schema=schema)
    for version in ("1.0", "2.0"):
        for dictionary in (True, False):
            p = tmp_path / f"req_{version}_{dictionary}.parquet"
            pq.write_table(t, p, data_page_version=version, use_dictionary=dictionary, row_group_size=1234)
            got = check_file(pq_dump_bin, p)
            assert got["r32"]["max_def"] == 0


def test_empty_table(pq_dump_bin, tmp_path):
    """pyarrow writes one empty row group whose chunks have data_page_offset 0
    (and, for the boolean column, total_compressed_size 0)."""
    schema = pa.schema([pa.field("r32", pa.int32(), nullable=False), pa.field("s", pa.string()),
                        pa.field("rb", pa.bool_(), nullable=False)])
    p = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"r32": [], "s": [], "rb": []}, schema=schema), p)
    r = subprocess.run([pq_dump_bin, str(p)], capture_output=True, text=True, timeout=60)
    assert not SANITIZER_RE.search(r.stderr), r.stderr
    assert r.returncode == 0, r.stderr
    got = {c["column"]: c for c in map(json.loads, r.stdout.splitlines())}
    assert sorted(got) == ["r32", "rb", "s"]
    assert all(c["values"] == [] for c in got.values())


def test_all_null_columns(pq_dump_bin, tmp_path):
    t = pa.table({"n32": pa.array([None] * 3000, pa.int32()), "ns": pa.array([None] * 3000, pa.string()),
                  "nd": pa.array([None] * 3000, pa.float64())})
    for version in ("1.0", "2.0"):
        for dictionary in (True, False):
            p = tmp_path / f"nulls_{version}_{dictionary}.parquet"
            pq.write_table(t, p, data_page_version=version, use_dictionary=dictionary, compression="zstd")
            check_file(pq_dump_bin, p)


def test_corrupt_file_is_an_error_not_a_crash(pq_dump_bin, tmp_path, tables):
    """Flipping bytes inside column data makes pq_dump fail cleanly or decode
    something; it must never crash (exit status 0 or 1 only)."""
    t = tables[True].select(["i32", "s_prefix", "f64", "lst"])
    p = tmp_path / "victim.parquet"
    pq.write_table(t, p, compression="none", use_dictionary=False,
                   column_encoding={"i32": "DELTA_BINARY_PACKED", "s_prefix": "DELTA_BYTE_ARRAY",
                                    "f64": "BYTE_STREAM_SPLIT"})
    data = bytearray(p.read_bytes())
    footer_len = struct.unpack("<I", data[-8:-4])[0]
    body_end = len(data) - 8 - footer_len
    rnd = random.Random(7)
    for k in range(60):
        d = bytearray(data)
        for _ in range(1 + k % 4):
            d[rnd.randrange(4, body_end)] = rnd.randrange(256)
        q = tmp_path / f"corrupt_{k}.parquet"
        q.write_bytes(bytes(d))
        r = subprocess.run([pq_dump_bin, str(q)], capture_output=True, text=True, timeout=60)
        assert r.returncode in (0, 1), (k, r.returncode, r.stderr[-500:])
        assert not SANITIZER_RE.search(r.stderr), (k, r.stderr[-2000:])
        if r.returncode == 1:
            assert r.stderr.startswith("pq_dump: "), (k, r.stderr[-500:])


def test_duckdb_written_files(pq_dump_bin, tmp_path):
    """Another writer's page layouts (DuckDB: DELTA_BINARY_PACKED lists,
    BYTE_STREAM_SPLIT doubles, PLAIN_DICTIONARY), read back by pyarrow."""
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    query = """SELECT i::INTEGER AS i, (i * 3 - 7)::BIGINT AS j, 'str' || (i % 100) AS s,
                      CASE WHEN i % 7 = 0 THEN NULL ELSE i / 3.0 END AS d, (i % 5 = 0) AS b,
                      CASE WHEN i % 11 = 0 THEN NULL ELSE [i, NULL, i + 1] END AS l,
                      (i * 1.5)::FLOAT AS f, (i * 1.25)::DECIMAL(18, 3) AS dec,
                      md5(i::VARCHAR) AS h, DATE '2020-01-01' + (i % 1000)::INTEGER AS dt
               FROM range(30000) t(i)"""
    for opts in ("PARQUET_VERSION V2, COMPRESSION zstd", "COMPRESSION snappy", "COMPRESSION gzip, ROW_GROUP_SIZE 4096",
                 "PARQUET_VERSION V2, COMPRESSION uncompressed"):
        p = tmp_path / f"duck_{len(list(tmp_path.iterdir()))}.parquet"
        con.execute(f"COPY ({query}) TO '{p}' (FORMAT parquet, {opts})")
        check_file(pq_dump_bin, p)


FIXTURES = sorted((REPO / "tests" / "fixtures" / "parquet").glob("*.parquet"))


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_committed_fixtures(pq_dump_bin, path):
    """The repository's fixtures, including Spark (parquet-java) and DuckDB
    files, decode to what pyarrow reads."""
    check_file(pq_dump_bin, path)
