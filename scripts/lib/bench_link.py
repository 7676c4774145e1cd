"""The S3 world of one scripts/bench link profile: an endpoint every
contender reads through, with the link (`wan`, `region`, `lan`) between them
and the objects, and the counters of what crossed it.

  S3LinkWorld  tests/tools/s3link (the default): one s3link process per
               profile serving the prepared directory (ROOT/BUCKET/KEY), the
               link emulated inside the server (--profile), S3's per-prefix
               GET rate limit (5,500/s, 503 SlowDown beyond), optionally TLS;
               counters from GET /__s3link/stats, zeroed by POST
               /__s3link/reset before each run.
  ProxyWorld   moto or versitygw (scripts/bench --server) behind the Python
               link emulator scripts/lib/wanproxy.py, whose counters are read
               before and after (as the benchmark did before s3link).

stats() gives {"bytes": bytes sent to the clients (bodies and headers),
"body_bytes" (s3link only), "requests": all requests, "by_kind",
"slowdown_503", "connections"} since the last reset().
"""
from __future__ import annotations

import http.client
import ssl
import statistics
import time
from pathlib import Path

MiB = 1 << 20
# what the profiles are (s3link's --profile and wanproxy.PROFILES agree)
NOMINAL = {"wan": {"rtt_ms": 200.0, "jitter_ms": 20.0, "mbit": 150.0},
           "region": {"rtt_ms": 25.0, "jitter_ms": 0.0, "mbit": 1000.0},
           "lan": {"rtt_ms": 0.0, "jitter_ms": 0.0, "mbit": None}}


class _World:
    """A link world is a context manager that closes itself."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class S3LinkWorld(_World):
    kind = "s3link"

    def __init__(self, root: Path, profile: str, tls: bool = False, log_path: Path | None = None,
                 get_rate: float | None = None):
        import s3servers
        self.profile = profile
        self.srv = s3servers.S3Link(root=root, profile=profile, tls=tls, log_path=log_path, get_rate=get_rate)
        self.srv.start()
        self.endpoint = self.srv.endpoint
        self.ca_bundle = self.srv.ca_bundle
        self.creds = self.srv.creds
        self.tls = tls
        link = self.srv.stats().get("link", {})
        self.nominal = {"rtt_ms": float(link.get("rtt_ms") or 0), "jitter_ms": float(link.get("jitter_ms") or 0),
                        "mbit": float(link["down_mbit"]) if link.get("down_mbit") else None}
        self.get_rate = float(self.srv.stats().get("get_rate") or 0) or None

    def describe(self) -> str:
        return self.srv.describe()

    def reset(self) -> None:
        self.srv.reset_stats()

    def raw_stats(self) -> dict:
        return self.srv.stats()

    def stats(self) -> dict:
        d = self.srv.stats()
        kinds = d.get("requests") or {}
        return {"bytes": int(d.get("bytes_sent_total", 0)), "body_bytes": int(d.get("bytes_sent_body", 0)),
                "requests": int(sum(v for v in kinds.values() if isinstance(v, (int, float)))),
                "by_kind": {k: v for k, v in kinds.items() if v}, "slowdown_503": int(d.get("slowdown_503", 0)),
                "connections": int(d.get("connections_accepted", 0))}

    def capacity(self) -> tuple[float | None, str]:
        """Requests per second for the limit model's request term."""
        if self.get_rate:
            return self.get_rate, (f"s3link's per-prefix GET limit, S3's {self.get_rate:,.0f}/s "
                                   "(the whole table taken as one prefix)")
        return None, "unlimited (s3link without a request-rate limit)"

    def calibrate(self, bucket: str, key: str, size: int) -> str:
        """What the link does, measured with http.client on one keep-alive
        connection: a 1-byte ranged GET on a new connection (handshake
        included), 20 more (about one RTT each), and one large range (the
        streaming rate). Counters are reset afterwards."""
        host, port = "127.0.0.1", self.srv.port
        if self.tls:
            ctx = ssl.create_default_context(cafile=self.ca_bundle)
            conn = http.client.HTTPSConnection(host, port, timeout=120, context=ctx)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=120)
        path = f"/{bucket}/{key}"

        def get(rng: str) -> tuple[float, float, int]:
            t0 = time.perf_counter()
            conn.request("GET", path, headers={"Range": f"bytes={rng}"})
            r = conn.getresponse()
            first = r.read(1)
            t1 = time.perf_counter()
            n = len(first) + len(r.read())
            return time.perf_counter() - t0, time.perf_counter() - t1, n
        first_ms = get("0-0")[0] * 1000
        smalls = sorted(get("0-0")[0] * 1000 for _ in range(20))
        rate = (self.nominal["mbit"] or 0) * 1e6 / 8
        large = int(min(size, max(4 * MiB, rate * 2) if rate else 64 * MiB))
        total, stream_s, got = get(f"0-{large - 1}")
        conn.close()
        self.reset()
        mbit = got * 8 / max(stream_s, 1e-9) / 1e6
        nom = self.nominal
        bw = f"{nom['mbit']:g} Mbit/s" if nom["mbit"] else "unlimited bandwidth"
        return (f"link {self.profile} (s3link{', HTTPS' if self.tls else ''}): nominal RTT {nom['rtt_ms']:g}"
                f"±{nom['jitter_ms']:g} ms, {bw}; measured: small ranged GET median {statistics.median(smalls):.1f} ms "
                f"(min {smalls[0]:.1f}, max {smalls[-1]:.1f}, n=20), first GET on a new connection {first_ms:.1f} ms, "
                f"{got / MiB:.0f} MiB range at {mbit:,.0f} Mbit/s")

    def close(self) -> None:
        if self.srv is not None:
            self.srv.stop()
            self.srv = None


class ProxyWorld(_World):
    """moto or versitygw (started by the caller) behind wanproxy.py."""
    kind = "proxy"

    def __init__(self, srv, profile: str):
        import wanproxy
        self.profile = profile
        self.srv = srv
        self.proxy = wanproxy.WanProxy("127.0.0.1", srv.port, profile).start()
        self.endpoint = self.proxy.endpoint
        self.ca_bundle = None
        self.creds = srv.creds
        self.tls = False
        link = wanproxy.PROFILES[profile]
        self.nominal = {"rtt_ms": link.rtt_ms, "jitter_ms": link.jitter_ms, "mbit": link.mbit}
        self.get_rate = None
        self._base = self.proxy.stats()

    def describe(self) -> str:
        return f"{self.srv.describe()} behind scripts/lib/wanproxy.py (profile {self.profile})"

    def reset(self) -> None:
        self._base = self.proxy.stats()

    def raw_stats(self) -> dict:
        return self.proxy.stats()

    def stats(self) -> dict:
        d = self.proxy.stats()
        b = self._base
        return {"bytes": d["bytes_down"] - b["bytes_down"], "body_bytes": None,
                "requests": d.get("requests", 0) - b.get("requests", 0), "by_kind": {},
                "slowdown_503": 0, "connections": d.get("connections", 0) - b.get("connections", 0)}

    def capacity(self) -> tuple[float | None, str]:
        return None, "measured by the sievefs mounts (see below)"

    def calibrate(self, bucket: str, key: str, size: int) -> str:
        import wanproxy
        text = wanproxy.format_calibration(wanproxy.calibrate(self.profile))
        self.reset()
        return text + " (wanproxy with its built-in byte server)"

    def close(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
            self.proxy = None
