"""The JavaScript live check holds a field the player left out to its default (docs/audit.md,
row 22: the request is the one sent, "as the mechanic reads it, defaults filled on both
sides").

The log keeps a roll's request with its defaults filled in. A check that compared only
the fields a client sent let an operator fill a field the player left out with another
value, an honest roll of another request: the player's formula read in avrae's notation
rather than Roll20's, a Tribute test under the classic Profit rule rather than the
revised one, so the operator could pick the reading whose outcome it liked. The JS core
(the page and the npm client) now fills the body it sent from verify/defaults.js, made
by scripts/js_defaults.py from the mechanics' request types, before it compares.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fairroll.audit import load_signer
from fairroll.mechanics import MECHANICS
from support import TEST_SIGNING_KEY, LiveServer, built_typescript_client, run_node

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "service" / "fairroll" / "page" / "static"
PINNED = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id
#: The envelope's fields: the log keeps them apart from the mechanic's request.
ENVELOPE = ("table", "seed", "dice", "session", "sealed")


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("js_defaults", ROOT / "scripts/js_defaults.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module_tables() -> dict[str, Any]:
    text = (STATIC / "verify" / "defaults.js").read_text(encoding="utf-8")
    found = re.findall(r"^export const (\w+) = Object\.freeze\((.*?)\);$", text, re.M | re.S)
    return {name: json.loads(value) for name, value in found}


def test_the_committed_defaults_module_is_the_one_the_script_makes() -> None:
    """Declare once: the defaults the JS core fills are the server's, never re-typed.
    Run ``python scripts/js_defaults.py`` after changing a mechanic's request."""
    made = _script().render()
    committed = (STATIC / "verify" / "defaults.js").read_text(encoding="utf-8")
    assert committed == made, "verify/defaults.js drifted: run python scripts/js_defaults.py"


def _module_defaults(tables: dict[str, Any], kind: Any, at: str, out: set[tuple[str, str]]) -> None:
    if isinstance(kind, str):
        for name, field in tables["STRUCTS"][kind].items():
            if "default" in field:
                out.add((f"{at}.{name}", json.dumps(field["default"], sort_keys=True)))
            _module_defaults(tables, field.get("type"), f"{at}.{name}", out)
    elif isinstance(kind, dict) and "items" in kind:
        _module_defaults(tables, kind["items"], f"{at}[]", out)
    elif isinstance(kind, dict) and "values" in kind:
        _module_defaults(tables, kind["values"], f"{at}{{}}", out)
    elif isinstance(kind, dict) and "tag" in kind:
        for member in kind["of"].values():
            _module_defaults(tables, member, at, out)


def _spec_defaults(
    schemas: dict[str, Any], schema: dict[str, Any], at: str, out: set[tuple[str, str]]
) -> None:
    if "$ref" in schema:
        _spec_defaults(schemas, schemas[schema["$ref"].rsplit("/", 1)[1]], at, out)
    for key in ("oneOf", "anyOf", "allOf"):
        for member in schema.get(key, []):
            _spec_defaults(schemas, member, at, out)
    if isinstance(schema.get("items"), dict):
        _spec_defaults(schemas, schema["items"], f"{at}[]", out)
    if isinstance(schema.get("additionalProperties"), dict):
        _spec_defaults(schemas, schema["additionalProperties"], f"{at}{{}}", out)
    for name, field in schema.get("properties", {}).items():
        if at == "" and name in ENVELOPE:
            continue
        if "default" in field:
            out.add((f"{at}.{name}", json.dumps(field["default"], sort_keys=True)))
        _spec_defaults(schemas, field, f"{at}.{name}", out)


@pytest.mark.parametrize("mechanic", sorted(MECHANICS))
def test_every_default_the_committed_spec_declares_is_the_modules(mechanic: str) -> None:
    """The committed spec (each roll path's request, ``$ref``s resolved, nested objects and
    lists of them) and the module agree. The spec says fewer: it leaves out a default of
    null and one a factory makes (an empty list, a struct's own defaults), which the
    module holds, since the log fills those in too."""
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text(encoding="utf-8"))
    declared = MECHANICS[mechanic]
    operation = spec["paths"][f"/v1/{declared.system}{declared.path}"]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    in_spec: set[tuple[str, str]] = set()
    _spec_defaults(spec["components"]["schemas"], schema, "", in_spec)
    tables = _module_tables()
    in_module: set[tuple[str, str]] = set()
    _module_defaults(tables, tables["MECHANICS"].get(mechanic), "", in_module)
    assert in_spec <= in_module, in_spec - in_module
    unsaid = {default for _, default in in_module - in_spec}
    assert all(d == "null" or d.startswith(("[", "{")) for d in unsaid), unsaid


def _honest_rolls() -> list[dict[str, Any]]:
    """One request of every mechanic (the spec's first example of its roll operation), as
    a fair roll sends it: no seed, dice or table, its defaulted fields left out."""
    examples = json.loads((STATIC.parent.parent / "spec" / "examples.json").read_text())
    rolls = []
    for name, mechanic in sorted(MECHANICS.items()):
        body = next(e["request"] for e in examples if e["operation"] == mechanic.operation_id)
        kept = {k: v for k, v in body.items() if k not in (*ENVELOPE, "choice")}
        rolls.append({"name": name, "path": f"/v1/{mechanic.system}{mechanic.path}", "body": kept})
    return rolls


@pytest.fixture(scope="module")
def built() -> Iterator[Path]:
    with built_typescript_client() as index:
        yield index


@pytest.fixture(scope="module")
def seen(built: Path, live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    honest = tmp_path_factory.mktemp("defaults") / "honest.json"
    honest.write_text(json.dumps(_honest_rolls()), encoding="utf-8")
    return run_node(
        ROOT / "tests" / "js" / "live_defaults.mjs",
        built,
        STATIC / "verify.js",
        live_server.url,
        PINNED,
        "t-js-defaults",
        honest,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("dice-dialect", 'dialect: "avrae" logged, the server\'s default "roll20"'),
        ("tribute-profit-rule", 'profit_rule: "classic" logged, the server\'s default "revised"'),
        ("tribute-effect-rank", "effect_rank: 3 logged, the server's default null"),
        ("attack-nested-level", "attacker.level: 3 logged, the server's default 1"),
        ("initiative-list-level", "fighters[1].level: 2 logged, the server's default 1"),
        ("attack-default-list", "attacker.trinkets: "),
    ],
)
def test_a_field_left_out_logged_with_another_value_than_its_default_is_refused(
    seen: Any, attack: str, said: str
) -> None:
    """The operator rolled the player's request with a field the player left out set to
    another value (top level, in a nested struct, in a list of structs, a null default, a
    list a factory makes): the npm client refuses it, naming the field."""
    assert seen[attack]["ok"] is False, seen[attack]
    error = seen[attack]["error"]
    assert "the log's entry rolled another request than the one this client sent" in error
    assert said in error, error


def test_a_sealed_roll_of_another_reading_is_refused(seen: Any) -> None:
    error = seen["sealed-dice-dialect"].get("error", "")
    assert "the opening seals another request than the one this client sent" in error, seen
    assert 'dialect: "avrae" logged' in error, error


def test_a_nonce_holding_another_reading_is_not_taken_as_the_players_roll(seen: Any) -> None:
    """Rolled at N with another dialect, answered 409 naming N+1: the roll at N is not the
    one the player sent, and the client says so rather than taking it."""
    lie = seen["nonce-holds-another-reading"]
    assert lie["ok"] is False and "holds a roll this client did not send" in lie["error"], lie


@pytest.mark.parametrize(
    "honest", ["dice-default-sent", "dice-other-dialect-sent", "sealed-honest"]
)
def test_a_field_sent_is_held_as_sent(seen: Any, honest: str) -> None:
    assert seen[honest]["ok"] and seen[honest]["verified"], seen[honest]


@pytest.mark.parametrize("mechanic", sorted(MECHANICS))
def test_an_honest_roll_of_every_mechanic_with_its_defaults_left_out_passes(
    seen: Any, mechanic: str
) -> None:
    assert seen["honest"][mechanic]["ok"], seen["honest"][mechanic]
    assert seen["honest"][mechanic]["verified"], seen["honest"][mechanic]


def test_the_pages_roll_path_holds_a_field_left_out_to_its_default(seen: Any) -> None:
    assert seen["page-honest"]["ok"] and seen["page-honest"]["verified"], seen["page-honest"]
    refused = seen["page-dice-dialect"]
    assert refused["ok"] is False, refused
    assert (
        'another request than the one this client sent (dialect: "foundry" logged'
        in (refused["error"])
    )
