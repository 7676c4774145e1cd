"""What the benchmark scripts share: a sievefs mount (mounted in the
background with the bucket's credentials, `.sieve/stats` as a dict,
unmounted on exit), the clean-up of every mount of a run, and the pieces of
their reports' headers."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402

BIN = os.environ.get("SIEVEFS_BIN", str(REPO / "build" / "sievefs"))
MiB = 1 << 20


class Mount:
    def __init__(self, moto, bucket: str, mp: Path, extra=()):
        self.mp = mp
        mp.mkdir(parents=True, exist_ok=True)
        env = s3env.clean_env(extra=moto.creds.env())
        argv = [BIN, "mount", f"s3://{bucket}", str(mp), "--endpoint", moto.endpoint, *extra]
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"mount failed: {' '.join(argv)}\n{r.stderr}")

    def stats(self) -> dict:
        return json.loads((self.mp / ".sieve" / "stats").read_bytes())

    def close(self):
        s3env.unmount(self.mp, s3env.procs_matching(BIN, str(self.mp)))

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def unmount_all(work: Path) -> None:
    """Unmount every mount under work, waiting for its daemon."""
    for mp, *_ in s3env.mountinfo():
        if mp.startswith(str(work)):
            s3env.unmount(mp, s3env.procs_matching(BIN, mp))


def fmt_bytes(n: float) -> str:
    return f"{n / MiB:,.2f} MiB" if n >= MiB else f"{n / 1024:,.1f} KiB"


def moto_version() -> str:
    try:
        import importlib.metadata
        return importlib.metadata.version("moto")
    except Exception:  # noqa: BLE001
        return "?"


def host_line() -> str:
    """sievefs's version, the OS and the CPUs, as a report's header gives them."""
    ver = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip()
    return f"{ver}; {platform.system()} {platform.release()}; {os.cpu_count()} CPUs"
