// node verify_tiles.mjs <verify/tiles.js> <verify.js> <keys.json> <root> <url> [export.ndjson] [kept.txt] [keyId]
// Prints one JSON object: the verdict of verifyTiles on the log at <url> (the server's
// tiles or a mirror's), and, given an export, verifyLog's verdict on it with the
// checkpoint the tiles read kept (the same checkpoint, so the two verdicts compare).
// kept.txt: a checkpoint note kept earlier; keyId: the key that signed it.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

// A checkpoint kept as its note, in the shape verifyLog keeps one (GET .../checkpoint).
const kept = (text, keyId) => {
  const [, size, root] = text.split("\n");
  return { text, key_id: keyId, size: Number(size), root_hash: root };
};

const [tilesFile, coreFile, keysFile, root, url, exportFile, keptFile, keptBy] = process.argv.slice(2);
const tiles = await import(pathToFileURL(tilesFile).href);
const core = await import(pathToFileURL(coreFile).href);
const keys = await core.trustedKeys(JSON.parse(readFileSync(keysFile, "utf8")), root);
// The key that signed it (the server may hold more keys than one: a rotation).
const checkpoints = keptFile ? [kept(readFileSync(keptFile, "utf8"), keptBy ?? [...keys.keys()][0])] : [];
const strip = ({ results, log, ...verdict }) => ({ ...verdict, checked: results.filter((r) => r.ok).length });
const fromTiles = strip(await tiles.verifyTiles(url, keys, { root, checkpoints }));
let fromExport = null;
if (exportFile) {
  const read = await tiles.readTiles(tiles.tilesLoader(url), keys);
  const verdict = await core.verifyLog(readFileSync(exportFile, "utf8"), keys, { root, checkpoints: [read.checkpoint] });
  fromExport = strip(verdict);
}
console.log(JSON.stringify({ fromTiles, fromExport }));
