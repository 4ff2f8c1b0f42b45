// node run_chromium.mjs <tests/browser> <verify.js> <docs/vectors>
// Every conformance case through verify.js in Debian's chromium (headless): the module
// and the cases' runner are served from an origin of their own, the files handed in.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { filesOf } from "./files.mjs";

const [browserDir, moduleFile, dir] = process.argv.slice(2);
const { launch } = await import(pathToFileURL(join(browserDir, "launch.mjs")).href);
const here = new URL(".", import.meta.url).pathname;
const served = {
  "/verify.js": readFileSync(moduleFile, "utf8"),
  // The core's modules beside it (verify.js re-exports them from ./verify/).
  ...Object.fromEntries(
    readdirSync(join(dirname(moduleFile), "verify"))
      .filter((name) => name.endsWith(".js"))
      .map((name) => [`/verify/${name}`, readFileSync(join(dirname(moduleFile), "verify", name), "utf8")]),
  ),
  "/verify_js_cases.mjs": readFileSync(join(here, "verify_js_cases.mjs"), "utf8"),
  "/": "<!doctype html><title>conformance</title>",
};
const browser = await launch();
try {
  const page = await browser.newPage();
  await page.route("http://localhost:9/**", (route) => {
    const path = new URL(route.request().url()).pathname;
    const body = served[path];
    if (body === undefined) return route.fulfill({ status: 404, body: "" });
    const type = path === "/" ? "text/html" : "text/javascript";
    return route.fulfill({ status: 200, contentType: type, body });
  });
  await page.goto("http://localhost:9/");  // localhost: a secure context (WebCrypto)
  const said = await page.evaluate(async (files) => {
    const v = await import("/verify.js");
    const { runCases } = await import("/verify_js_cases.mjs");
    return runCases(v, files);
  }, filesOf(dir));
  console.log(JSON.stringify(said));
} finally {
  await browser.close();
}
