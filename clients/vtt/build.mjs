// Bundle each integration into what its host loads: Foundry's module script
// (foundry/dist/fairroll.js, named by module.json) and Owlbear's extension site
// (owlbear/dist/: the manifest, the popover page and its script).
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { build } from "esbuild";

const common = { bundle: true, format: "esm", platform: "browser", target: "es2022", logLevel: "warning" };

rmSync("foundry/dist", { recursive: true, force: true });
await build({ ...common, entryPoints: ["foundry/src/module.ts"], outfile: "foundry/dist/fairroll.js" });

rmSync("owlbear/dist", { recursive: true, force: true });
mkdirSync("owlbear/dist", { recursive: true });
cpSync("owlbear/public", "owlbear/dist", { recursive: true });
await build({ ...common, entryPoints: ["owlbear/src/popover.ts"], outfile: "owlbear/dist/popover.js" });
