"""``GET /tables/{table}``: the player-facing page of a table (HTML, no build step).

The page is static HTML plus hand-written ES modules under ``/static`` (no bundler,
no npm library in the page): ``table.js`` reads the table's entries (stream reads
after the last seq it has, every 1.5 s), shows them newest first with their dice and
outcome in words (``words.js``), and verifies each in the browser with WebCrypto
(``verify.js``). ``roll.js`` builds a roll form per mechanic from the service's own
OpenAPI spec (``form.js``), started from the seeds' worked examples, with the exact
odds of the current input drawn beside it (``odds.js``).
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
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/table.css">
<script type="module" src="/static/table.js"></script>
</head>
<body>
<main data-table="{table}">
  <header>
    <h1>Table {table}</h1>
    <p id="status" role="status" aria-live="polite">Reading the table…</p>
    <p id="trust" role="status" aria-live="polite"></p>
    <p>Every roll below is checked in this browser: its hash, its link to the one before,
       the server's Ed25519 signature, every die from its seed (a roll in a hash-chain seed
       session at once, a commit-reveal one's once its session is revealed), and the
       table's signed checkpoint against the one this browser kept from your last visit.</p>
  </header>
  <section aria-labelledby="roll-title">
    <h2 id="roll-title">Roll</h2>
    <div class="roll-grid">
      <form id="roll-form">
        <div class="field">
          <label for="mechanic">Mechanic</label>
          <select id="mechanic" name="mechanic"></select>
        </div>
        <p><small id="example-note"></small></p>
        <div id="fields"></div>
        <details>
          <summary>Seed and write key</summary>
          <div class="field">
            <label for="seed">Seed <span class="optional">(optional)</span></label>
            <input id="seed" type="text" maxlength="256" autocomplete="off"
                   aria-describedby="seed-hint">
            <small id="seed-hint">Leave it empty (fair): your rolls are in your own seed
              session, a hash chain the server committed to before your first roll, mixed
              with a secret this browser drew. A seed you type is replayable but not fair:
              it can be ground.</small>
          </div>
          <div class="field">
            <label for="write-key">Table write key <span class="optional">(optional)</span></label>
            <input id="write-key" type="password" autocomplete="off"
                   aria-describedby="key-hint">
            <small id="key-hint">Only for a table created with a write key.</small>
          </div>
        </details>
        <button type="submit">Roll on table {table}</button>
        <div id="roll-result" role="status" aria-live="polite"></div>
      </form>
      <aside aria-labelledby="odds-title">
        <h2 id="odds-title">Odds</h2>
        <p><small id="odds-note">Reading the mechanics…</small></p>
        <div id="odds"></div>
      </aside>
    </div>
  </section>
  <section aria-labelledby="rolls-title">
    <h2 id="rolls-title">Rolls, newest first</h2>
    <ol id="entries" aria-labelledby="rolls-title"></ol>
  </section>
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
