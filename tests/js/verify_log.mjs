// node verify_log.mjs <verify.js> <keys.json> <export.ndjson> [root key id] [kept size] [kept root]
// The in-page verifier on one log, from a pinned root, and against a kept checkpoint's
// Merkle root if given: prints {seq, reason} of the first bad entry (seq null: all good)
// and what each entry proves.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, keysFile, exportFile, root, keptSize, keptRoot] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const keys = await v.importKeys(JSON.parse(readFileSync(keysFile, "utf8")));
const lines = readFileSync(exportFile, "utf8").split("\n").filter((l) => l);
const log = new v.LogVerifier(keys, { root: root || null });
const proves = [];
let answer = null;
for (const line of lines) {
  let entry;
  try {
    entry = v.parseStrict(line);
  } catch (error) {
    answer = { seq: JSON.parse(line).seq, reason: error.message };
    break;
  }
  const { results } = await log.add([entry]);
  const [result] = results;
  proves.push(result.proves);
  if (!result.ok) {
    answer = { seq: result.badSeq ?? result.seq, reason: result.problems.join("; ") };
    break;
  }
  if (keptSize && entry.seq === Number(keptSize)) {
    const mine = btoa(String.fromCharCode(...(await log.root())));
    if (mine !== keptRoot) {
      answer = { seq: entry.seq, reason: "the Merkle root differs from a kept checkpoint's: rewritten or forked" };
      break;
    }
  }
}
if (!answer && keptSize && (log.seq ?? 0) < Number(keptSize)) {
  answer = { seq: (log.seq ?? 0) + 1, reason: `truncated: a kept checkpoint saw ${keptSize} entries` };
}
console.log(JSON.stringify(answer ?? { seq: null, proves }));
