"""How a mechanic is declared: once, with everything the service derives from it.

A :class:`Mechanic` names a resolution mechanic and holds its input type, its
supplied-dice type, its rules function, its odds and how its outcome reads in
words. A :class:`System` groups a rule system's mechanics and its calculations
(dice-free answers such as a sheet's validation). From these alone the service
builds the request and response types, the roll and odds handlers and their
routes, ``GET /v1/systems`` and the page's forms; the verifier replays entries
through the same ``resolve``, or through an :class:`EarlierRevision` of it for the
entries an older server recorded. Nothing here imports the web framework.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, get_type_hints

import msgspec

from fairroll.odds import Distribution, Odds
from fairroll.randomness import DiceSource, Die

__all__ = [
    "Calculation",
    "DiceGroups",
    "EarlierRevision",
    "Mechanic",
    "System",
    "Words",
    "check_input",
    "faces_meta",
    "plural",
]

InputT = TypeVar("InputT", bound=msgspec.Struct)
OutcomeT = TypeVar("OutcomeT", bound=msgspec.Struct)


class Words(msgspec.Struct, frozen=True, kw_only=True):
    """A roll in the system's own terms, and flags a program can act on.

    ``success`` is null where the mechanic has no success (a contest names a
    ``victor`` instead, a character's creation has neither).
    """

    asked: str
    text: str
    success: bool | None = None
    partial: bool = False
    critical: bool = False
    catastrophic: bool = False
    victor: str | None = None


class DiceGroups(msgspec.Struct, frozen=True, kw_only=True):
    """Base of a mechanic's supplied-dice type: its faces by the rules' dice groups, and
    where in the request each group was given (for errors that name a request path)."""

    def groups(self) -> Mapping[str, Sequence[int]]:
        """Faces by dice group, as the rules roll them."""
        return msgspec.structs.asdict(self)

    def path(self, group: str) -> str:
        """The request path (under ``dice``) of a group's faces."""
        return group


@dataclass(frozen=True, slots=True)
class EarlierRevision(Generic[InputT]):
    """An earlier revision of a mechanic's rules, kept only to replay what it recorded.

    A table's log keeps the entries older servers recorded, and a verifier replays each
    one: when the rules change, an honest entry of the old rules must still replay. An
    earlier revision is a resolve function of its own, giving the outcome as that
    revision recorded it (a struct, or its JSON when only the shape changed), so each
    system says its change in the way that reads best: a ``revision`` keyword its rules
    functions take, the current one by default, when the rules decided differently
    (Fast Battle), or a transform of today's outcome when only the record's shape
    changed (Tribute). The service rolls through ``Mechanic.resolve`` alone, so a new
    roll is never resolved by an earlier revision; only replay looks back
    (``mechanics.replay_entry``), and the verifier counts what replayed so.
    """

    #: What this revision did that the current one does not, in words a report prints.
    name: str
    resolve: Callable[[InputT, DiceSource], Any]


@dataclass(frozen=True, slots=True)
class Mechanic(Generic[InputT, OutcomeT]):
    """One resolution mechanic: ``resolve(input, dice)`` gives the outcome, ``read`` says
    it in words, ``odds(input)`` gives its exact distributions."""

    name: str
    path: str
    operation_id: str
    summary: str
    input_type: type[InputT]
    dice_type: type[DiceGroups]
    resolve: Callable[[InputT, DiceSource], OutcomeT]
    read: Callable[[InputT, OutcomeT], Words]
    odds: Callable[[InputT], Odds | list[Distribution]]
    odds_operation_id: str
    odds_summary: str
    description: str = ""
    odds_description: str = ""
    #: Request fields that need others (JSON Schema ``dependentRequired``).
    dependent_required: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Earlier revisions of the rules, newest first: replay accepts a recorded outcome
    #: that one of them gives on the same request and dice (``EarlierRevision``).
    earlier: tuple[EarlierRevision[InputT], ...] = ()

    @property
    def system(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def type_name(self) -> str:
        """``tft.contest`` -> ``TftContest``: the stem of its API type names."""
        words = self.name.replace(".", "-").split("-")
        return "".join(word.capitalize() for word in words)

    @property
    def outcome_type(self) -> type[OutcomeT]:
        """The outcome struct, from the rules function's return annotation."""
        kind: type[OutcomeT] = _return_type(self.resolve)
        return kind

    def input_of(self, request: object) -> InputT:
        """The mechanic's own fields of an HTTP request (a subclass of the input type)."""
        if type(request) is self.input_type:
            return request
        fields = self.input_type.__struct_fields__
        return self.input_type(**{name: getattr(request, name) for name in fields})

    def odds_of(self, given: InputT) -> Odds:
        """The odds of ``given``, refused exactly where a roll of it is refused."""
        check_input(self, given)
        answer = self.odds(given)
        if isinstance(answer, Odds):
            return answer
        return Odds(mechanic=self.name, distributions=answer)


@dataclass(frozen=True, slots=True)
class Calculation:
    """A dice-free answer of a system (a sheet checked, a price, a catalogue):
    ``compute(input)`` (or ``compute()`` for a ``GET`` without input)."""

    path: str
    operation_id: str
    summary: str
    compute: Callable[..., Any]
    method: str = "POST"
    description: str = ""

    @property
    def input_type(self) -> type[Any] | None:
        hints = get_type_hints(self.compute)
        inputs = [kind for name, kind in hints.items() if name != "return"]
        return inputs[0] if inputs else None

    @property
    def output_type(self) -> type[Any]:
        kind: type[Any] = _return_type(self.compute)
        return kind


@dataclass(frozen=True, slots=True)
class System:
    """A rule system: its slug (in paths and mechanic names), title, source and parts."""

    slug: str
    title: str
    description: str
    mechanics: tuple[Mechanic[Any, Any], ...]
    calculations: tuple[Calculation, ...] = ()
    #: The rules text it follows (``seeds/004``: the project's rule documents); systems
    #: are listed in this order.
    source: str = ""


def check_input(mechanic: Mechanic[Any, Any], given: msgspec.Struct) -> None:
    """Raise the ``RuleError`` a roll of ``given`` would raise before its first die.

    The rules check their input where they use it, once; this runs the rules
    function until it asks for a die, so odds refuse what a roll refuses.
    """
    with contextlib.suppress(_FirstDieAskedError):
        mechanic.resolve(given, _FirstDie())


class _FirstDieAskedError(Exception):
    """The rules asked for their first die: the input passed every check before it."""


class _FirstDie:
    seed = None

    @property
    def dice(self) -> tuple[Die, ...]:
        return ()

    def roll(self, group: str, sides: int, count: int = 1) -> tuple[int, ...]:
        raise _FirstDieAskedError


def plural(n: int, one: str, many: str | None = None) -> str:
    """``plural(2, "die", "dice")`` -> ``"2 dice"``: a count in words.

    >>> plural(1, "success", "successes"), plural(3, "period")
    ('1 success', '3 periods')
    """
    return f"{n} {one if n == 1 else (many or one + 's')}"


def faces_meta(
    sides: int, max_dice: int, *, min_dice: int = 1, description: str | None = None
) -> msgspec.Meta:
    """The limits of a list of supplied d``sides`` faces, spelt out for the spec too:
    ``Annotated[list[Annotated[int, Meta(ge=1, le=sides)]], faces_meta(sides, ...)]``.

    Each face is checked by the item type; Litestar does not render item constraints,
    so the item schema is given here as well.
    """
    return msgspec.Meta(
        min_length=min_dice,
        max_length=max_dice,
        description=description or f"Faces of d{sides}s rolled elsewhere, in roll order.",
        extra_json_schema={"extra": {"items": {"type": "integer", "minimum": 1, "maximum": sides}}},
    )


@functools.cache
def _return_type(function: Callable[..., Any]) -> Any:
    """A function's return annotation, resolved once: ``get_type_hints`` evaluates every
    annotation of the function each time, and the events and listings ask per entry."""
    return get_type_hints(function)["return"]
