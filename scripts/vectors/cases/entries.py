"""Conformance cases of the class "entries: edits, order, signatures"."""

from __future__ import annotations

import base64
import copy
from typing import Any

from vectors.case import Cases
from vectors.fixed import Log
from vectors.logs import lone_surrogate_at, rechained


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Entries: edits, order, signatures: each case of the class, appended to ``made``."""
    case = made.add
    edited = copy.deepcopy(log)
    edited[1]["outcome"]["a_dice"] = 9
    case(
        "edited-outcome",
        "edits",
        "an outcome edited in place",
        edited,
        seq=2,
        reason="entry_hash does not match",
    )
    die = copy.deepcopy(log)
    die[1]["dice"][0]["face"] = die[1]["dice"][0]["face"] % 6 + 1
    case(
        "die-edited-and-resigned",
        "edits",
        "a die edited, the log re-chained and re-signed",
        rechained(die, 1),
        seq=2,
        reason="does not derive",
    )
    truthy = copy.deepcopy(log)
    if truthy[1]["dice"][0]["face"] != 1:
        raise ValueError("the vector needs a face of 1 to write as true")
    truthy[1]["dice"][0]["face"] = True  # Python's True == 1; JSON's true is no number
    case(
        "die-face-true",
        "edits",
        "a die whose face 1 is written as JSON true, the log re-chained and re-signed: "
        "one roll, two spellings, two leaves",
        rechained(truthy, 1),
        seq=2,
        reason="derive",
    )
    zeroed = copy.deepcopy(log)
    zeroed[2]["signature"] = base64.b64encode(bytes(64)).decode()
    case(
        "signature-zeroed",
        "edits",
        "an entry's signature zeroed",
        zeroed,
        seq=3,
        reason="signature",
        needs=["ed25519"],
    )
    swapped = copy.deepcopy(log)
    swapped[4], swapped[5] = swapped[5], swapped[4]
    case(
        "entries-swapped",
        "edits",
        "two entries exchanged in the export",
        swapped,
        seq=5,
        reason="seq",
    )
    moved_table = copy.deepcopy(log)
    moved_table[3]["table"] = "elsewhere"
    case(
        "entry-of-another-table",
        "edits",
        "an entry of another table spliced in (re-signed)",
        rechained(moved_table, 3),
        seq=4,
        reason="table",
    )
    outcome = copy.deepcopy(log)
    outcome[2]["outcome"]["winner"] = "b" if outcome[2]["outcome"].get("winner") == "a" else "a"
    case(
        "outcome-not-the-rules-and-resigned",
        "edits",
        "an outcome the rules do not give for its dice (re-signed; supplied dice)",
        rechained(outcome, 2),
        seq=3,
        reason="outcome",
        needs=["rules"],
    )
    case(
        "client-seed-with-a-lone-surrogate",
        "edits",
        "a committed roll whose client seed holds a lone surrogate (the JSON escape "
        "\\ud800), sealed the JavaScript way: no UTF-8 form, so no link:client_seed:nonce",
        lone_surrogate_at(log, 4, lambda entry, mark: entry["session"].update(client_seed=mark)),
        seq=5,
        reason="holds a lone surrogate",
    )
