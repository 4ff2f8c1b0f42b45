"""``fairroll witness``: serve a C2SP tlog-witness (``fairroll.witness``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fairroll.cli.serve import run_server

if TYPE_CHECKING:
    from fairroll.cli.parsing import AddParser

__all__ = ["add_witness"]


def add_witness(add_parser: AddParser) -> None:
    witness = add_parser(
        "witness", help="run a C2SP tlog-witness that cosigns logs' checkpoints as they grow"
    )
    witness.add_argument("--name", required=True, help="the witness's key name (a URL)")
    witness.add_argument(
        "--key-file", type=Path, required=True, help="its Ed25519 key (fairroll new-key)"
    )
    witness.add_argument(
        "--log",
        action="append",
        default=[],
        required=True,
        metavar="ORIGIN=VKEY",
        help="a log it witnesses: its origin (<log name>/<table>) and verifier key "
        "(note_key in GET /v1/keys) (repeatable)",
    )
    witness.add_argument(
        "--state", type=Path, required=True, help="its state file (created if missing)"
    )
    witness.add_argument("--host", default="127.0.0.1")
    witness.add_argument("--port", type=int, default=8090)
    witness.set_defaults(run=_witness)


def _witness(args: argparse.Namespace) -> int:
    """Serve the witness; print its verifier key (what logs and players pin) first."""
    from fairroll.audit.cosignature import raw_public_key, verifier_key  # noqa: PLC0415
    from fairroll.audit.signing import private_key_of  # noqa: PLC0415
    from fairroll.witness.cosigner import parse_log_key  # noqa: PLC0415

    try:
        key = private_key_of(args.key_file.read_bytes())
        logs: dict[str, list[str]] = {}
        for item in args.log:
            origin, _, vkey = item.partition("=")
            parse_log_key(vkey)
            logs.setdefault(origin, []).append(vkey)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    os.environ.update(
        FAIRROLL_WITNESS_NAME=args.name,
        FAIRROLL_WITNESS_KEY_FILE=str(args.key_file),
        FAIRROLL_WITNESS_LOGS=json.dumps(logs),
        FAIRROLL_WITNESS_STATE=str(args.state),
    )
    print(f"witness vkey: {verifier_key(args.name, raw_public_key(key))}", file=sys.stderr)
    run_server("fairroll.witness.app:create_app", args.host, args.port, "granian")
    return 0
