// node owlbear.mjs <host-url> <forged-notes.json>
// Owlbear Rodeo's stand-in host (tests/vtt/owlbear-host.html) with the fairroll popover
// for a GM and a player: the GM sets the room up; the player rolls; the GM's popover
// checks the broadcast roll itself; the checkpoints are compared; then a forged one
// reaches the GM over the broadcast, and must raise the alarm. Each player's cosigner key
// goes over the broadcast too: the views are confirmed by the other player's
// cosignature, and one by a key nobody announced (Mallory's) counts for nothing.
// Prints what it saw.
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
  out.setupShown = { gm: await gm.isVisible("#setup"), player: await player.isVisible("#setup") };
  // What the popover offers the GM as the room's server (the one it was served from).
  out.serverOffered = await gm.inputValue("#server");
  await gm.fill("#server", forged.server);
  await gm.fill("#root", forged.root);
  await gm.fill("#table", forged.table);
  await gm.click("#setup button");
  await player.waitForFunction(() => !document.getElementById("roll").disabled, null, { timeout: 10000 });
  out.status = await player.textContent("#status");
  await player.fill("#formula", "2d20kh1 + 5");
  await player.selectOption("#dialect", "roll20");
  await player.click("#roll");
  await player.waitForSelector("#rolls .fairroll-card", { timeout: 15000 });
  out.playerCard = await player.textContent("#rolls li:first-child");
  await gm.waitForSelector("#rolls .fairroll-card", { timeout: 15000 });
  out.gmCard = await gm.textContent("#rolls li:first-child");
  await gm.waitForFunction(() => document.getElementById("agreement").textContent, null, { timeout: 15000 });
  out.agreement = await gm.textContent("#agreement");
  await gm.waitForFunction(() => document.getElementById("confirmed").textContent, null, { timeout: 15000 }).catch(() => {});
  await player.waitForFunction(() => document.getElementById("confirmed").textContent, null, { timeout: 15000 }).catch(() => {});
  out.gmConfirmed = await gm.textContent("#confirmed");
  out.playerConfirmed = await player.textContent("#confirmed");
  // Mallory, whose key nobody announced, cosigns the GM's tree and hands it over.
  await gm.evaluate(() => { document.getElementById("confirmed").textContent = ""; });
  await page.evaluate(async ([server, table]) => {
    const v = await import("/service/fairroll/page/static/verify.js");
    const served = await (await fetch(`${server}/v1/tables/${table}/checkpoint`)).json();
    const body = served.text.slice(0, served.text.indexOf("\n\n") + 2);
    const own = served.text.slice(body.length).split("\n").filter((l) => l.startsWith(`\u2014 ${served.key_name} `));
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const plain = `${body}${own.map((l) => `${l}\n`).join("")}`;
    const note = `${plain}${await v.cosignNote(plain, "Mallory.owlbear", pair.privateKey, raw, Math.floor(Date.now() / 1000))}\n`;
    window.inject("gm", "rodeo.fairroll/checkpoint", { kind: "cosigned", player: "Mallory", table, note });
  }, [forged.server, forged.table]);
  await new Promise((r) => setTimeout(r, 1500));
  out.gmConfirmedAfterMallory = await gm.textContent("#confirmed");
  // The player's roll broadcast again with another face and total (its receipt real):
  // the GM's popover checks it against the log's entry and must not mark it verified.
  const cards = await gm.evaluate(() => document.querySelectorAll("#rolls .fairroll-card").length);
  await page.evaluate(() => {
    const said = JSON.parse(JSON.stringify(window.broadcasts.find((b) => b.channel === "rodeo.fairroll/roll").data));
    said.roll.dice[0].face = said.roll.dice[0].face === 1 ? 2 : 1;
    said.roll.outcome.total += 1;
    window.inject("gm", "rodeo.fairroll/roll", said);
  });
  await gm.waitForFunction((n) => document.querySelectorAll("#rolls .fairroll-card").length > n, cards, { timeout: 15000 }).catch(() => {});
  out.gmEditedCard = await gm.textContent("#rolls li:first-child");
  // The player's real roll broadcast again, first saying it rolled a larger modifier, then
  // as it was: the GM's popover reads the formula from the log, and a roll shown twice is
  // not a new roll.
  const injected = async (edit) => {
    const before = await gm.evaluate(() => document.querySelectorAll("#rolls .fairroll-card").length);
    await page.evaluate((edit) => {
      const said = JSON.parse(JSON.stringify(window.broadcasts.find((b) => b.channel === "rodeo.fairroll/roll").data));
      if (edit) said.formula = "2d20kh1 + 9";
      window.inject("gm", "rodeo.fairroll/roll", said);
    }, edit);
    await gm.waitForFunction((n) => document.querySelectorAll("#rolls .fairroll-card").length > n, before, { timeout: 15000 }).catch(() => {});
    return gm.textContent("#rolls li:first-child");
  };
  out.gmBiggerCard = await injected(true);
  out.gmReplayedCard = await injected(false);
  const size = await gm.evaluate(async ([server, table]) => {
    return (await (await fetch(`${server}/v1/tables/${table}/checkpoint`)).json()).size;
  }, [forged.server, forged.table]);
  out.size = size;
  await page.evaluate(
    ([note, table]) => window.inject("gm", "rodeo.fairroll/checkpoint", { player: "Mallory", table, note }),
    [forged.notes[String(size)], forged.table],
  );
  await gm.waitForFunction(() => !document.getElementById("alarm").hidden, null, { timeout: 15000 }).catch(() => {});
  out.alarm = await gm.textContent("#alarm");
  out.notifications = await page.evaluate(() => window.notifications);
  out.broadcasts = await page.evaluate(() => window.broadcasts);
} catch (error) {
  out.error = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify({ ...out, errors }));
