"""Fixture generation and helpers shared by the query-view e2e tests
(test_views.py, test_views_readers.py) and scripts/lib/bench_views.py.

Every generated table has
  * ``part`` int32   the file's index in its layout (constant per file),
  * ``id``   int64   the file row number (0-based),
  * ``sel``  int32   a permutation of 0..n-1, scattered over the file:
                     ``sel < k`` selects exactly k rows spread over the whole
                     file, ``sel = v`` exactly one row,
  * payload columns of every type the views must handle (see PAYLOAD).

Data is deterministic (seeded ``random.Random``), never committed.
Predicates are small tuples so that one selection can be rendered for the
hint (sievefs's predicate language), DuckDB SQL, pyarrow expressions, pyarrow
DNF filters and polars expressions:

  ("lt"|"le"|"gt"|"ge"|"eq", col, value)   ("between", col, lo, hi)
  ("in", col, [values])                    ("and", p, q)
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import operator
import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# Mount arguments of the tests of the view machinery: every request free, so
# every page that can be read partially or synthesized is (the default
# --request-cost reads small pages whole, and these fixtures have small pages).
EVERY_PARTIAL = ("--request-cost", "0")

# Payload columns: name -> arrow type (built lazily: pyarrow is imported in functions).
PAYLOAD = ["i32", "i64", "f32", "f64", "dec", "d", "ts", "s", "b", "flag"]
INT_COLS = ("part", "id", "sel", "i32", "i64")


def _types():
    import pyarrow as pa
    return {
        "part": pa.int32(), "id": pa.int64(), "sel": pa.int32(),
        "i32": pa.int32(), "i64": pa.int64(), "f32": pa.float32(), "f64": pa.float64(),
        "dec": pa.decimal128(18, 3), "d": pa.date32(), "ts": pa.timestamp("us"),
        "s": pa.string(), "b": pa.binary(), "flag": pa.bool_(),
    }


def _stride(n: int) -> int:
    """A multiplier coprime with n, about 0.618 n: (i * stride) % n scatters."""
    s = max(1, int(n * 0.6180339887)) | 1
    while math.gcd(s, n) != 1:
        s += 2
    return s


def sel_values(n: int, salt: int = 0) -> list:
    s = _stride(n)
    off = (salt * 7919) % n if n else 0
    return [(i * s + off) % n for i in range(n)]


def make_table(n: int, seed: str, *, part: int = 0, nullable: bool = True,
               incompressible: bool = True, null_frac: float = 0.1):
    """A pyarrow Table of n rows with the columns described in the module doc.
    nullable: payload columns are OPTIONAL with ~null_frac NULLs (also on
    selected rows); otherwise REQUIRED. incompressible: random payload
    values; otherwise small repetitive ones (zstd compresses them)."""
    import pyarrow as pa
    rnd = random.Random(f"viewdata:{seed}:{part}")
    T = _types()
    epoch = dt.datetime(2020, 1, 1)

    def maybe_null(vals):
        if not nullable:
            return vals
        return [None if rnd.random() < null_frac else v for v in vals]

    if incompressible:
        i32 = [rnd.randrange(-2**31, 2**31) for _ in range(n)]
        i64 = [rnd.randrange(-2**62, 2**62) for _ in range(n)]
        f64 = [rnd.uniform(-1e6, 1e6) for _ in range(n)]
        dec = [decimal.Decimal(rnd.randrange(-10**17, 10**17)).scaleb(-3) for _ in range(n)]
        days = [rnd.randrange(0, 20000) for _ in range(n)]
        tsu = [rnd.randrange(0, 10**15) for _ in range(n)]
        s = [f"s{rnd.getrandbits(48):x}" for _ in range(n)]
        b = [rnd.randbytes(rnd.randrange(0, 20)) for _ in range(n)]
    else:
        i32 = [i % 97 for i in range(n)]
        i64 = [(i // 10) * 3 for i in range(n)]
        f64 = [float(i % 50) / 4 for i in range(n)]
        dec = [decimal.Decimal(i % 1000).scaleb(-3) for i in range(n)]
        days = [18000 + i % 30 for i in range(n)]
        tsu = [1_600_000_000_000_000 + (i // 100) * 1_000_000 for i in range(n)]
        s = [f"cat{i % 13}" for i in range(n)]
        b = [bytes([i % 7]) * (i % 5) for i in range(n)]
    f64 = [float("nan") if i % 997 == 5 else (float("inf") if i % 1999 == 11 else v)
           for i, v in enumerate(f64)]
    f32 = [float("nan") if i % 991 == 3 else v / 7 for i, v in enumerate(f64)]
    flag = [rnd.random() < 0.3 for _ in range(n)]
    cols = {
        "part": [part] * n,
        "id": list(range(n)),
        "sel": sel_values(n, part),
        "i32": maybe_null(i32), "i64": maybe_null(i64),
        "f32": maybe_null(f32), "f64": maybe_null(f64),
        "dec": maybe_null(dec),
        "d": maybe_null([epoch.date() + dt.timedelta(days=x) for x in days]),
        "ts": maybe_null([epoch + dt.timedelta(microseconds=x) for x in tsu]),
        "s": maybe_null(s), "b": maybe_null(b), "flag": maybe_null(flag),
    }
    fields = [pa.field(c, T[c], nullable=(nullable and c in PAYLOAD)) for c in cols]
    schema = pa.schema(fields)
    return pa.table({c: pa.array(v, T[c]) for c, v in cols.items()}, schema=schema)


@dataclass(frozen=True)
class Layout:
    """How one fixture's Parquet files are written."""
    name: str
    rows: int = 40_000
    row_group_size: int = 16_384
    codec: str = "none"             # none | zstd | snappy
    page_version: str = "1.0"       # "1.0" | "2.0"
    page_size: int = 64 << 10       # data_page_size in bytes
    encoding: str = "plain"         # plain | dict | delta
    nullable: bool = True
    incompressible: bool = True
    page_index: bool = True
    checksum: bool = False
    files: int = 1
    max_rows_per_page: int | None = None

    @property
    def prefix(self) -> str:
        return f"cases/{self.name}"

    def keys(self) -> list:
        return [f"{self.prefix}/part-{i:05d}.parquet" for i in range(self.files)]


def write_int64_pages(path: Path, *, rows: int, page_rows: int, columns: int, seed: int) -> None:
    """One row group: a sorted int64 `id` and `columns` incompressible int64
    columns c0, c1, ... (8 bytes a value), PLAIN, uncompressed, page_rows rows
    a page, with a page index."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(seed)
    cols = {"id": pa.array(np.arange(rows, dtype=np.int64))}
    for i in range(columns):
        cols[f"c{i}"] = pa.array(rng.integers(-2**62, 2**62, rows))
    pq.write_table(pa.table(cols), path, row_group_size=rows, data_page_size=1 << 20,
                   max_rows_per_page=page_rows, use_dictionary=False, compression="NONE", write_page_index=True)


def write_layout(layout: Layout, outdir: Path) -> dict:
    """Write the layout's files under outdir; returns {s3 key: local path}."""
    import pyarrow.parquet as pq
    out = {}
    for i, key in enumerate(layout.keys()):
        path = outdir / key
        path.parent.mkdir(parents=True, exist_ok=True)
        t = make_table(layout.rows, layout.name, part=i, nullable=layout.nullable,
                       incompressible=layout.incompressible)
        kw = dict(row_group_size=layout.row_group_size,
                  compression="NONE" if layout.codec == "none" else layout.codec,
                  data_page_version=layout.page_version, data_page_size=layout.page_size,
                  write_page_index=layout.page_index, write_page_checksum=layout.checksum,
                  write_batch_size=max(16, min(1024, layout.page_size // 16)))
        if layout.max_rows_per_page:
            kw["max_rows_per_page"] = layout.max_rows_per_page
        if layout.encoding == "plain":
            kw["use_dictionary"] = False
        elif layout.encoding == "dict":
            kw["use_dictionary"] = True
        elif layout.encoding == "delta":
            kw["use_dictionary"] = False
            kw["column_encoding"] = {"id": "DELTA_BINARY_PACKED", "i32": "DELTA_BINARY_PACKED",
                                     "i64": "DELTA_BINARY_PACKED", "d": "DELTA_BINARY_PACKED",
                                     "ts": "DELTA_BINARY_PACKED", "s": "DELTA_LENGTH_BYTE_ARRAY",
                                     "b": "DELTA_LENGTH_BYTE_ARRAY", "f64": "BYTE_STREAM_SPLIT"}
        else:
            raise ValueError(layout.encoding)
        pq.write_table(t, path, **kw)
        out[key] = path
    return out


# -- predicates ------------------------------------------------------------------------
def _sql_lit(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(v)


_OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "="}
# The same comparisons as Python operators: they build pyarrow and polars
# expressions as well as compare plain values.
_CMP = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
        "eq": operator.eq}


def to_sql(p) -> str:
    """Both sievefs's predicate language and DuckDB SQL."""
    k = p[0]
    if k in _OPS:
        return f"{p[1]} {_OPS[k]} {_sql_lit(p[2])}"
    if k == "between":
        return f"{p[1]} BETWEEN {_sql_lit(p[2])} AND {_sql_lit(p[3])}"
    if k == "in":
        return f"{p[1]} IN ({', '.join(_sql_lit(v) for v in p[2])})"
    if k == "and":
        return f"({to_sql(p[1])}) AND ({to_sql(p[2])})"
    raise ValueError(p)


def _to_expr(p, col, between, isin):
    """p as a dataframe library's expression: col(name) makes a column, between
    and isin its two non-operator forms; comparisons and AND are operators."""
    k = p[0]
    if k == "and":
        return _to_expr(p[1], col, between, isin) & _to_expr(p[2], col, between, isin)
    c = col(p[1])
    if k in _CMP:
        return _CMP[k](c, p[2])
    if k == "between":
        return between(c, p[2], p[3])
    if k == "in":
        return isin(c, list(p[2]))
    raise ValueError(p)


def to_pa(p):
    import pyarrow.compute as pc
    return _to_expr(p, pc.field, lambda f, lo, hi: (f >= lo) & (f <= hi), lambda f, vs: f.isin(vs))


def to_dnf(p) -> list:
    """pq.read_table(filters=...) form: a list of (col, op, value) ANDed."""
    k = p[0]
    if k in _OPS:
        return [(p[1], "==" if k == "eq" else _OPS[k], p[2])]
    if k == "between":
        return [(p[1], ">=", p[2]), (p[1], "<=", p[3])]
    if k == "in":
        return [(p[1], "in", set(p[2]))]
    if k == "and":
        return to_dnf(p[1]) + to_dnf(p[2])
    raise ValueError(p)


def to_polars(p):
    import polars as pl
    return _to_expr(p, pl.col, lambda c, lo, hi: c.is_between(lo, hi, closed="both"),
                    lambda c, vs: c.is_in(vs))


def eval_py(p, row: dict) -> bool:
    """SQL semantics on one row dict (NULL -> not selected)."""
    k = p[0]
    if k == "and":
        return eval_py(p[1], row) and eval_py(p[2], row)
    v = row[p[1]]
    if v is None:
        return False
    if k in _CMP:
        return _CMP[k](v, p[2])
    if k == "between":
        return p[2] <= v <= p[3]
    if k == "in":
        return v in p[2]
    raise ValueError(p)


# -- comparing results -----------------------------------------------------------------
class _NaN:
    def __repr__(self):
        return "NaN"

    def __eq__(self, other):
        return isinstance(other, _NaN)

    def __hash__(self):
        return 0


NAN = _NaN()


def norm(x):
    """Make results comparable with ==: NaN equals NaN, containers recursed."""
    if isinstance(x, float) and math.isnan(x):
        return NAN
    if isinstance(x, (list, tuple)):
        return type(x)(norm(v) for v in x)
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    return x


def rows_of(table, keys=("part", "id")) -> list:
    """Arrow table -> list of row dicts sorted by keys, NaN-normalized."""
    if table.num_rows and all(k in table.column_names for k in keys):
        table = table.sort_by([(k, "ascending") for k in keys])
    return norm(table.to_pylist())


def first_diff(a: list, b: list) -> str:
    if len(a) != len(b):
        return f"{len(a)} rows vs {len(b)} rows"
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"row {i}: {x!r} != {y!r}"
    return "equal"


# -- hints -------------------------------------------------------------------------------
@dataclass
class HintResult:
    name: str
    write_errno: int | None = None
    close_errno: int | None = None
    error_text: str | None = None

    @property
    def ok(self) -> bool:
        return self.write_errno is None and self.close_errno is None


def write_hint(mp: Path, name: str, doc, *, chunk: int | None = None) -> HintResult:
    """Write MOUNTPOINT/.sieve/hints/NAME.json with os.open/write/close and
    report the errno of the write and of the close (the verdict)."""
    data = doc if isinstance(doc, (bytes, str)) else json.dumps(doc)
    if isinstance(data, str):
        data = data.encode()
    path = Path(mp) / ".sieve" / "hints" / f"{name}.json"
    r = HintResult(name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        step = chunk or len(data) or 1
        for off in range(0, len(data), step):
            piece = data[off:off + step]
            done = 0
            while done < len(piece):
                done += os.write(fd, piece[done:])
    except OSError as e:
        r.write_errno = e.errno
    try:
        os.close(fd)
    except OSError as e:
        r.close_errno = e.errno
    if not r.ok:
        try:
            r.error_text = (Path(mp) / ".sieve" / "hints" / f"{name}.error").read_text()
        except OSError:
            r.error_text = None
    return r


def view_path(mp: Path, name: str) -> Path:
    return Path(mp) / ".sieve" / "views" / name


def view_stats(mp: Path, name: str) -> dict:
    return json.loads((Path(mp) / ".sieve" / "hints" / f"{name}.stats").read_bytes())


def synthesized(stats: dict) -> int:
    return stats["pages_synthesized"] + stats["pages_partial"]


# -- inspect ---------------------------------------------------------------------------
def inspect_pages(bin_path: str, path: Path) -> dict:
    """`sievefs inspect --pages --json` of a local file."""
    r = subprocess.run([bin_path, "inspect", str(path), "--pages", "--json"], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"sievefs inspect {path}: {r.stderr}")
    return json.loads(r.stdout)


def eligible_pages(doc: dict, skip_cols=("sel",)) -> int:
    """Data pages inspect calls eligible for partial reads, outside skip_cols
    (dictionary pages it calls dictionary_entries are counted apart: the
    Tally's dict_pages)."""
    n = 0
    for rg in doc["row_groups"]:
        for c in rg["columns"]:
            if c["path"] in skip_cols:
                continue
            n += sum(1 for p in (c.get("pages") or []) if p.get("eligible") and p.get("type") != "DICTIONARY_PAGE")
    return n


@dataclass
class Tally:
    """Per-layout sums of view counters over a test module."""
    synth: dict = field(default_factory=dict)
    eligible: dict = field(default_factory=dict)
    bytes_differ: list = field(default_factory=list)
    dict_pages: dict = field(default_factory=dict)  # dictionary pages kept in part

    def add(self, layout: str, stats: dict):
        self.synth[layout] = self.synth.get(layout, 0) + synthesized(stats)
        self.dict_pages[layout] = self.dict_pages.get(layout, 0) + stats.get("dictionary_pages_partial", 0)
