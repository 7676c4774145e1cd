"""Analytic readers through the mount: DuckDB and pyarrow must get exactly the
results they get from the local copies of the same Parquet files."""
import os

import pytest

import s3env
import viewdata

ROWS_PER_FILE = 120_000


def make_table(seed: int, n: int):
    import pyarrow as pa
    import random
    rnd = random.Random(f"parquet{seed}")
    ids = list(range(seed * n, seed * n + n))
    cats = ["alpha", "beta", "gamma", "delta", "epsilon", None]
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "value": pa.array([rnd.random() * 1000 for _ in ids], pa.float64()),
        "qty": pa.array([rnd.randrange(-500, 500) for _ in ids], pa.int32()),
        "cat": pa.array([rnd.choice(cats) for _ in ids], pa.string()),
        "note": pa.array([f"row {i} " + "x" * rnd.randrange(0, 40) for i in ids], pa.string()),
        "flag": pa.array([rnd.random() < 0.3 for _ in ids], pa.bool_()),
        "ts": pa.array([1_600_000_000_000 + i * 1000 for i in ids], pa.timestamp("ms")),
    })


@pytest.fixture(scope="module")
def parquet_set(tmp_path_factory):
    """Three ~3-4 MB Parquet files with several row groups, different codecs."""
    import pyarrow.parquet as pq
    d = tmp_path_factory.mktemp("parquet")
    files = {}
    for i, codec in enumerate(["snappy", "zstd", "none"]):
        p = d / f"part-{i:05d}.parquet"
        pq.write_table(make_table(i, ROWS_PER_FILE), p, row_group_size=25_000, compression=codec)
        files[f"table/part-{i:05d}.parquet"] = p
    return d, files


@pytest.fixture
def mounted_table(parquet_set, s3, bucket, mount):
    d, files = parquet_set
    b = bucket()
    for k, p in files.items():
        s3.upload_file(str(p), b, k)
    s3.put_object(Bucket=b, Key="table/_SUCCESS", Body=b"")
    m = mount(bucket=b)
    return m, d


def duck(query: str):
    import duckdb
    con = duckdb.connect(config={"threads": 2})
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


QUERIES = [
    "SELECT * FROM read_parquet('{g}') ORDER BY id",
    "SELECT count(*), sum(qty), min(value), max(value), count(DISTINCT cat) FROM read_parquet('{g}')",
    # float sums depend on DuckDB's parallel summation order: aggregate exact decimals instead
    "SELECT cat, count(*), sum(value::DECIMAL(18,6)), avg(qty) FROM read_parquet('{g}') GROUP BY cat ORDER BY cat NULLS LAST",
    "SELECT id, note FROM read_parquet('{g}') WHERE id BETWEEN 130000 AND 130050 ORDER BY id",
    "SELECT sum(value::DECIMAL(18,6)), count(*) FROM read_parquet('{g}') WHERE flag AND cat = 'gamma'",
    "SELECT id, ts FROM read_parquet('{g}') ORDER BY value DESC LIMIT 7",
]


@pytest.mark.asan
@pytest.mark.parametrize("q", QUERIES, ids=[f"q{i}" for i in range(len(QUERIES))])
def test_duckdb_same_results_as_local(mounted_table, q):
    m, local = mounted_table
    got = duck(q.format(g=f"{m.mp}/table/*.parquet"))
    want = duck(q.format(g=f"{local}/*.parquet"))
    assert len(want) > 0
    assert got == want


def test_duckdb_single_file_and_metadata(mounted_table):
    m, local = mounted_table
    for fn in ("parquet_metadata", "parquet_schema"):
        got = duck(f"SELECT * FROM {fn}('{m.mp}/table/part-00001.parquet')")
        want = duck(f"SELECT * FROM {fn}('{local}/part-00001.parquet')")
        # file_name column differs by path; compare everything else
        strip = lambda rows: [tuple(c for c in r if not (isinstance(c, str) and c.endswith(".parquet"))) for r in rows]  # noqa: E731
        assert strip(got) == strip(want)


def test_duckdb_selective_query_reads_less_than_file(mounted_table):
    """A one-column aggregate with a selective filter: same answer, and (the
    point of sievefs) S3 bytes fetched stay well under the file size."""
    m, local = mounted_table
    q = "SELECT sum(qty) FROM read_parquet('{f}') WHERE id % 1000 = 7"
    before = m.stats()
    got = duck(q.format(f=f"{m.mp}/table/part-00002.parquet"))
    after = m.stats()
    assert got == duck(q.format(f=f"{local}/part-00002.parquet"))
    size = os.path.getsize(local / "part-00002.parquet")
    fetched = after["s3_bytes_fetched"] - before["s3_bytes_fetched"]
    print(f"selective query fetched {fetched} of {size} bytes")
    assert 0 < fetched < size


@pytest.mark.asan
def test_pyarrow_same_table(mounted_table):
    import pyarrow.parquet as pq
    m, local = mounted_table
    for name in ("part-00000.parquet", "part-00001.parquet", "part-00002.parquet"):
        got = pq.read_table(m / "table" / name)
        want = pq.read_table(local / name)
        assert got.equals(want), name


def test_pyarrow_column_and_row_group_subsets(mounted_table):
    import pyarrow.parquet as pq
    m, local = mounted_table
    fm = pq.ParquetFile(m / "table/part-00001.parquet")
    fl = pq.ParquetFile(local / "part-00001.parquet")
    assert fm.metadata.num_row_groups == fl.metadata.num_row_groups >= 4
    assert fm.schema_arrow.equals(fl.schema_arrow)
    for rg in (0, fl.metadata.num_row_groups - 1, 2):
        assert fm.read_row_group(rg, columns=["id", "note"]).equals(fl.read_row_group(rg, columns=["id", "note"]))
    got = pq.read_table(m / "table/part-00000.parquet", columns=["cat", "value"], filters=[("qty", ">", 400)])
    want = pq.read_table(local / "part-00000.parquet", columns=["cat", "value"], filters=[("qty", ">", 400)])
    assert got.equals(want) and got.num_rows > 0


def test_pyarrow_dataset_directory(mounted_table):
    import pyarrow.dataset as ds
    m, local = mounted_table
    got = ds.dataset(m / "table", format="parquet", exclude_invalid_files=False,
                     ignore_prefixes=["_"]).to_table().sort_by("id")
    want = ds.dataset(local, format="parquet").to_table().sort_by("id")
    assert got.equals(want)


def test_duckdb_skipping_pages_gets_its_pages_not_their_chunks(s3, bucket, mount, tmp_path):
    """DuckDB skips pages by the page index: for a clustered filter it reads
    one page of each column chunk (each with a pread of its own), not the
    chunk. The plain path must fetch those pages, not the rest of their
    chunks (before page starts were kept, a read inside a chunk fetched the
    chunk from there on: 17 times the bytes the kernel asked for here)."""
    path = tmp_path / "part-00000.parquet"
    # incompressible: 80 KB pages, 1.6 MB chunks
    viewdata.write_int64_pages(path, rows=200_000, page_rows=10_000, columns=8, seed=5)
    b = bucket({})
    s3env.upload_file(s3, b, "t/part-00000.parquet", path)
    m = mount(bucket=b)
    q = "SELECT * FROM read_parquet('{f}') WHERE id BETWEEN 120100 AND 120300 ORDER BY id"
    before = m.stats()
    got = duck(q.format(f=m.mp / "t" / "part-00000.parquet"))
    after = m.stats()
    assert got == duck(q.format(f=path)) and len(got) == 201
    asked = after["fuse_read_bytes"] - before["fuse_read_bytes"]
    fetched = after["s3_bytes_fetched"] - before["s3_bytes_fetched"]
    size = os.path.getsize(path)
    print(f"kernel asked {asked} B, fetched {fetched} B, file {size} B")
    assert asked < size // 4, "DuckDB no longer skips pages here: the test shows nothing"
    # The pages, the footer and page index, blocks rounded to 16 KiB, and
    # what the kernel's readahead asks past a page that it did not read.
    assert fetched <= 1.3 * asked + (256 << 10), (fetched, asked)


def test_a_smaller_read_ahead_does_not_fetch_skipped_columns(s3, bucket, mount, tmp_path):
    """With --read-ahead below 128 KiB, the kernel still sends a large pread
    in 128 KiB pieces and reads ahead past its end in windows as large. The
    plain path must still tell that readahead from a reader going on into
    the next column: taking it for the smaller window, it fetched each
    skipped column after a read one whole (1.6 MB each here). And pyarrow's
    first read, of the file's tail, must not count as a read of the last
    column (c5, skipped): it did, and c5 came whole with c4."""
    import pyarrow.parquet as pq
    path = tmp_path / "part-00000.parquet"
    # incompressible int64: 160 KB pages, 1.6 MB chunks
    viewdata.write_int64_pages(path, rows=200_000, page_rows=20_000, columns=6, seed=22)
    b = bucket({})
    s3env.upload_file(s3, b, "t/part-00000.parquet", path)
    m = mount(bucket=b, args=["--read-ahead", "32K"])
    named = ["id", "c0", "c2", "c4"]          # c1, c3 and c5 follow a read chunk
    before = m.stats()["s3_bytes_fetched"]
    got = pq.read_table(m.mp / "t" / "part-00000.parquet", columns=named)
    fetched = m.stats()["s3_bytes_fetched"] - before
    assert got.equals(pq.read_table(path, columns=named))
    md = pq.ParquetFile(path).metadata
    chunk = {md.schema.column(c).name: md.row_group(0).column(c).total_compressed_size
             for c in range(md.num_columns)}
    # The read chunks; the file's tail, read first (64 KiB and a block,
    # with the end of c5); past each of the three runs of read chunks, at
    # most two 128 KiB kernel windows and a page, in 16 KiB blocks.
    bound = sum(chunk[c] for c in named) + (80 << 10) + 3 * ((260 << 10) + 2 * (16 << 10))
    print(f"fetched {fetched} B; bound {bound} B")
    assert fetched <= bound, (fetched, bound)


def test_direct_io_fetches_what_readers_read(s3, bucket, mount, tmp_path):
    """With --direct-io the kernel passes each read() as the reader made it:
    no page rounding, no readahead. pyarrow and DuckDB get the local file's
    results; past each run of read chunks only the speculation share (1/20
    of the reads) is fetched, not the two kernel windows and a page of the
    default mount; a 1,000-byte pread reaches the mount as 1,000 bytes and
    fetches one 4 KiB block; a
    shared memory map is refused (ENODEV), as --help says, and polars, which
    then maps the file privately, still reads it."""
    import errno
    import mmap
    import pyarrow.parquet as pq
    path = tmp_path / "part-00000.parquet"
    viewdata.write_int64_pages(path, rows=200_000, page_rows=20_000, columns=6, seed=23)
    b = bucket({})
    s3env.upload_file(s3, b, "t/part-00000.parquet", path)
    blob = os.urandom(1 << 20)
    s3.put_object(Bucket=b, Key="t/blob.bin", Body=blob)
    m = mount(bucket=b, args=["--direct-io"])
    f = m.mp / "t" / "part-00000.parquet"
    named = ["id", "c0", "c2", "c4"]          # c1, c3 and c5 follow a read chunk
    before = m.stats()["s3_bytes_fetched"]
    table = pq.read_table(f, columns=named)
    fetched = m.stats()["s3_bytes_fetched"] - before
    assert table.equals(pq.read_table(path, columns=named))
    md = pq.ParquetFile(path).metadata
    chunk = {md.schema.column(c).name: md.row_group(0).column(c).total_compressed_size
             for c in range(md.num_columns)}
    named_bytes = sum(chunk[c] for c in named)
    # The read chunks, 1/20 of them speculated past the runs, the file's
    # tail (64 KiB and a block), 4 KiB blocks at each run's ends. The
    # default mount's proof (two 128 KiB windows and a page past each of
    # the three runs) does not fit.
    bound = named_bytes * 21 // 20 + (68 << 10) + 3 * 2 * (4 << 10)
    print(f"fetched {fetched} B; bound {bound} B")
    assert fetched <= bound, (fetched, bound)
    q = "SELECT count(*), sum(c0), min(c4), max(id) FROM read_parquet('{f}') WHERE c2 % 7 = 3"
    assert duck(q.format(f=f)) == duck(q.format(f=path))
    before = m.stats()
    fd = os.open(f, os.O_RDONLY)
    try:
        got = os.pread(fd, 1000, 123_457)
        after = m.stats()
        with pytest.raises(OSError) as e:
            mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        assert e.value.errno == errno.ENODEV
    finally:
        os.close(fd)
    with open(path, "rb") as lf:
        lf.seek(123_457)
        assert got == lf.read(1000)
    assert after["fuse_read_bytes"] - before["fuse_read_bytes"] == 1000
    # Reads come unrounded, so the mount caches 4 KiB blocks, not 16 KiB:
    # a pread inside one block of a file no reader pattern covers fetches
    # that block alone (once the first read has fetched the file's tail).
    fd = os.open(m.mp / "t" / "blob.bin", os.O_RDONLY)
    try:
        assert os.pread(fd, 1, len(blob) - 1) == blob[-1:]
        before = m.stats()["s3_bytes_fetched"]
        got = os.pread(fd, 1000, 100_000)
        fetched = m.stats()["s3_bytes_fetched"] - before
    finally:
        os.close(fd)
    assert got == blob[100_000:101_000]
    assert fetched == 4096, fetched
    import polars as pl
    assert pl.read_parquet(f).equals(pl.read_parquet(path))
