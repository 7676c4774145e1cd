"""probe-requests: how many small ranged GETs per second sievefs's own S3
client carries, next to a reference client, on the same moto and emulated
link (not a test; prints markdown).

For each profile (wanproxy.py link: wan, region, lan) one server (--server:
moto, versitygw with SigV4 checked, or the range-only server; one object of
--object-mib MiB) and one wanproxy subprocess in front of it;
for each (N, K) the two clients of tests/tools/store_probe run alternately,
--reps times each, N GETs of --range bytes at random offsets (the same
offsets for both, seeded per repetition) with K in flight:

  curl     the reference: one curl multi handle on epoll
           (curl_multi_socket_action), K reused easy handles, keep-alive;
  sievefs  s3_client (fs/s3) with an in-flight limit of K, K
           store_get_async outstanding.

Both are C processes and the proxy is its own Python process, so no client
shares a GIL with the link. Reports the median requests/s of each and the
ratio sievefs time / reference time (target <= 1.15), and the CPU time each
client process spent per request (user + system; steadier than throughput on
a shared machine).

    scripts/probe-requests [--profile wan,lan] [--n 1000,10000] [--k 64,256,512]
                           [--reps 3] [--range 4096] [--json OUT]
                           [--server moto|versitygw|range] [--submit thread|callback]
Defaults are the quick set: --profile wan --n 1000 --k 256 --reps 3, on moto.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="wan", help="comma-separated wanproxy profiles")
    ap.add_argument("--n", default="1000", help="comma-separated request counts")
    ap.add_argument("--k", default="256", help="comma-separated in-flight counts")
    ap.add_argument("--reps", type=int, default=3, help="runs of each client per cell (alternating)")
    ap.add_argument("--range", type=int, default=4096, help="bytes per GET")
    ap.add_argument("--object-mib", type=int, default=4)
    ap.add_argument("--tool", default=os.environ.get("STORE_PROBE_BIN") or next(
        (str(p) for p in (REPO / "build-dev" / "store_probe", REPO / "build" / "store_probe")
         if s3env.is_executable(str(p))), str(REPO / "build-dev" / "store_probe")),
                    help="store_probe binary (default: STORE_PROBE_BIN, else build-dev/, else build/)")
    ap.add_argument("--server", choices=("moto", "versitygw", "range"), default="moto",
                    help="moto (S3 semantics; a few hundred GETs/s here, which then bounds both "
                         "clients), versitygw (Go S3 gateway, posix backend, SigV4 checked; "
                         "not installed by scripts/setup: go install "
                         f"github.com/versity/versitygw/cmd/versitygw@{s3servers.VERSITYGW_VERSION}) "
                         "or range (scripts/lib/range_server.py: ranged GETs only, fast)")
    ap.add_argument("--auth", action="store_true",
                    help="moto verifies SigV4 and IAM policy (slower server; default off: "
                         "requests are still signed, moto does not check them)")
    ap.add_argument("--submit", choices=("thread", "callback"), default="thread",
                    help="how sievefs's GETs are submitted: from a thread that waits for room "
                         "(default; every completion wakes it, like FUSE readers) or from the "
                         "done callback on the transfer thread (no hand-off between threads)")
    ap.add_argument("--json", help="also write every run as JSON here")
    a = ap.parse_args(argv)
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
