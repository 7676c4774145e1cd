"""wanproxy: a userspace TCP proxy that emulates a WAN link between S3 clients
and a local S3 server (moto), for the benchmark harness. The kernel here has
no netem qdisc, so latency and bandwidth are emulated in Python (asyncio, one
event loop in one background thread, low-level protocols, no per-chunk
coroutine; ~1 Gbit/s and hundreds of connections on this machine).

    python scripts/lib/wanproxy.py --upstream 127.0.0.1:PORT --profile wan [--listen 127.0.0.1:0]
        [--rtt-ms MS --jitter-ms MS --mbit MBIT --burst-kib KIB --seed N --stats-file PATH --tcp]
    python scripts/lib/wanproxy.py --calibrate [--profile wan ...] [--json]

The first form prints the listening port (one line, the number alone) on
stdout and forwards until SIGTERM/SIGINT; SIGUSR1 writes the stats file
without stopping, SIGTERM/SIGINT write it and exit 0. The file is written
atomically (temp file + rename): the JSON of WanProxy.stats(). In Python:

    p = WanProxy("127.0.0.1", moto.port, "wan", seed=1).start()   # p.port, p.endpoint
    ...; p.stats(); p.reset_stats(); p.stop()

A benchmark whose own process does Python work while traffic flows (boto3,
pyarrow reading in Python threads) should run the proxy as a subprocess (the
CLI): in-process it shares the GIL, and a 64 MiB boto3 GET through the
region link then streams at ~790 instead of ~970 Mbit/s.

Profiles (a Link; --rtt-ms/--jitter-ms/--mbit/--burst-kib override fields):

    wan     RTT 200 ms +- 20 ms, 150 Mbit/s shared, burst 64 KiB
    region  RTT  25 ms,          1 Gbit/s   shared, burst 256 KiB
    lan     no added delay, no limit: pure forwarding

The link model, per direction (client->server "up", server->client "down"):

* Bandwidth: one pacer per direction shared by every connection, a virtual
  clock ("the link is busy until free_at"). A chunk read from the source at
  time t reserves n/rate seconds starting at max(free_at, t - burst/rate): an
  idle link lets `burst` bytes through at once, a busy one serialises chunks
  in the order they were read. After reserving, the connection stops reading
  its source until one burst before its chunk has left the link, so N busy
  connections take turns chunk by chunk (round-robin, FIFO in arrival
  order). The virtual clock does not drift with timer lateness (a wake-up
  up to two bursts late loses no link time). Chunks are what one recv() returns, at most 256 KiB.
* Latency: a chunk is delivered one-way delay after it has left the link.
  One-way delay = RTT/2 + U(-jitter/2, +jitter/2), drawn per chunk from
  random.Random("wanproxy:SEED:CONN:DIR"), CONN being the connection's
  number in accept order (0, 1, ...) and DIR "up"/"down": a seed gives the
  same sequence for the same connection and direction (one_way_delays()).
  Within a connection and direction a later chunk is never delivered before
  an earlier one (its time is clamped to the previous one's), so inside a
  long stream jitter only adds delay. Timers: epoll waits whole
  milliseconds, so deliveries land within about +-0.5 ms of their time.
* Handshake: a new client connection costs one RTT (two one-way draws from
  random.Random("wanproxy:SEED:CONN:hs")) before its first bytes may leave,
  like SYN/SYN-ACK: the first response on a fresh connection arrives about
  2 RTT after connect().
* EOF (half-close) travels like data (delayed, in order); a reset or close
  of one side with bytes still owed to it closes the other at once.
* Not emulated: packet loss, reordering, TCP slow start and congestion
  control (a new connection gets the whole bandwidth at once; there is no
  window other than a 16 MiB cap on bytes queued per connection and
  direction), TLS.

HTTP mode (default; `http=False` / --tcp for plain TCP forwarding). moto
(werkzeug) closes the connection after every response, which behind a WAN
would make every S3 request pay a fresh handshake RTT that real S3, with
keep-alive, does not charge. So the server end of the link speaks HTTP/1.1:
it parses each request head (Content-Length or chunked bodies) and response
(1xx interim heads, Content-Length, chunked, HEAD/204/304 without body),
sends requests one at a time over upstream connections (a new one whenever
the upstream closed the previous; the upstream hop is loopback and costs no
emulated time), and drops `Connection: close` from the response head when
the client did not ask to close and the body is delimited, so the client's
connection, and its single emulated handshake, lives on as with S3. Requests
and bodies are otherwise forwarded byte for byte (Host included, so SigV4
signatures stay valid). A client that pipelines has its next request held
until the previous response is complete. Anything unparseable closes that
connection and counts in http_errors.

Counters (WanProxy.stats()): bytes_up / bytes_down (bytes entering the link
from clients / from the server end, counted when read: HTTP mode counts the
response heads as rewritten), connections (client connections accepted),
active (open now), upstream_connections, upstream_failures (connect
refused), http_errors, requests: parsed request heads in HTTP mode
(requests_counted = "parsed"); in TCP mode an approximation
(requests_counted = "approx"): client chunks that begin with GET/HEAD/PUT/
POST/DELETE and a space — exact for clients that send each request head in
one write without pipelining. Plus the link, seed, port, upstream, mode,
uptime_s.

Calibration: calibrate(link) measures a temporary proxy with the same link
in front of a built-in HTTP byte server (the emulator alone, not moto): the
first request on a fresh connection (~2 RTT), the median of small GETs on a
keep-alive connection (~RTT) and the streaming rate of one large GET;
calibrate(proxy, small=fn, large=fn) times caller-supplied requests through a
running proxy (e.g. boto3 GETs of moto objects). format_calibration() makes
the one-line summary for a report. Measured on this 2-core VM (built-in
upstream): wan 195 ms median / 150 Mbit/s, region 24.7 ms / 1000 Mbit/s,
lan 0.1 ms / >10 Gbit/s.

Python stdlib only.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import random
import signal
import statistics
import sys
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, replace

KiB = 1024
MiB = 1024 * 1024

# ---------------------------------------------------------------------------
# link description
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    name: str
    rtt_ms: float = 0.0
    jitter_ms: float = 0.0      # RTT varies in [rtt - jitter, rtt + jitter]
    mbit: float | None = None   # shared, per direction; None = unlimited
    burst_bytes: int = 64 * KiB

    @property
    def rate(self) -> float | None:
        """Bytes per second, or None when unlimited."""
        return self.mbit * 1e6 / 8 if self.mbit else None

    @property
    def one_way_s(self) -> float:
        return self.rtt_ms / 2000.0

    @property
    def jitter_half_s(self) -> float:
        return self.jitter_ms / 2000.0

    @property
    def transparent(self) -> bool:
        return self.rtt_ms <= 0 and self.jitter_ms <= 0 and not self.mbit


PROFILES = {
    "wan": Link("wan", rtt_ms=200.0, jitter_ms=20.0, mbit=150.0, burst_bytes=64 * KiB),
    "region": Link("region", rtt_ms=25.0, jitter_ms=0.0, mbit=1000.0, burst_bytes=256 * KiB),
    "lan": Link("lan"),
}


def make_link(profile: str | Link = "lan", rtt_ms=None, jitter_ms=None, mbit=None,
              burst_kib=None) -> Link:
    """A profile (name or Link) with optional field overrides. mbit=0 means
    unlimited. A Link with any override is named 'custom'."""
    base = profile if isinstance(profile, Link) else PROFILES[profile]
    kw = {}
    if rtt_ms is not None:
        kw["rtt_ms"] = float(rtt_ms)
    if jitter_ms is not None:
        kw["jitter_ms"] = float(jitter_ms)
    if mbit is not None:
        kw["mbit"] = float(mbit) or None
    if burst_kib is not None:
        kw["burst_bytes"] = int(burst_kib * KiB)
    if kw:
        kw["name"] = "custom"
    link = replace(base, **kw)
    if link.rtt_ms < 0 or link.jitter_ms < 0 or link.jitter_ms > link.rtt_ms:
        raise ValueError(f"need 0 <= jitter <= rtt: {link}")
    if link.burst_bytes < 1:
        raise ValueError("burst must be positive")
    return link


def _rng(seed, conn: int, direction: str) -> random.Random:
    return random.Random(f"wanproxy:{seed}:{conn}:{direction}")


def one_way_delays(link: Link, seed, conn: int, direction: str, n: int) -> list:
    """The first n one-way delays (seconds, before the in-order clamp) that
    connection number `conn` gets in `direction` ('up'/'down'); the proxy
    draws exactly these."""
    r = _rng(seed, conn, direction)
    return [_draw(r, link) for _ in range(n)]


def handshake_delay(link: Link, seed, conn: int) -> float:
    r = _rng(seed, conn, "hs")
    return _draw(r, link) + _draw(r, link)


def _draw(r: random.Random, link: Link) -> float:
    j = link.jitter_half_s
    return link.one_way_s + (r.uniform(-j, j) if j > 0 else 0.0)


# ---------------------------------------------------------------------------
# the proxy
# ---------------------------------------------------------------------------
METHODS = (b"GET ", b"HEAD ", b"PUT ", b"POST ", b"DELETE ")
_EOF = object()
PAUSE_SLACK_S = 0.0005     # do not bother pausing a source for less than this
# epoll waits whole milliseconds (rounded up), so a delivery timer is set half
# a millisecond early and delivers every chunk due within half a millisecond:
# delivery times are then within about +-0.5 ms of the drawn ones, unbiased.
DELIVER_SLACK_S = 0.0005
QUEUE_LIMIT = 16 * MiB     # bytes queued per connection and direction before the source is paused


class _Pacer:
    """Shared virtual-clock bandwidth of one direction."""

    def __init__(self, rate: float, burst: int):
        self.rate = rate
        self.burst_s = burst / rate
        self.free_at = 0.0

    def reserve(self, n: int, t: float) -> float:
        start = max(self.free_at, t - self.burst_s)
        self.free_at = start + n / self.rate
        return self.free_at


class _Half:
    """One direction of one connection: src transport -> delay queue -> dst."""

    def __init__(self, conn: "_Conn", direction: str, pacer, not_before: float):
        self.conn = conn
        self.loop = conn.proxy._loop
        self.up = direction == "up"
        self.link = conn.proxy.link
        self.pacer = pacer
        self.rng = _rng(conn.proxy.seed, conn.cid, direction)
        self.not_before = not_before
        self.last = 0.0
        self.queue = deque()
        self.pending = 0
        self.timer = None
        self.src = None
        self.dst = None
        self.pause_reasons = set()
        self.src_paused = False
        self.dst_blocked = False
        self.eof_seen = False
        self.eof_done = False
        self.dead = False         # its destination is gone: drop whatever comes

    # -- source side -------------------------------------------------------
    def attach_src(self, t):
        self.src = t
        self._apply_pause()

    def attach_dst(self, t):
        self.dst = t
        self._schedule()

    def _pause(self, why):
        self.pause_reasons.add(why)
        self._apply_pause()

    def _resume(self, why):
        self.pause_reasons.discard(why)
        self._apply_pause()

    def _apply_pause(self):
        want = bool(self.pause_reasons)
        if self.src is None or want == self.src_paused or self.src.is_closing():
            return
        self.src_paused = want
        if want:
            self.src.pause_reading()
        else:
            self.src.resume_reading()

    def on_data(self, data: bytes):
        st = self.conn.proxy._st
        n = len(data)
        if self.up:
            st["bytes_up"] += n
            if not self.conn.proxy.http and data.startswith(METHODS):
                st["requests"] += 1
        else:
            st["bytes_down"] += n
        if self.conn.closed or self.dead:
            return
        link = self.link
        now = self.loop.time()
        t = max(now, self.not_before)
        if self.pacer is not None:
            end = self.pacer.reserve(n, t)
            if end > t:
                t = end
            # read again one burst before the chunk has left the link: a
            # wake-up up to two bursts late still loses no link time
            wake = end - self.pacer.burst_s
            if wake - now > PAUSE_SLACK_S:
                self._pause("pace")
                self.loop.call_at(wake, self._resume, "pace")
        d = t + _draw(self.rng, link) if not link.transparent else t
        if d < self.last:
            d = self.last
        self.last = d
        if not self.queue and d <= now and self.dst is not None and not self.dst_blocked:
            self.dst.write(data)   # nothing to wait for (lan)
            return
        self.queue.append((d, data))
        self.pending += n
        if self.pending > QUEUE_LIMIT:
            self._pause("queue")
        self._schedule()

    def on_eof(self):
        if self.eof_seen or self.dead or self.conn.closed:
            return
        self.eof_seen = True
        now = self.loop.time()
        d = max(now, self.not_before)
        if not self.link.transparent:
            d += _draw(self.rng, self.link)
        d = max(d, self.last)
        self.last = d
        self.queue.append((d, _EOF))
        self._schedule()

    # -- destination side --------------------------------------------------
    def set_dst_blocked(self, blocked: bool):
        self.dst_blocked = blocked
        if blocked:
            self._pause("dst")
        else:
            self._resume("dst")
            self._schedule()

    def _schedule(self):
        if self.timer is not None or not self.queue or self.dst is None or self.dst_blocked:
            return
        if self.conn.closed:
            return
        when = self.queue[0][0] - DELIVER_SLACK_S
        if when <= self.loop.time():
            self.timer = self.loop.call_soon(self._deliver)
        else:
            self.timer = self.loop.call_at(when, self._deliver)

    def _deliver(self):
        self.timer = None
        if self.conn.closed or self.dst is None:
            return
        limit = self.loop.time() + DELIVER_SLACK_S
        q = self.queue
        while q and q[0][0] <= limit and not self.dst_blocked:
            _, data = q.popleft()
            if data is _EOF:
                self.eof_done = True
                if self.dst.can_write_eof():
                    try:
                        self.dst.write_eof()
                    except OSError:
                        pass       # the peer is already gone: nothing left to tell it
                self.conn.half_done()
                return
            self.pending -= len(data)
            self.dst.write(data)   # may call pause_writing -> dst_blocked
        if self.pending <= QUEUE_LIMIT // 2:
            self._resume("queue")
        self._schedule()

    def cancel(self):
        self.dead = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.queue.clear()
        self.pending = 0


class _Side(asyncio.Protocol):
    """Protocol of one socket (the client's or the upstream one)."""

    def __init__(self, conn: "_Conn", client: bool):
        self.conn = conn
        self.client = client

    def _halves(self):
        # (half reading from this socket, half writing to it)
        c = self.conn
        return (c.up, c.down) if self.client else (c.down, c.up)

    def data_received(self, data):
        self._halves()[0].on_data(data)

    def eof_received(self):
        self._halves()[0].on_eof()
        return True   # keep the write side open (half-close)

    def pause_writing(self):
        self._halves()[1].set_dst_blocked(True)

    def resume_writing(self):
        self._halves()[1].set_dst_blocked(False)

    def connection_lost(self, exc):
        self.conn.lost(self.client, exc)


class _ClientSide(_Side):
    def __init__(self, proxy: "WanProxy"):
        self.proxy = proxy
        self.conn = None
        self.client = True

    def connection_made(self, transport):
        self.conn = _Conn(self.proxy, transport)


class _Conn:
    def __init__(self, proxy: "WanProxy", client_t):
        self.proxy = proxy
        self.cid = proxy._next_cid
        proxy._next_cid += 1
        proxy._st["connections"] += 1
        proxy._conns.add(self)
        self.client_t = client_t
        self.server_t = None
        self.closed = False
        loop = proxy._loop
        now = loop.time()
        hs = 0.0 if proxy.link.transparent else handshake_delay(proxy.link, proxy.seed, self.cid)
        self.up = _Half(self, "up", proxy._pacers[0], now + hs)
        self.down = _Half(self, "down", proxy._pacers[1], now)
        self.up.attach_src(client_t)
        self.down.attach_dst(client_t)
        if proxy.http:
            self.server_t = _HttpServerEnd(self)
            self.down.attach_src(self.server_t)
            self.up.attach_dst(self.server_t)
        else:
            self.task = loop.create_task(self._connect())

    async def _connect(self):
        t = await self.proxy._dial(lambda: _Side(self, False))
        if t is None:
            self.close(abort=True)
            return
        if self.closed:
            t.abort()
            return
        self.server_t = t
        self.down.attach_src(t)
        self.up.attach_dst(t)

    def half_done(self):
        if self.up.eof_done and self.down.eof_done:
            self.close()

    def lost(self, client: bool, exc):
        if self.closed:
            return
        src_half, dst_half = (self.up, self.down) if client else (self.down, self.up)
        if exc is not None or dst_half.queue:
            # reset, or a side that went away with bytes still owed to it
            self.close(abort=True)
            return
        # orderly close: what it sent still travels; nothing more can reach it
        dst_half.eof_done = True
        dst_half.cancel()
        src_half.on_eof()
        self.half_done()

    def close(self, abort: bool = False):
        if self.closed:
            return
        self.closed = True
        self.up.cancel()
        self.down.cancel()
        for t in (self.client_t, self.server_t):
            if t is not None and not t.is_closing():
                t.abort() if abort else t.close()
        self.proxy._conns.discard(self)


# ---------------------------------------------------------------------------
# HTTP mode: the server end of the link keeps client connections alive
# ---------------------------------------------------------------------------
MAX_HEAD = 64 * KiB


class HttpError(Exception):
    pass


def _parse_head(head: bytes) -> tuple:
    """(start line parts, [(name_lower, value)]) of an HTTP head without its
    final CRLFCRLF."""
    lines = head.split(b"\r\n")
    start = lines[0].split(b" ", 2)
    if len(start) < 2:
        raise HttpError(f"bad start line {lines[0][:80]!r}")
    headers = []
    for ln in lines[1:]:
        name, sep, value = ln.partition(b":")
        if not sep:
            raise HttpError(f"bad header line {ln[:80]!r}")
        headers.append((name.strip().lower(), value.strip()))
    return start, headers


def _tokens(headers, name: bytes) -> set:
    out = set()
    for n, v in headers:
        if n == name:
            out |= {t.strip().lower() for t in v.split(b",")}
    return out


def _body_of(headers, none: bool = False) -> "_Body":
    if none:
        return _Body("none")
    if b"chunked" in _tokens(headers, b"transfer-encoding"):
        return _Body("chunked")
    for n, v in headers:
        if n == b"content-length":
            try:
                return _Body("length", int(v))
            except ValueError:
                raise HttpError(f"bad Content-Length {v[:40]!r}") from None
    return None


class _Body:
    """Where an HTTP message body ends in a byte stream. kind: none, length,
    chunked, close (until the connection closes)."""

    def __init__(self, kind: str, n: int = 0):
        self.kind = kind
        self.left = n                  # length: bytes left; chunked: bytes left of chunk data + CRLF
        self.state = "size"            # chunked: size | data | trailer
        self.line = bytearray()
        self.done = kind == "none" or (kind == "length" and n == 0)

    def feed(self, buf, pos: int) -> int:
        """Consume body bytes of buf from pos; returns the new position
        (where the body ended, or len(buf))."""
        end = len(buf)
        if self.done:
            return pos
        if self.kind == "close":
            return end
        if self.kind == "length":
            k = min(self.left, end - pos)
            self.left -= k
            self.done = self.left == 0
            return pos + k
        while pos < end and not self.done:
            if self.state == "data":
                k = min(self.left, end - pos)
                self.left -= k
                pos += k
                if self.left == 0:
                    self.state = "size"
                continue
            i = buf.find(b"\n", pos)
            if i < 0:
                self.line += buf[pos:end]
                if len(self.line) > MAX_HEAD:
                    raise HttpError("chunk line too long")
                return end
            self.line += buf[pos:i]
            pos = i + 1
            line = bytes(self.line).rstrip(b"\r")
            self.line.clear()
            if self.state == "size":
                try:
                    size = int(line.split(b";", 1)[0].strip() or b"x", 16)
                except ValueError:
                    raise HttpError(f"bad chunk size {line[:40]!r}") from None
                if size == 0:
                    self.state = "trailer"
                else:
                    self.state, self.left = "data", size + 2
            elif not line:             # trailer: an empty line ends the body
                self.done = True
        return pos


class _Response:
    """Parses one response from the upstream (1xx interim heads included);
    rewrites the final head so the client keeps its connection when the
    upstream closes after every response (werkzeug, hence moto, does)."""

    def __init__(self, method: bytes, client_keepalive: bool):
        self.method = method
        self.client_keepalive = client_keepalive
        self.head = bytearray()
        self.body = None
        self.keepalive = False         # the client connection survives this response
        self.upstream_closes = True

    @property
    def done(self) -> bool:
        return self.body is not None and self.body.done

    def feed(self, data: bytes) -> tuple:
        """-> (bytes for the client, leftover bytes after the response)."""
        out = []
        pos = 0
        while self.body is None:
            self.head += data[pos:]
            i = self.head.find(b"\r\n\r\n")
            if i < 0:
                if len(self.head) > MAX_HEAD:
                    raise HttpError("response head too long")
                return b"".join(out), b""
            rest = bytes(self.head[i + 4:])
            head = bytes(self.head[:i])
            self.head.clear()
            data, pos = rest, 0
            start, headers = _parse_head(head)
            try:
                code = int(start[1])
            except ValueError:
                raise HttpError(f"bad status line {head[:80]!r}") from None
            if 100 <= code < 200 and code != 101:
                out.append(head + b"\r\n\r\n")    # interim (100 Continue): the final head follows
                continue
            body = _body_of(headers, none=self.method == b"HEAD" or code in (204, 304)
                            or code == 101) or _Body("close")
            conn = _tokens(headers, b"connection")
            http11 = start[0] == b"HTTP/1.1"
            self.upstream_closes = b"close" in conn or not http11
            self.keepalive = (self.client_keepalive and http11 and body.kind != "close"
                              and code != 101)
            if self.keepalive and b"close" in conn:
                lines = [ln for ln in head.split(b"\r\n")
                         if not (ln.split(b":", 1)[0].strip().lower() == b"connection"
                                 and b"close" in ln.lower())]
                head = b"\r\n".join(lines)
            out.append(head + b"\r\n\r\n")
            self.body = body
        end = self.body.feed(data, pos)
        out.append(data[pos:end])
        return b"".join(out), data[end:]


class _UpstreamSide(asyncio.Protocol):
    def __init__(self, end: "_HttpServerEnd", gen: int):
        self.end = end
        self.gen = gen

    def data_received(self, data):
        self.end.up_data(self.gen, data)

    def eof_received(self):
        self.end.up_gone(self.gen, None)
        return False

    def pause_writing(self):
        self.end.up_blocked(self.gen, True)

    def resume_writing(self):
        self.end.up_blocked(self.gen, False)

    def connection_lost(self, exc):
        self.end.up_gone(self.gen, exc)


class _HttpServerEnd:
    """HTTP mode: the server end of the emulated link (no delay here; it sits
    next to the upstream). To the link's halves it looks like the upstream
    socket (write/write_eof for the up half, pause/resume_reading for the down
    half); behind it, requests go one at a time over upstream connections,
    a new one whenever the upstream closed the last (moto closes after every
    response). The client's own connection, and its emulated handshake, lives
    on as with a keep-alive S3 endpoint: response heads lose their
    `Connection: close` when the client did not ask for it and the body is
    delimited. Client bytes of a next request wait here until the previous
    response is complete (no pipelining to the upstream)."""

    def __init__(self, conn: "_Conn"):
        self.conn = conn
        self.proxy = conn.proxy
        self.inbuf = bytearray()       # client bytes not yet sent upstream
        self.state = "head"            # head | body | wait (for the response to end)
        self.req_body = None
        self.resp = None
        self.t = None                  # current upstream transport
        self.gen = 0
        self.connecting = False
        self.outq = []                 # bytes for an upstream still connecting
        self.outq_bytes = 0
        self.reading_paused = False    # asked by the down half
        self.upstream_blocked = False
        self.client_eof = False
        self.finished = False          # no more responses: the down half has its EOF
        self._closing = False
        self.blocked = False

    # -- looks like a transport to the halves --------------------------------
    def is_closing(self):
        return self._closing

    def can_write_eof(self):
        return True

    def pause_reading(self):
        self.reading_paused = True
        if self.t is not None and not self.t.is_closing():
            self.t.pause_reading()

    def resume_reading(self):
        self.reading_paused = False
        if self.t is not None and not self.t.is_closing():
            self.t.resume_reading()

    def close(self):
        self._closing = True
        self._drop_upstream(abort=False)

    def abort(self):
        self._closing = True
        self._drop_upstream(abort=True)

    def write(self, data):
        if self._closing or self.finished:
            return
        self.inbuf += data
        self._pump()

    def write_eof(self):
        self.client_eof = True
        if self.state == "body" or (self.state == "wait" and self.resp is not None):
            if self.t is not None and self.state == "body" and self.t.can_write_eof():
                self.t.write_eof()
            return                     # the response in progress ends the exchange
        self._finish()

    # -- requests -------------------------------------------------------------
    def _fail(self, why):
        self.proxy._st["http_errors"] += 1
        self.conn.close(abort=True)

    def _pump(self):
        try:
            while True:
                if self.state == "head":
                    i = self.inbuf.find(b"\r\n\r\n")
                    if i < 0:
                        if len(self.inbuf) > MAX_HEAD:
                            raise HttpError("request head too long")
                        break
                    head = bytes(self.inbuf[:i + 4])
                    del self.inbuf[:i + 4]
                    start, headers = _parse_head(head[:-4])
                    self.proxy._st["requests"] += 1
                    conn = _tokens(headers, b"connection")
                    keep = start[-1].strip() == b"HTTP/1.1" and b"close" not in conn
                    self.resp = _Response(start[0], keep)
                    self.req_body = _body_of(headers) or _Body("none")
                    self._send(head)
                    self.state = "wait" if self.req_body.done else "body"
                elif self.state == "body":
                    end = self.req_body.feed(self.inbuf, 0)
                    if end:
                        self._send(bytes(self.inbuf[:end]))
                        del self.inbuf[:end]
                    if not self.req_body.done:
                        break
                    self.state = "wait"
                else:
                    break
        except HttpError as e:
            self._fail(e)
            return
        self._update_block()

    def _update_block(self):
        want = bool((self.state == "wait" and self.inbuf) or self.upstream_blocked
                    or self.outq_bytes > MiB)
        if want != self.blocked:
            self.blocked = want
            self.conn.up.set_dst_blocked(want)

    def _send(self, b: bytes):
        if self.t is not None and not self.t.is_closing():
            self.t.write(b)
            return
        self.outq.append(b)
        self.outq_bytes += len(b)
        if not self.connecting:
            self.connecting = True
            self.gen += 1
            self.proxy._loop.create_task(self._connect(self.gen))

    async def _connect(self, gen):
        t = await self.proxy._dial(lambda: _UpstreamSide(self, gen))
        if t is None:
            self.conn.close(abort=True)
            return
        if self._closing or gen != self.gen:
            t.abort()
            return
        self.connecting = False
        self.t = t
        if self.reading_paused:
            t.pause_reading()
        for b in self.outq:
            t.write(b)
        self.outq.clear()
        self.outq_bytes = 0
        self._update_block()

    # -- responses ------------------------------------------------------------
    def up_data(self, gen, data):
        if gen != self.gen or self.finished or self._closing:
            return
        if self.resp is None:
            return                     # nothing asked: stray bytes of an idle upstream
        try:
            out, _stray = self.resp.feed(data)
        except HttpError as e:
            self._fail(e)
            return
        if out:
            self.conn.down.on_data(out)
        if self.resp.done:
            self._response_done()

    def _response_done(self):
        r = self.resp
        self.resp = None
        if self.state == "body":
            # answered before the request body was all sent (an error, or no
            # 100 Continue): where the next request starts is unknowable
            r.keepalive = False
        if r.upstream_closes or not r.keepalive:
            self._drop_upstream(abort=False)
        if not r.keepalive or self.client_eof:
            self._finish()
            return
        if self.state == "wait":
            self.state = "head"
        self._pump()

    def up_gone(self, gen, exc):
        if gen != self.gen or self._closing:
            return
        self.t = None
        self.connecting = False
        self.upstream_blocked = False
        if self.finished:
            return
        if self.resp is not None and self.state != "head":
            # the upstream went away before (or while) answering
            if exc is not None:
                self.conn.close(abort=True)
                return
            if self.resp.body is not None and self.resp.body.kind == "close":
                self.resp.body.done = True
            self._finish()
        self._update_block()

    def up_blocked(self, gen, blocked):
        if gen == self.gen:
            self.upstream_blocked = blocked
            self._update_block()

    def _finish(self):
        """No more exchanges on this client connection: EOF to the client
        after what is in flight; the link winds the connection down."""
        if self.finished:
            return
        self.finished = True
        self.inbuf.clear()
        self._drop_upstream(abort=False)
        self.conn.down.on_eof()
        if self.blocked:
            self.blocked = False
            self.conn.up.set_dst_blocked(False)

    def _drop_upstream(self, abort):
        self.gen += 1
        t, self.t = self.t, None
        self.connecting = False
        self.outq.clear()
        self.outq_bytes = 0
        self.upstream_blocked = False
        if t is not None and not t.is_closing():
            t.abort() if abort else t.close()


class WanProxy:
    """The proxy, running its own event loop in a background thread.

        p = WanProxy("127.0.0.1", moto.port, "wan", seed=1).start()
        endpoint = f"http://127.0.0.1:{p.port}"
        ...; print(p.stats()); p.stop()
    """

    def __init__(self, upstream_host: str, upstream_port: int, profile: str | Link = "lan",
                 listen_port: int = 0, seed=0, listen_host: str = "127.0.0.1", http: bool = True):
        self.http = http
        self.upstream_host = upstream_host
        self.upstream_port = int(upstream_port)
        self.link = profile if isinstance(profile, Link) else make_link(profile)
        self.listen_host = listen_host
        self.listen_port = listen_port
        self.seed = seed
        self.port = None
        self._loop = None
        self._thread = None
        self._server = None
        self._conns = set()
        self._next_cid = 0
        self._started_at = None
        self._st = self._zero()
        rate = self.link.rate
        self._pacers = ((_Pacer(rate, self.link.burst_bytes), _Pacer(rate, self.link.burst_bytes))
                        if rate else (None, None))

    @staticmethod
    def _zero() -> dict:
        return {"bytes_up": 0, "bytes_down": 0, "connections": 0, "upstream_connections": 0,
                "upstream_failures": 0, "requests": 0, "http_errors": 0}

    @property
    def endpoint(self) -> str:
        return f"http://{self.listen_host}:{self.port}"

    # -- lifecycle ---------------------------------------------------------
    def start(self, timeout: float = 10.0) -> "WanProxy":
        ready = threading.Event()
        err = []

        def run():
            loop = _new_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(loop.create_server(
                    lambda: _ClientSide(self), self.listen_host, self.listen_port,
                    backlog=4096, reuse_address=True))
                self.port = self._server.sockets[0].getsockname()[1]
                self._started_at = time.monotonic()
            except BaseException as e:  # noqa: BLE001 - handed to start()
                err.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name=f"wanproxy-{self.link.name}", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise RuntimeError("wanproxy did not start")
        if err:
            raise err[0]
        return self

    def _call(self, fn, timeout: float = 10.0):
        """Run fn() in the proxy's loop and return its result."""
        if self._loop is None or self._loop.is_closed() or not self._thread.is_alive():
            return fn()
        fut = asyncio.run_coroutine_threadsafe(_as_coro(fn), self._loop)
        return fut.result(timeout)

    def stop(self) -> None:
        """Close the listener and every connection (both sockets), stop the
        loop and join its thread. Idempotent."""
        if self._thread is None:
            return
        if self._thread.is_alive():
            async def shutdown():
                self._server.close()
                for c in list(self._conns):
                    c.close(abort=True)
                await asyncio.sleep(0)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._server.wait_closed(), 5)
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    async def _dial(self, protocol_factory):
        """A new upstream connection (counted), or None when it fails (counted)."""
        try:
            t, _ = await self._loop.create_connection(protocol_factory, self.upstream_host, self.upstream_port)
        except OSError:
            self._st["upstream_failures"] += 1
            return None
        self._st["upstream_connections"] += 1
        return t

    # -- counters ----------------------------------------------------------
    def stats(self) -> dict:
        """Counters since start (or the last reset_stats()), plus the link."""
        def snap():
            d = dict(self._st)
            d["active"] = len(self._conns)
            return d
        d = self._call(snap)
        d["uptime_s"] = round(time.monotonic() - self._started_at, 3) if self._started_at else 0.0
        d["link"] = asdict(self.link)
        d["mode"] = "http" if self.http else "tcp"
        d["requests_counted"] = "parsed" if self.http else "approx"
        d["seed"] = self.seed
        d["port"] = self.port
        d["upstream"] = f"{self.upstream_host}:{self.upstream_port}"
        return d

    def reset_stats(self) -> dict:
        """Zero the counters; returns the values they had."""
        def swap():
            old, self._st = self._st, self._zero()
            return dict(old)
        return self._call(swap)


class _EpollExactMs:
    """Wraps select.epoll so that a timeout selectors has already rounded up
    to whole milliseconds (k * 1e-3) is not rounded up once more by epoll's
    own float-to-ms conversion (k * 1e-3 is often slightly above k ms, which
    made e.g. every 12.5 ms timer fire 1.6 ms late)."""

    def __init__(self, ep):
        self._ep = ep

    def poll(self, timeout=-1, maxevents=-1):
        if timeout is not None and timeout > 0:
            timeout = round(timeout * 1e3) * 1e-3 - 1e-6
        return self._ep.poll(timeout, maxevents)

    def __getattr__(self, name):
        return getattr(self._ep, name)


def _new_loop() -> asyncio.AbstractEventLoop:
    import selectors
    if hasattr(selectors, "EpollSelector"):
        sel = selectors.EpollSelector()
        if hasattr(sel, "_selector"):
            sel._selector = _EpollExactMs(sel._selector)
        return asyncio.SelectorEventLoop(sel)
    return asyncio.new_event_loop()


async def _as_coro(fn):
    return fn()


# ---------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------
class _ByteServer(asyncio.Protocol):
    """Minimal HTTP/1.1 keep-alive server: GET /N answers N bytes (zeros),
    anything else 0 bytes. Runs in a WanProxy's loop (calibration only)."""

    BUF = memoryview(bytes(4 * MiB))

    def connection_made(self, t):
        self.t = t
        self.buf = b""
        self.todo = 0
        self.paused = False

    def data_received(self, data):
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, _, self.buf = self.buf.partition(b"\r\n\r\n")
            parts = head.split(b" ", 2)
            try:
                n = int(parts[1].lstrip(b"/")) if len(parts) > 1 else 0
            except ValueError:
                n = 0
            self.t.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % n)
            self.todo += n
        self._pump()

    def _pump(self):
        while self.todo and not self.paused:
            k = min(self.todo, len(self.BUF))
            self.todo -= k
            self.t.write(self.BUF[:k])

    def pause_writing(self):
        self.paused = True

    def resume_writing(self):
        self.paused = False
        self._pump()


def _get(conn: http.client.HTTPConnection, path: str, bufsize: int = MiB) -> tuple:
    """GET path on a keep-alive connection. Returns (seconds to the last
    byte, seconds to the end of the first body read, bytes of that first
    read, body bytes)."""
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    first = r.read1(bufsize)          # whatever has arrived, not a full buffer
    t_first = time.perf_counter() - t0
    got = len(first)
    buf = memoryview(bytearray(bufsize))
    while True:
        k = r.readinto(buf)
        if not k:
            break
        got += k
    if r.status >= 400:
        raise RuntimeError(f"GET {path[:80]}: HTTP {r.status}")
    return time.perf_counter() - t0, t_first, len(first), got


def calibrate(target: "str | Link | WanProxy" = "wan", small_requests: int = 20,
              large_bytes: int | None = None, small=None, large=None, seed=0) -> dict:
    """Measure what a link really does. Returns a dict of nominal and
    measured values (milliseconds, Mbit/s).

    target a profile name or Link, or a WanProxy without small/large: a
    temporary WanProxy with that link (and mode) in front of a built-in HTTP
    byte server; one keep-alive connection (http.client):
      first_request_ms   a 0-byte GET on a fresh connection, handshake
                         included (expected ~ 2 RTT);
      rtt_ms_median/min/max  `small_requests` more 0-byte GETs (~ RTT);
      mbit_measured      one GET of large_bytes (default ~3 s worth of the
                         link, 16-256 MiB): body bytes after the first read
                         / time from the end of the first read to the last
                         byte (the streaming rate, latency excluded);
      mbit_end_to_end    body bytes / whole request time.

    target a WanProxy with small and large given: through that proxy to its
    own upstream (e.g. moto), timing the callables, which must make one
    request each through the proxy and return the number of body bytes read
    (e.g. lambda: len(s3.get_object(...)["Body"].read()) with a client whose
    endpoint is proxy.endpoint). first_request_ms is the first small() call;
    mbit_measured is then large bytes / (large time - median small time), an
    estimate that includes client overhead."""
    own = None
    if isinstance(target, WanProxy) and small is not None and large is not None:
        proxy = target
    else:
        link = target.link if isinstance(target, WanProxy) else make_link(target)
        mode = target.http if isinstance(target, WanProxy) else True
        own = proxy = WanProxy("127.0.0.1", 1, link, seed=seed, http=mode).start()
        srv = asyncio.run_coroutine_threadsafe(
            _start_byteserver(proxy._loop), proxy._loop).result(10)
        proxy.upstream_port = srv.sockets[0].getsockname()[1]
        if large_bytes is None:
            rate = link.rate
            large_bytes = int(min(256 * MiB, max(16 * MiB, rate * 3))) if rate else 256 * MiB
    link = proxy.link
    try:
        before = proxy.stats()
        if own is not None:
            conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=120)
            t_first = _get(conn, "/0")[0]
            smalls = [_get(conn, "/0")[0] for _ in range(small_requests)]
            total, first_byte, first_bytes, got = _get(conn, f"/{large_bytes}")
            conn.close()
            stream_bytes, stream_s = got - first_bytes, total - first_byte
        else:
            def timed(fn):
                t0 = time.perf_counter()
                n = fn()
                return time.perf_counter() - t0, n
            t_first = timed(small)[0]
            smalls = [timed(small)[0] for _ in range(small_requests)]
            total, got = timed(large)
            stream_bytes, stream_s = got, total - statistics.median(smalls)
        after = proxy.stats()
        smalls_ms = sorted(s * 1000 for s in smalls)
        return {
            "profile": link.name,
            "rtt_ms_nominal": link.rtt_ms,
            "jitter_ms_nominal": link.jitter_ms,
            "mbit_nominal": link.mbit,
            "upstream": "built-in byte server" if own else f"{proxy.upstream_host}:{proxy.upstream_port}",
            "first_request_ms": round(t_first * 1000, 2),
            "small_requests": small_requests,
            "rtt_ms_median": round(statistics.median(smalls_ms), 2),
            "rtt_ms_min": round(smalls_ms[0], 2),
            "rtt_ms_max": round(smalls_ms[-1], 2),
            "large_bytes": got,
            "large_seconds": round(total, 3),
            "mbit_measured": round(stream_bytes * 8 / max(stream_s, 1e-9) / 1e6, 1),
            "mbit_end_to_end": round(got * 8 / total / 1e6, 1),
            "bytes_down_counted": after["bytes_down"] - before["bytes_down"],
        }
    finally:
        if own is not None:
            own.stop()


async def _start_byteserver(loop):
    return await loop.create_server(_ByteServer, "127.0.0.1", 0)


def format_calibration(c: dict) -> str:
    """One line for a benchmark report."""
    nominal_bw = f"{c['mbit_nominal']:g} Mbit/s" if c["mbit_nominal"] else "unlimited"
    return (f"link {c['profile']}: nominal RTT {c['rtt_ms_nominal']:g}±{c['jitter_ms_nominal']:g} ms, "
            f"{nominal_bw}; measured: small-request median {c['rtt_ms_median']:.1f} ms "
            f"(min {c['rtt_ms_min']:.1f}, max {c['rtt_ms_max']:.1f}, n={c['small_requests']}), "
            f"first request on a new connection {c['first_request_ms']:.1f} ms, "
            f"{c['large_bytes'] / MiB:.0f} MiB transfer at {c['mbit_measured']:.0f} Mbit/s")


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------
def _hostport(s: str) -> tuple:
    host, _, port = s.rpartition(":")
    return host or "127.0.0.1", int(port)


def _write_stats(path: str, stats: dict) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", help="HOST:PORT of the S3 server")
    ap.add_argument("--profile", default="wan", choices=sorted(PROFILES))
    ap.add_argument("--rtt-ms", type=float)
    ap.add_argument("--jitter-ms", type=float)
    ap.add_argument("--mbit", type=float, help="shared bandwidth per direction; 0 = unlimited")
    ap.add_argument("--burst-kib", type=float)
    ap.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT (default 127.0.0.1:0)")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--stats-file", help="JSON counters, written on SIGUSR1, SIGTERM, SIGINT")
    ap.add_argument("--tcp", action="store_true",
                    help="plain TCP forwarding (no HTTP keep-alive emulation)")
    ap.add_argument("--calibrate", action="store_true",
                    help="measure the link (built-in upstream) and print the result")
    ap.add_argument("--json", action="store_true", help="with --calibrate: JSON output")
    a = ap.parse_args(argv)
    link = make_link(a.profile, a.rtt_ms, a.jitter_ms, a.mbit, a.burst_kib)

    if a.calibrate:
        c = calibrate(WanProxy("127.0.0.1", 1, link, http=not a.tcp), seed=a.seed)
        print(json.dumps(c) if a.json else format_calibration(c), flush=True)
        return 0
    if not a.upstream:
        ap.error("--upstream is required (or --calibrate)")
    uh, up = _hostport(a.upstream)
    lh, lp = _hostport(a.listen)
    proxy = WanProxy(uh, up, link, listen_port=lp, seed=a.seed, listen_host=lh,
                     http=not a.tcp).start()
    stop = threading.Event()

    def on_signal(signum, _frame):
        if a.stats_file:
            _write_stats(a.stats_file, proxy.stats())
        if signum != signal.SIGUSR1:
            stop.set()

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
        signal.signal(s, on_signal)
    print(proxy.port, flush=True)
    while not stop.wait(3600):
        pass
    proxy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
