"""Fill the responses of the OpenAPI examples by sending their requests to a live server.

Run: python scripts/refresh_examples.py   (then: fairroll openapi -o openapi/openapi.json)

The requests in service/fairroll/spec/examples.json are written by hand from the
seeds' worked examples. This script starts a private redis-server and a real
``fairroll serve`` (signing with a throwaway key, printed in no response), sends
every example in file order to the ``default`` table, and stores what the server
answered, so every response example in the spec is one the server really gave.
tests/test_examples.py re-sends the requests and fails when an answer drifts.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from fairroll.api.app import create_app
from fairroll.api.settings import Settings
from fairroll.redis_server import RedisServer, free_port
from fairroll.spec.examples import EXAMPLES_PATH
from fairroll.spec.openapi import operations_by_id

#: A fixed example signing key: the receipts in the spec verify against its public key.
EXAMPLE_SIGNING_KEY = base64.b64encode(b"fairroll openapi examples key 01").decode()


def start(redis_url: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "FAIRROLL_SIGNING_KEY": EXAMPLE_SIGNING_KEY,
        # The integrations' manifests name the server as the VTTs reach it.
        "FAIRROLL_PUBLIC_URL": "https://dice.example",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "fairroll.cli", "serve", "--port", str(port)],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if httpx.get(f"{url}/livez").status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(log.read_text())


#: The example cosigner: a published, fixed key (never a real player's) and time.
EXAMPLE_COSIGNER = "player-9e1c.fairroll"
EXAMPLE_TIME = 1_764_547_200


def cosigned_note(http: httpx.Client) -> dict[str, str]:
    """The default table's checkpoint now, cosigned by the example cosigner."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    from fairroll.audit.cosignature import cosign, raw_public_key, verifier_key  # noqa: PLC0415

    key = Ed25519PrivateKey.from_private_bytes(b"fairroll example cosigner key 01")
    note = http.get("/v1/tables/default/checkpoint").json()["text"]
    line = cosign(note, EXAMPLE_COSIGNER, key, EXAMPLE_TIME)
    return {"vkey": verifier_key(EXAMPLE_COSIGNER, raw_public_key(key)), "note": f"{note}{line}\n"}


#: The example sealed roll's blind and client seed (a player's client draws its own).
EXAMPLE_BLIND = "5c0f" * 16
EXAMPLE_CLIENT_SEED = "roth-gm-roll-1"


def sealed_roll(http: httpx.Client) -> tuple[int, dict[str, Any]]:
    """A GM roll sealed in a hash-chain session of the default table: its seq and opening
    (the reveal example opens it)."""
    opened = http.post("/v1/tables/default/seeds", json={"player": "Roth"}).json()
    body = {
        "a": {"name": "Roth", "attribute": 16, "talents": 2},
        "b": {"attribute": 12},
        "session": {"seed_id": opened["seed_id"], "client_seed": EXAMPLE_CLIENT_SEED},
        "sealed": {"audience": "gm", "blind": EXAMPLE_BLIND},
    }
    rolled = http.post(
        "/v1/tft/contests", json=body, headers={"Fairroll-Session-Token": opened["token"]}
    ).json()
    return rolled["receipt"]["seq"], rolled["opening"]


def send(
    http: httpx.Client,
    method: str,
    path: str,
    example: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> Any:
    params = example.get("params", {})
    url = path.format(**params)
    query = {k: v for k, v in params.items() if "{" + k + "}" not in path}
    if path.endswith("/events"):  # a stream that never ends: its first two entries
        return first_events(http, url, query, 2)
    if "request" in example:
        response = http.request(method, url, params=query, json=example["request"], headers=headers)
    elif example.get("ndjson") is not None:
        response = http.request(
            method,
            url,
            params=query,
            content=example["ndjson"],
            headers={"content-type": "application/x-ndjson"},
        )
    else:
        response = http.request(method, url, params=query, headers=headers)
    if response.status_code >= 300:
        raise RuntimeError(f"{example['operation']}/{example['name']}: {response.text}")
    kind = response.headers["content-type"]
    if kind.startswith(("application/x-ndjson", "text/plain")):
        return response.text
    if not kind.startswith("application/json"):  # a tile, a zip, an icon: in base64
        return base64.b64encode(response.content).decode()
    return response.json()


def first_events(http: httpx.Client, url: str, query: dict[str, Any], count: int) -> str:
    """The text of an event stream up to its ``count``-th entry event."""
    lines: list[str] = []
    with http.stream("GET", url, params=query) as response:
        for line in response.iter_lines():
            lines.append(line)
            if not line and sum(x == "event: entry" for x in lines) >= count:
                return "\n".join(lines) + "\n"
    return "\n".join(lines) + "\n"


def main() -> None:
    examples: list[dict[str, Any]] = json.loads(EXAMPLES_PATH.read_text())
    spec = create_app(Settings(ephemeral_key=True)).openapi_schema
    operations = {op: (method, path) for op, (method, path, _) in operations_by_id(spec).items()}
    with (
        tempfile.TemporaryDirectory() as tmp,
        RedisServer(Path(tmp) / "redis", port=free_port()) as redis,
    ):
        process, url = start(redis.url, Path(tmp) / "server.log")
        try:
            with httpx.Client(base_url=url, timeout=30) as http:
                state: dict[str, Any] = {}
                for example in examples:
                    op = example["operation"]
                    method, path = operations[op]
                    if op in {"getTableHashTile", "getTableEntryBundle"}:
                        # The partial tile as wide as the default table is now.
                        example["params"]["index"] = f"000.p/{state['size']}"
                    if op in {"getSeedSession", "revealSeedSession"}:
                        example["params"]["seed_id"] = state["seed_id"]
                    if op == "verifyExport":
                        example["ndjson"] = state["export"]
                    if op == "cosignTableCheckpoint":
                        example["request"] = cosigned_note(http)
                    if op == "revealSealedRoll":
                        seq, opening = sealed_roll(http)
                        example["params"]["seq"] = seq
                        example["request"] = {"opening": opening}
                    # A session's reveal shows the token its opening answered (by default
                    # the server requires it); the example documents the header.
                    token = state.get("token") if op == "revealSeedSession" else None
                    headers = {"Fairroll-Session-Token": token} if token else None
                    example["response"] = send(http, method, path, example, headers)
                    if op == "createSeedSession":
                        state["seed_id"] = example["response"]["seed_id"]
                        state["token"] = example["response"]["token"]
                    if op == "getTableLogCheckpoint":
                        state["size"] = int(example["response"].split("\n")[1])
                    if op == "exportTable":
                        state["export"] = example["response"]
        finally:
            process.terminate()
            process.wait(15)
    EXAMPLES_PATH.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(examples)} examples written to {EXAMPLES_PATH}")


if __name__ == "__main__":
    main()
