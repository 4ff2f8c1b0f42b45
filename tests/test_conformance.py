"""Every conformance vector (docs/vectors/cases, ``scripts/make_vectors.py``) through every
verifier, each verifier one process over all the cases: the library, ``fairroll verify``
serial and parallel, ``POST /v1/verify``, the server's online verification of a log put
into its Redis, the stdlib script, the Python package's ``verify_export``, ``verify.js``
under Node and in Chromium, the npm package's ``verifyExport``, and Go's sumdb code for
the formats it reads (notes, proofs, receipts, cosignatures).

A verifier must give each case's verdict: ``ok``, the ``first_bad_seq``, a reason holding
the case's phrase, and the ``not_fair`` seqs (a roll whose client seed the server knew
before it committed the roll's chain). A case a verifier cannot take is declared in
``NOT_TAKEN`` with the reason; a verifier that misses a case it takes is in ``KNOWN_GAPS``
until it is fixed, and a gap that starts agreeing fails too (remove it: the list only
shrinks). Each test prints its verifier's row of the verdict matrix.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fairroll.audit.entry import canonical
from fairroll.audit.merkle import leaf
from fairroll.audit.receipts import trusted_keys
from fairroll.redis_server import RedisServer, free_port
from support import LiveServer, browser_ready, typescript_client_lock

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "docs" / "vectors"
CASES = json.loads((VECTORS / "cases" / "index.json").read_text())["cases"]
BY_NAME = {case["name"]: case for case in CASES}
HERE = ROOT / "tests" / "conformance"
VERIFY_JS = ROOT / "service" / "fairroll" / "page" / "static" / "verify.js"
VECTOR_KEY = base64.b64encode(b"fairroll audit vectors key 00001").decode()

VERIFIERS = (
    "library",
    "cli-serial",
    "cli-parallel",
    "endpoint",
    "online",
    "stdlib",
    "python-client",
    "verify.js-node",
    "verify.js-chromium",
    "npm-client",
    "go",
)

KEPT = ("checkpoints", "since", "receipts")


def not_taken(verifier: str, case: dict[str, Any]) -> str | None:
    """Why ``verifier`` cannot take ``case`` (None: it must give its verdict)."""
    kind, inputs, needs = case["kind"], case["inputs"], case["needs"]
    kept = any(role in inputs for role in KEPT)
    if verifier in ("library", "cli-serial", "cli-parallel"):
        return None
    if verifier == "go":
        if kind == "log":
            return "Go's sumdb code reads notes and proofs, not fairroll's log entries"
        if case["name"] == "receipt-of-another-tables-origin":
            return "which table a note's origin names is fairroll's meaning, not the note format's"
        if case["name"] == "receipt-after-a-rotation-note-by-the-retired-key":
            return "a key's retirement is fairroll's (GET /v1/keys, the log), not the note format's"
        if case["name"] == "receipt-note-text-with-a-lone-surrogate":
            return "Go's JSON decoder reads a lone surrogate as U+FFFD before the note is opened"
        return None
    if kind == "receipt" and verifier not in ("verify.js-node", "verify.js-chromium"):
        return "it checks logs, not a receipt alone"
    if kind == "cosignature" and verifier not in ("verify.js-node", "verify.js-chromium"):
        return "it checks logs, not a cosigned note"
    if verifier == "endpoint":
        if "checkpoints" in inputs or "since" in inputs:
            return "POST /v1/verify takes an anchor (seq:hash), not a kept checkpoint's root"
        return None
    if verifier == "online":
        if kept or "base" in inputs:
            return "the server checks its own store: no player's kept checkpoint, receipt or base"
        if not seqs_rise(case):
            return "its stream holds one entry per seq, rising: Redis refuses this log"
        return None
    if kept and verifier not in ("verify.js-node", "verify.js-chromium"):
        return "it takes no kept checkpoint or receipt"
    if "base" in inputs and verifier in ("stdlib", "python-client", "npm-client"):
        return "it verifies a log from seq 1 (no archive base)"
    if "rules" in needs and verifier != "python-client":
        return "it does not replay the rules (the outcome from the dice)"
    if "ed25519" in needs and verifier == "stdlib":
        return "the standard library has no Ed25519"
    return None


def seqs_rise(case: dict[str, Any]) -> bool:
    lines = (VECTORS / case["inputs"]["log"]).read_text().splitlines()
    seqs = [json.loads(line)["seq"] for line in lines]
    return all(a < b for a, b in itertools.pairwise(seqs))


#: (verifier, case) pairs that disagree with the case's verdict today, each an open hole
#: (issue 38). A pair that starts agreeing fails the test: remove it.
KNOWN_GAPS: set[tuple[str, str]] = {
    ("go", "cosignature-good-line-then-bad-line"),
}


def agrees(said: dict[str, Any], expect: dict[str, Any], *, words: bool = True) -> bool:
    """The verdict, the first bad seq, the not-fair seqs and (``words``) the phrase."""
    if "error" in said:
        return False
    return (
        said["ok"] == expect["ok"]
        and said["first_bad_seq"] == expect["first_bad_seq"]
        and (not words or (expect["reason"] or "") in (said["reason"] or ""))
        and sorted(said["not_fair"]) == expect["not_fair"]
    )


def held_to_the_vectors(verifier: str, said: dict[str, dict[str, Any]]) -> None:
    """Print the verifier's row of the matrix; fail on a disagreement not in KNOWN_GAPS,
    on a known gap that now agrees, and on a case neither taken nor declared."""
    missed, closed, row = [], [], []
    for case in CASES:
        name = case["name"]
        why = not_taken(verifier, case)
        if why is not None:
            row.append(f"  -  {name}: not taken ({why})")
            continue
        assert name in said, f"{verifier} gave no verdict on {name} (and none is declared)"
        # Go's errors are its own library's words: held to the verdict and the seq.
        good = agrees(said[name], case["expect"], words=verifier != "go")
        gap = (verifier, name) in KNOWN_GAPS
        row.append(f"  {'ok' if good else 'GAP' if gap else 'XX'} {name}: {said[name]}")
        if good and gap:
            closed.append(name)
        elif not good and not gap:
            missed.append((name, case["expect"], said[name]))
    sys.stdout.write(f"\n{verifier}:\n" + "\n".join(row) + "\n")
    assert not closed, f"{verifier} now agrees on {closed}: remove them from KNOWN_GAPS"
    assert not missed, f"{verifier} disagrees with the vectors: {missed}"


def runner(verifier: str, *extra: str | Path) -> dict[str, Any]:
    ran = subprocess.run(
        [sys.executable, HERE / "run_python.py", verifier, VECTORS, *map(str, extra)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


def node(*args: str | Path, timeout: float = 300) -> dict[str, Any]:
    ran = subprocess.run(
        ["node", *map(str, args)], capture_output=True, text=True, check=False, timeout=timeout
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


def test_every_case_declares_its_inputs_and_verdict() -> None:
    """At least sixty cases; each names its class, its inputs (files that exist) and the
    verdict; a failing case names its phrase and, for a log, its first bad seq."""
    assert len(CASES) >= 60
    for case in CASES:
        expect = case["expect"]
        assert set(expect) == {"ok", "first_bad_seq", "reason", "not_fair"}, case["name"]
        for value in case["inputs"].values():
            for path in [value] if isinstance(value, str) else value or []:
                if path.startswith("cases/") or path.endswith(".json"):
                    assert (VECTORS / path).is_file(), (case["name"], path)
        if not expect["ok"]:
            assert expect["reason"], case["name"]
            assert expect["first_bad_seq"] or case["kind"] == "cosignature", case["name"]
        for verifier in VERIFIERS:
            not_taken(verifier, case)  # every pair is taken or declared with a reason


def test_the_good_log_draws_a_new_client_seed_per_chain() -> None:
    """Issue 38, item 3: the vectors' good log no longer reuses a client seed on a chain
    committed after it was seen; the old pattern is a case of its own (ok, not fair)."""
    seen: dict[str, int] = {}
    committed_at: dict[tuple[str, str], int] = {}
    for line in (VECTORS / "log.ndjson").read_text().splitlines():
        entry = json.loads(line)
        request = entry["request"] if isinstance(entry["request"], dict) else {}
        if entry["mechanic"] in ("session.commit", "session.renew"):
            committed_at[(request["seed_id"], request["commitment"])] = entry["seq"]
        session = entry.get("session")
        if session:
            chain = committed_at[(session["seed_id"], session["commitment"])]
            assert seen.get(session["client_seed"], chain) >= chain, entry["seq"]
            seen.setdefault(session["client_seed"], entry["seq"])
    old = BY_NAME["client-seed-reused-across-chains"]["expect"]
    assert old["ok"] and old["not_fair"] == [12]


@pytest.mark.parametrize("verifier", ["library", "cli-serial", "cli-parallel", "stdlib"])
def test_every_vector_through_a_local_python_verifier(verifier: str) -> None:
    held_to_the_vectors(verifier, runner(verifier))


@pytest.fixture(scope="module")
def vector_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A server holding the vector key (so its root is the vectors' root), on a Redis of
    its own: (its url, the Redis url)."""
    folder = tmp_path_factory.mktemp("conformance")
    with RedisServer(folder / "redis", port=free_port()) as redis:
        live = LiveServer(
            redis.url, folder / "server.log", env={"FAIRROLL_SIGNING_KEY": VECTOR_KEY}
        )
        try:
            yield live.url, redis.url
        finally:
            live.stop()


def test_every_vector_through_the_verify_endpoint(vector_server: tuple[str, str]) -> None:
    held_to_the_vectors("endpoint", runner("endpoint", "--url", vector_server[0]))


def test_every_vector_through_the_online_verification(vector_server: tuple[str, str]) -> None:
    url, redis = vector_server
    held_to_the_vectors("online", runner("online", "--url", url, "--redis", redis))


def test_every_vector_through_the_python_package(client_python: Path) -> None:
    held_to_the_vectors("python-client", runner("python-client", "--python", client_python))


def test_every_vector_through_verify_js_under_node() -> None:
    held_to_the_vectors("verify.js-node", node(HERE / "run_verify_js.mjs", VERIFY_JS, VECTORS))


def test_every_vector_through_verify_js_in_chromium() -> None:
    browser = browser_ready()
    said = node(HERE / "run_chromium.mjs", browser, VERIFY_JS, VECTORS)
    held_to_the_vectors("verify.js-chromium", said)


@pytest.fixture(scope="module")
def npm_package() -> Iterator[Path]:
    """The npm package built as tests/test_typescript_client.py builds it."""
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed (Debian: nodejs npm)"
    with typescript_client_lock() as folder:

        def run(*args: str) -> None:
            done = subprocess.run(
                [npm, *args], cwd=folder, capture_output=True, text=True, timeout=600, check=False
            )
            assert done.returncode == 0, done.stdout + done.stderr

        if not (folder / "node_modules" / ".package-lock.json").exists():
            run("ci", "--no-audit", "--no-fund")
        run("run", "build")
        yield folder / "dist" / "index.js"


def test_every_vector_through_the_npm_package(npm_package: Path) -> None:
    held_to_the_vectors("npm-client", node(HERE / "run_npm_client.mjs", npm_package, VECTORS))


@pytest.fixture(scope="module")
def go_checker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    assert go is not None, "Debian's golang-go is needed (apt-get install golang-go)"
    out = tmp_path_factory.mktemp("go") / "fairrollcheck"
    env = {
        **os.environ,
        "GO111MODULE": "off",  # GOPATH mode: Debian's packaged sources, no module download
        "GOPATH": "/usr/share/gocode",
        "GOCACHE": str(out.parent / "cache"),
        "GOFLAGS": "",
    }
    subprocess.run(
        [go, "build", "-o", str(out), "."],
        cwd=ROOT / "tests" / "go" / "fairrollcheck",
        env=env,
        check=True,
        timeout=300,
    )
    return out


def go_verdicts(checker: Path) -> dict[str, Any]:
    """Receipts and cosigned notes as Go's sumdb code reads them, in one run: a note
    opened with the log key the pinned root certified, a receipt's record included at
    its seq, a cosigner's line checked as C2SP cosignature/v1 defines it."""
    items: list[tuple[str, dict[str, Any]]] = []
    for case in CASES:
        inputs = case["inputs"]
        if not_taken("go", case) is not None:
            continue
        served = json.loads((VECTORS / inputs["keys"]).read_text())
        trusted = trusted_keys(served, inputs["root"])
        vkeys = {k["key_id"]: k["note_key"] for k in served["keys"] if k["key_id"] in trusted}
        if case["kind"] == "receipt":
            entry = json.loads((VECTORS / inputs["entry"]).read_text())
            receipt = json.loads((VECTORS / inputs["receipt"]).read_text())
            # The note's signer: after a rotation, not the entry's key (docs/audit.md).
            lines = receipt["checkpoint"].rsplit("\n\n", 1)[-1]
            vkey = next(
                (v for v in vkeys.values() if v.split("+")[1] in _key_hashes(lines)),
                vkeys.get(receipt["key_id"], next(iter(vkeys.values()))),
            )
            size = int(receipt["checkpoint"].split("\n")[1])
            record = canonical(entry)
            assert leaf(record)
            request = {
                "vkey": vkey,
                "checkpoints": [receipt["checkpoint"]],
                "inclusion": [
                    {
                        "size": size,
                        "index": int(receipt["seq"]) - 1,
                        "record": base64.b64encode(record).decode(),
                        "proof": receipt["proof"],
                    }
                ],
            }
        else:
            request = {
                "vkey": next(iter(vkeys.values())),
                "checkpoints": [(VECTORS / inputs["note"]).read_text()],
                "cosigners": [inputs["vkey"]],
            }
        items.append((case["name"], request))
    said: dict[str, Any] = {}
    for name, request in items:
        ran = subprocess.run(
            [checker], input=json.dumps(request), capture_output=True, text=True, check=False
        )
        if ran.returncode != 0:
            said[name] = {"error": ran.stderr.strip()}
            continue
        out = json.loads(ran.stdout)
        problems = [*(out.get("checkpoints") or []), *(out.get("inclusion") or [])]
        problems += [p for line in out.get("cosignatures") or [] for p in line or []]
        problems = [p for p in problems if p]
        seq = (
            json.loads((VECTORS / BY_NAME[name]["inputs"]["entry"]).read_text())["seq"]
            if (BY_NAME[name]["kind"] == "receipt" and problems)
            else None
        )
        said[name] = {
            "ok": not problems,
            "first_bad_seq": seq,
            "reason": "; ".join(problems),
            "not_fair": [],
        }
    return said


def test_every_note_proof_receipt_and_cosignature_vector_through_go(go_checker: Path) -> None:
    held_to_the_vectors("go", go_verdicts(go_checker))


def _key_hashes(lines: str) -> set[str]:
    """The key hashes (hex) of a note's signature lines."""
    hashes = set()
    for line in lines.splitlines():
        try:
            hashes.add(base64.b64decode(line.rsplit(" ", 1)[-1])[:4].hex())
        except ValueError:
            continue
    return hashes
