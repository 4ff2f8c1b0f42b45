"""The table page read as a player reads it (Debian's chromium): headings in words and
local times; dice named by whose they are, a formula's dropped die marked, a battle by
turn and fighter; each roll's fairness in words, never a ✓ beside a roll that is not
fair, with a link to what it means; the latest roll and a current checkpoint at the top;
the table's face counts with the auditor's own test; formulas first, their help rendered
with links to pages the service serves. And ``/`` leads to a table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from fairroll.audit.report import goodness_of_fit
from support import TEST_ROOT, browser_ready, run_node

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = json.loads((ROOT / "service" / "fairroll" / "spec" / "examples.json").read_text())


def example(operation: str) -> dict[str, Any]:
    return next(dict(e["request"]) for e in EXAMPLES if e["operation"] == operation)


@pytest.fixture(scope="module")
def reading() -> Path:
    return browser_ready() / "reading.mjs"


def test_a_player_reads_the_page_right(reading: Path, client: httpx.Client, table: str) -> None:
    rolls = [
        ("/v1/fast-battle/battles", example("fightFastBattle")),  # seeded ("arena"): chosen
        ("/v1/tft/contests", {**example("rollTftContest"), "dice": None, "seed": "read-1"}),
        ("/v1/fbc/rolls", {"pool": 10, "risk": 5, "dice": {"risk": [2, 1, 1, 4, 5]}}),
        ("/v1/dice/rolls", {"formula": "4d6kh3 # Strength", "seed": "read-2"}),
        ("/v1/dice/rolls", {"formula": "3d6+2"}),  # drawn by the server
    ]
    answers = []
    for path, body in rolls:
        sent = {k: v for k, v in body.items() if v is not None} | {"table": table}
        answer = client.post(path, json=sent)
        assert answer.is_success, answer.text
        answers.append(answer.json())
    last = answers[-1]["receipt"]["seq"]
    # The player pins the root it was given out of band: without it the page says NOT
    # VERIFIED and draws no mark.
    url = f"{str(client.base_url).rstrip('/')}/tables/{table}?root={TEST_ROOT}"
    seen = run_node(reading, url, last, 380, timeout=90)
    assert seen["errors"] == []
    by_mechanic = {e["mechanic"]: e for e in seen["entries"]}

    # Headings in words, times in the reader's zone (the entry's own instant kept).
    battle, contest = by_mechanic["fast-battle.battle"], by_mechanic["tft.contest"]
    assert battle["heading"].startswith("#1 · Fast Battle System · battle ")
    assert contest["heading"].startswith("#2 · TFT contests · contest ")
    times = {e["seq"]: e["datetime"] for e in seen["entries"]}
    assert times[2] == client.get(f"/v1/tables/{table}/entries/2").json()["time"]
    assert "T" not in contest["heading"].rsplit(" contest ", 1)[1]

    # Dice named by whose they are: Roth's and Sheena's, not a: and b:.
    (row,) = contest["rows"]
    owners = {die["said"].split(":")[0] for die in row["dice"]}
    assert owners == {"Roth", "Sheena"}

    # A formula's dice by term, the dropped one marked and said.
    formula = next(e for e in seen["entries"] if e["heading"].startswith("#4 "))
    (term,) = formula["rows"]
    assert term["label"] == "4d6kh3" and len(term["dice"]) == 4
    dropped = [d for d in term["dice"] if "dropped" in d["classes"]]
    assert len(dropped) == 1 and dropped[0]["said"].endswith("(dropped: does not count)")
    outcome = answers[3]["outcome"]["terms"][0]["dice"]
    assert [d["dropped"] for d in outcome] == ["dropped" in d["classes"] for d in term["dice"]]

    # A battle by turn and fighter: every coin in a turn's row, in the outcome's order.
    turns = answers[0]["outcome"]["turns"]
    labels = [r["label"] for r in battle["rows"]]
    assert labels[-len(turns) :][0].startswith(f"Turn 1: {turns[0]['actor']} ")
    assert sum(len(r["dice"]) for r in battle["rows"]) == len(answers[0]["dice"])

    # Fairness in words: a ✓ only where the roll was fair; each line links to its meaning.
    fairness = {e["seq"]: (e["fairness"], e["fairnessLink"]) for e in seen["entries"]}
    assert fairness[1][0].startswith("⚠ not fair: the caller chose the seed")
    assert fairness[3][0].startswith("⚀ rolled elsewhere")
    assert fairness[5][0].startswith("◐ fair if the operator is honest")
    for words, link in fairness.values():
        if words is not None and not words.startswith("✓ fair"):
            assert "✓" not in words
        if link is not None:  # explained under the same words as the line
            assert words.startswith(seen["sourceWords"][link.removeprefix("#")]), words
    marks = {e["seq"]: e["mark"] for e in seen["entries"]}
    assert marks[1].endswith("dice re-derived from the seed") and marks[3].endswith("signature")
    assert {"source-committed", "source-drawn", "source-chosen", "source-supplied"} <= set(
        seen["sources"]
    )

    # At the top of a phone's screen: the latest roll, and a checkpoint of every entry.
    assert seen["latest"].startswith(f"Latest: #{last} ") and "3d6+2" in seen["latest"]
    assert f"checkpoint of {last} entries" in seen["trust"]
    assert seen["latestTop"] < 800

    # The table's dice, counted from the verified entries, and tested as the auditor's
    # report tests them (stats.js against service/fairroll/audit/report.py).
    derived = [a for a in answers if a["source"] in ("chosen", "drawn", "committed")]
    for chart in seen["faces"]:
        counts = [int(c.split("/")[0]) for c in chart["counts"]]
        faces = [d["face"] for a in derived for d in a["dice"] if d["sides"] == chart["sides"]]
        assert counts == [faces.count(f) for f in range(1, chart["sides"] + 1)], chart
        fit = goodness_of_fit(counts)
        if fit.p_value is not None:
            shown = float(chart["caption"].split("p = ")[1].split(",")[0])
            assert abs(shown - fit.p_value) <= 0.005 + 0.02 * fit.p_value, chart
    assert {c["sides"] for c in seen["faces"]} == {2, 6}  # the battle's coins and the d6s

    # Formulas first; their help rendered: code, and links to pages the service serves.
    assert seen["firstMechanic"] == "rollDiceFormula"
    assert {"roll20", "foundry", "avrae"} <= set(seen["dialects"])  # each VTT's notation
    help_ = seen["formulaHelp"]
    assert "`" not in help_["text"] and help_["code"] >= 1
    assert "/docs/rules/dice" in help_["links"]
    for link in help_["links"]:
        assert client.get(link).status_code == 200, link
        assert client.get(f"{link}.md").headers["content-type"].startswith("text/markdown")


def test_the_stats_of_the_page_match_the_auditors_report() -> None:
    """stats.js under Node, count for count against report.py."""
    cases = [[10] * 6, [5, 5, 5, 5, 5, 35], [3, 0, 1], [0, 0, 6], [40, 60], [2, 2, 0, 1],
             [1] * 20, list(range(1, 21)), [7, 9, 12, 8, 11, 13, 9, 10, 6, 15]]  # fmt: skip
    stats = ROOT / "service" / "fairroll" / "page" / "static" / "stats.js"
    script = (
        f"import {{ goodnessOfFit }} from {json.dumps(stats.as_uri())};"
        f"console.log(JSON.stringify({json.dumps(cases)}.map(goodnessOfFit)));"
    )
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    for counts, page in zip(cases, json.loads(ran.stdout), strict=True):
        report = goodness_of_fit(counts)
        assert page["method"] == report.method, counts
        if report.p_value is None:
            assert page["p"] is None
        else:
            assert abs(page["p"] - report.p_value) <= 1e-9 * max(1.0, report.p_value), counts


def test_the_home_page_leads_to_a_table(client: httpx.Client) -> None:
    home = client.get("/")
    assert home.status_code == 200 and 'action="/tables"' in home.text
    opened = client.get("/tables", params={"table": "campaign-7"}, follow_redirects=False)
    assert (opened.status_code, opened.headers["location"]) == (303, "/tables/campaign-7")
    refused = client.get("/tables", params={"table": "no spaces"}, follow_redirects=False)
    assert refused.status_code == 422 and "table" in refused.text
    assert client.get("/docs/rules/nope").status_code == 404
    assert client.get("/docs/rules/..%2Fsecrets").status_code in (400, 404)
