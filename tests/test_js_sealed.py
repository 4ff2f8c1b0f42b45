"""Sealed rolls in verify.js, the one JavaScript core (docs/audit.md, rows 25-28).

Each log below is what an operator holding the real key can write: a hash-chain session
with a sealed roll of each audience, their reveals, and one never revealed; then each
attack on it, re-signed. verify.js must accept the honest log (listing the roll never
revealed), and name the first bad seq of each attack with the contract's words
(/work/briefs/sealed-format.md: ``a sealed roll``, ``reveals no sealed roll``,
``is revealed twice``, ``does not open the commitment of seq N``, ``does not derive from``).
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from fairroll.audit import Trust, load_signer, verify_entries
from fairroll.audit.entry import canonical
from fairroll.audit.signing import PublicKey
from fairroll.chain import HashChain
from fairroll.mechanics import MECHANICS, replay_entry
from fairroll.randomness import SeededDice
from fairroll.rules.tft import Contest, Contestant, resolve_contest
from support import TEST_SIGNING_KEY, LiveServer, built_typescript_client, run_node
from test_js_core import PINNED, VECTORS, VERIFY_JS, good_log, resigned

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "js" / "sealed_logs.mjs"
SEED_ID = "sSealedChain0001"
CLIENT_SEED = "mira-device-sealed-1"
CHAIN = HashChain("5e" * 32, 4)
BLINDS = ("b1" * 32, "b2" * 32, "b3" * 32, "b4" * 32)
AUDIENCES = ("gm", "blind", "self", "gm")
Log = list[dict[str, Any]]


def commitment(opening: dict[str, Any]) -> str:
    """The contract's commitment: SHA-256 of the domain line and the opening's JCS bytes."""
    return hashlib.sha256(b"fairroll/sealed/v1\n" + canonical(opening)).hexdigest()


def opening_of(nonce: int, blind: str) -> dict[str, Any]:
    """A TFT contest rolled sealed at ``nonce``: its dice from ``link:client_seed:nonce:blind``."""
    dice = SeededDice(f"{CHAIN.link(nonce)}:{CLIENT_SEED}:{nonce}:{blind}")
    request = Contest(
        a=Contestant(name="Mira", attribute=14, talents=1), b=Contestant(attribute=12)
    )
    outcome = resolve_contest(request, dice)
    return msgspec.to_builtins(
        {
            "blind": blind,
            "mechanic": "tft.contest",
            "request": request,
            "dice": dice.dice,
            "outcome": outcome,
        }
    )


def entry_like(template: dict[str, Any], seq: int, **fields: Any) -> dict[str, Any]:
    entry = copy.deepcopy(template)
    entry.update(seq=seq, certificate=None, **fields)
    return entry


def sealed_log() -> tuple[Log, list[dict[str, Any]]]:
    """Seq 1 the vectors' first roll (its key certified), 2 a chain's commitment, 3-5 a
    sealed roll of each audience, 6-8 their reveals, 9 a sealed roll never revealed."""
    log = good_log()
    first, commit, roll = log[0], log[7], log[8]
    entries = [first]
    entries.append(
        entry_like(
            commit,
            2,
            request={
                "commitment": CHAIN.anchor,
                "first_nonce": 1,
                "kind": "chain",
                "length": 4,
                "player": "Mira",
                "seed_id": SEED_ID,
            },
        )
    )
    openings = [opening_of(nonce, BLINDS[nonce - 1]) for nonce in range(1, 5)]
    sealed_seqs = [3, 4, 5, 9]
    for nonce, seq in enumerate(sealed_seqs, start=1):
        if seq == 9:
            for at in (3, 4, 5):
                entries.append(reveal(commit, len(entries) + 1, at, openings[at - 3]))
        entries.append(sealed_roll(roll, seq, nonce, AUDIENCES[nonce - 1], openings[nonce - 1]))
    return resigned(entries), openings


def sealed_roll(
    template: dict[str, Any], seq: int, nonce: int, audience: str, opening: dict[str, Any]
) -> dict[str, Any]:
    return entry_like(
        template,
        seq,
        mechanic="sealed.roll",
        source="committed",
        seed=None,
        dice=[],
        outcome=None,
        request={
            "mechanic": opening["mechanic"],
            "audience": audience,
            "commitment": commitment(opening),
        },
        session={
            "client_seed": CLIENT_SEED,
            "commitment": CHAIN.anchor,
            "first_nonce": 1,
            "link": CHAIN.link(nonce),
            "nonce": nonce,
            "seed_id": SEED_ID,
        },
    )


def reveal(template: dict[str, Any], seq: int, at: int, opening: dict[str, Any]) -> dict[str, Any]:
    return entry_like(
        template, seq, mechanic="sealed.reveal", request={"seq": at, "opening": opening}
    )


def attacked(edit: Any) -> Log:
    log, openings = sealed_log()
    edit(log, openings)
    return resigned(log)


def verdicts(tmp_path: Path, cases: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    said: dict[str, dict[str, Any]] = run_node(
        SCRIPT, VERIFY_JS, VECTORS / "keys.json", PINNED, path
    )
    return said


def text(log: Log) -> str:
    return "".join(json.dumps(entry) + "\n" for entry in log)


def test_sealed_rolls_of_each_audience_and_their_reveals_verify(tmp_path: Path) -> None:
    """Row 28: the three reveals open their rolls; the one never revealed verifies, listed."""
    log, _ = sealed_log()
    said = verdicts(tmp_path, {"honest": {"text": text(log)}})["honest"]
    assert said["ok"], said
    assert said["sealed_unrevealed"] == [9]
    assert (said["sealed_revealed"], said["sealed_unchecked"]) == (3, 0)


def test_a_reveal_of_a_roll_before_the_part_read_is_unchecked_not_bad(tmp_path: Path) -> None:
    """Row 28: read from seq 5, the reveals of seqs 3 and 4 cannot be checked: counted."""
    log, _ = sealed_log()
    case = {"text": text(log[4:]), "previousHash": log[3]["entry_hash"], "previousSeq": 4}
    said = verdicts(tmp_path, {"range": case})["range"]
    assert said["first_bad_seq"] is None, said
    assert (said["sealed_revealed"], said["sealed_unchecked"]) == (1, 2)
    assert said["sealed_unrevealed"] == [9]


def _edit_outcome(log: Log, openings: list[dict[str, Any]]) -> None:
    log[5]["request"]["opening"]["outcome"]["victor"] = "b"


def _edit_dice(log: Log, openings: list[dict[str, Any]]) -> None:
    die = log[5]["request"]["opening"]["dice"][0]
    die["face"] = die["face"] % 6 + 1


def _another_blind(log: Log, openings: list[dict[str, Any]]) -> None:
    # The operator commits to dice of a blind of its own, and reveals them with the
    # player's blind: the commitment opens, the dice do not derive.
    forged = copy.deepcopy(openings[0])
    forged["dice"] = opening_of(1, "0f" * 32)["dice"]
    log[2]["request"]["commitment"] = commitment(forged)
    log[5]["request"]["opening"] = forged


def _names_another_roll(log: Log, openings: list[dict[str, Any]]) -> None:
    log[5]["request"]["seq"] = 4
    log[6]["request"]["seq"] = 3


def _twice(log: Log, openings: list[dict[str, Any]]) -> None:
    log[7]["request"] = copy.deepcopy(log[5]["request"])


def _names_a_plain_roll(log: Log, openings: list[dict[str, Any]]) -> None:
    log[5]["request"]["seq"] = 1


def _names_a_later_seq(log: Log, openings: list[dict[str, Any]]) -> None:
    log[5]["request"]["seq"] = 9


def _roll_with_dice(log: Log, openings: list[dict[str, Any]]) -> None:
    log[2]["dice"] = openings[0]["dice"]


def _roll_drawn(log: Log, openings: list[dict[str, Any]]) -> None:
    log[2].update(source="drawn", seed="d1" * 32, session=None)


def _request_with_more(log: Log, openings: list[dict[str, Any]]) -> None:
    log[2]["request"]["dice"] = openings[0]["dice"]


ATTACKS = {
    "reveal-edited-outcome": (_edit_outcome, 6, "does not open the commitment of seq 3"),
    "reveal-edited-dice": (_edit_dice, 6, "does not open the commitment of seq 3"),
    "reveal-another-blind": (_another_blind, 6, "does not derive from"),
    "reveal-names-another-sealed-roll": (
        _names_another_roll,
        6,
        "does not open the commitment of seq 4",
    ),
    "reveal-twice": (_twice, 8, "is revealed twice"),
    "reveal-names-a-plain-roll": (_names_a_plain_roll, 6, "reveals no sealed roll"),
    "reveal-names-a-later-seq": (_names_a_later_seq, 6, "reveals no sealed roll"),
    "sealed-roll-with-dice": (_roll_with_dice, 3, "a sealed roll"),
    "sealed-roll-with-a-drawn-seed": (_roll_drawn, 3, "a sealed roll"),
    "sealed-roll-request-shows-more": (_request_with_more, 3, "a sealed roll"),
}


@pytest.fixture(scope="module")
def attack_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """verify.js's verdict on every attack, in one Node run."""
    cases = {name: {"text": text(attacked(edit))} for name, (edit, _, _) in ATTACKS.items()}
    return verdicts(tmp_path_factory.mktemp("sealed"), cases)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_verify_js_names_each_sealed_attack(
    attack_verdicts: dict[str, dict[str, Any]], name: str
) -> None:
    _, seq, words = ATTACKS[name]
    said = attack_verdicts[name]
    assert not said["ok"], said
    assert said["first_bad_seq"] == seq, said
    assert words in said["reason"], said


LIVE = ROOT / "tests" / "js" / "sealed_live.mjs"
#: What the live check says of each rewritten sealed answer (tests/js/sealed_live.mjs).
LIVE_ATTACKS = {
    "opening-does-not-open-the-commitment": "does not open the commitment of seq 2",
    "dice-from-another-blind": "does not derive from",
    "opening-of-another-blind": "the opening's blind is not the one this client drew",
    "entry-is-an-ordinary-roll": "the log's entry is not this sealed roll",
    "entry-seals-another-audience": "for 'self', not the dice.roll roll for 'gm'",
    "entry-seals-another-mechanic": "seals a dice.reroll roll for 'gm', not the dice.roll roll",
    "opening-of-another-request": "seals another request than the one this client sent",
    "answer-dice-not-the-openings": "not the ones its opening commits to",
    "reveal-of-an-opening-that-does-not-open": "does not open the commitment of seq 2",
}


@pytest.fixture(scope="module", params=["verify.js", "npm-client"])
def live(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The live check of a sealed roll, by the core the page runs and by the npm client."""
    if request.param == "verify.js":
        said: dict[str, Any] = run_node(LIVE, VERIFY_JS)
    else:
        with built_typescript_client() as dist:
            said = run_node(LIVE, dist)
    return said


def test_an_honest_sealed_roll_is_checked_and_its_opening_revealed(live: dict[str, Any]) -> None:
    """The blind is drawn by the client, the opening opens the log's commitment, and the
    reveal publishes it as a sealed.reveal statement."""
    honest = live["honest"]
    assert honest["ok"], honest
    assert (honest["audience"], honest["seq"], honest["blind"], honest["opened"]) == (
        "gm",
        2,
        True,
        True,
    )
    assert (honest["revealed"], honest["reveals"]) == ("sealed.reveal", 1)


@pytest.mark.parametrize("attack", sorted(LIVE_ATTACKS))
def test_a_rewritten_sealed_answer_raises_unfair_roll_error(
    live: dict[str, Any], attack: str
) -> None:
    said = live[attack]
    assert not said["ok"] and said["unfair"], said
    assert LIVE_ATTACKS[attack] in said["why"], said


def test_an_opening_that_does_not_open_is_never_published(live: dict[str, Any]) -> None:
    """revealSealed checks the opening against the log's sealed entry before it posts."""
    assert live["posted_reveals"] == 0


def test_a_refused_sealed_roll_keeps_its_blind_at_its_nonce(live: dict[str, Any]) -> None:
    """The server sees a sealed roll's blind, so its dice, before it answers: a refusal
    (a 429 here, any status) followed by a fresh blind at the same nonce would let it turn
    down dice it dislikes and take others. The client draws one blind per nonce, whatever
    the roll asked there, so the dice at a nonce are fixed as a plain roll's are."""
    said = live["a-refusal-keeps-the-blind-of-its-nonce"]
    assert said["ok"], said
    assert said["refusals"] == [429, 429], said
    assert {b["nonce"] for b in said["blinds"]} == {1}, said
    assert len({b["blind"] for b in said["blinds"]}) == 1, said
    assert said["opened"] == said["blinds"][0]["blind"], said


def test_every_mechanic_is_rolled_at_the_path_its_name_says() -> None:
    """The live check of a sealed answer reads the mechanic sealed from the path sent
    (live.js ``mechanicAt``: ``/v1/<system>/<part>s`` rolls ``<system>.<part>``), so an
    operator cannot seal another mechanic whose request holds every field sent."""
    for name, mechanic in MECHANICS.items():
        system, part = name.split(".", 1)
        assert (mechanic.system, mechanic.path) == (system, f"/{part}s"), name


REAL = ROOT / "tests" / "js" / "sealed_real.mjs"
SERVER_ROOT = load_signer(key=TEST_SIGNING_KEY, key_file=None, dev_dir=None).key_id


@pytest.fixture(scope="module")
def real(live_server: LiveServer) -> dict[str, Any]:
    """The npm client's sealed rolls against a real server (tests/js/sealed_real.mjs)."""
    with built_typescript_client() as dist:
        said: dict[str, Any] = run_node(
            REAL, dist, live_server.url, SERVER_ROOT, "t-sealed-npm", timeout=180
        )
    return said


def test_the_npm_client_rolls_sealed_for_each_audience_under_the_pinned_root(
    real: dict[str, Any],
) -> None:
    """Each audience's roll is checked live (verified) and logged as a sealed.roll of the
    mechanic and audience sent, with no dice; its blind is the client's own."""
    blinds = set()
    for audience, rolled in real["rolls"].items():
        entry = rolled["entry"]
        assert rolled["verified"], rolled
        assert (entry["mechanic"], entry["dice"], entry["outcome"]) == ("sealed.roll", [], None)
        assert entry["request"]["audience"] == audience
        assert entry["request"]["mechanic"] == rolled["mechanic"] == "dice.roll"
        blinds.add(rolled["blind"])
    assert len(blinds) == 3  # a fresh blind for every roll


def test_a_revealed_sealed_roll_verifies_and_the_others_are_listed(real: dict[str, Any]) -> None:
    """Row 28 through the npm client's verifyExport: the reveal checks, the two sealed
    rolls never revealed are listed, not bad."""
    verdict, gm = real["verdict"], real["rolls"]["gm"]
    assert real["reveal"]["receipt"]["seq"] > gm["seq"]
    assert verdict["ok"], verdict
    assert verdict["sealed_unrevealed"] == [
        real["rolls"]["blind"]["seq"],
        real["rolls"]["self"]["seq"],
    ]
    assert verdict["sealed_revealed"] == 1


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("opening-does-not-open-the-commitment", "does not open the commitment"),
        ("dice-of-another-blind", "the opening's blind is not the one this client drew"),
        ("receipt-of-another-roll", "the log's entry is not this sealed roll"),
        ("commitment-recomputed-for-other-dice", "does not open the commitment"),
    ],
)
def test_the_npm_client_refuses_a_rewritten_sealed_answer_of_a_real_server(
    real: dict[str, Any], attack: str, said: str
) -> None:
    assert not real[attack]["ok"] and real[attack]["unfair"], real[attack]
    assert said in real[attack]["why"]


SEALED_CASES = {
    case["name"]: case
    for case in json.loads((VECTORS / "cases" / "index.json").read_text())["cases"]
    if case["class"] == "sealed rolls" and case["expect"]["ok"]
}


@pytest.mark.parametrize("name", sorted(SEALED_CASES))
def test_verify_js_lists_the_sealed_rolls_of_each_vector_as_the_python_core(
    tmp_path: Path, name: str
) -> None:
    """Row 28 held to one verdict: verify.js's sealed_unrevealed, sealed_revealed and
    sealed_unchecked are the Python core's, for each good sealed-roll vector (one read
    from an archive base)."""
    inputs = SEALED_CASES[name]["inputs"]
    lines = (VECTORS / inputs["log"]).read_text().splitlines()
    served = json.loads((VECTORS / "keys.json").read_text())
    trust = Trust.published(msgspec.convert(served["keys"], list[PublicKey]))
    case: dict[str, Any] = {"text": "\n".join(lines) + "\n"}
    if "base" in inputs:
        kept = json.loads((VECTORS / inputs["base"]).read_text())
        trust = dataclasses.replace(
            trust,
            base=(kept["size"], kept["head_hash"]),
            base_frontier=[base64.b64decode(h) for h in kept["frontier"]],
        )
        case |= {
            "previousHash": kept["head_hash"],
            "previousSeq": kept["size"],
            "frontier": kept["frontier"],
        }
    report = verify_entries(lines, dataclasses.replace(trust, root=inputs["root"]))
    said = verdicts(tmp_path, {name: case})[name]
    assert said["ok"] and report.ok, (said, report.reason)
    assert (said["sealed_unrevealed"], said["sealed_revealed"], said["sealed_unchecked"]) == (
        report.sealed_unrevealed,
        report.sealed_revealed,
        report.sealed_unchecked,
    )


def _mutations(rng: random.Random) -> list[tuple[str, Log]]:
    """Sealed logs edited field by field where a sealed roll or a reveal lives (its
    request, session, dice, the opening's every field), re-signed with the real key: what
    an operator can make. An edit that recommits (the commitment recomputed over the edited
    opening) edits dice or blind only: an outcome the rules would not give is the Python
    core's alone to catch (the JavaScript core does not replay the rules)."""
    base, _ = sealed_log()
    sealed_at = [index for index, entry in enumerate(base) if entry["mechanic"] == "sealed.roll"]
    reveal_at = [index for index, entry in enumerate(base) if entry["mechanic"] == "sealed.reveal"]
    values: list[Any] = [None, 0, 1, -1, 2**53 - 1, "", "gm", "x", "ab" * 32, [], {}, True]
    made: list[tuple[str, Log]] = []
    while len(made) < 80:
        log = copy.deepcopy(base)
        at = rng.choice(sealed_at + reveal_at)
        entry = log[at]
        if entry["mechanic"] == "sealed.roll":
            target, name = rng.choice(
                [(entry, "source"), (entry, "dice"), (entry, "outcome"), (entry, "seed")]
                + [(entry["request"], key) for key in ("mechanic", "audience", "commitment")]
                + [(entry["session"], key) for key in ("link", "nonce", "client_seed")]
            )
        else:
            opening = entry["request"]["opening"]
            target, name = rng.choice(
                [(entry["request"], "seq"), (entry["request"], "opening"), (entry, "source")]
                + [(opening, key) for key in ("blind", "mechanic", "request", "dice", "outcome")]
                + [(opening["dice"][0], "face"), (opening, "extra")]
            )
        target[name] = rng.choice(values)
        if rng.random() < 0.3 and entry["mechanic"] == "sealed.reveal":
            opening = entry["request"]["opening"]
            sealed = next(e for e in log if e["seq"] == base[at]["request"]["seq"])
            if name in ("blind", "face") and isinstance(opening, dict):
                try:
                    sealed["request"]["commitment"] = commitment(opening)
                except ValueError:
                    continue  # no canonical form: nothing to recommit
                name += "+recommitted"
        made.append((f"{len(made):02d}-{entry['mechanic']}-{name}", resigned(log)))
    return made


def test_verify_js_gives_the_python_cores_verdict_on_mutated_sealed_logs(tmp_path: Path) -> None:
    """A small differential fuzzer of rows 25-27: every mutated log gets one verdict (ok
    and the first bad seq) from both cores."""
    rng = random.Random(4545)
    cases = _mutations(rng)
    served = json.loads((VECTORS / "keys.json").read_text())
    trust = dataclasses.replace(
        Trust.published(msgspec.convert(served["keys"], list[PublicKey])), root=PINNED
    )
    said = verdicts(tmp_path, {name: {"text": text(log)} for name, log in cases})
    disagree = []
    for name, log in cases:
        report = verify_entries([json.dumps(entry) for entry in log], trust, replay=replay_entry)
        mine = said[name]
        if (mine["ok"], mine["first_bad_seq"]) != (report.ok, report.first_bad_seq):
            disagree.append((name, mine, report.first_bad_seq, report.reason))
    assert disagree == []
