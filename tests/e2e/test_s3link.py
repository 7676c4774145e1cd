"""Self-tests of tests/tools/s3link, the benchmark's S3 endpoint with the link
emulated inside the server: what S3 clients see (ranges, conditional GETs,
HEAD, ListObjectsV2 pages and delimiters, error documents, PUT), SlowDown
beyond the per-prefix request rate, TLS with the generated certificate, the
counters, and a loose bound on a GET's time at `--profile wan`. Timing
accuracy is the business of scripts/probe-requests, not of these tests.

The binary is tests/e2e/.data/bin/s3link (scripts/setup builds it; S3LINK_BIN
overrides): missing, the tests are skipped, or fail when CI=true. All but the
last test are harness tests (no sievefs binary needed); the last mounts a
bucket from it with sievefs.
"""
from __future__ import annotations

import http.client
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import s3env

sys.path.insert(0, str(s3env.REPO / "scripts" / "lib"))
import s3servers  # noqa: E402

NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
BUCKET = "data"
OTHER_TESTS_KEYS = ("mut/", "put/", "late/")  # keys other tests of the module add to the bucket


def _binary() -> str:
    b = s3servers.s3link_bin(build=False)
    if not b:
        why = f"{s3servers.S3LINK_HINT} (looked for {s3servers.S3LINK_BIN_DIR / 's3link'})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(why)
        pytest.skip(why)
    return b


def _tree(root: Path) -> dict:
    """ROOT/data/...: keys (with awkward characters and nesting) -> bytes."""
    files = {
        "a.txt": b"alpha",
        "dir/one.bin": s3env.det_bytes("one", 100_000),
        "dir/two words.txt": b"two words",
        "dir/sub/deep/x": b"x" * 10,
        "dir/sub/y+z": b"plus",
        "dir-b/q": b"q",
        "dir.c/r": b"r",
        "unicode/\u00fc\u00e9/\u6587\u4ef6": b"unicode",
        "pct/a%41b": b"percent",
        "amp/&<>\"'": b"xml",
    }
    for i in range(23):
        files[f"many/k{i:03d}"] = f"many {i}".encode()
    for k, v in files.items():
        p = root / BUCKET / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(v)
    (root / "empty-bucket").mkdir()
    return files


@pytest.fixture(scope="module")
def lan(tmp_path_factory):
    """One s3link at --profile lan over a tree of files: (server, files)."""
    binary = _binary()
    root = tmp_path_factory.mktemp("s3link-root")
    files = _tree(root)
    srv = s3servers.S3Link(root=root, log_path=root.parent / "s3link.log", binary=binary).start()
    yield srv, files
    srv.stop()


def _get(srv, path: str, headers: dict | None = None, method: str = "GET", context=None):
    """(status, headers, body) of a raw request, errors included."""
    req = urllib.request.Request(srv.endpoint + path, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=20, context=context) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def _error(body: bytes) -> dict:
    root = ET.fromstring(body)
    assert root.tag == "Error"
    return {c.tag: c.text for c in root}


def _quote(key: str) -> str:
    return urllib.request.quote(key, safe="/")


# -- objects -------------------------------------------------------------------
@pytest.mark.harness
def test_get_ranges(lan):
    srv, files = lan
    data = files["dir/one.bin"]
    n = len(data)
    st, h, body = _get(srv, "/data/dir/one.bin")
    assert st == 200 and body == data
    assert h["Content-Length"] == str(n) and h["Accept-Ranges"] == "bytes"
    etag, lm = h["ETag"], h["Last-Modified"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 2
    assert lm.endswith("GMT")
    for rng, (a, b) in {"bytes=10-19": (10, 19), "bytes=99990-": (99990, n - 1), "bytes=-7": (n - 7, n - 1),
                        "bytes=0-0": (0, 0), "bytes=99000-200000": (99000, n - 1),
                        "bytes=-200000": (0, n - 1)}.items():
        st, h, body = _get(srv, "/data/dir/one.bin", {"Range": rng})
        assert st == 206, rng
        assert body == data[a:b + 1], rng
        assert h["Content-Range"] == f"bytes {a}-{b}/{n}", rng
        assert h["Content-Length"] == str(b - a + 1) and h["ETag"] == etag
    for rng in ("bytes=100000-", "bytes=200000-300000", "bytes=-0"):
        st, h, body = _get(srv, "/data/dir/one.bin", {"Range": rng})
        assert st == 416, rng
        e = _error(body)
        assert e["Code"] == "InvalidRange" and e["Resource"] == "/data/dir/one.bin" and e["RequestId"]
    # Syntax S3 ignores: the whole object.
    st, _, body = _get(srv, "/data/dir/one.bin", {"Range": "bytes=5-2"})
    assert st == 200 and body == data
    # boto3 agrees.
    s3 = srv.client()
    r = s3.get_object(Bucket=BUCKET, Key="dir/two words.txt", Range="bytes=4-8")
    assert r["Body"].read() == b"words" and r["ContentRange"] == "bytes 4-8/9"


@pytest.mark.harness
def test_head_and_conditions(lan):
    srv, files = lan
    s3 = srv.client()
    head = s3.head_object(Bucket=BUCKET, Key="dir/one.bin")
    assert head["ContentLength"] == len(files["dir/one.bin"])
    etag = head["ETag"]
    st, h, body = _get(srv, "/data/dir/one.bin", method="HEAD")
    assert st == 200 and body == b"" and h["ETag"] == etag and h["Content-Length"] == str(len(files["dir/one.bin"]))
    # If-Match: the right ETag serves, another fails with S3's document.
    st, _, body = _get(srv, "/data/dir/one.bin", {"If-Match": etag, "Range": "bytes=0-3"})
    assert st == 206 and body == files["dir/one.bin"][:4]
    st, _, body = _get(srv, "/data/dir/one.bin", {"If-Match": '"0123456789abcdef0123456789abcdef"'})
    assert st == 412
    e = _error(body)
    assert e["Code"] == "PreconditionFailed" and e["Condition"] == "If-Match"
    with pytest.raises(s3.exceptions.ClientError) as ei:
        s3.get_object(Bucket=BUCKET, Key="dir/one.bin", IfMatch='"nope"')
    assert ei.value.response["Error"]["Code"] == "PreconditionFailed"
    st, _, _ = _get(srv, "/data/dir/one.bin", {"If-Match": etag}, method="HEAD")
    assert st == 200
    st, _, _ = _get(srv, "/data/dir/one.bin", {"If-Match": '"nope"'}, method="HEAD")
    assert st == 412
    # If-None-Match: 304 when it matches.
    st, h, body = _get(srv, "/data/dir/one.bin", {"If-None-Match": etag})
    assert st == 304 and body == b"" and h["ETag"] == etag
    st, _, _ = _get(srv, "/data/dir/one.bin", {"If-None-Match": '"other"'})
    assert st == 200


@pytest.mark.harness
def test_etag_stable_and_follows_changes(lan, tmp_path):
    srv, _ = lan
    s3 = srv.client()
    path = srv.root / BUCKET / "mut" / "file"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"version one")
    e1 = s3.head_object(Bucket=BUCKET, Key="mut/file")["ETag"]
    assert s3.head_object(Bucket=BUCKET, Key="mut/file")["ETag"] == e1
    page = s3.list_objects_v2(Bucket=BUCKET, Prefix="mut/")
    assert [(o["Key"], o["ETag"], o["Size"]) for o in page["Contents"]] == [("mut/file", e1, 11)]
    time.sleep(0.01)
    path.write_bytes(b"version two, longer")
    e2 = s3.head_object(Bucket=BUCKET, Key="mut/file")["ETag"]
    assert e2 != e1
    assert s3.get_object(Bucket=BUCKET, Key="mut/file")["Body"].read() == b"version two, longer"
    st, _, _ = _get(srv, "/data/mut/file", {"If-Match": e1})
    assert st == 412


@pytest.mark.harness
def test_put_then_get_and_delete(lan):
    srv, _ = lan
    import boto3
    # boto3's defaults: flexible checksums, aws-chunked bodies with a trailer.
    s3 = boto3.client("s3", endpoint_url=srv.endpoint, region_name="us-east-1",
                      aws_access_key_id="any", aws_secret_access_key="thing")
    data = s3env.det_bytes("put", 300_000)
    r = s3.put_object(Bucket=BUCKET, Key="put/nested/obj.bin", Body=data)
    assert r["ETag"] == s3.head_object(Bucket=BUCKET, Key="put/nested/obj.bin")["ETag"]
    assert (srv.root / BUCKET / "put" / "nested" / "obj.bin").read_bytes() == data
    assert srv.client().get_object(Bucket=BUCKET, Key="put/nested/obj.bin")["Body"].read() == data
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="put/")["Contents"]]
    assert keys == ["put/nested/obj.bin"]
    s3.delete_object(Bucket=BUCKET, Key="put/nested/obj.bin")
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET, Prefix="put/")
    assert not (srv.root / BUCKET / "put").exists()
    s3.create_bucket(Bucket="made-by-put")
    assert (srv.root / "made-by-put").is_dir()
    assert "made-by-put" in [b["Name"] for b in s3.list_buckets()["Buckets"]]


# -- listings ------------------------------------------------------------------
def _expected_level(keys, prefix, delim):
    contents, cps = [], set()
    for k in sorted(keys, key=lambda s: s.encode()):
        if not k.startswith(prefix):
            continue
        rest = k[len(prefix):]
        if delim and delim in rest:
            cps.add(prefix + rest[:rest.index(delim) + len(delim)])
        else:
            contents.append(k)
    return contents, sorted(cps, key=lambda s: s.encode())


@pytest.mark.harness
def test_list_v2_pages_and_delimiters(lan):
    srv, files = lan
    s3 = srv.client()
    keys = sorted(files, key=lambda s: s.encode())
    # Whole bucket, small pages (boto3 sends encoding-type=url and decodes).
    for page_size in (1, 3, 7, 1000):
        got, pages = [], 0
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET,
                                                                 PaginationConfig={"PageSize": page_size}):
            pages += 1
            assert page["KeyCount"] == len(page.get("Contents", [])) + len(page.get("CommonPrefixes", []))
            got += [(o["Key"], o["Size"]) for o in page.get("Contents", [])
                    if not o["Key"].startswith(OTHER_TESTS_KEYS)]
        assert [k for k, _ in got] == keys
        assert all(size == len(files[k]) for k, size in got)
        if page_size == 1:
            assert pages >= len(keys)
    # Every level with '/' (and pages of 2), compared with the files.
    for prefix in ("", "dir/", "dir/sub/", "unicode/", "many/", "nothing/", "dir"):
        want = _expected_level(files, prefix, "/")
        got_c, got_p = [], []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix, Delimiter="/",
                                                                 PaginationConfig={"PageSize": 2}):
            got_c += [o["Key"] for o in page.get("Contents", [])]
            got_p += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        if prefix == "":
            got_p = [p for p in got_p if p not in OTHER_TESTS_KEYS]
        assert (got_c, got_p) == want, prefix
    # Another delimiter, start-after, the raw XML without encoding-type.
    r = s3.list_objects_v2(Bucket=BUCKET, Prefix="dir", Delimiter="-")
    assert [p["Prefix"] for p in r.get("CommonPrefixes", [])] == ["dir-"]
    r = s3.list_objects_v2(Bucket=BUCKET, Prefix="many/", StartAfter="many/k020")
    assert [o["Key"] for o in r["Contents"]] == ["many/k021", "many/k022"]
    st, _, body = _get(srv, "/data?list-type=2&prefix=amp/")
    assert st == 200
    doc = ET.fromstring(body)
    assert doc.tag == NS + "ListBucketResult"
    assert [c.find(NS + "Key").text for c in doc.findall(NS + "Contents")] == ["amp/&<>\"'"]
    c = doc.find(NS + "Contents")
    assert c.find(NS + "StorageClass").text == "STANDARD" and c.find(NS + "LastModified").text.endswith("Z")
    assert doc.find(NS + "IsTruncated").text == "false" and doc.find(NS + "KeyCount").text == "1"
    st, _, body = _get(srv, "/data?list-type=2&max-keys=2&prefix=many/")
    doc = ET.fromstring(body)
    assert doc.find(NS + "IsTruncated").text == "true" and doc.find(NS + "NextContinuationToken").text
    assert doc.find(NS + "MaxKeys").text == "2"


@pytest.mark.harness
def test_listing_sees_files_added_behind_its_back(lan):
    srv, _ = lan
    s3 = srv.client()
    d = srv.root / BUCKET / "late"
    d.mkdir()
    (d / "first").write_bytes(b"1")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="late/")["Contents"]] == ["late/first"]
    (d / "second").write_bytes(b"2")  # the directory's mtime changes: the cache is walked again
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="late/")["Contents"]] == \
        ["late/first", "late/second"]


# -- errors, buckets -----------------------------------------------------------
@pytest.mark.harness
def test_error_documents_and_buckets(lan):
    srv, _ = lan
    st, _, body = _get(srv, "/data/no/such/key")
    e = _error(body)
    assert st == 404 and e["Code"] == "NoSuchKey" and e["Key"] == "no/such/key" and e["Message"]
    assert e["Resource"] == "/data/no/such/key" and e["RequestId"]
    st, _, body = _get(srv, "/no-such-bucket/key")
    assert st == 404 and _error(body)["Code"] == "NoSuchBucket"
    st, _, body = _get(srv, "/no-such-bucket?list-type=2")
    assert st == 404 and _error(body)["Code"] == "NoSuchBucket"
    st, _, body = _get(srv, "/data/dir")  # a directory is not a key
    assert st == 404 and _error(body)["Code"] == "NoSuchKey"
    st, _, body = _get(srv, "/data/../data/a.txt")
    assert st == 404
    for path, method in (("/data/a.txt?acl", "GET"), ("/data?policy", "GET"), ("/data/a.txt", "POST"),
                         ("/data?uploads", "POST"), ("/data/a.txt?uploads", "POST")):
        st, _, body = _get(srv, path, method=method)
        assert st == 501 and _error(body)["Code"] == "NotImplemented", (path, method)
    st, _, body = _get(srv, "/data/no-such", method="HEAD")
    assert st == 404 and body == b""
    s3 = srv.client()
    s3.head_bucket(Bucket=BUCKET)
    with pytest.raises(s3.exceptions.ClientError) as ei:
        s3.head_bucket(Bucket="no-such-bucket")
    assert ei.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert s3.get_bucket_location(Bucket=BUCKET).get("LocationConstraint") in (None, "")
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert BUCKET in names and "empty-bucket" in names
    assert s3.list_objects_v2(Bucket="empty-bucket")["KeyCount"] == 0
    # Any Authorization is accepted; none too.
    st, _, body = _get(srv, "/data/a.txt", {"Authorization": "AWS4-HMAC-SHA256 Credential=bogus, Signature=0"})
    assert st == 200 and body == b"alpha"


# -- counters ------------------------------------------------------------------
@pytest.mark.harness
def test_stats_and_reset(lan):
    srv, _ = lan
    srv.reset_stats()
    s0 = srv.stats()
    assert s0["requests"] == {"get": 0, "head": 0, "list": 0, "put": 0, "other": 0}
    _get(srv, "/data/a.txt")
    _get(srv, "/data/a.txt", {"Range": "bytes=0-1"})
    _get(srv, "/data/a.txt", method="HEAD")
    _get(srv, "/data/nothing")
    _get(srv, "/data?list-type=2")
    s = srv.stats()
    assert s["requests"]["get"] == 3 and s["requests"]["head"] == 1 and s["requests"]["list"] == 1
    assert s["status"] == {"200": 3, "206": 1, "404": 1}
    assert s["bytes_sent_body"] >= 5 + 2 and s["bytes_sent_total"] > s["bytes_sent_body"]
    assert s["connections_accepted"] >= 5  # urllib: one connection per request
    assert s["slowdown_503"] == 0
    srv.reset_stats()
    assert srv.stats()["requests"]["get"] == 0  # control requests are not counted


# -- the request-rate limit ----------------------------------------------------
@pytest.mark.harness
def test_slowdown_beyond_the_prefix_rate(tmp_path):
    binary = _binary()
    root = tmp_path / "root"
    for p in ("hot", "cold"):
        (root / BUCKET / p).mkdir(parents=True)
        (root / BUCKET / p / "obj").write_bytes(b"0123456789")
    with s3servers.S3Link(root=root, get_rate=20, binary=binary) as srv:
        def get(key):
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=20)
            try:
                statuses = []
                for _ in range(10):
                    c.request("GET", f"/{BUCKET}/{key}", headers={"Range": "bytes=0-3"})
                    r = c.getresponse()
                    statuses.append((r.status, r.read()))
                return statuses
            finally:
                c.close()
        with ThreadPoolExecutor(6) as ex:
            results = [x for batch in ex.map(get, ["hot/obj"] * 6) for x in batch]
        ok = [b for st, b in results if st == 206]
        slow = [b for st, b in results if st == 503]
        assert len(ok) + len(slow) == 60
        # A burst of one second's worth (20), then SlowDown until tokens refill.
        assert 18 <= len(ok) <= 30, len(ok)
        assert len(slow) >= 30
        e = _error(slow[0])
        assert e["Code"] == "SlowDown" and e["Message"] == "Please reduce your request rate."
        assert srv.stats()["slowdown_503"] == len(slow)
        assert srv.stats()["status"]["503"] == len(slow)
        # Another prefix has its own budget.
        st, _, body = _get(srv, "/data/cold/obj", {"Range": "bytes=0-3"})
        assert st == 206 and body == b"0123"
        time.sleep(1.1)
        st, _, _ = _get(srv, "/data/hot/obj")
        assert st == 200
        # The limit can be lifted while running.
        srv.set_rates(get_rate=0)
        with ThreadPoolExecutor(6) as ex:
            assert all(st == 206 for batch in ex.map(get, ["hot/obj"] * 6) for st, _ in batch)


# -- TLS -----------------------------------------------------------------------
@pytest.mark.harness
def test_tls_with_the_written_certificate(tmp_path):
    binary = _binary()
    root = tmp_path / "root"
    (root / BUCKET).mkdir(parents=True)
    data = s3env.det_bytes("tls", 50_000)
    (root / BUCKET / "obj").write_bytes(data)
    with s3servers.S3Link(root=root, tls=True, binary=binary) as srv:
        assert srv.endpoint.startswith("https://127.0.0.1:")
        pem = Path(srv.ca_bundle).read_text()
        assert pem.startswith("-----BEGIN CERTIFICATE-----")
        # boto3 trusting the certificate (verify=, as AWS_CA_BUNDLE would).
        s3 = srv.client()
        assert s3.get_object(Bucket=BUCKET, Key="obj", Range="bytes=100-199")["Body"].read() == data[100:200]
        # urllib with the CA file; HTTP/1.1 negotiated by ALPN.
        ctx = ssl.create_default_context(cafile=srv.ca_bundle)
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        for host in ("127.0.0.1", "localhost"):
            c = http.client.HTTPSConnection(host, srv.port, context=ctx, timeout=20)
            c.request("GET", f"/{BUCKET}/obj")
            r = c.getresponse()
            assert r.status == 200 and r.read() == data and r.version == 11
            assert c.sock.selected_alpn_protocol() == "http/1.1"
            c.close()
        # Without trusting it, verification fails: the certificate is what
        # protects the connection.
        with pytest.raises(urllib.error.URLError) as ei:
            urllib.request.urlopen(srv.endpoint + f"/{BUCKET}/obj", timeout=20,
                                   context=ssl.create_default_context())
        assert isinstance(ei.value.reason, ssl.SSLError)
        assert srv.stats()["requests"]["get"] >= 3


# -- the emulated link ---------------------------------------------------------
@pytest.mark.harness
def test_wan_get_takes_round_trips(tmp_path):
    """--profile wan (RTT 200 ± 20 ms): a GET on a new connection waits for the
    handshake's round trip and its own (about 400 ms), one on a kept
    connection about one round trip. Loose bounds only: the probe measures."""
    binary = _binary()
    root = tmp_path / "root"
    (root / BUCKET).mkdir(parents=True)
    data = s3env.det_bytes("wan", 8192)
    (root / BUCKET / "obj").write_bytes(data)
    with s3servers.S3Link(root=root, profile="wan", binary=binary) as srv:
        assert srv.stats()["link"]["rtt_ms"] == 200
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=20)
        t0 = time.monotonic()
        c.request("GET", f"/{BUCKET}/obj", headers={"Range": "bytes=0-4095"})
        r = c.getresponse()
        body = r.read()
        first = time.monotonic() - t0
        assert r.status == 206 and body == data[:4096]
        t0 = time.monotonic()
        c.request("GET", f"/{BUCKET}/obj", headers={"Range": "bytes=4096-8191"})
        r = c.getresponse()
        body = r.read()
        second = time.monotonic() - t0
        c.close()
        assert r.status == 206 and body == data[4096:]
        assert 0.30 <= first < 2.0, first     # handshake RTT + request RTT
        assert 0.15 <= second < 2.0, second   # one RTT
        assert first > second
        # Control requests bypass the link (through it, a new connection
        # would take two round trips, about 400 ms).
        t0 = time.monotonic()
        srv.stats()
        assert time.monotonic() - t0 < 0.3


# -- sievefs reading from it ---------------------------------------------------
def test_sievefs_mounts_a_bucket_from_s3link(lan, mount):
    srv, files = lan
    mp = mount(bucket=BUCKET, endpoint=srv.endpoint, creds=srv.creds)
    assert (mp / "dir" / "one.bin").read_bytes() == files["dir/one.bin"]
    with open(mp / "dir" / "one.bin", "rb") as f:
        f.seek(54321)
        assert f.read(1000) == files["dir/one.bin"][54321:55321]
    assert sorted(os.listdir(mp / "dir" / "sub")) == ["deep", "y+z"]
    assert (mp / "dir" / "two words.txt").read_bytes() == b"two words"
    assert (mp / "unicode" / "\u00fc\u00e9" / "\u6587\u4ef6").read_bytes() == b"unicode"
