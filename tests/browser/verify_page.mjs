// node verify_page.mjs <verify-page-url> <offline-file-url> <cases.json> [screenshot.png]
// The verify page (GET /verify) and its offline copy opened from file://: each case of
// cases.json ({name, text, root, server?}) pasted into the form and checked. Prints
// the verdict and the lines of what holds, per page and case; with a screenshot path,
// shoots the served page after its first case.
import { readFileSync } from "node:fs";
import { launch } from "./launch.mjs";

const [served, offline, casesPath, screenshot] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const browser = await launch();
const errors = [];
const out = {};
try {
  for (const [where, url] of [["served", served], ["offline", offline]]) {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    page.on("pageerror", (error) => errors.push(`${where}: ${error}`));
    page.on("console", (m) => m.type() === "error" && errors.push(`${where}: ${m.text()}`));
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.ready === "true", null, { timeout: 20000 });
    out[where] = { server: await page.inputValue("#server") };
    for (const [index, one] of cases.entries()) {
      await page.fill("#root", one.root);
      if (one.server !== undefined) await page.fill("#server", one.server);
      await page.fill("#evidence", one.text);
      await page.evaluate(() => { document.getElementById("verdict").textContent = ""; });
      await page.click("#verify-form button[type=submit]");
      await page.waitForFunction(() => {
        const said = document.getElementById("verdict").textContent;
        return said !== "" && said !== "Checking…";
      }, null, { timeout: 30000 });
      out[where][one.name] = await page.evaluate(() => ({
        verdict: document.getElementById("verdict").textContent,
        holds: [...document.querySelectorAll("#holds li")].map((li) => li.textContent),
      }));
      if (screenshot && where === "served" && index === 0) await page.screenshot({ path: screenshot, fullPage: true });
    }
    await page.close();
  }
} catch (error) {
  out.error = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify({ ...out, errors }));
