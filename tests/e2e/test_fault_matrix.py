"""The fault matrix: every kind of server misbehaviour the fault proxy can
inject, each against a fresh mount. Each case reads an object (or lists a
directory) while the fault is on and counts what came back: chunks with the
exact bytes, chunks failing with EIO, and wrong bytes, which must be 0. Every
read ends within its deadline and the daemon keeps serving afterwards. The
whole matrix is printed as a table at the end of the module (pytest -s, or
in the terminal summary).

Transient faults (bursts) must end in exact bytes; permanent ones in exact
bytes or EIO, never anything else."""
import errno
import os
import time

import pytest

import s3env

pytestmark = pytest.mark.allow_stderr(r".")

MiB = 1 << 20
SIZE = 3 * MiB + 1234
CHUNK = 256 * 1024
READ_TIMEOUT_S = 20
ARGS = ["--retry-budget", "3s", "--read-timeout", f"{READ_TIMEOUT_S}s", "--stall-timeout", "1000",
        "--progress-timeout", "2000", "--dir-ttl", "1"]

RESULTS = []  # (case, kind, faults injected, ok chunks, EIO chunks, wrong bytes, seconds)


@pytest.fixture(scope="module", autouse=True)
def matrix_table(request):
    yield
    if not RESULTS:
        return
    lines = ["", "fault matrix (each case on a fresh mount; wrong bytes must be 0):",
             "| case | kind | faults injected | exact chunks | EIO chunks | wrong bytes | seconds |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in RESULTS:
        lines.append("| {} | {} | {} | {} | {} | {} | {:.1f} |".format(*r))
    text = "\n".join(lines)
    request.config.sieve_summaries = getattr(request.config, "sieve_summaries", []) + [text]
    out = os.environ.get("SIEVE_FAULT_MATRIX")  # also kept in a file when asked
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")


def wrong_bytes(got: bytes, want: bytes) -> int:
    n = sum(1 for a, b in zip(got, want) if a != b)
    return n + abs(len(got) - len(want))


READERS = 4
# One pread of a chunk: the daemon answers each FUSE read within
# --read-timeout, and the kernel may retry a failed page read once.
PREAD_DEADLINE_S = 2 * READ_TIMEOUT_S


def read_all(path, want: bytes):
    """Every chunk through a fresh open with the page cache dropped, four
    readers at once (a permanent fault then costs a few retry budgets, not
    one per chunk): (exact chunks, EIO chunks, wrong bytes, slowest pread in
    seconds)."""
    import concurrent.futures

    with open(path, "rb", buffering=0) as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)

        def one(off):
            t0 = time.monotonic()
            try:
                got = os.pread(f.fileno(), CHUNK, off)
            except OSError as e:
                assert e.errno == errno.EIO, f"pread at {off}: {e!r} (want EIO)"
                return None, time.monotonic() - t0
            return wrong_bytes(got, want[off:off + CHUNK]), time.monotonic() - t0
        with concurrent.futures.ThreadPoolExecutor(READERS) as pool:
            results = list(pool.map(one, range(0, len(want), CHUNK)))
    eio = sum(1 for w, _ in results if w is None)
    wrong = sum(w for w, _ in results if w is not None)
    ok = sum(1 for w, _ in results if w == 0)
    return ok, eio, wrong, max(t for _, t in results)


@pytest.fixture
def target(bucket, mount, proxy):
    data = s3env.det_bytes("matrix-target", SIZE)
    ctrl = s3env.det_bytes("matrix-control", 100_000)
    b = bucket({"t/target.bin": data, "t/control.bin": ctrl, "d/x": b"x", "d/y": b"yy"})
    m = mount(bucket=b, endpoint=proxy.endpoint, args=ARGS)

    def healthy():
        assert m.alive(), "daemon died"
        proxy.clear()
        assert (m / "t/control.bin").read_bytes() == ctrl
    return m, b, data, healthy


GET_CASES = [
    # case, transient?, fault kwargs
    ("500 burst x3", True, dict(action="status", status=500, code="InternalError", times=3)),
    ("503 SlowDown burst x6", True, dict(action="status", status=503, times=6)),
    ("429 burst 2 s", True, dict(action="status", status=429, code="TooManyRequests", for_seconds=2)),
    ("503 for good", False, dict(action="status", status=503)),
    ("reset mid-body x2", True, dict(action="truncate_body", times=2)),
    ("reset before the response, for good", False, dict(action="reset")),
    ("truncated body, for good", False, dict(action="truncate_body")),
    ("short 206 body, for good", False, dict(action="short_body")),
    ("first byte stalled x1", True, dict(action="stall", times=1, seconds=None)),
    ("body stalled x1", True, dict(action="trickle", times=1, head_bytes=100, chunk=8, every=None)),
    ("body trickling x1", True, dict(action="trickle", times=1, head_bytes=100, chunk=8, every=2.0)),
    ("wrong Content-Range", False, dict(action="content_range", mode="garbage")),
    ("shifted Content-Range", False, dict(action="content_range", mode="shift")),
    ("wrong Content-Range total", False, dict(action="content_range", mode="total")),
    ("a longer 206", False, dict(action="content_range", mode="longer")),
    ("200 for a ranged GET", False, dict(action="ignore_range")),
    ("changed ETag", False, dict(action="etag")),
]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("case,transient,fault", GET_CASES, ids=[c[0] for c in GET_CASES])
def test_get_faults(target, proxy, case, transient, fault):
    m, b, data, healthy = target
    fault = dict(fault)
    f = proxy.add("get", fault.pop("action"), key="t/target.bin", **fault)
    t0 = time.monotonic()
    ok, eio, wrong, slowest = read_all(m / "t/target.bin", data)
    elapsed = time.monotonic() - t0
    RESULTS.append((case, "transient" if transient else "permanent", f.hits, ok, eio, wrong, elapsed))
    assert f.hits > 0, "the fault never triggered"
    assert wrong == 0, f"{wrong} WRONG BYTES"
    if transient:
        assert eio == 0, f"a transient fault gave EIO on {eio} chunks"
    # Every read, failing or not, ends within its deadline (plus the
    # kernel's retry of a failed page read); the test's timeout (240 s) is
    # well above the worst case of the whole file (4 chunks a reader).
    assert slowest < PREAD_DEADLINE_S, f"a pread took {slowest:.1f} s (deadline {PREAD_DEADLINE_S} s)"
    rounds = -(-(ok + eio) // READERS)
    assert elapsed < rounds * PREAD_DEADLINE_S, f"{elapsed:.1f} s for {rounds} rounds of reads"
    healthy()


@pytest.mark.allow_stderr(r".")
def test_object_replaced_mid_read(target, s3):
    m, b, data, healthy = target
    new = s3env.det_bytes("matrix-replacement", SIZE - 777)
    ok = eio = wrong = 0
    t0 = time.monotonic()
    with open(m / "t/target.bin", "rb", buffering=0) as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        first = os.pread(f.fileno(), CHUNK, 0)
        wrong += wrong_bytes(first, data[:CHUNK])
        ok += 1
        s3.put_object(Bucket=b, Key="t/target.bin", Body=new)
        for off in range(2 * MiB, SIZE, CHUNK):  # past what read-ahead may have fetched
            try:
                got = os.pread(f.fileno(), CHUNK, off)
            except OSError as e:
                assert e.errno == errno.EIO
                eio += 1
                continue
            w = wrong_bytes(got, data[off:off + CHUNK])  # the old version's bytes, or nothing
            wrong += w
            ok += w == 0
    RESULTS.append(("object replaced mid-read", "permanent", 1, ok, eio, wrong, time.monotonic() - t0))
    assert wrong == 0 and eio > 0
    # replaced, then reopened by path once the listing's TTL is over: the new version, whole
    time.sleep(1.5)
    t0 = time.monotonic()
    ok2, eio2, wrong2, _ = read_all(m / "t/target.bin", new)
    RESULTS.append(("replaced, then reopened", "permanent", 1, ok2, eio2, wrong2, time.monotonic() - t0))
    assert wrong2 == 0 and eio2 == 0
    healthy()


LIST_CASES = [
    ("listing loop (same token)", dict(mode="repeat_token")),
    ("truncated listing without a token", dict(mode="truncated_no_token")),
    ("malformed listing XML", dict(mode="truncate_xml")),
    ("listing not XML", dict(mode="garbage")),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case,fault", LIST_CASES, ids=[c[0] for c in LIST_CASES])
def test_listing_faults(target, proxy, case, fault):
    m, b, data, healthy = target
    f = proxy.add("list", "listing", **fault)
    t0 = time.monotonic()
    with pytest.raises(OSError) as e:
        os.listdir(m / "d")
    elapsed = time.monotonic() - t0
    RESULTS.append((case, "permanent", f.hits, 0, 1, 0, elapsed))
    assert e.value.errno == errno.EIO
    assert f.hits > 0
    assert elapsed < READ_TIMEOUT_S + 5
    healthy()
    assert sorted(os.listdir(m / "d")) == ["x", "y"]
