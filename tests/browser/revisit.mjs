// node revisit.mjs <url>
// Opens the table page, waits for its history check (#trust) and prints it; then waits
// for a line on stdin, reloads the page in the same browser (its localStorage kept, as a
// player's browser keeps it between visits) and prints the second history check.
import { createInterface } from "node:readline";
import { launch } from "./launch.mjs";

const [url] = process.argv.slice(2);
const browser = await launch();
const trust = (page) =>
  page.waitForFunction(() => document.getElementById("trust")?.textContent, null, { timeout: 20000 })
    .then(() => page.textContent("#trust"));
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url);
  const first = await trust(page);
  process.stderr.write("shown\n");
  await new Promise((resolve) => createInterface({ input: process.stdin }).once("line", resolve));
  await page.reload();
  const second = await trust(page);
  console.log(JSON.stringify({ first, second, errors }));
} finally {
  await browser.close();
}
