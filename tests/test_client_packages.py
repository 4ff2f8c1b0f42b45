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
from typing import Any

import pytest

from fairroll.audit import load_signer
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
SNIPPET = re.compile(r"<!-- snippet: (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


def said_as_shown(snippet: str, printed: str, comment: str) -> None:
    """Each output a snippet shows in a comment after a print (``# 13 — 4d6kh3: ...``)
    is printed, in order, with any numbers: the comment read as a pattern, digits free."""
    lines = iter(printed.splitlines())
    for line in snippet.splitlines():
        if ("print(" not in line and "console.log(" not in line) or f"{comment} " not in line:
            continue
        shown = line.split(f"{comment} ", 1)[1].strip()
        pattern = re.sub(r"\d+", r"\\d+", re.escape(shown))
        assert any(re.fullmatch(pattern, out) for out in lines), (shown, printed)


def snippets(readme: Path = ROOT / "README.md") -> dict[str, str]:
    """A README's runnable snippets, by name."""
    return dict(SNIPPET.findall(readme.read_text()))


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


def pinned_root() -> str:
    """The live server's root key id, as its operator knows it (from its key, not from
    anything the server says)."""
    return load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).certificate.certified_by


def test_the_readme_plugin_runs_under_node(project: Project, live_server: LiveServer) -> None:
    script = project.folder / "plugin.mjs"
    script.write_text(snippets()["plugin.mjs"])
    project.env["FAIRROLL_URL"] = live_server.url
    project.env["FAIRROLL_ROOT"] = pinned_root()
    said = project.run(shutil.which("node") or "node", script).splitlines()
    assert said[0].startswith("Strength: 4d6kh3 → "), said
    assert re.fullmatch(r"seed session s[\w-]{16}, nonce 1", said[1]), said
    assert said[2].endswith("(nonce 2)"), said  # a contest, fair through api.POST too
    assert said[3].startswith("#1: Hash-chain seed session "), said  # fair by default
    assert said[3].endswith("committed to anchor " + said[3].rsplit(" ", 1)[1]), said
    assert said[4].startswith("#2: ") and said[5].startswith("#3: "), said
    assert said[6] == "verified 3 entries", said
    # No root: nothing is called verified.
    del project.env["FAIRROLL_ROOT"]
    unpinned = project.run(shutil.which("node") or "node", script).splitlines()
    assert unpinned[-1] == "NOT VERIFIED: set FAIRROLL_ROOT to the root key id", unpinned
    # Pinned to another root, the rolls are refused: the root is what is trusted.
    project.env["FAIRROLL_ROOT"] = "ed25519:0000000000000000"
    refused = subprocess.run(
        [shutil.which("node") or "node", str(script)],
        cwd=project.folder,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode != 0
    assert "no signing key is certified by the root ed25519:0000000000000000" in refused.stderr


def test_a_shown_output_is_held_to_its_shape() -> None:
    snippet = "print(a)  # 12 + 2 = 14 — 3d6: 6, 5, 1\nprint(b)  # True 2 ()"
    said_as_shown(snippet, "9 + 2 = 11 — 3d6: 3, 2, 4\nextra\nTrue 2 ()", "#")
    for wrong in ("9 + 2 = 11 — 2d6: 3, 2\nTrue 2 ()", "True 2 ()\n9 + 2 = 11 — 3d6: 3, 2, 4"):
        with pytest.raises(AssertionError):
            said_as_shown(snippet, wrong, "#")


def test_the_client_readmes_run_as_written(project: Project, live_server: LiveServer) -> None:
    """Each package's README snippet, run as written, prints what its comments show."""
    project.env["FAIRROLL_URL"] = live_server.url
    project.env["FAIRROLL_ROOT"] = pinned_root()
    for readme, name, run, comment in (
        (CLIENTS / "typescript" / "README.md", "client-readme.mjs", "node", "//"),
        (CLIENTS / "python" / "README.md", "client-readme.py", project.python, "#"),
    ):
        snippet = snippets(readme)[name]
        (project.folder / name).write_text(snippet)
        printed = project.run(shutil.which(str(run)) or run, project.folder / name)
        said_as_shown(snippet, printed, comment)


def test_the_readme_plugin_type_checks_under_strict_tsc(project: Project) -> None:
    """The snippet as a TypeScript user's editor reads it: tsc --strict over the JS."""
    script = project.folder / "plugin-typed.mjs"
    script.write_text(snippets()["plugin.mjs"])
    with typescript_client_lock() as folder:  # another worker's npm ci may be rewriting it
        tools = folder / "node_modules"
        project.run(
            tools / ".bin" / "tsc",
            *("--strict", "--allowJs", "--checkJs", "--noEmit", "--skipLibCheck"),
            *("--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"),
            *("--types", "node", "--typeRoots", tools / "@types"),
            script,
        )


def test_the_readme_plugin_runs_in_python(project: Project, live_server: LiveServer) -> None:
    """The Python plugin rolls fair, each answer verified under the pinned root; under a
    root that certified no key of this server the first answer is refused; with no root
    nothing says "verified"."""
    script = project.folder / "plugin.py"
    script.write_text(snippets()["plugin.py"])
    project.env["FAIRROLL_URL"] = live_server.url
    project.env["FAIRROLL_ROOT"] = pinned_root()
    said = project.run(project.python, script).splitlines()
    assert said[0].startswith("Longsword: 1d20+5 → "), said
    assert re.fullmatch(r"seed session s[\w-]{16}, nonce 1", said[1]), said
    assert said[2] == f"verified under root {pinned_root()}", said
    assert said[3].startswith("#1: Hash-chain seed session "), said  # fair by default
    assert " for Roth: 1000 links " in said[3], said
    assert said[4].startswith("#2: "), said
    assert said[5] == "verified 2 entries", said
    project.env["FAIRROLL_ROOT"] = "ed25519:0000000000000000"
    refused = subprocess.run(
        [project.python, script], env=project.env, capture_output=True, text=True, check=False
    )
    assert refused.returncode != 0
    assert "UnfairRollError" in refused.stderr and "not certified by the pinned root" in (
        refused.stderr
    ), refused.stderr
    del project.env["FAIRROLL_ROOT"]
    unpinned = project.run(project.python, script).splitlines()
    assert unpinned[2].startswith("NOT VERIFIED: no root key is pinned"), unpinned
    assert not any(line.startswith("verified") for line in unpinned), unpinned
    assert "NOT VERIFIED" in unpinned[-1], unpinned


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
report = verify_export(b"\\n".join(lines), dice.keys(), root=dice.keys()["root"])
elsewhere = verify_export(dice.export(table["table"]), dice.keys(), root="ed25519:0000")
try:
    import fairroll  # the service is not installed here
    server = True
except ModuleNotFoundError:
    server = False
# A table's policy as keywords or as the spec's object; a word it does not have is refused.
strict = dice.create_table(chosen_seeds=False)["policy"]
spelled = dice.create_table(policy={"supplied_dice": False})["policy"]
try:
    dice.create_table(chosen=False)
    refused = None
except TypeError as error:
    refused = str(error)
print(json.dumps({"seqs": seqs, "forged": [report.ok, report.first_bad_seq],
                  "elsewhere": elsewhere.ok, "server": server,
                  "policies": [strict["chosen_seeds"], spelled["supplied_dice"]],
                  "refused": refused}))
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
    assert said["policies"] == [False, False]
    assert said["refused"] is not None and "chosen_seeds" in said["refused"]
    listed = project.run(project.python, "-m", "pip", "list", "--format", "json")
    names = {p["name"].lower() for p in json.loads(listed)}
    assert "fairroll-client" in names
    # msgspec is the vendored verification core's own dependency; the service is not here.
    assert not names & {"fairroll", "litestar", "redis"}


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
    # Each client names what it caught in its own words: the die, or the entry it is not.
    caught = said["caught"] or ""
    assert "does not derive from the seed" in caught or "dice is not the log's" in caught, caught
    assert said["drawn"] == "drawn"


ASYNC_FAIR_BY_DEFAULT = """
import asyncio, json, os
import httpx
from fairroll_client import AsyncFairroll, UnfairRollError


class Lying(httpx.AsyncBaseTransport):
    # A server that answers a die of its own choosing: caught before it is believed.
    def __init__(self) -> None:
        self.real = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request):
        answer = await self.real.handle_async_request(request)
        if request.url.path != "/v1/dice/rolls":
            return answer
        body = json.loads(await answer.aread())
        body["dice"][0]["face"] = body["dice"][0]["face"] % 20 + 1
        return httpx.Response(answer.status_code, headers={"content-type": "application/json"},
                              content=json.dumps(body).encode())


async def main():
    url = os.environ["FAIRROLL_URL"]
    async with AsyncFairroll(url, player="Roth") as dice:
        table = await dice.create_table(chosen_seeds=False)
        writer = dice.with_key(table["write_key"])
        await writer.session(table["table"], length=2)
        # Six rolls at once, as a bot under load: one session, one nonce each, in order.
        rolls = await asyncio.gather(
            *(writer.roll_formula("1d20", table=table["table"]) for _ in range(6))
        )
        seen = []
        async for event in dice.events(table["table"], after=0):
            seen.append(event.seq)
            if event.seq == max(r["receipt"]["seq"] for r in rolls):
                break
        report = await dice.verify(table["table"], root=(await dice.keys())["root"])
        elsewhere = await dice.verify(table["table"], root="ed25519:0000000000000000")
        async with AsyncFairroll(url, table["write_key"], transport=Lying()) as liar:
            try:
                await liar.roll_formula("1d20", table=table["table"])
                caught = None
            except UnfairRollError as error:
                caught = str(error)
        drawn = await writer.roll_formula("1d20", table=table["table"], fair=False)
        try:
            await writer.roll_formula("1d20", table=table["table"], seed="mine")
            chosen = None
        except Exception as error:
            chosen = getattr(error, "status", None)
        await writer.aclose()
    print(json.dumps({
        "sources": [r["source"] for r in rolls],
        "nonces": sorted(r["session"]["nonce"] for r in rolls),
        "chains": sorted(r["session"]["first_nonce"] for r in rolls),
        "seen": seen,
        "ok": report.ok, "problems": list(report.problems), "entries": report.entries,
        "elsewhere": [elsewhere.ok, list(elsewhere.problems)],
        "caught": caught, "drawn": drawn["source"], "chosen": chosen,
    }))

asyncio.run(main())
"""


def test_the_async_python_client_rolls_fair_by_default_and_catches_a_lying_answer(
    project: Project, live_server: LiveServer
) -> None:
    """``AsyncFairroll``, installed: concurrent rolls share one seed session without a
    nonce taken twice, each answer checked against its chain; events follow the table;
    the log verifies under the pinned root and not under another; a lying die is caught;
    the table's policy (no chosen seeds) is taken as keywords and enforced."""
    script = project.folder / "fair_async.py"
    script.write_text(ASYNC_FAIR_BY_DEFAULT)
    project.env["FAIRROLL_URL"] = live_server.url
    said = json.loads(project.run(project.python, script))
    assert said["sources"] == ["committed"] * 6
    assert said["nonces"] == [1, 2, 3, 4, 5, 6]
    assert said["chains"] == [1, 1, 3, 3, 5, 5]
    assert said["seen"] == list(range(1, len(said["seen"]) + 1)) and len(said["seen"]) >= 7
    assert said["ok"] and said["problems"] == [], said
    assert said["elsewhere"][0] is False
    assert "not certified by the pinned root ed25519:0000000000000000" in said["elsewhere"][1][0]
    # Each client names what it caught in its own words: the die, or the entry it is not.
    caught = said["caught"] or ""
    assert "does not derive from the seed" in caught or "dice is not the log's" in caught, caught
    assert said["drawn"] == "drawn" and said["chosen"] == 422  # refused by the policy


VERDICT_PY = """
import dataclasses, json, os, sys
from fairroll_client import Fairroll, verify_export

dice = Fairroll(os.environ["FAIRROLL_URL"])
table = dice.create_table()
writer = dice.with_key(table["write_key"])
for i in range(4):
    writer.roll_formula("3d6", table=table["table"], seed=f"shape-{i}")
lines = dice.export(table["table"]).decode().splitlines()
forged = json.loads(lines[2])
forged["outcome"]["total"] += 1
lines[2] = json.dumps(forged, separators=(",", ":"))
keys = dice.keys()
logs = {"sound": "\\n".join(lines[:2]), "forged": "\\n".join(lines)}
verdicts = {}
for name, log in logs.items():
    for root in (keys["root"], "ed25519:0000000000000000"):
        verdicts[f"{name} {root[-4:]}"] = dataclasses.asdict(verify_export(log, keys, root=root))
json.dump({"logs": logs, "keys": keys, "root": keys["root"]}, open(sys.argv[1], "w"))
print(json.dumps(verdicts))
"""

VERDICT_JS = """
import { readFileSync } from "node:fs";
import { createFairroll } from "@fairroll/client";
const { logs, keys, root } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const dice = createFairroll({ baseUrl: "http://127.0.0.1:9" });  // nothing is fetched
const verdicts = {};
for (const [name, log] of Object.entries(logs)) {
  for (const pinned of [root, "ed25519:0000000000000000"]) {
    verdicts[`${name} ${pinned.slice(-4)}`] = await dice.verifyExport(log, keys, pinned);
  }
}
console.log(JSON.stringify(verdicts));
"""

SHARED_VERDICT = ("ok", "entries", "first_bad_seq", "problems", "sources", "signatures_checked")


def test_both_packages_give_one_verdict_shape(project: Project, live_server: LiveServer) -> None:
    """The same logs, sound and forged, under the pinned root and another: the Python
    and the npm package answer the same fields with the same values (the npm package may
    list more problems than the first; the first is at the same seq)."""
    (project.folder / "shape.py").write_text(VERDICT_PY)
    (project.folder / "shape.mjs").write_text(VERDICT_JS)
    project.env["FAIRROLL_URL"] = live_server.url
    shared = project.folder / "logs.json"
    python = json.loads(project.run(project.python, "shape.py", shared))
    npm = json.loads(project.run(shutil.which("node") or "node", "shape.mjs", shared))
    assert set(python) == set(npm) and len(python) == 4
    for case, verdict in python.items():
        other = npm[case]
        assert set(SHARED_VERDICT) <= set(verdict) & set(other), case
        for field in ("ok", "entries", "first_bad_seq"):
            assert verdict[field] == other[field], (case, field, verdict, other)
        assert bool(verdict["problems"]) == bool(other["problems"]) != verdict["ok"], case
        if verdict["problems"]:
            seq = verdict["first_bad_seq"]
            assert verdict["problems"][0].startswith(f"seq {seq}: " if seq else "no signing"), case
            assert other["problems"][0].split(":")[0] == verdict["problems"][0].split(":")[0]
        if verdict["ok"]:
            fields = ("sources", "signatures_checked")
            assert [verdict[f] for f in fields] == [other[f] for f in fields], case
    assert python["forged " + python_root_tail(python)]["first_bad_seq"] == 3


def python_root_tail(verdicts: dict[str, Any]) -> str:
    return next(case.split()[1] for case in verdicts if not case.endswith("0000"))


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
const { root } = await dice.keys();
const pinned = await dice.verifyExport(await dice.exportTable(table), undefined, root);
const elsewhere = await dice.verifyExport(await dice.exportTable(table), undefined, "ed25519:0000");
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
  ok: verdict.ok, problems: verdict.problems, unpinned: [verdict.ok, verdict.problems[0] ?? ""],
  pinned: pinned.ok, elsewhere: [elsewhere.ok, elsewhere.problems],
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
    # No root pinned: NOT VERIFIED, whatever the log holds; under the root, verified.
    assert said["unpinned"][0] is False and said["unpinned"][1].startswith("NOT VERIFIED")
    assert said["pinned"] is True
    assert said["elsewhere"][0] is False, said["elsewhere"]
    assert "not certified by the pinned root ed25519:0000" in said["elsewhere"][1][0]
    # Each client names what it caught in its own words: the die, or the entry it is not.
    caught = said["caught"] or ""
    assert "does not derive from the seed" in caught or "dice is not the log's" in caught, caught
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
  // The root a plugin pins comes out of band; this test takes the server's own.
  const { root } = await dice.keys();
  const verdict = await dice.verifyExport(await dice.exportTable(table), undefined, root);
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


WITNESS = """
import json, os
from fairroll_client import EquivocationError, Fairroll, TableWitness, ViewError

dice = Fairroll(os.environ["FAIRROLL_URL"])
table = os.environ["TABLE"]
root = dice.keys()["root"]
roth = TableWitness.new(dice, table, name="roth.players.example", root=root)
sheena = TableWitness.new(dice, table, name="sheena.players.example", root=root)
# Each trusts the other's key, exchanged over a channel the operator does not run.
roth.trust(sheena.vkey)
sheena.trust(roth.vkey)
first = roth.check()
second = sheena.check()
# The same tree again: Sheena's cosignature of it is there now.
again = TableWitness.resume(dice, json.loads(json.dumps(roth.state()))).check()
# Sheena is handed, out of band, a note the operator signed for another tree of size 3.
split = sheena.compare(open(os.environ["SPLIT"]).read())
with open(os.environ["OUT_A"], "w") as out:
    out.write(split.first)
with open(os.environ["OUT_B"], "w") as out:
    out.write(split.second)
# The log grows; a note of size 4 over another tree is not consistent with size 3.
dice.roll_formula("1d6", table=table, fair=False)
try:
    roth.compare(open(os.environ["FORK"]).read())
    forked = None
except ViewError as error:
    forked = str(error).splitlines()[0]
grown = roth.check()
print(json.dumps({
    "first": [first.size, first.unconfirmed],
    "second": second.confirmed_by,
    "again": again.confirmed_by,
    "split": str(split).splitlines()[0],
    "forked": forked,
    "grown": [grown.size, grown.confirmed_by],
    "trees": sorted(t["size"] for t in roth.state()["trees"]),
}))
"""


def forged_views(server: LiveServer, folder: Path) -> dict[str, str]:
    """A table of three rolls, its keys, and two notes its operator signed with its real
    key for trees it does not hold: a split view of size 3 and a fork of size 4."""
    import httpx  # noqa: PLC0415

    from fairroll.audit import load_signer  # noqa: PLC0415
    from fairroll.audit.checkpoint import sign_checkpoint  # noqa: PLC0415
    from support import TEST_SIGNING_KEY  # noqa: PLC0415

    table = "t-witness-" + os.urandom(6).hex()
    with httpx.Client(base_url=server.url, timeout=10) as http:
        for _ in range(3):
            assert http.post("/v1/dice/rolls", json={"table": table, "formula": "1d6"}).is_success
        head = http.get(f"/v1/tables/{table}/checkpoint").json()["head_hash"]
        (folder / "keys.json").write_text(http.get("/v1/keys").text)
    signer = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None)
    (folder / "split").write_text(sign_checkpoint(signer, table, 3, b"\x07" * 32, head).text)
    (folder / "fork").write_text(sign_checkpoint(signer, table, 4, b"\x09" * 32, head).text)
    return {
        "FAIRROLL_URL": server.url,
        "TABLE": table,
        "SPLIT": str(folder / "split"),
        "FORK": str(folder / "fork"),
        "OUT_A": str(folder / "a.note"),
        "OUT_B": str(folder / "b.note"),
    }


def witnessed(said: dict[str, Any], folder: Path) -> None:
    """What either client's witness script must have seen (``WITNESS``, ``WITNESS_JS``)."""
    assert said["first"] == [3, True]  # nobody else had cosigned it yet
    assert said["second"] == ["roth.players.example"]
    assert said["again"] == ["sheena.players.example"]
    assert said["split"] == "EQUIVOCATION: two signed trees of size 3 for one log"
    assert said["forked"] is not None and "not consistent" in said["forked"]
    assert said["grown"] == [4, []] and said["trees"] == [3, 4]
    proven = equivocation_proven(folder)
    assert proven.returncode == 3, proven.stdout + proven.stderr


def equivocation_proven(folder: Path) -> subprocess.CompletedProcess[str]:
    root = json.loads((folder / "keys.json").read_text())["root"]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "fairroll.cli",
            "verify",
            "--equivocation",
            folder / "a.note",
            folder / "b.note",
            "--keys",
            folder / "keys.json",
            "--root",
            root,
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_python_package_witnesses_checkpoints_and_catches_a_split_view(
    project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    """Two players keep, prove consistent and cosign the checkpoints they verify; each
    sees the other's cosignature of the same tree (unconfirmed before); a note the
    operator signed for another tree of the same size, handed over out of band, is an
    equivocation whose two notes ``fairroll verify --equivocation`` proves; a larger
    tree that does not extend the verified one is refused."""
    script = project.folder / "witness.py"
    script.write_text(WITNESS)
    project.env.update(forged_views(live_server, tmp_path))
    witnessed(json.loads(project.run(project.python, script)), tmp_path)


WITNESS_JS = """
import { readFileSync, writeFileSync } from "node:fs";
import { createFairroll, Equivocation } from "@fairroll/client";
const env = process.env;
const dice = createFairroll({ baseUrl: env.FAIRROLL_URL });
const table = env.TABLE;
const { root } = await dice.keys();
const roth = await dice.witness(table, "roth.players.example", root);
const sheena = await dice.witness(table, "sheena.players.example", root);
// Each trusts the other's key, exchanged over a channel the operator does not run.
roth.trust(sheena.vkey);
sheena.trust(roth.vkey);
const first = await roth.check();
const second = await sheena.check();
const kept = JSON.parse(JSON.stringify(roth.state()));
const again = await (await dice.witness(table, "", "", kept)).check();
const split = await sheena.compare(readFileSync(env.SPLIT, "utf8"));
writeFileSync(env.OUT_A, split.first);
writeFileSync(env.OUT_B, split.second);
await dice.rollFormula({ table, formula: "1d6" }, undefined, false);
let forked = null;
try {
  await roth.compare(readFileSync(env.FORK, "utf8"));
} catch (error) {
  forked = error.message.split("\\n")[0];
}
const grown = await roth.check();
console.log(JSON.stringify({
  first: [first.size, first.unconfirmed], second: second.confirmedBy, again: again.confirmedBy,
  split: split instanceof Equivocation ? split.message.split("\\n")[0] : null, forked,
  grown: [grown.size, grown.confirmedBy], trees: roth.state().trees.map((t) => t.size),
}));
"""


def test_the_npm_package_witnesses_checkpoints_and_catches_a_split_view(
    project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    """The same as the Python package's, with WebCrypto keys."""
    script = project.folder / "witness.mjs"
    script.write_text(WITNESS_JS)
    project.env.update(forged_views(live_server, tmp_path))
    witnessed(json.loads(project.run(shutil.which("node") or "node", script)), tmp_path)


REFUSALS = """
import json, os
import httpx
from fairroll_client import Fairroll, FairrollError, verify_export

url = os.environ["FAIRROLL_URL"]


class Refusing(httpx.BaseTransport):
    # An operator refusing rolls: the first before the server sees it, the second after
    # the server recorded it (it saw the dice, and drops the answer), then it gives in.
    def __init__(self) -> None:
        self.real = httpx.HTTPTransport()
        self.asked = []

    def handle_request(self, request):
        if request.url.path != "/v1/dice/rolls":
            return self.real.handle_request(request)
        body = json.loads(request.content)
        self.asked.append([body["session"]["nonce"], body["session"]["client_seed"],
                           request.headers.get("idempotency-key")])
        if len(self.asked) == 1:
            return httpx.Response(503, json={"status": 503, "title": "refused"})
        answer = self.real.handle_request(request)
        answer.read()
        if len(self.asked) == 2:
            return httpx.Response(503, json={"status": 503, "title": "refused"})
        return answer


refusing = Refusing()
dice = Fairroll(url, player="Roth", transport=refusing)
table = "t-refused-" + os.urandom(6).hex()
statuses = []
for _ in range(3):
    try:
        rolled = dice.roll_formula("3d6", table=table)
        statuses.append(200)
    except FairrollError as error:
        statuses.append(error.status)
after = dice.roll_formula("1d6", table=table)
report = verify_export(dice.export(table), dice.keys(), root=dice.keys()["root"])
with open(os.environ["EXPORT"], "wb") as out:
    out.write(dice.export(table))
print(json.dumps({
    "statuses": statuses, "asked": refusing.asked, "nonce": rolled["session"]["nonce"],
    "next": after["session"]["nonce"], "entries": report.entries, "ok": report.ok,
}))
"""


def test_a_selective_refusal_repeats_the_same_roll_and_cannot_change_a_die(
    project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    """An operator that refuses a player's roll, before or after seeing its dice, can
    only refuse it again: the client resends the same nonce, client seed and
    Idempotency-Key, so what it finally gets is the one roll that nonce gives (checked
    against the chain), recorded once; the nonce after it is the next. The verifiers say
    in words what such refusals look like."""
    script = project.folder / "refusals.py"
    script.write_text(REFUSALS)
    project.env.update(FAIRROLL_URL=live_server.url, EXPORT=str(tmp_path / "export.ndjson"))
    said = json.loads(project.run(project.python, script))
    assert said["statuses"] == [503, 503, 200]
    refused, then = said["asked"][:3], said["asked"][3:]
    assert len({tuple(a) for a in refused}) == 1, said["asked"]  # the same roll, thrice
    assert refused[0][0] == 1 and said["nonce"] == 1
    assert [a[0] for a in then] == [2] and said["next"] == 2
    # session.commit, the roll recorded once (its retry answered from the record), the next
    assert said["entries"] == 3 and said["ok"]
    root = json.loads(project.run(project.python, "-c", KEYS_ROOT))["root"]
    verified = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairroll.cli",
            "verify",
            tmp_path / "export.ndjson",
            "--root",
            root,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout
    assert "the same nonce and client seed refused again and again" in verified.stdout


KEYS_ROOT = """
import json, os
from fairroll_client import Fairroll
print(json.dumps({"root": Fairroll(os.environ["FAIRROLL_URL"]).keys()["root"]}))
"""
