"""TFT contests, declared: ``POST /v1/tft/contests`` and its odds."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

import msgspec

from fairroll.mechanics.declare import DiceGroups, Mechanic, System, Words, faces_meta, plural
from fairroll.odds import Distribution, distribution
from fairroll.odds.tft import contest_odds
from fairroll.rules import tft

__all__ = ["CONTEST", "SYSTEM"]

D6 = Annotated[int, msgspec.Meta(ge=1, le=tft.DIE_SIDES)]
D6Faces = Annotated[
    list[D6],
    faces_meta(
        tft.DIE_SIDES,
        tft.MAX_DICE,
        min_dice=0,
        description="Faces of d6s rolled elsewhere, in any order.",
    ),
]


class TftContestDice(DiceGroups, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Faces rolled elsewhere (physical or VTT dice) for each side, in any order."""

    a: D6Faces
    b: D6Faces


def _side(contestant: tft.Contestant, fallback: str) -> str:
    if isinstance(contestant.dice_count, int):
        dice = plural(contestant.dice_count, "die", "dice")
    else:
        talents = f", {plural(contestant.talents, 'talent')}" if contestant.talents else ""
        dice = f"attribute {contestant.attribute}{talents}"
    return f"{contestant.name or fallback} ({dice})"


def read_contest(contest: tft.Contest, outcome: tft.ContestOutcome) -> Words:
    asked = f"{_side(contest.a, 'A')} against {_side(contest.b, 'B')}"
    if outcome.victor is None:
        text = (
            "No victor: every die tied"
            if outcome.no_victor_reason == "all_dice_tied"
            else "No victor: the tied dice ran out"
        )
        return Words(asked=asked, text=text)
    who = outcome.victor_name or outcome.victor.upper()
    level = f" — Level {outcome.victory_level} victory" if outcome.victory_level else ""
    return Words(asked=asked, text=f"{who} wins{level}", victor=outcome.victor)


def odds_of_contest(contest: tft.Contest) -> list[Distribution]:
    a_dice, b_dice = tft.dice_count(contest.a, "a"), tft.dice_count(contest.b, "b")
    odds = contest_odds(a_dice, b_dice)
    a, b = contest.a.name or "A", contest.b.name or "B"
    words = {
        "a": f"{a} wins",
        "b": f"{b} wins",
        "all_dice_tied": "No victor: every die tied",
        "ran_out_of_dice": "No victor: the tied dice ran out",
    }
    result = distribution(
        "victor",
        f"Who wins ({plural(a_dice, 'die', 'dice')} against {b_dice})",
        {
            "a": odds.a_wins,
            "b": odds.b_wins,
            "all_dice_tied": odds.all_dice_tied,
            "ran_out_of_dice": odds.ran_out_of_dice,
        },
        label=lambda k: words[str(k)],
    )
    if not contest.victory_levels:
        return [result]
    levels: dict[str | int, Fraction] = {f"a:{n}": p for n, p in odds.a_levels.items()}
    levels.update({f"b:{n}": p for n, p in odds.b_levels.items()})
    levels["none"] = odds.all_dice_tied + odds.ran_out_of_dice

    def level(key: str | int) -> str:
        if key == "none":
            return "No victor"
        who, n = str(key).split(":")
        return f"{a if who == 'a' else b}: Level {n}"

    return [result, distribution("victory_level", "Victory levels", levels, label=level)]


CONTEST: Mechanic[tft.Contest, tft.ContestOutcome] = Mechanic(
    name="tft.contest",
    path="/contests",
    operation_id="rollTftContest",
    summary="Roll a TFT contest between two characters",
    description=(
        "Each side rolls attribute // 3 d6 plus one per helpful talent (or `dice_count`). "
        "Highest dice are compared; tied pairs are discarded from the top. "
        "With `victory_levels`, each winning die higher than every remaining "
        "losing die is one level of victory."
    ),
    input_type=tft.Contest,
    dice_type=TftContestDice,
    resolve=tft.resolve_contest,
    read=read_contest,
    odds=odds_of_contest,
    odds_operation_id="tftContestOdds",
    odds_summary="Exact odds of a TFT contest",
)

SYSTEM = System(
    slug="tft",
    title="TFT contests",
    description="TFT contests between characters (Richard Smith, 2002).",
    source="seeds/004",
    mechanics=(CONTEST,),
)
