// node foundry.mjs <host-url> <forged-notes.json>
// Two players in the Foundry stand-in (tests/vtt/foundry-host.html) with the fairroll
// module: the GM rolls; both see the chat card; the player's client compares the GM's
// shared checkpoint; then a checkpoint the operator signed for another tree of the same
// size reaches the player over the socket, and must raise the alarm. Each player's
// cosigner key goes over the socket too: the views are confirmed by the other player's
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
  const context = await browser.newContext();
  const open = async (user) => {
    const page = await context.newPage();
    page.on("pageerror", (error) => errors.push(`${user}: ${error}`));
    page.on("console", (m) => m.type() === "error" && errors.push(`${user}: ${m.text()}`));
    await page.goto(`${url}&user=${encodeURIComponent(user)}`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
    return page;
  };
  const gm = await open("Gamemaster");
  const player = await open("Roth");
  out.server = await gm.evaluate(() => game.settings.get("fairroll", "server"));
  out.rolls = [];
  for (const formula of ["4d6kh3 + 2", "1d10r1", "5d10x10", "2d20kh"]) {
    const seen = await gm.evaluate(async (formula) => {
      const roll = await new Roll(formula).evaluate();
      await roll.toMessage();
      const record = roll.options.fairroll;
      window.lastRecord = record?.checked;
      const card = document.querySelector("#chat li:last-child .fairroll-card");
      return {
        formula,
        foundryTotal: roll.total,
        fairrollTotal: record?.checked?.roll.outcome.total,
        agree: record?.agree,
        verified: record?.checked?.verified,
        faces: record?.checked?.faces,
        served: record?.checked?.roll.dice.map((d) => d.face),
        card: card?.textContent ?? null,
        mark: card?.querySelector(".fairroll-verified")?.textContent ?? null,
      };
    }, formula);
    out.rolls.push(seen);
  }
  // The player compares each checkpoint the GM's witness shared.
  await player.waitForFunction(() => window.compared >= 1 || document.body.dataset.compared, null, { timeout: 1 }).catch(() => {});
  await new Promise((r) => setTimeout(r, 1500));
  out.playerAlarmsBefore = await player.evaluate(() => [...window.alarms]);
  // The player's own check of each of the GM's rolls (a chat card drawn on the player's side).
  await player.waitForFunction(() => !document.querySelector("#chat .fairroll-checking")
    && document.querySelectorAll("#chat .fairroll-card").length >= 4, null, { timeout: 15000 }).catch(() => {});
  out.playerCards = await player.evaluate(() => [...document.querySelectorAll("#chat .fairroll-card")].map((c) => c.textContent));
  // A roller's record edited (another face, another total), its receipt real: the player's
  // client must not mark it verified.
  out.editedCard = await player.evaluate(async (record) => {
    const checked = JSON.parse(JSON.stringify(record));
    checked.roll.dice[0].face = checked.roll.dice[0].face === 1 ? 2 : 1;
    checked.roll.outcome.total += 1;
    checked.verified = true;
    const before = document.querySelectorAll("#chat .fairroll-card").length;
    window.receiveChat({ id: "forged", content: "", rolls: [{ formula: "2d20kh", total: checked.roll.outcome.total, options: { fairroll: { checked, agree: true } } }] });
    for (let i = 0; i < 100; i++) {
      const last = document.querySelectorAll("#chat .fairroll-card")[before];
      if (last && !last.classList.contains("fairroll-checking")) return last.textContent;
      await new Promise((r) => setTimeout(r, 100));
    }
    return null;
  }, await gm.evaluate(() => window.lastRecord));
  // The GM's last record, real and unedited, under a message of the player's making:
  // Foundry showing a larger modifier and total than the log's roll (the roller's `agree`
  // set), then the same roll shown again in a message of its own.
  const shownBy = async (message) => player.evaluate(async (message) => {
    const before = document.querySelectorAll("#chat .fairroll-card").length;
    window.receiveChat(message);
    for (let i = 0; i < 100; i++) {
      const last = document.querySelectorAll("#chat .fairroll-card")[before];
      if (last && !last.classList.contains("fairroll-checking")) return last.textContent;
      await new Promise((r) => setTimeout(r, 100));
    }
    return null;
  }, message);
  const real = await gm.evaluate(() => window.lastRecord);
  out.biggerCard = await shownBy({ id: "bigger", content: "", rolls: [{ formula: "2d20kh + 5", total: real.roll.outcome.total + 5, options: { fairroll: { checked: real, agree: true } } }] });
  out.replayedCard = await shownBy({ id: "replayed", content: "", rolls: [{ formula: "2d20kh", total: real.roll.outcome.total, options: { fairroll: { checked: real, agree: true } } }] });
  out.gmInfos = await gm.evaluate(() => [...window.infos]);
  out.playerInfos = await player.evaluate(() => [...window.infos]);
  // Mallory, whose key nobody announced, cosigns the GM's tree and hands it over.
  await gm.evaluate(async ([server, table]) => {
    const v = await import("/service/fairroll/page/static/verify.js");
    const served = await (await fetch(`${server}/v1/tables/${table}/checkpoint`)).json();
    const body = served.text.slice(0, served.text.indexOf("\n\n") + 2);
    const own = served.text.slice(body.length).split("\n").filter((l) => l.startsWith(`\u2014 ${served.key_name} `));
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const plain = `${body}${own.map((l) => `${l}\n`).join("")}`;
    const note = `${plain}${await v.cosignNote(plain, "Mallory.foundry", pair.privateKey, raw, Math.floor(Date.now() / 1000))}\n`;
    window.infos.length = 0;
    window.deliver("module.fairroll", { kind: "cosigned", player: "Mallory", table, note });
  }, [forged.server, forged.table]);
  await new Promise((r) => setTimeout(r, 1500));
  out.gmInfosAfterMallory = await gm.evaluate(() => [...window.infos]);
  const size = await gm.evaluate(async ([server, table]) => {
    const served = await (await fetch(`${server}/v1/tables/${table}/checkpoint`)).json();
    return served.size;
  }, [forged.server, forged.table]);
  out.size = size;
  await player.evaluate(
    ([note, table]) => window.deliver("module.fairroll", { player: "Mallory", table, note }),
    [forged.notes[String(size)], forged.table],
  );
  await player.waitForFunction(() => window.alarms.length > 0, null, { timeout: 15000 }).catch(() => {});
  out.playerAlarms = await player.evaluate(() => [...window.alarms]);
  out.playerChat = await player.evaluate(() => document.querySelector("#chat")?.textContent ?? "");
} catch (error) {
  out.error = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify({ ...out, errors }));
