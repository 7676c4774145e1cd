"""The page planner (planner/synth/), driven by tests/tools/pq_synth over
local files, must produce sparse and synthesized pages that every reader
decodes to the same selected rows.

For each fixture file (pyarrow- or DuckDB-written) and row selection,
pq_synth plans every data page of every column except the row-id column
``rid`` (kept real so that readers can filter on it) and writes a copy in
which every page planned sparse is replaced by its image. The selected rows
of the copy must then equal those of the original with:

  * pyarrow (parquet-cpp): ``pq.read_table`` of the whole file, then the
    selected rows (every page is decoded, synthesized ones included), with
    page CRC verification on for the files written with page checksums;
  * DuckDB: ``read_parquet`` semi-joined with the selected row ids (DuckDB
    decodes every page of the row groups it reads);
  * delta-rs (DataFusion / arrow-rs): the copy converted to a Delta table
    in place and read in full, when deltalake is installed and can convert
    the file's types.

The fixture matrix samples (pairwise over the dimensions, not the cross
product): encodings plain / dictionary / delta (DELTA_BINARY_PACKED ints,
DELTA_LENGTH_BYTE_ARRAY strings) / byte-stream-split floats with
DELTA_BYTE_ARRAY strings; codecs none / zstd / snappy; data page V1 and V2;
1 KiB / 64 KiB / 1 MiB data pages; required and nullable columns (with an
all-null column); several row groups; INT96 and page CRCs in some files.
Selections: none, one row, 0.01 %, 1 %, 50 % and all rows, clustered or
scattered. The last test asserts that the matrix exercised partial and
synthesized pages of the supported encodings, so the suite cannot pass
vacuously.

Environment: PQ_SYNTH_BIN; by default pq_synth next to SIEVEFS_BIN, else
<repo>/build/pq_synth (skipped, with a message, when it is not built). With
CI=true (scripts/test, CI) every skip here fails (conftest.py) but the one of
the batch readers run without test_readers_agree (a partial selection).
"""
from __future__ import annotations

import collections
import datetime
import decimal
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import s3env

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

REPO = Path(__file__).resolve().parents[2]
N_ROWS = 30000
ROW_GROUP = 22000  # two row groups; 1 MiB pages of 8-byte values span two zstd blocks

# (file key, column, outcome) -> pages; filled by the tests, checked last.
STATS: collections.Counter = collections.Counter()
READERS: collections.Counter = collections.Counter()
# (original, copy, selected rows, has page CRCs) for the batch readers (polars, Spark).
CASES: list = []


@pytest.fixture(scope="session")
def pq_synth_bin() -> str:
    return s3env.build_tool("pq_synth", "PQ_SYNTH_BIN", pytest.skip,
                            "cmake --build build --target pq_synth")


# -- fixture files ----------------------------------------------------------------

def make_table(nullable: bool, seed: int):
    rnd = random.Random(seed)
    n = N_ROWS

    def col(gen, p=0.1):
        return [None if nullable and rnd.random() < p else gen(i) for i in range(n)]

    ts0 = datetime.datetime(2024, 1, 1)
    words = ["", "a", "alpha", "beta", "gamma", "δέλτα", "x" * 40]
    cols = {
        "rid": pa.array(range(n), pa.int64()),
        "c_int32": pa.array(col(lambda i: rnd.randrange(-2**31, 2**31)), pa.int32()),
        # Full-range random: incompressible, so zstd stores raw blocks.
        "c_int64": pa.array(col(lambda i: rnd.randrange(-2**63, 2**63)), pa.int64()),
        "c_float": pa.array(col(lambda i: rnd.uniform(-1e6, 1e6)), pa.float32()),
        "c_double": pa.array(col(lambda i: rnd.uniform(-1e12, 1e12)), pa.float64()),
        "c_decimal": pa.array(col(lambda i: decimal.Decimal(rnd.randrange(-10**17, 10**17)).scaleb(-3)),
                              pa.decimal128(18, 3)),
        "c_date": pa.array(col(lambda i: datetime.date(2000, 1, 1) + datetime.timedelta(days=i % 9000)),
                           pa.date32()),
        "c_ts": pa.array(col(lambda i: ts0 + datetime.timedelta(microseconds=rnd.randrange(10**13))),
                         pa.timestamp("us")),
        "c_string": pa.array(col(lambda i: words[i % len(words)] + str(rnd.randrange(10**rnd.randrange(1, 8)))),
                             pa.string()),
        "c_binary": pa.array(col(lambda i: rnd.randbytes(rnd.randrange(0, 24))), pa.binary()),
        "c_bool": pa.array(col(lambda i: rnd.random() < 0.4), pa.bool_()),
        # Readers convert these (milliseconds to microseconds, INT32 to int8):
        # rebuilt values must stay in range.
        "c_ts_ms": pa.array(col(lambda i: rnd.randrange(-10**12, 10**13)), pa.timestamp("ms")),
        "c_int8": pa.array(col(lambda i: rnd.randrange(-128, 128)), pa.int8()),
    }
    fields = [pa.field(k, v.type, nullable=nullable or k == "rid") for k, v in cols.items()]
    # Optional but never null: chunk statistics say null_count 0, while a
    # synthesized V1 body may hold nulls.
    cols["c_nonull"] = pa.array([rnd.randrange(-2**40, 2**40) for _ in range(n)], pa.int64())
    fields.append(pa.field("c_nonull", pa.int64(), nullable=True))
    if nullable:
        cols["c_allnull"] = pa.array([None] * n, pa.int64())
        fields.append(pa.field("c_allnull", pa.int64()))
    fields[0] = pa.field("rid", pa.int64(), nullable=False)
    t = pa.table(list(cols.values()), schema=pa.schema(fields))
    return t


ENCODINGS = ["plain", "dict", "delta", "bss"]
CODECS = ["none", "zstd", "snappy"]
VERSIONS = ["1.0", "2.0"]
PAGE_SIZES = [1024, 64 * 1024, 1024 * 1024]
NULLS = [False, True]


def pairwise_configs(seed=7):
    """A small set of configs covering every pair of dimension values."""
    dims = [ENCODINGS, CODECS, VERSIONS, PAGE_SIZES, NULLS]
    product = list(itertools.product(*dims))
    random.Random(seed).shuffle(product)
    uncovered = {(i, a, j, b) for i, j in itertools.combinations(range(len(dims)), 2)
                 for a in dims[i] for b in dims[j]}
    chosen = []
    while uncovered:
        best = max(product, key=lambda c: sum((i, c[i], j, c[j]) in uncovered
                                              for i, j in itertools.combinations(range(len(c)), 2)))
        chosen.append(best)
        for i, j in itertools.combinations(range(len(best)), 2):
            uncovered.discard((i, best[i], j, best[j]))
        product.remove(best)
    # The combinations the planner supports best, always present.
    for extra in [("plain", "zstd", "1.0", 1024 * 1024, True), ("plain", "zstd", "2.0", 1024 * 1024, False),
                  ("plain", "none", "1.0", 64 * 1024, True), ("plain", "none", "2.0", 1024 * 1024, True),
                  ("delta", "none", "2.0", 64 * 1024, True),
                  ("dict", "zstd", "1.0", 64 * 1024, True)]:
        if extra not in chosen:
            chosen.append(extra)
    return chosen


CONFIGS = pairwise_configs()


def config_id(c):
    enc, codec, ver, page, nulls = c
    return f"{enc}-{codec}-v{ver[0]}-{page // 1024}k-{'null' if nulls else 'req'}"


def write_pyarrow_fixture(path: Path, cfg, idx: int):
    enc, codec, ver, page, nulls = cfg
    int96 = idx % 3 == 1
    crc = idx % 4 == 2
    t = make_table(nulls, seed=idx)
    kw = dict(compression=codec, data_page_version=ver, data_page_size=page, row_group_size=ROW_GROUP,
              write_page_index=True, write_statistics=True, use_deprecated_int96_timestamps=int96,
              write_page_checksum=crc)
    if enc == "plain":
        kw.update(use_dictionary=False)
    elif enc == "dict":
        kw.update(use_dictionary=True)
    elif enc == "delta":
        kw.update(use_dictionary=False, column_encoding={
            "c_int32": "DELTA_BINARY_PACKED", "c_int64": "DELTA_BINARY_PACKED", "c_date": "DELTA_BINARY_PACKED",
            "c_string": "DELTA_LENGTH_BYTE_ARRAY", "c_binary": "DELTA_LENGTH_BYTE_ARRAY",
            "c_nonull": "DELTA_BINARY_PACKED",
            **({"c_allnull": "DELTA_BINARY_PACKED"} if nulls else {})})
    elif enc == "bss":
        kw.update(use_dictionary=False, column_encoding={
            "c_float": "BYTE_STREAM_SPLIT", "c_double": "BYTE_STREAM_SPLIT",
            "c_string": "DELTA_BYTE_ARRAY", "c_binary": "DELTA_BYTE_ARRAY"})
    pq.write_table(t, path, **kw)
    return crc


DUCKDB_QUERY = """
SELECT i::BIGINT AS rid,
       CASE WHEN {nulls} AND i % 11 = 0 THEN NULL ELSE (hash(i) % 9223372036854775807)::BIGINT END AS c_int64,
       CASE WHEN {nulls} AND i % 7 = 0 THEN NULL ELSE (i * 37 % 1000003)::INTEGER END AS c_int32,
       CASE WHEN {nulls} AND i % 5 = 0 THEN NULL ELSE (hash(i * 3) % 1000000) / 7.0 END AS c_double,
       CASE WHEN {nulls} AND i % 13 = 0 THEN NULL ELSE 'v' || (i % 40) END AS c_string,
       CASE WHEN {nulls} AND i % 3 = 0 THEN NULL ELSE md5(i::VARCHAR) END AS c_md5,
       CASE WHEN {nulls} AND i % 9 = 0 THEN NULL ELSE (i % 1000)::DECIMAL(9, 2) / 7 END AS c_decimal,
       DATE '2020-01-01' + (i % 3000)::INTEGER AS c_date,
       i % 3 = 0 AS c_bool,
       CASE WHEN {nulls} AND i % 4 = 0 THEN NULL ELSE ((hash(i * 5) % 200)::INTEGER - 100)::TINYINT END AS c_tiny,
       epoch_ms(1600000000000 + (hash(i * 7) % 100000000)::BIGINT)::TIMESTAMP_MS AS c_ts_ms
FROM range(0, {n}) t(i)
"""

# DuckDB writes an OffsetIndex only with WRITE_PAGE_INDEX and DATA_PAGE_SIZE_LIMIT, and
# not for dictionary-encoded chunks (pq_synth leaves those as they are).
DUCKDB_CONFIGS = [
    ("zstd", "v1", True, 100000, 256 << 10), ("uncompressed", "v1", False, 16384, 8192),
    ("zstd", "v2", False, 16384, 65536), ("uncompressed", "v2", True, 100000, 65536),
]


def write_duckdb_fixture(path: Path, cfg):
    codec, ver, nulls, rg, page = cfg
    con = duckdb.connect()
    q = DUCKDB_QUERY.format(nulls="true" if nulls else "false", n=N_ROWS)
    con.execute(f"COPY ({q}) TO '{path}' (FORMAT parquet, COMPRESSION {codec}, PARQUET_VERSION {ver}, "
                f"ROW_GROUP_SIZE {rg}, WRITE_PAGE_INDEX true, DATA_PAGE_SIZE_LIMIT {page})")
    con.close()


# -- selections -------------------------------------------------------------------

def selection(kind: str, seed: int) -> list[int]:
    rnd = random.Random(seed)
    n = N_ROWS
    if kind == "none":
        return []
    if kind == "one":
        return [rnd.randrange(n)]
    if kind == "all":
        return list(range(n))
    frac, shape = kind.split("-")
    k = max(1, int(n * float(frac) / 100))
    if shape == "clustered":
        a = rnd.randrange(n - k + 1)
        return list(range(a, a + k))
    return sorted(rnd.sample(range(n), k))


SELECTIONS = ["none", "one", "0.01-clustered", "0.01-scattered", "1-clustered", "1-scattered",
              "50-clustered", "50-scattered", "all"]


def rows_arg(rows: list[int]) -> str:
    if not rows:
        return "none"
    parts, start, prev = [], rows[0], rows[0]
    for r in rows[1:] + [None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        parts.append(f"{start}-{prev + 1}")
        if r is not None:
            start = prev = r
    return ",".join(parts)


# -- checks -----------------------------------------------------------------------

def run_synth(binary, src: Path, dst: Path, rows, extra=()):
    r = subprocess.run([binary, str(src), str(dst), "--rows", rows_arg(rows), "--skip-columns", "rid",
                        "--verbose", *extra], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"pq_synth failed ({r.returncode}): {r.stderr[-3000:]}"
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    pages = [json.loads(line) for line in r.stderr.splitlines() if line.startswith("{")]
    assert len(pages) == summary["pages"]
    assert dst.stat().st_size == src.stat().st_size
    return summary, pages


def check_pyarrow(src: Path, dst: Path, rows, crc: bool):
    kw = {"page_checksum_verification": True} if crc else {}
    got = pq.read_table(dst, **kw)
    want = pq.read_table(src, **kw)
    idx = pa.array(rows, pa.int64())
    g, w = got.take(idx), want.take(idx)
    assert g.schema == w.schema
    for name in w.column_names:
        assert g[name].equals(w[name]), f"pyarrow: column {name} differs on the selected rows"
    READERS["pyarrow"] += 1


def check_duckdb(src: Path, dst: Path, rows):
    con = duckdb.connect()
    con.register("sel", pa.table({"id": pa.array(rows, pa.int64())}))
    q = "SELECT t.* FROM read_parquet('{}') t WHERE t.rid IN (SELECT id FROM sel) ORDER BY t.rid"
    got = con.execute(q.format(dst)).fetchall()
    want = con.execute(q.format(src)).fetchall()
    # Every page of every row group is decoded, not only the selected ones.
    assert con.execute(f"SELECT count(*) FROM read_parquet('{dst}')").fetchone()[0] == N_ROWS
    con.close()
    assert len(got) == len(rows)
    assert got == want, "duckdb: selected rows differ"
    READERS["duckdb"] += 1


def selected(col, rows):
    """Values of the selected rows only: unselected rows of a sparse copy may
    hold values Python cannot represent (INT96 day 0, ...)."""
    views = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if col.type in views:
        col = col.cast(views[col.type])
    return col.take(pa.array(rows, pa.int64())).to_pylist()


def check_deltars(tmp: Path, src: Path, dst: Path, rows):
    deltalake = pytest.importorskip("deltalake")
    tables = {}
    for name, f in (("got", dst), ("want", src)):
        d = tmp / f"delta_{name}"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        shutil.copyfile(f, d / "part-0.parquet")
        try:
            deltalake.convert_to_deltalake(str(d))
        except Exception as e:  # types Delta cannot hold (INT96, timestamp without zone, ...)
            return f"convert: {type(e).__name__}"
        dt = deltalake.DeltaTable(str(d))
        reader = deltalake.QueryBuilder().register("t", dt).execute("SELECT * FROM t ORDER BY rid")
        tables[name] = pa.table(reader.read_all())
    got, want = tables["got"], tables["want"]
    assert got.num_rows == N_ROWS
    for name in want.column_names:
        assert selected(got[name], rows) == selected(want[name], rows), f"delta-rs: column {name} differs"
    READERS["delta-rs"] += 1
    return None


def record(key: str, pages):
    for p in pages:
        kind = "real" if p["outcome"] == "real" else "synth" if p["synthesized"] else "partial"
        STATS[(key, p["column"], kind)] += 1


# -- tests ------------------------------------------------------------------------

def _cases():
    cases = []
    for i, cfg in enumerate(CONFIGS):
        sels = ["none"] + [SELECTIONS[1 + (i * 3 + j * 5) % (len(SELECTIONS) - 1)] for j in range(2)]
        cases.append(pytest.param("pyarrow", i, cfg, sels, id=config_id(cfg)))
    for i, cfg in enumerate(DUCKDB_CONFIGS):
        sels = ["none", SELECTIONS[1 + (i * 2) % (len(SELECTIONS) - 1)], SELECTIONS[2 + i]]
        cases.append(pytest.param("duckdb", i, cfg, sels, id=f"duckdb-{cfg[0]}-{cfg[1]}-{'null' if cfg[2] else 'req'}"))
    return cases


@pytest.mark.parametrize("writer,idx,cfg,sels", _cases())
def test_readers_agree(pq_synth_bin, tmp_path, writer, idx, cfg, sels):
    src = tmp_path / "in.parquet"
    crc = False
    if writer == "pyarrow":
        crc = write_pyarrow_fixture(src, cfg, idx)
        key = f"pa:{cfg[0]}:{cfg[1]}:{cfg[2]}"
    else:
        write_duckdb_fixture(src, cfg)
        key = f"duckdb:{cfg[0]}:{cfg[1]}"
    for s_i, kind in enumerate(sels):
        rows = selection(kind, seed=idx * 100 + s_i)
        dst = tmp_path / f"out_{s_i}.parquet"
        gap = [0, 64, 4096][(idx + s_i) % 3]
        # Half the runs plan like a caller that has not read the dictionary page header.
        extra = ("--gap", str(gap)) + (("--no-dict-size",) if (idx + s_i) % 2 else ())
        summary, pages = run_synth(pq_synth_bin, src, dst, rows, extra)
        record(key, pages)
        if kind == "none":
            # Nothing selected: every page of a supported layout is synthesized.
            assert summary["partial"] == 0
        for p in pages:
            assert p["outcome"] == "real" or p["rounds"] <= 6
            if p["outcome"] == "sparse" and not p["synthesized"]:
                assert p["fetched"] <= p["size"]
        check_pyarrow(src, dst, rows, crc)
        check_duckdb(src, dst, rows)
        CASES.append((str(src), str(dst), rows_arg(rows), crc))
        if writer == "pyarrow" and s_i == 0 or writer == "duckdb":
            why = check_deltars(tmp_path, src, dst, rows)
            if why:
                READERS[f"delta-rs skipped ({why})"] += 1


def test_min_saving_and_gap(pq_synth_bin, tmp_path):
    """--min-saving turns partial pages real with reason "saving"; a large
    gap merges ranges (fewer, larger fetches) without changing the result."""
    src = tmp_path / "in.parquet"
    write_pyarrow_fixture(src, ("plain", "none", "1.0", 1024 * 1024, True), 99)
    rows = selection("50-scattered", 5)
    s_all, _ = run_synth(pq_synth_bin, src, tmp_path / "a.parquet", rows, ("--min-saving", "0.9"))
    assert s_all["partial"] == 0 and s_all["reasons"].get("saving", 0) > 0
    rows = selection("1-scattered", 6)
    s_small, _ = run_synth(pq_synth_bin, src, tmp_path / "b.parquet", rows, ("--gap", "0"))
    s_big, _ = run_synth(pq_synth_bin, src, tmp_path / "c.parquet", rows, ("--gap", "100000"))
    assert s_small["partial"] > 0 and s_big["partial"] > 0
    assert s_big["sparse_fetched"] >= s_small["sparse_fetched"]
    for out in ("b", "c"):
        check_pyarrow(src, tmp_path / f"{out}.parquet", rows, False)
        check_duckdb(src, tmp_path / f"{out}.parquet", rows)


# -- batch readers: polars and Spark, one process each for every case above ----------

def _python_with(module: str, candidates) -> str | None:
    for c in candidates:
        if c and os.path.isfile(c):
            r = subprocess.run([c, "-c", f"import {module}"], capture_output=True, timeout=120)
            if r.returncode == 0:
                return c
    return None


BATCH_COMMON = r"""
import json, sys
def parse_rows(spec):
    out = []
    if spec == "none":
        return out
    for part in spec.split(","):
        a, b = part.split("-")
        out.extend(range(int(a), int(b)))
    return out
cases = json.load(open(sys.argv[1]))
results = []
"""

POLARS_SCRIPT = BATCH_COMMON + r"""
import polars as pl
for src, dst, rows, crc in cases:
    try:
        sel = pl.Series("rid", parse_rows(rows), dtype=pl.Int64)
        got = pl.read_parquet(dst)          # every page decoded
        want = pl.read_parquet(src)
        g = got.filter(pl.col("rid").is_in(sel)).sort("rid")
        w = want.filter(pl.col("rid").is_in(sel)).sort("rid")
        ok = got.height == want.height and g.equals(w)
        results.append([dst, "ok" if ok else "rows differ"])
    except Exception as e:
        results.append([dst, f"error: {type(e).__name__}: {str(e)[:300]}"])
print(json.dumps(results))
"""

SPARK_SCRIPT = BATCH_COMMON + r"""
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[1]").appName("page-plan-readers")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
         .config("spark.driver.memory", "768m")
         .config("spark.hadoop.parquet.page.verify-checksum.enabled", "true")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
for src, dst, rows, crc in cases:
    try:
        sel = spark.createDataFrame([(r,) for r in parse_rows(rows)] or [(-1,)], "rid bigint")
        def digest(path):
            df = spark.read.parquet(path)
            h = F.hash(*[F.col(c) for c in df.columns])
            picked = df.join(sel, "rid", "left_semi")
            full = df.agg(F.count(F.lit(1)), F.sum(h.cast("bigint") % 1000)).collect()[0]  # decodes every page
            part = picked.agg(F.count(F.lit(1)), F.sum(h.cast("decimal(38,0)"))).collect()[0]
            return full[0], list(part)
        g, w = digest(dst), digest(src)
        results.append([dst, "ok" if g == w else f"differ: {g} vs {w}"])
    except Exception as e:
        results.append([dst, f"error: {type(e).__name__}: {str(e)[:300]}"])
spark.stop()
print(json.dumps(results))
"""


def _run_batch(tmp_path, python, script, name, timeout, cases):
    manifest = tmp_path / f"{name}_cases.json"
    manifest.write_text(json.dumps(cases))
    code = tmp_path / f"{name}_reader.py"  # not polars.py: it would shadow the module
    code.write_text(script)
    r = subprocess.run([python, str(code), str(manifest)], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{name}: {r.stderr[-3000:]}"
    results = json.loads(r.stdout.strip().splitlines()[-1])
    bad = [x for x in results if x[1] != "ok"]
    assert not bad, f"{name}: {len(bad)} of {len(results)} copies read differently: {bad[:5]}"
    READERS[name] += len(results)


@pytest.mark.may_skip(r"^run together with test_readers_agree$")  # a partial selection (-k)
def test_zx_polars(tmp_path):
    """polars (its own Rust Parquet reader) over every copy written above."""
    if not CASES:
        pytest.skip("run together with test_readers_agree")
    py = _python_with("polars", [sys.executable, os.environ.get("SIEVE_POLARS_PYTHON"),
                                 str(REPO / ".venv" / "bin" / "python")])
    if not py:
        pytest.skip("no Python with polars (set SIEVE_POLARS_PYTHON)")
    _run_batch(tmp_path, py, POLARS_SCRIPT, "polars", 300, CASES)


@pytest.mark.may_skip(r"^run together with test_readers_agree$")  # a partial selection (-k)
def test_zy_spark(tmp_path):
    """Spark (parquet-mr, page CRCs verified) over the copies written above."""
    if not CASES:
        pytest.skip("run together with test_readers_agree")
    py = _python_with("pyspark", [os.environ.get("SIEVE_SPARK_PYTHON"), sys.executable,
                                  "/tmp/sparkvenv/bin/python"])
    if not py or not shutil.which("java"):
        pytest.skip("no Python with pyspark and a JDK (set SIEVE_SPARK_PYTHON)")
    # A JVM query per copy is slow (about a second): every copy with page
    # CRCs that nothing was selected from, and every fifth other copy.
    cases = [c for i, c in enumerate(CASES) if (c[3] and c[2] == "none") or i % 5 == 0]
    _run_batch(tmp_path, py, SPARK_SCRIPT, "spark", 900, cases)


@pytest.mark.may_skip(r"^run together with test_readers_agree$")  # a partial selection (-k)
def test_zz_matrix_exercised():
    """Runs last: the matrix above really produced sparse pages."""
    if not STATS:
        pytest.skip("run together with test_readers_agree")

    def count(pred, kind):
        return sum(v for (k, col, kd), v in STATS.items() if kd == kind and pred(k, col))

    summary = {kind: count(lambda k, c: True, kind) for kind in ("real", "partial", "synth")}
    print("page outcomes:", summary, "readers:", dict(READERS))
    # Partial pages: PLAIN fixed width, uncompressed and zstd raw blocks, V1 and V2,
    for codec in ("none", "zstd"):
        for ver in ("1.0", "2.0"):
            assert count(lambda k, c: k == f"pa:plain:{codec}:{ver}" and c in ("c_int64", "c_double"),
                         "partial") > 0, (codec, ver)
    # and snappy literals (the pairwise matrix holds plain snappy pages of one version).
    assert count(lambda k, c: k.startswith("pa:plain:snappy:") and c in ("c_int64", "c_double"), "partial") > 0
    assert count(lambda k, c: k.startswith("pa:delta:none") and c == "c_string", "partial") > 0
    assert count(lambda k, c: k.startswith("pa:bss:") and c == "c_double", "partial") > 0
    # Synthesized pages for every encoding family, uncompressed and zstd.
    for enc in ("plain", "dict", "delta", "bss"):
        for codec in ("none", "zstd", "snappy"):
            assert count(lambda k, c: k.startswith(f"pa:{enc}:{codec}:"), "synth") > 0, (enc, codec)
    assert count(lambda k, c: k.startswith("pa:dict:zstd") and c == "c_string", "synth") > 0
    assert count(lambda k, c: k.startswith("pa:plain:") and c == "c_string", "synth") > 0
    assert count(lambda k, c: k.startswith("duckdb:"), "synth") > 0
    assert count(lambda k, c: k.startswith("duckdb:"), "partial") > 0
    assert READERS["pyarrow"] > 0 and READERS["duckdb"] > 0
