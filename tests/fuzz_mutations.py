"""The differential fuzzer's mutations: what an operator holding the signing keys can do
to a log, a receipt or a cosigned note before a player verifies it
(tests/test_differential_fuzz.py).

Each mutation returns a :class:`Case`, named by its kind (the per-kind counts the fuzzer
prints) and its detail (the field, the positions, the boundary: what a reproducer
needs). Log mutations then (mostly) re-chain and re-sign the log from the first entry
they touched, each entry with the key its ``key_id`` names (the fuzzer holds both keys of
the corpus's deployment), so only the semantic checks can catch them.

Left out on purpose: what only the rules replay sees (a roll's ``outcome``, its
``request``, a die's ``group``, a supplied die's face): the library and the CLI replay
the mechanics, the other verifiers do not, and that difference is declared in
tests/test_conformance.py, not found again here.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

import msgspec

from fairroll.audit.checkpoint import key_hash, sign_checkpoint
from fairroll.audit.cosignature import cosign
from fairroll.audit.entry import GENESIS_HASH, chain_hash, jcs, leaf_hash
from fairroll.audit.merkle import Frontier
from fairroll.audit.signing import Signer
from fairroll.mechanics import replay_entry
from fairroll.randomness import committed_seed
from fuzz_corpus import COSIGNER, ROOT_SIGNER, ROTATED, Corpus, signers
from fuzz_statements import epoch_gap, renumbered, sealed

__all__ = ["LOG_KINDS", "Case", "mutate", "rebased", "resigned"]

Entry = dict[str, Any]
STATEMENTS = (
    "session.commit",
    "session.renew",
    "session.reveal",
    "table.policy",
    "key.retire",
    "audit.epoch",
)
SOURCES = ("drawn", "chosen", "committed", "supplied", "statement", "seeded", "fair")

#: Log mutations and their weights.
LOG_KINDS: dict[str, int] = {
    "field": 8,
    "type": 3,
    "order": 1,
    "move": 1,
    "delete": 1,
    "duplicate": 1,
    "source": 2,
    "client_seed": 5,
    "nonce": 1,
    "seq": 1,
    "key": 2,
    "certificate": 2,
    "boundary": 3,
    "base": 1,
    "sealed": 6,
    "renumbered": 4,
    "epoch": 1,
}
#: Mutations of statements (tests/fuzz_statements.py): each names its kind's sub-kind.
STATEMENT_MUTATIONS = {"sealed": sealed, "renumbered": renumbered, "epoch": epoch_gap}
RECEIPT_KINDS = ("proof", "note", "note-resigned", "entry", "other-entry", "receipt-field")
COSIGNATURE_KINDS = ("cosig-time", "cosig-body", "cosig-lines", "cosig-name", "cosig-resigned")


@dataclass
class Case:
    """One mutated input: ``kind`` (a conformance case kind: log, receipt, cosignature)
    and what the case's files hold."""

    mutation: str
    detail: str
    kind: str = "log"
    log: list[Entry] = field(default_factory=list)
    base: dict[str, Any] | None = None
    #: whether every signature was re-made (the stdlib script has no Ed25519 otherwise)
    signed: bool = True
    entry: Entry | None = None
    receipt: dict[str, Any] | None = None
    note: str = ""
    vkey: str = ""


def mutate(corpus: Corpus, rng: random.Random) -> Case:
    """One mutation of one of the corpus's inputs, drawn by weight (a log nine times in
    ten)."""
    roll = rng.random()
    if roll < 0.06 and corpus.receipts:
        return _receipt(corpus, rng)
    if roll < 0.1 and corpus.cosigned:
        return _cosignature(corpus, rng)
    return _log(corpus, rng)


# -- logs --------------------------------------------------------------------------------


def _log(corpus: Corpus, rng: random.Random) -> Case:
    name = rng.choice(sorted(corpus.logs))
    log, base = copy.deepcopy(corpus.logs[name])
    if base is not None and rng.random() < 0.4:
        log, base = rebased(corpus, rng)
        name = f"{name} rebased at {base['size']}"
    kinds = list(LOG_KINDS)
    kind = rng.choices(kinds, weights=[LOG_KINDS[k] for k in kinds])[0]
    if kind == "base" and base is None:
        kind = "field"
    if kind == "boundary" and name != "main":
        kind = "move"
    index = rng.randrange(len(log))
    start, detail = index, ""
    entry = log[index]
    seq = entry["seq"]
    touched = [index]
    if kind in ("field", "type"):
        paths = list(_paths(entry))
        path = rng.choice(paths)
        old = _get(entry, path)
        new = _retyped(old, rng) if kind == "type" else _edited(old, path, log, rng)
        _set(entry, path, new)
        kind = f"{kind}-{_type_name(old)}"
        detail = f"seq {seq} {'.'.join(map(str, path))}: {old!r} -> {new!r}"
    elif kind in ("order", "move"):
        other = rng.randrange(len(log))
        if kind == "order":
            log[index], log[other] = log[other], log[index]
        else:
            log.insert(other, log.pop(index))
        start = min(index, other)
        detail = f"index {index} <-> {other}" if kind == "order" else f"{index} -> {other}"
    elif kind == "delete":
        if len(log) > 1:
            del log[index]
        detail = f"seq {entry['seq']}"
    elif kind == "duplicate":
        log.insert(index, copy.deepcopy(entry))
        detail = f"seq {entry['seq']}"
    elif kind == "source":
        new = rng.choice([s for s in SOURCES if s != entry["source"]])
        detail = f"seq {entry['seq']} {entry['source']} -> {new}"
        entry["source"] = new
    elif kind == "client_seed" and entry.get("session"):
        rolls = [i for i, e in enumerate(log) if e.get("session") and i != index]
        if rolls and rng.random() < 0.4:  # two rolls' client seeds swapped
            other = rng.choice(rolls)
            mine, theirs = entry["session"], log[other]["session"]
            mine["client_seed"], theirs["client_seed"] = theirs["client_seed"], mine["client_seed"]
            detail = f"seq {entry['seq']} and seq {log[other]['seq']} swapped client seeds"
            touched.append(other)
            start = min(index, other)
        else:
            seen = sorted({e["session"]["client_seed"] for e in log if e.get("session")})
            new = rng.choice([*seen, "someone-else"])
            detail = f"seq {entry['seq']} {entry['session']['client_seed']} -> {new}"
            entry["session"]["client_seed"] = new
    elif kind == "nonce" and entry.get("session"):
        step = rng.choice([-1, 1, 2])
        entry["session"]["nonce"] += step
        detail = f"seq {entry['seq']} nonce {step:+d}"
    elif kind == "key":
        other_key = rng.choice([k for k in signers() if k != entry["key_id"]])
        detail = f"seq {entry['seq']} signed by {other_key}"
        entry["key_id"] = other_key
    elif kind == "certificate":
        detail = _certificate(log, index, corpus, rng)
    elif kind == "boundary":
        detail, start = _across(log, corpus, rng)
    elif kind == "base" and base is not None:
        detail = _base(base, log, rng)
        start = len(log)
    elif kind in STATEMENT_MUTATIONS:
        # A log without what the kind acts on (no sealed roll, no epoch): a statement moved.
        done = STATEMENT_MUTATIONS[kind](log, rng)
        if done is None:
            kind, done = "renumbered", renumbered(log, rng)
        how, detail, start = done
        kind = f"{kind}-{how}"
    else:
        kind = "seq"
        step = rng.choice([-1, 1])
        entry["seq"] += step
        detail = f"seq {entry['seq'] - step} {step:+d}"
    if kind in ("field-str", "type-str", "client_seed", "source", "nonce") and rng.random() < 0.7:
        # The dice and outcome re-made from the entry's (new) seed: only the log's own
        # rules (sources, sessions, client seeds) can tell.
        for at in touched:
            if at < len(log) and _rederive(log, at):
                detail += " (dice re-made)"
    # A moved statement or an edited opening left unsigned only tells the signatures apart.
    signed = rng.random() < 0.8 or kind == "base" or kind.startswith(tuple(STATEMENT_MUTATIONS))
    if signed:
        log = resigned(log, max(0, min(start, len(log) - 1)), base)
    return Case(mutation=kind, detail=f"{name}: {detail}", log=log, base=base, signed=signed)


def _rederive(log: list[Entry], index: int) -> bool:
    """The roll at ``index`` re-rolled from the seed its fields name (its seed, or its
    session's link or revealed server seed with its client seed and nonce): dice and
    outcome as the server would have written them. False when no seed is known."""
    entry = log[index]
    session = entry.get("session")
    seed: Any = None
    if entry.get("source") in ("drawn", "chosen", "seeded"):
        seed = entry.get("seed")
    elif isinstance(session, dict):
        secret = session.get("link")
        if secret is None:
            secret = next(
                (
                    e["request"].get("server_seed")
                    for e in log
                    if e.get("mechanic") == "session.reveal"
                    and isinstance(e.get("request"), dict)
                    and e["request"].get("seed_id") == session.get("seed_id")
                ),
                None,
            )
        if not isinstance(secret, str):
            return False
        try:
            seed = committed_seed(secret, session["client_seed"], session["nonce"])
        except (KeyError, TypeError, ValueError, AttributeError):
            return False
    if not isinstance(seed, str) or not entry.get("dice"):
        return False
    try:
        entry["dice"], entry["outcome"] = replay_entry(entry, seed)
    except Exception:  # an entry the mechanic cannot read: left as it is
        return False
    return True


#: Fields whose edit only the rules replay sees, or that re-signing remakes.
_SKIPPED = {"outcome", "entry_hash", "signature", "prev_hash", "key_id"}


def _paths(entry: Entry) -> Any:
    """Every leaf path of ``entry`` a verifier without the rules replay must check."""
    statement = entry.get("source") == "statement"
    for key, value in entry.items():
        if key in _SKIPPED or (key == "request" and not statement):
            continue
        if key == "mechanic" and not statement:
            continue
        if key == "dice":
            if entry.get("source") == "supplied":
                continue
            for position in range(len(value or [])):
                yield ("dice", position, "face")
                yield ("dice", position, "sides")
            continue
        if isinstance(value, dict) and value:
            for inner in value:
                yield (key, inner)
        else:
            yield (key,)


def _get(entry: Entry, path: tuple[Any, ...]) -> Any:
    value: Any = entry
    for step in path:
        value = value[step]
    return value


def _set(entry: Entry, path: tuple[Any, ...], new: Any) -> None:
    target: Any = entry
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new


def _type_name(value: Any) -> str:
    return {bool: "bool", int: "int", str: "str", type(None): "null", dict: "dict", list: "list"}[
        type(value)
    ]


def _edited(old: Any, path: tuple[Any, ...], log: list[Entry], rng: random.Random) -> Any:
    """A value of the same type: what a verifier that checks types alone lets through."""
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return rng.choice([old + 1, old - 1, 0, -1, old + 2, 2**53 - 1, 2**53])
    if isinstance(old, str):
        same = sorted(
            {str(v) for e in log if _has(e, path) and isinstance(v := _get(e, path), str)} - {old}
        )
        choices = [f"{old}x", "", "ab" * 32, old.upper(), old[:-1]]
        if same:
            choices += [rng.choice(same)] * 3
        if path[-1] == "key_id":
            choices += list(signers())
        return rng.choice(choices)
    if old is None:
        return rng.choice(["x", "ab" * 32, 0, {}])
    if isinstance(old, list):
        return old[1:] if old else [1]
    if isinstance(old, dict):
        return {}
    return None


def _has(entry: Entry, path: tuple[Any, ...]) -> bool:
    try:
        _get(entry, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _retyped(old: Any, rng: random.Random) -> Any:
    """A value of another JSON type (a float among them: ``1.0`` is not ``1``)."""
    choices: list[Any] = [None, [], {}, True, "1", 1]
    if isinstance(old, int) and not isinstance(old, bool):
        choices += [str(old), float(old), float(old) + 0.5]
    if isinstance(old, str) and old.isdigit():
        choices.append(int(old))
    return rng.choice([c for c in choices if type(c) is not type(old)])


def _certificate(log: list[Entry], index: int, corpus: Corpus, rng: random.Random) -> str:
    """A key's certificate removed, copied onto another entry, or replaced by the other
    key's."""
    carriers = [i for i, e in enumerate(log) if e.get("certificate")]
    how = rng.choice(["remove", "copy", "swap"])
    if how == "remove" and carriers:
        at = rng.choice(carriers)
        log[at]["certificate"] = None
        return f"removed from seq {log[at]['seq']}"
    certificates = [k["certificate"] for k in corpus.keys["keys"]]
    if how == "copy" and carriers:
        source = log[rng.choice(carriers)]
        log[index]["certificate"] = copy.deepcopy(source["certificate"])
        return f"seq {source['seq']}'s onto seq {log[index]['seq']}"
    chosen = rng.choice(certificates)
    log[index]["certificate"] = copy.deepcopy(chosen)
    return f"{chosen['key_id']}'s onto seq {log[index]['seq']}"


def _across(log: list[Entry], corpus: Corpus, rng: random.Random) -> tuple[str, int]:
    """An entry moved across a rotation, retirement or epoch boundary of the main log (a
    statement four times in five), to just the other side of it."""
    name, seq = rng.choice(sorted(corpus.boundaries.items()))
    at = next(i for i, e in enumerate(log) if e["seq"] == seq)
    statements = [i for i, e in enumerate(log) if e["source"] == "statement" and i != at]
    others = [i for i in range(len(log)) if i != at]
    pool = statements if statements and rng.random() < 0.8 else others
    index = rng.choice(pool)
    moved = log.pop(index)
    target = next(i for i, e in enumerate(log) if e["seq"] == seq)
    position = target + 1 if index <= target else target
    log.insert(position, moved)
    direction = "after" if index <= target else "before"
    return (
        f"seq {moved['seq']} ({moved['mechanic']}) moved {direction} the {name} (seq {seq})",
        min(index, position),
    )


def _base(base: dict[str, Any], log: list[Entry], rng: random.Random) -> str:
    """The archive base re-signed by the real key saying another size or head hash."""
    how = rng.choice(["size", "head", "frontier"])
    if how == "size":
        base["size"] += rng.choice([-1, 1])
    elif how == "head":
        base["head_hash"] = rng.choice([*(e["entry_hash"] for e in log), "ab" * 32])
    elif base.get("frontier"):
        hashes, zero = base["frontier"], base64.b64encode(bytes(32)).decode()
        edit = rng.choice(["zero", "drop", "extra", "reverse"])
        if edit == "zero":
            hashes[rng.randrange(len(hashes))] = zero
        elif edit == "drop":
            hashes.pop(rng.randrange(len(hashes)))
        elif edit == "extra":
            hashes.insert(rng.randrange(len(hashes) + 1), zero)
        else:
            hashes.reverse()
        how += f" {edit}"
    _resign_checkpoint(base)
    return f"base {how}: size {base['size']} head {base['head_hash'][:12]}"


def rebased(corpus: Corpus, rng: random.Random) -> tuple[list[Entry], dict[str, Any]]:
    """The open table archived through another seq, as ``fairroll archive`` would have
    signed its base (size, root, head hash, frontier): a base log every verifier must
    pass, whose base may stand between a roll and its reveal; it is then mutated."""
    whole = copy.deepcopy(corpus.logs["open"][0])
    kept = corpus.logs["open-after-archive"][1]
    assert kept is not None
    size = rng.randrange(1, len(whole))
    frontier = Frontier.empty()
    for entry in whole[:size]:
        frontier, _ = frontier.append(leaf_hash(jcs(entry)))
    base = sign_checkpoint(
        signers()[kept["key_id"]],
        kept["table"],
        size,
        frontier.root(),
        whole[size - 1]["entry_hash"],
        log_name=kept["key_name"],
        frontier=frontier.hashes,
    )
    return whole[size:], msgspec.to_builtins(base)


def _resign_checkpoint(base: dict[str, Any]) -> None:
    signer = signers().get(base["key_id"], ROTATED)
    body = f"{base['origin']}\n{base['size']}\n{base['root_hash']}\nchain {base['head_hash']}\n"
    base["signature"] = _note_signature(signer, base["key_name"], body)
    base["text"] = f"{body}\n\u2014 {base['key_name']} {base['signature']}\n"


def _note_signature(signer: Signer, name: str, body: str) -> str:
    raw = base64.b64decode(signer.public_key.public_key)
    signature = base64.b64decode(signer.sign_message(body.encode()))
    return base64.b64encode(key_hash(name, raw) + signature).decode()


def resigned(log: list[Entry], start: int, base: dict[str, Any] | None) -> list[Entry]:
    """Re-chained and re-signed from index ``start``, each entry by the key it names
    (the root key when the fuzzer holds no such key)."""
    keys = signers()
    for index in range(start, len(log)):
        entry = log[index]
        if index:
            entry["prev_hash"] = log[index - 1]["entry_hash"]
        elif base is not None:
            entry["prev_hash"] = base["head_hash"]
        else:
            entry["prev_hash"] = GENESIS_HASH
        body = {k: v for k, v in entry.items() if k not in ("entry_hash", "signature")}
        try:
            entry["entry_hash"] = chain_hash(entry["prev_hash"], body)
        except (ValueError, TypeError):
            # No canonical form (a float, an integer past 2**53), so no true hash: any will
            # do, every verifier refuses the entry's form first.
            entry["entry_hash"] = hashlib.sha256(repr(body).encode()).hexdigest()
        signer = keys.get(str(entry.get("key_id")), ROOT_SIGNER)
        entry["signature"] = signer.sign(str(entry["entry_hash"]))
    return log


# -- receipts ----------------------------------------------------------------------------


def _receipt(corpus: Corpus, rng: random.Random) -> Case:
    entry, receipt = copy.deepcopy(rng.choice(corpus.receipts))
    kind = rng.choice(RECEIPT_KINDS)
    lines = receipt["checkpoint"].split("\n")
    if kind == "proof":
        proof = receipt["proof"]
        how = rng.choice(["flip", "cut", "extra", "swap"])
        if how == "flip" and proof:
            at = rng.randrange(len(proof))
            raw = bytearray(base64.b64decode(proof[at]))
            raw[rng.randrange(32)] ^= 1 << rng.randrange(8)
            proof[at] = base64.b64encode(bytes(raw)).decode()
        elif how == "cut" and proof:
            proof.pop(rng.randrange(len(proof)))
        elif how == "swap" and len(proof) > 1:
            proof.reverse()
        else:
            proof.append(base64.b64encode(bytes(32)).decode())
        detail = f"proof {how}"
    elif kind in ("note", "note-resigned"):
        line = rng.randrange(4)
        if line == 0:
            lines[0] = rng.choice([f"{lines[0]}x", "fairroll/fuzz-open", "other/" + entry["table"]])
        elif line == 1:
            lines[1] = str(int(lines[1]) + rng.choice([-1, 1]))
        elif line == 2:
            lines[2] = base64.b64encode(bytes(32)).decode()
        else:
            lines[3] = "chain " + "ab" * 32
        body = "\n".join(lines[:4]) + "\n"
        if kind == "note-resigned":
            signer = signers()[receipt["key_id"]]
            lines[5] = f"\u2014 fairroll {_note_signature(signer, 'fairroll', body)}"
        receipt["checkpoint"] = "\n".join(lines)
        detail = f"note line {line}"
    elif kind == "entry":
        paths = list(_paths(entry))
        path = rng.choice(paths)
        old = _get(entry, path)
        _set(entry, path, _edited(old, path, [entry], rng))
        detail = f"entry {'.'.join(map(str, path))}"
    elif kind == "other-entry":
        others = [e for e, _ in corpus.receipts if e["seq"] != entry["seq"]]
        entry = copy.deepcopy(rng.choice(others))
        detail = f"held to seq {entry['seq']} of {entry['table'][:8]}"
    else:
        name = rng.choice(["seq", "tree_size", "key_id", "leaf_hash", "entry_hash", "table"])
        old = receipt.get(name)
        if name == "key_id":
            receipt[name] = next(k for k in signers() if k != old)
        elif isinstance(old, int):
            receipt[name] = old + rng.choice([-1, 1])
        else:
            receipt[name] = rng.choice(["ab" * 32, base64.b64encode(bytes(32)).decode(), "x"])
        detail = f"receipt {name}"
    return Case(
        mutation=f"receipt-{kind}",
        detail=f"seq {receipt['seq']} of {entry['table'][:8]}: {detail}",
        kind="receipt",
        entry=entry,
        receipt=receipt,
    )


# -- cosignatures ------------------------------------------------------------------------


def _cosignature(corpus: Corpus, rng: random.Random) -> Case:
    note, vkey = rng.choice(corpus.cosigned)
    kind = rng.choice(COSIGNATURE_KINDS)
    body, _, signatures = note.partition("\n\n")
    lines = [line for line in signatures.split("\n") if line]
    mine = next(i for i, line in enumerate(lines) if line.startswith("\u2014 alice."))
    name, encoded = lines[mine][2:].split(" ")
    raw = bytearray(base64.b64decode(encoded))
    if kind == "cosig-time":
        raw[4 + rng.randrange(8)] ^= 1
        lines[mine] = f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}"
        detail = "a time byte flipped"
    elif kind == "cosig-body":
        parts = body.split("\n")
        parts[1] = str(int(parts[1]) + 1)
        body = "\n".join(parts)
        detail = "size edited"
    elif kind == "cosig-lines":
        how = rng.choice(["duplicate", "good-then-bad", "bad-then-good", "drop-log", "drop-mine"])
        raw[-1] ^= 1
        bad = f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}"
        if how == "duplicate":
            lines.append(lines[mine])
        elif how == "good-then-bad":
            lines.insert(mine + 1, bad)
        elif how == "bad-then-good":
            lines.insert(mine, bad)
        elif how == "drop-log":
            lines = [line for i, line in enumerate(lines) if i == mine]
        else:
            del lines[mine]
        detail = how
    elif kind == "cosig-name":
        lines[mine] = f"\u2014 bob.players.example {encoded}"
        detail = "line renamed"
    else:
        parts = body.split("\n")
        parts[2] = base64.b64encode(bytes(32)).decode()
        body = "\n".join(parts)
        stamp = int.from_bytes(raw[4:12], "big")
        lines[mine] = cosign(f"{body}\n\n", COSIGNER[0], COSIGNER[1], stamp).rstrip("\n")
        detail = "a forged root cosigned by the player's real key"
    text = f"{body}\n\n" + "".join(f"{line}\n" for line in lines)
    return Case(mutation=kind, detail=detail, kind="cosignature", note=text, vkey=vkey)
