// node verify_export.mjs <verify.js> <keys.json> <export.ndjson> [vectors.json]
// Prints one JSON object: the verifier's result per entry, and the faces it derives
// for the randomness test vectors given.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, keysFile, exportFile, vectorsFile] = process.argv.slice(2);
const verifier = await import(pathToFileURL(moduleFile).href);
const keys = await verifier.importKeys(JSON.parse(readFileSync(keysFile, "utf8")));
const entries = readFileSync(exportFile, "utf8")
  .split("\n")
  .filter((line) => line)
  .map((line) => verifier.parseStrict(line));
const log = new verifier.LogVerifier(keys);
const { results } = await log.add(entries);
const root = await log.root();
const vectors = [];
if (vectorsFile) {
  for (const v of JSON.parse(readFileSync(vectorsFile, "utf8"))) {
    vectors.push(await verifier.deriveFaces(v.seed, v.sides, v.count));
  }
}
console.log(JSON.stringify({ results, vectors, root: root && Buffer.from(root).toString("base64") }));
