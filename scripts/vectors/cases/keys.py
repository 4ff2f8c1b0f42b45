"""Conformance cases of the class "keys and roots"."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from fairroll.audit.entry import KEY_RETIRE_MECHANIC
from vectors.case import Cases
from vectors.drafts import rolled, statement
from vectors.fixed import ATTACKER_KEY, ATTACKER_SIGNING_KEY, DRAWN, ROTATED_KEY, Log
from vectors.logs import keys_of, rechained, sealed, signer_of


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Keys and roots: each case of the class, appended to ``made``."""
    case = made.add
    chosen = "campaign-7/roll-12"
    attacker = signer_of(ATTACKER_KEY)
    resigned_log = copy.deepcopy(log)
    resigned_log[0]["certificate"] = msgspec.to_builtins(attacker.certificate)
    resigned_log[1]["dice"][0]["face"] = resigned_log[1]["dice"][0]["face"]
    self_certified = case(
        "self-certified-key-in-entry-1",
        "keys and roots",
        "the whole log re-signed by an attacker's key that certifies itself in entry 1 "
        "(and the served keys list it as root)",
        rechained(resigned_log, 0, attacker),
        seq=1,
        reason="root",
    )
    self_certified.json_file("keys", keys_of(attacker))
    by_other = signer_of(ATTACKER_SIGNING_KEY, attacker)
    other_root = copy.deepcopy(log)
    other_root[0]["certificate"] = msgspec.to_builtins(by_other.certificate)
    other = case(
        "key-certified-by-another-root",
        "keys and roots",
        "the log signed by a key whose certificate another root signed",
        rechained(other_root, 0, by_other),
        seq=1,
        reason="root",
    )
    other.json_file("keys", keys_of(attacker, by_other))
    rotated = signer_of(ROTATED_KEY, signer)
    retire = statement(KEY_RETIRE_MECHANIC, {"key_id": signer.key_id})
    rotation = [
        rolled("drawn", DRAWN),
        (rolled("chosen", chosen), rotated, True),
        (retire, rotated, False),
        (rolled("drawn", "22" * 32), rotated, False),
    ]
    ok_rotation = case(
        "key-rotated-and-retired",
        "keys and roots",
        "a key rotation: a new key certified by the root, published in its first entry, "
        "the old key retired (nothing wrong)",
        sealed(rotation),
        ok=True,
    )
    ok_rotation.json_file("keys", keys_of(signer, rotated))
    retired = case(
        "retired-key-signing",
        "keys and roots",
        "an entry signed by a key after its key.retire entry",
        sealed([*rotation, rolled("drawn", "33" * 32)]),
        seq=5,
        reason="after its retirement",
    )
    retired.json_file("keys", keys_of(signer, rotated))
    early_key = case(
        "key-used-before-it-is-published",
        "keys and roots",
        "an entry signed by a certified key before the entry that publishes it",
        sealed(
            [
                rolled("drawn", DRAWN),
                (rolled("drawn", "44" * 32), rotated, False),
                (rolled("chosen", chosen), rotated, True),
            ]
        ),
        seq=2,
        reason="did not publish",
    )
    early_key.json_file("keys", keys_of(signer, rotated))
