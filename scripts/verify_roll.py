#!/usr/bin/env python3
"""Recompute fairroll dice from seeds with the Python standard library alone.

    verify_roll.py --vectors docs/randomness.md     check the published test vectors
    verify_roll.py --seed S --sides 6 --count 5     print the faces of a roll
    verify_roll.py entry.json                       check one audit entry: its dice
                                                    re-derive from its seed, and its
                                                    entry_hash matches its content
    verify_roll.py entry.json --opening o.json      check a sealed roll's entry against
                                                    its opening (the roll's answer's
                                                    "opening", or its sealed.reveal
                                                    entry): the commitment, the dice
    verify_roll.py --export export.ndjson --root R  check a whole log under the pinned
                                                    root: fairroll's one verification
                                                    core (docs/audit.md, "What a verifier
                                                    checks"), every check and signature

The dice, vectors and one-entry modes are written from docs/randomness.md only, with the
standard library alone: an independent recomputation of the randomness. A whole log is
checked by fairroll's one Python verification core, not by a second verifier written
here: from this checkout's service/ (or an installed fairroll), else from an installed
fairroll-client (its vendored copy). That core needs msgspec and cryptography.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

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
    r"^\| (?:commit|chain) \| `(?P<server>[^`]+)` \| `(?P<client>[^`]+)` \| (?P<nonce>\d+) \| "
    r"(?P<sides>\d+) \| (?P<count>\d+) \| (?P<faces>[\d ]+) \|$"
)
#: A hash chain's link and the one before it (docs/randomness.md).
LINK_ROW = re.compile(
    r"^\| link (?P<j>\d+) \| `(?P<link>[0-9a-f]{64})` \| `(?P<previous>[0-9a-f]{64})` \|$"
)


#: What each source proves, and what a refusing server can do, for the one-entry mode:
#: the core's words (tests/test_chain_sessions.py holds them equal to it and verify.js).
WHAT_IT_PROVES = {
    "drawn": "fair if the operator is honest: the server drew the seed after it saw the "
    "request, so a dishonest operator could have drawn again until it liked the dice, "
    "unseen; roll in a seed session to take that power away",
    "chosen": "reproducible, not fair: the caller chose the seed and could have tried "
    "many before this one",
    "committed": "fair: the server committed to its seeds (a hash chain's anchor, or a "
    "server seed's SHA-256) before the player's client seed was known, and the nonces "
    "run without a gap",
    "supplied": "rolled elsewhere: fairroll only adjudicated these dice",
    "seeded": "version 1: drawn or chosen (who chose the seed is not recorded)",
}
SELECTIVE_REFUSAL = (
    "a server can refuse a roll in a seed session, but not change its dice: refused, the "
    "same nonce and client seed give the same dice when it is made; a selective refusal "
    "shows as the same nonce and client seed refused again and again"
)
CHAIN_DOMAIN = b"fairroll/chain/v1"


def chain_previous(link: str, steps: int = 1) -> str:
    """A hash chain's link ``steps`` before ``link``: SHA-256(domain || link bytes), again."""
    raw = bytes.fromhex(link)
    for _ in range(steps):
        raw = hashlib.sha256(CHAIN_DOMAIN + raw).digest()
    return raw.hex()


def is_link(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and not set(value) - set("0123456789abcdef")


def committed_seed(server_seed: str, client_seed: str, nonce: int) -> str:
    return f"{server_seed}:{client_seed}:{nonce}"


#: A sealed roll's commitment: SHA-256 of this, then the opening's RFC 8785 bytes.
SEALED_CONTEXT = b"fairroll/sealed/v1\n"


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
    links = [row for row in (LINK_ROW.match(line) for line in lines) if row]
    for row in links:
        good = chain_previous(row["link"]) == row["previous"]
        failures += not good
        status = "ok" if good else "MISMATCH"
        print(f"{status:8} chain link {row['j']} hashes to link {int(row['j']) - 1}")
    total = len(vectors) + len(sessions) + len(links)
    print(f"vectors: {total - failures} passed, {failures} failed")
    return 1 if failures else 0


MAX_SAFE = 2**53 - 1


#: ``--root``: the pinned root key id; certificates must name it (their Ed25519 signature
#: needs fairroll verify).
def canonical(value: Any) -> bytes:
    """RFC 8785 (JCS): keys sorted by UTF-16 code units, no whitespace, UTF-8, integers
    within +-(2**53 - 1) and no floats: the bytes fairroll hashes."""
    return _jcs(value).encode("utf-8")


def _jcs(value: Any) -> str:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(f"{_jcs(k)}:{_jcs(value[k])}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_jcs(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE:
            raise ValueError(f"the integer {value} is beyond +-(2**53 - 1)")
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise ValueError(f"{value!r} has no place in an entry (floats are not allowed)")


def strict_json(text: str) -> Any:
    """JSON with no key twice in one object."""

    def pairs(items: list[tuple[str, object]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise ValueError(f"the key {key!r} appears twice in one object")
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=pairs)


def check_entry(
    path: Path, server_seed: str | None = None, opening_path: Path | None = None
) -> int:
    entry = json.loads(path.read_text("utf-8"))
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    recomputed = hashlib.sha256(bytes.fromhex(entry["prev_hash"]) + canonical(body)).hexdigest()
    ok = True
    if recomputed != entry["entry_hash"]:
        print(f"seq {entry['seq']}: entry_hash does not match the entry's content")
        ok = False
    if entry["mechanic"] == "sealed.roll":
        return check_sealed(entry, opening_path) if ok else 1
    if entry["source"] in ("seeded", "drawn", "chosen"):
        key = entry["seed"].encode("utf-8")
        for position, die in enumerate(entry["dice"]):
            if face(key, position, die["sides"]) != die["face"]:
                print(f"seq {entry['seq']}: die {position} does not derive from the seed")
                ok = False
    elif entry["source"] == "committed" and "link" in entry["session"]:
        # A hash-chain roll checks alone: its link hashes to its chain's anchor in as many
        # steps as it stands from the chain's start (that anchor's session.commit or
        # session.renew entry, earlier in the log, is what the export check ties it to).
        session = entry["session"]
        steps = session["nonce"] - session["first_nonce"] + 1
        if chain_previous(session["link"], steps) != session["commitment"]:
            print(f"seq {entry['seq']}: the revealed link does not hash to its chain's anchor")
            return 1
        key = committed_seed(session["link"], session["client_seed"], session["nonce"]).encode()
        for position, die in enumerate(entry["dice"]):
            if face(key, position, die["sides"]) != die["face"]:
                print(f"seq {entry['seq']}: die {position} does not derive from the link")
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
        print(f"{entry['source']}: {WHAT_IT_PROVES.get(entry['source'], entry['source'])}")
    return 0 if ok else 1


def check_sealed(entry: dict[str, Any], opening_path: Path | None) -> int:
    """A sealed roll against its opening (docs/audit.md, "Sealed rolls"): its link hashes
    to its chain's anchor, SHA-256("fairroll/sealed/v1\\n" || JCS(opening)) is its
    commitment, the opening's mechanic is the one sealed, and every die derives from
    ``link:client_seed:nonce:blind``. Its outcome by the rules: ``fairroll verify``."""
    seq, session, sealed = entry["seq"], entry.get("session") or {}, entry.get("request") or {}
    if entry["source"] != "committed" or not is_link(session.get("link")):
        print(f"seq {seq}: a sealed roll rolls in a hash-chain seed session: this one does not")
        return 1
    if entry["dice"] or entry.get("outcome") is not None:
        print(f"seq {seq}: a sealed roll shows no dice or outcome: this one does")
        return 1
    steps = session["nonce"] - session["first_nonce"] + 1
    if chain_previous(session["link"], steps) != session["commitment"]:
        print(f"seq {seq}: the revealed link does not hash to its chain's anchor")
        return 1
    if opening_path is None:
        print(
            f"seq {seq}: a sealed {sealed.get('mechanic')} roll (audience "
            f"{sealed.get('audience')}): pass --opening once it is revealed"
        )
        return 1
    opening = json.loads(opening_path.read_text("utf-8"))
    if isinstance(opening, dict) and opening.get("mechanic") == "sealed.reveal":
        opening = opening["request"]["opening"]  # its sealed.reveal entry
    elif isinstance(opening, dict) and "opening" in opening and "blind" not in opening:
        opening = opening["opening"]  # the roll's answer, or a reveal's body
    digest = hashlib.sha256(SEALED_CONTEXT + canonical(opening)).hexdigest()
    if digest != sealed.get("commitment"):
        print(f"seq {seq}: the opening does not open the commitment of seq {seq}")
        return 1
    if opening.get("mechanic") != sealed.get("mechanic"):
        print(f"seq {seq}: the opening's mechanic is not the one seq {seq} sealed")
        return 1
    seed = committed_seed(session["link"], session["client_seed"], session["nonce"])
    key = f"{seed}:{opening['blind']}".encode()
    for position, die in enumerate(opening["dice"]):
        if face(key, position, die["sides"]) != die["face"]:
            print(f"seq {seq}: die {position} does not derive from link:client_seed:nonce:blind")
            return 1
    print(f"seq {seq}: ok, sealed {opening['mechanic']} roll opened ({len(opening['dice'])} dice)")
    print(f"committed: {WHAT_IT_PROVES['committed']}")
    return 0


def check_export(path: Path, root: str | None, keys: Path | None = None) -> int:
    """Check a whole export under the pinned ``root`` with fairroll's one core; print the
    verdict first, as ``fairroll verify`` does."""
    core = _core()
    if core is None:
        print("a whole log is checked by fairroll's verification core: pip install fairroll-client")
        return 2
    if not root:
        print("NOT VERIFIED: no root key is pinned (--root, the key id the operator gave you)")
        return 4
    trust = core.Trust(keys=None, root=root)
    if keys is not None:  # GET /v1/keys, for a log read from the middle: only as root certified
        trust = core.Trust.rooted(_listed(json.loads(keys.read_text("utf-8"))), root)
    lines = path.read_bytes().splitlines()
    report = core.verify_entries(lines, trust)
    if not report.ok:
        print(f"FAIL at seq {report.first_bad_seq}: {report.reason}")
        return 1
    print(f"OK: {report.entries} entries; Merkle root {report.root_hash}; head {report.head_hash}")
    for source, count in sorted(report.sources.items()):
        print(f"{count} {source} roll(s): {report.proves.get(source, source)}")
    for roll in report.not_fair:
        print(f"seq {roll.seq}: NOT FAIR: {roll.why}")
    if report.refusals:
        print(f"refusals: {report.refusals}")
    if report.unrevealed:
        print(f"{report.unrevealed} committed roll(s) wait for their session's reveal")
    if report.sealed_revealed:
        print(f"{report.sealed_revealed} sealed roll(s) revealed, each opening checked")
    if report.sealed_unrevealed:
        count, seqs = len(report.sealed_unrevealed), report.sealed_unrevealed
        listed = ", ".join(str(seq) for seq in seqs)
        print(f"{count} sealed roll{'s' if count != 1 else ''} never revealed: seq {listed}")
    return 0


def _listed(served: Any) -> list[Any]:
    """The keys of a GET /v1/keys answer as the core reads them (its PublicKey type)."""
    import msgspec  # noqa: PLC0415 - the core's own dependency

    signing = importlib.import_module(_core().__name__.rsplit(".", 2)[0] + ".audit.signing")
    return msgspec.convert(served["keys"], list[signing.PublicKey])


def _core() -> Any:
    """fairroll's verification core: this checkout's, an installed fairroll's, or the one
    fairroll-client vendors; None when none of them is here."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
    for name in ("fairroll.audit.verify", "fairroll_client._core.audit.verify"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entry", nargs="?", type=Path, help="an audit entry (JSON file)")
    parser.add_argument("--vectors", type=Path, help="docs/randomness.md")
    parser.add_argument("--seed")
    parser.add_argument("--sides", type=int, default=6)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--server-seed", help="a revealed session's server seed")
    parser.add_argument(
        "--opening", type=Path, help="a sealed roll's opening (or its sealed.reveal entry)"
    )
    parser.add_argument("--export", type=Path, help="an NDJSON export of a table, from seq 1")
    parser.add_argument("--root", help="the pinned root key id (with --export)")
    parser.add_argument("--keys", type=Path, help="GET /v1/keys, saved (with --export)")
    args = parser.parse_args()
    if args.export:
        return check_export(args.export, args.root, args.keys)
    if args.vectors:
        return check_vectors(args.vectors)
    if args.seed is not None:
        print(" ".join(str(f) for f in faces(args.seed, args.sides, args.count)))
        return 0
    if args.entry:
        return check_entry(args.entry, args.server_seed, args.opening)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
