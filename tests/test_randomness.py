"""The published derivation (docs/randomness.md) and the dice sources."""

from __future__ import annotations

import hmac
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairroll.randomness import (
    MAX_SIDES,
    DiceError,
    Keyed,
    SeededDice,
    SuppliedDice,
    committed_seed,
    derive_faces,
    face_from_block,
    new_seed,
)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "randomness.md"
ROW = re.compile(r"^\| `([^`]+)` \| (\d+) \| (\d+) \| ([\d ]+) \|$", re.MULTILINE)


def vectors() -> list[tuple[str, int, int, list[int]]]:
    rows = ROW.findall(DOC.read_text("utf-8"))
    return [(seed, int(s), int(c), [int(f) for f in faces.split()]) for seed, s, c, faces in rows]


def test_document_lists_vectors_for_coins_through_d1000() -> None:
    sizes = {sides for _, sides, _, _ in vectors()}
    assert {2, 3, 4, 6, 8, 10, 12, 20, 100, 1000} <= sizes


@pytest.mark.parametrize(("seed", "sides", "count", "faces"), vectors())
def test_published_vector(seed: str, sides: int, count: int, faces: list[int]) -> None:
    assert list(derive_faces(seed, sides=sides, count=count)) == faces


def test_stdlib_reference_verifier_reproduces_the_document() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "verify_roll.py"), "--vectors", str(DOC)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "vectors: 20 passed, 0 failed" in result.stdout


SESSION_ROW = re.compile(
    r"^\| commit \| `([^`]+)` \| `([^`]+)` \| (\d+) \| (\d+) \| (\d+) \| ([\d ]+) \|$",
    re.MULTILINE,
)


@pytest.mark.parametrize(
    ("server", "client", "nonce", "sides", "count", "faces"),
    SESSION_ROW.findall(DOC.read_text("utf-8")),
)
def test_published_session_vector(
    server: str, client: str, nonce: str, sides: str, count: str, faces: str
) -> None:
    seed = committed_seed(server, client, int(nonce))
    assert derive_faces(seed, sides=int(sides), count=int(count)) == tuple(
        int(f) for f in faces.split()
    )


def test_rejected_words_are_skipped_to_the_next_word() -> None:
    # limit for a d6 is 2**64 - 4; a word at the limit is rejected, the next one used.
    limit = 2**64 - 2**64 % 6
    block = limit.to_bytes(8, "big") + (13).to_bytes(8, "big") + bytes(16)
    assert face_from_block(block, 6) == 13 % 6 + 1


def test_a_block_of_rejected_words_asks_for_the_next_counter() -> None:
    assert face_from_block(b"\xff" * 32, 6) is None
    assert face_from_block(b"\xff" * 32, 2) == 2  # 2**64 - 1 is below the d2 limit 2**64


@given(st.integers(2, MAX_SIDES), st.binary(min_size=32, max_size=32))
def test_every_accepted_word_maps_to_a_face_of_the_die(sides: int, block: bytes) -> None:
    face = face_from_block(block, sides)
    assert face is None or 1 <= face <= sides


def test_faces_are_close_to_uniform_on_a_fixed_seed() -> None:
    # 60,000 d6 from a fixed seed: a chi-square test at 5 degrees of freedom.
    counts = Counter(derive_faces("uniformity", sides=6, count=60_000))
    chi2 = sum((counts[f] - 10_000) ** 2 / 10_000 for f in range(1, 7))
    assert chi2 < 20.5  # p ~ 0.001


def test_positions_continue_across_groups() -> None:
    dice = SeededDice("fairroll")
    first = dice.roll("a", 6, 7)
    second = dice.roll("b", 6, 3)
    assert first + second == derive_faces("fairroll", sides=6, count=10)
    assert [d.group for d in dice.dice] == ["a"] * 7 + ["b"] * 3


def test_server_seeds_are_32_random_bytes_in_hex() -> None:
    seeds = {new_seed() for _ in range(50)}
    assert len(seeds) == 50
    assert all(re.fullmatch(r"[0-9a-f]{64}", seed) for seed in seeds)


def test_supplied_dice_are_handed_out_in_order() -> None:
    dice = SuppliedDice({"a": [3, 5], "b": [6]})
    assert dice.roll("a", 6, 2) == (3, 5)
    assert dice.roll("b", 6) == (6,)
    dice.check_all_used()


def test_supplied_face_out_of_range_names_group_and_index() -> None:
    with pytest.raises(DiceError) as error:
        SuppliedDice({"a": [3, 7]}).roll("a", 6, 2)
    assert error.value.field == "dice.a[1]"
    assert "d6" in str(error.value)


def test_too_few_supplied_dice_names_the_group() -> None:
    with pytest.raises(DiceError) as error:
        SuppliedDice({"a": [3]}).roll("a", 6, 2)
    assert error.value.field == "dice.a"


def test_unused_supplied_dice_are_an_error() -> None:
    dice = SuppliedDice({"a": [3, 4], "zz": [1]})
    dice.roll("a", 6, 2)
    with pytest.raises(DiceError) as error:
        dice.check_all_used()
    assert error.value.field == "dice.zz"


@given(key=st.binary(max_size=200), message=st.binary(max_size=100))
def test_keyed_hmac_is_rfc_2104_hmac_sha256(key: bytes, message: bytes) -> None:
    # Keys shorter than, equal to and longer than SHA-256's 64-byte block.
    assert Keyed(key).digest(message) == hmac.digest(key, message, "sha256")
