// node verdict.mjs <verify.js> <keys.json> <root key id, or ""> <export.ndjson>...
// verify.js's verdict on each export, as `fairroll verify --root <root>` gives one: prints
// a JSON list of {ok, verified, first_bad_seq, reason, not_fair}, one per export.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, keysFile, root, ...files] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const served = JSON.parse(readFileSync(keysFile, "utf8"));
const keys = root ? await v.trustedKeys(served, root) : await v.importKeys(served);
const out = [];
for (const file of files) {
  const { ok, verified, first_bad_seq, reason, not_fair } = await v.verifyLog(readFileSync(file, "utf8"), keys, { root: root || null });
  out.push({ ok, verified, first_bad_seq, reason, not_fair });
}
console.log(JSON.stringify(out));
