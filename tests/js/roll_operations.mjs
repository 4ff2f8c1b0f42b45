// node roll_operations.mjs <openapi.json>
// Prints the roll operations the table page builds a form for: [{id, system, odds}].
import { readFileSync } from "node:fs";
import { rollOperations } from "../../service/fairroll/page/static/form.js";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(rollOperations(spec).map((o) => ({ id: o.id, system: o.system, odds: o.odds?.id ?? null }))));
