"""Credential, profile, endpoint and region resolution. moto verifies every
signature, so a mount that reads correct bytes used the right secret; the
fault proxy (pass-through) shows what was sent (region scope, token, no
Authorization for --no-sign-request)."""
import re

import pytest

import s3env
from s3env import Credentials

DATA = b"credential test payload\n" * 100
WRONG = Credentials("AKIAWRONGWRONGWRONG0", "wrongwrongwrongwrongwrongwrongwrongwron")


def ini(path, sections: dict):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, kv in sections.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {v}" for k, v in kv.items()]
        lines.append("")
    path.write_text("\n".join(lines))


def keys(c: Credentials) -> dict:
    d = {"aws_access_key_id": c.access_key_id, "aws_secret_access_key": c.secret_access_key}
    if c.session_token:
        d["aws_session_token"] = c.session_token
    return d


@pytest.fixture
def data_bucket(bucket):
    return bucket({"d/f.txt": DATA})


def check(m):
    assert (m / "d/f.txt").read_bytes() == DATA


def test_env_credentials(mount, data_bucket):
    check(mount(bucket=data_bucket))


@pytest.mark.asan
def test_session_token_from_env(mount, moto, data_bucket, proxy):
    tmp = moto.temporary_credentials()
    m = mount(bucket=data_bucket, creds=tmp, endpoint=proxy.endpoint)
    check(m)
    recs = proxy.records()
    assert recs and all(r.headers.get("x-amz-security-token") == tmp.session_token for r in recs)


def test_credentials_file_default_profile(mount, moto, data_bucket, home):
    ini(home / ".aws/credentials", {"default": keys(moto.creds)})
    check(mount(bucket=data_bucket, creds=None))


def test_named_profile_via_flag(mount, moto, data_bucket, home):
    ini(home / ".aws/credentials", {"default": keys(WRONG), "good": keys(moto.creds)})
    check(mount(bucket=data_bucket, creds=None, args=["--profile", "good"]))


def test_named_profile_via_env(mount, moto, data_bucket, home):
    ini(home / ".aws/credentials", {"default": keys(WRONG), "good": keys(moto.creds)})
    check(mount(bucket=data_bucket, creds=None, env={"AWS_PROFILE": "good"}))


def test_session_token_in_credentials_file(mount, moto, data_bucket, home):
    tmp = moto.temporary_credentials()
    ini(home / ".aws/credentials", {"default": keys(tmp)})
    check(mount(bucket=data_bucket, creds=None))


def test_shared_credentials_file_env(mount, moto, data_bucket, home, tmp_path):
    ini(home / ".aws/credentials", {"default": keys(WRONG)})
    other = tmp_path / "elsewhere" / "creds.ini"
    ini(other, {"default": keys(moto.creds)})
    check(mount(bucket=data_bucket, creds=None, env={"AWS_SHARED_CREDENTIALS_FILE": other}))


def test_config_file_profile(mount, moto, data_bucket, tmp_path):
    cfg = tmp_path / "aws-config"
    ini(cfg, {"profile cfgonly": {**keys(moto.creds), "region": "us-east-1"}})
    check(mount(bucket=data_bucket, creds=None, args=["--profile", "cfgonly"], env={"AWS_CONFIG_FILE": cfg}))


def test_config_file_in_home(mount, moto, data_bucket, home):
    ini(home / ".aws/config", {"default": keys(moto.creds)})
    check(mount(bucket=data_bucket, creds=None))


def test_env_beats_credentials_file(mount, moto, data_bucket, home):
    ini(home / ".aws/credentials", {"default": keys(WRONG)})
    check(mount(bucket=data_bucket))  # env holds the good keys


def test_explicit_profile_beats_env(mount, moto, data_bucket, home):
    """--profile names a profile explicitly: it wins over AWS_ACCESS_KEY_ID
    (AWS CLI behaviour, documented in fs/core/aws_config.h)."""
    ini(home / ".aws/credentials", {"good": keys(moto.creds)})
    check(mount(bucket=data_bucket, creds=WRONG, args=["--profile", "good"]))


def test_endpoint_from_env(mount, moto, data_bucket, sievefs_bin, tmp_path, home):
    """AWS_ENDPOINT_URL instead of --endpoint."""
    import subprocess
    mp = tmp_path / "mnt-env-endpoint"
    mp.mkdir()
    env = s3env.clean_env(home=home, extra={**moto.creds.env(), "AWS_ENDPOINT_URL": moto.endpoint})
    r = subprocess.run([sievefs_bin, "mount", f"s3://{data_bucket}", str(mp)], env=env,
                       capture_output=True, text=True, timeout=60)
    try:
        assert r.returncode == 0, r.stderr
        assert (mp / "d/f.txt").read_bytes() == DATA
    finally:
        pids = s3env.procs_matching(sievefs_bin, str(mp))
        notes = s3env.unmount(mp, pids)
        assert not notes, notes


def _scopes(proxy):
    out = set()
    for r in proxy.records():
        a = r.headers.get("authorization", "")
        mm = re.search(r"Credential=[^/]+/\d{8}/([^/]+)/s3/aws4_request", a)
        assert mm, f"request without SigV4 Authorization: {r.method} {r.path} {a!r}"
        out.add(mm.group(1))
    return out


@pytest.mark.parametrize("how", ["flag", "AWS_REGION", "AWS_DEFAULT_REGION", "profile", "default"])
def test_region_used_for_signing(mount, data_bucket, proxy, home, moto, how):
    args, env, creds = [], {}, "default"
    want = {"flag": "eu-west-3", "AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "sa-east-1",
            "profile": "ca-central-1", "default": "us-east-1"}[how]
    if how == "flag":
        args = ["--region", want]
        env = {"AWS_REGION": "us-west-1"}  # the flag wins
    elif how in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        env = {how: want}
    elif how == "profile":
        ini(home / ".aws/config", {"default": {"region": want}})
    m = mount(bucket=data_bucket, endpoint=proxy.endpoint, args=args, env=env, creds=creds)
    check(m)
    assert _scopes(proxy) == {want}


def test_no_sign_request_sends_no_credentials(mount, moto_noauth, proxy_noauth):
    s3 = moto_noauth.client("s3")
    b = "sv-public-" + s3env.det_bytes("pubname", 4).hex()
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="pub/f.txt", Body=DATA, ACL="public-read")
    s3.put_object(Bucket=b, Key="pub/private.txt", Body=b"secret", ACL="private")
    m = mount(bucket=b, endpoint=proxy_noauth.endpoint, args=["--no-sign-request"],
              allow_stderr=[r"private\.txt|403|AccessDenied|denied"])
    assert (m / "pub/f.txt").read_bytes() == DATA
    with pytest.raises(OSError):
        (m / "pub/private.txt").read_bytes()
    recs = proxy_noauth.records()
    assert recs
    for r in recs:
        assert "authorization" not in r.headers, r.path
        assert not any(k.startswith("x-amz-security-token") for k in r.headers)
        assert "X-Amz-Credential" not in r.path


@pytest.fixture
def proxy_noauth(moto_noauth):
    from faultproxy import FaultProxy
    p = FaultProxy(moto_noauth.endpoint).start()
    yield p
    p.stop()


@pytest.mark.allow_stderr(r".")  # debug output may legitimately mention "error" counters
def test_secrets_never_logged(mount, moto, data_bucket):
    tmp = moto.temporary_credentials()
    m = mount(bucket=data_bucket, creds=tmp, args=["--log-level", "trace"])
    check(m)
    m.unmount()
    err = m.stderr()
    assert err.strip(), "trace logging produced no output at all"
    assert tmp.secret_access_key not in err
    assert tmp.session_token not in err
