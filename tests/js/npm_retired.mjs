// node npm_retired.mjs <client dist/index.js> <server url> <root key id> <table>
// Row 5 (a key signs nothing after its retirement) in the JavaScript live checks, against
// a real server behind an operator whose GET /v1/keys marks its signing key retired
// (not_after) while it keeps signing every answer and checkpoint with it. Prints what
// the npm client and the core's verifyCheckpoint (the page's history check, the npm
// witness) did with each.
import { pathToFileURL } from "node:url";

const [dist, url, root, table] = process.argv.slice(2);
const { createFairroll, trustedKeys, verifyCheckpoint } = await import(pathToFileURL(dist).href);

let retired = false;  // from now on, GET /v1/keys marks every key retired
async function operator(input, init = {}) {
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  const answer = await fetch(input, init);
  if (!retired || path !== "/v1/keys") return answer;
  const served = await answer.json();
  for (const key of served.keys) key.not_after = "2026-12-01T00:00:00.000Z";
  return new Response(JSON.stringify(served), { status: 200, headers: { "content-type": "application/json" } });
}
const out = {};
async function attempt(name, act) {
  try {
    const got = await act();
    out[name] = { ok: true, verified: got?.verdict?.verified ?? null, size: got?.size ?? null };
  } catch (error) {
    out[name] = { ok: false, error: error.message };
  }
}

// A session opened under the listing, one link a chain; the key retired after its roll.
const since = createFairroll({ baseUrl: url, root, fetch: operator, player: "Roth" });
await since.session(table, { length: 1 });
await attempt("before-retirement", () => since.rollFormula({ table, formula: "1d20" }));
retired = true;
await attempt("retired-since-the-listing-was-read", () => since.rollFormula({ table, formula: "1d20" }));
// A client that reads the listing once the key is retired.
const fresh = createFairroll({ baseUrl: url, root, fetch: operator, player: "Sue" });
await attempt("retired-in-the-listing", () => fresh.rollFormula({ table, formula: "1d20" }));

// The table's checkpoint, checked as the page's history check and the npm witness do.
const checkpoint = await (await fetch(`${url}/v1/tables/${encodeURIComponent(table)}/checkpoint`)).json();
const listed = await (await operator(`${url}/v1/keys`)).json();
const keys = await trustedKeys(listed, root);
await attempt("checkpoint-by-a-retired-key", () => verifyCheckpoint(checkpoint, keys, { table }));
const later = new Map([[checkpoint.key_id, checkpoint.size + 1]]);
await attempt("checkpoint-before-its-keys-retirement", () => verifyCheckpoint(checkpoint, keys, { table, retired: later }));
const before = new Map([[checkpoint.key_id, checkpoint.size]]);
await attempt("checkpoint-at-its-keys-retirement", () => verifyCheckpoint(checkpoint, keys, { table, retired: before }));
console.log(JSON.stringify(out));
