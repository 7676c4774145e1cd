"""`sievefs inspect`: the layout of a Parquet file (row groups, column chunks,
and with --pages every page and its partial-read eligibility), as text or
JSON, for local files, files read through a mount, and s3:// objects.

Expected values come from pyarrow's metadata API, from the committed fixture
facts (tests/fixtures/parquet/*.json), and from the independent pure-Python
page-header walker in tests/fixtures/gen_parquet_fixtures.py (loaded here
without its numpy-using parts) over the thrift reader beside it."""
import ast
import importlib.util
import json
import random
import re
import struct

import pytest

import s3env

FIXDIR = s3env.REPO / "tests" / "fixtures" / "parquet"
GEN = s3env.REPO / "tests" / "fixtures" / "gen_parquet_fixtures.py"
FIXTURES = sorted(p.stem for p in FIXDIR.glob("*.parquet"))

CONVERTED = ["UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS",
             "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32",
             "UINT_64", "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"]
ENCODINGS = ["PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
             "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY",
             "BYTE_STREAM_SPLIT"]
PAGE_TYPES = ["DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"]
# pyarrow's logical type names (str(logical_type) up to "(") -> ours.
LOGICAL = {"INT": "INTEGER", "NONE": "NONE", "NULL": "UNKNOWN"}
REASONS = {"eligible", "not_data_page", "nested", "no_offset_index", "no_header", "v2_page",
           "dictionary", "boolean", "byte_array_plain", "encoding", "compressed", "zstd_unchecked",
           "zstd_frame", "zstd_compressed_blocks", "crc", "snappy_literals", "dictionary_entries",
           "snappy_unchecked", "snappy_copies", "dictionary_strings"}
ELIGIBLE = {"eligible", "snappy_literals", "dictionary_entries"}
# What a dictionary page may be: kept in part, or why not.
DICT_REASONS = {"not_data_page", "dictionary_entries", "dictionary_strings", "nested", "compressed",
                "zstd_frame", "zstd_compressed_blocks", "snappy_copies"}
PAGE_KEYS = ["offset", "header_length", "compressed_size", "uncompressed_size", "first_row",
             "num_rows", "num_values", "type", "encoding", "def_encoding", "rep_encoding",
             "def_levels_length", "rep_levels_length", "crc", "eligible", "reason"]
COLUMN_KEYS = ["path", "offset", "length", "codec", "encodings", "num_values",
               "total_compressed_size", "total_uncompressed_size", "has_offset_index",
               "has_column_index", "dictionary_page_offset", "data_page_offset"]


# -- the independent walker ------------------------------------------------------
def _load_walker() -> dict:
    """parse_page_header, zstd_blocks and walk_pages from the fixture
    generator, without executing the rest of it (it needs numpy), and the
    Reader they use (tests/fixtures/thrift_reader.py)."""
    spec = importlib.util.spec_from_file_location("thrift_reader", GEN.parent / "thrift_reader.py")
    reader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reader)
    tree = ast.parse(GEN.read_text(), str(GEN))
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef)
            and n.name in {"parse_page_header", "zstd_blocks", "walk_pages"}]
    assert len(keep) == 3, "walker functions not found in gen_parquet_fixtures.py"
    mod = ast.Module(body=[ast.Import(names=[ast.alias("struct")]),
                          ast.Import(names=[ast.alias("zlib")])] + keep, type_ignores=[])
    ns: dict = {"Reader": reader.Reader}
    exec(compile(ast.fix_missing_locations(mod), str(GEN), "exec"), ns)
    return ns


WALKER = _load_walker()


def walker_pages(path) -> list:
    """Per row group, per column: the pages the Python walker finds, with
    first_row from the OffsetIndex (read raw from the footer) when there is one,
    and the OffsetIndex page locations."""
    import pyarrow.parquet as pq
    data = open(path, "rb").read()
    flen = struct.unpack("<I", data[-8:-4])[0]
    footer = WALKER["Reader"](data[-8 - flen:-8]).struct()
    md = pq.ParquetFile(path).metadata
    out = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        cols = []
        for ci in range(rg.num_columns):
            col = rg.column(ci)
            start = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
            max_rep = md.schema.column(ci).max_repetition_level
            pages = WALKER["walk_pages"](data, start, col.total_compressed_size, col, max_rep)
            cc = footer[4][g][1][ci]
            locs = None
            if 4 in cc and 5 in cc:
                oi = WALKER["Reader"](data, cc[4]).struct()
                locs = [{"offset": l[1], "compressed_page_size": l[2], "first_row_index": l[3]}
                        for l in oi[1]]
                data_pages = [p for p in pages if p["type"] in (0, 3)]
                assert len(data_pages) == len(locs)
                nxt = [l["first_row_index"] for l in locs[1:]] + [rg.num_rows]
                for p, l, n in zip(data_pages, locs, nxt):
                    p["first_row"] = l["first_row_index"]
                    p["num_rows_oi"] = n - l["first_row_index"]
            cols.append({"pages": pages, "offset_index": locs})
        out.append(cols)
    return out


# -- helpers -------------------------------------------------------------------------
def inspect_json(run_cli, target, *args, **kw) -> dict:
    r = run_cli("inspect", target, "--json", *args, **kw)
    assert r.returncode == 0, r
    assert r.stderr == "", r
    assert r.stdout.count("\n") == 1 and r.stdout.endswith("\n"), "JSON output is one line"
    return json.loads(r.stdout)


def without_file(doc: dict) -> dict:
    d = dict(doc)
    d.pop("file")
    return d


def s3_args(moto) -> list:
    return ["--endpoint", moto.endpoint, "--force-path-style"]


def assert_one_error_line(r, *needles, status=1):
    assert r.returncode == status, r
    line = s3env.one_line(r.stderr)
    assert line.startswith("sievefs: error: "), f"expected one error line\n{r}"
    for n in needles:
        assert re.search(n, line, re.I), f"{n!r} not in {line!r}"
    return line


def make_table(n: int, seed: str):
    """Deterministic columns without numpy: a sequence, random int64s (zstd
    cannot shrink them), random doubles, strings."""
    import pyarrow as pa
    rnd = random.Random(seed)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "rnd": pa.array([rnd.getrandbits(63) for _ in range(n)], pa.int64()),
        "val": pa.array([rnd.random() for _ in range(n)], pa.float64()),
        "s": pa.array([f"s{rnd.randrange(10**6)}" for _ in range(n)], pa.string()),
    })


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    """Files well past the tail read, with and without page index, in
    several codecs and page sizes."""
    import pyarrow.parquet as pq
    d = tmp_path_factory.mktemp("inspect-big")
    t = make_table(300_000, "inspect")
    files = {
        "plain_index.parquet": dict(compression="none", use_dictionary=False, write_page_index=True,
                                    data_page_size=256 << 10, row_group_size=150_000),
        "small_pages.parquet": dict(compression="none", use_dictionary=False, write_page_index=True,
                                    data_page_size=8 << 10, row_group_size=100_000),
        "zstd_index.parquet": dict(compression="zstd", use_dictionary=["s"], write_page_index=True,
                                   data_page_size=128 << 10, row_group_size=100_000),
        "plain_noindex.parquet": dict(compression="none", use_dictionary=False,
                                      write_page_index=False, row_group_size=100_000),
        "v2_snappy_index.parquet": dict(compression="snappy", data_page_version="2.0",
                                        write_page_index=True, write_page_checksum=True),
    }
    out = {}
    for name, opts in files.items():
        p = d / name
        pq.write_table(t, p, **opts)
        out[name] = p
    return out


def read_log(stderr: str) -> list:
    """(offset, length) of every read from --log-level debug output."""
    return [(int(m.group(2)), int(m.group(1)))
            for m in re.finditer(r"debug: read (\d+) bytes at (\d+)", stderr)]


# -- help ---------------------------------------------------------------------------
def test_help(run_cli):
    r = run_cli("inspect", "--help")
    assert r.returncode == 0, r
    for opt in ["--json", "--pages", "--endpoint", "--region", "--profile", "--no-sign-request",
                "--force-path-style"]:
        assert re.search(rf"(^|\s){re.escape(opt)}\b", r.stdout), f"{opt} missing from inspect --help"
    assert "s3://BUCKET/KEY" in r.stdout
    top = run_cli("--help")
    assert "inspect" in top.stdout, top


# -- local files against pyarrow and the fixture facts ----------------------------------
@pytest.mark.asan
@pytest.mark.parametrize("name", FIXTURES)
def test_local_file_matches_pyarrow_and_fixture_facts(run_cli, name):
    import pyarrow.parquet as pq
    path = FIXDIR / f"{name}.parquet"
    exp = json.loads((FIXDIR / f"{name}.json").read_text())
    doc = inspect_json(run_cli, path)
    md = pq.ParquetFile(path).metadata

    assert list(doc) == ["file", "size", "created_by", "num_rows", "schema", "row_groups"]
    assert doc["file"] == str(path)
    assert doc["size"] == exp["file_size"] == path.stat().st_size
    assert doc["created_by"] == exp["created_by"] == md.created_by
    assert doc["num_rows"] == exp["num_rows"] == md.num_rows

    assert len(doc["schema"]) == md.num_columns
    for i, (got, leaf) in enumerate(zip(doc["schema"], exp["leaves"])):
        c = md.schema.column(i)
        assert list(got) == ["path", "physical_type", "logical_type", "converted_type", "max_def",
                             "max_rep", "type_length"]
        assert got["path"] == leaf["path"] == c.path
        assert got["physical_type"] == c.physical_type
        assert got["logical_type"] == LOGICAL.get(leaf["logical_type"], leaf["logical_type"])
        raw = leaf["converted_type_raw"]
        assert got["converted_type"] == ("NONE" if raw is None else CONVERTED[raw])
        assert got["max_def"] == c.max_definition_level
        assert got["max_rep"] == c.max_repetition_level
        assert got["type_length"] == leaf["type_length"]

    assert len(doc["row_groups"]) == md.num_row_groups
    for g, (rg, erg) in enumerate(zip(doc["row_groups"], exp["row_groups"])):
        prg = md.row_group(g)
        assert list(rg) == ["index", "num_rows", "total_byte_size", "columns"]
        assert rg["index"] == g
        assert rg["num_rows"] == prg.num_rows
        assert rg["total_byte_size"] == prg.total_byte_size
        assert len(rg["columns"]) == prg.num_columns
        for ci, (col, ecol) in enumerate(zip(rg["columns"], erg["columns"])):
            pc = prg.column(ci)
            assert list(col) == COLUMN_KEYS, "no pages without --pages"
            assert col["path"] == pc.path_in_schema
            assert col["codec"] == pc.compression
            assert sorted(col["encodings"]) == sorted(pc.encodings) == ecol["encodings"]
            assert col["num_values"] == pc.num_values
            assert col["total_compressed_size"] == pc.total_compressed_size
            assert col["total_uncompressed_size"] == pc.total_uncompressed_size
            assert col["has_offset_index"] == pc.has_offset_index
            assert col["has_column_index"] == pc.has_column_index
            assert col["data_page_offset"] == pc.data_page_offset
            if pc.has_dictionary_page:
                assert col["dictionary_page_offset"] == pc.dictionary_page_offset
            assert col["offset"] == ecol["chunk_offset"]
            assert col["length"] == pc.total_compressed_size


@pytest.mark.asan
@pytest.mark.parametrize("name", FIXTURES)
def test_pages_match_independent_walker(run_cli, name):
    path = FIXDIR / f"{name}.parquet"
    exp = json.loads((FIXDIR / f"{name}.json").read_text())
    doc = inspect_json(run_cli, path, "--pages")
    walked = walker_pages(path)
    schema = {s["path"]: s for s in doc["schema"]}
    checked = 0
    for g, rg in enumerate(doc["row_groups"]):
        for ci, col in enumerate(rg["columns"]):
            want = walked[g][ci]
            pages = col["pages"]
            assert [list(p) for p in pages] == [PAGE_KEYS] * len(pages)
            # Exactly the pages the file holds, in order, tiling the chunk.
            assert [p["offset"] for p in pages] == [w["offset"] for w in want["pages"]]
            assert sum(p["header_length"] + p["compressed_size"] for p in pages) == col["length"]
            for p, w in zip(pages, want["pages"]):
                assert p["header_length"] == w["header_len"]
                assert p["compressed_size"] == w["compressed_size"]
                assert p["uncompressed_size"] == w["uncompressed_size"]
                assert p["type"] == PAGE_TYPES[w["type"]]
                assert p["num_values"] == w["num_values"]
                assert p["encoding"] == ENCODINGS[w["encoding"]]
                assert p["crc"] == w.get("crc")
                if w["type"] == 3:
                    assert p["def_levels_length"] == w["def_len"]
                    assert p["rep_levels_length"] == w["rep_len"]
                    assert p["num_rows"] == w["num_rows"]
                    assert p["def_encoding"] is None and p["rep_encoding"] is None
                else:
                    assert p["def_levels_length"] is None and p["rep_levels_length"] is None
                if w["type"] == 0:
                    assert p["def_encoding"] in ENCODINGS and p["rep_encoding"] in ENCODINGS
                if "first_row" in w:
                    assert p["first_row"] == w["first_row"]
                    assert p["num_rows"] == w["num_rows_oi"]
                elif "num_rows" in w:
                    assert p["num_rows"] == w["num_rows"]
                assert p["reason"] in REASONS
                assert p["eligible"] == (p["reason"] in ELIGIBLE)
                if w["type"] == 2:
                    assert p["reason"] in DICT_REASONS and p["first_row"] is None
                checked += 1
            # The data pages are exactly those of the OffsetIndex.
            if want["offset_index"] is not None:
                data = [p for p in pages if p["type"] in ("DATA_PAGE", "DATA_PAGE_V2")]
                assert [(p["offset"], p["header_length"] + p["compressed_size"], p["first_row"])
                        for p in data] == \
                    [(l["offset"], l["compressed_page_size"], l["first_row_index"])
                     for l in want["offset_index"]]
            else:
                assert not col["has_offset_index"]
                leaf = schema[col["path"]]
                if leaf["max_rep"] == 0 and leaf["max_def"] <= 1:
                    assert {p["reason"] for p in pages if p["type"] != "DICTIONARY_PAGE"} <= \
                        {"no_offset_index"}
            # Eligibility the fixture generator expects from the writer options.
            if col["path"] in exp["expect_elig"]:
                data_reasons = {p["reason"] for p in pages if p["type"] != "DICTIONARY_PAGE"}
                assert data_reasons == {exp["expect_elig"][col["path"]]}, col["path"]
    assert checked == sum(len(c["pages"]) for rg in walked for c in rg)


def test_pages_json_matches_fixture_pages(run_cli):
    """The committed fixture facts list the same pages (offsets, sizes, CRCs)."""
    for name in FIXTURES:
        exp = json.loads((FIXDIR / f"{name}.json").read_text())
        doc = inspect_json(run_cli, FIXDIR / f"{name}.parquet", "--pages")
        for rg, erg in zip(doc["row_groups"], exp["row_groups"]):
            for col, ecol in zip(rg["columns"], erg["columns"]):
                assert [(p["offset"], p["header_length"], p["compressed_size"], p["crc"])
                        for p in col["pages"]] == \
                    [(p["offset"], p["header_len"], p["compressed_size"], p.get("crc"))
                     for p in ecol["pages"]], (name, col["path"])


# -- bigger files: reading strategy ---------------------------------------------------
@pytest.mark.parametrize("name", ["plain_index.parquet", "small_pages.parquet", "zstd_index.parquet",
                                  "plain_noindex.parquet", "v2_snappy_index.parquet"])
def test_big_file_pages_and_reads(run_cli, big_files, name):
    """Past the tail: pages still match the walker; with an OffsetIndex only
    page headers (and ZSTD bodies) are read; no read spans two chunks."""
    path = big_files[name]
    size = path.stat().st_size
    r = run_cli("inspect", path, "--json", "--pages", "--log-level", "debug")
    assert r.returncode == 0, r
    doc = json.loads(r.stdout)
    walked = walker_pages(path)
    chunks = []
    for g, rg in enumerate(doc["row_groups"]):
        for ci, col in enumerate(rg["columns"]):
            chunks.append((col["offset"], col["offset"] + col["length"]))
            want = walked[g][ci]["pages"]
            assert [(p["offset"], p["header_length"], p["compressed_size"]) for p in col["pages"]] == \
                [(w["offset"], w["header_len"], w["compressed_size"]) for w in want]
    reads = read_log(r.stderr)
    assert reads, r.stderr
    tail_off, tail_len = reads[0]
    assert tail_off + tail_len == size and 64 << 10 <= tail_len <= 1 << 20
    largest_chunk = max(e - s for s, e in chunks)
    for off, n in reads[1:]:
        assert n <= largest_chunk, (off, n)
        inside = [c for c in chunks if c[0] <= off and off + n <= c[1]]
        assert inside or off >= max(e for _, e in chunks), f"read {off}+{n} spans chunks"
    total = sum(n for _, n in reads)
    if name == "plain_index.parquet":
        # Uncompressed with an OffsetIndex: headers only.
        assert total < size // 4, (total, size)
    if name == "small_pages.parquet":
        # Nearby page headers are read together, not one request per page.
        n_pages = sum(len(c["pages"]) for rg in doc["row_groups"] for c in rg["columns"])
        assert n_pages > 200 and len(reads) < n_pages // 4, (len(reads), n_pages)
    if name == "plain_noindex.parquet":
        # No OffsetIndex: each chunk is read whole to walk its headers.
        for s, e in chunks:
            assert (s, e - s) in reads
    if name == "zstd_index.parquet":
        rnd = [c for rg in doc["row_groups"] for c in rg["columns"] if c["path"] == "rnd"]
        ids = [c for rg in doc["row_groups"] for c in rg["columns"] if c["path"] == "id"]
        # Incompressible values: zstd raw blocks, verified by reading the bodies.
        assert {p["reason"] for c in rnd for p in c["pages"]} == {"eligible"}
        assert {p["reason"] for c in ids for p in c["pages"]} <= {"zstd_compressed_blocks",
                                                                   "zstd_frame"}


def test_without_pages_reads_only_the_tail(run_cli, big_files):
    path = big_files["plain_index.parquet"]
    r = run_cli("inspect", path, "--json", "--log-level", "debug")
    assert r.returncode == 0, r
    reads = read_log(r.stderr)
    assert len(reads) == 1 and sum(n for _, n in reads) + reads[0][0] == path.stat().st_size


# -- through a mount and on S3 -----------------------------------------------------------
@pytest.fixture
def fixture_bucket(s3, bucket, big_files):
    objs = {f"fx/{n}.parquet": (FIXDIR / f"{n}.parquet").read_bytes() for n in FIXTURES}
    for name, p in big_files.items():
        objs[f"big/{name}"] = p.read_bytes()
    objs["odd keys/a b+c=d%e.parquet"] = (FIXDIR / "v1_dict_snappy_index.parquet").read_bytes()
    objs["fx/not-parquet.txt"] = b"hello, this is not parquet\n"
    return bucket(objs)


def local_for(key: str, big_files):
    if key.startswith("fx/"):
        return FIXDIR / key[3:]
    if key.startswith("big/"):
        return big_files[key[4:]]
    return FIXDIR / "v1_dict_snappy_index.parquet"


KEYS = [f"fx/{n}.parquet" for n in FIXTURES] + \
    ["big/zstd_index.parquet", "big/plain_noindex.parquet", "odd keys/a b+c=d%e.parquet"]


@pytest.mark.asan
def test_through_mount_same_as_local(run_cli, mount, fixture_bucket, big_files):
    m = mount(bucket=fixture_bucket)
    for key in KEYS:
        local = local_for(key, big_files)
        for args in (["--pages"], []):
            got = inspect_json(run_cli, m / key, *args)
            want = inspect_json(run_cli, local, *args)
            assert got["file"] == str(m / key)
            assert without_file(got) == without_file(want), key
    # Text output too, but for the "file" line.
    key = "fx/v1_crc_none_index.parquet"
    got = run_cli("inspect", m / key, "--pages")
    want = run_cli("inspect", local_for(key, big_files), "--pages")
    assert got.returncode == want.returncode == 0
    strip = lambda s: re.sub(r"(?m)^file .*$", "", s)  # noqa: E731
    assert strip(got.stdout) == strip(want.stdout)
    r = run_cli("inspect", m / "fx/not-parquet.txt")
    assert_one_error_line(r, re.escape(str(m / "fx/not-parquet.txt")), "not a Parquet file")


@pytest.mark.asan
def test_s3_direct_same_as_local(run_cli, moto, fixture_bucket, big_files):
    for key in KEYS:
        url = f"s3://{fixture_bucket}/{key}"
        got = inspect_json(run_cli, url, "--pages", *s3_args(moto))
        assert got["file"] == url
        assert without_file(got) == without_file(inspect_json(run_cli, local_for(key, big_files),
                                                              "--pages")), key
    # The endpoint from the environment, as for mount; text output.
    r = run_cli("inspect", f"s3://{fixture_bucket}/fx/v2_zstd_index.parquet", "--pages",
                env={"AWS_ENDPOINT_URL": moto.endpoint})
    assert r.returncode == 0, r
    assert "DATA_V2" in r.stdout and "v2_page" in r.stdout


def test_s3_profile_credentials(run_cli, moto, fixture_bucket, home):
    aws = home / ".aws"
    aws.mkdir(exist_ok=True)
    c = moto.creds
    (aws / "credentials").write_text(
        f"[insp]\naws_access_key_id = {c.access_key_id}\naws_secret_access_key = {c.secret_access_key}\n")
    url = f"s3://{fixture_bucket}/fx/empty.parquet"
    doc = inspect_json(run_cli, url, "--profile", "insp", "--region", "us-east-1", *s3_args(moto),
                       creds=None)
    assert doc["num_rows"] == 0
    r = run_cli("inspect", url, "--profile", "nosuchprofile", *s3_args(moto), creds=None)
    assert_one_error_line(r, "nosuchprofile")


def test_s3_no_sign_request(run_cli, moto_noauth):
    s3 = moto_noauth.client("s3")
    b = "sv-insp-public-" + s3env.det_bytes("inspname", 4).hex()
    s3.create_bucket(Bucket=b)
    data = (FIXDIR / "v1_plain_none_index.parquet").read_bytes()
    s3.put_object(Bucket=b, Key="pub.parquet", Body=data, ACL="public-read")
    s3.put_object(Bucket=b, Key="private.parquet", Body=data, ACL="private")
    doc = inspect_json(run_cli, f"s3://{b}/pub.parquet", "--no-sign-request",
                       "--endpoint", moto_noauth.endpoint, creds=None)
    assert doc["size"] == len(data)
    r = run_cli("inspect", f"s3://{b}/private.parquet", "--no-sign-request",
                "--endpoint", moto_noauth.endpoint, creds=None)
    assert_one_error_line(r, "private.parquet", r"denied|403")


@pytest.mark.parametrize("case", ["missing_key", "missing_bucket", "bad_secret", "unreachable",
                                  "no_credentials", "not_parquet"])
def test_s3_errors(run_cli, moto, fixture_bucket, case):
    url = f"s3://{fixture_bucket}/fx/empty.parquet"
    args, creds, needles = s3_args(moto), "default", []
    if case == "missing_key":
        url = f"s3://{fixture_bucket}/fx/nope.parquet"
        needles = [re.escape(url), "does not exist"]
    elif case == "missing_bucket":
        url = "s3://sv-no-such-bucket-insp/x.parquet"
        needles = ["sv-no-such-bucket-insp", "not exist|NoSuch|not found"]
    elif case == "bad_secret":
        creds = s3env.Credentials(moto.creds.access_key_id, "wrong-secret")
        needles = [re.escape(url), "denied|403|signature"]
    elif case == "unreachable":
        args = ["--endpoint", f"http://127.0.0.1:{s3env.closed_port()}"]
        needles = [re.escape(url), "reach|connect|refused"]
    elif case == "no_credentials":
        creds = None
        needles = [re.escape(url), "credential"]
    elif case == "not_parquet":
        url = f"s3://{fixture_bucket}/fx/not-parquet.txt"
        needles = [re.escape(url), "not a Parquet file"]
    r = run_cli("inspect", url, *args, creds=creds, timeout=120)
    assert_one_error_line(r, *needles)
    assert r.stdout == ""


# -- text output ----------------------------------------------------------------------
def table_blocks(text: str) -> list:
    """Tables in the text output: a header line starting with '#' (after the
    indent) and the rows under it, up to a blank line."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if re.match(r"^\s+#\s", lines[i]):
            j = i + 1
            while j < len(lines) and lines[j].strip():
                j += 1
            blocks.append(lines[i:j])
            i = j
        else:
            i += 1
    return blocks


def assert_aligned(block: list):
    """Every header column starts (left-aligned text) or ends (right-aligned
    numbers) at the same position on every row: the columns found by splitting
    on runs of 2+ spaces line up with the header's."""
    head = block[0]
    cols = [m.span() for m in re.finditer(r"\S+(?: \S+)*", head)]
    assert len(cols) >= 3
    for row in block[1:]:
        assert not row.endswith(" "), repr(row)
        cells = [m.span() for m in re.finditer(r"\S+(?: \S+)*", row)]
        assert len(cells) == len(cols), f"{row!r} vs header {head!r}"
        for (hs, he), (cs, ce) in zip(cols, cells):
            assert cs == hs or ce == he or (cs >= hs and ce <= he) or \
                (cs <= hs and ce >= he), f"misaligned cell {row[cs:ce]!r} in {row!r}\n{head!r}"
    # Each column is consistently left- or right-aligned across rows.
    for k in range(len(cols)):
        starts = {[m.span() for m in re.finditer(r"\S+(?: \S+)*", r)][k][0] for r in block}
        ends = {[m.span() for m in re.finditer(r"\S+(?: \S+)*", r)][k][1] for r in block}
        assert len(starts) == 1 or len(ends) == 1, f"column {k} ragged in\n" + "\n".join(block)


@pytest.mark.asan
def test_text_output_aligned_and_human(run_cli):
    path = FIXDIR / "v1_crc_none_index.parquet"
    r = run_cli("inspect", path, "--pages")
    assert r.returncode == 0 and r.stderr == "", r
    out = r.stdout
    assert re.search(r"(?m)^size\s+13\.6 KiB \(13886 bytes\)$", out), out
    assert re.search(r"\b\d+\.\d (KiB|MiB)\b", out)
    blocks = table_blocks(out)
    # schema, one row group, 7 page tables
    assert len(blocks) == 1 + 1 + 7, out
    for b in blocks:
        assert_aligned(b)
    assert "byte_array_plain" in out and "boolean" in out and "eligible" in out
    assert re.search(r"(?m)^summary: 25 pages; 17 of 25 data pages eligible", out), out
    # Without --pages: schema and chunk tables only, and a hint.
    r = run_cli("inspect", path)
    assert len(table_blocks(r.stdout)) == 2
    assert "--pages" in r.stdout


def test_text_output_all_fixtures(run_cli, big_files):
    for p in [FIXDIR / f"{n}.parquet" for n in FIXTURES] + list(big_files.values()):
        r = run_cli("inspect", p, "--pages")
        assert r.returncode == 0 and r.stderr == "", r
        for b in table_blocks(r.stdout):
            assert_aligned(b)
    r = run_cli("inspect", big_files["plain_noindex.parquet"])
    assert re.search(r"\d+\.\d MiB", r.stdout), r.stdout


# -- errors ----------------------------------------------------------------------------
@pytest.fixture
def bad_files(tmp_path):
    good = (FIXDIR / "v1_plain_none_index.parquet").read_bytes()
    flen = struct.unpack("<I", good[-8:-4])[0]
    fo = len(good) - 8 - flen
    files = {
        "text.txt": (b"just some text, not parquet at all\n" * 3, "not a Parquet file"),
        "empty.parquet": (b"", "not a Parquet file|too short"),
        "short.parquet": (b"PAR1PAR1", "not a Parquet file|too short"),
        "truncated.parquet": (good[:len(good) // 2], "not a Parquet file|PAR1"),
        "bad_footer.parquet": (good[:fo + 10] + b"\xff" * 30 + good[fo + 40:], "footer"),
        "footer_len.parquet": (good[:-8] + struct.pack("<I", len(good) * 2) + b"PAR1",
                               "footer|length"),
        "encrypted.parquet": (good[:-4] + b"PARE", "encrypt"),
    }
    out = {}
    for name, (data, cause) in files.items():
        p = tmp_path / name
        p.write_bytes(data)
        out[name] = (p, cause)
    return out


@pytest.mark.asan
def test_malformed_files_one_line_error(run_cli, bad_files):
    for name, (p, cause) in bad_files.items():
        for args in ([], ["--json"], ["--pages", "--json"]):
            r = run_cli("inspect", p, *args)
            assert_one_error_line(r, re.escape(str(p)), cause)
            assert r.stdout == "", r


def test_bad_page_header_one_line_error(run_cli, tmp_path):
    good = bytearray((FIXDIR / "v1_plain_none_index.parquet").read_bytes())
    good[4:30] = b"\x00" * 26  # the first page header of the first chunk
    p = tmp_path / "bad_page.parquet"
    p.write_bytes(bytes(good))
    ok = run_cli("inspect", p, "--json")
    assert ok.returncode == 0, "the footer is intact"
    for args in (["--pages"], ["--pages", "--json"]):
        r = run_cli("inspect", p, *args)
        assert_one_error_line(r, re.escape(str(p)), r"row group 0, column i32", "offset 4")


def _varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def _page_location_fields(data, oi_off):
    """Byte positions of (offset, compressed_page_size, first_row_index)
    varints of each PageLocation in the OffsetIndex at oi_off, as pyarrow
    writes it (field deltas 1, no optional fields)."""
    pos = oi_off
    assert data[pos] == 0x19  # field 1: list
    hdr = data[pos + 1]
    n, et = hdr >> 4, hdr & 0x0F
    assert et == 12 and n < 15
    pos += 2
    locs = []
    for _ in range(n):
        fields = []
        for ftype in (0x16, 0x15, 0x16):
            assert data[pos] == ftype
            start = pos + 1
            _, pos = _varint(data, start)
            fields.append((start, pos))
        assert data[pos] == 0
        pos += 1
        locs.append(fields)
    return locs


def _rewrite_varint(data, span, new_value):
    """Zigzag-encode new_value into exactly the bytes of span (padded)."""
    zz = (new_value << 1) ^ (new_value >> 63)
    start, end = span
    out = []
    for i in range(end - start):
        b = zz & 0x7F
        zz >>= 7
        out.append(b | (0x80 if i < end - start - 1 else 0))
    assert zz == 0
    data[start:end] = bytes(out)


@pytest.mark.parametrize("corruption", ["size", "first_row"])
def test_bad_offset_index_one_line_error(run_cli, tmp_path, corruption):
    """An OffsetIndex that does not tile the chunk, or disagrees with the page
    headers, is an error naming the chunk, never silently trusted."""
    path = FIXDIR / "v1_plain_none_index.parquet"
    data = bytearray(path.read_bytes())
    flen = struct.unpack("<I", data[-8:-4])[0]
    footer = WALKER["Reader"](bytes(data[-8 - flen:-8])).struct()
    oi_off = footer[4][0][1][0][4]  # row group 0, column 0: offset_index_offset
    locs = _page_location_fields(data, oi_off)
    assert len(locs) >= 2
    if corruption == "size":
        span = locs[0][1]
        v, _ = _varint(data, span[0])
        _rewrite_varint(data, span, (v >> 1) + 1)
        cause = r"OffsetIndex.*(tile|previous page)"
    else:
        span = locs[1][2]
        v, _ = _varint(data, span[0])
        _rewrite_varint(data, span, (v >> 1) - 5)
        cause = r"OffsetIndex"
    p = tmp_path / "bad_oi.parquet"
    p.write_bytes(bytes(data))
    assert run_cli("inspect", p, "--json").returncode == 0, "the footer is intact"
    for args in (["--pages"], ["--pages", "--json"]):
        r = run_cli("inspect", p, *args)
        assert_one_error_line(r, re.escape(str(p)), r"row group 0, column i32", cause)


def test_not_a_file(run_cli, tmp_path):
    r = run_cli("inspect", tmp_path)
    assert_one_error_line(r, re.escape(str(tmp_path)), "directory")
    missing = tmp_path / "missing.parquet"
    r = run_cli("inspect", missing)
    assert_one_error_line(r, re.escape(str(missing)), "no such file")


@pytest.mark.parametrize("args", [
    [], ["a.parquet", "b.parquet"], ["x.parquet", "--bogus"], ["s3://bucket"], ["s3://bucket/"],
    ["s3://bad_bucket!/k"], ["x.parquet", "--log-level", "loud"], ["x.parquet", "--endpoint"],
])
def test_usage_errors(run_cli, args):
    r = run_cli("inspect", *args)
    assert_one_error_line(r, "inspect --help|s3://", status=2)
