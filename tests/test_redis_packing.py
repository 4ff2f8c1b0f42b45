"""The store's TCP connection: its one-pass RESP packer writes exactly the bytes
redis-py's own packer does, and its batches (a round's scripts and confirmation, in one
write) answer every call in order and never leave a reply behind for the next user."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import Connection
from redis.exceptions import DataError, NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from fairroll.audit.redis.connection import PackingConnection, connect_redis
from fairroll.redis_server import RedisServer

REDIS_PY = Connection()
OURS = PackingConnection()

ARGUMENTS = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=100),
    st.integers(min_value=-(2**63), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
)


def packed(connection: Connection, *args: Any) -> bytes:
    return b"".join(bytes(part) for part in connection.pack_command(*args))


@given(
    command=st.sampled_from(["EVALSHA", "GET", "SCRIPT LOAD", b"CONFIG GET", b"XADD"]),
    args=st.lists(ARGUMENTS, max_size=30),
)
def test_the_same_bytes_as_redis_py_for_any_command(command: Any, args: list[Any]) -> None:
    assert packed(OURS, command, *args) == packed(REDIS_PY, command, *args)


def test_large_values_and_memoryviews_are_the_same_too() -> None:
    big = b"x" * 100_000
    args = ("SET", "k", big, memoryview(b"view"), 7000.25, "é" * 10_000)
    assert packed(OURS, *args) == packed(REDIS_PY, *args)


@pytest.mark.parametrize("value", [True, None])
def test_what_redis_py_refuses_is_refused(value: Any) -> None:
    with pytest.raises(DataError):
        OURS.pack_command("SET", "k", value)


def test_only_tcp_clients_use_it() -> None:
    tcp = connect_redis("redis://127.0.0.1:1/0", 1.0)
    unix = connect_redis("unix:///tmp/none.sock", 1.0)
    assert tcp.connection_pool.connection_class is PackingConnection  # type: ignore[union-attr]
    assert unix.connection_pool.connection_class is not PackingConnection  # type: ignore[union-attr]


async def _batch(url: str, calls: list[tuple[Any, ...]]) -> list[Any]:
    """``calls`` as the store sends a round: one pooled connection, one batch."""
    redis = connect_redis(url, 2.0)
    pool = redis.connection_pool  # type: ignore[union-attr]
    connection = await pool.get_connection()
    try:
        return await connection.execute_batch(calls)  # type: ignore[no-any-return]
    finally:
        await pool.release(connection)
        await redis.aclose()


def test_a_batch_answers_every_call_in_order_with_error_replies_in_place(
    redis_server: RedisServer,
) -> None:
    key = f"batch-{uuid.uuid4().hex}"
    replies = asyncio.run(
        _batch(
            redis_server.url,
            [("SET", key, "1"), ("EVALSHA", "0" * 40, 0), ("INCR", key), ("GET", key)],
        )
    )
    assert replies[0] in (b"OK", True)
    assert isinstance(replies[1], NoScriptError)  # an error reply, not raised: the rest ran
    assert replies[2:] == [2, b"2"]


async def _stale_reply_check(url: str, cancel: bool) -> list[Any]:
    """A batch cut off while Redis still owes it a reply (a BLPOP that answers later),
    by its timeout or by cancellation; then the pool's next batch."""
    key = f"batch-{uuid.uuid4().hex}"
    redis = connect_redis(url, 0.3)
    pool = redis.connection_pool  # type: ignore[union-attr]
    connection = await pool.get_connection()
    try:
        if cancel:
            task = asyncio.ensure_future(connection.execute_batch([("BLPOP", key, 0.25)]))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        else:
            with pytest.raises(RedisTimeoutError):
                await connection.execute_batch([("BLPOP", key, 1)])
    finally:
        await pool.release(connection)
    await redis.rpush(key, "late")  # what the BLPOP would now answer, on a kept connection
    await asyncio.sleep(0.3)
    connection = await pool.get_connection()
    try:
        return await connection.execute_batch([("PING",), ("LLEN", key)])  # type: ignore[no-any-return]
    finally:
        await pool.release(connection)
        await redis.aclose()


@pytest.mark.parametrize("cut", ["timeout", "cancelled"])
def test_a_batch_cut_off_leaves_no_reply_for_the_next(redis_server: RedisServer, cut: str) -> None:
    replies = asyncio.run(_stale_reply_check(redis_server.url, cancel=cut == "cancelled"))
    # The cut connection was closed, so its BLPOP took nothing and the next batch reads
    # its own replies, not the BLPOP's.
    assert replies[0] in (b"PONG", True)
    assert replies[1] == 1
