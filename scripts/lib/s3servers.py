"""The local S3 servers the benchmark scripts can run on 127.0.0.1: moto
(tests/e2e/s3env.MotoServer, Python; a few hundred small ranged GETs per
second on a 2-core machine) or versitygw (Versity S3 Gateway, Go, posix
backend over a temporary directory; SigV4 always checked).

    with s3servers.start("versitygw", work_dir, log_path=...) as srv:
        srv.port, srv.endpoint, srv.creds, srv.client(), srv.describe()

versitygw is not installed by scripts/setup; `go install
github.com/versity/versitygw/cmd/versitygw@VERSITYGW_VERSION` puts it in
$(go env GOPATH)/bin (VERSITYGW_BIN overrides the lookup).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402

SERVERS = ("moto", "versitygw")
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


def make(server: str, work: Path, auth: bool = False):
    """An unstarted server of that kind, logging into work/; moto with
    signature checks only when auth (versitygw always checks them)."""
    if server == "moto":
        return Moto(auth=auth, log_path=work / "moto.log")
    if server == "versitygw":
        return VersityGW(root=None, log_path=work / "versitygw.log")
    raise ValueError(f"unknown S3 server {server!r} (one of {', '.join(SERVERS)})")


def check_available(server: str) -> str | None:
    """None when the server can be started, else what to do about it."""
    if server == "versitygw" and not versitygw_bin():
        return INSTALL_HINT
    return None
