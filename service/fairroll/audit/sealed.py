"""Sealed rolls: a roll whose entry commits to its request, dice and outcome, opened later.

A sealed roll rolls in a hash-chain seed session like any session roll: it takes the
session's next nonce and reveals its link at once. What its entry hides is the roll
itself. The roller's client draws a *blind* (32 random bytes, as 64 lowercase hex
digits) and sends it with the request; the dice derive from the seed string::

    link:client_seed:nonce:blind

(the chain roll's ``link:client_seed:nonce``, then ``:`` and the blind), so the dice
stay unguessable while the link is public, and neither side chose them: the link was
committed before the request, the blind came from the player. The *opening* and its
commitment::

    opening    = {"blind": <hex>, "mechanic": <the roll's mechanic>, "request": <its
                  request as an entry of that mechanic holds it>, "dice": [...],
                  "outcome": {...}}
    commitment = hex(SHA-256(b"fairroll/sealed/v1\\n" || JCS(opening)))

The ``sealed.roll`` entry (source ``committed``, ``seed`` null, the chain roll's
``session``, ``dice`` empty, ``outcome`` null) holds ``request = {mechanic, audience,
commitment}``; a ``sealed.reveal`` statement holds ``request = {seq, opening}`` and is
checked by every verifier against the entry at ``seq`` (``docs/audit.md``, "Sealed
rolls").

>>> sealed_seed("ab12", "player-1", 3, "0f" * 32) == "ab12:player-1:3:" + "0f" * 32
True
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from fairroll.audit.entry import jcs
from fairroll.randomness import committed_seed

__all__ = [
    "AUDIENCES",
    "BLIND_PATTERN",
    "COMMITMENT_CONTEXT",
    "SEALED_REVEAL_MECHANIC",
    "SEALED_ROLL_MECHANIC",
    "Audience",
    "is_blind",
    "opening_commitment",
    "sealed_seed",
]

#: A sealed roll's entry (a committed roll) and the statement that opens it.
SEALED_ROLL_MECHANIC = "sealed.roll"
SEALED_REVEAL_MECHANIC = "sealed.reveal"
#: Whom the roller's VTT shows the roll to: roller and GM, the GM only, the roller only.
Audience = Literal["gm", "blind", "self"]
AUDIENCES: frozenset[str] = frozenset({"gm", "blind", "self"})
#: The bytes the commitment hashes before the opening's JCS form.
COMMITMENT_CONTEXT = b"fairroll/sealed/v1\n"
BLIND_PATTERN = r"^[0-9a-f]{64}$"
_BLIND = re.compile(BLIND_PATTERN)


def is_blind(value: Any) -> bool:
    """64 lowercase hex digits (a string).

    >>> is_blind("0f" * 32), is_blind("0F" * 32), is_blind(None)
    (True, False, False)
    """
    return isinstance(value, str) and _BLIND.fullmatch(value) is not None


def sealed_seed(link: str, client_seed: str, nonce: int, blind: str) -> str:
    """The seed string a sealed roll's dice derive from: ``link:client_seed:nonce:blind``."""
    return f"{committed_seed(link, client_seed, nonce)}:{blind}"


def opening_commitment(opening: Any) -> str:
    """``hex(SHA-256(b"fairroll/sealed/v1\\n" || JCS(opening)))``; ``NotCanonicalError``
    for an opening with no RFC 8785 form (a float)."""
    return hashlib.sha256(COMMITMENT_CONTEXT + jcs(opening)).hexdigest()
