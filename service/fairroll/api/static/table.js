// The table page: a table's rolls, newest first, live; every entry verified here, in the
// browser, with WebCrypto (verify.js) — never on the server's word.
import { importKeys, verifyEntries } from "./verify.js";
import { startRollPanel } from "./roll.js";
import { describe, dieInWords } from "./words.js";

const PIPS = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];
const main = document.querySelector("main[data-table]");
const table = main.dataset.table;
const list = document.getElementById("entries");
const status = document.getElementById("status");
let after = 0;
let lastHash = null;
let keys = null;

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

function dieElement(die) {
  const words = dieInWords(die);
  const face = die.sides === 2 ? (die.face === 2 ? "H" : "T") : die.sides === 6 ? PIPS[die.face - 1] : String(die.face);
  const kind = die.sides === 2 ? "coin" : `d${die.sides}`;
  return element("span", { class: `die ${kind}`, role: "img", "aria-label": `${die.group}: ${words}`, title: `${die.group}: ${words}` }, face);
}

function entryElement(entry, result) {
  const [asked, came] = describe(entry.mechanic, entry.request, entry.outcome);
  const mark = result.ok
    ? element("p", { class: "mark ok" }, `✓ verified: hash, link, signature${result.checks.dice === "re-derived" ? ", dice re-derived from the seed" : ""}`)
    : element("p", { class: "mark bad", role: "alert" }, `✗ ${result.problems.join("; ")}`);
  const dice = element("p", { class: "dice" });
  let group = null;
  for (const die of entry.dice) {
    if (die.group !== group) {  // a visible label where each group of dice starts
      group = die.group;
      dice.append(element("span", { class: "group", "aria-hidden": "true" }, `${group}:`), " ");
    }
    dice.append(dieElement(die), " ");
  }
  return element(
    "li",
    { "data-seq": String(entry.seq), class: result.ok ? "entry" : "entry tampered" },
    element("h3", {}, `#${entry.seq} · ${entry.mechanic}`, element("small", {}, ` ${entry.time} · ${entry.source}`)),
    element("p", { class: "asked" }, asked),
    dice,
    element("p", { class: "outcome" }, came),
    mark,
  );
}

async function poll() {
  try {
    const response = await fetch(`/v1/tables/${encodeURIComponent(table)}/entries?after=${after}&limit=100`);
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    const page = await response.json();
    if (page.entries.length) {
      if (lastHash === null && page.entries[0].seq > 1) {
        // An archived table starts after its signed base: the first entry chains on it.
        const base = await (await fetch(`/v1/tables/${encodeURIComponent(table)}/base`)).json();
        lastHash = base.head_hash;
        after = base.size;
      }
      const previous = lastHash ?? "0".repeat(64);
      if (page.entries.some((entry) => !keys.has(entry.key_id))) {
        keys = await readKeys();  // the server rotated its key while the page was open
      }
      const results = await verifyEntries(page.entries, keys, previous, after);
      page.entries.forEach((entry, i) => list.prepend(entryElement(entry, results[i])));
      const last = page.entries.at(-1);
      after = last.seq;
      lastHash = last.entry_hash;
    }
    const bad = list.querySelectorAll(".tampered").length;
    status.textContent = `${after} ${after === 1 ? "entry" : "entries"}, live${bad ? ` — ${bad} failed verification` : ""}`;
    if (page.next_after !== null) return poll();
  } catch (error) {
    status.textContent = `Cannot read the table: ${error.message}`;
  }
}

let wake = null;  // a roll made on this page reads the table at once, not at the next tick
startRollPanel({ table, onRolled: () => wake?.() }).catch((error) => {
  document.getElementById("odds-note").textContent = `Cannot build the roll form: ${error.message}`;
});
async function readKeys() {
  return importKeys(await (await fetch("/v1/keys")).json());
}

keys = await readKeys();
for (;;) {  // one read at a time: a slow answer never overlaps the next
  await poll();
  await new Promise((resolve) => {
    wake = resolve;
    setTimeout(resolve, 1500);
  });
}
