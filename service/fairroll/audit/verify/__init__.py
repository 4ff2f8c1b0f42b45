"""Check a table's log entry by entry and name the first bad seq: fairroll's one Python
verification core. The CLI, the server, the stdlib script's log mode and the Python
client (which vendors it at build time) all run this package.

Works on the stored JSON of each entry (an NDJSON export, or the store), so the checks
are the ones any other verifier can make from the bytes alone. For each entry, in order
(``docs/audit.md``, "What a verifier checks", states the same list):

1. the line is one JSON object, with no key twice, holding the entry fields;
2. seq continues the previous entry's (the first full export starts at 1), except for
   the gap an ``audit.epoch`` entry declares;
3. prev_hash is the previous entry's entry_hash (GENESIS_HASH at seq 1), and the table is
   the same (and the one pinned, if any);
4. entry_hash is SHA-256(prev_hash bytes || JCS of the body); the body must have an
   RFC 8785 form (no floats, integers within +-(2**53 - 1));
5. the signature verifies with the public key named by key_id (retired keys: by time);
6. the entry's source and mechanic: a ``drawn`` seed is 64 hex digits and a ``chosen`` or
   ``drawn`` entry's dice re-derive from its seed; the table's policy (``table.policy``,
   seq 1 only) allows chosen seeds and supplied dice; a ``committed`` roll names a
   session committed earlier in the log (``session.commit``), with the same commitment,
   not yet revealed, and the nonce after the session's last one; a ``session.reveal``
   publishes the seed whose SHA-256 is the commitment, counts the session's rolls, and
   then every roll of the session re-derives from (server seed, client seed, nonce);
7. optionally, ``replay`` re-resolves the request from the dice and the outcome must come
   out identical (a committed roll: once its session is revealed);
8. the Merkle tree (``merkle``) grows by the entry's leaf; every kept checkpoint or
   receipt (``anchors``: seq and entry_hash; ``roots``: size and root) must match.

Rolls that verify but are not fair are listed (``VerifyReport.not_fair``): a committed
roll whose client seed the log showed before the chain it is rolled on was committed.

The package, a module a job: ``entries`` (what one entry holds alone), ``trust`` (what a
verification trusts, and the keys the log publishes under the pinned root),
``sessions`` (the seed sessions' state machine), ``checks`` (one entry after the one
before), ``run`` (the pass over a log, the tree, kept checkpoints, the state to resume
from), ``report`` (the verdict, in words).

Version 1 entries (``v: 1``) are checked as version 1 wrote them: ``seeded`` for drawn or
chosen, and committed rolls with nonces unique per session, revealed by ``reveals``.
"""

from __future__ import annotations

from fairroll.audit.verify.entries import (
    EPOCH_MECHANIC,
    DuplicateKeyError,
    Replay,
    Task,
    check_tasks,
    loads_strict,
)
from fairroll.audit.verify.report import (
    SELECTIVE_REFUSAL,
    WHAT_IT_PROVES,
    LostRange,
    NotFair,
    VerifyReport,
)
from fairroll.audit.verify.run import SessionState, VerifiedState, verify_entries, verify_run
from fairroll.audit.verify.trust import PublicKeyLike, Trust

__all__ = [
    "EPOCH_MECHANIC",
    "SELECTIVE_REFUSAL",
    "WHAT_IT_PROVES",
    "DuplicateKeyError",
    "LostRange",
    "NotFair",
    "PublicKeyLike",
    "Replay",
    "SessionState",
    "Task",
    "Trust",
    "VerifiedState",
    "VerifyReport",
    "check_tasks",
    "loads_strict",
    "verify_entries",
    "verify_run",
]
