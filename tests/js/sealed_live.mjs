// node sealed_live.mjs <verify.js or the npm client's dist/index.js>
// A sealed roll checked live (docs/audit.md, "Sealed rolls"; rows 20, 22, 23 for a sealed
// answer), against a server played here: an honest one, then one that rewrites its answer
// or its log the way an operator could (an opening that does not open the commitment,
// dice from another blind, an entry of another roll or audience, another request). The
// module is the JavaScript core (rollInSession, revealSealed) or the npm client
// (createFairroll's `roll` with `sealed`, `revealSealed`), each with no root pinned (the
// receipts are held by the other tests): prints attack -> {ok, why}.
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";

const [moduleFile] = process.argv.slice(2);
const m = await import(pathToFileURL(moduleFile).href);
const core = m.rollInSession !== undefined;
const v = core ? m : await import(pathToFileURL(moduleFile.replace(/index\.js$/, "vendor/verify.js")).href);

const TABLE = "sealed-live";
const LENGTH = 8;
const hex = (bytes) => Buffer.from(bytes).toString("hex");
const last = hex(createHash("sha256").update("sealed live last link").digest());
const link = (nonce) => v.chainPrevious(last, LENGTH - nonce);
const anchor = await link(0);
const canonical = (value) => v.canonicalJson(value);
const copy = (value) => JSON.parse(JSON.stringify(value));

/** The server: its log, and `attack` (answer, entry, sent) -> void, rewriting the next roll. */
function server() {
  const log = [];
  const state = { attack: null, reveals: 0, refuse: 0, blinds: [] };
  const append = (entry) => {
    entry.seq = log.length + 1;
    entry.table = TABLE;
    log.push(entry);
    return entry;
  };
  append({ mechanic: "session.commit", source: "statement", request: { seed_id: "sLive", commitment: anchor, kind: "chain", length: LENGTH, first_nonce: 1 } });
  let nonce = 0;
  const call = async (method, path, body) => {
    if (method === "POST" && path.endsWith("/seeds")) {
      return [201, { seed_id: "sLive", commitment: anchor, kind: "chain", commit_seq: 1, length: LENGTH, first_nonce: 1, token: "t" }];
    }
    const entryAt = /\/entries\/(\d+)$/.exec(path);
    if (method === "GET" && entryAt) {
      const entry = log[Number(entryAt[1]) - 1];
      return entry ? [200, copy(entry)] : [404, { detail: "no such entry" }];
    }
    if (method === "GET" && path === "/v1/keys") return [200, { keys: [] }];
    if (method === "GET" && path === "/v1/systems") return [200, { systems: [] }];
    const reveal = /\/sealed\/(\d+)\/reveal$/.exec(path);
    if (method === "POST" && reveal) {
      state.reveals += 1;
      const entry = append({ mechanic: "sealed.reveal", source: "statement", request: { seq: Number(reveal[1]), opening: body.opening } });
      return [200, { receipt: { table: TABLE, seq: entry.seq } }];
    }
    if (method === "POST" && path === "/v1/dice/rolls") {
      state.blinds.push({ nonce: body.session.nonce, blind: body.sealed.blind });
      if (state.refuse > 0) {
        // The operator saw the blind (so the dice) and turns the roll down.
        state.refuse -= 1;
        return [429, { detail: "too many requests" }];
      }
      nonce = body.session.nonce;
      const at = await link(nonce);
      const seed = `${at}:${body.session.client_seed}:${nonce}:${body.sealed.blind}`;
      const [face] = await v.deriveFaces(seed, 20, 1, 0);
      const dice = [{ group: "d20", sides: 20, face }];
      const opening = {
        blind: body.sealed.blind, mechanic: "dice.roll",
        request: { dialect: "roll20", formula: body.formula, label: null }, dice, outcome: { total: face },
      };
      const session = { seed_id: "sLive", commitment: anchor, client_seed: body.session.client_seed, nonce, link: at, first_nonce: 1 };
      const entry = {
        mechanic: "sealed.roll", source: "committed", seed: null, session, dice: [], outcome: null,
        request: { mechanic: "dice.roll", audience: body.sealed.audience, commitment: await v.sealedCommitment(opening) },
      };
      const answer = { mechanic: "dice.roll", source: "committed", seed: null, session, dice, outcome: { total: face }, opening, words: { text: `${face}` } };
      if (state.attack) await state.attack(answer, entry, body);
      state.attack = null;
      append(entry);
      answer.receipt = { table: TABLE, seq: entry.seq };
      return [200, answer];
    }
    return [404, { detail: `not served here: ${method} ${path}` }];
  };
  return { call, log, state };
}

const fetchOf = (call) => async (url, init = {}) => {
  const path = new URL(url).pathname;
  const [status, body] = await call(init.method ?? "GET", path, init.body ? JSON.parse(init.body) : undefined);
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
};

/** A sealed 1d20 for the GM in a fresh session on a fresh server; `attack` rewrites it. */
async function sealedRoll(attack, audience = "gm") {
  const played = server();
  played.state.attack = attack;
  const body = { formula: "1d20", sealed: { audience } };
  if (core) {
    const s = await v.openSession(played.call, TABLE, new Map());
    return { played, rolled: await v.rollInSession(played.call, s, "/v1/dice/rolls", body, new Map()) };
  }
  const dice = m.createFairroll({ baseUrl: "http://fairroll.test", fetch: fetchOf(played.call) });
  return { played, rolled: await dice.roll("/v1/dice/rolls", { table: TABLE, ...body }), dice };
}

async function reveal(played, dice, seq, opening) {
  if (core) return v.revealSealed(played.call, TABLE, seq, opening, new Map());
  return dice.revealSealed(TABLE, seq, opening);
}

const out = {};
async function attempt(name, run) {
  try {
    out[name] = { ok: true, ...(await run()) };
  } catch (error) {
    out[name] = { ok: false, unfair: error instanceof v.UnfairRollError, why: error.message };
  }
}

await attempt("honest", async () => {
  const { played, rolled, dice } = await sealedRoll(null);
  const sealed = rolled.checked.sealed;
  await reveal(played, dice, sealed.seq, sealed.opening);
  return {
    audience: played.log[sealed.seq - 1].request.audience, seq: sealed.seq, blind: /^[0-9a-f]{64}$/.test(sealed.opening.blind),
    dice: rolled.dice, opened: canonical(sealed.opening.dice) === canonical(rolled.dice),
    revealed: played.log.at(-1).mechanic, reveals: played.state.reveals,
  };
});
await attempt("opening-does-not-open-the-commitment", () => sealedRoll((answer) => {
  // Another total than the one rolled (a total of 20 would change nothing one roll in 20).
  const total = ((answer.opening.outcome?.total ?? 0) % 20) + 1;
  answer.outcome = { total };
  answer.opening.outcome = { total };
}));
await attempt("dice-from-another-blind", () => sealedRoll(async (answer, entry, sent) => {
  // The operator rolls with a blind of its own and shows the player's blind in the opening.
  const seed = `${answer.session.link}:${answer.session.client_seed}:${answer.session.nonce}:${"0f".repeat(32)}`;
  const [face] = await v.deriveFaces(seed, 20, 1, 0);
  const forged = face === answer.dice[0].face ? (face % 20) + 1 : face;
  answer.dice = [{ group: "d20", sides: 20, face: forged }];
  answer.outcome = { total: forged };
  Object.assign(answer.opening, { dice: answer.dice, outcome: answer.outcome, blind: sent.sealed.blind });
  entry.request.commitment = await v.sealedCommitment(answer.opening);
}));
await attempt("opening-of-another-blind", () => sealedRoll(async (answer, entry, sent) => {
  // Honest dice, but from the operator's blind, and it says so: not the blind sent.
  const blind = "0f".repeat(32);
  const seed = `${answer.session.link}:${answer.session.client_seed}:${answer.session.nonce}:${blind}`;
  const [face] = await v.deriveFaces(seed, 20, 1, 0);
  answer.dice = [{ group: "d20", sides: 20, face }];
  answer.outcome = { total: face };
  Object.assign(answer.opening, { dice: answer.dice, outcome: answer.outcome, blind });
  entry.request.commitment = await v.sealedCommitment(answer.opening);
}));
await attempt("entry-is-an-ordinary-roll", () => sealedRoll((answer, entry) => {
  Object.assign(entry, { mechanic: "dice.roll", dice: answer.dice, outcome: answer.outcome, request: answer.opening.request });
}));
await attempt("entry-seals-another-audience", () => sealedRoll((answer, entry) => {
  entry.request.audience = "self";
}));
await attempt("entry-seals-another-mechanic", () => sealedRoll(async (answer, entry) => {
  // The operator seals the roll as another mechanic whose request holds every field sent
  // (as a stat-skill complex check holds a check's stat, skill and tn), with the same dice:
  // the outcome it shows is the other mechanic's, its pick of the two.
  answer.mechanic = "sealed.roll";
  answer.opening.mechanic = "dice.reroll";
  entry.request.mechanic = "dice.reroll";
  entry.request.commitment = await v.sealedCommitment(answer.opening);
}));
await attempt("opening-of-another-request", () => sealedRoll(async (answer, entry) => {
  answer.opening.request = { ...answer.opening.request, formula: "1d20+5" };
  entry.request.commitment = await v.sealedCommitment(answer.opening);
}));
await attempt("answer-dice-not-the-openings", () => sealedRoll((answer) => {
  const face = (answer.dice[0].face % 20) + 1;
  answer.dice = [{ group: "d20", sides: 20, face }];
  answer.outcome = { total: face };
}));
await attempt("reveal-of-an-opening-that-does-not-open", async () => {
  const { played, rolled, dice } = await sealedRoll(null);
  const opening = { ...copy(rolled.checked.sealed.opening), outcome: { total: 21 } };
  try {
    await reveal(played, dice, rolled.checked.sealed.seq, opening);
  } finally {
    out.posted_reveals = played.state.reveals;
  }
  return {};
});
await attempt("a-refusal-keeps-the-blind-of-its-nonce", async () => {
  // A server that dislikes the dice of the blind it saw answers 429 (any refusal), and
  // the player rolls again, the same roll or another audience: the same nonce, so the same
  // blind, so the same dice. A blind drawn afresh would let the server pick among them.
  const played = server();
  played.state.refuse = 2;
  const roll = async (audience) => {
    const body = { formula: "1d20", sealed: { audience } };
    if (core) {
      played.s ??= await v.openSession(played.call, TABLE, new Map());
      return v.rollInSession(played.call, played.s, "/v1/dice/rolls", body, new Map());
    }
    played.dice ??= m.createFairroll({ baseUrl: "http://fairroll.test", fetch: fetchOf(played.call) });
    return played.dice.roll("/v1/dice/rolls", { table: TABLE, ...body });
  };
  const refusals = [];
  for (const audience of ["gm", "self"]) {
    try {
      await roll(audience);
    } catch (error) {
      refusals.push(error.status ?? error.message);
    }
  }
  const rolled = await roll("gm");
  return { refusals, blinds: played.state.blinds, opened: rolled.checked.sealed.opening.blind };
});
console.log(JSON.stringify(out));
