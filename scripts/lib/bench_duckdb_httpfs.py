"""DuckDB's httpfs extension for scripts/bench's direct DuckDB reader.

DuckDB downloads extensions at run time from its own server, which this
machine cannot reach. PyPI has repackaged httpfs builds, but none for the
DuckDB of tests/e2e/requirements.txt (2.0.1): an extension loads only into the
DuckDB version it was built for ("The file was built specifically for DuckDB
version 'v1.4.4' ..."; forcing it with allow_extensions_metadata_mismatch
crashes the process), and each package pins its DuckDB (`Requires-Dist:
duckdb==1.5.5`), so it cannot go into .venv (nor into requirements.txt)
beside DuckDB 2.0.1 either.

So the direct DuckDB reader runs the newest DuckDB that has an httpfs package
on PyPI, installed with `pip install --target` into its own directory
(tests/e2e/.data/duckdb-httpfs-VERSION, created on first use, about 60 MB) and
put first on PYTHONPATH of that reader's process only; the extension file is
found through the package's RECORD (importlib.metadata) and loaded with
`SET allow_unsigned_extensions=true; LOAD '<path>'`. Its results are checked
against the same DuckDB reading the local files.

    python bench_duckdb_httpfs.py      # install (if needed) and print what was found
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The pins: DuckDB and the PyPI package carrying its httpfs extension. Options seen
# on PyPI: duckdb-extension-httpfs 1.0.1 .. 1.5.5 (DuckDB of the same version) and
# duckdb-ext-httpfs 1.2.0.* .. 1.4.4.20260205 (DuckDB 1.2.0 .. 1.4.4); none for
# DuckDB 2.x. SIEVE_BENCH_HTTPFS=duckdb-ext-httpfs picks the other family.
FLAVOURS = {
    "duckdb-extension-httpfs": {"duckdb": "1.5.5", "package": "duckdb-extension-httpfs", "version": "1.5.5"},
    "duckdb-ext-httpfs": {"duckdb": "1.4.4", "package": "duckdb-ext-httpfs", "version": "1.4.4.20260205"},
}
DEFAULT_FLAVOUR = "duckdb-extension-httpfs"


def flavour() -> dict:
    name = os.environ.get("SIEVE_BENCH_HTTPFS") or DEFAULT_FLAVOUR
    if name not in FLAVOURS:
        raise SystemExit(f"SIEVE_BENCH_HTTPFS={name!r}: one of {', '.join(FLAVOURS)}")
    return dict(FLAVOURS[name], name=name)


def target_dir(f: dict | None = None) -> Path:
    f = f or flavour()
    base = os.environ.get("SIEVE_BENCH_HTTPFS_DIR")
    return Path(base) if base else REPO / "tests" / "e2e" / ".data" / f"duckdb-httpfs-{f['duckdb']}-{f['version']}"


_PROBE = r"""
import importlib.metadata as md, json, sys
import duckdb
files = [p for p in (md.files(sys.argv[1]) or []) if str(p).endswith(".duckdb_extension")]
if not files:
    raise SystemExit(f"{sys.argv[1]} has no .duckdb_extension file")
path = str(files[0].locate())
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{path}'")
loaded = con.execute("SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'httpfs'").fetchone()
print(json.dumps({"duckdb": duckdb.__version__, "extension": path, "loaded": bool(loaded and loaded[0])}))
"""


def _probe(d: Path, f: dict) -> dict | None:
    env = dict(os.environ, PYTHONPATH=str(d))
    try:
        r = subprocess.run([sys.executable, "-c", _PROBE, f["package"]], capture_output=True, text=True,
                           timeout=120, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    try:
        doc = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return doc if doc.get("loaded") and doc.get("duckdb") == f["duckdb"] else None


def ensure(install: bool = True) -> dict:
    """{"pythonpath", "extension", "duckdb", "package"}: where the direct DuckDB
    reader's DuckDB and httpfs extension are, installed first when missing
    (install=False: raise instead). Raises RuntimeError naming what failed."""
    f = flavour()
    d = target_dir(f)
    found = _probe(d, f) if d.is_dir() else None
    if found is None and install:
        tmp = d.with_name(d.name + f".tmp{os.getpid()}")
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            "--target", str(tmp), f"duckdb=={f['duckdb']}", f"{f['package']}=={f['version']}"],
                           capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            subprocess.run(["rm", "-rf", str(tmp)], check=False)
            raise RuntimeError(f"pip install --target {tmp} duckdb=={f['duckdb']} {f['package']}=={f['version']} "
                               f"failed:\n{(r.stdout + r.stderr)[-3000:]}")
        subprocess.run(["rm", "-rf", str(d)], check=False)
        tmp.rename(d)
        found = _probe(d, f)
    if found is None:
        raise RuntimeError(f"no loadable httpfs extension for DuckDB {f['duckdb']} in {d} "
                           f"({f['package']}=={f['version']}; scripts/bench installs it there)")
    return {"pythonpath": str(d), "extension": found["extension"], "duckdb": found["duckdb"],
            "package": f"{f['package']}=={f['version']}"}


if __name__ == "__main__":
    print(json.dumps(ensure(), indent=1))
