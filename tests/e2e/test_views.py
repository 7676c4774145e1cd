"""Selection hints and query views: the .sieve/hints and .sieve/views
namespace, hint delivery (file writes and `sievefs hint`), acceptance and
rejection, immutability, removal, inode/mtime identity of views, and the
byte-level guarantees (non-Parquet files, footers and filter columns real;
plain path always real; concurrent reads consistent).

The query-result contract with real readers is in test_views_readers.py."""
from __future__ import annotations

import errno
import json
import os
import random
import re
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

import s3env
import viewdata as vd

N = 60_000                       # rows per table file
F0 = "tbl/part-00000.parquet"    # PLAIN, uncompressed, V1, page index: views synthesize here
F1 = "tbl/part-00001.parquet"    # PLAIN, zstd (incompressible payload)
LOG = "tbl/_delta_log/00000000000000000000.json"
OTHER = {
    LOG: json.dumps({"commitInfo": {"operation": "WRITE", "timestamp": 1700000000000}}).encode() + b"\n"
         + json.dumps({"add": {"path": "part-00000.parquet", "size": 1}}).encode() + b"\n",
    "tbl/_SUCCESS": b"",
    "notes/readme.txt": b"hello from sievefs views\n" * 20,
    "blobs/data.bin": s3env.det_bytes("views-blob", 300_001),
    "zz/junk.parquet": s3env.det_bytes("views-junk", 70_000),  # named .parquet, is not
}
SEL_FEW = "sel < 30"             # exactly 30 scattered rows per file


# -- fixtures -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """{key: local Path} of the table files plus the other objects."""
    import pyarrow.parquet as pq
    d = tmp_path_factory.mktemp("views-table")
    files = {}
    for key, codec in ((F0, "NONE"), (F1, "zstd")):
        p = d / key
        p.parent.mkdir(parents=True, exist_ok=True)
        t = vd.make_table(N, "test_views", part=int(key[-9]), nullable=True, incompressible=True)
        pq.write_table(t, p, row_group_size=20_000, compression=codec, use_dictionary=False,
                       data_page_size=32 << 10, write_page_index=True)
        files[key] = p
    for key, data in OTHER.items():
        p = d / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        files[key] = p
    return files


@pytest.fixture(scope="module")
def tbucket(s3, table):
    import uuid
    name = f"sv-views-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=name)
    for key, p in table.items():
        s3env.upload_file(s3, name, key, p)
    return name


@pytest.fixture
def m(mount, tbucket):
    return mount(bucket=tbucket, args=vd.EVERY_PARTIAL)


def hints_dir(m) -> Path:
    return m.mp / ".sieve" / "hints"


def views_dir(m) -> Path:
    return m.mp / ".sieve" / "views"


def accept(m, name, doc):
    r = vd.write_hint(m.mp, name, doc)
    assert r.ok, f"hint {name} {doc!r} rejected: write errno {r.write_errno}, close errno " \
                 f"{r.close_errno}, .error: {r.error_text!r}"
    assert (views_dir(m) / name).is_dir()
    return vd.view_path(m.mp, name)


def local_bytes(table, key) -> bytes:
    return table[key].read_bytes()


def object_bytes(s3, bucket, key) -> bytes:
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


def pread_all(path: Path, chunk: int = 1 << 20, drop_cache: bool = False) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        if drop_cache:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        out = bytearray()
        while True:
            b = os.pread(fd, chunk, len(out))
            if not b:
                return bytes(out)
            out += b
    finally:
        os.close(fd)


def duck(query: str, con=None):
    import duckdb
    own = con is None
    con = con or duckdb.connect(config={"threads": 2})
    try:
        return vd.norm(con.execute(query).fetchall())
    finally:
        if own:
            con.close()


def tree(root: Path) -> dict:
    """{relative path: ('d', 0) | ('f', size)} of everything under root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for d in dirnames:
            out[os.path.normpath(os.path.join(rel, d))] = ("d", 0)
        for f in filenames:
            out[os.path.normpath(os.path.join(rel, f))] = ("f", os.stat(os.path.join(dirpath, f)).st_size)
    return out


def footer_and_filter_ranges(path: Path, filter_cols=("sel",)) -> list:
    """Byte ranges of a local Parquet file that a view must serve real: the
    filter columns' chunks and everything after the last column chunk (page
    indexes, footer, magic)."""
    import pyarrow.parquet as pq
    md = pq.ParquetFile(path).metadata
    ranges, last_end = [], 0
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            cc = rg.column(c)
            start = cc.dictionary_page_offset if cc.has_dictionary_page else cc.data_page_offset
            end = start + cc.total_compressed_size
            last_end = max(last_end, end)
            if cc.path_in_schema in filter_cols:
                ranges.append((start, end))
    ranges.append((last_end, path.stat().st_size))
    return ranges


# -- namespace --------------------------------------------------------------------------------
@pytest.mark.asan
def test_sieve_namespace(m):
    assert ".sieve" not in os.listdir(m.mp)
    assert {"stats", "hints", "views"} <= set(os.listdir(m.mp / ".sieve"))
    for d in (hints_dir(m), views_dir(m)):
        assert stat.S_ISDIR(os.stat(d).st_mode)
        assert os.listdir(d) == []
    # Only NAME.json can be created, only under hints/, and NAME must be valid.
    with pytest.raises(OSError) as e:
        open(hints_dir(m) / "x.txt", "w").close()
    assert e.value.errno in (errno.EINVAL, errno.EACCES, errno.EPERM), e.value
    with pytest.raises(OSError):
        vd.write_hint(m.mp, ".hidden", {})
    with pytest.raises(OSError):
        vd.write_hint(m.mp, "a b", {})
    with pytest.raises(OSError) as e:
        open(views_dir(m) / "x.json", "w").close()
    assert e.value.errno in (errno.EROFS, errno.EACCES, errno.EPERM), e.value
    with pytest.raises(OSError) as e:
        os.mkdir(hints_dir(m) / "d")
    assert e.value.errno in (errno.EROFS, errno.EACCES, errno.EPERM), e.value
    # Nothing outside .sieve/hints is writable.
    with pytest.raises(OSError) as e:
        open(m.mp / "tbl" / "new.json", "w").close()
    assert e.value.errno in (errno.EROFS, errno.EACCES, errno.EPERM), e.value
    assert os.listdir(views_dir(m)) == []


# -- accepting ------------------------------------------------------------------------------
DOC = {"where": SEL_FEW, "columns": ["id", "i64"]}


def deliver(method: str, m, name: str, text: str, tmp_path: Path, run_cli=None):
    dst = hints_dir(m) / f"{name}.json"
    if method == "python":
        with open(dst, "w") as f:
            f.write(text)
    elif method == "cp":
        src = tmp_path / "hint.json"
        src.write_text(text)
        subprocess.run(["cp", str(src), str(dst)], check=True, timeout=30)
    elif method == "echo":
        subprocess.run(["bash", "-c", 'echo "$1" > "$2"', "_", text, str(dst)], check=True, timeout=30)
    elif method == "tee":
        subprocess.run(["bash", "-c", 'printf %s "$1" | tee "$2" >/dev/null', "_", text, str(dst)],
                       check=True, timeout=30)
    else:
        raise ValueError(method)


@pytest.mark.parametrize("method", ["python", "cp", "echo", "tee"])
def test_accept_and_mirror(m, table, method, tmp_path):
    text = json.dumps(DOC)
    deliver(method, m, "v", text, tmp_path)
    v = vd.view_path(m.mp, "v")
    assert v.is_dir()
    assert os.listdir(views_dir(m)) == ["v"]
    assert sorted(os.listdir(hints_dir(m))) == ["v.json", "v.stats"]
    written = text + ("\n" if method == "echo" else "")
    assert (hints_dir(m) / "v.json").read_text() == written
    assert not (hints_dir(m) / "v.error").exists()
    st = vd.view_stats(m.mp, "v")
    assert st["name"] == "v"
    for k in ("pages_real", "pages_synthesized", "pages_partial", "bytes_fetched", "ordinary_bytes", "requests"):
        assert isinstance(st[k], int) and st[k] >= 0, (k, st)
    assert isinstance(st["files"], list)
    # The view mirrors the whole mount, _delta_log included, with the same sizes.
    plain = tree(m.mp)
    assert tree(v) == plain
    assert "tbl/_delta_log" in plain and LOG in plain
    assert (v / "tbl" / "_delta_log").is_dir()
    assert ".sieve" not in os.listdir(v)


@pytest.mark.asan
def test_accept_forms_and_empty_hint(m, table):
    """Every field is optional; rows and columns alone are accepted; JSON
    layout (whitespace, key order) does not matter."""
    accept(m, "empty", {})
    accept(m, "rows_only", {"rows": {F0: [[0, 10], [100, 200]], "./" + F1: [[5, 6]]}})
    accept(m, "cols_only", {"columns": ["i64", "s"]})
    accept(m, "spaced", b'\n  {  "columns" : [ "id" ] ,\n "where" :\t"sel <= 3" }\n\n')
    accept(m, "lang", {"where": 'sel BETWEEN 1 AND 5 OR ("id" IN (7, 8, 9) AND NOT flag) '
                                "OR s LIKE 's1%' OR f64 IS NULL OR dec > 12.5 OR d >= DATE '2050-01-01' "
                                "OR ts < TIMESTAMP '2020-01-01 00:00:01' OR f32 <> 1.5e3 AND i32 != -4"})
    assert sorted(os.listdir(views_dir(m))) == ["cols_only", "empty", "lang", "rows_only", "spaced"]


# -- inodes and mtimes -------------------------------------------------------------------------
@pytest.mark.asan
def test_view_inodes_and_mtime(m):
    t0 = time.time()
    a = accept(m, "a", {"where": SEL_FEW})
    b = accept(m, "b", {"where": SEL_FEW})
    plain = os.stat(m.mp / F0)
    sa, sb = os.stat(a / F0), os.stat(b / F0)
    assert sa.st_size == sb.st_size == plain.st_size
    assert len({plain.st_ino, sa.st_ino, sb.st_ino}) == 3
    assert len({os.stat(m.mp / "tbl").st_ino, os.stat(a / "tbl").st_ino, os.stat(b / "tbl").st_ino}) == 3
    assert os.stat(a / LOG).st_ino != os.stat(m.mp / LOG).st_ino
    assert sa.st_mtime >= int(t0) - 1, "a view's files carry the view's own (acceptance) mtime"
    # Recreated under the same name: new inodes, strictly later mtime.
    old_ino, old_dir_ino, old_mtime = sa.st_ino, os.stat(a).st_ino, sa.st_mtime
    os.unlink(hints_dir(m) / "a.json")
    assert not a.exists()
    a2 = accept(m, "a", {"where": SEL_FEW})
    s2 = os.stat(a2 / F0)
    assert s2.st_ino not in (old_ino, plain.st_ino, sb.st_ino)
    assert os.stat(a2).st_ino != old_dir_ino
    assert s2.st_mtime > old_mtime
    assert os.stat(a2 / "tbl").st_mtime > old_mtime
    # ...even when recreated within the same second, again and again.
    last = s2.st_mtime
    for _ in range(3):
        os.unlink(hints_dir(m) / "a.json")
        a3 = accept(m, "a", {"where": SEL_FEW})
        mt = os.stat(a3 / F0).st_mtime
        assert mt > last
        last = mt


# -- rejecting --------------------------------------------------------------------------------
def _big_hint() -> bytes:
    ranges = [[i * 2, i * 2 + 1] for i in range(120_000)]
    doc = json.dumps({"rows": {F0: ranges}}).encode()
    assert len(doc) > (1 << 20)
    return doc


REJECTS = {
    # id: (document, regexes the .error text must match)
    "malformed": (b'{"where": "sel < 3"', [r"(?i)json"]),
    "not_object": (b'[1, 2, 3]', [r"(?i)object"]),
    "trailing_garbage": (b'{"where": "sel < 3"} x', [r"(?i)json"]),
    "where_not_string": ({"where": 5}, [r"where"]),
    "unknown_field": ({"wehre": "sel < 3"}, [r"wehre"]),
    "unknown_column": ({"where": "nosuch_col = 1"}, [r"nosuch_col", r"(?i)unknown|no such|not found"]),
    "unknown_quoted_column": ({"where": '"Sel X" = 1'}, [r"Sel X"]),
    "type_mismatch_decimal": ({"where": "dec = 'abc'"}, [r"\bdec\b"]),
    "type_mismatch_like_int": ({"where": "sel LIKE 'a%'"}, [r"\bsel\b"]),
    "type_mismatch_ts_int": ({"where": "ts > 5"}, [r"\bts\b"]),
    "syntax_unclosed": ({"where": "sel < 3 AND (id > 2"}, [r"\bat \d+"]),
    "syntax_dangling": ({"where": "sel <"}, [r"\bat \d+"]),
    "syntax_bad_token": ({"where": "sel < 3 ANDD id > 1"}, [r"\bat \d+"]),
    "syntax_unterminated_string": ({"where": "s = 'abc"}, [r"\bat \d+"]),
    "syntax_like_underscore": ({"where": "s LIKE 'a_c'"}, [r"\bat \d+"]),
    "bad_date": ({"where": "d = DATE '2020-13-45'"}, [r"(?i)\bat \d+|date"]),
    "rows_beyond_file": ({"rows": {F0: [[0, 10], [N - 5, N + 1]]}}, [re.escape(F0), str(N)]),
    "rows_missing_file": ({"rows": {"tbl/nope.parquet": [[0, 1]]}}, [r"tbl/nope\.parquet"]),
    "rows_dotdot": ({"rows": {"../x.parquet": [[0, 1]]}}, [r"(?i)\.\./x\.parquet|outside|\.\."]),
    "rows_inner_dotdot": ({"rows": {"tbl/../tbl/part-00000.parquet": [[0, 1]]}}, [r"\.\."]),
    "rows_absolute": ({"rows": {"/" + F0: [[0, 1]]}}, [r"(?i)outside|relative|absolute"]),
    "rows_end_before_start": ({"rows": {F0: [[10, 5]]}}, [r"(?i)before|start|end"]),
    "rows_not_pairs": ({"rows": {F0: [[1, 2, 3]]}}, [r"(?i)start|pair"]),
    "rows_negative": ({"rows": {F0: [[-1, 2]]}}, [r"(?i)negative|start|integer"]),
    "columns_unknown": ({"columns": ["id", "no_such_column"]}, [r"no_such_column"]),
    "too_big": (None, [r"(?i)limit|1048576|1 ?MiB|too (big|large)"]),
}


@pytest.mark.asan
@pytest.mark.parametrize("case", list(REJECTS))
def test_reject(m, case):
    doc, patterns = REJECTS[case]
    if doc is None:
        doc = _big_hint()
    keep = accept(m, "keep", {"where": SEL_FEW})
    r = vd.write_hint(m.mp, "bad", doc)
    assert not r.ok, f"{case}: hint was accepted"
    if case == "too_big" and r.write_errno is not None:
        assert r.write_errno in (errno.EFBIG, errno.EINVAL, errno.E2BIG), r
    else:
        assert r.write_errno is None, r
        assert r.close_errno == errno.EINVAL, r
    # No view, no NAME.json; NAME.error says why.
    assert not (views_dir(m) / "bad").exists()
    assert "bad" not in os.listdir(views_dir(m))
    assert "bad.json" not in os.listdir(hints_dir(m))
    assert "bad.error" in os.listdir(hints_dir(m))
    msg = (hints_dir(m) / "bad.error").read_text()
    assert msg.strip(), "empty .error"
    for pat in patterns:
        assert re.search(pat, msg), f"{case}: .error {msg!r} does not match {pat!r}"
    if case.startswith("syntax"):
        pos = int(re.search(r"\bat (\d+)", msg).group(1))
        assert 0 <= pos <= len(doc["where"]), (pos, msg)
    # Another hint is unaffected; the name can be used again with a valid document.
    assert keep.is_dir() and (keep / F0).is_file()
    accept(m, "bad", {"where": SEL_FEW})
    assert not (hints_dir(m) / "bad.error").exists()


def test_syntax_error_position_points_at_the_problem(m):
    text = "sel < 3 AND id >> 4"
    r = vd.write_hint(m.mp, "pos", {"where": text})
    assert r.close_errno == errno.EINVAL, r
    pos = int(re.search(r"\bat (\d+)", r.error_text).group(1))
    assert text.index(">>") <= pos <= text.index(">>") + 2, r.error_text


def test_rejection_after_partial_writes(m):
    """A document written in small pieces is judged as a whole at close."""
    good = json.dumps({"where": SEL_FEW}).encode()
    r = vd.write_hint(m.mp, "pieces", good, chunk=3)
    assert r.ok, r
    bad = b'{"where": "sel < "}'
    r = vd.write_hint(m.mp, "pieces_bad", bad, chunk=2)
    assert r.close_errno == errno.EINVAL and r.error_text and re.search(r"\bat \d+", r.error_text), r


# -- immutability and removal -----------------------------------------------------------------
@pytest.mark.asan
def test_immutable(m):
    doc = json.dumps({"where": SEL_FEW}).encode()
    v = accept(m, "imm", doc)
    ino = os.stat(v / F0).st_ino
    # Same content again: fine, same view.
    assert vd.write_hint(m.mp, "imm", doc).ok
    assert os.stat(v / F0).st_ino == ino
    # Different content: EEXIST at close; the view is unchanged.
    r = vd.write_hint(m.mp, "imm", {"where": "sel < 31"})
    assert r.close_errno == errno.EEXIST, r
    assert (hints_dir(m) / "imm.json").read_bytes() == doc
    assert os.stat(v / F0).st_ino == ino
    assert vd.view_stats(m.mp, "imm")["name"] == "imm"
    # Appending is a different document too.
    with pytest.raises(OSError) as e:
        with open(hints_dir(m) / "imm.json", "ab") as f:
            f.write(b" ")
    assert e.value.errno in (errno.EEXIST, errno.EACCES, errno.EPERM), e.value
    # .stats and .error are not writable or removable.
    with pytest.raises(OSError):
        open(hints_dir(m) / "imm.stats", "w").close()
    with pytest.raises(OSError):
        os.unlink(hints_dir(m) / "imm.stats")
    assert (hints_dir(m) / "imm.json").read_bytes() == doc


@pytest.mark.asan
def test_rm_removes_view_but_open_files_keep_working(m, table):
    v = accept(m, "gone", {"where": SEL_FEW})
    want = pread_all(v / F0)
    log_want = local_bytes(table, LOG)
    fd = os.open(v / F0, os.O_RDONLY)
    fd_log = os.open(v / LOG, os.O_RDONLY)
    fd_new = os.open(v / F1, os.O_RDONLY)  # not read before the removal: planned after it
    try:
        os.unlink(hints_dir(m) / "gone.json")
        assert not v.exists()
        assert "gone" not in os.listdir(views_dir(m))
        assert not {"gone.json", "gone.stats", "gone.error"} & set(os.listdir(hints_dir(m)))
        with pytest.raises(FileNotFoundError):
            os.stat(v / F0)
        with pytest.raises(FileNotFoundError):
            os.unlink(hints_dir(m) / "gone.json")
        # Open files keep serving the removed view, until closed.
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        got = bytearray()
        while b := os.pread(fd, 1 << 20, len(got)):
            got += b
        assert bytes(got) == want
        assert os.pread(fd_log, 1 << 20, 0) == log_want
        # A file first read after the removal still serves the removed view: a
        # reader parsing those bytes gets the selected rows right.
        import pyarrow as pa
        import pyarrow.parquet as pq
        data = bytearray()
        while b := os.pread(fd_new, 1 << 20, len(data)):
            data += b
        flt = [("sel", "<", 30)]
        got = vd.rows_of(pq.read_table(pa.BufferReader(bytes(data)), filters=flt))
        want_rows = vd.rows_of(pq.read_table(table[F1], filters=flt))
        assert len(want_rows) == 30 and got == want_rows, vd.first_diff(got, want_rows)
    finally:
        os.close(fd)
        os.close(fd_log)
        os.close(fd_new)
    # The name is free again.
    accept(m, "gone", {"where": "sel < 5"})


# -- readers cannot replay an old view ---------------------------------------------------------
def test_recreated_view_not_replayed_by_duckdb_cache(m, table):
    """DuckDB caching local file bytes and Parquet metadata (validated by
    path + mtime) and the kernel page cache must not serve view A's bytes
    for view A' of the same name."""
    import duckdb
    con = duckdb.connect(config={"threads": 2})
    for setting in ("SET cache_local_files = true", "SET parquet_metadata_cache = true",
                    "SET enable_external_file_cache = true"):
        try:
            con.execute(setting)
        except duckdb.Error:
            pass
    q = "SELECT id, i64, f64, dec, ts FROM read_parquet('{f}') WHERE {w} ORDER BY id"
    w1, w2 = "sel < 30", "sel >= 30 AND sel < 60"
    try:
        v = accept(m, "r", {"where": w1})
        got1 = duck(q.format(f=v / F0, w=w1), con)
        assert got1 == duck(q.format(f=table[F0], w=w1)) and len(got1) == 30
        bytes1 = pread_all(v / F0)
        os.unlink(hints_dir(m) / "r.json")
        v = accept(m, "r", {"where": w2})
        got2 = duck(q.format(f=v / F0, w=w2), con)
        want2 = duck(q.format(f=table[F0], w=w2))
        assert len(want2) == 30
        assert got2 == want2, "a query through the recreated view got stale bytes: " + vd.first_diff(got2, want2)
        bytes2 = pread_all(v / F0)
    finally:
        con.close()
    real = local_bytes(table, F0)
    assert vd.synthesized(vd.view_stats(m.mp, "r")) > 0, vd.view_stats(m.mp, "r")
    assert bytes1 != real and bytes2 != real, "views served every byte real (nothing synthesized)"
    assert bytes1 != bytes2, "two different selections produced the same view bytes"


@pytest.mark.parametrize("cost, expect", [("0", "sieved"), (None, "whole pages"), ("64M", "whole pages")])
def test_request_cost(mount, tbucket, table, cost, expect):
    """--request-cost (the cost model's override) weighs each request against
    the bytes it saves. The fixture's 32 KiB pages: with requests free, pages
    are read partially and synthesized; at 64M nothing ever is. Without the
    option and without a connection profile (the e2e mounts run with no
    warmup) no chunk is planned at all. The answer is the same every time."""
    m = mount(bucket=tbucket, args=() if cost is None else ("--request-cost", cost))
    q = "SELECT id, i64, f64, dec, ts FROM read_parquet('{f}') WHERE {w} ORDER BY id"
    v = accept(m, "c", {"where": SEL_FEW})
    got = duck(q.format(f=v / F0, w=SEL_FEW))
    want = duck(q.format(f=table[F0], w=SEL_FEW))
    assert got == want and len(want) == 30, vd.first_diff(got, want)
    f0 = next(f for f in vd.view_stats(m.mp, "c")["files"] if f["path"] == F0)
    served = pread_all(v / F0)
    if expect == "sieved":
        assert f0["pages_partial"] > 0 and f0["pages_synthesized"] > 0, f0
        assert served != local_bytes(table, F0)
    else:
        assert f0["pages_partial"] == 0 and f0["pages_synthesized"] == 0, f0
        if cost is None:
            assert f0["chunk_reasons"].get("no_profile", 0) > 0 and "planned" not in f0["chunk_reasons"], f0
        else:
            assert f0["pages_real"] > 0 and f0["page_reasons"].get("request_cost", 0) > 0, f0
        assert served == local_bytes(table, F0)


# -- bytes --------------------------------------------------------------------------------------
@pytest.mark.asan
def test_plain_view_plain_bytes(m, s3, tbucket, table):
    real = object_bytes(s3, tbucket, F0)
    assert pread_all(m.mp / F0) == real
    v = accept(m, "pvp", {"where": SEL_FEW})
    vb = pread_all(v / F0)
    assert len(vb) == len(real)
    st = vd.view_stats(m.mp, "pvp")
    assert vd.synthesized(st) > 0, st
    assert vb != real, "nothing synthesized although the stats say so"
    # Filter column chunks, page indexes, footer: real through the view.
    for a, b in footer_and_filter_ranges(table[F0]):
        assert vb[a:b] == real[a:b], f"view bytes [{a}, {b}) differ from the object's"
    # The plain path afterwards: still the object's bytes (kernel cache dropped, and random reads).
    assert pread_all(m.mp / F0, drop_cache=True) == real
    rnd = random.Random(5)
    fd = os.open(m.mp / F0, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        for _ in range(50):
            off = rnd.randrange(len(real))
            n = rnd.randrange(1, 100_000)
            assert os.pread(fd, n, off) == real[off:off + n]
    finally:
        os.close(fd)
    # And the view again: the same bytes as before.
    assert pread_all(v / F0, drop_cache=True) == vb


@pytest.mark.asan
def test_non_parquet_files_identical_through_view(m, table):
    v = accept(m, "np", {"where": SEL_FEW})
    for key in OTHER:
        want = local_bytes(table, key)
        assert (v / key).read_bytes() == want, key
        r = subprocess.run(["cmp", str(v / key), str(table[key])], capture_output=True, timeout=60)
        assert r.returncode == 0, (key, r.stdout, r.stderr)
        r = subprocess.run(["cat", str(v / key)], capture_output=True, timeout=60)
        assert r.returncode == 0 and r.stdout == want, key
    files = {f["path"]: f for f in vd.view_stats(m.mp, "np")["files"]}
    junk = files.get("zz/junk.parquet")
    assert junk is not None, f"zz/junk.parquet not in the view's stats: {sorted(files)}"
    assert junk["state"] == "real" and junk.get("why_real"), junk


@pytest.mark.parametrize("key", [F0, F1])
def test_concurrent_random_reads_consistent(m, table, key):
    real = local_bytes(table, key)
    v = accept(m, "conc", {"where": SEL_FEW})
    path = v / key
    size = len(real)
    nthreads, per = 12, 25
    start = threading.Barrier(nthreads)
    results, errors = [], []
    lock = threading.Lock()

    def worker(i):
        rnd = random.Random(f"conc{i}")
        plain = i % 4 == 3  # a quarter read the plain path at the same time
        fd = os.open(m.mp / key if plain else path, os.O_RDONLY)
        try:
            start.wait()
            for _ in range(per):
                off = rnd.randrange(size)
                n = rnd.choice([1, 7, 4096, 65536, 200_000, rnd.randrange(1, 1 << 20)])
                b = os.pread(fd, n, off)
                with lock:
                    results.append((plain, off, b))
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            os.close(fd)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errors, errors
    assert len(results) == nthreads * per
    seq = pread_all(path, drop_cache=True)
    assert len(seq) == size
    for plain, off, b in results:
        ref = real if plain else seq
        assert b == ref[off:off + len(b)], f"{'plain' if plain else 'view'} read at {off}+{len(b)} differs"
        assert len(b) == min(len(ref) - off, len(b))
    for a, b in footer_and_filter_ranges(table[key]):
        assert seq[a:b] == real[a:b]


# -- stats ---------------------------------------------------------------------------------------
def _count(table_path, pred_rows=None, where=None):
    import pyarrow.parquet as pq
    t = pq.read_table(table_path, columns=["id", "sel"]).to_pylist()
    n = 0
    for r in t:
        if where is not None and not vd.eval_py(where, r):
            continue
        if pred_rows is not None and not any(a <= r["id"] < b for a, b in pred_rows):
            continue
        n += 1
    return n


def test_stats_counts(m, table):
    where = ("lt", "sel", 3000)
    rows0, rows1 = [[0, 10_000], [30_000, 30_100]], [[5_000, 5_100]]
    doc = {"where": vd.to_sql(where), "rows": {F0: rows0, F1: rows1}}
    v = accept(m, "st", doc)
    # A query that selects a subset of both files' hinted rows, by position.
    q = ("SELECT count(*), sum(i64), min(s), max(dec) FROM read_parquet('{f}', file_row_number=true) "
         "WHERE sel < 3000 AND file_row_number BETWEEN 5000 AND 5099")
    for key in (F0, F1):
        assert duck(q.format(f=v / key)) == duck(q.format(f=table[key]))
    st = vd.view_stats(m.mp, "st")
    files = {f["path"]: f for f in st["files"]}
    assert set(files) == {F0, F1}, files
    for key, rows in ((F0, rows0), (F1, rows1)):
        f = files[key]
        assert f["state"] == "view", f
        assert f["rows"] == N
        assert f["selected_rows"] == _count(table[key], rows, where), f
        for k in ("pages_real", "pages_synthesized", "pages_partial", "bytes_fetched", "ordinary_bytes", "requests"):
            assert isinstance(f[k], int) and f[k] >= 0, (k, f)
    for k in ("pages_real", "pages_synthesized", "pages_partial", "bytes_fetched", "ordinary_bytes", "requests"):
        assert st[k] == sum(f[k] for f in st["files"]), (k, st)
    assert st["requests"] > 0 and st["bytes_fetched"] > 0
    # where alone: exactly the 30 rows of sel < 30 in each file.
    v2 = accept(m, "st2", {"where": SEL_FEW})
    pread_all(v2 / F0)
    f = {x["path"]: x for x in vd.view_stats(m.mp, "st2")["files"]}[F0]
    assert (f["rows"], f["selected_rows"]) == (N, 30), f
    # The plain stats count GETs and bytes.
    plain = m.stats()
    assert plain["s3_get_requests"] > 0 and plain["s3_bytes_fetched"] > 0


def test_rows_hint_queries_by_position(m, table):
    rows = [[100, 150], [40_000, 40_010], [59_990, 60_000]]
    v = accept(m, "pos", {"rows": {F0: rows}})
    cond = " OR ".join(f"file_row_number BETWEEN {a} AND {b - 1}" for a, b in rows)
    q = "SELECT * FROM read_parquet('{f}', file_row_number=true) WHERE {c} ORDER BY file_row_number"
    got = duck(q.format(f=v / F0, c=cond))
    assert got == duck(q.format(f=table[F0], c=cond))
    assert len(got) == 70
    f = {x["path"]: x for x in vd.view_stats(m.mp, "pos")["files"]}[F0]
    assert f["selected_rows"] == 70, f


# -- limits ---------------------------------------------------------------------------------------
def test_hint_count_limit(m):
    for i in range(256):
        r = vd.write_hint(m.mp, f"h{i:03d}", {})
        assert r.ok, (i, r)
    assert len(os.listdir(views_dir(m))) == 256
    with pytest.raises(OSError) as e:
        vd.write_hint(m.mp, "h256", {})
    assert e.value.errno in (errno.ENOSPC, errno.EMFILE, errno.EDQUOT), e.value
    assert not (views_dir(m) / "h256").exists()
    os.unlink(hints_dir(m) / "h000.json")
    assert vd.write_hint(m.mp, "h256", {}).ok


# -- the CLI -------------------------------------------------------------------------------------
def test_cli_hint(m, run_cli, table):
    r = run_cli("hint", m.mp, "c1", "--where", SEL_FEW, "--columns", "id,i64")
    assert r.returncode == 0, r
    assert r.stdout.strip() == f"{m.mp}/.sieve/views/c1", r
    assert Path(r.stdout.strip()).is_dir()
    doc = json.loads((hints_dir(m) / "c1.json").read_text())
    assert doc["where"] == SEL_FEW and doc["columns"] == ["id", "i64"]

    r = run_cli("hint", m.mp, "c2", "--rows", f"{F0}:0-100,{F1}:5-10", "--rows", f"{F0}:200-300")
    assert r.returncode == 0, r
    doc = json.loads((hints_dir(m) / "c2.json").read_text())
    assert sorted(map(tuple, doc["rows"][F0])) == [(0, 100), (200, 300)] and doc["rows"][F1] == [[5, 10]]
    v = Path(r.stdout.strip())
    cond = "file_row_number BETWEEN 0 AND 99 OR file_row_number BETWEEN 200 AND 299"
    q = "SELECT * FROM read_parquet('{f}', file_row_number=true) WHERE {c} ORDER BY file_row_number"
    assert duck(q.format(f=v / F0, c=cond)) == duck(q.format(f=table[F0], c=cond))

    for args, pat in (((("--where", "sel <")), r"\bat \d+"),
                      ((("--where", "nosuch_col = 3")), r"nosuch_col"),
                      ((("--rows", f"{F0}:0-{N + 1}")), str(N))):
        r = run_cli("hint", m.mp, "bad", *args)
        assert r.returncode == 1, r
        assert r.stderr.startswith("sievefs hint: rejected: "), r
        assert re.search(pat, r.stderr), r
        assert r.stdout == ""
        assert not (views_dir(m) / "bad").exists()

    # Same document again: accepted; different one: refused.
    assert run_cli("hint", m.mp, "c1", "--where", SEL_FEW, "--columns", "id,i64").returncode == 0
    r = run_cli("hint", m.mp, "c1", "--where", "sel < 31")
    assert r.returncode == 1 and r.stderr.startswith("sievefs hint:"), r

    r = run_cli("hint", m.mp, "c1", "--remove")
    assert r.returncode == 0, r
    assert not (views_dir(m) / "c1").exists()
    r = run_cli("hint", m.mp, "c1", "--remove")
    assert r.returncode == 1 and "sievefs hint:" in r.stderr, r

    r = run_cli("hint", m.mp)
    assert r.returncode == 2, r
    r = run_cli("hint", m.mp, "x", "--rows", "nocolon")
    assert r.returncode == 2, r


# -- robustness ----------------------------------------------------------------------------------
def test_where_hint_not_blocked_by_unrelated_broken_parquet(s3, bucket, mount, table):
    """A zero-byte or corrupt *.parquet elsewhere under the mount (a
    placeholder, a half-written file) must not make every where-hint fail:
    the view serves such a file real."""
    b = bucket({"a/empty.parquet": b"", "b/junk.parquet": b"not parquet at all",
                F0: local_bytes(table, F0)})
    m = mount(bucket=b, args=vd.EVERY_PARTIAL)
    r = vd.write_hint(m.mp, "w", {"where": SEL_FEW})
    assert r.ok, f"where-hint rejected because of an unrelated file: {r.error_text!r}"
    v = vd.view_path(m.mp, "w")
    assert (v / "a/empty.parquet").read_bytes() == b""
    assert (v / "b/junk.parquet").read_bytes() == b"not parquet at all"
    q = f"SELECT id, i64 FROM read_parquet('{{f}}') WHERE {SEL_FEW} ORDER BY id"
    assert duck(q.format(f=v / F0)) == duck(q.format(f=table[F0]))


# ---- races and teardown (found in review) ------------------------------------

def _close_at_barrier(fd, out, i, bar):
    bar.wait()
    try:
        os.close(fd)
        out[i] = 0
    except OSError as e:
        out[i] = e.errno


@pytest.mark.asan
def test_two_writers_of_one_name_never_both_accepted(m):
    """Two documents written to the same NAME and closed at once: at most one
    is accepted (the other gets EBUSY or EEXIST), and the view serves the
    accepted one."""
    import threading
    for k in range(12):
        p = hints_dir(m) / f"d{k}.json"
        fa = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        fb = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        docs = [json.dumps({"where": "sel < 30"}).encode(), json.dumps({"where": "sel < 5"}).encode()]
        os.write(fa, docs[0])
        os.write(fb, docs[1])
        out = [None, None]
        bar = threading.Barrier(2)
        ts = [threading.Thread(target=_close_at_barrier, args=(fd, out, i, bar)) for i, fd in enumerate((fa, fb))]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert out.count(0) == 1, out
        assert out[1 - out.index(0)] in (errno.EBUSY, errno.EEXIST), out
        assert p.read_bytes() == docs[out.index(0)]


@pytest.mark.asan
def test_unmount_with_a_hint_still_being_written(m):
    """SIGTERM while a hint file is open with unjudged content: the daemon
    exits cleanly (the mount fixture fails the test on sanitizer reports)."""
    import signal
    fd = os.open(hints_dir(m) / "p.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, json.dumps({"where": "sel < 30"}).encode())
    os.kill(m.proc.pid, signal.SIGTERM)
    try:
        rc = m.proc.wait(30)
    except subprocess.TimeoutExpired:
        pytest.fail("the daemon did not exit within 30 s of SIGTERM with a hint open for writing")
    assert rc == 0, f"daemon exit status {rc} after SIGTERM with a hint open for writing"
    try:
        os.close(fd)  # the daemon is gone: the close may fail, but must not hang
    except OSError as e:
        assert e.errno in (errno.ENOTCONN, errno.EIO, errno.ENODEV), e
    assert s3env.wait_for(lambda: not s3env.mounts_at(m.mp), 10), "the mount outlived its daemon"
    assert not (m.mp / ".sieve").exists(), "still served after the daemon exited"


def test_attribute_changes_outside_hints_are_refused(m):
    for args in (["touch", str(m.mp / F0)], ["chmod", "600", str(m.mp / F0)]):
        r = subprocess.run(args, capture_output=True, text=True)
        assert r.returncode != 0 and "Read-only file system" in r.stderr, (args, r.stderr)


def test_an_empty_hint_document_is_refused(m):
    """A hint file created and closed without a document (touch) is refused
    like any invalid document: close() fails and NAME.error says why."""
    fd = os.open(hints_dir(m) / "nothing.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    with pytest.raises(OSError) as e:
        os.close(fd)
    assert e.value.errno == errno.EINVAL, e.value
    err = (hints_dir(m) / "nothing.error").read_text()
    assert "JSON" in err or "empty" in err, err
    assert "nothing" not in os.listdir(views_dir(m))
    r = subprocess.run(["touch", str(hints_dir(m) / "touched.json")], capture_output=True, text=True)
    assert r.returncode != 0, r
    assert (hints_dir(m) / "touched.error").exists()


def test_truncate_and_chmod_of_an_accepted_hint_are_refused(m):
    doc = json.dumps({"where": SEL_FEW}).encode()
    accept(m, "fixed", doc)
    path = hints_dir(m) / "fixed.json"
    with pytest.raises(OSError) as e:
        os.truncate(path, 0)
    assert e.value.errno == errno.EPERM, e.value
    with pytest.raises(OSError) as e:
        os.chmod(path, 0o600)
    assert e.value.errno == errno.EPERM, e.value
    assert path.read_bytes() == doc
    # Rewriting it with O_TRUNC and the same content is still fine.
    assert vd.write_hint(m.mp, "fixed", doc).ok


# -- bytes the query does not read ----------------------------------------------------------
def test_readahead_past_a_named_chunk_fetches_no_unnamed_column(s3, bucket, mount, tmp_path):
    """pyarrow reads each named column chunk in one pread; the kernel reads
    ahead past its end into the next chunk, here a column the hint leaves
    out. The view serves those bytes, but must not take that readahead for
    the reader starting the column and fetch the chunk whole: the unnamed
    chunks (1.6 MB each) would double what the query fetches."""
    import pyarrow.parquet as pq
    path = tmp_path / "part-00000.parquet"
    # incompressible int64: 160 KB pages, 1.6 MB chunks
    vd.write_int64_pages(path, rows=200_000, page_rows=20_000, columns=6, seed=21)
    b = bucket({})
    s3env.upload_file(s3, b, "t/part-00000.parquet", path)
    # Every page planned (no profile needed): the named chunks are sparse.
    m = mount(bucket=b, args=vd.EVERY_PARTIAL)
    named = ["id", "c0", "c2", "c4"]          # c1, c3 and c5 follow a named chunk
    lo, hi = 50_100, 50_200                   # in one page of each chunk
    assert vd.write_hint(m.mp, "q", {"where": f"id >= {lo} AND id < {hi}", "columns": named}).ok
    before = m.stats()["s3_bytes_fetched"]
    filt = [("id", ">=", lo), ("id", "<", hi)]
    got = pq.read_table(vd.view_path(m.mp, "q") / "t" / "part-00000.parquet", columns=named, filters=filt)
    fetched = m.stats()["s3_bytes_fetched"] - before
    assert got.equals(pq.read_table(path, columns=named, filters=filt)) and got.num_rows == hi - lo
    md = pq.ParquetFile(path).metadata
    chunk = {md.schema.column(c).name: md.row_group(0).column(c).total_compressed_size
             for c in range(md.num_columns)}
    # Real: the filter column whole, one page of each other named column,
    # the footer; then at most two kernel readahead windows (128 KiB) past
    # each named chunk, and the header probes of the synthesized pages.
    bound = chunk["id"] + 3 * chunk["c0"] // 10 + md.serialized_size + 4 * (256 << 10) + 27 * 4096
    unnamed = chunk["c1"] + chunk["c3"] + chunk["c5"]
    print(f"fetched {fetched} B; bound {bound} B; unnamed chunks {unnamed} B")
    assert fetched <= bound, (fetched, bound, unnamed)
