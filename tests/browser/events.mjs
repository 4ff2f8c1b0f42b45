// node events.mjs <table page url> <roll url on another replica> <table>
// A real EventSource in chromium: it follows the table from the start while two more rolls
// are made on another replica; prints the ids and words it got, and the page's status.
import { launch } from "./launch.mjs";

const [pageUrl, rollUrl, table] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(pageUrl);
  const listening = page.evaluate((name) => new Promise((resolve) => {
    const got = { ids: [], words: [] };
    const source = new EventSource(`/v1/tables/${encodeURIComponent(name)}/events?after=0`);
    source.addEventListener("entry", (event) => {
      got.ids.push(event.lastEventId);
      got.words.push(JSON.parse(event.data).words);
      if (got.ids.length === 3) {
        source.close();
        resolve(got);
      }
    });
  }), table);
  await page.waitForTimeout(500);
  for (let i = 0; i < 2; i++) {
    const body = { table, a: { attribute: 12 }, b: { attribute: 9 } };
    await fetch(rollUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  }
  const got = await listening;
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("(events)"), null, { timeout: 20000 });
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("3 entries"), null, { timeout: 20000 });
  const status = await page.textContent("#status");
  console.log(JSON.stringify({ ...got, status, errors }));
} finally {
  await browser.close();
}
