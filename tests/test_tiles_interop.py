"""A table's mirror read by an independent C2SP tlog-tiles implementation from PyPI:
``tlog-scales`` (its ``TilesReader`` over HTTP, its RFC 9162 proof checks), none of
fairroll's code on the reading side.

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
from typing import Any

import httpx
import pytest
from tlog_scales.backend import HttpBackend
from tlog_scales.reader import TilesReader
from tlog_scales.tiles import leaf_hash
from tlog_scales.tlog import (
    Checkpoint,
    ConsistencyProof,
    ConsistencyProofInvalid,
    InclusionProof,
    InclusionProofInvalid,
)

from test_tiles import mirror, roll, static_server


def test_tlog_scales_reads_a_mirror_and_checks_an_inclusion_and_a_consistency_proof(
    live_server: Any, client: httpx.Client, table: str, tmp_path: Any
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
