"""What ``fairroll verify`` prints of an export: the verdict first, then what holds and
the auditor's report; and the exit status it answers with."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairroll.audit import VerifyReport
    from fairroll.audit.report import AuditReport

__all__ = ["Reopener", "answer"]

#: Opens the export again each time it is read (``verify``'s ``_reopener``).
Reopener = Callable[[], AbstractContextManager[Iterable[bytes]]]


def answer(
    export: Reopener,
    report: VerifyReport,
    checked: tuple[bool, int, list[int]],
    *,
    rooted: bool,
    allow_unsigned: bool,
    as_json: bool,
) -> int:
    """Print the verdict first, then what holds and the auditor's report; the exit status:
    0 verified, 1 failed, 4 not verified (no signature checked, or none under a pinned
    root: keys.json alone is the server's own word on its keys)."""
    import msgspec  # noqa: PLC0415

    replay, anchors, roots = checked
    signed = report.signatures_checked and rooted
    unsigned = report.ok and not signed and not allow_unsigned
    status = 1 if not report.ok else 4 if unsigned else 0
    audit = _audit(export) if report.ok else None
    if as_json:
        verdict = "FAIL" if not report.ok else "NOT VERIFIED" if unsigned else "OK"
        if verdict == "OK" and not signed:
            verdict = "OK, UNSIGNED"
        said = {"verdict": verdict, "exit": status, "verification": report, "report": audit}
        print(msgspec.json.encode(said).decode())
        return status
    if unsigned:
        # The verdict first: a log whose signatures were not checked is not verified.
        print(
            "NOT VERIFIED: no root key is pinned, so no signature is trusted (pass --root "
            "<root key id>, given out of band, and --keys keys.json from GET /v1/keys; "
            "--allow-unsigned to accept the rest)"
        )
        _print_ok(report, False, replay, anchors, roots, verdict=False)
    elif report.ok:
        _print_ok(report, signed, replay, anchors, roots)
    else:
        print(f"FAIL at seq {report.first_bad_seq}: {report.reason}")
    if audit is not None:
        _print_audit(audit, report)
    return status


def _audit(export: Reopener) -> AuditReport:
    """The auditor's report of an export the verifier has passed."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit.report import audit_report  # noqa: PLC0415

    with export() as lines:
        entries = (msgspec.json.decode(line) for line in lines if line.strip())
        return audit_report(entries)


def _print_audit(audit: AuditReport, report: VerifyReport) -> None:
    print("rolls by mechanic:")
    for mechanic, sources in audit.by_mechanic.items():
        by_source = ", ".join(f"{count} {source}" for source, count in sources.items())
        print(f"  {mechanic}: {audit.mechanics[mechanic]} ({by_source})")
    print(f"first entry {audit.first_time}, last entry {audit.last_time}")
    for key_id, used in audit.keys.items():
        print(f"key {key_id} signed {used.entries} entries (seq {used.first_seq}..{used.last_seq})")
    for title, faces in (
        ("fairroll's dice (derived from seeds)", audit.derived_faces),
        (
            "supplied dice (rolled elsewhere: the callers' dice, not fairroll's)",
            audit.supplied_faces,
        ),
    ):
        if not faces:
            continue
        print(f"{title}, faces counted, and the chance a fair die looks this uneven:")
        for die in faces:
            counted = " ".join(f"{face}:{count}" for face, count in enumerate(die.counts, 1))
            fit = die.fit
            if fit.method == "chi-square":
                test = (
                    f"chi-square p = {fit.p_value:.3g} (statistic {fit.statistic:.2f}, "
                    f"df {fit.degrees_of_freedom})"
                )
            elif fit.method == "exact":
                test = f"exact multinomial p = {fit.p_value:.3g}"
            else:
                test = str(fit.note)
            many = "die" if die.dice == 1 else "dice"
            print(f"  d{die.sides}: {die.dice} {many}, {counted}; {test}")
    if report.last_seq:
        print(
            f"keep: the signed checkpoint of size {report.last_seq} (Merkle root "
            f"{report.root_hash}): curl -s -H 'Accept: text/plain' "
            f"<server>/v1/tables/{audit.table or '<table>'}/checkpoint > kept-checkpoint.txt, "
            "and next time pass --since kept-checkpoint.txt: it proves the log only grew"
        )


def _print_ok(
    report: VerifyReport,
    signed: bool,
    replay: bool,
    anchors: int,
    roots: list[int],
    *,
    verdict: bool = True,
) -> None:
    from fairroll.audit.verify.report import EARLIER_REVISION  # noqa: PLC0415

    checked = "chain, seeds" + (", signatures" if signed else "") + (", outcomes" if replay else "")
    if anchors:
        checked += f", {anchors} checkpoint(s)/receipt(s)"
    said = "OK" if signed else "OK, UNSIGNED"
    print(
        f"{said if verdict else 'what holds'}: {report.entries} entries "
        f"(seq {report.first_seq}..{report.last_seq}); checked {checked}; head {report.head_hash}"
    )
    if report.root_hash is not None:
        print(f"Merkle root at size {report.last_seq}: {report.root_hash}")
    if roots:
        sizes = ", ".join(str(size) for size in roots)
        print(f"consistent with the kept checkpoint(s) of size {sizes}")
    if report.covered_through is not None:
        print(
            f"signatures: the entries through seq {report.covered_through} by the signed "
            "checkpoint of that size (one signature over their Merkle root), the rest one by one"
        )
    unfair = len(report.not_fair)  # committed rolls each: never counted as fair
    for source, count in sorted(report.sources.items()):
        fair = count - unfair if source == "committed" else count
        if fair < count:
            print(f"{unfair} committed roll(s): NOT FAIR, each named below")
        if fair:
            print(f"{fair} {source} roll(s): {report.proves.get(source, source)}")
    for roll in report.not_fair:
        print(f"seq {roll.seq}: NOT FAIR: {roll.why}")
    for mechanic, count in report.earlier_revisions.items():
        print(f"{count} {mechanic} entr{'y' if count == 1 else 'ies'}: {EARLIER_REVISION}")
    if report.refusals:
        print(f"refusals: {report.refusals}")
    for lost in report.lost:
        print(
            f"lost: seqs {lost.lost_after + 1}..{lost.resume_after}, declared by the epoch at "
            f"seq {lost.epoch_seq}: {lost.reason or '(no reason given)'}"
        )
    if not signed:
        print("warning: signatures NOT checked under a pinned root; pass --root and --keys")
    if report.unrevealed:
        print(
            f"note: {report.unrevealed} committed roll(s) wait for their seed session's "
            "reveal; their dice are not checked yet"
        )
    _sealed(report, replay)


def _sealed(report: VerifyReport, replay: bool) -> None:
    """Sealed rolls in words: how many a reveal opened, which were never revealed (listed,
    not bad: whoever holds an opening may publish it, or never), which reveals name a roll
    before the part read."""
    if report.sealed_revealed:
        count = report.sealed_revealed
        print(
            f"{count} sealed roll{'s' if count != 1 else ''} revealed: each opening opens its "
            "commitment and its dice derive from link:client_seed:nonce:blind"
            + (", its outcome the one the rules give" if replay else "")
        )
    if report.sealed_unrevealed:
        count = len(report.sealed_unrevealed)
        seqs = ", ".join(str(seq) for seq in report.sealed_unrevealed)
        print(f"{count} sealed roll{'s' if count != 1 else ''} never revealed: seq {seqs}")
    if report.sealed_unchecked:
        count = report.sealed_unchecked
        print(
            f"{count} reveal{'s' if count != 1 else ''} of sealed rolls before the part "
            "of the log read: not checked here"
        )
