"""Dice formulas read as each VTT reads them (docs/rules/dice.md, "Dialects"): every form
of the dialect table rolled on rigged faces, the worked examples of Foundry VTT's dice
modifiers article, refusals naming the offset and the dialect, and the exact odds of
every new form checked two independent ways: against icepool, and against every face
sequence the roller itself can draw (an exhaustive walk of the dice, each path weighed
by its probability)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import icepool
import msgspec
import pytest

from fairroll.mechanics import MECHANICS, replay_entry
from fairroll.odds import dice as odds_dice
from fairroll.odds.dice import Work, formula_odds
from fairroll.randomness import Die, SeededDice, SuppliedDice
from fairroll.rules import RuleError
from fairroll.rules.dice import (
    MAX_HELD_DICE,
    Dialect,
    Formula,
    FormulaOutcome,
    parse,
    resolve_formula,
)
from fairroll.rules.dice.rolling import whole
from test_dice import shallow

__all__ = ["shallow"]  # the fixture: every VTT shallow, as icepool and the walk need

ROLL = MECHANICS["dice.roll"]


def roll(formula: str, dialect: Dialect, **faces: list[int]) -> FormulaOutcome:
    source = SuppliedDice(faces)
    outcome = resolve_formula(Formula(formula=formula, dialect=dialect), source)
    source.check_all_used()
    return outcome


def marks(outcome: FormulaOutcome, term: int = 0) -> list[str]:
    """Each die of a term as ``value`` plus what became of it: r rerolled, x exploded,
    d dropped, + success, - failure."""
    said = []
    for die in outcome.terms[term].dice:
        mark = str(die.value)
        mark += "r" if die.rerolled else ""
        mark += "x" if die.exploded else ""
        mark += "d" if die.dropped else ""
        mark += "+" if die.success else ""
        mark += "-" if die.failure is True else ""
        said.append(mark)
    return said


# --- The dialect table, form by form ------------------------------------------------------

#: (formula, dialect, faces, total, marks of the first term): every row of the table.
TABLE = [
    # Roll20 (fairroll's reading of today, and its new forms)
    ("4d6kh3", "roll20", {"d6": [6, 1, 5, 1]}, 12, ["6", "1", "5", "1d"]),
    ("1d10r1", "roll20", {"d10": [1, 1, 4]}, 4, ["1r", "1r", "4"]),
    ("1d20r<10", "roll20", {"d20": [10, 12]}, 12, ["10r", "12"]),
    ("2d8r1r3", "roll20", {"d8": [1, 3, 5, 8]}, 13, ["1r", "3r", "5", "8"]),
    ("3d6!", "roll20", {"d6": [6, 2, 3, 4]}, 15, ["6x", "2", "3", "4"]),
    ("2d6!!", "roll20", {"d6": [6, 2, 3]}, 11, ["6x", "2", "3"]),
    ("2d6!p", "roll20", {"d6": [6, 6, 3, 2]}, 15, ["6x", "5x", "2", "2"]),
    ("6d10>7f1", "roll20", {"d10": [8, 9, 1, 2, 10, 7]}, 3, ["8+", "9+", "1-", "2", "10+", "7+"]),
    ("1d20cs>19", "roll20", {"d20": [19]}, 19, ["19"]),
    ("4d6s", "roll20", {"d6": [6, 1, 5, 1]}, 13, ["6", "1", "5", "1"]),
    ("4D6KH3", "roll20", {"d6": [6, 1, 5, 1]}, 12, ["6", "1", "5", "1d"]),
    ("{2d20}kh1", "roll20", {"d20": [3, 17]}, 17, ["3d", "17"]),
    ("{4d6+1}>10", "roll20", {"d6": [3, 4, 2, 1]}, 1, ["3", "4", "2", "1"]),
    ("{1d20, 1d20+2}kh1", "roll20", {"d20": [15, 14]}, 16, ["15"]),
    ("8d6/2", "roll20", {"d6": [1, 2, 3, 4, 5, 6, 1, 1]}, 11.5, None),
    ("floor(8d6/2)", "roll20", {"d6": [1, 2, 3, 4, 5, 6, 1, 1]}, 11, None),
    ("ceil(7/2)+round(5/2)+abs(-3)", "roll20", {}, 4 + 3 + 3, None),
    ("1d20+5 Longsword", "roll20", {"d20": [10]}, 15, ["10"]),
    # Foundry VTT: r once, rr recursive, x/xo, strict > <, modifiers in written order
    ("1d10r1", "foundry", {"d10": [1, 1]}, 1, ["1r", "1"]),
    ("1d20r<10", "foundry", {"d20": [10]}, 10, ["10"]),
    ("1d20r<10", "foundry", {"d20": [9, 3]}, 3, ["9r", "3"]),
    ("1d20rr<3", "foundry", {"d20": [1, 2, 15]}, 15, ["1r", "2r", "15"]),
    (
        "5d10x10",
        "foundry",
        {"d10": [10, 3, 4, 10, 5, 2, 10, 1]},
        45,
        ["10x", "3", "4", "10x", "5", "2", "10x", "1"],
    ),
    ("2d6x", "foundry", {"d6": [6, 3, 6, 1]}, 16, ["6x", "3", "6x", "1"]),
    ("3d6xo", "foundry", {"d6": [6, 6, 2, 6, 5]}, 25, ["6x", "6x", "2", "6", "5"]),
    ("4d6kh3", "foundry", {"d6": [6, 1, 5, 1]}, 12, ["6", "1d", "5", "1"]),
    ("4d6KH3", "foundry", {"d6": [6, 1, 5, 1]}, 12, ["6", "1d", "5", "1"]),
    ("2d20kl", "foundry", {"d20": [8, 3]}, 3, ["8d", "3"]),
    ("4d6d1", "foundry", {"d6": [2, 2, 5, 6]}, 13, ["2d", "2", "5", "6"]),
    ("4d6r1kh3", "foundry", {"d6": [1, 4, 2, 6, 3]}, 13, ["1r", "4", "2d", "6", "3"]),
    ("6d10cs>=8", "foundry", {"d10": [8, 9, 1, 2, 10, 7]}, 3, ["8+", "9+", "1", "2", "10+", "7"]),
    ("6d10cs>8", "foundry", {"d10": [8, 9, 1, 2, 10, 7]}, 2, ["8", "9+", "1", "2", "10+", "7"]),
    ("4d6cf<3", "foundry", {"d6": [1, 2, 3, 6]}, 2, ["1-", "2-", "3", "6"]),
    ("6d6cs>4df=1", "foundry", {"d6": [5, 6, 1, 1, 3, 2]}, 0, ["5+", "6+", "1-", "1-", "3", "2"]),
    ("4d6even", "foundry", {"d6": [2, 3, 4, 6]}, 3, ["2+", "3", "4+", "6+"]),
    ("4d6odd", "foundry", {"d6": [2, 3, 4, 5]}, 2, ["2", "3+", "4", "5+"]),
    ("1d20min10", "foundry", {"d20": [4]}, 10, ["10"]),
    ("1d20max15", "foundry", {"d20": [19]}, 15, ["15"]),
    ("1d20ms>=15", "foundry", {"d20": [18]}, 3, ["18"]),
    ("{1d20, 1d20}kh", "foundry", {"d20": [7, 12]}, 12, ["7"]),
    ("{2d20}kh1", "foundry", {"d20": [3, 17]}, 20, ["3", "17"]),
    ("{1d20, 1d20, 1d20}cs>=10", "foundry", {"d20": [3, 17, 10]}, 2, ["3"]),
    ("7 % 3 + 8d6/2", "foundry", {"d6": [1, 2, 3, 4, 5, 6, 1, 1]}, 12.5, None),
    ("1d20 + 4 # Longsword", "foundry", {"d20": [11]}, 15, ["11"]),
    # avrae (d20): operators with selectors, in written order, strict comparisons
    ("4d6kh3", "avrae", {"d6": [6, 1, 5, 1]}, 12, ["6", "1", "5", "1d"]),
    ("4d6k3", "avrae", {"d6": [3, 1, 3, 6]}, 6, ["3", "1d", "3", "6d"]),
    ("4d6pl1", "avrae", {"d6": [2, 2, 5, 6]}, 13, ["2d", "2", "5", "6"]),
    ("4d6p<3", "avrae", {"d6": [1, 2, 3, 6]}, 9, ["1d", "2d", "3", "6"]),
    ("1d20ro<3", "avrae", {"d20": [2, 1]}, 1, ["2r", "1"]),
    ("1d20rr1", "avrae", {"d20": [1, 1, 7]}, 7, ["1r", "1r", "7"]),
    ("2d6rr1rr2", "avrae", {"d6": [1, 5, 2, 6]}, 11, ["1r", "2r", "6", "5"]),
    ("3d6e6", "avrae", {"d6": [6, 2, 6, 6, 1, 3]}, 24, ["6x", "2", "6x", "6x", "1", "3"]),
    ("2d20ra20", "avrae", {"d20": [20, 20, 5]}, 45, ["20x", "20", "5"]),
    ("4d6mi2", "avrae", {"d6": [1, 2, 5, 1]}, 11, ["2", "2", "5", "2"]),
    ("4d6ma4", "avrae", {"d6": [1, 6, 5, 4]}, 13, ["1", "4", "4", "4"]),
    ("(1d20, 1d20)kh1", "avrae", {"d20": [4, 16]}, 16, ["4"]),
    ("8d6/2", "avrae", {"d6": [1, 2, 3, 4, 5, 6, 1, 1]}, 11, None),  # d20: int() of 11.5
    ("8d6//2", "avrae", {"d6": [1, 2, 3, 4, 5, 6, 1, 1]}, 11, None),
    ("-7 % 3", "avrae", {}, 2, None),
    ("1d20 >= 10", "avrae", {"d20": [10]}, 1, ["10"]),
    ("1d20 > 10", "avrae", {"d20": [10]}, 0, ["10"]),
    ("1d20+5 Longsword attack", "avrae", {"d20": [10]}, 15, ["10"]),
    ("1d20[fire]+2.5", "avrae", {"d20": [10]}, 12, ["10"]),
    ("-1d20/3", "avrae", {"d20": [10]}, -3, ["10"]),  # toward zero, as int()
]


@pytest.mark.parametrize(("formula", "dialect", "faces", "total", "dice"), TABLE)
def test_every_form_of_the_table(
    formula: str, dialect: Dialect, faces: dict[str, list[int]], total: float, dice: list[str]
) -> None:
    outcome = roll(formula, dialect, **faces)
    assert outcome.total == total
    if dice is not None:
        assert marks(outcome) == dice


def test_a_bare_label_is_the_text_after_the_formula() -> None:
    assert roll("1d20+5 Longsword", "roll20", d20=[3]).label == "Longsword"
    assert roll("1d20+5 to hit", "avrae", d20=[3]).label == "to hit"
    with pytest.raises(RuleError) as refused:
        parse("1d20+5 Longsword", "foundry")
    assert "at offset 7" in str(refused.value)


def test_foundry_exploding_dice_are_not_rerolled_by_a_reroll_written_before() -> None:
    """Foundry runs each modifier over the pool in turn: the die an explosion adds comes
    after the reroll has run (fairroll's Roll20 reading rerolls every die of a chain)."""
    foundry = roll("1d6r1x", "foundry", d6=[6, 1])
    assert (foundry.total, marks(foundry)) == (7, ["6x", "1"])
    roll20 = roll("1d6!ro1", "roll20", d6=[6, 1, 2])
    assert (roll20.total, marks(roll20)) == (8, ["6x", "1r", "2"])


def test_the_entry_records_the_dialect_and_replays_it() -> None:
    request = Formula(formula="4d6r1kh3", dialect="foundry")
    seed = "dialect-replay"
    outcome = resolve_formula(request, SeededDice(seed))
    entry = {"mechanic": "dice.roll", "request": {"formula": "4d6r1kh3", "dialect": "foundry"}}
    _, replayed = replay_entry(entry, seed)
    assert replayed["total"] == outcome.total
    as_roll20 = {"mechanic": "dice.roll", "request": {"formula": "4d6r1kh3"}}
    assert replay_entry(as_roll20, seed)[1]["terms"][0]["dice"] != replayed["terms"][0]["dice"]


@pytest.mark.parametrize(
    ("formula", "dialect", "offset", "says"),
    [
        ("2d6x", "roll20", 3, "not roll20 dice notation here; Roll20 explodes with !"),
        ("2d6!", "foundry", 3, "Foundry explodes with x"),
        ("(2d6!)", "avrae", 4, "avrae explodes with e"),
        ("(1D20)", "avrae", 2, "avrae's notation is lower case"),
        ("1d%", "avrae", 2, "a tens die"),
        ("4dF", "avrae", 2, "no Fate dice"),
        ("{1d20,1d20}kh1", "avrae", 0, "avrae groups with ( , )"),
        ("(4d6r1)", "avrae", 4, "avrae rerolls with rr"),
        ("1d20cs", "foundry", 4, "needs a target"),
        ("1d6/(1d2-1)", "roll20", 5, "this divisor can be 0"),
        ("d6rr<7", "foundry", 2, "never stops"),
        ("4d6rrh1", "avrae", 3, "would never stop"),
        ("6d10f1", "roll20", 4, "f counts failures against a target"),
    ],
)
def test_refusals_name_the_offset_and_the_dialect(
    formula: str, dialect: Dialect, offset: int, says: str
) -> None:
    with pytest.raises(RuleError) as refused:
        parse(formula, dialect)
    assert refused.value.field == "formula"
    assert str(refused.value).startswith(f"formula, at offset {offset}: "), refused.value
    assert says in str(refused.value)


def test_sorting_orders_the_dice_in_the_words_and_keeps_the_record_in_roll_order() -> None:
    outcome = roll("4d6s", "roll20", d6=[6, 1, 5, 1])
    assert [d.value for d in outcome.terms[0].dice] == [6, 1, 5, 1]
    assert ROLL.read(Formula(formula="4d6s"), outcome).text == "13 — 4d6s: 1, 1, 5, 6"
    down = roll("4d6sd", "roll20", d6=[6, 1, 5, 1])
    assert ROLL.read(Formula(formula="4d6sd"), down).text == "13 — 4d6sd: 6, 5, 1, 1"


def test_critical_flags_reach_the_words() -> None:
    said = ROLL.read(Formula(formula="1d20+5"), roll("1d20+5", "roll20", d20=[20]))
    assert "natural 20" in said.text
    said = ROLL.read(Formula(formula="2d20kl1"), roll("2d20kl1", "roll20", d20=[1, 20]))
    assert "natural 1" in said.text and "natural 20" not in said.text
    ranged = Formula(formula="1d20cs>19")
    assert "critical success" in ROLL.read(ranged, roll("1d20cs>19", "roll20", d20=[19])).text
    fumble = Formula(formula="1d20cf<3")
    assert "critical failure" in ROLL.read(fumble, roll("1d20cf<3", "roll20", d20=[2])).text


# --- Exact odds of every new form: icepool, and every path the roller can take ------------


class _Path:
    """A dice source that hands out a fixed prefix of faces, then says it needs more."""

    class NeedsError(Exception):
        def __init__(self, group: str, sides: int) -> None:
            self.group, self.sides = group, sides

    def __init__(self, faces: list[int]) -> None:
        self.faces = faces
        self.used = 0
        self._dice: list[Die] = []

    @property
    def dice(self) -> tuple[Die, ...]:
        return tuple(self._dice)

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        out = []
        for _ in range(count):
            if self.used == len(self.faces):
                raise _Path.NeedsError(group, sides)
            out.append(self.faces[self.used])
            self.used += 1
        return tuple(out)


def walked(formula: str, dialect: Dialect) -> dict[float, Fraction]:
    """The distribution of a formula's total by rolling it on every face sequence."""
    request = Formula(formula=formula, dialect=dialect)
    out: dict[float, Fraction] = {}

    def paths(prefix: list[int], p: Fraction) -> Iterator[tuple[float, Fraction]]:
        try:
            outcome = resolve_formula(request, _Path(prefix))
        except _Path.NeedsError as needs:
            for face in range(1, needs.sides + 1):
                yield from paths([*prefix, face], p / needs.sides)
            return
        yield outcome.total, p

    for total, p in paths([], Fraction(1)):
        out[total] = out.get(total, Fraction(0)) + p
    return out


def exact(formula: str, dialect: Dialect) -> dict[float, Fraction]:
    """The odds engine's answer, its values as a roll's total gives them."""
    total, weights = formula_odds(parse(formula, dialect), Work(formula, budget_ms=10**6))
    return {whole(Fraction(v)): Fraction(w, total) for v, w in weights.items() if w}


#: Small enough to walk every face (explosions kept shallow by small dice and few of them).
WALKED = [
    ("1d4r1r3", "roll20"),
    ("2d4!!", "roll20"),
    ("1d4!p", "roll20"),
    ("3d4!!kh2", "roll20"),
    ("4d4>3f1", "roll20"),
    ("{2d6}kh1", "roll20"),
    ("{1d6+1}>4", "roll20"),
    ("{1d6, 1d4+1, 1d8}kh2", "roll20"),
    ("floor(3d4/2)", "roll20"),
    ("round(1d6/4)+ceil(1d4/3)", "roll20"),
    ("1d6r1x", "foundry"),
    ("2d4r<3", "foundry"),
    ("2d4rr<2", "foundry"),
    ("3d4xo", "foundry"),
    ("4d4kh3", "foundry"),
    ("3d4min2kl2", "foundry"),
    ("2d6x4max4", "foundry"),
    ("3d4min2cs>=2", "foundry"),
    ("4d4cs>2", "foundry"),
    ("4d4cs>=3df=1", "foundry"),
    ("3d4sf<2", "foundry"),
    ("3d4even", "foundry"),
    ("2d6ms>=5", "foundry"),
    ("{1d6, 1d6}kh", "foundry"),
    ("{1d6, 1d4, 1d4}cs>=3", "foundry"),
    ("1d6 % 4 + 1d4/3", "foundry"),
    ("3d4kh2", "avrae"),
    ("3d4k2", "avrae"),
    ("3d4p>2", "avrae"),
    ("2d4ro1", "avrae"),
    ("2d4rr1", "avrae"),
    ("2d4e4", "avrae"),
    ("3d4ra4", "avrae"),
    ("3d4mi2", "avrae"),
    ("(1d6, 1d6)kh1", "avrae"),
    ("1d6 // 2 + 1d4 % 3", "avrae"),
    ("1d20 > 10", "avrae"),
]


def walked_cut(formula: str, explodes: Callable[[int], bool], depth: int) -> dict[Any, Fraction]:
    """A Roll20 formula of one die size rolled on every face sequence, each chain cut
    after ``depth`` explosions (a run of ``depth + 1`` exploding faces: the chain goes on
    past what is counted, ``"beyond"``), as the odds cut it."""
    request = Formula(formula=formula)
    out: dict[Any, Fraction] = {}

    def paths(prefix: list[int], run: int, p: Fraction) -> Iterator[tuple[Any, Fraction]]:
        if run > depth:
            yield "beyond", p
            return
        try:
            outcome = resolve_formula(request, _Path(prefix))
        except _Path.NeedsError as needs:
            for face in range(1, needs.sides + 1):
                more = run + 1 if explodes(face) else 0
                yield from paths([*prefix, face], more, p / needs.sides)
            return
        yield outcome.total, p

    for total, p in paths([], 0, Fraction(1)):
        out[total] = out.get(total, Fraction(0)) + p
    return out


@pytest.mark.parametrize(
    ("formula", "explodes"),
    [
        ("3d4!k2", lambda f: f == 4),
        ("3d4!kh2", lambda f: f == 4),
        ("3d4!kl2", lambda f: f == 4),
        ("2d4!>3k1", lambda f: f >= 3),
        ("2d4!k3", lambda f: f == 4),  # more kept than written: the pool grew
    ],
)
def test_a_keep_among_the_dice_explosions_added_is_every_path_of_the_dice(
    monkeypatch: pytest.MonkeyPatch, formula: str, explodes: Callable[[int], bool]
) -> None:
    """Roll20's ``4d6!k3`` keeps among every die, the exploded ones too (its odds were
    refused): counted to the depth EPSILON gives (made large here, so that every path
    can be walked), the odds are every path of the dice, and what goes on is beyond."""
    monkeypatch.setattr(odds_dice, "EPSILON", Fraction(1, 4))
    work = Work(formula, budget_ms=10**6)
    total, weights = formula_odds(parse(formula), work)
    ((_, _, depth),) = work.cuts
    ours: dict[Any, Fraction] = {
        whole(Fraction(v)): Fraction(w, total) for v, w in weights.items() if w
    }
    ours["beyond"] = 1 - sum(ours.values())
    assert ours == walked_cut(formula, explodes, depth)


@pytest.mark.usefixtures("shallow")
@pytest.mark.parametrize(("formula", "dialect"), WALKED)
def test_odds_are_every_path_of_the_dice(formula: str, dialect: Dialect) -> None:
    assert exact(formula, dialect) == walked(formula, dialect)


def _dist(die: icepool.Die[int]) -> dict[float, Fraction]:
    return {whole(Fraction(v)): Fraction(q, die.denominator()) for v, q in die.items() if q}


@pytest.mark.usefixtures("shallow")
def test_odds_of_new_forms_are_icepools() -> None:
    d6, d20, d10 = icepool.d6, icepool.d20, icepool.d10
    assert exact("1d20min10", "foundry") == _dist(d20.map(lambda v: max(v, 10)))
    assert exact("4d6max4kh3", "foundry") == _dist(
        d6.map(lambda v: min(v, 4)).pool(4).highest(3).sum()
    )
    assert exact("6d10cs>8", "foundry") == _dist(6 @ d10.map(lambda v: int(v > 8)))
    assert exact("5d6even", "foundry") == _dist(5 @ d6.map(lambda v: int(v % 2 == 0)))
    assert exact("{1d20, 1d20}kh", "foundry") == _dist(icepool.Pool([d20, d20]).highest(1).sum())
    assert exact("{1d20, 1d12, 1d8}kh2", "roll20") == _dist(
        icepool.Pool([d20, icepool.d12, icepool.d8]).highest(2).sum()
    )
    assert exact("floor(8d6/2)", "roll20") == _dist((8 @ d6).map(lambda v: v // 2))
    assert exact("1d20 >= 11", "avrae") == _dist(d20.map(lambda v: int(v >= 11)))
    assert exact("4d6k3", "avrae") == _dist(4 @ d6.map(lambda v: v if v == 3 else 0))
    assert exact("4d6kh3min3", "foundry") == _dist(
        d6.map(lambda v: max(v, 3)).pool(4).highest(3).sum()
    )
    assert exact("4d6kh3mi3", "avrae") == _dist(
        d6.map(lambda v: max(v, 3)).pool(4).highest(3).sum()
    )
    assert exact("20d10!!", "roll20") == _dist(20 @ d10.explode(depth=10))
    assert exact("2d20ms>=15", "foundry") == _dist((2 @ d20).map(lambda v: v - 15))
    assert exact("0.57*100 + 1d4", "avrae") == _dist(icepool.d4.map(lambda v: v + 56))
    compound = d6.explode(depth=10)  # one die and its chain, summed: Roll20's !!
    assert exact("3d6!!", "roll20") == _dist(3 @ compound)
    assert exact("4d6!!kh2", "roll20") == _dist(compound.pool(4).highest(2).sum())


#: New forms at sizes worth timing, with the same distribution written in icepool's own
#: operations (code, so benchmarks/dice_odds.py can build each cold in a fresh process).
NEW_FORMS_AGAINST_ICEPOOL = [
    ("50d20min5", "foundry", "50 @ icepool.d20.map(lambda v: max(v, 5))"),
    ("20d20mi3ma18", "avrae", "20 @ icepool.d20.map(lambda v: min(max(v, 3), 18))"),
    ("40d10cs>7", "foundry", "40 @ icepool.d10.map(lambda v: int(v > 7))"),
    ("30d6even", "foundry", "30 @ icepool.d6.map(lambda v: int(v % 2 == 0))"),
    ("10d6!!", "roll20", "10 @ icepool.d6.explode(depth=10)"),
    ("8d6!!kh4", "roll20", "icepool.d6.explode(depth=10).pool(8).highest(4).sum()"),
    ("{1d20, 1d20, 1d20}kh2", "foundry", "icepool.Pool([icepool.d20] * 3).highest(2).sum()"),
    ("floor(20d6/2)", "roll20", "(20 @ icepool.d6).map(lambda v: v // 2)"),
    ("(3d6, 3d6, 3d6, 3d6)kh1", "avrae", "icepool.Pool([3 @ icepool.d6] * 4).highest(1).sum()"),
    ("4d6kh3min3", "foundry", "icepool.d6.map(lambda v: max(v, 3)).pool(4).highest(3).sum()"),
    ("20d10!!", "roll20", "20 @ icepool.d10.explode(depth=10)"),
    ("2d20ms>=15", "foundry", "(2 @ icepool.d20).map(lambda v: v - 15)"),
    ("100d10min3", "foundry", "100 @ icepool.d10.map(lambda v: max(v, 3))"),
    (
        "100d6kh3min3",
        "foundry",
        "icepool.d6.map(lambda v: max(v, 3)).pool(100).highest(3).sum()",
    ),
    ("100d6kh50", "avrae", "icepool.d6.pool(100).highest(50).sum()"),
]


@pytest.mark.usefixtures("shallow")
@pytest.mark.parametrize(("formula", "dialect", "built"), NEW_FORMS_AGAINST_ICEPOOL)
def test_odds_of_new_forms_at_size_are_icepools(formula: str, dialect: Dialect, built: str) -> None:
    die = eval(built, {"icepool": icepool})  # noqa: S307  (the list above: code of this file)
    assert exact(formula, dialect) == _dist(die)


def test_odds_refuse_what_they_do_not_offer_and_say_the_roll_is_fine() -> None:
    for formula, dialect in [
        ("4d6x6dl1", "foundry"),  # a drop from a pool its explosions grow
        ("4d6!pk3", "roll20"),  # a keep of one whose dice penetrate
        ("4d6rol1", "avrae"),
        ("4d6kh3r1", "foundry"),
    ]:
        roll_ok = parse(formula, dialect)  # rolls
        assert roll_ok.terms
        with pytest.raises(RuleError) as refused:
            ROLL.odds_of(Formula(formula=formula, dialect=dialect))  # type: ignore[arg-type]
        assert "are not offered" in str(refused.value) and "it rolls" in str(refused.value)


# --- The docs' table is what rolls -----------------------------------------------------------

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules" / "dice.md"


def docs_rows() -> list[tuple[str, str, dict[str, list[int]], float]]:
    text = DOCS.read_text()
    table = text.split("<!-- dialect-table -->", 1)[1].split("<!-- /dialect-table -->", 1)[0]
    rows = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        formula = cells[0].strip("`").replace("\\|", "|")
        faces: dict[str, list[int]] = {}
        for group in re.findall(r"(d\w+): ([-0-9 ]+)", cells[2]):
            faces[group[0]] = [int(v) for v in group[1].split()]
        rows.append((formula, cells[1], faces, float(cells[3])))
    return rows


def test_every_row_of_the_docs_table() -> None:
    rows = docs_rows()
    assert len(rows) == len(TABLE)
    for formula, dialect, faces, total in rows:
        assert roll(formula, dialect, **faces).total == total, (formula, dialect)  # type: ignore[arg-type]


def foundry_rows() -> list[tuple[str, dict[str, list[int]], float]]:
    text = DOCS.read_text()
    table = text.split("<!-- foundry-table -->", 1)[1].split("<!-- /foundry-table -->", 1)[0]
    rows = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        faces: dict[str, list[int]] = {}
        for group in re.findall(r"(d\w+): ([-0-9 ]+)", cells[2]):
            faces[group[0]] = [int(v) for v in group[1].split()]
        rows.append((cells[0].strip("`"), faces, float(cells[3])))
    return rows


def test_every_row_of_the_foundry_table() -> None:
    """Each of Foundry's modifiers, as its ``Die`` code applies them (the docs' table,
    one row per rule), rolled on the faces the row shows: every face used, the total
    the row gives."""
    rows = foundry_rows()
    assert len(rows) >= 25
    for formula, faces, total in rows:
        assert roll(formula, "foundry", **faces).total == total, formula


def test_foundry_stops_a_modifier_where_foundry_throws_and_not_before() -> None:
    """Foundry's ``Die#explode`` and ``#reroll`` throw once ``checked > 1000``: a roll whose
    modifier checks 1,000 results and has none left completes, as in Foundry; one with a
    1,001st result to check is a roll Foundry fails, and fairroll stops there."""
    completes = roll("1d6x", "foundry", d6=[6] * 999 + [2])
    assert (completes.total, completes.terms[0].stopped) == (5996, msgspec.UNSET)
    stopped = roll("1d6x", "foundry", d6=[6] * 1001)
    assert (stopped.total, stopped.terms[0].stopped) == (6006, "checked")
    assert len(stopped.terms[0].dice) == 1001
    # The limit is the modifier's, shared by its pool: two dice reach it together.
    shared = roll("2d6x", "foundry", d6=[6, 2] + [6] * 999)
    assert (len(shared.terms[0].dice), shared.terms[0].stopped) == (1001, "checked")
    # One die more than fairroll's limit of dice held is refused before Foundry's is met.
    with pytest.raises(RuleError) as held:
        roll("2d6x", "foundry", d6=[6] * 1002)
    assert f"fairroll records at most {MAX_HELD_DICE} dice a roll" in str(held.value)
    rerolled = roll("1d6rr1", "foundry", d6=[1] * 1001)
    assert (rerolled.total, rerolled.terms[0].stopped) == (1, "checked")
