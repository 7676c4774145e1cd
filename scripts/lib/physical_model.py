"""The physical-limit model: a lower bound on the time any reader needs to
answer a selective query over a link, used as a contender in the benchmark
report. It is a formula, not a simulation:

    model_seconds = dependent_rounds * latency + bytes / bandwidth + requests / capacity

capacity: the requests per second the link completes at best (with as many
in flight as helps: the connection profile's capacity curve, when the
mount measured one; else an assumption the caller states). requests and
bytes: the needed byte ranges of each dependent round (per file: S3 serves
one range per GET), where two ranges closer than bandwidth / capacity bytes
are fetched as one (the gap costs less than a request): for this separable
cost the optimal coalescing, so requests and bytes here are min_bytes plus
the gaps read through, and the request count that goes with them. Without
a capacity (capacity None or inf) requests cost nothing and the formula is
the old one, min_bytes / bandwidth + dependent_rounds * rtt.

min_bytes: the bytes a reader that knows the file layout and the selection
could not avoid fetching; dependent_rounds: the round trips that must happen
one after the other because each needs what the previous one returned. TCP
handshakes, TLS, request overhead (HTTP headers), listing and the Delta log
are not included (add them to the rounds yourself, e.g. +1 round for reading
_delta_log, if the compared readers pay them too); the model assumes
unlimited parallelism within a round and warm connections.

Minimal bytes of one Parquet file for a selection (minimal_read()):

    selection = rows (0-based row numbers within the file), the projected
    columns, and the filter columns (whose values decide the selection).

  footer       the FileMetaData + 8 bytes (its length and "PAR1"); the
               leading "PAR1" is not counted.
  filter       every column chunk of every filter column, whole (dictionary
               page included), in the row groups the filter must be
               evaluated in: all of them, or `filter_row_groups` when the
               caller knows statistics rule the others out (see
               row_groups_by_stats()). Column-index page pruning inside a
               chunk is deliberately not modelled (sievefs and the readers
               it is compared with read filter chunks whole).
  page index   the OffsetIndex (offset_index_length from the footer) of each
               projected non-filter column chunk in a row group with at
               least one selected row: what maps row numbers to pages. No
               ColumnIndex is counted.
  values       for each projected non-filter column chunk with selected
               rows, each data page holding at least one selected row:
               * "locatable" pages — flat columns (max_rep = 0, max_def <= 1),
                 DATA_PAGE or DATA_PAGE_V2, PLAIN fixed-width values (INT32,
                 INT64, INT96, FLOAT, DOUBLE, FIXED_LEN_BYTE_ARRAY), PLAIN
                 BOOLEAN or BYTE_STREAM_SPLIT, codec UNCOMPRESSED or ZSTD
                 whose (compressed part of the) body is exactly one zstd
                 frame of raw blocks without dictionary id (checked by
                 walking the frame in the file) —
                 the page header (header_length) + the levels (V2:
                 def_levels_length + rep_levels_length; V1 with max_def 1:
                 the 4-byte length prefix + the RLE run it announces, read
                 from the file; none for required columns) + for ZSTD the
                 frame header and every 3-byte block header +
                 the selected values: width x (selected non-null values),
                 BOOLEAN: the distinct bytes holding the selected bits,
                 BYTE_STREAM_SPLIT: width bytes per value as for PLAIN. Null
                 rows need no value bytes (validity is taken from pyarrow).
               * every other data page with a selected row — dictionary
                 encoded, PLAIN BYTE_ARRAY, DELTA_*, SNAPPY/GZIP/… compressed,
                 nested — whole (header + compressed body), since a value's
                 position cannot be known without its bytes; plus, once per
                 chunk, the dictionary page when such a page is dictionary
                 encoded. (For DELTA_LENGTH_BYTE_ARRAY this is an overcount:
                 the lengths block + selected bytes would do.)
               * a chunk without OffsetIndex: its pages as `sievefs inspect
                 --pages` maps them from their headers, as for the others (a
                 reader can have that map ahead of time: `sievefs index`
                 builds it; reading the map is not counted), without page
                 index bytes; whole only when no map could be made.
  Data pages with no selected row, and columns neither projected nor filter,
  cost nothing.

Rounds (minimal dependent rounds): 1 for the footer, with the page index in
the same round (it sits just before the footer, so a reader that reads a
generous tail gets both at once; for the request count they are separate
ranges, merged when close); +1 for the filter chunks when there are
any; +1 for the values when any selected row exists. So footer -> filter ->
values = 3, and 2 with no filter column to read (or nothing selected).
Several files are read in parallel: MinimalRead.combine() sums bytes and
takes the maximum of rounds.

Page facts come from `sievefs inspect FILE --json --pages` (docs/inspect.md;
$SIEVEFS_BIN or build/sievefs), the OffsetIndex lengths from the file's
footer (a small thrift compact reader below), level lengths and zstd frame
headers from the page bytes, validity from pyarrow. Python: pyarrow, numpy.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
from thrift_reader import Reader  # noqa: E402
FIXED_WIDTH = {"INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12}
DICT_ENCODINGS = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def model_seconds(min_bytes: float, dependent_rounds: int, rtt_s: float,
                  bandwidth_bytes_per_s: float, requests: int = 0,
                  capacity_per_s: float | None = None) -> float:
    """dependent_rounds * rtt + min_bytes / bandwidth + requests / capacity (seconds)."""
    if bandwidth_bytes_per_s <= 0:
        raise ValueError("bandwidth must be positive")
    t = min_bytes / bandwidth_bytes_per_s + dependent_rounds * rtt_s
    if capacity_per_s and capacity_per_s != float("inf"):
        t += requests / capacity_per_s
    return t


def coalesce(starts, ends, gap: float) -> tuple[int, int]:
    """(requests, gap bytes read through) for the byte ranges [starts, ends)
    of one file and one round, merging ranges that overlap or touch and those
    separated by less than `gap` bytes."""
    st = np.asarray(starts, dtype=np.int64)
    en = np.asarray(ends, dtype=np.int64)
    if st.size == 0:
        return 0, 0
    o = np.argsort(st, kind="stable")
    st, en = st[o], np.maximum.accumulate(en[o])
    holes = st[1:] - en[:-1]                  # > 0: bytes between a range and the next
    holes = holes[holes > 0]
    merged = holes[holes < gap]
    return int(holes.size - merged.size + 1), int(merged.sum())


def mbit_to_bytes_per_s(mbit: float) -> float:
    return mbit * 1e6 / 8


@dataclass
class MinimalRead:
    """Minimal bytes (by part) and dependent rounds of a selective read."""
    footer_bytes: int = 0
    page_index_bytes: int = 0
    filter_bytes: int = 0
    value_bytes: int = 0          # locatable pages: headers, levels, framing, selected values
    whole_page_bytes: int = 0     # pages read whole (+ their dictionary pages, chunks without index)
    rounds: int = 0
    files: int = 0
    rows: int = 0
    selected_rows: int = 0
    pages_partial: int = 0
    pages_whole: int = 0
    file_size: int = 0            # bytes of the files (what a full download costs)
    notes: list = field(default_factory=list)
    ranges: list = field(default_factory=list, repr=False)  # per file: {round: (starts, ends)}

    @property
    def total(self) -> int:
        return (self.footer_bytes + self.page_index_bytes + self.filter_bytes
                + self.value_bytes + self.whole_page_bytes)

    def requests(self, gap_bytes: float = 0) -> tuple[int, int]:
        """(requests, gap bytes read through) when ranges closer than
        gap_bytes are fetched as one (per file and round)."""
        n = extra = 0
        for per_file in self.ranges:
            for st, en in per_file.values():
                r, g = coalesce(st, en, gap_bytes)
                n += r
                extra += g
        return n, extra

    def seconds(self, rtt_s: float, bandwidth_bytes_per_s: float,
                capacity_per_s: float | None = None) -> float:
        return self.limit(rtt_s, bandwidth_bytes_per_s, capacity_per_s)["seconds"]

    def limit(self, rtt_s: float, bandwidth_bytes_per_s: float,
              capacity_per_s: float | None = None) -> dict:
        """The bound and its terms: {seconds, rounds, bytes (min + gaps read
        through), requests, gap_bytes, latency_s, transfer_s, requests_s}."""
        capped = bool(capacity_per_s) and capacity_per_s != float("inf")
        gap = bandwidth_bytes_per_s / capacity_per_s if capped else 0
        req, extra = self.requests(gap)
        b = self.total + (extra if capped else 0)
        out = {"rounds": self.rounds, "bytes": b, "min_bytes": self.total, "gap_bytes": extra if capped else 0,
               "requests": req, "latency_s": self.rounds * rtt_s,
               "transfer_s": b / bandwidth_bytes_per_s,
               "requests_s": req / capacity_per_s if capped else 0.0}
        out["seconds"] = out["latency_s"] + out["transfer_s"] + out["requests_s"]
        return out

    @staticmethod
    def combine(parts) -> "MinimalRead":
        """Files read in parallel: bytes add up, rounds are the maximum."""
        out = MinimalRead()
        for p in parts:
            for f in fields(MinimalRead):
                if f.name == "rounds":
                    out.rounds = max(out.rounds, p.rounds)
                elif f.name in ("notes", "ranges"):
                    setattr(out, f.name, getattr(out, f.name) + getattr(p, f.name))
                else:
                    setattr(out, f.name, getattr(out, f.name) + getattr(p, f.name))
        return out

    def as_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "ranges"}
        d["total"] = self.total
        d["requests"] = self.requests(0)[0]
        return d


# ---------------------------------------------------------------------------
# file facts
# ---------------------------------------------------------------------------
def inspect_json(path, sievefs_bin: str | None = None) -> dict:
    """`sievefs inspect PATH --json --pages` as a dict."""
    b = sievefs_bin or os.environ.get("SIEVEFS_BIN") or str(REPO / "build" / "sievefs")
    r = subprocess.run([b, "inspect", str(path), "--json", "--pages"], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"sievefs inspect {path}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def footer_facts(path) -> tuple:
    """(footer bytes incl. the 8-byte trailer, [[(offset_index_offset,
    offset_index_length) or None per column] per row group])."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(size - 8)
        tail = f.read(8)
        if tail[4:] != b"PAR1":
            raise ValueError(f"{path}: not a Parquet file")
        n = struct.unpack("<I", tail[:4])[0]
        f.seek(size - 8 - n)
        meta = Reader(f.read(n)).struct()
    oi = []
    for rg in meta.get(4) or []:
        row = []
        for cc in rg.get(1) or []:
            row.append((cc[4], cc[5]) if 4 in cc and 5 in cc else None)
        oi.append(row)
    return n + 8, oi


def _levels_and_framing(f, page: dict, codec: str, max_def: int) -> int | None:
    """Bytes of a locatable page besides its header and values: levels and,
    for ZSTD, frame and block headers. None if the body layout is not what a
    locatable page needs."""
    body_at = page["offset"] + page["header_length"]
    if page["type"] == "DATA_PAGE_V2":
        lv = (page["def_levels_length"] or 0) + (page["rep_levels_length"] or 0)
        framing_at = body_at + lv            # V2 levels are outside the compressed part
        levels_in_body = False
    else:
        lv = 0
        framing_at = body_at
        levels_in_body = max_def > 0
    framing = 0
    content_at = framing_at
    if codec == "ZSTD":
        f.seek(framing_at)
        body = f.read(page["compressed_size"] - (framing_at - body_at))
        walked = _zstd_raw_frame(body)
        if walked is None:
            return None
        header, blocks = walked
        framing = header + 3 * blocks
        content_at = framing_at + header + 3     # first raw block's content
    elif codec != "UNCOMPRESSED":
        return None
    if levels_in_body:
        f.seek(content_at)
        n = struct.unpack("<I", f.read(4))[0]
        lv = 4 + n
    return lv + framing


def _zstd_raw_frame(body: bytes):
    """(frame header bytes, number of blocks) when body is exactly one zstd
    frame made of raw blocks and without a dictionary id; else None."""
    if body[:4] != ZSTD_MAGIC or len(body) < 6:
        return None
    fhd = body[4]
    if fhd & 3:                                   # dictionary id
        return None
    single = (fhd >> 5) & 1
    fcs = fhd >> 6
    pos = 5 + (0 if single else 1) + ((1 if single else 0) if fcs == 0 else (0, 2, 4, 8)[fcs])
    header = pos
    blocks = 0
    while True:
        if pos + 3 > len(body):
            return None
        h = body[pos] | body[pos + 1] << 8 | body[pos + 2] << 16
        last, btype, size = h & 1, (h >> 1) & 3, h >> 3
        if btype != 0:                            # RLE or compressed block
            return None
        pos += 3 + size
        blocks += 1
        if last:
            break
    if (fhd >> 2) & 1:                            # content checksum (need not be read)
        pos += 4
    return (header, blocks) if pos == len(body) else None


def _locatable(page: dict, col: dict, codec: str) -> bool:
    if page["type"] not in ("DATA_PAGE", "DATA_PAGE_V2"):
        return False
    if col["max_rep"] != 0 or col["max_def"] > 1:
        return False
    if codec not in ("UNCOMPRESSED", "ZSTD"):
        return False
    phys = col["physical_type"]
    enc = page["encoding"]
    fixed = phys in FIXED_WIDTH or phys == "FIXED_LEN_BYTE_ARRAY"
    if enc == "PLAIN":
        return fixed or phys == "BOOLEAN"
    if enc == "BYTE_STREAM_SPLIT":
        return fixed
    return False


def _width(col: dict) -> int:
    if col["physical_type"] == "FIXED_LEN_BYTE_ARRAY":
        return int(col["type_length"])
    return FIXED_WIDTH[col["physical_type"]]


# ---------------------------------------------------------------------------
# the model for one file
# ---------------------------------------------------------------------------
def minimal_read(path, rows, columns, filter_columns=(), filter_row_groups=None,
                 inspect: dict | None = None, sievefs_bin: str | None = None) -> MinimalRead:
    """Minimal bytes and dependent rounds to read `columns` of the selected
    `rows` (0-based row numbers in the file; any iterable or numpy array)
    of the local Parquet file `path`, evaluating a filter on
    `filter_columns`. See the module docstring for the exact definition.
    `inspect`: a precomputed inspect_json(path)."""
    import pyarrow.parquet as pq

    path = str(path)
    info = inspect or inspect_json(path, sievefs_bin)
    schema = {c["path"]: c for c in info["schema"]}
    filters = list(dict.fromkeys(filter_columns))
    projected = [c for c in dict.fromkeys(columns) if c not in filters]
    for c in filters + projected:
        if c not in schema:
            raise KeyError(f"{path}: no column {c!r} (columns: {', '.join(schema)})")
    sel = np.unique(np.asarray(list(rows) if not isinstance(rows, np.ndarray) else rows, dtype=np.int64))
    if sel.size and (sel[0] < 0 or sel[-1] >= info["num_rows"]):
        raise ValueError(f"{path}: selected rows outside 0..{info['num_rows'] - 1}")
    footer, oi = footer_facts(path)
    out = MinimalRead(footer_bytes=footer, files=1, rows=info["num_rows"],
                      selected_rows=int(sel.size), file_size=info["size"])
    rng = {"footer": ([], []), "filter": ([], []), "values": ([], [])}

    def need(round_, start, length):
        rng[round_][0].append(np.array([start], dtype=np.int64))
        rng[round_][1].append(np.array([start + length], dtype=np.int64))
    need("footer", info["size"] - footer, footer)
    frg = set(range(len(info["row_groups"]))) if filter_row_groups is None else set(filter_row_groups)
    pf = None
    start = 0
    with open(path, "rb") as f:
        for rg in info["row_groups"]:
            i = rg["index"]
            n = rg["num_rows"]
            lo, hi = np.searchsorted(sel, [start, start + n])
            rsel = sel[lo:hi] - start
            start += n
            cols = {c["path"]: (j, c) for j, c in enumerate(rg["columns"])}
            if i in frg:
                for c in filters:
                    out.filter_bytes += cols[c][1]["length"]
                    need("filter", cols[c][1]["offset"], cols[c][1]["length"])
            if rsel.size == 0:
                continue
            for name in projected:
                j, cc = cols[name]
                col = schema[name]
                if cc["pages"] is None:
                    out.whole_page_bytes += cc["length"]
                    need("values", cc["offset"], cc["length"])
                    out.notes.append(f"{name} rg{i}: no page map, chunk counted whole")
                    continue
                # a chunk without an OffsetIndex: its pages as their headers map them (the
                # map a reader can have ahead of time, e.g. `sievefs index`; reading it is
                # not counted), no page index bytes
                loc = (oi[i][j] if i < len(oi) and j < len(oi[i]) else None) if cc["has_offset_index"] else None
                out.page_index_bytes += loc[1] if loc else 0
                if loc:
                    need("footer", loc[0], loc[1])
                valid = None
                if col["max_def"] > 0:
                    if pf is None:
                        pf = pq.ParquetFile(path)
                    arr = pf.read_row_group(i, columns=[name]).column(0)
                    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
                dict_page = next((p for p in cc["pages"] if p["type"] == "DICTIONARY_PAGE"), None)
                need_dict = False
                for p in cc["pages"]:
                    if p["type"] not in ("DATA_PAGE", "DATA_PAGE_V2"):
                        continue
                    a, b = np.searchsorted(rsel, [p["first_row"], p["first_row"] + p["num_rows"]])
                    if a == b:
                        continue
                    prow = rsel[a:b] - p["first_row"]
                    extra = _levels_and_framing(f, p, cc["codec"], col["max_def"]) \
                        if _locatable(p, col, cc["codec"]) else None
                    if extra is None:
                        out.whole_page_bytes += p["header_length"] + p["compressed_size"]
                        need("values", p["offset"], p["header_length"] + p["compressed_size"])
                        out.pages_whole += 1
                        need_dict |= p["encoding"] in DICT_ENCODINGS
                        continue
                    if valid is not None:
                        pv = valid[p["first_row"]:p["first_row"] + p["num_rows"]]
                        vidx = np.cumsum(pv)[prow[pv[prow]]] - 1     # value index of selected non-nulls
                    else:
                        vidx = prow
                    # ranges: header + levels (+ zstd frame and block headers, all counted
                    # at the front: a few bytes off for later blocks, no extra request
                    # counted for their headers: still a lower bound), then the runs of
                    # selected values
                    values_at = p["offset"] + p["header_length"] + extra
                    need("values", p["offset"], p["header_length"] + extra)
                    if col["physical_type"] == "BOOLEAN":
                        vb = int(np.unique(vidx // 8).size)
                        ub = np.unique(vidx // 8)
                        vs, ve = values_at + ub, values_at + ub + 1
                    else:
                        vb = int(vidx.size) * _width(col)
                        w = _width(col)
                        vs, ve = values_at + vidx * w, values_at + vidx * w + w
                    rng["values"][0].append(np.asarray(vs, dtype=np.int64))
                    rng["values"][1].append(np.asarray(ve, dtype=np.int64))
                    out.value_bytes += p["header_length"] + extra + vb
                    out.pages_partial += 1
                if need_dict and dict_page is not None:
                    out.whole_page_bytes += dict_page["header_length"] + dict_page["compressed_size"]
                    need("values", dict_page["offset"], dict_page["header_length"] + dict_page["compressed_size"])
    out.ranges = [{k: (np.concatenate(a), np.concatenate(b)) for k, (a, b) in rng.items() if a}]
    out.rounds = 1 + (1 if out.filter_bytes else 0) + (1 if sel.size and projected else 0)
    return out


def row_groups_by_stats(path, column: str, lo=None, hi=None) -> list:
    """Row groups whose min/max statistics of `column` overlap [lo, hi] (None
    = unbounded), i.e. where a range filter on it must be evaluated; row
    groups without statistics are included."""
    import pyarrow.parquet as pq
    md = pq.ParquetFile(str(path)).metadata
    names = [md.schema.column(k).path for k in range(md.num_columns)]
    k = names.index(column)
    out = []
    for i in range(md.num_row_groups):
        st = md.row_group(i).column(k).statistics
        if st is None or not st.has_min_max:
            out.append(i)
        elif (hi is None or st.min <= hi) and (lo is None or st.max >= lo):
            out.append(i)
    return out


def describe(m: MinimalRead, rtt_s: float | None = None, bandwidth_bytes_per_s: float | None = None,
             capacity_per_s: float | None = None) -> str:
    """One line for a benchmark report."""
    s = (f"minimal {m.total:,} B in {m.rounds} rounds (footer {m.footer_bytes:,}, page index "
         f"{m.page_index_bytes:,}, filter {m.filter_bytes:,}, values {m.value_bytes:,} in "
         f"{m.pages_partial} pages, whole pages {m.whole_page_bytes:,} in {m.pages_whole}); "
         f"{m.selected_rows:,} of {m.rows:,} rows, file {m.file_size:,} B")
    if rtt_s is not None and bandwidth_bytes_per_s:
        lim = m.limit(rtt_s, bandwidth_bytes_per_s, capacity_per_s)
        s += (f"; model {lim['seconds']:.3f} s = {m.rounds} x {rtt_s * 1000:.0f} ms + "
              f"{lim['bytes']:,} B / bandwidth + {lim['requests']:,} requests / "
              f"{'inf' if not capacity_per_s else f'{capacity_per_s:,.0f}'} per s")
    return s


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="minimal bytes/rounds of a selective Parquet read")
    ap.add_argument("file")
    ap.add_argument("--rows", required=True, help="START-END (inclusive) or comma-separated rows")
    ap.add_argument("--columns", required=True, help="projected columns, comma-separated")
    ap.add_argument("--filter", default="", help="filter columns, comma-separated")
    ap.add_argument("--rtt-ms", type=float, default=200.0)
    ap.add_argument("--mbit", type=float, default=150.0)
    ap.add_argument("--capacity", type=float, default=None, help="requests per second (default: unlimited)")
    a = ap.parse_args()
    if "-" in a.rows:
        s_, e_ = a.rows.split("-")
        rws = np.arange(int(s_), int(e_) + 1)
    else:
        rws = [int(x) for x in a.rows.split(",")]
    m = minimal_read(a.file, rws, [c for c in a.columns.split(",") if c],
                     [c for c in a.filter.split(",") if c])
    print(json.dumps(m.as_dict()))
    print(describe(m, a.rtt_ms / 1000, mbit_to_bytes_per_s(a.mbit), a.capacity))
