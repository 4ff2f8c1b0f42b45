"""Run every conformance case of docs/vectors/cases through one Python verifier and print
one JSON object: case name -> verdict ``{ok, first_bad_seq, reason, not_fair}`` (or
``{"error": ...}`` when the verifier broke on it).

    python run_python.py VERIFIER docs/vectors [--url URL] [--redis URL] [--python P]

VERIFIER is one of ``library`` (``fairroll.audit.verify_entries`` with ``replay``),
``cli-serial`` and ``cli-parallel`` (``fairroll verify --json --workers 1|2``),
``endpoint`` (``POST /v1/verify`` at ``--url``), ``online`` (the log put into the Redis at
``--redis`` of the server at ``--url``, then ``GET /v1/tables/{t}/verification``),
``stdlib`` (``scripts/verify_roll.py --export``) and ``python-client`` (the installed
package's ``verify_export``, run by ``--python``). Each takes the cases of the kinds it
reads; the test (tests/test_conformance.py) declares the rest, with the reason.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FAIL_AT = re.compile(r"^FAIL at seq (\d+): (.*)$")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("verifier")
    parser.add_argument("vectors", type=Path)
    parser.add_argument("--url")
    parser.add_argument("--redis")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args()
    if args.verifier == "python-client":
        sys.stdout.write(json.dumps(python_client_all(args)) + "\n")
        return
    index = json.loads((args.vectors / "cases" / "index.json").read_text())
    run = RUNNERS[args.verifier]
    said: dict[str, Any] = {}
    for case in index["cases"]:
        if args.only and case["name"] not in args.only:
            continue
        try:
            said[case["name"]] = run(case, args)
        except Exception as exc:  # a verifier that breaks on a case: its verdict
            said[case["name"]] = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(said) + "\n")


def path_of(args: argparse.Namespace, relative: str) -> Path:
    return Path(args.vectors) / relative


def not_fair_of(report: Any) -> list[int]:
    listed = report.get("not_fair") or report.get("notFair") or []
    return sorted(int(item["seq"] if isinstance(item, dict) else item) for item in listed)


def verdict(ok: bool, seq: int | None, reason: str | None, not_fair: list[int]) -> dict[str, Any]:
    return {"ok": ok, "first_bad_seq": seq, "reason": reason or "", "not_fair": not_fair}


def library(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """``verify_entries`` with the rules replayed, trusting what the CLI would."""
    import dataclasses  # noqa: PLC0415

    import msgspec  # noqa: PLC0415

    from fairroll.audit import Checkpoint, PublicKey, Trust, verify_checkpoint  # noqa: PLC0415
    from fairroll.mechanics import replay_entry  # noqa: PLC0415

    inputs = case["inputs"]
    if case["kind"] == "receipt":
        return library_receipt(case, args)
    if case["kind"] == "cosignature":
        from fairroll.audit.cosignature import (  # noqa: PLC0415
            CosignatureError,
            open_cosignature,
        )
        from fairroll.audit.note import NoteError  # noqa: PLC0415
        from fairroll.audit.receipts import open_checkpoint, trusted_keys  # noqa: PLC0415

        note = path_of(args, inputs["note"]).read_text()
        served_keys = json.loads(path_of(args, inputs["keys"]).read_text())
        try:
            # A cosigned note holds only if the log signed it too (as --cosigned checks).
            open_checkpoint(note, trusted_keys(served_keys, inputs["root"]))
            open_cosignature(note, inputs["vkey"])
        except (CosignatureError, NoteError) as exc:
            return verdict(False, None, str(exc), [])
        return verdict(True, None, None, [])
    served = json.loads(path_of(args, inputs["keys"]).read_text())
    trust = Trust.published(msgspec.convert(served["keys"], list[PublicKey]))
    keys = trust.keys or {}
    anchors, roots, covering = [], [], None
    for relative in [*inputs.get("checkpoints", []), *inputs.get("since", [])]:
        checkpoint = msgspec.json.decode(path_of(args, relative).read_bytes(), type=Checkpoint)
        if not verify_checkpoint(checkpoint, keys.get(checkpoint.key_id, "")):
            return verdict(False, None, "a kept checkpoint is not signed by a known key", [])
        anchors.append((checkpoint.size, checkpoint.head_hash))
        roots.append((checkpoint.size, base64.b64decode(checkpoint.root_hash)))
        if covering is None or checkpoint.size > covering.size:
            covering = checkpoint
    for relative in inputs.get("receipts", []):
        receipt = json.loads(path_of(args, relative).read_text())
        anchors.append((int(receipt["seq"]), str(receipt["entry_hash"])))
    base, frontier = None, None
    if "base" in inputs:
        kept = msgspec.json.decode(path_of(args, inputs["base"]).read_bytes(), type=Checkpoint)
        if not verify_checkpoint(kept, keys.get(kept.key_id, "")):
            return verdict(False, None, "the archive base is not signed by a known key", [])
        base = (kept.size, kept.head_hash)
        frontier = [base64.b64decode(h) for h in kept.frontier or []] or None
    trust = dataclasses.replace(
        trust,
        root=inputs["root"],
        anchors=anchors,
        roots=roots,
        covered_by=covering,
        base=base,
        base_frontier=frontier,
    )
    from fairroll.audit import verify_entries  # noqa: PLC0415

    lines = path_of(args, inputs["log"]).read_bytes().splitlines()
    report = msgspec.to_builtins(verify_entries(lines, trust, replay=replay_entry))
    return verdict(report["ok"], report["first_bad_seq"], report["reason"], not_fair_of(report))


def library_receipt(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    from fairroll.audit.receipts import ReceiptError, trusted_keys, verify_receipt  # noqa: PLC0415

    inputs = case["inputs"]
    served = json.loads(path_of(args, inputs["keys"]).read_text())
    entry = json.loads(path_of(args, inputs["entry"]).read_text())
    receipt = json.loads(path_of(args, inputs["receipt"]).read_text())
    try:
        verify_receipt(entry, receipt, trusted_keys(served, inputs["root"]))
    except ReceiptError as exc:
        return verdict(False, int(entry["seq"]), str(exc), [])
    return verdict(True, None, None, [])


def run_cli(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``fairroll verify`` in this process (its ``main``), as its console script runs it."""
    import contextlib  # noqa: PLC0415
    import io  # noqa: PLC0415

    from fairroll.cli import main as fairroll  # noqa: PLC0415

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = fairroll(command[3:])
        except SystemExit as exit_:
            status = int(exit_.code or 0)
    return subprocess.CompletedProcess(command, status, out.getvalue(), err.getvalue())


def cli(workers: int) -> Any:
    def run(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
        inputs = case["inputs"]
        command = [sys.executable, "-m", "fairroll.cli", "verify", "--root", inputs["root"]]
        command += ["--keys", str(path_of(args, inputs["keys"]))]
        if case["kind"] == "receipt":
            command += ["--entry", str(path_of(args, inputs["entry"]))]
            command += ["--receipt", str(path_of(args, inputs["receipt"]))]
            ran = run_cli(command)
            seq = json.loads(path_of(args, inputs["entry"]).read_text())["seq"]
            said = (ran.stdout + ran.stderr).strip()
            ok = ran.returncode == 0
            return verdict(ok, None if ok else seq, "" if ok else said, [])
        if case["kind"] == "cosignature":
            command += ["--cosigned", str(path_of(args, inputs["note"]))]
            command += ["--witness", inputs["vkey"], "--quorum", "1"]
            ran = run_cli(command)
            said = (ran.stdout + ran.stderr).strip()
            ok = ran.returncode == 0
            return verdict(ok, None, "" if ok else said, [])
        command += ["--json", "--workers", str(workers)]
        for option, role in (
            ("--checkpoint", "checkpoints"),
            ("--since", "since"),
            ("--receipt", "receipts"),
        ):
            for relative in inputs.get(role, []):
                command += [option, str(path_of(args, relative))]
        if "base" in inputs:
            command += ["--base", str(path_of(args, inputs["base"]))]
        command.append(str(path_of(args, inputs["log"])))
        ran = run_cli(command)
        try:
            said = json.loads(ran.stdout)
        except ValueError:
            # A kept file refused before the log is read: FAIL with words, no seq.
            words = (ran.stdout + ran.stderr).strip()
            return verdict(False, None, words, []) if ran.returncode == 1 else {"error": words}
        report = said["verification"]
        ok = said["exit"] == 0
        return verdict(ok, report["first_bad_seq"], report["reason"], not_fair_of(report))

    return run


def stdlib(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    inputs = case["inputs"]
    command = [sys.executable, str(ROOT / "scripts" / "verify_roll.py")]
    command += ["--export", str(path_of(args, inputs["log"])), "--root", inputs["root"]]
    command += ["--keys", str(path_of(args, inputs["keys"]))]
    ran = subprocess.run(command, capture_output=True, text=True, check=False)
    first = (ran.stdout.splitlines() or [""])[0]
    matched = FAIL_AT.match(first)
    seqs = sorted(int(s) for s in re.findall(r"seq (\d+)[^\n]*client seed reused", ran.stdout))
    if ran.returncode == 0:
        return verdict(True, None, None, seqs)
    if matched:
        return verdict(False, int(matched[1]), matched[2], seqs)
    return verdict(False, None, first, seqs)


def endpoint(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    import httpx  # noqa: PLC0415

    inputs = case["inputs"]
    params = {"root": inputs["root"]}
    for relative in inputs.get("receipts", []):
        receipt = json.loads(path_of(args, relative).read_text())
        params["anchor"] = f"{receipt['seq']}:{receipt['entry_hash']}"
    if "base" in inputs:
        base = json.loads(path_of(args, inputs["base"]).read_text())
        params["base"] = f"{base['size']}:{base['head_hash']}"
    answer = httpx.post(
        f"{args.url}/v1/verify",
        params=params,
        content=path_of(args, inputs["log"]).read_bytes(),
        headers={"Content-Type": "application/x-ndjson"},
        timeout=60,
    )
    if answer.status_code != 200:
        return {"error": f"{answer.status_code} {answer.text[:300]}"}
    report = answer.json()
    return verdict(report["ok"], report["first_bad_seq"], report["reason"], not_fair_of(report))


def online(case: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The log stored in Redis as the server stores it (a stream of plain-JSON entries,
    the head), then the server's own verification of the table."""
    import httpx  # noqa: PLC0415
    from redis import Redis  # noqa: PLC0415

    from fairroll.audit.keyspace import head_key, log_key  # noqa: PLC0415

    lines = path_of(args, case["inputs"]["log"]).read_bytes().splitlines()
    table = json.loads(lines[0])["table"]
    redis = Redis.from_url(args.redis)
    try:
        for key in redis.scan_iter(match=f"fairroll:{{{table}}}:*"):
            redis.delete(key)
        last = None
        for line in lines:
            seq = json.loads(line)["seq"]
            redis.xadd(log_key(table), {b"e": line}, id=f"{seq}-0")
            last = json.loads(line)
        assert last is not None
        redis.set(head_key(table), f"{last['seq']}:{last['entry_hash']}")
    finally:
        redis.close()
    for _ in range(60):
        answer = httpx.get(f"{args.url}/v1/tables/{table}/verification", timeout=60)
        if answer.status_code != 202:
            break
    if answer.status_code != 200:
        return {"error": f"{answer.status_code} {answer.text[:300]}"}
    report = answer.json()
    return verdict(report["ok"], report["first_bad_seq"], report["reason"], not_fair_of(report))


CLIENT = """
import json, sys
from pathlib import Path
from fairroll_client.verify import verify_export
folder = Path(sys.argv[1])
said = {}
for case in json.loads((folder / "cases" / "index.json").read_text())["cases"]:
    inputs = case["inputs"]
    if case["kind"] != "log" or (sys.argv[2:] and case["name"] not in sys.argv[2:]):
        continue
    keys = json.loads((folder / inputs["keys"]).read_text())
    try:
        got = verify_export((folder / inputs["log"]).read_bytes(), keys, root=inputs["root"])
    except Exception as exc:
        said[case["name"]] = {"error": f"{type(exc).__name__}: {exc}"}
        continue
    listed = getattr(got, "not_fair", None) or []
    said[case["name"]] = {
        "ok": got.ok,
        "first_bad_seq": got.first_bad_seq,
        "reason": got.reason or "",
        "not_fair": sorted(
            i["seq"] if isinstance(i, dict) else getattr(i, "seq", i) for i in listed
        ),
    }
print(json.dumps(said))
"""


def python_client_all(args: argparse.Namespace) -> dict[str, Any]:
    """The installed package, in its own interpreter (``--python``, no PYTHONPATH), over
    every log case at once."""
    ran = subprocess.run(
        [args.python, "-c", CLIENT, str(args.vectors), *args.only],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    if ran.returncode != 0:
        raise RuntimeError(ran.stderr.strip()[-400:])
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


RUNNERS = {
    "library": library,
    "cli-serial": cli(1),
    "cli-parallel": cli(2),
    "endpoint": endpoint,
    "online": online,
    "stdlib": stdlib,
}

if __name__ == "__main__":
    main()
