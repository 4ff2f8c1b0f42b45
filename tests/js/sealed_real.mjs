// node sealed_real.mjs <client dist/index.js> <server url> <root key id> <table>
// The npm client's sealed rolls against a real server: one of each audience, checked
// under the pinned root; one revealed; the export verified (the two never revealed
// listed). Then the server's answers rewritten as an operator holding the key would (an
// opening that does not open the commitment, dice of another blind, the receipt of
// another roll): each must end in UnfairRollError. Prints what it saw.
import { pathToFileURL } from "node:url";

const [dist, url, root, table] = process.argv.slice(2);
const { createFairroll, UnfairRollError, deriveFaces, sealedCommitment } = await import(pathToFileURL(dist).href);

let attack = null;  // (answer, sent) -> answer, for the next sealed roll's answer only
async function hostile(input, init = {}) {
  const response = await fetch(input, init);
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  if (!attack || init.method !== "POST" || path !== "/v1/dice/rolls") return response;
  const act = attack;
  attack = null;
  const answer = await act(await response.json(), JSON.parse(init.body));
  return new Response(JSON.stringify(answer), { status: response.status, headers: { "content-type": "application/json" } });
}

const dice = createFairroll({ baseUrl: url, root, fetch: hostile, player: "Mira" });
const out = { rolls: {} };
const sealedRoll = (audience) => dice.roll("/v1/dice/rolls", { table, formula: "1d20+2", sealed: { audience } });
for (const audience of ["gm", "blind", "self"]) {
  const rolled = await sealedRoll(audience);
  out.rolls[audience] = {
    verified: rolled.verdict.verified, seq: rolled.checked.sealed.seq, mechanic: rolled.checked.mechanic,
    blind: rolled.checked.sealed.opening.blind,
    entry: (await dice.entries(table, rolled.checked.sealed.seq - 1, 1)).entries[0],
    opening: rolled.checked.sealed.opening,
  };
}
const gm = out.rolls.gm;
out.reveal = await dice.revealSealed(table, gm.seq, gm.opening);
out.verdict = await dice.verifyExport(await dice.exportTable(table));

async function attempt(name, rewrite) {
  attack = rewrite;
  try {
    await sealedRoll("gm");
    out[name] = { ok: true };
  } catch (error) {
    out[name] = { ok: false, unfair: error instanceof UnfairRollError, why: error.message };
  }
}
const flip = (face) => (face % 20) + 1;
await attempt("opening-does-not-open-the-commitment", (answer) => {
  answer.dice[0].face = flip(answer.dice[0].face);
  answer.opening.dice[0].face = answer.dice[0].face;
  return answer;
});
await attempt("dice-of-another-blind", async (answer) => {
  // Dice the operator rolled with a blind of its own, shown with that blind.
  const blind = "0f".repeat(32);
  const { link, client_seed: clientSeed, nonce } = answer.session;
  const [face] = await deriveFaces(`${link}:${clientSeed}:${nonce}:${blind}`, 20, 1, 0);
  answer.opening.blind = blind;
  answer.opening.dice[0].face = face;
  answer.dice[0].face = face;
  return answer;
});
await attempt("receipt-of-another-roll", (answer) => {
  answer.receipt = { ...answer.receipt, seq: gm.seq + 1 };  // the blind roll's entry
  return answer;
});
await attempt("commitment-recomputed-for-other-dice", async (answer) => {
  // An opening that opens a commitment of its own: not the one the log holds.
  answer.opening.dice[0].face = flip(answer.opening.dice[0].face);
  answer.dice = answer.opening.dice;
  out.recomputed = await sealedCommitment(answer.opening);
  return answer;
});
delete out.recomputed;
console.log(JSON.stringify(out));
