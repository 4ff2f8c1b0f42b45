"""Each dialect checked against the roller that implements it, dice by dice.

A corpus per dialect is rolled on fairroll from seeds; the very faces each roll drew
are then handed to the peer through a rigged random source, and the totals and the
marks of every die (kept, dropped, rerolled, exploded, success, failure) must agree:

- ``roll20`` against ``@dice-roller/rpg-dice-roller`` (npm, ``tests/peers/package.json``),
  the Roll20-like roller of the JavaScript world. It takes every die's first face before
  any reroll or explosion, so the faces are handed to it in that order; its compare
  points are strict where Roll20's are not, so the corpus writes them unambiguously
  (``>=``, ``<=``). Among equal dice it drops the earlier, fairroll the later: marks are
  compared as a multiset of (value, marks) per term.
- ``avrae`` against avrae's own ``d20`` (PyPI, ``tests/peers/avrae.lock``, in a venv of
  its own: it needs ``lark-parser`` 0.9, whose module shadows ``lark``). d20 keeps each
  die in its place, as fairroll's avrae reading does, so marks are compared in order.

Foundry VTT cannot run here (its roller ships inside the licensed application); its
reading is checked against every worked example of its articles in
``tests/test_dice_dialects.py``.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from fairroll.mechanics.dice import read_roll
from fairroll.randomness import SeededDice
from fairroll.rules.dice import Formula, FormulaOutcome, RolledDie, resolve_formula

PEERS = Path(__file__).resolve().parent / "peers"
SEEDS = [f"peer-corpus-{n}" for n in range(10)]

#: Roll20 forms, written the same for fairroll and rpg-dice-roller.
ROLL20 = [
    "1d20",
    "3d6",
    "1d20+5",
    "2d20kh1",
    "2d20kl1",
    "4d6kh3",
    "4d6k3",
    "4d6dl1",
    "4d6d1",
    "5d8dh2",
    "8d100kh4",
    "3d6!",
    "5d10!>=8",
    "2d6!=6",
    "3d6!!",
    "4d6!!>=5",
    "3d6!p",
    "2d10r<=2",
    "4d6r=1",
    "3d6ro<=2",
    "6d10>=8",
    "10d10>=7",
    "5d6<=2",
    "6d10>=8f<=1",
    "6d10>=7f=1",
    "8d6>=5f<=2",
    "4d6kh3+2d8-1",
    "(1d4+1)*3",
    "2d20kh1+1d4",
    "8d6/2",
    "floor(8d6/2)",
    "ceil(3d6/2)",
    "round(2d6/4)",
    "abs(1d6-4)",
    "3d6*2",
    "1d20cs>=19",
    "1d20cf<=2",
    "4d6s",
]

#: avrae forms (its d20 grammar).
AVRAE = [
    "1d20",
    "3d6",
    "1d20+5",
    "2d20kh1",
    "2d20kl1",
    "4d6kh3",
    "4d6k3",
    "4d6k>3",
    "4d6p1",
    "4d6pl1",
    "4d6ph1",
    "4d6p<3",
    "1d20ro1",
    "2d20ro<3",
    "1d20rr1",
    "4d6rr1",
    "2d6rr1rr2",
    "3d6e6",
    "4d6e>5",
    "4d6ra6",
    "2d20ra>18",
    "4d6mi2",
    "4d6ma4",
    "8d6mi2ma5",
    "4d6rr1kh3",
    "4d6kh3rr1",
    "(1d20, 1d20)kh1",
    "(4d6kh3, 4d6kh3, 4d6kh3)kl1",
    "(1d20, 1d20+5, 2d10)ph1",
    "8d6/2",
    "8d6//2",
    "1d20 % 7",
    "1d20 >= 10",
    "2d6 == 7",
    "1d20 + 5 < 15",
    "-1d6+10",
    "1d20+5 Longsword attack",
    "1d8[slashing]+3",
]


def _installed(marker: Path, install: list[list[str]]) -> None:
    """Install a peer once (one test process at a time, as workers share the folder)."""
    with (PEERS / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():
            return
        for command in install:
            subprocess.run(command, cwd=PEERS, check=True, timeout=600, capture_output=True)


@pytest.fixture(scope="module")
def rpg_dice_roller() -> Iterator[subprocess.Popen[str]]:
    npm, node = shutil.which("npm"), shutil.which("node")
    assert npm is not None and node is not None, "Node.js and npm are needed"
    marker = PEERS / "node_modules" / "@dice-roller" / "rpg-dice-roller" / "package.json"
    _installed(marker, [[npm, "ci", "--no-audit", "--no-fund"]])
    yield from _serve([node, str(PEERS / "roll20_peer.mjs")])


@pytest.fixture(scope="module")
def d20() -> Iterator[subprocess.Popen[str]]:
    venv = PEERS / ".venv"
    python = venv / "bin" / "python"
    marker = venv / "installed"
    _installed(
        marker,
        [
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--require-hashes",
                "-r",
                str(PEERS / "avrae.lock"),
            ],
            ["touch", str(marker)],
        ],
    )
    yield from _serve([str(python), str(PEERS / "avrae_peer.py")])


def _serve(command: list[str]) -> Iterator[subprocess.Popen[str]]:
    peer = subprocess.Popen(
        command,
        cwd=PEERS,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    try:
        yield peer
    finally:
        assert peer.stdin is not None
        peer.stdin.close()
        peer.wait(timeout=30)


def ask_any(peer: subprocess.Popen[str], formula: str, faces: list[int]) -> dict[str, Any]:
    """The peer's answer, a refusal included (``error``)."""
    assert peer.stdin is not None and peer.stdout is not None
    peer.stdin.write(json.dumps({"formula": formula, "faces": faces}) + "\n")
    answer: dict[str, Any] = json.loads(peer.stdout.readline())
    return answer


def ask(peer: subprocess.Popen[str], formula: str, faces: list[int]) -> dict[str, Any]:
    answer = ask_any(peer, formula, faces)
    assert "error" not in answer, (formula, answer)
    return answer


def rolled(formula: str, dialect: str, seed: str) -> tuple[FormulaOutcome, list[int]]:
    source = SeededDice(seed)
    outcome = resolve_formula(Formula(formula=formula, dialect=dialect), source)  # type: ignore[arg-type]
    return outcome, [die.face for die in source.dice]


# --- Roll20 against rpg-dice-roller ---------------------------------------------------------


def _chains(dice: tuple[RolledDie, ...]) -> list[list[RolledDie]]:
    """A Roll20 term's record, die by die: each die with its rerolls and its explosions."""
    chains: list[list[RolledDie]] = [[]]
    for die in dice:
        chains[-1].append(die)
        if not (die.rerolled or die.exploded):
            chains.append([])
    return [c for c in chains if c]


def _face(die: RolledDie) -> int:
    return die.face if isinstance(die.face, int) else die.value


def rpg_order(outcome: FormulaOutcome) -> list[int]:
    """The faces in the order rpg-dice-roller takes them: term by term, every die's first
    face, then each die's rerolls and explosions."""
    faces: list[int] = []
    for term in outcome.terms:
        chains = _chains(term.dice)
        faces += [_face(c[0]) for c in chains]
        faces += [_face(d) for c in chains for d in c[1:]]
    return faces


def rpg_marks(outcome: FormulaOutcome) -> list[Counter[tuple[float, frozenset[str]]]]:
    """fairroll's record as rpg-dice-roller writes it: a rerolled die shows its last face
    (marked re-roll), a compounded chain is one die, a penetrating die counts one less."""
    terms = []
    for term in outcome.terms:
        said: Counter[tuple[float, frozenset[str]]] = Counter()
        for chain in _chains(term.dice):
            standing = [d for d in chain if not d.rerolled]
            marks: set[str] = set()
            if len(standing) < len(chain):
                marks.add("re-roll" if term.text.count("ro") == 0 else "re-roll-once")
            if chain[0].compounded is True:
                last = standing[-1]
                value = sum(d.value for d in standing)
                said[(value, frozenset(marks | {"explode", "compound"} | _fate(last)))] += 1
                continue
            for die in standing:
                own = set(marks)
                if die.exploded:
                    own.add("explode")
                    if "!p" in term.text:
                        own.add("penetrate")  # on the die that penetrates, as rpg marks it
                said[(die.value, frozenset(own | _fate(die)))] += 1
        terms.append(said)
    return terms


def _fate(die: RolledDie) -> set[str]:
    marks = set()
    if die.dropped:
        marks.add("drop")
    if die.success:
        marks.add("target-success")
    if die.failure is True:
        marks.add("target-failure")
    return marks


_IGNORED = {"critical-success", "critical-failure", "sorting"}


def peer_marks(answer: dict[str, Any]) -> list[Counter[tuple[float, frozenset[str]]]]:
    return [
        Counter((d["value"], frozenset(set(d["modifiers"]) - _IGNORED)) for d in term)
        for term in answer["terms"]
    ]


@pytest.mark.parametrize("formula", ROLL20)
def test_roll20_agrees_with_rpg_dice_roller(
    rpg_dice_roller: subprocess.Popen[str], formula: str
) -> None:
    for seed in SEEDS:
        outcome, _ = rolled(formula, "roll20", seed)
        answer = ask(rpg_dice_roller, formula, rpg_order(outcome))
        assert answer["left"] == 0, (formula, seed, answer)
        assert answer["total"] == pytest.approx(outcome.total), (formula, seed, answer)
        assert peer_marks(answer) == rpg_marks(outcome), (formula, seed, answer["output"])


# --- avrae against d20 -----------------------------------------------------------------------


def d20_marks(outcome: FormulaOutcome) -> list[list[dict[str, Any]]]:
    return [
        [
            {
                "value": d.value,
                "rerolled": d.rerolled,
                "exploded": d.exploded,
                "dropped": d.dropped,
            }
            for d in term.dice
        ]
        for term in outcome.terms
    ]


@pytest.mark.parametrize("formula", AVRAE)
def test_avrae_agrees_with_d20(d20: subprocess.Popen[str], formula: str) -> None:
    for seed in SEEDS:
        outcome, faces = rolled(formula, "avrae", seed)
        answer = ask(d20, formula, faces)
        assert answer["left"] == 0, (formula, seed, answer)
        assert answer["total"] == pytest.approx(outcome.total), (formula, seed, answer)
        # A set's totals are not dice: d20 lists the dice of each member in turn, as
        # fairroll lists its terms.
        assert answer["terms"] == d20_marks(outcome), (formula, seed)


# --- The corpus reaches what it claims to check ------------------------------------------------


@pytest.mark.parametrize(("dialect", "corpus"), [("roll20", ROLL20), ("avrae", AVRAE)])
def test_the_corpus_rolls_every_kind_of_mark(dialect: str, corpus: list[str]) -> None:
    """Agreement on dice no modifier touched would prove little: across the corpus's
    seeds, dice are rerolled, exploded, dropped, and (Roll20) succeed, fail, compound."""
    seen: Counter[str] = Counter()
    for formula in corpus:
        for seed in SEEDS:
            outcome, _ = rolled(formula, dialect, seed)
            for term in outcome.terms:
                for die in term.dice:
                    seen.update(
                        mark
                        for mark, on in [
                            ("rerolled", die.rerolled),
                            ("exploded", die.exploded),
                            ("dropped", die.dropped),
                            ("success", die.success is True),
                            ("failure", die.failure is True),
                            ("compounded", die.compounded is True),
                        ]
                        if on
                    )
    wanted = ["rerolled", "exploded", "dropped"]
    if dialect == "roll20":
        wanted += ["success", "failure", "compounded"]
    assert all(seen[mark] >= 10 for mark in wanted), seen


# --- Each misreading once found, on the faces that showed it, fed to the peer as well ---------


class _Faces:
    """Faces handed out in the order they are asked for, whatever the die (as the peers'
    rigged sources hand them): the faces that showed a misreading, replayed as found."""

    def __init__(self, faces: list[int]) -> None:
        self.faces = list(faces)
        self.rolled: list[int] = []

    @property
    def dice(self) -> tuple[()]:
        return ()

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        out = tuple(self.faces.pop(0) for _ in range(count))
        self.rolled += out
        return out


def on_faces(formula: str, dialect: str, faces: list[int]) -> FormulaOutcome:
    source = _Faces(faces)
    outcome = resolve_formula(Formula(formula=formula, dialect=dialect), source)  # type: ignore[arg-type]
    assert source.faces == [], (formula, "faces left over")
    return outcome


#: avrae misreadings (formula, faces in the order d20 rolls them, d20's total).
AVRAE_READINGS = [
    ("4d6kh1kl1", [2, 5, 1, 6], 7),  # one operator with both selectors, as d20 joins them
    ("4d6k1k2", [1, 2, 3, 6], 3),
    ("2d6k>5kl1", [6, 2], 8),
    ("3d6rah2rah2", [6, 5, 1, 3], 15),
    ("4d6rr1rr2", [1, 5, 2, 6, 3, 4], 18),
    ("(3d6, 3d6, 3d6)k>10", [1, 2, 3, 6, 6, 6, 6, 1, 6], 31),  # a set selects by value
    ("(1d20, 1d20)k>10", [17, 10], 17),
    ("(1d20, 1d20, 1d20)p<5", [3, 12, 4], 12),
    ("(4d6)kh3", [6, 1, 5, 1], 12),  # a parenthesis's operators act on the dice inside
    ("(4d6kh3)kh1", [1, 2, 3, 1], 3),
    ("4d6 kh3", [6, 1, 5, 1], 13),  # the formula ends at the space: the rest is a comment
    ("(1d20, 1d20)kh1kl1", [4, 16], 20),
    ("(1d6, 1d8, 1d10)kh2pl1", [3, 4, 5], 5),
    ("2d6 (fire)", [3, 4], 7),
    ("4d6kh3 # Str", [6, 1, 5, 1], 12),
    ("1D20", [], 1),  # 1, and the comment "D20"
    ("0d6", [], 0),
    ("1d6/1d6", [3, 4], 0),
    ("0.57*100", [], 56),  # Python's floats: 56.99999999999999
    ("1d20+5 adv", [10], 15),  # adv is the bot's option, not d20's: a comment here
    ("1d20 * 1.5", [7], 10),
]


@pytest.mark.parametrize(("formula", "faces", "total"), AVRAE_READINGS)
def test_avrae_reads_as_d20_on_the_faces_that_showed_a_misreading(
    d20: subprocess.Popen[str], formula: str, faces: list[int], total: int
) -> None:
    outcome = on_faces(formula, "avrae", faces)
    answer = ask(d20, formula, faces)
    assert (outcome.total, answer["total"]) == (total, total)
    assert answer["left"] == 0
    assert answer["terms"] == d20_marks(outcome)


#: Roll20 misreadings and refusals (formula, faces as fairroll rolls them, total).
ROLL20_READINGS = [
    ("{3d6, 3d6, 3d6}>10f<=5", [6, 3, 4, 1, 2, 1, 6, 2, 1], 0),  # failures take successes away
    ("{4d6+3d8}k4", [6, 3, 4, 1, 2, 1, 6], 19),  # a group of one sub-roll keeps among its dice
    ("4d6!k3", [6, 3, 4, 1, 2], 13),  # keep after an explosion: among every die
    ("7%3+1d4", [2], 3),
    ("2d6**2", [6, 3], 81),
    ("5d6!!>8", [6, 3, 4, 1, 2], 16),  # explodes on no face of a d6: rolled, not refused
    # The Reference's Shadowrun roll ({5d6!!}>8, written >= for the peer): the group's one
    # sub-roll meets the target by its total (15 here, 22 with two compounded dice of 9
    # and 10), as rpg-dice-roller reads it, not each die (0, then 2): docs/rules/dice.md
    ("{5d6!!}>=8", [1, 2, 3, 4, 5], 1),
    ("{5d6!!}>=8", [6, 3, 6, 4, 1, 1, 1], 1),
]


@pytest.mark.parametrize(("formula", "faces", "total"), ROLL20_READINGS)
def test_roll20_reads_as_rpg_dice_roller_on_the_faces_that_showed_a_misreading(
    rpg_dice_roller: subprocess.Popen[str], formula: str, faces: list[int], total: int
) -> None:
    outcome = on_faces(formula, "roll20", faces)
    answer = ask(rpg_dice_roller, formula, rpg_order(outcome))
    assert (outcome.total, answer["total"]) == (total, total)
    assert answer["left"] == 0
    if answer["terms"]:  # a group's dice are not listed by the peer's terms
        assert peer_marks(answer) == rpg_marks(outcome)


@pytest.mark.parametrize(
    ("formula", "faces", "total"),
    [
        ("{3d6}>4f1", [1, 2, 3], 1),
        ("6d6mt", [3, 3, 5, 5, 5, 1], 2),
        ("6d6m", [3, 3, 5, 1, 2, 6], 20),
    ],
)
def test_roll20_forms_the_peer_does_not_have(formula: str, faces: list[int], total: int) -> None:
    """Roll20's group failures written ``f1`` and its matches (``m`` marks, ``mt`` counts the
    faces shown twice or more): rpg-dice-roller has neither, so the Dice Reference's words
    are the judge."""
    assert on_faces(formula, "roll20", faces).total == total


# --- Each VTT's own limits: a die goes on past fairroll's former 10, to the peer's limit -------

#: (formula, faces, total): past the former depth of 10, and to the peer's own limit, where
#: rpg-dice-roller stops a die (1,000 explosions, 1,000 rerolls; the last stands).
ROLL20_DEPTHS = [
    ("1d6!", [6] * 15 + [2], 92),
    ("1d6!!", [6] * 15 + [2], 92),
    ("1d6!", [6] * 1001, 6006),
    ("1d6r=1", [1] * 15 + [4], 4),
    ("1d6r=1", [1] * 1001, 1),
]


@pytest.mark.parametrize(("formula", "faces", "total"), ROLL20_DEPTHS)
def test_roll20_goes_on_to_rpg_dice_rollers_limit_not_fairrolls_former_ten(
    rpg_dice_roller: subprocess.Popen[str], formula: str, faces: list[int], total: int
) -> None:
    outcome = on_faces(formula, "roll20", faces)
    answer = ask(rpg_dice_roller, formula, rpg_order(outcome))
    assert (outcome.total, answer["total"]) == (total, total)
    assert answer["left"] == 0
    assert peer_marks(answer) == rpg_marks(outcome)
    # Stopped by the limit exactly where a die still matched after the last one allowed.
    assert (outcome.terms[0].stopped is not msgspec.UNSET) == (len(faces) == 1001)


#: (formula, faces, total): d20 has no limit a die, only the roll's 1,000 dice.
AVRAE_DEPTHS = [
    ("1d6e6", [6] * 15 + [2], 92),
    ("1d20rr1", [1] * 15 + [7], 7),
    ("2d6e6", [6] * 20 + [3, 4], 127),
    ("1d6e6", [6] * 999 + [2], 5996),
]


@pytest.mark.parametrize(("formula", "faces", "total"), AVRAE_DEPTHS)
def test_avrae_goes_on_as_d20_does_past_fairrolls_former_ten(
    d20: subprocess.Popen[str], formula: str, faces: list[int], total: int
) -> None:
    outcome = on_faces(formula, "avrae", faces)
    answer = ask(d20, formula, faces)
    assert (outcome.total, answer["total"]) == (total, total)
    assert answer["left"] == 0
    assert answer["terms"] == d20_marks(outcome)
    assert outcome.terms[0].stopped is msgspec.UNSET


def test_avrae_stops_where_d20_fails_the_roll_and_says_so(d20: subprocess.Popen[str]) -> None:
    """d20 fails a roll past 1,000 dice (``TooManyRolls``); a fairroll roll cannot fail once
    its dice are drawn: it rolls no more, the 1,000th die stands, and the words say why."""
    faces = [6] * 1000
    refused = ask_any(d20, "1d6e6", [*faces, 6])
    assert refused["error"].startswith("TooManyRolls"), refused
    outcome = on_faces("1d6e6", "avrae", faces)
    assert outcome.total == 6000
    assert outcome.terms[0].stopped == "rolled"
    request = Formula(formula="1d6e6", dialect="avrae")
    said = read_roll(request, outcome).text
    assert "1000 dice rolled: avrae's d20 fails a roll past that" in said
