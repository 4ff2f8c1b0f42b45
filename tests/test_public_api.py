"""The service uses its dependencies' public API only (issue 27): no import of a private
module or name of Litestar, redis-py, msgspec or any other package, and no private
attribute read off another object. Where a test must pin a private name of a dependency
(``test_direct_routes`` pins Litestar's host check), it says so there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "service" / "fairroll"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_name_of_a_dependency_is_used(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            foreign = not node.module.startswith("fairroll")
            names = [alias.name for alias in node.names]
            if foreign and (_private(node.module) or any(_private(n) for n in names)):
                found.append(f"line {node.lineno}: from {node.module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: import {alias.name}"
                for alias in node.names
                if not alias.name.startswith("fairroll") and _private(alias.name)
            ]
        elif (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
        ):
            found.append(f"line {node.lineno}: ._{node.attr.lstrip('_')}")
    assert not found, f"{path.relative_to(PACKAGE)} uses private names: {found}"
