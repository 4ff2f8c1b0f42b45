// node tile_sets.mjs <verify/tiles.js> <verify.js> <docs/vectors>
// Every tile set of docs/vectors/tiles/sets read by verifyTiles from its files (a load
// of the set's folder), the kept checkpoint given where the index names one. Prints
// {name: {ok, entries, reason}}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// A checkpoint kept as its note, in the shape verifyLog keeps one (GET .../checkpoint).
const kept = (text, keyId) => {
  const [, size, root] = text.split("\n");
  return { text, key_id: keyId, size: Number(size), root_hash: root };
};

const [tilesFile, coreFile, vectors] = process.argv.slice(2);
const tiles = await import(pathToFileURL(tilesFile).href);
const core = await import(pathToFileURL(coreFile).href);
const served = JSON.parse(readFileSync(join(vectors, "keys.json"), "utf8"));
const keys = await core.trustedKeys(served, served.root);
const sets = join(vectors, "tiles", "sets");
const index = JSON.parse(readFileSync(join(sets, "index.json"), "utf8"));
const said = {};
for (const [name, expected] of Object.entries(index)) {
  const load = async (path) => {
    try {
      return new Uint8Array(readFileSync(join(sets, name, path)));
    } catch {
      throw new tiles.TileError(`${path} is not in the set`);
    }
  };
  const checkpoints = expected.kept ? [kept(readFileSync(join(sets, name, expected.kept), "utf8"), served.keys[0].key_id)] : [];
  const verdict = await tiles.verifyTiles(name, keys, { root: served.root, checkpoints, load });
  said[name] = { ok: verdict.ok, entries: verdict.entries, reason: verdict.reason };
}
console.log(JSON.stringify(said));
