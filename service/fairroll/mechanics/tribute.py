"""Tribute, declared: Tests against a difficulty or an opponent, and their odds."""

from __future__ import annotations

from typing import Annotated, Any

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
from fairroll.odds import Distribution, distribution
from fairroll.odds.tribute import tribute_test_odds
from fairroll.randomness import DiceSource
from fairroll.rules import tribute

__all__ = ["SYSTEM", "TEST"]

D12 = Annotated[int, msgspec.Meta(ge=1, le=12)]
Faces = Annotated[
    list[D12],
    faces_meta(12, 6, description="Faces rolled elsewhere, each within the reality level's die."),
]
OptionalFaces = Annotated[
    list[D12],
    faces_meta(12, 6, min_dice=0, description="The opponent's faces, for an opposed Test."),
]

_OPPONENT = {"opponent.focus": "opponent_focus", "opponent.burden": "opponent_burden"}


class TestDice(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere: the roller's FOCUS and BURDEN dice, and the opponent's."""

    focus: Faces
    burden: Faces
    opponent_focus: OptionalFaces = msgspec.field(default_factory=list)
    opponent_burden: OptionalFaces = msgspec.field(default_factory=list)

    def groups(self) -> dict[str, list[int]]:
        return {
            "focus": self.focus,
            "burden": self.burden,
            "opponent.focus": self.opponent_focus,
            "opponent.burden": self.opponent_burden,
        }

    def path(self, group: str) -> str:
        return _OPPONENT.get(group, group)


_OUTCOME = {"win": "Win", "match": "Match", "fail": "Fail"}


def _signed(n: int) -> str:
    return f"+{n}" if n >= 0 else str(n)


def read_test(test: tribute.Test, outcome: tribute.TestOutcome) -> Words:
    dice = (
        f"{plural(test.focus, 'FOCUS die', 'FOCUS dice')} and "
        f"{plural(test.burden, 'BURDEN die', 'BURDEN dice')} ({test.reality}), rank {test.rank}"
    )
    if isinstance(test.opponent, tribute.Opponent):
        against = f" against {test.opponent.name or 'the opposition'}"
    else:
        against = f", difficulty {test.difficulty}"
    chosen = outcome.actor.chosen
    extras = [
        f"{n} {word}" for n, word in ((chosen.profit, "Profit"), (chosen.waste, "Waste")) if n
    ]
    counted = " and ".join(extras) if extras else "no Profit or Waste"
    # "Add the final value of your test to your appropriate Attribute's Rank. Compare the
    # result to your opposition's Result.": both numbers compared hold a Rank.
    text = (
        f"{_OUTCOME[outcome.outcome]} with {counted} "
        f"({_signed(chosen.result)} against {_signed(outcome.opposition_result)}; "
        f"rank {test.rank}, dice {_signed(chosen.test)})"
    )
    effect = outcome.actor_effect
    if effect.applies and effect.rank is not None and effect.rank_after is not None:
        text += f"; Effect rank {effect.rank} to {effect.rank_after}"
        asked_for = effect.rank + effect.profit - effect.waste
        # The seed's bounds, said where they change the number: "Profit can't raise an
        # Effect ... beyond 5", "Waste can't lower ... below 0".
        if asked_for > effect.rank_after:
            text += f" (not {asked_for}: Profit can't raise an Effect beyond 5)"
        elif asked_for < effect.rank_after:
            text += f" (not {asked_for}: Waste can't lower an Effect below 0)"
    # "When you Win, only you apply your Effect, and when you Match, both parties get to
    # apply their Effects": a Match succeeds in part.
    return Words(
        asked=dice + against,
        text=text,
        success=outcome.outcome != "fail",
        partial=outcome.outcome == "match",
    )


def odds_of_test(test: tribute.Test) -> list[Distribution]:
    odds = tribute_test_odds(test)
    return [
        distribution(
            "outcome",
            "Result",
            {"win": odds.win, "match": odds.match, "fail": odds.fail},
            label=lambda k: _OUTCOME[str(k)],
        ),
        distribution("profit", "Profit", odds.profit(), label=lambda n: f"{n} Profit"),
        distribution("waste", "Waste", odds.waste(), label=lambda n: f"{n} Waste"),
        distribution(
            "profit_and_waste",
            "Profit and Waste together",
            {f"{p},{w}": chance for (p, w), chance in odds.joint.items()},
            label=lambda k: "{} Profit, {} Waste".format(*str(k).split(",")),
        ),
    ]


def resolve_result_without_rank(test: tribute.Test, dice: DiceSource) -> dict[str, Any]:
    """A Test as Tribute's first revision recorded it: each choice's ``result`` held the
    dice alone (FOCUS - BURDEN, today's ``test``) and there was no ``test``.

    Only the record's shape changed (who Wins, the Profit and Waste, the opposition's
    Result with its Rank were decided as they are now), so the first revision is
    today's outcome with each choice written the old way: a transform, not a second
    copy of the rules.
    """
    outcome: dict[str, Any] = msgspec.to_builtins(tribute.resolve_test(test, dice))
    for side in (outcome["actor"], outcome["opposition"]):
        if side is not None:
            for choice in (side["chosen"], *side["alternatives"]):
                choice["result"] = choice.pop("test")
    return outcome


TEST: Mechanic[tribute.Test, tribute.TestOutcome] = Mechanic(
    name="tribute.test",
    path="/tests",
    operation_id="rollTributeTest",
    summary="Roll a Tribute Test against a difficulty or an opponent",
    description=(
        "result = rank + FOCUS die - BURDEN die; higher than the opposition Wins, equal "
        "Matches, lower Fails. Under the revised rule the service chooses the dice "
        "(best outcome, then Profit - Waste) and lists every undominated alternative."
    ),
    input_type=tribute.Test,
    dice_type=TestDice,
    resolve=tribute.resolve_test,
    read=read_test,
    odds=odds_of_test,
    odds_operation_id="tributeTestOdds",
    odds_summary="Exact odds of a Tribute Test against a difficulty or an opponent",
    odds_description=(
        "Against an opponent, the actor's dice face the opposition's best Result, whose "
        "odds come from the opponent's dice."
    ),
    dependent_required={"choice": ("dice",)},
    earlier=(
        EarlierRevision(
            name="the first revision: a choice's result held the dice alone, without the Rank",
            resolve=resolve_result_without_rank,
        ),
    ),
)

SYSTEM = System(
    slug="tribute",
    title="Tribute",
    description="Tribute's core dice mechanic (FOCUS, BURDEN, Profit, Waste).",
    source="seeds/001",
    mechanics=(TEST,),
)
