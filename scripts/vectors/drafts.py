"""The drafts the logs are made of: a roll of each source (a TFT contest), and each
statement kind a seed session needs (commit, renew, reveal), as the server drafts them."""

from __future__ import annotations

from typing import Any

from fairroll.audit.entry import COMMIT_MECHANIC, RENEW_MECHANIC, REVEAL_MECHANIC, Draft, Session
from fairroll.chain import HashChain
from fairroll.randomness import SeededDice, SuppliedDice, commitment_of, committed_seed
from fairroll.rules.tft import Contest, Contestant, resolve_contest
from vectors.fixed import CHAIN_ID, CHAIN_LASTS, CLIENT_SEEDS, DRAWN, SEED_ID, SERVER_SEED, TABLE


def contest(source: SeededDice | SuppliedDice) -> tuple[Contest, Any]:
    request = Contest(
        a=Contestant(name="Roth", attribute=16, talents=2), b=Contestant(attribute=12)
    )
    return request, resolve_contest(request, source)


def roll_draft(source: SeededDice | SuppliedDice, kind: str, **extra: Any) -> Draft:
    request, outcome = contest(source)
    return Draft(
        table=TABLE,
        mechanic="tft.contest",
        request=request,
        source=kind,  # type: ignore[arg-type]
        seed=extra.pop("seed", None),
        dice=source.dice,
        outcome=outcome,
        **extra,
    )


def statement(mechanic: str, request: dict[str, Any]) -> Draft:
    return Draft.statement(TABLE, mechanic, request)


def rolled(
    kind: str, seed: str | None = None, dice: dict[str, list[int]] | None = None, **extra: Any
) -> Draft:
    """A TFT contest roll of source ``kind``: dice from ``seed`` or ``dice`` as given."""
    if dice is not None:
        return roll_draft(SuppliedDice(dice), kind, seed=seed, **extra)
    return roll_draft(SeededDice(seed or ""), kind, seed=seed, **extra)


def committed(seed_id: str, secret: str, client_seed: str, nonce: int, **chain: Any) -> Draft:
    """A committed roll: in a hash-chain session (``link``, ``first_nonce`` given), its
    dice derive from the link; in a commit-reveal one, from the secret server seed."""
    link = chain.get("link")
    seed = committed_seed(link or secret, client_seed, nonce)
    commitment = chain.get("anchor") or commitment_of(secret)
    session = Session(
        seed_id=seed_id,
        commitment=commitment,
        client_seed=client_seed,
        nonce=nonce,
        link=link,
        first_nonce=chain.get("first_nonce"),
    )
    return roll_draft(SeededDice(seed), "committed", session=session)


def chain_commit(seed_id: str, chain: HashChain, first_nonce: int = 1, **more: Any) -> Draft:
    request = {
        "seed_id": seed_id,
        "kind": "chain",
        "commitment": chain.anchor,
        "length": chain.length,
        "first_nonce": first_nonce,
    }
    if "previous" in more:
        return statement(RENEW_MECHANIC, {**request, "previous": more["previous"]})
    return statement(COMMIT_MECHANIC, {**request, "player": "Roth"})


def chain_roll(seed_id: str, chain: HashChain, start: int, nonce: int, client_seed: str) -> Draft:
    link = chain.link(nonce - start + 1)
    return committed(
        seed_id, "", client_seed, nonce, link=link, anchor=chain.anchor, first_nonce=start
    )


def reveal(seed_id: str, secret: str, rolls: int, commitment: str | None = None) -> Draft:
    return statement(
        REVEAL_MECHANIC,
        {
            "seed_id": seed_id,
            "commitment": commitment or commitment_of(secret),
            "server_seed": secret,
            "rolls": rolls,
            "revealed_by": "request",
        },
    )


def chain_drafts(client_seeds: tuple[str, str] = CLIENT_SEEDS) -> list[Draft]:
    """A hash-chain session: its commitment, two rolls, its renewal, one more roll. The
    player draws a new client seed for each chain (``client_seeds``: the first chain's,
    the second's), after it saw that chain's anchor committed."""
    first, second = (HashChain(last, 2) for last in CHAIN_LASTS)
    drafts = [
        statement(
            COMMIT_MECHANIC,
            {
                "seed_id": CHAIN_ID,
                "kind": "chain",
                "commitment": first.anchor,
                "length": 2,
                "first_nonce": 1,
                "player": "Roth",
            },
        )
    ]
    for nonce, chain, start in ((1, first, 1), (2, first, 1), (3, second, 3)):
        if nonce == 3:
            drafts.append(
                statement(
                    RENEW_MECHANIC,
                    {
                        "seed_id": CHAIN_ID,
                        "kind": "chain",
                        "commitment": second.anchor,
                        "length": 2,
                        "first_nonce": 3,
                        "previous": first.anchor,
                    },
                )
            )
        link = chain.link(nonce - start + 1)
        client_seed = client_seeds[0 if chain is first else 1]
        session = Session(
            seed_id=CHAIN_ID,
            commitment=chain.anchor,
            client_seed=client_seed,
            nonce=nonce,
            link=link,
            first_nonce=start,
        )
        dice = SeededDice(committed_seed(link, client_seed, nonce))
        drafts.append(roll_draft(dice, "committed", session=session))
    return drafts


def good_drafts(client_seeds: tuple[str, str] = CLIENT_SEEDS) -> list[Draft]:
    """The good log's drafts (``build``'s), to be varied by one draft per case."""
    commitment = commitment_of(SERVER_SEED)
    return [
        roll_draft(SeededDice(DRAWN), "drawn", seed=DRAWN),
        roll_draft(SeededDice("campaign-7/roll-12"), "chosen", seed="campaign-7/roll-12"),
        roll_draft(SuppliedDice({"a": [6, 5, 5, 4, 2, 2, 1], "b": [5, 4, 4, 4]}), "supplied"),
        statement(COMMIT_MECHANIC, {"seed_id": SEED_ID, "commitment": commitment}),
        committed(SEED_ID, SERVER_SEED, "player-1", 1),
        committed(SEED_ID, SERVER_SEED, "gm", 2),
        reveal(SEED_ID, SERVER_SEED, 2),
        *chain_drafts(client_seeds),
    ]


def varied(index: int, draft: Draft, drafts: list[Draft] | None = None) -> list[Draft]:
    out = list(drafts or good_drafts())
    out[index] = draft
    return out
