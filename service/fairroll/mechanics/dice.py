"""Generic dice formulas, declared: ``POST /v1/dice/rolls`` and its odds.

A formula is a mechanic like the others: the same envelope, seeds, sessions,
supplied dice (by die: ``{"d6": [...], "d20": [...]}``), audit entry, replay and
words. Its rules are :mod:`fairroll.rules.dice`; its odds :mod:`fairroll.odds.dice`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Annotated, Any, cast

import msgspec

from fairroll.mechanics.declare import (
    DiceGroups,
    EarlierRevision,
    Mechanic,
    System,
    Words,
    faces_meta,
    plural,
)
from fairroll.odds import Distribution, weighted_distribution
from fairroll.odds.dice import (
    EPSILON,
    MAX_ANSWER_BYTES,
    MAX_OUTCOMES,
    WORK_BUDGET_MS,
    Work,
    formula_odds,
)
from fairroll.randomness import DiceSource
from fairroll.rules import dice, dice_first
from fairroll.rules.dice.limits import VTT_LIMITS
from fairroll.rules.dice.model import Crit, Sort
from fairroll.rules.dice.rolling import whole

__all__ = ["ROLL", "SYSTEM"]


def _faces(sides: int) -> Any:
    return Annotated[
        list[Annotated[int, msgspec.Meta(ge=1, le=sides)]],
        faces_meta(
            sides,
            dice.MAX_HELD_DICE,
            min_dice=0,
            description=f"Faces of d{sides}s rolled elsewhere, in the order the formula "
            "rolls them (terms left to right, each die's rerolls and explosions after it).",
        ),
    ]


FateFaces = Annotated[
    list[Annotated[int, msgspec.Meta(ge=-1, le=1)]],
    msgspec.Meta(
        min_length=0,
        max_length=dice.MAX_HELD_DICE,
        description="Fate dice rolled elsewhere: -1, 0 or 1 each, in roll order.",
        extra_json_schema={"extra": {"items": {"type": "integer", "minimum": -1, "maximum": 1}}},
    ),
]


def _groups(self: DiceGroups) -> Mapping[str, Sequence[int]]:
    """Faces by die; a Fate die is rolled as a d3 (its value is the face - 2)."""
    faces: dict[str, Sequence[int]] = dict(msgspec.structs.asdict(self))
    faces["dF"] = [value + 2 for value in faces["dF"]]
    return faces


#: Faces rolled elsewhere by die (``d2`` ... ``d100``, ``dF``): one field per standard die.
FormulaDice = cast(
    "type[DiceGroups]",
    msgspec.defstruct(
        "FormulaDice",
        [
            *(
                (die, _faces(int(die[1:])), msgspec.field(default_factory=list))
                for die in dice.STANDARD_DICE
                if die != "dF"
            ),
            ("dF", FateFaces, msgspec.field(default_factory=list)),
        ],
        bases=(DiceGroups,),
        namespace={
            "groups": _groups,
            "__doc__": "Faces rolled elsewhere (physical or VTT dice), by die, in the order "
            "the formula rolls them. Standard dice only: a formula with a d7 is rolled by the "
            "server.",
        },
        module=__name__,
        frozen=True,
        kw_only=True,
        forbid_unknown_fields=True,
    ),
)


def read_roll(request: dice.Formula, outcome: dice.FormulaOutcome) -> Words:
    """``Strength: 4d6kh3 + 2`` -> ``13 + 2 = 15 — 4d6kh3: 6, (dropped 1), 4, 3``: the
    arithmetic with each term's value, the total, then every die (a die that does not
    count in parentheses, so ``(dropped 1)`` cannot be read as more than one die); a
    natural 20 or 1 on a d20 (or a face in a Roll20 critical range, ``cs``/``cf``) is
    said, and flagged."""
    formula = dice.parse_request(request)
    asked = f"{formula.label}: {formula.written}" if formula.label else formula.written
    only = formula.tree.term
    if only is not None and only.counts:
        head = plural(int(outcome.total), "success", "successes")
    else:
        head = _number(outcome.total)
    worked = _worked(formula, outcome) if only is None else head
    if worked != head:  # arithmetic: show it, each term by its value
        head = f"{worked} = {head}"
    said: list[str] = []
    critical = catastrophic = False
    for term, rolled in zip(formula.terms, outcome.terms, strict=True):
        crit = next((m for m in term.modifiers if isinstance(m, Crit)), None)
        order = next((m for m in term.modifiers if isinstance(m, Sort)), None)
        shown = rolled.dice
        if order is not None:  # Roll20's s/sd: the dice said in order; the record keeps roll order
            shown = tuple(sorted(shown, key=lambda d: d.value, reverse=order.descending))
        dice_said = []
        for die in shown:
            flag = _critical(term, crit, die)
            critical = critical or flag in ("natural 20", "critical success")
            catastrophic = catastrophic or flag in ("natural 1", "critical failure")
            dice_said.append(_die(die) + (f" ({flag})" if flag else ""))
        said.append(f"{rolled.text}: {', '.join(dice_said) or 'no dice'}")
    terms = "; ".join(said)
    text = f"{head} — {terms}" if terms else head
    stops = [_stopped(formula.dialect, r) for r in outcome.terms if isinstance(r.stopped, str)]
    bot_option = _bot_option(formula)
    for note in (*stops, bot_option):
        if note:
            text = f"{text}. {note}"
    return Words(
        asked=asked,
        text=text,
        critical=critical,
        catastrophic=catastrophic,
    )


def _stopped(dialect: dice.Dialect, rolled: dice.TermOutcome) -> str:
    """What stopped a term's dice: its VTT's limit, said as the VTT has it. Where the VTT
    fails such a roll, fairroll cannot (its dice are drawn): the words say it stopped."""
    limit = VTT_LIMITS[dialect]
    if rolled.stopped == "explosions":
        return (
            f"{rolled.text}: a die exploded {limit.depth} times: Roll20's reading stops a "
            f"die there, as {limit.roller} does (the last die stands)"
        )
    if rolled.stopped == "rerolls":
        return (
            f"{rolled.text}: a die was rerolled {limit.depth} times: Roll20's reading "
            f"stops there, as {limit.roller} does (the last face stands)"
        )
    if rolled.stopped == "checked":
        return (
            f"{rolled.text}: a modifier checked {limit.checked} results: Foundry VTT fails "
            "a roll there; fairroll stops the modifier and the dice rolled stand"
        )
    return (
        f"{rolled.text}: {limit.rolled} dice rolled: avrae's d20 fails a roll past that; "
        "fairroll rolls no more and the dice rolled stand"
    )


#: avrae's bot options a label may hold, and how the formula itself rolls them.
_BOT_OPTIONS = {"adv": ("advantage", "2d20kh1"), "dis": ("disadvantage", "2d20kl1")}


def _bot_option(formula: dice.ParsedFormula) -> str | None:
    """avrae's ``!r 1d20+5 adv`` rolls at advantage, but ``adv`` is the bot's option, not
    d20's: read in this dialect it is the label, and the roll is not at advantage. The
    words say so, lest a reader take the label for what was rolled."""
    if formula.dialect != "avrae" or not formula.label:
        return None
    for word in formula.label.lower().split():
        if word in _BOT_OPTIONS:
            meant, written = _BOT_OPTIONS[word]
            return (
                f'"{word}" is avrae\'s bot option, not its dice notation: not rolled at '
                f"{meant} (write {written})"
            )
    return None


def _worked(formula: dice.ParsedFormula, outcome: dice.FormulaOutcome) -> str:
    """The formula as written, each dice term replaced by its value, operators spaced:
    ``1d20+5`` rolled 13 is ``13 + 5``."""
    text = formula.written
    for term, rolled in sorted(
        zip(formula.terms, outcome.terms, strict=True), key=lambda pair: -pair[0].offset
    ):
        end = term.offset + len(term.text)
        text = text[: term.offset] + str(rolled.value) + text[end:]
    spaced = _OPERATOR.sub(lambda m: f" {m.group(1).strip()} ", text)
    return re.sub(r"\s+", " ", spaced).strip()


#: An operator between two parts (a minus only after a part: ``-1d6`` stays as it is).
_OPERATOR = re.compile(r"\s*(//|[+*/%]|(?<=[\w)\]}])\s*-)\s*")


def _number(total: float) -> str:
    return str(total) if isinstance(total, int) else f"{total:g}"


def _critical(term: dice.DiceTerm, crit: Crit | None, die: dice.RolledDie) -> str | None:
    """A die that counts and is critical: in the term's range, or a natural 20 or 1."""
    if die.rerolled or die.dropped:
        return None
    face = die.face if isinstance(die.face, int) else die.value
    if crit is not None and (crit.success is not None or crit.failure is not None):
        if crit.success is not None and crit.success(face):
            return "critical success"
        if crit.failure is not None and crit.failure(face):
            return "critical failure"
        return None
    if term.sides == 20 and not term.fate:
        return "natural 20" if face == 20 else "natural 1" if face == 1 else None
    return None


def _die(die: dice.RolledDie) -> str:
    said = str(die.value)
    if die.exploded:
        said += "!"
    if die.rerolled:
        return f"(rerolled {said})"
    if die.dropped:
        return f"(dropped {said})"
    if die.success:
        return f"{said} (success)"
    if die.failure is True:
        return f"{said} (failure)"
    return said


#: The outcome of the last bar of odds counted short: the chance of what was not counted.
BEYOND = "beyond"


def odds_of_roll(request: dice.Formula) -> list[Distribution]:
    """The exact distribution of the formula's total. Where its dice's rerolls or
    explosions were counted short of the VTT's limit (``odds.dice.EPSILON``), a last bar,
    ``beyond``, holds the exact chance of what was not counted (a die that went on
    further, or a roll that would hold more dice than fairroll records); its label says
    where each term was cut."""
    formula = dice.parse_request(request)
    work = Work(formula.text)
    total, weights = formula_odds(formula, work)
    only = formula.tree.term
    counting = only is not None and only.counts
    title = formula.written
    bars: dict[float | str, int] = {
        whole(Fraction(value)): weights[value] for value in sorted(weights)
    }
    left = total - sum(weights.values())
    beyond = ""
    if left:
        bars[BEYOND] = left
        cuts = "; ".join(f"{text}: {what} past {n} a die" for text, what, n in work.cuts)
        beyond = (
            f"not counted: {cuts}. Each chance above is of its total with "
            "no die going further; this is the exact chance of all the rest (among it, "
            f"any roll that would hold more than {dice.MAX_HELD_DICE} dice, which fairroll "
            "refuses)"
        )

    def label(v: float | str) -> str:
        if isinstance(v, str):
            return beyond
        return plural(int(v), "success", "successes") if counting else _number(v)

    return [
        weighted_distribution(
            "successes" if counting else "total",
            f"Successes of {title}" if counting else f"Total of {title}",
            bars,
            total,
            label=label,
        )
    ]


def _first_reading(request: dice.Formula, source: DiceSource) -> dice_first.FormulaOutcome:
    """The formula rolled as the first reading rolled it (frozen in
    :mod:`fairroll.rules.dice_first`): its request is the same two fields, so it is handed
    over as they were recorded."""
    first = dice_first.Formula(formula=request.formula, dialect=request.dialect)
    return dice_first.resolve_formula(first, source)


#: The dialects' reading before they were re-read to match each VTT's own roller
#: (docs/rules/dice.md says what changed): an entry a server recorded then replays under it.
FIRST_READING: EarlierRevision[dice.Formula] = EarlierRevision(
    name="the first reading (before 2026-12-03): each dialect as read before it was matched "
    "to its VTT's own roller",
    resolve=_first_reading,
)


ROLL: Mechanic[dice.Formula, dice.FormulaOutcome] = Mechanic(
    name="dice.roll",
    path="/rolls",
    operation_id="rollDiceFormula",
    summary="Roll a dice formula (4d6kh3, 1d20+5, 6d10>=8!)",
    description=(
        "Rolls a formula read in its `dialect`, as that VTT reads it: `roll20` (the "
        "default: Roll20's Dice Reference; `>N` means N or more, `r` rerolls until the "
        "die no longer matches, modifiers in one fixed order), `foundry` (Foundry VTT's "
        "dice modifiers: `r` rerolls once, `rr` recursively, `x`/`xo` explode, `>` and "
        "`<` are strict, `cs`/`cf` count, `min`/`max`, `even`/`odd`, pools `{a, b}kh`, "
        "modifiers in the order written) or `avrae` (avrae's d20: `k p rr ro ra e mi ma` "
        "with selectors `X hX lX >X <X`, sets `(a, b)kh1`, `/ // %`, comparisons worth "
        "1 or 0). All three: `/` and `floor` `ceil` `round` `abs` (Roll20, Foundry), "
        "groups, tags and labels. Supplied dice are given by die (`d6`, `d20`, `dF` ...) "
        "in the order the dialect rolls them. The table of every form: docs/rules/dice.md."
    ),
    input_type=dice.Formula,
    dice_type=FormulaDice,
    resolve=dice.resolve_formula,
    earlier=(FIRST_READING,),
    read=read_roll,
    odds=odds_of_roll,
    odds_operation_id="diceFormulaOdds",
    odds_summary="Exact odds of a dice formula's total",
    odds_description=(
        "The exact distribution of the formula's total (or of its successes, for a "
        "formula that only counts successes). Exact odds are refused (422, naming "
        f"`formula`) for a formula whose total has more than {MAX_OUTCOMES} values, "
        "or whose exact weights would take more work than the odds allow (each step "
        "estimates its cost from its sizes before it runs; the budget is "
        f"{WORK_BUDGET_MS} ms of this engine's pace on the reference machine, and the "
        "refusal says how many times over it a formula is), so no formula accepted "
        "holds a calculation worker long. A die's rerolls and explosions "
        "are counted until what goes on further weighs less than one chance in "
        f"{EPSILON.denominator:,} (or to the VTT's limit, or as deep as fairroll's limit "
        f"of {dice.MAX_HELD_DICE} dice a roll lets every die of a pool go, or as deep as "
        f"keeps a term's answer within {MAX_ANSWER_BYTES:,} bytes of exact fractions): "
        "what was not counted is the last bar, `beyond` (its outcome the string "
        "`beyond`), its exact chance, and its label says where each term was cut."
    ),
)

SYSTEM = System(
    slug="dice",
    title="Dice formulas",
    description="Generic dice formulas, read as Roll20, Foundry VTT or avrae reads them.",
    mechanics=(ROLL,),
)
