"""A table's log as C2SP tlog-tiles: the paths and tiles the spec defines, served by the
server, read by Go's ``sumdb/tlog`` (not fairroll's code), and copied by ``fairroll
mirror`` to a directory a plain static web server serves."""

from __future__ import annotations

import base64
import contextlib
import doctest
import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis import Redis

from fairroll.audit import load_signer, merkle, tiles
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.tiles import ENTRIES, Tile, TileError
from fairroll.redis_server import RedisServer
from support import TEST_ROOT, TEST_SIGNING_KEY, LiveServer, fairroll_cli

ROOT = Path(__file__).resolve().parents[1]
READER = ROOT / "tests" / "go" / "tilesread"
GOPATH = Path("/usr/share/gocode")
BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def roll(client: httpx.Client, table: str, count: int) -> None:
    for _ in range(count):
        answer = client.post("/v1/tft/contests", json={**BODY, "table": table})
        assert answer.status_code == 200, answer.text


def stored_tree(size: int) -> tuple[list[bytes], bytes]:
    """The stored hashes and root of a tree of ``size`` made-up leaves."""
    frontier, stored = merkle.Frontier.empty(), []
    for i in range(size):
        frontier, new = frontier.append(merkle.leaf(i.to_bytes(4, "big")))
        stored += new
    return stored, frontier.root()


def tile_bytes(stored: list[bytes], tile: Tile) -> bytes:
    return b"".join(stored[i] for i in tiles.hash_indices(tile))


# --- the tile maths, pure -------------------------------------------------------------


def test_tile_paths_are_written_as_the_spec_writes_them() -> None:
    # "index 1234067 will be encoded as x001/x234/067"
    assert tiles.tile_path(Tile(0, 1234067)) == "tile/0/x001/x234/067"
    assert tiles.tile_path(Tile(ENTRIES, 0, 1)) == "tile/entries/000.p/1"
    for tile in (Tile(3, 0), Tile(0, 999, 255), Tile(ENTRIES, 1000), Tile(63, 10**9, 7)):
        assert tiles.parse_tile_path(tiles.tile_path(tile)) == tile


def test_the_tile_modules_doctests_hold() -> None:
    assert doctest.testmod(tiles).failed == 0


@pytest.mark.parametrize(
    "path",
    [
        "tile/0/1",  # groups of three digits
        "tile/00/000",  # no leading zero in a level
        "tile/0/x000/001",  # no leading zero group
        "tile/0/001/002",  # 'x' on every group but the last
        "tile/0/000.p/0",  # a partial tile holds 1..255
        "tile/0/000.p/256",
        "tile/0/000.p/07",
        "tile/64/000",  # levels 0..63
        "tile/data/000",  # Go's sumdb name, not the spec's
        "tile/8/0/000",  # Go's sumdb path carries the height; the spec's does not
    ],
)
def test_a_path_the_spec_does_not_write_is_no_tile(path: str) -> None:
    with pytest.raises(TileError):
        tiles.parse_tile_path(path)


def test_the_specs_tree_of_70000_has_the_tiles_it_lists() -> None:
    # "a tree of size 70,000 will be represented by 273 full level 0 tiles, one partial
    # level 0 tile of width 112, one full level 1 tile, one partial level 1 tile of width
    # 17, and one partial level 2 tile of width 1."
    found = tiles.tiles_of(70000)
    assert sum(t.level == 0 and t.full for t in found) == 273
    assert [(t.level, t.width) for t in found if not t.full] == [(0, 112), (1, 17), (2, 1)]
    assert sum(t.level == 1 and t.full for t in found) == 1
    # "a tree of size 256 will be represented by a full level 0 tile and a partial level
    # 1 tile of width 1"
    assert tiles.tiles_of(256) == [Tile(0, 0), Tile(1, 0, 1)]


@pytest.mark.parametrize("size", [1, 7, 255, 256, 257, 4096, 65536, 65537])
def test_tiles_give_back_every_root_and_proof_the_stored_tree_gives(size: int) -> None:
    stored, root = stored_tree(size)
    hashes = tiles.TileHashes(size, functools.partial(tile_bytes, stored))
    tiles.verify_tiles(hashes, root)
    for old in {1, size // 3 or 1, size - 1 or 1, size}:
        want = merkle.consistency_proof(old, size, lambda i: [stored[x] for x in i])
        assert merkle.consistency_proof(old, size, hashes.read) == want
    index = size // 2
    proof = merkle.inclusion_proof(index, size, hashes.read)
    merkle.verify_inclusion(index, size, stored[merkle.stored_index(0, index)], proof, root)


def test_a_forged_tile_is_caught_by_the_tile_above_or_by_the_root() -> None:
    """A full level-0 tile is not part of the root's computation (the tile above stands
    for it): it is caught by its parent's hash; a partial one by the root."""
    stored, root = stored_tree(600)

    def forged(bad: Tile) -> Any:
        def load(tile: Tile) -> bytes:
            data = tile_bytes(stored, tile)
            return (b"\xff" * 32 + data[32:]) if tile == bad else data

        return load

    for bad in (Tile(0, 1), Tile(0, 2, 88), Tile(1, 0, 2)):
        with pytest.raises(TileError):
            tiles.verify_tiles(tiles.TileHashes(600, forged(bad)), root)


def test_only_the_tiles_that_grew_are_new() -> None:
    assert tiles.new_tiles(0, 3) == [Tile(0, 0, 3)]
    assert tiles.new_tiles(3, 3) == []
    assert tiles.new_tiles(255, 257) == [Tile(0, 0), Tile(0, 1, 1), Tile(1, 0, 1)]
    with pytest.raises(TileError):
        tiles.new_tiles(5, 4)


def test_a_bundle_frames_each_entry_by_a_big_endian_uint16_length() -> None:
    assert tiles.frame([b"ab", b"c" * 258]) == b"\x00\x02ab\x01\x02" + b"c" * 258
    with pytest.raises(TileError):
        tiles.frame([b"x" * (tiles.MAX_ENTRY_BYTES + 1)])
    for cut in (b"\x00", b"\x00\x05abc"):
        with pytest.raises(TileError):
            tiles.unframe(cut)
    leaves = merkle.leaf(b"ab") + merkle.leaf(b"cd")
    assert tiles.check_bundle(Tile(ENTRIES, 0, 2), tiles.frame([b"ab", b"cd"]), leaves)
    with pytest.raises(TileError):
        tiles.check_bundle(Tile(ENTRIES, 0, 2), tiles.frame([b"ab", b"cx"]), leaves)


# --- over HTTP ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def go_reader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None or not (GOPATH / "src/golang.org/x/mod").exists():
        pytest.fail("Debian's golang-go and golang-golang-x-mod-dev are needed")
    out = tmp_path_factory.mktemp("go") / "tilesread"
    env = {
        **os.environ,
        "GO111MODULE": "off",  # GOPATH mode: Debian's packaged sources, no module download
        "GOPATH": str(GOPATH),
        "GOCACHE": str(out.parent / "cache"),
        "GOFLAGS": "",
    }
    subprocess.run([go, "build", "-o", str(out), "."], cwd=READER, env=env, check=True, timeout=300)
    return out


def go_read(reader: Path, request: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [str(reader)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def log_vkey(client: httpx.Client, table: str) -> str:
    key_id = client.get(f"/v1/tables/{table}/checkpoint").json()["key_id"]
    keys = client.get("/v1/keys").json()["keys"]
    return str(next(k["note_key"] for k in keys if k["key_id"] == key_id))


@pytest.fixture
def grown(client: httpx.Client, table: str) -> dict[str, Any]:
    """A table of 258 entries (a full tile and a partial one at level 0), its checkpoint
    kept at size 3 on the way, and its export."""
    roll(client, table, 3)
    three = client.get(f"/v1/tables/{table}/log/checkpoint").text
    roll(client, table, 255)
    lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    return {"three": three, "lines": lines}


def test_the_server_serves_its_tree_as_tiles_and_its_export_as_bundles(
    client: httpx.Client, table: str, grown: dict[str, Any]
) -> None:
    log = f"/v1/tables/{table}/log"
    note = client.get(f"{log}/checkpoint")
    assert note.headers["content-type"] == "text/plain; charset=utf-8"  # exactly, once
    assert note.text.startswith(f"fairroll/{table}\n258\n")
    leaves = [merkle.leaf(line) for line in grown["lines"]]
    full = client.get(f"{log}/tile/0/000")
    assert full.content == b"".join(leaves[:256])
    assert full.headers["content-type"] == "application/octet-stream"
    assert full.headers["cache-control"] == "public, max-age=31536000, immutable"
    partial = client.get(f"{log}/tile/0/001.p/2")
    assert partial.content == b"".join(leaves[256:])
    assert "immutable" not in partial.headers["cache-control"]
    above = client.get(f"{log}/tile/1/000.p/1").content
    assert above == tiles.tile_hash(full.content)
    bundle = client.get(f"{log}/tile/entries/000", headers={"Accept-Encoding": "gzip"})
    assert bundle.headers["content-encoding"] == "gzip"
    assert tiles.unframe(bundle.content) == grown["lines"][:256]
    assert tiles.unframe(client.get(f"{log}/tile/entries/001.p/2").content) == grown["lines"][256:]
    # Tiles the tree of 258 does not hold, or paths the spec does not write: 404.
    for missing in ("tile/0/001", "tile/0/001.p/3", "tile/entries/001.p/3", "tile/1/000"):
        assert client.get(f"{log}/{missing}").status_code == 404, missing
    assert client.get(f"{log}/tile/0/x000/001").status_code == 404


def test_go_reads_the_tiles_and_proves_an_entry_and_two_checkpoints_consistent(
    go_reader: Path, live_server: Any, client: httpx.Client, table: str, grown: dict[str, Any]
) -> None:
    """Go's tlog.TileHashReader over the server's tiles: the checkpoint's signature, an
    entry of the full bundle and one of the partial bundle proven in the tree, and the
    checkpoint kept at size 3 proven a prefix of it; a fork's checkpoint of size 3 is
    not."""
    request = {
        "prefix": f"{live_server.url}/v1/tables/{table}/log",
        "vkey": log_vkey(client, table),
        "origin": f"fairroll/{table}",
        "old": grown["three"],
    }
    for index in (5, 257):
        seen = go_read(go_reader, {**request, "index": index})
        assert seen["checkpoint"] == "" and seen["size"] == 258, seen
        assert seen["inclusion"] == "" and seen["consistency"] == "", seen
        assert base64.b64decode(seen["record"]) == grown["lines"][index]
    # A checkpoint of size 3 the operator's key signed for another tree: a fork.
    operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    fork = sign_checkpoint(operator, table, 3, b"\x01" * 32, "ab" * 32).text
    forked = go_read(go_reader, {**request, "index": 0, "old": fork})
    assert forked["consistency"] == "invalid transparency proof", forked


def test_archived_entries_leave_their_bundles_and_keep_their_hash_tiles(
    redis_server: RedisServer, live_server: Any, client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """After an archive, a bundle holding trimmed entries is 404 and its hash tile is
    still served; a mirror copies the tiles and leaves that bundle out, saying so."""
    roll(client, table, 6)
    env = {**os.environ, "REDIS_URL": redis_server.url, "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY}
    done = subprocess.run(
        [*fairroll_command(), "archive", table, "--through", "4", "--out", tmp_path / "a"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    log = f"/v1/tables/{table}/log"
    assert client.get(f"{log}/tile/entries/000.p/6").status_code == 404
    assert len(client.get(f"{log}/tile/0/000.p/6").content) == 6 * 32
    copied = mirror(live_server, table, tmp_path / "mirror")
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert "tile/entries/000.p/6 is not served (archived" in copied.stdout
    assert (tmp_path / "mirror" / "tile" / "0" / "000.p" / "6").exists()


def test_a_seq_an_epoch_declared_lost_is_bundled_as_the_bytes_of_its_placeholder_leaf(
    redis_server: RedisServer, tmp_path: Path, table: str
) -> None:
    """Seqs 4 and 5 are lost and an epoch opens at 6: the bundle frames each lost seq as
    ``fairroll/lost/v1:<seq>``, so every entry of it still hashes to its leaf."""
    first = LiveServer(redis_server.url, tmp_path / "first.log")
    try:
        with httpx.Client(base_url=first.url, timeout=10) as client:
            roll(client, table, 5)
            third = client.get(f"/v1/tables/{table}/entries/3").json()["entry_hash"]
    finally:
        first.stop()
    redis = Redis.from_url(redis_server.url)
    redis.xdel(f"fairroll:{{{table}}}:log", "4-0", "5-0")
    redis.set(f"fairroll:{{{table}}}:head", f"3:{third}")
    redis.close()
    env = {**os.environ, "REDIS_URL": redis_server.url, "FAIRROLL_SIGNING_KEY": TEST_SIGNING_KEY}
    opened = subprocess.run(
        [*fairroll_command(), "open-epoch", table, "--resume-after", "5", "--reason", "lost"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert opened.returncode == 0, opened.stderr
    fresh = LiveServer(redis_server.url, tmp_path / "fresh.log")
    try:
        with httpx.Client(base_url=fresh.url, timeout=10) as client:
            log = f"/v1/tables/{table}/log"
            bundle = client.get(f"{log}/tile/entries/000.p/6").content
            leaves = client.get(f"{log}/tile/0/000.p/6").content
            lines = client.get(f"/v1/tables/{table}/export").content.splitlines()
    finally:
        fresh.stop()
    entries = tiles.check_bundle(Tile(ENTRIES, 0, 6), bundle, leaves)
    assert entries[3:5] == [b"fairroll/lost/v1:4", b"fairroll/lost/v1:5"]
    assert [*entries[:3], entries[5]] == lines


def fairroll_command() -> list[str]:
    return [shutil.which("python") or "python", "-m", "fairroll.cli"]


# --- fairroll mirror ------------------------------------------------------------------


@contextlib.contextmanager
def static_server(folder: Path) -> Iterator[str]:
    """Python's http.server serving ``folder``: a plain static host, no fairroll."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def mirror(live_server: Any, table: str, folder: Path, *extra: str) -> Any:
    return fairroll_cli(
        "mirror", table, folder, "--server", live_server.url, "--root", TEST_ROOT, *extra
    )


def test_a_mirror_copies_only_new_tiles_and_go_reads_it_from_a_static_host(
    go_reader: Path, live_server: Any, client: httpx.Client, table: str, tmp_path: Path
) -> None:
    folder = tmp_path / "mirror"
    roll(client, table, 3)
    first = mirror(live_server, table, folder)
    assert first.returncode == 0 and "size 0 -> 3" in first.stdout, first.stdout + first.stderr
    three = (folder / "checkpoint").read_text()
    roll(client, table, 255)
    second = mirror(live_server, table, folder)
    assert second.returncode == 0 and "size 3 -> 258" in second.stdout, second.stdout
    # level 0: the full tile and the partial one, level 1: a partial one; and 2 bundles
    assert "5 new files" in second.stdout, second.stdout
    again = mirror(live_server, table, folder)
    assert again.returncode == 0 and "0 new files" in again.stdout, again.stdout
    with static_server(folder) as url:
        request = {
            "prefix": url,
            "vkey": log_vkey(client, table),
            "origin": f"fairroll/{table}",
            "old": three,
        }
        seen = go_read(go_reader, {**request, "index": 200})
    assert seen == {**seen, "checkpoint": "", "inclusion": "", "consistency": "", "size": 258}
    exported = client.get(f"/v1/tables/{table}/export").content.splitlines()
    assert base64.b64decode(seen["record"]) == exported[200]


def test_a_mirror_refuses_a_tree_that_is_not_its_own_grown(
    live_server: Any, client: httpx.Client, table: str, tmp_path: Path
) -> None:
    """A mirror that kept a checkpoint of another history of the table (signed by the
    operator's key: the server equivocated) is not overwritten by the server's tree,
    which is not consistent with it; a checkpoint under a root not pinned is refused."""
    operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    folder = tmp_path / "mirror"
    folder.mkdir()
    kept = sign_checkpoint(operator, table, 4, b"\x05" * 32, "ab" * 32).text
    (folder / "checkpoint").write_text(kept)
    roll(client, table, 6)
    forked = mirror(live_server, table, folder)
    assert forked.returncode == 1 and "not a prefix" in forked.stdout, forked.stdout
    assert (folder / "checkpoint").read_text() == kept
    stranger = mirror(live_server, table, tmp_path / "m2", "--root", "ed25519:0000000000000000")
    assert stranger.returncode == 1 and "pinned root" in stranger.stdout, stranger.stdout
    assert not (tmp_path / "m2" / "checkpoint").exists()


# --- the vector -----------------------------------------------------------------------


def load_vector_script() -> Any:
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location("tile_vectors", TILE_VECTORS / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TILE_VECTORS = ROOT / "docs" / "vectors" / "tiles"


def test_the_tile_vector_is_what_its_script_makes_and_matches_the_signed_checkpoint() -> None:
    """docs/vectors/tiles/tiles.json: made by its script (no drift); the vector log's
    tiles fold to the root of the signed vector checkpoint, its bundles to its lines; the
    made-up tree's root is RFC 6962's definition straight."""
    assert (TILE_VECTORS / "tiles.json").read_text() == load_vector_script().text()
    vector = json.loads((TILE_VECTORS / "tiles.json").read_text())
    log = vector["log"]
    signed = json.loads((ROOT / "docs" / "vectors" / "checkpoint.json").read_text())
    assert (log["size"], log["root"]) == (signed["size"], signed["root_hash"])
    by_path = {t["path"]: b"".join(base64.b64decode(h) for h in t["hashes"]) for t in log["tiles"]}
    hashes = tiles.TileHashes(log["size"], lambda tile: by_path[tiles.tile_path(tile)])
    tiles.verify_tiles(hashes, base64.b64decode(log["root"]))
    lines = (ROOT / "docs" / "vectors" / "log.ndjson").read_bytes().splitlines()
    assert [e for b in log["bundles"] for e in tiles.unframe(base64.b64decode(b["bytes"]))] == lines
    made = vector["made_up"]
    leaves = [merkle.leaf(i.to_bytes(4, "big")) for i in range(made["size"])]
    assert base64.b64decode(made["root"]) == merkle.tree_hash_of(leaves)
    assert vector["paths"]["1234067"] == "tile/0/x001/x234/067"


def test_an_entry_too_long_for_a_frame_leaves_its_bundle_unserved_not_a_500(
    client: httpx.Client, table: str
) -> None:
    """C2SP frames an entry by a 2-byte length; a long battle's entry outgrows it. Its
    bundle answers 404 saying so and where to read the entries; its hash tile stands."""
    fighter = {"st": 10, "qk": 10, "in": 10, "ma": 10, "mr": 10, "max_hp": 999}
    battle = {
        "table": table,
        "fighters": [{"name": n, **fighter, "weapon": {"name": "W", "af": 1}} for n in "AB"],
        "max_turns": 500,
    }
    fought = client.post("/v1/fast-battle/battles", json=battle)
    assert fought.status_code == 200, fought.text
    log = f"/v1/tables/{table}/log"
    bundle = client.get(f"{log}/tile/entries/000.p/1")
    assert bundle.status_code == 404, bundle.text
    assert "2-byte length" in bundle.json()["detail"], bundle.text
    assert f"/v1/tables/{table}/export?from_seq=1&to_seq=1" in bundle.json()["detail"]
    assert len(client.get(f"{log}/tile/0/000.p/1").content) == 32
