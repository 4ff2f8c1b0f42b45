"""Every sentence of the five seed texts is traced: to a test that quotes it, or to a
stated reason (not modelled, and how a caller applies it; not a rule), or marked
"not yet traced" in so many words. The table is ``docs/rules/coverage.md``.

What this checks, so the table cannot rot:

- each row naming a test names one that exists and quotes the sentence (six words
  of it in a row, or all of it if it is shorter, in the test's code, comments or
  docstring; case, quotes and punctuation aside);
- each row with a reason gives one, and the counts in each heading are the rows';
- with the seed texts at hand (``FAIRROLL_SEEDS``, or ``shared/seeds`` beside the
  checkout as the project's layout has it), the rows of each seed are its sentences,
  in order, none missing and none made up.

``FAIRROLL_WRITE_COVERAGE=1 pytest tests/test_rules_coverage.py`` rewrites the table:
reasons written by hand are kept, each sentence is traced to the tests that quote it,
and the rest are marked "not yet traced".
"""

from __future__ import annotations

import ast
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs/rules/coverage.md"
SEEDS = {
    "000": ("fbc", "Faster, Better, Cheaper"),
    "001": ("tribute", "Tribute"),
    "002": ("stat-skill", "Stat + Skill"),
    "003": ("fast-battle", "Fast Battle System"),
    "004": ("tft", "TFT contests"),
}
#: Words in a row a test must quote (all of a shorter sentence).
QUOTE_WORDS = 6
NOT_YET = "not yet traced"
REASONS = ("not modelled: ", "not a rule: ")
ROW = re.compile(r"^\| (\d{3})\.(\d+) \| (.*) \| (.*) \|$")
HEADING = re.compile(r"^## .* \(seed (\d{3})\): (.*)$")
TEST_REF = re.compile(r"`(tests/[a-z0-9_]+\.py)::([a-z0-9_]+)`")
# A sentence ends at . ! or ? (perhaps closing a quote or a bracket) before a space and
# a capital, a digit or an opening quote or bracket.
SPLIT = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"”')]))\s+(?=[A-Z0-9\"“(\[])")


def seeds_dir() -> Path | None:
    named = os.environ.get("FAIRROLL_SEEDS")
    candidates = [Path(named)] if named else []
    candidates += [parent / "shared/seeds" for parent in ROOT.parents]
    return next((path for path in candidates if (path / "README.md").is_file()), None)


def sentences(text: str) -> list[str]:
    """The sentences of a seed text: each paragraph (lines up to a blank line) split at
    sentence ends; a short paragraph with no end (a heading) is not a sentence."""
    found: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        paragraph = " ".join(block.split())  # a wrapped paragraph (an e-mail's) joined
        if not paragraph:
            continue
        if not re.search(r"[.!?:][\"”')]?$", paragraph) and len(paragraph.split()) <= 10:
            continue  # a heading
        parts = [part for part in SPLIT.split(paragraph) if part]
        while parts:
            part = parts.pop(0)
            if re.fullmatch(r"\d+\.", part) and parts:  # a numbered step: "1. Roll ..."
                parts[0] = f"{part} {parts[0]}"
                continue
            found.append(part)
    return found


def words(text: str) -> list[str]:
    """Lower-case words, quotes and punctuation aside: "can't" and "cant" agree."""
    text = text.lower().replace("\u2019", "'").replace("'", "")
    return re.findall(r"[a-z0-9]+", text)


def collect_test_functions() -> dict[str, str]:
    """Each test function's source (``tests/x.py::name``), comments and docstring in."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test_"
            ):
                segment = ast.get_source_segment(source, node) or ""
                found[f"tests/{path.name}::{node.name}"] = segment
    return found


def shingles(sources: dict[str, str]) -> dict[tuple[str, ...], set[str]]:
    """Every run of ``QUOTE_WORDS`` words of each test, and the tests it is in."""
    index: defaultdict[tuple[str, ...], set[str]] = defaultdict(set)
    for test, source in sources.items():
        said = words(source)
        for i in range(len(said) - QUOTE_WORDS + 1):
            index[tuple(said[i : i + QUOTE_WORDS])].add(test)
    return index


def quoting(
    sentence: str, index: dict[tuple[str, ...], set[str]], sources: dict[str, str]
) -> set[str]:
    """The tests that quote ``sentence``."""
    said = words(sentence)
    if len(said) < 3:
        return set()  # "i.", "Now it is": too short to be told from any other words
    if len(said) < QUOTE_WORDS:
        joined = " ".join(said)
        return {t for t, s in sources.items() if f" {joined} " in f" {' '.join(words(s))} "}
    found: set[str] = set()
    for i in range(len(said) - QUOTE_WORDS + 1):
        found |= index.get(tuple(said[i : i + QUOTE_WORDS]), set())
    return found


def read_table() -> dict[str, list[tuple[int, str, str]]]:
    """The rows of each seed: (number, sentence, trace)."""
    rows: defaultdict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for line in TABLE.read_text().splitlines():
        match = ROW.match(line)
        if match:
            seed, number, sentence, trace = match.groups()
            rows[seed].append((int(number), sentence.replace("\\|", "|"), trace))
    return dict(rows)


def kind(trace: str) -> str:
    if trace == NOT_YET:
        return "not yet traced"
    if trace.startswith(REASONS[0]):
        return "not modelled"
    if trace.startswith(REASONS[1]):
        return "not a rule"
    return "traced to a test"


def counts_of(rows: list[tuple[int, str, str]]) -> str:
    tally = dict.fromkeys(("traced to a test", "not modelled", "not a rule", "not yet traced"), 0)
    for _, _, trace in rows:
        tally[kind(trace)] += 1
    return f"{len(rows)} sentences; " + ", ".join(f"{n} {k}" for k, n in tally.items())


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return collect_test_functions()


@pytest.fixture(scope="module")
def index(sources: dict[str, str]) -> dict[tuple[str, ...], set[str]]:
    return shingles(sources)


def test_coverage_rows_name_tests_that_quote_their_sentence(
    sources: dict[str, str], index: dict[tuple[str, ...], set[str]]
) -> None:
    if os.environ.get("FAIRROLL_WRITE_COVERAGE"):
        write_table(sources, index)
    wrong = []
    for seed, rows in read_table().items():
        for number, sentence, trace in rows:
            where = f"{seed}.{number}"
            if kind(trace) != "traced to a test":
                reason = trace.split(": ", 1)[-1] if trace != NOT_YET else NOT_YET
                if not reason.strip():
                    wrong.append(f"{where}: a reason with no words")
                continue
            named = TEST_REF.findall(trace)
            if not named:
                wrong.append(f"{where}: neither a test, a reason nor '{NOT_YET}': {trace!r}")
            quoted_by = quoting(sentence, index, sources)
            for path, name in named:
                test = f"{path}::{name}"
                if test not in sources:
                    wrong.append(f"{where}: no test {test}")
                elif test not in quoted_by:
                    wrong.append(f"{where}: {test} does not quote {sentence!r}")
    assert not wrong, "\n".join(wrong)


def test_coverage_counts_are_the_rows() -> None:
    rows = read_table()
    headings = {}
    for line in TABLE.read_text().splitlines():
        match = HEADING.match(line)
        if match:
            headings[match.group(1)] = match.group(2)
    assert set(headings) == set(SEEDS) == set(rows)
    for seed, said in headings.items():
        assert said == counts_of(rows[seed]), seed


def test_coverage_rows_are_the_seeds_sentences() -> None:
    where = seeds_dir()
    if where is None:
        pytest.skip("the seed texts are not beside this checkout (set FAIRROLL_SEEDS)")
    rows = read_table()
    for seed in SEEDS:
        (path,) = where.glob(f"{seed}_*.txt")
        expected = sentences(path.read_text())
        listed = [sentence for _, sentence, _ in rows[seed]]
        numbers = [number for number, _, _ in rows[seed]]
        assert numbers == list(range(1, len(listed) + 1)), seed
        missing = [s for s in expected if s not in listed]
        made_up = [s for s in listed if s not in expected]
        assert not missing and not made_up, (seed, missing[:3], made_up[:3])
        assert listed == expected, seed


def write_table(sources: dict[str, str], index: dict[tuple[str, ...], set[str]]) -> None:
    """Rewrite the table from the seeds: hand-written reasons kept, tests found."""
    where = seeds_dir()
    assert where is not None, "the seed texts are needed to write the table"
    kept: dict[tuple[str, str], str] = {}
    if TABLE.exists():
        for seed, rows in read_table().items():
            for _, sentence, trace in rows:
                if trace.startswith(REASONS):
                    kept[seed, sentence] = trace
    head, _, _ = (
        TABLE.read_text().partition("\n<!-- table -->\n") if TABLE.exists() else ("", "", "")
    )
    out = [head.rstrip("\n"), "", "<!-- table -->", ""]
    for seed, (slug, title) in SEEDS.items():
        (path,) = where.glob(f"{seed}_*.txt")
        rows = []
        for number, sentence in enumerate(sentences(path.read_text()), start=1):
            found = sorted(quoting(sentence, index, sources))
            if (seed, sentence) in kept:
                trace = kept[seed, sentence]
            elif found:
                trace = ", ".join(f"`{test}`" for test in found[:2])
            else:
                trace = NOT_YET
            rows.append((number, sentence, trace))
        out.append(f"## {title} (seed {seed}): {counts_of(rows)}")
        out += [
            "",
            f"Rules in `docs/rules/{slug}.md`.",
            "",
            "| # | Sentence | Traced to |",
            "|---|---|---|",
        ]
        for number, sentence, trace in rows:
            out.append(f"| {seed}.{number} | {sentence.replace('|', chr(92) + '|')} | {trace} |")
        out.append("")
    TABLE.write_text("\n".join(out))
