"""The command line: help, version, argument errors, and every mount failure
mode: non-zero exit, exactly one error line naming the cause, no stale mount,
no daemon left behind."""
import errno
import os
import re

import pytest

import s3env
from s3env import Credentials

MOUNT_OPTIONS = ["--endpoint", "--region", "--profile", "--no-sign-request", "--force-path-style",
                 "--cache-size", "--log-level", "--max-connections", "--stall-timeout", "--dir-ttl",
                 "--read-ahead", "--warmup", "--request-cost", "--version", "--timestamp", "--force", "--retry-budget",
                 "--control-dir", "-f", "-o"]


def project_version() -> str:
    text = (s3env.REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(\s*sievefs\s+VERSION\s+([0-9][0-9.]*)", text).group(1)


@pytest.mark.asan
def test_help(run_cli):
    for flag in ("--help", "-h"):
        r = run_cli(flag)
        assert r.returncode == 0, r
        assert "mount" in r.stdout and "s3://" in r.stdout, r
        assert r.stderr == "", r


def help_commands(text: str) -> list:
    """The command names `sievefs --help` lists: the first word of each line
    of its "commands:" block."""
    assert "\ncommands:\n" in text, text
    block = text.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def assert_refused(r, word):
    assert r.returncode == 2, f"`sievefs {word}` runs, but `sievefs --help` does not list it\n{r}"
    assert f"unknown command '{word}'" in r.stderr, r


@pytest.mark.asan
def test_help_lists_every_command(run_cli):
    """--help lists every command the binary runs: each listed command answers
    its own --help, and every `sievefs WORD` the README, docs/ and the usage
    texts mention is either listed or refused as an unknown command."""
    top = run_cli("--help")
    assert top.returncode == 0, top
    listed = help_commands(top.stdout)
    assert listed and len(listed) == len(set(listed)), listed
    texts = [top.stdout, (s3env.REPO / "README.md").read_text()]
    texts += [p.read_text() for p in sorted((s3env.REPO / "docs").glob("*.md"))]
    for cmd in listed:
        r = run_cli(cmd, "--help")
        assert r.returncode == 0, r
        assert r.stdout.strip() and r.stderr == "", r
        texts.append(r.stdout)
    mentioned = {w for t in texts for w in re.findall(r"\bsievefs ([a-z][a-z0-9-]*)", t)}
    assert {"mount", "inspect", "hint"} <= mentioned, "the word scan finds no commands"
    for word in sorted(mentioned - set(listed)) + ["frobnicate"]:
        assert_refused(run_cli(word, "--help"), word)
    # The same usage for `help`, and on stderr (exit 2) with no command at all.
    assert run_cli("help").stdout == top.stdout
    bare = run_cli()
    assert bare.returncode == 2 and bare.stdout == "" and bare.stderr == top.stdout, bare


def test_version(run_cli):
    r = run_cli("--version")
    assert r.returncode == 0, r
    assert project_version() in r.stdout, r


@pytest.mark.asan
def test_mount_help_lists_every_option(run_cli):
    r = run_cli("mount", "--help")
    assert r.returncode == 0, r
    for opt in MOUNT_OPTIONS:
        assert re.search(rf"(^|[\s,]){re.escape(opt)}\b", r.stdout), f"{opt} missing from mount --help"
    assert "MOUNTPOINT" in r.stdout or "mountpoint" in r.stdout.lower()


@pytest.mark.parametrize("args", [
    [], ["frobnicate"], ["--no-such-flag"], ["mount"], ["mount", "s3://bucket"],
    ["mount", "http://bucket/x", "/tmp"], ["mount", "s3://", "/tmp"], ["mount", "s3:///prefix", "/tmp"],
    ["mount", "s3://b", "/tmp", "--cache-size", "lots"], ["mount", "s3://b", "/tmp", "--log-level", "loud"],
    ["mount", "s3://b", "/tmp", "--endpoint"], ["mount", "s3://b", "/tmp", "--bogus"],
    ["mount", "s3://b", "/tmp", "extra-arg"],
    ["mount", "s3://b", "/tmp", "--request-cost", "-1"], ["mount", "s3://b", "/tmp", "--request-cost", "65M"],
    ["mount", "s3://b", "/tmp", "--request-cost", "lots"], ["mount", "s3://b", "/tmp", "--read-ahead", "1G"],
])
def test_usage_errors(run_cli, args):
    r = run_cli(*args)
    assert r.returncode != 0, r
    assert r.stderr.strip(), r
    assert "AddressSanitizer" not in r.stderr


# -- mount failures ---------------------------------------------------------------
def assert_clean_failure(r, mp, cause_re, sievefs_bin):
    assert r.returncode != 0, r
    line = s3env.one_line(r.stderr)
    assert line, f"expected exactly one line on stderr\n{r}"
    assert re.search(cause_re, line, re.I), f"error line does not name the cause ({cause_re}): {line!r}"
    assert not s3env.mounts_at(mp), f"stale mount left at {mp}"
    assert not s3env.procs_matching(sievefs_bin, str(mp)), "daemon left running"
    try:
        os.stat(mp)  # not a dead FUSE mount ("Transport endpoint is not connected")
    except OSError as e:
        assert e.errno != errno.ENOTCONN, f"dead FUSE mount left at {mp}"


@pytest.fixture
def mp(tmp_path):
    d = tmp_path / "mnt"
    d.mkdir()
    return d


@pytest.mark.asan
def test_unreachable_endpoint(run_cli, mp, bucket, sievefs_bin):
    port = s3env.closed_port()
    r = run_cli("mount", f"s3://{bucket()}", mp, "--endpoint", f"http://127.0.0.1:{port}", timeout=45)
    assert_clean_failure(r, mp, rf"connect|refused|unreachable|127\.0\.0\.1:{port}", sievefs_bin)


@pytest.mark.asan
def test_unknown_bucket(run_cli, mp, moto, sievefs_bin):
    r = run_cli("mount", "s3://sv-no-such-bucket-here", mp, "--endpoint", moto.endpoint)
    assert_clean_failure(r, mp, r"NoSuchBucket|no such bucket|does not exist|not found", sievefs_bin)


@pytest.mark.asan
def test_wrong_secret(run_cli, mp, moto, bucket, sievefs_bin):
    b = bucket({"a": b"1"})
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint,
                creds=Credentials(moto.creds.access_key_id, "Zq8SECRETnotTHEsecret77"))
    assert_clean_failure(r, mp, r"SignatureDoesNotMatch|signature|credential|403|denied", sievefs_bin)
    assert "Zq8SECRETnotTHEsecret77" not in r.stderr


def test_unknown_access_key(run_cli, mp, moto, bucket, sievefs_bin):
    b = bucket({"a": b"1"})
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint,
                creds=Credentials("AKIAUNKNOWNKEY000000", "whatever"))
    assert_clean_failure(r, mp, r"InvalidAccessKeyId|access key|credential|403|denied", sievefs_bin)


def test_missing_session_token_is_rejected(run_cli, mp, moto, bucket, sievefs_bin):
    b = bucket({"a": b"1"})
    tmp = moto.temporary_credentials()
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint,
                creds=Credentials(tmp.access_key_id, tmp.secret_access_key))
    assert_clean_failure(r, mp, r"InvalidAccessKeyId|access key|credential|403|denied", sievefs_bin)


def test_no_credentials_anywhere(run_cli, mp, moto, bucket, sievefs_bin):
    b = bucket({"a": b"1"})
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint, creds=None)
    assert_clean_failure(r, mp, r"credential|no-sign-request", sievefs_bin)


def test_anonymous_on_private_bucket(run_cli, mp, moto, bucket, sievefs_bin):
    """--no-sign-request must not sign with the environment's keys."""
    b = bucket({"a": b"1"})
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint, "--no-sign-request")
    assert_clean_failure(r, mp, r"AccessDenied|denied|403|forbidden|credential|anonymous", sievefs_bin)


def test_unknown_profile(run_cli, mp, moto, bucket, sievefs_bin):
    b = bucket({"a": b"1"})
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint, "--profile", "nosuchprofile",
                creds=None)
    assert_clean_failure(r, mp, r"nosuchprofile|profile", sievefs_bin)


@pytest.mark.asan
def test_missing_mountpoint(run_cli, tmp_path, moto, bucket, sievefs_bin):
    b = bucket({"a": b"1"})
    missing = tmp_path / "does-not-exist"
    r = run_cli("mount", f"s3://{b}", missing, "--endpoint", moto.endpoint)
    assert_clean_failure(r, missing, r"does-not-exist|no such file|mount ?point|not exist", sievefs_bin)
    assert not missing.exists()


def test_mountpoint_is_a_file(run_cli, tmp_path, moto, bucket, sievefs_bin):
    b = bucket({"a": b"1"})
    f = tmp_path / "afile"
    f.write_text("x")
    r = run_cli("mount", f"s3://{b}", f, "--endpoint", moto.endpoint)
    assert_clean_failure(r, f, r"afile|not a directory|mount ?point", sievefs_bin)


@pytest.mark.asan
def test_busy_mountpoint(run_cli, mount, bucket, moto, sievefs_bin):
    b = bucket({"a": b"first"})
    m = mount(bucket=b)
    b2 = bucket({"a": b"second"})
    r = run_cli("mount", f"s3://{b2}", m.mp, "--endpoint", moto.endpoint)
    assert r.returncode != 0, r
    line = s3env.one_line(r.stderr)
    assert line and re.search(r"busy|already|mounted|in use", line, re.I), r
    assert len(s3env.mounts_at(m.mp)) == 1, "a second mount was stacked on the busy mountpoint"
    assert (m / "a").read_bytes() == b"first"
    assert m.alive()


def test_failures_never_leave_mounts(run_cli, tmp_path, moto):
    """Belt and braces: after all the failing invocations in this test nothing
    under tmp_path is mounted."""
    for i, endpoint in enumerate([f"http://127.0.0.1:{s3env.closed_port()}", moto.endpoint]):
        d = tmp_path / f"m{i}"
        d.mkdir()
        r = run_cli("mount", "s3://sv-nonexistent-bucket-xyz", d, "--endpoint", endpoint, timeout=45)
        assert r.returncode != 0
    assert not [mp for mp, *_ in s3env.mountinfo() if mp.startswith(str(tmp_path))]


def test_stale_mountpoint(run_cli, mp, moto, bucket, sievefs_bin):
    """A mount whose daemon was killed leaves a dead mountpoint ('Transport
    endpoint is not connected'): mounting there again says so and what to do;
    --force unmounts it first and mounts."""
    b = bucket({"a": b"alive"})
    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint, "--force-path-style")
    assert r.returncode == 0, r
    for pid in s3env.procs_matching(sievefs_bin, str(mp)):
        os.kill(pid, 9)

    def dead():
        try:
            os.stat(mp)
        except OSError as e:
            return e.errno == errno.ENOTCONN
        return False
    assert s3env.wait_for(dead), "killing the daemon should leave a dead mount"

    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint, "--force-path-style")
    assert r.returncode != 0, r
    line = s3env.one_line(r.stderr)
    assert line and "fusermount3 -u" in line and "--force" in line and str(mp) in line, r
    assert len(s3env.mounts_at(mp)) == 1, "the stale mount should be left as it was"

    r = run_cli("mount", f"s3://{b}", mp, "--endpoint", moto.endpoint, "--force-path-style", "--force")
    assert r.returncode == 0, r
    assert "stale" in r.stderr, r
    assert len(s3env.mounts_at(mp)) == 1, "the stale mount should have been replaced"
    assert (mp / "a").read_bytes() == b"alive"
