"""Fixtures for sievefs end-to-end tests.

* ``moto``      session: moto S3 server on 127.0.0.1 with SigV4 enforced.
* ``s3``        session: boto3 S3 client signed with the moto IAM user.
* ``bucket``    function: factory for fresh, uniquely named buckets.
* ``proxy``     function: faultproxy.FaultProxy in front of moto.
* ``mount``     function: factory that mounts with the real binary, waits until
                the mount answers, and at teardown always unmounts, kills
                leaked daemons and fails the test on sanitizer reports or
                unexpected error lines in the daemon's stderr.
* ``run_cli``   function: run ``sievefs ...`` (no mount expected) with a clean env.
* ``big``       session: a >= 100 MB deterministic object, uploaded once.

Environment: SIEVEFS_BIN (default <repo>/build/sievefs),
SIEVE_E2E_MOUNT_TIMEOUT (seconds to wait for a mount, default 30).
"""
from __future__ import annotations

import contextlib
import errno
import gc
import json
import mmap
import os
import re
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import s3env
from faultproxy import FaultProxy
from s3env import Credentials, MotoServer, clean_env, mounts_at, procs_matching, unmount, wait_mounted

REPO = s3env.REPO
# Every Spark a test starts runs on loopback and does not resolve this
# machine's hostname (a fresh debootstrap root cannot): see bench_data.spark_local_env.
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("SPARK_LOCAL_HOSTNAME", "localhost")
MOUNT_TIMEOUT = float(os.environ.get("SIEVE_E2E_MOUNT_TIMEOUT", "30"))

# Always fatal in daemon output, whatever the test allows.
SANITIZER_RE = re.compile(
    r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|SUMMARY: UndefinedBehaviorSanitizer"
    r"|AddressSanitizer:DEADLYSIGNAL|ThreadSanitizer|Assertion .* failed|double free or corruption"
    r"|malloc\(\): |free\(\): invalid")
# Fatal unless the test allow-lists the line.
ERRORISH_RE = re.compile(r"(?i)\b(error|fatal|panic|abort(ed)?)\b")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Tables a test module left for the end of the run (the fault matrix)."""
    for text in getattr(config, "sieve_summaries", []):
        terminalreporter.write_line(text)


def pytest_configure(config):
    config.addinivalue_line("markers", "asan: part of the short e2e subset run against the ASan+UBSan build")
    config.addinivalue_line("markers", "allow_stderr(*regexes): daemon stderr lines matching these are not failures")
    config.addinivalue_line("markers", "harness: tests of the test harness itself (no sievefs binary needed)")


# -- session-wide --------------------------------------------------------------
@pytest.fixture(scope="session", autouse=True)
def _stale_mount_cleanup(tmp_path_factory):
    """Before the session: lazily unmount *dead* FUSE mounts (daemon gone,
    ENOTCONN) that an earlier, killed run left in a temp dir. Live mounts are
    left alone: they may belong to another test session running right now.
    After the session: anything still mounted under this session's basetemp."""
    def dead(mp):
        try:
            os.stat(mp)
            return False
        except OSError as e:
            return e.errno == errno.ENOTCONN

    for mp, fstype, _, _ in s3env.mountinfo():
        if fstype.startswith("fuse") and mp.startswith("/tmp/") and dead(mp):
            subprocess.run(["fusermount3", "-uz", mp], capture_output=True)
    yield
    base = str(tmp_path_factory.getbasetemp())
    for mp, fstype, _, _ in s3env.mountinfo():
        if mp.startswith(base + "/"):
            subprocess.run(["fusermount3", "-uz", mp], capture_output=True)


@pytest.fixture(scope="session")
def sievefs_bin() -> str:
    b = os.environ.get("SIEVEFS_BIN") or str(REPO / "build" / "sievefs")
    if not s3env.is_executable(b):
        pytest.fail(f"sievefs binary not found or not executable: {b} "
                    f"(build it: cmake -S . -B build -G Ninja && cmake --build build, or set SIEVEFS_BIN)")
    return os.path.realpath(b)


def _serve_moto(tmp_path_factory, name: str, auth: bool):
    """A moto server for the session, logging to <basetemp>/<name>N/moto.log."""
    log = tmp_path_factory.mktemp(name) / "moto.log"
    srv = MotoServer(auth=auth, log_path=log).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def moto(tmp_path_factory):
    yield from _serve_moto(tmp_path_factory, "moto", auth=True)


@pytest.fixture(scope="session")
def moto_noauth(tmp_path_factory):
    """A second moto that accepts unsigned requests (for --no-sign-request)."""
    yield from _serve_moto(tmp_path_factory, "moto-noauth", auth=False)


@pytest.fixture(scope="session")
def s3(moto):
    return moto.client("s3")


def _bucket_name(hint: str) -> str:
    hint = re.sub(r"[^a-z0-9-]+", "-", hint.lower()).strip("-")[:30].strip("-") or "b"
    return f"sv-{hint}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def bucket(request, s3):
    """bucket(objects={key: bytes}) -> name of a new bucket holding them."""
    def make(objects: dict | None = None, hint: str | None = None, client=None) -> str:
        c = client or s3
        name = _bucket_name(hint or request.node.name)
        c.create_bucket(Bucket=name)
        if objects:
            s3env.parallel_put(c, name, objects)
        return name
    return make


@dataclass
class BigObject:
    bucket: str
    key: str
    path: Path
    size: int
    etag: str

    def local(self) -> mmap.mmap:
        f = open(self.path, "rb")
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        f.close()
        return m


BIG_SIZE = 100 * 1024 * 1024 + 7 * 1024 * 1024 + 12345  # >= 100 MB, not block aligned


@pytest.fixture(scope="session")
def big(tmp_path_factory, s3) -> BigObject:
    d = tmp_path_factory.mktemp("big")
    path = d / "big.bin"
    s3env.write_det_file(path, "big-object", BIG_SIZE)
    name = _bucket_name("big")
    s3.create_bucket(Bucket=name)
    key = "blobs/big object.bin"
    s3env.upload_file(s3, name, key, path)
    head = s3.head_object(Bucket=name, Key=key)
    assert head["ContentLength"] == BIG_SIZE
    return BigObject(name, key, path, BIG_SIZE, head["ETag"])


# -- proxy ---------------------------------------------------------------------
@pytest.fixture
def proxy(moto, s3):
    def fetch_full(b, k):
        return s3.get_object(Bucket=b, Key=k)["Body"].read()
    p = FaultProxy(moto.endpoint, fetch_full=fetch_full).start()
    yield p
    p.stop()


# -- running the binary ---------------------------------------------------------
def _sanitizer_env(env: dict, san_dir: Path) -> dict:
    env = dict(env)
    base = {"ASAN_OPTIONS": f"detect_leaks=1:log_path={san_dir}/asan",
            "UBSAN_OPTIONS": f"print_stacktrace=1:log_path={san_dir}/ubsan",
            "LSAN_OPTIONS": f"log_path={san_dir}/lsan",
            "TSAN_OPTIONS": f"log_path={san_dir}/tsan:second_deadlock_stack=1"}
    for k, v in base.items():
        user = os.environ.get(k)
        env[k] = f"{v}:{user}" if user else v
    return env


def _sievefs_env(home: Path, moto, creds, env: dict | None, san_dir: Path) -> dict:
    """The environment sievefs runs in: clean, with HOME; moto's keys when creds
    is "default", those of a Credentials, or none; env on top; sanitizer logs
    into san_dir."""
    e = clean_env(home=home)
    if creds == "default":
        e.update(moto.creds.env())
    elif isinstance(creds, Credentials):
        e.update(creds.env())
    if env:
        e.update({k: str(v) for k, v in env.items()})
    return _sanitizer_env(e, san_dir)


def sanitizer_reports(san_dir: Path, *texts: str) -> list:
    found = []
    for t in texts:
        found += [ln for ln in t.splitlines() if SANITIZER_RE.search(ln)]
    if san_dir.is_dir():
        for f in sorted(san_dir.iterdir()):
            body = f.read_text(errors="replace")
            if body.strip():
                found.append(f"--- {f.name}:\n{body[:4000]}")
    return found


@dataclass
class CliResult:
    argv: list
    returncode: int
    stdout: str
    stderr: str

    def __str__(self):
        return f"$ {' '.join(map(str, self.argv))}\nexit {self.returncode}\nstdout: {self.stdout!r}\nstderr: {self.stderr!r}"


@pytest.fixture
def home(tmp_path) -> Path:
    """An empty HOME for the daemon, so ~/.aws of the machine never leaks in."""
    h = tmp_path / "home"
    h.mkdir(exist_ok=True)
    return h


@pytest.fixture
def run_cli(request, sievefs_bin, tmp_path, home, moto):
    """run_cli(*args, env=None, creds='default', timeout=60) -> CliResult.
    Fails the test on sanitizer reports; kills any daemon left behind whose
    command line names a path under tmp_path."""
    san_dir = tmp_path / "san-cli"
    san_dir.mkdir(exist_ok=True)
    results = []

    def run(*args, env=None, creds="default", timeout=60, input=None):
        e = _sievefs_env(home, moto, creds, env, san_dir)
        argv = [sievefs_bin, *map(str, args)]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=timeout,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as ex:
            pytest.fail(f"`{' '.join(argv)}` did not finish within {timeout}s "
                        f"(stderr so far: {ex.stderr!r})")
        r = CliResult(argv, p.returncode, p.stdout, p.stderr)
        results.append(r)
        return r

    yield run

    leaked = []
    for pid in procs_matching(sievefs_bin):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        if str(tmp_path) in cmd:
            leaked.append(pid)
    for mp, *_ in s3env.mountinfo():
        if mp.startswith(str(tmp_path)):
            unmount(mp, leaked)
    for pid in leaked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    reports = sanitizer_reports(san_dir, *(r.stderr for r in results))
    if reports:
        pytest.fail("sanitizer report from sievefs CLI:\n" + "\n".join(reports), pytrace=False)


class Mount:
    def __init__(self, mp: Path, argv: list, stderr_path: Path, san_dir: Path, allow: list,
                 proc: subprocess.Popen | None, bin_path: str, foreground: bool):
        self.mp = mp
        self.argv = argv
        self.stderr_path = stderr_path
        self.san_dir = san_dir
        self.allow = [re.compile(a) for a in allow]
        self.proc = proc
        self.bin = bin_path
        self.foreground = foreground
        self.expected_exit: set | None = {0}
        self.unmounted = False
        self.cli_stderr = ""

    def __truediv__(self, rel) -> Path:
        return self.mp / rel

    def path(self, rel="") -> Path:
        return self.mp / rel

    def daemon_pids(self) -> list:
        if self.proc is not None:
            return [self.proc.pid] if self.proc.poll() is None else []
        return procs_matching(self.bin, str(self.mp))

    def alive(self) -> bool:
        return bool(self.daemon_pids())

    def stats(self) -> dict:
        return json.loads((self.mp / ".sieve" / "stats").read_bytes())

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def unmount(self) -> list:
        """Unmount now (fusermount3 -u, then -uz), wait for the daemon."""
        gc.collect()
        pids = self.daemon_pids()
        notes = unmount(self.mp, pids)
        if self.proc is not None:
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                notes.append("foreground daemon did not exit after unmount: SIGKILL")
        self.unmounted = True
        return notes


@pytest.fixture
def mount(request, sievefs_bin, moto, tmp_path, home):
    """mount(url=None, *, bucket=None, prefix=None, endpoint=None, creds='default',
             args=(), env=None, foreground=True, force_path_style=True,
             allow_stderr=(), mp=None, warmup="none") -> Mount

    Mounts with `sievefs mount URL MP --endpoint E --force-path-style
    --warmup W ARGS [-f]` and waits until MP answers. warmup defaults to
    "none": a background warmup would add requests to the S3 counters many
    tests compare (test_profile.py asks for one; None leaves the option out,
    so the binary's default applies; a --warmup in args wins). In foreground
    mode the daemon's stderr goes to a file; in background mode `sievefs
    mount` must return only once the mount answers, and its own stderr is
    kept."""
    mounts: list[Mount] = []
    marker_allow = []
    for m in request.node.iter_markers("allow_stderr"):
        marker_allow += list(m.args)

    def make(url=None, *, bucket=None, prefix=None, endpoint=None, creds="default", args=(),
             env=None, foreground=True, force_path_style=True, allow_stderr=(), mp=None,
             warmup="none") -> Mount:
        n = len(mounts)
        if url is None:
            url = f"s3://{bucket}" + (f"/{prefix}" if prefix else "")
        mp = Path(mp) if mp else tmp_path / f"mnt{n}"
        mp.mkdir(parents=True, exist_ok=True)
        san_dir = tmp_path / f"san{n}"
        san_dir.mkdir(exist_ok=True)
        stderr_path = tmp_path / f"sievefs{n}.stderr"
        argv = [sievefs_bin, "mount", url, str(mp), "--endpoint", endpoint or moto.endpoint]
        if force_path_style:
            argv.append("--force-path-style")
        if warmup is not None:
            argv += ["--warmup", warmup]
        argv += [str(a) for a in args]
        if foreground:
            argv.append("-f")
        e = _sievefs_env(home, moto, creds, env, san_dir)
        m = Mount(mp, argv, stderr_path, san_dir, marker_allow + list(allow_stderr), None,
                  sievefs_bin, foreground)
        mounts.append(m)
        if foreground:
            with open(stderr_path, "wb") as errf:
                m.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=errf, stderr=errf,
                                          env=e, start_new_session=True,
                                          preexec_fn=s3env.die_with_parent)
            try:
                wait_mounted(mp, m.proc, MOUNT_TIMEOUT)
            except (RuntimeError, TimeoutError) as ex:
                m.expected_exit = None
                pytest.fail(f"mount failed: {ex}\n$ {' '.join(argv)}\nstderr:\n{m.stderr()}", pytrace=False)
        else:
            try:
                p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   env=e, timeout=MOUNT_TIMEOUT + 30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"`sievefs mount` (background) did not return in time\n$ {' '.join(argv)}",
                            pytrace=False)
            m.cli_stderr = p.stderr
            stderr_path.write_text(p.stdout + p.stderr)
            if p.returncode != 0:
                san = "\n".join(sanitizer_reports(san_dir))
                pytest.fail(f"background mount exited {p.returncode}\n$ {' '.join(argv)}\n"
                            f"stderr: {p.stderr}" + (f"\nsanitizer logs:\n{san}" if san else ""),
                            pytrace=False)
            # The contract: without -f the command returns only once the mount answers.
            if not mounts_at(mp):
                pytest.fail(f"`sievefs mount` exited 0 but {mp} is not a mount point yet", pytrace=False)
            try:
                os.stat(mp)
            except OSError as ex:
                pytest.fail(f"`sievefs mount` exited 0 but stat({mp}) fails: {ex}", pytrace=False)
        return m

    yield make

    problems = []
    for m in mounts:
        notes = [] if m.unmounted else m.unmount()
        if mounts_at(m.mp):
            problems.append(f"{m.mp} still mounted after teardown")
            subprocess.run(["umount", "-l", str(m.mp)], capture_output=True)
        leftovers = procs_matching(sievefs_bin, str(m.mp))
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if leftovers:
            problems.append(f"daemon(s) {leftovers} for {m.mp} survived unmount (killed)")
        err = m.stderr()
        reports = sanitizer_reports(m.san_dir, err)
        if reports:
            problems.append(f"sanitizer report(s) for {m.mp}:\n" + "\n".join(reports))
        if m.proc is not None and m.expected_exit is not None:
            rc = m.proc.returncode
            if rc is not None and rc < 0 and not any("SIGKILL" in n for n in notes):
                problems.append(f"daemon for {m.mp} died from signal {-rc} ({signal.Signals(-rc).name})")
            elif rc is not None and rc >= 0 and rc not in m.expected_exit:
                problems.append(f"daemon for {m.mp} exited {rc} after unmount (expected {m.expected_exit})")
        bad = [ln for ln in err.splitlines()
               if ERRORISH_RE.search(ln) and not any(a.search(ln) for a in m.allow)]
        if bad:
            problems.append(f"unexpected error lines in daemon stderr ({m.stderr_path}):\n  "
                            + "\n  ".join(bad[:20]))
    if problems:
        pytest.fail("mount teardown:\n" + "\n".join(problems), pytrace=False)
