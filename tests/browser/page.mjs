// node page.mjs <url> <screenshot.png> <wait-for-seq> [width] [first-seq]
// Opens the table page in Debian's chromium, waits until entry <wait-for-seq> is shown,
// and prints what a player sees: each entry's seq, dice (their labels) and mark. With
// [first-seq], it first waits for that entry and says "shown" on stderr, so a test can
// act while the page stays open.
import { launch } from "./launch.mjs";

const [url, screenshot, waitSeq, width, firstSeq] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: Number(width ?? 900), height: 900 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url);
  if (firstSeq) {
    await page.waitForSelector(`li[data-seq="${firstSeq}"] .mark`, { timeout: 20000 });
    process.stderr.write("shown\n");
  }
  await page.waitForSelector(`li[data-seq="${waitSeq}"] .mark`, { timeout: 20000 });
  const entries = await page.$$eval("li[data-seq]", (items) =>
    items.map((li) => ({
      seq: Number(li.dataset.seq),
      dice: Array.from(li.querySelectorAll(".die"), (d) => d.getAttribute("aria-label")),
      outcome: li.querySelector(".outcome").textContent,
      mark: li.querySelector(".mark").textContent,
      ok: li.querySelector(".mark").classList.contains("ok"),
    })),
  );
  const status = await page.textContent("#status");
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify({ entries, status, errors }));
} finally {
  await browser.close();
}
