// node sealed_hostile.mjs <table page url>
// The table page's sealed roll behind a hostile operator, in Debian's chromium: an open
// roll first (honest), then sealed rolls for the GM whose answers the browser's request
// interception rewrites as an operator would: an opening that does not open the log's
// commitment (its outcome edited), an opening of another blind, the receipt of another
// roll (the open one). Prints what the page said of each (its class and text).
import { launch } from "./launch.mjs";

const [url] = process.argv.slice(2);
const browser = await launch();
const out = {};
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url);
  await page.waitForSelector("#mechanic option", { state: "attached" });
  await page.waitForSelector("#sealed");
  const roll = async (audience) => {
    await page.selectOption("#sealed", audience);
    await page.evaluate(() => { document.getElementById("roll-result").className = ""; });
    await page.click("#roll-form button[type=submit]");
    return page.waitForFunction(() => {
      const said = document.getElementById("roll-result");
      return said.className ? { className: said.className, text: said.textContent } : null;
    }, null, { timeout: 30000 }).then((h) => h.jsonValue());
  };
  out.open = await roll("");
  const openSeq = Number(/#(\d+)/.exec(out.open.text)?.[1]);
  let attack = null;
  const REWRITE = {
    "opening-does-not-open": (answer) => {
      answer.opening.outcome.total += 1;
      answer.outcome.total += 1;
    },
    "another-blind": (answer) => { answer.opening.blind = "0f".repeat(32); },
    "receipt-of-another-roll": (answer) => { answer.receipt.seq = openSeq; },
  };
  await page.route("**/v1/dice/rolls", async (route) => {
    if (route.request().method() !== "POST" || !attack) return route.continue();
    const response = await route.fetch();  // the server rolls
    const answer = await response.json();
    REWRITE[attack](answer);
    return route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(answer) });
  });
  for (const name of Object.keys(REWRITE)) {
    attack = name;
    out[name] = await roll("gm");
  }
  attack = null;
  out.errors = errors;
} catch (error) {
  out.error = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
