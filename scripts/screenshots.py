"""Refresh the table page's screenshots in docs/ (the README shows them).

    python scripts/screenshots.py [--out docs]

Starts ``fairroll serve`` on a free port with an embedded Redis in a temporary folder,
rolls a few of the seeds' examples on a table (a formula with a dropped die, Roth
against Sheena, a battle of Zippy against Grub, ...), and opens the table page in
Debian's chromium (playwright-core, as tests/browser installs it) at a desktop width
and at a phone's, then prints what each showed: the status and checkpoint lines, the
entries' headings and where the latest roll stands on the first screen.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BROWSER = ROOT / "tests" / "browser"
EXAMPLES = json.loads((ROOT / "service" / "fairroll" / "spec" / "examples.json").read_text())
TABLE = "campaign-7"
#: The seeds' examples rolled on the table, oldest first (by operation and example name).
ROLLS = [
    ("rollFbc", "pit-climb"),
    ("fightFastBattle", None),
    ("rollTftContest", "roth-vs-sheena"),
    ("rollStatSkillCheck", "chasm-jump"),
]
#: Rolled last, so the newest entries are the ones a player reads first: one with a seed
#: the server draws, one in a player's seed session (fair).
FORMULAS = ["1d20+5 # Longsword", "4d6kh3 # Strength"]
SIZES = {"table-page.png": (1200, 1000, "full"), "table-page-phone.png": (380, 800, "first")}


def example(operation: str, name: str | None) -> dict[str, object]:
    for found in EXAMPLES:
        if found["operation"] == operation and name in (None, found["name"]):
            return dict(found["request"])
    raise LookupError(f"no example {name} of {operation}")


#: Each roll operation's path, from the committed spec.
PATHS = {
    item["post"]["operationId"]: path
    for path, item in json.loads((ROOT / "openapi" / "openapi.json").read_text())["paths"].items()
    if "post" in item
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    if not (BROWSER / "node_modules" / "playwright-core").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=BROWSER, check=True)
    from fairroll.redis_server import free_port  # noqa: PLC0415

    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAIRROLL_", "REDIS_"))}
        serve = ["serve", "--port", str(port), "--data-dir", data]
        server = subprocess.Popen(
            [sys.executable, "-m", "fairroll.cli", *serve],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=url, timeout=30) as http:
                for _ in range(300):
                    try:
                        if http.get("/readyz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    time.sleep(0.1)
                last = 0
                for operation, name in ROLLS:
                    body = {**example(operation, name), "table": TABLE}
                    answer = http.post(PATHS[operation], json=body)
                    answer.raise_for_status()
                    last = answer.json()["receipt"]["seq"]
                drawn, fair = FORMULAS
                answer = http.post("/v1/dice/rolls", json={"formula": drawn, "table": TABLE})
                answer.raise_for_status()
                opened = http.post(f"/v1/tables/{TABLE}/seeds", json={"player": "Roth"})
                opened.raise_for_status()
                session = {
                    "seed_id": opened.json()["seed_id"],
                    "client_seed": secrets.token_hex(16),
                    "nonce": 1,
                }
                body = {"formula": fair, "table": TABLE, "session": session}
                token = {"Fairroll-Session-Token": opened.json()["token"]}
                answer = http.post("/v1/dice/rolls", json=body, headers=token)
                answer.raise_for_status()
                last = answer.json()["receipt"]["seq"]
            args.out.mkdir(parents=True, exist_ok=True)
            for name, (width, height, extent) in SIZES.items():
                shot = args.out / name
                page = f"{url}/tables/{TABLE}"
                shoot = [BROWSER / "shoot.mjs", page, shot, width, height, last, extent]
                seen = subprocess.run(
                    [shutil.which("node") or "node", *map(str, shoot)],
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=120,
                )
                where = shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot
                print(f"{where}: {seen.stdout.strip()}")
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
