// node run_npm_client.mjs <built package's dist/index.js> <docs/vectors>
// Every log case through the npm package's verifyExport(ndjson, keys, root), as a plugin
// calls it; prints one JSON object of verdicts (the kinds it does not read are left out:
// tests/test_conformance.py declares them).
import { pathToFileURL } from "node:url";
import { filesOf } from "./files.mjs";

const [packageFile, dir] = process.argv.slice(2);
const { createFairroll } = await import(pathToFileURL(packageFile).href);
const client = createFairroll({ baseUrl: "http://127.0.0.1:9" });  // never asked: keys are given
const files = filesOf(dir);
const said = {};
for (const c of JSON.parse(files["cases/index.json"]).cases) {
  if (c.kind !== "log") continue;
  try {
    const got = await client.verifyExport(files[c.inputs.log], JSON.parse(files[c.inputs.keys]), c.inputs.root);
    const notFair = (got.not_fair ?? []).map((item) => (typeof item === "object" ? item.seq : item));
    said[c.name] = {
      ok: got.ok,
      first_bad_seq: got.first_bad_seq ?? null,
      reason: (got.problems ?? [])[0] ?? "",
      not_fair: notFair.sort((a, b) => a - b),
    };
  } catch (error) {
    said[c.name] = { error: String(error && error.stack ? error.stack : error) };
  }
}
console.log(JSON.stringify(said));
