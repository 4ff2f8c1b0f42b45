"""Commit-reveal seed sessions in Redis.

The server draws a secret seed and publishes only its SHA-256 (the commitment).
Each roll in the session takes the next nonce, atomically; a revealed session
takes no more rolls. The server seed leaves Redis only through ``reveal``, or when
the session has been idle for ``IDLE_SECONDS`` (24 h): then it is revealed by the
server itself (``revealed_by: expiry``), so no committed roll stays unverifiable and
no session stays open for ever. A revealed session's record (about 250 bytes) stays
beside its table's log: verifiers need its server seed.

    fairroll:{<table>}:seed:<seed_id>   hash: server_seed, commitment, nonce, revealed,
                                        used (ms, last roll or creation), revealed_by
    fairroll:sessions:open              sorted set "<table>\n<seed_id>" by creation time
                                        (ms): the sweeper's work list (``sweep``)
"""

from __future__ import annotations

import secrets
import time
from typing import cast

import msgspec

from fairroll.audit.store import AnyRedis
from fairroll.randomness import commitment_of, new_seed

__all__ = ["IDLE_SECONDS", "SeedSessions", "SessionError", "SessionStatus"]

IDLE_SECONDS = 24 * 3600
OPEN_SESSIONS = "fairroll:sessions:open"
SWEEP_BATCH = 100

_NEXT = """
local state = redis.call('HMGET', KEYS[1], 'server_seed', 'commitment', 'revealed')
if not state[1] then return {0, 'unknown'} end
if state[3] == '1' then return {0, 'revealed'} end
local nonce = redis.call('HINCRBY', KEYS[1], 'nonce', 1)
redis.call('HSET', KEYS[1], 'used', ARGV[1])
return {nonce, state[1], state[2]}
"""

_REVEAL = """
local seed = redis.call('HGET', KEYS[1], 'server_seed')
if not seed then return false end
if redis.call('HGET', KEYS[1], 'revealed') ~= '1' then
  redis.call('HSET', KEYS[1], 'revealed', '1', 'revealed_by', ARGV[1])
end
return seed
"""

#: Reveal the session if it has been idle since ARGV[1] (ms); else say when it was used.
_EXPIRE = """
local state = redis.call('HMGET', KEYS[1], 'used', 'revealed')
if not state[1] and not state[2] then return -1 end
if state[2] == '1' then return -1 end
local used = tonumber(state[1]) or 0
if used > tonumber(ARGV[1]) then return used end
redis.call('HSET', KEYS[1], 'revealed', '1', 'revealed_by', 'expiry')
return 0
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
    #: ``request`` (POST .../reveal) or ``expiry`` (idle for 24 h); None while open.
    revealed_by: str | None = None


class SeedSessions:
    def __init__(self, redis: AnyRedis) -> None:
        self.redis = redis
        self._next = redis.register_script(_NEXT)
        self._reveal = redis.register_script(_REVEAL)
        self._expire = redis.register_script(_EXPIRE)

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
                "used": _now_ms(),
            },
        )
        await self.redis.zadd(OPEN_SESSIONS, {f"{table}\n{seed_id}": _now_ms()})
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
        reply = cast(list[object], await self._next(keys=[_key(table, seed_id)], args=[_now_ms()]))
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
        seed = await self._reveal(keys=[_key(table, seed_id)], args=["request"])
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
            revealed_by=(fields.get("revealed_by") or "request") if revealed else None,
        )

    async def sweep(self, idle_seconds: float = IDLE_SECONDS) -> int:
        """Reveal sessions idle for ``idle_seconds``; returns how many it revealed. Safe to
        run in every process at once: each step is atomic and idempotent."""
        cutoff = _now_ms() - int(idle_seconds * 1000)
        due = await self.redis.zrangebyscore(OPEN_SESSIONS, "-inf", cutoff, 0, SWEEP_BATCH)
        revealed = 0
        for raw in due:
            member = _text(raw)
            table, _, seed_id = member.partition("\n")
            used = int(await self._expire(keys=[_key(table, seed_id)], args=[cutoff]))
            if used > 0:  # rolled since: look again once it has been idle long enough
                await self.redis.zadd(OPEN_SESSIONS, {member: used})
                continue
            revealed += used == 0
            await self.redis.zrem(OPEN_SESSIONS, member)
        return revealed


def _now_ms() -> int:
    return int(time.time() * 1000)


def _key(table: str, seed_id: str) -> str:
    return f"fairroll:{{{table}}}:seed:{seed_id}"


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
