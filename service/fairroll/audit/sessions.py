"""Commit-reveal seed sessions in Redis.

The server draws a secret seed and publishes only its SHA-256 (the commitment).
Each roll in the session takes the next nonce, atomically; a revealed session
takes no more rolls. The server seed leaves Redis only through ``reveal``.

    fairroll:{<table>}:seed:<seed_id>   hash: server_seed, commitment, nonce, revealed
"""

from __future__ import annotations

import secrets
from typing import cast

import msgspec

from fairroll.audit.store import AnyRedis
from fairroll.randomness import commitment_of, new_seed

__all__ = ["SeedSessions", "SessionError", "SessionStatus"]

_NEXT = """
local state = redis.call('HMGET', KEYS[1], 'server_seed', 'commitment', 'revealed')
if not state[1] then return {0, 'unknown'} end
if state[3] == '1' then return {0, 'revealed'} end
local nonce = redis.call('HINCRBY', KEYS[1], 'nonce', 1)
return {nonce, state[1], state[2]}
"""

_REVEAL = """
local seed = redis.call('HGET', KEYS[1], 'server_seed')
if not seed then return false end
redis.call('HSET', KEYS[1], 'revealed', '1')
return seed
"""


class SessionError(ValueError):
    """The session is unknown, or revealed and closed to rolls."""

    def __init__(self, message: str, *, revealed: bool) -> None:
        super().__init__(message)
        self.revealed = revealed


class SessionStatus(msgspec.Struct, frozen=True, kw_only=True):
    """A seed session: its commitment, rolls so far, and the server seed once revealed."""

    table: str
    seed_id: str
    commitment: str
    rolls: int
    revealed: bool
    server_seed: str | None


class SeedSessions:
    def __init__(self, redis: AnyRedis) -> None:
        self.redis = redis
        self._next = redis.register_script(_NEXT)
        self._reveal = redis.register_script(_REVEAL)

    async def create(self, table: str) -> SessionStatus:
        seed_id = "s" + secrets.token_urlsafe(12)
        server_seed = new_seed()
        commitment = commitment_of(server_seed)
        await self.redis.hset(
            _key(table, seed_id),
            mapping={
                "server_seed": server_seed,
                "commitment": commitment,
                "nonce": 0,
                "revealed": 0,
            },
        )
        return SessionStatus(
            table=table,
            seed_id=seed_id,
            commitment=commitment,
            rolls=0,
            revealed=False,
            server_seed=None,
        )

    async def next_nonce(self, table: str, seed_id: str) -> tuple[int, str, str]:
        """(nonce, server seed, commitment) for the next roll; never the same nonce twice."""
        reply = cast(list[object], await self._next(keys=[_key(table, seed_id)]))
        if reply[0] == 0:
            state = _text(reply[1])
            if state == "revealed":
                raise SessionError(
                    f"seed session {seed_id} was revealed: start a new session to roll",
                    revealed=True,
                )
            raise SessionError(f"table {table!r} has no seed session {seed_id}", revealed=False)
        return int(cast(int, reply[0])), _text(reply[1]), _text(reply[2])

    async def reveal(self, table: str, seed_id: str) -> SessionStatus:
        seed = await self._reveal(keys=[_key(table, seed_id)])
        if seed is None:
            raise SessionError(f"table {table!r} has no seed session {seed_id}", revealed=False)
        return await self.status(table, seed_id)

    async def status(self, table: str, seed_id: str) -> SessionStatus:
        raw = await self.redis.hgetall(_key(table, seed_id))
        if not raw:
            raise SessionError(f"table {table!r} has no seed session {seed_id}", revealed=False)
        fields = {_text(k): _text(v) for k, v in raw.items()}
        revealed = fields["revealed"] == "1"
        return SessionStatus(
            table=table,
            seed_id=seed_id,
            commitment=fields["commitment"],
            rolls=int(fields["nonce"]),
            revealed=revealed,
            server_seed=fields["server_seed"] if revealed else None,
        )


def _key(table: str, seed_id: str) -> str:
    return f"fairroll:{{{table}}}:seed:{seed_id}"


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
