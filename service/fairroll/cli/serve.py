"""``fairroll serve`` (the HTTP service, and an embedded Redis without ``REDIS_URL``) and
``fairroll openapi`` (the spec it serves)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairroll.api.settings import Settings
    from fairroll.audit import Signer
    from fairroll.cli.parsing import AddParser

__all__ = ["SERVE_ENVIRONMENT", "add_openapi", "add_serve", "openapi_text", "run_server"]


APP_FACTORY = "fairroll.api.app:create_app_from_env"
SERVERS = ("granian", "uvicorn")


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
    "FAIRROLL_MIRROR_ORIGINS": "tile mirrors the table page may verify from (CSP list)",
    "FAIRROLL_PUBLIC_URL": "this server's URL as VTTs reach it (the integrations point at it)",
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


def add_serve(add_parser: AddParser) -> None:
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


def add_openapi(add_parser: AddParser) -> None:
    openapi = add_parser("openapi", help="print or write the OpenAPI spec")
    openapi.add_argument("--output", "-o", type=Path, help="write here instead of stdout")
    openapi.set_defaults(run=lambda a: _openapi(a.output))


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
    from fairroll.api.wiring import server_signer  # noqa: PLC0415

    settings = Settings.from_env()  # a setting that does not parse names itself
    signer = server_signer(settings)  # a SignerError, a ValueError, names the variable
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

    from fairroll.api.wiring import audit_store  # noqa: PLC0415
    from fairroll.audit.redis.durability import MIN_REDIS, describe  # noqa: PLC0415

    variable = "FAIRROLL_SENTINELS" if os.environ.get("FAIRROLL_SENTINELS") else "REDIS_URL"

    async def probe() -> tuple[list[tuple[tuple[int, ...], str]], bool]:
        store = audit_store(settings, signer)
        try:
            found = await describe(store.redis)
            await store.keyring.refresh()
            return found, store.keyring.own_retired
        finally:
            await store.redis.aclose()

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


def _has(module: str) -> bool:

    return importlib.util.find_spec(module) is not None
