"""One wiring from the settings: the signer, the audit store, the witnesses and the
limits a server runs under, built here for the server's lifespan and for every operator
command (``fairroll archive``, ``open-epoch``, ``retire-key``, and ``serve``'s checks
before it starts).

An operator command writes to the same log as the server: an archive's base, a
``key.retire`` or an ``epoch`` entry must be signed under the log name, the key, the
replicas and the durability the server signs its own entries under, or a player's
verifier would find the log's base under another origin than its checkpoints. Building
the store in one place is what keeps the two from drifting apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fairroll.api.settings import Settings
from fairroll.api.witnesses import WitnessClient, parse_witnesses
from fairroll.audit import AuditStore, Signer, connect_redis, load_signer
from fairroll.audit.redis.durability import Durability
from fairroll.audit.redis.tips import FenceAlarm
from fairroll.audit.signing import CertificateError, KeyNotConfiguredError

__all__ = [
    "Limits",
    "SignerError",
    "audit_store",
    "limits_of",
    "server_signer",
    "witnesses_of",
]


class SignerError(ValueError):
    """The signing key the settings name cannot be loaded; the message names the variable
    to mend."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one client may ask of a server: its token bucket a minute (0: off), the
    proxies whose ``X-Forwarded-For`` names it, and a table verification's share of the
    calculation deadline (then it answers how far it got, and the next one goes on)."""

    rate_limit: int
    trusted_proxy_hops: int
    verification_seconds: float


def server_signer(settings: Settings) -> Signer:
    """The server's signer as its settings name it: every process of one server, and
    every operator command that writes to its log, signs with that one key.
    ``SignerError`` naming the variable at fault when it cannot be loaded."""
    try:
        return load_signer(
            key=settings.signing_key,
            key_file=settings.signing_key_file,
            dev_dir=settings.dev_key_dir,
            certificate=settings.key_certificate,
            ephemeral=settings.ephemeral_key,
        )
    except KeyNotConfiguredError as exc:
        raise SignerError(str(exc)) from exc
    except OSError as exc:
        raise SignerError(
            f"FAIRROLL_SIGNING_KEY_FILE {settings.signing_key_file}: {exc.strerror or exc}"
        ) from exc
    except CertificateError as exc:
        raise SignerError(f"FAIRROLL_KEY_CERTIFICATE: {exc}") from exc
    except (ValueError, TypeError) as exc:
        where = "FAIRROLL_SIGNING_KEY" if settings.signing_key else "FAIRROLL_SIGNING_KEY_FILE"
        raise SignerError(
            f"{where} holds no Ed25519 key (PEM, or a 32-byte seed in base64): {exc}"
        ) from exc


def audit_store(
    settings: Settings,
    signer: Signer,
    *,
    timeout: float | None = None,
    retries: int = 0,
    on_fence: FenceAlarm | None = None,
    on_durability: Callable[[Durability], None] | None = None,
) -> AuditStore:
    """The audit store the settings name, signing with ``signer`` under the configured
    log name, pinned root, replicas and durability. ``timeout`` replaces the settings'
    Redis timeout (an operator command is one long command, not a request);
    ``retries`` lets a process that only reads retry a command on a dropped connection."""
    redis = connect_redis(
        settings.redis_url,
        settings.redis_timeout_seconds if timeout is None else timeout,
        retries=retries,
    )
    return AuditStore(
        redis,
        signer,
        replicas=settings.require_replicas,
        allow_unsafe=settings.durability == "memory",
        on_fence=on_fence,
        log_name=settings.log_name,
        root_key_id=settings.root_key_id,
        on_durability=on_durability,
    )


def witnesses_of(settings: Settings) -> list[WitnessClient]:
    """The C2SP witnesses the tables' checkpoints are submitted to."""
    return parse_witnesses(settings.witnesses)


def limits_of(settings: Settings) -> Limits:
    """The limits on each client, from the settings."""
    return Limits(
        rate_limit=settings.rate_limit,
        trusted_proxy_hops=settings.trusted_proxy_hops,
        verification_seconds=settings.compute_timeout_seconds / 2,
    )
