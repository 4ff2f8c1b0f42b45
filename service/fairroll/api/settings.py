"""Settings, read from the environment in this one place."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

__all__ = ["Settings"]

DEFAULT_MAX_BODY_BYTES = 64 * 1024
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"

_N = TypeVar("_N", int, float)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """How one fairroll process runs.

    ``redis_url``: the audit store (``redis://``, ``rediss://`` or ``unix://``;
    ``redis+sentinel://host:port,.../<service>``, or ``FAIRROLL_SENTINELS`` with
    ``FAIRROLL_SENTINEL_SERVICE``: the primary Redis Sentinel names, followed through a
    failover; ``redis+cluster://``).
    ``signing_key`` / ``signing_key_file``: the Ed25519 key (PEM or base64 seed).
    ``dev_key_dir``: where a development key is created and kept when no key is given.
    ``ephemeral_key``: without any of them, sign with a key of this process's own instead
    of refusing to start (only for an app that signs nothing the log keeps: the spec).
    ``max_body_bytes``: the largest request body accepted (413 beyond).
    ``default_table_open``: anonymous rolls may use the ``default`` table.
    ``rate_limit``: a client's token bucket: its size, and what it refills a minute (0:
    off); a roll costs 1, odds 4, an export 5, a verification 10 (``api.protection``).
    ``request_timeout_seconds``: a response must start within this (503 after; 0: off).
    ``trusted_proxy_hops``: proxies whose ``X-Forwarded-For`` is believed (0: none).
    ``cors_origins``: browser origins allowed to call the API (``*``: any; none by default).
    ``durability``: ``fsync`` (the default) acknowledges a roll only once Redis has it on
    disk, and refuses rolls on a Redis that cannot promise that; ``memory`` accepts such
    a Redis (tests of other things, throwaway tables), and ``/readyz`` says so.
    ``require_replicas``: replicas that must hold each round before it is acknowledged.
    ``compute_workers``: processes that answer odds and verification (``api.compute``);
    0 answers them on the event loop (a compute worker itself, and nothing else).
    ``compute_timeout_seconds``: such a request is stopped (its worker killed) after this.
    ``compute_worker``: this process is a compute worker (it never appends).
    ``frame_ancestors``: who may embed fairroll's pages in a frame (a CSP source list).
    ``mirror_origins``: where else the pages may read (a CSP source list added to
    ``connect-src``): the static mirrors of a table's tiles a player verifies from.
    ``session_tokens``: ``required`` (the default): a roll in a seed session, and its
    reveal, must show the session's token (``play.sessions``), so a stranger who read a
    session's public ``seed_id`` cannot roll in it; ``optional``, an operator's opt-in for
    clients from before the header: only once it was shown.
    ``require_tables``: rolls only on tables created with ``POST /v1/tables`` (and on
    ``default`` while it is open): an unknown table name is a 404, not a new open table.
    ``log_name``: the signed-note key name of checkpoints, and their origins' prefix
    (``<log_name>/<table>``); replicas sharing a key share it, verifiers pin it.
    ``key_certificate``: the root's certificate of the signing key (JSON, from ``fairroll
    certify-key``) when the key is not the root itself (a rotated key).
    ``root_key_id``: the pinned root the server's own verifications trust keys from
    (default: the root that certified its signing key).
    ``max_subscribers``: live-event streams (``GET .../events``) this process serves at
    once; one more is answered 503. ``events_heartbeat_seconds``: an idle stream's
    heartbeat (a comment line), so proxies keep it open.
    ``witnesses``: C2SP tlog-witnesses the tables' checkpoints are submitted to
    (``FAIRROLL_WITNESSES``: "<URL> <verifier key>" pairs, comma-separated), every
    ``witness_seconds``; their cosignatures ride on the checkpoints (``api.witnesses``).
    ``systems``: modules to import that declare more rule systems (``fairroll.mechanics``):
    their mechanics are served, listed and verified like the built-in ones.
    ``public_url``: this server's URL as the VTTs reach it, for the integrations it serves
    (``api.controllers.integrations``); the request's own origin when unset.
    """

    redis_url: str = DEFAULT_REDIS_URL
    signing_key: str | None = None
    signing_key_file: Path | None = None
    dev_key_dir: Path | None = None
    ephemeral_key: bool = False
    witnesses: str = ""
    witness_seconds: float = 10.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    redis_timeout_seconds: float = 2.0
    default_table_open: bool = True
    rate_limit: int = 0
    request_timeout_seconds: float = 10.0
    trusted_proxy_hops: int = 0
    cors_origins: tuple[str, ...] = ()
    durability: str = "fsync"
    require_replicas: int = 0
    compute_workers: int = 1
    compute_worker: bool = False
    frame_ancestors: str = "'none'"
    mirror_origins: str = ""
    require_tables: bool = False
    session_tokens: Literal["required", "optional"] = "required"
    compute_timeout_seconds: float = 5.0
    log_name: str = "fairroll"
    key_certificate: str | None = None
    root_key_id: str | None = None
    systems: tuple[str, ...] = ()
    max_subscribers: int = 1000
    events_heartbeat_seconds: float = 15.0
    public_url: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read ``REDIS_URL``, ``FAIRROLL_SIGNING_KEY``, ``FAIRROLL_SIGNING_KEY_FILE``,
        ``FAIRROLL_DEV_KEY_DIR``, ``FAIRROLL_MAX_BODY_BYTES``, ``FAIRROLL_REDIS_TIMEOUT``,
        ``FAIRROLL_DEFAULT_TABLE_OPEN``, ``FAIRROLL_RATE_LIMIT``,
        ``FAIRROLL_TRUSTED_PROXY_HOPS``, ``FAIRROLL_CORS_ORIGINS`` (comma-separated),
        ``FAIRROLL_REQUEST_TIMEOUT``, ``FAIRROLL_DURABILITY``, ``FAIRROLL_REQUIRE_REPLICAS``,
        ``FAIRROLL_COMPUTE_WORKERS``, ``FAIRROLL_COMPUTE_TIMEOUT``, ``FAIRROLL_FRAME_ANCESTORS``,
        ``FAIRROLL_MIRROR_ORIGINS``,
        ``FAIRROLL_REQUIRE_TABLES``, ``FAIRROLL_SESSION_TOKENS``, ``FAIRROLL_LOG_NAME``,
        ``FAIRROLL_KEY_CERTIFICATE``,
        ``FAIRROLL_ROOT_KEY_ID``, ``FAIRROLL_SYSTEMS`` (comma-separated modules),
        ``FAIRROLL_MAX_SUBSCRIBERS``, ``FAIRROLL_EVENTS_HEARTBEAT``, ``FAIRROLL_PUBLIC_URL``."""
        env = os.environ if env is None else env
        durability = env.get("FAIRROLL_DURABILITY", "fsync").strip().lower()
        if durability not in ("fsync", "memory"):
            raise ValueError(f"FAIRROLL_DURABILITY must be fsync or memory, not {durability!r}")
        log_name = env.get("FAIRROLL_LOG_NAME", "fairroll").strip() or "fairroll"
        if any(c.isspace() or c == "+" for c in log_name):
            raise ValueError("FAIRROLL_LOG_NAME may hold neither spaces nor '+' (a note key name)")
        key_file = env.get("FAIRROLL_SIGNING_KEY_FILE")
        dev_dir = env.get("FAIRROLL_DEV_KEY_DIR")
        return cls(
            redis_url=_redis_url(env),
            signing_key=env.get("FAIRROLL_SIGNING_KEY") or None,
            signing_key_file=Path(key_file) if key_file else None,
            dev_key_dir=Path(dev_dir) if dev_dir else None,
            max_body_bytes=_number(env, "FAIRROLL_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, int),
            redis_timeout_seconds=_number(env, "FAIRROLL_REDIS_TIMEOUT", "2.0", float),
            default_table_open=env.get("FAIRROLL_DEFAULT_TABLE_OPEN", "true").lower()
            not in ("0", "false", "no"),
            # A compute worker answers requests the service has already charged.
            rate_limit=0
            if env.get("FAIRROLL_COMPUTE_WORKER")
            else _number(env, "FAIRROLL_RATE_LIMIT", "0", int),
            request_timeout_seconds=_number(env, "FAIRROLL_REQUEST_TIMEOUT", "10", float),
            trusted_proxy_hops=_number(env, "FAIRROLL_TRUSTED_PROXY_HOPS", "0", int),
            durability=durability,
            require_replicas=_number(env, "FAIRROLL_REQUIRE_REPLICAS", "0", int),
            compute_workers=0
            if env.get("FAIRROLL_COMPUTE_WORKER")
            else _number(env, "FAIRROLL_COMPUTE_WORKERS", "1", int),
            compute_worker=bool(env.get("FAIRROLL_COMPUTE_WORKER")),
            frame_ancestors=env.get("FAIRROLL_FRAME_ANCESTORS", "").strip() or "'none'",
            mirror_origins=env.get("FAIRROLL_MIRROR_ORIGINS", "").strip(),
            require_tables=env.get("FAIRROLL_REQUIRE_TABLES", "false").lower()
            in ("1", "true", "yes"),
            session_tokens=_session_tokens(env),
            compute_timeout_seconds=_number(env, "FAIRROLL_COMPUTE_TIMEOUT", "5", float),
            log_name=log_name,
            witnesses=env.get("FAIRROLL_WITNESSES", ""),
            witness_seconds=_number(env, "FAIRROLL_WITNESS_SECONDS", "10", float),
            key_certificate=env.get("FAIRROLL_KEY_CERTIFICATE") or None,
            root_key_id=env.get("FAIRROLL_ROOT_KEY_ID") or None,
            systems=_listed(env.get("FAIRROLL_SYSTEMS", "")),
            max_subscribers=_number(env, "FAIRROLL_MAX_SUBSCRIBERS", "1000", int),
            events_heartbeat_seconds=_number(env, "FAIRROLL_EVENTS_HEARTBEAT", "15", float),
            public_url=env.get("FAIRROLL_PUBLIC_URL", "").strip().rstrip("/") or None,
            cors_origins=tuple(
                origin.strip()
                for origin in env.get("FAIRROLL_CORS_ORIGINS", "").split(",")
                if origin.strip()
            ),
        )


def _number(env: Mapping[str, str], name: str, default: str | int, kind: Callable[[str], _N]) -> _N:
    """The number the variable ``name`` holds (``default`` when it is unset), or a
    ValueError naming the variable, so that a typo stops the server in one line."""
    text = env.get(name, str(default)).strip()
    try:
        value = kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name} must be {what}, not {text!r}") from None
    if value < 0:
        raise ValueError(f"{name} must not be negative, not {text!r}")
    return value


def _session_tokens(env: Mapping[str, str]) -> Literal["required", "optional"]:
    text = env.get("FAIRROLL_SESSION_TOKENS", "required").strip().lower()
    if text == "required":
        return "required"
    if text == "optional":
        return "optional"
    raise ValueError(f"FAIRROLL_SESSION_TOKENS must be required or optional, not {text!r}")


def _listed(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _redis_url(env: Mapping[str, str]) -> str:
    """``REDIS_URL``; or, with ``FAIRROLL_SENTINELS`` ("host:port,host:port"), the
    Sentinel URL of ``FAIRROLL_SENTINEL_SERVICE`` (default ``fairroll``)."""
    sentinels = env.get("FAIRROLL_SENTINELS", "").strip()
    if not sentinels:
        return env.get("REDIS_URL", DEFAULT_REDIS_URL)
    service = env.get("FAIRROLL_SENTINEL_SERVICE", "fairroll").strip() or "fairroll"
    return f"redis+sentinel://{sentinels}/{service}"
