// Copy the table page's verifier and words into the package (src/vendor/, not committed):
// one source, served to the page by the service and shipped to plugins by this package.
// verify.js is the entry module of the one JavaScript core; its modules (verify/*.js) go
// with it, every one of them, so a module added there ships without a change here.
// The CHANGELOG travels with the package too; with --types (after tsc), the generated
// API types are copied into dist/.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const statics = join(here, "..", "..", "service", "fairroll", "page", "static");
mkdirSync(join(here, "src", "vendor"), { recursive: true });
for (const name of ["verify.js", "words.js"]) {
  copyFileSync(join(statics, name), join(here, "src", "vendor", name));
}
const core = join(here, "src", "vendor", "verify");
rmSync(core, { recursive: true, force: true });  // a module removed there is gone here too
mkdirSync(core, { recursive: true });
for (const name of readdirSync(join(statics, "verify")).filter((n) => n.endsWith(".js"))) {
  copyFileSync(join(statics, "verify", name), join(core, name));
}
copyFileSync(join(here, "..", "CHANGELOG.md"), join(here, "CHANGELOG.md"));
if (process.argv.includes("--types")) {
  // tsc does not copy declaration files: the generated API types go to dist/ as they are.
  mkdirSync(join(here, "dist", "generated"), { recursive: true });
  copyFileSync(join(here, "src", "generated", "fairroll.d.ts"), join(here, "dist", "generated", "fairroll.d.ts"));
}
