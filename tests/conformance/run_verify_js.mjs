// node run_verify_js.mjs <verify.js> <docs/vectors>
// Every conformance case through verify.js under Node; prints one JSON object of verdicts.
import { pathToFileURL } from "node:url";
import { filesOf } from "./files.mjs";
import { runCases } from "./verify_js_cases.mjs";

const [moduleFile, dir] = process.argv.slice(2);
const v = await import(pathToFileURL(moduleFile).href);
console.log(JSON.stringify(await runCases(v, filesOf(dir))));
