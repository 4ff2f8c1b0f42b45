"""Pure game rules, one module per system. No I/O, no framework imports."""

from fairroll.rules.errors import RuleError

__all__ = ["RuleError"]
