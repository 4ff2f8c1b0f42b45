"""Every request header fairroll reads is parsed with a bound and refused with a 4xx.

Issue 39 found two 500s from headers (a ``Last-Event-ID`` of the byte ``\\xb2``, which
``str.isdigit`` takes and ``int`` refuses, and one of 5,000 digits) and a retry whose
second ``Idempotency-Key`` header recorded a second roll. The property: through real
HTTP, any bytes a client can put in the headers fairroll reads get an answer below 500.
"""

from __future__ import annotations

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import LiveServer

BODY = {"a": {"attribute": 12}, "b": {"attribute": 12}}
#: What HTTP/1.1 lets a header value hold: no control bytes but tab, no edge whitespace.
VALUE = (
    st.binary(max_size=64)
    | st.sampled_from(
        [b"\xb2", "\u00b2".encode(), b"9" * 5000, b"-1", b"1e3", b"+7", b"0x10", b"12", b""]
    )
).map(lambda raw: bytes(b for b in raw if b == 9 or 32 <= b != 127).strip(b" \t"))
#: Each header fairroll reads, and where.
HEADERS = [
    "Last-Event-ID",
    "Idempotency-Key",
    "Authorization",
    "If-None-Match",
    "Accept",
    "X-Forwarded-For",
    "Content-Type",
]


def events(client: httpx.Client, table: str, headers: list[tuple[bytes, bytes]]) -> int:
    with client.stream("GET", f"/v1/tables/{table}/events", headers=headers) as answer:
        return answer.status_code


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=st.sampled_from(HEADERS), value=VALUE, twice=st.booleans())
def test_no_header_value_answers_500(
    live_server: LiveServer, table: str, name: str, value: bytes, twice: bool
) -> None:
    header = [(name.encode(), value)] * (2 if twice else 1)
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        rolled = client.post(
            "/v1/tft/contests",
            content=httpx.Request("POST", "/", json={**BODY, "table": table}).content,
            headers=[(b"content-type", b"application/json"), *header]
            if name != "Content-Type"
            else header,
        )
        assert rolled.status_code < 500, (name, value, rolled.text)
        assert events(client, table, header) < 500, (name, value)
        checkpoint = client.get(f"/v1/tables/{table}/checkpoint", headers=header)
        assert checkpoint.status_code < 500, (name, value, checkpoint.text)


def test_a_last_event_id_that_is_not_a_seq_is_refused_naming_it(
    live_server: LiveServer, table: str
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        for value in (b"\xb2", b"9" * 5000, b"12a"):
            status = events(client, table, [(b"last-event-id", value)])
            assert status == 422, value
        with client.stream(
            "GET", f"/v1/tables/{table}/events", headers=[(b"last-event-id", "\u00b2".encode())]
        ) as answer:
            answer.read()
            assert answer.status_code == 422
            assert "Last-Event-ID" in answer.text


def test_two_idempotency_keys_are_refused_and_record_nothing(
    live_server: LiveServer, table: str
) -> None:
    """Two ``Idempotency-Key`` headers: which did the client mean? The first was used, so
    a retry naming the second recorded a second roll. Refused; nothing recorded."""
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        body = {**BODY, "table": table}
        twice = [(b"idempotency-key", b"first"), (b"idempotency-key", b"second")]
        refused = client.post("/v1/tft/contests", json=body, headers=twice)
        assert refused.status_code == 422, refused.text
        assert "Idempotency-Key" in refused.json()["detail"]
        once = client.post("/v1/tft/contests", json=body, headers={"Idempotency-Key": "second"})
        assert once.status_code == 200
        assert once.json()["receipt"]["seq"] == 1  # the refused request recorded nothing
