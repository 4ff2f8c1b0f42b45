"""The witness's HTTP service: a second Litestar app, of its own process (``fairroll
witness``), sharing nothing with the fairroll service but the audit formats."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from litestar import Litestar, Request, Response, get, post

from fairroll.audit.signing import private_key_of
from fairroll.witness.cosigner import Verdict, Witness, parse_log_key

__all__ = ["create_app"]


def create_app() -> Litestar:
    """The witness's HTTP service, configured from the environment ``fairroll witness``
    sets: FAIRROLL_WITNESS_NAME, FAIRROLL_WITNESS_KEY_FILE, FAIRROLL_WITNESS_LOGS (JSON:
    origin -> [verifier keys]) and FAIRROLL_WITNESS_STATE."""
    env = os.environ
    key = private_key_of(Path(env["FAIRROLL_WITNESS_KEY_FILE"]).read_bytes())
    logs = {
        origin: [parse_log_key(vkey) for vkey in vkeys]
        for origin, vkeys in json.loads(env["FAIRROLL_WITNESS_LOGS"]).items()
    }
    witness = Witness(
        env["FAIRROLL_WITNESS_NAME"],
        key,
        logs,
        Path(env["FAIRROLL_WITNESS_STATE"]),
    )

    @post("/add-checkpoint", status_code=200, media_type="text/plain")
    async def add_checkpoint(request: Request[Any, Any, Any]) -> Response[bytes]:
        body = await request.body()
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return _answer(Verdict(400, "the body is UTF-8 text\n"))
        return _answer(await witness.add_checkpoint(text))

    @get("/{origin_hash:str}/checkpoint", media_type="text/plain")
    async def checkpoint(origin_hash: str) -> Response[bytes]:
        return _answer(witness.latest(origin_hash))

    return Litestar([add_checkpoint, checkpoint], openapi_config=None)


def _answer(verdict: Verdict) -> Response[bytes]:
    """The verdict as sent: its content type set whole (the framework would add a
    charset to any text type: ``text/x.tlog.size`` must go out as it is)."""
    return Response(
        verdict.body.encode(),
        status_code=verdict.status,
        headers={"Content-Type": verdict.content_type},
    )
