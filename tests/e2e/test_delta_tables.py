"""Delta tables through a mount (issue: Delta table awareness).

Real tables written by deltalake and Spark (tests/fixtures/delta/, with the
facts their writers' own readers report in <table>.expected.json, and tables
written here), uploaded to moto and mounted:

* .sieve/tables/TABLE/snapshot.json lists what the writers' readers list;
* hints that name their table bind to its logical schema (column mapping),
  use partition values and deletion vectors, and coexist for two tables of
  one mount; deltalake and Spark read the same rows through the view, the
  plain path and the local copy;
* --version and --timestamp show an older version to unmodified readers;
* a corrupt deletion vector or checkpoint gives ordinary reads or a clear
  error, never other rows.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import s3env
import viewdata as vd

REPO = s3env.REPO
FIXTURES = REPO / "tests" / "fixtures" / "delta"
TABLES = ["rs_partitioned", "rs_compaction", "spark_dv", "spark_v2_checkpoint", "spark_multipart",
          "spark_colmap_name", "spark_colmap_id", "spark_compaction"]


def table_objects(name: str, prefix: str, root: Path = FIXTURES) -> dict:
    src = root / name
    return {f"{prefix}/{p.relative_to(src)}": p.read_bytes() for p in src.rglob("*") if p.is_file()}


def expected(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.expected.json").read_text())


def deltalake_rows(path, sql="SELECT * FROM t", version=None) -> list:
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder
    dt = DeltaTable(str(path), version=version)
    rows = pa.table(QueryBuilder().register("t", dt).execute(sql).read_all()).to_pylist()
    return sorted((json.dumps(r, sort_keys=True, default=str) for r in rows))


@pytest.fixture(scope="module")
def fixture_bucket(request, s3):
    objs = {}
    for t in TABLES:
        objs.update(table_objects(t, f"w/{t}"))
    name = f"sv-delta-fixtures-{os.getpid()}"
    s3.create_bucket(Bucket=name)
    s3env.parallel_put(s3, name, objs)
    return name


@pytest.mark.asan
def test_snapshot_json_lists_what_the_writers_list(fixture_bucket, mount):
    m = mount(bucket=fixture_bucket)
    for t in TABLES:
        doc = json.loads((m.mp / ".sieve" / "tables" / "w" / t / "snapshot.json").read_text())
        exp = expected(t)
        latest = exp["versions"][str(exp["latest_version"])]
        assert doc["table"] == f"w/{t}"
        assert doc["version"] == exp["latest_version"], t
        assert doc["views"]["readable"], (t, doc["views"])
        assert doc["column_mapping"] == (exp.get("column_mapping_mode") or "none"), t
        assert doc["partition_columns"] == exp["partition_columns"], t
        got = {f["path"]: f for f in doc["files"]}
        want = {f["path"]: f for f in latest["files"]}
        assert set(got) == set(want), t
        for p, f in want.items():
            assert got[p]["size"] == f["size"], (t, p)
            assert got[p]["deletion_vector_cardinality"] == f["dv_cardinality"], (t, p)
            if f.get("num_records") is not None:
                assert got[p]["num_records"] == f["num_records"], (t, p)
            assert got[p]["partition_values"] == f["partition_values_logical"], (t, p)
        names = {(s["name"], s["physical_name"]) for s in doc["schema"]}
        assert {(s["logical"], s["physical"]) for s in exp["schema"]} <= names, t
    # every table seen is listed
    listed = sorted(os.listdir(m.mp / ".sieve" / "tables" / "w"))
    assert listed == sorted(TABLES)


# -- views that name their table -----------------------------------------------------------------
VIEW_CASES = [
    # table, hint where (logical names), columns, the same query in SQL
    ("spark_dv", "grp = 'f1' OR val > 60", ["row_id", "grp", "val"],
     "SELECT row_id, grp, val FROM t WHERE grp = 'f1' OR val > 60"),
    ("spark_colmap_name", "region = 'p1' AND id > 1", ["id", "new name", "info.bee", "region"],
     "SELECT id, \"new name\", region FROM t WHERE region = 'p1' AND id > 1"),
    ("spark_colmap_id", "region IS NULL OR id >= 2", ["id", "new name", "region"],
     "SELECT id, \"new name\", region FROM t WHERE region IS NULL OR id >= 2"),
    ("rs_partitioned", "part = 'x=1%/y' OR part IS NULL OR id = 3", ["id", "part", "v"],
     "SELECT id, part, v FROM t WHERE part = 'x=1%/y' OR part IS NULL OR id = 3"),
    ("spark_v2_checkpoint", "id > 2", None, "SELECT * FROM t WHERE id > 2"),
]


@pytest.mark.asan
@pytest.mark.parametrize("table,where,columns,sql", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_deltalake_reads_the_same_through_a_table_view(fixture_bucket, mount, table, where, columns, sql):
    m = mount(bucket=fixture_bucket, args=vd.EVERY_PARTIAL)
    doc = {"table": f"w/{table}", "where": where}
    if columns:
        doc["columns"] = columns
    r = vd.write_hint(m.mp, "q", doc)
    assert r.ok, r.error_text
    view = vd.view_path(m.mp, "q")
    assert (view / "_delta_log").is_dir(), "the view shows the table's directory"
    want = deltalake_rows(FIXTURES / table, sql)
    assert want, "the query selects rows"
    assert deltalake_rows(view, sql) == want
    assert deltalake_rows(m.mp / "w" / table, sql) == want
    st = vd.view_stats(m.mp, "q")
    data = [f for f in st["files"] if f["path"].endswith(".parquet") and "_delta_log" not in f["path"]]
    assert data and all(f.get("why_real") in (None, "") for f in data), data


def test_deletion_vectors_leave_the_selection_whole_partitions_exclude_files(fixture_bucket, mount):
    """A deletion vector does not shrink a file's selection (a reader of
    another version may not delete those rows: docs/delta.md, "Views across
    versions"); a file its partition values exclude is selected empty without
    reading its filter column."""
    m = mount(bucket=fixture_bucket, args=vd.EVERY_PARTIAL)
    exp = expected("spark_dv")
    latest = exp["versions"][str(exp["latest_version"])]
    dv_files = {f["path"]: f for f in latest["files"] if f["dv_cardinality"]}
    assert dv_files
    # no where: every row of the file is selected, deleted or not, so nothing is sieved
    assert vd.write_hint(m.mp, "all", {"table": "w/spark_dv", "columns": ["row_id", "val"]}).ok
    import pyarrow.parquet as pq
    for p in dv_files:
        assert pq.read_table(vd.view_path(m.mp, "all") / p) == pq.read_table(FIXTURES / "spark_dv" / p)
    st = {f["path"].split("/")[-1]: f for f in vd.view_stats(m.mp, "all")["files"]}
    for p, f in dv_files.items():
        assert st[p]["selected_rows"] == f["num_records"], (p, st[p])
    assert vd.synthesized(vd.view_stats(m.mp, "all")) == 0
    # partitions: region = 'zz' matches no partition; the files are selected empty
    assert vd.write_hint(m.mp, "none", {"table": "w/spark_colmap_name", "where": "region = 'zz'",
                                        "columns": ["id", "new name"]}).ok
    exp = expected("spark_colmap_name")
    for f in exp["versions"][str(exp["latest_version"])]["files"]:
        pq.read_table(vd.view_path(m.mp, "none") / f["path"]).num_rows
    files = [f for f in vd.view_stats(m.mp, "none")["files"] if f["path"].endswith(".parquet")
             and "_delta_log" not in f["path"]]
    assert files and all(f["selected_rows"] == 0 for f in files), files
    assert all(f.get("excluded_by") == "partition_values" for f in files), files


def test_the_logs_file_statistics_exclude_files(fixture_bucket, mount):
    """A file whose log statistics (minValues/maxValues of an integer
    column) leave out the predicate is selected empty from the log, before
    its filter column is read, and that column is still served real; the
    rest are evaluated; deltalake reads the same through the view as
    locally."""
    import pyarrow.parquet as pq
    m = mount(bucket=fixture_bucket, args=vd.EVERY_PARTIAL)
    assert vd.write_hint(m.mp, "q", {"table": "w/rs_compaction", "where": "id = 3", "columns": ["id", "v"]}).ok
    exp = expected("rs_compaction")
    latest = exp["versions"][str(exp["latest_version"])]["files"]
    for f in latest:
        pq.read_table(vd.view_path(m.mp, "q") / f["path"])
    st = {f["path"].split("/")[-1]: f for f in vd.view_stats(m.mp, "q")["files"]}
    local = {f["path"]: pq.read_table(FIXTURES / "rs_compaction" / f["path"]).column("id").to_pylist()
             for f in latest}
    assert any(3 in ids for ids in local.values()) and any(3 not in ids for ids in local.values())
    for p, ids in local.items():
        if 3 in ids:
            assert st[p].get("excluded_by") is None and st[p]["selected_rows"] == ids.count(3), (p, st[p])
        else:
            assert st[p].get("excluded_by") == "log_stats" and st[p]["selected_rows"] == 0, (p, st[p])
            # a reader that reads the file anyway (by hand, no statistics) filters real values:
            # the filter column is served real, the other columns may be synthesized
            got = pq.read_table(vd.view_path(m.mp, "q") / p)
            assert got.column("id").to_pylist() == ids and 3 not in got.column("id").to_pylist(), (p, ids)
    sql = "SELECT id, v FROM t WHERE id = 3"
    assert deltalake_rows(vd.view_path(m.mp, "q"), sql) == deltalake_rows(FIXTURES / "rs_compaction", sql)


# -- reference tables of the Delta and delta-rs projects ---------------------------------------
REFERENCE = FIXTURES / "reference"
REFERENCE_CASES = [  # table, a where on it, the same in SQL
    ("dv-partitioned-with-checkpoint", "col1 > 3 OR part = 0", "SELECT * FROM t WHERE col1 > 3 OR part = 0"),
    ("dv-with-columnmapping", "col1 > 3 OR part = 0", "SELECT * FROM t WHERE col1 > 3 OR part = 0"),
    ("table-with-dv-small", "value > 2", "SELECT * FROM t WHERE value > 2"),
]


@pytest.mark.parametrize("table,where,sql", REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_the_reference_deletion_vector_tables(s3, bucket, mount, table, where, sql):
    """The projects' own tables with deletion vectors (tests/fixtures/delta/
    reference/README.md): the snapshot lists what deltalake lists, a view
    without a where serves them real, and deltalake reads the same rows
    through a view with a where, the plain path and the local copy."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import DeltaTable
    b = bucket(table_objects(table, f"ref/{table}", root=REFERENCE))
    m = mount(bucket=b, args=vd.EVERY_PARTIAL)
    dt = DeltaTable(str(REFERENCE / table))
    acts = pa.table(dt.get_add_actions(flatten=True))
    want_files = sorted(zip(acts["path"].to_pylist(), acts["size_bytes"].to_pylist()))
    os.listdir(m.mp / "ref" / table)  # the table is seen
    snap = json.loads((m.mp / ".sieve" / "tables" / "ref" / table / "snapshot.json").read_bytes())
    assert snap["version"] == dt.version()
    assert sorted((f["path"], f["size"]) for f in snap["files"]) == want_files

    # without a where or columns there is nothing to sieve, deletion vectors or not: served real
    assert vd.write_hint(m.mp, "all", {"table": f"ref/{table}"}).ok
    for f in snap["files"]:
        assert (vd.view_path(m.mp, "all") / f["path"]).read_bytes() == (REFERENCE / table / f["path"]).read_bytes()
    st = vd.view_stats(m.mp, "all")["files"]
    assert st and all(f["state"] == "real" and "selects every row" in f["why_real"] for f in st), st

    assert vd.write_hint(m.mp, "q", {"table": f"ref/{table}", "where": where}).ok
    want = deltalake_rows(REFERENCE / table, sql)
    assert want
    assert deltalake_rows(vd.view_path(m.mp, "q"), sql) == want
    assert deltalake_rows(m.mp / "ref" / table, sql) == want


def test_two_tables_of_one_mount_each_get_their_view(fixture_bucket, mount):
    m = mount(bucket=fixture_bucket)
    a = vd.write_hint(m.mp, "a", {"table": "w/spark_dv", "where": "val > 10", "columns": ["row_id"]})
    b = vd.write_hint(m.mp, "b", {"table": "w/rs_partitioned", "where": "part = 'a'", "columns": ["id"]})
    assert a.ok and b.ok, (a.error_text, b.error_text)
    assert (vd.view_path(m.mp, "a") / "_delta_log").is_dir() and (vd.view_path(m.mp, "b") / "_delta_log").is_dir()
    assert sorted(os.listdir(vd.view_path(m.mp, "b"))) == sorted(os.listdir(m.mp / "w" / "rs_partitioned"))


def test_hints_that_do_not_fit_their_table_are_refused(fixture_bucket, s3, bucket, mount):
    m = mount(bucket=fixture_bucket)
    r = vd.write_hint(m.mp, "u", {"table": "w/spark_colmap_name", "where": "nope = 1"})
    assert not r.ok and "unknown column 'nope'" in r.error_text and "spark_colmap_name" in r.error_text, r.error_text
    r = vd.write_hint(m.mp, "p", {"table": "w/spark_colmap_name", "columns": ["col-1"]})
    assert not r.ok and "unknown column" in r.error_text, r.error_text   # physical names are not logical ones
    r = vd.write_hint(m.mp, "d", {"table": "w/no_such_table", "where": "id > 1"})
    assert not r.ok and "no directory" in r.error_text, r.error_text
    r = vd.write_hint(m.mp, "t", {"table": "w/spark_dv", "where": "grp > 3"})
    assert not r.ok and "cannot compare" in r.error_text, r.error_text
    # a reader feature views cannot honour: refused with its name
    objs = table_objects("rs_partitioned", "future")
    key = "future/_delta_log/00000000000000000006.json"
    objs[key] = (b'{"protocol":{"minReaderVersion":3,"minWriterVersion":7,'
                 b'"readerFeatures":["someFutureFeature"],"writerFeatures":["someFutureFeature"]}}\n')
    m2 = mount(bucket=bucket(objs))
    r = vd.write_hint(m2.mp, "f", {"table": "future", "where": "id > 1"})
    assert not r.ok and "someFutureFeature" in r.error_text, r.error_text
    doc = json.loads((m2.mp / ".sieve" / "tables" / "future" / "snapshot.json").read_text())
    assert doc["version"] == 6 and not doc["views"]["readable"] and "someFutureFeature" in doc["views"]["reason"]


def test_cli_hint_names_the_table_by_its_path(fixture_bucket, mount, run_cli):
    m = mount(bucket=fixture_bucket)
    r = run_cli("hint", str(m.mp / "w" / "spark_dv"), "c", "--where", "val > 50", "--columns", "row_id,val")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{m.mp}/.sieve/views/c"
    assert json.loads((m.mp / ".sieve" / "hints" / "c.json").read_text())["table"] == "w/spark_dv"
    sql = "SELECT row_id, val FROM t WHERE val > 50"
    assert deltalake_rows(m.mp / ".sieve" / "views" / "c", sql) == deltalake_rows(FIXTURES / "spark_dv", sql)
    r = run_cli("hint", str(m.mp), "c2", "--table", "w/spark_dv", "--where", "nope > 1")
    assert r.returncode == 1 and "unknown column" in r.stderr, r.stderr


# -- versions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("table,version", [("rs_partitioned", 3), ("spark_dv", 5), ("spark_colmap_name", 4),
                                           ("spark_v2_checkpoint", 4), ("spark_compaction", 5)])
def test_version_shows_that_version_to_readers(fixture_bucket, mount, table, version):
    m = mount(bucket=fixture_bucket, args=("--version", str(version)))
    root = m.mp / "w" / table
    from deltalake import DeltaTable
    assert DeltaTable(str(root)).version() == version
    assert deltalake_rows(root) == deltalake_rows(FIXTURES / table, version=version)
    assert not (root / "_delta_log" / "_last_checkpoint").exists()
    assert all(int(n[:20]) <= version for n in os.listdir(root / "_delta_log") if n[:20].isdigit())
    doc = json.loads((m.mp / ".sieve" / "tables" / "w" / table / "snapshot.json").read_text())
    assert doc["version"] == version
    want = {f["path"] for f in expected(table)["versions"][str(version)]["files"]}
    assert {f["path"] for f in doc["files"]} == want
    # a view of that version
    assert vd.write_hint(m.mp, "v", {"table": f"w/{table}"}).ok
    assert deltalake_rows(vd.view_path(m.mp, "v")) == deltalake_rows(FIXTURES / table, version=version)


def test_timestamp_shows_the_version_of_that_time(tmp_path, s3, bucket, mount):
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake
    local = tmp_path / "t"
    for i in range(3):
        write_deltalake(str(local), pa.table({"id": pa.array([i * 10 + k for k in range(5)], pa.int64())}),
                        mode="append")
    name = bucket()
    # commit by commit, a second apart: the store's times order the versions
    times = []
    for v in range(3):
        commit = local / "_delta_log" / f"{v:020d}.json"
        adds = [json.loads(ln)["add"]["path"] for ln in commit.read_text().splitlines() if '"add"' in ln]
        for a in adds:
            s3env.upload_file(s3, name, f"t/{a}", local / a)
        s3env.upload_file(s3, name, f"t/_delta_log/{commit.name}", commit)
        times.append(s3.head_object(Bucket=name, Key=f"t/_delta_log/{commit.name}")["LastModified"])
        time.sleep(1.2)
    at = times[1].strftime("%Y-%m-%dT%H:%M:%SZ")
    m = mount(bucket=name, args=("--timestamp", at))
    assert DeltaTable(str(m.mp / "t")).version() == 1
    assert deltalake_rows(m.mp / "t") == deltalake_rows(local, version=1)
    doc = json.loads((m.mp / ".sieve" / "tables" / "t" / "snapshot.json").read_text())
    assert doc["version"] == 1


# -- bad logs ------------------------------------------------------------------------------------
def test_a_view_never_reads_deletion_vectors(s3, bucket, mount):
    """A view's selection does not depend on a file's deletion vector, so a
    corrupt one does not change what the view serves: the file is sieved
    like any other, every row its where selects kept, deleted or not."""
    import pyarrow.parquet as pq
    objs = table_objects("spark_dv", "t")
    exp = expected("spark_dv")
    f = next(f for f in exp["versions"][str(exp["latest_version"])]["files"]
             if f["deletion_vector"] and f["deletion_vector"]["storageType"] == "u")
    dv_key = f"t/{f['deletion_vector']['file']}"
    data = bytearray(objs[dv_key])
    data[f["deletion_vector"]["offset"] + 4 + 6] ^= 0xFF  # inside the bitmap: the CRC no longer matches
    objs[dv_key] = bytes(data)
    m = mount(bucket=bucket(objs), args=vd.EVERY_PARTIAL)
    assert vd.write_hint(m.mp, "q", {"table": "t", "where": "val >= 0", "columns": ["row_id", "val"]}).ok
    view = vd.view_path(m.mp, "q")
    assert (view / f["path"]).read_bytes() == (m.mp / "t" / f["path"]).read_bytes()
    st = {x["path"].split("/")[-1]: x for x in vd.view_stats(m.mp, "q")["files"]}
    vals = pq.read_table(FIXTURES / "spark_dv" / f["path"]).column("val").to_pylist()
    assert st[f["path"]]["state"] == "view", st[f["path"]]
    assert st[f["path"]]["selected_rows"] == sum(1 for v in vals if v is not None and v >= 0), st[f["path"]]


def test_column_mapping_id_finds_columns_by_field_id(bucket, mount):
    """Mode id: a data file whose column names are not the physical names
    but whose field ids are is read by field id (the view binds the hint to
    it rather than serving it real)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    exp = expected("spark_colmap_id")
    latest = exp["versions"][str(exp["latest_version"])]
    objs = table_objects("spark_colmap_id", "t")
    renamed = 0
    for f in latest["files"]:
        t = pq.read_table(FIXTURES / "spark_colmap_id" / f["path"])
        fields = [pa.field(f"renamed_{i}", fd.type, fd.nullable, fd.metadata) for i, fd in enumerate(t.schema)]
        out = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_arrays(t.columns, schema=pa.schema(fields)), out, data_page_size=64)
        objs[f"t/{f['path']}"] = out.getvalue().to_pybytes()
        renamed += 1
    m = mount(bucket=bucket(objs), args=vd.EVERY_PARTIAL)
    assert vd.write_hint(m.mp, "q", {"table": "t", "where": "id >= 2", "columns": ["id", "new name"]}).ok
    for f in latest["files"]:
        pq.read_table(vd.view_path(m.mp, "q") / f["path"])
    st = [x for x in vd.view_stats(m.mp, "q")["files"] if x["path"].endswith(".parquet") and "_delta_log" not in x["path"]]
    assert len(st) == renamed and all(x.get("why_real") in (None, "") for x in st), st
    ids = {f["path"]: pq.read_table(FIXTURES / "spark_colmap_id" / f["path"]).column(0).to_pylist()
           for f in latest["files"]}
    for x in st:
        key = next(p for p in ids if x["path"].endswith(p))
        assert x["selected_rows"] == sum(1 for i in ids[key] if i is not None and i >= 2), (x, ids[key])


def test_a_deletion_vector_at_an_absolute_path_in_the_mount(s3, bucket, mount):
    """storageType 'p': the snapshot shows the version that moved a deletion
    vector to an s3:// URI, and the view sieves the file as any other (it
    never reads deletion vectors)."""
    exp = expected("spark_dv")
    latest = exp["latest_version"]
    f = next(f for f in exp["versions"][str(latest)]["files"]
             if f["deletion_vector"] and f["deletion_vector"]["storageType"] == "u")
    name = bucket()
    objs = table_objects("spark_dv", "t")
    d = f["deletion_vector"]
    u = {"storageType": "u", "pathOrInlineDv": d["pathOrInlineDv"], "offset": d["offset"],
         "sizeInBytes": d["sizeInBytes"], "cardinality": d["cardinality"]}
    p = dict(u, storageType="p", pathOrInlineDv=f"s3://{name}/t/{d['file']}")
    commit = (json.dumps({"remove": {"path": f["log_path"], "deletionTimestamp": 1, "dataChange": True,
                                     "deletionVector": u}}) + "\n" +
              json.dumps({"add": {"path": f["log_path"], "partitionValues": {}, "size": f["size"],
                                  "modificationTime": 1, "dataChange": True, "deletionVector": p}}) + "\n")
    objs[f"t/_delta_log/{latest + 1:020d}.json"] = commit.encode()
    s3env.parallel_put(s3, name, objs)
    m = mount(bucket=name, args=vd.EVERY_PARTIAL)
    snap = json.loads((m.mp / ".sieve" / "tables" / "t" / "snapshot.json").read_text())
    assert snap["version"] == latest + 1
    assert vd.write_hint(m.mp, "q", {"table": "t", "where": "val > 10", "columns": ["row_id", "val"]}).ok
    import pyarrow.parquet as pq
    got = pq.read_table(vd.view_path(m.mp, "q") / f["path"]).to_pylist()
    want = pq.read_table(FIXTURES / "spark_dv" / f["path"]).to_pylist()
    assert [r for r in got if r["val"] > 10] == [r for r in want if r["val"] > 10]
    st = {x["path"].split("/")[-1]: x for x in vd.view_stats(m.mp, "q")["files"]}
    assert st[f["path"]].get("why_real") in (None, ""), st[f["path"]]
    assert st[f["path"]]["selected_rows"] == sum(1 for r in want if r["val"] > 10), st[f["path"]]


@pytest.mark.allow_stderr(r"checkpoint", r"table log", r"snapshot\.json")
def test_a_corrupt_checkpoint_is_a_clear_error(s3, bucket, mount):
    objs = table_objects("rs_partitioned", "t")
    key = "t/_delta_log/00000000000000000002.checkpoint.parquet"
    data = objs[key]
    objs[key] = data[:-60] + b"\xff" * 52 + data[-8:]  # its footer: no longer a checkpoint
    m = mount(bucket=bucket(objs))
    with pytest.raises(OSError):
        (m.mp / ".sieve" / "tables" / "t" / "snapshot.json").read_text()
    r = vd.write_hint(m.mp, "q", {"table": "t", "where": "id > 1"})
    assert not r.ok and "checkpoint" in r.error_text, r.error_text
    assert "checkpoint" in m.stderr()


# -- Spark ---------------------------------------------------------------------------------------
SPARK_READ_DELTA = r"""
import json, sys
from pyspark.sql import SparkSession
pkg, cases = sys.argv[1], json.loads(sys.argv[2])
spark = (SparkSession.builder.master("local[2]").appName("sievefs-e2e-delta")
         .config("spark.ui.enabled", "false").config("spark.jars.packages", pkg)
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.shuffle.partitions", "2").config("spark.ui.showConsoleProgress", "false")
         .config("spark.databricks.delta.snapshotPartitions", "1").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
out = {}
for name, c in cases.items():
    res = {}
    for label, path in c["paths"].items():
        try:
            reader = spark.read.format("delta")
            if label in c.get("version_as_of", {}):
                reader = reader.option("versionAsOf", c["version_as_of"][label])
            df = reader.load(path).where(c["where"]).select(*c["columns"])
            res[label] = sorted(json.dumps(r.asDict(), sort_keys=True, default=str) for r in df.collect())
        except Exception as e:
            res[label] = {"error": str(e)[:2000]}
    out[name] = res
print("RESULT " + json.dumps(out), flush=True)
"""


@pytest.mark.timeout(900)
def test_spark_reads_the_same_through_table_views(fixture_bucket, mount):
    sys.path.insert(0, str(REPO / "scripts" / "lib"))
    import bench_data
    found = bench_data.spark_python()
    if found is None:
        pytest.fail("no Spark with delta-spark (scripts/setup creates tests/e2e/.data/spark-venv; Java 17 needed)")
    py, _, pkg = found
    m = mount(bucket=fixture_bucket, args=vd.EVERY_PARTIAL)
    cases = {}
    for table, where, columns, _ in VIEW_CASES:
        if not table.startswith("spark"):
            continue
        name = f"s_{table}"
        doc = {"table": f"w/{table}", "where": where}
        if columns:
            doc["columns"] = columns
        assert vd.write_hint(m.mp, name, doc).ok
        cols = [c for c in (columns or ["*"]) if "." not in c]
        cases[name] = {"where": where.replace("\"", "`"), "columns": [f"`{c}`" if c != "*" else c for c in cols],
                       "paths": {"local": str(FIXTURES / table), "view": str(vd.view_path(m.mp, name)),
                                 "plain": str(m.mp / "w" / table)}}
    # Time travel: a mount at --version 5 reads as Spark's own versionAsOf 5.
    old = mount(bucket=fixture_bucket, args=("--version", "5"))
    cases["time_travel"] = {"where": "val >= 0", "columns": ["row_id", "grp", "val"], "version_as_of": {"local": 5},
                            "paths": {"local": str(FIXTURES / "spark_dv"), "view": str(old.mp / "w" / "spark_dv"),
                                      "plain": str(old.mp / "w" / "spark_dv")}}
    r = subprocess.run([py, "-c", SPARK_READ_DELTA, pkg, json.dumps(cases)], capture_output=True, text=True,
                       timeout=800, env=bench_data.spark_local_env())
    assert r.returncode == 0, r.stderr[-4000:]
    res = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")][-1][len("RESULT "):])
    for name, got in res.items():
        assert isinstance(got["local"], list) and got["local"], (name, got["local"])
        assert got["view"] == got["local"], (name, got["view"])
        assert got["plain"] == got["local"], (name, got["plain"])


SPARK_WRITE_DV = r"""
import sys
from pyspark.sql import SparkSession, functions as F
pkg, dv_path, part_path = sys.argv[1], sys.argv[2], sys.argv[3]
spark = (SparkSession.builder.master("local[2]").appName("sievefs-e2e-dv")
         .config("spark.ui.enabled", "false").config("spark.jars.packages", pkg)
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.shuffle.partitions", "2").config("spark.ui.showConsoleProgress", "false")
         .config("spark.hadoop.parquet.page.size", "8192").config("spark.hadoop.parquet.page.row.count.limit", "2000")
         .config("spark.hadoop.parquet.enable.dictionary", "false")
         .config("spark.databricks.delta.snapshotPartitions", "1").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
df = spark.range(60000).coalesce(1).select(F.col("id"), (F.col("id") * 7 % 1000).alias("v"),
                                           (F.col("id") * 1.5).alias("x"))
df.write.format("delta").option("delta.enableDeletionVectors", "true").save(dv_path)
spark.sql(f"DELETE FROM delta.`{dv_path}` WHERE id BETWEEN 10000 AND 29999 OR id % 97 = 0")
pdf = spark.range(40000).select(F.col("id"), (F.col("id") % 2).cast("string").alias("p"), (F.col("id") * 3).alias("y"))
pdf.repartition(1).write.format("delta").partitionBy("p").save(part_path)
print("OK", flush=True)
"""


@pytest.mark.timeout(900)
def test_deletion_vectors_and_partitions_with_pages_unfetched(tmp_path, bucket, mount):
    """Spark tables large enough to have many pages per column: the view
    sieves a file with a deletion vector by its where alone (its deleted
    rows stay selected, so readers of the version before the delete read
    them), synthesizes every page of files the partition values exclude, and
    readers read the same rows."""
    sys.path.insert(0, str(REPO / "scripts" / "lib"))
    import bench_data
    found = bench_data.spark_python()
    if found is None:
        pytest.fail("no Spark with delta-spark (scripts/setup creates tests/e2e/.data/spark-venv; Java 17 needed)")
    py, _, pkg = found
    dv, part = tmp_path / "dv", tmp_path / "part"
    r = subprocess.run([py, "-c", SPARK_WRITE_DV, pkg, str(dv), str(part)], capture_output=True, text=True,
                       timeout=800, env=bench_data.spark_local_env())
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-4000:]
    objs = table_objects("dv", "t/dv", tmp_path)
    objs.update(table_objects("part", "t/part", tmp_path))
    m = mount(bucket=bucket(objs), args=vd.EVERY_PARTIAL)
    assert vd.write_hint(m.mp, "d", {"table": "t/dv", "where": "v < 5", "columns": ["id", "v", "x"]}).ok
    sql = "SELECT id, v, x FROM t WHERE v < 5"
    want = deltalake_rows(dv, sql)
    assert len(want) > 100
    assert deltalake_rows(vd.view_path(m.mp, "d"), sql) == want
    st = vd.view_stats(m.mp, "d")
    assert vd.synthesized(st) > 0, st
    f = [x for x in st["files"] if x["path"].endswith(".parquet") and "_delta_log" not in x["path"]]
    # the deleted rows with v < 5 stay selected: a reader of version 0 reads them
    import pyarrow.parquet as pq
    vs = pq.read_table(dv / f[0]["path"].split("/", 2)[2]).column("v").to_pylist()
    assert len(f) == 1 and f[0]["selected_rows"] == sum(1 for v in vs if v < 5) > len(want), f
    assert deltalake_rows(vd.view_path(m.mp, "d"), sql, version=0) == deltalake_rows(dv, sql, version=0)
    # partitions: the p = '1' file is selected empty; a reader that reads it anyway gets its footer real
    assert vd.write_hint(m.mp, "p", {"table": "t/part", "where": "p = '0' AND y < 6000",
                                     "columns": ["id", "y"]}).ok
    sql = "SELECT id, y FROM t WHERE p = '0' AND y < 6000"
    want = deltalake_rows(part, sql)
    assert deltalake_rows(vd.view_path(m.mp, "p"), sql) == want and want
    import pyarrow.parquet as pq
    other = next((vd.view_path(m.mp, "p") / "p=1").glob("*.parquet"))
    assert pq.ParquetFile(other).metadata.num_rows == 20000  # the footer is real
    pq.read_table(other)  # pages synthesized, still a valid file
    st = {x["path"].split("/")[-2]: x for x in vd.view_stats(m.mp, "p")["files"]
          if x["path"].endswith(".parquet") and "_delta_log" not in x["path"]}
    assert st["p=1"]["selected_rows"] == 0 and st["p=1"]["pages_synthesized"] > 0, st["p=1"]
