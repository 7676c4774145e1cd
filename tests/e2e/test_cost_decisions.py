"""The cost model end to end: a mount measures its link (the warmup) and its
views decide with that profile. The server is tests/tools/s3link, which
emulates the link inside itself and answers thousands of GETs a second, as
S3 does (the session fixture s3link_wan in conftest.py; buckets are
directories of its root, no upload; s3link_lan for loopback). At `wan` (200 +- 20 ms, 150 Mbit/s) a
selective query over large pages reads them partially. On loopback (`lan`,
nothing emulated) a request costs about as many bytes as one of those pages
(about 1 ms at several hundred MB/s): the model sits near its boundary there
and either choice is right, so only what holds either way is asserted (one
decision per chunk, no more bytes than ordinary reads, the profile used).
Against moto, a few hundred GETs a second made every request costly and
loopback always read whole pages; S3-like request rates do not. The answer is the
reader's local answer every time. Decisions are read from NAME.stats'
chunk_reasons and page_reasons (docs/cost_model.md); only decisions and
bounds far from any boundary are asserted, never times."""
from __future__ import annotations

import contextlib
import json
import time

import pytest

import viewdata as vd

ROWS = 200_000          # two row groups of 100,000 rows
PAYLOAD_COLS = 24       # int64 and double: 800 KB a column chunk, one page each
KEY = "t/part-00000.parquet"
WHERE = "sel < 10"      # 10 rows scattered over the file (sel is a permutation of the rows)


def write_random_file(path, payload_cols: int, seed: int, **write_kw):
    """id, sel (a permutation of the rows) and payload_cols random int64 and
    double columns, ROWS rows in 100,000-row groups, written by pyarrow."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(seed)
    cols = {"id": pa.array(np.arange(ROWS, dtype=np.int64)),
            "sel": pa.array(((np.arange(ROWS, dtype=np.int64) * 104729) % ROWS).astype(np.int32))}
    for i in range(payload_cols):
        v = rng.integers(-2**62, 2**62, ROWS) if i % 2 else rng.uniform(-1e6, 1e6, ROWS)
        cols[f"c{i:02d}"] = pa.array(v)
    pq.write_table(pa.table(cols), path, row_group_size=100_000, write_page_index=True, **write_kw)
    return path


@pytest.fixture(scope="module")
def big_pages(tmp_path_factory):
    """A pyarrow file of 100,000-row groups, one page of 800 KB per column chunk
    (1 MiB page limit, 100,000 rows a page) and a page index."""
    return write_random_file(tmp_path_factory.mktemp("cost-decisions") / "part-00000.parquet", PAYLOAD_COLS, 11,
                             data_page_size=1 << 20, max_rows_per_page=100_000, use_dictionary=False,
                             compression="NONE")


def wait_profile(m, timeout=90.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        doc = json.loads((m.mp / ".sieve" / "profile").read_bytes())
        if doc["state"] != "running":
            assert doc["state"] == "done" and doc["valid"], doc
            return doc
        if time.monotonic() > deadline:
            pytest.fail(f"warmup still running after {timeout}s: {doc}")
        time.sleep(0.2)


@contextlib.contextmanager
def wan_view(srv, mount, b: str, where: str, cols: list):
    """A mount of bucket b on s3link at `wan`, its profile measured, and a
    view `q` of where and cols: yields (mount, profile)."""
    m = mount(bucket=b, endpoint=srv.endpoint, warmup="automatic", args=("--max-connections", "256"))
    prof = wait_profile(m)["profile"]
    assert vd.write_hint(m.mp, "q", {"where": where, "columns": cols}).ok
    yield m, prof


def duckdb_rows(query: str, view_file, local_file) -> tuple[list, list]:
    """query ({f}: the file) on the view's file and on the local one."""
    import duckdb
    con = duckdb.connect()
    try:
        return con.execute(query.format(f=view_file)).fetchall(), con.execute(query.format(f=local_file)).fetchall()
    finally:
        con.close()


QUERY = "SELECT id, " + ", ".join(f"c{i:02d}" for i in range(PAYLOAD_COLS)) + \
        " FROM read_parquet('{f}') WHERE " + WHERE + " ORDER BY id"


def run_query(path) -> list:
    import duckdb
    con = duckdb.connect(config={"threads": 2})
    try:
        return con.execute(QUERY.format(f=path)).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("link", ["wan", "loopback"])
def test_the_measured_link_decides(link, request, s3link_bucket, mount, big_pages):
    srv = request.getfixturevalue("s3link_wan" if link == "wan" else "s3link_lan")
    # The warmup samples files of at least 4 MiB: this one (about 40 MB).
    b = s3link_bucket(srv, {KEY: big_pages})
    m = mount(bucket=b, endpoint=srv.endpoint, warmup="automatic", args=("--max-connections", "256"))
    prof = wait_profile(m)["profile"]
    # With the projection named, every chunk of it is planned at once and
    # the file's pages share the planning rounds.
    cols = ["id"] + [f"c{i:02d}" for i in range(PAYLOAD_COLS)]
    hint = vd.write_hint(m.mp, "q", {"where": WHERE, "columns": cols})
    assert hint.ok, hint
    got = run_query(vd.view_path(m.mp, "q") / KEY)
    want = run_query(big_pages)
    assert got == want and len(want) == 10, vd.first_diff(got, want)
    st = vd.view_stats(m.mp, "q")
    pages, chunks = st["page_reasons"], st["chunk_reasons"]
    print(f"{link}: profile {prof}; view fetched {st['bytes_fetched']} of {st['ordinary_bytes']} B "
          f"in {st['requests']} planning requests; chunks {chunks}; pages {pages}")
    assert "no_profile" not in chunks, st
    # Every chunk of the projection (id and the payload, two row groups) planned or declined, once.
    assert chunks.get("filter_column") == 2, chunks
    assert chunks.get("planned", 0) + chunks.get("file_cost", 0) == 2 * (PAYLOAD_COLS + 1), chunks
    assert st["bytes_fetched"] <= st["ordinary_bytes"], st
    if link == "wan":
        # 10 rows of 200,000: partial reads save over 90 % at 200 ms and 150 Mbit/s.
        assert pages.get("partial", 0) > 0, (prof, {k: v for k, v in st.items() if k != "files"})
        assert st["bytes_fetched"] < st["ordinary_bytes"] / 4, st


DICT_COLS = 8


@pytest.fixture(scope="module")
def dictionary_pages(tmp_path_factory):
    """pyarrow's defaults as delta-rs and Spark write them: Snappy, dictionary
    pages (100,000 random values of 8 bytes: 800 KB dictionaries, under the
    1 MiB limit), data pages of dictionary indices, encoding stats, a page
    index; two row groups of 100,000 rows."""
    return write_random_file(tmp_path_factory.mktemp("cost-dictionaries") / "part-00000.parquet", DICT_COLS, 12,
                             compression="snappy")


def test_dictionary_pages_are_priced_before_their_data_pages(s3link_wan, s3link_bucket, mount, dictionary_pages):
    """At `wan`, a file whose data pages are all dictionary indices: the
    encoding stats make those pages real up front (`encoding`, never priced
    as partial reads), and each dictionary page is either kept in part or
    declined by the model (`saving`), once. Same rows as the local file."""
    import pyarrow.parquet as pq
    md = pq.ParquetFile(dictionary_pages).metadata
    assert all(md.row_group(g).column(c).has_dictionary_page
               for g in range(md.num_row_groups) for c in range(md.num_columns))
    b = s3link_bucket(s3link_wan, {KEY: dictionary_pages})
    cols = ["id"] + [f"c{i:02d}" for i in range(DICT_COLS)]
    # 100 rows spread over every data page: none is synthesized, each is real.
    where = "sel < 100"
    query = f"SELECT {', '.join(cols)} FROM read_parquet('{{f}}') WHERE {where} ORDER BY id"
    with wan_view(s3link_wan, mount, b, where, cols) as (m, prof):
        got, want = duckdb_rows(query, vd.view_path(m.mp, "q") / KEY, dictionary_pages)
        st = vd.view_stats(m.mp, "q")
    assert got == want and len(want) == 100, vd.first_diff(got, want)
    pages, chunks = st["page_reasons"], st["chunk_reasons"]
    print(f"profile {prof}; chunks {chunks}; pages {pages}; dictionary pages kept "
          f"{st.get('dictionary_pages_partial', 0)}")
    n_chunks = md.num_row_groups * (len(cols) + 1)       # the projection and the filter column
    assert all(v >= 0 for v in chunks.values()) and sum(chunks.values()) == n_chunks, chunks
    assert chunks.get("filter_column") == md.num_row_groups, chunks
    assert pages.get("encoding", 0) > 0 and pages.get("partial", 0) == 0 and pages.get("synthesized", 0) == 0, pages
    # Every dictionary page of a planned chunk with selected rows: kept, or declined once.
    planned = chunks.get("planned", 0) + chunks.get("file_cost", 0)
    assert st.get("dictionary_pages_partial", 0) + pages.get("saving", 0) == planned, st


@pytest.fixture(scope="module", params=[25_000, 2_000], ids=["200KB-pages", "16KB-pages"])
def paged_file(request, tmp_path_factory):
    """The same kind of file with 25,000-row pages (200 KB, four a column
    chunk) or 2,000-row pages (16 KB, fifty), PLAIN and uncompressed, with a
    page index. Returns (path, rows a page)."""
    path = write_random_file(tmp_path_factory.mktemp(f"cost-pages-{request.param}") / "part-00000.parquet", 8, 13,
                             data_page_size=1 << 20, max_rows_per_page=request.param, use_dictionary=False,
                             compression="NONE")
    return path, request.param


def test_a_declined_plan_prices_pages_without_a_selected_row(s3link_wan, s3link_bucket, mount, paged_file):
    """At `wan`, a clustered selection that takes 80 % of one page per chunk:
    reading that page in part saves too little to repay a round trip, so it
    is read whole (`file_cost`). The chunk's other pages hold no selected
    row. 200 KB pages: their header probes cost far less than their bytes,
    so they are synthesized (a declined plan used to fetch them too). 16 KB
    pages: probes closer than a request is worth are read through, which
    saves nothing, so they are read whole with the rest and the plan takes
    no round. (40 KB pages sat on the boundary, where the measured capacity
    decided.) DuckDB and pyarrow read the same rows as from the local file."""
    import pyarrow.dataset as ds
    path, page_rows = paged_file
    b = s3link_bucket(s3link_wan, {KEY: path})
    cols = ["id"] + [f"c{i:02d}" for i in range(8)]
    lo, hi = page_rows // 25, page_rows * 21 // 25   # 80 % of the first page
    where = f"id >= {lo} AND id < {hi}"
    query = f"SELECT {', '.join(cols)} FROM read_parquet('{{f}}') WHERE {where} ORDER BY id"
    with wan_view(s3link_wan, mount, b, where, cols) as (m, prof):
        got, want = duckdb_rows(query, vd.view_path(m.mp, "q") / KEY, path)
        filt = (ds.field("id") >= lo) & (ds.field("id") < hi)
        got_pa = ds.dataset(str(vd.view_path(m.mp, "q") / KEY)).to_table(columns=cols, filter=filt).sort_by("id")
        want_pa = ds.dataset(str(path)).to_table(columns=cols, filter=filt).sort_by("id")
        st = vd.view_stats(m.mp, "q")
    assert got == want and len(want) == hi - lo, vd.first_diff(got, want)
    assert got_pa.equals(want_pa)
    pages, chunks = st["page_reasons"], st["chunk_reasons"]
    print(f"profile {prof}; chunks {chunks}; pages {pages}; fetched {st['bytes_fetched']} of "
          f"{st['ordinary_bytes']} B in {st['requests']} planning requests")
    assert chunks.get("file_cost", 0) > 0 and pages.get("partial", 0) == 0, st
    pages_a_chunk = 100_000 // page_rows
    if page_rows == 25_000:
        # Per declined chunk: one page read whole, three synthesized.
        assert pages.get("saving", 0) == chunks["file_cost"], st
        assert pages.get("synthesized", 0) >= (pages_a_chunk - 1) * chunks["file_cost"], st
        assert st["bytes_fetched"] < st["ordinary_bytes"] / 2, st
    else:
        # Every page of a declined chunk read whole, no planning request.
        assert pages.get("synthesized", 0) == 0 and st["requests"] == 0, st
        assert pages.get("saving", 0) + pages.get("request_cost", 0) == pages_a_chunk * chunks["file_cost"], st
