// node sealed_page.mjs <table page url> <screenshot.png>
// The table page's sealed rolls, in Debian's chromium: the player picks "roll sealed,
// for the GM" and rolls (its first mechanic, a dice formula); the roll shows to the
// roller, checked, with a reveal button; the list shows a sealed line with no dice; then a
// blind roll's line; then the player reveals the blind one: the reveal entry shows its
// dice and a mark that the opening matched, and the sealed line says it was revealed;
// then the GM roll from its own line, whose opening this browser kept.
// Prints what it saw.
import { launch } from "./launch.mjs";

const [url, shot] = process.argv.slice(2);
const browser = await launch();
const errors = [];
const out = {};
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.goto(url);
  await page.waitForSelector("#mechanic option", { state: "attached" });
  await page.waitForSelector("#sealed");
  out.choices = await page.$$eval("#sealed option", (options) => options.map((o) => [o.value, o.textContent]));
  out.label = await page.$eval("label[for=sealed]", (l) => l.textContent);
  const roll = async (audience) => {
    await page.selectOption("#sealed", audience);
    await page.evaluate(() => { document.getElementById("roll-result").className = ""; });
    await page.click("#roll-form button[type=submit]");
    const result = await page.waitForFunction(() => {
      const said = document.getElementById("roll-result");
      return said.className && said.className !== "" && !said.textContent.startsWith("Rolling")
        ? { className: said.className, text: said.textContent } : null;
    }, null, { timeout: 20000 }).then((h) => h.jsonValue());
    const seq = Number(/#(\d+)/.exec(result.text)?.[1]);
    await page.waitForSelector(`li[data-seq="${seq}"] .mark`, { timeout: 20000 });
    const line = await page.$eval(`li[data-seq="${seq}"]`, (li) => ({
      className: li.className,
      asked: li.querySelector(".asked").textContent,
      outcome: li.querySelector(".outcome").textContent,
      dice: li.querySelectorAll(".die").length,
      mark: li.querySelector(".mark").textContent,
    }));
    return { result, seq, line };
  };
  // The GM roll's answer is held back until its line has come over the live events, so
  // the line is drawn before this browser keeps the opening (the order a slow answer
  // gives): the line must still offer the reveal.
  let heldBack = false;
  await page.route("**/v1/**", async (route) => {
    const request = route.request();
    if (heldBack || request.method() !== "POST" || !(request.postData() ?? "").includes('"sealed"')) return route.continue();
    heldBack = true;
    const response = await route.fetch();
    const { receipt } = await response.json();
    await page.waitForSelector(`li[data-seq="${receipt.seq}"] .mark`, { timeout: 20000 }).catch(() => {});
    out.lineBeforeAnswer = await page.$(`li[data-seq="${receipt.seq}"]`).then((li) => li !== null);
    await route.fulfill({ response });
  });
  out.gm = await roll("gm");
  await page.unroute("**/v1/**");
  out.gmReveal = await page.$eval("#roll-result button", (b) => b.textContent);
  out.kept = await page.evaluate(() => Object.keys(JSON.parse(localStorage.getItem(`fairroll:sealed:${document.querySelector("main").dataset.table}`) ?? "{}")));
  out.blind = await roll("blind");
  // The blind roll revealed from the page; the GM roll stays sealed.
  await page.click("#roll-result button");
  // The reveal of this blind roll (a table holds other reveals when its Redis is reused).
  const revealOf = `li[data-mechanic='sealed.reveal'][data-reveals='${out.blind.seq}']`;
  await page.waitForFunction((seq) => Array.from(document.querySelectorAll("li[data-mechanic='sealed.reveal']")).some((li) => {
    if (!li.querySelector(".mark") || !li.querySelector(".asked")?.textContent.includes(`#${seq} revealed`)) return false;
    li.dataset.reveals = String(seq);
    return true;
  }), out.blind.seq, { timeout: 30000 });
  out.revealed = await page.$eval(revealOf, (li) => ({
    seq: Number(li.dataset.seq),
    className: li.className,
    asked: li.querySelector(".asked").textContent,
    dice: Array.from(li.querySelectorAll(".die"), (d) => d.getAttribute("aria-label")),
    mark: li.querySelector(".mark").textContent,
    ok: li.querySelector(".mark").classList.contains("ok"),
  }));
  await page.waitForFunction((seq) => document.querySelector(`li[data-seq="${seq}"]`)?.classList.contains("revealed"), out.blind.seq, { timeout: 10000 }).catch(() => {});
  out.blindAfter = await page.$eval(`li[data-seq="${out.blind.seq}"]`, (li) => ({
    className: li.className,
    outcome: li.querySelector(".outcome").textContent,
    dice: li.querySelectorAll(".die").length,
  }));
  out.gmLineButton = await page.$eval(`li[data-seq="${out.gm.seq}"] button.reveal`, (b) => b.textContent).catch(() => null);
  out.gmAfter = await page.$eval(`li[data-seq="${out.gm.seq}"]`, (li) => ({ className: li.className, dice: li.querySelectorAll(".die").length }));
  out.heading = await page.$eval(`li[data-seq="${out.gm.seq}"] h3`, (h) => h.textContent);
  out.formFields = await page.$$eval("#fields [id]", (nodes) => nodes.map((n) => n.id).filter((id) => /sealed|blind|audience/i.test(id)));
  // The GM roll revealed later, from its own line (this browser kept its opening).
  await page.click(`li[data-seq="${out.gm.seq}"] button.reveal`);
  await page.waitForFunction((seq) => document.querySelector(`li[data-seq="${seq}"]`)?.classList.contains("revealed"), out.gm.seq, { timeout: 20000 });
  out.gmRevealed = await page.$eval(`li[data-seq="${out.gm.seq}"]`, (li) => ({
    className: li.className, outcome: li.querySelector(".outcome").textContent, dice: li.querySelectorAll(".die").length,
    button: Boolean(li.querySelector("button.reveal")),
  }));
  out.keptAfter = await page.evaluate(() => Object.keys(JSON.parse(localStorage.getItem(`fairroll:sealed:${document.querySelector("main").dataset.table}`) ?? "{}")));
  await page.screenshot({ path: shot, fullPage: false });
} catch (error) {
  out.error = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify({ ...out, errors }));
