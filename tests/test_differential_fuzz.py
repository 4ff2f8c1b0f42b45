"""A differential fuzzer of the log's verifiers: real logs from live servers, mutated the
way an operator holding the keys would, and every verifier asked for its verdict.

The base logs (tests/fuzz_corpus.py) hold every statement kind: a table's policy,
commit-reveal sessions and their reveals, hash-chain sessions renewed on both sides of a
key rotation, the rotated key's certificate, a ``key.retire``, an ``audit.epoch``
declaring a lost range, sealed rolls revealed and not, an archived range behind a signed
base (a sealed roll behind it revealed after it); beside them, receipts and a checkpoint
cosigned by a player. The mutations (tests/fuzz_mutations.py) edit a field by its type
or change its type, reorder, move, delete or duplicate entries, relabel sources, swap
client seeds, sign with the other key, move certificates, move statements across the
rotation, the retirement and the epoch, archive the table through another seq and edit
or re-sign the archive base, and edit receipts and cosigned notes; those of
tests/fuzz_statements.py edit sealed rolls and their openings and reveals, move, drop
or repeat statements with the seqs renumbered, and edit an epoch's gap. Then (mostly)
they re-chain and re-sign with the real keys, so that only the semantic checks can catch
them. Findings made again by hand (tests/fuzz_pinned.py) go in every run's first batch
with the corpus as written.

The verifiers, each one process over a whole batch (tests/conformance): the library,
``fairroll verify --workers 2``, ``POST /v1/verify``, the stdlib script, the Python
package's ``verify_export`` and ``verify.js`` under Node, each on the inputs it takes
as tests/test_conformance.py declares them (the stdlib script and the Python package
check logs from seq 1; the stdlib script is not asked about signatures left as they
were; receipts and cosigned notes go to the library, the CLI and ``verify.js``). They
must agree on the verdict, the first bad seq and, for a log that verifies, its not-fair
seqs; what only the rules replay sees (``REPLAY_ONLY``) is held among the verifiers
without it instead.

Bounded: ``FAIRROLL_FUZZ_SECONDS`` (default 20, for CI; run it for minutes locally) of
mutating and verifying, at least one batch, from the seed ``FAIRROLL_FUZZ_SEED`` (default:
random, printed), after the corpus is written (its seconds printed); a verifier that
hangs on a batch is re-run case by case and the case it hangs on named. It prints how
many mutations of each kind ran, how many still verify (with not-fair rolls among them)
and every disagreement; ``FAIRROLL_FUZZ_REPORT`` names a JSON file to record them in
(with the first cases each known disagreement tolerated), ``FAIRROLL_FUZZ_FINDINGS`` a
folder to save each disagreeing case in, as a conformance folder tests/conformance
replays. A disagreement (or a verifier that breaks) not matched by
``KNOWN_DISAGREEMENTS`` fails.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fuzz_corpus import Corpus, build_corpus
from fuzz_mutations import Case, mutate
from fuzz_pinned import pinned

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "tests" / "conformance"
VERIFY_JS = ROOT / "service" / "fairroll" / "page" / "static" / "verify.js"
BATCH = 40
#: Seconds a verifier may take over a batch, then over one case of a batch it did not
#: finish (every verifier takes well under a second a case).
BATCH_TIMEOUT = 120
CASE_TIMEOUT = 20

#: Verifiers that do not replay the rules: a log the library fails only by the rules replay
#: ("replaying the request rolls different dice") is held to what they say among
#: themselves, not to the library (tests/test_conformance.py declares the difference).
NO_REPLAY = ("stdlib", "verify.js-node")  # the Python client replays, as the library
#: The library's words for what only its rules replay sees: an entry's dice from its
#: request, an opening's request, dice or outcome (docs/audit.md, rows 22 and 27).
REPLAY_ONLY = re.compile(r"replaying|does not replay|not the one the rules give")


@dataclass(frozen=True)
class Known:
    """A disagreement the fuzzer found and a core still has: the verifier, the mutation
    kinds it shows in, what the verifier says (``says``) and what the library says
    (``library_says``) then (patterns), why, and the core to fix. Only a disagreement
    matching all of these is tolerated; the list only shrinks. An entry that names a
    pinned case (``pinned-*``, tests/fuzz_pinned.py) must still show on it in every run:
    once every verifier agrees there, the fuzzer fails until the entry is dropped."""

    verifier: str
    mutations: tuple[str, ...]
    says: str
    library_says: str
    why: str
    core: str
    #: only where both fail and the verifier names a later seq than the library
    later: bool = False

    def covers(self, verifier: str, mutation: str, answer: Answer, truth: Answer) -> bool:
        return (
            verifier == self.verifier
            and mutation in self.mutations
            and re.search(self.says, words(answer)) is not None
            and re.search(self.library_says, words(truth)) is not None
            and (not self.later or _later(answer, truth))
        )


def _later(answer: Answer, truth: Answer) -> bool:
    seq, first = answer.get("first_bad_seq"), truth.get("first_bad_seq")
    if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in (seq, first)):
        return False
    return float(seq) > float(first)  # type: ignore[arg-type]


Answer = dict[str, Any]
KNOWN_DISAGREEMENTS: list[Known] = [
    Known(
        "verify.js-node",
        ("pinned-late-check", "client_seed"),
        r"",
        r"does not derive from the seed",
        "a commit-reveal roll whose dice do not derive is found when its session's reveal is "
        "read, and the Python core names it there; verify.js files that failure only after "
        "the rest of the entries given to LogVerifier.add, so a later bad entry in the same "
        "call is named first (its first_bad_seq is the later entry's)",
        "verify.js (verify/run.js, LogVerifier.add: a failure a reveal finds in an earlier "
        "roll goes in failures as the reveal is read, before the entries after it; the "
        "table page adds a page of entries at once, verifyLog one at a time)",
        later=True,
    ),
    Known(
        "verify.js-node",
        ("type-int", "pinned-float-seq"),
        r"is not an integer: an entry holds no floats",
        r"",
        "an entry holding a number with a fraction (a seq of 5.5, an epoch's resume_after of "
        "23.0): the conformance harness's own parse refuses the line and names the seq "
        "JSON.parse reads there (5.5, or the epoch's own 24), where the Python core and "
        "verify.js's verifyLog name the first seq that fails as they read (5; 22, the gap "
        "the epoch no longer declares)",
        "tests/conformance/verify_js_cases.mjs (it parses every line before the core reads "
        "any: a line that does not parse should be named as verifyLog names it, the seq "
        "expected, after the entries before it are checked)",
        later=True,
    ),
    Known(
        "verify.js-node",
        ("base", "pinned-empty-frontier"),
        r"^the archive base's frontier does not fit its size",
        r"^$",
        "an archive base of a size past 0 whose frontier is an empty list: verify.js refuses "
        "it (a tree of 4 has 1 frontier hashes), where the Python core's callers read an "
        "empty frontier as none and pass the log (without its tree, as a range): the library "
        "is the odd one out here",
        "service/fairroll/cli/kept.py base_of and tests/conformance/run_python.py (an empty "
        "frontier is a frontier: `is not None`, not truthiness; the core then refuses it)",
    ),
]


def words(answer: Answer) -> str:
    return str(answer.get("error") or answer.get("reason") or "")


def takes(verifier: str, case: Case) -> bool:
    """Whether ``verifier`` gives a verdict on ``case`` (as tests/test_conformance.py
    declares what each verifier takes)."""
    if case.kind != "log":
        return verifier in ("library", "cli-parallel", "verify.js-node")
    if case.base is not None and verifier in ("stdlib", "python-client"):
        return False  # they verify a log from seq 1
    if verifier == "endpoint" and "frontier" in case.detail and case.mutation.endswith("base"):
        return False  # it takes a base as an anchor (seq:hash), without its frontier
    return verifier != "stdlib" or case.signed


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    with build_corpus(tmp_path_factory.mktemp("fuzz-corpus")) as built:
        yield built


def originals(corpus: Corpus) -> Iterator[Case]:
    """The corpus as it was written: every verifier must pass each input."""
    for name, (log, base) in sorted(corpus.logs.items()):
        yield Case(mutation="none", detail=name, log=log, base=base)
    retired = {k["key_id"] for k in corpus.keys["keys"] if k.get("not_after")}
    for entry, receipt in corpus.receipts:
        # A lone receipt of a key since retired is refused without the log's position of
        # the retirement (docs/audit.md, "Receipts"): not an input every verifier passes.
        if receipt["key_id"] not in retired:
            yield Case(
                mutation="none", detail="receipt", kind="receipt", entry=entry, receipt=receipt
            )
    for note, vkey in corpus.cosigned:
        yield Case(mutation="none", detail="cosigned", kind="cosignature", note=note, vkey=vkey)


def name_of(number: int, case: Case) -> str:
    return f"m{number:05d}-{case.mutation}"


def write_batch(folder: Path, cases: list[Case], corpus: Corpus) -> None:
    """The cases as conformance cases (tests/conformance reads them as it reads the
    vectors): cases/index.json, each case's files and the served keys."""
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    (folder / "keys.json").write_text(json.dumps(corpus.keys))
    index = []
    for number, case in enumerate(cases):
        name = name_of(number, case)
        inputs: dict[str, Any] = {"keys": "keys.json", "root": corpus.root}
        if case.kind == "log":
            inputs["log"] = f"cases/{name}.ndjson"
            lines = [json.dumps(e, separators=(",", ":")) for e in case.log]
            (folder / inputs["log"]).write_text("".join(line + "\n" for line in lines))
            if case.base is not None:
                inputs["base"] = f"cases/{name}.base.json"
                (folder / inputs["base"]).write_text(json.dumps(case.base))
        elif case.kind == "receipt":
            inputs["entry"] = f"cases/{name}.entry.json"
            inputs["receipt"] = f"cases/{name}.receipt.json"
            (folder / inputs["entry"]).write_text(json.dumps(case.entry))
            (folder / inputs["receipt"]).write_text(json.dumps(case.receipt))
        else:
            inputs["note"] = f"cases/{name}.note.txt"
            inputs["vkey"] = case.vkey
            (folder / inputs["note"]).write_text(case.note)
        index.append(
            {
                "name": name,
                "class": case.mutation,
                "kind": case.kind,
                "needs": [],
                "detail": case.detail,
                "inputs": inputs,
                "expect": {},
            }
        )
    (folder / "cases" / "index.json").write_text(json.dumps({"cases": index}))


def verdicts(
    folder: Path, python: Path, url: str, spent: dict[str, float]
) -> dict[str, dict[str, Any]]:
    """Each verifier's verdicts on the batch, one process each, three at a time
    (``spent``: seconds each took, summed)."""
    said: dict[str, dict[str, Any]] = {}
    runs = {
        "library": [],
        "cli-parallel": [],
        "endpoint": ["--url", url],
        "python-client": ["--python", str(python)],
    }
    commands: dict[str, list[Any]] = {
        verifier: [sys.executable, HERE / "run_python.py", verifier, folder, *extra]
        for verifier, extra in runs.items()
    }
    commands["stdlib"] = [sys.executable, ROOT / "tests" / "fuzz_stdlib.py", folder]
    commands["verify.js-node"] = ["node", HERE / "run_verify_js.mjs", VERIFY_JS, folder]

    def timed(verifier: str) -> None:
        started = time.monotonic()
        try:
            said[verifier] = run(commands[verifier], BATCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            said[verifier] = one_by_one(folder, commands[verifier])
        spent[verifier] = spent.get(verifier, 0.0) + time.monotonic() - started

    # Side by side: the endpoint waits on its server, the others on their own process.
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(timed, commands))
    return said


def run(command: list[Any], timeout: float) -> dict[str, Any]:
    ran = subprocess.run(
        list(map(str, command)), capture_output=True, text=True, check=False, timeout=timeout
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


def one_by_one(folder: Path, command: list[Any]) -> dict[str, Any]:
    """A batch a verifier did not finish: each case in a folder of its own, so the case it
    hangs on is named (``{"error": "timeout"}``) and the others still get their verdict."""
    said: dict[str, Any] = {}
    index = json.loads((folder / "cases" / "index.json").read_text())["cases"]
    for case in index:
        alone = save_finding(folder / "alone", folder, case["name"], {})
        try:
            said |= run([alone if part == folder else part for part in command], CASE_TIMEOUT)
        except subprocess.TimeoutExpired:
            said[case["name"]] = {"error": f"timeout: no verdict in {CASE_TIMEOUT} s"}
    return said


def verdict(answer: dict[str, Any]) -> tuple[Any, ...]:
    """What must agree: the verdict, the first bad seq and (a log that verifies) the
    not-fair seqs. A verifier that broke gives none (and is a finding even where every
    verifier broke)."""
    if "error" in answer:
        return ("error",)
    ok = answer.get("ok")
    return (ok, answer.get("first_bad_seq"), tuple(answer.get("not_fair") or ()) if ok else None)


def save_finding(folder: Path, batch: Path, name: str, said: dict[str, Any]) -> Path:
    """A disagreeing case as a conformance folder of its own (its files, the keys, an
    index of the one case and every verifier's verdict)."""
    index = json.loads((batch / "cases" / "index.json").read_text())["cases"]
    case = next(c for c in index if c["name"] == name)
    out = folder / f"{batch.name}-{name}"
    (out / "cases").mkdir(parents=True, exist_ok=True)
    shutil.copy(batch / "keys.json", out / "keys.json")
    for key, value in case["inputs"].items():
        if key != "keys" and isinstance(value, str) and value.startswith("cases/"):
            shutil.copy(batch / value, out / value)
    (out / "cases" / "index.json").write_text(json.dumps({"cases": [case]}, indent=1))
    (out / "verdicts.json").write_text(json.dumps(said, indent=1))
    return out


def test_every_verifier_gives_one_verdict_on_mutated_real_logs_of_every_statement_kind(
    corpus: Corpus, tmp_path: Path, client_python: Path
) -> None:
    seconds = float(os.environ.get("FAIRROLL_FUZZ_SECONDS", "20"))
    seed = int(os.environ.get("FAIRROLL_FUZZ_SEED", random.randrange(2**32)))
    findings = os.environ.get("FAIRROLL_FUZZ_FINDINGS")
    sys.stdout.write(f"\ndifferential fuzz: seed {seed} (FAIRROLL_FUZZ_SEED), {seconds} s\n")
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    ran: Counter[str] = Counter()
    disagreements: list[dict[str, Any]] = []
    tolerated: Counter[tuple[str, str]] = Counter()
    seen_known: dict[int, list[dict[str, Any]]] = {}  # a known entry's first cases
    by_verifier: dict[str, Counter[str]] = defaultdict(Counter)  # verdicts: true, false, error
    spent: dict[str, float] = {}
    batch_number = 0
    hand_made = pinned(corpus)
    first = [*originals(corpus), *(case for case, _ in hand_made)]
    must = {case.mutation: ok for case, ok in hand_made}  # a pinned case's library verdict
    still: set[int] = set()  # the known entries a pinned case still shows
    while batch_number == 0 or time.monotonic() < deadline:
        cases = [*first, *(mutate(corpus, rng) for _ in range(BATCH - len(first)))]
        first = []
        folder = tmp_path / f"batch-{batch_number:03d}"
        batch_number += 1
        write_batch(folder, cases, corpus)
        said = verdicts(folder, client_python, corpus.url, spent)
        for number, case in enumerate(cases):
            name = name_of(number, case)
            ran[case.mutation] += 1
            truth = said["library"][name]
            if case.mutation == "none":
                assert truth.get("ok") is True, (case.detail, truth)
            if must.get(case.mutation) is not None:
                assert truth.get("ok") is must[case.mutation], (case.detail, truth)
            elif truth.get("ok"):
                ran["(still verifies)"] += 1
                ran["(still verifies, with not-fair rolls)"] += bool(truth.get("not_fair"))
            answers = {v: said[v][name] for v in said if takes(v, case)}
            for verifier, answer in answers.items():
                by_verifier[verifier][str(verdict(answer)[0]).lower()] += 1
            differ = {v for v, a in answers.items() if "error" in a}
            if "error" not in truth:
                differ |= {v for v, a in answers.items() if verdict(a) != verdict(truth)}
            if REPLAY_ONLY.search(str(truth.get("reason"))):
                ran["(caught by the rules replay alone)"] += 1
                # A verifier without the replay that says ok where another caught it by
                # a check of its own misses that check; else they agree among themselves.
                plain = [v for v in NO_REPLAY if v in answers]
                differ -= set(NO_REPLAY)
                caught = {v for v in plain if verdict(answers[v]) == verdict(truth)}
                if caught:
                    differ |= set(plain) - caught
                elif len({verdict(answers[v]) for v in plain}) > 1:
                    differ |= set(plain)
            for verifier in sorted(differ):
                known = [
                    k
                    for k in KNOWN_DISAGREEMENTS
                    if k.covers(verifier, case.mutation, answers[verifier], truth)
                ]
                if known:
                    tolerated[(verifier, case.mutation)] += 1
                    still.update(KNOWN_DISAGREEMENTS.index(k) for k in known)
                    differ.discard(verifier)
                    examples = seen_known.setdefault(KNOWN_DISAGREEMENTS.index(known[0]), [])
                    if len(examples) < 5:
                        examples.append(
                            {
                                "detail": case.detail,
                                "verifier": [verdict(answers[verifier]), words(answers[verifier])],
                                "library": [verdict(truth), words(truth)],
                            }
                        )
            if not differ:
                continue
            found = {
                "seed": seed,
                "case": name,
                "mutation": case.mutation,
                "detail": case.detail,
                "disagreeing": sorted(differ),
                "verdicts": {v: verdict(a) for v, a in answers.items()},
                "reasons": {v: words(a)[:300] for v, a in answers.items()},
            }
            if findings:
                found["saved"] = str(save_finding(Path(findings), folder, name, answers))
            disagreements.append(found)
    report: dict[str, Any] = {
        "seed": seed,
        "corpus_seconds": round(corpus.seconds, 1),
        "mutations": sum(n for k, n in ran.items() if not k.startswith(("none", "("))),
        "per_kind": dict(sorted(ran.items())),
        "verdicts": {v: dict(c) for v, c in sorted(by_verifier.items())},
        "disagreements": disagreements,
        "known": {f"{v} {m}": n for (v, m), n in tolerated.items()},
        "known_cases": {KNOWN_DISAGREEMENTS[i].core: c for i, c in sorted(seen_known.items())},
    }
    if path := os.environ.get("FAIRROLL_FUZZ_REPORT"):
        Path(path).write_text(json.dumps(report, indent=1))
    sys.stdout.write(
        f"differential fuzz: corpus written in {corpus.seconds:.0f} s, "
        f"{report['mutations']} mutations in {batch_number} batches, "
        f"{len(disagreements)} disagreements, {sum(tolerated.values())} known\n"
        f"differential fuzz: per kind {report['per_kind']}\n"
        f"differential fuzz: verdicts per verifier {report['verdicts']}\n"
        f"differential fuzz: seconds per verifier { ({v: round(t) for v, t in spent.items()}) }\n"
    )
    for item in disagreements[:20]:
        sys.stdout.write(f"  {json.dumps(item)}\n")
    assert report["mutations"] > 0
    assert not disagreements, disagreements[:3]
    mended = [
        k.core
        for i, k in enumerate(KNOWN_DISAGREEMENTS)
        if i not in still and any(m.startswith("pinned-") for m in k.mutations)
    ]
    assert not mended, f"every verifier now agrees on a pinned case: drop {mended}"
