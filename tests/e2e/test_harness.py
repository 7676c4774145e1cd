"""Self-tests of the e2e harness: moto really verifies SigV4, the moto patches
keep moto's semantics, and the fault proxy does what it claims. None of these
need the sievefs binary."""
import http.client
import subprocess
import urllib.parse

import botocore.exceptions
import pytest

import s3env
from faultproxy import FaultProxy
from s3env import Credentials

pytestmark = pytest.mark.harness


def _code(exc) -> str:
    return exc.value.response["Error"]["Code"]


def test_moto_verifies_signatures(moto, bucket):
    b = bucket({"k": b"payload"})
    good = moto.client("s3")
    assert good.get_object(Bucket=b, Key="k")["Body"].read() == b"payload"

    wrong_secret = moto.client("s3", creds=Credentials(moto.creds.access_key_id, "not-the-secret"))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        wrong_secret.get_object(Bucket=b, Key="k")
    assert _code(e) == "SignatureDoesNotMatch"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403

    unknown = moto.client("s3", creds=Credentials("AKIAUNKNOWNKEY000000", "x"))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        unknown.list_objects_v2(Bucket=b)
    assert _code(e) == "InvalidAccessKeyId"


def test_moto_session_tokens_are_checked(moto, bucket):
    b = bucket({"k": b"payload"})
    tmp = moto.temporary_credentials()
    assert tmp.access_key_id.startswith("ASIA") and tmp.session_token
    assert moto.client("s3", creds=tmp).get_object(Bucket=b, Key="k")["Body"].read() == b"payload"
    no_token = moto.client("s3", creds=Credentials(tmp.access_key_id, tmp.secret_access_key))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        no_token.get_object(Bucket=b, Key="k")
    assert _code(e) == "InvalidAccessKeyId"
    bad_token = moto.client("s3", creds=Credentials(tmp.access_key_id, tmp.secret_access_key, "bogus"))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        bad_token.get_object(Bucket=b, Key="k")
    assert _code(e) == "InvalidToken"


def test_moto_rejects_unsigned_requests(moto, bucket):
    b = bucket({"k": b"payload"})
    c = http.client.HTTPConnection("127.0.0.1", moto.port, timeout=10)
    c.request("GET", f"/{b}/k")
    r = c.getresponse()
    r.read()
    assert r.status == 403


def test_curl_sigv4_against_moto(moto, bucket, tmp_path):
    data = s3env.det_bytes("curl", 300_000)
    b = bucket({"dir/obj": data})
    out = tmp_path / "out"
    r = subprocess.run(["curl", "-sS", "-o", str(out), "-w", "%{http_code}",
                        *s3env.curl_sigv4_args(moto.creds), f"{moto.endpoint}/{b}/dir/obj"],
                       capture_output=True, text=True, env=s3env.clean_env(), timeout=60)
    assert r.stdout == "200", r.stderr
    assert out.read_bytes() == data
    r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                        *s3env.curl_sigv4_args(Credentials(moto.creds.access_key_id, "wrong")),
                        f"{moto.endpoint}/{b}/dir/obj"],
                       capture_output=True, text=True, env=s3env.clean_env(), timeout=60)
    assert r.stdout == "403"


def test_moto_caps_list_page_at_1000(s3, bucket):
    b = bucket({f"k{i:05d}": b"" for i in range(1100)})
    page = s3.list_objects_v2(Bucket=b, MaxKeys=5000)
    assert page["KeyCount"] == 1000 and page["IsTruncated"] is True
    assert len(s3env.list_all(s3, b)) == 1100


RANGES = ["bytes=0-0", "bytes=0-99", "bytes=5-", "bytes=-10", "bytes=-999999", "bytes=123456-123999",
          "bytes=299990-400000", "bytes=299999-299999", "bytes=0-299999", "bytes=10-5", "bytes=0-1,5-6",
          "bytes=abc"]


@pytest.mark.parametrize("rng", RANGES)
def test_fast_range_patch_matches_http_semantics(s3, bucket, rng):
    """The moto ranged-GET patch must return exactly the bytes RFC 9110 says."""
    data = s3env.det_bytes("range", 300_000)
    b = bucket({"obj": data}, hint="rng")
    r = s3.get_object(Bucket=b, Key="obj", Range=rng)
    body = r["Body"].read()
    spec = rng.split("=", 1)[1]
    n = len(data)
    if "," in spec or not all(p == "" or p.isdigit() for p in spec.split("-")):
        want, status = data, 200
    else:
        a, z = spec.split("-")
        if a == "":
            start, end = n - min(int(z), n), n - 1
        else:
            start, end = int(a), min(int(z), n - 1) if z else n - 1
        if start > end:
            want, status = data, 200
        else:
            want, status = data[start:end + 1], 206
            assert r["ContentRange"] == f"bytes {start}-{end}/{n}"
    assert r["ResponseMetadata"]["HTTPStatusCode"] == status
    assert body == want


def test_range_past_eof_is_416(s3, bucket):
    b = bucket({"obj": b"12345"})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=b, Key="obj", Range="bytes=5-10")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 416


def test_if_match_enforced(s3, bucket):
    b = bucket({"obj": b"version one"})
    etag = s3.head_object(Bucket=b, Key="obj")["ETag"]
    assert s3.get_object(Bucket=b, Key="obj", IfMatch=etag, Range="bytes=0-3")["Body"].read() == b"vers"
    s3.put_object(Bucket=b, Key="obj", Body=b"version two!")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=b, Key="obj", IfMatch=etag, Range="bytes=0-3")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412


# -- fault proxy ---------------------------------------------------------------------
@pytest.fixture
def via_proxy(moto, proxy):
    return moto.client("s3", endpoint_url=proxy.endpoint)


def test_proxy_passthrough_keeps_signatures(via_proxy, proxy, bucket):
    data = s3env.det_bytes("pt", 2_000_000)
    b = bucket({"a b/c+d%e=f": data})
    assert via_proxy.get_object(Bucket=b, Key="a b/c+d%e=f")["Body"].read() == data
    r = via_proxy.get_object(Bucket=b, Key="a b/c+d%e=f", Range="bytes=10-19")
    assert r["Body"].read() == data[10:20]
    keys = [o["Key"] for o in via_proxy.list_objects_v2(Bucket=b)["Contents"]]
    assert keys == ["a b/c+d%e=f"]
    gets = proxy.records("get")
    assert gets and all(g.key == "a b/c+d%e=f" for g in gets)
    assert "authorization" in gets[0].headers


def test_proxy_status_then_success(moto, proxy, bucket):
    b = bucket({"k": b"abc"})
    raw = moto.client("s3", endpoint_url=proxy.endpoint)
    raw.meta.events.unregister("needs-retry.s3", None)  # keep boto3 retries: count attempts instead
    proxy.add("get", "status", times=2, status=503)
    assert raw.get_object(Bucket=b, Key="k")["Body"].read() == b"abc"
    assert [r.status for r in proxy.records("get")] == [503, 503, 200]


def _raw_get(proxy, creds, bucket, key, rng=None):
    """A single signed GET without retries, through the proxy, with urllib3."""
    import botocore.auth
    import botocore.awsrequest
    import botocore.credentials
    url = f"{proxy.endpoint}/{bucket}/{urllib.parse.quote(key)}"
    headers = {"Range": rng} if rng else {}
    req = botocore.awsrequest.AWSRequest("GET", url, headers=headers)
    botocore.auth.S3SigV4Auth(botocore.credentials.Credentials(creds.access_key_id, creds.secret_access_key),
                              "s3", "us-east-1").add_auth(req)
    c = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    c.request("GET", urllib.parse.urlsplit(url).path, headers=dict(req.headers.items()))
    return c.getresponse()


def test_proxy_truncate_body(moto, proxy, bucket):
    data = s3env.det_bytes("trunc", 100_000)
    b = bucket({"k": data})
    proxy.add("get", "truncate_body", times=1)
    r = _raw_get(proxy, moto.creds, b, "k")
    assert int(r.getheader("Content-Length")) == len(data)
    with pytest.raises(http.client.IncompleteRead):
        r.read()
    r = _raw_get(proxy, moto.creds, b, "k")
    assert r.read() == data


def test_proxy_short_body_and_content_range(moto, proxy, bucket):
    data = s3env.det_bytes("cr", 100_000)
    b = bucket({"k": data})
    proxy.add("get", "short_body", times=1)
    r = _raw_get(proxy, moto.creds, b, "k", "bytes=1000-1999")
    body = r.read()
    assert r.status == 206 and r.getheader("Content-Range") == "bytes 1000-1999/100000" and len(body) == 500
    proxy.add("get", "content_range", times=1, mode="shift")
    r = _raw_get(proxy, moto.creds, b, "k", "bytes=1000-1999")
    assert r.getheader("Content-Range") == "bytes 5096-6095/100000" and r.read() == data[1000:2000]
    proxy.add("get", "ignore_range", times=1)
    r = _raw_get(proxy, moto.creds, b, "k", "bytes=1000-1999")
    assert r.status == 200 and r.read() == data


def test_proxy_reset_and_stall(moto, proxy, bucket):
    b = bucket({"k": b"xyz"})
    proxy.add("get", "reset", times=1)
    with pytest.raises((ConnectionError, http.client.RemoteDisconnected, OSError)):
        _raw_get(proxy, moto.creds, b, "k").read()
    proxy.add("get", "stall", times=1, seconds=None)
    with pytest.raises(TimeoutError):
        import botocore.auth  # noqa: F401
        c = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=1)
        c.request("GET", f"/{b}/k")
        c.getresponse()
    assert _raw_get(proxy, moto.creds, b, "k").read() == b"xyz"


@pytest.mark.parametrize("mode", ["truncate_xml", "garbage", "empty", "unclosed_tag"])
def test_proxy_listing_corruption_breaks_boto3(via_proxy, proxy, bucket, mode):
    b = bucket({"a": b"1", "b": b"22"})
    proxy.add("list", "listing", mode=mode)
    with pytest.raises(Exception):
        via_proxy.list_objects_v2(Bucket=b)["Contents"]
    proxy.clear()
    assert len(via_proxy.list_objects_v2(Bucket=b)["Contents"]) == 2


def test_proxy_listing_semantic_corruption(via_proxy, proxy, bucket):
    """Corruptions boto3 itself swallows; check they are applied."""
    b = bucket({"a": b"1", "b": b"22"})
    proxy.add("list", "listing", times=1, mode="bad_size")
    assert via_proxy.list_objects_v2(Bucket=b)["Contents"][0]["Size"] == -12
    proxy.add("list", "listing", times=1, mode="truncated_no_token")
    page = via_proxy.list_objects_v2(Bucket=b)
    assert page["IsTruncated"] is True and "NextContinuationToken" not in page
    proxy.add("list", "listing", times=1, mode="long_key")
    assert len(via_proxy.list_objects_v2(Bucket=b)["Contents"][0]["Key"]) == 5001


def test_noauth_moto_serves_public_objects_unsigned(moto_noauth):
    s3 = moto_noauth.client("s3")
    s3.create_bucket(Bucket="sv-noauth-selftest")
    s3.put_object(Bucket="sv-noauth-selftest", Key="k", Body=b"open", ACL="public-read")
    s3.put_object(Bucket="sv-noauth-selftest", Key="private", Body=b"closed")
    for path, want in [("/sv-noauth-selftest/k", (200, b"open")), ("/sv-noauth-selftest/private", (403, b""))]:
        c = http.client.HTTPConnection("127.0.0.1", moto_noauth.port, timeout=10)
        c.request("GET", path)
        r = c.getresponse()
        assert (r.status, r.read()) == want


def test_mountinfo_parser(tmp_path):
    rows = s3env.mountinfo()
    # /proc, not "/": a chroot lists only what was mounted into it.
    assert any(r[0] == "/proc" and r[1] == "proc" for r in rows)
    assert s3env._unescape_mountinfo(r"/a\040b") == "/a b"
    assert not s3env.mounts_at(tmp_path)
