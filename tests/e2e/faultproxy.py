"""A fault-injecting HTTP/1.1 proxy for S3 path-style requests.

Listens on 127.0.0.1, forwards every request byte-for-byte (method, path,
query and all headers including Host, so SigV4 signatures stay valid) to an
upstream S3 endpoint (moto), records it, and can be told per test to misbehave:

    proxy.add("get", "status", times=2, status=503)      # 503 SlowDown twice, then pass
    proxy.add("get", "truncate_body", times=1)           # Content-Length N, send N/2, close
    proxy.add("get", "short_body")                       # 206 with fewer bytes than the range, consistent Content-Length
    proxy.add("get", "content_range", mode="shift")      # claim a different range than the one asked for
    proxy.add("get", "ignore_range")                     # answer a ranged GET with 200 + the whole object
    proxy.add("get", "reset", times=1)                   # close the connection without a response
    proxy.add("get", "stall", times=1, seconds=None)     # send nothing until the client gives up
    proxy.add("get", "trickle", times=1, head_bytes=64, chunk=8, every=2.0)
                                                         # headers and head_bytes of the body, then chunk
                                                         # bytes every `every` s (None: nothing more)
                                                         # (first=, bytes=, seconds= are the same)
    proxy.add("list", "listing", mode="truncate_xml")    # corrupt ListObjectsV2 bodies
                                                         # (repeat_token: every page points to itself)
    proxy.add("get", "etag")                             # another ETag than the one asked for

Request kinds: "list" (GET on the bucket, not ?location), "bucket" (other
bucket-level requests), "get"/"head" (object GET/HEAD), "any".
times=None means always; rate=R (a parameter) injects into that fraction of
the matching requests; for_seconds=S (a parameter) ends a fault S seconds
after its first hit (a burst). key=... restricts a fault to one object key,
range_start=N (a parameter) to GETs whose Range starts at byte N.
Every request is recorded in proxy.requests (method, path, key, query,
headers, kind, fault action, status sent).
"""
from __future__ import annotations

import http.client
import random
import re
import select
import socket
import struct
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


@dataclass
class Fault:
    kind: str
    action: str
    times: int | None = None
    key: str | None = None
    params: dict = field(default_factory=dict)
    hits: int = 0
    first_hit: float | None = None  # time.monotonic() of the first hit

    def matches(self, kind: str, key: str | None, range_start: int | None = None) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if "rate" in self.params and random.random() >= self.params["rate"]:
            return False  # a fault on that fraction of the matching requests
        if ("for_seconds" in self.params and self.first_hit is not None
                and time.monotonic() - self.first_hit > self.params["for_seconds"]):
            return False
        if "range_start" in self.params and self.params["range_start"] != range_start:
            return False
        if self.kind != "any" and self.kind != kind:
            return False
        if self.key is not None and self.key != key:
            return False
        return True


@dataclass
class Record:
    method: str
    path: str
    bucket: str | None
    key: str | None
    query: dict
    headers: dict  # lower-cased names
    kind: str
    fault: str | None = None
    status: int | None = None


def classify(method: str, raw_path: str):
    """(kind, bucket, key, query) for a path-style S3 request."""
    path, _, qs = raw_path.partition("?")
    query = urllib.parse.parse_qs(qs, keep_blank_values=True)
    parts = path.lstrip("/").split("/", 1)
    bucket = urllib.parse.unquote(parts[0]) if parts[0] else None
    key = urllib.parse.unquote(parts[1]) if len(parts) > 1 and parts[1] != "" else None
    if key is None:
        if method == "GET" and bucket and "location" not in query:
            kind = "list"
        else:
            kind = "bucket"
    elif method == "GET":
        kind = "get"
    elif method == "HEAD":
        kind = "head"
    else:
        kind = "other"
    return kind, bucket, key, query


def corrupt_listing(body: bytes, mode: str) -> bytes:
    if mode == "truncate_xml":
        return body[: max(1, len(body) // 2)]
    if mode == "garbage":
        return b"\x00\xff<html><body>502 Bad Gateway</body>" + bytes(range(256))
    if mode == "empty":
        return b""
    if mode == "bad_size":
        return re.sub(rb"<Size>\d+</Size>", b"<Size>-12</Size>", body, count=1)
    if mode == "huge_size":
        return re.sub(rb"<Size>\d+</Size>", b"<Size>999999999999999999999999</Size>", body, count=1)
    if mode == "truncated_no_token":
        body = re.sub(rb"<IsTruncated>false</IsTruncated>", b"<IsTruncated>true</IsTruncated>", body)
        return re.sub(rb"<NextContinuationToken>.*?</NextContinuationToken>", b"", body, flags=re.S)
    if mode == "repeat_token":  # every page says "more, continue with token loop"
        body = re.sub(rb"<IsTruncated>false</IsTruncated>", b"<IsTruncated>true</IsTruncated>", body)
        body = re.sub(rb"<NextContinuationToken>.*?</NextContinuationToken>", b"", body, flags=re.S)
        return body.replace(b"</ListBucketResult>",
                            b"<NextContinuationToken>loop</NextContinuationToken></ListBucketResult>", 1)
    if mode == "unclosed_tag":
        return body.replace(b"</ListBucketResult>", b"", 1)
    if mode == "long_key":
        return re.sub(rb"<Key>([^<]*)</Key>", lambda m: b"<Key>" + m.group(1) + b"x" * 5000 + b"</Key>",
                      body, count=1)
    raise ValueError(f"unknown listing mode {mode}")


def rewrite_content_range(value: str | None, mode: str) -> str | None:
    m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", (value or "").strip())
    if mode == "drop":
        return None
    if mode == "garbage":
        return "bytes banana"
    if not m:
        return value
    a, b, total = int(m.group(1)), int(m.group(2)), m.group(3)
    if mode == "shift":  # same length, different position
        d = 4096 if a < 4096 else -4096
        return f"bytes {a + d}-{b + d}/{total}"
    if mode == "total":  # the object size seems to have changed
        return f"bytes {a}-{b}/{int(total) + 1 if total != '*' else 1}"
    if mode == "longer":  # claims more bytes than the body has
        return f"bytes {a}-{b + 100}/{total}"
    raise ValueError(f"unknown content_range mode {mode}")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultproxy"
    proxy: "FaultProxy"  # set on the subclass

    def log_message(self, fmt, *args):  # quiet
        pass

    def _any(self):
        self.proxy._handle(self)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _any


class FaultProxy:
    def __init__(self, upstream: str, fetch_full=None):
        u = urllib.parse.urlsplit(upstream)
        self.upstream = (u.hostname, u.port or 80)
        self.fetch_full = fetch_full  # (bucket, key) -> bytes, for ignore_range
        self.record = True  # keep every request in self.requests (a long soak turns it off)
        self.faults: list[Fault] = []
        self.requests: list[Record] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        handler = type("Handler", (_Handler,), {"proxy": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="faultproxy", daemon=True)

    # -- control -------------------------------------------------------------
    def start(self) -> "FaultProxy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def add(self, kind: str, action: str, times: int | None = None, key: str | None = None, **params) -> Fault:
        f = Fault(kind, action, times, key, params)
        with self._lock:
            self.faults.append(f)
        return f

    def clear(self) -> None:
        with self._lock:
            self.faults.clear()

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()

    def records(self, kind: str | None = None, key: str | None = None) -> list[Record]:
        with self._lock:
            return [r for r in self.requests
                    if (kind is None or r.kind == kind) and (key is None or r.key == key)]

    # -- request handling ----------------------------------------------------
    def _pick(self, kind, key, range_start=None) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.matches(kind, key, range_start):
                    f.hits += 1
                    if f.first_hit is None:
                        f.first_hit = time.monotonic()
                    return f
        return None

    def _handle(self, h: _Handler) -> None:
        method = h.command
        kind, bucket, key, query = classify(method, h.path)
        n = int(h.headers.get("Content-Length") or 0)
        body_in = h.rfile.read(n) if n else b""
        rec = Record(method, h.path, bucket, key, query,
                     {k.lower(): v for k, v in h.headers.items()}, kind)
        if self.record:
            with self._lock:
                self.requests.append(rec)
        m = re.match(r"bytes=(\d+)-", h.headers.get("Range") or "")
        fault = self._pick(kind, key, int(m.group(1)) if m else None)
        act = fault.action if fault else None
        p = fault.params if fault else {}
        rec.fault = act

        if act == "status":
            status = int(p.get("status", 503))
            code = p.get("code", {503: "SlowDown", 500: "InternalError"}.get(status, "ServiceUnavailable"))
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                    f"<Message>injected by faultproxy</Message><RequestId>fp</RequestId></Error>").encode()
            rec.status = status
            self._send(h, status, [("Content-Type", "application/xml")], body, head=(method == "HEAD"))
            return
        if act == "reset":
            rec.status = 0
            self._reset(h)
            return
        if act == "stall":
            seconds = p.get("seconds")
            if not self._stall(h, seconds):
                rec.status = 0
                h.close_connection = True
                return  # client gave up (or proxy stopping)

        if (act == "listing" and kind == "list" and p.get("mode") == "repeat_token"
                and "continuation-token" in query and "_page" in p):
            # the server would refuse the made-up token: answer with the first page again
            rec.status = 200
            self._send(h, 200, p["_page"][0], p["_page"][1])
            return
        try:
            status, reason, headers, body = self._forward(method, h.path, h.headers, body_in)
        except OSError as e:
            rec.status = 502
            self._send(h, 502, [("Content-Type", "text/plain")], f"upstream: {e}".encode())
            return
        hdrs = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]

        if act == "listing" and kind == "list" and status == 200:
            body = corrupt_listing(body, p.get("mode", "truncate_xml"))
            if p.get("mode") == "repeat_token":
                p["_page"] = ([(k, v) for k, v in hdrs if k.lower() != "content-length"], body)
        elif act == "etag" and method == "GET" and status in (200, 206):
            hdrs = [(k, v) for k, v in hdrs if k.lower() != "etag"] + [("ETag", '"0000000000deadbeef0000000000"')]
        elif act == "content_range" and status == 206:
            cr = next((v for k, v in hdrs if k.lower() == "content-range"), None)
            new = rewrite_content_range(cr, p.get("mode", "shift"))
            hdrs = [(k, v) for k, v in hdrs if k.lower() != "content-range"]
            if new is not None:
                hdrs.append(("Content-Range", new))
        elif act == "short_body" and status in (200, 206) and method == "GET":
            body = body[: len(body) * int(p.get("percent", 50)) // 100]
        elif act == "ignore_range" and status == 206 and self.fetch_full is not None:
            full = self.fetch_full(bucket, key)
            status, reason, body = 200, "OK", full
            hdrs = [(k, v) for k, v in hdrs if k.lower() not in ("content-range",)]
        elif act == "trickle" and method == "GET" and status in (200, 206):
            rec.status = status
            self._trickle(h, status, hdrs, body, reason, int(p.get("head_bytes", p.get("first", 64))),
                          int(p.get("chunk", p.get("bytes", 8))), p.get("every", p.get("seconds", 2.0)))
            return
        elif act == "truncate_body" and method == "GET" and status in (200, 206) and len(body) > 1:
            rec.status = status
            cut = max(1, len(body) * int(p.get("percent", 50)) // 100)
            self._send(h, status, hdrs, body, truncate_at=cut, reason=reason)
            return
        rec.status = status
        self._send(h, status, hdrs, body, head=(method == "HEAD"), reason=reason)

    def _forward(self, method, path, headers, body):
        conn = http.client.HTTPConnection(*self.upstream, timeout=120)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for k, v in headers.items():
                if k.lower() in HOP_BY_HOP:
                    continue
                conn.putheader(k, v)
            conn.endheaders(body if body else None)
            r = conn.getresponse()
            data = r.read()
            return r.status, r.reason, r.getheaders(), data
        finally:
            conn.close()

    def _send(self, h, status, headers, body, head=False, truncate_at=None, reason=None):
        try:
            h.send_response_only(status, reason)
            have_len = False
            for k, v in headers:
                if k.lower() == "content-length":
                    if head:
                        h.send_header(k, v)
                        have_len = True
                    continue
                h.send_header(k, v)
            if not have_len:
                h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            if head:
                h.wfile.flush()
                return
            if truncate_at is not None:
                h.wfile.write(body[:truncate_at])
                h.wfile.flush()
                h.close_connection = True
                try:  # orderly close (FIN): the client sees a short body, not a reset
                    h.connection.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            h.wfile.write(body)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True

    def _trickle(self, h, status, headers, body, reason, head_bytes, chunk, every):
        """The real headers, head_bytes of the body, then chunk bytes every
        `every` seconds (None: nothing more) until the body is out, the
        client goes away or the proxy stops."""
        try:
            h.send_response_only(status, reason)
            for k, v in headers:
                if k.lower() != "content-length":
                    h.send_header(k, v)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[:head_bytes])
            h.wfile.flush()
            pos = head_bytes
            while pos < len(body) and not self._stop.is_set():
                if every is None:
                    if not self._stall(h, None):
                        break
                    continue
                if self._stop.wait(float(every)):
                    break
                h.wfile.write(body[pos:pos + chunk])
                h.wfile.flush()
                pos += chunk
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        h.close_connection = True

    @staticmethod
    def _reset(h, flush=True):
        """Close the client connection with a TCP RST."""
        h.close_connection = True
        try:
            if flush:
                h.wfile.flush()
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
        except OSError:
            pass

    def _stall(self, h, seconds) -> bool:
        """Wait `seconds` (None: until the client disconnects or the proxy
        stops). Returns True if the client is still connected afterwards."""
        deadline = None if seconds is None else time.monotonic() + float(seconds)
        sock = h.connection
        while not self._stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                return True
            r, _, _ = select.select([sock], [], [], 0.1)
            if r:
                try:
                    if sock.recv(1, socket.MSG_PEEK) == b"":
                        return False  # client closed
                except OSError:
                    return False
                # client sent more bytes (pipelining): keep waiting
                time.sleep(0.1)
        return False
