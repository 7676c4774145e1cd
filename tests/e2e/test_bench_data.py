"""Self-tests of the benchmark data generator (scripts/lib/bench_data.py):
deterministic output, the Parquet layout the benchmark relies on, Delta tables
that deltalake and DuckDB read alike, queries whose selectivity and layout are
what their names say, and (when a Spark with delta-spark is at hand) the
deletion-vector variant. No sievefs mount needed; `sievefs inspect` checks the
pages when the binary is built."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import s3env

sys.path.insert(0, str(s3env.REPO / "scripts" / "lib"))
import bench_data as bd  # noqa: E402

pytestmark = pytest.mark.harness
CI = os.environ.get("CI", "").lower() == "true"


def _missing(reason: str):
    """Skip, or fail when CI=true (where everything the test needs must be there)."""
    if CI:
        pytest.fail(f"{reason} (CI=true: a missing tool fails the test)")
    pytest.skip(reason)

SCALE = 0.005          # ~30k rows
RG_ROWS = 4096         # small row groups and pages so scattered vs clustered shows at this scale
PAGE_ROWS = 1000
TARGET_MIB = 4
BIN = os.environ.get("SIEVEFS_BIN", str(s3env.REPO / "build" / "sievefs"))


def _gen(out: Path, **kw) -> dict:
    args = dict(scale=SCALE, widths=(90,), codecs=("none", "zstd"), target_file_mib=TARGET_MIB,
                row_group_rows=RG_ROWS, page_rows=PAGE_ROWS)
    args.update(kw)
    return bd.generate(out, **args)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict:
    return _gen(tmp_path_factory.mktemp("bench-a"))


@pytest.fixture(scope="module")
def defaults(tmp_path_factory) -> dict:
    """Both widths with the default layout (pages of 20,000 rows / 1 MiB, row groups of 131,072)."""
    return bd.generate(tmp_path_factory.mktemp("bench-d"), scale=SCALE, widths=(90, 416), codecs=("none",))


def _files(info: dict) -> list[Path]:
    return [Path(info["path"]) / f["path"] for f in info["files"]]


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "_tpch" not in p.parts and not p.name.endswith(".manifest.json")}


def test_generation_is_deterministic_and_cached(small, tmp_path):
    assert {i["cached"] for i in small["tables"].values()} == {False}
    again = _gen(tmp_path / "b")
    a, b = _tree(Path(small["out_dir"])), _tree(tmp_path / "b")
    assert sorted(a) == sorted(b)
    assert [k for k in a if a[k] != b[k]] == [], "two generations differ"
    assert any(k.endswith(".parquet") for k in a) and any("_delta_log" in k for k in a)
    for name, info in again["tables"].items():
        assert len(info["files"]) > 1, f"{name}: expected several files at {TARGET_MIB} MiB"
    # a third call finds the manifests and rewrites nothing
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "b").rglob("*.parquet")}
    third = _gen(tmp_path / "b")
    assert {i["cached"] for i in third["tables"].values()} == {True}
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "b").rglob("*.parquet")} == mtimes
    # a different parameter is not served from the cache
    other = _gen(tmp_path / "b", codecs=("none",), page_rows=PAGE_ROWS * 2)
    assert {i["cached"] for i in other["tables"].values()} == {False}


def _check_layout(info: dict, rg_rows: int, page_rows: int, page_bytes: int):
    import pyarrow.parquet as pq
    codec = {"none": "UNCOMPRESSED", "zstd": "ZSTD"}[info["codec"]]
    total = 0
    for path in _files(info):
        md = pq.ParquetFile(path).metadata
        assert md.num_columns == info["width"]
        total += md.num_rows
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            assert rg.num_rows <= min(rg_rows, bd.MAX_ROW_GROUP_ROWS)
            for c in range(rg.num_columns):
                cc = rg.column(c)
                assert not cc.has_dictionary_page, f"{path.name} {cc.path_in_schema}: dictionary page"
                assert "PLAIN" in cc.encodings and not {"PLAIN_DICTIONARY", "RLE_DICTIONARY"} & set(cc.encodings)
                assert cc.compression == codec
                assert cc.is_stats_set and cc.statistics.has_min_max
                assert cc.has_offset_index and cc.has_column_index, f"{path.name} {cc.path_in_schema}: no page index"
    assert total == info["rows"] == info["physical_rows"]
    if not os.access(BIN, os.X_OK):
        return
    for path in _files(info):
        r = subprocess.run([BIN, "inspect", str(path), "--json", "--pages"], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        for rg in doc["row_groups"]:
            for cc in rg["columns"]:
                assert cc["dictionary_page_offset"] is None
                for p in cc["pages"]:
                    assert p["type"] == "DATA_PAGE" and p["encoding"] == "PLAIN", (path.name, cc["path"], p)
                    assert p["num_rows"] <= page_rows
                    # the writer closes a page once it reaches page_bytes: one batch of values past it at most
                    assert p["uncompressed_size"] <= page_bytes + 64 * 1024, (path.name, cc["path"], p)
                    fixed = bd.DELTA_TYPE.get(dict(bd.column_specs(info["width"]))[cc["path"]]) != "string"
                    if info["codec"] == "none" and fixed:
                        assert p["eligible"], (path.name, cc["path"], p)


def test_layout_small_pages(small):
    for info in small["tables"].values():
        _check_layout(info, RG_ROWS, PAGE_ROWS, bd.DEFAULT_PAGE_BYTES)


def test_layout_defaults(defaults):
    for info in defaults["tables"].values():
        assert info["row_group_rows"] == bd.MAX_ROW_GROUP_ROWS and info["page_rows"] == bd.DEFAULT_PAGE_ROWS
        _check_layout(info, bd.MAX_ROW_GROUP_ROWS, bd.DEFAULT_PAGE_ROWS, bd.DEFAULT_PAGE_BYTES)
        assert info["width"] == len(info["columns"])
    w416 = defaults["tables"]["lineitem_w416_none"]
    kinds = {t for _, t in bd.column_specs(416)}
    assert kinds == {"int64", "int32", "double", "dec", "date", "str"}
    assert [c for c, _ in bd.column_specs(90)] == w416["columns"][:90], "widths are prefixes of each other"


def test_delta_table_reads_like_read_parquet(small):
    import duckdb
    import pyarrow as pa
    from deltalake import DeltaTable
    for info in small["tables"].values():
        schema = bd.arrow_schema(info["width"])
        dt = DeltaTable(info["path"])
        assert dt.version() == 0
        assert [f.name for f in dt.schema().fields] == info["columns"]
        delta = dt.to_pyarrow_table().cast(schema).sort_by("rownum")
        con = duckdb.connect()
        duck = con.sql(f"SELECT * FROM read_parquet('{info['path']}/*.parquet') ORDER BY rownum").to_arrow_table()
        duck = pa.Table.from_batches(duck.to_batches()).cast(schema)
        assert delta.num_rows == duck.num_rows == info["rows"]
        assert delta.equals(duck), f"{info['name']}: deltalake and DuckDB read different rows"
        assert delta["rownum"].to_pylist() == list(range(info["rows"]))
        # Delta file statistics agree with the files
        log = [json.loads(ln) for ln in (Path(info["path"]) / "_delta_log" / "00000000000000000000.json")
               .read_text().splitlines()]
        adds = [x["add"] for x in log if "add" in x]
        assert [a["path"] for a in adds] == [f["path"] for f in info["files"]]
        first = 0
        for a, f in zip(adds, info["files"]):
            st = json.loads(a["stats"])
            assert a["size"] == (Path(info["path"]) / a["path"]).stat().st_size
            assert st["numRecords"] == f["rows"]
            assert st["minValues"]["rownum"] == first and st["maxValues"]["rownum"] == first + f["rows"] - 1
            assert len(st["nullCount"]) == bd.STATS_COLUMNS
            first += f["rows"]
        # the source is lineitem as tpchgen-cli wrote it, sorted by l_orderkey
        ok = delta["l_orderkey"].to_pylist()
        assert ok == sorted(ok)


PRED_RE = re.compile(r"^(\w+ (<|<=|=) \d+|\w+ BETWEEN \d+ AND \d+|\w+ IN \((\d+, )*\d+\))$")


def _touched_row_groups(con, info, pred) -> tuple[int, int]:
    rg = info["row_group_rows"]
    touched = con.sql(f"SELECT count(DISTINCT rownum // {rg}) FROM read_parquet('{info['path']}/*.parquet') "
                      f"WHERE {pred}").fetchall()[0][0]
    return touched, sum(f["row_groups"] for f in info["files"])


def test_queries(small, defaults):
    import duckdb
    import pyarrow.dataset as pads
    con = duckdb.connect()
    for info in list(small["tables"].values()) + list(defaults["tables"].values()):
        qs = bd.queries(info)
        assert [q["name"] for q in qs] == ["scattered_0_01pct", "clustered_0_01pct", "scattered_0_02pct",
                                           "clustered_0_02pct", "scattered_0_1pct", "clustered_0_1pct",
                                           "scattered_1pct", "clustered_1pct", "full_scan"]
        dset = pads.dataset(info["path"], format="parquet", exclude_invalid_files=True)
        for q in qs:
            where = f"{info['name']} {q['name']}"
            assert set(q["columns"]) <= set(info["columns"]) and set(q["filter_columns"]) <= set(q["columns"])
            sql = bd.render(q["sql_duckdb"], info["path"])
            res = con.sql(sql).fetchall()
            if q["layout"] == "full":
                assert q["hint"] is None and q["predicate"] is None
                assert res[0][0] == info["rows"] == q["expected_rows"]
                assert dset.count_rows() == info["rows"]
                continue
            assert len(q["columns"]) == bd.PROJECT_COLUMNS and len(res[0]) == bd.PROJECT_COLUMNS, where
            assert len(set(q["columns"])) == len(q["columns"])
            n = len(res)
            assert n == q["expected_rows"], where
            assert dset.count_rows(filter=q["pyarrow_filter"]) == n, where
            nominal = info["rows"] * q["selectivity"]
            assert nominal / 2 <= n <= nominal * 2, f"{where}: {n} rows, nominal {nominal:.1f}"
            # the hint: valid JSON, the same predicate, in the subset of the language all engines agree on
            doc = json.loads(bd.hint_json(q))
            assert doc == {"where": q["predicate"], "columns": q["columns"]}
            assert PRED_RE.match(doc["where"]), doc["where"]
            assert all(re.match(r"^[a-z_0-9]+$", c) for c in doc["columns"])
            touched, groups = _touched_row_groups(con, info, q["predicate"])
            if q["layout"] == "scattered":
                assert touched >= 0.75 * min(groups, n), f"{where}: {n} rows in {touched}/{groups} row groups"
            else:
                assert touched <= math.ceil(n / info["row_group_rows"]) + 1, \
                    f"{where}: {n} rows in {touched}/{groups} row groups"
        # the scattered 1 % selection reaches every row group; the clustered one few
        by = {q["name"]: q for q in qs}
        t_s, groups = _touched_row_groups(con, info, by["scattered_1pct"]["predicate"])
        t_c, _ = _touched_row_groups(con, info, by["clustered_1pct"]["predicate"])
        assert t_s == groups and (groups == 1 or t_c < groups / 2), (info["name"], t_s, t_c, groups)


def test_cli_prints_summary(small):
    r = subprocess.run([sys.executable, str(s3env.REPO / "scripts" / "lib" / "bench_data.py"), "--out",
                        small["out_dir"], "--scale", str(SCALE), "--widths", "90", "--codecs", "none,zstd",
                        "--target-file-mib", str(TARGET_MIB), "--row-group-rows", str(RG_ROWS),
                        "--page-rows", str(PAGE_ROWS), "--queries"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    t = doc["tables"]["lineitem_w90_zstd"]
    assert t["cached"] is True and t["rows"] == small["tables"]["lineitem_w90_zstd"]["rows"]
    assert len(t["queries"]) == 9 and t["queries"][0]["pyarrow_filter"]


WRITER_RG_ROWS = 10_000   # several row groups at SCALE (the benchmark's plans use 100,000)
WRITER_LAYOUTS = ("pyarrow", "pyarrow_default", "duckdb")


@pytest.fixture(scope="module")
def writers(tmp_path_factory) -> dict:
    """The real-writer layouts: pyarrow (page index), pyarrow's defaults and DuckDB (its COPY)."""
    return bd.generate(tmp_path_factory.mktemp("bench-w"), scale=SCALE, widths=(90,), codecs=("none",),
                       layouts=WRITER_LAYOUTS, row_group_rows=WRITER_RG_ROWS)


def test_writer_layouts(writers, tmp_path):
    import pyarrow.parquet as pq
    tables = writers["tables"]
    assert set(tables) == {f"lineitem_w90_none_{lay}" for lay in WRITER_LAYOUTS}
    for name, info in tables.items():
        assert name.endswith("_none_" + info["layout"]) and info["row_group_rows"] == WRITER_RG_ROWS
        dictionaries = 0
        total = 0
        for path in _files(info):
            md = pq.ParquetFile(path).metadata
            assert md.num_columns == 90
            assert md.created_by.startswith("DuckDB" if info["layout"] == "duckdb" else "parquet-cpp-arrow")
            assert md.num_row_groups > 1
            for g in range(md.num_row_groups):
                rg = md.row_group(g)
                assert rg.num_rows <= WRITER_RG_ROWS
                for c in range(rg.num_columns):
                    cc = rg.column(c)
                    assert cc.compression == "UNCOMPRESSED"
                    if info["layout"] == "pyarrow":
                        assert cc.has_offset_index and not cc.has_dictionary_page, cc.path_in_schema
                    else:
                        assert not cc.has_offset_index, cc.path_in_schema
                    dictionaries += cc.has_dictionary_page
            total += md.num_rows
        if info["layout"] == "pyarrow_default":
            assert dictionaries > 0, "pyarrow's defaults write dictionary pages"
        assert total == info["rows"]
        if not os.access(BIN, os.X_OK):
            continue
        for path in _files(info):
            r = subprocess.run([BIN, "inspect", str(path), "--json", "--pages"], capture_output=True, text=True,
                               timeout=60)
            assert r.returncode == 0, r.stderr
            for rg in json.loads(r.stdout)["row_groups"]:
                for cc in rg["columns"]:
                    data = [p for p in cc["pages"] if p["type"].startswith("DATA_PAGE")]
                    if info["layout"] == "duckdb":
                        assert len(data) == 1, (path.name, cc["path"])        # one page per chunk
                    elif info["layout"] == "pyarrow" and not cc["path"].endswith("_str") and cc["path"] not in (
                            "l_returnflag", "l_linestatus", "l_shipinstruct", "l_shipmode", "l_comment"):
                        # the 20,000-row cap lifted: a fixed-width chunk of 10,000 rows is one page
                        assert len(data) == 1 and data[0]["eligible"], (path.name, cc["path"], data)
    # deterministic: a second generation elsewhere is byte-identical; a third call is served from the cache
    again = bd.generate(tmp_path / "b", scale=SCALE, widths=(90,), codecs=("none",), layouts=WRITER_LAYOUTS,
                        row_group_rows=WRITER_RG_ROWS)
    a, b = _tree(Path(writers["out_dir"])), _tree(tmp_path / "b")
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []
    third = bd.generate(tmp_path / "b", scale=SCALE, widths=(90,), codecs=("none",), layouts=WRITER_LAYOUTS,
                        row_group_rows=WRITER_RG_ROWS)
    assert {i["cached"] for i in third["tables"].values()} == {True}


def test_writer_layouts_read_alike(writers):
    import duckdb
    import pyarrow as pa
    from deltalake import DeltaTable
    con = duckdb.connect()
    ref = None
    for info in writers["tables"].values():
        schema = bd.arrow_schema(info["width"])
        delta = DeltaTable(info["path"]).to_pyarrow_table().cast(schema).sort_by("rownum")
        duck = con.sql(f"SELECT * FROM read_parquet('{info['path']}/*.parquet') ORDER BY rownum").to_arrow_table()
        duck = pa.Table.from_batches(duck.to_batches()).cast(schema)
        assert delta.equals(duck), info["name"]
        assert delta["rownum"].to_pylist() == list(range(info["rows"]))
        ref = ref or delta
        assert delta.equals(ref), f"{info['name']}: the layouts hold different rows"
        adds = [json.loads(ln)["add"] for ln in (Path(info["path"]) / "_delta_log" / "00000000000000000000.json")
                .read_text().splitlines() if "add" in ln]
        assert [a["path"] for a in adds] == [f["path"] for f in info["files"]]
        first = 0
        for a, f in zip(adds, info["files"]):
            st = json.loads(a["stats"])
            assert a["size"] == (Path(info["path"]) / a["path"]).stat().st_size
            assert st["numRecords"] == f["rows"]
            assert st["minValues"]["rownum"] == first and st["maxValues"]["rownum"] == first + f["rows"] - 1
            first += f["rows"]


@pytest.mark.timeout(900)
def test_delta_writer_layouts(writers, tmp_path):
    """The Delta writers' layouts with every default: deltalake (arrow-rs) and,
    when a Spark with delta-spark is at hand, Spark (parquet-java): Snappy,
    dictionary pages, an OffsetIndex, Spark's page CRCs; the same rows as
    the other layouts, read through each table's own Delta log."""
    import pyarrow.parquet as pq
    from deltalake import DeltaTable
    if bd.spark_python() is None and CI:
        _missing("no Spark with delta-spark for the spark layout (scripts/setup creates tests/e2e/.data/spark-venv)")
    layouts = ("deltalake", "spark") if bd.spark_python() else ("deltalake",)
    gen = bd.generate(tmp_path, scale=SCALE, widths=(90,), codecs=("none",), layouts=layouts)
    assert set(gen["tables"]) == {f"lineitem_w90_snappy_{lay}" for lay in layouts}
    schema = bd.arrow_schema(90)
    ref = next(iter(writers["tables"].values()))
    want = DeltaTable(ref["path"]).to_pyarrow_table().cast(schema).sort_by("rownum")
    for name, info in gen["tables"].items():
        writer = "parquet-mr" if info["layout"] == "spark" else "delta-rs"
        dictionaries = crcs = 0
        for path in _files(info):
            md = pq.ParquetFile(path).metadata
            assert md.created_by.startswith(writer), (name, md.created_by)
            for g in range(md.num_row_groups):
                for c in range(md.num_columns):
                    cc = md.row_group(g).column(c)
                    assert cc.compression == "SNAPPY" and cc.has_offset_index, (name, cc.path_in_schema)
                    dictionaries += cc.has_dictionary_page
            if os.access(BIN, os.X_OK):
                r = subprocess.run([BIN, "inspect", str(path), "--json", "--pages"], capture_output=True,
                                   text=True, timeout=60)
                assert r.returncode == 0, r.stderr
                crcs += sum(p["crc"] is not None for rg in json.loads(r.stdout)["row_groups"]
                            for cc in rg["columns"] for p in cc["pages"])
        assert dictionaries > 0, f"{name}: no dictionary page"
        if info["layout"] == "spark" and os.access(BIN, os.X_OK):
            assert crcs > 0, f"{name}: Spark wrote no page CRC"
        got = DeltaTable(info["path"]).to_pyarrow_table().cast(schema).sort_by("rownum")
        assert got.equals(want), f"{name}: rows differ from {ref['name']}"
        assert info["rows"] == want.num_rows and sum(f["rows"] for f in info["files"]) == info["rows"]
    again = bd.generate(tmp_path, scale=SCALE, widths=(90,), codecs=("none",), layouts=layouts)
    assert {i["cached"] for i in again["tables"].values()} == {True}


@pytest.mark.timeout(900)
def test_deletion_vector_variant(small, tmp_path):
    found = bd.spark_python()
    if found is None:
        _missing("no Python with a pyspark that has a delta-spark build (pyspark 4.0-4.2; Maven Central has "
                    "none for 4.3) and Java: set SIEVE_DV_SPARK_PYTHON, or run `bench_data.py --dv` once to "
                    f"create {bd.spark_venv_dir()}")
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder
    base = small["tables"]["lineitem_w90_none"]
    res = bd.generate(small["out_dir"], scale=SCALE, widths=(90,), codecs=("none",), dv=True,
                      target_file_mib=TARGET_MIB, row_group_rows=RG_ROWS, page_rows=PAGE_ROWS)
    info = res["tables"]["lineitem_w90_none_dv"]
    assert info["deleted_rows"] == bd.deleted_rows(base["rows"]) > 0
    assert info["rows"] == base["rows"] - info["deleted_rows"]
    assert info["deletion_vector_files"]
    for f in info["files"]:     # the Parquet files are the base table's, untouched
        assert os.path.samefile(Path(info["path"]) / f["path"], Path(base["path"]) / f["path"])
    dt = DeltaTable(info["path"])
    assert "deletionVectors" in (dt.protocol().reader_features or [])
    for q in bd.queries(info):
        assert q["sql_duckdb"] is None
        out = pa.table(QueryBuilder().register("t", dt).execute(q["sql_deltalake"]).read_all())
        n = out.column(0)[0].as_py() if q["layout"] == "full" else out.num_rows
        assert n == q["expected_rows"], q["name"]


def test_report_reads_profiles_and_reasons_loosely():
    """The pieces of the report that read documents other branches define:
    .sieve/profile (recorded as-is; latency, bandwidth, capacity and
    suggested in-flight rendered when present) and a view's chunk/page
    reason counters (top level, else summed over files)."""
    import bench
    import bench_report as br
    doc = {"state": "ready", "latency_ms": {"p50": 201.5, "p90": 230.0}, "connect_ms": 198.0,
           "bandwidth_Bps": 18_750_000, "capacity": [{"in_flight": 8, "per_s": 40.0},
                                                      {"in_flight": 64, "per_s": 310.0}],
           "suggested_in_flight": 64}
    ps = br.profile_summary(doc)
    assert ps == {"state": "ready", "latency_ms": 201.5, "p90_ms": 230.0, "connect_ms": 198.0,
                  "bandwidth_Bps": 18_750_000, "capacity_per_s": 310.0, "suggested_in_flight": 64}
    text = br._fmt_profile(ps)
    assert "latency 202 ms (p90 230)" in text and "150 Mbit/s" in text and "suggested in flight 64" in text
    assert br.profile_summary({"latency_s": 0.2, "latency_p90_s": 0.25, "bandwidth_mbit": 150})["p90_ms"] == 250
    assert br.profile_summary(None) == {} and br._fmt_profile({}) == "no profile"
    stats = {"files": [{"chunk_reasons": {"real": 2, "view": 5}, "page_reasons": {"partial": 3}},
                       {"chunk_reasons": {"view": 1}, "page_reasons": {"whole_cheaper": 4, "partial": 1}}]}
    assert bench.sum_reasons(stats) == {"chunk_reasons": {"real": 2, "view": 6},
                                        "page_reasons": {"partial": 4, "whole_cheaper": 4}}
    assert bench.sum_reasons({"chunk_reasons": {"a": 1}, "files": []}) == {"chunk_reasons": {"a": 1}}
    assert bench.sum_reasons({"pages_real": 3, "files": [{}]}) == {} and bench.sum_reasons(None) == {}


def test_physical_limit_request_term(writers):
    """physical_model: ranges closer than bandwidth / capacity are read as one;
    without a capacity the bound is the old bytes / bandwidth + rounds x RTT."""
    import numpy as np
    import physical_model as pm
    assert pm.coalesce([0, 10, 1000], [5, 20, 1010], gap=0) == (3, 0)
    assert pm.coalesce([0, 10, 1000], [5, 20, 1010], gap=6) == (2, 5)
    assert pm.coalesce([0, 10, 1000], [5, 20, 1010], gap=10_000) == (1, 985)
    info = writers["tables"]["lineitem_w90_none_pyarrow"]
    path = Path(info["path"]) / info["files"][0]["path"]
    rows = np.arange(5000, 5100)
    m = pm.minimal_read(path, rows, ["l_orderkey", "rownum", "w001_i64", "l_comment"], ["rownum"])
    plain = m.limit(0.2, 18.75e6)
    assert plain["requests_s"] == 0 and abs(plain["seconds"] - (m.total / 18.75e6 + m.rounds * 0.2)) < 1e-9
    capped = m.limit(0.2, 18.75e6, 160.0)
    assert capped["requests"] <= plain["requests"] and capped["bytes"] >= m.total
    assert capped["seconds"] >= plain["seconds"]
    assert abs(capped["seconds"] - (m.rounds * 0.2 + capped["bytes"] / 18.75e6 + capped["requests"] / 160)) < 1e-9


def test_appends_table(tmp_path):
    """The table of many small files: appends x days files under day=
    partitions, one Delta version per append, the rows of the source in
    order; its point query selects one order's 4 lines alike in DuckDB over
    the log's files, deltalake and pyarrow, and the file statistics locate
    the id in one file."""
    import duckdb
    import pyarrow.dataset as pads
    from deltalake import DeltaTable, QueryBuilder
    import pyarrow as pa
    info = bd.generate_appends(tmp_path, scale=0.01, appends=3, days=4)[bd.appends_table_name(3, 4)]
    assert info["layout"] == "appends" and info["partition_columns"] == ["day"]
    assert len(info["files"]) == 12 and info["rows"] == sum(f["rows"] for f in info["files"])
    assert all(f["path"].startswith("day=2024-01-") for f in info["files"]), info["files"][:2]
    assert info["columns"][-1] == "day" and len(info["columns"]) == 18
    dt = DeltaTable(info["path"])
    assert dt.version() == 2 and dt.metadata().partition_columns == ["day"]
    rows = dt.to_pyarrow_table(columns=["rownum"]).column(0).to_pylist()
    assert sorted(rows) == list(range(info["rows"]))
    # ids grow with the day: each file holds one run of rownum
    q, scan = bd.queries(info)
    assert scan["name"] == "full_scan" and scan["hint"] is None and scan["files"] == q["files"]
    (agg,) = duckdb.connect().sql(bd.render(scan["sql_duckdb"], info["path"], scan["files"])).fetchall()
    whole = dt.to_pyarrow_table(columns=["rownum"])
    assert agg[0] == info["rows"] == whole.num_rows and agg[-1] == sum(whole.column(0).to_pylist())
    assert q["name"] == "point_id" and q["expected_rows"] == bd.APPENDS_POINT_LINES == 4
    assert q["columns"] == bd.APPENDS_PROJECT and q["files"] == [f["path"] for f in info["files"]]
    duck = duckdb.connect().sql(bd.render(q["sql_duckdb"], info["path"], q["files"])).fetchall()
    assert len(duck) == 4 and {r[0] for r in duck} == {info["point_orderkey"]}
    dl = pa.table(QueryBuilder().register("t", dt).execute(q["sql_deltalake"]).read_all())
    assert dl.num_rows == 4
    ds = pads.dataset([str(Path(info["path"]) / f) for f in q["files"]], format="parquet")
    assert ds.count_rows(filter=q["pyarrow_filter"]) == 4
    import physical_model as pm
    hits = [f for f in info["files"] if pm.row_groups_by_stats(Path(info["path"]) / f["path"], "l_orderkey",
                                                               info["point_orderkey"], info["point_orderkey"])]
    assert len(hits) == 1, hits
    again = bd.generate_appends(tmp_path, scale=0.01, appends=3, days=4)[bd.appends_table_name(3, 4)]
    assert again["cached"] is True


def test_predicates_for_readers_and_model():
    import bench
    assert bench.pyarrow_filter_text("sel_hash < 100") == "pc.field('sel_hash') < 100"
    assert bench.pyarrow_filter_text("l_orderkey = 7") == "pc.field('l_orderkey') == 7"
    assert bench.pyarrow_filter_text("rownum BETWEEN 3 AND 9") == "(pc.field('rownum') >= 3) & (pc.field('rownum') <= 9)"
    assert bench.predicate_bounds("sel_hash < 100") == ("sel_hash", None, 99)
    assert bench.predicate_bounds("l_orderkey = 7") == ("l_orderkey", 7, 7)
    assert bench.predicate_bounds("rownum BETWEEN 3 AND 9") == ("rownum", 3, 9)
    assert bench.predicate_bounds(None) is None


def test_report_headline(tmp_path):
    """bench_report.write on a made-up run: the headline opens the report, one
    table per link with each contender's time and bytes, view ÷ plain, view ÷
    the best direct reader (named), and the limit; a plot per link."""
    import bench_report as br

    def run(label, contender, reader, s, b, profile="wan"):
        return {"profile": profile, "table": "t1", "query": "scattered_0_1pct", "label": label,
                "contender": contender, "reader": reader, "query_s": s, "bytes": b, "requests": 10,
                "init_s": 1.0, "later_s": None, "cpu_s": 0.5, "peak_bytes": 1 << 27, "daemon_cpu_s": None,
                "daemon_peak_bytes": None, "same": True, "pair": 0}
    runs = [run("view", "view", "duckdb", 2.0, 10e6), run("view", "view", "duckdb", 4.0, 12e6),
            run("plain", "plain", "duckdb", 4.0, 50e6), run("s3fs", "s3fs", "duckdb", 8.0, 60e6),
            run("pyarrow-s3", "direct", "pyarrow", 5.0, 40e6), run("polars-s3", "direct", "polars", 2.5, 45e6),
            run("view", "view", "duckdb", 0.5, 10e6, "lan"), run("plain", "plain", "duckdb", 0.4, 50e6, "lan")]
    models = [{"profile": "wan", "table": "t1", "query": "scattered_0_1pct", "seconds": 1.2, "bytes": 9e6,
               "min_bytes": 8e6, "rounds": 3, "requests": 20, "latency_s": 0.6, "transfer_s": 0.5,
               "requests_s": 0.1, "gap_bytes": 1e6, "capacity_per_s": 5500, "capacity_source": "s3link"}]
    doc = {"plan": {"profiles": ["wan", "lan"], "queries": ["scattered_0_1pct"], "pairs": 2,
                    "contenders": ["view", "plain", "s3fs", "direct"], "readers": ["duckdb"],
                    "direct_readers": ["pyarrow", "polars"], "server": "s3link"},
           "tables": {"t1": {"layout": "pyarrow", "rows": 10, "files": [{"bytes": 5, "row_groups": 1}],
                             "bytes": 5, "width": 90, "codec": "none"}},
           "runs": runs, "models": models, "calibrations": {}, "nominal": {"wan": {"rtt_ms": 200, "jitter_ms": 20,
                                                                                 "mbit": 150}},
           "elapsed": 60, "commit": "abc", "server": "s3link", "versions": "x", "notes": [], "errors": []}
    out = tmp_path / "b.md"
    br.write(out, tmp_path / "img", doc)
    md = out.read_text()
    head = md[:md.index("## Results per link")]
    assert head.index("## Headline") < head.index("### wan: RTT 200 ± 20 ms, 150 Mbit/s") < head.index("### lan")
    row = next(ln for ln in head.splitlines() if ln.startswith("| pyarrow | 0.1 % scattered | 3.00 s"))
    # view 3.0 s (median of 2 and 4) ÷ plain 4.0 = 0.75; ÷ polars-s3's 2.5 = 1.20; limit 1.2 s and 8 MB
    assert "| 0.75 | 1.20 (polars-s3) | 1.20 s · 8.00 MB |" in row, row
    assert "| 2.50 s · 45.0 MB |" in row and "11.0 MB" in row
    assert sorted(p.name for p in (tmp_path / "img").glob("*.png")) == ["bench-lan.png", "bench-wan.png"]
    assert "](img/bench-wan.png)" in head
