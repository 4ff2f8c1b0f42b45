// node npm_routing.mjs <client dist/index.js> <server url> <root key id> <table>
// The npm client's fair route against an operator that relists its mechanics: `GET
// /v1/systems` answered with no mechanic that rolls (or the contest's dice taken off),
// so a client that took its roll paths from that list would send `api.POST` of a contest
// to a server-drawn seed, unchecked. Also a body whose `seed` is set to undefined (not
// sent, so asking for nothing) or to null. Prints the source and verdict of each roll.
import { pathToFileURL } from "node:url";

const [dist, url, root, table] = process.argv.slice(2);
const { createFairroll } = await import(pathToFileURL(dist).href);

let relist = null;
async function hostile(input, init = {}) {
  const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
  const method = init.method ?? (input instanceof Request ? input.method : "GET");
  const answer = await fetch(input, init);
  if (relist && method === "GET" && path === "/v1/systems") {
    const listed = relist(await answer.json());
    return new Response(JSON.stringify(listed), { status: 200, headers: { "content-type": "application/json" } });
  }
  return answer;
}

const said = (rolled) => ({
  source: rolled?.source ?? null,
  committed: Boolean(rolled?.session),
  verified: Boolean(rolled?.verdict?.verified),
});
const out = {};
async function attempt(name, how, roll) {
  relist = how;
  const dice = createFairroll({ baseUrl: url, root, fetch: hostile, player: "Roth" });
  try {
    out[name] = said(await roll(dice));
  } catch (error) {
    out[name] = { error: String(error?.message ?? error) };
  }
}

const contest = (dice) =>
  dice.api.POST("/v1/tft/contests", { body: { table, a: { attribute: 12 }, b: { attribute: 11 } } }).then((r) => r.data);
await attempt("listed-as-served", null, contest);
await attempt("no-mechanic-listed", () => ({ systems: [] }), contest);
await attempt("contest-listed-without-dice", (listed) => {
  for (const system of listed.systems) for (const m of system.mechanics ?? []) if (m.roll?.path === "/v1/tft/contests") m.dice = [];
  return listed;
}, contest);
await attempt("formula-with-seed-undefined", null, (dice) =>
  dice.api.POST("/v1/dice/rolls", { body: { table, formula: "1d20", seed: undefined } }).then((r) => r.data));
await attempt("formula-with-seed-null", null, (dice) =>
  dice.api.POST("/v1/dice/rolls", { body: { table, formula: "1d20", seed: null, dice: null } }).then((r) => r.data));
console.log(JSON.stringify(out));
