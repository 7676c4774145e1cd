"""docs/benchmarks.md and docs/img/*.png from the runs of scripts/bench."""
from __future__ import annotations

import os
import platform
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

ORDER = ("view", "plain", "s3fs", "rclone", "direct", "model")
LAYOUT_TEXT = {
    "sieve": "pyarrow tuned for views (PLAIN, no dictionary, page index, pages ≤ 1 MiB or 20,000 rows)",
    "pyarrow": "pyarrow ParquetWriter, use_dictionary=False, write_page_index=True, data_page_size 1 MiB, "
               "page row cap lifted to the row group, defaults otherwise: ~1 MiB pages with an OffsetIndex",
    "pyarrow_default": "pyarrow ParquetWriter with its defaults but the codec: dictionary pages (PLAIN past "
                       "1 MiB), pages of 1 MiB or 20,000 rows, no OffsetIndex; page maps from `sievefs index`",
    "duckdb": "DuckDB COPY (FORMAT parquet, ROW_GROUP_SIZE, COMPRESSION), defaults otherwise: one page per "
              "column chunk, dictionary where DuckDB picks it, no OffsetIndex",
}


def _versions() -> str:
    out = []
    sievefs = os.environ.get("SIEVEFS_BIN", "build/sievefs")  # the binary the runs used (bench_mount.BIN)
    for name, argv in (("sievefs", [sievefs, "--version"]), ("s3fs", ["s3fs", "--version"]),
                       ("rclone", ["rclone", "version"])):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=10,
                               cwd=Path(__file__).resolve().parents[2])
            out.append(f"{name} {(r.stdout or r.stderr).splitlines()[0].split(' ')[-1 if name == 'sievefs' else 1]}"
                       if name != "s3fs" else "s3fs " + (r.stdout.split()[6] if len(r.stdout.split()) > 6 else "?"))
        except (OSError, IndexError, subprocess.SubprocessError):
            out.append(f"{name} ?")
    import deltalake
    import duckdb
    import moto
    import pyarrow
    out += [f"duckdb {duckdb.__version__}", f"pyarrow {pyarrow.__version__}",
            f"deltalake {deltalake.__version__}", f"moto {moto.__version__}"]
    return ", ".join(out)


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


def summarize(runs: list, models: list) -> dict:
    """{(profile, table, query, reader): {contender: medians}}"""
    groups = defaultdict(lambda: defaultdict(list))
    for r in runs:
        groups[(r["profile"], r["table"], r["query"], r["reader"])][r["contender"]].append(r)
    out = {}
    for key, by in groups.items():
        row = {}
        for c, rs in by.items():
            row[c] = {k: _med([r[k] for r in rs if r.get(k) is not None])
                      for k in ("init_s", "query_s", "later_s", "bytes", "requests", "cpu_s", "peak_bytes",
                                "daemon_cpu_s", "daemon_peak_bytes", "kernel_bytes", "reader_bytes")}
            row[c]["n"] = len(rs)
            row[c]["same"] = all(r["same"] for r in rs)
            for key_ in ("chunk_reasons", "page_reasons"):
                per = [r[key_] for r in rs if isinstance(r.get(key_), dict)]
                if per:
                    row[c][key_] = {w: _med([d.get(w, 0) for d in per]) for w in sorted({w for d in per for w in d})}
            vs = [r["view_stats"] for r in rs if isinstance(r.get("view_stats"), dict)]
            if vs:
                row[c]["view_pages"] = {k: _med([v.get(k, 0) for v in vs if _num(v.get(k)) is not None] or [0])
                                        for k in ("pages_real", "pages_synthesized", "pages_partial")}
        m = next((m for m in models if (m["profile"], m["table"], m["query"]) == key[:3]), None)
        if m:
            row["model"] = dict(m, query_s=m["seconds"], n=0)
        out[key] = row
    return out


def _fmt_b(b):
    return f"{b / 1e6:,.1f} MB" if b == b else "–"


def _fmt_mib(b):
    return f"{b / 2**20:,.0f} MiB" if b == b else "–"


def _plots(img: Path, summary: dict) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    img.mkdir(parents=True, exist_ok=True)
    files = []
    by_panel = defaultdict(dict)
    for (profile, table, query, reader), row in summary.items():
        by_panel[(profile, table, reader)][query] = row
    for (profile, table, reader), queries in sorted(by_panel.items()):
        for metric, label, scale in (("query_s", "first query, seconds", 1), ("bytes", "bytes from S3, MB", 1e6)):
            fig, ax = plt.subplots(figsize=(8, 3.6))
            qs = sorted(queries)
            cs = [c for c in ORDER if any(c in queries[q] for q in qs)]
            w = 0.8 / max(1, len(cs))
            for i, c in enumerate(cs):
                vals = [queries[q].get(c, {}).get(metric, float("nan")) / scale for q in qs]
                ax.bar([x + i * w for x in range(len(qs))], vals, w, label=c)
            ax.set_xticks([x + w * (len(cs) - 1) / 2 for x in range(len(qs))])
            ax.set_xticklabels(qs, fontsize=8)
            ax.set_ylabel(label)
            ax.set_yscale("log")
            ax.set_title(f"{table}, {reader}, link {profile}")
            ax.legend(fontsize=7, ncol=len(cs))
            fig.tight_layout()
            name = f"bench-{profile}-{table}-{reader}-{metric.replace('_s', '')}.png"
            fig.savefig(img / name, dpi=110)
            plt.close(fig)
            files.append(name)
    for old in img.glob("bench-*.png"):  # plots of an earlier plan would outlive their table
        if old.name not in files:
            old.unlink()
    return files


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


def _profile_lines(runs: list) -> list:
    """The connection profile each sievefs mount exposed (.sieve/profile at the
    end of its run; the whole documents are in the --json output)."""
    sieve = [r for r in runs if r["contender"] in ("view", "plain")]
    lines = ["", "## Connection profile of each sievefs mount", ""]
    if not sieve:
        return lines + ["No sievefs run.", ""]
    if all(r.get("sieve_profile") is None for r in sieve):
        return lines + [f"no profile: none of the {len(sieve)} sievefs mounts had `.sieve/profile` (no link "
                        "measured, e.g. `--warmup none`: its views then read no page partially; see the Method "
                        "section).", ""]
    lines += ["| link | table | query | reader | contender | pair | init s | profile at start | profile at end |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in sieve:
        lines.append(f"| {r['profile']} | {r['table']} | {r['query']} | {r['reader']} | {r['contender']} | {r['pair'] + 1} | "
                     f"{r['init_s']:.2f} | {_fmt_profile(profile_summary(r.get('sieve_profile_at_start')))} | "
                     f"{_fmt_profile(profile_summary(r.get('sieve_profile')))} |")
    return lines + [""]


def _reasons(d: dict | None) -> str:
    if not d:
        return "–"
    return ", ".join(f"{w} {v:,.0f}" for w, v in sorted(d.items(), key=lambda kv: -kv[1]))


def _reads_lines(summary: dict) -> list:
    """Bytes fetched against what the reader's own reads need (issue 12's
    goal 1: at most 1.1x) and against what the kernel asked the mount for."""
    rows = []
    for (profile, table, query, reader), row in sorted(summary.items()):
        for c in ("plain", "view"):
            v = row.get(c)
            if not v or v.get("reader_bytes") != v.get("reader_bytes"):
                continue
            rb, kb, fb = v["reader_bytes"], v.get("kernel_bytes", float("nan")), v["bytes"]
            ratios = [f"{fb / x:.2f}" if x == x and x else "–" for x in (rb, kb)]
            rows.append(f"| {profile} | {table} | {query} | {reader} | {c} | {_fmt_b(rb)} | {_fmt_b(kb)} | "
                        f"{_fmt_b(fb)} | {ratios[0]} | {ratios[1]} |")
    if not rows:
        return []
    return ["", "## Bytes fetched against the reader's own reads", "",
            "The reader's reads: what the same reader reads of the local files in the validation pass "
            "(strace, `scripts/lib/strace_reads.py`). The kernel's asks: what the kernel read from the mount "
            "(`fuse_read_bytes` of `.sieve/stats`, its readahead included): a mount must serve whatever the "
            "kernel asks, so for readers that read a page at a time that, not the reader's reads, is the "
            "plain path's floor. Fetched: bytes on the link, HTTP headers included. Medians per cell.", "",
            "| link | table | query | reader | contender | reader's reads | kernel's asks | fetched | "
            "fetched ÷ reader's | fetched ÷ kernel's |",
            "|---|---|---|---|---|---|---|---|---|---|"] + rows


def write(out: Path, img: Path, plan: dict, tables: dict, runs: list, models: list, calibrations: dict,
          elapsed: float, probe: dict | None = None, commit: str | None = None,
          server: str | None = None) -> None:
    summary = summarize(runs, models)
    pngs = _plots(img, summary)
    # Links relative to the report: a second report keeps its plots in a
    # folder of its own (the plots of an earlier plan are cleared per folder).
    rel_img = Path(__import__("os").path.relpath(Path(img).resolve(), Path(out).resolve().parent))
    lines = ["# Benchmarks", "",
             "Written by `scripts/bench` (do not edit by hand). Method: [below](#method).", "",
             f"- machine: {platform.node()}, {platform.machine()}, {__import__('os').cpu_count()} CPUs, "
             f"Linux {platform.release()}",
             f"- sievefs measured: commit `{commit or sievefs_commit()}` (the checkout whose build/sievefs ran)",
             f"- S3 server: {server or 'moto (signature checks off)'}",
             f"- versions: {_versions()}",
             f"- plan: {plan}; {len(runs)} timed runs in {elapsed / 60:.1f} min",
             ]
    for p, c in calibrations.items():
        lines.append(f"- link `{p}` measured: {c}")
    lines.append("")
    for name, t in tables.items():
        rgs = sum(f.get("row_groups", 0) for f in t["files"])
        lines.append(f"- table `{name}`: {t['rows']:,} rows, {len(t['files'])} files, {rgs} row groups of "
                     f"≤ {t.get('row_group_rows') or 0:,} rows, {t['bytes'] / 1e6:,.1f} MB, {t['width']} columns, "
                     f"codec {t['codec']}, layout {t.get('layout', 'sieve')}: {LAYOUT_TEXT.get(t.get('layout', 'sieve'), '')}")
    lines += _profile_lines(runs)
    lines += _probe_lines(probe)
    headline = []
    for (profile, table, query, reader), row in sorted(summary.items()):
        lines += ["", f"## {query} — {table}, {reader}, link `{profile}`", "",
                  "| contender | init s | first query s | later query s | bytes from S3 | requests | "
                  "reader CPU s | reader peak | daemon CPU s | daemon peak | same result |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in ORDER:
            if c not in row:
                continue
            v = row[c]
            if c == "model":
                lines.append(f"| physical limit | – | {v['query_s']:.2f} | – | {_fmt_b(v['bytes'])} | "
                             f"{v.get('requests', 0):,} in {v['rounds']} rounds | – | – | – | – | – |")
                continue
            daemon = (f"{v['daemon_cpu_s']:.2f} | {_fmt_mib(v['daemon_peak_bytes'])}"
                      if v["daemon_cpu_s"] == v["daemon_cpu_s"] else "– | –")
            later = f"{v['later_s']:.2f}" if v["later_s"] == v["later_s"] else "–"
            lines.append(f"| {c} | {v['init_s']:.2f} | {v['query_s']:.2f} | {later} | {_fmt_b(v['bytes'])} | "
                         f"{v['requests']:,.0f} | {v['cpu_s']:.2f} | {_fmt_mib(v['peak_bytes'])} | {daemon} | "
                         f"{'yes' if v['same'] else '**NO**'} |")
        if "model" in row:
            m = row["model"]
            cap = "unlimited" if not m.get("capacity_per_s") else f"{m['capacity_per_s']:,.0f} req/s"
            lines += ["", f"Physical limit {m['seconds']:.2f} s = {m['rounds']} rounds × RTT ({m['latency_s']:.2f} s) "
                      f"+ {_fmt_b(m['bytes'])} / bandwidth ({m['transfer_s']:.2f} s; {_fmt_b(m.get('gap_bytes', 0))} of "
                      f"it gaps read through) + {m.get('requests', 0):,} requests / capacity "
                      f"({m.get('requests_s', 0):.2f} s; capacity {cap}, {m.get('capacity_source', '?')})."]
        for c in ("view", "plain"):
            v = row.get(c) or {}
            if c == "view" and ("chunk_reasons" in v or "page_reasons" in v or "view_pages" in v):
                vp = v.get("view_pages") or {}
                lines += ["", f"View decisions (medians per run): chunks: {_reasons(v.get('chunk_reasons'))}; "
                          f"pages: {_reasons(v.get('page_reasons'))}; pages real {vp.get('pages_real', 0):,.0f}, "
                          f"synthesized {vp.get('pages_synthesized', 0):,.0f}, partial {vp.get('pages_partial', 0):,.0f}"
                          + ("" if "chunk_reasons" in v else " (this sievefs's NAME.stats has no chunk_reasons/"
                             "page_reasons)") + "."]
        if "view" in row:
            def ratio(other):
                return row["view"]["query_s"] / row[other]["query_s"] if other in row and row[other]["query_s"] else None
            headline.append((profile, table, query, reader, ratio("plain"), ratio("s3fs"), ratio("model")))
    lines += ["", "## Headline: first-query time of the view divided by …", "",
              "(The physical limit is a lower bound: a ratio of 1 would be perfect.)", "",
              "| link | table | query | reader | plain | s3fs | physical limit |", "|---|---|---|---|---|---|---|"]
    for h in headline:
        f = [("–" if x is None else f"{x:.2f}") for x in h[4:]]
        lines.append(f"| {h[0]} | {h[1]} | {h[2]} | {h[3]} | {f[0]} | {f[1]} | {f[2]} |")
    lines += _reads_lines(summary)
    lines += ["", "## Plots", ""] + [f"![{p}]({rel_img / p})" for p in pngs]
    lines += ["", "## Method", "",
              ("- S3: versitygw (Versity S3 Gateway, Go; `scripts/bench --server versitygw`, "
               "`scripts/lib/s3servers.py`) on 127.0.0.1 with its posix backend on a temporary directory, "
               "keep-alive on, SigV4 checked on every request (the contenders sign with its root user's key); "
               "chosen over moto because moto carries only a few hundred small ranged GETs per second on "
               "this machine, which bounds any view that reads pages partially. Every contender reaches it "
               "through the same "
               if (plan.get("server") == "versitygw") else
               "- S3: moto on 127.0.0.1 (`tests/e2e/moto_launch.py`), signature checks off because s3fs 1.90 "
               "signs listing queries in a way moto rejects (`--server versitygw` runs the Versity S3 Gateway "
               "instead). Every contender reaches it through the same ")+
              "link emulator (`scripts/lib/wanproxy.py`: per-chunk one-way delay RTT/2 ± jitter, one shared "
              "pacer per direction, one RTT per new connection), which also counts the bytes and requests.",
              "- Data: TPC-H lineitem from `tpchgen-cli`, widened deterministically to 90 (or 416) columns "
              "(`scripts/lib/bench_data.py`), each table a Delta table (one commit with file statistics) over "
              "Parquet files written by a real writer: layout `pyarrow` = pyarrow's ParquetWriter with "
              "`use_dictionary=False, write_page_index=True, data_page_size=1 MiB`, 100,000-row groups, "
              "its defaults otherwise (V1 pages, decimals as FIXED_LEN_BYTE_ARRAY) except that its "
              "20,000-row page cap is lifted to the row group so pages reach the 1 MiB page size (fixed-width "
              "columns: one 400–800 KB page per chunk, strings 3 pages): the layout with an OffsetIndex; "
              "layout `pyarrow_default` = pyarrow's ParquetWriter with its defaults but the codec (NONE or "
              "ZSTD rather than snappy): dictionary pages falling back to PLAIN past 1 MiB, pages of 1 MiB "
              "or 20,000 rows, no OffsetIndex, 100,000-row groups, so pages of different sizes whose maps "
              "`sievefs index --to-s3` builds after the upload (not timed); "
              "layout `duckdb` = DuckDB's `COPY … (FORMAT parquet, ROW_GROUP_SIZE 100000, COMPRESSION …)` "
              "with DuckDB's defaults otherwise: one page per column chunk, dictionary pages where DuckDB "
              "picks them, no OffsetIndex; layout `deltalake` = `deltalake.write_deltalake` with every "
              "default (arrow-rs's writer: Snappy, dictionary pages falling back to PLAIN past 1 MiB, pages "
              "of 1 MiB or 20,000 rows, an OffsetIndex, its own file sizes and Delta log); layout `spark` = "
              "Spark 4.2 with delta-spark writing the same rows as a Delta table with every default "
              "(parquet-java: Snappy, dictionary pages falling back to PLAIN past 1 MiB, pages of 1 MiB or "
              "20,000 rows, page CRCs, an OffsetIndex; its file names carry random UUIDs). (Layout `sieve`, `--layouts sieve`: the earlier pyarrow layout "
              "tuned for views, PLAIN, ≤ 20,000-row / 1 MiB pages, 131,072-row groups.) Same inputs and "
              "library versions give byte-identical files; generated tables are cached in `--data-dir`. "
              "The `_dv` variant (`--dv`) is the first layout's Parquet files after Spark (pyspark 4.2 + "
              "delta-spark) deleted about 1 % of the rows, scattered, with deletion vectors.",
              "- Readers, unmodified, each in a fresh process (`scripts/lib/bench_reader.py`): DuckDB "
              "(`read_parquet`), pyarrow (`pyarrow.dataset`), deltalake (`DeltaTable` + `QueryBuilder`, "
              "which applies deletion vectors). DuckDB and pyarrow read the tables without deletion vectors, "
              "deltalake the `_dv` tables when the plan has them, else the same tables as the others.",
              "- Contenders (`scripts/lib/bench_contenders.py`): sievefs through a view made from the query's "
              "hint (`where` + projected `columns`; the empty hint for the full scan) with its defaults, "
              "the sievefs plain path, s3fs-fuse (no cache), rclone mount (`--vfs-cache-mode full` on an "
              "empty cache directory, 1 MiB read chunks, no read-ahead: without its cache rclone reopens the "
              "object on every seek, 50 s instead of 3 s for a 90-column query at `wan`), and the reader's "
              "own S3 client (pyarrow `S3FileSystem`, deltalake with an `s3://` URI; DuckDB's httpfs "
              "extension cannot be downloaded here, so DuckDB has no direct run). Each run mounts afresh. "
              "Each sievefs mount measures the link first (`--warmup automatic`: latency, new-connection "
              "cost, bandwidth, the capacity curve; `.sieve/profile`) and a view plans with that profile "
              "([cost_model.md](cost_model.md)): a file's pages are read partially only when its partial "
              "plan, rounds included, is estimated more than 10 % faster than reading them whole; without "
              "a profile views read no page partially. Pages without a selected row are synthesized either "
              "way. DuckDB's files have no OffsetIndex; their single-page chunks are mapped from the "
              "metadata and confirmed by each page's header (DuckDB's default Snappy pages holding a "
              "selected row stay real)."
              + (f" Both sievefs contenders mounted with `{plan['sievefs_args']}`."
                 if plan.get("sievefs_args") else ""),
              "- Before anything is timed, every contender's result is compared with the same reader on the "
              "local files (on the unshaped link), and the local result's row count with the generator's. "
              "Timed runs alternate the contender order, at least 3 pairs; tables show medians. init = mount "
              "(and hint) until the mount answers; first query = the reader's query time in its process "
              "(opening the table included), bytes and requests its traffic; later query = the same query "
              "again in the same reader process on the same mount (sievefs contenders, `--later N` times; "
              "its traffic is kept apart, as `later_bytes` in the JSON), i.e. a warm mount; reader CPU and "
              "peak = the reader process (Python, the reader library and its S3 client for direct runs); "
              "daemon CPU and peak = the FUSE daemon. After each sievefs run the harness reads "
              "`MOUNTPOINT/.sieve/profile` (recorded as-is in the JSON, summarised above) and, for the "
              "view, `.sieve/hints/q.stats` (its `chunk_reasons` / `page_reasons` counters, summed over "
              "files, when that sievefs has them).",
              "- Physical limit (`scripts/lib/physical_model.py`): a lower bound, dependent rounds × RTT + "
              "bytes / bandwidth + requests / capacity. Bytes and requests: the byte ranges a reader that "
              "knows the layout and the selection cannot avoid (footer, page index, filter chunks, the "
              "selected values of locatable pages, other pages with a selected row whole, chunks without "
              "an OffsetIndex whole), per file and round, with ranges closer than bandwidth / capacity "
              "merged (the optimal coalescing for this cost). RTT and bandwidth are the link's nominal "
              "values; capacity (requests per second) the median best point of the capacity curves the "
              "sievefs mounts measured (`.sieve/profile`), else assumed: 32 requests in flight (sievefs's "
              "default `--max-connections`) per RTT.",
              "- Scheduler probe: `scripts/bench --probe` runs `scripts/probe-requests` (N small ranged GETs "
              "at K in flight, sievefs's S3 client against a reference client, links wan and lan) when the "
              "checkout has it and embeds its table; `--probe-json PATH` embeds the runs of an earlier "
              "`scripts/probe-requests --json PATH`.",
              "- Quick mode (`scripts/bench --quick`, the default): TPC-H SF 0.02 (120,515 rows: one row "
              "group of 100,000 and one of 20,515 per table, one file), 90 columns, uncompressed, layouts "
              "`pyarrow` (86 MB), `pyarrow_default` and `duckdb` (66 MB), and the Snappy layouts of the "
              "Delta writers, `deltalake` (58 MB) and `spark`, the `wan` link (150 Mbit/s: a plain read of the "
              "70-column query moves about 75 MB, 5–6 s), 0.1 % scattered, 0.1 % clustered and the full "
              "scan, readers DuckDB, pyarrow and deltalake, contenders view, plain and s3fs, 3 pairs, one "
              "later query: 405 timed runs (with two layouts, 162 runs took about 20 minutes on this 2-core machine; "
              "the five, about 110 minutes, estimated from the rate of its first 51 runs). What it leaves out "
              "to stay there: rclone and the direct clients (`--contenders view,plain,s3fs,rclone,direct`: "
              "well over 30 minutes), the 0.02 % scattered query (`--queries …,scattered_0_02pct`), the `_dv` "
              "tables (`--dv`), and larger files: `--scale 0.085` gives the ~5 row groups per file of "
              "the issue (about 360 MB per table, over an hour for this plan).",
              "- Full mode (`scripts/bench --full`): TPC-H SF10 (59,986,052 rows, files of about 512 MiB), "
              "90 and 416 columns, uncompressed and Zstd, layouts `pyarrow`, `pyarrow_default` and `duckdb`, the `_dv` variants, "
              "links `wan`, `region` and `lan`, all nine queries (0.01/0.02/0.1/1 % scattered and clustered, "
              "full scan), every contender, 3 pairs. The tables take about 370 GB per layout (the `_dv` "
              "copies are hard links) and moto keeps a second copy under `$TMPDIR`, so it needs about 1.5 TB "
              "of disk. A selective query on the 90-column table moves about 33 GB through the plain path, "
              "half an hour per run at 150 Mbit/s, so the whole plan takes weeks; `--widths 90 --codecs "
              "none --profiles region --queries ...` or `--scale 1` run a part of it. "
              "`--data-dir` caches the generated tables between runs; `--json` keeps every run.", ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
