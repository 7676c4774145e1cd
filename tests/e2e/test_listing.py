"""Namespace: listings, sizes, nested directories, awkward key names,
pagination, xattrs, read-only behaviour. Expected values always come from the
bucket (boto3 listing) or the bytes we uploaded."""
import errno
import json
import re
import os
import stat
from pathlib import PurePosixPath

import pytest

import s3env

NESTED = {
    "top.txt": b"top level\n",
    "empty": b"",
    "dir1/a.txt": b"a" * 1000,
    "dir1/b.bin": s3env.det_bytes("b", 70_000),
    "dir1/sub/c.txt": b"c\n",
    "dir1/sub/deeper/d.bin": s3env.det_bytes("d", 5),
    "dir1/sub/deeper/deepest/e": b"eeee",
    "dir2/f": s3env.det_bytes("f", 1 << 20),
    "dir2/g/h/i/j/k/l.txt": b"deep",
}

SPECIAL = [
    "with space.txt", "dir with space/inner file.txt", "plus+sign.txt", "a+b/c+d.txt",
    "percent%.txt", "percent%20literal.txt", "%41%2F.txt", "eq=val.txt", "k=v/x=1.txt",
    "amp&and.txt", "q?mark.txt", "hash#tag.txt", "semi;colon.txt", "colon:x.txt", "comma,x.txt",
    "tilde~.txt", "apos'quote.txt", "star*.txt", "brackets[1].txt", "paren(1).txt", "at@.txt",
    "dollar$.txt", "caret^.txt", "back`tick.txt", "braces{}.txt", "pipe|.txt", "lt<gt>.txt",
    "quote\".txt", "backslash\\x.txt", "unicode-ü-é-ß.txt", "日本語/ファイル.txt", "emoji-😀.txt",
    "combining-e\u0301.txt", "ελληνικά.txt", "dots...txt", "-leading-dash", " leading space.txt",
    "trailing space .txt", "UPPER/lower/MiXeD.TXT",
]


def expected_tree(objects: dict, prefix: str = ""):
    """files {relpath: size} and dirs {relpath} as a mount of prefix should show them."""
    files, dirs = {}, set()
    for k, v in objects.items():
        if not k.startswith(prefix):
            continue
        rel = k[len(prefix):]
        size = v if isinstance(v, int) else len(v)
        files[rel] = size
        parts = PurePosixPath(rel).parts
        for i in range(1, len(parts)):
            dirs.add("/".join(parts[:i]))
    return files, dirs


def walk_mount(root):
    files, dirs = {}, set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for d in dirnames:
            dirs.add(d if rel == "." else f"{rel}/{d}")
        for f in filenames:
            p = os.path.join(dirpath, f)
            st = os.stat(p)
            assert stat.S_ISREG(st.st_mode), p
            files[f if rel == "." else f"{rel}/{f}"] = st.st_size
    return files, dirs


@pytest.mark.asan
def test_nested_listing_matches_bucket(s3, bucket, mount):
    b = bucket(NESTED)
    m = mount(bucket=b)
    want_files, want_dirs = expected_tree({k: v for k, (v, _) in s3env.list_all(s3, b).items()})
    files, dirs = walk_mount(m.mp)
    assert files == want_files
    assert dirs == want_dirs
    for d in want_dirs:
        assert stat.S_ISDIR(os.stat(m / d).st_mode)
    for k, v in NESTED.items():
        assert (m / k).read_bytes() == v, k


def test_prefix_mount_shows_only_prefix(s3, bucket, mount):
    objs = dict(NESTED)
    objs["dir1x/not-me.txt"] = b"sibling prefix, must not appear"
    objs["dir1.txt"] = b"also not under dir1/"
    b = bucket(objs)
    for prefix in ("dir1", "dir1/"):
        m = mount(bucket=b, prefix=prefix)
        want_files, want_dirs = expected_tree(objs, "dir1/")
        files, dirs = walk_mount(m.mp)
        assert files == want_files, prefix
        assert dirs == want_dirs, prefix
        assert (m / "sub/deeper/deepest/e").read_bytes() == b"eeee"
        m.unmount()


def test_nested_prefix_mount(bucket, mount):
    b = bucket(NESTED)
    m = mount(bucket=b, prefix="dir1/sub/deeper")
    files, dirs = walk_mount(m.mp)
    assert files == {"d.bin": 5, "deepest/e": 4}
    assert dirs == {"deepest"}


def test_missing_entries_are_enoent(bucket, mount):
    m = mount(bucket=bucket(NESTED))
    for rel in ("nope", "dir1/nope", "dir1/sub/deeper/nope/x", "top.txt/child", "dir"):
        with pytest.raises(OSError) as e:
            os.stat(m / rel)
        assert e.value.errno in (errno.ENOENT, errno.ENOTDIR), rel


@pytest.mark.asan
def test_special_key_names(s3, bucket, mount):
    objs = {k: (k.encode() + b"\n") * 3 for k in SPECIAL}
    b = bucket(objs)
    m = mount(bucket=b)
    want_files, want_dirs = expected_tree(objs)
    files, dirs = walk_mount(m.mp)
    assert files == want_files
    assert dirs == want_dirs
    for k, v in objs.items():
        assert (m / k).read_bytes() == v, k
        assert os.getxattr(m / k, "user.sievefs.key") == k.encode(), k


def test_special_names_under_special_prefix(bucket, mount):
    prefix = "pre fix+%/ü=1/"
    objs = {prefix + k: k.encode() for k in SPECIAL[:12]}
    objs["pre fix+%/other"] = b"outside"
    b = bucket(objs)
    m = mount(bucket=b, prefix=prefix.rstrip("/"))
    files, _ = walk_mount(m.mp)
    assert files == {k: len(k.encode()) for k in SPECIAL[:12]}
    for k in SPECIAL[:12]:
        assert (m / k).read_bytes() == k.encode()


@pytest.mark.asan
def test_large_directory_paginates(s3, bucket, mount):
    n = 2100  # > 2 pages of 1000 (moto is capped at 1000 keys per page like S3)
    objs = {f"many/file-{i:05d}.dat": s3env.det_bytes(f"many{i}", i % 97) for i in range(n)}
    objs.update({"many/zz-sub/inner.txt": b"inner", "many/aa-sub/x": b"x", "other.txt": b"o"})
    b = bucket(objs)
    m = mount(bucket=b)
    names = os.listdir(m / "many")
    assert len(names) == len(set(names))
    want = {k.split("/")[1] for k in objs if k.startswith("many/")}
    assert set(names) == want
    sizes = {e.name: e.stat().st_size for e in os.scandir(m / "many") if e.is_file()}
    assert sizes == {k.split("/")[1]: len(v) for k, v in objs.items() if k.count("/") == 1 and k.startswith("many/")}
    for i in (0, 999, 1000, 1001, 1999, 2000, n - 1):
        k = f"many/file-{i:05d}.dat"
        assert (m / k).read_bytes() == objs[k]


def test_root_listing_with_many_prefixes(bucket, mount):
    objs = {f"d{i:04d}/f": b"1" for i in range(1200)}
    b = bucket(objs)
    m = mount(bucket=b)
    assert sorted(os.listdir(m.mp)) == [f"d{i:04d}" for i in range(1200)]


@pytest.mark.asan
def test_xattrs(s3, bucket, mount):
    objs = {"x/file.bin": s3env.det_bytes("xa", 12345), "empty": b""}
    b = bucket(objs)
    m = mount(bucket=b)
    for k in objs:
        p = m / k
        names = os.listxattr(p)
        assert "user.sievefs.key" in names and "user.sievefs.etag" in names, names
        assert os.getxattr(p, "user.sievefs.key") == k.encode()
        etag = os.getxattr(p, "user.sievefs.etag").decode()
        want = s3.head_object(Bucket=b, Key=k)["ETag"]
        assert etag.strip('"') == want.strip('"') and etag.strip('"')
    with pytest.raises(OSError) as e:
        os.getxattr(m / "x/file.bin", "user.sievefs.nope")
    assert e.value.errno == errno.ENODATA


def test_xattr_on_prefix_mount_is_full_key(bucket, mount):
    b = bucket({"deep/er/obj.txt": b"1"})
    m = mount(bucket=b, prefix="deep")
    assert os.getxattr(m / "er/obj.txt", "user.sievefs.key") == b"deep/er/obj.txt"


def test_multipart_etag_xattr(big, mount):
    m = mount(bucket=big.bucket)
    etag = os.getxattr(m / big.key, "user.sievefs.etag").decode()
    assert etag.strip('"') == big.etag.strip('"') and "-" in etag


def test_directory_marker_objects(s3, bucket, mount):
    """Zero-byte 'folder/' marker objects (as S3 consoles create) must show as
    directories, never as files with empty or slash-terminated names."""
    objs = {"folder/": b"", "folder/in.txt": b"in", "emptydir/": b"", "a/b/": b"", "a/b/c.txt": b"c"}
    b = bucket(objs)
    m = mount(bucket=b)
    assert sorted(os.listdir(m.mp)) == ["a", "emptydir", "folder"]
    assert os.listdir(m / "folder") == ["in.txt"]
    assert os.listdir(m / "emptydir") == []
    assert stat.S_ISDIR(os.stat(m / "emptydir").st_mode)
    assert os.listdir(m / "a/b") == ["c.txt"]


def test_read_only(s3, bucket, mount):
    objs = {"f.txt": b"original", "d/g.txt": b"g"}
    b = bucket(objs)
    m = mount(bucket=b)
    ro = (errno.EROFS, errno.EACCES, errno.EPERM)
    attempts = [
        lambda: open(m / "f.txt", "wb"),
        lambda: open(m / "f.txt", "ab"),
        lambda: open(m / "new.txt", "wb"),
        lambda: os.mkdir(m / "newdir"),
        lambda: os.unlink(m / "f.txt"),
        lambda: os.rmdir(m / "d"),
        lambda: os.rename(m / "f.txt", m / "h.txt"),
        lambda: os.truncate(m / "f.txt", 0),
        lambda: os.chmod(m / "f.txt", 0o777),
        lambda: os.setxattr(m / "f.txt", "user.x", b"1"),
        lambda: os.symlink("f.txt", m / "link"),
    ]
    for i, fn in enumerate(attempts):
        with pytest.raises(OSError) as e:
            fn()
        assert e.value.errno in ro + (errno.ENOTSUP,), (i, e.value)
    assert s3env.list_all(s3, b).keys() == objs.keys()
    assert (m / "f.txt").read_bytes() == b"original"
    # The mount itself is read-write only so that .sieve/hints can be written.


def test_stat_fields(s3, bucket, mount):
    b = bucket({"f.bin": s3env.det_bytes("st", 5000), "d/x": b"1"})
    m = mount(bucket=b)
    st = os.stat(m / "f.bin")
    assert stat.S_ISREG(st.st_mode) and st.st_size == 5000
    assert st.st_mode & 0o444 and not st.st_mode & 0o222
    lm = s3.head_object(Bucket=b, Key="f.bin")["LastModified"].timestamp()
    assert abs(st.st_mtime - lm) < 2  # LastModified has second resolution
    assert st.st_blocks * 512 >= st.st_size
    dst = os.stat(m / "d")
    assert stat.S_ISDIR(dst.st_mode) and dst.st_mode & 0o555 == 0o555


def test_a_buckets_own_control_dir_name(bucket, mount, run_cli, moto, tmp_path, sievefs_bin):
    """The bucket has its own .sieve/ prefix: the mount warns that the control
    directory hides it and lists it neither; with --control-dir the control
    directory takes another name and the bucket's .sieve/ reads as any prefix."""
    import io
    import pyarrow as pa
    import pyarrow.parquet as pq
    buf = io.BytesIO()
    pq.write_table(pa.table({"x": list(range(100))}), buf)
    b = bucket({".sieve/mine.txt": b"the bucket's own", "data/a.parquet": buf.getvalue()})
    mp = tmp_path / "bg"
    mp.mkdir()
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint, "--force-path-style", "--warmup", "none")
    try:
        assert r.returncode == 0, r
        assert re.search(r"warning: .*'\.sieve'.*--control-dir", r.stderr), r.stderr
        assert sorted(os.listdir(mp)) == ["data"], "a name lookups never reach must not be listed"
        assert (mp / ".sieve" / "stats").exists(), "the control directory keeps its name by default"
    finally:
        s3env.unmount(mp, s3env.procs_matching(sievefs_bin, str(mp)))

    m = mount(bucket=b, args=["--control-dir", ".sv"])
    assert sorted(os.listdir(m.mp)) == [".sieve", "data"]
    assert (m / ".sieve/mine.txt").read_bytes() == b"the bucket's own"
    assert "fuse_read_bytes" in json.loads((m / ".sv/stats").read_bytes())
    r = run_cli("hint", m.mp, "q", "--control-dir", ".sv", "--where", "x < 5")
    assert r.returncode == 0 and r.stdout.strip() == f"{m.mp}/.sv/views/q", r
    assert pq.read_table(m / ".sv/views/q/data/a.parquet").num_rows == 100
    r = run_cli("hint", m.mp, "q2", "--where", "x < 5")
    assert r.returncode != 0, r
