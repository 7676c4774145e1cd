"""probe-requests: how many small ranged GETs per second an S3 client
carries on an emulated link: the check that the benchmark server and link
emulation (tests/tools/s3link) behave like S3 over that link, and sievefs's
own S3 client next to a reference client (not a test; prints markdown).

--server s3link (the default): tests/tools/s3link serves a local directory
and emulates the link itself (no proxy): one server per --profile (wan: RTT
200 ± 20 ms, 150 Mbit/s; region: RTT 25 ms, 1 Gbit/s; lan). The check:

  * N small ranged GETs (--range, 4 KiB) with C in flight complete within
    1.15 x ceil(N/C) round trips (the profile's mean RTT), for every
    C in --k (default N=10,000 and C = 64, 256, 512, 1024 at wan and region);
  * one large range (--big-mib, 128 MiB) moves at the profile's bandwidth
    within 5 % (first to last body byte);

measured with the curl-multi reference client (tests/tools/s3link/curlref:
one libcurl multi handle per 64 connections on one epoll, C reused easy
handles, keep-alive, every connection opened and used once before the clock
starts), its GETs spread round-robin over 16 objects under 16 prefixes
(p00/ .. p15/) so that S3's per-prefix rate limit (5,500 GET/s, on in the
server) is not what is measured. When tests/tools/store_probe is built
(build/store_probe, or --tool), sievefs's own client (store_probe --client
sievefs: one object, so the server's rate limit is lifted for its runs; it
opens its connections inside the timed run, so its budget has one more
round trip) runs the same cells, alternating with the reference. Reports
wall time in round trips, requests/s, latency, and the CPU the client and
the server each used (of this machine's cores: a cell where they use them
all is bounded by the machine, and the report says so), then a PASS/FAIL
line (exit status 1 on FAIL).

--server moto|versitygw|range: the older set-up: that server behind the
wanproxy.py link emulator (a Python process in the data path), one object
of --object-mib MiB; for each (N, K) the two clients of
tests/tools/store_probe run alternately, --reps times each, N GETs of
--range bytes at random offsets (the same offsets for both, seeded per
repetition) with K in flight:

  curl     the reference: one curl multi handle on epoll
           (curl_multi_socket_action), K reused easy handles, keep-alive;
  sievefs  s3_client (fs/s3) with an in-flight limit of K, K
           store_get_async outstanding.

Both are C processes and the proxy is its own Python process, so no client
shares a GIL with the link. Reports the median requests/s of each and the
ratio sievefs time / reference time (target <= 1.15), and the CPU time each
client process spent per request (user + system; steadier than throughput on
a shared machine).

    scripts/probe-requests [--server s3link|moto|versitygw|range] [--profile wan,region]
                           [--n 10000] [--k 64,256,512,1024] [--reps 3] [--range 4096]
                           [--big-mib 128] [--tls] [--json OUT] [--submit thread|callback]
Defaults: with s3link the check above (--profile wan,region --n 10000
--k 64,256,512,1024 --reps 3); with the other servers the quick set
(--profile wan --n 1000 --k 256 --reps 3).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import s3env  # noqa: E402
sys.path.insert(0, str(REPO / "scripts" / "lib"))
import s3servers  # noqa: E402

MiB = 1 << 20
BUCKET = "probe"
KEY = "probe/object.bin"


def start_proxy(upstream_port: int, profile: str, log) -> tuple:
    p = subprocess.Popen(
        [sys.executable, str(REPO / "scripts" / "lib" / "wanproxy.py"), "--upstream",
         f"127.0.0.1:{upstream_port}", "--profile", profile],
        stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=s3env.die_with_parent)
    line = p.stdout.readline().strip()
    if not line.isdigit():
        p.kill()
        raise RuntimeError(f"wanproxy did not start (printed {line!r})")
    return p, int(line)


@contextlib.contextmanager
def range_server(size: int, work: Path):
    """scripts/lib/range_server.py in its own process: (port, etag)."""
    with open(work / "range_server.log", "ab") as log:
        p = subprocess.Popen(
            [sys.executable, str(REPO / "scripts" / "lib" / "range_server.py"), "--path",
             f"/{BUCKET}/{KEY}", "--size", str(size)],
            stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=s3env.die_with_parent)
        try:
            line = p.stdout.readline().strip()
            if not line.isdigit():
                raise RuntimeError(f"range_server did not start (printed {line!r})")
            yield int(line), '"0123456789abcdef0123456789abcdef"'
        finally:
            p.terminate()
            p.wait(10)


def run_probe(tool: str, client: str, endpoint: str, creds, etag: str, size: int, n: int, k: int,
              rng: int, seed: int, submit: str) -> dict:
    env = s3env.clean_env(creds.env())
    cmd = [tool, "--client", client, "--endpoint", endpoint, "--bucket", BUCKET, "--key", KEY,
           "--etag", etag, "--size", str(size), "-n", str(n), "-k", str(k), "--range", str(rng),
           "--seed", str(seed)]
    if client == "sievefs" and submit != "thread":
        cmd += ["--submit", submit]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError(f"{client} n={n} k={k}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---- --server s3link: the link check --------------------------------------------

S3LINK_PREFIXES = 16
S3LINK_DEFAULTS = {"profile": "wan,region", "n": "10000", "k": "64,256,512,1024"}
CHECK_FACTOR = 1.15     # N GETs within 1.15 x ceil(N/C) round trips
BANDWIDTH_TOLERANCE = 0.05


def _proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a live process."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _machine_busy() -> tuple:
    """(busy, total) jiffies of all CPUs (/proc/stat)."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f) - idle, sum(f)


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run_client(cmd: list, env: dict, server_pid: int, srv=None) -> dict:
    """Run one client process; its JSON line plus the wall time of the
    process, the CPU it and the server used meanwhile, what the whole
    machine used (cores busy) and, with srv, the bytes the server sent per
    GET (status line, headers and body: what crossed the emulated link)."""
    st0 = srv.stats() if srv else None
    s0, c0, m0, t0 = _proc_cpu(server_pid), _children_cpu(), _machine_busy(), time.monotonic()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    s1, c1, m1 = _proc_cpu(server_pid), _children_cpu(), _machine_busy()
    st1 = srv.stats() if srv else None
    if not r.stdout.strip():
        raise RuntimeError(f"{cmd[0]}: exit {r.returncode}: {r.stderr.strip()[-800:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    ncpu = os.cpu_count() or 1
    out.update(wall=wall, client_cpu_s=c1 - c0, server_cpu_s=s1 - s0,
               machine_cores_busy=(m1[0] - m0[0]) / max(1, m1[1] - m0[1]) * ncpu, exit=r.returncode,
               stderr=r.stderr.strip()[-500:])
    if st0 and st1:
        gets = st1["requests"]["get"] - st0["requests"]["get"]
        out["bytes_per_get"] = (st1["bytes_sent_total"] - st0["bytes_sent_total"]) / gets if gets else 0.0
        out["slowdowns"] = st1["slowdown_503"] - st0["slowdown_503"]
    return out


def _write_objects(root: Path, object_mib: int, big_mib: int) -> list:
    """root/probe/pNN/object.bin (16 objects) and root/probe/big/object.bin."""
    keys = []
    for i in range(S3LINK_PREFIXES):
        key = f"p{i:02d}/object.bin"
        path = root / BUCKET / key
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            for _ in range(object_mib):
                f.write(os.urandom(MiB))
        keys.append(key)
    if big_mib:
        path = root / BUCKET / "big" / "object.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        chunk = os.urandom(4 * MiB)
        with open(path, "wb") as f:
            for _ in range(0, big_mib, 4):
                f.write(chunk)
            f.truncate(big_mib * MiB)
    return keys


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def run_s3link(a) -> int:
    profiles = (a.profile or S3LINK_DEFAULTS["profile"]).split(",")
    ns = [int(x) for x in (a.n or S3LINK_DEFAULTS["n"]).split(",")]
    ks = [int(x) for x in (a.k or S3LINK_DEFAULTS["k"]).split(",")]
    msg = s3servers.check_available("s3link")
    if msg:
        print(msg, file=sys.stderr)
        return 2
    curlref = str(s3servers.S3LINK_BIN_DIR / "s3link_curlref")
    if not s3env.is_executable(curlref):
        print(f"{curlref} is not built (tests/tools/s3link/build.sh needs cc and libcurl4-openssl-dev)",
              file=sys.stderr)
        return 2
    tool = a.tool if s3env.is_executable(a.tool) else None
    tool_note = None
    if not tool:
        tool_note = f"not run ({a.tool} is not built)"
    elif a.tls:
        # store_probe builds its clients without a CA bundle (AWS_CA_BUNDLE is
        # read by `sievefs mount`, not by store_probe): every GET would fail.
        tool, tool_note = None, "not run with --tls (store_probe does not take a CA bundle)"
    if tool_note:
        print(f"probe-requests: sievefs's own client (store_probe): {tool_note}", file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix="probe-requests-"))
    root = work / "root"
    print(f"probe-requests: writing {S3LINK_PREFIXES} x {a.object_mib} MiB"
          + (f" and {a.big_mib} MiB" if a.big_mib else "") + f" under {root}", file=sys.stderr)
    keys = _write_objects(root, a.object_mib, a.big_mib)
    size = a.object_mib * MiB
    ncpu = os.cpu_count() or 1
    load0 = os.getloadavg()
    runs, cells, bw_rows = [], [], []
    describe = {}
    try:
        for profile in profiles:
            srv = s3servers.S3Link(root=root, log_path=work / f"s3link-{profile}.log", profile=profile,
                                   tls=a.tls)
            with srv:
                st = srv.stats()
                link = st["link"]
                get_rate = st["get_rate"]
                rtt = link["rtt_ms"] / 1000
                hs_rtts = 2 if a.tls else 1
                describe[profile] = srv.describe()
                env = s3env.clean_env(srv.creds.env())
                if a.tls:
                    env["AWS_CA_BUNDLE"] = srv.ca_bundle
                etag = srv.client().head_object(Bucket=BUCKET, Key=keys[0])["ETag"]
                base = [curlref, "--endpoint", srv.endpoint, "--bucket", BUCKET, "--keys", ",".join(keys),
                        "--size", str(size), "--range", str(a.range)]
                if a.tls:
                    base += ["--cafile", srv.ca_bundle]
                for n in ns:
                    for k in ks:
                        per = {"curlref": [], "sievefs": []}
                        for rep in range(a.reps):
                            clients = ["curlref"] + (["sievefs"] if tool else [])
                            if rep % 2:
                                clients.reverse()
                            for client in clients:
                                if client == "curlref":
                                    cmd = base + ["-n", str(n), "-k", str(k), "--seed", str(1000 + rep)]
                                    r = _run_client(cmd, env, srv.proc.pid, srv)
                                else:
                                    srv.set_rates(get_rate=0)  # one object: its prefix alone would hit the limit
                                    try:
                                        cmd = [tool, "--client", "sievefs", "--endpoint", srv.endpoint,
                                               "--bucket", BUCKET, "--key", keys[0], "--etag", etag, "--size",
                                               str(size), "-n", str(n), "-k", str(k), "--range", str(a.range),
                                               "--seed", str(1000 + rep)]
                                        if a.submit != "thread":
                                            cmd += ["--submit", a.submit]
                                        r = _run_client(cmd, env, srv.proc.pid, srv)
                                    finally:
                                        srv.set_rates(get_rate=get_rate)
                                    r.setdefault("warm_seconds", 0.0)
                                r.update(profile=profile, server="s3link", client=client, n=n, k=k, rtt_s=rtt,
                                         mbit=link["down_mbit"])
                                runs.append(r)
                                per[client].append(r)
                                print(f"  {profile} n={n} C={k} {client}: {r['seconds']:.3f} s "
                                      f"({r['seconds'] / rtt if rtt else 0:.1f} RTT), {r['rps']:.0f}/s, "
                                      f"errors {r['errors']}", file=sys.stderr, flush=True)
                        for client, rs in per.items():
                            if rs:
                                cells.append(_cell(profile, n, k, client, rs, rtt, hs_rtts, link["down_mbit"]))
                if a.big_mib:
                    big = a.big_mib * MiB
                    for client in ["curlref"] + (["sievefs"] if tool else []):
                        rs = []
                        for rep in range(a.reps):
                            if client == "curlref":
                                cmd = [curlref, "--endpoint", srv.endpoint, "--bucket", BUCKET, "--keys",
                                       "big/object.bin", "--size", str(big), "--range", str(big), "--big"]
                                if a.tls:
                                    cmd += ["--cafile", srv.ca_bundle]
                                r = _run_client(cmd, env, srv.proc.pid)
                                r["mbit"] = r["body_mbit_s"]
                            else:
                                cmd = [tool, "--client", "sievefs", "--endpoint", srv.endpoint, "--bucket", BUCKET,
                                       "--key", "big/object.bin", "--size", str(big), "-n", "1", "-k", "1",
                                       "--range", str(big)]
                                r = _run_client(cmd, env, srv.proc.pid)
                                body_s = r["seconds"] - (1 + hs_rtts) * rtt
                                r["mbit"] = big * 8 / body_s / 1e6 if body_s > 0 else 0.0
                            r.update(profile=profile, server="s3link", client=client, big_bytes=big)
                            runs.append(r)
                            rs.append(r)
                            print(f"  {profile} {a.big_mib} MiB range {client}: {r['mbit']:.1f} Mbit/s",
                                  file=sys.stderr, flush=True)
                        bw_rows.append((profile, client, big, link["down_mbit"],
                                        statistics.median(x["mbit"] for x in rs),
                                        statistics.median(x["server_cpu_s"] / x["wall"] for x in rs),
                                        statistics.median(x["client_cpu_s"] / x["wall"] for x in rs)))
    finally:
        load1 = os.getloadavg()
        if a.json:
            Path(a.json).write_text(json.dumps(runs, indent=1))
        shutil.rmtree(work, ignore_errors=True)

    # ---- report ----
    print(f"## s3link probe ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n")
    for p, d in describe.items():
        print(f"- `{p}`: {d}")
    print(f"- N GETs of {a.range} bytes at random offsets, C in flight, spread round-robin over "
          f"{S3LINK_PREFIXES} objects under {S3LINK_PREFIXES} prefixes (p00/ .. p15/), so a prefix sees "
          f"1/{S3LINK_PREFIXES} of the rate and S3's per-prefix limit (on: 5,500 GET/s) is not what is "
          f"measured; {a.reps} runs per client and cell, medians.")
    print(f"- curlref: the curl-multi reference client (tests/tools/s3link/curlref); its C connections are "
          f"opened and used once before the clock starts. "
          + ("sievefs: sievefs's own S3 client (store_probe --client sievefs), one object, the server's "
             "rate limit lifted for its runs; it opens its connections inside the timed run, so its budget "
             f"has {'two more round trips (TCP + TLS)' if a.tls else 'one more round trip'}."
             if tool else f"sievefs's own client: {tool_note}."))
    print(f"- budget: {CHECK_FACTOR} x ceil(N/C) round trips of the profile's mean RTT. link floor: what the "
          f"emulated link alone allows, in round trips: ceil(N/C), or 1 + N x (bytes per GET on the wire, "
          f"headers included, from the server's counters) / bandwidth, whichever is more; a cell whose floor "
          f"is above its budget cannot pass on that link whatever the server and client do. CPU columns are "
          f"the share of one core each process used over the client's run (this machine has {ncpu} "
          f"cores; \"other\" is what every other process on the machine used meanwhile). "
          f"Load average {load0[0]:.2f} before, {load1[0]:.2f} after.\n")
    print("| profile | C | client | time s | round trips | budget | link floor | x ideal | GETs/s | p50 ms "
          "| p99 ms | client CPU | server CPU | other CPU | server µs/GET | 503s | errors | within budget |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in cells:
        if c["rtt"]:
            rounds = (f"{c['rounds']:.1f} | {c['budget_rounds']:.1f} | {c['floor_rounds']:.1f} "
                      f"| {c['x_ideal']:.2f}")
        else:
            rounds = "– | – | – | –"
        print(f"| {c['profile']} | {c['k']} | {c['client']} | {c['seconds']:.3f} | {rounds} "
              f"| {c['rps']:,.0f} | {c['p50']} | {c['p99']} "
              f"| {_pct(c['client_cpu'])} | {_pct(c['server_cpu'])} | {_pct(c['other_cpu'])} "
              f"| {c['server_us']:.0f} | {c['slowdowns']} | {c['errors']} | {'yes' if c['ok'] else '**no**'} |")
    if bw_rows:
        print("\n| profile | client | range | link Mbit/s | measured Mbit/s | error | server CPU | client CPU "
              "| within 5 % |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    bw_ok = {}
    for profile, client, big, want, got, scpu, ccpu in bw_rows:
        if want:
            err = got / want - 1
            ok = abs(err) <= BANDWIDTH_TOLERANCE
            err_s = f"{err * 100:+.1f}%"
        else:
            ok, err_s = True, "unlimited"
        bw_ok.setdefault(client, []).append(ok)
        print(f"| {profile} | {client} | {big // MiB} MiB | {want or 'unlimited'} | {got:.1f} | {err_s} "
              f"| {_pct(scpu)} | {_pct(ccpu)} | {'yes' if ok else '**no**'} |")
    print()
    verdict = 0
    for client in ("curlref", "sievefs"):
        mine = [c for c in cells if c["client"] == client]
        if not mine:
            continue
        bad = [c for c in mine if not c["ok"]]
        bad_bw = [ok for ok in bw_ok.get(client, []) if not ok]
        name = "reference client (curlref)" if client == "curlref" else "sievefs client (store_probe)"
        if not bad and not bad_bw:
            print(f"**CHECK {name}: PASS** — all {len(mine)} cells within budget"
                  + (", bandwidth within 5 %" if bw_ok.get(client) else "") + ".")
            continue
        if client == "curlref":
            verdict = 1
        print(f"**CHECK {name}: FAIL** — " + "; ".join(
            [f"{c['profile']} C={c['k']}: {c['x_ideal']:.2f} x ideal ({c['rounds']:.1f} round trips, "
             f"budget {c['budget_rounds']:.1f})" for c in bad]
            + ([f"{len(bad_bw)} bandwidth run(s) off by more than 5 %"] if bad_bw else [])) + ".")
        for c in bad:
            used = c["client_cpu"] + c["server_cpu"] + c["other_cpu"]
            if c["rtt"] and c["floor_rounds"] > c["budget_rounds"]:
                print(f"  - {c['profile']} C={c['k']}: bound by the emulated link's bandwidth, not the server: "
                      f"{c['n']:,} GETs x {c['bytes_per_get']:,.0f} bytes on the wire need {c['wire_s']:.2f} s at "
                      f"{c['bytes_per_get'] and c['wire_s'] and c['n'] * c['bytes_per_get'] * 8 / c['wire_s'] / 1e6:,.0f}"
                      f" Mbit/s, {c['floor_rounds']:.1f} round trips > budget {c['budget_rounds']:.1f} "
                      f"(measured {c['rounds']:.1f}, {c['rounds'] / c['floor_rounds']:.2f} x the floor); smaller "
                      f"GETs (--range) stay within the link.")
            if c["client_cpu"] >= 0.8:
                print(f"  - {c['profile']} C={c['k']}: the client is CPU-bound: {_pct(c['client_cpu'])} of one "
                      f"core for its event loop ({c['client_cpu'] * c['seconds'] / c['n'] * 1e6:.0f} µs per GET; "
                      f"the cell needs {c['n'] / (c['ideal_rounds'] * c['rtt']):,.0f} GETs/s), while the server "
                      f"used {_pct(c['server_cpu'])} of a core ({c['server_us']:.0f} µs per GET).")
            if used >= 0.85 * ncpu:
                print(f"  - {c['profile']} C={c['k']}: the machine's CPUs were saturated: client "
                      f"{_pct(c['client_cpu'])} + server {_pct(c['server_cpu'])} + other processes "
                      f"{_pct(c['other_cpu'])} of {ncpu} cores ({_pct(ncpu)}); the cell needs "
                      f"{c['n'] / (c['ideal_rounds'] * c['rtt']):,.0f} GETs/s, "
                      f"{c['server_us']:.0f} µs of server CPU and "
                      f"{c['client_cpu'] * c['seconds'] / c['n'] * 1e6:.0f} µs of client CPU per GET here.")
        if any(c["rtt"] and c["floor_rounds"] > c["budget_rounds"] for c in mine):
            bad_f = [c for c in mine if not c["ok_floor"]]
            print(f"  - {name}, judged against {CHECK_FACTOR} x the link floor instead (the round trips, or the "
                  f"bytes through the link's bandwidth, whichever is more): "
                  + ("PASS." if not bad_f else "FAIL: " + "; ".join(
                      f"{c['profile']} C={c['k']}: {c['rounds'] / c['floor_rounds']:.2f} x the floor" for c in bad_f)
                     + "."))
    return verdict


def _cell(profile, n, k, client, rs, rtt, hs_rtts, mbit) -> dict:
    med = lambda key: statistics.median(r[key] for r in rs)  # noqa: E731
    secs = med("seconds")
    ideal = math.ceil(n / k)
    extra = hs_rtts if client == "sievefs" else 0
    budget = CHECK_FACTOR * ideal + extra
    rounds = secs / rtt if rtt else 0.0
    # The link's own floor: the round trips, or the bytes through its
    # bandwidth (plus the first request's round trip), whichever is longer.
    bpg = med("bytes_per_get") if all("bytes_per_get" in r for r in rs) else 0.0
    wire_s = n * bpg * 8 / (mbit * 1e6) if mbit else 0.0
    floor_rounds = max(ideal, 1 + wire_s / rtt) + extra if rtt else 0.0
    # CPU shares over the client process's whole run (warm-up included).
    client_cpu = statistics.median(r["client_cpu_s"] / r["wall"] for r in rs)
    server_cpu = statistics.median(r["server_cpu_s"] / r["wall"] for r in rs)
    machine = statistics.median(r["machine_cores_busy"] for r in rs)
    return dict(profile=profile, n=n, k=k, client=client, seconds=secs, rounds=rounds, rtt=rtt,
                ideal_rounds=ideal, budget_rounds=budget, x_ideal=rounds / ideal if rtt else 0.0,
                floor_rounds=floor_rounds, bytes_per_get=bpg, wire_s=wire_s,
                rps=med("rps"),
                p50=f"{med('lat_p50_ms'):.1f}" if "lat_p50_ms" in rs[0] else "–",
                p99=f"{med('lat_p99_ms'):.1f}" if "lat_p99_ms" in rs[0] else "–",
                client_cpu=client_cpu, server_cpu=server_cpu,
                other_cpu=max(0.0, machine - client_cpu - server_cpu),
                server_us=statistics.median(r["server_cpu_s"] / (r["n"] + (r["k"] if r.get("warm_seconds") else 0))
                                            for r in rs) * 1e6,
                errors=sum(r["errors"] for r in rs), slowdowns=sum(r.get("slowdowns", 0) for r in rs),
                ok=(rounds <= budget or not rtt) and all(r["errors"] == 0 for r in rs),
                ok_floor=(rounds <= CHECK_FACTOR * floor_rounds or not rtt) and all(r["errors"] == 0 for r in rs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", help="comma-separated link profiles (s3link: wan,region; others: "
                                      "wanproxy profiles, wan)")
    ap.add_argument("--n", help="comma-separated request counts (s3link: 10000; others: 1000)")
    ap.add_argument("--k", help="comma-separated in-flight counts (s3link: 64,256,512,1024; others: 256)")
    ap.add_argument("--reps", type=int, default=3, help="runs of each client per cell (alternating)")
    ap.add_argument("--range", type=int, default=4096, help="bytes per GET")
    ap.add_argument("--object-mib", type=int, default=4)
    ap.add_argument("--big-mib", type=int, default=128,
                    help="s3link: the large range of the bandwidth check (MiB; 0 skips it)")
    ap.add_argument("--tls", action="store_true", help="s3link: HTTPS (its generated certificate)")
    ap.add_argument("--tool", default=os.environ.get("STORE_PROBE_BIN") or next(
        (str(p) for p in (REPO / "build-dev" / "store_probe", REPO / "build" / "store_probe")
         if s3env.is_executable(str(p))), str(REPO / "build" / "store_probe")),
                    help="store_probe binary (default: STORE_PROBE_BIN, else build-dev/, else build/; "
                         "with s3link, skipped when it is not built)")
    ap.add_argument("--server", choices=("s3link", "moto", "versitygw", "range"), default="s3link",
                    help="s3link (default: tests/tools/s3link, the link emulated inside the server, "
                         "no proxy), moto (S3 semantics; a few hundred GETs/s here, which then bounds both "
                         "clients), versitygw (Go S3 gateway, posix backend, SigV4 checked; "
                         "not installed by scripts/setup: go install "
                         f"github.com/versity/versitygw/cmd/versitygw@{s3servers.VERSITYGW_VERSION}) "
                         "or range (scripts/lib/range_server.py: ranged GETs only, fast); "
                         "all but s3link behind wanproxy.py")
    ap.add_argument("--auth", action="store_true",
                    help="moto verifies SigV4 and IAM policy (slower server; default off: "
                         "requests are still signed, moto does not check them)")
    ap.add_argument("--submit", choices=("thread", "callback"), default="thread",
                    help="how sievefs's GETs are submitted: from a thread that waits for room "
                         "(default; every completion wakes it, like FUSE readers) or from the "
                         "done callback on the transfer thread (no hand-off between threads)")
    ap.add_argument("--json", help="also write every run as JSON here")
    a = ap.parse_args(argv)
    if a.server == "s3link":
        return run_s3link(a)
    a.profile, a.n, a.k = a.profile or "wan", a.n or "1000", a.k or "256"
    if not s3env.is_executable(a.tool):
        ap.error(f"{a.tool} is not built (ninja -C build-dev store_probe, or set STORE_PROBE_BIN)")
    profiles = a.profile.split(",")
    ns = [int(x) for x in a.n.split(",")]
    ks = [int(x) for x in a.k.split(",")]

    if a.server == "versitygw" and s3servers.check_available("versitygw"):
        print(s3servers.check_available("versitygw"), file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="probe-requests-"))
    runs = []
    rows = []
    size = a.object_mib * MiB
    with contextlib.ExitStack() as stack:
        server_text = a.server
        if a.server in ("moto", "versitygw"):
            moto = stack.enter_context(s3servers.make(a.server, work, auth=a.auth))
            server_text = moto.describe()
            s3 = moto.client()
            s3.create_bucket(Bucket=BUCKET)
            s3.put_object(Bucket=BUCKET, Key=KEY, Body=s3env.det_bytes("probe", size))
            etag = s3.head_object(Bucket=BUCKET, Key=KEY)["ETag"]
            upstream_port, creds = moto.port, moto.creds
        else:
            upstream_port, etag = stack.enter_context(range_server(size, work))
            creds = s3env.Credentials("probe", "probe")
        for profile in profiles:
            with open(work / f"wanproxy-{profile}.log", "ab") as log:
                proxy, port = start_proxy(upstream_port, profile, log)
                try:
                    endpoint = f"http://127.0.0.1:{port}"
                    for n in ns:
                        for k in ks:
                            rps = {"curl": [], "sievefs": []}
                            secs = {"curl": [], "sievefs": []}
                            cpu = {"curl": [], "sievefs": []}
                            for rep in range(a.reps):
                                order = ("curl", "sievefs") if rep % 2 == 0 else ("sievefs", "curl")
                                for client in order:
                                    r = run_probe(a.tool, client, endpoint, creds, etag, size,
                                                  n, k, a.range, seed=1000 + rep,
                                                  submit=a.submit)
                                    r["profile"] = profile
                                    r["server"] = a.server
                                    runs.append(r)
                                    rps[client].append(r["rps"])
                                    secs[client].append(r["seconds"])
                                    cpu[client].append(r["cpu_us_per_req"])
                                    print(f"  {profile} n={n} k={k} {client}: {r['rps']:.0f}/s",
                                          file=sys.stderr, flush=True)
                            ref = statistics.median(secs["curl"])
                            mine = statistics.median(secs["sievefs"])
                            rows.append((profile, n, k, statistics.median(rps["curl"]),
                                         statistics.median(rps["sievefs"]), mine / ref,
                                         statistics.median(cpu["curl"]),
                                         statistics.median(cpu["sievefs"])))
                finally:
                    proxy.terminate()
                    proxy.wait(10)
    print(f"Scheduler probe: {a.range}-byte ranged GETs of a {a.object_mib} MiB object on "
          f"{server_text}, sievefs submitting from the {a.submit}, "
          f"{a.reps} alternating runs per client, medians; ratio = sievefs time / reference time "
          f"(target <= 1.15). {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| profile | N | K | reference req/s | sievefs req/s | ratio | reference CPU µs/req "
          "| sievefs CPU µs/req |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for p, n, k, ref, mine, ratio, cref, cmine in rows:
        print(f"| {p} | {n} | {k} | {ref:.0f} | {mine:.0f} | {ratio:.2f} | {cref:.0f} | {cmine:.0f} |")
    if a.json:
        Path(a.json).write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
