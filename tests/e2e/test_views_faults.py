"""Views read by real readers (DuckDB, pyarrow) while the server misbehaves
(tests/e2e/faultproxy.py in front of moto): 5xx, truncated and short
bodies, wrong Content-Range. Every query gives the rows the same query
gives on the local file, or fails with a clean I/O error (EIO reaching the
reader); never other rows, and never an error that says the reader was
served bytes that are not the file's (a corrupt page, a bad footer).

Each case mounts afresh (empty cache), accepts the hint while the server
behaves, then turns the fault on for the table's file, so the view's
planning GETs and the pages it serves meet it. Transient faults must end
in the local rows; permanent ones in the local rows (what was already
fetched) or EIO. The view synthesizes pages (--request-cost 0: every page
eligible is planned), so wrong bytes would show as wrong rows."""
from __future__ import annotations

import errno
import re

import pytest

import s3env
import viewdata as vd

pytestmark = pytest.mark.allow_stderr(r".")  # the daemon reports every failed GET

N = 60_000
KEY = "tbl/part-00000.parquet"
WHERE = "sel < 300"        # 300 scattered rows of 60,000
COLS = ["id", "sel", "i64", "f64", "s", "dec", "ts"]
# --max-connections 4: the proxy opens a connection to moto for every
# request, and a view's planning rounds at 64 in flight overflow moto's
# listen queue (SYNs dropped and resent after 1, 3, 7 s): the planning GETs
# then time out without any injected fault and the view serves real pages.
ARGS = vd.EVERY_PARTIAL + ("--retry-budget", "2s", "--read-timeout", "20s", "--max-connections", "4")
# A reader's error that reports an I/O error, not a decoding one.
CLEAN_ERROR = re.compile(r"Input/output error|errno 5\b|\[Errno 5\]|EIO")

CASES = [
    # case, transient?, fault kwargs
    ("503 burst x4", True, dict(action="status", status=503, times=4)),
    ("500 for good", False, dict(action="status", status=500, code="InternalError")),
    ("truncated body x2", True, dict(action="truncate_body", times=2)),
    ("short 206 body, for good", False, dict(action="short_body")),
    ("shifted Content-Range", False, dict(action="content_range", mode="shift")),
    ("wrong Content-Range total", False, dict(action="content_range", mode="total")),
    ("Content-Range garbage", False, dict(action="content_range", mode="garbage")),
]


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    import pyarrow.parquet as pq
    p = tmp_path_factory.mktemp("views-faults") / "part-00000.parquet"
    t = vd.make_table(N, "views-faults", nullable=True, incompressible=True)
    pq.write_table(t, p, row_group_size=20_000, compression="NONE", use_dictionary=False,
                   data_page_size=32 << 10, write_page_index=True)
    return p


def duckdb_rows(path):
    import duckdb
    con = duckdb.connect(config={"threads": 2})
    try:
        return vd.norm(con.execute(f"SELECT {', '.join(COLS)} FROM read_parquet('{path}') WHERE {WHERE} "
                                   f"ORDER BY id").fetchall())
    finally:
        con.close()


def pyarrow_rows(path):
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq
    t = pq.read_table(path, columns=COLS, filters=ds.field("sel") < 300, pre_buffer=False)
    return vd.rows_of(t, keys=("id",))


READERS = {"duckdb": duckdb_rows, "pyarrow": pyarrow_rows}


def read(reader, path):
    """(rows, None) or (None, the error's text)."""
    try:
        return READERS[reader](path), None
    except Exception as e:  # noqa: BLE001 - the kind of error is what is checked
        if isinstance(e, OSError) and e.errno not in (None, errno.EIO):
            return None, f"{type(e).__name__} errno {e.errno}: {e}"
        return None, f"{type(e).__name__}: {e}"


@pytest.mark.timeout(240)
@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case,transient,fault", CASES, ids=[c[0] for c in CASES])
def test_view_under_faults(s3, bucket, mount, proxy, table_file, reader, case, transient, fault):
    want = READERS[reader](table_file)
    assert len(want) == 300
    b = bucket({})
    s3env.upload_file(s3, b, KEY, table_file)
    m = mount(bucket=b, endpoint=proxy.endpoint, args=ARGS)
    hint = vd.write_hint(m.mp, "q", {"where": WHERE, "columns": COLS})
    assert hint.ok, hint
    view_file = vd.view_path(m.mp, "q") / KEY
    fault = dict(fault)
    f = proxy.add("get", fault.pop("action"), key=KEY, **fault)
    got, err = read(reader, view_file)
    assert f.hits > 0, "the fault never triggered: the view read nothing from the server"
    if err is not None:
        assert not transient, f"{case}: a transient fault reached the reader: {err}"
        assert CLEAN_ERROR.search(err), f"{case}: {reader} failed with something else than EIO: {err}"
    else:
        assert got == want, f"{case}: {reader} read WRONG ROWS through the view: {vd.first_diff(got, want)}"
    # The mount serves the right rows once the server behaves again.
    proxy.clear()
    assert m.alive(), "daemon died"
    got2, err2 = read(reader, view_file)
    assert err2 is None and got2 == want, err2 or vd.first_diff(got2, want)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_the_view_plans_pages_without_faults(s3, bucket, mount, proxy, table_file, reader):
    """The same read with the server behaving: the local rows, and the view
    served partial or synthesized pages (so the cases above met the faults
    on the planning path, not only on plain reads)."""
    b = bucket({})
    s3env.upload_file(s3, b, KEY, table_file)
    m = mount(bucket=b, endpoint=proxy.endpoint, args=ARGS)
    assert vd.write_hint(m.mp, "q", {"where": WHERE, "columns": COLS}).ok
    got, err = read(reader, vd.view_path(m.mp, "q") / KEY)
    assert err is None and got == READERS[reader](table_file), err or "wrong rows"
    st = vd.view_stats(m.mp, "q")
    print(reader, {k: v for k, v in st.items() if k != "files"})
    assert st["pages_synthesized"] + st["pages_partial"] > 0, st
