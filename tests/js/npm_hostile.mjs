// node npm_hostile.mjs <client dist/index.js> <server url> <root key id> <table>
// The npm client against a real server behind a hostile operator: a `fetch` that passes
// the server's answers through, but rewrites them the way an operator would (another
// client seed, a nonce lie after rolling, a refusal, a flipped proof hash, a note's size
// edited, a session said to be revealed). Prints what the client did with each.
import { pathToFileURL } from "node:url";

const [dist, url, root, table] = process.argv.slice(2);
const { createFairroll, UnfairRollError } = await import(pathToFileURL(dist).href);

let attack = null;  // (request, forward) -> Response, for the next roll POST only
let seedPosts = 0;
const ROLL = /^\/v1\/(dice|tft|fbc|tribute|stat-skill|fast-battle)\//;
async function hostile(input, init = {}) {
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  const method = init.method ?? (input instanceof Request ? input.method : "GET");
  if (path.endsWith("/seeds") && method === "POST") seedPosts += 1;
  const forward = () => fetch(input, init);
  if (attack && method === "POST" && typeof init.body === "string" && ROLL.test(path) && !path.endsWith("/odds")) {
    const act = attack;
    attack = null;
    return act(JSON.parse(init.body), forward, init);
  }
  return forward();
}
const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const edited = (change) => async (_sent, forward) => {
  const answer = await (await forward()).json();
  change(answer);
  return json(answer);
};

const dice = createFairroll({ baseUrl: url, root, fetch: hostile, player: "Roth" });
const out = {};
async function attempt(name, setup, roll = () => dice.rollFormula({ table, formula: "1d20" })) {
  attack = setup;
  try {
    const rolled = await roll();
    out[name] = { ok: true, nonce: rolled.session?.nonce, seq: rolled.receipt?.seq, verdict: rolled.verdict, fromLog: Boolean(rolled.fromLog) };
  } catch (error) {
    out[name] = { ok: false, unfair: error instanceof UnfairRollError, error: error.message };
  }
  attack = null;
}

await attempt("honest", null);
await attempt("another-mechanic", null, () =>
  dice.api.POST("/v1/tft/contests", { body: { table, a: { attribute: 12 }, b: { attribute: 11 } } }).then((r) => r.data));
await attempt("another-client-seed", edited((a) => { a.session.client_seed = "operator-chosen"; }));
await attempt("flipped-proof", edited((a) => {
  const raw = Uint8Array.from(atob(a.receipt.proof[0]), (c) => c.charCodeAt(0));
  raw[0] ^= 1;
  a.receipt.proof[0] = btoa(String.fromCharCode(...raw));
}));
await attempt("note-size-edited", edited((a) => {
  const lines = a.receipt.checkpoint.split("\n");
  lines[1] = String(Number(lines[1]) + 1);
  a.receipt.checkpoint = lines.join("\n");
  a.receipt.tree_size += 1;
}));
// The operator rolls the player's request at nonce N, dislikes it, and answers 409 naming N+1.
await attempt("nonce-lie", async (sent, forward) => {
  await forward();
  return json({ title: "Conflict", detail: "the session is at another nonce", nonce: sent.session.nonce + 1 }, 409);
});
const before = dice.session(table).then((s) => s.state().nonce);
const nextNonce = await before;
// The operator puts another roll (its own request) at nonce N with the player's client
// seed, then answers 409 naming N+1.
await attempt("nonce-holds-another-roll", async (sent, _forward, init) => {
  // The operator writes to its own store: the session's token binds nothing it does
  // (here it passes on the one the player sent, as its own server would take its roll).
  const token = new Headers(init?.headers).get("fairroll-session-token");
  const headers = { "content-type": "application/json", ...(token ? { "fairroll-session-token": token } : {}) };
  await fetch(`${url}/v1/dice/rolls`, { method: "POST", headers, body: JSON.stringify({ ...sent, formula: "1d20+10" }) });
  return json({ title: "Conflict", detail: "the session is at another nonce", nonce: sent.session.nonce + 1 }, 409);
});
const fresh = createFairroll({ baseUrl: url, root, fetch: hostile, player: "Sue" });
let refusals = 0;
attack = null;
try {
  const refuse = async (sent) => {
    refusals += 1;
    attack = refuse;
    return json({ title: "Conflict", detail: "the session is at another nonce", nonce: sent.session.nonce + 1 }, 409);
  };
  attack = refuse;
  await fresh.rollFormula({ table, formula: "1d6" });
  out["refused"] = { ok: true };
} catch (error) {
  out["refused"] = { ok: false, unfair: error instanceof UnfairRollError, error: error.message, refusals };
}
attack = null;
// A session said to be revealed: the client says so, and opens no other one silently.
const other = createFairroll({ baseUrl: url, root, fetch: hostile, player: "Grub" });
await other.rollFormula({ table, formula: "1d8" });
const seedsBefore = seedPosts;
await attempt("revealed", async () => json({ title: "Conflict", detail: "seed session sX is revealed: no more rolls" }, 409),
  () => other.rollFormula({ table, formula: "1d8" }));
await attempt("after-revealed", null, () => other.rollFormula({ table, formula: "1d8" }));
out.seedsOpenedAfterRevealed = seedPosts - seedsBefore;
out.nextNonce = nextNonce;
const unpinned = createFairroll({ baseUrl: url, fetch: hostile });
const rolled = await unpinned.rollFormula({ table, formula: "1d4" });
out.unpinnedRoll = rolled.verdict;
const exported = await unpinned.exportTable(table);
const verdict = await unpinned.verifyExport(exported);
out.unpinnedExport = { ok: verdict.ok, verified: verdict.verified, problems: verdict.problems.slice(0, 1) };
const pinned = await dice.verifyExport(exported);
out.pinnedExport = { ok: pinned.ok, first_bad_seq: pinned.first_bad_seq, reason: pinned.reason, not_fair: pinned.not_fair };
console.log(JSON.stringify(out));
