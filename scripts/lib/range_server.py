"""range_server: a minimal HTTP/1.1 keep-alive server of one object's ranged
GETs, for scripts/probe-requests when moto itself would be the bottleneck
(moto answers a few hundred small GETs/s on this machine, whatever the
client). Not S3: no auth check, no listing; GET /BUCKET/KEY with
`Range: bytes=A-B` answers 206 with Content-Range, Content-Length and a
fixed ETag (If-Match with another ETag answers 412); without Range 200 and
the whole object; any other path 404. The object is --size deterministic
bytes (s3env.det_bytes("probe", size)).

    python scripts/lib/range_server.py --path /probe/probe/object.bin --size BYTES
Prints the port on stdout (one line) and serves until SIGTERM.

Python stdlib only (asyncio protocol, no per-request coroutine).
"""
from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))
import s3env  # noqa: E402

ETAG = b'"0123456789abcdef0123456789abcdef"'


class RangeServer(asyncio.Protocol):
    path = b""
    data = b""

    def connection_made(self, t):
        self.t = t
        self.buf = b""

    def data_received(self, chunk):
        self.buf += chunk
        out = []
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                break
            head, self.buf = self.buf[:end], self.buf[end + 4:]
            out.append(self.answer(head))
        if out:
            self.t.write(b"".join(out))

    def answer(self, head: bytes) -> bytes:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        method, target = parts[0], parts[1] if len(parts) > 1 else b""
        rng = match = None
        for ln in lines[1:]:
            name, _, value = ln.partition(b":")
            name = name.strip().lower()
            if name == b"range":
                rng = value.strip()
            elif name == b"if-match":
                match = value.strip()
        if target.split(b"?")[0] != self.path:
            return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        if match is not None and match != ETAG:
            return b"HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\n"
        size = len(self.data)
        body_wanted = method != b"HEAD"
        if rng and rng.startswith(b"bytes="):
            a, _, b = rng[6:].partition(b"-")
            first, last = int(a), min(int(b), size - 1)
            if first > last:
                return (b"HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */%d\r\n"
                        b"Content-Length: 0\r\n\r\n" % size)
            body = self.data[first:last + 1]
            hdr = (b"HTTP/1.1 206 Partial Content\r\nETag: %s\r\nContent-Range: bytes %d-%d/%d\r\n"
                   b"Content-Length: %d\r\n\r\n" % (ETAG, first, last, size, len(body)))
        else:
            body = self.data
            hdr = b"HTTP/1.1 200 OK\r\nETag: %s\r\nContent-Length: %d\r\n\r\n" % (ETAG, size)
        return hdr + (body if body_wanted else b"")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", required=True, help="URL path of the object, e.g. /bucket/key")
    ap.add_argument("--size", type=int, required=True)
    a = ap.parse_args(argv)
    RangeServer.path = a.path.encode()
    RangeServer.data = s3env.det_bytes("probe", a.size)
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(RangeServer, "127.0.0.1", 0, backlog=1024))
    print(server.sockets[0].getsockname()[1], flush=True)
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, loop.stop)
    loop.run_forever()
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
