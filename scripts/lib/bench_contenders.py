"""The contenders of scripts/bench: ways an unmodified reader gets at a table
in S3, each reaching the same endpoint (s3link with the link emulated inside
it, or moto/versitygw behind scripts/lib/wanproxy.py: bench_link.py).

A contender is set up once per run (a fresh mount, so no cache survives from
the run before), hands the reader a location, reports the CPU time and peak
memory of its own daemon, and is torn down:

  view    sievefs, reading through a view made from the query's hint
  plain   sievefs, the plain path
  s3fs    s3fs-fuse (Debian package s3fs), no local cache
  rclone  rclone mount (Debian package rclone), --vfs-cache-mode full on an
          empty cache directory (what rclone's documentation prescribes for
          programs that seek); not in the quick plan
  direct  the reader's own S3 client, reading S3 directly (bench_reader.py):
          pyarrow's S3FileSystem, DuckDB's httpfs extension
          (bench_duckdb_httpfs.py), deltalake and polars with s3:// URIs

With an https endpoint (scripts/bench --tls) the CA bundle of the server's
self-signed certificate goes to sievefs as AWS_CA_BUNDLE, to s3fs as
CURL_CA_BUNDLE, to rclone as --ca-cert and to the direct readers in their
spec (bench_reader.py). S3 traffic (bytes, requests) is counted by the
server's (or proxy's) counters, the same way for all.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402

BIN = os.environ.get("SIEVEFS_BIN", str(REPO / "build" / "sievefs"))
CONTENDERS = ("view", "plain", "s3fs", "rclone", "direct")
# Without its file cache rclone serves a file handle's reads one at a time and
# reopens the object on every seek (a new GET on a new connection, about 2 RTT):
# at `wan` a 90-column query took 50 s that way, 3 s with --vfs-cache-mode full.
# Its defaults read 128 MiB after every seek and 16 MiB ahead; 1 MiB chunks and
# no read-ahead suit column-chunk readers. SIEVE_BENCH_RCLONE_ARGS replaces
# these arguments (the cache directory is always a fresh one per mount).
# Extra `sievefs mount` arguments for both sievefs contenders (bench.py
# --sievefs-args), e.g. `--request-cost 0` on a link where requests are free.
SIEVEFS_EXTRA: list[str] = []
# bench.py --trace DIR: each sievefs mount runs in the foreground with
# --log-level trace, its log (every read the kernel sends, every GET with
# its tag) in DIR/TAG.N.log, TAG naming the table, query, reader and
# contender (scripts/lib/trace_waste.py reads them).
TRACE_DIR: Path | None = None
_trace_count = 0
RCLONE_EXTRA = os.environ.get("SIEVE_BENCH_RCLONE_ARGS",
                              "--vfs-cache-mode full --vfs-read-chunk-size 1M --buffer-size 0").split()


def _proc_cpu_and_peak(pid: int) -> tuple[float, int]:
    """CPU seconds (user + system) and peak RSS in bytes of a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        cpu = (int(fields[11]) + int(fields[12])) / tick
        peak = 0
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
        return cpu, peak
    except (OSError, IndexError, ValueError):
        return 0.0, 0


def _read_json(path: Path):
    """A JSON document, None if the file does not exist; {"unreadable": ...}
    if it exists but does not parse."""
    import json
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        return {"unreadable": str(e)}
    try:
        return json.loads(raw)
    except ValueError:
        return {"unreadable": raw[:2000].decode("utf-8", "replace")}


class Contender:
    """Base: subclasses set self.location (what the reader opens) in setup()."""
    name = "?"
    fuse = True

    def __init__(self, work: Path, bucket: str, endpoint: str, creds, ca_bundle: str | None = None):
        self.work = work
        self.bucket = bucket
        self.endpoint = endpoint  # s3link or the proxy, http(s)://127.0.0.1:PORT
        self.creds = creds
        self.ca_bundle = ca_bundle  # an https endpoint's CA bundle
        self.mp = work / f"mnt-{self.name}"
        self.pids: list[int] = []
        self.init_seconds = 0.0
        self.trace_tag = self.name  # one_run names the cell
        self.trace_proc: subprocess.Popen | None = None

    def env(self) -> dict:
        env = s3env.clean_env(extra=self.creds.env())
        env.pop("AWS_CA_BUNDLE", None)  # http endpoint: some tools refuse a CA bundle for it
        if self.ca_bundle:
            env["AWS_CA_BUNDLE"] = self.ca_bundle      # sievefs
            env["CURL_CA_BUNDLE"] = self.ca_bundle     # s3fs (libcurl)
        return env

    def setup(self, table_prefix: str, query: dict) -> str:
        raise NotImplementedError

    def daemon_usage(self) -> tuple[float, int]:
        cpu, peak = 0.0, 0
        for pid in self.pids:
            c, p = _proc_cpu_and_peak(pid)
            cpu += c
            peak = max(peak, p)
        return cpu, peak

    def teardown(self):
        if self.fuse:
            s3env.unmount(self.mp, self.pids)
        if self.trace_proc is not None:
            try:
                self.trace_proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.trace_proc.kill()
                self.trace_proc.wait()
            self.trace_proc = None

    def sieve_profile(self):
        """MOUNTPOINT/.sieve/profile as-is (a JSON document), None when the
        mount has none (not a sievefs mount, or a sievefs without one)."""
        return None

    def view_stats(self):
        """The view's NAME.stats document, None without a view."""
        return None

    def kernel_read_bytes(self):
        """Bytes the mount has returned to the kernel's reads so far (what
        the kernel asked for, its readahead included), None when the
        contender does not count them."""
        return None

    def _wait_mounted(self):
        if not s3env.wait_for(lambda: bool(s3env.mounts_at(self.mp)), 60):
            raise RuntimeError(f"{self.name}: {self.mp} did not mount")


class SievefsPlain(Contender):
    name = "plain"

    def _mount(self):
        self.mp.mkdir(parents=True, exist_ok=True)
        argv = [BIN, "mount", f"s3://{self.bucket}", str(self.mp), "--endpoint", self.endpoint,
                "--force-path-style", *SIEVEFS_EXTRA]
        if TRACE_DIR is not None:
            self._mount_traced(argv)
        else:
            r = subprocess.run(argv, env=self.env(), capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                raise RuntimeError(f"sievefs mount failed: {r.stderr.strip()}")
            self.pids = s3env.procs_matching(BIN, str(self.mp))
        self._wait_warmup()

    def _mount_traced(self, argv: list[str]):
        global _trace_count
        _trace_count += 1
        TRACE_DIR.mkdir(parents=True, exist_ok=True)
        log = TRACE_DIR / f"{self.trace_tag}.{_trace_count}.log"
        with open(log, "wb") as f:
            self.trace_proc = subprocess.Popen([*argv, "-f", "--log-level", "trace"], env=self.env(),
                                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=f)
        s3env.wait_mounted(self.mp, self.trace_proc, timeout=120)
        self.pids = [self.trace_proc.pid]

    def _wait_warmup(self, timeout: float = 60.0):
        """The mount measures the link in the background (--warmup automatic):
        wait for it, as part of init, so that its requests stay out of the
        query's traffic and the query runs with the profile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            doc = _read_json(self.mp / ".sieve" / "profile")
            if not doc or doc.get("state") != "running":
                return
            time.sleep(0.05)

    def setup(self, table_prefix: str, query: dict) -> str:
        t = time.perf_counter()
        self._mount()
        self.init_seconds = time.perf_counter() - t
        return str(self.mp / table_prefix)

    def sieve_profile(self):
        return _read_json(self.mp / ".sieve" / "profile")

    def kernel_read_bytes(self):
        doc = _read_json(self.mp / ".sieve" / "stats")
        v = doc.get("fuse_read_bytes") if isinstance(doc, dict) else None
        return v if isinstance(v, int) else None


class SievefsView(SievefsPlain):
    name = "view"

    def setup(self, table_prefix: str, query: dict) -> str:
        import json
        t = time.perf_counter()
        self._mount()
        hint = query["hint"] or {}  # a full scan: the empty hint selects every row
        # the hint names its table: the view shows that directory, and a Delta
        # table's log statistics narrow each file's selection
        args = [BIN, "hint", str(self.mp), "q", "--table", table_prefix.strip("/")]
        if hint.get("where"):
            args += ["--where", hint["where"]]
        if hint.get("columns"):
            args += ["--columns", ",".join(hint["columns"])]
        r = subprocess.run(args, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"sievefs hint rejected {json.dumps(hint)}: {r.stderr.strip()}")
        self.init_seconds = time.perf_counter() - t
        self.hint_name = "q"
        return r.stdout.strip()

    def view_stats(self):
        return _read_json(self.mp / ".sieve" / "hints" / f"{self.hint_name}.stats")


class S3fs(Contender):
    name = "s3fs"

    def setup(self, table_prefix: str, query: dict) -> str:
        self.mp.mkdir(parents=True, exist_ok=True)
        pw = self.work / "s3fs-passwd"
        pw.write_text(f"{self.creds.access_key_id}:{self.creds.secret_access_key}\n")
        pw.chmod(0o600)
        t = time.perf_counter()
        argv = ["s3fs", self.bucket, str(self.mp), "-o", f"url={self.endpoint}", "-o",
                "use_path_request_style", "-o", f"passwd_file={pw}", "-o", "ro", "-o",
                "endpoint=us-east-1"]
        r = subprocess.run(argv, env=self.env(), capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"s3fs failed: {r.stderr.strip()}")
        self._wait_mounted()
        os.listdir(self.mp)  # s3fs answers lazily: the first listing is part of its start-up
        self.init_seconds = time.perf_counter() - t
        self.pids = s3env.procs_matching("/usr/bin/s3fs", str(self.mp))
        return str(self.mp / table_prefix)


class Rclone(Contender):
    name = "rclone"

    def setup(self, table_prefix: str, query: dict) -> str:
        self.mp.mkdir(parents=True, exist_ok=True)
        self.cache = Path(tempfile.mkdtemp(prefix="rclone-cache-", dir=self.work))
        t = time.perf_counter()
        argv = ["rclone", "mount", f":s3:{self.bucket}", str(self.mp), "--s3-provider", "Other",
                "--s3-endpoint", self.endpoint, "--s3-access-key-id", self.creds.access_key_id,
                "--s3-secret-access-key", self.creds.secret_access_key, "--s3-region", "us-east-1",
                "--read-only", "--vfs-cache-mode", "off", "--daemon", "--cache-dir", str(self.cache),
                *(["--ca-cert", self.ca_bundle] if self.ca_bundle else []), *RCLONE_EXTRA]
        r = subprocess.run(argv, env=self.env(), capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"rclone mount failed: {r.stderr.strip()}")
        self._wait_mounted()
        os.listdir(self.mp)
        self.init_seconds = time.perf_counter() - t
        self.pids = s3env.procs_matching("/usr/bin/rclone", str(self.mp))
        return str(self.mp / table_prefix)

    def teardown(self):
        super().teardown()
        shutil.rmtree(self.cache, ignore_errors=True)


class Direct(Contender):
    """The reader's own S3 client; the location is an s3 URI the reader script understands."""
    name = "direct"
    fuse = False

    def setup(self, table_prefix: str, query: dict) -> str:
        self.init_seconds = 0.0
        return f"s3://{self.bucket}/{table_prefix}"

    def teardown(self):
        pass


def make(name: str, work: Path, bucket: str, endpoint: str, creds, ca_bundle: str | None = None) -> Contender:
    cls = {"view": SievefsView, "plain": SievefsPlain, "s3fs": S3fs, "rclone": Rclone,
           "direct": Direct}[name]
    return cls(work, bucket, endpoint, creds, ca_bundle)
