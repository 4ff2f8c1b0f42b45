"""``GET /tables/{table}``: the player-facing page of a table (HTML, no build step), and
``GET /``, which leads to one.

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
from typing import Annotated

from litestar import Controller, MediaType, Response, get
from litestar.params import Parameter
from litestar.response import Redirect
from litestar.status_codes import HTTP_303_SEE_OTHER

from fairroll.api.controllers.tables import TablePath

__all__ = ["PageController"]

HOME = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fairroll</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/table.css">
</head>
<body>
<main>
  <h1>fairroll: dice everyone can check</h1>
  <p>Every roll on a table is recorded in its signed log before it is answered, and
     checked in your browser as it arrives: its dice re-derived from their seed, its
     signature, and the log's checkpoint against the one your browser kept.</p>
  <form action="/tables" method="get" class="open-table">
    <div class="field">
      <label for="table">Table</label>
      <input id="table" name="table" value="default" required maxlength="64"
             pattern="[A-Za-z0-9_-]+" aria-describedby="table-hint">
      <small id="table-hint">Letters, digits, - and _. Everyone who opens the same name
        sees the same rolls.</small>
    </div>
    <button type="submit">Open the table</button>
  </form>
  <ul>
    <li><a href="/tables/default">The default table</a></li>
    <li><a href="/schema">The API and its documentation</a></li>
    <li><a href="/v1/systems">The systems and mechanics this server resolves</a></li>
  </ul>
</main>
</body>
</html>
"""

TableQuery = Annotated[
    str,
    Parameter(
        query="table",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="The table's name.",
    ),
]

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
    path = "/"
    include_in_schema = False

    @get("/", media_type=MediaType.HTML)
    async def home(self) -> Response[str]:
        return Response(HOME, media_type=MediaType.HTML)

    @get("/tables", status_code=HTTP_303_SEE_OTHER)
    async def open_table(self, table: TableQuery) -> Redirect:
        return Redirect(f"/tables/{table}", status_code=HTTP_303_SEE_OTHER)

    @get("/tables/{table:str}", media_type=MediaType.HTML)
    async def table_page(self, table: TablePath) -> Response[str]:
        return Response(PAGE.format(table=escape(table)), media_type=MediaType.HTML)
