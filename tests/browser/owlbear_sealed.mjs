// node owlbear_sealed.mjs <host-url> <forged-notes.json>
// Owlbear Rodeo's GM roll in the stand-in host (tests/vtt/owlbear-host.html): the GM sets
// the room up and makes a GM roll (sealed for the GM); the player sees a sealed line,
// checked in the log, never the dice or the opening; the GM reveals it, and the player's
// popover checks the opening against the log's sealed entry. Prints what it saw.
import { readFileSync } from "node:fs";
import { launch } from "./launch.mjs";

const [url, forgedPath] = process.argv.slice(2);
const forged = JSON.parse(readFileSync(forgedPath, "utf8"));
const browser = await launch();
const errors = [];
const out = {};
try {
  const page = await browser.newPage();
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.goto(url);
  const frame = async (id) => {
    const handle = await page.waitForSelector(`#${id}`);
    const f = await handle.contentFrame();
    await f.waitForFunction(() => document.body.dataset.ready === "true", null, { timeout: 20000 });
    return f;
  };
  const gm = await frame("gm");
  const player = await frame("player");
  await gm.fill("#server", forged.server);
  await gm.fill("#root", forged.root);
  await gm.fill("#table", forged.table);
  await gm.click("#setup button");
  await gm.waitForFunction(() => !document.getElementById("roll").disabled, null, { timeout: 10000 });
  out.option = await gm.textContent("#gm-roll-label");
  await gm.fill("#formula", "1d20 + 4");
  await gm.check("#gm-roll");
  await gm.click("#roll");
  await gm.waitForSelector("#rolls .fairroll-card", { timeout: 15000 });
  out.gmCard = await gm.textContent("#rolls li:first-child");
  out.gmButton = await gm.textContent("#rolls li:first-child .fairroll-reveal");
  await player.waitForSelector("#rolls .fairroll-sealed-line", { timeout: 15000 });
  out.playerLine = await player.textContent("#rolls li:first-child");
  out.sealedBroadcast = await page.evaluate(() => window.broadcasts.filter((b) => b.channel === "rodeo.fairroll/sealed").map((b) => b.data));
  out.rollBroadcasts = await page.evaluate(() => window.broadcasts.filter((b) => b.channel === "rodeo.fairroll/roll").length);
  // A broadcast that says the same entry is a blind roll (sealed for the GM only): the line
  // is checked against the entry's audience, not taken on the sender's word.
  const [announced] = out.sealedBroadcast;
  await page.evaluate((data) => window.inject("player", "rodeo.fairroll/sealed", data), { ...announced, player: "Mallory", audience: "blind" });
  await player.waitForFunction(() => [...document.querySelectorAll("#rolls li")].some((li) => li.textContent.includes("Mallory")), null, { timeout: 15000 });
  out.misannounced = await player.evaluate(() => [...document.querySelectorAll("#rolls li")].find((li) => li.textContent.includes("Mallory")).textContent);
  await gm.click("#rolls li:first-child .fairroll-reveal");
  await gm.waitForSelector("#rolls .fairroll-revealed", { timeout: 15000 });
  out.gmRevealed = await gm.textContent("#rolls .fairroll-revealed");
  await player.waitForFunction(() => document.querySelector("#rolls li:first-child .fairroll-from")?.textContent.includes("revealed"), null, { timeout: 15000 });
  out.playerReveal = await player.textContent("#rolls li:first-child");
} catch (error) {
  out.error = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify({ ...out, errors }));
