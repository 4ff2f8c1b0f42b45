"""A failure inside redis-py is a store failure (503 with words), never a 500.

Issue 39 saw, in one of two Cluster primary kills, an ``AttributeError`` raised inside
redis-py's cluster client during the idempotency read, answered 500. The store's clients
turn any failure inside the client into ``ClientFailedError``, a ``RedisError`` the web
layer answers 503.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis, RedisCluster
from redis.exceptions import RedisError, SlotNotCoveredError

from fairroll.audit.redis.connection import ClientFailedError, StoreCluster, StoreRedis


@pytest.mark.parametrize(
    "failure", [AttributeError("'NoneType' object has no attribute 'name'"), SlotNotCoveredError()]
)
def test_a_cluster_client_failing_inside_itself_is_a_redis_error(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    async def fails(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise failure

    monkeypatch.setattr(RedisCluster, "execute_command", fails)
    client = StoreCluster(host="127.0.0.1", port=1)
    with pytest.raises(ClientFailedError) as caught:
        asyncio.run(client.execute_command("GET", "fairroll:{t}:idem:k"))
    assert isinstance(caught.value, RedisError)


def test_a_redis_client_failing_inside_itself_is_a_redis_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def fails(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError("'NoneType' object has no attribute 'send_packed_command'")

    monkeypatch.setattr(Redis, "execute_command", fails)
    with pytest.raises(ClientFailedError):
        asyncio.run(StoreRedis(host="127.0.0.1", port=1).execute_command("GET", "k"))
