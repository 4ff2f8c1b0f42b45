// node shoot.mjs <url> <screenshot.png> <width> <height> <wait-for-seq> [full]
// The table page as a player sees it at one width, once entry <wait-for-seq> is shown
// and verified: the first screen ([full]: the whole page). Prints what the page shows.
import { launch } from "./launch.mjs";

const [url, screenshot, width, height, waitSeq, full] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: Number(width), height: Number(height) } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url);
  await page.waitForSelector(`li[data-seq="${waitSeq}"] .mark`, { timeout: 30000 });
  await page.waitForFunction(() => document.getElementById("trust").textContent !== "", null, { timeout: 30000 });
  await page.waitForTimeout(500);  // the odds beside the form, drawn after the spec is read
  const seen = await page.evaluate(() => ({
    status: document.getElementById("status").textContent,
    trust: document.getElementById("trust").textContent,
    headings: Array.from(document.querySelectorAll("li[data-seq] h3"), (h) => h.textContent),
    firstEntryTop: document.querySelector("li[data-seq]")?.getBoundingClientRect().top ?? null,
  }));
  await page.screenshot({ path: screenshot, fullPage: full === "full" });
  console.log(JSON.stringify({ ...seen, errors }));
} finally {
  await browser.close();
}
