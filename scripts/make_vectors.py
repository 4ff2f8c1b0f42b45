#!/usr/bin/env python3
"""Write the audit-format test vectors in docs/vectors/ (every verifier runs them in CI).

Run: python scripts/make_vectors.py   (tests/test_vectors.py fails when they drift)

The builders live in scripts/vectors/ (its docstring lists every file written)."""

from __future__ import annotations

from vectors.writer import main

if __name__ == "__main__":
    main()
