"""The append script's contract (``lua/append.lua``): the arguments a call carries and
the replies it gives, for the group commit and for an epoch, which call it alike."""

from __future__ import annotations

import time
import zlib
from contextvars import ContextVar
from typing import Any, NamedTuple, cast

from fairroll.audit.entry import Claim, Entry, Head
from fairroll.audit.keyspace import (
    base_key,
    client_seeds_key,
    head_key,
    keys_key,
    log_key,
    signed_key,
    tree_key,
)
from fairroll.audit.redis.tips import head_value

__all__ = [
    "ALREADY_DONE",
    "CLAIM_REFUSED",
    "FENCED",
    "FULL",
    "FULL_RATIO",
    "GUARD_SECONDS",
    "KEY_STATES_KEY",
    "NEAR_RATIO",
    "NO_TREE",
    "SHOWN_TOKEN",
    "STORED",
    "TOKEN_REFUSED",
    "Marker",
    "MemoryGuard",
    "ShownToken",
    "TokenRefusedError",
    "append_args",
    "append_keys",
    "deflate",
    "entry_args",
    "script_result",
]

#: The script's reply statuses.
STORED, FENCED, ALREADY_DONE, CLAIM_REFUSED, NO_TREE, FULL, TOKEN_REFUSED = 1, 2, 3, 4, 5, 6, 7
#: The share of ``maxmemory`` past which the append script refuses before writing
#: (``lua/append.lua`` holds the same number).
FULL_RATIO = 0.95
#: From this share of ``maxmemory`` on, every append runs the script's guard.
NEAR_RATIO = 0.85
#: Below it, a process has the guard run at least this often (per Redis node).
GUARD_SECONDS = 0.25


class MemoryGuard:
    """When an append should run the script's maxmemory guard (``INFO memory``, the
    costliest command the script would otherwise run on every call).

    The guard runs on a node's first append, then at least every ``GUARD_SECONDS``, and
    on every append once the last check found ``NEAR_RATIO`` of ``maxmemory`` or more
    used. Each check's figures come back in the script's reply (``observe``). So an
    append skips the guard only when, less than ``GUARD_SECONDS`` ago, that node held
    under ``NEAR_RATIO``: to be refused late, Redis would have to gain the ten points
    between the two ratios within that time. Past ``maxmemory`` itself, Redis refuses a
    script's first write (``noeviction``), so even then nothing is written half-way."""

    def __init__(self) -> None:
        #: Per node ("" a single Redis): when the guard last ran there, and whether it
        #: found that node near its ``maxmemory``.
        self._checked: dict[str, tuple[float, bool]] = {}

    def due(self, node: str = "") -> bool:
        """Whether this node's next append runs the guard."""
        checked = self._checked.get(node)
        if checked is None:
            return True
        at, near = checked
        return near or time.monotonic() - at >= GUARD_SECONDS

    def observe(self, node: str, used: int, limit: int) -> None:
        """What the guard found on ``node``: ``used`` bytes of ``limit`` (0: none set)."""
        self._checked[node] = (time.monotonic(), limit > 0 and used >= limit * NEAR_RATIO)

    def forget(self, node: str = "") -> None:
        """Run the guard on the node's next append (a failed call tells nothing)."""
        self._checked.pop(node, None)


class ShownToken(NamedTuple):
    """What a roll in a seed session showed of the session's token, for the append
    script to check against the session's own (``lua/append.lua``), so the check costs no
    round trip of its own: ``digest`` the token's SHA-256 (hex), None if none was shown;
    ``required``: whether a session with a token refuses a roll without one (else only a
    bound session does). ``play.sessions`` states the policy."""

    seed_id: str
    digest: str | None
    required: bool

    def arg(self) -> str:
        """The entry's ninth script argument."""
        if self.digest is not None:
            return self.digest
        return "!" if self.required else "?"


#: The token the roll being appended showed, set by the caller around the one append
#: it makes (``play.sessions``); ``GroupCommit.record`` reads it as it queues the draft.
SHOWN_TOKEN: ContextVar[ShownToken | None] = ContextVar("fairroll_shown_token", default=None)


class TokenRefusedError(Exception):
    """The append refused a roll in a seed session that did not show the session's token
    (``why``: ``missing``) or showed another (``wrong``): nothing was stored."""

    def __init__(self, seed_id: str, why: str) -> None:
        super().__init__(f"seed session {seed_id}: token {why}")
        self.seed_id = seed_id
        self.why = why


class Marker(NamedTuple):
    """An Idempotency-Key the append marks done: the script stores the entry only if
    ``key`` is not already done, and marks it ``done:<fingerprint>:<seq>`` in the same
    atomic step."""

    key: str
    fingerprint: str
    ttl: int


#: Where the script finds the table's key states among its KEYS (Lua counts from 1): a
#: ``key.retire`` entry's claim names it in place of a session (``append_keys``).
KEY_STATES_KEY = 5


def append_keys(table: str) -> list[str]:
    """The append script's first seven KEYS (``lua/append.lua``); markers and sessions
    follow."""
    return [
        log_key(table),
        head_key(table),
        base_key(table),
        tree_key(table),
        keys_key(table),
        signed_key(table),
        client_seeds_key(table),
    ]


def append_args(
    on: Head,
    last: Entry,
    anchor: Head | None,
    *,
    ttl: int,
    now_ms: int,
    before: int,
    tree: bytes,
    publishes: str,
    signed: tuple[int, bytes],
    guard: bool = True,
) -> list[str | bytes | int]:
    """The append script's first eleven ARGV (``lua/append.lua``); nine per entry follow.
    ``signed``: the size and root of the tree after the batch (its checkpoint is signed
    once the batch is stored); ``guard``: whether the script checks ``maxmemory``
    (``MemoryGuard``)."""
    return [
        head_value(on),
        f"{last.seq}:{last.entry_hash}",
        anchor.seq if anchor else 0,
        head_value(anchor) if anchor else "",
        ttl,
        now_ms,
        before,
        tree,
        publishes,
        f"{signed[0]} {signed[1].hex()}",
        "1" if guard else "0",
    ]


def entry_args(
    entry: Entry,
    data: bytes,
    marker: int,
    fingerprint: str,
    session: int,
    claim: Claim | None,
    shown: ShownToken | None = None,
) -> list[str | bytes | int]:
    """The nine ARGV of one entry: stream id, JCS bytes deflated, hash prefix, marker key
    index (0: none), request fingerprint, session key index (0: none), claim kind, value,
    and the session token it showed (``ShownToken``; "": not checked)."""
    return [
        f"{entry.seq}-0",
        deflate(data),
        entry.entry_hash[:16],
        marker,
        fingerprint,
        session,
        *_claim_args(claim, entry),
        shown.arg() if shown is not None else "",
    ]


def deflate(entry_json: bytes) -> bytes:
    """How an entry is kept in Redis: its JSON, raw deflate (level 3); readers inflate
    it back to the very same bytes (``docs/performance.md`` measures the saving)."""
    return zlib.compress(entry_json, 3, wbits=-15)


def script_result(result: object) -> tuple[int, list[Any]] | BaseException:
    """(status, the rest of the reply): see ``lua/append.lua``."""
    if isinstance(result, BaseException):
        return result
    status, *rest = cast(list[Any], result)
    return int(status), [
        r if isinstance(r, bytes) or not isinstance(r, str) else r.encode() for r in rest
    ]


def _claim_args(claim: Claim | None, entry: Entry) -> tuple[str, str]:
    if claim is None:
        return "", ""
    if claim.kind == "retire":
        return "x", claim.key_id
    if claim.kind == "commit":
        return "c", f"{claim.server_seed} {claim.commitment} {claim.length}"
    if claim.kind == "renew":
        return "n", f"{claim.nonce} {claim.server_seed} {claim.commitment} {claim.length}"
    if claim.kind == "roll":
        if entry.session is None:
            return "r", str(claim.nonce)
        return "r", f"{claim.nonce} {entry.session.client_seed}"
    return "v", f"{claim.nonce} {claim.revealed_by}"
