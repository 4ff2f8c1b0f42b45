"""avrae's d20 on rigged faces: each line of stdin is {"formula", "faces"}, each line of
stdout what it rolled: the total, every die of every dice term with its marks, and the
faces left over. Run with the peer's own venv (avrae.lock), never the project's.

Two things are rigged, both outside what d20 decides: ``random.randrange`` (d20 rolls a
die as ``randrange(size) + 1``) hands out the faces given, and a selection returns the
dice in their order in the pool instead of a Python set's (whose order is arbitrary), so
rerolls and explosions take the faces in a known order. What is selected is d20's own.
"""

import json
import sys

import d20
from d20 import expression

faces: list[int] = []


class _Random:
    @staticmethod
    def randrange(size, *rest):
        if rest:
            raise ValueError("d% is not in the corpus")
        if not faces:
            raise RuntimeError("ran out of faces")
        return faces.pop(0) - 1


class _Ordered(list):
    def difference(self, other):
        return _Ordered(x for x in self if x not in other)


_select = expression.SetOperator.select


def _in_order(self, target, max_targets=None):
    chosen = _select(self, target, max_targets)
    order = {id(x): i for i, x in enumerate(target.set)}
    return _Ordered(sorted(chosen, key=lambda x: order[id(x)]))


expression.random = _Random
expression.SetOperator.select = _in_order


def dice_of(node, out):
    if isinstance(node, expression.Dice):
        term = []
        for die in node.values:
            for i, literal in enumerate(die.values):
                last = i == len(die.values) - 1
                term.append(
                    {
                        "value": literal.number,
                        "rerolled": not last,
                        "exploded": bool(literal.exploded),
                        "dropped": last and not die.kept,
                    }
                )
        out.append(term)
    for child in node.children:
        dice_of(child, out)
    return out


for line in sys.stdin:
    asked = json.loads(line)
    faces[:] = asked["faces"]
    try:
        result = d20.roll(asked["formula"], allow_comments=True)
        terms = dice_of(result.expr, [])
        total = result.total
        answer = {"total": total, "terms": terms, "left": len(faces)}
    except Exception as exc:  # every refusal is reported, not raised
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
