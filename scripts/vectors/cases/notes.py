"""Conformance cases of the class "notes": a receipt whose signed note is not a note as
C2SP ``signed-note`` and Go's ``note.Open`` read one (the Python core's ``audit/note.py``
and the JavaScript core's ``verify/note.js`` refuse each with the same words)."""

from __future__ import annotations

import base64
import json
from typing import Any

from vectors.case import Case
from vectors.cases.receipts import receipt_at
from vectors.fixed import Log

#: A signature line of a key no verifier knows: its base64 is a 4-byte key hash and a
#: 64-byte signature, as a mirror's or a witness's line would be.
_OTHER = base64.b64encode(bytes(range(68))).decode()


def note_cases(log: Log, signer: Any) -> list[Case]:
    """A good receipt's note made malformed each way a note can be: every verifier that
    reads notes refuses the receipt, naming the form."""
    good = receipt_at(log, 3)
    note = good["checkpoint"]
    text, _, block = note.rpartition("\n\n")
    line = block[:-1]
    padded = base64.b64encode(bytes(range(69))).decode() + "="

    def extra(*lines: str) -> str:
        return note + "".join(f"{more}\n" for more in lines)

    def signed(body: str, message: str) -> str:
        """``body`` (a note's text) with the log key's signature over ``message``."""
        raw = base64.b64decode(line.rsplit(" ", 1)[1])[:4]
        signature = base64.b64decode(signer.sign_message(message.encode()))
        return f"{body}\n\u2014 fairroll {base64.b64encode(raw + signature).decode()}\n"

    comment = text + "\ncomment {}\n"
    kinds = [
        (
            "note-line-without-the-em-dash",
            "the note's signature line opened with a hyphen, not an em dash",
            f"{text}\n\n{line.replace(chr(0x2014), '-', 1)}\n",
            "not a signature line",
        ),
        (
            "note-line-with-an-empty-name",
            "a second signature line with no key name",
            extra(f"\u2014  {_OTHER}"),
            "not a signature line",
        ),
        (
            "note-key-name-with-a-unicode-space",
            "a second signature line whose key name holds a no-break space",
            extra(f"\u2014 mirror\u00a0example {_OTHER}"),
            "not a signature line",
        ),
        (
            "note-key-name-with-a-plus",
            "a second signature line whose key name holds a plus",
            extra(f"\u2014 mirror+example {_OTHER}"),
            "not a signature line",
        ),
        (
            "note-signature-not-base64",
            "a second signature line whose base64 lost a digit",
            extra(f"\u2014 mirror.example {_OTHER[1:]}"),
            "not base64",
        ),
        (
            "note-signature-padded-past-its-last-quad",
            "a second signature line whose base64 carries padding after a whole quad",
            extra(f"\u2014 mirror.example {padded}"),
            "not base64",
        ),
        (
            "note-signature-of-a-key-hash-alone",
            "a second signature line holding four bytes (a key hash, no signature)",
            extra("\u2014 mirror.example AAAAAA=="),
            "a key hash and a signature",
        ),
        (
            "note-with-a-hundred-and-one-signature-lines",
            "the note's line and a hundred lines of other keys (Go's cap is a hundred)",
            extra(*[f"\u2014 mirror{i}.example {_OTHER}" for i in range(100)]),
            "at most 100 signature lines",
        ),
        (
            "note-with-no-blank-line",
            "the blank line between the text and its signature taken out",
            f"{text}\n{line}\n",
            "a blank line",
        ),
        (
            "note-last-line-without-its-newline",
            "the signature line's newline taken out",
            note[:-1],
            "a blank line",
        ),
        (
            "note-text-with-a-control-character",
            "the log's key signs a text holding a control character (BEL) on a line of its own",
            signed(comment.format("\a"), comment.format("\a")),
            "UTF-8 text",
        ),
        (
            "note-text-with-a-lone-surrogate",
            "a text holding a lone surrogate (a JSON escape), signed as U+FFFD",
            signed(comment.format("\ud800"), comment.format("\ufffd")),
            "UTF-8 text",
        ),
    ]
    made: list[Case] = []
    for name, attack, checkpoint, reason in kinds:
        item = Case(f"receipt-{name}", "notes", attack, seq=3, reason=reason)
        item.kind = "receipt"
        item.json_file("entry", log[2])
        # ASCII escapes: a lone surrogate has no UTF-8 spelling in a file.
        held = {**good, "checkpoint": checkpoint}
        item.file("receipt", ".json", json.dumps(held, indent=2) + "\n")
        made.append(item)
    return made
