"""Tables of many small files through the plain path (issue 45): a Delta
table partitioned into many directories of a file or two, read by DuckDB and
pyarrow over its active files, as the bench's appends table. The results
must equal the same readers on the local files; the mount's counters show
the partitions listed together (not one listing per directory) and the
footers, and for a reader of the data its chunks, fetched before the reader
opened the files; for a view whose hint names the table, before the reader
opened any. Over s3link at `wan`, where a round trip costs 200 ms."""
import json
import time

import duckdb
import pyarrow as pa
import pyarrow.dataset as pads
import pytest

DAYS = 24
APPENDS = 2


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory):
    """A Delta table of DAYS x APPENDS small files, one partition directory
    per day. ({key: local path} under t/, active files relative to t/, the
    local table directory.)"""
    from deltalake import DeltaTable, write_deltalake
    local = tmp_path_factory.mktemp("partitioned") / "t"
    rows = 2000
    for a in range(APPENDS):
        n = rows * DAYS
        write_deltalake(str(local), pa.table({
            "day": pa.array([f"d{i % DAYS:03d}" for i in range(n)]),
            "id": pa.array(range(a * n, (a + 1) * n), pa.int64()),
            "v": pa.array([(i * 7919) % 1000003 for i in range(n)], pa.int64()),
            "s": pa.array([f"row {i} of append {a}" for i in range(n)]),
        }), mode="append", partition_by=["day"])
    files = sorted(DeltaTable(str(local)).file_uris())
    rel = [f.split("/t/", 1)[1] for f in files]
    objs = {f"t/{p.relative_to(local).as_posix()}": p for p in local.rglob("*") if p.is_file()}
    return objs, rel, local


def duck(paths, sql):
    listing = "[" + ", ".join("'" + p + "'" for p in paths) + "]"
    con = duckdb.connect()
    con.execute("SET threads=2")
    return con.execute(sql.replace("{files}", listing)).fetchall()


def test_many_partitions_and_files(s3link_wan, s3link_bucket, mount, partitioned):
    objs, rel, local = partitioned
    assert len(rel) == DAYS * APPENDS
    b = s3link_bucket(s3link_wan, objs)
    m = mount(bucket=b, prefix="t", endpoint=s3link_wan.endpoint)
    # 1. a point query: the readers skip every other file by its statistics
    point = "SELECT id, v, s FROM read_parquet({files}) WHERE id = 12345"
    got = duck([str(m.mp / r) for r in rel], point)
    assert got == duck([str(local / r) for r in rel], point) and len(got) == 1
    st = m.stats()
    # the table directory and its partitions: a few listings, not one per day
    assert st["s3_list_requests"] <= 4, st
    # the footers came ahead of the opens, but for the first few: DuckDB's
    # two threads open files at once, before the window is known
    assert st["table_ahead_hits"] >= len(rel) - 8, st
    assert st["table_ahead_tails"] <= len(rel), st
    # 2. a scan of every file's data: the chunks of its columns come ahead too
    scan = "SELECT count(*), sum(v), min(s), max(s), sum(id) FROM read_parquet({files}) WHERE v % 3 = 1"
    assert duck([str(m.mp / r) for r in rel], scan) == duck([str(local / r) for r in rel], scan)
    st = m.stats()
    assert st["table_ahead_data_files"] >= 1 and st["table_ahead_data_hits"] >= 1, st
    # 3. pyarrow over the same files (pre_buffer), the whole table
    ds_mount = pads.dataset([str(m.mp / r) for r in rel], format="parquet")
    ds_local = pads.dataset([str(local / r) for r in rel], format="parquet")
    assert ds_mount.to_table().sort_by("id").equals(ds_local.to_table().sort_by("id"))
    # the partition directories show what S3 holds
    for day in range(DAYS):
        d = f"day=d{day:03d}"
        assert sorted(p.name for p in (m.mp / d).iterdir()) == sorted(p.name for p in (local / d).iterdir())
    json.dumps(st)  # the counters stay plain JSON


@pytest.mark.parametrize("hint", [["--where", "id = 12345", "--columns", "id,v,s"], ["--columns", "id,v,s"]],
                         ids=["where", "columns_only"])
def test_a_view_of_the_table_has_its_footers_before_the_first_open(s3link_wan, s3link_bucket, mount, run_cli,
                                                                   partitioned, hint):
    """The hint names the table: its files' tails are fetched when the hint
    is accepted, so that even the reader's first opens find their footers
    (without a where, no footer was read to accept it: one file's footer
    is read first, in the background, to learn how long the tails are)."""
    objs, rel, local = partitioned
    b = s3link_bucket(s3link_wan, objs)
    m = mount(bucket=b, endpoint=s3link_wan.endpoint)
    r = run_cli("hint", m.mp, "q", "--table", "t", *hint)
    assert r.returncode == 0, r
    view = r.stdout.strip()
    deadline = time.monotonic() + 30
    while m.stats()["table_ahead_tails"] < len(rel) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert m.stats()["table_ahead_tails"] == len(rel), m.stats()
    assert m.stats()["table_ahead_hits"] == 0, "no reader has opened a file yet"
    point = "SELECT id, v, s FROM read_parquet({files}) WHERE id = 12345"
    got = duck([f"{view}/{r}" for r in rel], point)
    assert got == duck([str(local / r) for r in rel], point) and len(got) == 1
    st = m.stats()
    assert st["table_ahead_hits"] >= len(rel) - 1, st  # the file the hint was checked against: its footer was read
    assert st["table_ahead_tails"] == len(rel), st
