"""Self-tests of scripts/lib/wanproxy.py, the WAN emulator of the benchmark
harness: bytes pass unchanged both ways for every kind of link, many
concurrent connections, counters, stop(), the CLI, seeded delays.
Correctness only: how fast or slow the link is gets measured (and printed) by
the benchmark scripts through wanproxy.calibrate(), never asserted here.
No sievefs binary needed."""
from __future__ import annotations

import asyncio
import http.client
import signal
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import botocore.exceptions
import pytest

import s3env

sys.path.insert(0, str(s3env.REPO / "scripts" / "lib"))
import wanproxy  # noqa: E402
from wanproxy import WanProxy, make_link  # noqa: E402

pytestmark = pytest.mark.harness

# Small delays and a bandwidth limit, so that the queueing, pacing, jitter and
# in-order paths all run, but bulk tests stay fast.
TINY = make_link("lan", rtt_ms=4, jitter_ms=4, mbit=400, burst_kib=16)
LINKS = {"lan": make_link("lan"), "tiny": TINY}
MiB = 1 << 20


@pytest.fixture
def wan_proxy(moto):
    started = []

    def make(link, **kw):
        p = WanProxy("127.0.0.1", moto.port, link, **kw).start()
        started.append(p)
        return p
    yield make
    for p in started:
        p.stop()


def client_via(moto, proxy, pool=32):
    import boto3
    from botocore.config import Config
    c = moto.creds
    return boto3.client("s3", endpoint_url=proxy.endpoint, region_name=s3env.REGION,
                        aws_access_key_id=c.access_key_id, aws_secret_access_key=c.secret_access_key,
                        config=Config(s3={"addressing_style": "path"}, max_pool_connections=pool,
                                      retries={"max_attempts": 1}, signature_version="s3v4"))


class EchoServer:
    """asyncio echo server in a thread: echoes until EOF, then closes; counts
    the connections it has open."""

    def __init__(self):
        self.open = 0
        self.accepted = 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def handle(r, w):
            self.open += 1
            self.accepted += 1
            try:
                while data := await r.read(1 << 16):
                    w.write(data)
                    await w.drain()
                w.close()
            except ConnectionError:
                pass
            finally:
                self.open -= 1

        def run():
            asyncio.set_event_loop(self.loop)
            self.server = self.loop.run_until_complete(
                asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024))
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)

    def stop(self):
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def echo():
    e = EchoServer()
    yield e
    e.stop()


def recv_all(s: socket.socket) -> bytes:
    out = bytearray()
    while chunk := s.recv(1 << 16):
        out += chunk
    return bytes(out)


# -- link parameters and seeded delays ------------------------------------------------
def test_profiles_and_overrides():
    wan = make_link("wan")
    assert (wan.rtt_ms, wan.jitter_ms, wan.mbit) == (200, 20, 150)
    assert wan.rate == 150e6 / 8
    assert (make_link("region").rtt_ms, make_link("region").mbit) == (25, 1000)
    assert make_link("lan").transparent and make_link("lan").rate is None
    c = make_link("wan", rtt_ms=50, mbit=0)
    assert c.name == "custom" and c.rtt_ms == 50 and c.jitter_ms == 20 and c.rate is None
    with pytest.raises(ValueError):
        make_link("lan", rtt_ms=10, jitter_ms=30)


def test_delays_are_deterministic_for_a_seed():
    wan = make_link("wan")
    a = wanproxy.one_way_delays(wan, 7, 3, "down", 200)
    assert a == wanproxy.one_way_delays(wan, 7, 3, "down", 200)
    assert a != wanproxy.one_way_delays(wan, 8, 3, "down", 200)
    assert a != wanproxy.one_way_delays(wan, 7, 4, "down", 200)
    assert a != wanproxy.one_way_delays(wan, 7, 3, "up", 200)
    assert all(0.090 <= d <= 0.110 for d in a) and len(set(a)) > 100
    hs = wanproxy.handshake_delay(wan, 7, 3)
    assert hs == wanproxy.handshake_delay(wan, 7, 3) and 0.180 <= hs <= 0.220
    assert wanproxy.one_way_delays(make_link("region"), 1, 0, "up", 3) == [0.0125] * 3


def test_proxy_draws_the_documented_sequence(echo):
    """The delays a connection gets come from one_way_delays(): the proxy's
    per-connection generators start in the documented state."""
    link = make_link("lan", rtt_ms=2, jitter_ms=2)
    with WanProxy("127.0.0.1", echo.port, link, seed="s", http=False).start() as p:
        socks = [socket.create_connection(("127.0.0.1", p.port)) for _ in range(3)]
        s3env.wait_for(lambda: p.stats()["connections"] == 3, 10)
        conns = p._call(lambda: sorted(p._conns, key=lambda c: c.cid))
        for c in conns:
            for half, d in ((c.up, "up"), (c.down, "down")):
                assert p._call(lambda h=half: wanproxy._draw(h.rng, link)) == \
                    wanproxy.one_way_delays(link, "s", c.cid, d, 1)[0]
        for s in socks:
            s.close()


# -- bytes through the proxy --------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LINKS))
def test_s3_bytes_unchanged_both_ways(moto, s3, bucket, wan_proxy, name):
    b = bucket()
    p = wan_proxy(LINKS[name], seed=1)
    c = client_via(moto, p)
    body = s3env.det_bytes(f"wanproxy-{name}", 5 * MiB + 12345)
    c.put_object(Bucket=b, Key="up.bin", Body=body)
    assert s3.get_object(Bucket=b, Key="up.bin")["Body"].read() == body   # direct: the upload arrived intact
    got = c.get_object(Bucket=b, Key="up.bin")["Body"].read()
    assert got == body
    part = c.get_object(Bucket=b, Key="up.bin", Range="bytes=1000000-3099999")["Body"].read()
    assert part == body[1000000:3100000]
    assert c.head_object(Bucket=b, Key="up.bin")["ContentLength"] == len(body)
    st = p.stats()
    assert st["bytes_up"] >= len(body)
    assert st["bytes_down"] >= len(body) + len(part)
    assert st["connections"] >= 1 and st["upstream_failures"] == 0
    assert st["requests"] >= 4
    assert st["link"]["rtt_ms"] == LINKS[name].rtt_ms


def test_wan_small_request(moto, bucket, wan_proxy):
    b = bucket({"k": b"small object"})
    p = wan_proxy("wan", seed=2)
    c = client_via(moto, p)
    assert c.get_object(Bucket=b, Key="k")["Body"].read() == b"small object"
    st = p.stats()
    assert st["connections"] == 1 and st["requests"] == 1 and st["link"]["mbit"] == 150


@pytest.mark.parametrize("name", sorted(LINKS))
def test_many_concurrent_connections(echo, name):
    """300 connections open at once, each echoing its own 32 KiB; half-close
    (shutdown) travels through, bytes come back unchanged and in order."""
    n, size = 300, 32 * 1024
    with WanProxy("127.0.0.1", echo.port, LINKS[name], seed=3, http=False).start() as p:
        socks = [socket.create_connection(("127.0.0.1", p.port), timeout=60) for _ in range(n)]
        assert s3env.wait_for(lambda: p.stats()["active"] == n and echo.open == n, 20)

        def one(i):
            s = socks[i]
            payload = s3env.det_bytes(f"echo-{i}", size)
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            got = recv_all(s)
            s.close()
            return got == payload

        with ThreadPoolExecutor(32) as ex:
            assert all(ex.map(one, range(n)))
        st = p.stats()
        assert st["connections"] == n
        assert st["bytes_up"] == n * size and st["bytes_down"] == n * size
        assert s3env.wait_for(lambda: p.stats()["active"] == 0 and echo.open == 0, 20)


def test_many_requests_on_keepalive_connections(moto, bucket, wan_proxy):
    objs = {f"o{i}": s3env.det_bytes(f"ka-{i}", 100 + i) for i in range(50)}
    b = bucket(objs)
    p = wan_proxy(TINY, seed=4)
    c = client_via(moto, p, pool=32)
    keys = [f"o{i % 50}" for i in range(600)]
    with ThreadPoolExecutor(32) as ex:
        got = list(ex.map(lambda k: c.get_object(Bucket=b, Key=k)["Body"].read(), keys))
    assert got == [objs[k] for k in keys]
    # errors, HEAD (no body) and listings keep the connection too
    with pytest.raises(c.exceptions.NoSuchKey):
        c.get_object(Bucket=b, Key="missing")
    with pytest.raises(botocore.exceptions.ClientError):
        c.head_object(Bucket=b, Key="missing")
    assert c.head_object(Bucket=b, Key="o1")["ContentLength"] == 101
    assert len(c.list_objects_v2(Bucket=b)["Contents"]) == 50
    st = p.stats()
    assert st["requests"] == 604 and st["http_errors"] == 0
    # moto closes after every response; the client's connections stay open
    assert 1 <= st["connections"] <= 32 and st["upstream_connections"] == 604
    assert st["bytes_down"] >= sum(len(objs[k]) for k in keys)


def test_http_mode_many_connections_reused_upstream_and_stop():
    """200 keep-alive client connections, 3 requests each, against an
    upstream that keeps connections alive (the calibration byte server):
    upstream connections are reused; stop() then closes every client."""
    p = WanProxy("127.0.0.1", 1, TINY, seed=5).start()
    srv = asyncio.run_coroutine_threadsafe(wanproxy._start_byteserver(p._loop), p._loop).result(10)
    p.upstream_port = srv.sockets[0].getsockname()[1]
    n = 200
    conns = [http.client.HTTPConnection("127.0.0.1", p.port, timeout=60) for _ in range(n)]
    for c in conns:
        c.connect()
    assert s3env.wait_for(lambda: p.stats()["active"] == n, 20)

    def run(i):
        sizes = []
        for k in range(3):
            conns[i].request("GET", f"/{1000 * i + k}")
            r = conns[i].getresponse()
            sizes.append(len(r.read()))
        return sizes == [1000 * i + k for k in range(3)]

    with ThreadPoolExecutor(32) as ex:
        assert all(ex.map(run, range(n)))
    st = p.stats()
    assert st["requests"] == 3 * n and st["connections"] == n and st["upstream_connections"] == n
    assert st["bytes_down"] >= sum(3000 * i + 3 for i in range(n))
    thread = p._thread
    p.stop()
    assert not thread.is_alive()
    for c in conns:
        try:
            assert c.sock.recv(100) == b""
        except ConnectionResetError:
            pass
        c.close()


def test_tcp_mode_passes_upstream_closes_through(moto, bucket, wan_proxy):
    b = bucket({"k": b"v"})
    p = wan_proxy("lan", http=False)
    c = client_via(moto, p, pool=4)
    for _ in range(5):
        assert c.get_object(Bucket=b, Key="k")["Body"].read() == b"v"
    st = p.stats()
    assert st["connections"] == st["upstream_connections"] == 5 and st["requests_counted"] == "approx"


def test_client_connection_close_is_honoured(wan_proxy):
    p = wan_proxy(TINY)
    s = socket.create_connection(("127.0.0.1", p.port), timeout=10)
    s.sendall(b"GET /moto-api/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    resp = recv_all(s)          # returns: the proxy ends the connection after the response
    s.close()
    head = resp.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 200") and b"connection: close" in head
    assert s3env.wait_for(lambda: p.stats()["active"] == 0, 10)


def feed_all(parser, data: bytes, step: int):
    out, rest = [], b""
    for i in range(0, len(data), step):
        o, r = parser.feed(data[i:i + step])
        out.append(o)
        rest += r
        if parser.done:
            rest += data[i + step:]
            break
    return b"".join(out), rest


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_http_response_parser(step):
    chunked = (b"HTTP/1.1 100 Continue\r\n\r\n"
               b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               b"5;ext=1\r\nhello\r\n10\r\n" + b"x" * 16 + b"\r\n0\r\nTrailer: t\r\n\r\n")
    r = wanproxy._Response(b"GET", True)
    out, rest = feed_all(r, chunked + b"EXTRA", step)
    assert r.done and r.keepalive and r.upstream_closes and rest == b"EXTRA"
    assert out == chunked.replace(b"Connection: close\r\n", b"")

    sized = b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nconnection: Close\r\n\r\nabc"
    r = wanproxy._Response(b"GET", False)       # the client asked to close: nothing rewritten
    out, rest = feed_all(r, sized, step)
    assert r.done and not r.keepalive and out == sized and rest == b""

    r = wanproxy._Response(b"HEAD", True)       # HEAD: Content-Length but no body
    out, _ = feed_all(r, b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", step)
    assert r.done and r.keepalive and not r.upstream_closes

    r = wanproxy._Response(b"GET", True)        # delimited by close: cannot keep the client
    out, _ = feed_all(r, b"HTTP/1.1 200 OK\r\n\r\nbody...", step)
    assert not r.done and not r.keepalive and r.body.kind == "close"
    with pytest.raises(wanproxy.HttpError):
        wanproxy._Response(b"GET", True).feed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n")


def test_upstream_down_closes_the_client():
    p = WanProxy("127.0.0.1", s3env.closed_port(), "lan").start()
    try:
        s = socket.create_connection(("127.0.0.1", p.port), timeout=10)
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        try:
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass
        s.close()
        assert s3env.wait_for(lambda: p.stats()["upstream_failures"] == 1, 10)
    finally:
        p.stop()


# -- counters and lifecycle -----------------------------------------------------------
def test_reset_stats(echo):
    with WanProxy("127.0.0.1", echo.port, "lan", http=False).start() as p:
        s = socket.create_connection(("127.0.0.1", p.port))
        s.sendall(b"GET /x HTTP/1.1\r\n\r\n")
        s.shutdown(socket.SHUT_WR)
        assert recv_all(s) == b"GET /x HTTP/1.1\r\n\r\n"
        s.close()
        old = p.reset_stats()
        assert old["bytes_up"] == old["bytes_down"] == 19 and old["requests"] == 1
        st = p.stats()
        assert st["bytes_up"] == st["bytes_down"] == st["connections"] == st["requests"] == 0


def test_stop_closes_everything(echo):
    p = WanProxy("127.0.0.1", echo.port, TINY, http=False).start()
    port = p.port
    socks = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(20)]
    for s in socks[:10]:
        s.sendall(b"x" * 1000)       # some with bytes in flight
    assert s3env.wait_for(lambda: echo.open == 20, 10)
    thread = p._thread
    p.stop()
    assert not thread.is_alive()
    for s in socks:
        try:
            while s.recv(65536):     # the echo of earlier bytes may still arrive; then EOF
                pass
        except ConnectionResetError:
            pass
        s.close()
    assert s3env.wait_for(lambda: echo.open == 0, 10)   # upstream sockets closed too
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)
    p.stop()   # idempotent


def test_cli_port_and_stats_file(moto, bucket, tmp_path):
    b = bucket({"k": b"hello"})
    stats = tmp_path / "stats.json"
    proc = subprocess.Popen(
        [sys.executable, str(s3env.REPO / "scripts" / "lib" / "wanproxy.py"),
         "--upstream", f"127.0.0.1:{moto.port}", "--profile", "lan", "--rtt-ms", "2",
         "--listen", "127.0.0.1:0", "--stats-file", str(stats)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=s3env.die_with_parent)
    try:
        port = int(proc.stdout.readline())
        c = client_via(moto, type("P", (), {"endpoint": f"http://127.0.0.1:{port}"})())
        assert c.get_object(Bucket=b, Key="k")["Body"].read() == b"hello"
        proc.send_signal(signal.SIGUSR1)
        assert s3env.wait_for(stats.exists, 10)
        import json
        st = json.loads(stats.read_text())
        assert st["connections"] == 1 and st["bytes_down"] > 5 and st["link"]["rtt_ms"] == 2
        assert st["port"] == port and st["link"]["name"] == "custom"
        c.get_object(Bucket=b, Key="k")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        assert json.loads(stats.read_text())["requests"] == 2
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- calibration (its figures are for reports; here only that it runs and counts) ------
def test_calibrate_builtin_upstream():
    c = wanproxy.calibrate("lan", small_requests=3, large_bytes=3 * MiB + 1)
    assert c["large_bytes"] == 3 * MiB + 1 and c["bytes_down_counted"] >= 3 * MiB + 1
    assert c["small_requests"] == 3 and c["profile"] == "lan"
    assert c["upstream"] == "built-in byte server"
    assert "link lan" in wanproxy.format_calibration(c)


def test_calibrate_through_a_proxy_to_moto(moto, bucket, wan_proxy):
    body = s3env.det_bytes("calib", 2 * MiB)
    b = bucket({"big": body, "small": b""})
    p = wan_proxy(TINY)
    c = client_via(moto, p)
    r = wanproxy.calibrate(
        p, small_requests=3,
        small=lambda: len(c.get_object(Bucket=b, Key="small")["Body"].read()),
        large=lambda: len(c.get_object(Bucket=b, Key="big")["Body"].read()))
    assert r["large_bytes"] == len(body) and r["upstream"] == f"127.0.0.1:{moto.port}"
    assert r["profile"] == "custom" and r["bytes_down_counted"] >= len(body)
