"""The append script's contract (``lua/append.lua``): the arguments a call carries and
the replies it gives, for the group commit and for an epoch, which call it alike."""

from __future__ import annotations

import zlib
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
    "KEY_STATES_KEY",
    "NO_TREE",
    "STORED",
    "Marker",
    "append_args",
    "append_keys",
    "deflate",
    "entry_args",
    "script_result",
]

#: The script's reply statuses.
STORED, FENCED, ALREADY_DONE, CLAIM_REFUSED, NO_TREE, FULL = 1, 2, 3, 4, 5, 6
#: The share of ``maxmemory`` past which the append script refuses before writing
#: (``lua/append.lua`` holds the same number).
FULL_RATIO = 0.95


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
) -> list[str | bytes | int]:
    """The append script's first ten ARGV (``lua/append.lua``); eight per entry follow.
    ``signed``: the size and root of the tree after the batch (its checkpoint is signed
    once the batch is stored)."""
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
    ]


def entry_args(
    entry: Entry, data: bytes, marker: int, fingerprint: str, session: int, claim: Claim | None
) -> list[str | bytes | int]:
    """The eight ARGV of one entry: stream id, JCS bytes deflated, hash prefix, marker key
    index (0: none), request fingerprint, session key index (0: none), claim kind, value."""
    return [
        f"{entry.seq}-0",
        deflate(data),
        entry.entry_hash[:16],
        marker,
        fingerprint,
        session,
        *_claim_args(claim, entry),
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
