"""Every formula the grammar allows answers a roll and its odds without a 5xx, through a
real server and a real Redis; a d1 (which the docs allow: 1 to 1000 sides) is a 1."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import chances, verified_export

SIDES = st.sampled_from([1, 1, 2, 3, 4, 6, 8, 10, 12, 20, 100, 1000])


def test_a_d1_rolls_a_one_and_its_odds_agree(
    client: httpx.Client, table: str, tmp_path: Path
) -> None:
    for formula, total in [("d1", 1), ("1d1", 1), ("3d1", 3), ("2d1+1", 3), ("1d1kh1", 1)]:
        rolled = client.post("/v1/dice/rolls", json={"table": table, "formula": formula})
        assert rolled.status_code == 200, rolled.text
        answer = rolled.json()
        assert answer["outcome"]["total"] == total
        assert {(d["sides"], d["face"]) for d in answer["dice"]} == {(1, 1)}
        odds = client.post("/v1/dice/rolls/odds", json={"formula": formula})
        assert odds.status_code == 200, odds.text
        assert {t: Fraction(p) for t, p in chances(odds.json(), "total").items()} == {total: 1}
    _, verified = verified_export(client, table, tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@st.composite
def terms(draw: st.DrawFn) -> str:
    count, sides = draw(st.integers(1, 6)), draw(SIDES)
    term = f"{count}d{sides}"
    modifier = draw(
        st.sampled_from(["", "kh", "kl", "dh", "dl", "r", "r<", "!", ">=", "<=", "!>", "ro"])
    )
    if modifier in ("kh", "kl", "dh", "dl"):
        term += f"{modifier}{draw(st.integers(1, count))}"
    elif modifier:
        term += f"{modifier}{draw(st.integers(1, sides))}"
    return term


@st.composite
def formulas(draw: st.DrawFn) -> str:
    parts = [draw(terms())]
    for _ in range(draw(st.integers(0, 2))):
        operator = draw(st.sampled_from(["+", "-", "*"]))
        parts.append(operator + draw(st.one_of(terms(), st.integers(0, 20).map(str))))
    return "".join(parts)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(formula=formulas())
def test_no_formula_of_the_grammar_is_a_server_error(client: httpx.Client, formula: str) -> None:
    """A formula the server cannot roll or answer is a 4xx naming why, never a 5xx (a d1
    once was: the derivation refused one side)."""
    rolled = client.post("/v1/dice/rolls", json={"table": "grammar", "formula": formula})
    assert rolled.status_code < 500, (formula, rolled.text)
    if rolled.status_code >= 400:
        assert rolled.json()["invalid_params"], (formula, rolled.text)
    odds = client.post("/v1/dice/rolls/odds", json={"formula": formula})
    assert odds.status_code < 500, (formula, odds.text)
