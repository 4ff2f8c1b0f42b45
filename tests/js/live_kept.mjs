// node live_kept.mjs <verify.js> <server url> <root key id> <table>
// The live path of the one JavaScript core (the page's and the npm client's) against a
// real server: a roll in the player's seed session, what it hands back as checked and as
// the server's words; then the session's kept checkpoint replaced by one of a forked
// tree (same size, another root), and a roll: its receipt's note must be refused.
import { pathToFileURL } from "node:url";

const [moduleFile, url, root, table] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const call = async (method, path, body, headers = {}) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return [response.status, await response.json().catch(() => null)];
};
const [, served] = await call("GET", "/v1/keys");
const keys = await v.trustedKeys(served, root);
const out = {};
const s = await v.openSession(call, table, keys);
out.opened = { ...s.checkpoint };
const made = await v.rollInSession(call, s, "/v1/dice/rolls", { formula: "1d20" }, keys);
const [, entry] = await call("GET", `/v1/tables/${table}/entries/${made.receipt.seq}`);
out.rolled = {
  checked: made.checked,
  serverWords: made.serverWords,
  entry: { seq: entry.seq, mechanic: entry.mechanic, dice: entry.dice, outcome: entry.outcome },
  verdict: made.verdict,
  kept: { ...s.checkpoint },
};
s.checkpoint = { size: s.checkpoint.size, root_hash: btoa(String.fromCharCode(...new Uint8Array(32))) };
try {
  await v.rollInSession(call, s, "/v1/dice/rolls", { formula: "1d20" }, keys);
  out.forked = { refused: false };
} catch (error) {
  out.forked = { refused: error instanceof v.UnfairRollError, message: error.message };
}
console.log(JSON.stringify(out));
