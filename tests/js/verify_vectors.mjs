// node verify_vectors.mjs <verify.js> <docs/vectors>
// Runs the in-page verifier on the audit vectors: the log (from the pinned root), every
// tampered log, the checkpoint note, the consistency proofs and the JCS cases. Prints
// one JSON object of what it found.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [moduleFile, dir] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const read = (name) => readFileSync(join(dir, name), "utf8");
const served = JSON.parse(read("keys.json"));
const keys = await v.importKeys(served);
const b64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

async function firstBad(text) {
  const log = new v.LogVerifier(keys, { root: served.root });
  let entries;
  try {
    entries = text.split("\n").filter((l) => l).map((l) => v.parseStrict(l));
  } catch (error) {
    const lines = text.split("\n").filter((l) => l);
    const at = lines.findIndex((l) => { try { v.parseStrict(l); return false; } catch { return true; } });
    return { seq: JSON.parse(lines[at]).seq, reason: error.message };
  }
  const { results } = await log.add(entries);
  const bad = results.find((r) => !r.ok);
  const root = await log.root();
  return bad
    ? { seq: bad.badSeq ?? bad.seq, reason: bad.problems.join("; ") }
    : { seq: null, root: btoa(String.fromCharCode(...root)), proves: results.map((r) => r.proves) };
}

const good = await firstBad(read("log.ndjson"));
const bad = {};
for (const name of readdirSync(join(dir, "bad")).filter((n) => n.endsWith(".ndjson"))) {
  bad[name.replace(".ndjson", "")] = await firstBad(read(join("bad", name)));
}
const checkpoint = JSON.parse(read("checkpoint.json"));
const opened = await v.verifyCheckpoint(checkpoint, keys);
const proofs = JSON.parse(read("proofs.json"));
const consistency = [];
for (const item of proofs.consistency) {
  try {
    await v.verifyConsistency(item.from, item.to, b64(proofs.roots[item.from]), opened.root, item.proof.map(b64));
    consistency.push("");
  } catch (error) {
    consistency.push(error.message);
  }
}
let forged = "";
try {
  await v.verifyCheckpoint({ ...checkpoint, text: checkpoint.text.replace("\n12\n", "\n13\n"), size: 13 }, keys);
} catch (error) {
  forged = error.message;
}
const jcs = JSON.parse(read("jcs.json")).map((c) => v.canonicalJson(c.value) === c.canonical);
const failure = async (check) => {
  try {
    await check();
    return "";
  } catch (error) {
    return error.message;
  }
};
const log = read("log.ndjson").split("\n").filter(Boolean).map((l) => v.parseStrict(l));
const receiptVectors = JSON.parse(read("receipts.json"));
const receipts = [];
for (const receipt of receiptVectors.receipts) {
  receipts.push(await failure(() => v.verifyReceipt(log[receipt.seq - 1], receipt, keys)));
}
const badReceipts = {};
for (const item of receiptVectors.bad) {
  badReceipts[item.name] = await failure(() => v.verifyReceipt(log[item.entry_seq - 1], item.receipt, keys));
}
const cosigned = JSON.parse(read("cosignatures.json"));
const cosignature = { time: await v.verifyCosignature(cosigned.cosigned, cosigned.vkey), bad: {} };
for (const [name, note] of Object.entries(cosigned.bad)) {
  cosignature.bad[name] = await failure(() => v.verifyCosignature(note, cosigned.vkey));
}
console.log(
  JSON.stringify({ good, bad, size: opened.size, consistency, forged, jcs, receipts, badReceipts, cosignature }),
);
