// node verdict.mjs <verify.js> <keys.json> <root key id, or ""> <export.ndjson>... [--kept checkpoint.json]... [--receipt receipt.json]...
// verify.js's verdict on each export, as `fairroll verify --root <root>` gives one (with
// kept checkpoints and receipts, as --checkpoint and --receipt): prints a JSON list of
// {ok, verified, first_bad_seq, reason, not_fair, lost}, one per export.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, keysFile, root, ...rest] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const served = JSON.parse(readFileSync(keysFile, "utf8"));
const keys = root ? await v.trustedKeys(served, root) : await v.importKeys(served);
const files = [];
const checkpoints = [];
const receipts = [];
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === "--kept") checkpoints.push(JSON.parse(readFileSync(rest[++i], "utf8")));
  else if (rest[i] === "--receipt") receipts.push(JSON.parse(readFileSync(rest[++i], "utf8")));
  else files.push(rest[i]);
}
const out = [];
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const { ok, verified, first_bad_seq, reason, not_fair, lost } = await v.verifyLog(text, keys, { root: root || null, checkpoints, receipts });
  out.push({ ok, verified, first_bad_seq, reason, not_fair, lost });
}
console.log(JSON.stringify(out));
