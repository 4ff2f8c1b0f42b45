"""Connecting to Redis, and sending a round of commands in one write.

A standalone Redis (``redis://``, ``rediss://``, ``unix://``), the primary a Redis
Sentinel names (``redis+sentinel://host:port,host:port/<service>``: each new connection
asks the sentinels where the primary is, so the client follows a failover), or a Redis
Cluster (``redis+cluster://``); on plain TCP the store's own connection class packs a command in
one pass and sends a round's batch with one timer for the whole batch. Only redis-py's
public API is used: ``connection_class``, ``pack_command``, ``send_packed_command``,
``read_response`` and the pool's ``get_connection``/``release``
(``tests/test_redis_packing.py`` holds the packer to redis-py's bytes).

Two rules hold on every path that appends:

- A batch is never re-sent blind. ``execute_batch`` sends a round once; a batch that
  could not even connect raises ``NotSentError`` (nothing of it ran, so it may be sent
  again), any later failure leaves it unknown whether the script ran. On a Redis
  Cluster a round is sent by the store itself on the connection of the node that holds
  the table's slot (``send_to_node``): redis-py's cluster client re-sends a command
  after a socket timeout, and a re-sent append finds the head moved and is chained a
  second time.
- A client failure is a store failure. redis-py's clients can fail inside themselves
  while a cluster or a Sentinel fails over (an attribute of a node gone, a slot not
  covered); the store's clients (``StoreRedis``, ``StoreCluster``) turn any such error
  into ``ClientFailedError``, a ``RedisError``, so the web layer answers 503 with
  words, never 500.
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
from redis.exceptions import AskError, RedisClusterException, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = [
    "CLUSTER_SCHEMES",
    "SENTINEL_SCHEME",
    "AnyRedis",
    "ClientFailedError",
    "NotSentError",
    "PackingConnection",
    "StoreCluster",
    "StoreRedis",
    "connect_redis",
    "execute_batch",
    "is_cluster",
    "send_batch",
    "send_to_node",
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
        """Send ``calls`` in one write and read their raw replies (``execute_batch``)."""
        return await execute_batch(self, calls)

    def _where(self) -> str:
        return f"{self.host}:{self.port}"


class NotSentError(RedisConnectionError):
    """A batch could not connect to Redis: nothing of it was written, so nothing ran."""


class ClientFailedError(RedisConnectionError):
    """redis-py failed inside itself (as it can while a cluster fails over): whether the
    command ran is unknown, as after a dropped connection."""


#: What redis-py's clients can raise from inside themselves during a failover, besides
#: its own ``RedisError``s.
_CLIENT_FAILURES = (AttributeError, IndexError, KeyError, RedisClusterException)


async def execute_batch(connection: Connection, calls: list[tuple[Any, ...]]) -> list[Any]:
    """Send ``calls`` in one write on ``connection`` and read their raw replies, an error
    reply as its exception, all within one socket timeout.

    What redis-py's pipeline does, less its machinery: it arms and cancels a timer
    for every reply; here one timer covers the batch, and each reply is read with
    ``timeout=math.inf`` (redis-py's own "no timeout of its own" for a read).
    Nothing is retried (an append must not run twice): a batch that could not connect
    raises ``NotSentError``; one that fails, times out or is cancelled part-way
    disconnects, so a connection with replies still unread never serves again.
    """
    where = f"{connection.host}:{connection.port}"
    packed = b"".join(b"".join(connection.pack_command(*call)) for call in calls)
    try:
        async with asyncio.timeout(connection.socket_connect_timeout):
            await connection.connect()  # type: ignore[no-untyped-call]
    except (TimeoutError, OSError, RedisError) as exc:
        await connection.disconnect(nowait=True)
        raise NotSentError(f"could not connect to {where}: {exc}") from exc
    try:
        async with asyncio.timeout(connection.socket_timeout):
            await connection.send_packed_command(packed, check_health=False)
            replies: list[Any] = []
            for _ in calls:
                try:
                    replies.append(await connection.read_response(timeout=math.inf))
                except ResponseError as error:  # an error reply: the batch goes on
                    replies.append(error)
    except TimeoutError:
        await connection.disconnect(nowait=True)
        raise RedisTimeoutError(f"Timeout in a batch to {where}") from None
    except (OSError, RedisConnectionError) as exc:
        await connection.disconnect(nowait=True)
        raise RedisConnectionError(f"Error in a batch to {where}: {exc}") from exc
    except BaseException:
        await connection.disconnect(nowait=True)
        raise
    return replies


class StoreRedis(Redis):
    """redis-py's client, whose failures inside itself are ``ClientFailedError``s."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        except _CLIENT_FAILURES as exc:
            raise ClientFailedError(f"the Redis client failed: {exc!r}") from exc


class StoreCluster(RedisCluster):
    """redis-py's cluster client, whose failures inside itself (during a failover) are
    ``ClientFailedError``s."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().execute_command(*args, **kwargs)
        except _CLIENT_FAILURES as exc:
            raise ClientFailedError(
                f"the Redis Cluster client failed (the cluster may be failing over): {exc!r}"
            ) from exc


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
            redis_class=StoreRedis,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            health_check_interval=30,
            retry=Retry(NoBackoff(), retries) if retries else None,
            retry_on_error=[RedisConnectionError] if retries else None,
            **pool,
        )
        return primary
    if url.startswith(CLUSTER_SCHEMES):
        return StoreCluster.from_url(
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
    return StoreRedis.from_url(
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


async def send_to_node(redis: RedisCluster, key: str, calls: list[tuple[Any, ...]]) -> list[Any]:
    """The raw replies of ``calls``, sent in one write on one connection of the cluster
    node that holds ``key``'s slot, never re-sent (``execute_batch``); so a ``WAIT``,
    ``WAITAOF`` or ``CONFIG GET`` among them speaks of the writes before it on that
    node. A reply redirecting the slot (MOVED, ASK) ran nothing; the client re-learns
    the topology, and the reply is a ``NotSentError``."""
    try:
        node = redis.get_node_from_key(key)
        if node is None:
            raise RedisClusterException(f"no node holds the slot of {key!r}")
        connection = node.acquire_connection()
    except _CLIENT_FAILURES as exc:
        await _relearn(redis)
        raise NotSentError(f"the cluster's topology is changing: {exc!r}") from exc
    try:
        replies = await execute_batch(connection, calls)
    except RedisConnectionError:
        await _relearn(redis)
        raise
    finally:
        node.release(connection)
    if any(isinstance(reply, AskError) for reply in replies):
        await _relearn(redis)
        return [
            NotSentError(f"slot moved: {reply}") if isinstance(reply, AskError) else reply
            for reply in replies
        ]
    return replies


async def _relearn(redis: RedisCluster) -> None:
    """Ask the cluster for its topology again (after a failover or a moved slot)."""
    try:
        await redis.nodes_manager.initialize()
    except (RedisError, *_CLIENT_FAILURES):  # the next round tries again
        pass


def is_cluster(redis: AnyRedis) -> bool:
    """Whether ``redis`` is a Redis Cluster client (its rounds go by node)."""
    return isinstance(redis, RedisCluster)


def wait_ms(redis: AnyRedis) -> int:
    """How long a round waits for its fsync and replicas: within the socket timeout."""
    if isinstance(redis, RedisCluster):
        kwargs = redis.connection_kwargs
    else:
        kwargs = redis.connection_pool.connection_kwargs
    timeout = kwargs.get("socket_timeout") or 2.0
    return max(1, int(float(timeout) * 800))
