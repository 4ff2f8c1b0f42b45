"""The witness's one job: cosign a log's checkpoint only as the log grows consistently
from the one it cosigned last, keeping that one in a state file (the protocol is in the
package's docstring)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairroll.audit import merkle, note
from fairroll.audit.checkpoint import NoteError, parse_body
from fairroll.audit.cosignature import cosign

__all__ = [
    "MAX_PROOF_LINES",
    "SIZE_TYPE",
    "TEXT_TYPE",
    "LogKey",
    "Verdict",
    "Witness",
    "parse_log_key",
]


#: The content type of a 409's body: the size the witness holds, in decimal (exactly
#: this: a log client may compare it byte for byte).
SIZE_TYPE = "text/x.tlog.size"
TEXT_TYPE = "text/plain; charset=utf-8"
MAX_PROOF_LINES = 63


@dataclass(frozen=True, slots=True)
class LogKey:
    """A log's signed-note key: its name and base64 Ed25519 public key."""

    name: str
    public_key: str


def parse_log_key(vkey: str) -> LogKey:
    """A log's verifier key (``name+<hash hex>+base64(0x01 || key)``, as ``note_key`` in
    ``GET /v1/keys``); ValueError if it is not an Ed25519 note key."""
    name, _, rest = vkey.partition("+")
    _, _, encoded = rest.partition("+")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        raise ValueError(f"not a verifier key: {vkey!r}") from None
    if not name or len(raw) != 33 or raw[0] != 0x01:
        raise ValueError(f"not an Ed25519 note verifier key: {vkey!r}")
    return LogKey(name, base64.b64encode(raw[1:]).decode())


@dataclass(frozen=True, slots=True)
class Verdict:
    """An answer: its HTTP status, content type and body."""

    status: int
    body: str
    content_type: str = TEXT_TYPE


class Witness:
    """The witness ``name`` with key ``key``, for the logs ``logs`` (origin -> keys; an
    origin ending in ``*`` stands for every origin it begins, as ``fairroll/*`` for every
    table of a fairroll server), keeping its state in ``state`` (a JSON file: origin ->
    [size, root hex]); ``clock`` dates its cosignatures (POSIX seconds)."""

    def __init__(
        self,
        name: str,
        key: Ed25519PrivateKey,
        logs: Mapping[str, list[LogKey]],
        state: Path,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.clock = clock
        self.key = key
        self.logs = dict(logs)
        self.state = state
        self._lock = asyncio.Lock()
        held = json.loads(state.read_text()) if state.exists() else {}
        # A state file from before the notes were kept holds [size, root]: no note yet.
        self._seen: dict[str, tuple[int, str, str]] = {
            o: (int(v[0]), str(v[1]), str(v[2]) if len(v) > 2 else "") for o, v in held.items()
        }

    async def add_checkpoint(self, body: str) -> Verdict:
        """The add-checkpoint call, as the spec defines it (module docstring)."""
        try:
            old, proof, submitted = _request(body)
        except ValueError as exc:
            return Verdict(400, f"{exc}\n")
        origin = submitted.split("\n", 1)[0]
        keys = self.logs.get(origin) or next(
            (k for o, k in self.logs.items() if o.endswith("*") and origin.startswith(o[:-1])),
            None,
        )
        if keys is None:
            return Verdict(404, f"unknown log {origin}\n")
        # Every trusted key at once: a line of one of them that fails refuses the note,
        # even beside a good line of another (note.open_note).
        verifiers = [note.SignerVerifier(k.name, base64.b64decode(k.public_key)) for k in keys]
        try:
            size, root, _ = parse_body(note.open_note(submitted, verifiers).text)
        except (note.NoteError, NoteError) as exc:
            return Verdict(403, f"the checkpoint is not signed by this log's keys: {exc}\n")
        if old > size:
            return Verdict(400, f"old size {old} is beyond the checkpoint's size {size}\n")
        async with self._lock:  # the check and the record: one step
            held_size, held_root, _ = self._seen.get(origin, (0, merkle.EMPTY_ROOT.hex(), ""))
            if old != held_size:
                return Verdict(409, f"{held_size}\n", SIZE_TYPE)
            if old == size:
                if root.hex() != held_root:
                    return Verdict(422, f"a tree of size {size} with another root is held\n")
            elif old == 0:
                if proof:
                    return Verdict(422, "a proof from size 0 is empty\n")
            else:
                try:
                    merkle.verify_consistency(old, size, bytes.fromhex(held_root), root, proof)
                except merkle.ProofError as exc:
                    return Verdict(422, f"the consistency proof does not hold: {exc}\n")
            line = cosign(submitted, self.name, self.key, int(self.clock()))
            self._seen[origin] = (size, root.hex(), f"{submitted}{line}\n")
            self._persist()
        return Verdict(200, f"{line}\n")

    def latest(self, origin_hash: str) -> Verdict:
        """The monitoring read: the latest checkpoint cosigned for the log whose origin
        hashes to ``origin_hash``, with its signatures and the cosignature."""
        for origin, (_, _, cosigned) in self._seen.items():
            if cosigned and hashlib.sha256(origin.encode()).hexdigest() == origin_hash:
                return Verdict(200, cosigned)
        return Verdict(404, "this witness cosigned no checkpoint of that log\n")

    def _persist(self) -> None:
        fresh = self.state.with_suffix(".tmp")
        fresh.write_text(json.dumps({o: list(held) for o, held in self._seen.items()}))
        with fresh.open("rb") as handle:
            os.fsync(handle.fileno())
        fresh.replace(self.state)


def _request(body: str) -> tuple[int, list[bytes], str]:
    head, blank, note = body.partition("\n\n")
    if not blank:
        raise ValueError("the body is an old size line, proof lines, a blank line, a note")
    lines = head.split("\n")
    first = lines[0]
    if not first.startswith("old "):
        raise ValueError("the first line is 'old <size>'")
    digits = first[4:]
    if not digits.isdigit() or (digits != "0" and digits.startswith("0")):
        raise ValueError("the old size is a decimal number without leading zeroes")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise ValueError(f"at most {MAX_PROOF_LINES} proof lines")
    try:
        proof = [base64.b64decode(line, validate=True) for line in lines[1:]]
    except binascii.Error:
        raise ValueError("a proof line is one base64 hash") from None
    if any(len(h) != merkle.HASH_SIZE for h in proof):
        raise ValueError("a proof line is one 32-byte hash")
    return int(digits), proof, note
