// node roll.mjs <url> <screenshot-dir> [width]
// Opens the table page in Debian's chromium and rolls every mechanic from its form, as a
// GM would: pick it, keep the seed's example, press Roll, and wait for the new entry to
// be shown and verified. Prints what was seen for each (odds bars, the result, the entry)
// plus an accessibility survey of the form: unlabelled controls and text contrast.
import { chromium } from "playwright-core";

const [url, shots, width] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: Number(width ?? 1100), height: 900 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  await page.goto(url);
  await page.waitForSelector("#mechanic option", { state: "attached" });
  const mechanics = await page.$$eval("#mechanic option", (options) => options.map((o) => o.value));
  const rolled = [];
  for (const id of mechanics) {
    await page.selectOption("#mechanic", id);
    const odds = await page.waitForFunction(() => {
      const note = document.getElementById("odds-note").textContent;
      if (note.startsWith("Exact odds") || note.startsWith("The API has no odds")) {
        return { note, bars: document.querySelectorAll("#odds table.chart tr").length };
      }
      return null;
    }, null, { timeout: 20000 }).then((handle) => handle.jsonValue());
    const survey = await page.evaluate(surveyForm);
    await page.click("#roll-form button[type=submit]");
    const result = await page.waitForFunction(() => {
      const said = document.getElementById("roll-result");
      return said.className ? { ok: said.className === "ok", text: said.textContent } : null;
    }, null, { timeout: 20000 }).then((handle) => handle.jsonValue());
    let entry = null;
    const seq = /^Rolled #(\d+)/.exec(result.text)?.[1];
    if (seq) {
      await page.waitForSelector(`li[data-seq="${seq}"] .mark`, { timeout: 20000 });
      entry = await page.$eval(`li[data-seq="${seq}"]`, (li) => ({
        heading: li.querySelector("h3").textContent,
        dice: Array.from(li.querySelectorAll(".die"), (d) => d.getAttribute("aria-label")),
        outcome: li.querySelector(".outcome").textContent,
        ok: li.querySelector(".mark").classList.contains("ok"),
        mark: li.querySelector(".mark").textContent,
      }));
    }
    rolled.push({ id, odds, result, entry, survey });
  }
  await page.selectOption("#mechanic", "rollTftContest");
  await page.waitForFunction(() => document.getElementById("odds-note").textContent.startsWith("Exact odds"));
  await page.screenshot({ path: `${shots}/table-page.png`, fullPage: true });
  console.log(JSON.stringify({ rolled, errors }));
} finally {
  await browser.close();
}

// Runs in the page: every form control has a label, and every piece of visible text has
// WCAG AA contrast against the background it is drawn on.
function surveyForm() {
  const unlabelled = [];
  for (const control of document.querySelectorAll("input, select, button")) {
    const named = control.labels?.length || control.getAttribute("aria-label") || (control.tagName === "BUTTON" && control.textContent.trim());
    if (!named) unlabelled.push(control.id || control.outerHTML.slice(0, 60));
  }
  const rgb = (text) => text.match(/[\d.]+/g).map(Number);
  const luminance = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const background = (node) => {
    for (let at = node; at; at = at.parentElement) {
      const colour = rgb(getComputedStyle(at).backgroundColor);
      if (colour.length < 4 || colour[3] > 0) return colour.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const low = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    const host = text.parentElement;
    if (!text.textContent.trim() || !host.checkVisibility() || host.closest(".visually-hidden")) continue;
    const style = getComputedStyle(host);
    const fg = luminance(rgb(style.color));
    const bg = luminance(background(host));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) low.push({ text: text.textContent.trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100 });
  }
  return { unlabelled, low };
}
