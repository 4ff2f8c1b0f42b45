// node notes.mjs <verify.js> <cases.json>
// verify.js on signed notes and receipts: each case is {kind, ...}; prints a JSON object
// of case name -> "" (accepted) or the error it was refused with.
//   checkpoint:  {keys (GET /v1/keys), root, checkpoint, table?}
//   receipt:     {keys, root, entry, receipt}
//   cosignature: {note, vkey}
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [moduleFile, casesFile] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const out = {};
for (const [name, item] of Object.entries(cases)) {
  try {
    if (item.kind === "checkpoint") {
      await v.verifyCheckpoint(item.checkpoint, await v.trustedKeys(item.keys, item.root), { table: item.table ?? null });
    } else if (item.kind === "receipt") {
      await v.verifyReceipt(item.entry, item.receipt, await v.trustedKeys(item.keys, item.root));
    } else {
      await v.verifyCosignature(item.note, item.vkey);
    }
    out[name] = "";
  } catch (error) {
    out[name] = error.message || String(error);
  }
}
console.log(JSON.stringify(out));
