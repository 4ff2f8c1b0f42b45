"""Hostile input gets a clear 4xx and changes nothing: Redis is the same before and after."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from redis import Redis

TFT = '{"a": {"attribute": 12}, "b": {"attribute": 12}, "table": "%s"}'
DEEP_ARRAY = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000


@contextmanager
def unchanged(redis: Redis) -> Iterator[None]:
    """Nothing written: the same keys, each with the same value digest (DUMP)."""

    def state() -> dict[bytes, bytes | None]:
        return {key: redis.dump(key) for key in redis.scan_iter(count=1000)}

    before = state()
    yield
    assert state() == before


@pytest.mark.parametrize("body", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
@pytest.mark.parametrize(
    "path", ["/v1/tft/contests", "/v1/tft/contests/odds", "/v1/fbc/rolls", "/v1/dice-less"]
)
def test_json_nested_a_thousand_deep_is_a_400(
    client: httpx.Client, redis_client: Redis, path: str, body: str
) -> None:
    with unchanged(redis_client):
        answer = client.post(path, content=body, headers={"content-type": "application/json"})
    if path == "/v1/dice-less":  # no such route: 404 before any body is read
        assert answer.status_code == 404
        return
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert "nested too deeply" in answer.json()["detail"]


def test_an_export_line_nested_a_thousand_deep_is_a_bad_entry(
    client: httpx.Client, redis_client: Redis
) -> None:
    with unchanged(redis_client):
        answer = client.post(
            "/v1/verify", content=DEEP_OBJECT, headers={"content-type": "application/x-ndjson"}
        )
    assert answer.status_code == 200
    report = answer.json()
    assert report["ok"] is False
    assert "nested too deeply" in report["reason"]


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_roll_not_sent_as_json_is_a_415(
    client: httpx.Client, redis_client: Redis, table: str, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    with unchanged(redis_client):
        answer = client.post("/v1/tft/contests", content=TFT % table, headers=headers)
    assert answer.status_code == 415
    assert answer.headers["accept-post"] == "application/json"
    sent_as_json = client.post(
        "/v1/tft/contests", content=TFT % table, headers={"content-type": "application/json"}
    )
    assert sent_as_json.status_code == 200


def test_an_upload_not_sent_as_ndjson_is_a_415(client: httpx.Client, redis_client: Redis) -> None:
    with unchanged(redis_client):
        answer = client.post("/v1/verify", content=b"{}", headers={"content-type": "text/csv"})
    assert answer.status_code == 415


@pytest.mark.parametrize(
    "path",
    [
        "/livez",
        "/readyz",
        "/v1/keys",
        "/v1/tables/{table}/entries",
        "/v1/tables/{table}/entries/1",
        "/v1/tables/{table}/export",
        "/v1/tables/{table}/checkpoint",
        "/tables/{table}",
        "/static/verify.js",
        "/schema/openapi.json",
    ],
)
def test_head_answers_every_get_without_a_body(client: httpx.Client, table: str, path: str) -> None:
    client.post(
        "/v1/tft/contests", json={"a": {"attribute": 12}, "b": {"attribute": 12}, "table": table}
    )
    url = path.format(table=table)
    got, head = client.get(url), client.head(url)
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    if "content-length" in got.headers:
        assert head.headers["content-length"] == got.headers["content-length"]


def test_an_export_range_that_ends_before_it_starts_is_a_422(
    client: httpx.Client, table: str
) -> None:
    answer = client.get(f"/v1/tables/{table}/export", params={"from_seq": 5, "to_seq": 2})
    assert answer.status_code == 422
    assert answer.json()["invalid_params"][0]["name"] == "to_seq"


def test_battle_odds_take_what_the_battle_takes(client: httpx.Client) -> None:
    """Odds take the roll's own input: a battle of two to six fighters, refused beyond."""
    spec = client.get("/schema/openapi.json").json()

    schemas = spec["components"]["schemas"]
    body = spec["paths"]["/v1/fast-battle/battles/odds"]["post"]["requestBody"]
    name = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    odds = schemas[name]["properties"]["fighters"]
    assert (odds["minItems"], odds["maxItems"]) == (2, 6)
    assert odds == schemas["FastBattleBattleRequest"]["properties"]["fighters"]
    fighter = {"name": "A", "st": 1, "qk": 1, "in": 1, "ma": 1, "mr": 1, "max_hp": 6}
    three = [{**fighter, "name": name} for name in "ABC"]
    answer = client.post("/v1/fast-battle/battles/odds", json={"fighters": three})
    assert answer.status_code == 200, answer.text
    assert answer.json()["exact"] is False
    assert answer.json()["estimate"]["battles"] >= 10
    seven = [{**fighter, "name": str(n)} for n in range(7)]
    for path in ("/v1/fast-battle/battles/odds", "/v1/fast-battle/battles"):
        assert client.post(path, json={"fighters": seven}).status_code == 422
