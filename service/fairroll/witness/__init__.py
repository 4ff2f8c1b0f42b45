"""A C2SP tlog-witness (https://c2sp.org/tlog-witness): ``fairroll witness`` cosigns a
log's checkpoints only as they grow consistently, so a log cannot show two histories to
two parties that both trust the witness.

For each log it knows (an origin and the log's verifier keys), the witness keeps the
latest checkpoint it cosigned: its size, its root and the note with its cosignature.
``POST /add-checkpoint`` takes::

    old <size>\\n                 the size of the latest checkpoint the witness cosigned
    <base64 hash>\\n ...          the RFC 6962 consistency proof from it (none from 0)
    \\n
    <the new checkpoint, a signed note>

and answers 200 with the witness's cosignature line(s) (C2SP tlog-cosignature), after
recording the new checkpoint. It refuses, as the spec says: 404 for an unknown origin;
403 if no trusted key signed the note, or if a line of a trusted key (its name and key
hash) does not verify, whatever good line stands beside it; 400 if ``old`` is beyond
the checkpoint's size; 409 if ``old`` is not the size it holds, with exactly
``Content-Type: text/x.tlog.size`` and that size in decimal as the body; 422 if the
proof does not hold, or if ``old`` is the checkpoint's size and the roots differ (a
fork of the same size). The check and the record are one step (a lock; the state file
is replaced whole, atomically), so a witness never rolls back.

``GET /<origin hash>/checkpoint`` (the monitoring prefix is the submission prefix; the
origin hash is the lowercase hex SHA-256 of the origin line) answers the latest
checkpoint it cosigned for that log, the log's signatures and its cosignature lines
with it, or 404 if it never cosigned one.

Every text answer is ``text/plain; charset=utf-8`` and says its charset once.
"""

from fairroll.witness.app import create_app
from fairroll.witness.cosigner import SIZE_TYPE, LogKey, Verdict, Witness, parse_log_key

__all__ = ["SIZE_TYPE", "LogKey", "Verdict", "Witness", "create_app", "parse_log_key"]
