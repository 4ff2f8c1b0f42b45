"""One controller per system, plus tables (audit trail), keys and operations."""
