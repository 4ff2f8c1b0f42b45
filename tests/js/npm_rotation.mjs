// node npm_rotation.mjs <client dist/index.js> <server url> <root key id> <table>
// An honest key rotation in the npm client (tests/test_rotation_receipts.py): three
// players roll under the old key, then this script prints what they did (one JSON line)
// and waits for a line on stdin, the test rotating the server's key meanwhile (the old key
// retired, a key the root certified signing, on the same address), while Ann's roll is
// made but its answer lost. Then Roth, whose chain the old key's last roll renewed, takes
// up the next chain (its commitment proven by `?receipt=true` in the note the new key
// signed); Sue, in the middle of a chain, rolls on (an answer signed by a key this client
// had not read); Ann sends her roll again and gets it, the old key's entry in the new
// key's note; the export is verified under the pinned root. Prints the second JSON line:
// what each did.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [dist, url, root, table] = process.argv.slice(2);
const { createFairroll } = await import(pathToFileURL(dist).href);

async function attempt(out, name, act) {
  try {
    const made = await act();
    out[name] = {
      ok: made?.verdict?.verified === true && made?.verdict?.fair === true,
      nonce: made?.session?.nonce ?? null,
      key_id: made?.receipt?.key_id ?? null,
      verdict: made?.verdict ?? null,
    };
  } catch (error) {
    out[name] = { ok: false, error: error.message };
  }
}

// Ann's roll whose answer is lost while the key rotates: the roll is made (its entry by
// the old key), then this script prints the first line, waits for the rotation and
// answers 503; Ann sends it again (the same Idempotency-Key) to the new key's server.
let lose = null;
async function lossy(input, init = {}) {
  const answer = await fetch(input, init);
  const path = new URL(String(input)).pathname;
  if (!lose || init.method !== "POST" || path.includes("/seeds")) return answer;
  const rotated = lose;
  lose = null;
  await rotated();
  const problem = { title: "Service Unavailable", status: 503, detail: "lost" };
  return new Response(JSON.stringify(problem), { status: 503, headers: { "content-type": "application/problem+json" } });
}

const roth = createFairroll({ baseUrl: url, root, player: "Roth" });
const sue = createFairroll({ baseUrl: url, root, player: "Sue" });
const ann = createFairroll({ baseUrl: url, root, player: "Ann", fetch: lossy });
await roth.session(table, { length: 2 });
await sue.session(table, { length: 3 });
await ann.session(table, { length: 3 });
const before = {};
await attempt(before, "roth-1", () => roth.rollFormula({ table, formula: "1d20" }));
await attempt(before, "roth-2", () => roth.rollFormula({ table, formula: "1d20" }));  // renews its chain
await attempt(before, "sue-1", () => sue.rollFormula({ table, formula: "1d20" }));
await attempt(before, "ann-1", () => ann.rollFormula({ table, formula: "1d20" }));

lose = async () => {
  console.log(JSON.stringify(before));
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) if (line.trim() === "rotated") break;
  lines.close();
};
const lost = {};
await attempt(lost, "ann-2", () => ann.rollFormula({ table, formula: "1d20" }));
if (lost["ann-2"].ok || !/503/.test(lost["ann-2"].error ?? "")) throw new Error(`the lost answer: ${JSON.stringify(lost)}`);

const after = {};
await attempt(after, "renewed", () => roth.rollFormula({ table, formula: "1d20" }));
await attempt(after, "rolls-on", () => sue.rollFormula({ table, formula: "1d20" }));
await attempt(after, "rolls-on-after-renewal", () => roth.rollFormula({ table, formula: "1d20" }));
await attempt(after, "retried", () => ann.rollFormula({ table, formula: "1d20" }));
try {
  const exported = await (await fetch(`${url}/v1/tables/${encodeURIComponent(table)}/export`)).text();
  const log = await roth.verifyExport(exported);
  after.log = { ok: log.ok, verified: log.verified, reason: log.reason ?? null };
} catch (error) {
  after.log = { ok: false, error: error.message };
}
console.log(JSON.stringify(after));
