"""Verify a table's log from its tiles (C2SP tlog-tiles) as from its export: a mirror that
``fairroll mirror`` wrote, served by a plain static web server, verifies the same as the
export of its table; a tile tampered with on the way is named, and a checkpoint kept
earlier that the tiles' tree does not hold fails the verification."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from fairroll.audit import load_signer
from fairroll.audit.checkpoint import parse_body, sign_checkpoint
from support import (
    TEST_ROOT,
    TEST_SIGNING_KEY,
    browser_ready,
    built_typescript_client,
    fairroll_cli,
    run_node,
)
from test_tiles import ROOT, mirror, roll, static_server


@pytest.fixture
def mirrored(
    live_server: Any, client: httpx.Client, table: str, tmp_path: Path
) -> Iterator[dict[str, Any]]:
    """A table of 258 entries (a full level-0 tile and a partial one) mirrored to a
    directory served by Python's http.server, its export and the server's keys."""
    roll(client, table, 258)
    folder = tmp_path / "mirror"
    copied = mirror(live_server, table, folder)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    (tmp_path / "keys.json").write_bytes(client.get("/v1/keys").content)
    (tmp_path / "export.ndjson").write_bytes(client.get(f"/v1/tables/{table}/export").content)
    with static_server(folder) as url:
        yield {"url": url, "folder": folder, "dir": tmp_path}


def verify(source: list[str | Path], at: Path, *extra: str | Path) -> Any:
    keys = ("--keys", at / "keys.json", "--root", TEST_ROOT, "--no-replay")
    return fairroll_cli("verify", *source, *keys, *extra, timeout=120)


def verdict(done: Any) -> dict[str, Any]:
    assert done.returncode == 0, done.stdout + done.stderr
    said: dict[str, Any] = json.loads(done.stdout)
    return said


def test_a_mirror_on_a_static_host_verifies_as_the_export_of_its_table(
    live_server: Any, table: str, mirrored: dict[str, Any]
) -> None:
    at = mirrored["dir"]
    # The export with the mirror's checkpoint kept, as --tiles keeps the one it read.
    kept = mirrored["folder"] / "checkpoint"
    exported = verdict(verify([at / "export.ndjson"], at, "--json", "--checkpoint", kept))
    from_mirror = verdict(verify(["--tiles", mirrored["url"]], at, "--json"))
    served = f"{live_server.url}/v1/tables/{table}/log"
    from_server = verdict(verify(["--tiles", served], at, "--json"))
    from_folder = verdict(verify(["--tiles", mirrored["folder"]], at, "--json"))
    assert exported["verdict"] == "OK" and exported["verification"]["entries"] == 258
    assert from_mirror == from_server == from_folder == exported
    said = verify(["--tiles", mirrored["url"]], at)
    assert said.returncode == 0 and "258" in said.stdout, said.stdout


@pytest.mark.parametrize(
    ("path", "at", "reason"),
    [
        ("tile/entries/000", 1000, "of tile/entries/000 is not its leaf"),
        ("tile/entries/001.p/2", 40, "is not its leaf"),
        ("tile/0/000", 100, "tile/0/000 is not the tile its parent tile hashes"),
        ("tile/0/001.p/2", 40, "do not give its root"),
        ("tile/1/000.p/1", 5, "tile/0/000 is not the tile its parent tile hashes"),
    ],
)
def test_a_flipped_byte_in_a_bundle_or_a_hash_tile_is_caught_and_named(
    mirrored: dict[str, Any], path: str, at: int, reason: str
) -> None:
    tile = mirrored["folder"] / path
    data = bytearray(tile.read_bytes())
    data[at] ^= 0x01
    tile.write_bytes(bytes(data))
    for source in (mirrored["url"], str(mirrored["folder"])):
        done = verify(["--tiles", source], mirrored["dir"])
        assert done.returncode == 1, done.stdout + done.stderr
        assert reason in done.stdout, done.stdout


def test_a_missing_tile_or_an_unsigned_checkpoint_is_not_the_log(
    mirrored: dict[str, Any],
) -> None:
    (mirrored["folder"] / "tile" / "entries" / "001.p" / "2").unlink()
    gone = verify(["--tiles", mirrored["url"]], mirrored["dir"])
    assert gone.returncode == 1 and "tile/entries/001.p/2 is not served (404" in gone.stdout
    stranger = verify(["--tiles", mirrored["url"]], mirrored["dir"], "--root", "ed25519:00")
    assert stranger.returncode == 1 and "no signature" in stranger.stdout, stranger.stdout


def test_tiles_not_consistent_with_a_kept_checkpoint_fail_the_verification(
    table: str, mirrored: dict[str, Any]
) -> None:
    """A checkpoint of size 3 the operator signed for another tree (shown to this player
    earlier): the tiles' tree does not hold it (checks table, row 14)."""
    operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    kept = mirrored["dir"] / "kept.txt"
    kept.write_text(sign_checkpoint(operator, table, 3, b"\x05" * 32, "ab" * 32).text)
    done = verify(["--tiles", mirrored["url"]], mirrored["dir"], "--since", kept)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "is not the one a kept checkpoint signed" in done.stdout, done.stdout


# --- the Python client ----------------------------------------------------------------


def test_the_python_client_verifies_a_mirror_as_the_export_of_its_table(
    fc: ModuleType, table: str, mirrored: dict[str, Any]
) -> None:
    """``fairroll_client.verify_tiles`` (the service's reading, vendored) gives the
    verdict ``verify_export`` gives on the export with the mirror's checkpoint kept; a
    flipped byte in a bundle, or a kept checkpoint of another tree, fails it."""
    keys = json.loads((mirrored["dir"] / "keys.json").read_text())
    note = (mirrored["folder"] / "checkpoint").read_text()
    size, root, _ = parse_body(note[: note.rfind("\n\n") + 1])
    exported = (mirrored["dir"] / "export.ndjson").read_bytes()
    kept = fc.Kept(size=size, root=root, note=note)
    from_export = fc.verify_export(exported, keys, root=TEST_ROOT, kept=[kept])
    assert from_export.ok and from_export.entries == 258, from_export
    assert fc.verify_tiles(mirrored["url"], keys, root=TEST_ROOT) == from_export
    assert fc.verify_tiles(str(mirrored["folder"]), keys, root=TEST_ROOT) == from_export
    unpinned = fc.verify_tiles(mirrored["url"], keys)
    assert not unpinned.ok and "NOT VERIFIED" in unpinned.problems[0]
    other = fc.Kept(size=3, root=b"\x05" * 32, note="")
    forked = fc.verify_tiles(mirrored["url"], keys, root=TEST_ROOT, kept=[other])
    assert not forked.ok and "is not the one a kept checkpoint signed" in forked.problems[0], forked
    bundle = mirrored["folder"] / "tile" / "entries" / "001.p" / "2"
    bundle.write_bytes(bundle.read_bytes()[:-1] + b"!")
    flipped = fc.verify_tiles(mirrored["url"], keys, root=TEST_ROOT)
    assert not flipped.ok and "tile/entries/001.p/2 is not its leaf" in flipped.problems[0]


# --- the JavaScript core ----------------------------------------------------------------

STATIC = ROOT / "service" / "fairroll" / "page" / "static"


def js_verify(mirrored: dict[str, Any], url: str, *extra: str | Path) -> Any:
    keys = mirrored["dir"] / "keys.json"
    core = (STATIC / "verify" / "tiles.js", STATIC / "verify.js")
    return run_node(ROOT / "tests" / "js" / "verify_tiles.mjs", *core, keys, TEST_ROOT, url, *extra)


def test_the_javascript_core_verifies_a_mirror_as_the_export_of_its_table(
    live_server: Any, table: str, mirrored: dict[str, Any]
) -> None:
    """``verify/tiles.js`` (what the page and the npm client run) reads the mirror on a
    static host and the server's tiles into the verdict ``verifyLog`` gives the export."""
    said = js_verify(mirrored, mirrored["url"], mirrored["dir"] / "export.ndjson")
    assert said["fromExport"]["ok"] and said["fromExport"]["entries"] == 258, said
    assert said["fromTiles"] == said["fromExport"]
    served = js_verify(mirrored, f"{live_server.url}/v1/tables/{table}/log")
    assert served["fromTiles"] == said["fromExport"]


@pytest.mark.parametrize(
    ("path", "at", "reason"),
    [
        ("tile/entries/000", 1000, "of tile/entries/000 is not its leaf"),
        ("tile/0/000", 100, "tile/0/000 is not the tile its parent tile hashes"),
        ("tile/0/001.p/2", 40, "do not give its root"),
        # The size line's first digit ("2" of 258 becomes "3"): a byte of the signed text.
        # (A flipped bit in the signature's last base64 digit may only touch the bits its
        # padding leaves unused, and decode to the same signature.)
        ("checkpoint", None, "does not verify"),
    ],
)
def test_the_javascript_core_names_a_flipped_byte_in_a_tile(
    mirrored: dict[str, Any], path: str, at: int | None, reason: str
) -> None:
    tile = mirrored["folder"] / path
    data = bytearray(tile.read_bytes())
    if at is None:
        at = data.index(b"\n") + 1
    data[at] ^= 0x01
    tile.write_bytes(bytes(data))
    said = js_verify(mirrored, mirrored["url"])["fromTiles"]
    assert not said["ok"] and reason in said["reason"], said


def test_the_javascript_core_holds_the_tiles_to_a_kept_checkpoint(
    table: str, mirrored: dict[str, Any]
) -> None:
    operator = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    kept = mirrored["dir"] / "kept.txt"
    kept.write_text(sign_checkpoint(operator, table, 3, b"\x05" * 32, "ab" * 32).text)
    said = js_verify(mirrored, mirrored["url"], "", kept, operator.key_id)["fromTiles"]
    assert not said["ok"] and "is not the one a kept checkpoint signed" in said["reason"], said


def test_the_npm_client_verifies_a_mirror_as_the_export_of_its_table(
    live_server: Any, mirrored: dict[str, Any]
) -> None:
    """``createFairroll(...).verifyTiles(url)`` (the vendored ``verify/tiles.js``) gives
    ``verifyExport``'s verdict; a flipped byte in a bundle makes it fail, naming it."""
    script = ROOT / "tests" / "js" / "npm_tiles.mjs"
    with built_typescript_client() as index:
        said = run_node(
            script,
            index,
            live_server.url,
            TEST_ROOT,
            mirrored["url"],
            mirrored["dir"] / "export.ndjson",
        )
        bundle = mirrored["folder"] / "tile" / "entries" / "001.p" / "2"
        bundle.write_bytes(bundle.read_bytes()[:-1] + b"!")
        flipped = run_node(script, index, live_server.url, TEST_ROOT, mirrored["url"])
    assert said["fromExport"]["ok"] and said["fromExport"]["entries"] == 258, said
    assert said["fromTiles"] == said["fromExport"]
    assert not said["unpinned"]["ok"] and "NOT VERIFIED" in said["unpinned"]["problems"][0]
    assert not flipped["fromTiles"]["ok"], flipped
    assert "tile/entries/001.p/2 is not its leaf" in flipped["fromTiles"]["problems"][0]


# --- the table page -------------------------------------------------------------------


def test_the_table_page_verifies_its_tiles_and_a_mirror_and_names_a_flipped_tile(
    live_server: Any, table: str, mirrored: dict[str, Any]
) -> None:
    """The page (``mirror.js`` over ``verify/tiles.js``, in Debian's chromium) opened with
    ``?tiles=<a mirror>``: the mirror verifies, as the table's own tiles do; with a byte
    of a bundle flipped, the page names that bundle."""
    script = browser_ready() / "tiles.mjs"
    page = f"{live_server.url}/tables/{table}?root={TEST_ROOT}"
    seen = run_node(script, page, mirrored["folder"], timeout=120)
    assert seen["errors"] == []
    assert seen["mirror"].startswith("✓ 258 entries verified from the tiles"), seen
    assert seen["own"].startswith("✓ 258 entries verified from the tiles"), seen
    bundle = mirrored["folder"] / "tile" / "entries" / "000"
    bundle.write_bytes(bundle.read_bytes()[:-1] + b"!")
    flipped = run_node(script, page, mirrored["folder"], timeout=120)
    assert flipped["mirror"].startswith("✗"), flipped
    assert "entry 256 of tile/entries/000 is not its leaf" in flipped["mirror"], flipped
    assert flipped["own"].startswith("✓"), flipped


# --- the tile vectors (docs/vectors/tiles/sets, scripts/vectors/tile_sets.py) ----------

VECTORS = ROOT / "docs" / "vectors"
SETS = VECTORS / "tiles" / "sets"
SET_INDEX = json.loads((SETS / "index.json").read_text())
VECTOR_ROOT = json.loads((VECTORS / "keys.json").read_text())["root"]


@pytest.mark.parametrize("name", sorted(SET_INDEX))
def test_each_tile_vector_through_the_cli(name: str) -> None:
    expected = SET_INDEX[name]
    kept = ("--since", SETS / name / expected["kept"]) if "kept" in expected else ()
    keys = ("--keys", VECTORS / "keys.json", "--root", VECTOR_ROOT)
    done = fairroll_cli("verify", "--tiles", SETS / name, *keys, *kept, timeout=120)
    if expected["ok"]:
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        assert done.returncode == 1, done.stdout + done.stderr
        assert expected["reason"] in done.stdout, done.stdout


def test_every_tile_vector_through_the_python_client(fc: ModuleType) -> None:
    keys = json.loads((VECTORS / "keys.json").read_text())
    for name, expected in SET_INDEX.items():
        kept = []
        if "kept" in expected:
            note = (SETS / name / expected["kept"]).read_text()
            size, root, _ = parse_body(note[: note.rfind("\n\n") + 1])
            kept.append(fc.Kept(size=size, root=root, note=note))
        said = fc.verify_tiles(str(SETS / name), keys, root=VECTOR_ROOT, kept=kept)
        assert said.ok is expected["ok"], (name, said)
        if expected["ok"]:
            assert said.entries == expected["entries"], (name, said)
        else:
            assert expected["reason"] in said.problems[0], (name, said)


def test_every_tile_vector_through_the_javascript_core() -> None:
    core = (STATIC / "verify" / "tiles.js", STATIC / "verify.js")
    said = run_node(ROOT / "tests" / "js" / "tile_sets.mjs", *core, VECTORS)
    for name, expected in SET_INDEX.items():
        assert said[name]["ok"] is expected["ok"], (name, said[name])
        if expected["ok"]:
            assert said[name]["entries"] == expected["entries"], (name, said[name])
        else:
            assert expected["reason"] in said[name]["reason"], (name, said[name])
