// node foundry_sealed.mjs <host-url>
// Foundry's roll modes as sealed rolls, in the Foundry stand-in (tests/vtt/foundry-host.html)
// with the fairroll module, for the GM and two players (Roth rolls, Sue looks on). Roth
// rolls in each mode his chat is set to: a GM roll (whispered to the GM, the opening in
// the message's flags), a blind roll (whispered to the GM, blind: Roth sees a sealed line,
// no dice), a self roll (whispered to Roth alone). The GM's client checks each roll it
// received against the log itself and reveals the GM roll; a message whose opening was
// edited is not marked verified and offers no reveal. Prints what it saw.
import { launch } from "./launch.mjs";

const [url] = process.argv.slice(2);
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
  const roth = await open("Roth");
  const sue = await open("Sue");
  const cards = (page) => page.evaluate(() => [...document.querySelectorAll("#chat .fairroll-card")].map((c) => c.textContent));
  const roll = (mode) => roth.evaluate(async (mode) => {
    game.settings.set("core", "rollMode", mode);
    const roll = await new Roll("1d20 + 2").evaluate();
    const message = await roll.toMessage();
    const record = roll.options.fairroll;
    const item = document.querySelector("#chat li:last-child");
    return {
      mode,
      sealed: record?.checked?.sealed ? { seq: record.checked.sealed.seq, audience: record.checked.sealed.audience } : null,
      verified: record?.checked?.verified ?? null,
      agree: record?.agree ?? null,
      whisper: message.whisper,
      blind: message.blind,
      flagged: (message.flags?.fairroll?.sealed ?? []).map((s) => ({ seq: s.seq, audience: s.audience, opening: Boolean(s.opening?.blind) })),
      card: item?.textContent ?? null,
      dice: item?.querySelector(".fairroll-checked")?.textContent ?? null,
    };
  }, mode);
  out.gm = await roll("gmroll");
  out.blind = await roll("blindroll");
  out.self = await roll("selfroll");
  out.public = await roll("publicroll");
  // The GM's client: each roll whispered to it, checked against the log here.
  await gm.waitForFunction(() => !document.querySelector("#chat .fairroll-checking")
    && document.querySelectorAll("#chat .fairroll-card").length >= 3, null, { timeout: 20000 }).catch(() => {});
  out.gmCards = await cards(gm);
  out.gmAlarms = await gm.evaluate(() => [...document.querySelectorAll("#chat .fairroll-alarm")].map((a) => a.textContent));
  out.gmButtons = await gm.evaluate(() => [...document.querySelectorAll("#chat .fairroll-reveal")].map((b) => b.textContent));
  out.sueCards = await cards(sue);
  out.rothCards = await cards(roth);
  // The GM reveals the GM roll.
  await gm.click(`#chat .fairroll-reveal >> text=Reveal sealed roll #${out.gm.sealed.seq}`);
  await gm.waitForSelector("#chat .fairroll-revealed", { timeout: 20000 });
  out.revealedSaid = await gm.textContent("#chat .fairroll-revealed");
  out.log = await gm.evaluate(async () => {
    const server = game.settings.get("fairroll", "server");
    const table = game.settings.get("fairroll", "table");
    const page = await (await fetch(`${server}/v1/tables/${table}/entries?after=0&limit=100`)).json();
    return page.entries.map((e) => ({ seq: e.seq, mechanic: e.mechanic, audience: e.request?.audience ?? null, reveals: e.request?.seq ?? null }));
  });
  // A message whose opening was edited (another outcome), handed to the GM's client.
  const forged = JSON.parse(JSON.stringify(await roth.evaluate(() => window.created.find((m) => m.flags?.fairroll?.sealed?.[0]?.audience === "blind"))));
  forged.flags.fairroll.sealed[0].opening.outcome.total += 1;
  forged.rolls[0].options.fairroll.checked.roll.outcome.total += 1;
  forged.rolls[0].options.fairroll.checked.sealed.opening.outcome.total += 1;
  forged.id = "forged";
  out.forged = await gm.evaluate(async (message) => {
    const before = document.querySelectorAll("#chat li").length;
    window.receiveChat(message);
    for (let i = 0; i < 100; i++) {
      const item = document.querySelectorAll("#chat li")[before];
      const card = item?.querySelector(".fairroll-card");
      if (card && !card.classList.contains("fairroll-checking")) {
        return { card: card.textContent, reveal: Boolean(item.querySelector(".fairroll-reveal")) };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return null;
  }, forged);
  // A message whose Foundry roll shows another formula and total than the roll it opens
  // (a cheating player's: its own `agree` says they match), handed to the GM's client.
  const relabelled = JSON.parse(JSON.stringify(await roth.evaluate(() => window.created.find((m) => m.flags?.fairroll?.sealed?.[0]?.audience === "gm"))));
  relabelled.rolls[0].formula = `${relabelled.rolls[0].formula} - 5`;
  relabelled.rolls[0].total -= 5;
  relabelled.rolls[0].options.fairroll.agree = true;
  relabelled.id = "relabelled";
  out.relabelled = await gm.evaluate(async (message) => {
    const before = document.querySelectorAll("#chat li").length;
    window.receiveChat(message);
    for (let i = 0; i < 100; i++) {
      const item = document.querySelectorAll("#chat li")[before];
      const card = item?.querySelector(".fairroll-card");
      if (card && !card.classList.contains("fairroll-checking")) return { said: item.textContent };
      await new Promise((r) => setTimeout(r, 100));
    }
    return null;
  }, relabelled);
} catch (error) {
  out.error = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify({ ...out, errors }));
