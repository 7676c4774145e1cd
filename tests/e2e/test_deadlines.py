"""Deadlines, interrupts and shutdown on the read path, against a server that
stalls or trickles in the middle of a response (faultproxy between sievefs and
moto). Properties:
  * a read has an overall deadline (--read-timeout): the reader gets EIO soon
    after it, and the daemon logs the object and offset;
  * a reader blocked on a stalled read can be killed or interrupted at once,
    and the mount stays usable;
  * SIGTERM unmounts within seconds whatever is in flight.
Every read runs in a child process with a watchdog, so a hang fails the test
instead of blocking the run. Timing bounds are generous (a loaded CI machine);
the deadlines under test are a few seconds, the behaviour they replace took
minutes."""
import errno
import os
import signal
import subprocess
import sys
import time

import pytest

import s3env

pytestmark = pytest.mark.allow_stderr(r".")

MiB = 1 << 20
SIZE = 2 * MiB + 4321
KEY = "t/target.bin"
PQ = "t/table.parquet"  # its open reads the footer: an open that waits on S3

# Open, say so, pread, print the outcome: "OK <len>" or "ERR <errno name>".
READER = r"""
import errno, mmap, os, signal, sys
path, off, size, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if "dfl" in mode:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if "direct" in mode else 0))
print("OPEN", flush=True)
try:
    if "mmap" in mode:
        m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
        n = len(m[off:off + size])
    else:
        n = len(os.pread(fd, size, off))
    print("OK", n, flush=True)
except OSError as e:
    print("ERR", errno.errorcode.get(e.errno, e.errno), flush=True)
"""


@pytest.fixture
def setup(bucket, mount, proxy):
    data = s3env.det_bytes("deadline-target", SIZE)
    ctrl = s3env.det_bytes("deadline-control", 300_000)
    b = bucket({KEY: data, "t/control.bin": ctrl, PQ: s3env.det_bytes("deadline-pq", 200_000)})

    def do(args=(), foreground=True):
        m = mount(bucket=b, endpoint=proxy.endpoint, args=list(args), foreground=foreground)
        return m, data, ctrl
    return do


def start_reader(path, off=0, size=MiB, mode="buffered"):
    """A child process reading [off, off+size) of path: mode "buffered"
    (pread through the page cache), "direct" (O_DIRECT: a synchronous FUSE
    read), "mmap" (page faults); with "dfl", SIGINT kills it (no Python
    handler)."""
    argv = [sys.executable, "-c", READER, str(path), str(off), str(size), mode]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdout.readline().strip() == "OPEN"
    return p


def wait_blocked(proxy, p, seconds=1.5):
    """Give the reader time to be inside its read, waiting on a faulted GET."""
    assert s3env.wait_for(lambda: any(r.fault for r in proxy.records("get", KEY)), 10), \
        "no faulted GET reached the proxy"
    time.sleep(seconds)
    assert p.poll() is None, "the reader finished although its GET is stalled"


def finish(p, timeout):
    """(exit status, stdout) of the reader, or None if it is still running
    after timeout (it is killed then)."""
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate(timeout=30)
        return None


def still_usable(m, ctrl):
    assert m.alive(), "daemon died"
    assert (m / "t/control.bin").read_bytes() == ctrl


# -- (a) the read deadline ------------------------------------------------------------------
@pytest.mark.parametrize("action,params", [
    pytest.param("stall", {}, id="stall", marks=pytest.mark.asan),
    pytest.param("trickle", dict(first=4096, bytes=0, seconds=3600), id="midbody-stall"),
    pytest.param("trickle", dict(first=16, bytes=8, seconds=2), id="trickle"),
])
def test_read_timeout_gives_eio(setup, proxy, action, params):
    m, data, ctrl = setup(["--read-timeout", "3s"])
    proxy.add("get", action, key=KEY, **params)
    t0 = time.monotonic()
    p = start_reader(m / KEY, off=0, size=MiB)
    r = finish(p, 40)
    took = time.monotonic() - t0
    assert r is not None, f"read still blocked after {took:.0f}s despite --read-timeout 3s"
    rc, out = r
    assert out.split() == ["ERR", "EIO"], f"reader said {out!r} (want EIO)"
    assert 2.5 <= took < 20, f"EIO after {took:.1f}s (deadline 3s)"
    print(f"{action} {params}: EIO after {took:.2f}s")
    log = m.stderr()
    assert KEY in log and "offset" in log and "timed out" in log, f"no log line naming the object and offset:\n{log}"
    assert m.stats()["read_timeouts"] >= 1
    # The stalled fetch goes on in the background (the store's own retries
    # decide its fate); other objects are served meanwhile.
    still_usable(m, ctrl)


def test_read_timeout_option_is_validated(run_cli, tmp_path):
    mp = tmp_path / "mp"
    mp.mkdir()
    for bad in ["0", "banana", "3x", "-1s", "2d"]:
        r = run_cli("mount", "s3://b", mp, "--read-timeout", bad)
        assert r.returncode == 1, r
        assert "--read-timeout" in r.stderr, r
    r = run_cli("mount", "--help")
    assert "--read-timeout" in r.stdout


# -- (b) killing or interrupting a blocked reader ---------------------------------------------
# Buffered and mmap reads wait in the kernel (killably) for readahead
# requests, for which it sends no INTERRUPT: a fatal signal ends them at once,
# a caught one (Python's KeyboardInterrupt handler) only when the read does.
# O_DIRECT reads are synchronous requests: any signal makes the kernel send
# INTERRUPT, and the daemon must answer it at once (EINTR), or the reader
# cannot even be SIGKILLed.
@pytest.mark.parametrize("sig,mode", [
    pytest.param(signal.SIGKILL, "buffered", id="SIGKILL-buffered"),
    pytest.param(signal.SIGKILL, "mmap", id="SIGKILL-mmap"),
    pytest.param(signal.SIGKILL, "direct", id="SIGKILL-direct", marks=pytest.mark.asan),
    pytest.param(signal.SIGINT, "direct", id="SIGINT-caught-direct"),
    pytest.param(signal.SIGINT, "buffered dfl", id="SIGINT-default-buffered"),
])
def test_blocked_reader_can_be_killed(setup, proxy, sig, mode):
    m, data, ctrl = setup()  # the default read timeout: far longer than this test waits
    proxy.add("get", "stall", key=KEY)
    p = start_reader(m / KEY, off=0, size=MiB, mode=mode)
    wait_blocked(proxy, p)
    t0 = time.monotonic()
    p.send_signal(sig)
    r = finish(p, 20)
    took = time.monotonic() - t0
    assert r is not None, f"reader blocked in pread survived {sig.name} for 20s"
    assert r[0] != 0 and "OK" not in r[1], f"reader exit status {r[0]}, said {r[1]!r}"
    assert took < 5, f"reader took {took:.1f}s to die after {sig.name}"
    print(f"{sig.name}: reader gone after {took:.2f}s")
    if "direct" in mode:  # the daemon answered the kernel's INTERRUPT (nothing else could end it)
        assert s3env.wait_for(lambda: m.stats()["read_interrupts"] >= 1, 5), m.stats()
    still_usable(m, ctrl)


OPENER = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
print("START", flush=True)
try:
    os.close(os.open(sys.argv[1], os.O_RDONLY))
    print("OK", flush=True)
except OSError as e:
    print("ERR", e.errno, flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_opener_waiting_for_a_footer_can_be_killed(setup, proxy, sig):
    """Opening a .parquet file reads its footer; on a stalled server the
    open waits, and the kernel's INTERRUPT must end it at once."""
    m, data, ctrl = setup()
    proxy.add("get", "stall", key=PQ)
    p = subprocess.Popen([sys.executable, "-c", OPENER, str(m / PQ)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    assert p.stdout.readline().strip() == "START"
    assert s3env.wait_for(lambda: any(r.fault for r in proxy.records("get", PQ)), 10), "no stalled footer GET"
    time.sleep(1)
    assert p.poll() is None, "the open finished although its footer GET is stalled"
    t0 = time.monotonic()
    p.send_signal(sig)
    r = finish(p, 20)
    took = time.monotonic() - t0
    assert r is not None, f"opener blocked on a stalled footer survived {sig.name} for 20s"
    assert took < 5, f"opener took {took:.1f}s to die after {sig.name}"
    print(f"{sig.name}: opener gone after {took:.2f}s")
    still_usable(m, ctrl)


# -- (c) SIGTERM with a read in flight ------------------------------------------------------
@pytest.mark.parametrize("sig", [pytest.param(signal.SIGTERM, id="SIGTERM", marks=pytest.mark.asan),
                                 pytest.param(signal.SIGINT, id="SIGINT")])
def test_exit_signal_with_stalled_read(setup, proxy, sig):
    m, data, ctrl = setup()
    proxy.add("get", "stall", key=KEY)
    p = start_reader(m / KEY, off=0, size=MiB)
    wait_blocked(proxy, p)
    t0 = time.monotonic()
    m.proc.send_signal(sig)
    try:
        rc = m.proc.wait(30)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - t0
    reader = finish(p, 20)
    assert rc is not None, f"daemon still running 30s after {sig.name} with a stalled read"
    assert rc == 0, f"daemon exit status {rc}"
    assert took < 10, f"daemon took {took:.1f}s to exit after {sig.name}"
    print(f"{sig.name}: daemon exited after {took:.2f}s")
    assert s3env.wait_for(lambda: not s3env.mounts_at(m.mp), 5), f"{sig.name} left the mount behind"
    assert reader is not None, "the reader stayed blocked after the daemon exited"
    assert reader[1].split()[:1] == ["ERR"], f"reader said {reader[1]!r}"
    m.unmounted = True


def test_sigterm_background_daemon_with_stalled_read(setup, proxy):
    """The same for the daemon `sievefs mount` leaves in the background."""
    m, data, ctrl = setup(foreground=False)
    (pid,) = m.daemon_pids()
    proxy.add("get", "stall", key=KEY)
    p = start_reader(m / KEY, off=0, size=MiB)
    wait_blocked(proxy, p)
    t0 = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    gone = s3env.wait_for(lambda: not s3env.pid_alive(pid), 30)
    took = time.monotonic() - t0
    reader = finish(p, 20)
    assert gone, "background daemon still running 30s after SIGTERM with a stalled read"
    assert took < 10, f"daemon took {took:.1f}s to exit after SIGTERM"
    print(f"background SIGTERM: daemon exited after {took:.2f}s")
    assert s3env.wait_for(lambda: not s3env.mounts_at(m.mp), 5), "SIGTERM left the mount behind"
    assert reader is not None, "the reader stayed blocked after the daemon exited"


LISTER = r"""
import os, sys
print("START", flush=True)
try:
    print("OK", len(os.listdir(sys.argv[1])), flush=True)
except OSError as e:
    print("ERR", e.errno, flush=True)
"""


def test_sigterm_with_stalled_listing(setup, proxy):
    """A lookup waiting on a stalled listing is cancelled by the mount's
    shutdown token (and, were it stuck elsewhere, the exit watchdog ends the
    mount): the daemon is gone within seconds."""
    m, data, ctrl = setup()
    proxy.add("list", "stall")
    p = subprocess.Popen([sys.executable, "-c", LISTER, str(m / "t")], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    assert p.stdout.readline().strip() == "START"
    assert s3env.wait_for(lambda: any(r.fault for r in proxy.records("list")), 10), "no stalled listing"
    time.sleep(1)
    assert p.poll() is None, "the listing finished although it is stalled"
    t0 = time.monotonic()
    m.proc.send_signal(signal.SIGTERM)
    try:
        rc = m.proc.wait(60)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - t0
    lister = finish(p, 20)
    assert rc is not None, "daemon still running 60s after SIGTERM with a stalled listing"
    assert took < 10, f"daemon took {took:.1f}s to exit after SIGTERM"
    print(f"stalled listing: daemon exited after {took:.2f}s (status {rc})")
    assert s3env.wait_for(lambda: not s3env.mounts_at(m.mp), 5), "SIGTERM left the mount behind"
    assert lister is not None, "the lister stayed blocked after the daemon exited"
    m.expected_exit = {0, 1}  # 1: the watchdog ended it
    m.unmounted = True


@pytest.mark.parametrize("how", ["deadline", "sigint"])
def test_stalled_listing_has_a_deadline(setup, proxy, how):
    """A lookup or opendir waiting on a stalled listing obeys --read-timeout
    (EIO) and the caller's signal, and its request is cut off, not left to
    the store's own first-byte deadline; the mount lists fine afterwards."""
    m, data, ctrl = setup(["--read-timeout", "2s" if how == "deadline" else "60s"])
    fault = proxy.add("list", "stall", times=1)
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-c", LISTER, str(m / "t")], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    assert p.stdout.readline().strip() == "START"
    assert s3env.wait_for(lambda: fault.hits >= 1, 10), "no stalled listing"
    if how == "sigint":
        time.sleep(1)
        assert p.poll() is None, "the listing finished although it is stalled"
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
    r = finish(p, 30)
    took = time.monotonic() - t0
    assert r is not None, f"lister still blocked after {took:.0f}s"
    if how == "deadline":
        assert r[1].split() == ["ERR", str(errno.EIO)], r
        assert took < 15, f"EIO after {took:.1f}s"
    else:
        assert took < 5, f"the lister took {took:.1f}s to go after SIGINT"
    print(f"stalled listing, {how}: caller released after {took:.2f}s")
    assert s3env.wait_for(lambda: m.stats()["requests_cancelled"] >= 1, 5), m.stats()
    assert sorted(os.listdir(m / "t")) == sorted(["target.bin", "control.bin", "table.parquet"])
    still_usable(m, ctrl)


def test_interrupted_read_does_not_poison_the_cache(setup, proxy):
    """The blocks of an abandoned fetch leave the cache as its GET is cut
    off: the kernel's own retry of the failed read (a buffered read retries
    page by page) fetches them anew, and once the server behaves every
    reader gets the right bytes, never what a half-done fetch left."""
    m, data, ctrl = setup(["--read-timeout", "2s"])
    proxy.add("get", "stall", key=KEY, times=2, seconds=4)  # then let the stalled GETs finish
    p = start_reader(m / KEY, off=MiB // 2, size=MiB)
    r = finish(p, 40)
    assert r is not None and r[1].split() in (["ERR", "EIO"], ["OK", str(MiB)]), r
    time.sleep(3)  # the stalled GETs end (cut off, or completed by the server)
    with open(m / KEY, "rb", buffering=0) as f:
        assert os.pread(f.fileno(), MiB, MiB // 2) == data[MiB // 2:MiB // 2 + MiB]
    assert (m / KEY).read_bytes() == data


# -- the same through a view ------------------------------------------------------------------
from test_views import F0, SEL_FEW, accept, table, tbucket  # noqa: E402,F401  (fixtures, shared data)


@pytest.mark.parametrize("mode", ["buffered", "direct"])
def test_view_read_deadline_and_interrupt(mount, tbucket, proxy, mode):
    """A view's file over a stalling server: planning (shared by the file's
    readers) gives up at its deadline and the file is served real, and the
    read fails with EIO soon after; an O_DIRECT reader killed meanwhile dies
    at once, though its thread was the one planning."""
    # The default deadline for the killed reader: only the interrupt can end its wait.
    timeout = "3s" if mode == "buffered" else "60s"
    m = mount(bucket=tbucket, endpoint=proxy.endpoint, args=["--read-timeout", timeout, "--request-cost", "0"])
    vdir = accept(m, "few", {"where": SEL_FEW})
    proxy.add("get", "stall", key=F0)
    if mode == "direct":
        p = start_reader(vdir / F0, off=0, size=MiB, mode="direct")
        time.sleep(1)
        assert p.poll() is None
        t0 = time.monotonic()
        p.send_signal(signal.SIGKILL)
        r = finish(p, 20)
        took = time.monotonic() - t0
        assert r is not None and took < 5, "O_DIRECT view reader survived SIGKILL"
        print(f"view direct: reader gone after {took:.2f}s")
        assert s3env.wait_for(lambda: m.stats()["read_interrupts"] >= 1, 5), m.stats()
        return
    t0 = time.monotonic()
    p = start_reader(vdir / F0, off=0, size=MiB, mode=mode)
    r = finish(p, 60)
    took = time.monotonic() - t0
    assert r is not None, f"view read still blocked after {took:.0f}s despite --read-timeout 3s"
    assert r[1].split() == ["ERR", "EIO"], r
    assert took < 30, f"EIO after {took:.1f}s"
    print(f"view {mode}: EIO after {took:.2f}s")
    assert "timed out" in m.stderr() and F0 in m.stderr()


def test_abandoned_view_fetches_are_cancelled(mount, tbucket, proxy):
    """A reader killed while its view plans takes the plan's requests with
    it: the queued ones never go out and the stalled ones are not retried.
    With two requests in flight and a 1 s first-byte deadline, a plan left
    running would keep sending GETs (its queue, then retries) for seconds."""
    m = mount(bucket=tbucket, endpoint=proxy.endpoint,
              args=["--request-cost", "0", "--max-connections", "2", "--stall-timeout", "1000"])
    vdir = accept(m, "few", {"where": SEL_FEW})
    proxy.add("get", "stall", key=F0)
    p = start_reader(vdir / F0, off=0, size=MiB, mode="direct")
    assert s3env.wait_for(lambda: len(proxy.records("get", F0)) >= 2, 10), "the plan sent nothing"
    assert p.poll() is None
    p.send_signal(signal.SIGKILL)
    assert finish(p, 20) is not None
    assert s3env.wait_for(lambda: m.stats()["requests_cancelled"] >= 1, 5), m.stats()
    time.sleep(0.5)  # a sweep: what was in flight is cut off
    settled = len(proxy.records("get", F0))
    time.sleep(4)    # four first-byte deadlines: time for queued requests and retries to go out
    later = len(proxy.records("get", F0))
    print(f"GETs of the view's file: {settled} when the reader died, {later} 4 s later; "
          f"cancelled {m.stats()['requests_cancelled']}")
    assert later == settled, f"{later - settled} GETs went out for a reader that is gone"
