"""The connection profile against tests/tools/s3link, which emulates the
link inside the server and answers thousands of GETs a second, as S3 does
(moto behind the Python wanproxy managed a few hundred): `sievefs profile`
measures the `wan` link (200 +- 20 ms, 150 Mbit/s) within bounds an order of
magnitude wide, in a profile of the right shape; a mount's warmup fills
MOUNTPOINT/.sieve/profile in the background; `--warmup none` sends no
sampling request; a table of small files is measured on them; a warmup
that cannot measure (no file large enough, failing requests) never fails
the mount.

How close the measures come is timing (the project's rule: timing lives in
benchmarks): test_profile_accuracy below is marked `timing`, deselected
unless pytest runs with --timing, as `scripts/test --full` does, alone.
The tests of failing requests run on moto behind the fault proxy."""
from __future__ import annotations

import json
import os
import pty
import select
import sys
import time

import pytest

import s3env

sys.path.insert(0, str(s3env.REPO / "scripts" / "lib"))
import s3servers  # noqa: E402

MiB = 1 << 20
WAN_RTT_MS = 200        # s3link's --profile wan: 200 +- 20 ms, 150 Mbit/s each way
WAN_JITTER_MS = 20
WAN_MBIT = 150


def data_files(n=2, size=6 * MiB):
    """Objects the warmup samples (>= 4 MiB, *.parquet preferred), a small
    one (under its 64 KiB floor) and a log entry it must leave alone."""
    objs = {f"t/part-{i:05d}.parquet": os.urandom(size) for i in range(n)}
    objs["t/small.parquet"] = b"x" * 1000
    objs["t/_delta_log/00000000000000000000.json"] = b"{}\n"
    return objs


def small_files_table(tmp_path, appends=10, days=4, rows=4000) -> dict:
    """A Delta table grown by appends, as issue 45's (there: 300 files of
    ~1.4 MB): appends x days Parquet files of about 100 KB (random numbers,
    so nothing compresses), partitioned by day, none near 4 MiB. {key: local
    path} of every file under t/, the log included."""
    import random

    import pyarrow as pa
    from deltalake import write_deltalake
    local = tmp_path / "small-table"
    rnd = random.Random(45)
    for a in range(appends):
        n = rows * days
        write_deltalake(str(local), pa.table({
            "day": pa.array([f"2024-01-{1 + i % days:02d}" for i in range(n)]),
            "id": pa.array(range(a * n, (a + 1) * n), pa.int64()),
            "v": pa.array([rnd.getrandbits(62) for _ in range(n)], pa.int64()),
            "f": pa.array([rnd.random() for _ in range(n)], pa.float64()),
        }), mode="append", partition_by=["day"])
    return {f"t/{p.relative_to(local).as_posix()}": p for p in local.rglob("*") if p.is_file()}


def read_profile(m) -> dict:
    return json.loads((m.mp / ".sieve" / "profile").read_bytes())


def wait_warmup(m, timeout=60.0) -> dict:
    """.sieve/profile once the warmup has ended."""
    deadline = time.monotonic() + timeout
    while True:
        doc = read_profile(m)
        if doc["state"] != "running":
            return doc
        if time.monotonic() > deadline:
            pytest.fail(f"warmup still running after {timeout}s: {doc}")
        time.sleep(0.2)


def within(measured, configured, share=0.25) -> bool:
    return abs(measured - configured) <= share * configured


def profile_json(run_cli, b, endpoint, *args) -> dict:
    r = run_cli("profile", f"s3://{b}/t", "--endpoint", endpoint, "--force-path-style", "--json", *args,
                timeout=90)
    assert r.returncode == 0, r
    doc = json.loads(r.stdout)
    assert doc["state"] == "done" and doc["valid"] is True, doc
    return doc["profile"]


def check_shape(p):
    """What holds of any profile, whatever the load: ordered levels, the
    suggestion one of them, the p90 not below the median."""
    assert p["latency_p90_ms"] >= p["latency_ms"] > 0, p
    curve = p["capacity"]
    assert curve and [c["in_flight"] for c in curve] == sorted({c["in_flight"] for c in curve}), p
    assert curve[0]["in_flight"] == 8, p
    assert p["suggested_in_flight"] in [c["in_flight"] for c in curve], p
    assert all(c["per_s"] > 0 for c in curve), p


def test_profile_measures_a_wan_link(s3link_wan, s3link_bucket, run_cli):
    """Bounds that no load can break: nothing comes back sooner than the
    shortest emulated round trip, nor faster than the emulated bandwidth
    (twice it, for the estimate's noise), and nothing is ten times off."""
    b = s3link_bucket(s3link_wan, data_files())
    p = profile_json(run_cli, b, s3link_wan.endpoint)
    print(f"s3link wan ({WAN_RTT_MS} +- {WAN_JITTER_MS} ms, {WAN_MBIT} Mbit/s): measured {json.dumps(p)}")
    check_shape(p)
    rtt_min = WAN_RTT_MS - WAN_JITTER_MS
    assert 0.9 * rtt_min <= p["latency_ms"] <= 10 * WAN_RTT_MS, p
    assert WAN_MBIT / 10 <= p["bandwidth_mbit"] <= 2 * WAN_MBIT, p
    # A new connection pays the emulated handshake, one more round trip.
    assert 0.5 * rtt_min <= p["connect_ms"] <= 10 * WAN_RTT_MS, p
    # At 8 in flight: at most 8 completions per shortest round trip.
    per_s = p["capacity"][0]["per_s"]
    assert 8 / (10 * WAN_RTT_MS / 1000) <= per_s <= 1.2 * 8 / (rtt_min / 1000), p


@pytest.mark.timing
@pytest.mark.parametrize("rtt_ms,mbit", [(100, 100), (200, 150)], ids=["100ms-100mbit", "200ms-150mbit"])
def test_profile_accuracy(tmp_path, s3link_bucket, run_cli, rtt_ms, mbit):
    """Timing (scripts/test --full, alone): within 25 % of the emulated
    round trip (no jitter) and bandwidth, the handshake one round trip, 8
    completions per round trip at 8 in flight."""
    srv = s3servers.S3Link(root=tmp_path / "root", log_path=tmp_path / "s3link.log", profile="wan",
                           rtt_ms=rtt_ms, jitter_ms=0, mbit=mbit).start()
    try:
        b = s3link_bucket(srv, data_files())
        p = profile_json(run_cli, b, srv.endpoint)
    finally:
        srv.stop()
    print(f"configured rtt {rtt_ms} ms, {mbit} Mbit/s; measured {json.dumps(p)}")
    check_shape(p)
    assert within(p["latency_ms"], rtt_ms), p
    assert within(p["bandwidth_mbit"], mbit), p
    assert 0.5 * rtt_ms <= p["connect_ms"] <= 1.5 * rtt_ms, p
    assert within(p["capacity"][0]["per_s"], 8 / (p["latency_ms"] / 1000)), p


def test_profile_text_output(s3link_lan, s3link_bucket, run_cli):
    b = s3link_bucket(s3link_lan, data_files(n=1))
    r = run_cli("profile", f"s3://{b}/t", "--endpoint", s3link_lan.endpoint, "--force-path-style",
                "--duration", "2s", "--max-in-flight", "32", timeout=60)
    assert r.returncode == 0, r
    for word in ("latency", "connect", "bandwidth", "Mbit/s", "capacity", "suggested"):
        assert word in r.stdout, r
    assert "ms median" in r.stdout and "p90" in r.stdout, r


def test_profile_without_a_large_file(s3link_lan, s3link_bucket, run_cli):
    b = s3link_bucket(s3link_lan, {"t/small.parquet": b"x" * 1000})
    r = run_cli("profile", f"s3://{b}/t", "--endpoint", s3link_lan.endpoint, "--force-path-style")
    assert r.returncode == 1, r
    assert "no object of at least" in r.stderr and r.stderr.count("\n") == 1, r


@pytest.mark.parametrize("args", [["--duration", "0"], ["--duration", "-1s"], ["--duration", "2h"],
                                  ["--max-in-flight", "4"], ["--bogus"], []])
def test_profile_usage_errors(run_cli, args):
    argv = ["profile"] + (["s3://b/t"] if args else []) + args
    r = run_cli(*argv)
    assert r.returncode == 2 and "see sievefs profile --help" in r.stderr, r


def test_mount_warmup_fills_the_profile(s3link_lan, s3link_bucket, mount):
    b = s3link_bucket(s3link_lan, data_files())
    m = mount(bucket=b, prefix="t", endpoint=s3link_lan.endpoint, warmup="automatic")
    # The mount answers at once, while the warmup runs.
    assert sorted(os.listdir(m.mp))[:2] == ["_delta_log", "part-00000.parquet"]
    doc = wait_warmup(m)
    assert doc["state"] == "done" and doc["valid"] is True, doc
    p = doc["profile"]
    assert p["latency_ms"] > 0 and p["bandwidth_mbit"] > 0 and p["samples"] > 0, doc
    # Large files: the bandwidth from four 2 MiB ranges.
    assert p["bandwidth_bytes"] == 8 * MiB, p
    assert doc["age_s"] is not None and doc["age_s"] >= 0
    # Without --max-connections the warmup may sample up to 512 in flight.
    assert all(c["in_flight"] <= 512 for c in p["capacity"]), p
    st = m.stats()
    assert 0 < st["warmup_requests"] <= 3200, st
    assert 0 < st["warmup_bytes"] <= 25 * MiB, st
    assert st["s3_get_requests"] >= st["warmup_requests"], st
    # Reads still work and are counted as before, apart from the warmup's.
    assert (m.mp / "small.parquet").read_bytes() == b"x" * 1000


def test_warmup_on_a_table_of_small_files(s3link_lan, s3link_bucket, mount, tmp_path):
    """No file of 4 MiB, 40 of about 100 KB in partitions: the warmup
    measures on the small files (issue 45: it used to fail, and views served
    every page real), its bandwidth from their bytes, fewer than the usual 8
    MiB; the log is not sampled."""
    objs = small_files_table(tmp_path)
    parquet = {k: v.stat().st_size for k, v in objs.items() if k.endswith(".parquet") and "_delta_log" not in k}
    assert len(parquet) == 40 and all(64 << 10 <= n < 4 * MiB for n in parquet.values()), parquet
    b = s3link_bucket(s3link_lan, objs)
    m = mount(bucket=b, prefix="t", endpoint=s3link_lan.endpoint, warmup="network=2s")
    doc = wait_warmup(m)
    assert doc["state"] == "done" and doc["valid"] is True, doc
    p = doc["profile"]
    assert p["latency_ms"] > 0 and p["bandwidth_mbit"] > 0 and p["capacity"], doc
    # Whole files, at most the 32 largest: between the floor's 1 MiB and 8 MiB.
    largest = sorted(parquet.values(), reverse=True)[:32]
    assert MiB <= p["bandwidth_bytes"] <= sum(largest) < 8 * MiB, (p, sum(largest))
    st = m.stats()
    assert 0 < st["warmup_requests"] <= 3200 and 0 < st["warmup_bytes"] <= 25 * MiB, st


def test_warmup_none_sends_no_sampling_request(s3link_lan, s3link_bucket, mount):
    b = s3link_bucket(s3link_lan, data_files(n=1))
    m = mount(bucket=b, prefix="t", endpoint=s3link_lan.endpoint)  # the fixture's default: --warmup none
    time.sleep(1.0)
    doc = read_profile(m)
    assert doc == {"state": "none", "valid": False, "runs": 0, "age_s": None, "profile": None}, doc
    st = m.stats()
    assert st["warmup_requests"] == 0 and st["s3_get_requests"] == 0, st
    assert "profile" in os.listdir(m.mp / ".sieve")


def test_warmup_network_zero_skips_sampling(s3link_lan, s3link_bucket, mount):
    b = s3link_bucket(s3link_lan, data_files(n=1))
    m = mount(bucket=b, prefix="t", endpoint=s3link_lan.endpoint, warmup="network=0")
    time.sleep(0.5)
    assert read_profile(m)["state"] == "none"
    assert m.stats()["warmup_requests"] == 0


def test_warmup_without_a_large_file_leaves_the_mount_working(s3link_lan, s3link_bucket, mount):
    b = s3link_bucket(s3link_lan, {"t/a.parquet": b"a" * 5000, "t/sub/b.bin": b"b" * 100})
    m = mount(bucket=b, prefix="t", endpoint=s3link_lan.endpoint, warmup="network=2s")
    doc = wait_warmup(m)
    assert doc["state"] == "failed" and doc["valid"] is False, doc
    assert m.stats()["warmup_requests"] == 0
    assert (m.mp / "a.parquet").read_bytes() == b"a" * 5000
    assert (m.mp / "sub" / "b.bin").read_bytes() == b"b" * 100


# Every GET fails while the warmup runs, so does the background load of the
# table's Delta log (found in the first listing): the daemon says so.
TABLE_LOAD_FAILED = r"read failed: GET \S*_delta_log/\S+: HTTP 500"


@pytest.mark.allow_stderr(TABLE_LOAD_FAILED)
def test_warmup_with_failing_requests_leaves_the_mount_working(bucket, mount, proxy):
    b = bucket(data_files(n=1))
    proxy.add("get", "status", status=500)  # every GET, for good
    m = mount(bucket=b, prefix="t", endpoint=proxy.endpoint, warmup="network=2s")
    doc = wait_warmup(m)
    assert doc["state"] == "failed" and doc["valid"] is False, doc
    assert m.stats()["warmup_requests"] > 0
    proxy.clear()
    assert (m.mp / "small.parquet").read_bytes() == b"x" * 1000


def test_mount_help_and_bad_warmup(run_cli, tmp_path):
    r = run_cli("mount", "--help")
    assert "--warmup" in r.stdout and "network=DURATION" in r.stdout, r
    for bad in ("sometimes", "network=", "network=lots", "network=-1", "network=2h"):
        r = run_cli("mount", "s3://b", tmp_path, "--warmup", bad)
        assert r.returncode == 1 and "--warmup" in r.stderr, r


def test_mount_on_a_terminal_prints_the_profile(s3link_lan, s3link_bucket, moto, sievefs_bin, tmp_path, home):
    """Without -f on a terminal, `sievefs mount` waits for the warmup and
    prints the profile; the mount answers meanwhile."""
    b = s3link_bucket(s3link_lan, data_files(n=1))
    mp = tmp_path / "mnt"
    mp.mkdir()
    env = s3env.clean_env(home=home)
    env.update(moto.creds.env())
    argv = [sievefs_bin, "mount", f"s3://{b}/t", str(mp), "--endpoint", s3link_lan.endpoint,
            "--force-path-style", "--warmup", "network=2s"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: sievefs on the pty
        os.execve(argv[0], argv, env)
    out = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the command exited and closed the pty
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        text = out.decode(errors="replace")
        print(text)
        assert os.waitstatus_to_exitcode(status) == 0, text
        assert "connection profile" in text and "latency" in text and "Mbit/s" in text, text
        assert json.loads((mp / ".sieve" / "profile").read_bytes())["state"] == "done"
    finally:
        os.close(fd)
        pids = s3env.procs_matching(sievefs_bin, str(mp))
        s3env.unmount(mp, pids)


def test_unmount_during_the_warmup(s3link_wan, s3link_bucket, mount):
    """Unmounting cancels a running warmup: the daemon exits at once, its
    requests still out are completed by the client's shutdown."""
    b = s3link_bucket(s3link_wan, data_files(n=1))
    m = mount(bucket=b, prefix="t", endpoint=s3link_wan.endpoint, warmup="network=30s")
    time.sleep(1.0)
    assert read_profile(m)["state"] == "running"
    t0 = time.monotonic()
    notes = m.unmount()
    # Far below the warmup's 30 s; no SIGKILL was needed (the fixture fails the test otherwise).
    assert time.monotonic() - t0 < 15, notes
    assert m.proc.returncode == 0


def test_the_profile_sets_the_client_limits(s3link_lan, s3link_bucket, mount):
    """Without --max-connections the warmup samples up to 512 in flight and
    then sets the client's limit from the profile; with it, the warmup stays
    within it and the limit is kept."""
    b = s3link_bucket(s3link_lan, data_files())
    m = mount(bucket=b, prefix="t", endpoint=s3link_lan.endpoint, warmup="automatic", args=("--log-level", "info"))
    p = wait_warmup(m)["profile"]
    want = min(512, max(32, p["suggested_in_flight"]))
    assert f"warmup: {want} requests in flight" in m.stderr(), m.stderr()
    m2 = mount(bucket=b, prefix="t", endpoint=s3link_lan.endpoint, warmup="automatic",
               args=("--log-level", "info", "--max-connections", "16"))
    p2 = wait_warmup(m2)["profile"]
    assert p2["capacity"] and all(c["in_flight"] <= 16 for c in p2["capacity"]), p2
    assert "warmup: 16 requests in flight" in m2.stderr(), m2.stderr()


from test_views import F0, F1, SEL_FEW, accept, table, tbucket  # noqa: E402,F401  (the views' table)


@pytest.mark.allow_stderr(TABLE_LOAD_FAILED)
def test_a_failed_warmup_is_retried_once_by_the_first_query(mount, tbucket, proxy):
    """The warmup fails at mount (every GET refused); once the server is
    back, the first view query that wants a profile retries the warmup,
    waits for it and plans with its profile; later queries do not retry."""
    proxy.add("get", "status", status=500)
    m = mount(bucket=tbucket, endpoint=proxy.endpoint, warmup="network=2s")
    doc = wait_warmup(m)
    assert doc["state"] == "failed" and doc["runs"] == 1, doc
    first_requests = m.stats()["warmup_requests"]
    proxy.clear()
    vdir = accept(m, "few", {"where": SEL_FEW})
    size = (m.mp / F0).stat().st_size
    assert len((vdir / F0).read_bytes()) == size
    doc = read_profile(m)
    assert doc["state"] == "done" and doc["valid"] is True, doc
    assert m.stats()["warmup_requests"] > first_requests, m.stats()
    assert doc["runs"] == 2, doc
    assert len((vdir / F1).read_bytes()) == (m.mp / F1).stat().st_size
    assert read_profile(m)["runs"] == 2, "a second retry"


def test_a_warmup_that_fails_again_is_not_retried_twice(mount, s3link_lan, s3link_bucket):
    """No file large enough to sample: the retry fails as the warmup did,
    the query goes on without a profile, and no third run follows."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import io
    buf = io.BytesIO()
    pq.write_table(pa.table({"a": list(range(1000)), "b": [i * 2 for i in range(1000)]}), buf,
                   write_page_index=True)
    b = s3link_bucket(s3link_lan, {"t/small.parquet": buf.getvalue()})
    m = mount(bucket=b, endpoint=s3link_lan.endpoint, warmup="network=1s")
    doc = wait_warmup(m)
    assert doc["state"] == "failed" and doc["runs"] == 1, doc
    import viewdata as vd
    r = vd.write_hint(m.mp, "q", {"where": "a < 3"})
    assert r.ok, r
    view_file = vd.view_path(m.mp, "q") / "t" / "small.parquet"
    for _ in range(2):
        assert len(view_file.read_bytes()) == len(buf.getvalue())
    doc = read_profile(m)
    assert doc["state"] == "failed" and doc["runs"] == 2, doc
