"""Write the audit-format test vectors in docs/vectors/ (every verifier runs them in CI).

Run: python scripts/make_vectors.py   (tests/test_vectors.py fails when they drift)

Everything is fixed (the key, the times, the seeds) and Ed25519 signatures are
deterministic, so the files come out byte for byte the same each time:

    keys.json             GET /v1/keys as a server with the vector key answers it
    log.ndjson            a table's log, format 2: a drawn, a chosen and a supplied roll;
                          a seed session's commitment, two committed rolls and its reveal;
                          a hash-chain session of two links for Roth, two rolls, its
                          renewal and a third roll on the next chain
    checkpoint.json       the signed checkpoint of the whole log (its "text" is the note)
    proofs.json           inclusion proofs of every entry in that tree, consistency
                          proofs from every smaller size, and the root at every size
    receipts.json         each entry's receipt as its round answered it (two rounds:
                          seq 1..5 and 6..12, one signed note each, the inclusion proof
                          in that round's tree), and receipts tampered with, each with
                          a phrase of the reason every verifier must report
    cosignatures.json     a player's cosignature (C2SP cosignature/v1) of checkpoint.json
                          at a fixed time: its key, verifier key and the cosigned note;
                          and cosigned notes tampered with, which must not verify
    witness.json          a C2SP tlog-witness's add-checkpoint requests, in order, from
                          a fresh state, each with the status and body the witness must
                          answer (its cosignatures dated at a fixed time): the first
                          tree, a bad proof, a consistent growth, the same tree again, a
                          rollback, a stale old size, another tree of a size it holds
    jcs.json              RFC 8785 cases: a JSON value and its canonical bytes
    bad/<name>.ndjson     the log tampered with, and in expected.json the first bad seq
                          and a phrase of the reason every verifier must report
    cases/                the conformance cases (docs/audit.md, "Conformance"): each
                          case's files and index.json, their inputs and verdicts

The package, by job: ``fixed`` (keys, seeds, names), ``drafts`` (rolls and the statement
kinds), ``logs`` (logs sealed, rewritten, their keys, trees and checkpoints), ``formats``
(bad/, receipts, cosignatures, witness), ``case`` (one vector), ``cases`` (one module per
class of attack), ``writer`` (every file, from ``main``).
"""
