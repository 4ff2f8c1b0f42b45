"""The verify page's HTML: served (``GET /verify``, its script and style from ``/static``,
as every page of fairroll's, under the strict CSP) and offline (one self-contained file:
``GET /verify/offline.html``), which works opened from disk with no server at all for an
export, and reads the entry and keys of a receipt from the server it names.

The offline copy holds the very modules the table page runs (``static/verify.js`` and
``static/verify/``), not a copy of their code: each module is inlined as a ``data:`` URL
under a bare name (``fairroll/static/...``) in an import map, and its relative imports
are rewritten to those names, since a ``data:`` module has no base URL to resolve
``./bytes.js`` against. The stylesheet is inlined too.
"""

from __future__ import annotations

import base64
import json
import re
from html import escape

from fairroll.page import STATIC

__all__ = ["offline_page", "served_page"]

#: The page's one module; it imports the verification core.
ENTRY = "verify-page.js"
#: A static or dynamic import of a relative module path.
_IMPORT = re.compile(r"""((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.\.?/[^"']+)\2""")

BODY = """<main data-server="{server}">
  <h1>Check a roll</h1>
  <p>Paste a roll's answer, its receipt or its entry (JSON), or drop a table's export
     (NDJSON), and give the root key id the table's operator published: this page checks
     it in your browser, with the same code as every table page, and says what holds.</p>
  <form id="verify-form">
    <div class="field">
      <label for="root">Root key id</label>
      <input id="root" required placeholder="ed25519:…" autocomplete="off"
             aria-describedby="root-hint">
      <small id="root-hint">From the table's operator, out of band (not from the server:
        that is what makes the check independent).</small>
    </div>
    <div class="field">
      <label for="server">fairroll server</label>
      <input id="server" placeholder="https://dice.example" autocomplete="off"
             aria-describedby="server-hint">
      <small id="server-hint">Where a receipt's entry and the signing keys are read; an
        export is checked without it.</small>
    </div>
    <div class="field">
      <label for="evidence">Answer, receipt, entry or export</label>
      <textarea id="evidence" rows="10" required spellcheck="false"
                aria-describedby="evidence-hint"></textarea>
      <small id="evidence-hint">Or choose a file: <input id="file" type="file"
        accept=".json,.ndjson,.jsonl,application/json,application/x-ndjson"></small>
    </div>
    <button type="submit">Check</button>
  </form>
  <p id="verdict" role="status" aria-live="polite"></p>
  <ul id="holds"></ul>
  {footer}
</main>
"""

_SERVED_FOOTER = """<p><small><a href="/verify/offline.html" download>Save this page</a> to check
    receipts with no fairroll page at hand (one file, open it in a browser). What each
    check means: <a href="/docs/audit">the audit trail</a>.</small></p>"""
_OFFLINE_FOOTER = """<p><small>An offline copy of fairroll's verify page: every check runs in
    this file.</small></p>"""


def served_page() -> str:
    """``GET /verify``: the page, its module and stylesheet from ``/static``."""
    return _html(
        '<link rel="stylesheet" href="/static/table.css">\n'
        f'<script type="module" src="/static/{ENTRY}"></script>\n',
        BODY.format(server="", footer=_SERVED_FOOTER),
    )


def offline_page(server: str = "") -> str:
    """The page as one file: the stylesheet, the page's module and the verification core
    inlined; ``server`` is the fairroll server it reads receipts' entries from."""
    modules = _modules(ENTRY)
    imports = {_name(path): _data_url(source) for path, source in modules.items()}
    head = (
        f"<style>\n{(STATIC / 'table.css').read_text()}</style>\n"
        f'<script type="importmap">{json.dumps({"imports": imports})}</script>\n'
        f'<script type="module">import "{_name(ENTRY)}";</script>\n'
    )
    return _html(head, BODY.format(server=escape(server), footer=_OFFLINE_FOOTER))


def _html(head: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<title>fairroll · check a roll</title>\n<link rel="icon" href="data:,">\n'
        f"{head}</head>\n<body>\n{body}</body>\n</html>\n"
    )


def _modules(entry: str) -> dict[str, str]:
    """Every module ``entry`` reaches (paths under ``static/``), its relative imports
    rewritten to the bare names of the import map."""
    found: dict[str, str] = {}
    todo = [entry]
    while todo:
        path = todo.pop()
        if path in found:
            continue
        folder = path.rpartition("/")[0]

        def named(match: re.Match[str], folder: str = folder) -> str:
            target = _resolve(folder, match.group(3))
            todo.append(target)
            return f"{match.group(1)}{match.group(2)}{_name(target)}{match.group(2)}"

        found[path] = _IMPORT.sub(named, (STATIC / path).read_text())
    return found


def _resolve(folder: str, relative: str) -> str:
    parts = [p for p in folder.split("/") if p]
    for part in relative.split("/"):
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _name(path: str) -> str:
    return f"fairroll/static/{path}"


def _data_url(source: str) -> str:
    return "data:text/javascript;base64," + base64.b64encode(source.encode()).decode()
