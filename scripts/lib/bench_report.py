"""docs/benchmarks.md and docs/img/*.png from the runs of scripts/bench."""
from __future__ import annotations

import platform
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

ORDER = ("view", "plain", "s3fs", "rclone", "direct", "model")


def _versions() -> str:
    out = []
    for name, argv in (("sievefs", ["build/sievefs", "--version"]), ("s3fs", ["s3fs", "--version"]),
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
                      for k in ("init_s", "query_s", "bytes", "requests", "cpu_s", "peak_bytes",
                                "daemon_cpu_s", "daemon_peak_bytes")}
            row[c]["n"] = len(rs)
            row[c]["same"] = all(r["same"] for r in rs)
        m = next((m for m in models if (m["profile"], m["table"], m["query"]) == key[:3]), None)
        if m:
            row["model"] = {"query_s": m["seconds"], "bytes": m["bytes"], "requests": m["rounds"], "n": 0}
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


def write(out: Path, img: Path, plan: dict, tables: dict, runs: list, models: list, calibrations: dict,
          elapsed: float) -> None:
    summary = summarize(runs, models)
    pngs = _plots(img, summary)
    rel_img = Path("img")
    lines = ["# Benchmarks", "",
             "Written by `scripts/bench` (do not edit by hand). Method: [below](#method).", "",
             f"- machine: {platform.node()}, {platform.machine()}, {__import__('os').cpu_count()} CPUs, "
             f"Linux {platform.release()}",
             f"- versions: {_versions()}",
             f"- plan: {plan}; {len(runs)} timed runs in {elapsed / 60:.1f} min",
             ]
    for p, c in calibrations.items():
        lines.append(f"- link `{p}` measured: {c}")
    lines.append("")
    for name, t in tables.items():
        lines.append(f"- table `{name}`: {t['rows']:,} rows, {len(t['files'])} files, "
                     f"{t['bytes'] / 1e6:,.1f} MB, {t['width']} columns, codec {t['codec']}")
    headline = []
    for (profile, table, query, reader), row in sorted(summary.items()):
        lines += ["", f"## {query} — {table}, {reader}, link `{profile}`", "",
                  "| contender | init s | first query s | bytes from S3 | requests | reader CPU s | "
                  "reader peak | daemon CPU s | daemon peak | same result |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for c in ORDER:
            if c not in row:
                continue
            v = row[c]
            if c == "model":
                lines.append(f"| physical limit | – | {v['query_s']:.2f} | {_fmt_b(v['bytes'])} | "
                             f"{v['requests']} rounds | – | – | – | – | – |")
                continue
            daemon = (f"{v['daemon_cpu_s']:.2f} | {_fmt_mib(v['daemon_peak_bytes'])}"
                      if v["daemon_cpu_s"] == v["daemon_cpu_s"] else "– | –")
            lines.append(f"| {c} | {v['init_s']:.2f} | {v['query_s']:.2f} | {_fmt_b(v['bytes'])} | "
                         f"{v['requests']:,.0f} | {v['cpu_s']:.2f} | {_fmt_mib(v['peak_bytes'])} | {daemon} | "
                         f"{'yes' if v['same'] else '**NO**'} |")
        if "view" in row:
            def ratio(other):
                return row["view"]["query_s"] / row[other]["query_s"] if other in row and row[other]["query_s"] else None
            headline.append((profile, table, query, reader, ratio("plain"), ratio("s3fs"), ratio("model")))
    lines += ["", "## Headline: first-query time of the view divided by …", "",
              "| link | table | query | reader | plain | s3fs | physical limit |", "|---|---|---|---|---|---|---|"]
    for h in headline:
        f = [("–" if x is None else f"{x:.2f}") for x in h[4:]]
        lines.append(f"| {h[0]} | {h[1]} | {h[2]} | {h[3]} | {f[0]} | {f[1]} | {f[2]} |")
    lines += ["", "## Plots", ""] + [f"![{p}]({rel_img / p})" for p in pngs]
    lines += ["", "## Method", "",
              "- S3: moto on 127.0.0.1 (`tests/e2e/moto_launch.py`), signature checks off because s3fs 1.90 "
              "signs listing queries in a way moto rejects. Every contender reaches it through the same "
              "link emulator (`scripts/lib/wanproxy.py`: per-chunk one-way delay RTT/2 ± jitter, one shared "
              "pacer per direction, one RTT per new connection), which also counts the bytes and requests.",
              "- Data: TPC-H lineitem from `tpchgen-cli`, widened deterministically (`scripts/lib/bench_data.py`); "
              "PLAIN, no dictionary, page index, ≤ 131,072-row groups, ~1 MiB pages; a Delta log per table. "
              "The `_dv` variant is the same Parquet files after Spark (pyspark 4.2 + delta-spark) deleted "
              "about 1 % of the rows, scattered, with deletion vectors.",
              "- Readers, unmodified, each in a fresh process (`scripts/lib/bench_reader.py`): DuckDB "
              "(`read_parquet`), pyarrow (`pyarrow.dataset`), deltalake (`DeltaTable` + `QueryBuilder`, "
              "which applies deletion vectors). DuckDB and pyarrow read the tables without deletion vectors, "
              "deltalake the `_dv` tables when the plan has them.",
              "- Contenders (`scripts/lib/bench_contenders.py`): sievefs through a view made from the query's "
              "hint (`where` + projected `columns`; the empty hint for the full scan) with its default "
              "`--request-cost` (128K: a page with a selected row is read partially only from about 213 KiB, "
              "and the quick tables' pages of 20,000 rows are 80 to 160 KB, so there the view reads them "
              "whole and only synthesizes pages without one), the sievefs plain path, "
              "s3fs-fuse (no cache), rclone mount (`--vfs-cache-mode full` on an empty cache directory, "
              "1 MiB read chunks, no read-ahead: without its cache rclone reopens the object on every seek, "
              "50 s instead of 3 s for a 90-column query at `wan`), and the reader's own S3 client "
              "(pyarrow `S3FileSystem`, deltalake with an `s3://` URI; DuckDB's httpfs extension cannot be "
              "downloaded here, so DuckDB has no direct run). Each run mounts afresh.",
              "- Before anything is timed, every contender's result is compared with the same reader on the "
              "local files (on the unshaped link), and the local result's row count with the generator's. "
              "Timed runs alternate the contender order, at least 3 pairs; tables show medians. init = mount "
              "(and hint) until the mount answers; first query = the reader's query time in its process "
              "(opening the table included); reader CPU and peak = the reader process (Python, the reader "
              "library and its S3 client for direct runs); daemon CPU and peak = the FUSE daemon.",
              "- Physical limit (`scripts/lib/physical_model.py`): minimal bytes / bandwidth + minimal dependent "
              "rounds × RTT.",
              "- Quick mode (`scripts/bench --quick`, the default): TPC-H SF 0.005 (30,201 rows, one file), "
              "90 columns, uncompressed, its `_dv` variant, the `wan` link, 0.1 % scattered and clustered "
              "and the full scan, 3 pairs; about 10 minutes on this 2-core machine, generating the tables (Spark included) and building nothing.",
              "- Full mode (`scripts/bench --full`): TPC-H SF10 (59,986,052 rows, files of about 512 MiB), "
              "90 and 416 columns, uncompressed and Zstd, the `_dv` variants, links `wan`, `region` and "
              "`lan`, all seven queries (0.01/0.1/1 % scattered and clustered, full scan), 3 pairs. The "
              "tables take about 370 GB (the `_dv` copies are hard links) and moto keeps a second copy "
              "under `$TMPDIR`, so it needs about 750 GB of disk. A selective query on the 90-column table "
              "moves about 33 GB through the plain path, half an hour per run at 150 Mbit/s, so the whole "
              "plan takes weeks; `--widths 90 --codecs none --profiles region --queries ...` or `--scale 1` "
              "run a part of it. "
              "`--data-dir` caches the generated tables between runs; `--json` keeps every run.", ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
