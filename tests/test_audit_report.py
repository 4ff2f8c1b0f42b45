"""The auditor's report: counts per mechanic, source and key, face counts per die size,
and their goodness-of-fit tests, each checked against a method of its own (closed forms
of the chi-square tail, every sequence of dice listed), and ``fairroll verify`` printing
it, as text and as JSON, for a log with fair dice and for one with a loaded die."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from pathlib import Path

import httpx
from hypothesis import given
from hypothesis import strategies as st

from fairroll.audit.report import (
    audit_report,
    chi_square_p,
    exact_multinomial_p,
    goodness_of_fit,
)
from support import fairroll_cli as fairroll


def closed_form_tail(x: float, df: int) -> float:
    """P(chi-square(df) >= x) in closed form: the Poisson sum for even df, erfc and
    Q(a + 1, y) = Q(a, y) + y^a e^-y / Gamma(a + 1) upward from df 1 for odd df."""
    y = x / 2
    if df % 2 == 0:
        return math.exp(-y) * sum(y**i / math.factorial(i) for i in range(df // 2))
    q, a = math.erfc(math.sqrt(y)), 0.5
    while 2 * a < df:
        q += math.exp(a * math.log(y) - y - math.lgamma(a + 1))
        a += 1
    return q


def test_the_chi_square_tail_matches_its_closed_forms() -> None:
    for df in range(1, 41):
        for x in (0.01, 0.5, 1, 2.5, df / 2, df, df + 1, 2 * df, 3 * df + 7, 60):
            assert math.isclose(chi_square_p(x, df), closed_form_tail(x, df), abs_tol=1e-12), (
                df,
                x,
            )
    # The table every statistics book prints: the 5 % points of 1, 5 and 19 df.
    for x, df in ((3.841458820694124, 1), (11.070497693516351, 5), (30.14352720564616, 19)):
        assert math.isclose(chi_square_p(x, df), 0.05, rel_tol=1e-9)


def brute_force_p(counts: list[int]) -> float:
    """The exact test by listing every sequence of dice, each of probability k^-n."""
    sides, n = len(counts), sum(counts)

    def weight(vector: tuple[int, ...]) -> float:
        return math.factorial(n) / math.prod(math.factorial(c) for c in vector)

    seen = weight(tuple(counts))
    no_likelier = sum(
        1
        for rolled in itertools.product(range(sides), repeat=n)
        if weight(tuple(Counter(rolled).get(f, 0) for f in range(sides))) <= seen
    )
    return no_likelier / sides**n


def test_the_exact_test_matches_every_sequence_listed() -> None:
    for counts in ([4, 0, 0], [2, 1, 1], [1, 1, 1, 1, 1], [3, 0, 1, 1], [0, 0, 6], [2, 2, 0, 1]):
        assert math.isclose(exact_multinomial_p(counts), brute_force_p(counts), rel_tol=1e-9)


@given(st.lists(st.integers(0, 40), min_size=2, max_size=12))
def test_every_test_gives_a_probability(counts: list[int]) -> None:
    fit = goodness_of_fit(counts)
    if fit.method == "none":
        assert fit.p_value is None and fit.note
    else:
        assert fit.p_value is not None and 0 <= fit.p_value <= 1


def test_even_counts_fit_and_a_loaded_die_does_not() -> None:
    assert goodness_of_fit([10] * 6).p_value == 1.0
    loaded = goodness_of_fit([5, 5, 5, 5, 5, 35])
    assert loaded.method == "chi-square" and (loaded.p_value or 1) < 1e-9
    assert goodness_of_fit([0, 0, 0, 0, 0, 6]).method == "exact"
    assert goodness_of_fit([1] * 20).method == "none"  # 20 dice of d20: too few, too many


def test_the_report_counts_mechanics_sources_keys_and_faces() -> None:
    entries = [
        {"seq": 1, "mechanic": "dice.roll", "source": "drawn", "key_id": "k1", "table": "t",
         "time": "2026-12-02T10:00:00Z", "dice": [{"group": "d6", "sides": 6, "face": 3}]},
        {"seq": 2, "mechanic": "fbc.roll", "source": "supplied", "key_id": "k1", "table": "t",
         "time": "2026-12-02T10:05:00Z", "dice": [{"group": "risk", "sides": 6, "face": 6}]},
        {"seq": 3, "mechanic": "dice.roll", "source": "committed", "key_id": "k2",
         "table": "t", "time": "2026-12-02T10:07:00Z",
         "dice": [{"group": "d6", "sides": 6, "face": 3},
                  {"group": "d20", "sides": 20, "face": 1}]},
        {"seq": 4, "mechanic": "session.commit", "source": "statement", "key_id": "k2",
         "table": "t", "time": "2026-12-02T10:08:00Z", "dice": []},
    ]  # fmt: skip
    report = audit_report(entries)
    assert report.entries == 4 and report.table == "t"
    assert (report.first_time, report.last_time) == ("2026-12-02T10:00:00Z", "2026-12-02T10:08:00Z")
    assert report.by_mechanic["dice.roll"] == {"committed": 1, "drawn": 1}
    assert report.sources == {"committed": 1, "drawn": 1, "statement": 1, "supplied": 1}
    assert {k: (u.entries, u.first_seq, u.last_seq) for k, u in report.keys.items()} == {
        "k1": (2, 1, 2),
        "k2": (2, 3, 4),
    }
    derived = {f.sides: f.counts for f in report.derived_faces}
    assert derived[6] == [0, 0, 2, 0, 0, 0] and derived[20][0] == 1
    assert [f.counts for f in report.supplied_faces] == [[0, 0, 0, 0, 0, 1]]


def test_verify_reports_the_dice_and_catches_a_loaded_one(
    client: httpx.Client, tmp_path: Path
) -> None:
    table = client.post("/v1/tables").json()
    key = {"Authorization": f"Bearer {table['write_key']}"}
    for i in range(20):  # fairroll's dice: 60 d6 from seeds
        body = {"formula": "3d6", "table": table["table"], "seed": f"audit-{i}"}
        assert client.post("/v1/dice/rolls", json=body, headers=key).is_success
    for _ in range(12):  # a player's loaded die: 60 supplied d6, mostly sixes
        body = {"formula": "5d6", "table": table["table"], "dice": {"d6": [6, 6, 6, 6, 1]}}
        assert client.post("/v1/dice/rolls", json=body, headers=key).is_success
    export = tmp_path / "export.ndjson"
    export.write_bytes(client.get(f"/v1/tables/{table['table']}/export").content)
    keys = tmp_path / "keys.json"
    keys.write_text(client.get("/v1/keys").text)
    root = json.loads(keys.read_text())["root"]

    text = fairroll("verify", export, "--keys", keys, "--root", root)
    assert text.returncode == 0, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("OK: 32 entries")
    assert "  dice.roll: 32 (20 chosen, 12 supplied)" in lines
    assert any(
        line.startswith("key ed25519:") and "signed 32 entries (seq 1..32)" in line
        for line in lines
    )
    assert any(line.startswith("keep: the signed checkpoint of size 32") for line in lines)

    said = fairroll("verify", export, "--keys", keys, "--root", root, "--json")
    answer = json.loads(said.stdout)
    assert (answer["verdict"], answer["exit"], said.returncode) == ("OK", 0, 0)
    report = answer["report"]
    (derived,) = report["derived_faces"]
    (supplied,) = report["supplied_faces"]
    assert derived["dice"] == supplied["dice"] == 60
    assert derived["fit"]["method"] == "chi-square" and derived["fit"]["p_value"] > 0.001
    assert supplied["counts"] == [12, 0, 0, 0, 0, 48] and supplied["fit"]["p_value"] < 1e-9
    unsigned = json.loads(fairroll("verify", export, "--json").stdout)
    assert (unsigned["verdict"], unsigned["exit"]) == ("NOT VERIFIED", 4)
