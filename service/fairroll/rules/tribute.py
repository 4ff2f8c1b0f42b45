"""Tribute's core dice mechanic: FOCUS and BURDEN dice, Win/Match/Fail, Profit and Waste.

A Test rolls 1..6 white FOCUS dice and 1..6 black BURDEN dice of the campaign's
reality level (d4 Mundane .. d12 Over-the-top). One FOCUS die and one BURDEN die
are used: ``test = focus die - burden die`` and ``result = rank + test`` ("Add the
final value of your test to your appropriate Attribute's Rank. Compare the result to
your opposition's Result."), so every reported ``result`` holds its roller's Rank:
higher than the opposition's Wins, equal Matches, lower Fails.

- ``revised`` (the current rule): any FOCUS and any BURDEN die may be used;
  Profit = FOCUS dice above the used one, Waste = BURDEN dice above the used one;
  on a Fail they are still counted, and all go to the opposition.
  The service chooses for the roller: best outcome, then best Profit - Waste,
  then more Profit, then the higher result.
- ``classic`` (the original rule): the highest FOCUS and BURDEN dice are used;
  Profit = other FOCUS dice meeting or beating the highest BURDEN die, Waste =
  other BURDEN dice meeting or beating the highest FOCUS die.

>>> best_choice((3, 4, 5, 6), (1, 1), need=5, rule="revised", failure_counts=False, rank=1)
Choice(focus=6, burden=1, test=5, result=6, outcome='match', profit=0, waste=0)
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from fairroll.randomness import DiceSource, SuppliedDice
from fairroll.rules.errors import RuleError
from fairroll.rules.vocabulary import Name

__all__ = [
    "REALITY_SIDES",
    "Choice",
    "Effect",
    "Opponent",
    "Outcome",
    "ProfitRule",
    "Reality",
    "SideOutcome",
    "Test",
    "TestOutcome",
    "Transfer",
    "all_choices",
    "best_choice",
    "classic_choice",
    "counts_failures",
    "frontier",
    "resolve_test",
]

Reality = Literal["d4", "d6", "d8", "d10", "d12"]
ProfitRule = Literal["revised", "classic"]
Outcome = Literal["win", "match", "fail"]
Allocation = Literal["standard", "leaf_on_the_wind", "enemy_mine"]
AllocatedBy = Literal["roller", "gm", "opposition"]
ChosenBy = Literal["service", "request", "rule"]

REALITY_SIDES: dict[str, int] = {"d4": 4, "d6": 6, "d8": 8, "d10": 10, "d12": 12}
OUTCOME_ORDER: dict[str, int] = {"fail": 0, "match": 1, "win": 2}
ALLOCATED_BY: dict[str, AllocatedBy] = {
    "standard": "roller",
    "leaf_on_the_wind": "gm",  # Option 2: "the GM spends all of your Profit and Waste for you"
    "enemy_mine": "opposition",  # Option 3: "Players choose how their opposition's ... is spent"
}

Rank = Annotated[
    int, msgspec.Meta(ge=-50, le=50, description="The Attribute's Rank; 0 is human average.")
]
DiceCount = Annotated[int, msgspec.Meta(ge=1, le=6, description="1 base die plus up to 5 extra.")]
EffectRank = Annotated[int, msgspec.Meta(ge=1, le=5, description="The Effect's Rank, 1..5.")]
Difficulty = Annotated[
    int, msgspec.Meta(ge=-100, le=100, description="A fixed opposing Result to beat.")
]
Face = Annotated[int, msgspec.Meta(ge=1, le=12)]


class ExplicitChoice(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The FOCUS and BURDEN die values the roller uses (revised rule, supplied dice)."""

    focus: Face
    burden: Face


class Opponent(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An opposing roller: its Rank and dice (groups ``opponent.focus``, ``opponent.burden``)."""

    name: Name | None = None
    rank: Rank
    focus: DiceCount = 1
    burden: DiceCount = 1
    effect_rank: EffectRank | None = None


class Test(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A Test against a fixed ``difficulty`` or an ``opponent`` (exactly one)."""

    #: Fields of which exactly one is given (checked by ``resolve_test``; the spec says it).
    exactly_one: ClassVar[tuple[str, str]] = ("difficulty", "opponent")

    reality: Reality
    rank: Rank
    focus: DiceCount = 1
    burden: DiceCount = 1
    difficulty: Difficulty | UnsetType = UNSET
    opponent: Opponent | UnsetType = UNSET
    profit_rule: ProfitRule = "revised"
    trash_is_treasure: bool = False
    failure_counts: bool = False
    allocation: Allocation = "standard"
    effect_rank: EffectRank | None = None
    name: Name | None = None
    choice: ExplicitChoice | UnsetType = UNSET


class Choice(msgspec.Struct, frozen=True, kw_only=True):
    """A FOCUS and BURDEN die used, the Test's value and the Result, and the Profit and
    Waste they give.

    ``test`` is the dice alone (FOCUS - BURDEN); ``result`` adds the roller's Rank, as the
    opposition's Result does, so the two compared are the two reported.
    """

    focus: int
    burden: int
    test: int
    result: int
    outcome: Outcome
    profit: int
    waste: int


class SideOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """One roller's dice, the choice used and, under the revised rule, the alternatives
    no other choice beats on outcome, Profit and Waste at once."""

    name: str | None
    rank: int
    focus_dice: tuple[int, ...]
    burden_dice: tuple[int, ...]
    chosen: Choice
    chosen_by: ChosenBy
    alternatives: tuple[Choice, ...]


class Transfer(msgspec.Struct, frozen=True, kw_only=True):
    """Profit and Waste given to the other side (Profit arrives as Waste and vice versa)."""

    profit: int
    waste: int


class Effect(msgspec.Struct, frozen=True, kw_only=True):
    """A side's Effect: applied on a Win or Match; Profit and Waste cancel one for one,
    and the final Rank stays within 0..5."""

    applies: bool
    rank: int | None
    profit: int
    waste: int
    rank_after: int | None


class TestOutcome(msgspec.Struct, frozen=True, kw_only=True):
    reality: Reality
    sides: int
    profit_rule: ProfitRule
    outcome: Outcome
    actor: SideOutcome
    difficulty: int | None
    opposition: SideOutcome | None
    opposition_result: int
    actor_effect: Effect
    opposition_effect: Effect | None
    given_to_opposition: Transfer
    received_from_opposition: Transfer
    may_give_to_opposition: bool
    allocated_by: AllocatedBy


def counts_failures(test: Test | _Rules) -> bool:
    """Whether a Failed Test counts its Profit and Waste (and gives them to the opposition).

    The revised rule always does: "Finally, Profit can be given to the opposition, where
    it serves as Waste. This is the only option for using Profit when you Fail." (and so
    for Waste). The classic rule does only with Option 1a.

    >>> counts_failures(Test(reality="d6", rank=0, difficulty=3))
    True
    """
    return test.profit_rule == "revised" or test.failure_counts


class _Rules(Protocol):
    """What decides whether failures count: any request with the two fields."""

    @property
    def profit_rule(self) -> ProfitRule: ...

    @property
    def failure_counts(self) -> bool: ...


def classic_choice(
    focus: tuple[int, ...],
    burden: tuple[int, ...],
    *,
    need: int,
    failure_counts: bool,
    rank: int = 0,
) -> Choice:
    """The original rule: highest dice; Profit/Waste by meeting or beating the other pool's top.

    ``need`` is what the dice alone must reach to Match (the opposition's Result less the
    Rank); ``rank`` goes into the reported ``result``.

    >>> classic_choice((6, 5, 4, 3), (1, 1, 1), need=5, failure_counts=False).profit
    3
    """
    top_f, top_b = max(focus), max(burden)
    diff = top_f - top_b
    outcome = _outcome(diff, need)
    # "Any FOCUS dice other than the first one that meet or exceed the highest BURDEN die"
    profit = max(0, sum(1 for f in focus if f >= top_b) - 1)
    waste = max(0, sum(1 for b in burden if b >= top_f) - 1)
    if outcome == "fail" and not failure_counts:
        profit = waste = 0
    return Choice(
        focus=top_f,
        burden=top_b,
        test=diff,
        result=rank + diff,
        outcome=outcome,
        profit=profit,
        waste=waste,
    )


def all_choices(
    focus: tuple[int, ...],
    burden: tuple[int, ...],
    *,
    need: int,
    failure_counts: bool,
    rank: int = 0,
) -> list[Choice]:
    """Every distinct (FOCUS, BURDEN) choice under the revised rule, best first."""
    choices = []
    for f in sorted(set(focus)):
        profit = sum(1 for x in focus if x > f)  # "Dice that match are not Profit."
        for b in sorted(set(burden)):
            waste = sum(1 for y in burden if y > b)
            outcome = _outcome(f - b, need)
            counted = outcome != "fail" or failure_counts
            choices.append(
                Choice(
                    focus=f,
                    burden=b,
                    test=f - b,
                    result=rank + f - b,
                    outcome=outcome,
                    profit=profit if counted else 0,
                    waste=waste if counted else 0,
                )
            )
    return sorted(choices, key=_preference, reverse=True)


def best_choice(
    focus: tuple[int, ...],
    burden: tuple[int, ...],
    *,
    need: int,
    rule: ProfitRule,
    failure_counts: bool,
    rank: int = 0,
) -> Choice:
    """The service's choice for a roller whose dice need ``test >= need`` to Match.

    ``need`` is on the dice alone (the opposition's Result less the Rank); ``rank`` goes
    into the reported ``result``.
    """
    if rule == "classic":
        return classic_choice(focus, burden, need=need, failure_counts=failure_counts, rank=rank)
    return all_choices(focus, burden, need=need, failure_counts=failure_counts, rank=rank)[0]


def frontier(choices: list[Choice]) -> tuple[Choice, ...]:
    """The choices no other beats or equals on outcome, Profit and Waste at once."""
    kept: list[Choice] = []
    for choice in choices:  # best first, so an equal later choice is dropped
        if not any(_covers(other, choice) for other in kept):
            kept.append(choice)
    return tuple(kept)


def resolve_test(test: Test, dice: DiceSource) -> TestOutcome:
    """Roll the actor (groups ``focus``, ``burden``) and the opponent if any, and resolve."""
    _check(test)
    if not isinstance(test.choice, UnsetType) and not isinstance(dice, SuppliedDice):
        raise RuleError("name the dice to use (choice) only with dice you supplied", field="choice")
    sides = REALITY_SIDES[test.reality]
    focus = dice.roll("focus", sides, test.focus)
    burden = dice.roll("burden", sides, test.burden)
    counts = counts_failures(test)
    opponent = test.opponent
    if isinstance(opponent, UnsetType):
        difficulty = test.difficulty if isinstance(test.difficulty, int) else 0
        actor = _side(test, focus, burden, need=difficulty - test.rank)
        outcome = actor.chosen.outcome
        return _finish(test, sides, actor, None, difficulty, outcome)
    o_focus = dice.roll("opponent.focus", sides, opponent.focus)
    o_burden = dice.roll("opponent.burden", sides, opponent.burden)
    if test.profit_rule == "classic":
        o_choice = classic_choice(o_focus, o_burden, need=0, failure_counts=counts)
        o_result = opponent.rank + o_choice.test
        actor = _side(test, focus, burden, need=o_result - test.rank)
    else:
        # Simultaneous choices, made deterministic: the opposition's best possible Result
        # stands first, the actor chooses against it, then the opposition chooses against
        # the actor's Result (which never changes who Wins).
        o_best = opponent.rank + max(o_focus) - min(o_burden)
        actor = _side(test, focus, burden, need=o_best - test.rank)
    a_result = actor.chosen.result
    opposition = _opponent_side(test, opponent, o_focus, o_burden, need=a_result - opponent.rank)
    o_result = opposition.chosen.result
    return _finish(test, sides, actor, opposition, o_result, actor.chosen.outcome)


def _check(test: Test) -> None:
    has_difficulty = not isinstance(test.difficulty, UnsetType)
    has_opponent = not isinstance(test.opponent, UnsetType)
    if has_difficulty == has_opponent:
        raise RuleError(
            "a Test is against either a fixed difficulty or an opponent: give exactly one",
            field="difficulty",
        )
    if test.failure_counts and not test.trash_is_treasure:
        raise RuleError(
            "Option 1a (Profit and Waste on a Failure) requires Option 1 "
            "(My Trash is your Treasure): set trash_is_treasure",
            field="failure_counts",
        )
    if not isinstance(test.choice, UnsetType) and test.profit_rule == "classic":
        raise RuleError(
            "under the classic rule the highest dice are used; there is no choice to make",
            field="choice",
        )


def _side(test: Test, focus: tuple[int, ...], burden: tuple[int, ...], *, need: int) -> SideOutcome:
    choice = None if isinstance(test.choice, UnsetType) else test.choice
    return _choose(test, test.name, test.rank, focus, burden, need=need, choice=choice)


def _opponent_side(
    test: Test, opponent: Opponent, focus: tuple[int, ...], burden: tuple[int, ...], *, need: int
) -> SideOutcome:
    return _choose(test, opponent.name, opponent.rank, focus, burden, need=need, choice=None)


def _choose(
    test: Test,
    name: str | None,
    rank: int,
    focus: tuple[int, ...],
    burden: tuple[int, ...],
    *,
    need: int,
    choice: ExplicitChoice | None,
) -> SideOutcome:
    """One roller's choice: the rule's, the service's best, or the one the request names."""
    counts = counts_failures(test)
    chosen_by: ChosenBy
    if test.profit_rule == "classic":
        chosen = classic_choice(focus, burden, need=need, failure_counts=counts, rank=rank)
        choices, chosen_by = [chosen], "rule"
    else:
        choices = all_choices(focus, burden, need=need, failure_counts=counts, rank=rank)
        chosen, chosen_by = choices[0], "service"
    if choice is not None:
        for value, rolled, field in (
            (choice.focus, focus, "focus"),
            (choice.burden, burden, "burden"),
        ):
            if value not in rolled:
                raise RuleError(
                    f"no {field.upper()} die shows {value} (rolled {list(rolled)})",
                    field=f"choice.{field}",
                )
        chosen = next(c for c in choices if (c.focus, c.burden) == (choice.focus, choice.burden))
        chosen_by = "request"
    return SideOutcome(
        name=name,
        rank=rank,
        focus_dice=focus,
        burden_dice=burden,
        chosen=chosen,
        chosen_by=chosen_by,
        alternatives=frontier(choices),
    )


def _finish(
    test: Test,
    sides: int,
    actor: SideOutcome,
    opposition: SideOutcome | None,
    opposition_result: int,
    outcome: Outcome,
) -> TestOutcome:
    given = Transfer(profit=0, waste=0)
    received = Transfer(profit=0, waste=0)
    if counts_failures(test):
        # Revised rule: "This is the only option for using Profit when you Fail"; classic
        # Option 1a: "you must give it all to the opposition".
        if outcome == "fail":
            given = Transfer(profit=actor.chosen.profit, waste=actor.chosen.waste)
        elif outcome == "win" and opposition is not None:
            received = Transfer(profit=opposition.chosen.profit, waste=opposition.chosen.waste)
    # Given Profit arrives as Waste, given Waste as Profit.
    actor_effect = _effect(
        outcome != "fail",
        test.effect_rank,
        actor.chosen.profit + received.waste,
        actor.chosen.waste + received.profit,
    )
    opposition_effect = None
    if opposition is not None and not isinstance(test.opponent, UnsetType):
        o_applies = outcome != "win"
        opposition_effect = _effect(
            o_applies,
            test.opponent.effect_rank,
            opposition.chosen.profit + given.waste,
            opposition.chosen.waste + given.profit,
        )
    return TestOutcome(
        reality=test.reality,
        sides=sides,
        profit_rule=test.profit_rule,
        outcome=outcome,
        actor=actor,
        difficulty=None if opposition is not None else opposition_result,
        opposition=opposition,
        opposition_result=opposition_result,
        actor_effect=actor_effect,
        opposition_effect=opposition_effect,
        given_to_opposition=given,
        received_from_opposition=received,
        # Revised rule: "Finally, Profit can be given to the opposition" (on a Win or a
        # Match; a Fail gives it all). Classic Option 1: "Unless you're using 'Profit and
        # Waste on a Failure' ... this only applies when you Match".
        may_give_to_opposition=(
            outcome != "fail"
            if test.profit_rule == "revised"
            else test.trash_is_treasure and outcome == "match"
        ),
        allocated_by=ALLOCATED_BY[test.allocation],
    )


def _effect(applies: bool, rank: int | None, profit: int, waste: int) -> Effect:
    if not applies:
        return Effect(applies=False, rank=rank, profit=0, waste=0, rank_after=None)
    # "Profit can't raise an Effect ... beyond 5"; "Waste can't lower ... below 0"
    after = None if rank is None else min(5, max(0, rank + profit - waste))
    return Effect(applies=True, rank=rank, profit=profit, waste=waste, rank_after=after)


def _outcome(diff: int, need: int) -> Outcome:
    if diff > need:
        return "win"
    return "match" if diff == need else "fail"


def _preference(choice: Choice) -> tuple[int, int, int, int]:
    return (
        OUTCOME_ORDER[choice.outcome],
        choice.profit - choice.waste,
        choice.profit,
        choice.result,
    )


def _covers(a: Choice, b: Choice) -> bool:
    return (
        OUTCOME_ORDER[a.outcome] >= OUTCOME_ORDER[b.outcome]
        and a.profit >= b.profit
        and a.waste <= b.waste
    )
