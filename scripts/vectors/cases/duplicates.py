"""Conformance cases of the class "duplicates"."""

from __future__ import annotations

import json
from typing import Any

from vectors.case import Cases
from vectors.fixed import Log


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Duplicates: each case of the class, appended to ``made``."""
    case = made.add
    lines = [json.dumps(e, separators=(",", ":")) for e in log]
    twice = [*lines]
    twice[2] = twice[2][:-1] + ',"seq":3}'
    case("duplicate-key", "duplicates", "a JSON key twice (seq)", twice, seq=3, reason="twice")
    nested = [*lines]
    nested[1] = nested[1].replace('"request":{', '"request":{"a":{"attribute":3},', 1)
    case(
        "duplicate-key-nested",
        "duplicates",
        "a JSON key twice inside the request (parsers keep one or the other)",
        nested,
        seq=2,
        reason="twice",
    )
