"""Conformance cases of the class "cosignatures"."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key
from vectors.case import Case
from vectors.fixed import COSIGNED_AT, COSIGNER, COSIGNER_KEY, OTHER_COSIGNER_KEY


def cosignature_cases(note: str) -> list[Case]:
    """A player's cosignature of the checkpoint, and each way of forging one."""
    private = Ed25519PrivateKey.from_private_bytes(COSIGNER_KEY)
    raw = raw_public_key(private)
    vkey = verifier_key(COSIGNER, raw)
    line = cosign(note, COSIGNER, private, COSIGNED_AT)
    other = cosign(
        note, COSIGNER, Ed25519PrivateKey.from_private_bytes(OTHER_COSIGNER_KEY), COSIGNED_AT
    )
    stamped = base64.b64decode(line.rsplit(" ", 1)[1])
    later = stamped[:4] + (COSIGNED_AT + 1).to_bytes(8, "big") + stamped[12:]
    late = f"\u2014 {COSIGNER} {base64.b64encode(later).decode()}"
    body = note.partition("\n\n")[0]
    kinds = [
        (
            "cosignature-good",
            "a player's cosignature of the checkpoint (nothing wrong)",
            note + line + "\n",
            None,
        ),
        (
            "cosignature-time-altered",
            "the cosignature's time moved one second",
            note + late + "\n",
            "cosign",
        ),
        (
            "cosignature-other-keys-line-under-its-name",
            "another key's cosignature line under the player's name",
            note + other + "\n",
            "cosign",
        ),
        (
            "cosignature-body-altered",
            "the note's size edited under the cosignature",
            body.replace("\n12\n", "\n13\n", 1) + "\n\n" + note.partition("\n\n")[2] + line + "\n",
            "sign",
        ),
        (
            "cosignature-good-line-then-bad-line",
            "a good line of the player's key, then a bad line of the same key",
            note + line + "\n" + late + "\n",
            "cosign",
        ),
        (
            "cosignature-bad-line-then-good-line",
            "a bad line of the player's key, then a good line of the same key",
            note + late + "\n" + line + "\n",
            "cosign",
        ),
    ]
    made = []
    for name, attack, text, reason in kinds:
        item = Case(name, "cosignatures", attack, ok=reason is None, reason=reason)
        item.kind = "cosignature"
        item.file("note", ".txt", text)
        item.inputs["vkey"] = [vkey]
        made.append(item)
    return made
