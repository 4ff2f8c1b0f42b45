// The table page's check of the table's whole log from its tiles (C2SP tlog-tiles): the
// table's own /v1/tables/<table>/log, or a mirror's URL a player gives (?tiles=<url>, or
// typed in), read and verified in this browser by verify/tiles.js under the pinned root,
// as `fairroll verify --tiles` does. A mirror on another host is read only if this page's
// Content-Security-Policy (connect-src) and the mirror's CORS headers allow it.
import { verifyTiles } from "./verify/tiles.js";

/** Add the check to the page's header; `trust()` gives {root, keys} (the pinned root and
 * the keys it certified). With ?tiles=<url> the check runs at once. */
export function startTilesCheck({ table, trust }) {
  const asked = new URLSearchParams(location.search).get("tiles");
  const own = `${location.origin}/v1/tables/${encodeURIComponent(table)}/log`;
  const input = Object.assign(document.createElement("input"), {
    id: "tiles-url", type: "url", value: asked ?? own, size: 48,
  });
  input.setAttribute("aria-label", "The log's tiles: this table's, or a mirror's URL");
  const button = Object.assign(document.createElement("button"), { id: "tiles-check", type: "button", textContent: "Verify" });
  const verdict = Object.assign(document.createElement("p"), { id: "tiles-verdict" });
  verdict.setAttribute("role", "status");
  verdict.setAttribute("aria-live", "polite");
  const summary = Object.assign(document.createElement("summary"), { textContent: "Verify the whole log from its tiles (or a mirror)" });
  const details = document.createElement("details");
  details.id = "tiles";
  details.open = Boolean(asked);
  details.append(summary, input, " ", button, verdict);
  document.querySelector("main[data-table] > header").append(details);
  const check = async () => {
    const url = input.value.trim();
    verdict.className = "trust";
    verdict.textContent = `Reading ${url}…`;
    try {
      const { root, keys } = await trust();
      const said = await verifyTiles(url, keys, { root, table });
      verdict.className = `trust ${said.ok ? "ok" : "bad"}`;
      verdict.textContent = said.ok
        ? `✓ ${said.entries} entries verified from the tiles at ${url}: the log its signed checkpoint holds`
        : `✗ the log at ${url} does not verify${said.first_bad_seq !== null ? ` at seq ${said.first_bad_seq}` : ""}: ${said.reason}`;
    } catch (error) {
      verdict.className = "trust bad";
      verdict.textContent = `✗ cannot read ${url}: ${error.message}`;
    }
  };
  button.addEventListener("click", check);
  if (asked) check();
}
