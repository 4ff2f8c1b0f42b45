"""One die and its explosions, where many faces explode: the chain as one exact division.

A chain adds ``k`` exploding values and then one stopping value, for every ``k`` up to
its depth ``D``. Over the common total ``s ** (D + 1)`` (``s``: the extra die's total),
with ``G`` and ``S`` the polynomials of the exploding and stopping values' weights (the
exponent a value, the coefficient its weight), the chain's weights are::

    S * (s**D + s**(D-1) G + ... + G**D)  (+ G**(D+1) where the last die stands)

and the sum in brackets is ``Q = (s**(D+1) - G**(D+1)) / (s - G)``, a polynomial with
whole coefficients. So the chain is one power of ``G`` and one long division by
``s - G`` (its lowest term ``s``: exploding values are positive), each coefficient from
the few before it, instead of ``D`` convolutions of ever longer polynomials: where the
exploding values run over ``L`` consecutive values of one weight (``1d20!>2``), the
power follows a recurrence of three terms and the division a sliding window, so each
coefficient costs a few additions of big integers, whatever ``L``.

A d6 exploding on 3 or more, one explosion counted, the last die standing: 7 is
3 then 4, 4 then 3, 5 then 2 or 6 then 1, 4 of 36:

>>> d6 = (6, {3: 1, 4: 1, 5: 1, 6: 1}, {1: 1, 2: 1})
>>> total, weights = chain(first=d6, extra=d6, same=True, depth=1, stands=True,
...                        work=Work("1d6!>3"))
>>> total, weights[7], weights[1], weights[12]
(36, 4, 6, 1)
"""

from __future__ import annotations

from fairroll.odds.dice_sums import Dist, Weights, Work, powered

__all__ = ["chain"]

#: One die's values, split: ``(total, exploding {value: weight}, stopping {value: weight})``.
Split = tuple[int, Weights, Weights]


def chain(
    *, first: Split, extra: Split, same: bool, depth: int, stands: bool, work: Work
) -> Dist | None:
    """The exact distribution of a first die and up to ``depth`` explosions (``depth`` at
    least 1), each further die ``extra`` (``same``: the first die is one of them); the
    last die stands whatever it shows (``stands``), or one that would go on is left
    uncounted. ``None`` where the division does not apply: a value that is not whole, or
    an exploding value below 1 (the division reads a coefficient from those below it)."""
    _, goes, stops = extra
    values = [*goes, *stops, *first[1], *first[2]]
    if not goes or not all(type(v) is int for v in values) or min(goes) < 1:
        return None
    if same:
        return _tail(extra, depth + 1, stands, work)
    t1, goes1, stops1 = first
    tail = _tail(extra, depth, stands, work)
    out: Weights = {}
    if goes1:
        low, high = min(tail[1]), max(tail[1])
        dense = [tail[1].get(v, 0) for v in range(low, high + 1)]
        each = 0.15 + tail[0].bit_length() / 15_000
        out = _times(dense, low, goes1, each, work)
    scale = tail[0]
    for v, w in stops1.items():
        out[v] = out.get(v, 0) + w * scale
    return t1 * tail[0], {v: w for v, w in out.items() if w}


def _tail(extra: Split, n: int, stands: bool, work: Work) -> Dist:
    """``n`` dice at most, each but the last going on on ``goes``: ``S Q (+ G**n)``."""
    s, goes, stops = extra
    high = max(goes)
    bits = (s**n).bit_length()
    lowest = min(stops) if stops else n * min(goes)
    highest = max((n - 1) * high + max(stops, default=0), n * high if stands else 0)
    work.outcomes(highest - lowest + 1)
    each = 0.15 + bits / 15_000  # one addition or small multiplication of a coefficient
    run = _run(goes)
    power = _power(goes, run, s, n, each, work)
    # Q: the division of s**n - G**n by s - G, its coefficients up to (n - 1) * high.
    size = (n - 1) * high + 1
    work.spend(size * (4 if run else len(goes) + 2) * each, "a chain's division")
    q = [0] * size
    if run is not None:
        low, length, c = run
        window = 0
        for e in range(size):
            if e - low >= 0:
                window += q[e - low]
                if e - low - length >= 0:
                    window -= q[e - low - length]
            q[e] = ((s**n if e == 0 else 0) - power.get(e, 0) + c * window) // s
    else:
        terms = sorted(goes.items())
        for e in range(size):
            acc = (s**n if e == 0 else 0) - power.get(e, 0)
            for v, w in terms:
                if v > e:
                    break
                acc += w * q[e - v]
            q[e] = acc // s
    # The chain: each stopping value after Q, and G**n where the last die stands.
    out = _times(q, 0, stops, each, work)
    if stands:
        for e, x in power.items():
            out[e] = out.get(e, 0) + x
    work.outcomes(len(out))
    return s**n, out


def _times(q: list[int], low: int, weights: Weights, each: float, work: Work) -> Weights:
    """The product of a long polynomial (coefficients ``q`` from exponent ``low``) and a
    short one, ``weights``: a sliding window where its values run alike, else term by
    term (each ``each`` microseconds a coefficient)."""
    run = _run(weights)
    work.spend((len(q) + len(weights)) * (4 if run else len(weights) + 1) * each, "a chain")
    out: Weights = {}
    if run is not None:
        first, length, c = run
        window = 0
        for e in range(len(q) + length - 1):
            if e < len(q):
                window += q[e]
            if e - length >= 0:
                window -= q[e - length]
            if window:
                out[e + low + first] = c * window
        return out
    for v, w in weights.items():
        for e, x in enumerate(q):
            if x:
                k = e + low + v
                out[k] = out.get(k, 0) + w * x
    return out


def _run(weights: Weights) -> tuple[int, int, int] | None:
    """``(lowest, length, weight)`` where the values are consecutive and weigh alike."""
    if not weights:
        return None
    low, high = min(weights), max(weights)
    c = weights[low]
    if len(weights) != high - low + 1 or any(w != c for w in weights.values()):
        return None
    return low, high - low + 1, c


def _power(
    goes: Weights, run: tuple[int, int, int] | None, s: int, n: int, each: float, work: Work
) -> Weights:
    """``G ** n``. For a run ``c x**m (1 + x + ... + x**(L-1))``, the coefficients of
    ``R = (1 + ... + x**(L-1)) ** n`` follow from ``R' (1 - x**L)(1 - x) = n R (1 - L
    x**(L-1) + (L-1) x**L)``: ``k a_k = (k-1+n) a_(k-1) + (k - L - nL) a_(k-L) + ((L-1) n
    - (k-L-1)) a_(k-L-1)``, three terms whatever ``L`` (every division exact)."""
    if run is None:
        return powered((s, goes), n, work)[1]
    low, length, c = run
    width = n * (length - 1) + 1
    work.spend(width * 5 * each, f"the explosions of {n} dice")
    a = [1] + [0] * (width - 1)
    for k in range(1, width):
        acc = (k - 1 + n) * a[k - 1]
        if k >= length:
            acc += (k - length - n * length) * a[k - length]
        if k >= length + 1:
            acc += ((length - 1) * n - (k - length - 1)) * a[k - length - 1]
        a[k] = acc // k
    scale = c**n
    return {n * low + k: x * scale for k, x in enumerate(a) if x}
