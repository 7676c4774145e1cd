"""Mount/unmount lifecycle: background mode returns only when the mount
answers, SIGTERM and fusermount3 -u unmount cleanly, -o reaches the kernel."""
import os
import signal
import time

import pytest

import s3env


@pytest.mark.asan
def test_background_mount_answers_on_return(mount, bucket):
    b = bucket({"x/y.txt": b"hello"})
    m = mount(bucket=b, foreground=False)  # the fixture asserts ismount+stat right after exit 0
    assert sorted(os.listdir(m.mp)) == ["x"]
    assert (m / "x/y.txt").read_bytes() == b"hello"
    pids = m.daemon_pids()
    assert len(pids) == 1, pids  # exactly one daemon, detached from the CLI process


def test_background_unmount_ends_daemon(mount, bucket):
    m = mount(bucket=bucket({"a": b"1"}), foreground=False)
    (pid,) = m.daemon_pids()
    notes = m.unmount()
    assert not notes, notes
    assert not s3env.mounts_at(m.mp)
    assert s3env.wait_for(lambda: not s3env.pid_alive(pid), 15), "daemon still running after fusermount3 -u"


@pytest.mark.asan
def test_sigterm_foreground(mount, bucket):
    m = mount(bucket=bucket({"a": b"1"}))
    assert (m / "a").read_bytes() == b"1"
    m.proc.send_signal(signal.SIGTERM)
    rc = m.proc.wait(20)
    assert rc == 0, f"daemon exit status {rc} after SIGTERM"
    assert not s3env.mounts_at(m.mp), "SIGTERM left the mount behind"
    assert os.listdir(m.mp) == []  # the plain, empty directory again


def test_sigterm_background(mount, bucket):
    m = mount(bucket=bucket({"a": b"1"}), foreground=False)
    (pid,) = m.daemon_pids()
    os.kill(pid, signal.SIGTERM)
    assert s3env.wait_for(lambda: not s3env.pid_alive(pid), 20), "daemon ignored SIGTERM"
    assert not s3env.mounts_at(m.mp), "SIGTERM left the mount behind"
    os.stat(m.mp)


def test_sigint_foreground(mount, bucket):
    m = mount(bucket=bucket({"a": b"1"}))
    m.proc.send_signal(signal.SIGINT)
    assert m.proc.wait(20) == 0
    assert not s3env.mounts_at(m.mp)


# kernel readahead may still be in flight when SIGTERM arrives
@pytest.mark.allow_stderr(r"client shutting down")
def test_sigterm_with_open_file(mount, bucket):
    """An open file handle must not keep the daemon from exiting, and must
    not crash it."""
    data = s3env.det_bytes("open", 3 << 20)
    m = mount(bucket=bucket({"f": data}))
    f = open(m / "f", "rb")
    try:
        assert f.read(1000) == data[:1000]
        m.proc.send_signal(signal.SIGTERM)
        rc = m.proc.wait(20)
        assert rc == 0, rc
    finally:
        try:
            f.close()
        except OSError:
            pass
    # The daemon detaches its mount on the way out (lazily: the open file
    # kept it busy), so nothing is left in the mount table; the test must
    # not unmount it itself before asserting that.
    assert s3env.wait_for(lambda: not s3env.mounts_at(m.mp), 10), \
        f"SIGTERM with an open file left the mount behind: {s3env.mounts_at(m.mp)}"
    os.stat(m.mp)  # the plain directory again, not a dead FUSE mount (ENOTCONN)


def test_fusermount_while_reading_other_mount(mount, bucket):
    """Two mounts; unmounting one leaves the other working."""
    b = bucket({"a": b"A" * 5000})
    m1 = mount(bucket=b)
    m2 = mount(bucket=b)
    m1.unmount()
    assert m1.proc.returncode == 0
    assert (m2 / "a").read_bytes() == b"A" * 5000


def test_fuse_options_reach_the_kernel(mount, bucket):
    m = mount(bucket=bucket({"a": b"1"}), args=["-o", "allow_other"])
    (row,) = s3env.mounts_at(m.mp)
    assert "allow_other" in row[3].split(","), row
    assert row[1].startswith("fuse"), row


def test_remount_same_mountpoint(mount, bucket, tmp_path):
    mp = tmp_path / "again"
    b = bucket({"a": b"one"})
    for i in range(3):
        m = mount(bucket=b, mp=mp)
        assert (m / "a").read_bytes() == b"one"
        m.unmount()
        assert m.proc.returncode == 0
        assert not s3env.mounts_at(mp)


def test_idle_mount_stays_up(mount, bucket):
    """No timer-driven crash in the first seconds of idling (dir TTLs,
    connection reaping)."""
    m = mount(bucket=bucket({"a": b"1"}), args=["--dir-ttl", "1"])
    os.listdir(m.mp)
    time.sleep(3)
    assert m.alive()
    assert os.listdir(m.mp) == ["a"]
    assert (m / "a").read_bytes() == b"1"
