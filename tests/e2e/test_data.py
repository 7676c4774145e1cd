"""Byte-exactness: small, empty, boundary-sized and >= 100 MB objects, random
ranges, EOF handling, concurrent readers. Every expected byte comes from the
data we generated and uploaded."""
import filecmp
import hashlib
import os
import random
import threading

import pytest

import s3env

MiB = 1 << 20
SIZES = [0, 1, 2, 4095, 4096, 4097, 65535, 65536, 131073, MiB - 1, MiB, MiB + 1, 3 * MiB + 5, 9 * MiB + 77]


def pread_exact(fd, n, off) -> bytes:
    """pread until n bytes or EOF (a single pread may legally return less)."""
    out = bytearray()
    while len(out) < n:
        b = os.pread(fd, n - len(out), off + len(out))
        if not b:
            break
        out += b
    return bytes(out)


def drop_file_cache(fd):
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


@pytest.fixture
def small_files(tmp_path, bucket):
    local = tmp_path / "local"
    local.mkdir()
    objs = {}
    for n in SIZES:
        data = s3env.det_bytes(f"small{n}", n)
        objs[f"sizes/{n}.bin"] = data
        (local / f"{n}.bin").write_bytes(data)
    b = bucket(objs)
    return b, local, objs


@pytest.mark.asan
def test_small_and_boundary_sizes_byte_exact(small_files, mount):
    b, local, objs = small_files
    m = mount(bucket=b)
    for n in SIZES:
        p = m / f"sizes/{n}.bin"
        assert os.stat(p).st_size == n
        assert filecmp.cmp(p, local / f"{n}.bin", shallow=False), n
        assert hashlib.sha256(p.read_bytes()).digest() == hashlib.sha256(objs[f"sizes/{n}.bin"]).digest()


def test_empty_file(bucket, mount):
    m = mount(bucket=bucket({"e": b""}))
    with open(m / "e", "rb") as f:
        assert f.read() == b""
        assert os.pread(f.fileno(), 10, 0) == b""
        assert os.pread(f.fileno(), 10, 1000) == b""


def test_big_object_sequential_byte_exact(big, mount):
    m = mount(bucket=big.bucket)
    p = m / big.key
    assert os.stat(p).st_size == big.size
    h_mount, h_local = hashlib.sha256(), hashlib.sha256()
    local = big.local()
    off = 0
    with open(p, "rb", buffering=0) as f:
        while True:
            chunk = f.read(4 * MiB)
            if not chunk:
                break
            want = local[off:off + len(chunk)]
            if chunk != want:
                bad = next(i for i in range(len(chunk)) if chunk[i] != want[i])
                pytest.fail(f"first wrong byte at offset {off + bad}")
            h_mount.update(chunk)
            h_local.update(want)
            off += len(chunk)
    assert off == big.size
    assert h_mount.digest() == h_local.digest()


def test_big_object_filecmp(big, mount):
    m = mount(bucket=big.bucket)
    assert filecmp.cmp(m / big.key, big.path, shallow=False)


def random_ranges(size, n, seed):
    rnd = random.Random(seed)
    lengths = [1, 7, 100, 4096, 4097, 65536, 131072 + 3, MiB - 1, MiB + 17, 3 * MiB]
    out = []
    for _ in range(n):
        ln = rnd.choice(lengths)
        out.append((rnd.randrange(0, size), ln))
    # crossing 1 MiB (and 8 MiB) boundaries
    for k in (1, 2, 7, 8, 9, 31, 64, 99):
        b = k * MiB
        if b < size:
            out += [(b - 1, 2), (b - 5, 10), (b - 4096, 8192), (b - MiB // 2, MiB), (b - 1, 2 * MiB + 3)]
    # EOF
    out += [(size - 1, 1), (size - 1, 100), (size - 4096, 8192), (size - MiB - 3, 2 * MiB),
            (size, 1), (size, 4096), (size + 12345, 10), (0, 0), (size - 1, 0)]
    return out


@pytest.mark.timeout(300)
def test_big_object_random_ranges(big, mount):
    m = mount(bucket=big.bucket)
    local = big.local()
    ranges = random_ranges(big.size, 300, "ranges")
    with open(m / big.key, "rb", buffering=0) as f:
        fd = f.fileno()
        for i, (off, ln) in enumerate(ranges):
            if i % 8 == 0:
                drop_file_cache(fd)  # make the kernel ask sievefs again
            got = pread_exact(fd, ln, off)
            want = local[off:off + ln] if off < big.size else b""
            assert len(got) == len(want), (off, ln)
            assert got == want, f"wrong bytes for pread(off={off}, len={ln})"


@pytest.mark.asan
def test_random_ranges_medium_object(bucket, mount, tmp_path):
    """Like the big-object test, on a 24 MiB object (cheap enough for ASan)."""
    size = 24 * MiB + 321
    data = s3env.det_bytes("medium", size)
    m = mount(bucket=bucket({"m.bin": data}))
    with open(m / "m.bin", "rb", buffering=0) as f:
        for i, (off, ln) in enumerate(random_ranges(size, 150, "medium")):
            if i % 5 == 0:
                drop_file_cache(f.fileno())
            assert pread_exact(f.fileno(), ln, off) == data[off:off + ln], (off, ln)


def test_backwards_and_strided_reads(big, mount):
    """Read patterns that defeat simple sequential prefetchers: backwards
    1 MiB steps from the end, and read-4K-skip-3M strides."""
    m = mount(bucket=big.bucket)
    local = big.local()
    with open(m / big.key, "rb", buffering=0) as f:
        fd = f.fileno()
        off = big.size - MiB
        for _ in range(20):
            assert pread_exact(fd, MiB, off) == local[off:off + MiB], off
            off -= MiB + 12345
        drop_file_cache(fd)
        for off in range(777, big.size, 3 * MiB + 4096):
            assert pread_exact(fd, 4096, off) == local[off:off + 4096], off


@pytest.mark.asan
def test_concurrent_readers(bucket, mount):
    size = 16 * MiB + 99
    objs = {"c/big.bin": s3env.det_bytes("conc", size)}
    objs.update({f"c/small{i}.bin": s3env.det_bytes(f"cs{i}", 1000 * i + 1) for i in range(8)})
    m = mount(bucket=bucket(objs))
    errors = []

    def worker(t):
        rnd = random.Random(f"worker{t}")
        try:
            with open(m / "c/big.bin", "rb", buffering=0) as f:
                for _ in range(40):
                    off = rnd.randrange(size)
                    ln = rnd.choice([1, 4096, 100_000, MiB + 1])
                    got = pread_exact(f.fileno(), ln, off)
                    if got != objs["c/big.bin"][off:off + ln]:
                        errors.append(f"thread {t}: wrong bytes at {off}+{ln}")
                        return
            for i in range(8):
                k = f"c/small{(i + t) % 8}.bin"
                if (m / k).read_bytes() != objs[k]:
                    errors.append(f"thread {t}: wrong content of {k}")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert not any(t.is_alive() for t in threads), "reader threads hung"
    assert not errors, errors


def test_concurrent_readers_same_fd_big(big, mount):
    """Several threads preading one shared fd of the big object."""
    m = mount(bucket=big.bucket)
    local = big.local()
    errors = []
    with open(m / big.key, "rb", buffering=0) as f:
        fd = f.fileno()

        def worker(t):
            rnd = random.Random(f"shared{t}")
            for _ in range(30):
                off = rnd.randrange(big.size)
                ln = rnd.choice([512, 65536, 2 * MiB])
                try:
                    if pread_exact(fd, ln, off) != local[off:off + ln]:
                        errors.append((t, off, ln))
                except OSError as e:
                    errors.append((t, off, ln, e))

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(240)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[:5]


def test_mmap_read(bucket, mount):
    import mmap
    data = s3env.det_bytes("mmap", 3 * MiB + 11)
    m = mount(bucket=bucket({"f": data}))
    with open(m / "f", "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert mm[:] == data
        assert mm[MiB - 3:MiB + 3] == data[MiB - 3:MiB + 3]


def test_same_content_through_two_mounts(bucket, mount):
    data = s3env.det_bytes("two", 2 * MiB)
    b = bucket({"f": data})
    m1 = mount(bucket=b)
    m2 = mount(bucket=b)
    assert (m1 / "f").read_bytes() == data == (m2 / "f").read_bytes()
