"""A differential corpus: formulas drawn from each dialect's grammar and the everyday forms
players type, rolled on the same faces through fairroll and through the VTT's own roller.

Each dialect's generator below writes formulas its VTT reads (a fixed random stream, so
the corpus is the same on every run): avrae's against d20, Roll20's against
rpg-dice-roller, both in the peers' own processes, one batch each (``test_dice_peers``'s
fixtures). Foundry's roller cannot run here: its corpus is read and rolled by fairroll,
each formula's total within the bounds its reading gives, and its semantics are held to
the table of Foundry's modifiers in ``docs/rules/dice.md``.

A formula agrees when both totals and every die's marks are the same, or when both
refuse it. The disagreements left are listed, with their reasons, in
``docs/rules/dice.md`` ("Checked against the peers"); :data:`KNOWN` names them, so a new
one fails the test. ``python tests/test_dice_corpus.py`` prints the agreement table.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from fairroll.randomness import SeededDice
from fairroll.rules import RuleError
from fairroll.rules.dice import Formula, resolve_formula

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from test_dice_peers import (
    ask_any,
    d20,
    d20_marks,
    peer_marks,
    rpg_dice_roller,
    rpg_marks,
    rpg_order,
)

__all__ = ["d20", "rpg_dice_roller"]

SIZES = [4, 6, 8, 10, 12, 20]


def _avrae_term(rng: random.Random) -> str:
    sides = rng.choice([*SIZES, 100])
    count = rng.choice([1, 1, 2, 2, 3, 4, 4, 5, 6, 8])
    text = f"{count}d{sides}" if count > 1 or rng.random() < 0.7 else f"d{sides}"
    for _ in range(rng.choice([0, 0, 1, 1, 1, 2, 2, 3])):
        op = rng.choice(["k", "p", "rr", "ro", "ra", "e", "mi", "ma"])
        if op in ("k", "p"):
            sel = rng.choice(
                [
                    f"h{rng.randint(1, 3)}",
                    f"l{rng.randint(1, 3)}",
                    str(rng.randint(1, sides)),
                    f">{rng.randint(1, sides - 1)}",
                    f"<{rng.randint(2, sides)}",
                ]
            )
        elif op in ("rr", "e"):
            sel = rng.choice([str(rng.randint(1, sides)), f"<{rng.randint(2, sides // 2 + 1)}"])
            if op == "e":
                sel = rng.choice([str(sides), f">{sides - rng.randint(1, 2)}"])
        elif op in ("ro", "ra"):
            sel = rng.choice(
                [
                    str(rng.randint(1, sides)),
                    f"<{rng.randint(2, sides)}",
                    f"h{rng.randint(1, 2)}",
                    f"l{rng.randint(1, 2)}",
                    f">{rng.randint(1, sides - 1)}",
                ]
            )
        else:
            sel = str(rng.randint(1, sides))
        text += op + sel
    return text


def _avrae(rng: random.Random, depth: int = 0) -> str:
    kind = rng.random()
    if kind < 0.45 or depth > 1:
        part = _avrae_term(rng)
    elif kind < 0.6:
        part = str(rng.choice([rng.randint(0, 12), round(rng.uniform(0, 5), rng.randint(1, 2))]))
    elif kind < 0.75:
        members = ", ".join(_avrae(rng, depth + 1) for _ in range(rng.randint(1, 3)))
        ops = "".join(
            f"{rng.choice('kp')}{rng.choice(['h', 'l', '>', '<', ''])}{rng.randint(1, 12)}"
            for _ in range(rng.randint(0, 2))
        )
        comma = "," if members.count(",") == 0 else ""
        part = f"({members}{comma}){ops}"
    elif kind < 0.85:
        part = f"({_avrae(rng, depth + 1)})"
    else:
        part = f"{_avrae(rng, depth + 1)} {rng.choice(['+', '-', '*', '//', '%', '/'])} "
        part += _avrae_term(rng)
    if rng.random() < 0.3 and depth == 0:
        part += rng.choice([" + 5", "+3", " - 1", "*2", " >= 10", " == 7", "[fire]"])
    if rng.random() < 0.15 and depth == 0:
        part += rng.choice([" Longsword", " # Str", " adv", " (fire)", " kh3", "D20"])
    return part


#: Everyday avrae rolls, as players type them to the bot.
AVRAE_EVERYDAY = [
    "1d20", "d20", "1d20+5", "2d20kh1+7", "2d20kl1-1", "4d6kh3", "4d6ro1kh3", "1d8+1d6+3",
    "8d6", "2d6+3 fire", "1d20+5 # Longsword", "1d4+1", "3d6e6", "1d100", "1d20mi10+6",
    "2d6ro<3+4", "(1d20, 1d20)kh1+5", "1d20 + 2 [bless]", "4d6 kh3", "1d12+4d6",
]  # fmt: skip


def _roll20_term(rng: random.Random) -> str:
    sides = rng.choice(SIZES)
    count = rng.choice([1, 2, 3, 4, 5, 6, 8])
    text = f"{count}d{sides}"
    kind = rng.random()
    if kind < 0.2:
        text += f"{rng.choice(['kh', 'kl', 'dh', 'dl', 'k', 'd'])}{rng.randint(1, count)}"
        if text.endswith(("d", "h", "l")) or (
            rng.random() < 0.5 and "d" in text[len(f"{count}d{sides}") :]
        ):
            pass
    elif kind < 0.35:
        text += rng.choice(["!", f"!>={sides - 1}", f"!={sides}", "!!", f"!!>={sides - 1}"])
        text += rng.choice(["", "", f"kh{rng.randint(1, count)}"]) if "!!" not in text else ""
    elif kind < 0.45:
        text += rng.choice(["!p", "r<=1", f"r<={min(2, sides - 1)}", "ro<=1", "r=1"])
    elif kind < 0.65:
        text += f">={rng.randint(2, sides)}"
        if rng.random() < 0.5:
            text += f"f<={rng.randint(1, 2)}"
    elif kind < 0.72:
        text += rng.choice([f"cs>={sides - 1}", "cf<=1", "s", "sd"])
    return text


def _roll20(rng: random.Random, depth: int = 0) -> str:
    kind = rng.random()
    if kind < 0.5 or depth > 1:
        part = _roll20_term(rng)
    elif kind < 0.6:
        part = str(rng.randint(1, 12))
    elif kind < 0.72:
        members = ", ".join(_roll20_term(rng) for _ in range(rng.randint(2, 3)))
        part = "{" + members + "}" + rng.choice(["kh1", "kl1", "dl1", f">={rng.randint(5, 15)}"])
    elif kind < 0.8:
        part = f"{rng.choice(['floor', 'ceil', 'round', 'abs'])}({_roll20(rng, depth + 1)}/2)"
    elif kind < 0.87:
        part = f"({_roll20(rng, depth + 1)})"
    else:
        op = rng.choice(["+", "-", "*", "/", "%"])
        part = f"{_roll20(rng, depth + 1)}{op}{rng.randint(1, 6)}"
    if rng.random() < 0.3 and depth == 0:
        part += rng.choice(["+5", "-1", "*2", "+1d4", "**2"])
    return part


#: Everyday Roll20 rolls.
ROLL20_EVERYDAY = [
    "1d20", "d20+5", "2d20kh1", "2d20kl1+3", "4d6kh3", "4d6dl1", "3d6!", "1d10!>=9",
    "8d6", "6d10>=8", "6d10>=8f<=1", "5d6!!", "2d6+3", "1d8+1d6+2", "{4d6+3d8}k4",
    "{2d20}kh1", "floor(8d6/2)", "1d100", "4dF" if False else "4d6s", "1d20cs>=19+7",
]  # fmt: skip


def _foundry_term(rng: random.Random) -> str:
    sides = rng.choice(SIZES)
    count = rng.choice([1, 2, 3, 4, 6])
    text = f"{count}d{sides}"
    for _ in range(rng.choice([0, 1, 1, 2])):
        text += rng.choice(
            [
                f"kh{rng.randint(1, count)}", "kl", f"dl{rng.randint(1, count)}", "r1",
                f"rr<{2}", "x", f"x>={sides - 1}", "xo", f"min{rng.randint(2, sides)}",
                f"max{rng.randint(2, sides)}", f"cs>={rng.randint(2, sides)}", "even", "odd",
                f"cf<{rng.randint(2, sides)}", f"ms>={rng.randint(1, sides * count)}",
            ]
        )  # fmt: skip
    return text


def _foundry(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.6:
        part = _foundry_term(rng)
    elif kind < 0.75:
        part = "{" + ", ".join(_foundry_term(rng) for _ in range(rng.randint(2, 3))) + "}kh"
    elif kind < 0.85:
        part = f"{rng.choice(['max', 'min'])}({_foundry_term(rng)}, {rng.randint(1, 10)})"
    else:
        part = f"({rng.randint(1, 3)}+1)d{rng.choice(SIZES)} % {rng.randint(2, 5)}"
    return part + rng.choice(["", "", " + 4", " - 1", " * 2", " # Attack"])


def corpus(dialect: str, size: int, everyday: list[str], draw: Callable[..., str]) -> list[str]:
    rng = random.Random(f"fairroll dice corpus {dialect}")
    found = dict.fromkeys(everyday)
    while len(found) < size:
        found.setdefault(draw(rng))
    return list(found)


AVRAE = corpus("avrae", 450, AVRAE_EVERYDAY, _avrae)
ROLL20 = corpus("roll20", 450, ROLL20_EVERYDAY, _roll20)
FOUNDRY = corpus("foundry", 150, [], _foundry)

#: The disagreements left, each with its reason in docs/rules/dice.md.
KNOWN: dict[str, set[str]] = {
    # fairroll refuses a division by a part that can be 0 before any die is rolled (it
    # cannot refuse a roll once its dice are drawn); d20 refuses only when it is 0.
    "avrae": {
        "(8d4p3, 8d12ro<12 // 6d8ra<4p3)k6p5",
        "1d6 / 6d20p9ra<14 >= 10",
        "2d20roh2ma1 % 1d10ma3p>8",
        "4 % 1d6rr3k<2[fire]",
    },
    "roll20": set(),
}


def _ours(formula: str, dialect: str, seed: str) -> tuple[Any, list[int]]:
    source = SeededDice(seed)
    try:
        outcome = resolve_formula(Formula(formula=formula, dialect=dialect), source)  # type: ignore[arg-type]
    except RuleError as refused:
        return refused, []
    return outcome, [die.face for die in source.dice]


def compare(peer: subprocess.Popen[str], formula: str, dialect: str) -> str | None:
    """None where fairroll and the peer agree, else what differs."""
    outcome, faces = _ours(formula, dialect, f"corpus/{formula}")
    if isinstance(outcome, RuleError):
        answer = ask_any(peer, formula, [1] * 50)
        return None if "error" in answer else f"refused: {outcome}"
    order = rpg_order(outcome) if dialect == "roll20" else faces
    answer = ask_any(peer, formula, order)
    if "error" in answer:
        return f"the peer refuses: {answer['error']}"
    # rpg-dice-roller rounds a total to two decimals (8d20k5/3 is 22.67 there).
    close = abs(answer["total"] - outcome.total) <= (0.005 if dialect == "roll20" else 1e-9)
    if not close or answer["left"]:
        return f"total {outcome.total}, the peer's {answer['total']} ({answer['left']} left)"
    if dialect == "avrae" and answer["terms"] != d20_marks(outcome):
        return "the dice's marks"
    # The peer lists no dice of a group's sub-rolls: their marks are compared without groups.
    grouped = isinstance(outcome.groups, tuple)
    if dialect == "roll20" and not grouped and peer_marks(answer) != rpg_marks(outcome):
        return "the dice's marks"
    return None


def test_the_corpus_is_large_and_varied() -> None:
    assert len(AVRAE) + len(ROLL20) + len(FOUNDRY) >= 1000
    assert len(set(AVRAE)) == len(AVRAE) and len(set(ROLL20)) == len(ROLL20)


def test_avrae_agrees_with_d20_on_the_corpus(d20: subprocess.Popen[str]) -> None:
    differing = {f: why for f in AVRAE if (why := compare(d20, f, "avrae")) is not None}
    assert set(differing) <= KNOWN["avrae"], differing


def test_roll20_agrees_with_rpg_dice_roller_on_the_corpus(
    rpg_dice_roller: subprocess.Popen[str],
) -> None:
    differing = {
        f: why for f in ROLL20 if (why := compare(rpg_dice_roller, f, "roll20")) is not None
    }
    assert set(differing) <= KNOWN["roll20"], differing


def test_foundry_reads_and_rolls_its_corpus() -> None:
    for formula in FOUNDRY:
        outcome, _ = _ours(formula, "foundry", f"corpus/{formula}")
        assert not isinstance(outcome, RuleError), (formula, outcome)


def main() -> None:
    """Print the agreement table (and, with ``-v``, every disagreement)."""
    from test_dice_peers import PEERS, _serve  # noqa: PLC0415

    peers = {
        "avrae": ([str(PEERS / ".venv" / "bin" / "python"), str(PEERS / "avrae_peer.py")], AVRAE),
        "roll20": (["node", str(PEERS / "roll20_peer.mjs")], ROLL20),
    }
    out = sys.stdout.write
    out("| dialect | judge | formulas | agree |\n|---|---|---|---|\n")
    for dialect, (command, formulas) in peers.items():
        serving = _serve(command)
        peer = next(serving)
        differing = {f: why for f in formulas if (why := compare(peer, f, dialect)) is not None}
        judge = "d20" if dialect == "avrae" else "rpg-dice-roller"
        out(f"| {dialect} | {judge} | {len(formulas)} | {len(formulas) - len(differing)} |\n")
        if "-v" in sys.argv:
            for formula, why in differing.items():
                sys.stderr.write(f"    {formula!r}: {why}\n")
        next(serving, None)
    refused = [f for f in FOUNDRY if isinstance(_ours(f, "foundry", f"corpus/{f}")[0], RuleError)]
    out(f"| foundry | read and rolled | {len(FOUNDRY)} | {len(FOUNDRY) - len(refused)} |\n")


if __name__ == "__main__":
    main()
