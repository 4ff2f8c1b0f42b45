// node roll.mjs <url> <screenshot-dir> [width]
// Opens the table page in Debian's chromium and rolls every mechanic from its form, as a
// GM would: pick it, keep the seed's example, press Roll, and wait for the new entry to
// be shown and verified. Prints what was seen for each (odds bars, the result, the entry)
// plus an accessibility survey of the form: unlabelled controls and text contrast.
import { launch } from "./launch.mjs";

const [url, shots, width] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: Number(width ?? 1100), height: 900 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => {
    // The refused roll below answers 422 on purpose; any other console error counts.
    if (message.type() === "error" && !message.text().includes("status of 422")) errors.push(message.text());
  });
  await page.goto(url);
  await page.waitForSelector("#mechanic option", { state: "attached" });
  const keyboard = await byKeyboard(page);
  const mechanics = await page.$$eval("#mechanic option", (options) => options.map((o) => o.value));
  const rolled = [];
  for (const id of mechanics) {
    await page.selectOption("#mechanic", id);
    const odds = await page.waitForFunction(() => {
      const note = document.getElementById("odds-note").textContent;
      if (note.startsWith("Exact odds") || note.startsWith("Estimated odds") || note.startsWith("The API has no odds")) {
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
        fairness: li.querySelector(".fairness")?.textContent ?? null,
      }));
    }
    rolled.push({ id, odds, result, entry, survey });
  }
  const byHand = await formsByHand(page);
  const following = await oddsFollowTheInput(page);
  await page.screenshot({ path: `${shots}/table-page.png`, fullPage: true });
  await page.setViewportSize({ width: 380, height: 800 });
  const phone = { overflow: {}, low: [] };
  for (const id of mechanics) {  // every form fits the phone's width, and stays legible
    await page.selectOption("#mechanic", id);
    await oddsSettled(page);
    const wider = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (wider > 0) phone.overflow[id] = wider;
    phone.low.push(...(await page.evaluate(surveyForm)).low);
  }
  await page.selectOption("#mechanic", "rollTributeTest");
  await oddsReady(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${shots}/table-page-phone.png`, fullPage: false });
  console.log(JSON.stringify({ keyboard, byHand, following, phone, rolled, errors }));
} finally {
  await browser.close();
}

// A roll without a mouse: Tab to the mechanic, pick TFT with End and the arrows, Tab into
// Side A's name, type it, and submit with Enter; then an input the rules refuse (neither an
// attribute nor a dice count), whose problem is shown and whose field takes the focus.
async function byKeyboard(page) {
  const focused = () => page.evaluate(() => document.activeElement?.id ?? null);
  const steps = {};
  // Past the header's links (the latest roll, what is checked), the form comes first.
  steps.tabs = 0;
  do {
    await page.keyboard.press("Tab");
    steps.tabs += 1;
  } while ((await focused()) !== "mechanic" && steps.tabs < 5);
  steps.first = await focused();
  await page.keyboard.press("End");  // the last system; TFT is the last of the rules texts
  for (let i = 0; i < 20; i += 1) {
    if ((await page.$eval("#mechanic", (m) => m.value)) === "rollTftContest") break;
    await page.keyboard.press("ArrowUp");
  }
  await page.waitForFunction(() => document.getElementById("mechanic").value === "rollTftContest");
  await page.keyboard.press("Tab");
  steps.second = await focused();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.type("Keyboard Roth");
  await page.keyboard.press("Enter");
  steps.result = await settled(page);
  // Seq 1 is this browser's seed session, opened for its first roll (seq 2).
  await page.waitForSelector('li[data-seq="2"] .mark');
  steps.asked = await page.textContent('li[data-seq="2"] .asked');
  await page.fill("#f-a-attribute", "");
  await page.focus("#f-a-name");
  await page.keyboard.press("Enter");
  steps.refused = await settled(page);
  steps.invalid = await page.$$eval("[aria-invalid=true]", (nodes) => nodes.map((n) => n.id));
  steps.focusAfterProblem = await focused();
  await page.fill("#f-a-attribute", "16");
  return steps;
}

async function settled(page) {
  await page.waitForFunction(() => {
    const said = document.getElementById("roll-result");
    return said.className && !document.querySelector("#roll-form button[type=submit]").disabled;
  }, null, { timeout: 20000 });
  const seen = await page.$eval("#roll-result", (said) => ({ ok: said.className === "ok", text: said.textContent }));
  await page.$eval("#roll-result", (said) => { said.className = ""; });  // ready for the next one
  return seen;
}

async function oddsSettled(page) {
  await page.waitForFunction(() => {
    const note = document.getElementById("odds-note").textContent;
    return note.startsWith("Exact odds") || note.startsWith("Estimated odds") || note.startsWith("No odds");
  });
  await page.waitForTimeout(300);  // past the debounce: the note is for the input as it is
  await page.waitForFunction(() => !document.getElementById("odds-note").textContent.startsWith("Working"));
  return page.textContent("#odds-note");
}

async function rolledEntry(page) {
  await page.click("#roll-form button[type=submit]");
  const result = await settled(page);
  const seq = /^Rolled #(\d+)/.exec(result.text)?.[1];
  if (!seq) return { result };
  await page.waitForSelector(`li[data-seq="${seq}"] .mark`);
  return {
    result,
    asked: await page.textContent(`li[data-seq="${seq}"] .asked`),
    ok: await page.$eval(`li[data-seq="${seq}"] .mark`, (m) => m.classList.contains("ok")),
  };
}

// The parts of a form that change shape: an optional group switched on (Tribute's
// opponent instead of a difficulty) and fighters added and removed (a battle of three).
async function formsByHand(page) {
  const seen = {};
  // Labels are the spec's titles; an item field suggests what the server's catalogue lists.
  await page.selectOption("#mechanic", "rollFastBattleAttack");
  await oddsReady(page);
  seen.labels = await page.$$eval('label[for^="f-attacker-"]', (labels) => labels.map((l) => l.textContent));
  seen.weapons = await page.$eval("#f-attacker-weapon", (input) =>
    Array.from(input.list?.options ?? [], (option) => option.value));

  await page.selectOption("#mechanic", "rollTributeTest");
  await oddsReady(page);
  seen.opponentDisabled = await page.$eval("#f-opponent-rank", (input) => input.disabled);
  await page.check("#f-opponent-on");
  await page.fill("#f-opponent-name", "the GM");
  await page.fill("#f-opponent-rank", "1");
  await page.fill("#f-difficulty", "");
  seen.tributeOdds = await oddsSettled(page);
  seen.tribute = await rolledEntry(page);

  await page.selectOption("#mechanic", "fightFastBattle");
  await oddsReady(page);
  await page.click("text=Add fighter");
  seen.rows = await page.$$eval("#fields fieldset.repeated > fieldset.object > legend", (l) => l.map((n) => n.textContent));
  seen.focusAfterAdd = await page.evaluate(() => document.activeElement?.id ?? null);
  await page.keyboard.type("Third");
  seen.battleOdds = await oddsSettled(page);
  seen.battle = await rolledEntry(page);
  await page.focus("text=Remove fighter 3");
  await page.keyboard.press("Enter");
  seen.rowsAfterRemove = await page.$$eval("#fields fieldset.repeated > fieldset.object > legend", (l) => l.map((n) => n.textContent));
  seen.focusAfterRemove = await page.evaluate(() => document.activeElement?.textContent ?? null);
  seen.battleOddsAfterRemove = await oddsSettled(page);
  return seen;
}

async function oddsReady(page) {
  await page.waitForFunction(() => /^(Exact|Estimated) odds/.test(document.getElementById("odds-note").textContent));
}

function barValue(page, label) {
  return page.$$eval("#odds tr", (rows, wanted) => {
    const row = rows.find((r) => r.querySelector("th").textContent === wanted);
    return row ? row.querySelector(".number").textContent : null;
  }, label);
}

// The odds follow the form: Roth's attribute 16 (7 dice with his talents) against
// Sheena's 12, then typed down to 8 (4 dice) — the chart changes without a click.
async function oddsFollowTheInput(page) {
  await page.selectOption("#mechanic", "rollTftContest");
  await oddsReady(page);
  const before = await barValue(page, "Roth wins");
  const caption = () => page.textContent("#odds figcaption");
  const captionBefore = await caption();
  await page.fill("#f-a-attribute", "8");
  await page.waitForFunction((old) => document.querySelector("#odds figcaption")?.textContent !== old, captionBefore);
  await oddsReady(page);
  const seen = { before, after: await barValue(page, "Roth wins"), captionBefore, captionAfter: await caption() };
  await page.fill("#f-a-attribute", "16");  // and back to the worked example
  await page.waitForFunction((old) => document.querySelector("#odds figcaption")?.textContent === old, captionBefore);
  await oddsReady(page);
  seen.restored = await barValue(page, "Roth wins");
  return seen;
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
