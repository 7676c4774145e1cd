"""Benchmark data and queries for the sievefs benchmark harness (issue 5).

Tables: TPC-H lineitem (tpchgen-cli) widened deterministically to 90 and 416
columns, written as Delta tables in one of four layouts (`layouts`):

  sieve    (table lineitem_wW_CODEC) pyarrow's ParquetWriter tuned to suit
           sievefs views: PLAIN values, no dictionary, page index,
           statistics, data pages of at most 1 MiB or `page_rows` (20,000)
           rows, row groups of at most 131,072 rows; files of about
           `target_file_mib` (512 MiB at full scale, 64 MiB below scale 1)
  pyarrow  (lineitem_wW_CODEC_pyarrow) what pyarrow writes with
           pq.ParquetWriter(use_dictionary=False, write_page_index=True,
           data_page_size=1 MiB) and row groups of `row_group_rows`
           (100,000), its defaults otherwise (V1 pages, decimals as
           FIXED_LEN_BYTE_ARRAY), except that its 20,000-row page cap is
           lifted to the row group so pages reach the 1 MiB page size (fixed
           width columns: one page per chunk of 100,000 rows): the layout
           with an OffsetIndex. Files rolled at `target_file_mib` as above.
  pyarrow_default (lineitem_wW_CODEC_pyarrow_default) pq.ParquetWriter
           with its defaults but the codec (NONE or ZSTD, not snappy):
           dictionary pages (falling back to PLAIN past 1 MiB), data pages
           of 1 MiB or 20,000 rows, no OffsetIndex, row groups of
           `row_group_rows` (100,000): pages of different sizes, mapped by
           `sievefs index` ahead of time, not by a mount.
  duckdb   (lineitem_wW_CODEC_duckdb) DuckDB's own writer: one COPY (FORMAT
           parquet, ROW_GROUP_SIZE `row_group_rows`, FILE_SIZE_BYTES
           `target_file_mib` MiB, COMPRESSION uncompressed|zstd), DuckDB's
           defaults otherwise: one data page per column chunk, dictionary
           pages where DuckDB picks them, no OffsetIndex/ColumnIndex. Run
           with threads=1 (deterministic files).

  deltalake (lineitem_wW_snappy_deltalake) deltalake.write_deltalake with
           every default (delta-rs, arrow-rs's writer): SNAPPY, dictionary
           pages (falling back to PLAIN past 1 MiB), data pages of 1 MiB or
           20,000 rows, an OffsetIndex, the writer's own file and row group
           sizes and its own Delta log. Always SNAPPY (the codec list does
           not apply).
  spark    (lineitem_wW_snappy_spark) Spark (pyspark 4.2 + delta-spark,
           parquet-java underneath) writing the same rows as a Delta table
           with every default: SNAPPY, dictionary pages (falling back to
           PLAIN past 1 MiB), pages of 1 MiB or 20,000 rows, page CRCs, an
           OffsetIndex, one file per input split of 128 MiB, its own Delta
           log. The rows reach Spark through an uncompressed Parquet file
           pyarrow writes first. File names carry Spark's random UUIDs, so
           regenerated tables are not byte-identical. Always SNAPPY.

  appends  (lineitem_w18_snappy_appends, generate_appends()) a table grown by
           appends: the 16 lineitem columns, rownum and a `day` partition,
           written by 10 deltalake.write_deltalake(mode="append",
           partition_by=["day"]) calls with every other default, 30 new days
           each: 300 small files (about 0.6 MB at scale 0.6), 3.6 M rows. Its
           query is `point_id` (4 rows by l_orderkey, 6 columns).

one variant uncompressed, one ZSTD; optionally (dv=True) a copy of each
width (first codec, first layout) whose scattered ~1 % of rows are deleted by
Spark with deletion vectors.

Columns, in this order (the first 32 have Delta statistics):
  l_orderkey .. l_comment   the 16 lineitem columns (tpchgen-cli order, sorted by l_orderkey)
  rownum     int64  0-based position of the row in the table (file order): clustered selections
  sel_hash   int32  (rownum * 612433) % 1,000,000: a low-discrepancy permutation of each
                    million rows, so `sel_hash < 100` selects 0.01 % of the rows, spread
                    evenly over every row group and page (scattered), at any scale
  del_hash   int32  splitmix64(rownum) % 1,000,000: `del_hash < 10000` are the rows the
                    DV variant deletes (random, ~1 %)
  w001_i64 ..       derived columns cycling int64, double, decimal(15,2), int64 hash, date,
                    double hash, int32, string: `wNNN_<kind>`, each a pure function of the
                    row (and its rownum), so every width is a prefix of the widest one
Every column is nullable in the schema (as Spark and delta-rs write them) and holds no null.

Queries (queries(table)): for 0.01 %, 0.02 %, 0.1 %, 1 % x scattered (`sel_hash < N`) and
clustered (`rownum BETWEEN a AND b`), projecting 70 columns; plus `full_scan`, an
aggregate over a few columns of every row (no hint: it runs on the plain path).

Generation is cached: a table whose `<out>/<name>.manifest.json` matches the
requested parameters (and whose files are all there) is not generated again.
Same inputs and library versions give byte-identical Parquet files.

CLI:  python scripts/lib/bench_data.py --out DIR [--scale 0.05] [--widths 90,416]
          [--codecs none,zstd] [--dv] [--target-file-mib N] [--queries]
prints a JSON summary. Full scale: --scale 10 (about 60 M rows).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import decimal
import functools
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GENERATOR_VERSION = 2                # bump on any change to the data: cached tables are then regenerated
MiB = 1 << 20
MAX_ROW_GROUP_ROWS = 131_072
DEFAULT_PAGE_ROWS = 20_000
DEFAULT_PAGE_BYTES = 1 * MiB
DEFAULT_SCALE = 0.05
DEFAULT_WIDTHS = (90, 416)
DEFAULT_CODECS = ("none", "zstd")
ZSTD_LEVEL = 3                      # parquet-java's default level
STATS_COLUMNS = 32                  # Delta's default delta.dataSkippingNumIndexedCols
STATS_STRING_PREFIX = 32
FIXED_TIME_MS = 1_700_000_000_000   # modificationTime / createdTime: deterministic logs
SELECTIVITIES = (0.0001, 0.0002, 0.001, 0.01)
LAYOUTS = ("sieve", "pyarrow", "pyarrow_default", "duckdb", "deltalake", "spark")
SNAPPY_LAYOUTS = ("deltalake", "spark")   # writers whose own default codec is kept
WRITER_ROW_GROUP_ROWS = 100_000     # the pyarrow and duckdb layouts' row groups
SEL_MODULUS = 1_000_000
SEL_MULT = 612_433                  # coprime to 10**6; continued fraction of SEL_MULT/10**6 has
                                    # partial quotients <= 3: low discrepancy at every scale
DEL_THRESHOLD = 10_000
DEL_WHERE = f"del_hash < {DEL_THRESHOLD}"   # DV variant: ~1 % of the rows, scattered at random
DEL_SEED = 0xD1B54A32D192ED03
PROJECT_COLUMNS = 70

LINEITEM = [
    ("l_orderkey", "int64"), ("l_partkey", "int64"), ("l_suppkey", "int64"), ("l_linenumber", "int32"),
    ("l_quantity", "dec"), ("l_extendedprice", "dec"), ("l_discount", "dec"), ("l_tax", "dec"),
    ("l_returnflag", "str"), ("l_linestatus", "str"), ("l_shipdate", "date"), ("l_commitdate", "date"),
    ("l_receiptdate", "date"), ("l_shipinstruct", "str"), ("l_shipmode", "str"), ("l_comment", "str"),
]
EXTRA = [("rownum", "int64"), ("sel_hash", "int32"), ("del_hash", "int32")]
FIXED_COLUMNS = len(LINEITEM) + len(EXTRA)
WIDE_KINDS = ["i64", "f64", "dec", "h64", "date", "hf64", "i32", "str"]
WIDE_TYPE = {"i64": "int64", "f64": "double", "dec": "dec", "h64": "int64", "date": "date",
             "hf64": "double", "i32": "int32", "str": "str"}
DELTA_TYPE = {"int64": "long", "int32": "integer", "double": "double", "dec": "decimal(15,2)",
              "date": "date", "str": "string"}

# pyspark major.minor -> delta-spark artifact on Maven Central built for it (Spark 4.3 has none yet)
DELTA_SPARK = {"4.0": "io.delta:delta-spark_4.0_2.13:4.4.0", "4.1": "io.delta:delta-spark_4.1_2.13:4.4.0",
               "4.2": "io.delta:delta-spark_4.2_2.13:4.4.0"}
SPARK_VENV_PYSPARK = "pyspark==4.2.0"


def spark_local_env(env=None) -> dict:
    """The environment for a local Spark: bound to loopback, and not asking the
    resolver for this machine's own hostname, which a fresh machine (a
    debootstrap root without /etc/hosts entries) cannot resolve."""
    out = dict(os.environ if env is None else env)
    out.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    out.setdefault("SPARK_LOCAL_HOSTNAME", "localhost")
    return out

def log(msg: str) -> None:
    print(f"[bench_data] {msg}", file=sys.stderr, flush=True)


# -- schema ---------------------------------------------------------------------------------
def column_specs(width: int) -> list[tuple[str, str]]:
    """(name, type) of the `width` columns; type is one of DELTA_TYPE's keys."""
    if width < FIXED_COLUMNS:
        raise ValueError(f"width must be >= {FIXED_COLUMNS}")
    cols = list(LINEITEM) + list(EXTRA)
    for i in range(width - FIXED_COLUMNS):
        kind = WIDE_KINDS[i % len(WIDE_KINDS)]
        cols.append((f"w{i + 1:03d}_{kind}", WIDE_TYPE[kind]))
    return cols


def arrow_type(t: str):
    import pyarrow as pa
    return {"int64": pa.int64(), "int32": pa.int32(), "double": pa.float64(),
            "dec": pa.decimal128(15, 2), "date": pa.date32(), "str": pa.string()}[t]


def arrow_schema(width: int):
    import pyarrow as pa
    return pa.schema([pa.field(n, arrow_type(t), nullable=True) for n, t in column_specs(width)])


def delta_schema_string(width: int) -> str:
    return json.dumps({"type": "struct", "fields": [
        {"name": n, "type": DELTA_TYPE[t], "nullable": True, "metadata": {}} for n, t in column_specs(width)]},
        separators=(",", ":"))


# -- deterministic derivations ----------------------------------------------------------------
def _splitmix64(x):
    import numpy as np
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def sel_hash_of(rownum):
    """rownum (numpy int64) -> sel_hash values (int64 array)."""
    return ((rownum % SEL_MODULUS) * SEL_MULT) % SEL_MODULUS


def del_hash_of(rownum):
    import numpy as np
    return (_splitmix64(rownum.astype(np.uint64) ^ np.uint64(DEL_SEED)) % np.uint64(SEL_MODULUS)).astype(np.int64)


def _dec_cents(arr):
    """decimal128 array with small non-negative-or-negative values -> int64 unscaled values."""
    import numpy as np
    buf = np.frombuffer(arr.buffers()[1], dtype=np.int64)
    return buf[2 * arr.offset: 2 * (arr.offset + len(arr))][::2].copy()


def _dec_array(cents):
    import numpy as np
    import pyarrow as pa
    two = np.empty((len(cents), 2), dtype=np.int64)
    two[:, 0] = cents
    two[:, 1] = cents >> 63
    return pa.Array.from_buffers(pa.decimal128(15, 2), len(cents), [None, pa.py_buffer(two.tobytes())])


def widen(batch, start: int, width: int):
    """A lineitem record batch whose first row has table position `start` -> the
    `width`-column table (pyarrow.Table)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    n = batch.num_rows
    src = {name: batch.column(name) for name in batch.schema.names}
    if isinstance(src["l_orderkey"], pa.ChunkedArray):
        src = {k: v.combine_chunks() for k, v in src.items()}
    out = {}
    for name, t in LINEITEM:
        a = src[name]
        if t == "str":
            a = pc.cast(a, pa.string())
        elif a.type != arrow_type(t):
            a = pc.cast(a, arrow_type(t))
        out[name] = a
    r = np.arange(start, start + n, dtype=np.int64)
    out["rownum"] = pa.array(r)
    out["sel_hash"] = pa.array(sel_hash_of(r).astype(np.int32))
    out["del_hash"] = pa.array(del_hash_of(r).astype(np.int32))

    ok = out["l_orderkey"].to_numpy()
    pk = out["l_partkey"].to_numpy()
    sk = out["l_suppkey"].to_numpy()
    ln = out["l_linenumber"].to_numpy().astype(np.int64)
    price = _dec_cents(out["l_extendedprice"])
    disc = _dec_cents(out["l_discount"])
    tax = _dec_cents(out["l_tax"])
    qty = _dec_cents(out["l_quantity"])
    dates = [pc.cast(out[c], pa.int32()).to_numpy() for c in ("l_shipdate", "l_commitdate", "l_receiptdate")]
    ru = r.astype(np.uint64)
    for i, (name, t) in enumerate(column_specs(width)[FIXED_COLUMNS:]):
        kind = WIDE_KINDS[i % len(WIDE_KINDS)]
        k = i // len(WIDE_KINDS) + 1
        if kind == "i64":
            a = pa.array(ok * (2 * k + 1) + pk * k + sk)
        elif kind == "f64":
            a = pa.array(price.astype(np.float64) * (1.0 + k / 128.0) / 100.0 + disc.astype(np.float64) * k)
        elif kind == "dec":
            a = _dec_array(price * ((k % 5) + 1) + tax * k - disc + qty * (k % 3))
        elif kind == "h64":
            a = pa.array(_splitmix64(ru + np.uint64(k << 40)).view(np.int64))
        elif kind == "date":
            d = dates[k % 3] + np.int32((k * 37) % 365)
            a = pa.array(d.astype(np.int32)).cast(pa.date32())
        elif kind == "hf64":
            h = _splitmix64(ru ^ np.uint64((k * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF)) >> np.uint64(11)
            a = pa.array(h.astype(np.float64) * (2.0 ** -53) * (10.0 ** ((k % 6) + 1)))
        elif kind == "i32":
            a = pa.array(((pk * k + sk * ln + qty) % 2_147_483_647).astype(np.int32))
        else:  # str
            v = k % 3
            if v == 0:
                a = pc.binary_join_element_wise(out["l_shipmode"], pc.cast(pa.array((ok + k) % 10_000), pa.string()), "-")
            elif v == 1:
                a = pc.utf8_slice_codeunits(out["l_comment"], 0, 6 + k % 20)
            else:
                a = pc.binary_join_element_wise(out["l_shipinstruct"], pc.cast(pa.array(ln + k), pa.string()),
                                                out["l_returnflag"], "#")
        out[name] = a
    return pa.table(out, schema=arrow_schema(width))


# -- TPC-H source -------------------------------------------------------------------------------
def _scale_tag(scale: float) -> str:
    return f"{scale:g}".replace(".", "_")


@functools.lru_cache(maxsize=None)
def tpchgen_version() -> str:
    exe = _tpchgen_exe()
    r = subprocess.run([exe, "--version"], capture_output=True, text=True)
    return r.stdout.strip() or "?"


def _tpchgen_exe() -> str:
    cand = Path(sys.executable).parent / "tpchgen-cli"
    if cand.exists():
        return str(cand)
    found = shutil.which("tpchgen-cli")
    if not found:
        raise RuntimeError("tpchgen-cli not found: pip install tpchgen-cli (into the Python running this)")
    return found


def tpch_lineitem(out_dir: Path, scale: float) -> Path:
    """lineitem at `scale` as one Parquet file (cached under out_dir/_tpch)."""
    d = Path(out_dir) / "_tpch" / f"sf{_scale_tag(scale)}"
    path = d / "lineitem.parquet"
    if path.exists():
        return path
    tmp = d.with_name(d.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    t = time.perf_counter()
    subprocess.run([_tpchgen_exe(), "parquet", "-s", f"{scale:g}", "-T", "lineitem", "-c", "SNAPPY",
                    "-o", str(tmp), "-q", "--no-progress"], check=True)
    shutil.rmtree(d, ignore_errors=True)
    tmp.rename(d)
    log(f"tpchgen-cli lineitem SF {scale:g}: {time.perf_counter() - t:.1f} s")
    return path


def _chunks(src: Path, rows: int):
    """(start, RecordBatch-like Table) of exactly `rows` rows (the last may be shorter)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    f = pq.ParquetFile(src)
    buf, have, start = [], 0, 0
    for b in f.iter_batches(batch_size=rows, use_threads=False):
        buf.append(b)
        have += b.num_rows
        while have >= rows:
            t = pa.Table.from_batches(buf)
            yield start, t.slice(0, rows)
            start += rows
            rest = t.slice(rows)
            buf = rest.to_batches() if rest.num_rows else []
            have = rest.num_rows
    if have:
        yield start, pa.Table.from_batches(buf)


# -- writing ------------------------------------------------------------------------------------
def table_name(width: int, codec: str, dv: bool = False, layout: str = "sieve") -> str:
    return f"lineitem_w{width}_{codec}" + ("" if layout == "sieve" else f"_{layout}") + ("_dv" if dv else "")


class _TableWriter:
    """Writes one table's row groups, rolling files at about target_bytes, and
    collects per-file Delta statistics."""

    def __init__(self, root: Path, width: int, codec: str, params: dict):
        self.root, self.width, self.codec, self.p = root, width, codec, params
        self.schema = arrow_schema(width)
        self.specs = column_specs(width)
        self.files: list[dict] = []
        self.sink = self.writer = None
        self.cur: dict | None = None
        self.target = params["target_file_mib"] * MiB

    def _open(self):
        import pyarrow as pa
        import pyarrow.parquet as pq
        name = f"part-{len(self.files):05d}.parquet"
        self.sink = pa.OSFile(str(self.root / name), "wb")
        if self.p.get("layout", "sieve") == "pyarrow":
            # pq.write_table's defaults but for what the layout names (module docstring)
            opts = dict(use_dictionary=False, write_page_index=True, data_page_size=self.p["page_bytes"],
                        max_rows_per_page=self.p["page_rows"])
        elif self.p.get("layout") == "pyarrow_default":
            opts = {}  # pyarrow's defaults: dictionary, no page index, its page limits
        else:
            opts = dict(use_dictionary=False, column_encoding={n: "PLAIN" for n, _ in self.specs},
                        write_statistics=True, write_page_index=True, data_page_size=self.p["page_bytes"],
                        max_rows_per_page=self.p["page_rows"], data_page_version="1.0", version="2.6",
                        store_decimal_as_integer=True)
        if self.codec == "zstd":
            opts.update(compression="ZSTD", compression_level=ZSTD_LEVEL)
        else:
            opts.update(compression="NONE")
        self.writer = pq.ParquetWriter(self.sink, self.schema, **opts)
        self.cur = {"path": name, "rows": 0, "row_groups": 0, "min": {}, "max": {}}

    def write(self, table):
        if self.writer is None:
            self._open()
        t = table if table.num_columns == self.width else table.select(range(self.width))
        self.writer.write_table(t, row_group_size=t.num_rows)
        c = self.cur
        c["rows"] += t.num_rows
        c["row_groups"] += 1
        _update_min_max(c, self.specs, t)
        pos = self.sink.tell()
        if pos + pos / (2 * c["row_groups"]) >= self.target:
            self._close_file()

    def _close_file(self):
        self.writer.close()
        self.sink.close()
        c = self.cur
        c["bytes"] = (self.root / c["path"]).stat().st_size
        self.files.append(c)
        self.writer = self.sink = self.cur = None

    def finish(self) -> list[dict]:
        if self.writer is not None:
            self._close_file()
        return self.files


def _update_min_max(c: dict, specs, t) -> None:
    """Fold the min/max of t's first STATS_COLUMNS columns into c["min"], c["max"]."""
    import pyarrow.compute as pc
    for (name, typ), col in zip(specs[:STATS_COLUMNS], t.columns[:STATS_COLUMNS]):
        mm = pc.min_max(col)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        if name not in c["min"] or lo < c["min"][name]:
            c["min"][name] = lo
        if name not in c["max"] or hi > c["max"][name]:
            c["max"][name] = hi


def _stat_value(v, typ):
    if typ == "dec":
        return float(v) if isinstance(v, decimal.Decimal) else v
    if typ == "date":
        return v.isoformat()
    return v


def _file_stats(f: dict, specs) -> str:
    mins, maxs = {}, {}
    for name, typ in specs[:STATS_COLUMNS]:
        lo, hi = f["min"][name], f["max"][name]
        if typ == "str" and (len(lo) > STATS_STRING_PREFIX or len(hi) > STATS_STRING_PREFIX):
            continue                       # Delta would truncate; leaving it out is always valid
        mins[name], maxs[name] = _stat_value(lo, typ), _stat_value(hi, typ)
    return json.dumps({"numRecords": f["rows"], "minValues": mins, "maxValues": maxs,
                       "nullCount": {n: 0 for n, _ in specs[:STATS_COLUMNS]}}, separators=(",", ":"))


def write_delta_log(root: Path, name: str, width: int, files: list[dict], params: dict) -> None:
    specs = column_specs(width)
    table_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "sievefs-bench:" + json.dumps(params, sort_keys=True)))
    lines = [
        {"commitInfo": {"timestamp": FIXED_TIME_MS, "operation": "WRITE",
                        "operationParameters": {"mode": "Overwrite", "partitionBy": "[]"},
                        "isBlindAppend": True, "engineInfo": f"sievefs-bench_data/{GENERATOR_VERSION}"}},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": table_id, "name": name, "format": {"provider": "parquet", "options": {}},
                      "schemaString": delta_schema_string(width), "partitionColumns": [],
                      "configuration": {}, "createdTime": FIXED_TIME_MS}},
    ]
    for f in files:
        lines.append({"add": {"path": f["path"], "partitionValues": {}, "size": f["bytes"],
                              "modificationTime": FIXED_TIME_MS, "dataChange": True,
                              "stats": _file_stats(f, specs)}})
    (root / "_delta_log").mkdir(parents=True, exist_ok=True)
    (root / "_delta_log" / "00000000000000000000.json").write_text(
        "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))


# -- cache ----------------------------------------------------------------------------------
def _manifest_path(out_dir: Path, name: str) -> Path:
    return Path(out_dir) / f"{name}.manifest.json"


def _cached(out_dir: Path, name: str, params: dict) -> dict | None:
    mp = _manifest_path(out_dir, name)
    try:
        m = json.loads(mp.read_text())
    except (OSError, ValueError):
        return None
    if m.get("params") != params:
        return None
    info = m.get("info") or {}
    root = Path(info.get("path", ""))
    if not (root / "_delta_log").is_dir():
        return None
    for f in info.get("files", []):
        p = root / f["path"]
        if not p.exists() or p.stat().st_size != f["bytes"]:
            return None
    return info


def _save_manifest(out_dir: Path, name: str, params: dict, info: dict) -> None:
    mp = _manifest_path(out_dir, name)
    tmp = mp.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"params": params, "info": info}, indent=1, sort_keys=True))
    tmp.rename(mp)


def _params(scale, width, codec, rg_rows, page_rows, page_bytes, target_file_mib, layout="sieve") -> dict:
    import pyarrow
    p = {"generator": GENERATOR_VERSION, "scale": scale, "width": width, "codec": codec,
         "zstd_level": ZSTD_LEVEL if codec == "zstd" else None, "row_group_rows": rg_rows,
         "page_rows": page_rows, "page_bytes": page_bytes, "target_file_mib": target_file_mib,
         "pyarrow": pyarrow.__version__, "tpchgen": tpchgen_version()}
    if layout != "sieve":
        p["layout"] = layout
        if layout in ("pyarrow", "pyarrow_default"):
            p["zstd_level"] = None if codec == "none" else p["zstd_level"]
        if layout == "pyarrow_default":
            p.update(page_rows=None, page_bytes=None)
        if layout == "duckdb":
            import duckdb
            p.update(duckdb=duckdb.__version__, page_rows=None, page_bytes=None, zstd_level=None)
    return p


def default_target_file_mib(scale: float) -> int:
    return 512 if scale >= 1 else 64


def generate(out_dir, scale: float = DEFAULT_SCALE, widths=DEFAULT_WIDTHS, codecs=DEFAULT_CODECS,
             dv: bool = False, target_file_mib: int | None = None, row_group_rows: int | None = None,
             page_rows: int = DEFAULT_PAGE_ROWS, page_bytes: int = DEFAULT_PAGE_BYTES,
             threads: int | None = None, layouts=("sieve",)) -> dict:
    """Generate (or reuse) the tables. Returns
    {"out_dir", "scale", "seconds", "tables": {name: info}} where info has
    name, path, width, codec, dv, rows (live rows), physical_rows, files
    [{path, rows, row_groups, bytes}], bytes, columns, types, row_group_rows,
    page_rows, cached, seconds (and for DV tables: deleted_rows, delete_where,
    base, spark, layout). row_group_rows: default 131,072 for the sieve layout,
    100,000 for the pyarrow and duckdb layouts; the pyarrow layout's pages are
    capped at the row group (page_rows applies to the sieve layout only)."""
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for lay in layouts:
        if lay not in LAYOUTS:
            raise ValueError(f"layout {lay!r}: choose one of {', '.join(LAYOUTS)}")
    for c in codecs:
        if c not in ("none", "zstd"):
            raise ValueError(f"codec {c!r}: choose none or zstd")
    if target_file_mib is None:
        target_file_mib = default_target_file_mib(scale)
    t0 = time.perf_counter()
    tables, todo = {}, []
    for lay in layouts:
        rg = row_group_rows or (MAX_ROW_GROUP_ROWS if lay == "sieve" else WRITER_ROW_GROUP_ROWS)
        if not 0 < rg <= MAX_ROW_GROUP_ROWS:
            raise ValueError(f"row_group_rows must be in 1..{MAX_ROW_GROUP_ROWS}")
        for w in widths:
            column_specs(w)
            for c in (("snappy",) if lay in SNAPPY_LAYOUTS else codecs):
                name = table_name(w, c, layout=lay)
                params = _params(scale, w, c, rg, page_rows if lay == "sieve" else rg, page_bytes,
                                 target_file_mib, lay)
                info = _cached(out_dir, name, params)
                if info is not None:
                    tables[name] = dict(info, cached=True)
                else:
                    todo.append((name, w, c, params))
    if todo:
        src = tpch_lineitem(out_dir, scale)
        for rg in sorted({p["row_group_rows"] for *_, p in todo}):
            part = [x for x in todo if x[3]["row_group_rows"] == rg]
            arrow = [x for x in part if x[3].get("layout", "sieve") not in ("duckdb",) + SNAPPY_LAYOUTS]
            if arrow:
                tables.update(_generate_tables(out_dir, src, arrow, rg, threads))
            for x in part:
                if x[3].get("layout") == "duckdb":
                    tables.update(_generate_duckdb_table(out_dir, src, *x))
                elif x[3].get("layout") == "deltalake":
                    tables.update(_generate_deltalake_table(out_dir, src, *x))
                elif x[3].get("layout") == "spark":
                    tables.update(_generate_spark_table(out_dir, src, *x))
    if dv:
        base_codec = "none" if "none" in codecs else codecs[0]
        tables.update(make_dv_tables(out_dir, [tables[table_name(w, base_codec, layout=layouts[0])]
                                               for w in widths]))
    return {"out_dir": str(out_dir), "scale": scale, "seconds": round(time.perf_counter() - t0, 1),
            "tables": tables}


def _generate_tables(out_dir: Path, src: Path, todo, rg_rows: int, threads) -> dict:
    t0 = time.perf_counter()
    writers = {}
    for name, w, c, params in todo:
        tmp = out_dir / f"{name}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        writers[name] = (_TableWriter(tmp, w, c, params), params)
    max_w = max(w for _, w, _, _ in todo)
    nthreads = max(1, min(threads or os.cpu_count() or 1, len(writers)))
    rows = 0
    with concurrent.futures.ThreadPoolExecutor(nthreads) as pool:
        for start, batch in _chunks(src, rg_rows):
            wide = widen(batch, start, max_w)
            list(pool.map(lambda tw: tw[0].write(wide), writers.values()))
            rows += batch.num_rows
    result = {}
    for name, (tw, params) in writers.items():
        files = tw.finish()
        write_delta_log(tw.root, name, tw.width, files, params)
        final = out_dir / name
        shutil.rmtree(final, ignore_errors=True)
        tw.root.rename(final)
        info = {"name": name, "path": str(final), "width": tw.width, "codec": tw.codec, "dv": False,
                "rows": rows, "physical_rows": rows,
                "files": [{k: f[k] for k in ("path", "rows", "row_groups", "bytes")} for f in files],
                "bytes": sum(f["bytes"] for f in files), "columns": [n for n, _ in tw.specs],
                "types": {n: DELTA_TYPE[t] for n, t in tw.specs}, "row_group_rows": rg_rows,
                "page_rows": params["page_rows"], "layout": params.get("layout", "sieve"),
                "seconds": round(time.perf_counter() - t0, 1)}
        _save_manifest(out_dir, name, params, info)
        result[name] = dict(info, cached=False)
    log(f"wrote {', '.join(writers)} ({rows:,} rows) in {time.perf_counter() - t0:.1f} s")
    return result


def _generate_duckdb_table(out_dir: Path, src: Path, name: str, width: int, codec: str, params: dict) -> dict:
    """The duckdb layout (module docstring): DuckDB's COPY, streaming the
    widened row groups from a RecordBatchReader, rolling files at
    FILE_SIZE_BYTES; Delta statistics from the written files."""
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq
    t0 = time.perf_counter()
    rg = params["row_group_rows"]
    tmp = out_dir / f"{name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    schema = arrow_schema(width)

    def batches():
        for start, batch in _chunks(src, rg):
            yield from widen(batch, start, width).to_batches()
    reader = pa.RecordBatchReader.from_batches(schema, batches())
    con = duckdb.connect(config={"threads": 1, "preserve_insertion_order": True})
    con.execute("SET enable_progress_bar = false")
    con.register("src_rows", reader)
    comp = {"none": "uncompressed", "zstd": "zstd"}[codec]
    out = str(tmp / "data").replace("'", "''")
    con.execute(f"COPY (SELECT * FROM src_rows) TO '{out}' (FORMAT parquet, ROW_GROUP_SIZE {rg}, "
                f"FILE_SIZE_BYTES '{params['target_file_mib']}MiB', COMPRESSION {comp}, "
                f"FILENAME_PATTERN 'part-{{i}}')")
    con.close()
    specs = column_specs(width)
    files, rows = [], 0
    written = sorted((tmp / "data").glob("*.parquet"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    for i, p in enumerate(written):
        fname = f"part-{i:05d}.parquet"
        p.rename(tmp / fname)
        pf = pq.ParquetFile(tmp / fname)
        c = {"path": fname, "rows": pf.metadata.num_rows, "row_groups": pf.metadata.num_row_groups,
             "min": {}, "max": {}, "bytes": (tmp / fname).stat().st_size}
        _update_min_max(c, specs, pf.read(columns=[n for n, _ in specs[:STATS_COLUMNS]]).cast(
            pa.schema([schema.field(n) for n, _ in specs[:STATS_COLUMNS]])))
        files.append(c)
        rows += c["rows"]
    (tmp / "data").rmdir()
    write_delta_log(tmp, name, width, files, params)
    final = out_dir / name
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    info = {"name": name, "path": str(final), "width": width, "codec": codec, "dv": False,
            "rows": rows, "physical_rows": rows,
            "files": [{k: f[k] for k in ("path", "rows", "row_groups", "bytes")} for f in files],
            "bytes": sum(f["bytes"] for f in files), "columns": [n for n, _ in specs],
            "types": {n: DELTA_TYPE[t] for n, t in specs}, "row_group_rows": rg, "page_rows": None,
            "layout": "duckdb", "seconds": round(time.perf_counter() - t0, 1)}
    _save_manifest(out_dir, name, params, info)
    log(f"wrote {name} with DuckDB {duckdb.__version__} ({rows:,} rows, {len(files)} files) "
        f"in {time.perf_counter() - t0:.1f} s")
    return {name: dict(info, cached=False)}


def _generate_deltalake_table(out_dir: Path, src: Path, name: str, width: int, codec: str, params: dict) -> dict:
    """The deltalake layout (module docstring): write_deltalake with its
    defaults, streaming the widened batches; its own files and log."""
    import deltalake
    import pyarrow as pa
    t0 = time.perf_counter()
    tmp = out_dir / f"{name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    schema = arrow_schema(width)

    def batches():
        for start, batch in _chunks(src, params["row_group_rows"]):
            yield from widen(batch, start, width).to_batches()
    deltalake.write_deltalake(str(tmp), pa.RecordBatchReader.from_batches(schema, batches()), mode="overwrite")
    info = _finish_writer_table(out_dir, tmp, name, width, params, "deltalake", t0)
    log(f"wrote {name} with deltalake {deltalake.__version__} ({info['rows']:,} rows, {len(info['files'])} files) "
        f"in {time.perf_counter() - t0:.1f} s")
    return {name: dict(info, cached=False)}


def _finish_writer_table(out_dir: Path, tmp: Path, name: str, width: int, params: dict, layout: str, t0: float,
                         **extra) -> dict:
    """A Delta writer's table in tmp (its files as its own log lists them)
    moved to out_dir/name, with its manifest saved; returns its info."""
    import deltalake
    import pyarrow.parquet as pq
    specs = column_specs(width)
    files, rows = [], 0
    adds = deltalake.DeltaTable(str(tmp)).get_add_actions(flatten=True)
    for rel in sorted(str(x) for x in adds.column("path").to_pylist()):
        pf = pq.ParquetFile(tmp / rel)
        files.append({"path": rel, "rows": pf.metadata.num_rows, "row_groups": pf.metadata.num_row_groups,
                      "bytes": (tmp / rel).stat().st_size})
        rows += pf.metadata.num_rows
    final = out_dir / name
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    info = {"name": name, "path": str(final), "width": width, "codec": "snappy", "dv": False,
            "rows": rows, "physical_rows": rows, "files": files, "bytes": sum(f["bytes"] for f in files),
            "columns": [n for n, _ in specs], "types": {n: DELTA_TYPE[t] for n, t in specs},
            "row_group_rows": None, "page_rows": None, "layout": layout, **extra,
            "seconds": round(time.perf_counter() - t0, 1)}
    _save_manifest(out_dir, name, params, info)
    return info


# A local Spark with delta-spark (its Maven coordinates in argv[1]) for the
# scripts below. (Two shuffle partitions: the DV script's DELETE; the layout's
# write has no shuffle, so Spark's defaults decide its files.)
SPARK_SESSION = r"""
import json, sys
from pyspark.sql import SparkSession
pkg = sys.argv[1]
spark = (SparkSession.builder.master("local[2]").appName("sievefs-bench")
         .config("spark.ui.enabled", "false").config("spark.jars.packages", pkg)
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.shuffle.partitions", "2").config("spark.driver.memory", "3g")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
"""

SPARK_WRITE_SCRIPT = SPARK_SESSION + r"""
src, out = sys.argv[2], sys.argv[3]
spark.read.parquet(src).write.format("delta").mode("overwrite").save(out)
h = spark.sql(f"DESCRIBE HISTORY delta.`{out}` LIMIT 1").collect()[0].asDict()
print("\nRESULT " + json.dumps({"engine": h.get("engineInfo"), "metrics": h["operationMetrics"]}), flush=True)
"""


def _generate_spark_table(out_dir: Path, src: Path, name: str, width: int, codec: str, params: dict) -> dict:
    """The spark layout (module docstring): the widened rows as one
    uncompressed Parquet file, then Spark's Delta writer with its defaults."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    t0 = time.perf_counter()
    py, pyspark_v, pkg = ensure_spark_python()
    tmp = out_dir / f"{name}.tmp{os.getpid()}"
    rows_dir = out_dir / f"{name}.rows{os.getpid()}"
    for d in (tmp, rows_dir):
        shutil.rmtree(d, ignore_errors=True)
    rows_dir.mkdir(parents=True)
    schema = arrow_schema(width)
    try:
        with pq.ParquetWriter(rows_dir / "rows.parquet", schema, compression="NONE") as w:
            for start, batch in _chunks(src, params["row_group_rows"]):
                w.write_table(pa.Table.from_batches(widen(batch, start, width).to_batches(), schema))
        r = subprocess.run([py, "-c", SPARK_WRITE_SCRIPT, pkg, str(rows_dir), str(tmp)], capture_output=True,
                           text=True, timeout=4 * 3600, env=spark_local_env())
        if r.returncode != 0 or "RESULT " not in r.stdout:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"Spark's Delta write of {name} failed (exit {r.returncode}, {pyspark_v}, {pkg}):\n"
                               f"{r.stderr[-4000:]}")
        engine = json.loads(r.stdout.split("RESULT ", 1)[1].splitlines()[0]).get("engine")
    finally:
        shutil.rmtree(rows_dir, ignore_errors=True)
    for p in tmp.rglob(".*.crc"):
        p.unlink()               # Hadoop's checksum side files: not part of the table
    info = _finish_writer_table(out_dir, tmp, name, width, params, "spark", t0, spark=engine, delta_spark=pkg)
    log(f"wrote {name} with Spark {pyspark_v} + {pkg} ({info['rows']:,} rows, {len(info['files'])} files) "
        f"in {time.perf_counter() - t0:.1f} s")
    return {name: dict(info, cached=False)}


# -- deletion vectors (Spark) ---------------------------------------------------------------------
def _pyspark_version(python: str) -> str | None:
    try:
        r = subprocess.run([python, "-c", "import pyspark; print(pyspark.__version__)"],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def spark_venv_dir() -> Path:
    return Path(os.environ.get("SIEVE_SPARK_VENV") or (REPO / "tests" / "e2e" / ".data" / "spark-venv"))


def spark_python() -> tuple[str, str, str] | None:
    """(python, pyspark version, delta-spark Maven coordinates) of a Python whose
    pyspark has a delta-spark build, or None. Looks at $SIEVE_DV_SPARK_PYTHON,
    the Spark venv (spark_venv_dir()), then this Python."""
    if not shutil.which("java"):
        return None
    cand = [os.environ.get("SIEVE_DV_SPARK_PYTHON"), str(spark_venv_dir() / "bin" / "python"),
            sys.executable]
    for py in cand:
        if not py or not Path(py).exists():
            continue
        v = _pyspark_version(py)
        if v and ".".join(v.split(".")[:2]) in DELTA_SPARK:
            return py, v, DELTA_SPARK[".".join(v.split(".")[:2])]
    return None


def ensure_spark_python() -> tuple[str, str, str]:
    """spark_python(), creating the Spark venv (python -m venv + pip install
    pyspark==4.2.0, about 450 MB) when there is none."""
    found = spark_python()
    if found:
        return found
    if not shutil.which("java"):
        raise RuntimeError("deletion vectors need Spark, which needs Java 17 (java not found)")
    venv = spark_venv_dir()
    log(f"creating {venv} with {SPARK_VENV_PYSPARK} (delta-spark has no build for this pyspark)")
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", SPARK_VENV_PYSPARK], check=True)
    found = spark_python()
    if not found:
        raise RuntimeError(f"{venv} has no usable pyspark after installing {SPARK_VENV_PYSPARK}")
    return found


SPARK_DV_SCRIPT = SPARK_SESSION + r"""
where, paths = sys.argv[2], sys.argv[3:]
for path in paths:
    t = f"delta.`{path}`"
    before = spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0]
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql(f"DELETE FROM {t} WHERE {where}")
    after = spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0]
    h = spark.sql(f"DESCRIBE HISTORY {t} LIMIT 1").collect()[0].asDict()
    print("\nRESULT " + json.dumps({"path": path, "before": before, "after": after,
                                    "metrics": h["operationMetrics"], "engine": h.get("engineInfo")}),
          flush=True)
"""


def make_dv_tables(out_dir, bases: list[dict]) -> dict:
    """For each table in `bases`: a copy (its Parquet files hard-linked) named
    `<base>_dv` where Spark, in one session for all, deletes DEL_WHERE with
    deletion vectors. Cached like the others. Returns {name: info}."""
    out_dir = Path(out_dir).resolve()
    py, pyspark_v, pkg = ensure_spark_python()
    result, todo = {}, []
    for base in bases:
        name = base["name"] + "_dv"
        base_manifest = json.loads(_manifest_path(out_dir, base["name"]).read_text())
        params = dict(base_manifest["params"], dv=True, delete_where=DEL_WHERE, pyspark=pyspark_v,
                      delta_spark=pkg)
        info = _cached(out_dir, name, params)
        if info is not None:
            result[name] = dict(info, cached=True)
        else:
            todo.append((name, base, params))
    if not todo:
        return result
    t0 = time.perf_counter()
    tmps = {}
    for name, base, _ in todo:
        tmp = out_dir / f"{name}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "_delta_log").mkdir(parents=True)
        src = Path(base["path"])
        for f in base["files"]:
            os.link(src / f["path"], tmp / f["path"])
        for p in (src / "_delta_log").iterdir():
            shutil.copy2(p, tmp / "_delta_log" / p.name)
        tmps[name] = tmp
    r = subprocess.run([py, "-c", SPARK_DV_SCRIPT, pkg, DEL_WHERE, *map(str, tmps.values())],
                       capture_output=True, text=True, timeout=4 * 3600, env=spark_local_env())
    res = {}
    for ln in r.stdout.splitlines():
        if ln.startswith("RESULT "):
            d = json.loads(ln[len("RESULT "):])
            res[d["path"]] = d
    if r.returncode != 0 or len(res) != len(todo):
        for tmp in tmps.values():
            shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(f"Spark DELETE with deletion vectors failed (exit {r.returncode}, {pyspark_v}, "
                           f"{pkg}):\n{r.stderr[-4000:]}")
    seconds = round(time.perf_counter() - t0, 1)
    for name, base, params in todo:
        d = res[str(tmps[name])]
        m = d["metrics"]
        if int(m.get("numDeletionVectorsAdded", 0)) == 0 or int(m.get("numRemovedFiles", 0)) != 0:
            raise RuntimeError(f"{name}: Spark did not delete with deletion vectors: {m}")
        deleted = d["before"] - d["after"]
        expected = deleted_rows(base["physical_rows"])
        if deleted != expected or d["before"] != base["physical_rows"]:
            raise RuntimeError(f"{name}: Spark deleted {deleted} of {d['before']} rows, expected {expected} "
                               f"of {base['physical_rows']}")
        final = out_dir / name
        shutil.rmtree(final, ignore_errors=True)
        tmps[name].rename(final)
        dvs = sorted(p.name for p in final.iterdir() if p.name.startswith("deletion_vector"))
        info = dict({k: base.get(k) for k in ("width", "codec", "physical_rows", "files", "columns", "types",
                                              "row_group_rows", "page_rows", "layout")},
                    name=name, path=str(final), dv=True, rows=d["after"], deleted_rows=deleted,
                    delete_where=DEL_WHERE, base=base["name"], deletion_vector_files=dvs,
                    bytes=base["bytes"] + sum((final / p).stat().st_size for p in dvs),
                    spark=d.get("engine"), delta_spark=pkg, seconds=seconds)
        _save_manifest(out_dir, name, params, info)
        log(f"{name}: Spark deleted {deleted:,} rows with deletion vectors")
        result[name] = dict(info, cached=False)
    log(f"Spark ({pyspark_v}, {pkg}): {seconds} s")
    return result


def deleted_rows(rows: int) -> int:
    """How many of the first `rows` rows DEL_WHERE deletes."""
    import numpy as np
    n = 0
    for s in range(0, rows, 1 << 22):
        n += int((del_hash_of(np.arange(s, min(rows, s + (1 << 22)), dtype=np.int64)) < DEL_THRESHOLD).sum())
    return n


# -- a table grown by appends: many small files -------------------------------------------------
# What a Delta table that grows by appends looks like (issue 44's reference: 300 files of
# about 1.4 MB, 3 M rows, 18 columns, partitioned by day): the 16 lineitem columns, rownum
# and a `day` partition column, written by `appends` deltalake.write_deltalake(mode="append",
# partition_by=["day"]) calls with every other default, each adding `days` new days, so
# appends x days files (one per day and append) whose row ids (l_orderkey, rownum) grow
# with the day. Its queries (queries()): `point_id`, the rows of one order (4 rows) by
# l_orderkey, projecting 6 columns, and `full_scan`, exact aggregates over 4 columns of
# every row.
APPENDS_LAYOUT = "appends"
APPENDS_SCALE = 0.6                 # 3.6 M rows: files of about 0.6 MB (the reference: 3 M rows)
APPENDS_VERSION = 2                 # bump on any change to this table: cached ones are then regenerated
APPENDS = 10
APPENDS_DAYS = 30                   # days per append: 300 files
APPENDS_FIRST_DAY = "2024-01-01"
APPENDS_PROJECT = ["l_orderkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_shipdate", "l_comment"]
APPENDS_SCAN_COLUMNS = ["l_quantity", "l_extendedprice", "l_shipdate", "rownum"]
APPENDS_SCAN_AGGS = ("count(*), sum(l_quantity), sum(l_extendedprice), min(l_shipdate), max(l_shipdate), "
                     "sum(rownum)")  # exact aggregates: no floating-point sums
APPENDS_POINT_AT = 0.4              # the id: the first order of 4 lines at or after 40 % of the rows
APPENDS_POINT_LINES = 4


def appends_table_name(appends: int = APPENDS, days: int = APPENDS_DAYS) -> str:
    return "lineitem_w18_snappy_appends" + ("" if (appends, days) == (APPENDS, APPENDS_DAYS)
                                            else f"_{appends}x{days}")


def appends_columns() -> list[tuple[str, str]]:
    """(name, type) of the appends table: the lineitem columns, rownum, day (the partition)."""
    return list(LINEITEM) + [("rownum", "int64"), ("day", "date")]


def _point_key(src: Path, rows: int) -> tuple[int, int]:
    """(l_orderkey, its rownum) of the first order with APPENDS_POINT_LINES lines at or after
    APPENDS_POINT_AT of the rows (lineitem is sorted by l_orderkey)."""
    import numpy as np
    import pyarrow.parquet as pq
    ok = pq.read_table(src, columns=["l_orderkey"]).column(0).to_numpy()
    start = int(rows * APPENDS_POINT_AT)
    keys, first, counts = np.unique(ok[start:], return_index=True, return_counts=True)
    i = int(np.flatnonzero(counts == APPENDS_POINT_LINES)[1])   # [1]: the first may be cut by `start`
    return int(keys[i]), start + int(first[i])


def generate_appends(out_dir, scale: float = APPENDS_SCALE, appends: int = APPENDS,
                     days: int = APPENDS_DAYS) -> dict:
    """The table of many small files (above), cached like the others. Returns
    {name: info}; info as generate()'s plus partition_columns, appends, days,
    point_orderkey, point_rownum; files are the active files of its log (paths
    relative to the table, under day=YYYY-MM-DD/). File names carry delta-rs's
    random UUIDs, so regenerated tables are not byte-identical."""
    import datetime
    import deltalake
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    name = appends_table_name(appends, days)
    params = {"generator": GENERATOR_VERSION, "appends_version": APPENDS_VERSION, "layout": APPENDS_LAYOUT,
              "scale": scale, "appends": appends,
              "days": days, "deltalake": deltalake.__version__, "tpchgen": tpchgen_version()}
    info = _cached(out_dir, name, params)
    if info is not None:
        return {name: dict(info, cached=True)}
    t0 = time.perf_counter()
    src = tpch_lineitem(out_dir, scale)
    rows = pq.ParquetFile(src).metadata.num_rows
    per_append = -(-rows // appends)
    day0 = datetime.date.fromisoformat(APPENDS_FIRST_DAY)
    schema = pa.schema([pa.field(n, arrow_type(t), nullable=True) for n, t in appends_columns()])
    tmp = out_dir / f"{name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    for start, batch in _chunks(src, per_append):
        wide = widen(batch, start, FIXED_COLUMNS)
        # this append's days: `days` new ones, rows spread evenly over them
        local = np.arange(batch.num_rows, dtype=np.int64)
        day = (start // per_append) * days + (local * days) // batch.num_rows
        days_col = pa.array(day.astype(np.int32) + np.int32((day0 - datetime.date(1970, 1, 1)).days)).cast(pa.date32())
        t = pa.table([*(wide.column(n) for n, _ in appends_columns()[:-1]), days_col], schema=schema)
        deltalake.write_deltalake(str(tmp), t, mode="append", partition_by=["day"])
    dt = deltalake.DeltaTable(str(tmp))
    adds = dt.get_add_actions(flatten=True)
    files, n = [], 0
    for rel in sorted(str(x) for x in adds.column("path").to_pylist()):
        md = pq.ParquetFile(tmp / rel).metadata
        files.append({"path": rel, "rows": md.num_rows, "row_groups": md.num_row_groups,
                      "bytes": (tmp / rel).stat().st_size})
        n += md.num_rows
    if n != rows or dt.version() != appends - 1:
        raise RuntimeError(f"{name}: {n} rows in version {dt.version()}, expected {rows} in {appends - 1}")
    key, at = _point_key(src, rows)
    final = out_dir / name
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    cols = appends_columns()
    info = {"name": name, "path": str(final), "width": len(cols), "codec": "snappy", "dv": False,
            "rows": rows, "physical_rows": rows, "files": files, "bytes": sum(f["bytes"] for f in files),
            "columns": [c for c, _ in cols], "types": {c: DELTA_TYPE.get(t, t) for c, t in cols},
            "row_group_rows": None, "page_rows": None, "layout": APPENDS_LAYOUT, "partition_columns": ["day"],
            "appends": appends, "days": days, "point_orderkey": key, "point_rownum": at,
            "seconds": round(time.perf_counter() - t0, 1)}
    _save_manifest(out_dir, name, params, info)
    log(f"wrote {name} with {appends} deltalake {deltalake.__version__} appends ({rows:,} rows, {len(files)} files "
        f"of {min(f['bytes'] for f in files) / 1e6:.2f}-{max(f['bytes'] for f in files) / 1e6:.2f} MB) in "
        f"{time.perf_counter() - t0:.1f} s")
    return {name: dict(info, cached=False)}


def _appends_queries(table: dict) -> list[dict]:
    key = table["point_orderkey"]
    pred = f"l_orderkey = {key}"
    cols = list(APPENDS_PROJECT)
    select = ", ".join(cols)
    import pyarrow.compute as pc
    return [{"name": "point_id", "layout": "point", "selectivity": APPENDS_POINT_LINES / table["rows"],
             "predicate": pred,
             "sql_duckdb": f"SELECT {select} FROM read_parquet({{files}}) WHERE {pred}",
             "sql_spark": f"SELECT {select} FROM delta.`{{table}}` WHERE {pred}",
             "sql_deltalake": f"SELECT {select} FROM t WHERE {pred}",
             "pyarrow_filter": pc.field("l_orderkey") == key, "columns": cols, "filter_columns": ["l_orderkey"],
             "hint": {"where": pred, "columns": cols}, "expected_rows": APPENDS_POINT_LINES,
             "files": [f["path"] for f in table["files"]]},
            # every file's data read: what the footers of the point query do not show
            {"name": "full_scan", "layout": "full", "selectivity": 1.0, "predicate": None,
             "sql_duckdb": f"SELECT {APPENDS_SCAN_AGGS} FROM read_parquet({{files}})",
             "sql_spark": f"SELECT {APPENDS_SCAN_AGGS} FROM delta.`{{table}}`",
             "sql_deltalake": f"SELECT {APPENDS_SCAN_AGGS} FROM t",
             "pyarrow_filter": None, "columns": list(APPENDS_SCAN_COLUMNS), "filter_columns": [],
             "hint": None, "expected_rows": table["rows"], "files": [f["path"] for f in table["files"]]}]


# -- queries ------------------------------------------------------------------------------------
def _count_sel(rows: int, threshold: int, exclude_deleted: bool) -> int:
    import numpy as np
    n = 0
    for s in range(0, rows, 1 << 22):
        r = np.arange(s, min(rows, s + (1 << 22)), dtype=np.int64)
        m = sel_hash_of(r) < threshold
        if exclude_deleted:
            m &= del_hash_of(r) >= DEL_THRESHOLD
        n += int(m.sum())
    return n


def _count_range(lo: int, hi: int, exclude_deleted: bool) -> int:
    import numpy as np
    if not exclude_deleted:
        return hi - lo + 1
    return int((del_hash_of(np.arange(lo, hi + 1, dtype=np.int64)) >= DEL_THRESHOLD).sum())


def projection(columns: list[str], n: int = PROJECT_COLUMNS) -> list[str]:
    """The 16 lineitem columns, rownum, sel_hash and wide columns evenly spaced
    over the rest, n in all (fewer when the table has fewer)."""
    base = [c for c, _ in LINEITEM] + ["rownum", "sel_hash"]
    wide = [c for c in columns if c.startswith("w")]
    k = max(0, min(len(wide), n - len(base)))
    picked = [wide[(j * len(wide)) // k] for j in range(k)] if k else []
    return base + picked


def _pct(sel: float) -> str:
    return f"{sel * 100:g}pct".replace(".", "_")


def queries(table: dict, n_project: int = PROJECT_COLUMNS) -> list[dict]:
    """Queries over `table` (an info dict from generate()). Each is a dict:
      name          scattered_0_01pct .. clustered_1pct, full_scan
      layout        scattered | clustered | full
      selectivity   nominal fraction of the rows (1.0 for full_scan)
      predicate     the filter, valid as sievefs hint, DuckDB, Spark and DataFusion SQL
                    (None for full_scan)
      sql_duckdb    template, `{table}` = the table directory, read with read_parquet
                    (None on a DV table: read_parquet would return the deleted rows)
      sql_spark     template over delta.`{table}`
      sql_deltalake SQL for deltalake.QueryBuilder().register("t", DeltaTable(dir)) (applies DVs)
      pyarrow_filter  pyarrow.compute Expression (None for full_scan), for
                    pyarrow.dataset / DeltaTable.to_pyarrow_dataset (not on DV tables)
      columns       projected columns (70; full_scan: its aggregated columns)
      filter_columns  columns the predicate reads
      hint          sievefs hint document {"where", "columns"} (None for full_scan:
                    it runs on the plain path)
      expected_rows rows the filter selects (live rows only, on a DV table)
    Fill a template with render(q["sql_duckdb"], dir)."""
    import pyarrow.compute as pc
    if table.get("layout") == APPENDS_LAYOUT:
        return _appends_queries(table)
    rows = table["physical_rows"]
    dv = bool(table.get("dv"))
    cols = projection(table["columns"], n_project)
    select = ", ".join(cols)
    out = []
    for sel in SELECTIVITIES:
        thr = int(round(sel * SEL_MODULUS))
        n = max(1, int(round(rows * sel)))
        lo = min(int(rows * 0.4), rows - n)
        hi = lo + n - 1
        for layout, pred, fcol, filt, expected in (
                ("scattered", f"sel_hash < {thr}", "sel_hash", pc.field("sel_hash") < thr,
                 _count_sel(rows, thr, dv)),
                ("clustered", f"rownum BETWEEN {lo} AND {hi}", "rownum",
                 (pc.field("rownum") >= lo) & (pc.field("rownum") <= hi), _count_range(lo, hi, dv))):
            out.append({
                "name": f"{layout}_{_pct(sel)}", "layout": layout, "selectivity": sel, "predicate": pred,
                "sql_duckdb": None if dv else f"SELECT {select} FROM read_parquet('{{table}}/*.parquet') WHERE {pred}",
                "sql_spark": f"SELECT {select} FROM delta.`{{table}}` WHERE {pred}",
                "sql_deltalake": f"SELECT {select} FROM t WHERE {pred}",
                "pyarrow_filter": filt, "columns": cols, "filter_columns": [fcol],
                "hint": {"where": pred, "columns": cols}, "expected_rows": expected})
    # exact aggregates only (no floating-point sums, whose last bits depend on the order of addition)
    wide_f = [c for c in table["columns"] if c.endswith("_f64")][:1]
    wide_d = [c for c in table["columns"] if c.endswith("_dec")][:1]
    agg_cols = ["l_quantity", "l_extendedprice", "l_shipdate", "rownum"] + wide_d + wide_f
    aggs = ("count(*), sum(l_quantity), sum(l_extendedprice), min(l_shipdate), max(l_shipdate), sum(rownum)"
            + "".join(f", sum({c})" for c in wide_d) + "".join(f", min({c}), max({c})" for c in wide_f))
    out.append({"name": "full_scan", "layout": "full", "selectivity": 1.0, "predicate": None,
                "sql_duckdb": None if dv else f"SELECT {aggs} FROM read_parquet('{{table}}/*.parquet')",
                "sql_spark": f"SELECT {aggs} FROM delta.`{{table}}`",
                "sql_deltalake": f"SELECT {aggs} FROM t",
                "pyarrow_filter": None, "columns": agg_cols, "filter_columns": [],
                "hint": None, "expected_rows": table["rows"]})
    return out


def render(sql_template: str, table_dir, files=None) -> str:
    """A query's sql_duckdb / sql_spark with its table directory filled in,
    and {files} (the appends table's query) with the list of its files
    (paths relative to the table: a query's "files")."""
    d = str(table_dir).rstrip("/")
    out = sql_template.replace("{table}", d.replace("'", "''"))
    if "{files}" in out:
        if files is None:
            raise ValueError("this query reads {files}: pass the query's files")
        out = out.replace("{files}", "[" + ", ".join("'" + f"{d}/{f}".replace("'", "''") + "'" for f in files) + "]")
    return out


def hint_json(q: dict) -> str | None:
    return None if q["hint"] is None else json.dumps(q["hint"], separators=(",", ":"))


# -- CLI --------------------------------------------------------------------------------------
def _csv(s: str) -> list[str]:
    return [x for x in s.split(",") if x]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory (tables, manifests, the tpchgen cache)")
    ap.add_argument("--scale", type=float, default=DEFAULT_SCALE, help="TPC-H scale factor (10 = full scale)")
    ap.add_argument("--widths", default=",".join(map(str, DEFAULT_WIDTHS)))
    ap.add_argument("--codecs", default=",".join(DEFAULT_CODECS), help="none,zstd")
    ap.add_argument("--dv", action="store_true", help="also make the deletion-vector variants (Spark)")
    ap.add_argument("--target-file-mib", type=int, default=None,
                    help="file size target (default 512 at scale >= 1, else 64)")
    ap.add_argument("--row-group-rows", type=int, default=None,
                    help="default 131,072 (sieve layout), 100,000 (pyarrow, duckdb)")
    ap.add_argument("--layouts", default="sieve", help="comma list of " + ",".join(LAYOUTS))
    ap.add_argument("--page-rows", type=int, default=DEFAULT_PAGE_ROWS)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--queries", action="store_true", help="include every table's queries in the summary")
    ap.add_argument("--appends", metavar="SCALE,APPENDS,DAYS", help="also the appends table (e.g. 0.5,10,30)")
    a = ap.parse_args(argv)
    res = generate(a.out, a.scale, tuple(int(w) for w in _csv(a.widths)), tuple(_csv(a.codecs)), a.dv,
                   a.target_file_mib, a.row_group_rows, page_rows=a.page_rows, threads=a.threads,
                   layouts=tuple(_csv(a.layouts)))
    if a.appends:
        sc, n, d = _csv(a.appends)
        res["tables"].update(generate_appends(a.out, float(sc), int(n), int(d)))
    for info in res["tables"].values():
        info.pop("types", None)
        if a.queries:
            info["queries"] = [dict({k: v for k, v in q.items() if k != "pyarrow_filter"},
                                    pyarrow_filter=None if q["pyarrow_filter"] is None else str(q["pyarrow_filter"]))
                               for q in queries(info)]
        info["columns"] = len(info["columns"])
        info["files"] = len(info["files"])
    print(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
