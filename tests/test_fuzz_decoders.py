"""Arbitrary JSON against every mechanic's request decoder and rules: only domain errors."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairroll.mechanics import MECHANICS, Mechanic
from fairroll.randomness import DiceError, SeededDice
from fairroll.rules import RuleError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-50, 60) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)


def near_valid(mechanic: Mechanic[Any, Any]) -> st.SearchStrategy[Any]:
    """Objects keyed by the request's own field names, with arbitrary values."""
    fields = list(mechanic.input_type.__struct_encode_fields__)
    return st.dictionaries(st.sampled_from(fields), json_values, max_size=len(fields))


@pytest.mark.parametrize("name", sorted(MECHANICS))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_decoder_and_rules_raise_only_domain_errors(name: str, data: st.DataObject) -> None:
    mechanic = MECHANICS[name]
    body = data.draw(json_values | near_valid(mechanic))
    try:
        request = msgspec.json.decode(
            msgspec.json.encode(body), type=mechanic.input_type, strict=True
        )
    except msgspec.ValidationError:
        return
    with suppress(RuleError, DiceError):  # a player-facing refusal is fine; anything else fails
        mechanic.resolve(request, SeededDice("fuzz"))
