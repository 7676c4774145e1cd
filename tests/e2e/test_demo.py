"""scripts/demo's Python part (scripts/lib/demo.py) end to end, with the
binary under test: the demo is the proof that the README is true on a fresh
machine, and it checks itself (it exits non-zero when the plain path, the view
and the local copy disagree, when the view did not fetch fewer bytes than the
plain path, or when it served no page partially or synthesized), so its exit
status is the verdict. The printed verdict lines are asserted too, so a demo
that stops checking is noticed.

In the ASan subset as well: the demo's daemons, `sievefs hint` and `sievefs
inspect` get sanitizer log paths under tmp_path (the demo passes the
environment on), and any report fails the test. A few seconds with either
build."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import s3env
from conftest import _sanitizer_env, sanitizer_reports

DEMO = s3env.REPO / "scripts" / "lib" / "demo.py"


def daemons_under(bin_path: str, d) -> list:
    pids = []
    for pid in s3env.procs_matching(bin_path):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(d).encode() + b"/" in f.read():
                    pids.append(pid)
        except OSError:
            pass
    return pids


@pytest.mark.asan
def test_demo_runs_and_checks_itself(tmp_path, sievefs_bin):
    san = tmp_path / "san"
    san.mkdir()
    work = tmp_path / "tmp"   # the demo's mkdtemp: its mounts land under tmp_path
    work.mkdir()
    env = _sanitizer_env(dict(os.environ, SIEVEFS_BIN=sievefs_bin, TMPDIR=str(work)), san)
    try:
        r = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True, env=env,
                           timeout=120, stdin=subprocess.DEVNULL)
    finally:
        leaked = daemons_under(sievefs_bin, work)
        left = [mp for mp, *_ in s3env.mountinfo() if mp.startswith(str(work) + "/")]
        for mp in left:
            s3env.unmount(mp, leaked)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert not left and not leaked, f"mounts {left}, daemons {leaked} left behind\n{out[-3000:]}"
    assert re.search(r"^identical: yes\b", r.stdout, re.M), out[-6000:]
    m = re.search(r"^view fetched fewer bytes: yes \(.* ([0-9.]+) %\)$", r.stdout, re.M)
    assert m and float(m.group(1)) < 100, out[-6000:]
    assert "wrote a Delta table with deltalake" in r.stdout, out[-6000:]  # not the Parquet fallback
    assert re.search(r"^demo OK in ", r.stdout, re.M), out[-6000:]
    reports = sanitizer_reports(san, r.stderr)
    assert not reports, "sanitizer report:\n" + "\n".join(reports)
