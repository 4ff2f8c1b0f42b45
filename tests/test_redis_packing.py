"""The store's one-pass RESP packer writes exactly the bytes redis-py's own packer does."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from fairroll.audit.store import PackingConnection, connect_redis

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
