"""`sievefs index`: page maps built ahead of time for a table's files without
an OffsetIndex, written next to the table in S3 (--to-s3) or into a local
cache directory, then read by mounts instead of walking page headers.

Files are written with their writers' defaults: pyarrow's (dictionary pages,
several data pages per chunk of different sizes, which a mount alone does not
walk: one round trip per page) and pyarrow without dictionary (regular pages,
which a mount walks in two rounds). Every view's rows equal the local file's
for DuckDB, pyarrow and polars."""
import os
import re
import struct
import zlib

import pytest

import viewdata as vd
from test_writer_defaults import CASES, results, write

COLS = ["id", "f", "g", "s", "t"]


@pytest.fixture(scope="module")
def table_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("index")
    out = {}
    for w in ("pyarrow", "pyarrow_nodict"):
        p = d / f"{w}.parquet"
        write(w, p)
        out[w] = p
    return out


def s3_args(moto):
    return ["--endpoint", moto.endpoint, "--force-path-style"]


def view_reasons(mp, hints):
    reasons = {}
    for h in hints:
        for reason, n in vd.view_stats(mp, h)["chunk_reasons"].items():
            reasons[reason] = reasons.get(reason, 0) + n
    return reasons


def check_views(m, table_files, prefix, tag):
    """Every case through a view of each file equals the local file; returns
    the views' chunk reasons."""
    failures, hints = [], []
    for w, local in table_files.items():
        key = f"{prefix}{w}.parquet"
        for name, where_sql, q in CASES:
            hint = f"{tag}-{w}-{name}"
            assert vd.write_hint(m.mp, hint, {"where": where_sql, "columns": COLS + ["k"]}).ok
            hints.append(hint)
            want = results(local, where_sql, q, COLS)
            got = results(vd.view_path(m.mp, hint) / key, where_sql, q, COLS)
            for reader in want:
                if got[reader] != want[reader]:
                    failures.append(f"{hint} [{reader}]: {vd.first_diff(got[reader], want[reader])}")
    assert not failures, "\n".join(failures[:20])
    return view_reasons(m.mp, hints)


@pytest.mark.asan
@pytest.mark.timeout(600)
def test_index_to_s3_is_read_by_every_mount(table_files, bucket, mount, run_cli, moto, s3):
    objects = {f"tbl/{w}.parquet": p.read_bytes() for w, p in table_files.items()}
    objects["tbl/_delta_log/00000000000000000000.json"] = b"{}\n"
    # Hidden from table readers, so not indexed either.
    objects["tbl/_temporary/0/part-0.parquet"] = objects["tbl/pyarrow.parquet"]
    objects["tbl/.part-1.parquet"] = objects["tbl/pyarrow.parquet"]
    name = bucket(objects)

    # Without maps: the mount walks the regular chunks, not the irregular ones.
    m = mount(bucket=name, args=vd.EVERY_PARTIAL)
    before = check_views(m, table_files, "tbl/", "before")
    walked_alone = m.stats()["page_maps_walked"]
    m.unmount()
    assert walked_alone > 0 and before.get("no_offset_index", 0) > 0, (walked_alone, before)

    r = run_cli("index", f"s3://{name}/tbl", "--to-s3", *s3_args(moto), timeout=300)
    assert r.returncode == 0, r
    assert "2 Parquet files: 2 indexed" in r.stdout, r
    maps = [o["Key"] for o in s3.list_objects_v2(Bucket=name, Prefix="tbl/_sieve/pagemaps/")["Contents"]]
    assert len(maps) == 2 and all(re.fullmatch(r"tbl/_sieve/pagemaps/[0-9a-f]{2}/[0-9a-f]{16}\.pmb", k)
                                  for k in maps), maps

    # Indexing again finds both files done.
    r = run_cli("index", f"s3://{name}/tbl", "--to-s3", *s3_args(moto), timeout=300)
    assert r.returncode == 0 and "2 with maps already" in r.stdout, r

    # A mount of the bucket (the table is a directory of it) reads the maps:
    # it walks nothing, and sieves chunks it served real before.
    m = mount(bucket=name, args=vd.EVERY_PARTIAL)
    # The maps are the mount's own: listings of the table leave them out
    # (a reader walking the table's tree would list each level), a path
    # still reaches them.
    assert "_sieve" not in os.listdir(m / "tbl") and "_delta_log" in os.listdir(m / "tbl")
    assert os.path.isdir(m / "tbl/_sieve/pagemaps")
    after = check_views(m, table_files, "tbl/", "after")
    st = m.stats()
    assert st["page_maps_walked"] == 0 and st["page_maps_from_disk"] > walked_alone, st
    assert after.get("no_offset_index", 0) < before["no_offset_index"], (before, after)
    assert after.get("planned", 0) > before.get("planned", 0), (before, after)


@pytest.mark.asan
@pytest.mark.timeout(600)
def test_index_into_a_cache_dir(table_files, bucket, mount, run_cli, moto, tmp_path):
    name = bucket({f"t/{w}.parquet": p.read_bytes() for w, p in table_files.items()})
    cache = tmp_path / "maps"  # created by the command
    r = run_cli("index", f"s3://{name}/", "--cache-dir", cache, *s3_args(moto), timeout=300)
    assert r.returncode == 0, r
    assert sorted(p.suffix for p in cache.iterdir()) == [".pmb", ".pmb"], sorted(cache.iterdir())
    m = mount(bucket=name, args=(*vd.EVERY_PARTIAL, "--cache-dir", str(cache)))
    check_views(m, table_files, "t/", "c")
    st = m.stats()
    assert st["page_maps_walked"] == 0 and st["page_maps_from_disk"] > 0, st


def rewrite_bundle(data: bytes, new_etag: bytes, new_size: int) -> bytes:
    """The same bundle with every map renamed to another object version
    (ETag and size), CRCs made right: a map that claims a version whose
    pages are not where it says."""
    assert data[:8] == b"SIEVEPB1"
    n = struct.unpack_from("<I", data, 8)[0]
    at, members = 12, []
    for _ in range(n):
        ml = struct.unpack_from("<I", data, at)[0]
        m = data[at + 4:at + 4 + ml]
        at += 4 + ml
        kl = struct.unpack_from("<I", m, 8)[0]
        key = m[12:12 + kl]
        el = struct.unpack_from("<I", m, 12 + kl)[0]
        rest = m[16 + kl + el + 8:-4]
        body = m[:8] + struct.pack("<I", kl) + key + struct.pack("<I", len(new_etag)) + new_etag + \
            struct.pack("<Q", new_size) + rest
        members.append(body + struct.pack("<I", zlib.crc32(body)))
    out = b"SIEVEPB1" + struct.pack("<I", len(members))
    for m in members:
        out += struct.pack("<I", len(m)) + m
    return out + struct.pack("<I", zlib.crc32(out))


def bundle_path(key: str, etag: str, size: int) -> str:
    """SHARD/NAME.pmb of a version, as page_map_bundle_name and page_map_remote_shard make it."""
    h = 14695981039346656037
    mask = (1 << 64) - 1

    def mix(b):
        nonlocal h
        h = ((h ^ b) * 1099511628211) & mask
    for b in key.encode():
        mix(b)
    mix(0xFF)
    for b in etag.encode():
        mix(b)
    for i in range(8):
        mix((size >> (8 * i)) & 0xFF)
    return f"{h:016x}"[:2] + f"/{h:016x}.pmb"


@pytest.mark.asan
@pytest.mark.timeout(600)
def test_bundles_that_lie_or_are_corrupt_are_not_trusted(table_files, bucket, mount, run_cli, moto, s3, tmp_path):
    """A bundle naming this version whose pages are another file's, and a
    corrupted bundle: views still return the file's own rows (its chunks are
    walked or served real)."""
    import pyarrow.parquet as pq
    from test_writer_defaults import table
    local = tmp_path / "other.parquet"
    # The same table in pages of another size: its maps contradict the file.
    pq.write_table(table(), local, use_dictionary=False, compression="none", data_page_size=300_000)
    name = bucket({"t/pyarrow_nodict.parquet": table_files["pyarrow_nodict"].read_bytes(),
                   "t/pyarrow.parquet": table_files["pyarrow"].read_bytes()})
    assert run_cli("index", f"s3://{name}/t", "--to-s3", *s3_args(moto), timeout=300).returncode == 0
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=name, Prefix="t/_sieve/pagemaps/")["Contents"]]
    heads = {k: s3.head_object(Bucket=name, Key=f"t/{k}.parquet") for k in ("pyarrow_nodict", "pyarrow")}
    nodict_map = f"t/_sieve/pagemaps/{bundle_path('t/pyarrow_nodict.parquet', heads['pyarrow_nodict']['ETag'], heads['pyarrow_nodict']['ContentLength'])}"
    assert nodict_map in keys, (nodict_map, keys)
    lying = s3.get_object(Bucket=name, Key=nodict_map)["Body"].read()
    # Replace the file with the other layout, and give its new version the
    # old version's maps.
    s3.put_object(Bucket=name, Key="t/pyarrow_nodict.parquet", Body=local.read_bytes())
    h = s3.head_object(Bucket=name, Key="t/pyarrow_nodict.parquet")
    new_map = f"t/_sieve/pagemaps/{bundle_path('t/pyarrow_nodict.parquet', h['ETag'], h['ContentLength'])}"
    s3.put_object(Bucket=name, Key=new_map,
                  Body=rewrite_bundle(lying, h["ETag"].encode(), h["ContentLength"]))
    # And corrupt the other file's bundle.
    for k in keys:
        if k != nodict_map:
            body = bytearray(s3.get_object(Bucket=name, Key=k)["Body"].read())
            body[len(body) // 2] ^= 0x40
            s3.put_object(Bucket=name, Key=k, Body=bytes(body))
    files = {"pyarrow_nodict": local, "pyarrow": table_files["pyarrow"]}
    m = mount(bucket=name, args=vd.EVERY_PARTIAL)
    check_views(m, files, "t/", "lie")
    assert m.stats()["page_maps_from_disk"] > 0, m.stats()  # the lying maps were read, and not believed


def test_index_usage_errors(run_cli, tmp_path):
    r = run_cli("index", "s3://b/t")
    assert r.returncode == 2 and "--cache-dir" in r.stderr, r
    r = run_cli("index", "s3://b/t", "--to-s3", "--cache-dir", tmp_path)
    assert r.returncode == 2, r
    (tmp_path / "file").write_text("x")
    r = run_cli("index", "s3://b/t", "--cache-dir", tmp_path / "file")
    assert r.returncode == 2 and "not a directory" in r.stderr, r
    r = run_cli("index", "--help")
    assert r.returncode == 0
    for opt in ("--to-s3", "--cache-dir", "--force", "--jobs", "--max-connections", "--endpoint"):
        assert opt in r.stdout, opt
