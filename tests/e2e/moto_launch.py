"""Start moto's S3-compatible server (``python -m moto.server``) with two
test-infrastructure patches, each of which can be turned off:

1. Ranged GETs read only the requested bytes (SIEVE_MOTO_FAST_RANGE=0 turns this
   off). Stock moto reads the *whole* object from its spooled temp file for
   every GET and then slices it, so a 4 KiB ranged GET of a 1 GiB object costs
   a full 1 GiB read. That would make every sievefs throughput number a
   measurement of moto. The patch hands moto's own range code
   (S3Response._handle_range_header, unchanged) a lazy value whose len() is the
   object size and whose slices read just that slice, so status codes, headers,
   Content-Range and 416 handling stay moto's.

2. ListObjects(V2) page size is capped at 1000 keys like real S3
   (SIEVE_MOTO_MAX_KEYS_CAP, 0 turns this off). Stock moto honours any
   max-keys value, which would let a client skip pagination.

Everything else (SigV4 verification via INITIAL_NO_AUTH_ACTION_COUNT, If-Match,
error documents) is stock moto. Usage: python moto_launch.py -H 127.0.0.1 -p PORT
"""
import os
import sys
import threading


class _LazyValue:
    """Object bytes that are only read when sliced."""

    def __init__(self, key):
        self._key = key
        self._size = key.contentsize

    def __len__(self):
        return self._size

    def __bool__(self):
        return self._size > 0

    def __getitem__(self, item):
        if not isinstance(item, slice) or item.step not in (None, 1):
            return bytes(self)[item]
        start, stop, _ = item.indices(self._size)
        if stop <= start:
            return b""
        with self._key.lock:
            buf = self._key._value_buffer
            buf.seek(start)
            return buf.read(stop - start)

    def __bytes__(self):
        return self[0:self._size]


def _patch_fast_range():
    from moto.s3 import models, responses

    tls = threading.local()
    value_prop = models.FakeKey.value
    orig_getter = value_prop.fget

    def lazy_getter(self):
        if getattr(tls, "lazy", False) and not getattr(self, "disposed", False):
            return _LazyValue(self)
        return orig_getter(self)

    models.FakeKey.value = property(lazy_getter, value_prop.fset)

    orig_key_response = responses.S3Response.key_response

    def key_response(self, request, full_url, headers):
        rng = request.headers.get("range") if request.method == "GET" else None
        tls.lazy = bool(rng)
        try:
            status, hdrs, body = orig_key_response(self, request, full_url, headers)
        finally:
            tls.lazy = False
        if isinstance(body, _LazyValue):
            # moto decided not to honour the range (multi-range, bad syntax...):
            # it sends the whole object, exactly as stock moto would.
            body = bytes(body)
        return status, hdrs, body

    responses.S3Response.key_response = key_response


def _patch_max_keys(cap):
    from moto.s3 import responses

    def wrap(name):
        orig = getattr(responses.S3Response, name)

        def capped(self, *a, **kw):
            mk = self.querystring.get("max-keys")
            if mk:
                try:
                    if int(mk[0]) > cap:
                        self.querystring["max-keys"] = [str(cap)]
                except ValueError:
                    pass
            return orig(self, *a, **kw)

        setattr(responses.S3Response, name, capped)

    for name in ("list_objects_v2", "list_objects"):
        if hasattr(responses.S3Response, name):
            wrap(name)


def main():
    if os.environ.get("SIEVE_MOTO_FAST_RANGE", "1") != "0":
        _patch_fast_range()
    cap = int(os.environ.get("SIEVE_MOTO_MAX_KEYS_CAP", "1000"))
    if cap > 0:
        _patch_max_keys(cap)
    from moto.server import main as moto_main

    moto_main(sys.argv[1:])


if __name__ == "__main__":
    main()
