"""HTTP that helps a cache (RFC 9110/9111): an entry is immutable, pages and checkpoints
revalidate with their entity tags, and ``If-None-Match`` gets ``304`` while nothing changed."""

from __future__ import annotations

import httpx


def roll(client: httpx.Client, table: str) -> None:
    body = {"table": table, "a": {"attribute": 12}, "b": {"attribute": 9}}
    assert client.post("/v1/tft/contests", json=body).status_code == 200


def test_an_entry_is_immutable_and_tagged_with_its_hash(client: httpx.Client, table: str) -> None:
    roll(client, table)
    url = f"/v1/tables/{table}/entries/1"
    first = client.get(url)
    assert first.status_code == 200
    assert first.headers["etag"] == f'"{first.json()["entry_hash"]}"'
    assert first.headers["cache-control"] == "public, max-age=31536000, immutable"
    again = client.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert (again.status_code, again.content) == (304, b"")
    assert again.headers["etag"] == first.headers["etag"]
    weak = client.get(url, headers={"If-None-Match": f'"other", W/{first.headers["etag"]}'})
    assert weak.status_code == 304
    assert client.get(url, headers={"If-None-Match": '"not-it"'}).status_code == 200
    assert client.head(url).headers["etag"] == first.headers["etag"]


def test_a_page_revalidates_until_the_table_grows(client: httpx.Client, table: str) -> None:
    roll(client, table)
    url = f"/v1/tables/{table}/entries"
    page = client.get(url)
    tag = page.headers["etag"]
    assert page.headers["cache-control"] == "no-cache"
    assert client.get(url, headers={"If-None-Match": tag}).status_code == 304
    roll(client, table)
    grown = client.get(url, headers={"If-None-Match": tag})
    assert grown.status_code == 200
    assert grown.headers["etag"] != tag
    assert grown.json()["head_seq"] == 2


def test_a_checkpoint_has_a_tag_per_representation(client: httpx.Client, table: str) -> None:
    roll(client, table)
    url = f"/v1/tables/{table}/checkpoint"
    as_json = client.get(url)
    as_note = client.get(url, headers={"Accept": "text/plain"})
    assert as_json.headers["etag"] != as_note.headers["etag"]
    for answer, accept in ((as_json, "application/json"), (as_note, "text/plain")):
        repeat = client.get(
            url, headers={"Accept": accept, "If-None-Match": answer.headers["etag"]}
        )
        assert repeat.status_code == 304, accept
    roll(client, table)
    assert client.get(url, headers={"If-None-Match": as_json.headers["etag"]}).status_code == 200
