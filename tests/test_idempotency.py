"""Safe retries: the same Idempotency-Key and request never rolls twice."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

BODY = {"a": {"attribute": 16, "talents": 2}, "b": {"attribute": 12}}


def post(
    client: httpx.Client, table: str, key: str, body: dict[str, object] | None = None
) -> httpx.Response:
    return client.post(
        "/v1/tft/contests",
        json={**(body or BODY), "table": table},
        headers={"Idempotency-Key": key},
    )


def test_a_retry_returns_the_original_roll(client: httpx.Client, table: str) -> None:
    first = post(client, table, "vtt-msg-1")
    retry = post(client, table, "vtt-msg-1")
    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()  # same dice, outcome, seed and receipt
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1
    other = post(client, table, "vtt-msg-2")
    assert other.json()["receipt"]["seq"] == 2


def test_the_same_key_with_another_request_is_a_conflict(client: httpx.Client, table: str) -> None:
    assert post(client, table, "k").status_code == 200
    clash = post(client, table, "k", {"a": {"attribute": 9}, "b": {"attribute": 9}})
    assert clash.status_code == 409
    assert clash.headers["content-type"].startswith("application/problem+json")
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1


def test_concurrent_duplicates_resolve_to_one_entry(client: httpx.Client, table: str) -> None:
    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(lambda _: post(client, table, "burst"), range(16)))
    assert {r.status_code for r in responses} == {200}
    assert {r.json()["receipt"]["seq"] for r in responses} == {1}
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 1


def test_a_refused_request_does_not_keep_the_key(client: httpx.Client, table: str) -> None:
    bad = post(
        client, table, "fix-me", {"a": {"attribute": 12, "dice_count": 3}, "b": {"attribute": 12}}
    )
    assert bad.status_code == 422
    assert post(client, table, "fix-me").status_code == 200


def test_keys_are_per_table(client: httpx.Client, table: str) -> None:
    first = post(client, table, "shared")
    second = post(client, table + "-b", "shared")
    assert first.json()["receipt"]["table"] != second.json()["receipt"]["table"]


def test_a_malformed_key_is_refused_by_name(client: httpx.Client, table: str) -> None:
    response = post(client, table, "not ok")
    assert response.status_code == 422
    assert response.json()["invalid_params"][0]["name"] == "Idempotency-Key"
