"""The words the rule modules share, each said once: a name, names that must differ,
tidy text, and Faster, Better, Cheaper's opposite adjectives.

>>> tidy("  Master   Thief ")
'Master Thief'
>>> check_unique_names(["Joe", "Sue", "Joe"], "participants")
Traceback (most recent call last):
fairroll.rules.errors.RuleError: two participants are named 'Joe'; names must differ
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import msgspec

from fairroll.rules.errors import RuleError

__all__ = ["OPPOSITES", "Name", "check_unique_names", "tidy"]

#: A character's, a side's or a Trait's name.
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]

#: Faster, Better, Cheaper: each positive adjective and its opposite ("a Trait cannot be
#: both"), for rolls (``fbc``) and sheets (``fbc_characters``) alike.
OPPOSITES: tuple[tuple[str, str], ...] = (
    ("faster", "slower"),
    ("better", "worse"),
    ("cheaper", "expensive"),
)


def check_unique_names(names: Sequence[str], field: str) -> None:
    """A :class:`RuleError` at ``<field>[i].name`` for the first name given twice."""
    for index, name in enumerate(names):
        if names.index(name) != index:
            raise RuleError(
                f"two {field} are named {name!r}; names must differ",
                field=f"{field}[{index}].name",
            )


def tidy(text: str) -> str:
    """Runs of whitespace as one space, none at the ends (text of only spaces is kept)."""
    return " ".join(text.split()) or text
