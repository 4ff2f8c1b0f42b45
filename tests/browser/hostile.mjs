// node hostile.mjs <table page url> <attack>
// The table page in Debian's chromium behind a hostile operator: the browser's request
// interception rewrites the server's answer to the page's roll (`client-seed`: another
// client seed; `nonce-lie`: rolled at N, answered 409 naming N+1; `proof`: a flipped
// proof hash; `note-size`: the note's size edited). One honest roll first, then the
// attacked one; prints what the page said of each (its class and text).
import { launch } from "./launch.mjs";

const [url, attack] = process.argv.slice(2);
const ROLL = "**/v1/tft/contests";

function rewrite(answer) {
  if (attack === "client-seed") answer.session.client_seed = "operator-chosen";
  if (attack === "proof") {
    const [first] = answer.receipt.proof;
    answer.receipt.proof[0] = `${first.startsWith("A") ? "B" : "A"}${first.slice(1)}`;
  }
  if (attack === "note-size") {
    const lines = answer.receipt.checkpoint.split("\n");
    lines[1] = String(Number(lines[1]) + 1);
    answer.receipt.checkpoint = lines.join("\n");
  }
  return answer;
}

const browser = await launch();
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url);
  await page.waitForSelector("#mechanic option", { state: "attached" });
  await page.selectOption("#mechanic", "rollTftContest");
  const roll = async () => {
    await page.evaluate(() => { document.getElementById("roll-result").className = ""; });
    await page.click("#roll-form button[type=submit]");
    return page.waitForFunction(() => {
      const said = document.getElementById("roll-result");
      return said.className ? { className: said.className, text: said.textContent } : null;
    }, null, { timeout: 30000 }).then((h) => h.jsonValue());
  };
  const first = await roll();
  await page.route(ROLL, async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    const response = await route.fetch();  // the server rolls
    const answer = await response.json();
    if (attack === "nonce-lie") {
      const sent = JSON.parse(route.request().postData());
      const lie = { title: "Conflict", detail: "the session is at another nonce", nonce: sent.session.nonce + 1 };
      return route.fulfill({ status: 409, contentType: "application/json", body: JSON.stringify(lie) });
    }
    return route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(rewrite(answer)) });
  });
  const second = await roll();
  console.log(JSON.stringify({ first, second, errors }));
} finally {
  await browser.close();
}
