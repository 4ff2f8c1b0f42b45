"""What reading a roll's body costs: the one strict decode against the two it replaced.

Run: python benchmarks/decode_cost.py [--n 20000]

Before issue 18 a roll's body was decoded twice: ``before_request`` decoded it to
builtins and converted it strictly (then scanned it for duplicate keys with Python's
``json``), and Litestar decoded it again and converted it laxly for the handler. Now a
decoder built at startup reads it once, strictly, into the request type, and a regex
scan decides whether the exact duplicate-key check is needed. Both are timed here on
the harness's bodies, in this run, with the ratio.
"""

from __future__ import annotations

import argparse
import timeit

import msgspec
from litestar.serialization import decode_json

from fairroll.api.controllers.systems import mechanic_types
from fairroll.api.strict import _JSON, _may_repeat_a_key
from fairroll.audit.verify import loads_strict
from fairroll.mechanics import MECHANICS

BODIES = {
    "tft.contest": b'{"table":"t-00042","a":{"attribute":16,"talents":2},"b":{"attribute":12},'
    b'"victory_levels":true}',
    "fbc.roll": b'{"table":"t-00042","pool":10,"risk":5,"better":1}',
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20000)
    n = parser.parse_args().n
    print(f"per body, microseconds (mean of {n}); before = strict convert + duplicate scan")
    print("+ Litestar's decode and lax convert; after = typed strict decode + key scan")
    print(f"{'mechanic':<14}{'before':>9}{'after':>9}{'ratio':>8}")
    for name, body in BODIES.items():
        kind = mechanic_types(MECHANICS[name]).request
        decoder = msgspec.json.Decoder(kind, strict=True)

        def before(body: bytes = body, kind: type = kind) -> object:
            msgspec.convert(_JSON.decode(body), kind, strict=True)
            loads_strict(body)
            return msgspec.convert(decode_json(body), kind, strict=False)

        def after(body: bytes = body, decoder: msgspec.json.Decoder = decoder) -> object:
            value = decoder.decode(body)
            if _may_repeat_a_key(body):
                loads_strict(body)
            return value

        old = timeit.timeit(before, number=n) / n * 1e6
        new = timeit.timeit(after, number=n) / n * 1e6
        print(f"{name:<14}{old:>9.2f}{new:>9.2f}{old / new:>7.1f}x")


if __name__ == "__main__":
    main()
