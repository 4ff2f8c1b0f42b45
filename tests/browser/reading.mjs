// node reading.mjs <url> <wait-for-seq> <width>
// What a player reads on the table page once entry <wait-for-seq> is shown: per entry its
// heading, time, dice rows (labels and dice), fairness line and its link; the header's
// latest roll and checkpoint lines; the face-count charts; the roll form's first mechanic
// and its help text as rendered (links, code); where the first entry stands.
import { launch } from "./launch.mjs";

const [url, waitSeq, width] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: Number(width), height: 800 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url);
  await page.waitForSelector(`li[data-seq="${waitSeq}"] .mark`, { timeout: 30000 });
  await page.waitForFunction((seq) => document.getElementById("trust").textContent.includes(`of ${seq} entries`), Number(waitSeq), { timeout: 30000 });
  await page.waitForSelector("#f-formula", { timeout: 30000 });
  const seen = await page.evaluate(() => ({
    entries: Array.from(document.querySelectorAll("li[data-seq]"), (li) => ({
      seq: Number(li.dataset.seq),
      mechanic: li.dataset.mechanic,
      heading: li.querySelector("h3").textContent,
      datetime: li.querySelector("h3 time")?.getAttribute("datetime") ?? null,
      rows: Array.from(li.querySelectorAll(".dice"), (row) => ({
        label: row.querySelector(".row-label")?.textContent ?? null,
        dice: Array.from(row.querySelectorAll(".die"), (d) => ({ said: d.getAttribute("aria-label"), classes: d.className })),
      })),
      fairness: li.querySelector(".fairness")?.textContent ?? null,
      fairnessLink: li.querySelector(".fairness a")?.getAttribute("href") ?? null,
      mark: li.querySelector(".mark").textContent,
    })),
    latest: document.getElementById("latest").textContent,
    trust: document.getElementById("trust").textContent,
    faces: Array.from(document.querySelectorAll("#faces figure"), (f) => ({
      sides: Number(f.dataset.sides),
      caption: f.querySelector("figcaption").textContent,
      counts: Array.from(f.querySelectorAll("td.number"), (td) => td.title.replace("exactly ", "")),
    })),
    sources: Array.from(document.querySelectorAll("#sources dt"), (dt) => dt.id),
    sourceWords: Object.fromEntries(Array.from(document.querySelectorAll("#sources dt"), (dt) => [dt.id, dt.textContent])),
    firstMechanic: document.querySelector("#mechanic option").value,
    dialects: Array.from(document.querySelectorAll("#f-dialect option"), (o) => o.value),
    formulaHelp: {
      text: document.getElementById("f-formula-hint")?.textContent ?? null,
      links: Array.from(document.querySelectorAll("#f-formula-hint a"), (a) => a.getAttribute("href")),
      code: document.querySelectorAll("#f-formula-hint code").length,
    },
    firstEntryTop: document.querySelector("li[data-seq]").getBoundingClientRect().top,
    latestTop: document.getElementById("latest").getBoundingClientRect().top,
  }));
  console.log(JSON.stringify({ ...seen, errors }));
} finally {
  await browser.close();
}
