"""Verification on every core (``audit.parallel``), with a signed checkpoint standing in
for its entries' signatures, and verification resumed from a saved state, say what the
one serial verifier says, to the word: on the clean vector log, on every forgery of
``docs/vectors/bad``, on random byte flips, and on the checkpoints a cheater would hand
in to skip the signature checks (one signed by a key the log never published, one by a
key the log retired, one of another tree)."""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

import msgspec
import pytest

from fairroll.audit import Checkpoint, Signer, Trust, VerifyReport, verify_entries
from fairroll.audit.checkpoint import sign_checkpoint
from fairroll.audit.parallel import verify_everywhere
from fairroll.audit.verify import VerifiedState, verify_run
from fairroll.mechanics import replay_entry

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "docs" / "vectors"
PINNED = json.loads((VECTORS / "keys.json").read_text())["root"]
LOG = (VECTORS / "log.ndjson").read_bytes().splitlines()
CHECKPOINT = msgspec.json.decode((VECTORS / "checkpoint.json").read_bytes(), type=Checkpoint)
BAD = sorted((VECTORS / "bad").glob("*.ndjson"))
TRUST = Trust(keys=None, root=PINNED)


def serial(lines: list[bytes], trust: Trust = TRUST) -> VerifyReport:
    return verify_entries(lines, trust, replay=replay_entry)


def everywhere(lines: list[bytes], trust: Trust = TRUST, workers: int = 2) -> VerifyReport:
    return verify_everywhere(
        lambda: nullcontext(lines), trust, replay=replay_entry, workers=workers
    )


def covered(checkpoint: Checkpoint = CHECKPOINT) -> Trust:
    return dataclasses.replace(TRUST, covered_by=checkpoint)


def test_the_clean_log_verifies_alike_and_the_checkpoint_covers_its_signatures() -> None:
    plain = serial(LOG)
    assert everywhere(LOG) == plain
    assert everywhere(LOG, workers=1) == plain
    fast = everywhere(LOG, covered())
    assert fast == msgspec.structs.replace(plain, covered_through=12)


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
@pytest.mark.parametrize("checkpoint", [False, True], ids=["per-entry", "covered"])
def test_every_forgery_is_named_as_the_serial_verifier_names_it(
    path: Path, checkpoint: bool
) -> None:
    lines = path.read_bytes().splitlines()
    want = serial(lines)
    trust = covered() if checkpoint else TRUST
    assert everywhere(lines, trust) == want


def test_random_byte_flips_are_caught_exactly_as_serially() -> None:
    rng = random.Random(28)
    flips = 0
    for _ in range(40):
        lines = list(LOG)
        index = rng.randrange(len(lines))
        line = bytearray(lines[index])
        at = rng.randrange(len(line))
        line[at] = rng.choice(b'0123456789abcdef"{}:,')
        lines[index] = bytes(line)
        want = serial(lines)
        flips += not want.ok
        if want.ok:  # the flip wrote the byte that was there
            want = msgspec.structs.replace(want, covered_through=12)
        assert everywhere(lines, covered()) == want, (index, at)
    assert flips > 30  # the sample really tampered


def test_a_checkpoint_by_a_key_the_log_never_published_stands_in_for_nothing() -> None:
    # A cheater re-signs an entry with its own key and hands in a checkpoint of the
    # tampered tree signed by that key: the entries are then checked one by one.
    outsider = Signer.generate()
    entries = [json.loads(line) for line in LOG]
    entries[3]["signature"] = outsider.sign(entries[3]["entry_hash"])
    lines = [json.dumps(e, separators=(",", ":"), sort_keys=True).encode() for e in entries]
    honest = serial(lines)
    assert not honest.ok and honest.first_bad_seq == 4
    tampered_root = base64.b64decode(serial(lines, Trust(keys=None)).root_hash)
    forged = sign_checkpoint(outsider, "vectors", 12, tampered_root, entries[-1]["entry_hash"])
    assert everywhere(lines, covered(forged)) == honest


def test_a_checkpoint_of_another_tree_or_size_stands_in_for_nothing() -> None:
    other = msgspec.structs.replace(CHECKPOINT, root_hash=base64.b64encode(bytes(32)).decode())
    report = everywhere(LOG, covered(other))
    kept = dataclasses.replace(TRUST, roots=[(12, bytes(32))], anchors=[(12, other.head_hash)])
    assert report == serial(LOG, kept)
    assert not report.ok
    beyond = msgspec.structs.replace(CHECKPOINT, size=13)
    assert not everywhere(LOG, covered(beyond)).ok


def test_a_verification_resumed_from_its_state_says_what_one_pass_says() -> None:
    whole = serial(LOG)
    for cut in (1, 5, 11):
        first, state = verify_run(LOG[:cut], TRUST, replay=replay_entry)
        assert first.ok and state is not None
        kept = msgspec.json.decode(msgspec.json.encode(state), type=VerifiedState)
        rest, _ = verify_run(LOG[cut:], TRUST, replay=replay_entry, resume=kept)
        assert rest == whole, cut
    # A resumed state does not take a log that no longer chains on it.
    _, state = verify_run(LOG[:6], TRUST, replay=replay_entry)
    assert state is not None
    moved = msgspec.structs.replace(state, entry_hash="00" * 32)
    rest, _ = verify_run(LOG[6:], TRUST, replay=replay_entry, resume=moved)
    assert not rest.ok and rest.first_bad_seq == 7 and "prev_hash" in (rest.reason or "")


def test_the_cli_takes_the_checkpoint_for_the_signatures_and_says_so(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "fairroll.cli", "verify", "--root", PINNED]
    out = subprocess.run(
        [*cli, VECTORS / "log.ndjson", "--checkpoint", VECTORS / "checkpoint.json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the entries through seq 12 by the signed checkpoint" in out.stdout
    edited = tmp_path / "edited.ndjson"
    edited.write_bytes((VECTORS / "bad" / "edited-outcome.ndjson").read_bytes())
    failed = subprocess.run(
        [*cli, edited, "--checkpoint", VECTORS / "checkpoint.json", "--workers", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 1 and "FAIL at seq 2: entry_hash does not match" in failed.stdout
