"""The spec as SDK generators read it: openapi-python-client, @hey-api/openapi-ts and
datamodel-code-generator each generate from openapi/openapi.json, and none of them makes a
numbered model (``Contestant1``, ``..._type_2_type_1``, ``Mechanic3``) or an untyped one
(``Any``, ``unknown``) for a roll's request, response, odds or audit entry."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fairroll.mechanics import MECHANICS
from support import built_typescript_client

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "openapi" / "openapi.json"
NODE_TOOLS = ROOT / "tests" / "generators"
NUMBERED = re.compile(r"[A-Za-z]\d+$")


def roll_and_entry_types() -> set[str]:
    """Every component a roll's request, response, odds or entry reaches."""
    spec = json.loads(SPEC.read_text())
    schemas = spec["components"]["schemas"]
    roots = {"Entry", "EntryPage", "Odds", "Words", "SystemList"}
    for mechanic in MECHANICS.values():
        roots |= {f"{mechanic.type_name}{kind}" for kind in ("Request", "Response", "Entry")}
    seen: set[str] = set()
    todo = [r for r in roots if r in schemas]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(schemas[name])))
    return seen


def run(*command: str | Path, cwd: Path = ROOT) -> None:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_datamodel_code_generator_names_every_model_and_types_every_field(
    tmp_path: Path,
) -> None:
    out = tmp_path / "models.py"
    run(
        sys.executable, "-m", "datamodel_code_generator",
        "--input", SPEC, "--input-file-type", "openapi",
        "--output-model-type", "pydantic_v2.BaseModel", "--output", out,
        "--formatters", "ruff-format",
    )  # fmt: skip
    tree = ast.parse(out.read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    assert [name for name in classes if NUMBERED.search(name)] == []
    assert "RootModel[None]" not in out.read_text()
    wanted = roll_and_entry_types()
    untyped = [
        f"{name}.{field.target.id}"
        for name, node in classes.items()
        if name in wanted
        for field in node.body
        if isinstance(field, ast.AnnAssign)
        and isinstance(field.target, ast.Name)
        and "Any" in ast.unparse(field.annotation)
    ]
    assert untyped == []
    # Every roll and entry type is a model of its own (none left out, none inlined away).
    assert {f"{m.type_name}Entry" for m in MECHANICS.values()} <= set(classes)


def test_openapi_python_client_makes_no_numbered_models(tmp_path: Path) -> None:
    run(
        sys.executable, "-m", "openapi_python_client", "generate",
        "--path", SPEC, "--output-path", tmp_path / "client", "--meta", "none",
    )  # fmt: skip
    models = tmp_path / "client" / "models"
    names = sorted(p.stem for p in models.glob("*.py") if p.stem != "__init__")
    assert [n for n in names if re.search(r"_type_\d|\d$", n)] == []
    for entry in ("tft_contest_entry", "fbc_roll_entry", "audit_epoch_entry"):
        assert entry in names
    words = (models / "words.py").read_text()
    assert "success: bool | None" in words


@pytest.fixture(scope="module")
def hey_api() -> Path:
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed (Debian: nodejs npm)"
    if not (NODE_TOOLS / "node_modules" / ".package-lock.json").exists():
        run(npm, "ci", "--no-audit", "--no-fund", cwd=NODE_TOOLS)
    return NODE_TOOLS / "node_modules" / ".bin" / "openapi-ts"


def test_hey_api_openapi_ts_types_every_roll_and_entry(hey_api: Path, tmp_path: Path) -> None:
    run(hey_api, "-i", SPEC, "-o", tmp_path / "ts", cwd=NODE_TOOLS)
    types = (tmp_path / "ts" / "types.gen.ts").read_text()
    declared = dict(re.findall(r"export type (\w+) = (.*?)\n};?\n", types, re.S))
    assert [name for name in declared if NUMBERED.search(name)] == []
    wanted = roll_and_entry_types()
    assert [name for name in wanted if "unknown" in declared.get(name, "")] == []
    entry = declared.get("Entry", "") + types.split("export type Entry =", 1)[1][:2000]
    assert "TftContestEntry" in entry and "AuditEpochEntry" in entry


def lint_findings(tool: str) -> list[tuple[str, str]]:
    """(rule, severity) of every finding of Spectral (spectral:oas) or Redocly (recommended)."""
    bin_dir = NODE_TOOLS / "node_modules" / ".bin"
    if tool == "spectral":
        command = [bin_dir / "spectral", "lint", SPEC, "--ruleset", NODE_TOOLS / ".spectral.yaml"]
        command += ["-f", "json", "--quiet"]
    else:
        command = [
            bin_dir / "redocly",
            "lint",
            SPEC,
            "--extends",
            "recommended",
            "--format",
            "json",
        ]
    done = subprocess.run(
        [str(c) for c in command], cwd=NODE_TOOLS, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    found = json.loads(done.stdout)
    if tool == "spectral":
        levels = {0: "error", 1: "warn", 2: "info", 3: "hint"}
        return [(f["code"], levels[f["severity"]]) for f in found]
    return [(f["ruleId"], f["severity"]) for f in found["problems"]]


@pytest.mark.parametrize("tool", ["spectral", "redocly"])
def test_the_spec_lints_clean_and_each_warning_is_reasoned(hey_api: Path, tool: str) -> None:
    findings = lint_findings(tool)
    assert [rule for rule, severity in findings if severity == "error"] == []
    reasons = (ROOT / "docs" / "openapi.md").read_text()
    assert sorted({rule for rule, _ in findings if f"`{rule}`" not in reasons}) == []


def python_client_config() -> str:
    """The openapi-python-client config file docs/openapi.md gives (its yaml block)."""
    docs = (ROOT / "docs" / "openapi.md").read_text()
    found = re.search(r"```yaml\n( *project_name_override:.*?)```", docs, re.S)
    assert found, "docs/openapi.md shows the openapi-python-client config"
    return textwrap.dedent(found[1])


def test_openapi_python_client_never_names_its_client_as_the_official_one(
    tmp_path: Path,
) -> None:
    """The spec's title makes the generator's default ``fairroll-http-client`` /
    ``fairroll_http_client``; the config docs/openapi.md shows names it as one chooses.
    Neither is ``fairroll-client`` / ``fairroll_client``, the official package's names."""
    run(
        sys.executable, "-m", "openapi_python_client", "generate",
        "--path", SPEC, "--output-path", tmp_path / "default", "--meta", "setup",
    )  # fmt: skip
    assert 'name="fairroll-http-client"' in (tmp_path / "default" / "setup.py").read_text()
    assert (tmp_path / "default" / "fairroll_http_client" / "client.py").is_file()
    (tmp_path / "config.yaml").write_text(python_client_config())
    run(
        sys.executable, "-m", "openapi_python_client", "generate", "--path", SPEC,
        "--output-path", tmp_path / "chosen", "--meta", "setup",
        "--config", tmp_path / "config.yaml",
    )  # fmt: skip
    assert 'name="dice-table-api"' in (tmp_path / "chosen" / "setup.py").read_text()
    assert (tmp_path / "chosen" / "dice_table_api" / "client.py").is_file()


def test_a_generated_python_client_installs_beside_the_official_one(tmp_path: Path) -> None:
    """Both pip-installed into one virtualenv: each is its own distribution and module,
    and the official ``fairroll_client`` is still the official one (its ``Fairroll``)."""
    generated = tmp_path / "generated"
    run(
        sys.executable, "-m", "openapi_python_client", "generate",
        "--path", SPEC, "--output-path", generated, "--meta", "setup",
    )  # fmt: skip
    run(sys.executable, "-m", "venv", "--system-site-packages", tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    for package in (ROOT / "clients" / "python", generated):
        run(python, "-m", "pip", "install", "-q", "--no-deps", package)
    probe = """
import importlib.metadata as m, json
import fairroll_client, fairroll_http_client
files = {d: sorted({str(f).split("/")[0] for f in m.distribution(d).files}) for d in
         ("fairroll-client", "fairroll-http-client")}
print(json.dumps({"official": hasattr(fairroll_client, "Fairroll"),
                  "generated": hasattr(fairroll_http_client, "Client"), "files": files}))
"""
    done = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, timeout=120, check=False,
        cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["official"] is True and seen["generated"] is True, seen
    assert "fairroll_http_client" not in seen["files"]["fairroll-client"], seen
    assert "fairroll_client" not in seen["files"]["fairroll-http-client"], seen


def test_a_generated_typescript_client_installs_beside_the_official_one(
    hey_api: Path, tmp_path: Path
) -> None:
    """@hey-api/openapi-ts writes source files, not a package: packaged under the name
    docs/openapi.md gives and npm-installed into one folder with @fairroll/client, each
    is its own package and @fairroll/client is still the official one."""
    npm = shutil.which("npm")
    assert npm is not None
    generated = tmp_path / "fairroll-http-client"
    run(hey_api, "-i", SPEC, "-o", generated / "src", cwd=NODE_TOOLS)
    (generated / "package.json").write_text(
        json.dumps({"name": "fairroll-http-client", "version": "0.0.0", "private": True})
    )
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text(json.dumps({"name": "app", "private": True}))
    run(npm, "pack", "--pack-destination", tmp_path, cwd=generated)
    with built_typescript_client() as index:
        package = index.parent.parent
        run(npm, "pack", "--ignore-scripts", "--pack-destination", tmp_path, cwd=package)
    tarballs = sorted(str(p) for p in tmp_path.glob("*.tgz"))
    run(npm, "install", "--no-audit", "--no-fund", "--prefer-offline", *tarballs, cwd=app)
    official = json.loads((app / "node_modules/@fairroll/client/package.json").read_text())
    assert official["name"] == "@fairroll/client"
    assert (app / "node_modules/@fairroll/client/dist/index.js").is_file()
    assert (app / "node_modules/fairroll-http-client/src/types.gen.ts").is_file()
