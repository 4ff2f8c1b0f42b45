"""The reference integrations (``clients/vtt``), built and run in Debian's chromium.

Each is type-checked against its host's own types (``npm run typecheck``: the Foundry
module against ``@league-of-foundry-developers/foundry-vtt-types`` 12 and 13, the Owlbear
popover against ``@owlbear-rodeo/sdk``) and bundled with esbuild. A live fairroll server
serves both (``/integrations/...``): the Foundry module is installed from the manifest
URL a GM pastes, as Foundry's installer does (manifest, download, unzip, the unpacked
manifest and every file it loads), and the Owlbear popover is loaded from the server.
The VTTs themselves cannot run here (Foundry ships inside a licensed application;
Owlbear Rodeo is a hosted service), so each runs against a stand-in for the host API
surface it calls:

- Foundry (``tests/vtt/foundry-host.html``, as 12 and as 13): Hooks, game.settings,
  game.modules (the installed manifest), game.socket between two players' pages,
  CONFIG.Dice.fulfillment, ui.notifications, ChatMessage (rendered through
  renderChatMessage in 12, renderChatMessageHTML in 13), and a Roll whose evaluation
  asks the fulfillment method for each die in Foundry's order;
- Owlbear (``tests/vtt/owlbear-host.html``): the host side of the SDK's message bus, for
  a GM's and a player's popover in two iframes, each running the real SDK.

Against a live fairroll server, in both: a roll resolved in one audited request, its
card with the words, the receipt and the client's own verified mark; another player's
own check; checkpoints shared over the VTT's channel and compared; and a checkpoint its
operator signed for another tree of the same size raises the alarm. Each player's
cosigner key is announced over the VTT's channel and pinned by the others: a view is
confirmed by another player's cosignature under a key so announced, and a cosignature by
a key nobody announced (Mallory's, however valid) confirms nothing.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.exceptions import NotFoundException

from fairroll.api.controllers import integrations
from fairroll.audit import load_signer
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.redis_server import RedisServer, free_port
from support import (
    CLIENTS,
    TEST_SIGNING_KEY,
    LiveServer,
    browser_ready,
    run_node,
    typescript_client_lock,
)

ROOT = Path(__file__).resolve().parent.parent
VTT = CLIENTS / "vtt"


def _npm(*args: str, cwd: Path) -> None:
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed"
    ran = subprocess.run(
        [npm, *args], cwd=cwd, capture_output=True, text=True, timeout=900, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.fixture(scope="module")
def built() -> Path:
    """Both integrations type-checked and bundled (the client built first: they bundle it)."""
    with typescript_client_lock():
        client = CLIENTS / "typescript"
        if not (client / "node_modules" / ".package-lock.json").exists():
            _npm("ci", "--no-audit", "--no-fund", cwd=client)
        _npm("run", "build", cwd=client)
        if not (VTT / "node_modules" / ".package-lock.json").exists():
            _npm("ci", "--no-audit", "--no-fund", cwd=VTT)
        _npm("run", "build", cwd=VTT)
    return VTT


@pytest.fixture(scope="module")
def server(
    redis_server: RedisServer, static: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    # The pages come from another origin (the static server below), as a VTT's do; the
    # Owlbear stand-in host there frames the popover the server serves, as Owlbear does.
    log = tmp_path_factory.mktemp("vtt") / "server.log"
    env = {"FAIRROLL_CORS_ORIGINS": "*", "FAIRROLL_FRAME_ANCESTORS": static}
    live = LiveServer(redis_server.url, log, env=env)
    try:
        yield live
    finally:
        live.stop()


def _serve(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    served = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return served, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stand-in hosts and the verifier (the repository's ``tests`` and ``service``),
    and ``installed/``, the modules folder the Foundry installer fills."""
    site = tmp_path_factory.mktemp("site")
    for name in ("tests", "service", "clients"):
        (site / name).symlink_to(ROOT / name)
    (site / "installed").mkdir()
    return site


@pytest.fixture(scope="module")
def static(site: Path) -> Iterator[str]:
    """``site`` over HTTP."""
    served, url = _serve(site)
    try:
        yield url
    finally:
        served.terminate()
        served.wait(10)


@pytest.fixture(scope="module")
def installed(built: Path, server: LiveServer, site: Path) -> dict[str, Any]:
    """The Foundry module installed as Foundry's installer does from the URL a GM pastes:
    fetch the manifest, fetch its ``download``, unpack it into the modules folder (served
    at ``/installed/<id>/`` by the static server), and read the unpacked manifest."""
    pasted = f"{server.url}/integrations/foundry/module.json"
    with httpx.Client(timeout=30) as http:
        answer = http.get(pasted)
        assert answer.status_code == 200, answer.text
        manifest = answer.json()
        zipped = http.get(manifest["download"])
    assert zipped.status_code == 200, zipped.text
    assert zipped.headers["content-type"] == "application/zip"
    folder = site / "installed" / manifest["id"]
    shutil.rmtree(folder, ignore_errors=True)
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        archive.extractall(folder)
    unpacked = json.loads((folder / "module.json").read_text())
    return {
        "answer": answer,
        "manifest": manifest,
        "unpacked": unpacked,
        "folder": folder,
        "url": f"/installed/{manifest['id']}",
    }


def forged_table(server: LiveServer, folder: Path) -> tuple[dict[str, Any], Path]:
    """A table of three rolls, and for every size it may reach in a test a checkpoint its
    operator signed with its real key for a tree it does not hold."""
    table = "t-vtt-" + os.urandom(6).hex()
    with httpx.Client(base_url=server.url, timeout=10) as http:
        for _ in range(3):
            assert http.post("/v1/dice/rolls", json={"table": table, "formula": "1d6"}).is_success
        root = http.get("/v1/keys").json()["root"]
    signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    notes = {
        str(size): sign_checkpoint(signer, table, size, bytes([size]) * 32, "0" * 64).text
        for size in range(1, 40)
    }
    said = {"server": server.url, "table": table, "root": root, "notes": notes}
    path = folder / "forged.json"
    path.write_text(json.dumps(said))
    return said, path


def test_the_integrations_type_check_against_their_hosts_and_bundle(built: Path) -> None:
    # The build type-checked the Foundry module against Foundry 12's types and 13's.
    scripts = json.loads((built / "package.json").read_text())["scripts"]
    assert "typecheck:foundry12" in scripts["typecheck"]
    assert "typecheck:foundry13" in scripts["typecheck"]
    types = built / "node_modules" / "@league-of-foundry-developers" / "foundry-vtt-types"
    assert json.loads((types / "package.json").read_text())["version"].startswith("12.")
    types13 = json.loads((built / "node_modules" / "fvtt-types" / "package.json").read_text())
    assert types13["version"].startswith("13.")
    assert (built / "foundry" / "dist" / "fairroll.js").stat().st_size > 10_000
    manifest = json.loads((built / "foundry" / "module.json").read_text())
    assert manifest["esmodules"] == ["dist/fairroll.js"] and manifest["socket"] is True
    assert manifest["compatibility"] == {"minimum": "12", "verified": "13"}
    site = built / "owlbear" / "dist"
    owlbear = json.loads((site / "manifest.json").read_text())
    assert (site / owlbear["action"]["popover"].lstrip("/")).exists()
    assert (site / "popover.js").exists()


@pytest.fixture(scope="module", params=[12, 13], ids=["foundry12", "foundry13"])
def foundry_seen(
    request: pytest.FixtureRequest,
    installed: dict[str, Any],
    server: LiveServer,
    static: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Any:
    """Two players in the Foundry stand-in of each generation, with the module as it was
    installed from the server's manifest: no server setting given, so the module talks
    to the server it came from."""
    scripts = browser_ready()
    forged, path = forged_table(server, tmp_path_factory.mktemp("foundry"))
    module = installed["url"]
    url = (
        f"{static}/tests/vtt/foundry-host.html?module={module}/dist/fairroll.js"
        f"&manifest={module}/module.json&generation={request.param}"
        f"&table={forged['table']}&root={forged['root']}"
    )
    seen = run_node(scripts / "foundry.mjs", url, path, timeout=120)
    assert "error" not in seen, seen
    assert seen["errors"] == [], seen["errors"]
    return seen


@pytest.fixture(scope="module")
def owlbear_seen(
    built: Path, server: LiveServer, static: str, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    scripts = browser_ready()
    forged, path = forged_table(server, tmp_path_factory.mktemp("owlbear"))
    # The popover as the server serves it, framed by the host as Owlbear frames it.
    extension = f"{server.url}/integrations/owlbear/popover.html"
    url = f"{static}/tests/vtt/owlbear-host.html?extension={extension}"
    seen = run_node(scripts / "owlbear.mjs", url, path, timeout=120)
    assert "error" not in seen, seen
    assert seen["errors"] == [], seen["errors"]
    return {**seen, "table": forged["table"]}


def test_foundry_module_installs_from_the_manifest_url_a_gm_pastes(
    installed: dict[str, Any], server: LiveServer
) -> None:
    """Foundry's installer reads the manifest, fetches its download and unpacks it: the
    unpacked module is the one the manifest names (id, version, manifest URL), every
    script and style it loads is in it, and both point back at this server."""
    manifest, unpacked = installed["manifest"], installed["unpacked"]
    assert manifest["manifest"] == f"{server.url}/integrations/foundry/module.json"
    assert manifest["download"] == f"{server.url}/integrations/foundry/fairroll.zip"
    assert manifest["compatibility"] == {"minimum": "12", "verified": "13"}
    assert manifest["flags"]["fairroll"]["server"] == server.url
    for field in ("id", "version", "manifest", "download", "flags"):
        assert unpacked[field] == manifest[field], field
    assert unpacked["id"] == "fairroll"
    for file in [*unpacked["esmodules"], *unpacked["styles"]]:
        assert (installed["folder"] / file).is_file(), file
    answer = installed["answer"]
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.headers["cache-control"] == "no-cache"
    assert answer.headers["access-control-allow-origin"] == "*"
    again = httpx.get(answer.url, headers={"If-None-Match": answer.headers["etag"]})
    assert again.status_code == 304


def test_owlbear_manifest_names_only_files_the_server_serves(server: LiveServer) -> None:
    """Every URL the served manifest names (icon, popover) and every file the popover
    loads is served, with its type, readable from Owlbear's origin, and the popover may
    be framed by Owlbear's site (the rest of fairroll may not be framed at all)."""
    with httpx.Client(timeout=10) as http:
        answer = http.get(f"{server.url}/integrations/owlbear/manifest.json")
        assert answer.status_code == 200, answer.text
        assert answer.headers["access-control-allow-origin"] == "*"
        manifest = answer.json()
        named = [manifest["icon"], manifest["action"]["icon"], manifest["action"]["popover"]]
        assert all(url.startswith(f"{server.url}/integrations/owlbear/") for url in named)
        popover = http.get(manifest["action"]["popover"])
        assert popover.headers["content-type"].startswith("text/html")
        assert f'<meta name="fairroll-server" content="{server.url}"' in popover.text
        policy = popover.headers["content-security-policy"]
        assert "frame-ancestors https://www.owlbear.rodeo" in policy
        assert "x-frame-options" not in popover.headers
        elsewhere = http.get(f"{server.url}/verify").headers["content-security-policy"]
        assert "owlbear" not in elsewhere
        types = {".svg": "image/svg+xml", ".js": "text/javascript", ".css": "text/css"}
        loaded = ["popover.js", "popover.css"]
        assert all(name in popover.text for name in loaded)
        for url in [manifest["icon"], *(f"{server.url}/integrations/owlbear/{n}" for n in loaded)]:
            file = http.get(url)
            assert file.status_code == 200, url
            assert file.headers["content-type"].startswith(types[Path(url).suffix]), url
        missing = http.get(f"{server.url}/integrations/owlbear/nothing.js")
        assert missing.status_code == 404
        assert missing.headers["content-type"] == "application/problem+json"


def test_an_integration_not_built_is_a_404_problem_that_says_how_to_build_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(integrations, "CHECKOUT", tmp_path)
    for folder in (integrations.foundry_folder, integrations.owlbear_folder):
        with pytest.raises(NotFoundException, match="npm run build"):
            folder()


def test_foundry_rolls_through_fairroll_and_raises_the_alarm_on_a_split_view(
    foundry_seen: Any, server: LiveServer
) -> None:
    seen = foundry_seen
    # No server setting was given: the module talks to the server it was installed from.
    assert seen["server"] == server.url
    for rolled in seen["rolls"]:
        # One request resolved the roll; Foundry's dice took its faces, in its order.
        assert rolled["faces"] == rolled["served"], rolled
        assert rolled["agree"] is True, rolled
        assert rolled["foundryTotal"] == rolled["fairrollTotal"], rolled
        assert rolled["verified"] is True and "verified by Gamemaster" in rolled["mark"], rolled
        assert "entry" in rolled["card"] and "hash" in rolled["card"], rolled
        # The words are the server's, shown apart from what was checked, and said so.
        assert "the server's words: " in rolled["card"], rolled
        assert f"total {rolled['fairrollTotal']}" in rolled["card"], rolled
    assert seen["playerAlarmsBefore"] == []  # the GM's shared checkpoints agree
    # The player's client checked each of the GM's rolls itself: its own mark.
    assert len(seen["playerCards"]) == len(seen["rolls"]), seen["playerCards"]
    assert all("✓ verified by Roth" in card for card in seen["playerCards"]), seen["playerCards"]
    assert any("different log" in alarm for alarm in seen["playerAlarms"]), seen
    assert "different log" in seen["playerChat"]


def test_foundry_marks_another_players_roll_by_its_own_check_not_the_rollers_record(
    foundry_seen: Any,
) -> None:
    """A roller's record with another face and total (its receipt real, its own
    "verified" set) is checked against the log's entry by the viewer: not verified."""
    edited = foundry_seen["editedCard"]
    assert edited is not None and "not verified" in edited, foundry_seen
    assert "dice is not its entry's" in edited and "✓" not in edited, edited


def test_foundry_compares_the_roll_a_message_shows_with_the_logs_roll_not_the_rollers_word(
    foundry_seen: Any,
) -> None:
    """A real record under a Foundry roll of the player's making (a larger modifier and
    total, the roller's `agree` set) is not verified by the viewer, who reads the formula
    and total from the log's entry; the same real roll shown again in another message is
    a roll shown twice."""
    bigger = foundry_seen["biggerCard"]
    assert bigger is not None and "not verified" in bigger and "✓" not in bigger, foundry_seen
    assert "is not the log's roll" in bigger and "2d20kh + 5" in bigger, bigger
    replayed = foundry_seen["replayedCard"]
    assert replayed is not None and "not verified" in replayed, foundry_seen
    assert "was shown before, in another message" in replayed, replayed


def test_owlbear_reads_the_formula_of_a_broadcast_roll_from_the_log_and_a_roll_shown_twice(
    owlbear_seen: Any,
) -> None:
    """The player's real roll broadcast again saying a larger modifier was rolled is not
    verified by the GM's popover (the log's entry holds the formula), and the real roll
    broadcast once more, unchanged, is a roll shown before, not a new one."""
    bigger = owlbear_seen["gmBiggerCard"]
    assert "not verified" in bigger and "2d20kh1 + 9" in bigger, owlbear_seen
    assert "is not the log's roll" in bigger and "✓" not in bigger, bigger
    replayed = owlbear_seen["gmReplayedCard"]
    assert "not verified" in replayed and "was shown before, by" in replayed, replayed


def test_foundry_views_are_confirmed_by_cosigners_announced_over_its_socket(
    foundry_seen: Any,
) -> None:
    """The player pinned the GM's key from the socket and counts the GM's cosignature of
    the shared tree; the GM counts the player's answering cosignature. Mallory's valid
    cosignature of that tree, by a key nobody announced, confirms nothing."""
    seen = foundry_seen
    assert any("confirmed by Gamemaster.foundry" in said for said in seen["playerInfos"]), seen
    assert any("confirmed by Roth.foundry" in said for said in seen["gmInfos"]), seen
    assert not any("Mallory" in said for said in seen["gmInfos"] + seen["playerInfos"]), seen
    assert seen["gmInfosAfterMallory"] == [], seen


def test_owlbear_rolls_on_the_rooms_table_and_raises_the_alarm_on_a_split_view(
    owlbear_seen: Any, server: LiveServer
) -> None:
    seen = owlbear_seen
    # The popover the server served offers that server to the GM for the room.
    assert seen["serverOffered"] == server.url
    assert seen["setupShown"] == {"gm": True, "player": False}
    assert seen["table"] in seen["status"]
    assert "✓ verified by you" in seen["playerCard"] and "2d20kh1 + 5" in seen["playerCard"]
    assert "the server's words: " in seen["playerCard"], seen["playerCard"]
    # The GM's popover checked the player's roll itself.
    assert "Roth rolled" in seen["gmCard"] and "✓ verified by you" in seen["gmCard"]
    assert "agrees with Roth.owlbear" in seen["agreement"]
    assert "different log" in seen["alarm"]
    errors = [n["message"] for n in seen["notifications"] if n["variant"] == "ERROR"]
    assert any("different log" in said for said in errors), seen["notifications"]
    channels = {b["channel"] for b in seen["broadcasts"]}
    assert channels == {
        "rodeo.fairroll/roll",
        "rodeo.fairroll/checkpoint",
        "rodeo.fairroll/cosigner",
    }


def test_owlbear_marks_a_broadcast_roll_by_the_log_not_by_what_was_broadcast(
    owlbear_seen: Any,
) -> None:
    """The player's roll broadcast again with another face and total, its receipt real:
    the GM's popover compares the roll with the log's entry, and does not mark it."""
    edited = owlbear_seen["gmEditedCard"]
    assert "not verified" in edited and "dice is not its entry's" in edited, edited
    assert "✓" not in edited, edited


def test_owlbear_views_are_confirmed_by_cosigners_announced_over_its_broadcast(
    owlbear_seen: Any,
) -> None:
    """Both players announced their cosigner keys over the room's broadcast; the GM counts
    the player's cosignature of the broadcast tree, the player the GM's answer. Mallory's
    valid cosignature of that tree, by a key nobody announced, confirms nothing."""
    seen = owlbear_seen
    assert "confirmed by Roth.owlbear" in seen["gmConfirmed"], seen
    assert "confirmed by Gamemaster.owlbear" in seen["playerConfirmed"], seen
    assert seen["gmConfirmedAfterMallory"] == "", seen


def test_the_wheel_packages_the_built_integrations(built: Path, tmp_path: Path) -> None:
    """``pip install .`` after ``npm run build`` serves them: the build hook
    (``hatch_build.py``) puts each integration's files in the wheel, where the server
    looks first (``fairroll/integrations/``)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path, ROOT],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("fairroll-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for file in integrations.FOUNDRY_FILES:
        assert f"fairroll/integrations/foundry/{file}" in names, file
    site = {p.name for p in (built / "owlbear" / "dist").iterdir()}
    assert {f"fairroll/integrations/owlbear/{name}" for name in site} <= names
