"""``fairroll serve | openapi | verify | keygen | certify-key | retire-key | archive |
open-epoch | mirror | witness``: the command line, a module per group of commands.

- ``serve``: ``serve`` and ``openapi`` (and ``run_server``, which benchmarks share);
- ``keys``: ``keygen``, ``certify-key``, ``retire-key``;
- ``tables``: ``archive``, ``open-epoch``, ``mirror``;
- ``verify``: ``verify``, with ``kept`` (the checkpoints, bases and receipts a player
  kept), ``evidence`` (one entry's receipt, an equivocation, a cosigned checkpoint) and
  ``verdict`` (what it prints);
- ``witness``: ``witness``, which serves ``fairroll.witness``.

Every command's parser is declared when ``main`` runs, so each module imports at its top
the standard library only, and not all of it. Every import of fairroll or of a third
party waits inside the command that uses it (``fairroll.audit`` brings redis,
``fairroll.api.app`` Litestar and every rule system), and so do ``asyncio``,
``urllib.request`` and ``multiprocessing``: each would double what ``fairroll --help``
or ``fairroll verify`` pays at every start (``python -X importtime -m fairroll.cli
--help`` shows it). The store an operator command writes with comes from the server's
own wiring (``api.wiring``, through ``operator``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from fairroll.cli import keys, serve, tables, verify, witness
from fairroll.cli.serve import run_server

__all__ = ["main", "run_server"]

#: What ``fairroll --help`` says before its commands.
DESCRIPTION = (
    "fairroll, the verifiable dice service: serve it, verify its logs offline, and run "
    "its keys and tables. 'fairroll COMMAND --help' says what each command takes; "
    "docs/operations.md has the whole of it."
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairroll", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (
        serve.add_serve,
        serve.add_openapi,
        keys.add_retire_key,
        tables.add_archive,
        tables.add_open_epoch,
        keys.add_new_key,
        keys.add_certify_key,
        verify.add_verify,
        witness.add_witness,
        tables.add_mirror,
    ):
        add(commands.add_parser)
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)
