#!/usr/bin/env python3
"""Where a plain-path query's fetched bytes went, from a sievefs trace log
(`scripts/bench --trace DIR`, or any `sievefs mount -f --log-level trace`).

    .venv/bin/python scripts/lib/trace_waste.py LOG TABLE_DIR [--columns N]

For each Parquet object the log reads (matched by file name to the local
copy of the table in TABLE_DIR, for its column chunks): the bytes the kernel
asked for (the union of its reads), the bytes fetched by GETs tagged demand
and prefetch, and what was fetched but never read, split by tag and by the
column chunk it fell in (row group, column), largest first. "tail" is
everything outside the column chunks (footer, page index)."""
from __future__ import annotations

import argparse
import bisect
import collections
import re
from pathlib import Path

READ = re.compile(r"trace: read (\S+) offset (\d+) size (\d+)")
GET = re.compile(r"trace: GET (\S+) bytes (\d+)-(\d+) \((\w+)\)")


def chunk_spans(path: Path) -> list[tuple[int, int, str]]:
    """(start, end, "rRGcCOL") of every column chunk, sorted."""
    import pyarrow.parquet as pq
    md = pq.ParquetFile(path).metadata
    out = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            start = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
            if start is None:
                start = col.data_page_offset
            out.append((start, start + col.total_compressed_size, f"r{g}c{c}"))
    return sorted(out)


def union(ranges: list[tuple[int, int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def minus(a: int, b: int, covered: list[list[int]], starts: list[int]):
    """Sub-ranges of [a, b) outside the sorted, disjoint covered ranges."""
    i = max(bisect.bisect_right(starts, a) - 1, 0)
    x = a
    while x < b:
        while i < len(covered) and covered[i][1] <= x:
            i += 1
        if i < len(covered) and covered[i][0] <= x:
            x = min(b, covered[i][1])
            continue
        e = min(b, covered[i][0]) if i < len(covered) else b
        yield x, e
        x = e


def report(log: Path, table: Path, top: int) -> None:
    reads = collections.defaultdict(list)
    gets = collections.defaultdict(list)
    for line in log.open(errors="replace"):
        m = READ.search(line)
        if m:
            a = int(m.group(2))
            reads[m.group(1)].append((a, a + int(m.group(3))))
            continue
        m = GET.search(line)
        if m:
            gets[m.group(1)].append((int(m.group(2)), int(m.group(3)) + 1, m.group(4)))
    files = {p.name: p for p in table.rglob("*.parquet")}
    for key in sorted(set(reads) | set(gets)):
        local = files.get(key.rsplit("/", 1)[-1])
        if local is None:
            continue
        spans = chunk_spans(local)
        span_starts = [s for s, _, _ in spans]

        def chunk_of(x: int) -> tuple[str, int]:
            i = bisect.bisect_right(span_starts, x) - 1
            if i >= 0 and x < spans[i][1]:
                return spans[i][2], spans[i][1]
            nxt = spans[i + 1][0] if i + 1 < len(spans) else 1 << 62
            return "tail", nxt

        size = local.stat().st_size  # reads past the end get nothing
        covered = union([(a, min(b, size)) for a, b in reads[key] if a < size])
        starts = [c[0] for c in covered]
        fetched = collections.Counter()
        unread = collections.Counter()
        for a, b, tag in gets[key]:
            fetched[tag] += b - a
            for x, y in minus(a, b, covered, starts):
                while x < y:
                    name, end = chunk_of(x)
                    e = min(y, end)
                    unread[(name, tag)] += e - x
                    x = e
        asked = sum(b - a for a, b in covered)
        total = sum(fetched.values())
        by_tag = collections.Counter()
        for (_, tag), n in unread.items():
            by_tag[tag] += n
        print(f"{key}: kernel asked {asked:,} B; fetched {total:,} B in {len(gets[key])} GETs "
              f"({', '.join(f'{t} {n:,}' for t, n in sorted(fetched.items()))}); never read "
              f"{sum(by_tag.values()):,} B ({', '.join(f'{t} {n:,}' for t, n in sorted(by_tag.items()))})")
        for (name, tag), n in unread.most_common(top):
            print(f"  {name:10} {tag:9} {n:>11,}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path)
    ap.add_argument("table", type=Path, help="the local copy of the table (its Parquet files)")
    ap.add_argument("--columns", type=int, default=12, help="chunks listed per object (default 12)")
    a = ap.parse_args()
    report(a.log, a.table, a.columns)


if __name__ == "__main__":
    main()
