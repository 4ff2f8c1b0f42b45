// node live_defaults.mjs <npm dist/index.js> <page verify.js> <server url> <root key id> <table> <honest.json>
// The live check's request (docs/audit.md, row 22) against an operator that fills a field
// the player left out with another value than its default: the server then rolls (and
// logs) that other reading of the player's request, an honest roll of a request the
// player did not send. Prints what the npm client and the page's roll path did with each,
// and with each honest roll of `honest.json` ([{name, path, body}]: every mechanic, its
// defaulted fields left out).
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const [dist, pageVerify, url, root, table, honestFile] = process.argv.slice(2);
const { createFairroll } = await import(pathToFileURL(dist).href);
const page = await import(pathToFileURL(pageVerify).href);

let attack = null;  // (sent, forward, init) -> Response, for the next roll POST only
const ROLL = /^\/v1\/(dice|tft|fbc|tribute|stat-skill|fast-battle)\/[a-z-]+$/;
async function hostile(input, init = {}) {
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  const method = init.method ?? (input instanceof Request ? input.method : "GET");
  if (attack && method === "POST" && typeof init.body === "string" && ROLL.test(path)) {
    const act = attack;
    attack = null;
    return act(JSON.parse(init.body), (body) => fetch(input, { ...init, body: JSON.stringify(body) }), init);
  }
  return fetch(input, init);
}
const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
/** The operator rolls `change(sent)` instead of what the player sent. */
const rereads = (change) => async (sent, forward) => forward(change(structuredClone(sent)));

const out = {};
async function attempt(name, setup, roll) {
  // A client of its own per attempt: a refused roll's retry would reuse its Idempotency-Key.
  const player = createFairroll({ baseUrl: url, root, fetch: hostile, player: name });
  attack = setup;
  try {
    const rolled = await roll(player);
    out[name] = { ok: true, verified: Boolean(rolled.verdict?.verified) };
  } catch (error) {
    out[name] = { ok: false, error: String(error.message) };
  }
  attack = null;
}

const FIGHTER = { name: "Zippy", st: 3, qk: 1, in: 1, ma: 1, mr: 2, max_hp: 6 };
const GRUB = { name: "Grub", st: 3, qk: 2, in: 1, ma: 2, mr: 1, max_hp: 7 };

// A formula read in another VTT's notation than the default one (Roll20).
await attempt("dice-dialect", rereads((b) => ({ ...b, dialect: "avrae" })),
  (p) => p.rollFormula({ table, formula: "1d20" }));
// A Tribute test under the classic Profit rule, not the revised one (the default).
await attempt("tribute-profit-rule", rereads((b) => ({ ...b, profit_rule: "classic" })),
  (p) => p.roll("/v1/tribute/tests", { table, reality: "d6", rank: 0, focus: 2, burden: 2, difficulty: 5 }));
// A field whose default is null, given a value.
await attempt("tribute-effect-rank", rereads((b) => ({ ...b, effect_rank: 3 })),
  (p) => p.roll("/v1/tribute/tests", { table, reality: "d6", rank: 0, difficulty: 5 }));
// A default inside a nested struct: the attacker's level.
await attempt("attack-nested-level", rereads((b) => ({ ...b, attacker: { ...b.attacker, level: 3 } })),
  (p) => p.roll("/v1/fast-battle/attacks", { table, attacker: FIGHTER, defender: GRUB }));
// A default inside a list of structs: the second fighter's level.
await attempt("initiative-list-level", rereads((b) => { b.fighters[1].level = 2; return b; }),
  (p) => p.roll("/v1/fast-battle/initiatives", { table, fighters: [FIGHTER, GRUB] }));
// A default list (made by a factory) filled with an item: a trinket the fighter lacks.
await attempt("attack-default-list", rereads((b) => ({
  ...b, attacker: { ...b.attacker, trinkets: [{ name: "Ring", slot: "ring", frw_bonus: 1 }] },
})), (p) => p.roll("/v1/fast-battle/attacks", { table, attacker: FIGHTER, defender: GRUB }));
// A sealed roll: its opening seals the other reading.
await attempt("sealed-dice-dialect", rereads((b) => ({ ...b, dialect: "avrae" })),
  (p) => p.rollFormula({ table, formula: "1d20", sealed: { audience: "gm" } }));
// The operator rolls the other reading at the player's nonce, then answers 409 naming the
// next one: the roll the log holds at that nonce is not the one the player sent.
await attempt("nonce-holds-another-reading", async (sent, _forward, init) => {
  const token = new Headers(init?.headers).get("fairroll-session-token");
  const headers = { "content-type": "application/json", ...(token ? { "fairroll-session-token": token } : {}) };
  await fetch(`${url}/v1/dice/rolls`, { method: "POST", headers, body: JSON.stringify({ ...sent, dialect: "foundry" }) });
  return json({ title: "Conflict", detail: "the session is at another nonce", nonce: sent.session.nonce + 1 }, 409);
}, (p) => p.rollFormula({ table, formula: "1d20" }));
// The same fields sent with their defaults, and the defaults left out, rolled honestly.
await attempt("dice-default-sent", null, (p) => p.rollFormula({ table, formula: "1d20", dialect: "roll20" }));
await attempt("dice-other-dialect-sent", null, (p) => p.rollFormula({ table, formula: "1d20", dialect: "avrae" }));
await attempt("sealed-honest", null, (p) => p.rollFormula({ table, formula: "1d20", sealed: { audience: "gm" } }));

// Every mechanic, honestly, its defaults left out.
out.honest = {};
for (const { name, path, body } of JSON.parse(readFileSync(honestFile, "utf8"))) {
  await attempt(`honest ${name}`, null, (p) => p.roll(path, { ...body, table }));
  out.honest[name] = out[`honest ${name}`];
  delete out[`honest ${name}`];
}

// The page's roll path (roll.js): openSession, rollInSession.
async function call(method, path, body, headers = {}) {
  const response = await hostile(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return [response.status, text ? JSON.parse(text) : null];
}
const keys = await page.trustedKeys(await (await fetch(`${url}/v1/keys`)).json(), root);
for (const [name, setup] of [["page-honest", null], ["page-dice-dialect", rereads((b) => ({ ...b, dialect: "foundry" }))]]) {
  try {
    const session = await page.openSession(call, table, keys, { player: name });
    attack = setup;
    const answer = await page.rollInSession(call, session, "/v1/dice/rolls", { formula: "1d20" }, keys);
    out[name] = { ok: true, verified: Boolean(answer.verdict?.verified) };
  } catch (error) {
    out[name] = { ok: false, error: String(error.message) };
  }
  attack = null;
}
console.log(JSON.stringify(out));
