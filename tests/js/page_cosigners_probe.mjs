// node page_cosigners_probe.mjs <page static dir>
// The table page's compareViews (table.js), run as written with the browser's globals
// stubbed: the operator relists a pinned friend's cosignature of ANOTHER tree (here: a
// tree of size 1, long ago) with the listing's `size` and `root_hash` set to the current
// checkpoint's. Prints what the page would say.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = process.argv[2];
const v = await import(pathToFileURL(join(dir, "verify.js")).href);
const source = readFileSync(join(dir, "table.js"), "utf8");
const start = source.indexOf("async function playerKey()");
const end = source.indexOf("async function poll()");
const store = new Map();
globalThis.localStorage = { getItem: (k) => store.get(k) ?? null, setItem: (k, x) => store.set(k, String(x)) };
const b64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

// Bob, a friend whose key the player pinned, cosigned an old note (size 1) once.
const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
const bobVkey = await v.cosignerVkey("bob.example", raw);
const oldNote = "fairroll/t1\n1\n" + btoa("\x01".repeat(32)) + "\nchain " + "ab".repeat(32) + "\n\n\u2014 fairroll AAAA\n";
const oldBody = oldNote.split("\n\n")[0] + "\n\n";
const bobNote = `${oldBody}${await v.cosignNote(oldBody, "bob.example", pair.privateKey, raw, 1700000000)}\n`;
// The checkpoint this player is shown now: another tree, size 42.
const checkpoint = {
  table: "t1", size: 42, root_hash: btoa("\x02".repeat(32)),
  text: "fairroll/t1\n42\n" + btoa("\x02".repeat(32)) + "\nchain " + "cd".repeat(32) + "\n\n\u2014 fairroll BBBB\n",
};
const listing = { cosignatures: [{ vkey: bobVkey, name: "bob.example", note: bobNote, size: 42, root_hash: checkpoint.root_hash }] };
globalThis.fetch = async (_url, init = {}) => (init.method === "POST"
  ? new Response("{}", { status: 201 })
  : new Response(JSON.stringify(listing), { status: 200 }));
const pinnedCosigners = new Set([bobVkey]);
const { cosignNote, cosignerVkey, verifyCosignature } = v;
const compareViews = new Function(
  "localStorage", "crypto", "b64", "pinnedCosigners", "cosignNote", "cosignerVkey", "verifyCosignature",
  `${source.slice(start, end)}; return compareViews;`,
)(globalThis.localStorage, globalThis.crypto, b64, pinnedCosigners, cosignNote, cosignerVkey, verifyCosignature);
let said;
try {
  said = await compareViews("/v1/tables/t1", checkpoint);
} catch (error) {
  said = `ERROR ${error.message}`;
}
console.log(JSON.stringify({ said, bobCosignedSize: 1, shownSize: checkpoint.size }));
