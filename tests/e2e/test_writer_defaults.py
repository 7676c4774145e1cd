"""Views over files as writers write them by default, read by unmodified
readers: DuckDB's COPY (one page per chunk, no OffsetIndex), pyarrow's
write_table (dictionary, snappy, several pages per chunk, no OffsetIndex),
pyarrow with a page index, pyarrow without dictionary or compression (the
regular multi-page layout whose page maps come from walking its headers),
and polars' write_parquet. For each, hints with and without `columns`:
DuckDB, pyarrow and polars through the view return exactly what they return
from the local file, and so does the plain path. Spark's files are covered
by test_views_readers.py::test_spark_page_checksums, deltalake's by
::test_delta_table."""
import pytest

import viewdata as vd

N = 120_000

WRITERS = ["duckdb", "pyarrow", "pyarrow_index", "pyarrow_nodict", "polars"]

# Hint `where` texts that are also DuckDB SQL (and the same for pyarrow and
# polars through vd.to_pa / vd.to_polars of the tuple form).
CASES = [
    ("clustered", "id BETWEEN 50000 AND 50999", ("between", "id", 50000, 50999)),
    ("scattered", "k = 7", ("eq", "k", 7)),
    ("none", "id < 0", ("lt", "id", 0)),
]


def table():
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(12)
    ids = np.arange(N, dtype=np.int64)
    f = rng.random(N)
    return pa.table({
        "id": pa.array(ids),
        "k": pa.array((ids * 7919) % 4001, type=pa.int32()),
        "f": pa.array(f),
        "g": pa.array(np.where(ids % 97 == 0, None, f * 3), type=pa.float64()),
        "s": pa.array([f"s{(i * 31) % 5003}" for i in range(N)]),
        "t": pa.array((ids * 1000003) % 10**9, type=pa.int64()),
    })


def write(writer: str, path):
    import pyarrow.parquet as pq
    t = table()
    if writer == "duckdb":
        import duckdb
        c = duckdb.connect()
        c.register("src", t)
        c.execute(f"COPY (SELECT * FROM src) TO '{path}' (FORMAT parquet)")
    elif writer == "pyarrow":
        pq.write_table(t, path)
    elif writer == "pyarrow_index":
        pq.write_table(t, path, write_page_index=True)
    elif writer == "pyarrow_nodict":
        pq.write_table(t, path, use_dictionary=False, compression="none")
    elif writer == "polars":
        import polars as pl
        pl.from_arrow(t).write_parquet(path)
    else:
        raise ValueError(writer)


def results(path, where_sql: str, q, cols):
    import duckdb
    import polars as pl
    import pyarrow.parquet as pq
    sel = ", ".join(cols)
    out = {"duckdb": duckdb.connect().execute(
        f"SELECT {sel} FROM read_parquet('{path}') WHERE {where_sql} ORDER BY id").fetchall()}
    t = pq.read_table(path, columns=cols, filters=vd.to_pa(q)).sort_by("id")
    out["pyarrow"] = vd.rows_of(t)
    out["polars"] = vd.rows_of(pl.scan_parquet(path).filter(vd.to_polars(q)).select(cols).sort("id").collect()
                               .to_arrow())
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("writers")
    out = {}
    for w in WRITERS:
        p = d / f"{w}.parquet"
        write(w, p)
        out[w] = p
    return out


@pytest.mark.asan
@pytest.mark.timeout(600)
@pytest.mark.parametrize("writer", WRITERS)
def test_views_of_writer_defaults(writer, files, bucket, mount):
    local = files[writer]
    key = f"w/{writer}.parquet"
    # Every page the planner can read partially is (--request-cost 0).
    m = mount(bucket=bucket({key: local.read_bytes()}), args=vd.EVERY_PARTIAL)
    failures, reasons = [], {}
    for name, where_sql, q in CASES:
        for with_cols in (False, True):
            cols = ["id", "f", "g", "s", "t"]
            doc = {"where": where_sql}
            if with_cols:
                doc["columns"] = cols + ["k"]
            hint = f"{writer}-{name}-{int(with_cols)}"
            r = vd.write_hint(m.mp, hint, doc)
            assert r.ok, (hint, r)
            want = results(local, where_sql, q, cols)
            got = results(vd.view_path(m.mp, hint) / key, where_sql, q, cols)
            plain = results(m.mp / key, where_sql, q, cols)
            for reader in want:
                if got[reader] != want[reader]:
                    failures.append(f"{hint} [{reader}]: view differs: {vd.first_diff(got[reader], want[reader])}")
                if plain[reader] != want[reader]:
                    failures.append(f"{hint} [{reader}]: plain path differs")
            if name != "none":
                assert want["duckdb"], f"{hint}: the case selects rows"
            for reason, n in vd.view_stats(m.mp, hint)["chunk_reasons"].items():
                reasons[reason] = reasons.get(reason, 0) + n
    assert not failures, "\n".join(failures[:20])
    if writer in ("duckdb", "pyarrow_index"):
        # One page per chunk, an OffsetIndex: every chunk but the filter
        # column's gets a page map.
        assert reasons.get("planned", 0) > 0 and not reasons.get("no_offset_index"), reasons
    if writer == "pyarrow_nodict":
        # Fixed-width columns without nulls have regular pages, mapped from
        # their headers; strings and nullable columns do not.
        assert reasons.get("planned", 0) > 2 * reasons.get("no_offset_index", 0), reasons


@pytest.mark.asan
@pytest.mark.timeout(300)
def test_walked_page_maps_are_kept_per_version(files, bucket, mount):
    """The second view of the same file version does not walk its headers
    again: the same hint asks for fewer requests (and gets the same rows)."""
    local = files["pyarrow_nodict"]
    key = "w/pyarrow_nodict.parquet"
    m = mount(bucket=bucket({key: local.read_bytes()}), args=vd.EVERY_PARTIAL)
    _, where_sql, q = CASES[0]
    cols = ["id", "f", "t"]
    want = results(local, where_sql, q, cols)
    requests = []
    for name in ("first", "again"):
        assert vd.write_hint(m.mp, name, {"where": where_sql, "columns": cols}).ok
        assert results(vd.view_path(m.mp, name) / key, where_sql, q, cols) == want
        st = vd.view_stats(m.mp, name)
        assert st["chunk_reasons"].get("planned", 0) > 0, st["chunk_reasons"]
        requests.append(st["requests"])
    assert requests[1] < requests[0], requests


@pytest.mark.asan
@pytest.mark.timeout(300)
def test_cache_dir_outlives_the_mount_and_ignores_a_changed_object(files, bucket, mount, tmp_path, s3):
    """--cache-dir: a second mount's view of the same file version walks no
    page headers (its page maps are read back, then confirmed by the page
    planner's header reads from S3) and returns the same rows; after the
    object is replaced (new ETag), its maps are walked afresh and its view
    returns the new rows."""
    local = files["pyarrow_nodict"]
    key = "w/pyarrow_nodict.parquet"
    name = bucket({key: local.read_bytes()})
    cache = tmp_path / "pagemaps"
    _, where_sql, q = CASES[0]
    cols = ["id", "f", "t"]
    want = results(local, where_sql, q, cols)
    maps = []
    for round_ in range(2):
        m = mount(bucket=name, args=(*vd.EVERY_PARTIAL, "--cache-dir", str(cache)))
        assert vd.write_hint(m.mp, "h", {"where": where_sql, "columns": cols}).ok
        assert results(vd.view_path(m.mp, "h") / key, where_sql, q, cols) == want
        st = m.stats()
        maps.append((st["page_maps_walked"], st["page_maps_from_disk"]))
        m.unmount()
    assert any(p.suffix == ".pm" for p in cache.iterdir()), sorted(cache.iterdir())
    (walked0, disk0), (walked1, disk1) = maps
    assert walked0 > 0 and disk0 == 0, maps
    assert walked1 == 0 and disk1 == walked0, maps  # nothing walked again
    # The object changes: same layout, other values (another ETag).
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    t = table()
    t = t.set_column(t.schema.get_field_index("f"), "f", pc.multiply(t["f"], -1.0))
    changed = tmp_path / "changed.parquet"
    pq.write_table(t, changed, use_dictionary=False, compression="none")
    s3.put_object(Bucket=name, Key=key, Body=changed.read_bytes())
    m = mount(bucket=name, args=(*vd.EVERY_PARTIAL, "--cache-dir", str(cache)))
    assert vd.write_hint(m.mp, "h2", {"where": where_sql, "columns": cols}).ok
    want2 = results(changed, where_sql, q, cols)
    assert want2 != want
    assert results(vd.view_path(m.mp, "h2") / key, where_sql, q, cols) == want2
    assert m.stats()["page_maps_walked"] > 0 and m.stats()["page_maps_from_disk"] == 0, m.stats()
