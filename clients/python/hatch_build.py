"""Vendor fairroll's one Python verification core into the package at build time.

The client checks logs, receipts, checkpoints and cosignatures with the very code the
service's ``fairroll verify`` and ``POST /v1/verify`` run (``docs/audit.md``, "One core
per language"), not a rewrite of it: this hook copies the core's modules, and every
module of the service they import, into the wheel as ``fairroll_client/_core/...``,
their ``fairroll.`` imports rewritten to ``fairroll_client._core.``. The set is closed
under imports and may import only the standard library, ``msgspec``, ``cryptography``
and ``lark`` (the client's own dependencies); a core that grows another import fails the
build, so the web layer and the store (litestar, redis) can never slip into a client.

The mechanics are vendored with the verifier: the client re-resolves each answer's
outcome from its request and its re-derived dice, and says it in words, with the very
rules the server rolled with (``fairroll.mechanics``, which brings the rules, the odds
their declarations name, and ``lark`` for the dice formulas' grammar).

Built from an sdist (no service tree beside it), the copy the sdist carries is used.
The npm package vendors the JavaScript core the same way (``clients/typescript/scripts/
vendor.mjs``).
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: The core's entry points: what the client calls.
ROOTS = (
    "fairroll.audit.verify",
    "fairroll.audit.receipts",
    "fairroll.audit.cosignature",
    "fairroll.audit.checkpoint",
    "fairroll.audit.merkle",
    "fairroll.chain",
    "fairroll.randomness",
    "fairroll.mechanics",
)
#: Top-level packages the vendored modules may import besides the standard library.
ALLOWED = frozenset({"msgspec", "cryptography", "lark"})
PREFIX = "fairroll_client._core"
_IMPORT = re.compile(r"^(\s*from\s+)fairroll(?=[.\s])", re.MULTILINE)


class CoreVendorHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        service = Path(self.root).resolve().parents[1] / "service"
        if not (service / "fairroll").is_dir():
            if not (Path(self.root) / "src" / "fairroll_client" / "_core").is_dir():
                raise RuntimeError("no fairroll service tree and no vendored core: cannot build")
            return  # built from an sdist: it carries the vendored core in src/
        self._out = Path(tempfile.mkdtemp(prefix="fairroll-core-"))
        for relative, text in vendored(service).items():
            target = self._out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            inside = f"fairroll_client/_core/{relative}"
            where = inside if self.target_name == "wheel" else f"src/{inside}"
            build_data["force_include"][str(target)] = where

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        out = getattr(self, "_out", None)
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)


def vendored(service: Path) -> dict[str, str]:
    """Relative path under ``_core/`` -> the module's text with its imports rewritten:
    the closure of ``ROOTS`` under ``fairroll`` imports, and an empty ``__init__.py`` for
    each package on the way (the service's own ``__init__`` modules import its store)."""
    modules = closure(service)
    files: dict[str, str] = {"__init__.py": '"""fairroll\'s verification core, vendored."""\n'}
    for name, path in sorted(modules.items()):
        parts = name.split(".")[1:]
        relative = "/".join(parts) + ("/__init__.py" if path.name == "__init__.py" else ".py")
        files[relative] = _IMPORT.sub(rf"\1{PREFIX}", path.read_text(encoding="utf-8"))
        for depth in range(1, len(parts)):
            files.setdefault("/".join(parts[:depth]) + "/__init__.py", "")
        # A module's grammars (the dice dialects' ``.lark`` files) are read beside it.
        folder = "/".join(parts[:-1] if path.name != "__init__.py" else parts)
        for grammar in sorted(path.parent.glob("*.lark")):
            files[f"{folder}/{grammar.name}".lstrip("/")] = grammar.read_text(encoding="utf-8")
    return files


def closure(service: Path) -> dict[str, Path]:
    """Every module ``ROOTS`` need, by dotted name: a package's ``__init__`` only when
    something is imported from it that is not one of its modules."""
    found: dict[str, Path] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        path = _path_of(service, name)
        if path is None:
            raise RuntimeError(f"the core imports {name}, which the service does not have")
        found[name] = path
        if path.name == "__init__.py":  # a package: all its modules are the core
            todo += [f"{name}.{p.stem}" for p in path.parent.glob("*.py") if p.stem != "__init__"]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            todo += _imports(service, name, node)
    return found


def _imports(service: Path, where: str, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            _allowed(where, alias.name)
        return []
    if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
        return []
    if node.module.split(".")[0] != "fairroll":
        _allowed(where, node.module)
        return []
    modules = [f"{node.module}.{a.name}" for a in node.names]
    modules = [m for m in modules if _path_of(service, m) is not None]
    return modules if len(modules) == len(node.names) else [*modules, node.module]


def _allowed(where: str, module: str) -> None:
    top = module.split(".", maxsplit=1)[0]
    if top == "fairroll":
        raise RuntimeError(f"{where}: `import {module}` cannot be vendored; use `from ... import`")
    if top not in ALLOWED and top not in sys.stdlib_module_names:
        raise RuntimeError(f"{where} imports {module}: the core may import only {sorted(ALLOWED)}")


def _path_of(service: Path, name: str) -> Path | None:
    base = service.joinpath(*name.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return base.with_suffix(".py") if base.with_suffix(".py").is_file() else None
