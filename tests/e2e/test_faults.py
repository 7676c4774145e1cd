"""Hostile or flaky server behaviour, injected by faultproxy between sievefs
and moto. Properties:
  * transient faults (503, connection reset, truncated body, stall) that stop
    after a few requests: correct bytes, and stats.retries grows;
  * permanent faults: every read either returns the correct bytes or fails
    with EIO -- never wrong bytes, never a crash or hang, and the daemon keeps
    serving other requests afterwards.
Daemon stderr is expected to contain error lines here (sanitizer reports still
fail the test)."""
import errno
import os
import time

import pytest

import s3env

pytestmark = pytest.mark.allow_stderr(r".")

MiB = 1 << 20
SIZE = 2 * MiB + 4321


@pytest.fixture
def setup(bucket, mount, proxy):
    """A bucket with a target object and a control object, mounted through the proxy."""
    data = s3env.det_bytes("fault-target", SIZE)
    ctrl = s3env.det_bytes("fault-control", 300_000)
    b = bucket({"t/target.bin": data, "t/control.bin": ctrl, "sub/x.txt": b"x", "sub/y.txt": b"yy"})

    def do(args=None):
        """args None: a 3 s retry budget, so that permanent faults turn into
        EIO within seconds rather than the default 20 s per request."""
        if args is None:
            args = ["--retry-budget", "3s"]
        m = mount(bucket=b, endpoint=proxy.endpoint, args=list(args))
        return m, data, ctrl
    do.bucket = b
    return do


def read_chunks(path, data, chunk=512 * 1024):
    """Read the file chunk by chunk with pread. Returns (n_ok, n_eio). Fails the
    test on wrong bytes or any errno other than EIO."""
    ok = eio = 0
    with open(path, "rb", buffering=0) as f:
        for off in range(0, len(data), chunk):
            try:
                got = os.pread(f.fileno(), chunk, off)
            except OSError as e:
                assert e.errno == errno.EIO, f"pread at {off}: {e!r} (want EIO)"
                eio += 1
                continue
            assert got == data[off:off + chunk], f"WRONG BYTES at offset {off} (len {len(got)})"
            ok += 1
    return ok, eio


def still_healthy(m, ctrl):
    assert m.alive(), "daemon died"
    assert (m / "t/control.bin").read_bytes() == ctrl
    assert sorted(os.listdir(m / "sub")) == ["x.txt", "y.txt"]


# -- transient faults: must be retried to success ---------------------------------------
A = pytest.mark.asan
TRANSIENT = [
    pytest.param("status", dict(status=503), 2, id="503-x2", marks=A),
    pytest.param("status", dict(status=500, code="InternalError"), 2, id="500-x2"),
    pytest.param("status", dict(status=503), 4, id="503-x4"),
    pytest.param("reset", {}, 2, id="reset-x2", marks=A),
    pytest.param("truncate_body", {}, 1, id="truncate-x1", marks=A),
    pytest.param("truncate_body", dict(percent=1), 2, id="truncate1pct-x2"),
]


@pytest.mark.parametrize("action,params,times", TRANSIENT)
def test_transient_get_faults_are_retried(setup, proxy, action, params, times):
    m, data, ctrl = setup()
    before = m.stats()
    proxy.add("get", action, times=times, key="t/target.bin", **params)
    assert (m / "t/target.bin").read_bytes() == data
    after = m.stats()
    assert proxy.faults[0].hits == times, "the fault did not trigger as often as asked"
    if action == "status":  # every error status reached sievefs: each one is a retry
        assert after["retries"] - before["retries"] >= times
    else:  # libcurl itself may transparently re-send once on a reused connection that died
        assert after["retries"] > before["retries"]
    still_healthy(m, ctrl)


@pytest.mark.parametrize("status,code", [(503, "SlowDown"), (429, "TooManyRequests")])
def test_a_ten_second_throttling_burst_is_survived(setup, proxy, status, code):
    """S3 throttles with bursts of 503 SlowDown (or 429): every GET of the
    mount fails for 10 s. Reads wait it out with backoff and return the right
    bytes; the default retry budget (20 s) is what allows it."""
    m, data, ctrl = setup(args=[])
    before = m.stats()
    fault = proxy.add("get", "status", status=status, code=code, for_seconds=10)
    assert (m / "t/target.bin").read_bytes() == data
    assert fault.hits > 5, "the burst hardly happened"
    assert time.monotonic() - fault.first_hit > 10, "the read finished inside the burst"
    assert m.stats()["retries"] - before["retries"] >= fault.hits
    still_healthy(m, ctrl)


def test_retry_budget_bounds_a_burst(setup, proxy):
    """--retry-budget 2s gives up on a burst longer than that: EIO, and the
    next read after the burst works."""
    m, data, ctrl = setup(args=["--retry-budget", "2s"])
    fault = proxy.add("get", "status", status=503, code="SlowDown", for_seconds=6)
    with open(m / "t/target.bin", "rb", buffering=0) as f:
        with pytest.raises(OSError) as e:
            os.pread(f.fileno(), 4096, 0)
    assert e.value.errno == errno.EIO
    assert time.monotonic() - fault.first_hit < 6, "the read waited for the whole burst"
    assert m.stats()["errors"] > 0
    while time.monotonic() - fault.first_hit <= 6.5:
        time.sleep(0.25)
    with open(m / "t/target.bin", "rb", buffering=0) as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        assert f.read() == data
    still_healthy(m, ctrl)


def test_client_errors_are_not_retried(setup, proxy):
    """A 403 will not change: one request, EIO, no retries."""
    m, data, ctrl = setup()
    before = m.stats()
    proxy.add("get", "status", status=403, code="AccessDenied", key="t/target.bin")
    with open(m / "t/target.bin", "rb", buffering=0) as f:
        with pytest.raises(OSError) as e:
            os.pread(f.fileno(), 4096, 0)
    assert e.value.errno == errno.EIO
    assert m.stats()["retries"] == before["retries"]
    proxy.clear()
    still_healthy(m, ctrl)


def test_stall_is_detected_and_retried(setup, proxy):
    m, data, ctrl = setup(args=["--stall-timeout", "1000", "--retry-budget", "3s"])
    before = m.stats()
    proxy.add("get", "stall", times=1, key="t/target.bin", seconds=None)
    assert (m / "t/target.bin").read_bytes() == data
    assert proxy.faults[0].hits == 1
    assert m.stats()["retries"] > before["retries"]
    still_healthy(m, ctrl)


@pytest.mark.parametrize("every", [2.0, None], ids=["trickle", "stall-mid-body"])
def test_slow_body_is_cut_off_and_retried(setup, proxy, every):
    """A body that trickles (8 bytes every 2 s) or stops after its first bytes
    is cut off by the progress deadline and retried on a new connection; the
    next attempt is served normally, so a 1 MiB pread succeeds within about
    one progress window instead of blocking for minutes."""
    window_s = 2.0
    m, data, ctrl = setup(args=["--progress-timeout", str(int(window_s * 1000)), "--retry-budget", "3s"])
    before = m.stats()
    proxy.add("get", "trickle", times=1, key="t/target.bin", range_start=0, head_bytes=100, chunk=8,
              every=every)
    t0 = time.monotonic()
    with open(m / "t/target.bin", "rb", buffering=0) as f:
        got = os.pread(f.fileno(), MiB, 0)
    elapsed = time.monotonic() - t0
    assert got == data[:MiB]
    assert proxy.faults[0].hits == 1
    gets = [(r.headers.get("range"), r.fault, r.status) for r in proxy.records("get", "t/target.bin")]
    assert m.stats()["retries"] > before["retries"], (elapsed, gets, m.stats())
    # one window, the deadline sweep, a backoff (<= 100 ms) and the retried GET
    assert elapsed < window_s + 3.0, f"the slow body held the read for {elapsed:.1f} s"
    still_healthy(m, ctrl)


def test_slow_first_byte_within_stall_timeout(setup, proxy):
    m, data, ctrl = setup()  # default stall timeout is far above 2 s
    proxy.add("get", "stall", times=1, key="t/target.bin", seconds=2)
    assert (m / "t/target.bin").read_bytes() == data
    still_healthy(m, ctrl)


@pytest.mark.parametrize("times", [1, 3])
def test_transient_listing_503(setup, proxy, times):
    m, data, ctrl = setup()
    before = m.stats()
    proxy.add("list", "status", times=times, status=503)
    assert sorted(os.listdir(m / "sub")) == ["x.txt", "y.txt"]
    assert proxy.faults[0].hits == times
    assert m.stats()["retries"] - before["retries"] >= times


def test_mount_survives_a_transient_503(run_cli, proxy, bucket, tmp_path, sievefs_bin):
    """Mount-time requests fail fast (sievefs makes 2 attempts there, by
    design: fs/core/fs.c), but one 503 must not fail the mount."""
    b = bucket({"a": b"1"})
    mp = tmp_path / "mp"
    mp.mkdir()
    proxy.add("any", "status", times=1, status=503)
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", proxy.endpoint)
    try:
        assert r.returncode == 0, r
        assert (mp / "a").read_bytes() == b"1"
    finally:
        s3env.unmount(mp, s3env.procs_matching(sievefs_bin, str(mp)))


# -- permanent faults: EIO or correct bytes, never wrong bytes ---------------------------
PERMANENT_GET = [
    pytest.param("status", dict(status=503), id="503", marks=A),
    pytest.param("status", dict(status=500, code="InternalError"), id="500"),
    pytest.param("status", dict(status=403, code="AccessDenied"), id="403"),
    pytest.param("reset", {}, id="reset"),
    pytest.param("truncate_body", {}, id="truncate"),
    pytest.param("short_body", {}, id="short_body", marks=A),
    pytest.param("short_body", dict(percent=0), id="empty_body"),
    pytest.param("content_range", dict(mode="shift"), id="cr-shift", marks=A),
    pytest.param("content_range", dict(mode="total"), id="cr-total"),
    pytest.param("content_range", dict(mode="garbage"), id="cr-garbage", marks=A),
    pytest.param("content_range", dict(mode="drop"), id="cr-drop"),
    pytest.param("content_range", dict(mode="longer"), id="cr-longer"),
    pytest.param("ignore_range", {}, id="ignore_range", marks=A),
]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("action,params", PERMANENT_GET)
def test_permanent_get_faults_never_give_wrong_bytes(setup, proxy, action, params):
    m, data, ctrl = setup()
    proxy.add("get", action, key="t/target.bin", **params)
    before = m.stats()
    ok, eio = read_chunks(m / "t/target.bin", data)
    print(f"{action} {params}: {ok} chunks correct, {eio} EIO, {proxy.faults[0].hits} faulty responses")
    assert proxy.faults[0].hits > 0, "the fault never triggered"
    if eio:
        assert m.stats()["errors"] > before["errors"], "EIO returned but stats.errors did not grow"
    proxy.clear()
    still_healthy(m, ctrl)


def test_content_range_total_must_be_the_objects_size(setup, proxy):
    """A 206 whose Content-Range names the right bytes but another total size
    ("a-b/SIZE+1") comes from another object: it is never served."""
    m, data, ctrl = setup()
    proxy.add("get", "content_range", key="t/target.bin", mode="total")
    ok, eio = read_chunks(m / "t/target.bin", data)
    assert proxy.faults[0].hits > 0, "the fault never triggered"
    assert ok == 0 and eio > 0, f"{ok} chunks were served from responses naming another object size"
    assert f"Content-Range says the object has {SIZE + 1} bytes, its version has {SIZE}" in m.stderr()
    proxy.clear()
    still_healthy(m, ctrl)


@pytest.mark.parametrize("action,params", [("status", dict(status=503)), ("content_range", dict(mode="shift")),
                                           ("short_body", {})])
def test_recovers_after_permanent_fault_clears(setup, proxy, action, params):
    """After a fault produced EIO and went away, the same file reads fine
    (through a new open, with the page cache of the file dropped)."""
    m, data, ctrl = setup()
    proxy.add("get", action, key="t/target.bin", **params)
    read_chunks(m / "t/target.bin", data)
    proxy.clear()
    with open(m / "t/target.bin", "rb", buffering=0) as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        assert f.read() == data


LISTING_MODES = [pytest.param("truncate_xml", marks=A), "garbage", "empty", "unclosed_tag",
                 pytest.param("bad_size", marks=A), "huge_size", pytest.param("truncated_no_token", marks=A),
                 pytest.param("long_key", marks=A)]


@pytest.mark.parametrize("mode", LISTING_MODES)
def test_corrupt_listing_gives_eio_never_wrong_names(setup, proxy, mode):
    """sub/ has not been listed yet, so listing it needs a ListObjectsV2 that
    comes back corrupt every time: the only right answer is EIO (a partial
    listing would silently hide files)."""
    m, data, ctrl = setup()
    proxy.add("list", "listing", mode=mode)
    with pytest.raises(OSError) as e:
        names = os.listdir(m / "sub")
        pytest.fail(f"listing a corrupt ListObjectsV2 answer returned {names}")
    assert e.value.errno == errno.EIO, f"{e.value!r} (want EIO)"
    assert proxy.faults[0].hits > 0
    assert m.alive()
    proxy.clear()
    assert (m / "t/control.bin").read_bytes() == ctrl


@pytest.mark.parametrize("mode", ["truncate_xml", "garbage", "truncated_no_token"])
def test_corrupt_listing_at_mount(run_cli, proxy, bucket, tmp_path, sievefs_bin, mode):
    """If the mount-time request is a listing and it is garbage, mount either
    fails cleanly (one line, no stale mount) or mounts and reports EIO."""
    b = bucket({"a": b"1", "d/b": b"2"})
    mp = tmp_path / "mp"
    mp.mkdir()
    proxy.add("list", "listing", mode=mode)
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", proxy.endpoint)
    try:
        if r.returncode != 0:
            assert s3env.one_line(r.stderr), r
            assert not s3env.mounts_at(mp)
        else:
            with pytest.raises(OSError) as e:
                os.listdir(mp)
            assert e.value.errno == errno.EIO
    finally:
        s3env.unmount(mp, s3env.procs_matching(sievefs_bin, str(mp)))


def test_many_pages_with_faults_in_the_middle(bucket, mount, proxy):
    """Pagination + a 503 on the second page: the listing is still complete."""
    objs = {f"p/f{i:04d}": b"" for i in range(2500)}
    b = bucket(objs)
    m = mount(bucket=b, endpoint=proxy.endpoint)
    proxy.add("list", "status", times=1, status=503)
    os.listdir(m.mp)  # root listing: uses up the 503 on page 1 of the root
    proxy.add("list", "status", times=1, status=503)
    names = os.listdir(m / "p")
    assert sorted(names) == sorted(k[2:] for k in objs)
    tokens = [r for r in proxy.records("list") if "continuation-token" in r.query]
    assert len(tokens) >= 2, "expected ListObjectsV2 continuation requests"
