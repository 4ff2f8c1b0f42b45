// node sealed_logs.mjs <verify.js> <keys.json> <root key id> <cases.json>
// verify.js's verdict on each log of cases.json ({name: {text, previousHash?, previousSeq?,
// frontier?}}: a log from its middle or from an archive base),
// with what it says of the sealed rolls (docs/audit.md, rows 25-28): prints name ->
// {ok, first_bad_seq, reason, sealed_unrevealed, sealed_revealed, sealed_unchecked}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, keysFile, root, casesFile] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const served = JSON.parse(readFileSync(keysFile, "utf8"));
const keys = await v.importKeys(served);
const out = {};
for (const [name, c] of Object.entries(JSON.parse(readFileSync(casesFile, "utf8")))) {
  const verdict = await v.verifyLog(c.text, keys, { root, previousHash: c.previousHash ?? null, previousSeq: c.previousSeq ?? null, frontier: c.frontier ?? null });
  const { ok, first_bad_seq, reason, sealed_unrevealed, sealed_revealed, sealed_unchecked } = verdict;
  out[name] = { ok, first_bad_seq, reason, sealed_unrevealed, sealed_revealed, sealed_unchecked };
}
console.log(JSON.stringify(out));
