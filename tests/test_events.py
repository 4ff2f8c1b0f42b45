"""Live table events (``GET /v1/tables/{table}/events``, Server-Sent Events): every entry,
in order, once, whichever replica appended it; resumed without a gap; bounded per process."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key
from fairroll.redis_server import RedisServer
from support import LiveServer, browser_ready, run_node

ROOT = Path(__file__).resolve().parents[1]
BODY = {"a": {"attribute": 12, "name": "Ann"}, "b": {"attribute": 9}}


@pytest.fixture(scope="module")
def replicas(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, LiveServer]]:
    logs = tmp_path_factory.mktemp("events")
    env = {"FAIRROLL_EVENTS_HEARTBEAT": "0.5", "FAIRROLL_MAX_SUBSCRIBERS": "3"}
    first = LiveServer(redis_server.url, logs / "a.log", env=env)
    second = LiveServer(redis_server.url, logs / "b.log", env=env)
    yield first, second
    first.stop()
    second.stop()


def read_events(
    url: str,
    count: int,
    *,
    ready: threading.Event,
    headers: dict[str, str] | None = None,
    kind: str = "event",
) -> list[dict[str, Any]]:
    """A stream's events and comments, parsed, until ``count`` of ``kind`` have come."""
    seen: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    with (
        httpx.Client(timeout=15) as client,
        client.stream("GET", url, headers=headers or {}) as answer,
    ):
        assert answer.status_code == 200, answer.read()
        assert answer.headers["content-type"].startswith("text/event-stream")
        ready.set()
        for line in answer.iter_lines():
            if line.startswith(":"):
                seen.append({"comment": line[1:].strip()})
            elif not line:
                if current:
                    seen.append(current)
                    current = {}
            else:
                name, _, value = line.partition(":")
                current[name] = value.removeprefix(" ")
            if len([e for e in seen if kind in e]) >= count:
                return seen
    return seen


def subscribe(url: str, count: int, **options: Any) -> tuple[threading.Thread, list[Any]]:
    ready = threading.Event()
    out: list[Any] = []
    thread = threading.Thread(
        target=lambda: out.extend(read_events(url, count, ready=ready, **options)), daemon=True
    )
    thread.start()
    assert ready.wait(10)
    return thread, out


def roll(server: LiveServer, table: str) -> dict[str, Any]:
    answer = httpx.post(f"{server.url}/v1/tft/contests", json={**BODY, "table": table}, timeout=10)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def test_a_roll_on_one_replica_reaches_the_other_replicas_subscribers(
    replicas: tuple[LiveServer, LiveServer], table: str
) -> None:
    first, second = replicas
    thread, events = subscribe(f"{first.url}/v1/tables/{table}/events", 3)
    rolled = [roll(second, table) for _ in range(3)]
    thread.join(15)
    entries = [e for e in events if e.get("event") == "entry"]
    assert [int(e["id"]) for e in entries] == [1, 2, 3]
    for event, answer in zip(entries, rolled, strict=True):
        data = json.loads(event["data"])
        assert data["entry"]["entry_hash"] == answer["receipt"]["entry_hash"]
        assert data["words"] == answer["words"]  # the same words as the roll's answer


def test_an_idle_stream_has_a_heartbeat(
    replicas: tuple[LiveServer, LiveServer], table: str
) -> None:
    """A comment every FAIRROLL_EVENTS_HEARTBEAT seconds (0.5 here) keeps proxies from
    closing a quiet table's stream."""
    first, _ = replicas
    thread, events = subscribe(f"{first.url}/v1/tables/{table}/events", 2, kind="comment")
    thread.join(10)
    assert [e["comment"] for e in events if "comment" in e] == ["heartbeat", "heartbeat"]


def test_a_stream_resumes_after_the_last_event_id_without_a_gap(
    replicas: tuple[LiveServer, LiveServer], table: str
) -> None:
    first, second = replicas
    for _ in range(4):
        roll(first, table)
    url = f"{second.url}/v1/tables/{table}/events"
    thread, events = subscribe(url, 3, headers={"Last-Event-ID": "2"})
    roll(first, table)
    thread.join(15)
    assert [int(e["id"]) for e in events if e.get("event") == "entry"] == [3, 4, 5]
    thread, events = subscribe(f"{url}?after=4&checkpoint=true", 2)
    thread.join(15)
    kinds = [e["event"] for e in events if "event" in e]
    assert kinds == ["entry", "checkpoint"]
    assert json.loads(events[0]["data"])["entry"]["seq"] == 5
    checkpoint = json.loads(next(e for e in events if e.get("event") == "checkpoint")["data"])
    assert checkpoint["size"] == 5


def test_subscribers_per_process_are_bounded(
    replicas: tuple[LiveServer, LiveServer], table: str
) -> None:
    first, _ = replicas
    url = f"{first.url}/v1/tables/{table}/events"
    with httpx.Client(timeout=10) as client, contextlib.ExitStack() as held:
        for _ in range(3):  # held open (a dropped stream context closes its connection)
            assert held.enter_context(client.stream("GET", url)).status_code == 200
        refused = client.get(url)
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "5"
    # Closed streams give their places back.
    with httpx.Client(timeout=10) as client, client.stream("GET", url) as again:
        assert again.status_code == 200


def test_an_event_source_in_chromium_follows_a_table(
    replicas: tuple[LiveServer, LiveServer], table: str, tmp_path: Path
) -> None:
    """A real EventSource in Debian's chromium, on the table page's origin; rolls are made
    on the other replica while it listens."""
    first, second = replicas
    roll(second, table)
    seen = run_node(
        browser_ready() / "events.mjs",
        f"{first.url}/tables/{table}",
        f"{second.url}/v1/tft/contests",
        table,
        timeout=120,
    )
    assert seen["errors"] == []
    assert seen["ids"] == ["1", "2", "3"]
    assert all(w and w["text"] for w in seen["words"])
    assert "(events)" in seen["status"]


def test_a_cosignature_kept_by_one_replica_is_an_event_on_the_other(
    replicas: tuple[LiveServer, LiveServer], table: str
) -> None:
    first, second = replicas
    roll(second, table)
    note = httpx.get(f"{second.url}/v1/tables/{table}/checkpoint").json()["text"]
    key = Ed25519PrivateKey.generate()
    vkey = verifier_key("roth.players.example", raw_public_key(key))
    events = f"{first.url}/v1/tables/{table}/events"
    asked, seen = subscribe(f"{events}?cosignatures=true", 2)
    plain, unasked = subscribe(events, 2)
    line = cosign(note, "roth.players.example", key, int(time.time()))
    posted = httpx.post(
        f"{second.url}/v1/tables/{table}/cosignatures",
        json={"vkey": vkey, "note": note + line + "\n"},
    )
    assert posted.status_code == 201, posted.text
    asked.join(10)
    roll(second, table)  # the plain subscriber's second event is the next entry
    plain.join(10)
    kinds = [e.get("event") for e in seen if "event" in e]
    assert kinds == ["entry", "cosignature"], seen
    cosigned = json.loads(next(e["data"] for e in seen if e.get("event") == "cosignature"))
    assert (cosigned["vkey"], cosigned["size"]) == (vkey, 1) and "id" not in seen[-1]
    assert [e.get("event") for e in unasked if "event" in e] == ["entry", "entry"]
