"""Reading a Delta table at a version "by hand", as a program that reads the
files itself does: the log replayed here in Python (commits and classic or
multi-part checkpoints), each active file read with DuckDB, polars or
pyarrow by its physical column names, the rows its deletion vector deletes
dropped by row number, partition values added as constants.

    st = log_state(table_dir, version)        # the table at that version
    rows = read_by_hand("polars", data_root, st, pred)

`table_dir` is where the log is read (any directory with _delta_log/);
`data_root` is where the data files are read from (the plain path or a
view of the same table). pred is a predicate of delta_versions.py.
"""
from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from urllib.parse import unquote

from pyroaring import BitMap

Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
Z85_VALUE = {c: i for i, c in enumerate(Z85)}
RBA_MAGIC = 1681511377


def z85_decode(s: str) -> bytes:
    if len(s) % 5:
        raise ValueError("z85: length not a multiple of 5")
    out = bytearray()
    for i in range(0, len(s), 5):
        v = 0
        for c in s[i:i + 5]:
            v = v * 85 + Z85_VALUE[c]
        out += v.to_bytes(4, "big")
    return bytes(out)


def roaring_array_rows(data: bytes) -> set[int]:
    """The 64-bit row numbers of a RoaringBitmapArray (the protocol's portable form)."""
    if int.from_bytes(data[:4], "little") != RBA_MAGIC:
        raise ValueError("deletion vector: bad magic")
    n = int.from_bytes(data[4:12], "little")
    at, rows = 12, set()
    for _ in range(n):
        key = int.from_bytes(data[at:at + 4], "little")
        at += 4
        bm = BitMap.deserialize(data[at:])
        at += len(bm.serialize())
        rows.update((key << 32) | r for r in bm)
    return rows


@dataclass
class Field:
    logical: str
    physical: str
    type: str


@dataclass
class FileEntry:
    path: str                     # decoded, relative to the table
    partition_values: dict        # physical name -> text or None
    dv: dict | None


@dataclass
class State:
    version: int
    fields: list = field(default_factory=list)       # of Field, top level
    partition_columns: list = field(default_factory=list)  # logical names
    files: list = field(default_factory=list)        # of FileEntry

    def field(self, logical: str) -> Field:
        return next(f for f in self.fields if f.logical == logical)


def _schema_fields(meta: dict) -> list:
    schema = json.loads(meta["schemaString"])
    out = []
    for f in schema["fields"]:
        md = f.get("metadata") or {}
        t = f["type"] if isinstance(f["type"], str) else f["type"]["type"]
        out.append(Field(f["name"], md.get("delta.columnMapping.physicalName", f["name"]), t))
    return out


def _dv_key(dv: dict | None) -> str:
    if not dv:
        return ""
    return f"{dv['storageType']}{dv['pathOrInlineDv']}" + (f"@{dv['offset']}" if dv.get("offset") is not None else "")


def log_state(table_dir: Path, version: int | None = None) -> State:
    """The table at `version` (None: the latest)."""
    log = Path(table_dir) / "_delta_log"
    names = [p.name for p in log.iterdir()]
    commits = sorted(int(n[:20]) for n in names if re.fullmatch(r"\d{20}\.json", n))
    if version is None:
        version = commits[-1]
    cps = {}
    for n in names:
        m = re.fullmatch(r"(\d{20})\.checkpoint(\.\d{10}\.\d{10})?\.parquet", n)
        if m:
            cps.setdefault(int(m.group(1)), []).append(n)
    base = max((v for v in cps if v <= version), default=-1)
    meta, active = None, {}

    def apply(action: dict):
        nonlocal meta
        if action.get("metaData"):
            meta = action["metaData"]
        elif action.get("add"):
            a = action["add"]
            active[(unquote(a["path"]), _dv_key(a.get("deletionVector")))] = a
        elif action.get("remove"):
            r = action["remove"]
            active.pop((unquote(r["path"]), _dv_key(r.get("deletionVector"))), None)

    if base >= 0:
        import pyarrow.parquet as pq
        for n in sorted(cps[base]):
            t = pq.read_table(log / n, columns=[c for c in ("add", "remove", "metaData")
                                                if c in pq.read_schema(log / n).names])
            for row in t.to_pylist():
                row = {k: v for k, v in row.items() if v is not None}
                if "add" in row and row["add"].get("partitionValues") is not None:
                    row["add"]["partitionValues"] = dict(row["add"]["partitionValues"])
                if "metaData" in row and row["metaData"].get("configuration") is not None:
                    row["metaData"]["configuration"] = dict(row["metaData"]["configuration"])
                apply(row)
    for v in commits:
        if base < v <= version:
            for line in (log / f"{v:020d}.json").read_text().splitlines():
                if line.strip():
                    apply(json.loads(line))
    st = State(version, _schema_fields(meta), list(meta.get("partitionColumns") or []))
    for (path, _), a in sorted(active.items()):
        st.files.append(FileEntry(path, dict(a.get("partitionValues") or {}), a.get("deletionVector")))
    return st


def deleted_rows(table_root: Path, dv: dict | None) -> set[int]:
    """The rows a file's deletion vector deletes, read from table_root (where
    relative deletion vector files are)."""
    if not dv:
        return set()
    kind = dv["storageType"]
    if kind == "i":
        return roaring_array_rows(z85_decode(dv["pathOrInlineDv"]))
    if kind == "u":
        p = dv["pathOrInlineDv"]
        prefix, enc = p[:-20], p[-20:]
        name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(enc))}.bin"
        path = Path(table_root) / prefix / name if prefix else Path(table_root) / name
    elif kind == "p":
        raise ValueError("absolute deletion vector paths are not read by hand here")
    else:
        raise ValueError(f"deletion vector storage type {kind}")
    with open(path, "rb") as f:
        f.seek(int(dv.get("offset") or 1))
        size = int.from_bytes(f.read(4), "big")
        return roaring_array_rows(f.read(size))


# -- the three readers ------------------------------------------------------------------------------
ARROW_TYPES = {"long": "int64", "integer": "int32", "double": "float64", "boolean": "bool_", "string": "string",
               "date": "date32"}


def _arrow_type(t: str):
    import pyarrow as pa
    m = re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", t)
    if m:
        return pa.decimal128(int(m.group(1)), int(m.group(2)))
    return getattr(pa, ARROW_TYPES[t])()


def _polars_type(t: str):
    import polars as pl
    import pyarrow as pa
    return pl.from_arrow(pa.array([], _arrow_type(t))).dtype


def _partition_value(text, t: str):
    if text is None:
        return None
    if t in ("long", "integer"):
        return int(text)
    if t == "double":
        return float(text)
    if t == "boolean":
        return text == "true"
    if t.startswith("decimal"):
        return Decimal(text)
    return text


def _norm_row(values) -> str:
    return json.dumps([None if v is None else str(v) for v in values])


def read_file(reader: str, path: Path, st: State, entry: FileEntry, pred, deleted: set[int], render) -> list:
    """One data file's rows at state st, every column of the table (in st's
    field order), filtered by pred (render: delta_versions' renderers)."""
    import pyarrow.parquet as pq
    in_file = set(pq.read_schema(path).names)
    parts = {f.logical: _partition_value(entry.partition_values.get(f.physical), f.type)
             for f in st.fields if f.logical in st.partition_columns}
    cols = [f for f in st.fields if f.logical not in st.partition_columns]
    names = [f.logical for f in st.fields]
    if reader == "duckdb":
        import duckdb
        sel = []
        for f in st.fields:
            if f.logical in parts:
                v = parts[f.logical]
                lit = "NULL" if v is None else ("'" + str(v).replace("'", "''") + "'" if isinstance(v, str) else str(v))
                sel.append(f"CAST({lit} AS {render.duck_type(f.type)}) AS \"{f.logical}\"")
            elif f.physical in in_file:
                sel.append(f"\"{f.physical}\" AS \"{f.logical}\"")
            else:
                sel.append(f"CAST(NULL AS {render.duck_type(f.type)}) AS \"{f.logical}\"")
        q = (f"SELECT * FROM (SELECT {', '.join(sel)}, file_row_number AS __row "
             f"FROM read_parquet('{path}', file_row_number = true)) WHERE {render.sql(pred)}")
        con = duckdb.connect()
        try:
            rows = con.execute(q).fetchall()
        finally:
            con.close()
        return [_norm_row(r[:-1]) for r in rows if r[-1] not in deleted]
    if reader == "polars":
        import polars as pl
        exprs = []
        for f in st.fields:
            if f.logical in parts:
                exprs.append(pl.lit(parts[f.logical], dtype=_polars_type(f.type)).alias(f.logical))
            elif f.physical in in_file:
                exprs.append(pl.col(f.physical).alias(f.logical))
            else:
                exprs.append(pl.lit(None, dtype=_polars_type(f.type)).alias(f.logical))
        lf = pl.scan_parquet(path).with_row_index("__row").select(exprs + [pl.col("__row")]).filter(render.polars(pred))
        df = lf.collect()
        return [_norm_row(r[:-1]) for r in df.rows() if r[-1] not in deleted]
    if reader == "pyarrow":
        import pyarrow as pa
        t = pq.ParquetFile(path).read(columns=[f.physical for f in cols if f.physical in in_file])
        n = t.num_rows
        arrays = []
        for f in st.fields:
            if f.logical in parts:
                arrays.append(pa.array([parts[f.logical]] * n, _arrow_type(f.type)))
            elif f.physical in in_file:
                arrays.append(t.column(f.physical))
            else:
                arrays.append(pa.nulls(n, _arrow_type(f.type)))
        arrays.append(pa.array(range(n), pa.int64()))
        table = pa.table(arrays, names=names + ["__row"]).filter(render.pyarrow(pred))
        return [_norm_row(r[:-1]) for r in zip(*[c.to_pylist() for c in table.columns]) if r[-1] not in deleted]
    raise ValueError(reader)


def read_by_hand(reader: str, data_root: Path, st: State, pred, render) -> list:
    """Every active file of st read from data_root: sorted normalized rows."""
    out = []
    for e in st.files:
        out += read_file(reader, Path(data_root) / e.path, st, e, pred, deleted_rows(data_root, e.dv), render)
    return sorted(out)
