"""From lark's tree to the model, as the first reading built it: frozen, never edited.

Part of :mod:`fairroll.rules.dice_first`, which is never edited, only replayed: each term
checked as it is built, then the limits every formula kept (:func:`check_formula`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Literal

import lark

from fairroll.randomness import MAX_SIDES
from fairroll.rules.dice_first.limits import (
    DICE_PER_TERM,
    HINTS,
    MAX_DICE,
    MAX_PARTS,
    MAX_ROLLED_DICE,
    MAX_TOTAL,
    error,
)
from fairroll.rules.dice_first.model import (
    AnyOf,
    Clamp,
    Condition,
    Count,
    Crit,
    Dialect,
    DiceTerm,
    Explode,
    Group,
    Modifier,
    Node,
    Reroll,
    Select,
    Sort,
    Test,
    node_bounds,
)

__all__ = ["Builder", "check_formula"]

Parsed = lark.Tree[lark.Token] | lark.Token
_OPERATIONS = {"add", "sub", "mul", "div", "idiv", "mod", "rem", "neg"}


def _token(part: Parsed) -> str:
    if not isinstance(part, lark.Token):
        raise TypeError(f"expected a token, got {part!r}")
    return str(part)


def _tree(part: Parsed) -> lark.Tree[lark.Token]:
    if not isinstance(part, lark.Tree):
        raise TypeError(f"expected a tree, got {part!r}")
    return part


def _start(part: Parsed, default: int) -> int:
    if isinstance(part, lark.Token):
        return part.start_pos if part.start_pos is not None else default
    return part.meta.start_pos if not part.meta.empty else default


class Builder:
    """Turns lark's tree into :class:`Node`s, checking each term as it goes."""

    def __init__(self, text: str, dialect: Dialect) -> None:
        self.text = text
        self.dialect = dialect
        self.terms: list[DiceTerm] = []
        self.parts = 0

    def build(self, part: Parsed) -> Node:
        self.parts += 1
        if isinstance(part, lark.Token):  # a number standing alone (avrae, Foundry)
            return _number(_token(part))
        tree = part
        kind = str(tree.data)
        at = tree.meta.start_pos if not tree.meta.empty else 0
        children = [c for c in tree.children if not _is_annotation(c)]
        if kind == "const":
            return _number(_token(children[0]))
        if kind == "dice":
            term = self._term(tree)
            self.terms.append(term)
            return Node(kind="term", term=term, offset=term.offset)
        if kind in _OPERATIONS:
            return Node(
                kind=kind,  # type: ignore[arg-type]
                parts=tuple(self.build(c) for c in children),
                offset=at,
            )
        if kind == "func":
            name = _token(children[0]).lower()
            return Node(kind=name, parts=(self.build(children[1]),), offset=at)  # type: ignore[arg-type]
        if kind == "compare":
            left, op, right = children
            return Node(
                kind="compare",
                parts=(self.build(left), self.build(right)),
                op=_token(op),  # type: ignore[arg-type]
                offset=at,
            )
        if kind == "group":
            return self._group(tree, children, at)
        # A parenthesis, a unary plus, a term and its [tag]: the same part.
        self.parts -= 1
        return self.build(children[0])

    # Groups ----------------------------------------------------------------------------

    def _group(self, tree: lark.Tree[lark.Token], children: list[Parsed], at: int) -> Node:
        members = [c for c in children if not (isinstance(c, lark.Tree) and _is_group_op(c))]
        ops = [_tree(c) for c in children if isinstance(c, lark.Tree) and _is_group_op(c)]
        parts = tuple(self.build(c) for c in members)
        if not parts:
            raise error(at, "an empty group has nothing to roll")
        select: Select | None = None
        count: Count | None = None
        for op in ops:
            where = op.meta.start_pos
            kind, made = self._group_modifier(op, len(parts), where)
            if kind == "select":
                if select is not None:
                    raise error(where, "a group takes one keep or drop")
                select = made  # type: ignore[assignment]
            else:
                if count is not None and not (
                    self.dialect == "roll20" and isinstance(made, Count) and made.kind == "failure"
                ):
                    raise error(where, "a group counts one way")
                count = made  # type: ignore[assignment]
        of_dice = self.dialect == "roll20" and len(parts) == 1 and select is not None
        if select is not None and not of_dice:
            _check_select(select, len(parts), where=at, what="sub-rolls")
        if of_dice and select is not None:
            dice = sum(t.count for t in _terms_of(parts[0]))
            if any(t.modifiers for t in _terms_of(parts[0])):
                raise error(at, "keeping dice of a group whose dice have modifiers is not taken")
            _check_select(select, dice, where=at, what="dice")
        return Node(
            kind="group",
            parts=parts,
            how=Group(select=select, count=count, of_dice=of_dice),
            offset=at,
        )

    def _group_modifier(
        self, op: lark.Tree[lark.Token], members: int, at: int
    ) -> tuple[str, Select | Count]:
        kind = str(op.data)
        if kind == "keep":
            return "select", _keep_of(op, self.dialect, members, at)
        if kind == "op":  # avrae k/p on a set
            made = self._avrae_op(op, at, set_op=True)
            if not isinstance(made, Select):
                raise error(at, "a set takes k or p")
            return "select", made
        if kind == "success":
            op_token, target = op.children
            test = _roll20_condition(_token(op_token), int(_token(target)))
            return "count", Count(kind="success", test=test)
        if kind == "failure":
            return "count", Count(kind="failure", test=self._compare(op.children[-1], None))
        if kind == "count":
            name = _token(op.children[0]).lower()
            counted = self._compare(op.children[1], None) if len(op.children) > 1 else None
            if name not in ("cs", "cf") or counted is None:
                raise error(at, "a Foundry pool counts with cs or cf and a target (cs>=10)")
            return "count", Count(kind="success" if name == "cs" else "failure", test=counted)
        raise error(at, f"a group does not take {kind}")

    # Dice terms ------------------------------------------------------------------------

    def _term(self, tree: lark.Tree[lark.Token]) -> DiceTerm:
        start = tree.meta.start_pos
        text = self.text[start : tree.meta.end_pos]
        children = list(tree.children)
        first = children[0]
        written_count = isinstance(first, lark.Token) and first.type in ("INT", "NUMBER")
        if written_count and not _token(first).isdigit():
            raise error(start, f"a term rolls a whole number of dice, not {_token(first)}")
        count = int(_token(children.pop(0))) if written_count else 1
        if isinstance(children[0], lark.Token) and children[0].type == "D":
            children.pop(0)
        written = children.pop(0)
        fate, sides = _sides(_token(written))
        if self.dialect == "avrae" and _token(written) == "%":
            raise error(_start(written, start), HINTS["avrae"]["%"])
        if not 1 <= count <= DICE_PER_TERM:
            raise error(start, f"a term rolls 1 to {DICE_PER_TERM} dice, not {count}")
        if not 1 <= sides <= MAX_SIDES:
            raise error(_start(written, start), f"a die has 1 to {MAX_SIDES} sides, not {sides}")
        faces = range(-1, 2) if fate else range(1, sides + 1)
        made: list[tuple[int, Modifier]] = []
        for part in children:
            modifier = _tree(part)
            at = modifier.meta.start_pos
            made.append((at, self._modifier(modifier, faces, text, at, count)))
        for at, m in made:
            _check_stops(m, faces, text, at)
        if self.dialect == "roll20":
            modifiers = _roll20_modifiers(made, text, start, count)
        else:
            modifiers = _merged(made) if self.dialect == "avrae" else tuple(m for _, m in made)
        return DiceTerm(
            text=text,
            offset=start,
            count=count,
            sides=sides,
            fate=fate,
            modifiers=modifiers,
            pool=self.dialect != "roll20",
            dialect=self.dialect,
        )

    def _modifier(
        self, modifier: lark.Tree[lark.Token], faces: range, text: str, at: int, count: int
    ) -> Modifier:
        kind = str(modifier.data)
        children = modifier.children
        highest = faces[-1]
        if kind == "keep":
            return _keep_of(modifier, self.dialect, count, at)
        if self.dialect == "avrae":
            return self._avrae_op(modifier, at, set_op=False)
        if kind in ("explode", "compound", "penetrate"):
            if self.dialect == "foundry":
                mode: Any = "once" if _token(children[0]).lower() == "xo" else "add"
                compare = children[1] if len(children) > 1 else None
            else:
                mode = {"explode": "add", "compound": "compound", "penetrate": "penetrate"}[kind]
                compare = children[-1] if children and isinstance(children[-1], lark.Tree) else None
            test = self._compare(compare, Condition("=", highest)) or Condition("=", highest)
            return Explode(test=test, mode=mode)
        if kind == "reroll":
            word = _token(children[0]).lower()
            if self.dialect == "foundry":
                compare = children[1] if len(children) > 1 else None
                test = self._compare(compare, Condition("=", 1)) or Condition("=", 1)
                return Reroll(test=test, mode="until" if word == "rr" else "once")
            test = self._compare(children[1], None) or Condition("=", 1)
            return Reroll(test=test, mode="once" if word == "ro" else "until")
        if kind == "success":
            op, target = children
            return Count(kind="success", test=_roll20_condition(_token(op), int(_token(target))))
        if kind == "failure":
            return Count(kind="failure", test=self._compare(children[-1], None))
        if kind in ("crit_success", "crit_failure"):
            ranged = self._compare(children[-1], None)
            return Crit(success=ranged) if kind == "crit_success" else Crit(failure=ranged)
        if kind == "sort":
            return Sort(descending=_token(children[0]).lower() == "sd")
        if kind == "clamp":
            word, value = _token(children[0]).lower(), int(_token(children[1]))
            return Clamp(low=value) if word == "min" else Clamp(high=value)
        if kind == "parity":
            return Count(kind=_token(children[0]).lower())  # type: ignore[arg-type]
        if kind == "count":
            word = _token(children[0]).lower()
            against = self._compare(children[1], None) if len(children) > 1 else None
            if word in ("cs", "cf", "ms") and against is None:
                raise error(at, f"Foundry's {word} needs a target ({word}>=8)")
            names = {
                "cs": "success",
                "cf": "failures",
                "df": "failure",
                "sf": "subtract",
                "ms": "margin",
            }
            return Count(kind=names[word], test=against)  # type: ignore[arg-type]
        raise error(at, f"{text}: {kind} is not taken")  # the grammars make no other

    def _avrae_op(self, modifier: lark.Tree[lark.Token], at: int, *, set_op: bool) -> Modifier:
        word = _token(modifier.children[0])
        selector = _tree(modifier.children[1])
        parts = [_token(c) for c in selector.children]
        seltype = parts[0] if len(parts) == 2 else None
        n = int(parts[-1])
        rank: tuple[Literal["h", "l"], int] | None = None
        test: Test
        if seltype in ("h", "l"):
            rank = (seltype, n)  # type: ignore[assignment]
            test = Condition("=", n)  # unused with a rank
        else:
            test = Condition({None: "=", ">": ">", "<": "<"}[seltype], n)  # type: ignore[arg-type]
        if word in ("k", "p"):
            if rank is not None:
                return Select(keep=word == "k", how=rank[0], n=n)
            return Select(keep=word == "k", how="test", test=test)
        if word in ("mi", "ma"):
            if seltype is not None:
                raise error(at, f"avrae's {word} takes a number, not {seltype}{n}")
            return Clamp(low=n) if word == "mi" else Clamp(high=n)
        if rank is not None and word in ("rr", "e"):
            raise error(
                at, f"{word}{seltype}{n} would never stop: avrae's {word} takes X, >X or <X"
            )
        if word == "e":
            return Explode(test=test, mode="add")
        mode: Any = {"rr": "until", "ro": "once", "ra": "add"}[word]
        return Reroll(test=test, mode=mode, rank=rank)

    def _compare(self, compare: Parsed | None, default: Condition | None) -> Test | None:
        if compare is None:
            return default
        parts = [_token(c) for c in _tree(compare).children]
        op = parts[0] if len(parts) > 1 else "="
        value = int(parts[-1])
        if self.dialect == "roll20":
            return _roll20_condition(op, value)
        return Condition(op, value)  # type: ignore[arg-type]


def _is_annotation(part: Parsed) -> bool:
    return isinstance(part, lark.Token) and part.type in ("TAG", "ANNOTATION")


def _is_group_op(tree: lark.Tree[lark.Token]) -> bool:
    return str(tree.data) in ("keep", "success", "failure", "count", "op")


def _number(text: str) -> Node:
    value = Fraction(text)
    if value.denominator == 1:
        return Node(kind="const", value=value.numerator)
    return Node(kind="const", fraction=value)


def _terms_of(node: Node) -> list[DiceTerm]:
    if node.kind == "term":
        return [node.dice]
    return [t for p in node.parts for t in _terms_of(p)]


def _sides(written: str) -> tuple[bool, int]:
    """``F`` is a Fate die (drawn as a d3), ``%`` a d100."""
    if written.lower() == "f":
        return True, 3
    return False, 100 if written == "%" else int(written)


def _roll20_condition(op: str, value: int) -> Condition:
    """Roll20's compare points: ``>N`` is N or more, ``<N`` N or less."""
    if op in (">=", ">"):
        return Condition(">=", value)
    if op in ("<=", "<"):
        return Condition("<=", value)
    return Condition("=", value)


def _keep_of(modifier: lark.Tree[lark.Token], dialect: Dialect, count: int, at: int) -> Select:
    how = _token(modifier.children[0]).lower()
    n = int(_token(modifier.children[1])) if len(modifier.children) > 1 else 1
    if how in ("k", "kh", "kl"):
        select = Select(keep=True, how="l" if how == "kl" else "h", n=n)
    else:
        select = Select(keep=False, how="h" if how == "dh" else "l", n=n)
    _check_select(select, count, where=at, what="dice", written=f"{how}{n}")
    return select


def _check_select(select: Select, count: int, *, where: int, what: str, written: str = "") -> None:
    said = written or f"{'k' if select.keep else 'd'}{select.how}{select.n}"
    if select.how == "test":
        return
    if select.keep and not 1 <= select.n <= count:
        raise error(where, f"{said} keeps 1 to {count} of {count} {what}")
    if not select.keep and not 1 <= select.n < count:
        raise error(where, f"{said} drops 1 to {count - 1} of {count} {what}")


def _check_stops(modifier: Modifier, faces: range, text: str, at: int) -> None:
    """An explosion or a reroll must match some face, and (but once) not every face."""
    if isinstance(modifier, Explode):
        verb, once = "explodes", modifier.mode == "once"
    elif isinstance(modifier, Reroll) and modifier.rank is None:
        verb, once = "rerolls", modifier.mode != "until"
    else:
        return
    matching = sum(1 for v in faces if modifier.test(v))
    die = f"d{'F' if faces[0] < 0 else faces[-1]}"
    if not matching:
        raise error(at, f"{text} {verb} on no face of a {die}")
    if matching == len(faces) and not once:
        raise error(at, f"{text} {verb} on every face of a {die}, so it never stops")


def _merged(made: list[tuple[int, Modifier]]) -> tuple[Modifier, ...]:
    """avrae runs each operator in turn; the same operator written twice in a row is one
    operator with both selectors (``rr1rr2`` rerolls 1s and 2s), as in d20."""
    out: list[Modifier] = []
    for _, m in made:
        last = out[-1] if out else None
        if (
            isinstance(m, Reroll)
            and isinstance(last, Reroll)
            and (m.mode, m.rank, last.rank) == (last.mode, None, None)
        ):
            out[-1] = Reroll(test=_any(last.test, m.test), mode=m.mode)
        elif isinstance(m, Explode) and isinstance(last, Explode):
            out[-1] = Explode(test=_any(last.test, m.test), mode=m.mode)
        else:
            out.append(m)
    return tuple(out)


def _any(a: Test, b: Test) -> AnyOf:
    first = a.conditions if isinstance(a, AnyOf) else (a,)
    second = b.conditions if isinstance(b, AnyOf) else (b,)
    return AnyOf(first + second)


_ROLL20_KINDS: dict[type, str] = {
    Reroll: "reroll",
    Explode: "explode",
    Select: "keep",
    Crit: "critical",
    Sort: "sort",
}


def _roll20_modifiers(
    made: list[tuple[int, Modifier]], text: str, start: int, count: int
) -> tuple[Modifier, ...]:
    """Roll20 applies its modifiers in one order whatever their order in the text:
    rerolls (several ``r`` reroll any of their faces), explosions, keep/drop, successes
    and failures; critical ranges and sorting change no total."""
    rerolls: list[tuple[int, Reroll]] = []
    others: dict[str, tuple[int, Modifier]] = {}
    crit_success: Test | None = None
    crit_failure: Test | None = None
    for at, m in made:
        if isinstance(m, Reroll):
            if rerolls and rerolls[0][1].mode != m.mode:
                raise error(at, f"{text} mixes r and ro; write one")
            rerolls.append((at, m))
            continue
        if isinstance(m, Crit):
            if (m.success is not None and crit_success is not None) or (
                m.failure is not None and crit_failure is not None
            ):
                raise error(at, f"{text} has two critical ranges of one kind; write one")
            crit_success = m.success or crit_success
            crit_failure = m.failure or crit_failure
            continue
        kind = f"count {m.kind}" if isinstance(m, Count) else _ROLL20_KINDS[type(m)]
        if kind in others:
            label = "success" if kind == "count success" else kind.removeprefix("count ")
            raise error(at, f"{text} has two {label} modifiers; write one")
        others[kind] = (at, m)
    out: list[Modifier] = []
    if rerolls:
        tests = [r.test for _, r in rerolls]
        conditions = tuple(t for t in tests if isinstance(t, Condition))
        test: Test = tests[0] if len(tests) == 1 else AnyOf(conditions)
        out.append(Reroll(test=test, mode=rerolls[0][1].mode))
    explode = others.get("explode")
    if explode is not None:
        out.append(explode[1])
    keep = others.get("keep")
    if keep is not None:
        adds = explode is not None and (
            isinstance(explode[1], Explode) and explode[1].mode != "compound"
        )
        if adds:
            raise error(
                start,
                f"{text}: keeping or dropping exploded dice is not accepted "
                "(the pool's size would vary)",
            )
        out.append(keep[1])
    out.extend(others[k][1] for k in ("count success", "count failure") if k in others)
    if "count failure" in others and "count success" not in others:
        raise error(others["count failure"][0], f"{text}: f counts failures against a target (>N)")
    if crit_success is not None or crit_failure is not None:
        out.append(Crit(success=crit_success, failure=crit_failure))
    if "sort" in others:
        out.append(others["sort"][1])
    return tuple(out)


def check_formula(builder: Builder, node: Node) -> None:
    """The limits every formula keeps, checked before a die is rolled."""
    if builder.parts > MAX_PARTS:
        raise error(0, f"a formula has at most {MAX_PARTS} parts; this one has {builder.parts}")
    dice = sum(t.count for t in builder.terms)
    if dice > MAX_DICE:
        raise error(0, f"a formula rolls at most {MAX_DICE} dice; this one writes {dice}")
    worst = sum(t.dice_at_worst() for t in builder.terms)
    if worst > MAX_ROLLED_DICE:
        raise error(
            0,
            f"this formula could roll {worst} dice with its rerolls and explosions; at most "
            f"{MAX_ROLLED_DICE} may be rolled",
        )
    _check_divisors(node)
    low, high = node_bounds(node)
    if max(abs(low), abs(high)) > MAX_TOTAL:
        far = high if abs(high) > abs(low) else low
        raise error(0, f"this formula could reach {_said(far)}, beyond ±{MAX_TOTAL}")


def _said(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def _check_divisors(node: Node) -> None:
    for part in node.parts:
        _check_divisors(part)
    if node.kind in ("div", "idiv", "mod", "rem"):
        low, high = node_bounds(node.parts[1])
        if low <= 0 <= high:
            raise error(
                node.parts[1].offset,
                "this divisor can be 0; a formula may only divide by a part that cannot",
            )
