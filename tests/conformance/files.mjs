// The files a conformance index names (paths relative to docs/vectors), read into one map.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function filesOf(dir) {
  const files = { "cases/index.json": readFileSync(join(dir, "cases/index.json"), "utf8") };
  for (const c of JSON.parse(files["cases/index.json"]).cases) {
    for (const value of Object.values(c.inputs)) {
      for (const path of [value].flat()) {
        if (typeof path === "string" && (path.startsWith("cases/") || path.endsWith(".json"))) {
          files[path] = readFileSync(join(dir, path), "utf8");
        }
      }
    }
  }
  return files;
}
