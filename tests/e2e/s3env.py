"""Shared helpers for the e2e suite and scripts/: a local moto S3 server with
SigV4 enforcement, deterministic data generation, /proc helpers.

Imported by tests/e2e/conftest.py and by scripts/lib/*.py (which put
tests/e2e on sys.path). Python stdlib + boto3 only.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
REGION = "us-east-1"

# Environment variables that would make a child process (sievefs, boto3, curl)
# pick up credentials/config from the machine instead of what a test gives it.
AWS_ENV_PREFIXES = ("AWS_",)


def build_tool(name: str, env_var: str, missing, how: str) -> str:
    """Where a binary of the build (pq_dump, pq_synth) is: $env_var; else
    beside SIEVEFS_BIN (so that the sanitizer e2e run uses the sanitizer
    build's); else <repo>/build/name. When that is not an executable file,
    missing(message) (pytest.fail or pytest.skip), the message saying how to
    build it."""
    b = os.environ.get(env_var)
    if not b and os.environ.get("SIEVEFS_BIN"):
        b = str(Path(os.environ["SIEVEFS_BIN"]).parent / name)
    b = b or str(REPO / "build" / name)
    if not is_executable(b):
        missing(f"{name} not built or not executable: {b} (build it: {how}, or set {env_var})")
    return b


def is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def die_with_parent():
    """preexec_fn: the child gets SIGTERM when the process that started it
    dies (even by SIGKILL), so a killed pytest/demo/bench leaves no server or
    foreground daemon behind. Linux prctl(PR_SET_PDEATHSIG)."""
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_port() -> int:
    """A port on 127.0.0.1 with (very likely) nobody listening."""
    return free_port()


def clean_env(extra: dict | None = None, home: str | None = None) -> dict:
    """os.environ without AWS_* variables (AWS_CA_BUNDLE included: the
    endpoints here are plain http), optionally with a different HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(AWS_ENV_PREFIXES)}
    if home is not None:
        env["HOME"] = str(home)
    if extra:
        env.update({k: str(v) for k, v in extra.items() if v is not None})
    return env


@dataclass
class Credentials:
    access_key_id: str
    secret_access_key: str
    session_token: str | None = None

    def env(self) -> dict:
        e = {"AWS_ACCESS_KEY_ID": self.access_key_id,
             "AWS_SECRET_ACCESS_KEY": self.secret_access_key}
        if self.session_token:
            e["AWS_SESSION_TOKEN"] = self.session_token
        return e


def stop_process_group(proc) -> None:
    """SIGTERM a server started in its own process group, SIGKILL after 10 s."""
    if proc and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


class MotoServer:
    """`python -m moto.server` (through moto_launch.py) on 127.0.0.1:PORT.

    auth=True: moto runs with INITIAL_NO_AUTH_ACTION_COUNT=3; the first three
    actions create an IAM user, give it an allow-all inline policy and create
    an access key. From then on moto verifies every request's SigV4 signature
    (wrong secret -> 403 SignatureDoesNotMatch, unknown key -> 403
    InvalidAccessKeyId, unsigned -> 403) and the policy.
    """

    BOOTSTRAP_ACTIONS = 3

    def __init__(self, auth: bool = True, log_path: Path | None = None,
                 python: str | None = None, port: int | None = None):
        self.auth = auth
        self.port = port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_path) if log_path else None
        self.python = python or sys.executable
        self.proc: subprocess.Popen | None = None
        self.creds: Credentials | None = None
        self._log = None

    # -- lifecycle ---------------------------------------------------------
    def start(self, timeout: float = 30.0) -> "MotoServer":
        env = clean_env()
        env["MOTO_PORT"] = str(self.port)
        if self.auth:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(self.BOOTSTRAP_ACTIONS)
        self._log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [self.python, str(HERE / "moto_launch.py"), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self._log, stderr=self._log, env=env, start_new_session=True,
            preexec_fn=die_with_parent)
        self._wait_ready(timeout)
        if self.auth:
            self.creds = self._bootstrap_auth()
        else:
            self.creds = Credentials("testing", "testing")
        return self

    def _wait_ready(self, timeout: float) -> None:
        # /moto-api/ is moto's dashboard route: it is not an AWS action, so it
        # does not use up one of the INITIAL_NO_AUTH_ACTION_COUNT actions.
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"moto exited with {self.proc.returncode}; log: {self.log_path}")
            try:
                with urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError) as e:  # not up yet
                last = e
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto did not become ready in {timeout}s: {last}")

    def _bootstrap_auth(self) -> Credentials:
        import boto3
        iam = boto3.client("iam", endpoint_url=self.endpoint, region_name=REGION,
                           aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
        iam.create_user(UserName="sieve-e2e")                                   # action 1
        iam.put_user_policy(UserName="sieve-e2e", PolicyName="allow-all",       # action 2
                            PolicyDocument=json.dumps({
                                "Version": "2012-10-17",
                                "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="sieve-e2e")["AccessKey"]          # action 3
        return Credentials(key["AccessKeyId"], key["SecretAccessKey"])

    def stop(self) -> None:
        stop_process_group(self.proc)
        if self._log not in (None, subprocess.DEVNULL):
            self._log.close()
            self._log = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- clients -----------------------------------------------------------
    def client(self, service: str = "s3", creds: Credentials | None = None, **kw):
        import boto3
        from botocore.config import Config
        c = creds or self.creds
        cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3, "mode": "standard"},
                     max_pool_connections=32)
        return boto3.client(service, endpoint_url=kw.pop("endpoint_url", self.endpoint),
                            region_name=REGION, aws_access_key_id=c.access_key_id,
                            aws_secret_access_key=c.secret_access_key,
                            aws_session_token=c.session_token, config=cfg, **kw)

    def temporary_credentials(self, name: str = "sieve-e2e-role") -> Credentials:
        """AssumeRole credentials (ASIA... key + session token). moto checks the
        token: missing -> InvalidAccessKeyId, wrong -> InvalidToken."""
        iam = self.client("iam")
        try:
            arn = iam.get_role(RoleName=name)["Role"]["Arn"]
        except iam.exceptions.NoSuchEntityException:
            arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps({
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
            )["Role"]["Arn"]
            iam.put_role_policy(RoleName=name, PolicyName="allow-all", PolicyDocument=json.dumps({
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        c = self.client("sts").assume_role(RoleArn=arn, RoleSessionName="sieve-e2e")["Credentials"]
        return Credentials(c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"])


def curl_sigv4_args(creds: Credentials, region: str = REGION) -> list:
    """curl (7.75+) arguments for a SigV4-signed S3 request. curl 7.88 does not
    add x-amz-content-sha256 by itself and moto (like S3) needs it signed."""
    a = ["--aws-sigv4", f"aws:amz:{region}:s3", "--user",
         f"{creds.access_key_id}:{creds.secret_access_key}",
         "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
    if creds.session_token:
        a += ["-H", f"x-amz-security-token: {creds.session_token}"]
    return a


# -- deterministic data --------------------------------------------------------
def det_bytes(seed, n: int) -> bytes:
    """n pseudo-random bytes, a pure function of (seed, n)."""
    return random.Random(f"sievefs:{seed}").randbytes(n)


def write_det_file(path: Path, seed, n: int, chunk: int = 64 << 20) -> None:
    """Write det-style bytes in chunks (each chunk seeded from (seed, index)),
    for files too big to hold comfortably in memory."""
    with open(path, "wb") as f:
        i = 0
        left = n
        while left > 0:
            k = min(chunk, left)
            f.write(det_bytes(f"{seed}:{i}", k))
            left -= k
            i += 1


def upload_file(s3, bucket: str, key: str, path: Path) -> None:
    from boto3.s3.transfer import TransferConfig
    s3.upload_file(str(path), bucket, key,
                   Config=TransferConfig(multipart_threshold=64 << 20, multipart_chunksize=64 << 20,
                                         max_concurrency=4))


def parallel_put(s3, bucket: str, items: dict, threads: int = 16) -> None:
    """Upload {key: bytes} with a thread pool (boto3 clients are thread-safe)."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(lambda kv: s3.put_object(Bucket=bucket, Key=kv[0], Body=kv[1]), items.items()))


def list_all(s3, bucket: str, prefix: str = "") -> dict:
    """{key: (size, etag)} for every object under prefix."""
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            out[o["Key"]] = (o["Size"], o["ETag"])
    return out


# -- /proc helpers -------------------------------------------------------------
def _unescape_mountinfo(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 3 < len(s) and s[i + 1:i + 4].isdigit():
            out.append(chr(int(s[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def mountinfo() -> list:
    """[(mountpoint, fstype, mount_options, super_options)] from /proc/self/mountinfo."""
    rows = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.rstrip("\n").partition(" - ")
            p = pre.split(" ")
            q = post.split(" ")
            rows.append((_unescape_mountinfo(p[4]), q[0], p[5], q[2] if len(q) > 2 else ""))
    return rows


def mounts_at(path) -> list:
    path = os.path.abspath(str(path))
    return [r for r in mountinfo() if r[0] == path]


def procs_matching(exe: str, needle: str | None = None) -> list:
    """PIDs whose /proc/PID/exe is exe (realpath) and, if given, whose command
    line contains needle."""
    exe = os.path.realpath(exe)
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.path.realpath(f"/proc/{d}/exe") != exe:
                continue
            if needle is not None:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                if needle.encode() not in argv:
                    continue
            pids.append(int(d))
        except OSError:
            continue
    return pids


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False


def unmount(path, daemon_pids=(), timeout: float = 15.0) -> list:
    """fusermount3 -u, then -uz; then wait for the daemons to exit, SIGKILL
    stragglers. Returns a list of notes about anything that needed force."""
    notes = []
    path = str(path)
    if mounts_at(path):
        r = subprocess.run(["fusermount3", "-u", path], capture_output=True, text=True)
        if r.returncode != 0 and mounts_at(path):
            notes.append(f"fusermount3 -u failed: {r.stderr.strip()}")
            r = subprocess.run(["fusermount3", "-uz", path], capture_output=True, text=True)
            if r.returncode != 0 and mounts_at(path):
                notes.append(f"fusermount3 -uz failed: {r.stderr.strip()}")
                subprocess.run(["umount", "-l", path], capture_output=True)
    deadline = time.monotonic() + timeout
    for pid in daemon_pids:
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(pid):
            notes.append(f"daemon {pid} still alive {timeout}s after unmount: SIGKILL")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return notes


def wait_mounted(path, proc: subprocess.Popen | None = None, timeout: float = 30.0) -> None:
    """Wait until path is a mount point that answers stat(), while the daemon
    (if given) stays alive."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"sievefs exited with {proc.returncode} before the mount answered")
        if mounts_at(path):
            try:
                os.stat(path)
                return
            except OSError as e:
                last = e
        time.sleep(0.05)
    raise TimeoutError(f"{path} not mounted after {timeout}s (last error: {last})")


# -- small helpers for test modules ---------------------------------------------
def one_line(stderr: str) -> str:
    """The single non-blank line of stderr, or "" when there are 0 or >1."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    return lines[0] if len(lines) == 1 else ""


def wait_for(pred, timeout: float = 20.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return bool(pred())
