"""fairroll's canonical bytes are RFC 8785 (JCS), checked byte for byte against an
independent implementation (the ``rfc8785`` package) on hypothesis-drawn entries: keys
outside the BMP, control characters, U+2028, large integers at the edge of the safe
range (beyond it, both refuse); and duplicate keys are refused wherever JSON is read."""

from __future__ import annotations

import json

import httpx
import msgspec
import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from fairroll.audit import Trust, verify_entries
from fairroll.audit.entry import (
    MAX_SAFE_INTEGER,
    Entry,
    NotCanonicalError,
    canonical,
    canonical_of,
    jcs,
)
from fairroll.audit.verify import DuplicateKeyError, loads_strict
from fairroll.randomness import Die

# Any Unicode text but lone surrogates (no UTF-8 form: both refuse those).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
SAFE = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
JSON = st.recursive(
    st.none() | st.booleans() | SAFE | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_jcs_agrees_with_an_independent_rfc8785(value: object) -> None:
    assert jcs(value) == rfc8785.dumps(value)


ASCII = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=8)
NEAR_CANONICAL = st.recursive(
    st.none()
    | st.booleans()
    | SAFE
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
    | ASCII,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT | ASCII, inner, max_size=4),
    max_leaves=20,
)


@given(NEAR_CANONICAL, st.sampled_from(["rfc8785", "sorted", "spaced", "unsorted"]))
def test_the_verifiers_fast_path_takes_only_canonical_text(value: object, how: str) -> None:
    """``canonical_of`` (how verifiers read an export fast) says a line is canonical only
    when an independent RFC 8785 implementation writes exactly those bytes, and then
    gives back the value; anything else goes the slow way (None)."""
    try:
        want = rfc8785.dumps(value)
    except (rfc8785.IntegerDomainError, rfc8785.FloatDomainError, ValueError):
        want = None
    line = {
        "rfc8785": want,
        "sorted": json.dumps(value, sort_keys=True, separators=(",", ":")).encode(),
        "spaced": json.dumps(value, sort_keys=True).encode(),
        "unsorted": json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(),
    }[how]
    if line is None:
        return
    found = canonical_of(line)
    if found is not None:
        assert line == want and found == json.loads(line)


def test_the_fast_path_refuses_a_key_twice_floats_and_wide_numbers() -> None:
    for line in (b'{"a":1,"a":1}', b'{"a":1.5}', b'{"a":1e5}', b'{"a":12345678901234567}'):
        assert canonical_of(line) is None, line
    assert canonical_of(b'{"a":"1.5e","b":[true,false,null]}') == {
        "a": "1.5e",
        "b": [True, False, None],
    }


@given(st.dictionaries(TEXT, SAFE, min_size=2, max_size=6))
def test_keys_sort_by_utf16_code_units_not_code_points(value: dict[str, int]) -> None:
    assert jcs(value) == rfc8785.dumps(value)


def test_a_key_outside_the_bmp_sorts_before_u_e000() -> None:
    value = {"\ue000": 1, "\U0001f3b2": 2}
    assert jcs(value) == rfc8785.dumps(value) == '{"\U0001f3b2":2,"\ue000":1}'.encode()


@given(st.integers(MAX_SAFE_INTEGER + 1, 2**70) | st.integers(-(2**70), -MAX_SAFE_INTEGER - 1))
def test_integers_beyond_the_safe_range_are_refused_by_both(number: int) -> None:
    with pytest.raises(NotCanonicalError):
        jcs({"n": number})
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps({"n": number})


def test_floats_are_refused() -> None:
    with pytest.raises(NotCanonicalError):
        jcs({"p": 0.5})


ENTRY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
BMP_KEYS = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=8)
REQUEST = st.dictionaries(
    BMP_KEYS, st.none() | st.booleans() | SAFE | ENTRY_TEXT | st.lists(SAFE, max_size=3), max_size=5
)


@given(
    REQUEST,
    ENTRY_TEXT,
    st.lists(st.tuples(ENTRY_TEXT, st.integers(2, 1000), st.integers(1, 1000)), max_size=5),
    st.integers(1, MAX_SAFE_INTEGER),
)
def test_the_servers_fast_path_writes_the_same_bytes_as_rfc8785(
    request: dict[str, object], seed: str, dice: list[tuple[str, int, int]], seq: int
) -> None:
    """What the server hashes and stores (msgspec, keys sorted) for an entry is what an
    independent JCS writes for the same JSON: entries fairroll writes have BMP keys
    (struct field names); any entry read back goes through ``jcs``."""
    entry = Entry(
        v=2,
        table="t",
        seq=seq,
        time="2026-12-01T00:00:00.000Z",
        mechanic="tft.contest",
        request=request,
        source="chosen",
        seed=seed,
        dice=tuple(Die(group=g, sides=s, face=f) for g, s, f in dice),
        outcome={"text": seed, "n": seq},
        session=None,
        prev_hash="0" * 64,
        key_id="ed25519:0000000000000000",
        entry_hash="0" * 64,
        signature="",
    )
    as_json = json.loads(msgspec.json.encode(entry))
    assert canonical(entry) == rfc8785.dumps(as_json) == jcs(as_json)


def test_duplicate_keys_are_refused_in_entries(client: httpx.Client, table: str) -> None:
    assert client.post(
        "/v1/tft/contests", json={"a": {"attribute": 12}, "b": {"attribute": 12}, "table": table}
    ).is_success
    line = client.get(f"/v1/tables/{table}/export").content.strip()
    with pytest.raises(DuplicateKeyError):
        loads_strict(b'{"a":1,"b":{"c":1,"c":2}}')
    doubled = line[:-1] + b',"seq":1}'
    report = verify_entries([doubled], Trust(keys=None))
    assert (report.ok, report.first_bad_seq) == (False, 1)
    assert "appears twice" in (report.reason or "")
    upload = client.post(
        "/v1/verify", content=doubled + b"\n", headers={"Content-Type": "application/x-ndjson"}
    )
    assert upload.json()["ok"] is False and "twice" in upload.json()["reason"]


def test_duplicate_keys_are_refused_in_requests(client: httpx.Client, table: str) -> None:
    """A body with a key twice means different things to different parsers: 400, and
    nothing rolled."""
    body = (
        b'{"a": {"attribute": 12}, "b": {"attribute": 12}, "table": "%s", '
        b'"a": {"attribute": 18}}' % table.encode()
    )
    refused = client.post(
        "/v1/tft/contests", content=body, headers={"Content-Type": "application/json"}
    )
    assert refused.status_code == 400
    assert "twice" in refused.json()["detail"]
    assert client.get(f"/v1/tables/{table}/entries").json()["head_seq"] == 0
