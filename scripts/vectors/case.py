"""One conformance vector (docs/audit.md, "Conformance"): its inputs, written as files
beside it, and the verdict every verifier must give."""

from __future__ import annotations

import json
from typing import Any

from vectors.fixed import Log


class Case:
    """One conformance vector: its inputs (files written beside it) and the verdict every
    verifier must give."""

    def __init__(self, name: str, klass: str, attack: str, **expect: Any) -> None:
        self.name, self.klass, self.attack = name, klass, attack
        self.kind = "log"
        #: What a verifier needs to catch it beyond the log's own rules: ``ed25519``
        #: (a signature is all that is wrong), ``rules`` (the outcome is replayed).
        self.needs: list[str] = expect.get("needs", [])
        self.files: dict[str, str] = {}
        self.inputs: dict[str, Any] = {}
        self.expect = {
            "ok": expect.get("ok", False),
            "first_bad_seq": expect.get("seq"),
            "reason": expect.get("reason"),
            "not_fair": expect.get("not_fair", []),
        }

    def log(self, log: Log | list[str]) -> Case:
        lines = [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in log]
        return self.file("log", ".ndjson", "".join(line + "\n" for line in lines))

    def file(self, role: str, suffix: str, text: str) -> Case:
        self.files[f"{self.name}{'' if role == 'log' else '.' + role}{suffix}"] = text
        self.inputs.setdefault(role, [])
        self.inputs[role].append(f"cases/{self.name}{'' if role == 'log' else '.' + role}{suffix}")
        return self

    def json_file(self, role: str, value: Any, index: int | None = None) -> Case:
        suffix = f"-{index}.json" if index is not None else ".json"
        return self.file(role, suffix, json.dumps(value, indent=2, ensure_ascii=False) + "\n")

    def entry(self) -> dict[str, Any]:
        inputs = {}
        for role, paths in self.inputs.items():
            many = role in ("checkpoints", "since", "receipts")
            inputs[role] = paths if many else paths[0]
        return {
            "name": self.name,
            "class": self.klass,
            "kind": self.kind,
            "attack": self.attack,
            "needs": self.needs,
            "inputs": {"keys": "keys.json", "root": None, **inputs},
            "expect": self.expect,
        }


class Cases(list[Case]):
    """The cases made so far, in the order index.json lists them."""

    def add(self, name: str, klass: str, attack: str, data: Log | list[str], **expect: Any) -> Case:
        """A log case: its lines and the verdict every verifier must give."""
        self.append(Case(name, klass, attack, **expect).log(data))
        return self[-1]
