"""CPU-heavy requests are answered by compute workers, under a deadline that stops them."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from fairroll.redis_server import RedisServer
from support import LiveServer

FIGHTER = {
    "st": 10,
    "qk": 10,
    "in": 10,
    "ma": 10,
    "mr": 10,
    "max_hp": 999,
    "weapon": {"name": "W", "af": 20},
    "armor": {"name": "A", "frw": 20, "frm": 20},
}
#: The hardest hitters: so many coins a turn that a battle of them stops at its coin limit.
HARDEST = {"fighters": [{"name": "A", **FIGHTER}, {"name": "B", **FIGHTER}], "max_turns": 500}
#: Past the exact chain's budget (the most HP there is), so estimated: long battles of few
#: coins a turn, fought until every chance is within its precision, which takes longer than
#: the deadline the test sets (the estimate stops at a precision, not a clock).
SLOW = {
    "st": 10,
    "qk": 10,
    "in": 10,
    "ma": 10,
    "mr": 10,
    "max_hp": 999,
    "weapon": {"name": "W", "af": 8},
}
LONG = {"fighters": [{"name": "A", **SLOW}, {"name": "B", **SLOW}], "max_turns": 500}
TFT = {"a": {"attribute": 12}, "b": {"attribute": 12}}


def answered(client: httpx.Client) -> None:
    """A cheap calculation is answered (a new worker takes about a second to start)."""
    for _ in range(100):
        answer = client.post("/v1/tft/contests/odds", json=TFT)
        if answer.status_code == 200:
            return
        time.sleep(0.1)
    raise AssertionError(answer.text)


def test_a_calculation_past_its_deadline_is_stopped_and_its_worker_replaced(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    server = LiveServer(
        redis_server.url, tmp_path / "server.log", env={"FAIRROLL_COMPUTE_TIMEOUT": "0.1"}
    )
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            answered(client)  # the worker has started
            stopped = client.post("/v1/fast-battle/battles/odds", json=LONG)
            assert stopped.status_code == 503
            assert stopped.json()["type"].endswith("calculation-unavailable")
            assert "stopped" in stopped.json()["detail"]
            assert stopped.headers["retry-after"] == "1"
            # The killed worker is replaced: the next calculation is answered.
            answered(client)
            assert client.post("/v1/tft/contests", json=TFT).status_code == 200
    finally:
        server.stop()


def test_rule_errors_from_a_worker_are_the_same_problem(client: httpx.Client) -> None:
    """A rule breach found in the worker comes back as the same 422, naming the field."""
    same = {"fighters": [{"name": "A", **FIGHTER}, {"name": "A", **FIGHTER}]}
    refused = client.post("/v1/fast-battle/battles/odds", json=same)
    assert refused.status_code == 422
    rolled = client.post("/v1/fast-battle/battles", json=same)
    assert refused.json()["invalid_params"] == rolled.json()["invalid_params"]
    assert refused.json()["invalid_params"][0]["name"].startswith("fighters[1]")


def test_a_battle_roll_is_bounded_by_its_coins(client: httpx.Client) -> None:
    """500 turns of the hardest hitters would be 20,000 coins; a battle stops at 4,000."""
    rolled = client.post("/v1/fast-battle/battles", json={**HARDEST, "seed": "bounded"})
    assert rolled.status_code == 200
    body = rolled.json()
    assert body["outcome"]["ended_by"] == "dice_limit"
    assert 4000 <= len(body["dice"]) <= 4040
    assert len(rolled.content) < 400_000
