// node attack_probe.mjs <npm dist/index.js> <page verify.js> <server url> <root key id> <table>
// The npm client and the page's live checks against a real server behind an operator
// that rewrites answers (or requests). Prints what each verifier did.
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [dist, pageVerify, url, root, table] = process.argv.slice(2);
const { createFairroll } = await import(pathToFileURL(dist).href);
const page = await import(pathToFileURL(pageVerify).href);
const { describe } = await import(pathToFileURL(join(dirname(pageVerify), "words.js")).href);

let attack = null;
const ROLL = /^\/v1\/dice\/rolls$/;
async function hostile(input, init = {}) {
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  const method = init.method ?? (input instanceof Request ? input.method : "GET");
  if (attack && method === "POST" && typeof init.body === "string" && ROLL.test(path)) {
    const act = attack;
    attack = null;
    return act(JSON.parse(init.body), (body) => fetch(input, { ...init, body: JSON.stringify(body) }));
  }
  return fetch(input, init);
}
const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const entryOf = async (seq) => (await fetch(`${url}/v1/tables/${table}/entries/${seq}`)).json();

const out = {};
const dice = createFairroll({ baseUrl: url, root, fetch: hostile, player: "Roth" });
await dice.rollFormula({ table, formula: "1d20" });  // open the session honestly

async function attempt(name, setup, report) {
  attack = setup;
  try {
    // A client of its own: a refused roll's retry would reuse its Idempotency-Key.
    const player = createFairroll({ baseUrl: url, root, fetch: hostile, player: name });
    const rolled = await player.rollFormula({ table, formula: "1d20" });
    const entry = await entryOf(rolled.receipt.seq);
    out[name] = { ok: true, verdict: rolled.verdict, ...report(rolled, entry) };
  } catch (error) {
    out[name] = { ok: false, error: String(error.message) };
  }
  attack = null;
}

// Another request rolled in the player's session at the player's nonce.
await attempt(
  "npm-another-request",
  async (sent, forward) => forward({ ...sent, formula: "1d20+15" }),
  (rolled, entry) => ({ total: rolled.outcome.total, face: rolled.dice[0].face, logFormula: entry.request.formula }),
);

// The outcome and the words, edited in the answer only (the log holds the honest roll).
await attempt(
  "npm-forged-outcome",
  async (sent, forward) => {
    const answer = await (await forward(sent)).json();
    // Always another total than the honest one (a forged 20 over a rolled 20 forges nothing).
    const forged = answer.outcome.total === 20 ? 19 : 20;
    answer.outcome.total = forged;
    answer.words.text = `${forged} — forged`;
    return json(answer);
  },
  (rolled, entry) => ({ total: rolled.outcome.total, words: rolled.words.text, face: rolled.dice[0].face, logTotal: entry.outcome.total }),
);

// Another mechanic whose request holds every field sent: a check sent, a complex check
// (stat, skill and tn, and one more field) rolled in the player's session at its nonce.
{
  const CHECK = "/v1/stat-skill/checks";
  const player = createFairroll({
    baseUrl: url,
    root,
    player: "npm-another-mechanic",
    fetch: async (input, init = {}) => {
      const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
      if (path === CHECK && typeof init.body === "string") {
        const sent = JSON.parse(init.body);
        return fetch(`${url}/v1/stat-skill/complex-checks`, { ...init, body: JSON.stringify({ ...sent, required_successes: 1 }) });
      }
      return fetch(input, init);
    },
  });
  try {
    const rolled = await player.roll(CHECK, { table, stat: 3, skill: 2, tn: 12 });
    out["npm-another-mechanic"] = { ok: true, mechanic: rolled.mechanic, verdict: rolled.verdict };
  } catch (error) {
    out["npm-another-mechanic"] = { ok: false, error: String(error.message) };
  }
}

// The page's path (roll.js): its call, openSession, rollInSession, words beside the mark.
async function call(method, path, body, headers = {}) {
  const response = await hostile(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return [response.status, text ? JSON.parse(text) : null];
}
try {
  const keys = await page.trustedKeys(await (await fetch(`${url}/v1/keys`)).json(), root);
  const session = await page.openSession(call, table, keys, { player: "this browser" });
  attack = async (sent, forward) => {
    const answer = await (await forward(sent)).json();
    answer.words.text = "20 — a natural 20, critical hit";
    return json(answer);
  };
  const answer = await page.rollInSession(call, session, "/v1/dice/rolls", { formula: "1d20" }, keys);
  const [, came] = describe(answer.words);
  const checked = answer.verdict?.verified
    ? " — ✓ checked here: your client seed, nonce, the chain's link, the dice, and the receipt under the pinned root"
    : " — NOT VERIFIED";
  out["page-forged-words"] = {
    ok: true,
    verdict: answer.verdict,
    shown: `Rolled #${answer.receipt.seq} in your seed session (nonce ${answer.session.nonce}): ${came}${checked}`,
    face: answer.dice[0].face,
  };
} catch (error) {
  out["page-forged-words"] = { ok: false, error: String(error.message) };
}
console.log(JSON.stringify(out));
