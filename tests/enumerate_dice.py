"""A test oracle: run a rules function over every possible sequence of dice.

``every_outcome(run)`` calls ``run(dice)`` with a dice source that replays a
script of faces; when the rules ask for a die past the script, the run stops
and is retried once per face of that die. Each finished run is weighted by the
product of 1/sides of its dice, so the results are an exact distribution.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from fractions import Fraction

from fairroll.randomness import Die


class _NeedsDieError(Exception):
    def __init__(self, sides: int) -> None:
        super().__init__(sides)
        self.sides = sides


class ScriptedDice:
    def __init__(self, script: tuple[int, ...]) -> None:
        self.script = script
        self.used: list[Die] = []

    @property
    def dice(self) -> tuple[Die, ...]:
        return tuple(self.used)

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        faces = []
        for _ in range(count):
            if len(self.used) == len(self.script):
                raise _NeedsDieError(sides)
            face = self.script[len(self.used)]
            self.used.append(Die(group=group, sides=sides, face=face))
            faces.append(face)
        return tuple(faces)


def every_outcome(
    run: Callable[[ScriptedDice], Hashable], *, max_dice: int | None = None
) -> dict[Hashable, Fraction]:
    """The exact distribution of ``run``'s results.

    ``max_dice`` bounds rules that re-roll without limit (rejection sampling): sequences
    longer than it are dropped and the rest renormalised, which is exact whenever the
    result does not depend on how many re-rolls came before it.
    """
    results: Counter[Hashable] = Counter()
    stack: list[tuple[tuple[int, ...], Fraction]] = [((), Fraction(1))]
    while stack:
        script, weight = stack.pop()
        try:
            result = run(ScriptedDice(script))
        except _NeedsDieError as need:
            if max_dice is not None and len(script) >= max_dice:
                continue
            share = weight / need.sides
            stack.extend(((*script, face), share) for face in range(1, need.sides + 1))
            continue
        results[result] += weight  # type: ignore[assignment]
    total = sum(results.values())
    return {result: weight / total for result, weight in results.items()}
