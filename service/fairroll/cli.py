"""``fairroll serve | openapi | verify | retire-key | archive | open-epoch``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairroll.api.settings import Settings
    from fairroll.audit import AuditStore, Checkpoint, Signer, VerifyReport
    from fairroll.audit.report import AuditReport
    from fairroll.audit.tiles import Tile, TileHashes

__all__ = ["main"]

APP_FACTORY = "fairroll.api.app:create_app_from_env"
SERVERS = ("granian", "uvicorn")


#: What ``fairroll --help`` says before its commands.
DESCRIPTION = (
    "fairroll, the verifiable dice service: serve it, verify its logs offline, and run "
    "its keys and tables. 'fairroll COMMAND --help' says what each command takes; "
    "docs/operations.md has the whole of it."
)

#: The environment ``fairroll serve`` reads (``api/settings.py``), for its --help; a test
#: holds the list to every variable the settings read.
SERVE_ENVIRONMENT = {
    "REDIS_URL": "the audit store (without it: an embedded Redis in --data-dir)",
    "FAIRROLL_SENTINELS": "Redis Sentinels host:port,... instead of REDIS_URL",
    "FAIRROLL_SENTINEL_SERVICE": "the Sentinels' service name",
    "FAIRROLL_SIGNING_KEY": "the Ed25519 signing key (PEM, or a 32-byte seed in base64)",
    "FAIRROLL_SIGNING_KEY_FILE": "a file holding it (fairroll keygen writes one)",
    "FAIRROLL_KEY_CERTIFICATE": "the root's certificate of a rotated key (certify-key)",
    "FAIRROLL_ROOT_KEY_ID": "the root this server's own verifications trust",
    "FAIRROLL_DEV_KEY_DIR": "development: read or make signing-key.pem here",
    "FAIRROLL_LOG_NAME": "the checkpoints' origin name (default fairroll)",
    "FAIRROLL_DURABILITY": "fsync (the default: answer only appends on disk) or memory",
    "FAIRROLL_REQUIRE_REPLICAS": "replicas that must acknowledge a round before it is answered",
    "FAIRROLL_REDIS_TIMEOUT": "seconds a Redis command may take",
    "FAIRROLL_REQUEST_TIMEOUT": "seconds a request may take",
    "FAIRROLL_MAX_BODY_BYTES": "the largest request body",
    "FAIRROLL_RATE_LIMIT": "each client's token bucket, refilled a minute (0: off)",
    "FAIRROLL_TRUSTED_PROXY_HOPS": "proxies whose X-Forwarded-For is believed (default 0)",
    "FAIRROLL_CORS_ORIGINS": "the VTT origins whose pages may call it (comma-separated)",
    "FAIRROLL_FRAME_ANCESTORS": "who may frame the table page",
    "FAIRROLL_DEFAULT_TABLE_OPEN": "whether the default table takes rolls without a key",
    "FAIRROLL_REQUIRE_TABLES": "roll only on tables made with POST /v1/tables",
    "FAIRROLL_SESSION_TOKENS": "required (default): session rolls show their token; or optional",
    "FAIRROLL_SYSTEMS": "extra rule systems to load (comma-separated modules)",
    "FAIRROLL_COMPUTE_WORKERS": "calculation worker processes (odds, verification)",
    "FAIRROLL_COMPUTE_TIMEOUT": "seconds a calculation may take",
    "FAIRROLL_COMPUTE_WORKER": "set in a calculation worker's own environment",
    "FAIRROLL_MAX_SUBSCRIBERS": "live event subscribers a process serves",
    "FAIRROLL_EVENTS_HEARTBEAT": "seconds between an event stream's heartbeats",
    "FAIRROLL_WITNESSES": "C2SP witnesses to submit checkpoints to (<URL> <vkey>,...)",
    "FAIRROLL_WITNESS_SECONDS": "seconds between asking them",
    "FAIRROLL_HOST": "--host's default",
    "FAIRROLL_PORT": "--port's default",
    "FAIRROLL_SERVER": "--server's default",
    "FAIRROLL_WORKERS": "--workers' default",
    "FAIRROLL_DATA_DIR": "--data-dir's default",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairroll", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (
        _add_serve,
        _add_openapi,
        _add_retire_key,
        _add_archive,
        _add_open_epoch,
        _add_new_key,
        _add_certify_key,
        _add_verify,
        _add_witness,
        _add_mirror,
    ):
        add(commands.add_parser)
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


#: ``add_parser`` of the subcommands: each ``_add_*`` declares one and what it runs.
AddParser = Callable[..., argparse.ArgumentParser]


def _add_serve(add_parser: AddParser) -> None:
    width = max(map(len, SERVE_ENVIRONMENT))
    environment = "\n".join(f"  {k:{width}}  {v}" for k, v in SERVE_ENVIRONMENT.items())
    serve = add_parser(
        "serve",
        help="run the HTTP service",
        description="Run the HTTP service (the table page at /, the API under /v1).",
        epilog=f"environment (docs/operations.md has each in full):\n{environment}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--host", default=os.environ.get("FAIRROLL_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("FAIRROLL_PORT", "8000")))
    serve.add_argument(
        "--server",
        choices=SERVERS,
        default=os.environ.get("FAIRROLL_SERVER", "granian"),
        help="ASGI server (granian measured faster on the roll endpoint)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=int(os.environ.get("FAIRROLL_WORKERS", "1")),
        help="server worker processes (1 per container is the Kubernetes way; more on a VM)",
    )
    serve.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("FAIRROLL_DATA_DIR", ".fairroll")),
        help="embedded Redis data and the development signing key (without REDIS_URL)",
    )
    serve.set_defaults(run=lambda a: _serve(a.host, a.port, a.server, a.data_dir, a.workers))


def _add_openapi(add_parser: AddParser) -> None:
    openapi = add_parser("openapi", help="print or write the OpenAPI spec")
    openapi.add_argument("--output", "-o", type=Path, help="write here instead of stdout")
    openapi.set_defaults(run=lambda a: _openapi(a.output))


def _add_retire_key(add_parser: AddParser) -> None:
    keys = add_parser("retire-key", help="retire a signing key (uses REDIS_URL)")
    keys.add_argument("key_id", help="the key id, e.g. ed25519:9f3a00cc8670da8e")
    keys.set_defaults(run=lambda a: _retire_key(a.key_id))


def _add_archive(add_parser: AddParser) -> None:
    archive = add_parser(
        "archive",
        help="export a table's entries through a seq, verify them, then trim them from "
        "Redis behind a signed base (uses REDIS_URL and the signing key)",
    )
    archive.add_argument("table")
    archive.add_argument("--through", type=int, required=True, help="the last seq to archive")
    archive.add_argument(
        "--out", type=Path, required=True, help="the NDJSON file (its base goes beside it)"
    )
    archive.set_defaults(run=lambda a: _archive(a.table, a.through, a.out))


def _add_open_epoch(add_parser: AddParser) -> None:
    epoch = add_parser(
        "open-epoch",
        help="after a loss no restore undoes: record in the table's log that the seqs up to "
        "--resume-after are lost, and go on after them (uses REDIS_URL and the signing key)",
    )
    epoch.add_argument("table")
    epoch.add_argument(
        "--resume-after",
        type=int,
        required=True,
        help="the highest seq acknowledged (the stopped servers' log lines name it)",
    )
    epoch.add_argument("--reason", required=True, help="what happened, for the players")
    epoch.set_defaults(run=lambda a: _open_epoch(a.table, a.resume_after, a.reason))


def _add_witness(add_parser: AddParser) -> None:
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
    from fairroll.witness import parse_log_key  # noqa: PLC0415

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
    run_server("fairroll.witness:create_app", args.host, args.port, "granian")
    return 0


def _add_mirror(add_parser: AddParser) -> None:
    mirror = add_parser(
        "mirror",
        help="copy a table's log (C2SP tlog-tiles) to a directory a static web server serves",
        description="Copy TABLE's checkpoint, hash tiles and entry bundles from a fairroll "
        "server into DIR, fetching only the tiles the mirror lacks. Each new checkpoint "
        "must be signed by a key the pinned root certifies, its tiles must give its root, "
        "and the tree the mirror held must be a prefix of it; only then are the new files "
        "written and the checkpoint replaced (last). Run it again to follow the table.",
    )
    mirror.add_argument("table")
    mirror.add_argument("dir", type=Path)
    mirror.add_argument(
        "--server", default="http://127.0.0.1:8000", help="the fairroll server's base URL"
    )
    mirror.add_argument("--root", required=True, help="the pinned root key id to trust keys from")
    mirror.add_argument(
        "--keys", type=Path, help="GET /v1/keys as kept (default: fetched from the server)"
    )
    mirror.set_defaults(run=_mirror)


def _mirror(args: argparse.Namespace) -> int:
    """One incremental copy of a table's tiles; the module ``audit.tiles`` checks them."""
    import urllib.request  # noqa: PLC0415

    from fairroll.audit import merkle, note, tiles  # noqa: PLC0415
    from fairroll.audit.receipts import trusted_keys  # noqa: PLC0415

    server = args.server.rstrip("/")
    prefix = f"{server}/v1/tables/{args.table}/log"

    def fetch(url: str) -> bytes:
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - operator's URL
            data: bytes = answer.read()
            return data

    try:
        published = json.loads(args.keys.read_bytes() if args.keys else fetch(f"{server}/v1/keys"))
        keys = trusted_keys(published, args.root)
        fresh_note = fetch(f"{prefix}/checkpoint").decode()
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    kept = args.dir / "checkpoint"
    try:
        size, root = _mirror_note(fresh_note, args.table, keys)
        old_size, old_root = (
            _mirror_note(kept.read_text(), args.table, keys)
            if kept.exists()
            else (0, merkle.EMPTY_ROOT)
        )
    except (note.NoteError, ValueError) as exc:
        print(f"FAIL: a checkpoint is not one of {args.table} under the pinned root: {exc}")
        return 1
    if size < old_size:
        print(f"FAIL: the server's tree ({size}) is smaller than the mirror's ({old_size})")
        return 1
    wanted = tiles.new_tiles(old_size, size)
    try:
        got = {t: fetch(f"{prefix}/{tiles.tile_path(t)}") for t in wanted}
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    by_key = {(t.level, t.n): data for t, data in got.items()}

    def load(tile: tiles.Tile) -> bytes:
        data = by_key.get((tile.level, tile.n))
        return data if data is not None else (args.dir / tiles.tile_path(tile)).read_bytes()

    hashes = tiles.TileHashes(size, load)
    bundles = [tiles.Tile(tiles.ENTRIES, t.n, t.width) for t in wanted if t.level == 0]
    try:
        tiles.verify_tiles(hashes, root, wanted)
        held = merkle.subtree_hash(0, old_size, hashes.read) if old_size else merkle.EMPTY_ROOT
        if held != old_root:
            raise tiles.TileError(f"the mirror's tree of {old_size} is not a prefix of it")
        got.update(_mirror_bundles(fetch, prefix, bundles, hashes))
    except (tiles.TileError, OSError) as exc:
        print(f"FAIL: the server's tiles of {args.table} at size {size}: {exc}")
        return 1
    files = [(tiles.tile_path(tile), data) for tile, data in got.items()]
    _write_files(args.dir, [*files, ("checkpoint", fresh_note.encode())])
    print(f"mirrored {args.table}: size {old_size} -> {size}, {len(got)} new files in {args.dir}")
    return 0


def _mirror_bundles(
    fetch: Callable[[str], bytes], prefix: str, bundles: Iterable[Tile], hashes: TileHashes
) -> dict[Tile, bytes]:
    """The entry bundles, each checked against its level-0 tile; one the server does not
    serve (its entries were archived, or one is too long for a bundle's 2-byte frame;
    their hash tiles still are) is left out."""
    import urllib.error  # noqa: PLC0415

    from fairroll.audit import tiles  # noqa: PLC0415

    got = {}
    for bundle in bundles:
        try:
            got[bundle] = fetch(f"{prefix}/{tiles.tile_path(bundle)}")
        except urllib.error.HTTPError as missing:
            if missing.code != 404:
                raise
            print(
                f"note: {tiles.tile_path(bundle)} is not served (archived, or an entry "
                "longer than a frame holds): left out"
            )
            continue
        tiles.check_bundle(bundle, got[bundle], hashes.tile(0, bundle.n))
    return got


def _mirror_note(text: str, table: str, keys: Mapping[str, str]) -> tuple[int, bytes]:
    """(size, root) of a checkpoint note of ``table`` signed by one of ``keys`` (key id ->
    base64 public key); ``note.NoteError`` else."""
    import base64  # noqa: PLC0415

    from fairroll.audit import note  # noqa: PLC0415
    from fairroll.audit.checkpoint import parse_body  # noqa: PLC0415

    origin = text.split("\n", 1)[0]
    name, _, named = origin.rpartition("/")
    if named != table:
        raise note.NoteError(f"its origin {origin!r} is not table {table}'s")
    verifiers = [note.SignerVerifier(name, base64.b64decode(k)) for k in keys.values()]
    size, root, _ = parse_body(note.open_note(text, verifiers).text)
    return size, root


def _write_files(folder: Path, files: Iterable[tuple[str, bytes]]) -> None:
    """Each file written whole, in order, under ``folder``: a reader never sees half a
    file, and what comes last (the checkpoint) is written after what it needs."""
    for name, data in files:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(path.name + ".part")
        part.write_bytes(data)
        part.replace(path)


def _add_new_key(add_parser: AddParser) -> None:
    new = add_parser(
        "keygen",
        aliases=["new-key"],
        help="make an Ed25519 signing key; print its key id and raw public key",
    )
    new.add_argument(
        "--out", type=Path, help="write the private key (PEM) here, mode 0600 (else stdout)"
    )
    new.set_defaults(run=lambda a: _new_key(a.out))


def _add_certify_key(add_parser: AddParser) -> None:
    certify = add_parser(
        "certify-key", help="certify a new signing key with the root key (a key rotation)"
    )
    certify.add_argument("public_key", help="the new key's public key (base64, GET /v1/keys)")
    certify.add_argument(
        "--root-key-file", type=Path, required=True, help="the root's private key (PEM or seed)"
    )
    certify.set_defaults(run=lambda a: _certify_key(a.public_key, a.root_key_file))


def _add_verify(add_parser: AddParser) -> None:
    verify = add_parser("verify", help="verify an NDJSON export offline")
    verify.add_argument(
        "--root",
        help="the pinned root key id (its fingerprint, published out of band): keys are "
        "then trusted only as the log publishes them under that root",
    )
    verify.add_argument(
        "file",
        type=Path,
        nargs="?",
        help="export of one table (NDJSON), or - for stdin (not with --entry or --equivocation)",
    )
    verify.add_argument(
        "--entry",
        type=Path,
        help="one entry (JSON of GET .../entries/{seq}): check its --receipt alone, with "
        "--keys and --root (the receipt's checkpoint and inclusion proof)",
    )
    verify.add_argument(
        "--cosigned",
        type=Path,
        help="a checkpoint (note or JSON): is it the log's, cosigned by --quorum of the "
        "--witness keys? (with --keys, --root)",
    )
    verify.add_argument(
        "--witness",
        action="append",
        default=[],
        help="a witness's verifier key (repeatable), for --cosigned",
    )
    verify.add_argument(
        "--quorum", type=int, default=1, help="cosignatures --cosigned needs (default 1)"
    )
    verify.add_argument(
        "--equivocation",
        type=Path,
        nargs=2,
        metavar=("A", "B"),
        help="two receipts, roll answers or checkpoints of one table (JSON, or the notes): "
        "exit 3 and print both notes if they sign two trees of one size (with --keys, --root)",
    )
    verify.add_argument(
        "--keys",
        type=Path,
        help="public keys as served by GET /v1/keys (JSON); without it signatures go unchecked",
    )
    verify.add_argument(
        "--no-replay", action="store_true", help="skip re-resolving each outcome from its dice"
    )
    verify.add_argument(
        "--json",
        action="store_true",
        help="print the verdict and the auditor's report (counts, keys, face counts and "
        "their goodness-of-fit tests, the checkpoint to keep) as one JSON object",
    )
    verify.add_argument(
        "--workers",
        type=int,
        help="processes for the checks of one entry alone (signatures, dice, replay); "
        "default one per core, 1 for none",
    )
    verify.add_argument(
        "--checkpoint",
        type=Path,
        action="append",
        default=[],
        help="a checkpoint kept earlier (JSON of GET .../checkpoint, or its signed note as "
        "text/plain); the export must still hold its head and its Merkle root (repeatable)",
    )
    verify.add_argument(
        "--since",
        type=Path,
        action="append",
        default=[],
        help="the last checkpoint you verified (as --checkpoint): the export must be "
        "consistent with it, and the checkpoint to keep next is printed",
    )
    verify.add_argument(
        "--reveal",
        type=Path,
        action="append",
        default=[],
        help="a revealed seed session (JSON of POST .../seeds/{id}/reveal) (repeatable)",
    )
    verify.add_argument(
        "--base",
        type=Path,
        help="an archived log's base (JSON of GET .../base): the export starts after it",
    )
    verify.add_argument(
        "--receipt",
        type=Path,
        action="append",
        default=[],
        help="a roll's receipt kept earlier (JSON with seq and entry_hash) (repeatable)",
    )
    verify.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="say what holds even when no signature could be checked (no --keys); without "
        "it such a run is NOT VERIFIED and exits 4",
    )
    verify.set_defaults(run=_run_verify)


def _run_verify(args: argparse.Namespace) -> int:
    """``verify``, whose verdict is its exit status even when its reader stops early
    (``fairroll verify export.ndjson | head``: ``_pipe_closed_quietly``)."""
    with _pipe_closed_quietly():
        return _verify_command(args)


if TYPE_CHECKING:
    from typing import Any


class _StopsOnClosedPipe:
    """Standard output that, once its reader has gone, drops what is written instead of
    raising ``BrokenPipeError`` in the middle of a verification."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.closed_pipe = False

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                self.real.write(text)
            except BrokenPipeError:
                self.closed_pipe = True
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self.real.flush()
            except BrokenPipeError:
                self.closed_pipe = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@contextmanager
def _pipe_closed_quietly() -> Iterator[None]:
    """A reader that closes the pipe early ends the output, not the command: no
    traceback, and the exit status stays the verdict's. At the end, a closed standard
    output is pointed at /dev/null so the interpreter's last flush is silent too."""
    real = sys.stdout
    guard = _StopsOnClosedPipe(real)
    sys.stdout = guard
    try:
        yield
        guard.flush()
    finally:
        sys.stdout = real
        if guard.closed_pipe:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, real.fileno())
            os.close(null)


def _verify_command(args: argparse.Namespace) -> int:
    from fairroll import cli_evidence  # noqa: PLC0415

    alone = args.entry is not None or args.equivocation is not None or args.cosigned is not None
    if alone and (args.keys is None or not args.root):
        print("error: --entry and --equivocation need --keys and --root", file=sys.stderr)
        return 2
    if args.cosigned is not None:
        return cli_evidence.check_quorum(
            args.cosigned, args.keys, args.root, args.witness, args.quorum
        )
    if args.equivocation is not None:
        first, second = args.equivocation
        return cli_evidence.check_equivocation(first, second, args.keys, args.root)
    if args.entry is not None:
        if len(args.receipt) != 1:
            print("error: --entry checks exactly one --receipt", file=sys.stderr)
            return 2
        return cli_evidence.check_receipt(args.entry, args.receipt[0], args.keys, args.root)
    if args.file is None:
        print("error: give an export to verify (or --entry, or --equivocation)", file=sys.stderr)
        return 2
    return _verify(
        args.file,
        args.keys,
        replay=not args.no_replay,
        checkpoints=[*args.checkpoint, *args.since],
        receipts=args.receipt,
        reveals=args.reveal,
        base_file=args.base,
        root=args.root,
        workers=args.workers,
        allow_unsigned=args.allow_unsigned,
        as_json=args.json,
    )


def _serve(host: str, port: int, server: str, data_dir: Path, workers: int = 1) -> int:
    from fairroll.redis_server import RedisServer  # noqa: PLC0415 - only serve needs it

    external = bool(os.environ.get("REDIS_URL") or os.environ.get("FAIRROLL_SENTINELS"))
    if not external:
        os.environ.setdefault("FAIRROLL_DEV_KEY_DIR", str(data_dir))
        os.environ.setdefault("FAIRROLL_CORS_ORIGINS", "*")  # dev mode: any VTT origin
    # Every setting and the key are read here, once, so that a typo stops the server in
    # one line naming the variable, before any worker starts (and fails 35 lines later).
    try:
        root_key_id = _startup_check(external=external)
    except ValueError as exc:
        print(f"fairroll: cannot start: {exc}", file=sys.stderr)
        return 2
    where = f"http://{'localhost' if host in ('0.0.0.0', '::') else host}:{port}"  # noqa: S104
    print(
        f"fairroll: serving {where} (the table page: {where}/tables/default, the API docs:"
        f" {where}/schema); root key id {root_key_id}: players pin it, given out of band",
        file=sys.stderr,
    )
    if external:
        run_server(APP_FACTORY, host, port, server, workers)
        return 0
    embedded = RedisServer(data_dir / "redis").start()
    os.environ["REDIS_URL"] = embedded.url
    print(f"fairroll: embedded Redis at {embedded.url} (data in {data_dir})", file=sys.stderr)
    try:
        run_server(APP_FACTORY, host, port, server, workers)
    finally:
        embedded.stop()
    return 0


def _startup_check(*, external: bool = False) -> str:
    """The root key id players pin; a ValueError naming the variable at fault. With an
    external Redis, what ``REDIS_URL`` reaches is checked and said (``_redis_check``)."""
    from fairroll.api.settings import Settings  # noqa: PLC0415

    settings = Settings.from_env()  # a setting that does not parse names itself
    signer = server_signer(settings)
    if isinstance(signer, str):
        raise ValueError(signer)
    if external:
        print(f"fairroll: {_redis_check(settings, signer)}", file=sys.stderr)
    return settings.root_key_id or signer.certificate.certified_by


def _redis_check(settings: Settings, signer: Signer) -> str:
    """What the Redis ``REDIS_URL`` (or the Sentinels) names is, said before serving: a
    ValueError if it is older than the store supports (naming the binary it reached, so
    a ``redis-server`` found first on a PATH is seen) or if this server's signing key
    was retired there; a warning if it does not answer (rolls then answer 503 until it
    does: Redis may start after fairroll)."""
    import asyncio  # noqa: PLC0415

    from redis.exceptions import RedisError  # noqa: PLC0415

    from fairroll.audit import connect_redis  # noqa: PLC0415
    from fairroll.audit.redis.durability import MIN_REDIS, describe  # noqa: PLC0415
    from fairroll.audit.redis.keyring import KeyRing  # noqa: PLC0415

    variable = "FAIRROLL_SENTINELS" if os.environ.get("FAIRROLL_SENTINELS") else "REDIS_URL"

    async def probe() -> tuple[list[tuple[tuple[int, ...], str]], bool]:
        redis = connect_redis(settings.redis_url, settings.redis_timeout_seconds)
        try:
            found = await describe(redis)
            keys = KeyRing(redis, signer)
            await keys.refresh()
            return found, keys.own_retired
        finally:
            await redis.aclose()

    try:
        found, retired = asyncio.run(probe())
    except (RedisError, OSError, ValueError) as exc:
        return (
            f"warning: {variable} did not answer ({exc}); serving anyway, and every roll "
            "answers 503 until Redis answers (/readyz says so too)"
        )
    shown = ", ".join(f"Redis {'.'.join(map(str, v))} ({binary})" for v, binary in found)
    oldest = min(version for version, _ in found)
    if oldest < MIN_REDIS:
        raise ValueError(
            f"{variable} reaches {shown}, older than fairroll supports "
            f"({'.'.join(map(str, MIN_REDIS))}); point it at a newer redis-server (the "
            "system's, e.g. /usr/bin/redis-server, not one found first on a venv's PATH)"
        )
    if retired:
        where = "FAIRROLL_SIGNING_KEY" if settings.signing_key else "FAIRROLL_SIGNING_KEY_FILE"
        raise ValueError(
            f"{where}: this server's key {signer.key_id} was retired (fairroll retire-key): "
            "it signs no more entries. Deploy the new key (FAIRROLL_SIGNING_KEY and "
            "FAIRROLL_KEY_CERTIFICATE)"
        )
    return f"{variable} reaches {shown}"


def run_server(factory: str, host: str, port: int, server: str, workers: int = 1) -> None:
    """Serve the ASGI app ``factory`` ("module:function") the production way: ``workers``
    processes (one by default), uvloop, no access log (benchmarks serve their ceiling
    app with it too)."""
    if server == "uvicorn":
        import uvicorn  # noqa: PLC0415

        uvicorn.run(
            factory,
            factory=True,
            host=host,
            port=port,
            loop="uvloop",
            http="httptools" if _has("httptools") else "h11",
            access_log=False,
            timeout_graceful_shutdown=10,
            workers=workers,
        )
        return
    from granian import Granian  # noqa: PLC0415
    from granian.constants import Interfaces, Loops  # noqa: PLC0415

    Granian(
        factory,
        address=host,
        port=port,
        interface=Interfaces.ASGI,
        factory=True,
        workers=workers,
        loop=Loops.uvloop,
        log_access=False,
    ).serve()


def _retire_key(key_id: str) -> int:
    """Retire a key in the audit store named by REDIS_URL, and in every table's log, with
    the server's signing key (the new one: FAIRROLL_SIGNING_KEY and its certificate)."""
    import asyncio  # noqa: PLC0415

    store = _operator_store()
    if isinstance(store, int):
        return store

    async def retire() -> int:
        try:
            key = await store.retire_key(key_id)
            if key is None:
                print(f"error: no published key {key_id}", file=sys.stderr)
                return 1
            tables = 0
            async for table in store.tables():
                tables += await store.retire_in(table, key_id) is not None
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            await store.redis.aclose()
        print(f"{key.key_id} retired at {key.not_after}; a key.retire entry in {tables} table(s)")
        return 0

    return asyncio.run(retire())


def _new_key(out: Path | None) -> int:
    """A new key: its PEM to ``out`` (never over a file) or stdout, what to pin to stderr."""
    from fairroll.audit.checkpoint import note_key  # noqa: PLC0415
    from fairroll.audit.signing import Signer  # noqa: PLC0415

    signer = Signer.generate()
    pem = signer.private_pem()
    if out is None:
        sys.stdout.write(pem.decode())
    else:
        try:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            print(f"error: {out} exists; a key is never written over", file=sys.stderr)
            return 2
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
    log_name = os.environ.get("FAIRROLL_LOG_NAME", "fairroll").strip() or "fairroll"
    public = signer.public_key.public_key
    print(f"key_id: {signer.key_id}", file=sys.stderr)
    print(f"public_key: {public}", file=sys.stderr)
    print(f"note_key: {note_key(log_name, public)}", file=sys.stderr)
    return 0


def _certify_key(public_key: str, root_key_file: Path) -> int:
    """Print the root's certificate of a new signing key: FAIRROLL_KEY_CERTIFICATE."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit.signing import certify, load_signer  # noqa: PLC0415

    root = load_signer(key=None, key_file=root_key_file, dev_dir=None)
    try:
        certificate = certify(root, public_key)
    except ValueError as refused:
        print(f"fairroll certify-key: {refused}", file=sys.stderr)
        return 2
    print(msgspec.json.encode(certificate).decode())
    return 0


def _openapi(output: Path | None) -> int:
    text = openapi_text()
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
    return 0


def openapi_text() -> str:
    """The spec as committed in openapi/openapi.json: indented, keys sorted, final newline."""
    from fairroll.api.app import create_app  # noqa: PLC0415
    from fairroll.api.settings import Settings  # noqa: PLC0415
    from fairroll.spec.openapi import finished_document  # noqa: PLC0415

    # The document create_app finished (spec.openapi.publish), as /schema/openapi.json serves it.
    spec = finished_document(create_app(Settings(ephemeral_key=True)))
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _operator_store() -> AuditStore | int:
    """The audit store named by REDIS_URL, signing with the server's key (for operator
    commands); or the exit status 2 with a message, without REDIS_URL."""
    from fairroll.api.settings import Settings  # noqa: PLC0415
    from fairroll.audit import AuditStore, connect_redis  # noqa: PLC0415

    if not (os.environ.get("REDIS_URL") or os.environ.get("FAIRROLL_SENTINELS")):
        print("error: set REDIS_URL to the audit store", file=sys.stderr)
        return 2
    settings = Settings.from_env()
    signer = server_signer(settings)
    if isinstance(signer, str):
        print(f"error: {signer}", file=sys.stderr)
        return 2
    return AuditStore(connect_redis(settings.redis_url, 10.0), signer)


def server_signer(settings: Settings) -> Signer | str:
    """The server's signer as its settings name it, or why it cannot be loaded (naming the
    variable to mend): every process of one server, and every operator command that
    writes to its log, signs with that one key."""
    from fairroll.audit import load_signer  # noqa: PLC0415
    from fairroll.audit.signing import CertificateError, KeyNotConfiguredError  # noqa: PLC0415

    try:
        return load_signer(
            key=settings.signing_key,
            key_file=settings.signing_key_file,
            dev_dir=settings.dev_key_dir,
            certificate=settings.key_certificate,
        )
    except KeyNotConfiguredError as exc:
        return str(exc)
    except OSError as exc:
        return f"FAIRROLL_SIGNING_KEY_FILE {settings.signing_key_file}: {exc.strerror or exc}"
    except CertificateError as exc:
        return f"FAIRROLL_KEY_CERTIFICATE: {exc}"
    except (ValueError, TypeError) as exc:
        where = "FAIRROLL_SIGNING_KEY" if settings.signing_key else "FAIRROLL_SIGNING_KEY_FILE"
        return f"{where} holds no Ed25519 key (PEM, or a 32-byte seed in base64): {exc}"


def _open_epoch(table: str, resume_after: int, reason: str) -> int:
    import asyncio  # noqa: PLC0415

    opened = _operator_store()
    if isinstance(opened, int):
        return opened
    store = opened

    async def run() -> int:
        try:
            entry = await store.open_epoch(table, resume_after, reason)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            await store.redis.aclose()
        print(
            f"{table}: epoch entry at seq {entry.seq} (seqs {entry.request['lost_after'] + 1}.."
            f"{resume_after} declared lost); restart the fairroll processes that stopped it"
        )
        return 0

    return asyncio.run(run())


def _archive(table: str, through: int, out: Path) -> int:
    """Export entries (base, through] to ``out``, verify them (chain, signatures, outcomes),
    then trim them from Redis behind a checkpoint signed for ``through``, written to
    ``out`` + ``.base.json``. Nothing is trimmed unless the file verified."""
    import asyncio  # noqa: PLC0415
    import dataclasses  # noqa: PLC0415

    import msgspec  # noqa: PLC0415

    from fairroll.audit.verify import Trust, verify_entries  # noqa: PLC0415
    from fairroll.mechanics import replay_entry  # noqa: PLC0415

    opened = _operator_store()
    if isinstance(opened, int):
        return opened
    store = opened

    async def run() -> int:
        try:
            base = await store.base(table)
            start = base.size if base else 0
            served = Trust.rooted(await store.public_keys(), store.root_key_id)
            lines = []
            after = start
            while page := await store.raw_page(table, after=after, until=through):
                lines += [raw for _, raw in page]
                after = page[-1][0]
            report = verify_entries(
                lines,
                dataclasses.replace(
                    served, table=table, base=(base.size, base.head_hash) if base else None
                ),
                replay=replay_entry,
            )
            if not report.ok or report.last_seq != through:
                print(f"FAIL: not archived: {report.reason or 'the log ends before that seq'}")
                return 1
            await asyncio.to_thread(out.write_bytes, b"".join(line + b"\n" for line in lines))
            new_base = await store.archive(table, through)
        finally:
            await store.redis.aclose()
        base_file = out.with_name(out.name + ".base.json")
        base_file.write_bytes(msgspec.json.encode(new_base))
        print(f"archived {table} seq {start + 1}..{through} to {out}; base in {base_file}")
        return 0

    return asyncio.run(run())


def _checkpoint(
    path: Path, keys: Mapping[str, str] | None, what: str, *, unsigned_ok: bool = False
) -> Checkpoint | int | None:
    """A kept checkpoint (or an archive base), as JSON or as its signed note, read and,
    given keys, its signature checked; or an exit status, with the reason printed."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit import Checkpoint, verify_checkpoint  # noqa: PLC0415

    try:
        data = path.read_bytes()
    except OSError as exc:
        print(
            f"error: {path}: {exc.strerror or exc} ({what} you kept earlier; the first time, "
            "leave it out and keep the checkpoint this run verified)",
            file=sys.stderr,
        )
        return 2
    if not data.lstrip().startswith(b"{"):
        opened = _note_checkpoint(path, data, keys, what, quiet=unsigned_ok)
        if opened == 1 and unsigned_ok:
            _ignored(path, what)
            return None
        return opened
    try:
        checkpoint = msgspec.json.decode(data, type=Checkpoint)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        print(f"error: {path} is not {what}: {exc}", file=sys.stderr)
        return 2
    if keys is not None and not verify_checkpoint(checkpoint, keys.get(checkpoint.key_id, "")):
        if unsigned_ok:
            _ignored(path, what)
            return None
        print(f"FAIL: {what} {path} is not signed by a key the pinned root certifies")
        return 1
    return checkpoint


def _ignored(path: Path, what: str) -> None:
    """A kept checkpoint no trusted key signed proves nothing: it is left out (and so
    stands in for no signature), said on stderr, and the log is checked without it."""
    print(
        f"warning: {what} {path} is not signed by a key the pinned root certifies: ignored",
        file=sys.stderr,
    )


def _note_checkpoint(
    path: Path, data: bytes, keys: Mapping[str, str] | None, what: str, *, quiet: bool = False
) -> Checkpoint | int:
    """A checkpoint kept as its signed note (``Accept: text/plain``): it needs --keys."""
    import base64  # noqa: PLC0415

    from fairroll.audit import note  # noqa: PLC0415
    from fairroll.audit.checkpoint import Checkpoint, NoteError, parse_body  # noqa: PLC0415

    text = data.decode("utf-8", "replace")
    origin = text.split("\n", 1)[0]
    name = origin.rsplit("/", 1)[0]
    if keys is None:
        print(f"error: {path} is a signed note: pass --keys to check it", file=sys.stderr)
        return 2
    # Every trusted key at once (note.open_note): a failing line of any of them rejects
    # the note, whatever good line stands beside it.
    verifiers = {
        note.SignerVerifier(name, base64.b64decode(public_key)): key_id
        for key_id, public_key in keys.items()
    }
    try:
        opened = note.open_note(text, verifiers)
        size, root, head_hash = parse_body(opened.text)
    except (NoteError, note.NoteError):
        opened = None
    if opened is not None:
        signer = next(v for v in verifiers if v.key_hash == opened.sigs[0].key_hash)
        return Checkpoint(
            table=origin.rsplit("/", 1)[-1],
            origin=origin,
            size=size,
            root_hash=base64.b64encode(root).decode(),
            head_hash=head_hash,
            key_id=verifiers[signer],
            key_name=name,
            signature="",
            text=text,
        )
    if not quiet:
        print(f"FAIL: {what} {path} is not a checkpoint note signed under the pinned root")
    return 1


def _verify(
    file: Path,
    keys_file: Path | None,
    *,
    replay: bool,
    checkpoints: Sequence[Path] = (),
    receipts: Sequence[Path] = (),
    reveals: Sequence[Path] = (),
    base_file: Path | None = None,
    root: str | None = None,
    workers: int | None = None,
    allow_unsigned: bool = False,
    as_json: bool = False,
) -> int:

    import dataclasses  # noqa: PLC0415

    import msgspec  # noqa: PLC0415

    from fairroll.audit import PublicKey, Trust  # noqa: PLC0415
    from fairroll.audit.parallel import verify_everywhere  # noqa: PLC0415
    from fairroll.mechanics import RevisionTally  # noqa: PLC0415

    published = Trust(keys=None)
    if keys_file is not None:
        try:
            served = json.loads(keys_file.read_text())
            listed = msgspec.convert(served["keys"], list[PublicKey])
        except (ValueError, KeyError, TypeError, msgspec.ValidationError) as exc:
            print(f"error: {keys_file} is not the JSON of GET /v1/keys: {exc}", file=sys.stderr)
            return 2
        # Trust rooted once: only the keys the pinned root certified.
        published = Trust.rooted(listed, root) if root else Trust.published(listed)
    keys = published.keys
    import base64  # noqa: PLC0415

    read = _kept_checkpoints(checkpoints, keys)
    if isinstance(read, int):
        return read
    anchors, roots, covering, evidence = read
    for path in receipts:
        try:
            receipt = json.loads(path.read_text())
            anchors.append((int(receipt["seq"]), str(receipt["entry_hash"])))
        except (ValueError, KeyError, TypeError) as exc:
            print(f"error: {path} is not a receipt: {exc}", file=sys.stderr)
            return 2
    revealed: dict[str, str] = {}
    for path in reveals:
        try:
            session = json.loads(path.read_text())
            revealed[str(session["seed_id"])] = str(session["server_seed"])
        except (ValueError, KeyError, TypeError) as exc:
            print(f"error: {path} is not a revealed seed session: {exc}", file=sys.stderr)
            return 2
    start: tuple[int, str] | None = None
    frontier: list[bytes] | None = None
    if base_file is not None:
        base = _checkpoint(base_file, keys, "an archive base (GET .../base)")
        if base is None or isinstance(base, int):
            return 1 if base is None else base
        start = (base.size, base.head_hash)
        frontier = [base64.b64decode(h) for h in base.frontier or []] if base.frontier else None
    trust = dataclasses.replace(
        published,
        anchors=anchors,
        roots=roots,
        reveals=revealed,
        base=start,
        base_frontier=frontier,
        root=root,
        covered_by=covering,
    )
    with _tally_place(replay, workers) as into:
        # Counts, by mechanic, the entries that replay only under an earlier revision.
        tally = RevisionTally(into) if replay else None
        report = verify_everywhere(_reopener(file), trust, replay=tally, workers=workers)
        if tally is not None:
            report = msgspec.structs.replace(report, earlier_revisions=tally.counts())
    checked = (replay, len(anchors), [size for size, _ in roots])
    status = _answer(
        file,
        report,
        checked,
        rooted=root is not None,
        allow_unsigned=allow_unsigned,
        as_json=as_json,
    )
    if evidence and not as_json:
        print("the two signed notes of one size, a proof of equivocation anyone can check:")
        print("\n".join(f"--- note ---\n{text}" for text in evidence))
    return status


def _kept_checkpoints(
    paths: Sequence[Path], keys: Mapping[str, str] | None
) -> tuple[list[tuple[int, str]], list[tuple[int, bytes]], Checkpoint | None, list[str]] | int:
    """The kept checkpoints' heads and roots by size, the largest (it may stand in for the
    signatures it covers), and the notes of any two of one size with two roots (the
    verifier fails them as an equivocation; both notes are its proof); or an exit status."""
    import base64  # noqa: PLC0415

    anchors: list[tuple[int, str]] = []
    roots: list[tuple[int, bytes]] = []
    covering: Checkpoint | None = None
    kept: dict[int, Checkpoint] = {}
    evidence: list[str] = []
    for path in paths:
        checkpoint = _checkpoint(path, keys, "a checkpoint", unsigned_ok=True)
        if isinstance(checkpoint, int):
            return checkpoint
        if checkpoint is None:
            continue
        other = kept.setdefault(checkpoint.size, checkpoint)
        if other.root_hash != checkpoint.root_hash:
            evidence += [other.text, checkpoint.text]
        if checkpoint.size:
            anchors.append((checkpoint.size, checkpoint.head_hash))
            roots.append((checkpoint.size, base64.b64decode(checkpoint.root_hash)))
            if covering is None or checkpoint.size > covering.size:
                covering = checkpoint
    return anchors, roots, covering, evidence


def _answer(
    file: Path,
    report: VerifyReport,
    checked: tuple[bool, int, list[int]],
    *,
    rooted: bool,
    allow_unsigned: bool,
    as_json: bool,
) -> int:
    """Print the verdict first, then what holds and the auditor's report; the exit status:
    0 verified, 1 failed, 4 not verified (no signature checked, or none under a pinned
    root: keys.json alone is the server's own word on its keys)."""
    import msgspec  # noqa: PLC0415

    replay, anchors, roots = checked
    signed = report.signatures_checked and rooted
    unsigned = report.ok and not signed and not allow_unsigned
    status = 1 if not report.ok else 4 if unsigned else 0
    audit = _audit(file) if report.ok else None
    if as_json:
        verdict = "FAIL" if not report.ok else "NOT VERIFIED" if unsigned else "OK"
        if verdict == "OK" and not signed:
            verdict = "OK, UNSIGNED"
        said = {"verdict": verdict, "exit": status, "verification": report, "report": audit}
        print(msgspec.json.encode(said).decode())
        return status
    if unsigned:
        # The verdict first: a log whose signatures were not checked is not verified.
        print(
            "NOT VERIFIED: no root key is pinned, so no signature is trusted (pass --root "
            "<root key id>, given out of band, and --keys keys.json from GET /v1/keys; "
            "--allow-unsigned to accept the rest)"
        )
        _print_ok(report, False, replay, anchors, roots, verdict=False)
    elif report.ok:
        _print_ok(report, signed, replay, anchors, roots)
    else:
        print(f"FAIL at seq {report.first_bad_seq}: {report.reason}")
    if audit is not None:
        _print_audit(audit, report)
    return status


def _audit(file: Path) -> AuditReport:
    """The auditor's report of an export the verifier has passed."""
    import msgspec  # noqa: PLC0415

    from fairroll.audit.report import audit_report  # noqa: PLC0415

    with _reopener(file)() as lines:
        entries = (msgspec.json.decode(line) for line in lines if line.strip())
        return audit_report(entries)


def _print_audit(audit: AuditReport, report: VerifyReport) -> None:
    print("rolls by mechanic:")
    for mechanic, sources in audit.by_mechanic.items():
        by_source = ", ".join(f"{count} {source}" for source, count in sources.items())
        print(f"  {mechanic}: {audit.mechanics[mechanic]} ({by_source})")
    print(f"first entry {audit.first_time}, last entry {audit.last_time}")
    for key_id, used in audit.keys.items():
        print(f"key {key_id} signed {used.entries} entries (seq {used.first_seq}..{used.last_seq})")
    for title, faces in (
        ("fairroll's dice (derived from seeds)", audit.derived_faces),
        (
            "supplied dice (rolled elsewhere: the callers' dice, not fairroll's)",
            audit.supplied_faces,
        ),
    ):
        if not faces:
            continue
        print(f"{title}, faces counted, and the chance a fair die looks this uneven:")
        for die in faces:
            counted = " ".join(f"{face}:{count}" for face, count in enumerate(die.counts, 1))
            fit = die.fit
            if fit.method == "chi-square":
                test = (
                    f"chi-square p = {fit.p_value:.3g} (statistic {fit.statistic:.2f}, "
                    f"df {fit.degrees_of_freedom})"
                )
            elif fit.method == "exact":
                test = f"exact multinomial p = {fit.p_value:.3g}"
            else:
                test = str(fit.note)
            print(f"  d{die.sides}: {die.dice} dice, {counted}; {test}")
    if report.last_seq:
        print(
            f"keep: the signed checkpoint of size {report.last_seq} (Merkle root "
            f"{report.root_hash}): curl -s -H 'Accept: text/plain' "
            f"<server>/v1/tables/{audit.table or '<table>'}/checkpoint > kept-checkpoint.txt, "
            "and next time pass --since kept-checkpoint.txt: it proves the log only grew"
        )


def _print_ok(
    report: VerifyReport,
    signed: bool,
    replay: bool,
    anchors: int,
    roots: list[int],
    *,
    verdict: bool = True,
) -> None:
    from fairroll.audit.verify.report import EARLIER_REVISION  # noqa: PLC0415

    checked = "chain, seeds" + (", signatures" if signed else "") + (", outcomes" if replay else "")
    if anchors:
        checked += f", {anchors} checkpoint(s)/receipt(s)"
    said = "OK" if signed else "OK, UNSIGNED"
    print(
        f"{said if verdict else 'what holds'}: {report.entries} entries "
        f"(seq {report.first_seq}..{report.last_seq}); checked {checked}; head {report.head_hash}"
    )
    if report.root_hash is not None:
        print(f"Merkle root at size {report.last_seq}: {report.root_hash}")
    if roots:
        sizes = ", ".join(str(size) for size in roots)
        print(f"consistent with the kept checkpoint(s) of size {sizes}")
    if report.covered_through is not None:
        print(
            f"signatures: the entries through seq {report.covered_through} by the signed "
            "checkpoint of that size (one signature over their Merkle root), the rest one by one"
        )
    unfair = len(report.not_fair)  # committed rolls each: never counted as fair
    for source, count in sorted(report.sources.items()):
        fair = count - unfair if source == "committed" else count
        if fair < count:
            print(f"{unfair} committed roll(s): NOT FAIR, each named below")
        if fair:
            print(f"{fair} {source} roll(s): {report.proves.get(source, source)}")
    for roll in report.not_fair:
        print(f"seq {roll.seq}: NOT FAIR: {roll.why}")
    for mechanic, count in report.earlier_revisions.items():
        print(f"{count} {mechanic} entr{'y' if count == 1 else 'ies'}: {EARLIER_REVISION}")
    if report.refusals:
        print(f"refusals: {report.refusals}")
    for lost in report.lost:
        print(
            f"lost: seqs {lost.lost_after + 1}..{lost.resume_after}, declared by the epoch at "
            f"seq {lost.epoch_seq}: {lost.reason or '(no reason given)'}"
        )
    if not signed:
        print("warning: signatures NOT checked under a pinned root; pass --root and --keys")
    if report.unrevealed:
        print(
            f"note: {report.unrevealed} committed roll(s) wait for their seed session's "
            "reveal; their dice are not checked yet"
        )


@contextmanager
def _tally_place(replay: bool, workers: int | None) -> Iterator[MutableMapping[int, str] | None]:
    """Where a ``RevisionTally`` keeps its count: its own dict (None) in one process, a
    dict shared with the worker processes that replay entries when there are any."""
    if not replay or ((os.cpu_count() or 1) if workers is None else workers) <= 1:
        yield None
        return
    import multiprocessing  # noqa: PLC0415

    with multiprocessing.get_context("fork").Manager() as manager:
        yield manager.dict()


def _reopener(file: Path) -> Callable[[], AbstractContextManager[Iterable[bytes]]]:
    """Opens the export again each time (a failure is read twice); stdin is read once."""
    if str(file) == "-":
        kept = sys.stdin.buffer.read().splitlines()
        return lambda: nullcontext(kept)

    @contextmanager
    def lines() -> Iterator[Iterable[bytes]]:
        with file.open("rb") as handle:
            yield handle

    return lines


def _has(module: str) -> bool:
    import importlib.util  # noqa: PLC0415

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    raise SystemExit(main())
