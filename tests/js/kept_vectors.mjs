// node kept_vectors.mjs <verify.js> <docs/vectors>
// Every log case of docs/vectors that holds kept checkpoints or receipts, through
// verify.js's verifyLog given them (as `fairroll verify --checkpoint/--since/--receipt`
// is): prints case name -> {ok, first_bad_seq, reason, not_fair (seqs)}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [moduleFile, dir] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const read = (path) => readFileSync(join(dir, path), "utf8");
const said = {};
for (const c of JSON.parse(read("cases/index.json")).cases) {
  const inputs = c.inputs;
  if (c.kind !== "log" || !(inputs.checkpoints || inputs.since || inputs.receipts)) continue;
  const keys = await v.importKeys(JSON.parse(read(inputs.keys)));
  const checkpoints = [...(inputs.checkpoints ?? []), ...(inputs.since ?? [])].map((p) => JSON.parse(read(p)));
  const receipts = (inputs.receipts ?? []).map((p) => JSON.parse(read(p)));
  const verdict = await v.verifyLog(read(inputs.log), keys, { root: inputs.root, checkpoints, receipts });
  said[c.name] = {
    ok: verdict.ok,
    first_bad_seq: verdict.first_bad_seq,
    reason: verdict.reason ?? "",
    not_fair: verdict.not_fair.map((n) => n.seq).sort((a, b) => a - b),
  };
}
console.log(JSON.stringify(said));
