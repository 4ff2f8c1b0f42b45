"""Conformance cases of the class "sealed rolls" (rows 25-28 of docs/audit.md's checks
table): sealed rolls and their reveals, good, never revealed, revealed before the part
read; and one attack each on the reveal (an opening that does not match: edited outcome,
edited dice, another blind; another roll's; a second; of a plain entry; of a later seq;
of seq 0) and on the sealed entry (with dice, with a drawn seed, in a commit-reveal session, and
committing to an opening whose dice or outcome the seed and rules do not give)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from fairroll.audit.entry import COMMIT_MECHANIC, Draft, Session
from fairroll.audit.sealed import (
    SEALED_REVEAL_MECHANIC,
    SEALED_ROLL_MECHANIC,
    opening_commitment,
    sealed_seed,
)
from fairroll.chain import HashChain
from fairroll.randomness import SeededDice, commitment_of
from vectors.case import Cases
from vectors.drafts import committed, contest, statement
from vectors.fixed import DRAWN, SEED_ID, SERVER_SEED, TABLE, Log
from vectors.logs import checkpoint_of, frontier_of, sealed

#: The sealed session: a chain of four links, Roth's client seed, a blind per roll.
SEALED_ID = "sVectorsSealed001"
SEALED_LAST = "5ea1" * 16
SEALED_CLIENT_SEED = "roth-sealed-chain-1"
BLINDS = ("b1" * 32, "b2" * 32, "b3" * 32, "b4" * 32)
AUDIENCES = ("gm", "blind", "self", "gm")
CHAIN = HashChain(SEALED_LAST, 4)


def add(made: Cases, log: Log, signer: Any, checkpoint: Any) -> None:
    """Sealed rolls: each case of the class, appended to ``made``."""
    case = made.add
    openings = [_opening(nonce) for nonce in (1, 2, 3, 4)]
    rolls = [_roll(nonce, openings[nonce - 1]) for nonce in (1, 2, 3, 4)]
    commit = _commit()
    # seq 1 commit, 2..4 sealed rolls (gm, blind, self), 5..7 their reveals.
    good = [commit, *rolls[:3], _reveal(2, openings[0]), _reveal(4, openings[2])]
    good.append(_reveal(3, openings[1]))
    good_log = sealed(good)
    case(
        "sealed-rolls-revealed",
        "sealed rolls",
        "three sealed rolls (audiences gm, blind, self) and their reveals (nothing wrong)",
        good_log,
        ok=True,
    )
    case(
        "sealed-roll-never-revealed",
        "sealed rolls",
        "sealed rolls at seq 3 and 4 never revealed: listed (sealed_unrevealed [3, 4]), not bad",
        sealed(good[:5]),
        ok=True,
    )
    base = case(
        "sealed-reveal-before-the-part-read",
        "sealed rolls",
        "an archived log from its base at seq 4: the reveals of seq 2, 4 and 3 name rolls "
        "before the part read (sealed_unchecked 3), not bad",
        good_log[4:],
        ok=True,
    )
    base.json_file("base", checkpoint_of(good_log, 4, frontier=frontier_of(good_log, 4)))
    for name, edit in (
        ("sealed-reveal-edited-outcome", "an edited outcome"),
        ("sealed-reveal-edited-dice", "an edited die"),
        ("sealed-reveal-another-blind", "another blind"),
    ):
        forged = _edited(openings[0], name.rsplit("-", 1)[1])
        case(
            name,
            "sealed rolls",
            f"a reveal of the sealed roll at seq 2 whose opening has {edit}",
            sealed([*good[:4], _reveal(2, forged)]),
            seq=5,
            reason="does not open the commitment of seq 2",
        )
    case(
        "sealed-reveal-of-another-roll",
        "sealed rolls",
        "a reveal naming the sealed roll at seq 3 with the opening of seq 2's",
        sealed([*good[:4], _reveal(3, openings[0])]),
        seq=5,
        reason="does not open the commitment of seq 3",
    )
    case(
        "sealed-revealed-twice",
        "sealed rolls",
        "the sealed roll at seq 2 revealed a second time",
        sealed([*good[:5], _reveal(2, openings[0])]),
        seq=6,
        reason="is revealed twice",
    )
    case(
        "sealed-reveal-of-a-plain-entry",
        "sealed rolls",
        "a reveal naming seq 1, the session's commitment, not a sealed roll",
        sealed([*good[:4], _reveal(1, openings[0])]),
        seq=5,
        reason="reveals no sealed roll",
    )
    case(
        "sealed-reveal-of-a-later-seq",
        "sealed rolls",
        "a reveal at seq 5 naming the sealed roll at seq 6, after it",
        sealed([*good[:4], _reveal(6, openings[3]), rolls[3]]),
        seq=5,
        reason="reveals no sealed roll",
    )
    case(
        "sealed-reveal-of-seq-zero",
        "sealed rolls",
        "a reveal naming seq 0 in a log read from seq 1: no part of the log lies before it, "
        "so it reveals no sealed roll (not a roll before the part read, left unchecked)",
        sealed([*good[:4], _reveal(0, openings[0])]),
        seq=5,
        reason="reveals no sealed roll",
    )
    with_dice = msgspec.structs.replace(rolls[0], dice=tuple(openings[0]["dice_structs"]))
    case(
        "sealed-roll-with-dice",
        "sealed rolls",
        "a sealed roll whose entry shows its dice",
        sealed([commit, with_dice]),
        seq=2,
        reason="a sealed roll",
    )
    drawn = msgspec.structs.replace(rolls[0], source="drawn", seed=DRAWN, session=None, claim=None)
    case(
        "sealed-roll-with-a-drawn-seed",
        "sealed rolls",
        "a sealed roll with a server-drawn seed, not in a seed session",
        sealed([commit, drawn]),
        seq=2,
        reason="a sealed roll",
    )
    plain = committed(SEED_ID, SERVER_SEED, "player-1", 1)
    in_commit_reveal = msgspec.structs.replace(
        rolls[0], session=plain.session, request=rolls[0].request
    )
    case(
        "sealed-roll-in-a-commit-reveal-session",
        "sealed rolls",
        "a sealed roll in a commit-reveal session (no link: its dice would stay secret "
        "until the session's reveal, and could not be checked at its own)",
        sealed(
            [
                statement(COMMIT_MECHANIC, {"seed_id": SEED_ID, "commitment": _c()}),
                in_commit_reveal,
            ]
        ),
        seq=2,
        reason="a sealed roll",
    )
    ground = _ground(openings[0])
    case(
        "sealed-roll-committing-to-ground-dice",
        "sealed rolls",
        "a sealed roll committing to dice of another seed (and the outcome they give), "
        "opened: the commitment opens, the dice do not derive",
        sealed([commit, _roll(1, ground), _reveal(2, ground)]),
        seq=3,
        reason="does not derive from",
    )
    wrong = copy.deepcopy(_public(openings[0]))
    wrong["outcome"]["victor"] = "b" if wrong["outcome"].get("victor") == "a" else "a"
    case(
        "sealed-roll-committing-to-another-outcome",
        "sealed rolls",
        "a sealed roll committing to its own dice with an outcome the rules do not give, "
        "opened: only replaying the rules catches it",
        sealed([commit, _roll(1, wrong), _reveal(2, wrong)]),
        seq=3,
        reason="outcome is not the one the rules give",
        needs=["rules"],
    )
    other = {**_public(openings[0]), "mechanic": "dice.roll"}
    sealed_as = msgspec.structs.replace(
        _roll(1, other), request={**_roll(1, other).request, "mechanic": "tft.contest"}
    )
    case(
        "sealed-reveal-of-another-mechanic",
        "sealed rolls",
        "a reveal whose opening names another mechanic than the one the roll sealed",
        sealed([commit, sealed_as, _reveal(2, other)]),
        seq=3,
        reason="mechanic is not the one",
    )


def _c() -> str:
    return commitment_of(SERVER_SEED)


def _commit() -> Draft:
    return statement(
        COMMIT_MECHANIC,
        {
            "seed_id": SEALED_ID,
            "kind": "chain",
            "commitment": CHAIN.anchor,
            "length": CHAIN.length,
            "first_nonce": 1,
            "player": "Roth",
        },
    )


def _session(nonce: int) -> Session:
    return Session(
        seed_id=SEALED_ID,
        commitment=CHAIN.anchor,
        client_seed=SEALED_CLIENT_SEED,
        nonce=nonce,
        link=CHAIN.link(nonce),
        first_nonce=1,
    )


def _opening(nonce: int) -> dict[str, Any]:
    """The opening of the sealed TFT contest with ``nonce`` (and its dice as structs,
    under ``dice_structs``, which the public form leaves out)."""
    blind = BLINDS[nonce - 1]
    source = SeededDice(sealed_seed(CHAIN.link(nonce), SEALED_CLIENT_SEED, nonce, blind))
    request, outcome = contest(source)
    opening = {
        "blind": blind,
        "mechanic": "tft.contest",
        "request": msgspec.to_builtins(request),
        "dice": msgspec.to_builtins(source.dice),
        "outcome": msgspec.to_builtins(outcome),
    }
    return {**opening, "dice_structs": source.dice}


def _public(opening: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in opening.items() if k != "dice_structs"}


def _roll(nonce: int, opening: dict[str, Any]) -> Draft:
    public = _public(opening)
    return Draft(
        table=TABLE,
        mechanic=SEALED_ROLL_MECHANIC,
        request={
            "mechanic": public["mechanic"],
            "audience": AUDIENCES[nonce - 1],
            "commitment": opening_commitment(public),
        },
        source="committed",
        seed=None,
        dice=(),
        outcome=None,
        session=_session(nonce),
    )


def _reveal(seq: int, opening: dict[str, Any]) -> Draft:
    return statement(SEALED_REVEAL_MECHANIC, {"seq": seq, "opening": _public(opening)})


def _edited(opening: dict[str, Any], what: str) -> dict[str, Any]:
    forged = copy.deepcopy(_public(opening))
    if what == "outcome":
        forged["outcome"]["victor"] = "b" if forged["outcome"].get("victor") == "a" else "a"
    elif what == "dice":
        die = forged["dice"][0]
        die["face"] = die["face"] % die["sides"] + 1
    else:
        forged["blind"] = "0f" * 32
    return forged


def _ground(opening: dict[str, Any]) -> dict[str, Any]:
    """The opening with dice from a seed the operator picked, and the outcome they give."""
    source = SeededDice("ground by the operator")
    request, outcome = contest(source)
    return {
        **_public(opening),
        "request": msgspec.to_builtins(request),
        "dice": msgspec.to_builtins(source.dice),
        "outcome": msgspec.to_builtins(outcome),
    }
