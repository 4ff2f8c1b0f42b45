#!/usr/bin/env python3
"""Recompute fairroll dice from seeds with the Python standard library alone.

    verify_roll.py --vectors docs/randomness.md     check the published test vectors
    verify_roll.py --seed S --sides 6 --count 5     print the faces of a roll
    verify_roll.py entry.json                       check one audit entry: its dice
                                                    re-derive from its seed, and its
                                                    entry_hash matches its content
    verify_roll.py --export export.ndjson           check a whole log (docs/audit.md,
                                                    "What a verifier checks"), but the
                                                    Ed25519 signatures: the chain, RFC
                                                    8785 hashes, sources, the table's
                                                    policy, sessions' nonces and reveals,
                                                    keys' positions, the Merkle root

Written from docs/randomness.md and docs/audit.md only; it imports nothing from fairroll.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
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


#: What each source proves, and what a refusing server can do: the words of
#: fairroll.audit.verify (tests/test_chain_sessions.py holds the three verifiers equal).
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
PINNED_ROOT = ""


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


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def merkle_root(leaves: list[bytes]) -> bytes:
    """RFC 6962: MTH of the leaf hashes."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    return node(merkle_root(leaves[:k]), merkle_root(leaves[k:]))


class LogError(Exception):
    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(reason)
        self.seq = seq


def check_export(path: Path) -> int:
    """Check a whole export from seq 1 with the standard library (no signatures)."""
    try:
        summary = verify_lines(path.read_text("utf-8").splitlines())
    except LogError as bad:
        print(f"FAIL at seq {bad.seq}: {bad}")
        return 1
    sources = summary["sources"]
    print(
        f"OK: {summary['entries']} entries; Merkle root {summary['merkle_root']}; "
        f"head {summary['head']}"
    )
    for source, count in sorted(sources.items()):
        print(f"{count} {source} roll(s): {WHAT_IT_PROVES.get(source, source)}")
    if sources.get("committed"):
        print(f"refusals: {SELECTIVE_REFUSAL}")
    if summary["pending"]:
        print(f"{summary['pending']} committed roll(s) wait for their session's reveal")
    print("signatures NOT checked (the standard library has no Ed25519): use fairroll verify")
    return 0


def verify_lines(lines: list[str]) -> dict[str, Any]:
    """Check an export's lines from seq 1 (no signatures); raise :class:`LogError` at the
    first bad seq, else return what was checked: ``entries``, ``merkle_root`` (base64),
    ``head`` (the last entry_hash), ``sources`` (count by source), ``pending`` (committed
    rolls whose session is not revealed yet). The fairroll-client package calls this."""
    leaves: list[bytes] = []
    sessions: dict[str, dict[str, Any]] = {}
    published: set[str] = set()
    retired: dict[str, int] = {}
    policy: dict[str, Any] = {}
    sources: dict[str, int] = {}
    prev_seq, prev_hash = 0, "0" * 64
    table = ""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = strict_json(line)
        except ValueError as exc:
            raise LogError(prev_seq + 1, f"line {number} is not one JSON entry: {exc}") from None
        seq = entry["seq"]
        request = entry.get("request") or {}
        lost = request.get("lost_after") == prev_seq and request.get("resume_after") == seq - 1
        if seq != prev_seq + 1 and not (entry["mechanic"] == "audit.epoch" and lost):
            raise LogError(prev_seq + 1, f"seq {prev_seq + 1} is missing: found seq {seq}")
        if entry["prev_hash"] != prev_hash:
            raise LogError(seq, "prev_hash does not match the previous entry's entry_hash")
        table = table or entry["table"]
        if entry["table"] != table:
            raise LogError(seq, "the entry belongs to another table")
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        digest = hashlib.sha256(bytes.fromhex(entry["prev_hash"]) + canonical(body))
        if digest.hexdigest() != entry["entry_hash"]:
            raise LogError(seq, "entry_hash does not match the entry's content")
        check_v2(entry, sessions, published, retired, policy)
        sources[entry["source"]] = sources.get(entry["source"], 0) + 1
        for missing in range(len(leaves) + 1, seq):
            lost_leaf = f"fairroll/lost/v1:{missing}".encode()
            leaves.append(hashlib.sha256(b"\x00" + lost_leaf).digest())
        leaves.append(hashlib.sha256(b"\x00" + canonical(entry)).digest())
        prev_seq, prev_hash = seq, entry["entry_hash"]
    return {
        "entries": prev_seq,
        "merkle_root": base64.b64encode(merkle_root(leaves)).decode(),
        "head": prev_hash,
        "sources": sources,
        "pending": sum(len(s["pending"]) for s in sessions.values()),
    }


def check_v2(
    entry: dict[str, Any],
    sessions: dict[str, dict[str, Any]],
    published: set[str],
    retired: dict[str, int],
    policy: dict[str, Any],
) -> None:
    if entry["v"] == 1:
        return
    check_keys(entry, published, retired)
    if (
        entry["mechanic"] in ("session.commit", "session.renew", "session.reveal")
        or entry["source"] == "committed"
    ):
        check_session(entry, sessions)
    else:
        check_roll(entry, policy)


def check_keys(entry: dict[str, Any], published: set[str], retired: dict[str, int]) -> None:
    """A key signs only from its first entry (which carries its certificate), never after
    its key.retire (the certificate's signature needs Ed25519: fairroll verify checks it)."""
    seq, key_id, mechanic = entry["seq"], entry["key_id"], entry["mechanic"]
    request = entry.get("request") or {}
    if key_id in retired:
        raise LogError(seq, f"signed by key {key_id} after its retirement at seq {retired[key_id]}")
    certificate = entry.get("certificate")
    if certificate is not None:
        if certificate.get("key_id") != key_id:
            raise LogError(seq, "a certificate publishes the key that signs its entry")
        root_key = base64.b64decode(certificate.get("root_public_key", ""))
        fingerprint = "ed25519:" + hashlib.sha256(root_key).hexdigest()[:16]
        if PINNED_ROOT and (certificate.get("certified_by"), fingerprint) != (PINNED_ROOT,) * 2:
            raise LogError(seq, f"key {key_id} is not certified by the pinned root {PINNED_ROOT}")
        published.add(key_id)
    elif key_id not in published:
        raise LogError(seq, f"signed by key {key_id}, which this log did not publish before it")
    if mechanic == "key.retire":
        retired.setdefault(str(request.get("key_id")), seq)


def check_session(entry: dict[str, Any], sessions: dict[str, dict[str, Any]]) -> None:
    """Commitment first, nonces 1, 2, 3 ... without a gap; a hash chain's rolls each
    reveal the link before the last one revealed, a commit-reveal's re-derive at the reveal."""
    check = {
        "session.commit": check_commit,
        "session.renew": check_renew,
        "session.reveal": check_reveal,
    }.get(entry["mechanic"], check_session_roll)
    check(entry, sessions)


def check_commit(entry: dict[str, Any], sessions: dict[str, dict[str, Any]]) -> None:
    seq, request = entry["seq"], entry.get("request") or {}
    if request["seed_id"] in sessions:
        raise LogError(seq, "a seed session is committed twice")
    chain = request.get("kind") == "chain"
    if chain and (not is_link(request["commitment"]) or request.get("first_nonce") != 1):
        raise LogError(seq, "a chain's commitment is a link, from nonce 1")
    sessions[request["seed_id"]] = {
        "commitment": request["commitment"],
        "nonce": 0,
        "revealed": False,
        "pending": [],
        # A hash chain: its length, first nonce and the link revealed last.
        "length": request["length"] if chain else 0,
        "first": 1,
        "last": request["commitment"],
    }


def check_renew(entry: dict[str, Any], sessions: dict[str, dict[str, Any]]) -> None:
    seq, request = entry["seq"], entry.get("request") or {}
    session = sessions.get(request["seed_id"])
    if session is None or session["revealed"] or not session["length"]:
        raise LogError(seq, "a renewal of a session that is not an open hash chain")
    if request.get("previous") != session["commitment"] or not is_link(request["commitment"]):
        raise LogError(seq, "the renewal does not follow the session's chain")
    used_up = session["nonce"] == session["first"] + session["length"] - 1
    if request.get("first_nonce") != session["nonce"] + 1 or not used_up:
        raise LogError(seq, "a chain renewed before it is used up")
    session.update(
        commitment=request["commitment"],
        last=request["commitment"],
        length=request["length"],
        first=request["first_nonce"],
    )


def check_reveal(entry: dict[str, Any], sessions: dict[str, dict[str, Any]]) -> None:
    seq, request = entry["seq"], entry.get("request") or {}
    session = sessions.get(request["seed_id"])
    if session is None or session["revealed"]:
        raise LogError(seq, "a reveal of a session not committed (or already revealed)")
    server_seed = request["server_seed"]
    if session["length"]:
        opens = chain_previous(server_seed, session["length"]) if is_link(server_seed) else ""
    else:
        opens = hashlib.sha256(server_seed.encode()).hexdigest()
    if opens != session["commitment"] or request["commitment"] != session["commitment"]:
        raise LogError(seq, "the revealed server seed does not match the commitment")
    if request["rolls"] != session["nonce"]:
        raise LogError(seq, "the reveal counts another number of rolls than the log holds")
    session["revealed"] = True
    for roll in session["pending"]:
        ref = roll["session"]
        key = committed_seed(server_seed, ref["client_seed"], ref["nonce"]).encode()
        check_dice(roll["seq"], key, roll["dice"])
    session["pending"] = []


def check_session_roll(entry: dict[str, Any], sessions: dict[str, dict[str, Any]]) -> None:
    seq = entry["seq"]
    ref = entry["session"]
    session = sessions.get(ref["seed_id"])
    if session is None:
        raise LogError(seq, "a committed roll whose session has no commitment earlier in the log")
    if session["revealed"] or ref["commitment"] != session["commitment"]:
        raise LogError(seq, "a roll after its session's reveal, or with another commitment")
    if ref["nonce"] <= session["nonce"]:
        raise LogError(seq, f"nonce {ref['nonce']} of seed session {ref['seed_id']} is reused")
    if ref["nonce"] != session["nonce"] + 1:
        want = session["nonce"] + 1
        raise LogError(seq, f"nonce {want} of seed session {ref['seed_id']} is missing")
    session["nonce"] = ref["nonce"]
    if not session["length"]:
        session["pending"].append(entry)
        return
    # A hash chain: the roll's link hashes to the one before, and its dice derive now.
    link = ref.get("link")
    if not is_link(link) or ref.get("first_nonce") != session["first"]:
        raise LogError(seq, "a hash-chain roll reveals its link and its chain's start")
    if ref["nonce"] > session["first"] + session["length"] - 1:
        raise LogError(seq, f"nonce {ref['nonce']} is past its chain's links")
    if chain_previous(link) != session["last"]:
        raise LogError(
            seq, "the revealed link does not hash to the one before: the seed was changed"
        )
    session["last"] = link
    check_dice(seq, committed_seed(link, ref["client_seed"], ref["nonce"]).encode(), entry["dice"])


def check_roll(entry: dict[str, Any], policy: dict[str, Any]) -> None:
    """A seed's dice re-derive; a drawn seed looks drawn; the policy is kept."""
    seq, mechanic, source = entry["seq"], entry["mechanic"], entry["source"]
    if mechanic == "table.policy":
        if seq != 1:
            raise LogError(seq, "a table's policy is its first entry, only")
        policy.update(entry.get("request") or {})
    elif source in ("drawn", "chosen"):
        seed = entry["seed"]
        if source == "drawn" and (len(seed) != 64 or set(seed) - set("0123456789abcdef")):
            raise LogError(seq, "a drawn seed is 64 hex digits: this one was not drawn")
        if source == "drawn" and policy.get("drawn_seeds") is False:
            raise LogError(seq, "the table's policy refuses server-drawn seeds")
        if source == "chosen" and policy.get("chosen_seeds") is False:
            raise LogError(seq, "the table's policy refuses caller-chosen seeds")
        check_dice(seq, seed.encode(), entry["dice"])
    elif source == "supplied" and policy.get("supplied_dice") is False:
        raise LogError(seq, "the table's policy refuses supplied dice")


def check_dice(seq: int, key: bytes, dice: list[Any]) -> None:
    for position, die in enumerate(dice):
        if face(key, position, die["sides"]) != die["face"]:
            raise LogError(seq, f"die {position} does not derive from the seed")


def check_entry(path: Path, server_seed: str | None = None) -> int:
    entry = json.loads(path.read_text("utf-8"))
    body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
    recomputed = hashlib.sha256(bytes.fromhex(entry["prev_hash"]) + canonical(body)).hexdigest()
    ok = True
    if recomputed != entry["entry_hash"]:
        print(f"seq {entry['seq']}: entry_hash does not match the entry's content")
        ok = False
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entry", nargs="?", type=Path, help="an audit entry (JSON file)")
    parser.add_argument("--vectors", type=Path, help="docs/randomness.md")
    parser.add_argument("--seed")
    parser.add_argument("--sides", type=int, default=6)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--server-seed", help="a revealed session's server seed")
    parser.add_argument("--export", type=Path, help="an NDJSON export of a table, from seq 1")
    parser.add_argument("--root", default="", help="the pinned root key id (with --export)")
    args = parser.parse_args()
    if args.export:
        global PINNED_ROOT  # noqa: PLW0603
        PINNED_ROOT = args.root
        return check_export(args.export)
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
