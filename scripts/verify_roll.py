#!/usr/bin/env python3
"""Recompute fairroll dice from seeds with the Python standard library alone.

    verify_roll.py --vectors docs/randomness.md     check the published test vectors
    verify_roll.py --seed S --sides 6 --count 5     print the faces of a roll
    verify_roll.py entry.json                       check one audit entry: its dice
                                                    re-derive from its seed, and its
                                                    entry_hash matches its content

Written from docs/randomness.md and docs/audit.md only; it imports nothing from fairroll.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import re
import sys
from pathlib import Path

DOMAIN = b"fairroll/die/v1"
WORD_SPACE = 2**64
VECTOR_ROW = re.compile(
    r"^\| `(?P<seed>[^`]+)` \| (?P<sides>\d+) \| (?P<count>\d+) \| (?P<faces>[\d ]+) \|$"
)


def face(key: bytes, position: int, sides: int) -> int:
    limit = WORD_SPACE - WORD_SPACE % sides
    counter = 0
    while True:
        message = DOMAIN + position.to_bytes(4, "big") + sides.to_bytes(4, "big")
        block = hmac.new(key, message + counter.to_bytes(4, "big"), hashlib.sha256).digest()
        for start in range(0, 32, 8):
            word = int.from_bytes(block[start : start + 8], "big")
            if word < limit:
                return word % sides + 1
        counter += 1


def faces(seed: str, sides: int, count: int) -> list[int]:
    key = seed.encode("utf-8")
    return [face(key, position, sides) for position in range(count)]


SESSION_ROW = re.compile(
    r"^\| commit \| `(?P<server>[^`]+)` \| `(?P<client>[^`]+)` \| (?P<nonce>\d+) \| "
    r"(?P<sides>\d+) \| (?P<count>\d+) \| (?P<faces>[\d ]+) \|$"
)


def committed_seed(server_seed: str, client_seed: str, nonce: int) -> str:
    return f"{server_seed}:{client_seed}:{nonce}"


def check_vectors(document: Path) -> int:
    lines = document.read_text("utf-8").splitlines()
    rows = [VECTOR_ROW.match(line) for line in lines]
    vectors = [row for row in rows if row]
    sessions = [row for row in (SESSION_ROW.match(line) for line in lines) if row]
    if not vectors:
        print(f"no vectors found in {document}")
        return 1
    failures = 0
    for row in vectors:
        expected = [int(x) for x in row["faces"].split()]
        got = faces(row["seed"], int(row["sides"]), int(row["count"]))
        status = "ok" if got == expected else "MISMATCH"
        failures += got != expected
        print(f"{status:8} d{row['sides']:<5} x{row['count']:<3} {row['seed'][:40]!r}: {got}")
    for row in sessions:
        expected = [int(x) for x in row["faces"].split()]
        seed = committed_seed(row["server"], row["client"], int(row["nonce"]))
        got = faces(seed, int(row["sides"]), int(row["count"]))
        status = "ok" if got == expected else "MISMATCH"
        failures += got != expected
        print(f"{status:8} session {row['client']!r} nonce {row['nonce']}: {got}")
    total = len(vectors) + len(sessions)
    print(f"vectors: {total - failures} passed, {failures} failed")
    return 1 if failures else 0


def canonical(value: object) -> bytes:
    """Sorted keys, no whitespace, UTF-8: the bytes fairroll hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def check_entry(path: Path, server_seed: str | None = None) -> int:
    entry = json.loads(path.read_text("utf-8"))
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    recomputed = hashlib.sha256(bytes.fromhex(entry["prev_hash"]) + canonical(body)).hexdigest()
    ok = True
    if recomputed != entry["entry_hash"]:
        print(f"seq {entry['seq']}: entry_hash does not match the entry's content")
        ok = False
    if entry["source"] == "seeded":
        key = entry["seed"].encode("utf-8")
        for position, die in enumerate(entry["dice"]):
            if face(key, position, die["sides"]) != die["face"]:
                print(f"seq {entry['seq']}: die {position} does not derive from the seed")
                ok = False
    elif entry["source"] == "committed":
        session = entry["session"]
        if server_seed is None:
            print(f"seq {entry['seq']}: committed roll: pass --server-seed once it is revealed")
            return 1
        if hashlib.sha256(server_seed.encode()).hexdigest() != session["commitment"]:
            print(f"seq {entry['seq']}: the server seed does not match the commitment")
            return 1
        key = committed_seed(server_seed, session["client_seed"], session["nonce"]).encode()
        for position, die in enumerate(entry["dice"]):
            if face(key, position, die["sides"]) != die["face"]:
                print(f"seq {entry['seq']}: die {position} does not derive from the session")
                ok = False
    else:
        print(f"seq {entry['seq']}: dice were supplied by the caller, not derived from a seed")
    if ok:
        print(f"seq {entry['seq']}: ok ({len(entry['dice'])} dice, hash {recomputed})")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entry", nargs="?", type=Path, help="an audit entry (JSON file)")
    parser.add_argument("--vectors", type=Path, help="docs/randomness.md")
    parser.add_argument("--seed")
    parser.add_argument("--sides", type=int, default=6)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--server-seed", help="a revealed session's server seed")
    args = parser.parse_args()
    if args.vectors:
        return check_vectors(args.vectors)
    if args.seed is not None:
        print(" ".join(str(f) for f in faces(args.seed, args.sides, args.count)))
        return 0
    if args.entry:
        return check_entry(args.entry, args.server_seed)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
