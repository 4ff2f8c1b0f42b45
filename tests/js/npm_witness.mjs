// node npm_witness.mjs <client dist/index.js> <server url> <root key id> <table>
// The npm client's TableWitness against an operator that relabels its cosigner listing
// (every name said to be "carol.example"), and cosigned notes handed over between
// players (as the VTT integrations do): who confirms a view is who the trusted key
// says, of a tree this witness verified. Prints what each witness said.
import { pathToFileURL } from "node:url";

const [dist, url, root, table] = process.argv.slice(2);
const { createFairroll } = await import(pathToFileURL(dist).href);

let relabel = false;
async function hostile(input, init = {}) {
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  const method = init.method ?? (input instanceof Request ? input.method : "GET");
  const answer = await fetch(input, init);
  if (relabel && method === "GET" && path.endsWith("/cosignatures")) {
    const listed = await answer.json();
    for (const c of listed.cosignatures ?? []) c.name = "carol.example";
    return new Response(JSON.stringify(listed), { status: 200, headers: { "content-type": "application/json" } });
  }
  return answer;
}
const dice = createFairroll({ baseUrl: url, root, fetch: hostile, player: "Roth" });
const attempt = async (what) => {
  try {
    return await what();
  } catch (error) {
    return `ERROR ${error?.message ?? error}`;
  }
};

const out = {};
await dice.rollFormula({ table, formula: "1d20" });
const roth = await dice.witness(table, "roth.example", root);
const sheena = await dice.witness(table, "sheena.example", root);
const mallory = await dice.witness(table, "mallory.example", root);
roth.trust(sheena.vkey);
await sheena.check();
relabel = true;
const seen = await roth.check();
relabel = false;
out.relabelled = seen.confirmedBy;
await mallory.check();
out.handedBySheena = await attempt(async () => roth.confirmedIn(await sheena.cosign(seen.note)));
out.handedByMallory = await attempt(async () => roth.confirmedIn(await mallory.cosign(seen.note)));
await dice.rollFormula({ table, formula: "1d20" });
const later = await sheena.check();
out.treeNotVerified = await attempt(() => roth.confirmedIn(later.cosigned));
out.cosignNotVerified = await attempt(() => roth.cosign(later.note));
console.log(JSON.stringify(out));
