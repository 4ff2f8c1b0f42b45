"""fairroll and an independent C2SP tlog-tiles implementation from PyPI, ``tlog-scales``
(its ``TilesReader``, ``TilesWriter``, signed notes and RFC 9162 proof checks), none of
fairroll's code on its side: it reads a table's mirror; and a log it writes and signs is
witnessed by ``fairroll witness``, whose cosignatures its own verifier accepts.
(tlog-scales has no witness of its own, so fairroll's log submitting to a third-party
witness is not tested here: no tlog-witness implementation is on the package index.)

What it reads agrees byte for byte: the tiles give the signed root, the bundles give the
exported entries, its inclusion and consistency proofs built from the tiles are the
server's own and hold under its checks. What it does not take (tlog-scales 0.0.3): a
checkpoint with an extension line. C2SP tlog-checkpoint allows extension lines after the
root hash, and fairroll's note carries one (``chain <head>``); its ``Checkpoint.from_text``
takes the fourth line for the blank one and fails, and its verifiers sign the body
rebuilt from three lines only. So the checkpoint's size and root are read here from the
note's own lines, and the note's signature is left to Go's ``sumdb/note`` (test_tiles.py).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tlog_scales.backend import HttpBackend, LocalBackend
from tlog_scales.reader import TilesReader
from tlog_scales.signing import NoteSignature, PlainEd25519Signer, Vkey
from tlog_scales.tiles import leaf_hash
from tlog_scales.tlog import (
    Checkpoint,
    ConsistencyProof,
    ConsistencyProofInvalid,
    InclusionProof,
    InclusionProofInvalid,
)
from tlog_scales.writer import TilesWriter

from test_tiles import mirror, roll, static_server
from test_witness_spec import Witness


def test_tlog_scales_reads_a_mirror_and_checks_an_inclusion_and_a_consistency_proof(
    live_server: Any, client: httpx.Client, table: str, tmp_path: Path
) -> None:
    roll(client, table, 3)
    three = client.get(f"/v1/tables/{table}/log/checkpoint").text.split("\n")
    roll(client, table, 255)
    folder = tmp_path / "mirror"
    assert mirror(live_server, table, folder).returncode == 0
    note = (folder / "checkpoint").read_text()
    origin, size_text, root_text = note.split("\n")[:3]
    size, root = int(size_text), base64.b64decode(root_text)
    old_size, old_root = int(three[1]), base64.b64decode(three[2])
    exported = client.get(f"/v1/tables/{table}/export").content.splitlines()
    with static_server(folder) as url:
        reader = TilesReader(HttpBackend(url))
        reader.set_size(size)
        assert reader.calculate_root_hash() == root
        for index in (0, 200, 257):  # the full bundle and the partial one
            entry = reader.get_entry(index)
            assert entry == exported[index]
            proof = reader.get_inclusion_proof(index, size)
            proof.check(leaf_hash(entry), root)
            served = client.get(
                f"/v1/tables/{table}/proofs/inclusion", params={"seq": index + 1, "size": size}
            ).json()
            assert [base64.b64encode(h).decode() for h in proof.node_hashes] == served["proof"]
        consistency = reader.get_consistency_proof(old_size, size)
        consistency.check(old_root, root)
    served = client.get(
        f"/v1/tables/{table}/proofs/consistency", params={"from": old_size, "to": size}
    ).json()
    assert [base64.b64encode(h).decode() for h in consistency.node_hashes] == served["proof"]
    # The server's proof, taken by tlog-scales' own check; a fork's old root is not.
    taken = ConsistencyProof(old_size, size, [base64.b64decode(h) for h in served["proof"]])
    taken.check(old_root, root)
    with pytest.raises(ConsistencyProofInvalid):
        taken.check(b"\x05" * 32, root)
    with pytest.raises(InclusionProofInvalid):  # the proof of 257 is no proof of 0
        InclusionProof(0, size, proof.node_hashes).check(leaf_hash(exported[0]), root)
    assert origin == f"fairroll/{table}"
    # The gap: a checkpoint with an extension line (C2SP allows them) is not one to it.
    with pytest.raises((IndexError, ValueError)):
        Checkpoint.from_text(note)


def test_a_log_tlog_scales_builds_is_witnessed_by_fairroll_witness(tmp_path: Path) -> None:
    """tlog-scales writes a log (its tiles and checkpoints signed by its own signer) and
    submits each checkpoint to ``fairroll witness`` with the consistency proofs its reader
    builds: 200 and a cosignature line its own verifier accepts; a stale old size 409 with
    the size held (``text/x.tlog.size``); a proof that does not hold, and another tree of
    a size the witness holds, 422."""
    origin = "scales.example/log"
    signer = PlainEd25519Signer(origin, Ed25519PrivateKey.generate())
    writer = TilesWriter.create(tmp_path / "log", origin)
    notes = []
    for count in (3, 300, 7):
        for i in range(count):
            writer.add_leaf(f"entry {len(notes)}/{i}".encode())
        writer.commit([signer])
        notes.append((tmp_path / "log" / "checkpoint").read_text())
    sizes = [Checkpoint.from_text(n).size for n in notes]
    assert sizes == [3, 303, 310]
    reader = TilesReader(LocalBackend(tmp_path / "log"))
    reader.set_size(310)
    witness = Witness(tmp_path / "w", [f"{origin}={signer.vkey.serialize()}"])
    try:
        verifier = Vkey.from_string(witness.vkey).get_verifier()
        first = witness.add(0, [], notes[0])
        assert first.status_code == 200, first.text
        grown = witness.add(3, reader.get_consistency_proof(3, 303).node_hashes, notes[1])
        assert grown.status_code == 200, grown.text
        for answer, text in ((first, notes[0]), (grown, notes[1])):
            line = NoteSignature.from_line(answer.text.strip())
            verifier.verify_note(line, Checkpoint.from_text(text))
        stale = witness.add(3, reader.get_consistency_proof(3, 310).node_hashes, notes[2])
        assert stale.status_code == 409 and stale.text == "303\n", stale.text
        assert stale.headers["content-type"] == "text/x.tlog.size"
        bad = [b"\x07" * 32 for _ in reader.get_consistency_proof(303, 310).node_hashes]
        refused = witness.add(303, bad, notes[2])
        assert refused.status_code == 422, refused.text
        fork = Checkpoint.make_signed(origin, 303, b"\x09" * 32, [signer]).serialize()
        forked = witness.add(303, [], fork)
        assert forked.status_code == 422, forked.text
        ok = witness.add(303, reader.get_consistency_proof(303, 310).node_hashes, notes[2])
        assert ok.status_code == 200, ok.text
    finally:
        witness.stop()
