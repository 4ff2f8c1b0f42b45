"""An auditor's picture of a verified log: what was rolled, by whom, with which keys,
and whether the dice look like fair dice.

The verifier says whether the log holds; this report says what it holds. For each die
size it counts every face and tests the counts against a fair die's, apart for the dice
fairroll derived from a seed (drawn, chosen or in a seed session: the service's own
randomness) and for the dice the callers supplied (rolled elsewhere: their dice, not
fairroll's). A sealed roll's dice count among fairroll's own once its reveal opened them
(at the ``sealed.reveal``: its entry holds none):

- Pearson's chi-square test when every face is expected at least 5 times (``n / k >=
  5``), its p-value the chi-square distribution's upper tail with ``k - 1`` degrees of
  freedom;
- below that, the exact multinomial test when the count vectors are few enough to list
  (the p-value is the probability, for a fair die, of every count vector no likelier
  than the one seen);
- else no test, and the report says how many dice one would need.

A p-value is the chance that fair dice would look at least this uneven: a small one
(under 0.001, say) is worth a look, but among many die sizes and many tables some will
be small by chance alone.

>>> test = goodness_of_fit([10, 10, 10, 10, 10, 10])
>>> (test.method, test.p_value)
('chi-square', 1.0)
>>> round(chi_square_p(3.841458820694124, 1), 6)
0.05
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import msgspec

from fairroll.audit.sealed import SEALED_REVEAL_MECHANIC

__all__ = [
    "AuditReport",
    "FaceCounts",
    "Fit",
    "audit_report",
    "chi_square_p",
    "exact_multinomial_p",
    "goodness_of_fit",
]

Method = Literal["chi-square", "exact", "none"]

#: The sources whose dice fairroll derived from a seed (its own randomness).
DERIVED = frozenset({"drawn", "chosen", "committed", "seeded"})
#: The most count vectors the exact test lists before it gives up.
EXACT_LIMIT = 200_000


class Fit(msgspec.Struct, frozen=True, kw_only=True):
    """A goodness-of-fit test of face counts against a fair die."""

    method: Method
    p_value: float | None = None
    #: Pearson's statistic and its degrees of freedom (chi-square only).
    statistic: float | None = None
    degrees_of_freedom: int | None = None
    note: str | None = None


class FaceCounts(msgspec.Struct, frozen=True, kw_only=True):
    """How often each face of one die size came up: ``counts[i]`` is face ``i + 1``."""

    sides: int
    dice: int
    counts: list[int]
    fit: Fit


class KeyUse(msgspec.Struct, frozen=True, kw_only=True):
    entries: int
    first_seq: int
    last_seq: int


class AuditReport(msgspec.Struct, frozen=True, kw_only=True):
    """What a log holds: counts per mechanic and source, the keys that signed it, its
    first and last times, and the face counts of each die size with their tests."""

    entries: int
    #: The table the entries are of (as the first entry names it).
    table: str | None
    first_time: str | None
    last_time: str | None
    mechanics: dict[str, int]
    sources: dict[str, int]
    #: mechanic -> source -> entries.
    by_mechanic: dict[str, dict[str, int]]
    keys: dict[str, KeyUse]
    #: The dice fairroll derived from seeds, per die size.
    derived_faces: list[FaceCounts]
    #: The dice callers supplied (rolled elsewhere), per die size.
    supplied_faces: list[FaceCounts]


def audit_report(entries: Iterable[Mapping[str, Any]]) -> AuditReport:
    """The report of ``entries`` (decoded export lines, in seq order)."""
    mechanics: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    by_mechanic: dict[str, Counter[str]] = {}
    keys: dict[str, list[int]] = {}
    faces: dict[bool, dict[int, Counter[int]]] = {True: {}, False: {}}
    times: list[str] = []
    count, table = 0, None
    for entry in entries:
        count += 1
        table = table or entry.get("table")
        mechanic, source = str(entry.get("mechanic")), str(entry.get("source"))
        mechanics[mechanic] += 1
        sources[source] += 1
        by_mechanic.setdefault(mechanic, Counter())[source] += 1
        seq, key_id = int(entry["seq"]), str(entry.get("key_id"))
        used = keys.setdefault(key_id, [0, seq, seq])
        used[0], used[2] = used[0] + 1, seq
        if isinstance(entry.get("time"), str):
            times.append(entry["time"])
        derived = source in DERIVED
        dice = entry.get("dice") or ()
        if mechanic == SEALED_REVEAL_MECHANIC:  # the opened roll's dice, derived from a seed
            derived, dice = True, _opened_dice(entry)
        if derived or source == "supplied":
            for die in dice:
                faces[derived].setdefault(int(die["sides"]), Counter())[int(die["face"])] += 1
    return AuditReport(
        entries=count,
        table=str(table) if table else None,
        first_time=min(times) if times else None,
        last_time=max(times) if times else None,
        mechanics=dict(sorted(mechanics.items())),
        sources=dict(sorted(sources.items())),
        by_mechanic={m: dict(sorted(s.items())) for m, s in sorted(by_mechanic.items())},
        keys={k: KeyUse(entries=n, first_seq=a, last_seq=b) for k, (n, a, b) in keys.items()},
        derived_faces=_face_counts(faces[True]),
        supplied_faces=_face_counts(faces[False]),
    )


def _opened_dice(entry: Mapping[str, Any]) -> list[Any]:
    request = entry.get("request")
    opening = request.get("opening") if isinstance(request, dict) else None
    dice = opening.get("dice") if isinstance(opening, dict) else None
    return dice if isinstance(dice, list) else []


def goodness_of_fit(counts: list[int]) -> Fit:
    """Test ``counts`` (one per face) against a fair die: chi-square when every face is
    expected 5 times or more, the exact multinomial test when that is small enough to
    list, else no test (with what it would take)."""
    sides, n = len(counts), sum(counts)
    if sides < 2 or n == 0:
        return Fit(method="none", note="no dice of more than one face")
    if n >= 5 * sides:
        expected = n / sides
        statistic = sum((c - expected) ** 2 for c in counts) / expected
        return Fit(
            method="chi-square",
            statistic=statistic,
            degrees_of_freedom=sides - 1,
            p_value=chi_square_p(statistic, sides - 1),
        )
    if math.comb(n + sides - 1, sides - 1) <= EXACT_LIMIT:
        return Fit(method="exact", p_value=exact_multinomial_p(counts))
    return Fit(method="none", note=f"too few dice to test: {5 * sides} or more are needed")


def chi_square_p(statistic: float, degrees_of_freedom: int) -> float:
    """The chi-square distribution's upper tail: P(X >= statistic), the regularized upper
    incomplete gamma function Q(df / 2, statistic / 2) (a series below ``a + 1``, a
    continued fraction above, as Numerical Recipes computes ``gammq``)."""
    a, x = degrees_of_freedom / 2, statistic / 2
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:  # P(a, x) by its series; Q = 1 - P
        term = total = 1 / a
        k = a
        for _ in range(10_000):
            k += 1
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1 - total * math.exp(log_front))
    # Q(a, x) by Lentz's continued fraction.
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return min(1.0, math.exp(log_front) * h)


def exact_multinomial_p(counts: list[int]) -> float:
    """The exact multinomial test of ``counts`` against a fair die: the total probability
    of every count vector (of the same number of dice) no likelier than ``counts``."""
    sides, n = len(counts), sum(counts)
    log_n = math.lgamma(n + 1) - n * math.log(sides)

    def log_p(vector: Iterable[int]) -> float:
        return log_n - sum(math.lgamma(c + 1) for c in vector)

    seen = log_p(counts) + 1e-9  # ties to the observed vector count as no likelier
    total = 0.0
    for vector in _compositions(n, sides):
        p = log_p(vector)
        if p <= seen:
            total += math.exp(p)
    return min(1.0, total)


def _compositions(n: int, parts: int) -> Iterable[tuple[int, ...]]:
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _compositions(n - first, parts - 1):
            yield (first, *rest)


def _face_counts(by_sides: dict[int, Counter[int]]) -> list[FaceCounts]:
    made = []
    for sides, counter in sorted(by_sides.items()):
        counts = [counter.get(face, 0) for face in range(1, sides + 1)]
        made.append(
            FaceCounts(sides=sides, dice=sum(counts), counts=counts, fit=goodness_of_fit(counts))
        )
    return made
