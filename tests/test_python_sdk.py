"""A Python SDK generated from openapi/openapi.json drives a live server.

The client is generated here, in the test run, with openapi-python-client (a dev
dependency); it is not committed and not shipped: the spec is the product, and any
client a user generates from it must work. The test does what an integration does:
create a table (getting its write key), roll every mechanic on it through the SDK's
typed models (built from the spec's own request examples), read each receipt, fetch
the audit entry it names, and have the server verify the whole chain.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fairroll.mechanics import MECHANICS
from fairroll.spec.examples import load_examples
from support import LiveServer

SPEC = Path(__file__).resolve().parents[1] / "openapi" / "openapi.json"
#: The generator's own name for it (the spec's title): never the official fairroll_client.
PACKAGE = "fairroll_http_client"

#: The roll operation of every mechanic in the registry, by mechanic name.
ROLLS = {
    "tft.contest": "rollTftContest",
    "fbc.roll": "rollFbc",
    "fbc.conflict": "resolveFbcConflict",
    "tribute.test": "rollTributeTest",
    "stat-skill.check": "rollStatSkillCheck",
    "stat-skill.contest": "rollStatSkillContest",
    "stat-skill.complex-check": "rollStatSkillComplexCheck",
    "fast-battle.character": "createFastBattleCharacter",
    "fast-battle.attack": "rollFastBattleAttack",
    "fast-battle.spell": "castFastBattleSpell",
    "fast-battle.initiative": "rollFastBattleInitiative",
    "fast-battle.battle": "fightFastBattle",
    "fast-battle.level-up": "levelUpFastBattleCharacter",
    "dice.roll": "rollDiceFormula",
}


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    out = tmp_path_factory.mktemp("sdk")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(SPEC),
            "--meta",
            "none",
            "--output-path",
            str(out / PACKAGE),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def snake(operation_id: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in operation_id)


def endpoint(operation_id: str) -> ModuleType:
    """The generated module of an operation (``api/<tag>/<operation_id in snake_case>``)."""
    for tag in (
        "tft",
        "fbc",
        "tribute",
        "stat_skill",
        "fast_battle",
        "dice",
        "audit",
        "operations",
    ):
        try:
            return importlib.import_module(f"{PACKAGE}.api.{tag}.{snake(operation_id)}")
        except ModuleNotFoundError:
            continue
    raise LookupError(operation_id)


def request_model(module: ModuleType) -> Any:
    """The body model a generated endpoint takes (the annotation of ``body``)."""
    annotation = module._get_kwargs.__annotations__["body"]
    models = importlib.import_module(f"{PACKAGE}.models")
    if isinstance(annotation, str):  # "NewTable | Unset": an optional body
        return getattr(models, annotation.split(" | ")[0])
    if isinstance(annotation, types.UnionType):
        return next(a for a in typing.get_args(annotation) if hasattr(a, "from_dict"))
    return annotation


def plain(value: Any) -> Any:
    """A generated model as JSON-like data (an untyped field is already a dict)."""
    return value.to_dict() if hasattr(value, "to_dict") else value


def test_every_mechanic_has_a_roll_here() -> None:
    assert set(ROLLS) == set(MECHANICS)


def test_the_generated_sdk_rolls_every_mechanic_and_reads_it_back(
    sdk: ModuleType, live_server: LiveServer
) -> None:
    client_module = importlib.import_module(f"{PACKAGE}.client")
    models = importlib.import_module(f"{PACKAGE}.models")
    anonymous = client_module.Client(base_url=live_server.url, raise_on_unexpected_status=True)

    created = endpoint("createTable").sync(client=anonymous)
    assert isinstance(created, models.TableCreated)
    table = created.table
    writer = client_module.AuthenticatedClient(
        base_url=live_server.url, token=created.write_key, raise_on_unexpected_status=True
    )
    examples = {e.operation: e for e in reversed(load_examples())}  # the first of each

    for seq, (mechanic, operation_id) in enumerate(ROLLS.items(), start=1):
        module = endpoint(operation_id)
        example = examples[operation_id]
        body = request_model(module).from_dict({**example.request, "table": table})
        rolled = module.sync(client=writer, body=body, idempotency_key=f"sdk-{mechanic}")
        assert not isinstance(rolled, models.Problem), (operation_id, rolled)
        assert rolled.mechanic == mechanic
        receipt = rolled.receipt
        assert (receipt.table, receipt.seq) == (table, seq)
        if example.request.get("dice") or example.request.get("seed"):
            assert rolled.outcome.to_dict() == example.response["outcome"]

        entry = endpoint("getTableEntry").sync(client=anonymous, table=table, seq=receipt.seq)
        # Entry is a union discriminated on mechanic: this one is the mechanic's own type.
        assert type(entry).__name__.endswith("Entry"), type(entry)
        assert not isinstance(entry, models.Problem)
        assert entry.entry_hash == receipt.entry_hash
        assert entry.signature == receipt.signature
        assert entry.mechanic == mechanic
        assert plain(entry.outcome) == plain(rolled.outcome)

    # Without the write key the table refuses: the SDK surfaces the problem document.
    module = endpoint("rollTftContest")
    body = request_model(module).from_dict({**examples["rollTftContest"].request, "table": table})
    refused = module.sync(
        client=client_module.AuthenticatedClient(live_server.url, "wrong"), body=body
    )
    assert isinstance(refused, models.Problem) and refused.status == 403

    report = endpoint("verifyTable").sync(client=anonymous, table=table)
    assert report.ok is True
    assert report.entries == len(ROLLS)


def test_the_sdk_reads_odds_and_calculators(sdk: ModuleType, live_server: LiveServer) -> None:
    client_module = importlib.import_module(f"{PACKAGE}.client")
    client = client_module.Client(base_url=live_server.url, raise_on_unexpected_status=True)
    for example in load_examples():
        if example.request is None or "receipt" in (example.response or {}):
            continue  # rolls are above
        if example.operation == "cosignTableCheckpoint":
            continue  # its note is the example server's, signed with another key
        module = endpoint(example.operation)
        answer = module.sync(client=client, body=request_model(module).from_dict(example.request))
        if example.operation == "createTable":  # a new random id and write key each time
            assert answer.to_dict()["policy"] == example.response["policy"]
            continue
        assert answer.to_dict() == example.response, example.operation
