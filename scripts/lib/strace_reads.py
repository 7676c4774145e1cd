"""What a reader itself reads from local files, counted with strace: the
reference of issue 12's goal 1 (bytes fetched from S3 against the bytes the
reader's own reads need). The reader runs under

    strace -f -y -s 0 -e trace=read,pread64,preadv,preadv2 -e signal=none

and the return values of the calls whose fd (-y prints its path) is a file
at or under a root are summed. Readers that memory-map files (polars) are
not counted by this; DuckDB, pyarrow and delta-rs read with pread.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

STRACE = ["strace", "-f", "-y", "-s", "0", "-e", "trace=read,pread64,preadv,preadv2", "-e", "signal=none"]

_CALL = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(read|pread64|preadv2?)\((\d+)<([^>]*)>,(.*)$")
_RESUMED = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+<\.\.\. (read|pread64|preadv2?) resumed>(.*)$")
_RETVAL = re.compile(r"\)\s+=\s+(-?\d+)")

_usable: bool | None = None


def available() -> bool:
    """strace is installed and may trace here (a container may forbid
    ptrace); checked once."""
    global _usable
    if _usable is None:
        _usable = shutil.which("strace") is not None
        if _usable:
            try:
                _usable = subprocess.run(STRACE + ["-o", os.devnull, "true"], capture_output=True,
                                         timeout=30).returncode == 0
            except (OSError, subprocess.SubprocessError):
                _usable = False
    return _usable


def traced(cmd: list[str], trace: Path) -> list[str]:
    """cmd run under strace, its calls written to trace."""
    return STRACE + ["-o", str(trace)] + list(cmd)


def bytes_read(trace: Path, root: str) -> tuple[int, int]:
    """(bytes, calls) read by the traced processes from the file root, or
    from files under the directory root."""
    root = os.path.realpath(root)
    prefix = root.rstrip("/") + "/"

    def ours(path: str | None) -> bool:
        return path is not None and (path == root or path.startswith(prefix))

    pending = {}
    total = calls = 0
    for line in trace.read_text(errors="replace").splitlines():
        m = _CALL.match(line)
        if m:
            pid, path, rest = m.group(1), m.group(4), m.group(5)
            if "<unfinished ...>" in rest:
                pending[pid] = path
                continue
        else:
            m = _RESUMED.match(line)
            if not m:
                continue
            path, rest = pending.pop(m.group(1), None), m.group(3)
        rv = _RETVAL.search(rest)
        if rv and ours(path) and int(rv.group(1)) > 0:
            total += int(rv.group(1))
            calls += 1
    return total, calls
