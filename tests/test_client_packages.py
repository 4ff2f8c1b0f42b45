"""The client packages as a plugin author gets them (issue 19, items 3 and 5).

The README's snippets are run as they are written there: its install commands in a
fresh folder with a fresh venv (the npm package packed from ``clients/typescript`` and
installed as a tarball, the Python package built by pip from ``clients/python``), then
its JavaScript plugin under Node and its Python plugin in that venv, against a live
server. The same npm package, as installed, is loaded in Chromium with an import map.
The packages' versions must be the spec's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairroll.redis_server import RedisServer, free_port
from support import CLIENTS, LiveServer, browser_ready, run_node, typescript_client_lock

ROOT = Path(__file__).resolve().parent.parent
SNIPPET = re.compile(r"<!-- snippet: (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


def snippets() -> dict[str, str]:
    """The README's runnable snippets, by name."""
    return dict(SNIPPET.findall((ROOT / "README.md").read_text()))


class Project:
    """A plugin author's fresh folder with the README's install commands run in it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.python = folder / ".venv" / "bin" / "python"
        self.env = {
            **os.environ,
            "FAIRROLL": str(ROOT),
            "PATH": f"{folder / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "VIRTUAL_ENV": str(folder / ".venv"),
        }
        self.env.pop("PYTHONPATH", None)

    def run(self, *command: str | Path, timeout: float = 120) -> str:
        ran = subprocess.run(
            [str(c) for c in command],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        return ran.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    folder = tmp_path_factory.mktemp("my-plugin")
    (folder / "package.json").write_text('{"name": "my-plugin", "private": true, "type": "module"}')
    subprocess.run([sys.executable, "-m", "venv", folder / ".venv"], check=True, timeout=120)
    made = Project(folder)
    bash = shutil.which("bash")
    assert bash is not None
    with typescript_client_lock():  # npm ci and the pack's build write in clients/typescript
        made.run(bash, "-euo", "pipefail", "-c", snippets()["install.sh"], timeout=900)
    return made


def test_the_packages_are_versioned_with_the_spec() -> None:
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text())["info"]["version"]
    npm = json.loads((CLIENTS / "typescript" / "package.json").read_text())["version"]
    python = re.search(
        r'^version = "([^"]+)"', (CLIENTS / "python" / "pyproject.toml").read_text(), re.M
    )
    assert python is not None
    assert npm == python.group(1) == spec
    for source in (
        CLIENTS / "typescript" / "src" / "index.ts",
        CLIENTS / "python" / "src" / "fairroll_client" / "__init__.py",
    ):
        assert f'SPEC_VERSION = "{spec}"' in source.read_text(), source
    assert f"## {spec} " in (CLIENTS / "CHANGELOG.md").read_text()


def test_the_readme_plugin_runs_under_node(project: Project, live_server: LiveServer) -> None:
    script = project.folder / "plugin.mjs"
    script.write_text(snippets()["plugin.mjs"])
    project.env["FAIRROLL_URL"] = live_server.url
    said = project.run(shutil.which("node") or "node", script).splitlines()
    assert said[0].startswith("Strength: 4d6kh3 → "), said
    assert said[1].startswith("#1: Hash-chain seed session "), said  # fair by default
    assert said[1].endswith("committed to anchor " + said[1].rsplit(" ", 1)[1]), said
    assert said[2].startswith("#2: "), said
    assert said[3] == "verified 2 entries", said


def test_the_readme_plugin_runs_in_python(project: Project, live_server: LiveServer) -> None:
    script = project.folder / "plugin.py"
    script.write_text(snippets()["plugin.py"])
    project.env["FAIRROLL_URL"] = live_server.url
    said = project.run(project.python, script).splitlines()
    assert said[0].startswith("Longsword: 1d20+5 → "), said
    assert said[1].startswith("#1: Hash-chain seed session "), said  # fair by default
    assert " for Roth: 1000 links " in said[1], said
    assert said[2].startswith("#2: "), said
    assert said[3] == "verified 2 entries", said


PAGES_AND_FORGERY = """
import json, os, sys
from fairroll_client import Fairroll, verify_export

dice = Fairroll(os.environ["FAIRROLL_URL"])
table = dice.create_table()
writer = dice.with_key(table["write_key"])
for i in range(120):  # more than one page of entries (100)
    writer.roll_formula("3d6", table=table["table"], seed=f"page-{i}")
seqs = [e["seq"] for e in dice.all_entries(table["table"])]
lines = dice.export(table["table"]).splitlines()
forged = json.loads(lines[41])
forged["outcome"]["total"] += 1                      # a better total, same dice
lines[41] = json.dumps(forged, separators=(",", ":")).encode()
report = verify_export(b"\\n".join(lines), dice.keys())
elsewhere = verify_export(dice.export(table["table"]), dice.keys(), root="ed25519:0000")
try:
    import fairroll  # the service is not installed here
    server = True
except ModuleNotFoundError:
    server = False
print(json.dumps({"seqs": seqs, "forged": [report.ok, report.first_bad_seq],
                  "elsewhere": elsewhere.ok, "server": server}))
"""


def test_the_python_package_pages_and_catches_a_forgery_without_the_server(
    project: Project, live_server: LiveServer
) -> None:
    script = project.folder / "pages.py"
    script.write_text(PAGES_AND_FORGERY)
    project.env["FAIRROLL_URL"] = live_server.url
    said = json.loads(project.run(project.python, script))
    assert said["seqs"] == list(range(1, 121))
    assert said["forged"] == [False, 42]
    assert said["elsewhere"] is False
    assert said["server"] is False
    listed = project.run(project.python, "-m", "pip", "list", "--format", "json")
    names = {p["name"].lower() for p in json.loads(listed)}
    assert "fairroll-client" in names
    assert not names & {"fairroll", "litestar", "redis", "msgspec"}


FAIR_BY_DEFAULT = """
import json, os
import httpx
from fairroll_client import Fairroll, UnfairRollError, verify_export

url = os.environ["FAIRROLL_URL"]
dice = Fairroll(url, player="Roth")
table = dice.create_table()
writer = dice.with_key(table["write_key"])
session = writer.session(table["table"], length=2)
seeds = []
rolls = []
for _ in range(5):
    rolls.append(writer.roll_formula("1d20", table=table["table"]))
    seeds.append(session.state().client_seed)
export = dice.export(table["table"])
report = verify_export(export, dice.keys(), root=dice.keys()["root"])


class Lying(httpx.BaseTransport):
    # A server that answers a die of its own choosing (the entry it keeps is another
    # matter: the client checks the answer against the chain before it is believed).
    def __init__(self) -> None:
        self.real = httpx.HTTPTransport()

    def handle_request(self, request):
        answer = self.real.handle_request(request)
        if request.url.path != "/v1/dice/rolls":
            return answer
        answer.read()
        body = json.loads(answer.content)
        body["dice"][0]["face"] = body["dice"][0]["face"] % 20 + 1
        return httpx.Response(answer.status_code, headers={"content-type": "application/json"},
                              content=json.dumps(body).encode())


liar = Fairroll(url, table["write_key"], transport=Lying())
try:
    liar.roll_formula("1d20", table=table["table"])
    caught = None
except UnfairRollError as error:
    caught = str(error)
print(json.dumps({
    "sources": [r["source"] for r in rolls],
    "nonces": [r["session"]["nonce"] for r in rolls],
    "chains": [r["session"]["first_nonce"] for r in rolls],
    "seeds": seeds,
    "ok": report.ok, "reason": report.reason,
    "caught": caught,
    "drawn": writer.roll_formula("1d20", table=table["table"], fair=False)["source"],
}))
"""


def test_the_python_package_rolls_fair_by_default_and_catches_a_lying_answer(
    project: Project, live_server: LiveServer
) -> None:
    """Every roll without a seed is in the client's own hash-chain session: the answer
    is checked against the chain before it is returned; each chain gets a new client seed
    (drawn after its anchor was committed); the log verifies; a server answering a die the
    chain does not give is caught; ``fair=False`` asks for a drawn seed."""
    script = project.folder / "fair.py"
    script.write_text(FAIR_BY_DEFAULT)
    project.env["FAIRROLL_URL"] = live_server.url
    said = json.loads(project.run(project.python, script))
    assert said["sources"] == ["committed"] * 5
    assert said["nonces"] == [1, 2, 3, 4, 5]
    assert said["chains"] == [1, 1, 3, 3, 5]
    assert len(set(said["seeds"])) == 3  # one client seed per chain
    assert said["ok"], said["reason"]
    assert said["caught"] == "die 0 does not derive from the link"
    assert said["drawn"] == "drawn"


FAIR_BY_DEFAULT_JS = """
import { createFairroll, UnfairRollError } from "@fairroll/client";
const baseUrl = process.env.FAIRROLL_URL;
const dice = createFairroll({ baseUrl, player: "Sheena" });
const { table, write_key } = await dice.createTable();
const writer = dice.withKey(write_key);
const session = await writer.session(table, { length: 2 });
const rolls = [], seeds = [];
for (let i = 0; i < 5; i++) {
  rolls.push(await writer.rollFormula({ table, formula: "1d20" }));
  seeds.push(session.state().clientSeed);
}
const verdict = await dice.verifyExport(await dice.exportTable(table));
// A server answering a die of its own choosing: the client checks the chain first.
const lying = async (url, init) => {
  const response = await fetch(url, init);
  if (!String(url).endsWith("/v1/dice/rolls")) return response;
  const body = await response.json();
  body.dice[0].face = (body.dice[0].face % 20) + 1;
  return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
};
let caught = null;
try {
  const liar = createFairroll({ baseUrl, writeKey: write_key, fetch: lying });
  await liar.rollFormula({ table, formula: "1d20" });
} catch (error) {
  caught = error instanceof UnfairRollError ? error.message : String(error);
}
const drawn = await writer.rollFormula({ table, formula: "1d20" }, undefined, false);
console.log(JSON.stringify({
  sources: rolls.map((r) => r.source), nonces: rolls.map((r) => r.session.nonce),
  chains: rolls.map((r) => r.session.first_nonce), seeds,
  ok: verdict.ok, problems: verdict.problems,
  caught, drawn: drawn.source,
}));
"""


def test_the_npm_package_rolls_fair_by_default_and_catches_a_lying_answer(
    project: Project, live_server: LiveServer
) -> None:
    script = project.folder / "fair.mjs"
    script.write_text(FAIR_BY_DEFAULT_JS)
    project.env["FAIRROLL_URL"] = live_server.url
    said = json.loads(project.run(shutil.which("node") or "node", script))
    assert said["sources"] == ["committed"] * 5
    assert said["nonces"] == [1, 2, 3, 4, 5]
    assert said["chains"] == [1, 1, 3, 3, 5]
    assert len(set(said["seeds"])) == 3  # one client seed per chain
    assert said["ok"], said["problems"]
    assert said["caught"] == "die 0 does not derive from the link"
    assert said["drawn"] == "drawn"


PAGE = """<!doctype html>
<meta charset="utf-8">
<title>plugin</title>
<link rel="icon" href="data:,">
<script type="importmap">
{"imports": {
  "@fairroll/client": "/node_modules/@fairroll/client/dist/index.js",
  "openapi-fetch": "/node_modules/openapi-fetch/dist/index.mjs"
}}
</script>
<script type="module">
import { createFairroll, describe, SPEC_VERSION } from "@fairroll/client";
const dice = createFairroll({ baseUrl: "%(server)s" });
try {
  const { table, write_key } = await dice.createTable();
  const writer = dice.withKey(write_key);
  const rolled = await writer.rollFormula({ table, formula: "2d20kh1 # Advantage" });
  let seen = null;
  for await (const event of dice.events(table, { after: 0 })) { seen = event.seq; break; }
  const verdict = await dice.verifyExport(await dice.exportTable(table));
  window.result = { words: describe(rolled.words), seen, ok: verdict.ok, version: SPEC_VERSION };
} catch (error) {
  window.result = { error: String(error) };
}
</script>
"""


@pytest.fixture
def cors_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(redis_server.url, tmp_path / "cors.log", env={"FAIRROLL_CORS_ORIGINS": "*"})
    try:
        yield server
    finally:
        server.stop()


def test_the_npm_package_loads_in_chromium(project: Project, cors_server: LiveServer) -> None:
    scripts = browser_ready()
    (project.folder / "index.html").write_text(PAGE % {"server": cors_server.url})
    port = free_port()
    static = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=project.folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        seen = run_node(scripts / "client_package.mjs", f"http://127.0.0.1:{port}/index.html")
    finally:
        static.terminate()
        static.wait(10)
    assert seen["errors"] == [], seen
    assert "error" not in seen, seen
    assert seen["words"][0] == "Advantage: 2d20kh1"
    assert seen["seen"] == 1
    assert seen["ok"] is True
    assert seen["version"] == "0.1.0"
