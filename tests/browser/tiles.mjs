// node tiles.mjs <page url> <mirror dir>
// Opens the table page with ?tiles=<its origin>/mirror, the mirror's files served at that
// path from <mirror dir> (as an operator publishes a mirror under the page's own origin),
// and prints the page's verdict on the log read from those tiles (#tiles-verdict), then
// the verdict on the table's own tiles (the button, the input set to the server's URL).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { launch } from "./launch.mjs";

const [url, dir] = process.argv.slice(2);
const origin = new URL(url).origin;
const browser = await launch();
const verdict = (page) =>
  page.waitForFunction(() => /^[✓✗]/.test(document.getElementById("tiles-verdict")?.textContent ?? ""), null, { timeout: 30000 })
    .then(() => page.textContent("#tiles-verdict"));
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.route(`${origin}/mirror/**`, async (route) => {
    const path = new URL(route.request().url()).pathname.slice("/mirror/".length);
    try {
      await route.fulfill({ status: 200, body: await readFile(join(dir, path)), contentType: "application/octet-stream" });
    } catch {
      await route.fulfill({ status: 404, body: "not found" });
    }
  });
  const table = new URL(url).pathname.split("/").at(-1);
  await page.goto(`${url}&tiles=${encodeURIComponent(`${origin}/mirror`)}`);
  const mirror = await verdict(page);
  await page.fill("#tiles-url", `${origin}/v1/tables/${table}/log`);
  await page.evaluate(() => { document.getElementById("tiles-verdict").textContent = ""; });
  await page.click("#tiles-check");
  const own = await verdict(page);
  console.log(JSON.stringify({ mirror, own, errors }));
} finally {
  await browser.close();
}
