"""Generic dice formulas, declared: ``POST /v1/dice/rolls`` and its odds.

A formula is a mechanic like the others: the same envelope, seeds, sessions,
supplied dice (by die: ``{"d6": [...], "d20": [...]}``), audit entry, replay and
words. Its rules are :mod:`fairroll.rules.dice`; its odds :mod:`fairroll.odds.dice`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, cast

import msgspec

from fairroll.mechanics.declare import DiceGroups, Mechanic, System, Words, faces_meta, plural
from fairroll.odds import Distribution, weighted_distribution
from fairroll.odds.dice import MAX_OUTCOMES, WORK_BUDGET_MS, formula_odds
from fairroll.rules import dice

__all__ = ["ROLL", "SYSTEM"]


def _faces(sides: int) -> Any:
    return Annotated[
        list[Annotated[int, msgspec.Meta(ge=1, le=sides)]],
        faces_meta(
            sides,
            dice.MAX_ROLLED_DICE,
            min_dice=0,
            description=f"Faces of d{sides}s rolled elsewhere, in the order the formula "
            "rolls them (terms left to right, each die's rerolls and explosions after it).",
        ),
    ]


FateFaces = Annotated[
    list[Annotated[int, msgspec.Meta(ge=-1, le=1)]],
    msgspec.Meta(
        min_length=0,
        max_length=dice.MAX_ROLLED_DICE,
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
    """``Strength: 4d6kh3 + 2`` -> ``17 — 4d6kh3: 6, 5, 4, dropped 1``."""
    formula = dice.parse(request.formula)
    asked = f"{formula.label}: {formula.written}" if formula.label else formula.written
    only = formula.tree.term
    if only is not None and only.success is not None:
        head = plural(outcome.total, "success", "successes")
    else:
        head = str(outcome.total)
    terms = "; ".join(f"{t.text}: {', '.join(_die(d) for d in t.dice)}" for t in outcome.terms)
    return Words(asked=asked, text=f"{head} — {terms}" if terms else head)


def _die(die: dice.RolledDie) -> str:
    said = str(die.value)
    if die.exploded:
        said += "!"
    if die.rerolled:
        return f"rerolled {said}"
    if die.dropped:
        return f"dropped {said}"
    if die.success:
        return f"{said} (success)"
    return said


def odds_of_roll(request: dice.Formula) -> list[Distribution]:
    formula = dice.parse(request.formula)
    total, weights = formula_odds(formula)
    only = formula.tree.term
    counting = only is not None and only.success is not None
    title = formula.written
    return [
        weighted_distribution(
            "successes" if counting else "total",
            f"Successes of {title}" if counting else f"Total of {title}",
            {value: weights[value] for value in sorted(weights)},
            total,
            label=lambda v: plural(int(v), "success", "successes") if counting else str(v),
        )
    ]


ROLL: Mechanic[dice.Formula, dice.FormulaOutcome] = Mechanic(
    name="dice.roll",
    path="/rolls",
    operation_id="rollDiceFormula",
    summary="Roll a dice formula (4d6kh3, 1d20+5, 6d10>=8!)",
    description=(
        "Rolls a formula in the notation of Roll20 and Foundry VTT: `NdX`, `d%`, `dF`, "
        "keep/drop `kh` `kl` `dh` `dl`, explode `!` `!>N`, reroll `r<N` (until it no "
        "longer matches, at most 10 times) or `ro<N` (once), success counting `>=N` "
        "`<=N`, `+ - *`, parentheses, integers and a `# label`. `>N` means N or more and "
        "`<N` N or less, as in Roll20. Modifiers apply in one order whatever their "
        "order in the text: rerolls, explosions, keep/drop, successes. Supplied dice are "
        "given by die (`d6`, `d20`, `dF` ...) in the order the formula rolls them. "
        "The grammar and its limits: docs/rules/dice.md."
    ),
    input_type=dice.Formula,
    dice_type=FormulaDice,
    resolve=dice.resolve_formula,
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
        "refusal says how many times over it a formula is), so every formula accepted "
        "is answered within a few hundred milliseconds."
    ),
)

SYSTEM = System(
    slug="dice",
    title="Dice formulas",
    description="Generic dice formulas in the notation of Roll20 and Foundry VTT.",
    mechanics=(ROLL,),
)
