"""docs/benchmarks.md and docs/img/bench-*.png from the runs of scripts/bench
(bench.py; `scripts/bench --report-from RUNS.json` writes them again from a
kept run). The report opens with the headline (per link: each contender's
first-query time and bytes per table and query, view ÷ plain, view ÷ the best
direct reader and the physical-limit model, with a plot per link), then the
raw tables, the connection profiles of the sievefs mounts, the bytes against
the reader's own reads, notes, and the method."""
from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

MOUNTS = ("view", "plain", "s3fs", "rclone")
DIRECT = ("pyarrow-s3", "duckdb-httpfs", "deltalake-s3", "polars-s3")
DIRECT_TEXT = {"pyarrow-s3": "pyarrow.dataset on pyarrow's S3FileSystem (pre_buffer)",
               "duckdb-httpfs": "DuckDB read_parquet on s3:// through its httpfs extension",
               "deltalake-s3": "deltalake (delta-rs) DeltaTable + QueryBuilder on an s3:// URI",
               "polars-s3": "polars scan_parquet on s3:// URIs (its own object store)"}
LAYOUT_TEXT = {
    "sieve": "pyarrow tuned for views (PLAIN, no dictionary, page index, pages ≤ 1 MiB or 20,000 rows)",
    "pyarrow": "pyarrow ParquetWriter, use_dictionary=False, write_page_index=True, data_page_size 1 MiB, "
               "page row cap lifted to the row group, defaults otherwise: ~1 MiB pages with an OffsetIndex",
    "pyarrow_default": "pyarrow ParquetWriter with its defaults but the codec: dictionary pages (PLAIN past "
                       "1 MiB), pages of 1 MiB or 20,000 rows, no OffsetIndex; page maps from `sievefs index`",
    "duckdb": "DuckDB COPY (FORMAT parquet, ROW_GROUP_SIZE, COMPRESSION), defaults otherwise: one page per "
              "column chunk, dictionary where DuckDB picks it, no OffsetIndex",
    "deltalake": "deltalake.write_deltalake with every default (Snappy, dictionary pages, an OffsetIndex)",
    "spark": "Spark + delta-spark with every default (parquet-java: Snappy, dictionary pages, page CRCs, "
             "an OffsetIndex)",
    "appends": "a table grown by deltalake.write_deltalake appends with its defaults, partitioned by day: "
               "many small files (Snappy, dictionary pages, an OffsetIndex)",
}

def sievefs_commit() -> str:
    """The checkout whose build/sievefs runs: HEAD, and the last commit that
    changed anything outside scripts/, tests/ and docs/ (the daemon's sources),
    each with "-dirty" when tracked files there differ from it."""
    repo = Path(__file__).resolve().parents[2]
    src = [".", ":(exclude)scripts", ":(exclude)tests", ":(exclude)docs"]

    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=10).stdout.strip()
    try:
        head = git("rev-parse", "HEAD") or "?"
        dirty = git("status", "--porcelain", "--untracked-files=no")
        srcc = git("log", "-1", "--format=%H", "--", *src) or "?"
        src_dirty = git("status", "--porcelain", "--untracked-files=no", "--", *src)
        return (f"{head}{'-dirty' if dirty else ''} (daemon sources as of {srcc}"
                f"{'-dirty' if src_dirty else ''})")
    except (OSError, subprocess.SubprocessError):
        return "?"


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _pick(doc: dict, *names):
    for n in names:
        if n in doc and doc[n] is not None:
            return doc[n]
    return None


def profile_summary(doc) -> dict:
    """The fields of a mount's .sieve/profile the report renders, read
    loosely (the document is recorded as-is elsewhere): latency_ms (p50),
    p90_ms, connect_ms, bandwidth_Bps, capacity_per_s (the best point of the
    capacity curve), suggested_in_flight, state. {} without a document."""
    if not isinstance(doc, dict) or "unreadable" in doc:
        return {}
    if isinstance(doc.get("profile"), dict):
        # MOUNTPOINT/.sieve/profile as sievefs writes it: {"state", "valid", "age_s",
        # "profile": {latency_ms, ..., capacity: [...]}}; the fields are in "profile"
        doc = {**doc["profile"], "state": _pick(doc, "state", "status")}
    out = {"state": _pick(doc, "state", "status")}
    lat = _pick(doc, "latency_ms", "latency", "latency_s")
    scale = 1000.0 if "latency_ms" not in doc and "latency_s" in doc else 1.0
    if isinstance(lat, dict):
        out["latency_ms"] = _num(_pick(lat, "p50", "median", "p50_ms"))
        out["p90_ms"] = _num(_pick(lat, "p90", "p90_ms"))
    else:
        out["latency_ms"] = _num(lat)
        out["p90_ms"] = _num(_pick(doc, "latency_p90_ms", "p90_ms", "p90"))
    for k in ("latency_ms", "p90_ms"):
        if out.get(k) is not None:
            out[k] *= scale
    if out.get("p90_ms") is None and _num(doc.get("latency_p90_s")) is not None:
        out["p90_ms"] = doc["latency_p90_s"] * 1000
    con = _pick(doc, "connect_ms", "connect", "connect_s")
    out["connect_ms"] = _num(con) * (1000 if "connect_ms" not in doc and "connect_s" in doc else 1) \
        if _num(con) is not None else None
    bw = None
    for key, mult in (("bandwidth_Bps", 1), ("bandwidth_bytes_per_s", 1), ("bandwidth_mbit", 1e6 / 8),
                      ("bandwidth_mbit_s", 1e6 / 8), ("bandwidth_mbps", 1e6 / 8)):
        if _num(doc.get(key)) is not None:
            bw = doc[key] * mult
            break
    if bw is None and isinstance(doc.get("bandwidth"), dict):
        b = doc["bandwidth"]
        if _num(_pick(b, "bytes_per_s", "Bps")) is not None:
            bw = _pick(b, "bytes_per_s", "Bps")
        elif _num(_pick(b, "mbit_per_s", "mbit", "Mbit_s")) is not None:
            bw = _pick(b, "mbit_per_s", "mbit", "Mbit_s") * 1e6 / 8
    elif bw is None and _num(doc.get("bandwidth")) is not None:
        bw = doc["bandwidth"]      # a bare number: bytes per second (as the C profile keeps it)
    out["bandwidth_Bps"] = bw
    cap = _pick(doc, "capacity", "capacity_curve")
    best = None
    pts = cap.get("points") if isinstance(cap, dict) else cap
    if isinstance(pts, list):
        for pt in pts:
            v = _num(_pick(pt, "per_s", "rps", "completions_per_s")) if isinstance(pt, dict) else None
            if v is not None and (best is None or v > best):
                best = v
    elif _num(cap) is not None:
        best = cap
    out["capacity_per_s"] = best
    out["suggested_in_flight"] = _num(_pick(doc, "suggested_in_flight", "in_flight"))
    return out


def _fmt_profile(ps: dict) -> str:
    if not ps:
        return "no profile"
    bits = []
    if ps.get("state") is not None:
        bits.append(f"state {ps['state']}")
    if ps.get("latency_ms") is not None:
        bits.append(f"latency {ps['latency_ms']:.0f} ms" + (f" (p90 {ps['p90_ms']:.0f})" if ps.get("p90_ms") else ""))
    if ps.get("connect_ms") is not None:
        bits.append(f"connect +{ps['connect_ms']:.0f} ms")
    if ps.get("bandwidth_Bps"):
        bits.append(f"bandwidth {ps['bandwidth_Bps'] * 8 / 1e6:,.0f} Mbit/s")
    if ps.get("capacity_per_s"):
        bits.append(f"capacity {ps['capacity_per_s']:,.0f} req/s")
    if ps.get("suggested_in_flight") is not None:
        bits.append(f"suggested in flight {ps['suggested_in_flight']:.0f}")
    return ", ".join(bits) or "profile without the known fields (recorded in the JSON)"




def _med(xs):
    return statistics.median(xs) if xs else float("nan")


def _ok(x) -> bool:
    return isinstance(x, (int, float)) and x == x


def query_text(name: str) -> str:
    """scattered_0_1pct -> '0.1 % scattered'; point_id -> '4 rows by id'."""
    m = re.fullmatch(r"(scattered|clustered)_(\d+)_?(\d*)pct", name)
    if m:
        return f"{m[2]}{'.' + m[3] if m[3] else ''} % {m[1]}"
    return {"full_scan": "full scan", "point_id": "4 rows by id"}.get(name, name)


def label_order(labels) -> list:
    def key(lab):
        base, _, reader = lab.partition("/")
        if base in MOUNTS:
            return (0, MOUNTS.index(base), reader)
        if lab in DIRECT:
            return (1, DIRECT.index(lab), "")
        return (2, 0, lab)
    return sorted(set(labels), key=key)


FIELDS = ("init_s", "query_s", "later_s", "bytes", "body_bytes", "requests", "cpu_s", "peak_bytes",
          "daemon_cpu_s", "daemon_peak_bytes", "kernel_bytes", "reader_bytes", "slowdown_503", "connections")


def summarize(runs: list, models: list) -> dict:
    """{(profile, table, query): {label: medians (+ n, same, reasons), "model": the limit}}"""
    groups = defaultdict(lambda: defaultdict(list))
    for r in runs:
        groups[(r["profile"], r["table"], r["query"])][r.get("label") or r["contender"]].append(r)
    out = {}
    for key, by in groups.items():
        row = {}
        for c, rs in by.items():
            row[c] = {k: _med([r[k] for r in rs if _ok(r.get(k))]) for k in FIELDS}
            row[c]["n"] = len(rs)
            row[c]["same"] = all(r["same"] for r in rs)
            row[c]["contender"], row[c]["reader"] = rs[0]["contender"], rs[0]["reader"]
            for key_ in ("chunk_reasons", "page_reasons"):
                per = [r[key_] for r in rs if isinstance(r.get(key_), dict)]
                if per:
                    row[c][key_] = {w: _med([d.get(w, 0) for d in per]) for w in sorted({w for d in per for w in d})}
            vs = [r["view_stats"] for r in rs if isinstance(r.get("view_stats"), dict)]
            if vs:
                row[c]["view_pages"] = {k: _med([v.get(k, 0) for v in vs if _num(v.get(k)) is not None] or [0])
                                        for k in ("pages_real", "pages_synthesized", "pages_partial")}
        m = next((m for m in models if (m["profile"], m["table"], m["query"]) == key), None)
        if m:
            row["model"] = dict(m, query_s=m["seconds"], n=0)
        out[key] = row
    return out


def _fmt_b(b):
    if not _ok(b):
        return "–"
    return f"{b / 1e6:,.2f} MB" if b < 1e7 else f"{b / 1e6:,.0f} MB" if b >= 1e8 else f"{b / 1e6:,.1f} MB"


def _fmt_mib(b):
    return f"{b / 2**20:,.0f} MiB" if _ok(b) else "–"


def _fmt_s(s):
    if not _ok(s):
        return "–"
    return f"{s:.3f} s" if s < 0.1 else f"{s:.2f} s" if s < 10 else f"{s:.1f} s"


def _ratio(a, b) -> str:
    return f"{a / b:.2f}" if _ok(a) and _ok(b) and b else "–"


def _pair_labels(row: dict) -> tuple[str | None, str | None]:
    """The view's and the plain path's labels of a cell (the first reader
    through the mounts when there are several)."""
    views = sorted(k for k in row if k == "view" or k.startswith("view/"))
    if not views:
        return None, None
    v = views[0]
    p = "plain" + v[len("view"):]
    return v, (p if p in row else None)


def _table_name(doc: dict, table: str) -> str:
    t = (doc.get("tables") or {}).get(table) or {}
    lay = t.get("layout") or table
    if lay == "appends":
        return f"appends ({len(t.get('files') or [])} files)"
    return lay


def _cells(doc: dict, summary: dict, profile: str) -> list:
    tables = list((doc.get("tables") or {}).keys())
    qorder = {q: i for i, q in enumerate(doc["plan"].get("queries") or [])}
    keys = [k for k in summary if k[0] == profile]
    return sorted(keys, key=lambda k: (tables.index(k[1]) if k[1] in tables else 99, qorder.get(k[2], 99), k[2]))


def headline(doc: dict, summary: dict, rel_img: Path, pngs: dict) -> list:
    lines = ["## Headline", "",
             "First query (a fresh mount, a fresh reader process): wall time and bytes the server sent, "
             "medians per cell. `view`, `plain`, `s3fs`: " + _mount_reader_text(doc) + " through a sievefs "
             "view of the query's hint, the sievefs plain path, s3fs-fuse; the others read S3 directly: "
             + "; ".join(f"`{k}` {v}" for k, v in DIRECT_TEXT.items()) + ". **view ÷ plain** and **view ÷ best "
             "direct**: time ratios, below 1 the view is faster. **limit**: the physical-limit model, dependent "
             "round trips × RTT + bytes ÷ bandwidth + requests ÷ the request-rate limit, the time and bytes "
             "no reader can beat (see Method).", ""]
    profiles = [p for p in doc["plan"]["profiles"] if any(k[0] == p for k in summary)]
    for profile in profiles:
        cells = _cells(doc, summary, profile)
        labels = label_order(k for c in cells for k in summary[c] if k != "model")
        cal = (doc.get("nominal") or {}).get(profile) or {}
        lines += [f"### {profile}" + (f": {_link_text(cal)}" if cal else ""), ""]
        lines += ["| table | query | " + " | ".join(labels) + " | view ÷ plain | view ÷ best direct | limit |",
                  "|---|---|" + "---:|" * (len(labels) + 3)]
        for key in cells:
            row = summary[key]
            vals = []
            for lab in labels:
                v = row.get(lab)
                vals.append("–" if not v else f"{_fmt_s(v['query_s'])} · {_fmt_b(v['bytes'])}"
                            + ("" if v["same"] else " **WRONG**"))
            vl, pl = _pair_labels(row)
            directs = [(row[d]["query_s"], d) for d in DIRECT if d in row and _ok(row[d]["query_s"])]
            best = min(directs) if directs else None
            vs = row[vl]["query_s"] if vl else float("nan")
            r1 = _ratio(vs, row[pl]["query_s"]) if pl else "–"
            r2 = f"{_ratio(vs, best[0])} ({best[1]})" if best and vl else "–"
            m = row.get("model")
            lim = f"{_fmt_s(m['seconds'])} · {_fmt_b(m.get('min_bytes', m['bytes']))}" if m else "–"
            lines.append(f"| {_table_name(doc, key[1])} | {query_text(key[2])} | " + " | ".join(vals) +
                         f" | {r1} | {r2} | {lim} |")
        lines.append("")
        if profile in pngs:
            lines += [f"![first-query time and bytes at {profile}]({rel_img / pngs[profile]})", ""]
    return lines


def _mount_reader_text(doc: dict) -> str:
    rs = doc["plan"].get("readers") or []
    names = {"duckdb": "DuckDB (read_parquet)", "pyarrow": "pyarrow.dataset", "deltalake": "deltalake",
             "polars": "polars"}
    if len(rs) == 1:
        return names.get(rs[0], rs[0])
    return ", ".join(names.get(r, r) for r in rs) + " (`view/READER`, …)"


def _link_text(nom: dict) -> str:
    if not nom.get("rtt_ms") and not nom.get("mbit"):
        return "loopback, nothing emulated"
    bw = f"{nom['mbit']:g} Mbit/s" if nom.get("mbit") else "unlimited bandwidth"
    jit = f" ± {nom['jitter_ms']:g}" if nom.get("jitter_ms") else ""
    return f"RTT {nom['rtt_ms']:g}{jit} ms, {bw}"


def _plots(img: Path, doc: dict, summary: dict) -> dict:
    """One figure per link: first-query time and bytes per cell and contender
    (log scales); {profile: file name}."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    img.mkdir(parents=True, exist_ok=True)
    files = {}
    for profile in doc["plan"]["profiles"]:
        cells = _cells(doc, summary, profile)
        if not cells:
            continue
        labels = label_order(k for c in cells for k in summary[c] if k != "model") + ["model"]
        fig, axes = plt.subplots(2, 1, figsize=(max(8, 1.1 * len(cells) + 3), 7.5), sharex=True)
        w = 0.85 / len(labels)
        cmap = plt.get_cmap("tab10")
        for ax, (metric, title, scale) in zip(axes, (("query_s", "first query, s", 1),
                                                      ("bytes", "bytes from S3, MB", 1e6))):
            for i, lab in enumerate(labels):
                key = "min_bytes" if (lab, metric) == ("model", "bytes") else metric
                vals = [summary[c].get(lab, {}).get(key, float("nan")) / scale for c in cells]
                kw = {"color": "0.75", "hatch": "//", "edgecolor": "0.4"} if lab == "model" else {"color": cmap(i % 10)}
                ax.bar([x + i * w for x in range(len(cells))], vals, w,
                       label="limit (model)" if lab == "model" else lab, **kw)
            ax.set_yscale("log")
            ax.set_ylabel(title)
            ax.grid(axis="y", alpha=0.3)
        axes[0].legend(fontsize=7, ncol=min(len(labels), 5), loc="upper left")
        axes[1].set_xticks([x + w * (len(labels) - 1) / 2 for x in range(len(cells))])
        axes[1].set_xticklabels([f"{_table_name(doc, c[1])}\n{query_text(c[2])}" for c in cells], fontsize=7,
                                rotation=30, ha="right")
        axes[0].set_title(f"link {profile}")
        fig.tight_layout()
        name = f"bench-{profile}.png"
        fig.savefig(img / name, dpi=100)
        plt.close(fig)
        files[profile] = name
    for old in img.glob("bench-*.png"):  # plots of an earlier plan would outlive their link
        if old.name not in files.values():
            old.unlink()
    return files


def _raw_lines(doc: dict, summary: dict) -> list:
    lines = ["## Results per link, table and query", "",
             "Medians of the timed runs (n each). init = mount (and hint) until the mount answers and its "
             "warmup is done; first query = the reader's time in its fresh process, opening the table "
             "included; later query = the same query again in that process on the same mount; bytes and "
             "requests = the first query's traffic as the server counted it (responses with their headers).",
             ""]
    for profile in doc["plan"]["profiles"]:
        for key in _cells(doc, summary, profile):
            row = summary[key]
            t = (doc.get("tables") or {}).get(key[1], {})
            lines += [f"### {profile} — {key[1]} — {query_text(key[2])}", "",
                      "| contender | n | init s | first query s | later query s | bytes from S3 | requests | "
                      "503s | reader CPU s | reader peak | daemon CPU s | daemon peak | same result |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for lab in label_order(k for k in row if k != "model"):
                v = row[lab]
                daemon = (f"{v['daemon_cpu_s']:.2f} | {_fmt_mib(v['daemon_peak_bytes'])}"
                          if _ok(v["daemon_cpu_s"]) else "– | –")
                later = f"{v['later_s']:.2f}" if _ok(v["later_s"]) else "–"
                slow = f"{v['slowdown_503']:,.0f}" if _ok(v["slowdown_503"]) else "–"
                lines.append(f"| {lab} | {v['n']} | {v['init_s']:.2f} | {v['query_s']:.2f} | {later} | "
                             f"{_fmt_b(v['bytes'])} | {v['requests']:,.0f} | {slow} | {v['cpu_s']:.2f} | "
                             f"{_fmt_mib(v['peak_bytes'])} | {daemon} | {'yes' if v['same'] else '**NO**'} |")
            if "model" in row:
                m = row["model"]
                lines.append(f"| limit (model) | – | – | {m['seconds']:.2f} | – | {_fmt_b(m.get('min_bytes', m['bytes']))} | "
                             f"{m.get('requests', 0):,} in {m['rounds']} rounds | – | – | – | – | – | – |")
                cap = "unlimited" if not m.get("capacity_per_s") else f"{m['capacity_per_s']:,.0f} req/s"
                lines += ["", f"Limit {m['seconds']:.2f} s = {m['rounds']} rounds × RTT ({m['latency_s']:.2f} s) + "
                          f"{_fmt_b(m['bytes'])} ÷ bandwidth ({m['transfer_s']:.2f} s: the {_fmt_b(m.get('min_bytes', m['bytes']))} "
                          f"no reader can avoid and {_fmt_b(m.get('gap_bytes', 0))} of gaps read through where that is "
                          f"cheaper than another request) + {m.get('requests', 0):,} requests ÷ capacity "
                          f"({m.get('requests_s', 0):.2f} s; capacity {cap}: {m.get('capacity_source', '?')})."
                          + (f" Files: {m['files']} of {len(t.get('files') or [])} (the others ruled out by "
                             "their statistics)." if m.get("files") is not None and t.get("files")
                             and m["files"] != len(t["files"]) else "")]
            vl, _ = _pair_labels(row)
            v = row.get(vl) if vl else None
            if v and ("chunk_reasons" in v or "page_reasons" in v or "view_pages" in v):
                vp = v.get("view_pages") or {}
                lines += ["", f"View decisions (medians per run): chunks: {_reasons(v.get('chunk_reasons'))}; "
                          f"pages: {_reasons(v.get('page_reasons'))}; pages real {vp.get('pages_real', 0):,.0f}, "
                          f"synthesized {vp.get('pages_synthesized', 0):,.0f}, partial "
                          f"{vp.get('pages_partial', 0):,.0f}."]
            lines.append("")
    return lines


def _reasons(d: dict | None) -> str:
    if not d:
        return "–"
    return ", ".join(f"{w} {v:,.0f}" for w, v in sorted(d.items(), key=lambda kv: -kv[1]))


def _profile_lines(doc: dict) -> list:
    """The connection profile the sievefs mounts measured (their warmup,
    `.sieve/profile` at the end of each run), summarised per link; every
    document is in the --json output."""
    runs = [r for r in doc["runs"] if r["contender"] in ("view", "plain")]
    lines = ["## Connection profile of each sievefs mount", ""]
    if not runs:
        return lines + ["No sievefs run.", ""]
    lines += ["Medians (min–max) over the mounts of each link of what their warmup measured "
              "(`MOUNTPOINT/.sieve/profile`).", "",
              "| link | mounts | without a profile | init s | latency ms | p90 ms | connect +ms | bandwidth Mbit/s | "
              "best capacity req/s | suggested in flight |", "|---|---|---|---|---|---|---|---|---|---|"]
    for profile in doc["plan"]["profiles"]:
        rs = [r for r in runs if r["profile"] == profile]
        if not rs:
            continue
        ps = [profile_summary(r.get("sieve_profile")) for r in rs]
        ps = [p for p in ps if p.get("latency_ms") is not None]

        def col(key, scale=1.0, fmt="{:,.0f}"):
            xs = [p[key] * scale for p in ps if p.get(key) is not None]
            if not xs:
                return "–"
            return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"
        inits = [r["init_s"] for r in rs]
        lines.append(f"| {profile} | {len(rs)} | {len(rs) - len(ps)} | {statistics.median(inits):.2f} | "
                     f"{col('latency_ms', fmt='{:,.1f}')} | {col('p90_ms', fmt='{:,.1f}')} | "
                     f"{col('connect_ms', fmt='{:,.1f}')} | {col('bandwidth_Bps', 8 / 1e6)} | "
                     f"{col('capacity_per_s')} | {col('suggested_in_flight')} |")
    return lines + [""]


def _reads_lines(doc: dict, summary: dict) -> list:
    """Bytes fetched against what the reader's own reads need (issue 12's
    goal 1: at most 1.1x) and against what the kernel asked the mount for."""
    rows = []
    for profile in doc["plan"]["profiles"]:
        for key in _cells(doc, summary, profile):
            row = summary[key]
            for lab in label_order(k for k in row if k != "model"):
                v = row[lab]
                if v["contender"] not in ("plain", "view") or not _ok(v.get("reader_bytes")):
                    continue
                rb, kb, fb = v["reader_bytes"], v.get("kernel_bytes", float("nan")), v["bytes"]
                ratios = [f"{fb / x:.2f}" if _ok(x) and x else "–" for x in (rb, kb)]
                rows.append(f"| {profile} | {key[1]} | {query_text(key[2])} | {lab} | {_fmt_b(rb)} | {_fmt_b(kb)} | "
                            f"{_fmt_b(fb)} | {ratios[0]} | {ratios[1]} |")
    if not rows:
        return []
    return ["## Bytes fetched against the reader's own reads", "",
            "The reader's reads: what the same reader reads of the local files in the validation pass "
            "(strace, `scripts/lib/strace_reads.py`). The kernel's asks: what the kernel read from the mount "
            "(`fuse_read_bytes` of `.sieve/stats`, its readahead included): a mount must serve whatever the "
            "kernel asks, so for readers that read a page at a time that, not the reader's reads, is the "
            "plain path's floor. Fetched: bytes the server sent, HTTP headers included. Medians per cell.", "",
            "| link | table | query | contender | reader's reads | kernel's asks | fetched | "
            "fetched ÷ reader's | fetched ÷ kernel's |",
            "|---|---|---|---|---|---|---|---|---|"] + rows + [""]


def _probe_lines(probe: dict | None) -> list:
    lines = ["", "## Scheduler probe", ""]
    probe = probe or {"note": "not run"}
    if probe.get("source"):
        lines.append(f"From `{probe['source']}`.")
        lines.append("")
    if probe.get("markdown"):
        lines += [probe["markdown"], ""]
    elif isinstance(probe.get("runs"), list) and probe["runs"]:
        rows = probe["runs"]
        if all(isinstance(r, dict) and {"client", "seconds"} <= set(r) for r in rows):
            groups = defaultdict(lambda: defaultdict(list))
            for r in rows:
                groups[(r.get("profile", "?"), r.get("n", "?"), r.get("k", "?"))][r["client"]].append(r)
            clients = sorted({r["client"] for r in rows}, key=lambda c: (c != "curl", c))
            lines += ["| profile | N | K | " + " | ".join(f"{c} req/s" for c in clients) +
                      " | sievefs time / reference time |",
                      "|---|---:|---:|" + "---:|" * (len(clients) + 1)]
            for (prof, n, k), by in sorted(groups.items(), key=str):
                rps = [(_med([x["rps"] for x in by[c] if _num(x.get("rps")) is not None])
                        if c in by else float("nan")) for c in clients]
                ratio = (_med([x["seconds"] for x in by["sievefs"]]) / _med([x["seconds"] for x in by["curl"]])
                         if "sievefs" in by and "curl" in by else float("nan"))
                lines.append(f"| {prof} | {n} | {k} | " + " | ".join(f"{v:,.0f}" for v in rps) +
                             f" | {ratio:.2f} |")
        else:
            import json
            lines += ["```json", json.dumps(rows, indent=1)[:20000], "```"]
        lines.append("")
    if probe.get("note"):
        lines += [f"Scheduler probe {probe['note']}", ""] if not probe.get("source") else [probe["note"], ""]
    return lines




def _header_lines(doc: dict, n_runs: int) -> list:
    plan = doc["plan"]
    host = doc.get("host") or {}
    lines = ["# Benchmarks", "",
             "Written by `scripts/bench` (do not edit by hand): the headline first, then the raw tables, "
             "then the [method](#method).", "",
             f"- sievefs measured: commit `{doc.get('commit') or sievefs_commit()}` (the checkout whose "
             "`build/sievefs` ran)",
             f"- machine: {host.get('machine', platform.machine())}, {host.get('cpus', os.cpu_count())} CPUs, "
             f"Linux {host.get('kernel', platform.release())}"
             + "".join(f"; {n}" for n in (plan.get("notes") or [])),
             f"- S3 server: {doc.get('server') or '?'}",
             f"- versions: {doc.get('versions') or '?'}",
             f"- plan: {_plan_text(plan)}; {n_runs} timed runs in {doc.get('elapsed', 0) / 60:.1f} min "
             "(the whole `scripts/bench` run: data, index, validation, calibration and timed runs)"]
    for p, c in (doc.get("calibrations") or {}).items():
        lines.append(f"- {c}")
    for name, t in (doc.get("tables") or {}).items():
        files = t.get("files") or []
        rgs = sum(f.get("row_groups", 0) for f in files)
        sizes = [f["bytes"] for f in files] or [0]
        extra = (f", partitioned by {', '.join(t['partition_columns'])}, {t.get('appends')} appends"
                 if t.get("partition_columns") else "")
        lines.append(f"- table `{name}`: {t['rows']:,} rows, {len(files)} files "
                     f"({_fmt_b(min(sizes))}–{_fmt_b(max(sizes))}), {rgs} row groups, {t['bytes'] / 1e6:,.1f} MB, "
                     f"{t['width']} columns, codec {t['codec']}{extra}; layout {t.get('layout', 'sieve')}: "
                     f"{LAYOUT_TEXT.get(t.get('layout', 'sieve'), '')}")
    return lines + [""]


def _plan_text(plan: dict) -> str:
    bits = [f"links {', '.join(plan['profiles'])}", f"{plan['pairs']} alternating pairs",
            f"queries {', '.join(query_text(q) for q in plan.get('queries') or ['all'])}",
            f"contenders {', '.join(plan['contenders'])}", f"through the mounts {', '.join(plan.get('readers') or [])}",
            f"direct {', '.join(plan.get('direct_readers') or [])}", f"later queries {plan.get('later', 0)}"]
    if plan.get("profile_layouts"):
        bits.append("tables per link: " + "; ".join(f"{p}: {', '.join(v)}" for p, v in plan["profile_layouts"].items()))
    if plan.get("tls"):
        bits.append("TLS")
    if plan.get("sievefs_args"):
        bits.append(f"sievefs mounted with `{plan['sievefs_args']}`")
    return "; ".join(bits)


def _notes_lines(doc: dict) -> list:
    notes = list(doc.get("notes") or [])
    errors = list(doc.get("errors") or [])
    if not notes and not errors:
        return []
    return (["## Notes and failures", ""] + [f"- {n}" for n in notes] +
            [f"- run failed: {e}" for e in errors] + [""])


def _method_lines(doc: dict) -> list:
    plan = doc["plan"]
    s3link = plan.get("server", "s3link") == "s3link"
    ap = plan.get("appends") or {}
    server = (
        "- S3: `tests/tools/s3link` (Go; `--server s3link`, the default), one process per link profile on "
        "127.0.0.1 serving the generated tables (a directory of symbolic links to them) over the S3 API, "
        "signatures not checked. It emulates the link inside itself: every response waits one RTT after its "
        "request arrived (`wan`: 200 ms drawn uniformly within ± 20 ms per request; `region`: 25 ms; `lan`: "
        "nothing), all responses share one downstream bandwidth in 16 KiB turns (`wan` 150 Mbit/s, `region` "
        "1 Gbit/s), a new connection costs one more RTT (two with TLS); and S3's per-prefix request-rate "
        "limit, 5,500 GET/HEAD per second, 503 SlowDown beyond. Its counters (`GET /__s3link/stats`), reset "
        "(`POST /__s3link/reset`) once a contender is set up (after a sievefs mount's warmup, s3fs's first "
        "listing), give each run's bytes (responses, headers included) and requests. Every contender, direct "
        "readers included, reaches the same endpoint"
        + (" over HTTPS (`--tls`: HTTP/1.1, a self-signed certificate generated at start, given to sievefs "
           "as `AWS_CA_BUNDLE`, s3fs as `CURL_CA_BUNDLE`, rclone as `--ca-cert`, DuckDB as `ca_cert_file`, "
           "pyarrow as `tls_ca_file_path`; deltalake and polars skip verification "
           "(`allow_invalid_certificates`) because their rustls refuses the certificate, a CA used as the "
           "server's own)." if plan.get("tls") else " over plain HTTP (`--tls` for HTTPS).")
        if s3link else
        f"- S3: {plan.get('server')} on 127.0.0.1 behind the Python link emulator `scripts/lib/wanproxy.py` "
        "(per-chunk one-way delay RTT/2 ± jitter, one shared pacer per direction, one RTT per new "
        "connection), which also counts the bytes and requests (`--server moto|versitygw`; such servers "
        "carry 500–1,000 small GETs/s here, far below S3, which is why s3link is the default).")
    lines = ["## Method", "", server,
             "- Data: TPC-H lineitem from `tpchgen-cli`, widened deterministically to 90 (or 416) columns "
             "(`scripts/lib/bench_data.py`), each table a Delta table over Parquet files written by a real "
             "writer: `pyarrow` = pyarrow's ParquetWriter with `use_dictionary=False, write_page_index=True, "
             "data_page_size=1 MiB`, its 20,000-row page cap lifted to the 100,000-row group (the layout with "
             "an OffsetIndex); `pyarrow_default` = pyarrow's defaults but the codec (dictionary pages, pages "
             "of 1 MiB or 20,000 rows, no OffsetIndex; page maps built by `sievefs index --to-s3` after the "
             "upload, not timed); `duckdb` = DuckDB's `COPY … (FORMAT parquet, ROW_GROUP_SIZE 100000)` (one page "
             "per column chunk, no OffsetIndex); `deltalake` = `deltalake.write_deltalake` with every default "
             "(Snappy, dictionary pages, an OffsetIndex); `spark` = Spark 4.2 + delta-spark with every default "
             "(Snappy, dictionary pages, page CRCs, an OffsetIndex). The uncompressed layouts are one table "
             "each per codec; the Delta writers keep their Snappy. "
             f"`appends` = a table grown by appends (`bench_data.generate_appends`): the 16 lineitem columns, "
             f"rownum and a `day` partition (18 columns), written by {ap.get('appends', 10)} "
             f"`deltalake.write_deltalake(mode=\"append\", partition_by=[\"day\"])` calls with every other "
             f"default, each adding {ap.get('days', 30)} days, so one small file per day and append "
             f"(TPC-H SF {ap.get('scale', 0.5):g}); its row ids grow with the day, so its log's file "
             "statistics locate an id.",
             "- Queries (`bench_data.queries`): `sel_hash < N` (0.1 % scattered: rows spread evenly over every "
             "row group and page) and `rownum BETWEEN a AND b` (0.1 % clustered), projecting 70 columns; the "
             "full scan, exact aggregates over 6 columns of every row (the empty hint); on the appends table "
             "`point_id`: `l_orderkey = K`, the 4 lines of one order, projecting 6 columns. DuckDB reads "
             "`read_parquet('TABLE/*.parquet')` on the writer tables and `read_parquet([...])` over the "
             "appends table's active files from its log; pyarrow `pyarrow.dataset` (directory or the same "
             "file list) with `ParquetFragmentScanOptions(pre_buffer=True)`; polars `scan_parquet` (glob or "
             "file list) and the query in `pl.SQLContext`; deltalake `DeltaTable` + `QueryBuilder` (its log, "
             "file pruning by the log's statistics, deletion vectors). Every reader runs in a fresh process "
             "(`scripts/lib/bench_reader.py`; DuckDB with 2 threads, the others with their defaults).",
             "- Contenders (`scripts/lib/bench_contenders.py`): through mounts, " + _mount_reader_text(doc) +
             " reads a sievefs view made from the query's hint (`where` + projected `columns`) with sievefs's "
             "defaults, the sievefs plain path, s3fs-fuse (no cache) and, on request, rclone mount "
             "(`--vfs-cache-mode full`); each run mounts afresh. Each sievefs mount measures the link first "
             "(`--warmup automatic`, counted in init, not in the query) and a view plans with that profile "
             "([cost_model.md](cost_model.md)). Reading S3 directly: pyarrow's `S3FileSystem`, DuckDB's "
             "httpfs extension, deltalake and polars with `s3://` URIs (endpoint, path-style, any keys). "
             "DuckDB 2.0.1 has no httpfs package on PyPI (and extensions cannot be downloaded at run time "
             "here), so the direct DuckDB runs use the newest DuckDB that has one, installed apart "
             "(`scripts/lib/bench_duckdb_httpfs.py`" + _httpfs_text(doc) + "), its extension loaded by path; "
             "its results are checked against that same DuckDB on the local files.",
             "- Before anything is timed, every contender's result is compared with the same reader on the "
             "local files (a validation pass on `lan`), and the local result's row count with the generator's; "
             "a direct reader that fails there is left out of that cell (Notes)"
             + ("; at `lan` that pass is the first timed pair" if plan.get("validation_pair") else "") +
             ". Timed runs alternate the "
             "contender order (forward, backward, …) for each link, table and query; tables show medians of the "
             "pairs. init = mount (and hint) until the mount answers and its warmup finished; first query = "
             "the reader's query time in its process (opening the table included); later query = the same "
             "query again in that process on the same mount (sievefs contenders, `--later`"
             + (f"; none after a first query over {plan['later_max_s']:g} s" if plan.get("later_max_s") else "") +
             "); reader CPU and "
             "peak = the reader process (with its S3 client for direct runs); daemon = the FUSE daemon.",
             "- Limit (`scripts/lib/physical_model.py`): a lower bound, dependent rounds × RTT + bytes ÷ "
             "bandwidth + requests ÷ capacity. Bytes and requests: the byte ranges a reader that knows the "
             "layout, the selection and the Delta log's statistics cannot avoid (files and row groups whose "
             "statistics rule the predicate out left out; footer, page index, filter chunks, the selected "
             "values of locatable pages, other pages with a selected row whole; pages of chunks without an "
             "OffsetIndex located by their headers, the map `sievefs index` builds), ranges closer than bandwidth ÷ capacity merged; rounds footer → filter → values (the Delta "
             "log and listings not counted). RTT and bandwidth are the link's nominal values; capacity "
             + ("s3link's per-prefix GET rate (5,500/s, the table taken as one prefix)." if s3link else
                "the median best point of the sievefs mounts' measured capacity curves."),
             "- Quick mode (`scripts/bench --quick`, the default): " + _quick_text(doc),
             "- Full mode (`scripts/bench --full`): TPC-H SF10 (59,986,052 rows, files of about 512 MiB), 90 and "
             "416 columns, uncompressed and Zstd, every writer layout, the `_dv` variants (Spark deletion "
             "vectors, read by deltalake), the appends table, links `wan`, `region` and `lan`, every query, "
             "every reader through every mount and directly, rclone, 3 pairs: weeks of running and over a "
             "terabyte of disk; `--widths 90 --codecs none --profiles region --queries ...` or `--scale 1` run "
             "a part of it. `--data-dir` caches the generated tables between runs; `--json` keeps every run, "
             "`--report-from` rewrites the report from it.",
             "- Timings on a 2-core machine shared with other work are noisy: compare within a cell, and "
             "treat differences under about 20 % as noise.", ""]
    return lines


def _httpfs_text(doc: dict) -> str:
    h = doc.get("httpfs")
    if h:
        return f": DuckDB {h['duckdb']} and {h['package']}"
    m = re.search(r"DuckDB (\S+) with httpfs from (\S+)", doc.get("versions") or "")
    return f": DuckDB {m[1]} and {m[2]}" if m else ""


def _quick_text(doc: dict) -> str:
    """bench.py's QUICK, in words (the header's plan line says what a run ran)."""
    return ("TPC-H SF 0.02 (120,515 rows: per writer table one file of a 100,000-row and a 20,515-row group "
            "(the Spark table: two files), 90 columns), the five writer layouts, and the appends table at SF 0.2 "
            "(1.2 M rows, 10 appends of 10 days: 100 files of about 0.6 MB; `--appends 0.6,10,30` gives the 300 "
            "files of the issue's reference table); at `lan` every table, at `region` and `wan` the `pyarrow` "
            "(an OffsetIndex), `duckdb` (one page per chunk, no OffsetIndex) and appends tables; queries 0.1 % scattered, 0.1 % "
            "clustered, the full scan and (appends table) the 4-row point query; DuckDB through `view`, `plain` "
            "and `s3fs`, and the four direct readers, except s3fs on the appends table at `wan` (it takes about "
            "1.2 s per small file there: a HEAD or more and a listing per file, one after the other, so 2 "
            "minutes a run); 2 alternating pairs (at `lan` the validation pass and one more), one later query "
            "(none after a first query over 10 s). " + QUICK_BUDGET + " What it leaves out to stay there: the "
            "other writer layouts at `wan` and `region`, the other readers through the mounts (`--readers`), "
            "rclone (`--contenders …,rclone`), the other queries (`--queries`), the `_dv` tables (`--dv`), the "
            "300-file appends table.")


# What the quick plan costs here: bench.py's QUICK (its profile_layouts) is sized to it.
QUICK_BUDGET = "About 25 minutes on this 2-core machine."


def write(out: Path, img: Path, doc: dict) -> None:
    runs, models = doc["runs"], doc["models"]
    summary = summarize(runs, models)
    pngs = _plots(img, doc, summary)
    # Links relative to the report: a second report keeps its plots in a
    # folder of its own (the plots of an earlier plan are cleared per folder).
    rel_img = Path(os.path.relpath(Path(img).resolve(), Path(out).resolve().parent))
    lines = _header_lines(doc, len(runs))
    lines += headline(doc, summary, rel_img, pngs)
    lines += _notes_lines(doc)
    lines += _raw_lines(doc, summary)
    lines += _profile_lines(doc)
    lines += _reads_lines(doc, summary)
    lines += _probe_lines(doc.get("probe"))
    lines += _method_lines(doc)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
