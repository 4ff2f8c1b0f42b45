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

Every key is named in ``audit.keyspace``; reads of a log are ``audit.reader``'s.
"""
