// node page_views.mjs <page static dir> <trees.json>
// The table page's compareViews (table.js), run as written with the browser's globals
// stubbed, against listings an operator could serve: a pinned friend's cosignature of
// this very tree, of another table's tree (the checkpoint's JSON `origin` set to match
// it), of an older tree relisted as this one, of a larger tree this one is (or is not) a
// prefix of, under a name the listing changed; a stranger's; and a refused post.
// trees.json: {small: {size, root}, large: {size, root}, proof: [...]} (base64, real
// RFC 9162 trees made by the test). Prints what the page says in each case.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, treesPath] = process.argv.slice(2);
const trees = JSON.parse(readFileSync(treesPath, "utf8"));
const v = await import(pathToFileURL(join(dir, "verify.js")).href);
const source = readFileSync(join(dir, "table.js"), "utf8");
const start = source.indexOf("async function playerKey()");
const end = source.indexOf("async function poll()");
const b64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

const noteOf = (origin, size, root) => `${origin}\n${size}\n${root}\nchain ${"cd".repeat(32)}\n\n\u2014 fairroll AAAA\n`;
async function cosigner(name) {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const vkey = await v.cosignerVkey(name, raw);
  const sign = async (note) => {
    const body = note.slice(0, note.indexOf("\n\n") + 2);
    return `${body}${await v.cosignNote(body, name, pair.privateKey, raw, 1700000000)}\n`;
  };
  return { vkey, sign };
}
const bob = await cosigner("bob.example");
const stranger = await cosigner("sybil.example");
const shown = noteOf("fairroll/t1", trees.small.size, trees.small.root);
const checkpoint = { table: "t1", origin: "fairroll/t1", size: trees.small.size, root_hash: trees.small.root, text: shown };

async function views({ listing, origin = "fairroll/t1", postStatus = 201 }) {
  const store = new Map();
  const localStorage = { getItem: (k) => store.get(k) ?? null, setItem: (k, x) => store.set(k, String(x)) };
  globalThis.fetch = async (url, init = {}) => {
    if (init.method === "POST") return new Response("{}", { status: postStatus });
    if (String(url).includes("/proofs/consistency")) {
      const asked = new URL(String(url), "http://page");
      const fits = Number(asked.searchParams.get("from")) === trees.small.size && Number(asked.searchParams.get("to")) === trees.large.size;
      return fits ? new Response(JSON.stringify({ proof: trees.proof }), { status: 200 }) : new Response("{}", { status: 400 });
    }
    return new Response(JSON.stringify({ cosignatures: listing }), { status: 200 });
  };
  const compareViews = new Function(
    "localStorage", "crypto", "b64", "pinnedCosigners", "cosignNote", "cosignerVkey", "verifyCosignature", "verifyConsistency",
    `${source.slice(start, end)}; return compareViews;`,
  )(localStorage, globalThis.crypto, b64, new Set([bob.vkey]), v.cosignNote, v.cosignerVkey, v.verifyCosignature, v.verifyConsistency);
  try {
    return await compareViews("/v1/tables/t1", { ...checkpoint, origin });
  } catch (error) {
    return `ERROR ${error.message}`;
  }
}
const listed = (who, note, name = "bob.example") => ({ vkey: who.vkey, name, note, size: checkpoint.size, root_hash: checkpoint.root_hash });

const out = {};
out["same-tree"] = await views({ listing: [listed(bob, await bob.sign(shown))] });
out["name-relabelled"] = await views({ listing: [listed(bob, await bob.sign(shown), "carol.example")] });
const t2 = noteOf("fairroll/t2", trees.small.size, trees.small.root);
out["another-tables-tree"] = await views({ listing: [listed(bob, await bob.sign(t2))], origin: "fairroll/t2" });
out["older-tree-relisted"] = await views({ listing: [listed(bob, await bob.sign(noteOf("fairroll/t1", 1, btoa("\x01".repeat(32)))))] });
out["larger-consistent-tree"] = await views({ listing: [listed(bob, await bob.sign(noteOf("fairroll/t1", trees.large.size, trees.large.root)))] });
out["larger-other-tree"] = await views({ listing: [listed(bob, await bob.sign(noteOf("fairroll/t1", trees.large.size, btoa("\x07".repeat(32)))))] });
out["stranger"] = await views({ listing: [listed(stranger, await stranger.sign(shown), "sybil.example")] });
out["post-refused"] = await views({ listing: [listed(bob, await bob.sign(shown))], postStatus: 401 });
console.log(JSON.stringify(out));
