"""``GET /tables/{table}``: the player-facing page of a table (HTML, no build step).

The page is static HTML plus hand-written ES modules under ``/static``: ``table.js``
reads the table's entries (stream reads after the last seq it has, every 1.5 s),
shows them newest first with their dice and outcome in words (``words.js``), and
verifies each in the browser with WebCrypto (``verify.js``).
"""

from __future__ import annotations

from html import escape

from litestar import Controller, MediaType, Response, get

from fairroll.api.controllers.tables import TablePath

__all__ = ["PageController"]

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fairroll · {table}</title>
<style>
  :root {{ color-scheme: light; --ink: #1b1b1b; --muted: #4a4a4a; --ok: #0b6b2b;
          --bad: #a4000f; --line: #c8c8c8; }}
  body {{ font: 16px/1.5 system-ui, sans-serif; color: var(--ink); background: #fff;
          margin: 0 auto; max-width: 46rem; padding: 1rem; }}
  header p {{ color: var(--muted); margin: 0; }}
  ol {{ list-style: none; padding: 0; }}
  li.entry {{ border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem;
              margin: .75rem 0; }}
  li.tampered {{ border: 2px solid var(--bad); }}
  h2 {{ font-size: 1rem; margin: 0; }}
  h2 small {{ color: var(--muted); font-weight: normal; }}
  p {{ margin: .25rem 0; }}
  .die {{ display: inline-block; min-width: 1.8rem; padding: 0 .2rem; text-align: center;
          border: 1px solid var(--ink); border-radius: 4px; font-size: 1.25rem; }}
  .die.coin {{ border-radius: 50%; }}
  .group {{ color: var(--muted); font-size: .85rem; }}
  .mark.ok {{ color: var(--ok); }}
  .mark.bad {{ color: var(--bad); font-weight: bold; }}
</style>
<script type="module" src="/static/table.js"></script>
</head>
<body>
<main data-table="{table}">
  <header>
    <h1>Table {table}</h1>
    <p id="status" role="status" aria-live="polite">Reading the table…</p>
    <p>Every roll below is checked in this browser: its hash, its link to the one before,
       the server's Ed25519 signature and, for seeded rolls, every die from its seed.</p>
  </header>
  <ol id="entries" aria-label="Rolls, newest first"></ol>
</main>
</body>
</html>
"""


class PageController(Controller):
    path = "/tables"
    include_in_schema = False

    @get("/{table:str}", media_type=MediaType.HTML)
    async def table_page(self, table: TablePath) -> Response[str]:
        return Response(PAGE.format(table=escape(table)), media_type=MediaType.HTML)
