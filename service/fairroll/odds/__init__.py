"""Exact outcome probabilities per mechanic, computed by fairroll's own engines.

Every odds answer has one shape, whatever the mechanic (as icepool answers every
question with one ``Die``): a list of :class:`Distribution`, each the exact
probabilities of one quantity (successes, who wins, the pool afterwards ...),
outcome by outcome, each outcome labelled in the system's own words.

>>> d = distribution("result", "Result", {"win": Fraction(1, 4), "fail": Fraction(3, 4)},
...                  label=str.capitalize)
>>> [(c.outcome, c.label, c.probability.exact) for c in d.chances]
[('win', 'Win', '1/4'), ('fail', 'Fail', '3/4')]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from math import gcd
from typing import Annotated, TypeVar

import msgspec

__all__ = [
    "Chance",
    "Distribution",
    "Estimate",
    "Interval",
    "Odds",
    "Outcome",
    "Probability",
    "distribution",
    "probability_of",
    "weighted_distribution",
]

#: An outcome of a quantity: a count (successes, HP, periods; a fraction only for a
#: dice formula that divides) or a named result.
Outcome = float | str
OutcomeT = TypeVar("OutcomeT", bound=float | str)


class Probability(msgspec.Struct, frozen=True, kw_only=True):
    """An exact probability (a reduced fraction as text, e.g. ``"5/12"``) and its float."""

    exact: Annotated[str, msgspec.Meta(pattern=r"^[0-9]+/[0-9]+$", examples=["5/12"])]
    value: Annotated[float, msgspec.Meta(ge=0, le=1)]


class Chance(msgspec.Struct, frozen=True, kw_only=True):
    """One outcome of a quantity, its label in the system's words, and its probability."""

    outcome: Outcome
    label: str
    probability: Probability


class Distribution(msgspec.Struct, frozen=True, kw_only=True):
    """The exact distribution of one quantity, outcome by outcome, in a fixed order."""

    name: Annotated[str, msgspec.Meta(description="The quantity, for programs: `successes`.")]
    title: Annotated[str, msgspec.Meta(description="The quantity in words: `Successes`.")]
    chances: list[Chance]


class Interval(msgspec.Struct, frozen=True, kw_only=True):
    """Where one estimated chance lies: an outcome of a distribution and the bounds of its
    interval at the estimate's ``confidence`` (probabilities, ``low`` <= ``high``)."""

    distribution: Annotated[
        str, msgspec.Meta(description="The `name` of the distribution the outcome is in.")
    ]
    outcome: Outcome
    low: Annotated[float, msgspec.Meta(ge=0, le=1)]
    high: Annotated[float, msgspec.Meta(ge=0, le=1)]


class Estimate(msgspec.Struct, frozen=True, kw_only=True):
    """How an estimate was made and how far to trust it: ``battles`` seeded runs, the seed
    they derive from (so the estimate replays), and an interval at ``confidence`` for every
    outcome of every distribution (a program reads the bounds, not a standard error)."""

    battles: Annotated[int, msgspec.Meta(ge=1, description="Seeded runs counted.")]
    seed: Annotated[str, msgspec.Meta(description="The hex seed the runs derive from.")]
    confidence: Annotated[
        float,
        msgspec.Meta(gt=0, lt=1, description="The confidence level of every interval: 0.95."),
    ]
    intervals: Annotated[
        list[Interval],
        msgspec.Meta(description="One interval per outcome of every distribution, in their order."),
    ]
    standard_error: Annotated[
        float,
        msgspec.Meta(
            ge=0,
            description=(
                "The first outcome's interval half-width over 1.96; kept for older "
                "clients: read `intervals`."
            ),
        ),
    ]


class Odds(msgspec.Struct, frozen=True, kw_only=True):
    """Every odds answer. ``exact`` false: estimated by seeded runs (see ``estimate``)."""

    mechanic: str
    exact: bool = True
    estimate: Estimate | None = None
    distributions: list[Distribution]


def probability_of(value: Fraction, denominators: dict[int, str] | None = None) -> Probability:
    """``denominators`` memoises the decimal text of denominators across a distribution:
    they repeat (a level-up's many values share a few large powers of two),
    and writing a big integer in decimal is the costly step (``benchmarks/more_odds.py``)."""
    den = value.denominator
    text = denominators.get(den) if denominators is not None else None
    if text is None:
        text = str(den)
        if denominators is not None:
            denominators[den] = text
    return Probability(exact=f"{value.numerator}/{text}", value=float(value))


def distribution(
    name: str,
    title: str,
    chances: Mapping[OutcomeT, Fraction],
    *,
    label: Callable[[OutcomeT], str] = str,
) -> Distribution:
    """A :class:`Distribution` of ``chances`` (outcome -> probability, in their order)."""
    seen: dict[int, str] = {}
    return Distribution(
        name=name,
        title=title,
        chances=[
            Chance(outcome=outcome, label=label(outcome), probability=probability_of(p, seen))
            for outcome, p in chances.items()
        ],
    )


def weighted_distribution(
    name: str,
    title: str,
    weights: Mapping[OutcomeT, int],
    total: int,
    *,
    label: Callable[[OutcomeT], str] = str,
) -> Distribution:
    """:func:`distribution` of whole-number ``weights`` out of ``total`` (in their order):
    the same answer without a ``Fraction`` per outcome, for distributions of thousands.

    >>> [c.probability.exact for c in weighted_distribution("n", "N", {1: 2, 2: 6}, 8).chances]
    ['1/4', '3/4']
    """
    texts: dict[int, str] = {}
    chances = []
    for outcome, weight in weights.items():
        common = gcd(weight, total)
        den = total // common
        text = texts.get(den)
        if text is None:
            text = texts[den] = str(den)
        chances.append(
            Chance(
                outcome=outcome,
                label=label(outcome),
                probability=Probability(exact=f"{weight // common}/{text}", value=weight / total),
            )
        )
    return Distribution(name=name, title=title, chances=chances)
