"""MOUNT/.sieve/stats: a JSON control file, hidden from the root listing."""
import json
import os
import stat

import pytest

import s3env

FIELDS = ("fuse_reads", "fuse_read_bytes", "s3_requests", "s3_bytes_fetched", "cache_hit_bytes",
          "retries", "errors")
MiB = 1 << 20


def check_shape(st: dict):
    for f in FIELDS:
        assert f in st, f"stats lacks {f}: {sorted(st)}"
        assert isinstance(st[f], int) and not isinstance(st[f], bool) and st[f] >= 0, (f, st[f])


@pytest.mark.asan
def test_sieve_hidden_but_reachable(bucket, mount):
    m = mount(bucket=bucket({"a.txt": b"a", "d/b.txt": b"b"}))
    root = os.listdir(m.mp)
    assert ".sieve" not in root
    assert sorted(root) == ["a.txt", "d"]
    assert ".sieve" not in [e.name for e in os.scandir(m.mp)]
    assert stat.S_ISDIR(os.stat(m / ".sieve").st_mode)
    assert stat.S_ISREG(os.stat(m / ".sieve/stats").st_mode)
    assert "stats" in os.listdir(m / ".sieve")
    check_shape(m.stats())
    # only at the root
    with pytest.raises(FileNotFoundError):
        os.stat(m / "d/.sieve")


def test_sieve_stats_is_valid_json_via_plain_reads(bucket, mount):
    m = mount(bucket=bucket({"a": b"a"}))
    p = m / ".sieve/stats"
    with open(p, "rb") as f:
        raw = f.read()
    st = json.loads(raw)
    check_shape(st)
    # small reads must stitch into the same document shape
    with open(p, "rb", buffering=0) as f:
        parts = []
        while chunk := f.read(7):
            parts.append(chunk)
    check_shape(json.loads(b"".join(parts)))


@pytest.mark.asan
def test_stats_grow_after_reads(bucket, mount):
    data = s3env.det_bytes("stats", 5 * MiB + 3)
    m = mount(bucket=bucket({"f.bin": data}))
    before = m.stats()
    check_shape(before)
    assert (m / "f.bin").read_bytes() == data
    after = m.stats()
    check_shape(after)
    assert after["fuse_reads"] > before["fuse_reads"]
    assert after["fuse_read_bytes"] - before["fuse_read_bytes"] >= len(data)
    assert after["s3_requests"] > before["s3_requests"]
    assert after["s3_bytes_fetched"] - before["s3_bytes_fetched"] >= len(data)
    for f in FIELDS:
        assert after[f] >= before[f], f  # counters never go backwards


def test_stats_fresh_on_every_open(bucket, mount):
    """Each open of .sieve/stats must show current numbers (no stale page
    cache or size)."""
    m = mount(bucket=bucket({f"f{i}": s3env.det_bytes(f"st{i}", 300_000) for i in range(5)}))
    last = m.stats()
    for i in range(5):
        (m / f"f{i}").read_bytes()
        cur = m.stats()
        assert cur["fuse_read_bytes"] >= last["fuse_read_bytes"] + 300_000, (i, last, cur)
        last = cur


def test_cache_hits_after_page_cache_drop(bucket, mount):
    """With a block cache big enough for the file, re-reading it after the
    kernel dropped its page cache is served (at least partly) from sievefs's
    cache: cache_hit_bytes grows and the bytes are still right."""
    data = s3env.det_bytes("cache", 4 * MiB)
    m = mount(bucket=bucket({"f.bin": data}), args=["--cache-size", str(256 * MiB)])
    assert (m / "f.bin").read_bytes() == data
    before = m.stats()
    with open(m / "f.bin", "rb", buffering=0) as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        got = f.read()
    after = m.stats()
    assert got == data
    assert after["fuse_read_bytes"] > before["fuse_read_bytes"], "page cache drop had no effect"
    assert after["cache_hit_bytes"] > before["cache_hit_bytes"]


def test_one_memory_budget_holds_cache_and_listings(bucket, mount):
    """--cache-size is the mount's one budget: listings count in it beside the
    cache blocks, and reading three times the budget keeps both within it."""
    objects = {f"many/o{i:04d}": b"x" for i in range(500)}
    big = {f"big/{i}.bin": s3env.det_bytes(f"b{i}", 16 * MiB) for i in range(3)}
    m = mount(bucket=bucket({**objects, **big}), args=["--cache-size", "16M"])
    st = m.stats()
    assert st["memory_budget_bytes"] == 16 * MiB
    before = st["memory_outside_cache_bytes"]
    assert len(os.listdir(m / "many")) == 500
    listed = m.stats()["memory_outside_cache_bytes"]
    assert listed - before > 500 * 64, (before, listed)
    for name, data in big.items():
        assert (m / name).read_bytes() == data
        st = m.stats()
        # demand reads may hold a few pinned blocks over it while they reply
        assert st["cache_bytes"] + st["memory_outside_cache_bytes"] <= 16 * MiB + MiB, st
