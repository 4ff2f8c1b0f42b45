"""A seed session's hash and the open sessions' index in Redis: what ``audit.sessions``
(state, status, token, sweep) and ``play.sessions`` (the token binding) ask of them.

``keyspace.session_key`` is the session's hash, written by the append script (its
seeds, nonce, seqs; whether it is bound, at a roll's first showing of the token, which
the script checks against the digest: ``append.ShownToken``) and here (its token's
digest, and whether it is bound, at a reveal's);
``keyspace.OPEN_SESSIONS`` lists open sessions, as ``<table>\\n<seed_id>`` scored by
milliseconds, for the sweeper. Each function is one command, one round trip.
"""

from __future__ import annotations

from collections.abc import Sequence

from fairroll.audit.keyspace import OPEN_SESSIONS, session_key
from fairroll.audit.redis.connection import AnyRedis

__all__ = [
    "BOUND",
    "TOKEN",
    "Value",
    "due_sessions",
    "list_open",
    "read_fields",
    "read_session",
    "set_field",
    "unlist",
]

#: The session hash's field holding the SHA-256 (hex) of the session's token.
TOKEN = "token"  # noqa: S105 (a field name)
#: Its field set to ``1`` once a call showed the token (``play.sessions``).
BOUND = "bound"

#: A field's value as Redis answers it (None: the field, or the hash, is absent).
Value = bytes | str | None


def _member(table: str, seed_id: str) -> str:
    return f"{table}\n{seed_id}"


async def set_field(redis: AnyRedis, table: str, seed_id: str, field: str, value: str) -> None:
    """HSET one field of the session's hash (``keyspace.session_key``)."""
    await redis.hset(session_key(table, seed_id), field, value)


async def read_fields(
    redis: AnyRedis, table: str, seed_id: str, fields: Sequence[str]
) -> list[Value]:
    """HMGET ``fields`` of the session's hash, in order (each None where absent)."""
    raw: list[Value] = await redis.hmget(session_key(table, seed_id), list(fields))
    return raw


async def read_session(redis: AnyRedis, table: str, seed_id: str) -> dict[bytes | str, bytes | str]:
    """HGETALL of the session's hash (empty: no such session)."""
    raw: dict[bytes | str, bytes | str] = await redis.hgetall(session_key(table, seed_id))
    return raw


async def list_open(redis: AnyRedis, table: str, seed_id: str, at_ms: int) -> None:
    """ZADD the session to ``keyspace.OPEN_SESSIONS`` at ``at_ms`` (moved there if
    listed)."""
    await redis.zadd(OPEN_SESSIONS, {_member(table, seed_id): at_ms})


async def unlist(redis: AnyRedis, table: str, seed_id: str) -> None:
    """ZREM the session from ``keyspace.OPEN_SESSIONS``."""
    await redis.zrem(OPEN_SESSIONS, _member(table, seed_id))


async def due_sessions(redis: AnyRedis, before_ms: int, count: int) -> list[tuple[str, str]]:
    """Up to ``count`` (table, seed_id) of ``keyspace.OPEN_SESSIONS`` scored at most
    ``before_ms``, oldest first (ZRANGEBYSCORE)."""
    raw = await redis.zrangebyscore(OPEN_SESSIONS, "-inf", before_ms, 0, count)
    due = []
    for member in raw:
        table, _, seed_id = _text(member).partition("\n")
        due.append((table, seed_id))
    return due


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
