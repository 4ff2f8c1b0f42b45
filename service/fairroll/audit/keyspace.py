"""Every Redis key fairroll reads or writes, named here and nowhere else.

A table's keys all carry its name as a hash tag (``{<table>}``), so in Redis Cluster
they live in one slot and a table's append script may touch them together:

    fairroll:{<table>}:log            stream of the table's entries (``audit.store``)
    fairroll:{<table>}:head           "<seq>:<entry_hash>" of the last entry
    fairroll:{<table>}:tree           the Merkle tree's stored hashes
    fairroll:{<table>}:keys           hash: key id -> its state in this table's log
    fairroll:{<table>}:signed         "<size> <root hex>" of the last checkpoint signed
    fairroll:{<table>}:cosignatures   hash: cosigner's vkey -> its latest cosignature
    fairroll:{<table>}:cosigned       stream: each cosignature kept, as it came (events)
    fairroll:{<table>}:cosigners      hash: cosigners' names, credentials, origins, counts
    fairroll:{<table>}:cosigners:<c>  sorted set: a credential's pool of cosigners by last kept
    fairroll:{<table>}:clients        hash: client seed -> the seq of the first roll using it
    fairroll:{<table>}:meta           hash: the table's write key hash and policy
    fairroll:{<table>}:base           hash: the signed base of an archived log
    fairroll:{<table>}:verified       where the server's own verification stopped
    fairroll:{<table>}:seed:<id>      hash: a seed session (``audit.sessions``)
    fairroll:{<table>}:idem:<key>     an idempotent roll's marker (``play.idempotency``)
    fairroll:{<table>}:idem:sealed reveal <seq>
                                      a sealed roll's reveal, once (``sealed_reveal_key``)

and the keys of the whole deployment:

    fairroll:keys                     hash: key id -> public key (every signing key)
    fairroll:sessions:open            sorted set: open seed sessions by last use
    fairroll:rl:<client>              a client's token bucket (``api.protection``)
    fairroll:rl:key:<digest>          a write key's token bucket

>>> log_key("t1"), session_key("t1", "s1")
('fairroll:{t1}:log', 'fairroll:{t1}:seed:s1')
>>> table_of_head(head_key("my-table"))
'my-table'
"""

from __future__ import annotations

__all__ = [
    "HEAD_PATTERN",
    "KEYS_HASH",
    "OPEN_SESSIONS",
    "base_key",
    "client_seeds_key",
    "cosignatures_key",
    "cosigned_key",
    "cosigners_key",
    "head_key",
    "idempotency_key",
    "keys_key",
    "log_key",
    "meta_key",
    "pool_key",
    "rate_key",
    "sealed_reveal_key",
    "session_key",
    "signed_key",
    "table_of_head",
    "tip_keys",
    "tree_key",
    "verified_key",
    "write_key_rate_key",
]

KEYS_HASH = "fairroll:keys"
OPEN_SESSIONS = "fairroll:sessions:open"
#: Every table's head (``SCAN MATCH``): a table exists once it has one.
HEAD_PATTERN = "fairroll:{*}:head"


def _of(table: str, part: str) -> str:
    return f"fairroll:{{{table}}}:{part}"


def log_key(table: str) -> str:
    return _of(table, "log")


def head_key(table: str) -> str:
    return _of(table, "head")


def tree_key(table: str) -> str:
    return _of(table, "tree")


def keys_key(table: str) -> str:
    return _of(table, "keys")


def signed_key(table: str) -> str:
    return _of(table, "signed")


def cosignatures_key(table: str) -> str:
    return _of(table, "cosignatures")


def cosigned_key(table: str) -> str:
    """The stream of cosignatures as they are kept (the ``cosignature`` events)."""
    return _of(table, "cosigned")


def verified_key(table: str) -> str:
    """Where the server's own verification of the table stopped (``redis.verified``)."""
    return _of(table, "verified")


def base_key(table: str) -> str:
    return _of(table, "base")


def meta_key(table: str) -> str:
    return _of(table, "meta")


def session_key(table: str, seed_id: str) -> str:
    return _of(table, f"seed:{seed_id}")


def idempotency_key(table: str, key: str) -> str:
    return _of(table, f"idem:{key}")


def sealed_reveal_key(table: str, seq: int) -> str:
    """The marker that takes the one reveal of the sealed roll at ``seq``: an idempotency
    marker under a name no ``Idempotency-Key`` can take (a space is no visible character)."""
    return idempotency_key(table, f"sealed reveal {seq}")


def tip_keys(table: str) -> tuple[str, ...]:
    """The keys the tip script reads, in its KEYS order: head, log, base, tree, keys."""
    return (head_key(table), log_key(table), base_key(table), tree_key(table), keys_key(table))


def table_of_head(name: str) -> str:
    """The table whose head key ``name`` is."""
    return name[len("fairroll:{") : -len("}:head")]


def rate_key(client: str) -> str:
    return f"fairroll:rl:{client}"


def write_key_rate_key(digest: str) -> str:
    return f"fairroll:rl:key:{digest}"


def client_seeds_key(table: str) -> str:
    """``fairroll:{<table>}:clients``, hash: each client seed a committed roll of the
    table used -> ``"<seq> <chain>"``, the seq of the first roll that used it and the seq
    that committed that roll's chain (a bare ``"<seq>"`` from before chains were kept).
    The append refuses a roll whose client seed was used before its chain was committed
    (a chain drawn by a server that knew the seed could have been ground for it), or on
    another chain (a server holding several could pick the one that grinds it); one field
    per client seed, so a roll's check is one lookup whatever the log's length."""
    return f"fairroll:{{{table}}}:clients"


def cosigners_key(table: str) -> str:
    """The cosigners' names, credentials and counts (``audit.redis.cosignatures``)."""
    return f"fairroll:{{{table}}}:cosigners"


def pool_key(table: str, letter: str) -> str:
    """A credential's pool: its cosigners by the ms each was last kept.

    >>> pool_key("t1", "s")
    'fairroll:{t1}:cosigners:s'
    """
    return f"fairroll:{{{table}}}:cosigners:{letter}"
