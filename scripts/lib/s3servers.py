"""The local S3 servers the benchmark scripts can run on 127.0.0.1: moto
(tests/e2e/s3env.MotoServer, Python; a few hundred small ranged GETs per
second on a 2-core machine), versitygw (Versity S3 Gateway, Go, posix
backend over a temporary directory; SigV4 always checked) or s3link
(tests/tools/s3link: Go, serves a directory, tens of thousands of small
GETs per second, emulates the network link itself: --profile wan/region/lan,
and S3's per-prefix request-rate limit; signatures not checked).

    with s3servers.make("s3link", work_dir, profile="wan") as srv:
        srv.port, srv.endpoint, srv.creds, srv.client(), srv.describe()
        srv.stats()   # s3link only: its counters (GET /__s3link/stats)

versitygw is not installed by scripts/setup; `go install
github.com/versity/versitygw/cmd/versitygw@VERSITYGW_VERSION` puts it in
$(go env GOPATH)/bin (VERSITYGW_BIN overrides the lookup). s3link is built
by scripts/setup (tests/tools/s3link/build.sh) into tests/e2e/.data/bin/
(S3LINK_BIN overrides the lookup).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402

SERVERS = ("moto", "versitygw", "s3link")
S3LINK_DIR = REPO / "tests" / "tools" / "s3link"
S3LINK_BIN_DIR = REPO / "tests" / "e2e" / ".data" / "bin"
S3LINK_PROFILES = ("lan", "region", "wan")
# The version the benchmark was run with (go version -m $(which versitygw)).
VERSITYGW_VERSION = "v1.8.0"
INSTALL_HINT = (f"versitygw is not installed: install it with Go (1.25 or later, its go.mod):\n"
                f"  go install github.com/versity/versitygw/cmd/versitygw@{VERSITYGW_VERSION}\n"
                f"(it lands in $(go env GOPATH)/bin, usually ~/go/bin; or set VERSITYGW_BIN)")


def versitygw_bin() -> str | None:
    """VERSITYGW_BIN, else versitygw on PATH, else $GOPATH/bin or ~/go/bin."""
    cands = [os.environ.get("VERSITYGW_BIN"), shutil.which("versitygw")]
    if os.environ.get("GOPATH"):
        cands.append(os.path.join(os.environ["GOPATH"].split(":")[0], "bin", "versitygw"))
    cands.append(os.path.expanduser("~/go/bin/versitygw"))
    for c in cands:
        if c and s3env.is_executable(c):
            return c
    return None


def versitygw_version(binary: str) -> str:
    """The module version `go version -m` reports (v1.8.0), else the binary's
    own --version line."""
    try:
        r = subprocess.run(["go", "version", "-m", binary], capture_output=True, text=True, timeout=20)
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) >= 3 and f[0] == "mod" and f[1] == "github.com/versity/versitygw":
                return f[2]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20)
        return " ".join((r.stdout or r.stderr).split())[:120] or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


class VersityGW:
    """`versitygw posix ROOT` on 127.0.0.1:PORT with one root user (SigV4
    checked on every request), keep-alive on, request logging off; the same
    interface as s3env.MotoServer (port, endpoint, creds, client(), context
    manager)."""

    name = "versitygw"

    def __init__(self, root: Path | None = None, log_path: Path | None = None, port: int | None = None,
                 binary: str | None = None):
        self.binary = binary or versitygw_bin()
        if not self.binary:
            raise SystemExit(INSTALL_HINT)
        self.port = port or s3env.free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._own_root = root is None
        self.root = Path(root) if root else None
        self.log_path = Path(log_path) if log_path else None
        self.creds = s3env.Credentials("sievebenchaccess", "sievebench-secret-key-0123456789")
        self.proc: subprocess.Popen | None = None
        self._log = None
        self.version = versitygw_version(self.binary)

    def describe(self) -> str:
        return (f"versitygw {self.version} (Go, posix backend on a local directory, SigV4 checked, "
                f"keep-alive on)")

    def start(self, timeout: float = 30.0) -> "VersityGW":
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="versitygw-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        env = {k: v for k, v in s3env.clean_env().items() if not k.startswith(("VGW_", "ROOT_"))}
        argv = [self.binary, "--access", self.creds.access_key_id, "--secret", self.creds.secret_access_key,
                "--port", f"127.0.0.1:{self.port}", "--region", s3env.REGION, "--keep-alive", "--quiet",
                "posix", str(self.root)]
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=self._log, env=env, start_new_session=True,
                                     preexec_fn=s3env.die_with_parent)
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"versitygw exited with {self.proc.returncode}; log: {self.log_path}")
            try:
                with contextlib.closing(socket.create_connection(("127.0.0.1", self.port), timeout=1)):
                    pass
                self.client().list_buckets()
                return self
            except Exception as e:  # noqa: BLE001 - not up yet
                last = e
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"versitygw did not become ready in {timeout}s: {last}")

    def stop(self) -> None:
        s3env.stop_process_group(self.proc)
        if self._log not in (None, subprocess.DEVNULL):
            self._log.close()
            self._log = None
        if self._own_root and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def client(self, service: str = "s3", creds=None, **kw):
        import boto3
        from botocore.config import Config
        c = creds or self.creds
        cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3, "mode": "standard"},
                     max_pool_connections=32, signature_version="s3v4",
                     request_checksum_calculation="when_required", response_checksum_validation="when_required")
        return boto3.client(service, endpoint_url=kw.pop("endpoint_url", self.endpoint),
                            region_name=s3env.REGION, aws_access_key_id=c.access_key_id,
                            aws_secret_access_key=c.secret_access_key, config=cfg, **kw)


class Moto(s3env.MotoServer):
    """s3env.MotoServer with describe()."""
    name = "moto"

    def describe(self) -> str:
        try:
            import importlib.metadata
            v = importlib.metadata.version("moto")
        except Exception:  # noqa: BLE001
            v = "?"
        return f"moto {v} (Python, in memory, signature checks {'on' if self.auth else 'off'})"


def s3link_bin(build: bool = False) -> str | None:
    """S3LINK_BIN, else tests/e2e/.data/bin/s3link; with build, run
    tests/tools/s3link/build.sh first (a no-op when up to date)."""
    if os.environ.get("S3LINK_BIN"):
        b = os.environ["S3LINK_BIN"]
        return b if s3env.is_executable(b) else None
    if build:
        r = subprocess.run([str(S3LINK_DIR / "build.sh")], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"s3link build failed:\n{r.stdout}{r.stderr}", file=sys.stderr)
    b = S3LINK_BIN_DIR / "s3link"
    return str(b) if s3env.is_executable(str(b)) else None


S3LINK_HINT = ("s3link is not built: run scripts/setup (or tests/tools/s3link/build.sh; needs Go, "
               "Debian's golang-go), or set S3LINK_BIN")


class S3Link:
    """tests/tools/s3link on 127.0.0.1:PORT serving ROOT (ROOT/BUCKET/KEY),
    the link emulated inside it: profile lan, region or wan, fields
    overridable (rtt_ms, jitter_ms, mbit), S3's per-prefix request-rate
    limit (get_rate, put_rate; 0 = none), HTTPS with a generated self-signed
    certificate (tls=True: srv.ca_bundle names it; srv.client() trusts it).
    Any credentials are accepted. The same interface as s3env.MotoServer,
    plus stats() / reset_stats() / set_rates()."""

    name = "s3link"

    def __init__(self, root: Path | None = None, log_path: Path | None = None, profile: str = "lan",
                 rtt_ms: float | None = None, jitter_ms: float | None = None, mbit: float | None = None,
                 get_rate: float | None = None, put_rate: float | None = None, tls: bool = False,
                 seed: int | None = None, extra_args: list | None = None, binary: str | None = None):
        if profile not in S3LINK_PROFILES:
            raise ValueError(f"unknown s3link profile {profile!r} (one of {', '.join(S3LINK_PROFILES)})")
        self.binary = binary or s3link_bin(build=True)
        if not self.binary:
            raise SystemExit(S3LINK_HINT)
        self._own_root = root is None
        self.root = Path(root) if root else None
        self.log_path = Path(log_path) if log_path else None
        self.profile, self.tls = profile, tls
        self.args = [f"--profile={profile}"]
        for flag, v in (("rtt-ms", rtt_ms), ("jitter-ms", jitter_ms), ("mbit", mbit), ("get-rate", get_rate),
                        ("put-rate", put_rate), ("seed", seed)):
            if v is not None:
                self.args.append(f"--{flag}={v}")
        self.args += list(extra_args or [])
        self.creds = s3env.Credentials("s3linkaccess", "s3link-secret-not-checked")
        self.port = None
        self.endpoint = None
        self.ca_bundle: str | None = None
        self.proc: subprocess.Popen | None = None
        self._log = None
        self._tmp = None

    def describe(self) -> str:
        link = self.stats().get("link", {}) if self.proc else {}
        text = f"s3link (Go, serving a local directory; profile {self.profile}"
        if link.get("pass_through"):
            text += ", nothing emulated"
        elif link:
            text += (f": RTT {link.get('rtt_ms'):g} ms ± {link.get('jitter_ms'):g} ms, "
                     + (f"{link.get('down_mbit'):g} Mbit/s" if link.get("down_mbit") else "unlimited bandwidth")
                     + " emulated in the server")
        text += "; HTTPS" if self.tls else ""
        return text + "; signatures not checked)"

    def start(self, timeout: float = 30.0) -> "S3Link":
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="s3link-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self._tmp = Path(tempfile.mkdtemp(prefix="s3link-run-"))
        port_file = self._tmp / "port"
        argv = [self.binary, f"--root={self.root}", f"--port-file={port_file}"] + self.args
        if self.tls:
            self.ca_bundle = str(self._tmp / "cert.pem")
            argv += ["--tls", f"--cert-out={self.ca_bundle}"]
        self._log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._log, env=s3env.clean_env(),
                                     start_new_session=True, preexec_fn=s3env.die_with_parent, text=True)
        deadline = time.monotonic() + timeout
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on 127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"s3link did not start (printed {line!r}; log: {self.log_path})")
        self.port = int(line.rsplit(":", 1)[1])
        scheme = "https" if self.tls else "http"
        self.endpoint = f"{scheme}://127.0.0.1:{self.port}"
        last = None
        while time.monotonic() < deadline:
            try:
                self.stats()
                return self
            except OSError as e:
                last = e
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"s3link did not answer in {timeout}s: {last}")

    def stop(self) -> None:
        s3env.stop_process_group(self.proc)
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        if self._log not in (None, subprocess.DEVNULL):
            self._log.close()
            self._log = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._own_root and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _control(self, path: str, method: str = "GET") -> dict:
        ctx = None
        if self.tls:
            import ssl
            ctx = ssl.create_default_context(cafile=self.ca_bundle)
        req = urllib.request.Request(self.endpoint + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
            return json.loads(r.read())

    def stats(self) -> dict:
        """The counters: requests by kind, status counts, slowdown_503, bytes
        sent (bodies, total), connections accepted, the link parameters."""
        return self._control("/__s3link/stats")

    def reset_stats(self) -> None:
        self._control("/__s3link/reset", "POST")

    def set_rates(self, get_rate: float | None = None, put_rate: float | None = None) -> dict:
        """Change the per-prefix request-rate limits (0 = none) while running."""
        q = "&".join(f"{k}={v}" for k, v in (("get-rate", get_rate), ("put-rate", put_rate)) if v is not None)
        return self._control(f"/__s3link/config?{q}", "POST")

    def client(self, service: str = "s3", creds=None, **kw):
        import boto3
        from botocore.config import Config
        c = creds or self.creds
        cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3, "mode": "standard"},
                     max_pool_connections=32, signature_version="s3v4",
                     request_checksum_calculation="when_required", response_checksum_validation="when_required")
        if self.tls:
            kw.setdefault("verify", self.ca_bundle)
        return boto3.client(service, endpoint_url=kw.pop("endpoint_url", self.endpoint),
                            region_name=s3env.REGION, aws_access_key_id=c.access_key_id,
                            aws_secret_access_key=c.secret_access_key, config=cfg, **kw)


def make(server: str, work: Path, auth: bool = False, **s3link_args):
    """An unstarted server of that kind, logging into work/; moto with
    signature checks only when auth (versitygw always checks them, s3link
    never); s3link_args go to S3Link (profile=, tls=, get_rate=, ...)."""
    if server == "moto":
        return Moto(auth=auth, log_path=work / "moto.log")
    if server == "versitygw":
        return VersityGW(root=None, log_path=work / "versitygw.log")
    if server == "s3link":
        return S3Link(log_path=work / "s3link.log", **s3link_args)
    raise ValueError(f"unknown S3 server {server!r} (one of {', '.join(SERVERS)})")


def check_available(server: str) -> str | None:
    """None when the server can be started, else what to do about it."""
    if server == "versitygw" and not versitygw_bin():
        return INSTALL_HINT
    if server == "s3link" and not s3link_bin(build=True):
        return S3LINK_HINT
    return None
