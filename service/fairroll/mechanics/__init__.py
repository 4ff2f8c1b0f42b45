"""The registry of rule systems and their mechanics, each declared once.

Every module of this package but ``declare`` declares one system as ``SYSTEM``
(see :mod:`fairroll.mechanics.declare`); they are found here, so adding a system
adds a module and touches no list. A system from outside the package is added
with :func:`register` (``FAIRROLL_SYSTEMS`` names modules to import at startup).
The HTTP layer rolls through the registry and the verifier replays recorded
entries through it, so an audited outcome is checked against the same rules code
(or, for an entry an older server recorded, the earlier revision it was recorded
under: :class:`EarlierRevision`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

import msgspec

from fairroll.audit.entry import jcs
from fairroll.mechanics.declare import (
    Calculation,
    DiceGroups,
    EarlierRevision,
    Mechanic,
    System,
    Words,
    check_input,
)
from fairroll.randomness import DiceSource, SeededDice, SuppliedDice

__all__ = [
    "MECHANICS",
    "SYSTEMS",
    "Calculation",
    "DiceGroups",
    "EarlierRevision",
    "Mechanic",
    "Replayed",
    "RevisionTally",
    "System",
    "UnknownMechanicError",
    "Words",
    "check_input",
    "import_systems",
    "ordered",
    "register",
    "replay_entry",
    "statement_words",
    "words_of",
    "words_or_none",
]

#: Every system, by slug, in the order they were found.
SYSTEMS: dict[str, System] = {}
#: Every mechanic, by name (``tft.contest``).
MECHANICS: dict[str, Mechanic[Any, Any]] = {}


class UnknownMechanicError(ValueError):
    """An entry names a mechanic no system here declares."""


def ordered() -> list[System]:
    """Every system in the order of the rules texts they follow (then by slug)."""
    return sorted(SYSTEMS.values(), key=lambda s: (not s.source, s.source, s.slug))


def register(system: System) -> System:
    """Add a system (its slug and its mechanics' names must be new)."""
    if system.slug in SYSTEMS:
        raise ValueError(f"a system {system.slug!r} is declared twice")
    for mechanic in system.mechanics:
        if mechanic.system != system.slug:
            raise ValueError(f"mechanic {mechanic.name!r} is not named after {system.slug!r}")
        if mechanic.name in MECHANICS:
            raise ValueError(f"mechanic {mechanic.name!r} is declared twice")
    SYSTEMS[system.slug] = system
    MECHANICS.update((m.name, m) for m in system.mechanics)
    return system


def import_systems(modules: Iterable[str]) -> None:
    """Import modules that declare systems outside this package (each calls ``register``
    or holds a ``SYSTEM``); a module already imported is not registered twice."""
    for name in modules:
        module = importlib.import_module(name)
        system = getattr(module, "SYSTEM", None)
        if isinstance(system, System) and SYSTEMS.get(system.slug) is not system:
            register(system)


class Replayed(tuple[Any, Any]):
    """What :func:`replay_entry` gives: ``(dice, outcome)`` as JSON, and ``revision``: None
    when the current rules gave them, else the name of the earlier revision whose outcome
    the entry holds (a pair still, so ``dice, outcome = replay_entry(...)`` reads it)."""

    revision: str | None

    def __new__(cls, dice: Any, outcome: Any, revision: str | None = None) -> Replayed:
        replayed = super().__new__(cls, (dice, outcome))
        replayed.revision = revision
        return replayed


def replay_entry(entry: dict[str, Any], seed: str | None = None) -> Replayed:
    """Re-resolve a recorded entry from its request and its seed, or its recorded dice when
    ``seed`` is None; return (dice, outcome) as JSON.

    The current rules answer first. When their dice and outcome are not the recorded ones
    (or they refuse the request), each earlier revision the mechanic declares is tried on
    the same request and dice, newest first, and the first that gives the recorded dice
    and outcome is the answer, named in ``revision``. What no revision gives replays as
    the current rules' answer (or their refusal), so the verifier says what does not
    follow. An earlier revision is accepted whoever recorded the entry: the log does not
    say which server did, so a report counts these entries rather than trusting them less.
    """
    mechanic = MECHANICS.get(entry["mechanic"])
    if mechanic is None:
        raise UnknownMechanicError(f"unknown mechanic {entry['mechanic']!r}")
    request = msgspec.convert(entry["request"], mechanic.input_type)
    if not mechanic.earlier:
        return _replay(mechanic.resolve, request, entry, seed)
    recorded = [entry.get("dice"), entry.get("outcome")]
    try:
        current = _replay(mechanic.resolve, request, entry, seed)
    except ValueError as refused:
        current, refusal = None, refused
    if current is not None and _same(current, recorded):
        return current
    for revision in mechanic.earlier:
        try:
            earlier = _replay(revision.resolve, request, entry, seed)
        except ValueError:
            continue
        if _same(earlier, recorded):
            return Replayed(*earlier, revision=revision.name)
    if current is None:
        raise refusal
    return current


class RevisionTally:
    """:func:`replay_entry` that keeps, by seq, the mechanic of each entry that replayed
    under an earlier revision (``into``: any mapping, e.g. one shared with the processes
    a verification sends its replays to); ``counts`` gives them by mechanic."""

    def __init__(self, into: MutableMapping[int, str] | None = None) -> None:
        self.into: MutableMapping[int, str] = {} if into is None else into

    def __call__(self, entry: dict[str, Any], seed: str | None = None) -> Replayed:
        replayed = replay_entry(entry, seed)
        if replayed.revision is not None:
            # By seq: an entry replayed twice (a verification read again) counts once.
            self.into[entry["seq"]] = entry["mechanic"]
        return replayed

    def counts(self) -> dict[str, int]:
        """Entries replayed under an earlier revision, by mechanic."""
        return dict(sorted(Counter(self.into.values()).items()))


def words_of(mechanic_name: str, request: Any, outcome: Any) -> Words:
    """An entry in words: a roll through its mechanic's ``read``, a statement by its kind.
    An unknown mechanic is an :class:`UnknownMechanicError`, never a guess."""
    mechanic = MECHANICS.get(mechanic_name)
    if mechanic is None:
        return statement_words(mechanic_name, request)
    given = msgspec.convert(request, mechanic.input_type)
    return mechanic.read(given, msgspec.convert(outcome, mechanic.outcome_type))


def words_or_none(mechanic_name: str, request: Any, outcome: Any) -> Words | None:
    """:func:`words_of`, or None for an entry this server cannot read in words (a mechanic
    it does not declare, or a request of a form it does not know): listings say null."""
    try:
        return words_of(mechanic_name, request, outcome)
    except (UnknownMechanicError, msgspec.ValidationError, KeyError):
        return None


def statement_words(kind: str, request: Any) -> Words:
    """A signed statement of the log (not a roll) in words."""
    said = request if isinstance(request, dict) else {}
    if kind == "session.commit" and said.get("kind") == "chain":
        whose = f" for {said['player']}" if said.get("player") else ""
        text = (
            f"Hash-chain seed session {said['seed_id']}{whose}: {said['length']} links "
            f"committed to anchor {said['commitment'][:16]}…"
        )
    elif kind == "session.commit":
        text = f"Seed session {said['seed_id']} committed to {said['commitment'][:16]}…"
    elif kind == "session.renew":
        text = (
            f"Seed session {said['seed_id']}'s next chain, from nonce {said['first_nonce']}: "
            f"committed to anchor {said['commitment'][:16]}…"
        )
    elif kind == "session.reveal":
        text = (
            f"Seed session {said['seed_id']} revealed after {said['rolls']} roll(s) "
            f"({said['revealed_by']})"
        )
    elif kind == "table.policy":
        chosen = "refused" if said.get("chosen_seeds") is False else "allowed"
        supplied = "refused" if said.get("supplied_dice") is False else "allowed"
        drawn = "refused" if said.get("drawn_seeds") is False else "allowed"
        text = (
            f"Table policy: chosen seeds {chosen}, supplied dice {supplied}, "
            f"server-drawn seeds {drawn}"
        )
    elif kind == "audit.epoch":
        text = f"Seqs {said['lost_after'] + 1}..{said['resume_after']} were lost: {said['reason']}"
    elif kind == "key.retire":
        text = f"Key {said.get('key_id', '?')} retired"
    elif kind == "sealed.roll":
        text = (
            f"Sealed {said['mechanic']} roll (shown to: {_AUDIENCE_WORDS[said['audience']]}), "
            f"committed to {said['commitment'][:16]}…"
        )
    elif kind == "sealed.reveal":
        opening = said["opening"]
        opened = words_or_none(opening["mechanic"], opening["request"], opening["outcome"])
        text = f"Sealed roll at seq {said['seq']} revealed" + (
            f": {opened.text}" if opened is not None else ""
        )
    else:
        raise UnknownMechanicError(f"unknown mechanic {kind!r}")
    return Words(asked=kind, text=text)


#: Whom a sealed roll's VTT shows it to, in words.
_AUDIENCE_WORDS = {"gm": "roller and GM", "blind": "the GM only", "self": "the roller only"}


def _replay(
    resolve: Callable[[Any, DiceSource], Any],
    request: Any,
    entry: dict[str, Any],
    seed: str | None,
) -> Replayed:
    source: SeededDice | SuppliedDice
    if seed is not None:
        source = SeededDice(seed)
    else:
        grouped: dict[str, list[int]] = {}
        for die in entry["dice"]:
            grouped.setdefault(die["group"], []).append(die["face"])
        source = SuppliedDice(grouped)
    outcome = resolve(request, source)
    if isinstance(source, SuppliedDice):
        source.check_all_used()
    return Replayed(msgspec.to_builtins(source.dice), msgspec.to_builtins(outcome))


def _same(replayed: Replayed, recorded: list[Any]) -> bool:
    """Dice and outcome equal as the verifier compares them: their canonical JSON (so
    ``1`` is not ``true``)."""
    try:
        return jcs(list(replayed)) == jcs(recorded)
    except ValueError:
        return False


def _discover() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name == "declare":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register(module.SYSTEM)


_discover()
