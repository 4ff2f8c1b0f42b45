"""Conformance cases of the class "sources"."""

from __future__ import annotations

import copy
from typing import Any

from fairroll.audit.entry import POLICY_MECHANIC
from vectors.case import Cases
from vectors.drafts import rolled, statement, varied
from vectors.fixed import DRAWN, Log
from vectors.logs import lone_surrogate_at, rechained, sealed


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Sources: each case of the class, appended to ``made``."""
    case = made.add
    chosen = "campaign-7/roll-12"
    for label, reason in (
        ("statement", "statement"),
        ("seeded", "seeded"),
        ("fair", "unknown dice source"),
    ):
        bad = copy.deepcopy(log)
        bad[1]["source"] = label
        case(
            f"chosen-relabelled-{label}",
            "sources",
            f"a chosen-seed roll re-signed as source {label!r}",
            rechained(bad, 1),
            seq=2,
            reason=reason,
        )
    bad = copy.deepcopy(log)
    bad[1]["seed"] = ""
    case(
        "chosen-seed-empty",
        "sources",
        "a chosen-seed roll whose seed is the empty string (no key to derive dice with)",
        rechained(bad, 1),
        seq=2,
        reason="has no seed",
    )
    case(
        "chosen-seed-with-a-lone-surrogate",
        "sources",
        "a chosen seed holding a lone surrogate (the JSON escape \\ud800), sealed the "
        "JavaScript way: no UTF-8 form, so no key to derive its dice with",
        lone_surrogate_at(log, 1, lambda entry, mark: entry.update(seed=mark)),
        seq=2,
        reason="holds a lone surrogate",
    )
    bad = copy.deepcopy(log)
    bad[1].update(v=1, source="seeded")
    case(
        "version-goes-down",
        "sources",
        "a chosen-seed roll re-signed as a version-1 'seeded' entry in a version-2 log: "
        "version 1 has no policy and no seed provenance, so the roll would escape both",
        rechained(bad, 1),
        seq=2,
        reason="a log's version never goes down",
    )
    bad = copy.deepcopy(log)
    bad[1]["source"] = "drawn"
    case(
        "chosen-relabelled-drawn",
        "sources",
        "a chosen seed passed off as drawn",
        rechained(bad, 1),
        seq=2,
        reason="not drawn",
    )
    bad = copy.deepcopy(log)
    bad[1]["seed"] = None
    case(
        "chosen-relabelled-supplied",
        "sources",
        "a seeded roll relabelled supplied (its seed dropped): supplied dice are the "
        "caller's, but the table's policy and the counts then lie",
        rechained([{**e, "source": "supplied"} if e["seq"] == 2 else e for e in bad], 1),
        ok=True,
    )
    for name, seed in (
        ("drawn-seed-not-hex", "z" * 64),
        ("drawn-seed-short", DRAWN[:62]),
        ("drawn-seed-uppercase", DRAWN.upper()),
    ):
        case(
            name,
            "sources",
            "a drawn roll whose seed is not 64 lowercase hex digits (a chosen seed, "
            "its dice re-derived from it)",
            sealed(varied(0, rolled("drawn", seed))),
            seq=1,
            reason="not drawn",
        )
    for field, kind, index, draft in (
        ("chosen_seeds", "chosen", 2, rolled("chosen", chosen)),
        ("supplied_dice", "supplied", 2, rolled("supplied", dice={"a": [6] * 7, "b": [1] * 4})),
        ("drawn_seeds", "drawn", 1, rolled("drawn", DRAWN)),
    ):
        policy = statement(POLICY_MECHANIC, {field: False})
        rest = [rolled("drawn", DRAWN), rolled("chosen", chosen)]
        rest[index - 1] = draft
        if kind == "drawn":
            rest = [draft]
        case(
            f"policy-refuses-{kind}",
            "sources",
            f"a {kind} roll on a table whose policy (seq 1) refuses {kind} rolls",
            sealed([policy, *rest]),
            seq=1 + (index if kind != "drawn" else 1),
            reason="policy",
        )
    case(
        "policy-not-first",
        "sources",
        "a table.policy statement after seq 1 (a policy changed under the players)",
        sealed([rolled("drawn", DRAWN), statement(POLICY_MECHANIC, {"chosen_seeds": False})]),
        seq=2,
        reason="policy",
    )
