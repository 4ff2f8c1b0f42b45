// Copy the table page's verifier and words into the package (src/vendor/, not committed):
// one source, served to the page by the service and shipped to plugins by this package.
// The CHANGELOG travels with the package too; with --types (after tsc), the generated
// API types are copied into dist/.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const statics = join(here, "..", "..", "service", "fairroll", "page", "static");
mkdirSync(join(here, "src", "vendor"), { recursive: true });
for (const name of ["verify.js", "words.js"]) {
  copyFileSync(join(statics, name), join(here, "src", "vendor", name));
}
copyFileSync(join(here, "..", "CHANGELOG.md"), join(here, "CHANGELOG.md"));
if (process.argv.includes("--types")) {
  // tsc does not copy declaration files: the generated API types go to dist/ as they are.
  mkdirSync(join(here, "dist", "generated"), { recursive: true });
  copyFileSync(join(here, "src", "generated", "fairroll.d.ts"), join(here, "dist", "generated", "fairroll.d.ts"));
}
