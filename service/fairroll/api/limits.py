"""Limits on a request's head, checked before anything else reads it.

A request whose header lines are too many or too large is answered 431, and one whose
target (path and query) is too long 414, before routing: nothing is decoded, rolled or
recorded. The body's limits are the framework's (``FAIRROLL_MAX_BODY_BYTES``: 413) and
the strict decoder's (depth, keys: ``api.strict``); ``docs/operations.md``, "Limits",
lists them all, with their answers.
"""

from __future__ import annotations

from typing import Any

from fairroll.api.problems import RawProblem, problem

__all__ = ["MAX_HEADERS", "MAX_HEADER_BYTES", "MAX_TARGET_BYTES", "refusal"]

#: Header lines a request may carry (a browser sends about 20). Below the HTTP server's
#: own bound (granian's parser stops at 100, answering a bare 431 itself).
MAX_HEADERS = 64
#: Their names and values together, in bytes (a browser sends about 1 KiB; cookies of
#: another site on the same host can add a few).
MAX_HEADER_BYTES = 16 * 1024
#: The request target: the path and the query string, in bytes.
MAX_TARGET_BYTES = 8 * 1024


def refusal(scope: Any) -> RawProblem | None:
    """The 431 or 414 problem a request's head earns, or None."""
    headers = scope.get("headers") or ()
    if len(headers) > MAX_HEADERS:
        return _too_large(f"{len(headers)} header lines; at most {MAX_HEADERS}")
    size = sum(len(name) + len(value) for name, value in headers)
    if size > MAX_HEADER_BYTES:
        return _too_large(f"{size:,} bytes of headers; at most {MAX_HEADER_BYTES:,}")
    target = len(scope.get("raw_path") or scope.get("path", "").encode()) + len(
        scope.get("query_string") or b""
    )
    if target > MAX_TARGET_BYTES:
        return _answer(
            414,
            "uri-too-long",
            "The request target is too long",
            f"{target:,} bytes of path and query; at most {MAX_TARGET_BYTES:,}",
        )
    return None


def _too_large(detail: str) -> RawProblem:
    return _answer(
        431, "request-header-fields-too-large", "The request's headers are too large", detail
    )


def _answer(status: int, slug: str, title: str, detail: str) -> RawProblem:
    found, headers, body = problem(status, slug, title, f"{detail}: nothing was done", 0)
    return found, [h for h in headers if h[0] != b"retry-after"], body
