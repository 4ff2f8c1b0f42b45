"""The service as a client of C2SP tlog-witnesses (``FAIRROLL_WITNESSES``): off the
roll path, every few seconds, each table appended to since the last time is submitted
to each witness (``add-checkpoint``, with the consistency proof from the size the
witness holds); the cosignatures it answers are kept like players' (``GET
.../cosignatures``) and ride on the table's checkpoint note.

A witness that is down or refuses is logged with what it answered (its refusal says
why) and asked again, while the table is idle too, after a delay that doubles from the
interval up to ``MAX_BACKOFF_SECONDS``, until it cosigns the table's size; a roll never
waits for it. What a witness holds is learnt from its 409 (``text/x.tlog.size``)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from fairroll.audit import AuditStore
from fairroll.audit.cosignature import CosignatureError, open_cosignature, parse_verifier_key
from fairroll.audit.redis.cosignatures import CosignedCheckpoint

__all__ = ["WitnessClient", "parse_witnesses", "witnessing"]

_log = logging.getLogger("fairroll.witness")
#: How long one add-checkpoint call may take.
TIMEOUT_SECONDS = 5.0
#: The longest wait before asking a witness that failed again.
MAX_BACKOFF_SECONDS = 300.0
#: How much of a witness's refusal a log line quotes.
QUOTED = 300


@dataclass
class WitnessClient:
    """One witness: where its submission prefix is, its verifier key, and per table
    the size it holds (0 until it says otherwise), the size it last cosigned, and after
    a failure when to ask again and how long the wait was."""

    url: str
    vkey: str
    held: dict[str, int] = field(default_factory=dict)
    cosigned: dict[str, int] = field(default_factory=dict)
    retry_at: dict[str, float] = field(default_factory=dict)
    backoff: dict[str, float] = field(default_factory=dict)

    def due(self, table: str, size: int, now: float) -> bool:
        """Whether to submit ``table`` at ``size`` now: not cosigned at that size or a
        later one (another replica may have grown the table past what this process
        saw), and not waiting out a failure."""
        return self.cosigned.get(table, 0) < size and now >= self.retry_at.get(table, 0.0)

    def failed(self, table: str, now: float, every: float) -> None:
        """Wait before asking again: the interval, then twice the last wait each time."""
        wait = min(max(every, 2 * self.backoff.get(table, 0.0)), MAX_BACKOFF_SECONDS)
        self.backoff[table] = wait
        self.retry_at[table] = now + wait

    def succeeded(self, table: str, size: int) -> None:
        self.cosigned[table] = size
        self.backoff.pop(table, None)
        self.retry_at.pop(table, None)

    @property
    def name(self) -> str:
        return parse_verifier_key(self.vkey).name


def parse_witnesses(value: str) -> list[WitnessClient]:
    """``FAIRROLL_WITNESSES``: ``<submission URL> <verifier key>`` pairs, comma-separated."""
    witnesses = []
    for item in filter(None, (part.strip() for part in value.split(","))):
        url, _, vkey = item.partition(" ")
        parse_verifier_key(vkey.strip())  # refuse a bad key at startup
        witnesses.append(WitnessClient(url.rstrip("/"), vkey.strip()))
    return witnesses


async def submit(store: AuditStore, witness: WitnessClient, table: str) -> bool:
    """Submit ``table``'s checkpoint now to ``witness``; keep its cosignature. True when
    the witness cosigned."""
    checkpoint = await store.checkpoint(table)
    for _ in range(2):  # once more after a 409 taught the size the witness holds
        old = witness.held.get(table, 0)
        if old > checkpoint.size:
            _log.warning(
                "witness %s holds %s at size %d, beyond the table's %d",
                witness.url,
                table,
                old,
                checkpoint.size,
            )
            return False
        proof = (
            await store.consistency_proof(table, old, checkpoint.size)
            if 0 < old < checkpoint.size
            else []
        )
        note = checkpoint.text.split("\n\n")[0] + "\n\n" + _log_line(checkpoint.text)
        body = f"old {old}\n" + "".join(f"{base64.b64encode(h).decode()}\n" for h in proof)
        status, answer = await asyncio.to_thread(_post, witness, body + "\n" + note)
        if status == 409 and answer.strip().isdigit():
            witness.held[table] = int(answer.strip())
            continue
        if status != 200:
            _log.warning(
                "witness %s refused %s of size %d from %d: %s %s",
                witness.url,
                table,
                checkpoint.size,
                old,
                status or "unreachable",
                " ".join(answer.split())[:QUOTED] or "(no reason given)",
            )
            return False
        cosigned = note + answer
        try:
            stamp = open_cosignature(cosigned, witness.vkey)
        except CosignatureError as exc:
            _log.warning("witness %s answered no cosignature of %s: %s", witness.url, table, exc)
            return False
        witness.held[table] = checkpoint.size
        witness.succeeded(table, checkpoint.size)
        await store.cosignatures.keep(
            table,
            CosignedCheckpoint(
                name=witness.name,
                vkey=witness.vkey,
                size=checkpoint.size,
                root_hash=checkpoint.root_hash,
                time=stamp,
                note=cosigned,
            ),
            credential="witness",
        )
        return True
    return False


@contextlib.asynccontextmanager
async def witnessing(
    store: AuditStore, witnesses: list[WitnessClient], every: float
) -> AsyncIterator[None]:
    """Run the submissions in the background while the app runs."""
    if not witnesses:
        yield
        return
    task = asyncio.create_task(_loop(store, witnesses, every))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _loop(store: AuditStore, witnesses: list[WitnessClient], every: float) -> None:
    """Each round, every table with entries that a witness has not cosigned at its
    size (and is not waiting out a failure for) is submitted to it; a round that takes
    longer than the interval leaves the rest to the next."""
    while True:
        await asyncio.sleep(every)
        started = time.monotonic()
        for table, head in list(store.tips.heads.items()):
            if head.seq == 0:
                continue
            for witness in witnesses:
                if not witness.due(table, head.seq, time.monotonic()):
                    continue
                try:
                    done = await submit(store, witness, table)
                except Exception:  # a witness must never take the service down
                    _log.exception("witness %s: submitting %s failed", witness.url, table)
                    done = False
                if not done:
                    witness.failed(table, time.monotonic(), every)
            if time.monotonic() - started > every:
                break  # the rest next time


def _log_line(text: str) -> str:
    """The log's own signature line of a note (its first), with its newline."""
    return text.split("\n\n", 1)[1].split("\n", 1)[0] + "\n"


def _post(witness: WitnessClient, body: str) -> tuple[int, str]:
    request = urllib.request.Request(  # noqa: S310 - the operator configures the URL
        f"{witness.url}/add-checkpoint",
        data=body.encode(),
        method="POST",
        headers={"Content-Type": "text/plain"},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:  # noqa: S310
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as exc:
        return 0, str(exc)
