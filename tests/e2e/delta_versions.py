"""Generated histories of a Delta table, read through views at every version.

A scenario (one seed) writes a table with Spark (tests/e2e/delta_ops_driver.py):
appends, DELETE and UPDATE with deletion vectors, OPTIMIZE, RESTORE, column
renames, swaps of two columns' names and drops with re-adds under column
mapping `name`, checkpoints. After each operation the new files go to the
bucket the mount shows; at random points a hint is accepted (bound to the
version current then); and reads go through the views at random versions
(Spark's versionAsOf, deltalake's version=, and the latest) by Spark,
deltalake's QueryBuilder and by-hand DuckDB, polars and pyarrow readers of
the files and deletion vectors (delta_by_hand.py). Each read through a view
is compared, on a hash of every column of every row, with the same reader
reading the plain path at the same version with the same filter, which is
the hint's own predicate: a view must give exactly the plain path's rows.

    runner = Scenario(seed, driver, s3, bucket, mount_point, work_dir)
    runner.run(steps=12, reads_per_step=6)
    runner.mismatches   # [] when every view read matched
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import delta_by_hand
import viewdata as vd

REPO = Path(__file__).resolve().parents[2]
READERS = ("spark", "deltalake", "duckdb", "polars", "pyarrow")
TABLE = "B"  # the table's directory in the bucket


# -- predicates ---------------------------------------------------------------------------------------
# ("cmp", col, op, lit) | ("in", col, [lits]) | ("null", col) | ("and", p, q) | ("or", p, q)
class Render:
    lit = staticmethod(vd._sql_lit)

    @classmethod
    def sql(cls, p) -> str:
        """sievefs's language, Spark SQL, DuckDB and DataFusion alike."""
        k = p[0]
        if k == "cmp":
            return f"{p[1]} {p[2]} {cls.lit(p[3])}"
        if k == "in":
            return f"{p[1]} IN ({', '.join(cls.lit(v) for v in p[2])})"
        if k == "null":
            return f"{p[1]} IS NULL"
        return f"({cls.sql(p[1])}) {k.upper()} ({cls.sql(p[2])})"

    @staticmethod
    def _expr(p, col, isin, isnull):
        import operator
        ops = {"=": operator.eq, "<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}
        k = p[0]
        if k == "and":
            return Render._expr(p[1], col, isin, isnull) & Render._expr(p[2], col, isin, isnull)
        if k == "or":
            return Render._expr(p[1], col, isin, isnull) | Render._expr(p[2], col, isin, isnull)
        if k == "cmp":
            return ops[p[2]](col(p[1]), p[3])
        if k == "in":
            return isin(col(p[1]), p[2])
        return isnull(col(p[1]))

    @classmethod
    def polars(cls, p):
        import polars as pl
        return cls._expr(p, pl.col, lambda c, vs: c.is_in(vs), lambda c: c.is_null())

    @classmethod
    def pyarrow(cls, p):
        import pyarrow.compute as pc
        return cls._expr(p, pc.field, lambda c, vs: c.isin(vs), lambda c: c.is_null())

    @staticmethod
    def duck_type(t: str) -> str:
        return {"long": "BIGINT", "integer": "INTEGER", "double": "DOUBLE", "boolean": "BOOLEAN",
                "string": "VARCHAR", "date": "DATE"}.get(t, t.upper())


def atom(rng: random.Random, name: str, typ: str):
    t = typ.lower()
    if rng.random() < 0.08:
        return ("null", name)
    if t in ("bigint", "long") and name == "id":
        lo = rng.randrange(0, 60000)
        return ("cmp", name, rng.choice(["<", ">="]), lo) if rng.random() < 0.3 else \
            ("and", ("cmp", name, ">=", lo), ("cmp", name, "<", lo + rng.randrange(50, 3000)))
    if t in ("bigint", "long"):  # values 0..99999, spread: sparse selections
        return ("cmp", name, "<", rng.randrange(20, 600)) if rng.random() < 0.6 else \
            ("in", name, sorted(rng.sample(range(100000), 3)))
    if t in ("int", "integer"):
        return ("cmp", name, "=", rng.randrange(10)) if rng.random() < 0.6 else \
            ("in", name, sorted(rng.sample(range(10), 2)))
    if t == "double":
        return ("cmp", name, rng.choice(["<", ">"]), round(rng.random(), 2))
    if t == "boolean":
        return ("cmp", name, "=", rng.random() < 0.5)
    if t.startswith("decimal"):
        return ("cmp", name, rng.choice(["<", ">"]), Decimal(f"{rng.randrange(100000) / 100:.2f}"))
    if t == "string":
        return ("cmp", name, "=", f"s{rng.randrange(37)}") if name != "p" else ("cmp", name, "=", rng.choice("abc"))
    raise ValueError(typ)


def sparse_atom(rng: random.Random, columns: list):
    """A condition few rows meet, spread over every page (a long column
    other than id, values 0..99999), else a narrow id range."""
    longs = [n for n, t in columns if t.lower() in ("bigint", "long") and n != "id"]
    if longs:
        return ("cmp", rng.choice(longs), "<", rng.randrange(40, 500))
    lo = rng.randrange(0, 60000)
    return ("and", ("cmp", "id", ">=", lo), ("cmp", "id", "<", lo + rng.randrange(20, 400)))


def predicate(rng: random.Random, columns: list, partition: str | None, sparse: float = 0.0):
    """A random filter over the table's current columns ([name, type]); with
    probability `sparse` one of its terms selects few rows (what views sieve)."""
    def one():
        name, typ = rng.choice(columns)
        if name == partition:
            return ("cmp", name, "=", rng.choice("abc"))
        return atom(rng, name, typ)
    p = sparse_atom(rng, columns) if rng.random() < sparse else one()
    if rng.random() < 0.5:
        p = (rng.choice(["and", "and", "or"]), p, one()) if p[0] != "cmp" or rng.random() < 0.5 else \
            ("and", one(), p)
    return p


# -- the Spark side -----------------------------------------------------------------------------------
class Driver:
    """delta_ops_driver.py in a Spark Python, one request at a time."""

    def __init__(self, log_path: Path):
        sys.path.insert(0, str(REPO / "scripts" / "lib"))
        import bench_data
        found = bench_data.spark_python()
        if found is None:
            raise RuntimeError("no Spark with delta-spark (scripts/setup creates tests/e2e/.data/spark-venv; "
                               "Java 17 needed)")
        py, _, pkg = found
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen([py, str(Path(__file__).with_name("delta_ops_driver.py")), pkg],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env=bench_data.spark_local_env())
        self.call(None)

    def call(self, req: dict | None) -> dict:
        if req is not None:
            self.proc.stdin.write(json.dumps(req, default=str) + "\n")
            self.proc.stdin.flush()
        while True:
            ln = self.proc.stdout.readline()
            if not ln:
                raise RuntimeError(f"the Spark driver exited ({self.proc.wait()}); see {self.log.name}")
            if ln.startswith("REPLY "):
                return json.loads(ln[len("REPLY "):])

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


# -- one scenario -------------------------------------------------------------------------------------
@dataclass
class Hint:
    name: str
    pred: tuple
    version: int          # the table's version when it was accepted
    columns: list | None


@dataclass
class Scenario:
    seed: int
    driver: Driver
    s3: object
    bucket: str
    mp: Path
    work: Path
    readers: tuple = READERS
    ops: list = field(default_factory=list)
    hints: list = field(default_factory=list)
    mismatches: list = field(default_factory=list)
    reads: int = 0
    reads_with_rows: int = 0
    both_failed: int = 0
    next_id: int = 0

    def __post_init__(self):
        self.rng = random.Random(f"delta-versions:{self.seed}")
        self.local = self.work / f"table{self.seed}"
        self.uploaded: dict = {}
        self.plain_cache: dict = {}

    # writing
    def sync(self):
        """Upload what is new or changed in the local table (Spark rewrites
        only _last_checkpoint), then wait out the mount's 1 s _delta_log TTL."""
        for p in sorted(self.local.rglob("*")):
            if p.is_dir() or p.name.startswith(".") or "_staged_commits" in p.parts:
                continue
            rel = p.relative_to(self.local).as_posix()
            st = p.stat()
            if self.uploaded.get(rel) != (st.st_size, st.st_mtime_ns):
                self.s3.put_object(Bucket=self.bucket, Key=f"{TABLE}/{rel}", Body=p.read_bytes())
                self.uploaded[rel] = (st.st_size, st.st_mtime_ns)
        time.sleep(1.2)

    def do(self, req: dict) -> dict:
        r = self.driver.call(req)
        self.ops.append({"req": req, "ok": r["ok"], "version": r.get("version"), "error": r.get("error")})
        return r

    def schema(self) -> dict:
        r = self.driver.call({"cmd": "schema"})
        assert r["ok"], r
        return r

    def random_op(self):
        rng = self.rng
        sch = self.schema()
        cols, part, latest = sch["columns"], sch["partition"], sch["version"]
        movable = [c for c in cols if c[0] not in ("id", part)]
        kinds = ["append"] * 3 + ["delete"] * 3 + ["update"] * 2 + ["optimize"] * 2 + ["restore"] * 2 + \
            ["rename", "swap", "redo_column", "checkpoint"]
        kind = rng.choice(kinds)
        if kind == "append":
            n = rng.choice([800, 3000, 9000])
            self.do({"cmd": "append", "start": self.next_id, "rows": n, "files": rng.choice([1, 2])})
            self.next_id += n
        elif kind == "delete":
            self.do({"cmd": "delete", "where": Render.sql(predicate(rng, cols, part, sparse=0.5))})
        elif kind == "update":
            name, typ = rng.choice(movable) if movable else ("id", "bigint")
            t = typ.lower()
            if t in ("int", "integer"):
                expr = f"{name} + 1"
            elif t == "double":
                expr = f"{name} / 2"
            elif t == "boolean":
                expr = f"NOT {name}"
            elif t.startswith("decimal") or t == "bigint":
                expr = f"{name} + 1"
            elif t == "string":
                expr = "'s1'"
            else:
                expr = name
            self.do({"cmd": "update", "set": f"{name} = {expr}",
                     "where": Render.sql(predicate(rng, cols, part, sparse=0.5))})
        elif kind == "optimize":
            self.do({"cmd": "optimize"})
        elif kind == "restore" and latest >= 2:
            self.do({"cmd": "restore", "version": rng.randrange(max(1, latest - 6), latest)})
        elif kind == "rename" and movable:
            used = {c[0] for c in cols}
            free = [n for n in ("k", "x", "b", "dec", "s", "k2", "x2", "w", "z") if n not in used]
            self.do({"cmd": "rename", "old": rng.choice(movable)[0], "new": rng.choice(free)})
        elif kind == "swap" and len(movable) >= 2:
            (a, _), (b, _) = rng.sample(movable, 2)
            for old, new in ((a, "tmp_swap"), (b, a), ("tmp_swap", b)):
                self.do({"cmd": "rename", "old": old, "new": new})
        elif kind == "redo_column" and movable:
            name, typ = rng.choice(movable)
            self.do({"cmd": "drop", "column": name})
            self.do({"cmd": "add_column", "column": name, "type": typ})
        else:
            self.do({"cmd": "checkpoint"})

    def accept_hint(self):
        sch = self.schema()
        pred = predicate(self.rng, sch["columns"], sch["partition"], sparse=0.75)
        name = f"h{self.seed}_{len(self.hints)}"
        doc = {"table": TABLE, "where": Render.sql(pred)}
        cols = None
        if self.rng.random() < 0.3:
            cols = sorted({c[0] for c in self.rng.sample(sch["columns"], 3)})
            doc["columns"] = cols
        r = vd.write_hint(self.mp, name, doc)
        assert r.ok, (doc, r.error_text)
        self.hints.append(Hint(name, pred, sch["version"], cols))

    # reading
    def read(self, reader: str, root: Path, version: int | None, pred) -> tuple:
        """('rows', count, hash) or ('error', message)."""
        try:
            if reader == "spark":
                r = self.driver.call({"cmd": "read", "path": str(root), "version": version,
                                      "where": Render.sql(pred)})
                if not r["ok"]:
                    return ("error", r["error"])
                return ("rows", r["rows"], r["hash"])
            if reader == "deltalake":
                from deltalake import DeltaTable, QueryBuilder
                dt = DeltaTable(str(root)) if version is None else DeltaTable(str(root), version=version)
                import pyarrow as pa
                t = pa.table(QueryBuilder().register("t", dt)
                             .execute(f"SELECT * FROM t WHERE {Render.sql(pred)}").read_all())
                names = sorted(t.column_names)
                cols = [t.column(n).to_pylist() for n in names]
                rows = sorted(delta_by_hand._norm_row(r) for r in zip(*cols)) if cols else []
            else:
                st = delta_by_hand.log_state(self.local, version)
                rows = delta_by_hand.read_by_hand(reader, root, st, pred, Render)
        except Exception as e:  # noqa: BLE001 - compared between the two paths
            return ("error", f"{type(e).__name__}: {str(e)[:300]}")
        return ("rows", len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest())

    def check_read(self, h: Hint, reader: str, version: int | None):
        latest = self.schema()["version"]
        key = (reader, h.name, latest if version is None else version)
        plain = self.plain_cache.get(key)
        if plain is None or version is None:
            plain = self.read(reader, self.mp / TABLE, version, h.pred)
            self.plain_cache[key] = plain
        view = self.read(reader, vd.view_path(self.mp, h.name), version, h.pred)
        self.reads += 1
        same = view == plain or (view[0] == "error" and plain[0] == "error")
        if plain[0] == "error" and view[0] == "error":
            self.both_failed += 1
        elif plain[0] == "rows" and plain[1] > 0:
            self.reads_with_rows += 1
        if not same:
            self.mismatches.append({"seed": self.seed, "reader": reader, "hint": h.name,
                                    "where": Render.sql(h.pred), "hint_version": h.version,
                                    "read_version": version, "latest": latest, "view": view, "plain": plain,
                                    "ops": [o["req"] for o in self.ops]})
            print("MISMATCH " + json.dumps(self.mismatches[-1], default=str), flush=True)

    def run(self, steps: int, reads_per_step: int):
        rng = self.rng
        r = self.do({"cmd": "create", "path": str(self.local), "rows": 6000, "files": 2})
        assert r["ok"], r
        self.next_id = 6000
        self.sync()
        self.accept_hint()
        for _ in range(steps):
            self.random_op()
            self.sync()
            if rng.random() < 0.45:
                self.accept_hint()
            latest = self.schema()["version"]
            for _ in range(reads_per_step):
                h = rng.choice(self.hints)
                # versions around the hint's, before it, and the latest
                v = rng.choice([None, None, h.version, rng.randrange(0, latest + 1),
                                rng.randrange(max(0, h.version - 4), min(latest, h.version + 4) + 1)])
                self.check_read(h, rng.choice(self.readers), v)

    def sieved_pages(self) -> int:
        """Pages the views synthesized or read in part (0: nothing was sieved, the run proves little)."""
        return sum(vd.synthesized(vd.view_stats(self.mp, h.name)) for h in self.hints)

    def summary(self) -> str:
        return (f"seed {self.seed}: {len(self.ops)} operations, {len(self.hints)} hints, {self.reads} view reads "
                f"({self.reads_with_rows} with rows, {self.both_failed} failing on both paths), "
                f"{len(self.mismatches)} mismatches")


def reads_wanted() -> int:
    """SIEVE_DELTA_VERSIONS_READS: view reads in the generated test (CI's short run by default)."""
    return int(os.environ.get("SIEVE_DELTA_VERSIONS_READS", "150"))
