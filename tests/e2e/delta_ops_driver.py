"""A Spark process that writes one Delta table and reads tables, driven by
JSON lines on stdin (one reply line per request on stdout, "REPLY {...}").
Run with the Python of a pyspark that has delta-spark
(scripts/lib/bench_data.spark_python()); tests/e2e/delta_versions.py
drives it.

Requests (every reply has "ok"; failures give "error"):
  {"cmd": "create", "path": P, "rows": N}
  {"cmd": "append", "start": ID, "rows": N, "files": F}
  {"cmd": "delete", "where": SQL}
  {"cmd": "update", "set": SQL, "where": SQL}
  {"cmd": "optimize"}
  {"cmd": "restore", "version": V}
  {"cmd": "rename", "old": A, "new": B}
  {"cmd": "drop", "column": A}
  {"cmd": "add_column", "column": A, "type": T}
  {"cmd": "checkpoint"}
  {"cmd": "schema"}                     -> {"columns": [[name, type], ...], "version": V}
  {"cmd": "read", "path": P, "version": V or null, "where": SQL}
                                        -> {"rows": n, "hash": h, "columns": [...]}
Every write replies with the table's new version. Values a write makes
depend only on the row's id and the column's name, so a run is repeatable.
"""
import hashlib
import json
import sys
import traceback

from pyspark.sql import SparkSession, functions as F

PKG = sys.argv[1]
spark = (SparkSession.builder.master("local[2]").appName("sievefs-delta-versions")
         .config("spark.ui.enabled", "false").config("spark.jars.packages", PKG)
         .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
         .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
         .config("spark.sql.shuffle.partitions", "2").config("spark.ui.showConsoleProgress", "false")
         # several uncompressed pages per column chunk, so that views have pages to sieve
         .config("spark.hadoop.parquet.page.size", "16384")
         .config("spark.hadoop.parquet.page.row.count.limit", "2000")
         .config("spark.hadoop.parquet.enable.dictionary", "false")
         .config("spark.sql.parquet.compression.codec", "uncompressed")
         .config("spark.databricks.delta.snapshotPartitions", "1")
         .config("spark.databricks.delta.retentionDurationCheck.enabled", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
TABLE = None


def version() -> int:
    return spark.sql(f"DESCRIBE HISTORY delta.`{TABLE}` LIMIT 1").collect()[0]["version"]


def salt(name: str) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest()[:6], 16)


def column_value(name: str, typ: str, idc):
    """The value of column `name` of type `typ` for the row whose id is idc."""
    s = salt(name)
    h = (idc * F.lit(2654435761) + F.lit(s)) % F.lit(1000003)
    t = typ.lower()
    if t in ("bigint", "long"):
        return (h % 100000).cast("bigint")
    if t in ("int", "integer"):
        return (h % 10).cast("int")
    if t == "double":
        return h / F.lit(1000003.0)
    if t == "boolean":
        return (h % 3) == 0
    if t.startswith("decimal"):
        return ((h % 100000) / F.lit(100)).cast(t)
    if t == "string":
        return F.concat(F.lit("s"), (h % 37).cast("string"))
    if t == "date":
        return F.date_add(F.lit("2024-01-01").cast("date"), (h % 400).cast("int"))
    raise ValueError(f"no generator for type {typ}")


def schema():
    df = spark.read.format("delta").load(TABLE)
    return [[f.name, f.dataType.simpleString()] for f in df.schema.fields]


def frame(start: int, rows: int, files: int):
    cols = schema()
    base = spark.range(start, start + rows, numPartitions=max(1, files))
    out = []
    for name, typ in cols:
        if name == "id":
            out.append(F.col("id").cast("bigint").alias("id"))
        elif name == PARTITION_OF.get("name"):
            out.append(F.element_at(F.array(F.lit("a"), F.lit("b"), F.lit("c")),
                                    (F.col("id") % 3 + 1).cast("int")).alias(name))
        else:
            out.append(column_value(name, typ, F.col("id")).alias(name))
    return base.select(*out)


PARTITION_OF = {}


def partition_column():
    d = spark.sql(f"DESCRIBE DETAIL delta.`{TABLE}`").collect()[0]
    cols = list(d["partitionColumns"])
    return cols[0] if cols else None


def handle(req: dict) -> dict:
    global TABLE
    cmd = req["cmd"]
    if cmd == "create":
        TABLE = req["path"]
        spark.sql(f"""CREATE TABLE delta.`{TABLE}` (id BIGINT, r BIGINT, k INT, x DOUBLE, b BOOLEAN, dec DECIMAL(10,2),
                      s STRING, p STRING) USING delta PARTITIONED BY (p)
                      TBLPROPERTIES ('delta.enableDeletionVectors' = 'true',
                                     'delta.columnMapping.mode' = 'name',
                                     'delta.minReaderVersion' = '3', 'delta.minWriterVersion' = '7',
                                     'delta.checkpointInterval' = '4')""")
        PARTITION_OF["name"] = "p"
        frame(0, req["rows"], req.get("files", 2)).write.format("delta").mode("append").save(TABLE)
    elif cmd == "append":
        PARTITION_OF["name"] = partition_column()
        frame(req["start"], req["rows"], req.get("files", 2)).write.format("delta").mode("append").save(TABLE)
    elif cmd == "delete":
        spark.sql(f"DELETE FROM delta.`{TABLE}` WHERE {req['where']}")
    elif cmd == "update":
        spark.sql(f"UPDATE delta.`{TABLE}` SET {req['set']} WHERE {req['where']}")
    elif cmd == "optimize":
        spark.sql(f"OPTIMIZE delta.`{TABLE}`")
    elif cmd == "restore":
        spark.sql(f"RESTORE TABLE delta.`{TABLE}` TO VERSION AS OF {int(req['version'])}")
    elif cmd == "rename":
        spark.sql(f"ALTER TABLE delta.`{TABLE}` RENAME COLUMN `{req['old']}` TO `{req['new']}`")
    elif cmd == "drop":
        spark.sql(f"ALTER TABLE delta.`{TABLE}` DROP COLUMN `{req['column']}`")
    elif cmd == "add_column":
        spark.sql(f"ALTER TABLE delta.`{TABLE}` ADD COLUMNS (`{req['column']}` {req['type']})")
    elif cmd == "checkpoint":
        jvm = spark._jvm
        log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, TABLE)
        log.checkpoint()
    elif cmd == "schema":
        return {"columns": schema(), "version": version(), "partition": partition_column()}
    elif cmd == "read":
        reader = spark.read.format("delta")
        if req.get("version") is not None:
            reader = reader.option("versionAsOf", int(req["version"]))
        df = reader.load(req["path"])
        if req.get("where"):
            df = df.where(req["where"])
        names = sorted(df.columns)
        rows = sorted(json.dumps([None if r[c] is None else str(r[c]) for c in names]) for r in df.collect())
        return {"rows": len(rows), "columns": names,
                "hash": hashlib.sha256("\n".join(rows).encode()).hexdigest()}
    else:
        raise ValueError(f"unknown command {cmd}")
    return {"version": version()}


print("REPLY " + json.dumps({"ok": True, "ready": True}), flush=True)
for line in sys.stdin:
    if not line.strip():
        continue
    try:
        out = handle(json.loads(line))
        out["ok"] = True
    except Exception as e:  # the caller decides whether an error is expected
        msg = str(e).split("\n")[0][:500] or type(e).__name__
        out = {"ok": False, "error": msg, "trace": traceback.format_exc()[-2000:]}
    print("REPLY " + json.dumps(out), flush=True)
