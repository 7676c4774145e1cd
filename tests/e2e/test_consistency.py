"""Objects that change under the mount: a read must never mix versions.
Every ranged GET carries If-Match with the ETag seen at open, so a replaced
object reads as EIO, and a deleted one as EIO/ENOENT."""
import errno
import os

import pytest

import s3env

MiB = 1 << 20
# The daemon may log the failed read; nothing else.
CHANGED = r"(?i)precondition|412|If-Match|changed|modified|etag|404|NoSuchKey|not found|deleted|read failed"


def read_fails_once_changed(m, key: str, head: bytes, change, offset: int, errnos: tuple):
    """Open key on mount m and read its first bytes (they must be head); after
    change() a read at offset must fail with one of errnos."""
    with open(m / key, "rb", buffering=0) as f:
        assert os.pread(f.fileno(), len(head), 0) == head
        change()
        with pytest.raises(OSError) as e:
            os.pread(f.fileno(), 4096, offset)
        assert e.value.errno in errnos


@pytest.mark.asan
@pytest.mark.allow_stderr(CHANGED)
def test_replaced_after_open_gives_eio(s3, bucket, mount):
    size = 48 * MiB
    v1 = s3env.det_bytes("v1", size)
    b = bucket({"obj.bin": v1})
    m = mount(bucket=b)
    with open(m / "obj.bin", "rb", buffering=0) as f:
        fd = f.fileno()
        assert os.pread(fd, 4096, 0) == v1[:4096]
        v2 = s3env.det_bytes("v2", size)  # same size, different bytes and ETag
        s3.put_object(Bucket=b, Key="obj.bin", Body=v2)
        far = size - 3 * MiB - 777
        with pytest.raises(OSError) as e:
            got = os.pread(fd, 65536, far)
            # not reached if correct: show what came back
            pytest.fail(f"read after replacement returned {'OLD' if got == v1[far:far + 65536] else 'NEW' if got == v2[far:far + 65536] else 'MIXED/garbage'} bytes")
        assert e.value.errno == errno.EIO
    assert m.alive()
    assert m.stats()["errors"] >= 1


@pytest.mark.allow_stderr(CHANGED)
def test_replaced_with_different_size(s3, bucket, mount):
    v1 = s3env.det_bytes("size1", 20 * MiB)
    b = bucket({"obj.bin": v1})
    m = mount(bucket=b)
    read_fails_once_changed(m, "obj.bin", v1[:100],
                            lambda: s3.put_object(Bucket=b, Key="obj.bin", Body=b"tiny now"),
                            15 * MiB, (errno.EIO,))


@pytest.mark.allow_stderr(CHANGED)
def test_never_mixed_bytes_while_replaced_repeatedly(s3, bucket, mount):
    """Read the whole file while it is replaced: every chunk that comes back
    must be the version seen at open."""
    size = 24 * MiB
    v1 = s3env.det_bytes("mix1", size)
    b = bucket({"obj.bin": v1})
    m = mount(bucket=b)
    saw_error = False
    with open(m / "obj.bin", "rb", buffering=0) as f:
        fd = f.fileno()
        assert os.pread(fd, 1024, 0) == v1[:1024]
        s3.put_object(Bucket=b, Key="obj.bin", Body=s3env.det_bytes("mix2", size))
        for off in range(0, size, MiB):
            try:
                got = os.pread(fd, MiB, off)
            except OSError as e:
                assert e.errno == errno.EIO
                saw_error = True
                continue
            assert got == v1[off:off + len(got)], f"bytes at {off} are not the version opened"
    assert saw_error, "object replaced mid-read but every uncached read still succeeded"


@pytest.mark.asan
@pytest.mark.allow_stderr(CHANGED)
def test_deleted_after_listing(s3, bucket, mount):
    data = s3env.det_bytes("del", 3 * MiB)
    b = bucket({"d/gone.bin": data, "d/stays.bin": b"stays"})
    m = mount(bucket=b)
    assert sorted(os.listdir(m / "d")) == ["gone.bin", "stays.bin"]
    s3.delete_object(Bucket=b, Key="d/gone.bin")
    with pytest.raises(OSError) as e:
        with open(m / "d/gone.bin", "rb") as f:
            got = f.read()
            pytest.fail(f"read of a deleted object returned {len(got)} bytes")
    assert e.value.errno in (errno.EIO, errno.ENOENT)
    assert (m / "d/stays.bin").read_bytes() == b"stays"
    assert m.alive()


@pytest.mark.allow_stderr(CHANGED)
def test_deleted_after_open(s3, bucket, mount):
    data = s3env.det_bytes("del2", 12 * MiB)
    b = bucket({"gone.bin": data})
    m = mount(bucket=b)
    read_fails_once_changed(m, "gone.bin", data[:10],
                            lambda: s3.delete_object(Bucket=b, Key="gone.bin"),
                            9 * MiB, (errno.EIO, errno.ENOENT))


@pytest.mark.asan
def test_every_object_get_carries_if_match(s3, bucket, mount, proxy):
    objs = {"a.bin": s3env.det_bytes("im-a", 5 * MiB + 1), "b/c.bin": s3env.det_bytes("im-c", 70_000),
            "e": b""}
    b = bucket(objs)
    m = mount(bucket=b, endpoint=proxy.endpoint)
    for k, v in objs.items():
        assert (m / k).read_bytes() == v
    etags = {k: s3.head_object(Bucket=b, Key=k)["ETag"].strip('"') for k in objs}
    gets = proxy.records("get")
    assert gets, "no object GETs went through the proxy"
    for g in gets:
        im = g.headers.get("if-match")
        assert im is not None, f"GET {g.path} without If-Match"
        assert im.strip('"') == etags[g.key], (g.key, im)
        assert "range" in g.headers, f"GET {g.path} without Range"


def test_new_object_appears_after_dir_ttl(s3, bucket, mount):
    """Listings are cached at most --dir-ttl seconds."""
    import time
    b = bucket({"d/one": b"1"})
    m = mount(bucket=b, args=["--dir-ttl", "1"])
    assert os.listdir(m / "d") == ["one"]
    s3.put_object(Bucket=b, Key="d/two", Body=b"22")
    time.sleep(2.5)
    assert sorted(os.listdir(m / "d")) == ["one", "two"]
    assert (m / "d/two").read_bytes() == b"22"


def read_through_new_open(path) -> bytes:
    """A fresh open by path, its page cache dropped first (the kernel keeps a
    file's pages across opens: an old inode's would hide nothing here)."""
    with open(path, "rb", buffering=0) as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        return f.read()


@pytest.mark.allow_stderr(CHANGED)
def test_replaced_object_reopened_by_path_after_dir_ttl(s3, bucket, mount):
    """Nobody lists: once --dir-ttl has passed, a new open by path looks the
    name up again and reads the new version (the kernel keeps a name only
    for --dir-ttl; before, the old inode's 1 h entry kept serving it)."""
    import time
    v1, v2 = s3env.det_bytes("reopen-v1", 3 * MiB), s3env.det_bytes("reopen-v2", 3 * MiB + 5)
    b = bucket({"d/obj.bin": v1})
    m = mount(bucket=b, args=["--dir-ttl", "2"])
    assert read_through_new_open(m / "d/obj.bin") == v1
    s3.put_object(Bucket=b, Key="d/obj.bin", Body=v2)
    time.sleep(3)
    assert os.stat(m / "d/obj.bin").st_size == len(v2)
    assert read_through_new_open(m / "d/obj.bin") == v2


@pytest.mark.allow_stderr(CHANGED)
def test_a_listing_that_sees_a_replaced_object_invalidates_its_name(s3, bucket, mount):
    """The name was looked up late in the listing's TTL, so the kernel would
    keep it well past the next listing; that listing sees the new ETag and
    has the kernel forget the name: the next open by path reads the new
    version at once."""
    import time
    v1, v2 = s3env.det_bytes("inval-v1", MiB), s3env.det_bytes("inval-v2", MiB + 3)
    b = bucket({"d/obj.bin": v1, "d/other": b"o"})
    ttl = 6
    m = mount(bucket=b, args=["--dir-ttl", str(ttl)])
    t0 = time.monotonic()
    assert sorted(os.listdir(m / "d")) == ["obj.bin", "other"]  # listed at t0 (no readdirplus: no entries)
    time.sleep(ttl - 1)
    assert read_through_new_open(m / "d/obj.bin") == v1  # looked up at t0 + 5: kept until t0 + 11
    s3.put_object(Bucket=b, Key="d/obj.bin", Body=v2)
    while time.monotonic() - t0 < ttl + 0.5:
        time.sleep(0.1)
    assert sorted(os.listdir(m / "d")) == ["obj.bin", "other"]  # the listing is refreshed here
    time.sleep(0.6)  # the daemon invalidates within a few hundred ms
    assert time.monotonic() - t0 < 2 * ttl - 2, "too slow to tell: the entry may have expired by itself"
    assert os.stat(m / "d/obj.bin").st_size == len(v2)
    assert read_through_new_open(m / "d/obj.bin") == v2
