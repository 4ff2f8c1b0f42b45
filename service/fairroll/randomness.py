"""The published derivation of die faces from seed material, and dice sources.

A die face is a pure function of the seed, the die's position in the roll and
its number of sides (``docs/randomness.md`` states it byte by byte)::

    key   = UTF-8 bytes of the seed string
    msg   = b"fairroll/die/v1" || u32be(position) || u32be(sides) || u32be(counter)
    block = HMAC-SHA256(key, msg)

Each 32-byte block is read as four big-endian unsigned 64-bit words; the
first word below ``2**64 - 2**64 % sides`` gives ``face = word % sides + 1``.
Words at or above that limit are rejected, so every face is exactly equally
likely. Counter 0 is tried first, then 1, 2, ...

>>> derive_faces("fairroll", sides=6, count=5)
(4, 4, 6, 4, 4)

Rules never see a random number generator: they ask a :class:`DiceSource` for
dice by group, and the source records every die it hands out, in order.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Protocol

import msgspec

__all__ = [
    "DOMAIN",
    "MAX_SEED_LENGTH",
    "MAX_SIDES",
    "DiceError",
    "DiceSource",
    "Die",
    "Keyed",
    "Seed",
    "SeededDice",
    "SuppliedDice",
    "commitment_of",
    "committed_seed",
    "derive_face",
    "derive_faces",
    "face_from_block",
    "new_seed",
]

#: Domain-separation prefix of every HMAC message; bump the version to change the scheme.
DOMAIN = b"fairroll/die/v1"
MAX_SEED_LENGTH = 256
MAX_SIDES = 1000

Seed = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=MAX_SEED_LENGTH,
        description="Seed string; the same seed and the same request give the same dice.",
        examples=["campaign-7/session-3/roll-12"],
    ),
]


class Die(msgspec.Struct, frozen=True, kw_only=True):
    """One die as rolled: which group it belongs to, its size and its face."""

    group: str
    sides: int
    face: int


class DiceError(ValueError):
    """Supplied dice that do not fit the roll (a wrong count, a face out of range)."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class DiceSource(Protocol):
    """Where a rule gets its dice from. Every die handed out is kept in ``dice``."""

    @property
    def dice(self) -> tuple[Die, ...]: ...

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        """Roll ``count`` dice of ``sides`` sides for ``group`` and return their faces."""
        ...


def derive_face(key: bytes, position: int, sides: int) -> int:
    """Return the face (1..sides) of the die at ``position`` for the HMAC ``key``."""
    return _face(Keyed(key), position, sides)


class Keyed:
    """HMAC-SHA256 (RFC 2104) under one key, its two padded-key hashes computed once:
    each message then costs two hash copies, not the re-keying a one-shot HMAC does
    (``tests/test_randomness.py`` holds it equal to ``hmac.digest``)."""

    __slots__ = ("_inner", "_outer")

    def __init__(self, key: bytes) -> None:
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        key = key.ljust(_BLOCK, b"\0")
        self._inner = hashlib.sha256(key.translate(_IPAD))
        self._outer = hashlib.sha256(key.translate(_OPAD))

    def digest(self, message: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


_BLOCK = 64
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))


def _face(keyed: Keyed, position: int, sides: int) -> int:
    """The face of the die at ``position`` under the keyed HMAC ``keyed``
    (:func:`face_from_block` over each counter's block, inlined: replay derives every die)."""
    if not 1 <= sides <= MAX_SIDES:
        raise ValueError(f"sides must be 1..{MAX_SIDES}, not {sides}")
    prefix = DOMAIN + position.to_bytes(4, "big") + sides.to_bytes(4, "big")
    limit = _WORD_SPACE - _WORD_SPACE % sides
    counter = 0
    while True:
        block = keyed.digest(prefix + counter.to_bytes(4, "big"))
        for start in (0, 8, 16, 24):
            word = int.from_bytes(block[start : start + 8], "big")
            if word < limit:
                return word % sides + 1
        counter += 1


def face_from_block(block: bytes, sides: int) -> int | None:
    """The face given by the first accepted 64-bit word of ``block``, or None if all are rejected.

    >>> face_from_block(bytes(32), 6)
    1
    >>> face_from_block(b"\\xff" * 32, 6) is None  # 2**64 - 1 is at or above the limit
    True
    """
    limit = _WORD_SPACE - _WORD_SPACE % sides
    for start in range(0, len(block), 8):
        word = int.from_bytes(block[start : start + 8], "big")
        if word < limit:
            return word % sides + 1
    return None


def derive_faces(seed: str, *, sides: int, count: int, start: int = 0) -> tuple[int, ...]:
    """Return the faces of ``count`` dice of ``sides`` sides at positions ``start``..."""
    keyed = Keyed(seed.encode())
    return tuple(_face(keyed, position, sides) for position in range(start, start + count))


def commitment_of(server_seed: str) -> str:
    """The published commitment to a server seed: SHA-256 of its UTF-8 bytes, hex."""
    return hashlib.sha256(server_seed.encode()).hexdigest()


def committed_seed(server_seed: str, client_seed: str, nonce: int) -> str:
    """The seed string of the roll with ``nonce`` in a commit-reveal session.

    >>> committed_seed("ab12", "player-1", 3)
    'ab12:player-1:3'
    """
    return f"{server_seed}:{client_seed}:{nonce}"


def new_seed() -> str:
    """Draw a fresh seed: 32 bytes from the operating system, as 64 hex digits."""
    return secrets.token_hex(32)


class SeededDice:
    """Dice derived from a seed; positions count up across all groups in call order."""

    __slots__ = ("_dice", "_keyed", "seed")

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self._keyed = Keyed(seed.encode())
        self._dice: list[Die] = []

    @property
    def dice(self) -> tuple[Die, ...]:
        return tuple(self._dice)

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        start, keyed, dice = len(self._dice), self._keyed, self._dice
        faces = []
        for position in range(start, start + count):
            face = _face(keyed, position, sides)
            faces.append(face)
            dice.append(Die(group=group, sides=sides, face=face))
        return tuple(faces)


class SuppliedDice:
    """Faces rolled elsewhere (physical dice, a VTT's 3D dice), handed out by group in order.

    A rule that asks for more dice of a group than were supplied, a face outside
    the die, or supplied dice left unused when the rule is done, is a
    :class:`DiceError` naming the group and the index.
    """

    __slots__ = ("_dice", "_next", "_path", "_supplied")

    def __init__(
        self,
        supplied: Mapping[str, Sequence[int]],
        path: Callable[[str], str] = str,
    ) -> None:
        """``path(group)`` is where the request gave a group's faces (under ``dice``)."""
        self._supplied = {group: tuple(faces) for group, faces in supplied.items()}
        self._path = path
        self._next = dict.fromkeys(self._supplied, 0)
        self._dice: list[Die] = []

    @property
    def dice(self) -> tuple[Die, ...]:
        return tuple(self._dice)

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        faces = self._supplied.get(group, ())
        start = self._next.get(group, 0)
        if start + count > len(faces):
            raise DiceError(
                f"this roll needs {start + count} dice in group {group!r}, "
                f"but {len(faces)} were supplied",
                field=f"dice.{self._path(group)}",
            )
        taken = faces[start : start + count]
        for index, face in enumerate(taken, start):
            if not 1 <= face <= sides:
                where = f"dice.{self._path(group)}[{index}]"
                raise DiceError(f"{where} is {face}, but a d{sides} shows 1..{sides}", field=where)
        self._next[group] = start + count
        self._dice.extend(Die(group=group, sides=sides, face=face) for face in taken)
        return taken

    def check_all_used(self) -> None:
        """Raise :class:`DiceError` if a supplied group holds dice the roll did not use."""
        for group, faces in self._supplied.items():
            used = self._next[group]
            if used != len(faces):
                raise DiceError(
                    f"{len(faces)} dice were supplied in group {group!r}, "
                    f"but this roll uses {used}",
                    field=f"dice.{self._path(group)}",
                )


_WORD_SPACE = 1 << 64
