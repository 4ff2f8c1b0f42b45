"""The audit log's Redis side, one room a job; ``audit.store.AuditStore`` is its facade.

``connection``   connecting (standalone or cluster) and a round's batch in one write
``scripts``      the Lua scripts (``lua/*.lua``), read at startup, called by SHA-1
``durability``   what an acknowledged append is worth on the Redis met (WAITAOF, fsync)
``append``       the append script's contract: the arguments of a call, its replies
``commit``       group commit: queues, rounds, durable confirmation, answering callers
``tips``         per table: head, tree frontier, key states, anchor, and the fence
``keyring``      the deployment's signing keys: published, retired
``tables``       a table's write key and policy
``maintenance``  checkpoints, archives and epochs
``errors``       what an append or read can fail with
``reads``        a log's rows, its tree's hashes, head, length and signed mark, read
``sessions``     a seed session's hash (token, binding) and the open sessions' index
``cosignatures`` kept cosignatures; ``verified`` where the server's own check stopped
``buckets``      the rate limiter; ``markers`` idempotency markers; ``feeds`` XREAD

Every key is named in ``audit.keyspace``; reads of a log are ``audit.reader``'s, asked
through ``reads``. Outside this package, code holds a client (and closes it) but sends
Redis no command.
"""
