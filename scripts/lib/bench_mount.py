"""A sievefs mount for the benchmark scripts: mounted in the background with
the bucket's credentials, `.sieve/stats` as a dict, unmounted on exit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402

BIN = os.environ.get("SIEVEFS_BIN", str(REPO / "build" / "sievefs"))


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
