"""The Python client replays every answer's outcome and words, and holds the server to
one history (issue 38; docs/audit.md, rows 22 and 23).

An answer's ``words`` are the server's text, not in the log, and a receipt proves its
entry only in *a* tree signed under the root: an operator holding the key could answer
"a natural 20, critical hit" for a 3, or show one player a tree of its own with the
player's entry edited, re-hashed and re-signed. The client re-resolves each answer with
the server's own mechanics (vendored) from the request it sent and the dice it derived,
says it in words itself, and keeps the last checkpoint it verified per table, asking the
server to prove every later note consistent with it. Each attack here passed the client
before (the red team's probes 1 and 2, ``test_attack_probe.py``) and is refused now.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

import test_py_client_live as live
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.entry import canonical, chain_hash, leaf_hash
from fairroll.audit.merkle import tree_hash_of
from fairroll.mechanics import MECHANICS
from support import TEST_ROOT, LiveServer

ROOT = Path(__file__).resolve().parents[1]
SPEC = json.loads((ROOT / "openapi" / "openapi.json").read_text())
Rewrite = live.Rewrite
answering, operator, said = live.answering, live.operator, live.said
pass_through, roll_answer = live.pass_through, live.roll_answer
VERIFIED = f"verified under root {TEST_ROOT}"
_players: list[Any] = []


def player(*args: Any, **options: Any) -> Any:
    """``test_py_client_live.player``, closed (with its transport) after the test."""
    dice = live.player(*args, **options)
    _players.append(dice)
    return dice


@pytest.fixture(autouse=True)
def _close_players() -> Iterator[None]:
    yield
    while _players:
        dice = _players.pop()
        dice.close()
        dice.operator.real.close()


# -- a tree of the operator's own -----------------------------------------------------


def _split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def inclusion(index: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 9162 2.1.3.1: the audit path of ``leaves[index]``."""
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return [*inclusion(index, leaves[:k]), tree_hash_of(leaves[k:])]
    return [*inclusion(index - k, leaves[k:]), tree_hash_of(leaves[:k])]


def consistency(old: int, leaves: list[bytes], whole: bool = True) -> list[bytes]:
    """RFC 9162 2.1.4.1: the proof that the first ``old`` leaves are a prefix."""
    if old == len(leaves):
        return [] if whole else [tree_hash_of(leaves)]
    k = _split(len(leaves))
    if old <= k:
        return [*consistency(old, leaves[:k], whole), tree_hash_of(leaves[k:])]
    return [*consistency(old - k, leaves[k:], False), tree_hash_of(leaves[:k])]


def reseal(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry's hash and signature made again with the operator's key."""
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
    entry["signature"] = operator().sign(entry["entry_hash"])
    return entry


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


class Fork:
    """The real log with one entry replaced, as a tree the operator signs with its key:
    it answers the roll's receipt, the entry and (``proves``) consistency proofs from it."""

    def __init__(self, server: LiveServer, *, proves: bool) -> None:
        self.server = server
        self.proves = proves
        self.leaves: list[bytes] = []
        self.entries: dict[int, dict[str, Any]] = {}

    def answer(self, body: dict[str, Any], seq: int, edit: Callable[[dict[str, Any]], None]) -> Any:
        """The roll's answer moved into a fork whose entry ``seq`` is ``edit``-ed (the
        roll's own entry, or one before it)."""
        receipt = body["receipt"]
        size, table = receipt["tree_size"], receipt["table"]
        with httpx.Client(base_url=self.server.url) as http:
            lines = http.get(f"/v1/tables/{table}/export").text.splitlines()[:size]
        entries = [json.loads(line) for line in lines]
        forked = copy.deepcopy(entries[seq - 1])
        edit(forked)
        reseal(forked)
        entries[seq - 1] = self.entries[seq] = forked
        self.leaves = [leaf_hash(canonical(e)) for e in entries]
        root = tree_hash_of(self.leaves)
        mine = receipt["seq"]
        note = sign_checkpoint(operator(), table, size, root, entries[-1]["entry_hash"])
        receipt.update(
            checkpoint=note.text,
            proof=[b64(h) for h in inclusion(mine - 1, self.leaves)],
            entry_hash=entries[mine - 1]["entry_hash"],
            leaf_hash=b64(self.leaves[mine - 1]),
        )
        if seq == mine:
            body["outcome"] = forked["outcome"]
        return body

    def rewrite(
        self, request: httpx.Request, answer: httpx.Response | None
    ) -> httpx.Response | None:
        path = request.url.path
        if answer is None and request.method == "GET" and "/entries/" in path:
            seq = int(path.rsplit("/", 1)[1])
            return answering(self.entries[seq]) if seq in self.entries else None
        if answer is None and self.proves and path.endswith("/proofs/consistency"):
            low, high = int(request.url.params["from"]), int(request.url.params["to"])
            if high == len(self.leaves):
                proof = consistency(low, self.leaves)
                return answering({"from": low, "to": high, "proof": [b64(h) for h in proof]})
        return None


def forking(
    server: LiveServer, *, proves: bool, edit: Callable[[dict[str, Any]], None], back: int = 0
) -> tuple[Fork, Rewrite]:
    """An operator answering the next roll from a fork: the entry ``back`` seqs before
    the roll's ``edit``-ed; consistency proofs forged too when ``proves``."""
    fork = Fork(server, proves=proves)
    done: list[bool] = []

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        instead = fork.rewrite(request, answer)
        if instead is not None or done or not roll_answer(request, answer):
            return instead
        assert answer is not None
        body = said(answer)
        done.append(True)
        return answering(fork.answer(body, body["receipt"]["seq"] - back, edit))

    return fork, rewrite


def another_total(entry: dict[str, Any]) -> None:
    """The outcome an operator would like: a total the dice do not give."""
    face = entry["dice"][0]["face"]
    entry["outcome"]["total"] = 20 if face != 20 else 19


# -- 6. words are the server's text: the client says them itself ----------------------


def test_forged_words_are_unfair(fc: ModuleType, live_server: LiveServer) -> None:
    """Probe 1: the answer's words say "a natural 20, critical hit" whatever the die
    shows (the log's entry and the outcome are the real ones). The old client returned
    them as verified."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if not roll_answer(request, answer):
            return None
        assert answer is not None
        body = said(answer)
        body["words"]["text"] = "20 — a natural 20, critical hit"
        body["words"]["critical"] = True
        return answering(body)

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.UnfairRollError, match="words"):
        dice.roll_formula("1d20", table=dice.table)


def test_a_flag_of_the_words_alone_is_unfair(fc: ModuleType, live_server: LiveServer) -> None:
    """Only ``success`` turned round (what a bot acts on), the text left alone."""
    _, path, asked = next(r for r in requests_of_every_mechanic() if r[0] == "stat-skill.check")

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if answer is None or request.url.path != path:
            return None
        body = said(answer)
        body["words"]["success"] = not body["words"]["success"]
        return answering(body)

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.UnfairRollError, match="words"):
        dice.roll(path, {**asked, "table": dice.table})


def requests_of_every_mechanic() -> list[tuple[str, str, dict[str, Any]]]:
    """(mechanic, path, request) for each example of each mechanic in the served spec,
    without its seed or dice: rolled in the player's session instead."""
    found = []
    for name, mechanic in sorted(MECHANICS.items()):
        path = f"/v1/{mechanic.system}{mechanic.path}"
        body = SPEC["paths"][path]["post"]["requestBody"]["content"]
        examples = body["application/json"].get("examples", {})
        for example in examples.values():
            asked = {k: v for k, v in example["value"].items() if k not in ("seed", "dice")}
            found.append((name, path, asked))
    return found


def test_every_mechanic_is_replayed_and_said_in_words_by_the_client(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """No false alarm: every example of every mechanic, rolled honestly, has its outcome
    re-resolved and its words derived here, equal to the server's (a mechanic the client
    could not replay would say so in ``checked``)."""
    dice = player(fc, live_server, pass_through, root=TEST_ROOT, length=100)
    rolled = set()
    for name, path, asked in requests_of_every_mechanic():
        answer = dice.roll(path, {**asked, "table": dice.table})
        assert answer["checked"] == VERIFIED, (name, answer["checked"])
        rolled.add(name)
    assert rolled == set(MECHANICS)


def test_a_request_the_log_holds_with_a_field_added_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The operator rolls the player's ``1d20`` with a field the player did not send (a
    dialect that reads the formula its own way): the fields sent are all there, but the
    request the log holds is not the one sent."""

    def rewrite(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if (
            answer is not None
            or request.method != "POST"
            or not request.url.path.endswith("/dice/rolls")
        ):
            return None
        body = json.loads(request.content)
        body["dialect"] = "foundry"
        headers = {k: v for k, v in request.headers.items() if k != "content-length"}
        with httpx.Client() as http:
            real = http.post(str(request.url), headers=headers, content=json.dumps(body))
        return answering(said(real), real.status_code)

    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.UnfairRollError, match="another request than the one sent"):
        dice.roll_formula("1d20", table=dice.table)


# -- 2. a fork: the outcome replayed, the kept checkpoint ------------------------------


def test_a_forked_entry_whose_outcome_does_not_follow_from_its_dice_is_unfair(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """Probe 2, the operator thorough: the player's entry edited (another total),
    re-hashed, re-signed, in a tree of its own whose note it signs with the real key, and
    the consistency proof from the player's kept checkpoint forged to lead there. Every
    signature and proof holds; the rules, run here on the dice, give another outcome."""
    fork, rewrite = forking(live_server, proves=True, edit=another_total)
    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.UnfairRollError, match="outcome is not the one the rules give"):
        dice.roll_formula("1d20", table=dice.table)
    assert fork.entries  # the fork was served


def test_a_forked_entry_in_a_note_of_its_own_is_caught_by_the_kept_checkpoint(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """Probe 2 as the red team ran it: the same fork, the consistency proof left to the
    server. The note the client verified when it opened its session is not a prefix of
    the forked tree the server proves."""
    _, rewrite = forking(live_server, proves=False, edit=another_total)
    dice = player(fc, live_server, rewrite, root=TEST_ROOT)
    with pytest.raises(fc.UnfairRollError, match="the log forked"):
        dice.roll_formula("1d20", table=dice.table)


def forked_before_the_roll(fc: ModuleType, server: LiveServer, **options: Any) -> Any:
    """A player shown a fork that its own roll cannot betray: another player's entry,
    just before the player's roll, edited in a tree the operator signs and proves
    consistent with the player's kept checkpoint. The roll checks out; the kept
    checkpoint is now the fork's."""

    def edit(entry: dict[str, Any]) -> None:
        entry["outcome"]["total"] += 1

    _, rewrite = forking(server, proves=True, edit=edit, back=1)
    dice = player(fc, server, pass_through, root=TEST_ROOT, **options)
    with fc.Fairroll(server.url, dice.write_key) as sheena:
        sheena.roll_formula("1d20", table=dice.table, fair=False)  # the entry to fork
    dice.operator.rewrite = rewrite
    rolled = dice.roll_formula("1d20", table=dice.table)
    assert rolled["checked"] == VERIFIED
    dice.operator.rewrite = pass_through  # from here on the public log
    return dice


def test_a_fork_shown_to_one_player_is_caught_at_its_next_roll(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """docs/audit.md, row 23: the next receipt, of the public tree, does not extend the note
    the player kept. The old client kept no note and returned the next roll as fair."""
    dice = forked_before_the_roll(fc, live_server)
    with pytest.raises(fc.UnfairRollError, match="the log forked") as raised:
        dice.roll_formula("1d20", table=dice.table)
    assert str(raised.value).count("\u2014 ") >= 2  # both signed notes: the evidence


def test_the_public_log_fails_against_the_forked_tree_the_player_kept(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """``verify`` holds the export to the checkpoints the client kept: the public log's
    tree at the kept size is not the one the player was shown."""
    dice = forked_before_the_roll(fc, live_server)
    report = dice.verify(dice.table)
    assert not report.ok
    assert "kept checkpoint" in report.problems[0], report


def test_a_kept_checkpoint_file_catches_a_fork_in_a_later_run(
    fc: ModuleType, live_server: LiveServer, tmp_path: Path
) -> None:
    """With a file, the kept checkpoint outlives the client object: a new one (a new run
    of the bot) with the same file and the session's kept state is held to the fork."""
    kept = tmp_path / "checkpoints.json"
    dice = forked_before_the_roll(fc, live_server, checkpoints=kept)
    assert f"fairroll/{dice.table}" in json.loads(kept.read_text())["logs"]
    state = dice.session(dice.table).state()
    with fc.Fairroll(live_server.url, dice.write_key, root=TEST_ROOT, checkpoints=kept) as later:
        later.session(dice.table, state=state)
        with pytest.raises(fc.UnfairRollError, match="the log forked"):
            later.roll_formula("1d20", table=dice.table)


def test_an_honest_log_extends_the_kept_checkpoint_roll_after_roll(
    fc: ModuleType, live_server: LiveServer, tmp_path: Path
) -> None:
    """No false alarm: other players' rolls between this player's grow the tree, and each
    of its notes is proven to extend the last one kept (which grows with them)."""
    kept = tmp_path / "checkpoints.json"
    dice = player(fc, live_server, pass_through, root=TEST_ROOT, checkpoints=kept)
    with fc.Fairroll(live_server.url, dice.write_key) as sheena:
        for _ in range(3):
            sheena.roll_formula("1d6", table=dice.table, fair=False)
            rolled = dice.roll_formula("1d20", table=dice.table)
            assert rolled["checked"] == VERIFIED
    size = json.loads(kept.read_text())["logs"][f"fairroll/{dice.table}"]["size"]
    assert size == rolled["receipt"]["tree_size"]
    assert dice.verify(dice.table).ok  # the export holds the tree kept


def test_two_roots_for_one_size_are_a_fork(fc: ModuleType) -> None:
    """A note of the size kept with another root needs no proof from anyone: the log
    signed two trees of one size."""
    store = fc.KeptCheckpoints()
    store.keep("fairroll/t", fc.Kept(5, b"\x01" * 32, "fairroll/t\nfirst note\n"), None)
    state = fc.SessionState(table="t", seed_id="s", client_seed="c", nonce=1, anchor="a", length=5)
    rolls = fc.sessions.SessionRolls(state, TEST_ROOT, store)
    steps = rolls._extends(fc.Kept(5, b"\x02" * 32, "fairroll/t\nsecond note\n"), None)
    with pytest.raises(fc.UnfairRollError, match="two signed trees of size 5"):
        next(steps)
    same = rolls._extends(fc.Kept(5, b"\x01" * 32, "fairroll/t\nthe same tree\n"), None)
    with pytest.raises(StopIteration):
        next(same)  # the same tree: nothing to ask, nothing kept anew


# -- the async client runs the same checks --------------------------------------------


class AsyncOperator(httpx.AsyncBaseTransport):
    """``Operator`` for ``AsyncFairroll``."""

    def __init__(self, rewrite: Rewrite) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.rewrite = rewrite

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        instead = self.rewrite(request, None)
        if instead is not None:
            return instead
        answer = await self.real.handle_async_request(request)
        await answer.aread()
        return self.rewrite(request, answer) or answer

    async def aclose(self) -> None:
        await self.real.aclose()


def test_the_async_client_replays_words_and_keeps_its_checkpoint(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """``AsyncFairroll`` runs the very protocol: forged words and a fork are refused."""

    def words(request: httpx.Request, answer: httpx.Response | None) -> httpx.Response | None:
        if not roll_answer(request, answer):
            return None
        assert answer is not None
        body = said(answer)
        body["words"]["text"] = "a natural 20"
        return answering(body)

    with httpx.Client(base_url=live_server.url) as http:
        made = http.post("/v1/tables").json()
    table = made["table"]

    async def play() -> None:
        transport = AsyncOperator(pass_through)
        async with fc.AsyncFairroll(
            live_server.url, made["write_key"], root=TEST_ROOT, transport=transport
        ) as dice:
            assert (await dice.roll_formula("1d20", table=table))["checked"] == VERIFIED
            transport.rewrite = words
            with pytest.raises(fc.UnfairRollError, match="words"):
                await dice.roll_formula("1d20", table=table)
            transport.rewrite = forking(live_server, proves=False, edit=another_total)[1]
            with pytest.raises(fc.UnfairRollError, match="the log forked"):
                await dice.roll_formula("1d20", table=table)

    asyncio.run(play())


def test_the_kept_checkpoints_are_shared_with_a_keyed_copy(fc: ModuleType) -> None:
    """``with_key`` is the same player: it keeps to the same checkpoints."""
    with fc.Fairroll("http://127.0.0.1:9", root=TEST_ROOT) as dice, dice.with_key("k") as keyed:
        assert keyed.checkpoints is dice.checkpoints


# -- the offline verdict replays the rules too ------------------------------------------


def test_an_outcome_not_following_from_its_dice_fails_verify_export(
    fc: ModuleType, live_server: LiveServer
) -> None:
    """The red team's probe 6, the Python client's half: the operator records a roll whose
    outcome the dice do not give, re-hashed and re-signed with its key. ``fairroll
    verify`` fails it (it replays the rules); ``verify_export`` now does too, at its seq."""
    with fc.Fairroll(live_server.url) as reader:
        made = reader.create_table()
        with reader.with_key(made["write_key"]) as dice:
            for _ in range(2):
                dice.roll_formula("1d20", table=made["table"], fair=False)
        lines = reader.export(made["table"]).decode().splitlines()
        keys = reader.keys()
    assert fc.verify_export("\n".join(lines), keys, root=TEST_ROOT).ok
    last = json.loads(lines[-1])
    another_total(last)
    lines[-1] = json.dumps(reseal(last))
    verdict = fc.verify_export("\n".join(lines), keys, root=TEST_ROOT)
    assert not verdict.ok
    assert verdict.first_bad_seq == last["seq"]
    assert "outcome does not follow from the dice" in verdict.problems[0]
