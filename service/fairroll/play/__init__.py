"""The play use case, apart from HTTP: a roll's dice source, resolution and record
(``rolls``), safe retries (``idempotency``), the envelope every roll shares
(``envelope``), live table events (``events``) and the domain series (``metrics``).
It raises domain errors (``errors``, ``rules.RuleError``, ``audit`` store errors); the
HTTP adapter (``api``) maps each to its problem."""
