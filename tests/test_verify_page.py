"""The verify page (``GET /verify``) and its offline copy (``GET /verify/offline.html``,
one file opened from ``file://``), in Debian's chromium against a live server: a roll's
real answer pasted with the root key id is verified, in words; the same answer with one
die changed is refused, and so is the real one under another root; the export of its
table, dropped as text, verifies with no server at all. Both pages run the table page's
own verification core (``static/verify.js``): the served page imports it from
``/static``, the offline file holds those very modules in its import map."""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fairroll.page import STATIC
from fairroll.page.verify_page import offline_page
from fairroll.redis_server import RedisServer
from support import LiveServer, browser_ready, run_node

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def server(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    # The offline copy, opened from disk, reads the server from the origin "null".
    log = tmp_path_factory.mktemp("verify-page") / "server.log"
    live = LiveServer(redis_server.url, log, env={"FAIRROLL_CORS_ORIGINS": "*"})
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def seen(server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("verify-page-run")
    table = "t-verify-page"
    with httpx.Client(base_url=server.url, timeout=10) as http:
        answer = http.post("/v1/dice/rolls", json={"table": table, "formula": "4d6kh3"}).json()
        http.post("/v1/dice/rolls", json={"table": table, "formula": "1d20+5"})
        root = http.get("/v1/keys").json()["root"]
        export = http.get(f"/v1/tables/{table}/export").text
        entry = http.get(f"/v1/tables/{table}/entries/{answer['receipt']['seq']}").json()
        offline = http.get("/verify/offline.html")
    assert offline.headers["content-disposition"].startswith("attachment")
    (folder / "verify.html").write_bytes(offline.content)
    tampered = copy.deepcopy(answer)
    tampered["dice"][0]["face"] = tampered["dice"][0]["face"] % 6 + 1
    other_root = "ed25519:" + "0" * 16
    cases = [
        {"name": "answer", "text": json.dumps(answer, indent=1), "root": root},
        {"name": "tampered", "text": json.dumps(tampered), "root": root},
        {"name": "receipt", "text": json.dumps(answer["receipt"]), "root": root},
        {"name": "otherRoot", "text": json.dumps(answer), "root": other_root},
        {"name": "entry", "text": json.dumps(entry), "root": root},
        {"name": "export", "text": export, "root": root, "server": ""},
    ]
    (folder / "cases.json").write_text(json.dumps(cases))
    scripts = browser_ready()
    shot = folder / "verify-page.png"
    said = run_node(
        scripts / "verify_page.mjs",
        f"{server.url}/verify",
        (folder / "verify.html").as_uri(),
        folder / "cases.json",
        shot,
        timeout=120,
    )
    assert "error" not in said, said
    assert said["errors"] == [], said["errors"]
    return {**said, "server_url": server.url, "answer": answer, "shot": shot}


@pytest.mark.parametrize("where", ["served", "offline"])
def test_a_real_answer_is_verified_in_words(seen: Any, where: str) -> None:
    said = seen[where]["answer"]
    assert said["verdict"].startswith("✓ Verified"), said
    holds = " ".join(said["holds"])
    assert "certified by the root key" in holds
    assert f"inclusion proof puts entry {seen['answer']['receipt']['seq']} in it" in holds
    assert "hash and signature hold" in holds and "re-derived" in holds
    assert "mechanic, dice and outcome are the entry's" in holds
    # The offline copy reads the entry and keys from the server it was saved from.
    assert seen[where]["server"] == seen["server_url"]


@pytest.mark.parametrize("where", ["served", "offline"])
def test_an_answer_with_a_die_changed_is_refused(seen: Any, where: str) -> None:
    said = seen[where]["tampered"]
    assert said["verdict"] == "✗ Not verified: the answer's dice is not its entry's", said


@pytest.mark.parametrize("where", ["served", "offline"])
def test_a_receipt_alone_is_verified_against_its_entry(seen: Any, where: str) -> None:
    assert seen[where]["receipt"]["verdict"].startswith("✓ Verified"), seen[where]["receipt"]


@pytest.mark.parametrize("where", ["served", "offline"])
def test_an_entry_alone_is_verified_and_its_place_in_the_log_said_unchecked(
    seen: Any, where: str
) -> None:
    said = seen[where]["entry"]
    assert said["verdict"].startswith("✓ Verified"), said
    assert any("not checked here: paste its receipt" in line for line in said["holds"]), said


@pytest.mark.parametrize("where", ["served", "offline"])
def test_a_root_that_certified_no_key_of_the_server_verifies_nothing(seen: Any, where: str) -> None:
    said = seen[where]["otherRoot"]["verdict"]
    assert said.startswith("✗ Not verified: no signing key of the server is certified"), said


@pytest.mark.parametrize("where", ["served", "offline"])
def test_an_export_verifies_with_no_server(seen: Any, where: str) -> None:
    said = seen[where]["export"]
    assert said["verdict"].startswith("✓ Verified"), said
    assert "All 2 entries of the export hold" in said["holds"][0]


def test_the_offline_copy_holds_the_table_pages_own_verification_core() -> None:
    """Not a copy of the core's code: each module of ``static/verify/`` is in the import
    map as it is on disk, but for its relative imports named for the map."""
    page = offline_page("https://dice.example")
    mapped = json.loads(re.search(r'<script type="importmap">(.*?)</script>', page)[1])
    inlined = {
        name.removeprefix("fairroll/static/"): base64.b64decode(url.split(",", 1)[1]).decode()
        for name, url in mapped["imports"].items()
    }
    core = {p.relative_to(STATIC).as_posix() for p in (STATIC / "verify").glob("*.js")}
    assert core | {"verify.js", "verify-page.js"} <= set(inlined)
    relative = re.compile(r"""(["'])\.\.?/[^"']+\1""")
    for name, source in inlined.items():
        unmapped = relative.sub('""', (STATIC / name).read_text())
        assert relative.sub('""', re.sub(r'"fairroll/static/[^"]+"', '""', source)) == unmapped
    assert 'data-server="https://dice.example"' in page
