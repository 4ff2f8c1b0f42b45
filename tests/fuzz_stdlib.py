"""The stdlib script's whole-log check (``scripts/verify_roll.py --export``) over every log
case of a conformance folder, in one process: its ``check_export`` called per case as
its ``main`` calls it, its printed words parsed as tests/conformance/run_python.py parses
them. The fuzzer's batches hold hundreds of logs, and a process per log (what
run_python.py does for the vectors) would spend its time budget starting interpreters.

    python fuzz_stdlib.py FOLDER      prints {case name: {ok, first_bad_seq, reason, not_fair}}
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAIL_AT = re.compile(r"^FAIL at seq (\d+): (.*)$")


def main() -> None:
    folder = Path(sys.argv[1])
    spec = importlib.util.spec_from_file_location(
        "verify_roll", ROOT / "scripts" / "verify_roll.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    said: dict[str, Any] = {}
    for case in json.loads((folder / "cases" / "index.json").read_text())["cases"]:
        inputs = case["inputs"]
        if case["kind"] != "log":
            continue
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                status = script.check_export(
                    folder / inputs["log"], inputs["root"], folder / inputs["keys"]
                )
        except Exception as exc:  # a verifier that breaks on a case: its verdict
            said[case["name"]] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        said[case["name"]] = verdict(status, out.getvalue())
    sys.stdout.write(json.dumps(said) + "\n")


def verdict(status: int, printed: str) -> dict[str, Any]:
    first = (printed.splitlines() or [""])[0]
    matched = FAIL_AT.match(first)
    seqs = sorted(int(s) for s in re.findall(r"seq (\d+)[^\n]*client seed reused", printed))
    if status == 0:
        return {"ok": True, "first_bad_seq": None, "reason": "", "not_fair": seqs}
    seq = int(matched[1]) if matched else None
    return {
        "ok": False,
        "first_bad_seq": seq,
        "reason": matched[2] if matched else first,
        "not_fair": seqs,
    }


if __name__ == "__main__":
    main()
