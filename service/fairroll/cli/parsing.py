"""What every command module declares its commands with."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["AddParser"]

#: ``add_parser`` of the subcommands: each ``add_*`` declares one and what it runs.
AddParser = Callable[..., argparse.ArgumentParser]
