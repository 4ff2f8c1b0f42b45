"""Connecting to Redis, and sending a round of commands in one write.

A standalone Redis (``redis://``, ``rediss://``, ``unix://``), the primary a Redis
Sentinel names (``redis+sentinel://host:port,host:port/<service>``: each new connection
asks the sentinels where the primary is, so the client follows a failover), or a Redis
Cluster (``redis+cluster://``); on plain TCP the store's own connection class packs a command in
one pass and sends a round's batch with one timer for the whole batch. Only redis-py's
public API is used: ``connection_class``, ``pack_command``, ``send_packed_command``,
``read_response`` and the pool's ``get_connection``/``release``
(``tests/test_redis_packing.py`` holds the packer to redis-py's bytes).
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, cast

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = [
    "CLUSTER_SCHEMES",
    "SENTINEL_SCHEME",
    "AnyRedis",
    "PackingConnection",
    "connect_redis",
    "send_batch",
    "wait_ms",
]

#: A standalone Redis or a Redis Cluster: the store works on either.
AnyRedis = Redis | RedisCluster
CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")
SENTINEL_SCHEME = "redis+sentinel://"
SENTINEL_PORT = 26379


class PackingConnection(Connection):
    """redis-py's TCP connection, packing a command into RESP in one pass.

    redis-py re-joins a growing buffer once per argument; a round's script calls of
    about 25 arguments each made that the costliest Python step of an append
    (``benchmarks/roll_cost.py`` times both packers). The bytes are the same
    (``tests/test_redis_packing.py`` checks it against redis-py's own packer).
    """

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]
        if isinstance(first, str):  # "SCRIPT LOAD": the words go as arguments
            args = (*first.encode().split(), *args[1:])
        elif b" " in first:
            args = (*first.split(), *args[1:])
        encoder = self.encoder
        encoding, errors = encoder.encoding, encoder.encoding_errors
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            kind = type(arg)
            if kind is bytes:
                data = arg
            elif kind is str:
                data = arg.encode(encoding, errors)
            elif kind is int:
                data = b"%d" % arg
            else:  # floats, memoryviews, and what redis-py refuses (bools, None)
                data = encoder.encode(arg)  # type: ignore[no-untyped-call]
            out += (b"$%d\r\n" % len(data), data, b"\r\n")
        return [b"".join(out)]

    async def execute_batch(self, calls: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``calls`` in one write and read their raw replies, an error reply as its
        exception, all within one socket timeout.

        What redis-py's pipeline does, less its machinery: it arms and cancels a timer
        for every reply; here one timer covers the batch, and each reply is read with
        ``timeout=math.inf`` (redis-py's own "no timeout of its own" for a read).
        Nothing is retried (an append must not run twice). A batch that fails, times out
        or is cancelled part-way disconnects, so a connection with replies still unread
        never serves again.
        """
        try:
            async with asyncio.timeout(self.socket_timeout):
                await self.send_packed_command(
                    b"".join(b"".join(self.pack_command(*call)) for call in calls)
                )
                replies: list[Any] = []
                for _ in calls:
                    try:
                        replies.append(await self.read_response(timeout=math.inf))
                    except ResponseError as error:  # an error reply: the batch goes on
                        replies.append(error)
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise RedisTimeoutError(f"Timeout in a batch to {self._where()}") from None
        except OSError as exc:
            await self.disconnect(nowait=True)
            raise RedisConnectionError(f"Error in a batch to {self._where()}: {exc}") from exc
        except BaseException:
            await self.disconnect(nowait=True)
            raise
        return replies

    def _where(self) -> str:
        return f"{self.host}:{self.port}"


def connect_redis(
    url: str, timeout: float, *, retries: int = 0, max_connections: int | None = None
) -> AnyRedis:
    """A client for ``url``: ``redis://``, ``rediss://``, ``unix://`` name one server;
    ``redis+cluster://host:port`` (or ``rediss+cluster://``) names any node of a Redis
    Cluster, whose topology the client then discovers (redis-py's cluster client).

    ``retries``: commands retried after a dropped connection. Only for clients that
    never append (the compute workers read): a retried append could run twice.
    ``max_connections``: the pool's bound (redis-py's default, 100, when None)."""
    pool: dict[str, Any] = {} if max_connections is None else {"max_connections": max_connections}
    if url.startswith(SENTINEL_SCHEME):
        sentinels, service = sentinel_of(url)
        watch = Sentinel(  # type: ignore[no-untyped-call]
            sentinels,
            sentinel_kwargs={"socket_timeout": timeout, "socket_connect_timeout": timeout},
        )
        primary: Redis = watch.master_for(
            service,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            health_check_interval=30,
            retry=Retry(NoBackoff(), retries) if retries else None,
            retry_on_error=[RedisConnectionError] if retries else None,
            **pool,
        )
        return primary
    if url.startswith(CLUSTER_SCHEMES):
        return RedisCluster.from_url(
            url.replace("+cluster", "", 1),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            # A master that is down answers nothing: fail its tables fast (503), and
            # keep serving the others.
            cluster_error_retry_attempts=1,
            **pool,
        )
    # A TCP connection packs commands in one pass (unix sockets and TLS keep redis-py's).
    packing: dict[str, Any] = (
        {"connection_class": PackingConnection} if url.startswith("redis://") else {}
    )
    return Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=30,
        **packing,
        retry=Retry(NoBackoff(), retries) if retries else None,
        retry_on_error=[RedisConnectionError] if retries else None,
        **pool,
    )


def sentinel_of(url: str) -> tuple[list[tuple[str, int]], str]:
    """The sentinels (host, port) and the service name of a ``redis+sentinel://`` URL.

    >>> sentinel_of("redis+sentinel://10.0.0.1,10.0.0.2:26380/fairroll")
    ([('10.0.0.1', 26379), ('10.0.0.2', 26380)], 'fairroll')
    """
    hosts, _, service = url.removeprefix(SENTINEL_SCHEME).partition("/")
    sentinels = []
    for host in filter(None, hosts.split(",")):
        name, colon, port = host.rpartition(":")
        sentinels.append((name, int(port)) if colon else (host, SENTINEL_PORT))
    if not sentinels or not service.strip("/"):
        raise ValueError(f"a Sentinel URL names its sentinels and service: {url!r}")
    return sentinels, service.strip("/")


async def send_batch(redis: AnyRedis, calls: list[tuple[Any, ...]]) -> list[Any]:
    """The raw replies of ``calls``, sent in one round trip on one connection of a
    standalone Redis (an error reply as its exception): the store's own batch on a TCP
    connection (``PackingConnection.execute_batch``), else redis-py's pipeline. A failed
    connection raises ``RedisError``."""
    pool = cast(Redis, redis).connection_pool
    if not issubclass(pool.connection_class, PackingConnection):
        pipe = redis.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command(*call)
        return await pipe.execute(raise_on_error=False)
    connection = cast(PackingConnection, await pool.get_connection())  # type: ignore[no-untyped-call]
    try:
        return await connection.execute_batch(calls)
    finally:
        await pool.release(connection)


async def pipelined(redis: AnyRedis, calls: list[tuple[Any, ...]]) -> list[Any]:
    """Each call's reply or error, in one round trip where the client allows it (a
    cluster's calls go to their nodes concurrently). Never raises ``RedisError``: a
    failed connection is every call's error."""
    if isinstance(redis, RedisCluster):
        return list(
            await asyncio.gather(
                *(redis.execute_command(*call) for call in calls), return_exceptions=True
            )
        )
    pipe = redis.pipeline(transaction=False)
    for call in calls:
        pipe.execute_command(*call)
    try:
        return await pipe.execute(raise_on_error=False)
    except RedisError as exc:
        return [exc] * len(calls)


def wait_ms(redis: AnyRedis) -> int:
    """How long a round waits for its fsync and replicas: within the socket timeout."""
    pool = cast(Redis, redis).connection_pool
    timeout = pool.connection_kwargs.get("socket_timeout") or 2.0
    return max(1, int(float(timeout) * 800))
