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

from functools import cache
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Annotated

from litestar import Controller, MediaType, Response, get
from litestar.exceptions import NotFoundException
from litestar.params import Parameter
from litestar.response import Redirect
from litestar.status_codes import HTTP_303_SEE_OTHER

from fairroll.api.controllers.params import TablePath

__all__ = ["DocsController", "PageController"]


def _document(title: str, script: str | None, body: str) -> str:
    """An HTML page of fairroll's: its title, its stylesheet, its one module (if any)
    and ``body``, the same head on every page (the CSP allows no inline script)."""
    module = f'<script type="module" src="/static/{script}"></script>\n' if script else ""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{title}</title>\n<link rel="icon" href="data:,">\n'
        f'<link rel="stylesheet" href="/static/table.css">\n{module}</head>\n<body>\n'
        f"{body}</body>\n</html>\n"
    )


HOME = _document(
    "fairroll",
    None,
    """<main>
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
""",
)

DOC = _document(
    "fairroll · {name}",
    "markdown.js",
    """<nav><a href="/">fairroll</a> · <a href="/tables/default">the default table</a></nav>
<main id="doc" data-source="{source}"><p>Reading {name}…</p></main>
""",
)


PAGE = _document(
    "fairroll · {table}",
    "table.js",
    """<main data-table="{table}">
  <header>
    <h1>Table {table}</h1>
    <p id="status" role="status" aria-live="polite">Reading the table…</p>
    <p id="trust" role="status" aria-live="polite"></p>
    <p id="latest" aria-live="polite"></p>
    <p>Every roll is checked in this browser. <a href="#sources">What is checked, and what
       each roll's source proves</a>.</p>
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
      <aside aria-labelledby="odds-title" id="odds-panel">
        <details id="odds-details" open>
          <summary><h2 id="odds-title">Odds</h2></summary>
          <p><small id="odds-note">Reading the mechanics…</small></p>
          <div id="odds"></div>
        </details>
      </aside>
    </div>
  </section>
  <section aria-labelledby="rolls-title">
    <h2 id="rolls-title">Rolls, newest first</h2>
    <ol id="entries" aria-labelledby="rolls-title"></ol>
  </section>
  <section aria-labelledby="faces-title">
    <h2 id="faces-title">The dice of this table</h2>
    <p><small>Every face of fairroll's own dice on this table (derived from seeds, each
      checked here), by die size, with a test of whether they look like fair dice. Dice
      rolled elsewhere are left out: they are the players' dice, not fairroll's.</small></p>
    <div id="faces"><p><small>No dice of fairroll's yet.</small></p></div>
  </section>
  <section aria-labelledby="sources-title" id="sources">
    <h2 id="sources-title">What is checked, and what each roll's source proves</h2>
    <p>Every roll above is checked in this browser: its hash, its link to the one before,
       the server's Ed25519 signature, every die from its seed (a roll in a hash-chain seed
       session at once, a commit-reveal one's once its session is revealed), and the
       table's signed checkpoint against the one this browser kept from your last visit.
       Whether its dice were fair depends on who chose its seed:</p>
    <dl>
      <dt id="source-committed"></dt>
      <dd>Before your first roll, the server wrote the last link of a hash chain into the
        log. Each roll reveals the next link back, mixed with a secret this browser (or your
        client) drew and kept. Neither side could pick the dice: the server fixed its chain
        before it knew your secret, and your secret says nothing of its links. This page
        checks each link against the chain and re-derives every die. This is what a roll
        here is, unless you type a seed.</dd>
      <dt id="source-drawn"></dt>
      <dd>The server drew the seed itself, after it saw the request. Anyone can re-derive
        the dice from the seed, but no one can tell whether a dishonest operator drew
        again and again until it liked the dice. A seed session takes that power away.</dd>
      <dt id="source-chosen"></dt>
      <dd>Someone typed the seed. The dice are reproducible (the same seed and request
        give the same dice), which is what a chosen seed is for, but they prove nothing
        about fairness: whoever chose it could have tried many seeds before this one.</dd>
      <dt id="source-seeded"></dt>
      <dd>An entry of the log's first version, whose seed was given with the request: as
        a chosen seed, reproducible but not fair.</dd>
      <dt id="source-supplied"></dt>
      <dd>The dice were rolled elsewhere (physical dice, a VTT's 3D dice) and given to
        fairroll, which only applied the rules to them. They are as fair as whoever
        rolled them.</dd>
    </dl>
    <p><small>How the dice follow from a seed, byte by byte:
      <a href="/docs/randomness">the randomness</a>; the log's format and every check:
      <a href="/docs/audit">the audit trail</a>.</small></p>
  </section>
</main>
""",
)


class PageController(Controller):
    path = "/"
    include_in_schema = False

    @get("/", media_type=MediaType.HTML)
    async def home(self) -> Response[str]:
        return Response(HOME, media_type=MediaType.HTML)

    @get("/tables", status_code=HTTP_303_SEE_OTHER)
    async def open_table(self, table: TablePath) -> Redirect:  # ?table=, not in the path
        return Redirect(f"/tables/{table}", status_code=HTTP_303_SEE_OTHER)

    @get("/tables/{table:str}", media_type=MediaType.HTML)
    async def table_page(self, table: TablePath) -> Response[str]:
        return Response(PAGE.format(table=escape(table)), media_type=MediaType.HTML)


DocName = Annotated[str, Parameter(pattern=r"^[a-z][a-z0-9-]{0,40}(\.md)?$")]


@cache
def _docs() -> Path | None:
    """The docs the page links to: packaged with the wheel (``fairroll/page/docs``), or
    the repository's ``docs/`` beside an editable install's source."""
    packaged = Path(str(files("fairroll.page"))) / "docs"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[4] / "docs"
    return checkout if (checkout / "rules").is_dir() else None


def _doc(folder: str, name: str) -> Response[str]:
    stem = name.removesuffix(".md")
    root = _docs()
    path = root / folder / f"{stem}.md" if root is not None else None
    if path is None or not path.is_file():
        raise NotFoundException(f"no page {folder}/{stem}")
    if name.endswith(".md"):
        return Response(path.read_text(), media_type="text/markdown")
    source = f"/docs/{folder}/{stem}.md".replace("//", "/")
    return Response(DOC.format(name=escape(stem), source=source), media_type=MediaType.HTML)


class DocsController(Controller):
    """``GET /docs/{name}`` and ``/docs/rules/{name}``: the service's own docs (how it reads
    each rule text, its randomness and audit format), rendered in the page (``markdown.js``)
    from the Markdown at the same path with ``.md``: the spec's help links here."""

    path = "/docs"
    include_in_schema = False

    @get("/{name:str}", media_type=MediaType.HTML)
    async def doc(self, name: DocName) -> Response[str]:
        return _doc("", name)

    @get("/rules/{name:str}", media_type=MediaType.HTML)
    async def rules_doc(self, name: DocName) -> Response[str]:
        return _doc("rules", name)
