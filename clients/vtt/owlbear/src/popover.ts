// fairroll for Owlbear Rodeo: a popover that rolls on the room's table, broadcasts each
// roll to the room, and shows every player's own verification of it.
//
// The room's settings (the fairroll server, its root key id obtained out of band, and the
// table, one per room) live in the room's metadata, set by the GM. A roll is made in
// this player's own seed session (fair by default), checked here, and broadcast; each
// player who receives it checks it themselves (the entry, its receipt, the key chain to
// the root they pinned) and shows their own mark. Each player's witness verifies the
// table's checkpoint after every roll and broadcasts it; every other player compares it
// with what they verified, over Owlbear's broadcast, which the dice operator does not
// run, and raises an alarm where they differ.
//
// A GM roll is a sealed roll for the GM (docs/audit.md, "Sealed rolls"): the log holds
// only its commitment, and the room is told only that a sealed roll was made (its entry,
// checked by each player in the log). Owlbear's broadcast reaches every player, so the
// opening never goes over it: the roller (the GM, behind the screen, as a rule) keeps it
// and reveals the roll when it likes; the reveal is broadcast and checked by everyone.
//
// Each player's cosigner key is announced over the room's broadcast (OBR.broadcast) and
// the keys the others announce there are pinned. A player who agrees with a broadcast
// checkpoint answers with its own cosignature of that tree; the view is "confirmed by"
// a player only under a key so announced, never one the fairroll server merely lists.

import { AUDIENCE_WORDS } from "@fairroll/client";
import OBR from "@owlbear-rodeo/sdk";
import {
  alarm,
  card,
  type CheckedRoll,
  confirmation,
  type CosignerAnnouncement,
  type Dialect,
  escaped,
  FairTable,
  type Sealed,
  type SharedCheckpoint,
} from "../../shared/fair-table.js";

const KEY = "rodeo.fairroll/settings";
const ROLLS = "rodeo.fairroll/roll";
const CHECKPOINTS = "rodeo.fairroll/checkpoint";
const COSIGNERS = "rodeo.fairroll/cosigner";
const SEALED = "rodeo.fairroll/sealed";
const REVEALED = "rodeo.fairroll/revealed";

interface RoomSettings {
  server: string;
  root: string;
  table: string;
  dialect: Dialect;
}

interface Broadcast {
  player: string;
  formula: string;
  roll: CheckedRoll["roll"];
}

/** A sealed roll as the room hears of it: who made it, for whom, and its receipt (no
 * dice, no opening). */
interface SealedBroadcast {
  player: string;
  seq: number;
  audience: Sealed["audience"];
  receipt: CheckedRoll["roll"]["receipt"];
}

/** A sealed roll revealed: its opening is public now (in the log's reveal statement). */
interface RevealBroadcast {
  player: string;
  sealed: Sealed;
  roll: CheckedRoll["roll"];
  revealedAt: number;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
let table: FairTable | null = null;
let me = "";

function show(html: string): void {
  const item = document.createElement("li");
  item.innerHTML = html;
  $("rolls").prepend(item);
}

function settingsOf(metadata: Record<string, unknown>): RoomSettings | null {
  const said = metadata[KEY] as Partial<RoomSettings> | undefined;
  if (!said?.server || !said.root) return null;
  return { server: said.server, root: said.root, table: said.table || `owlbear-${OBR.room.id}`, dialect: said.dialect ?? "roll20" };
}

function use(settings: RoomSettings | null): void {
  table = settings ? new FairTable({ server: settings.server, table: settings.table, root: settings.root, player: `${me}.owlbear` }) : null;
  $("status").textContent = settings ? `Table ${settings.table} on ${settings.server}, root ${settings.root}` : "The GM has not set up fairroll for this room yet.";
  $<HTMLSelectElement>("dialect").value = settings?.dialect ?? "roll20";
  $<HTMLButtonElement>("roll").disabled = settings === null;
  $("confirmed").textContent = "";
  void announce();
}

/** The fairroll server this extension was installed from: a fairroll server serves the
 * popover (GET /integrations/owlbear/popover.html) with its own URL in a
 * `<meta name="fairroll-server">`, the GM's default for the room; a site served
 * elsewhere has none. */
function installedFrom(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="fairroll-server"]')?.content ?? "";
}

/** Announce this player's cosigner key to the room. */
async function announce(): Promise<void> {
  if (!table) return;
  try {
    await OBR.broadcast.sendMessage(COSIGNERS, await table.announcement(), { destination: "REMOTE" });
  } catch (error) {
    await raise(`fairroll: no cosigner key: ${error instanceof Error ? error.message : error}`);
  }
}

/** Another player's cosigner key, pinned; a key not known before is answered with this
 * player's own, so that whoever joined later learns it too. */
async function pinned(said: CosignerAnnouncement): Promise<void> {
  if (!table) return;
  if (await table.pin(said)) await announce();
}

function confirmed(size: number, by: string[]): void {
  const said = confirmation(size, by, "Owlbear");
  if (said) $("confirmed").textContent = said;
}

async function shareCheckpoint(): Promise<void> {
  if (!table) return;
  try {
    const mine = await table.witnessCheckpoint();
    const shared: SharedCheckpoint = { kind: "checkpoint", player: mine.player, table: mine.table, note: mine.note };
    await OBR.broadcast.sendMessage(CHECKPOINTS, shared, { destination: "REMOTE" });
    confirmed(mine.size, mine.confirmedBy);
  } catch (error) {
    await raise(`fairroll: this table's checkpoint does not check out: ${error instanceof Error ? error.message : error}`);
  }
}

async function raise(said: string): Promise<void> {
  const box = $("alarm");
  box.hidden = false;
  box.textContent = said;
  await OBR.notification.show(said, "ERROR");
}

async function roll(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  if (!table) return;
  const formula = $<HTMLInputElement>("formula").value;
  const dialect = $<HTMLSelectElement>("dialect").value as Dialect;
  const sealed = $<HTMLInputElement>("gm-roll").checked;
  try {
    const checked = await table.roll(formula, dialect, sealed ? "gm" : undefined);
    show(card(checked, "you"));
    if (checked.sealed) {
      $("rolls").querySelector("li")?.append(revealButton(checked));
      const said: SealedBroadcast = { player: me, seq: checked.sealed.seq, audience: checked.sealed.audience, receipt: checked.roll.receipt };
      await OBR.broadcast.sendMessage(SEALED, said, { destination: "REMOTE" });
    } else {
      const said: Broadcast = { player: me, formula, roll: checked.roll };
      await OBR.broadcast.sendMessage(ROLLS, said, { destination: "REMOTE" });
    }
    await shareCheckpoint();
  } catch (error) {
    show(`<div class="fairroll-card fairroll-refused">${escaped(error instanceof Error ? error.message : String(error))}</div>`);
  }
}

/** The seq of each roll another player broadcast, and who broadcast it first. */
const shownBy = new Map<number, string>();

async function received(said: Broadcast): Promise<void> {
  if (!table) return;
  // Another player's roll, checked here: this player's own verdict, not theirs. The
  // formula it says it rolled and its total are the log's roll at that seq, and a seq
  // another broadcast showed already is a roll shown twice.
  const seq = said.roll.receipt.seq;
  let checked = await table.check(seq, said.roll.receipt, said.roll, { formula: said.formula, total: said.roll.outcome.total });
  if (checked.verified) {
    const first = shownBy.get(seq);
    if (first !== undefined) checked = { verified: false, problem: `roll #${seq} was shown before, by ${first}` };
    else shownBy.set(seq, said.player);
  }
  show(`<div class="fairroll-from">${escaped(said.player)} rolled</div>${card({ roll: said.roll, faces: [], ...checked }, "you")}`);
}

/** Reveal the roller's own sealed roll: published on the log, then told to the room. */
function revealButton(checked: CheckedRoll): HTMLElement {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "fairroll-reveal";
  button.textContent = `Reveal sealed roll #${checked.sealed!.seq}`;
  button.addEventListener("click", () => {
    button.disabled = true;
    void (async () => {
      try {
        const revealedAt = await table!.reveal(checked.sealed!);
        button.replaceWith(Object.assign(document.createElement("div"), { className: "fairroll-revealed", textContent: `revealed on the table's log at entry ${revealedAt}` }));
        const said: RevealBroadcast = { player: me, sealed: checked.sealed!, roll: checked.roll, revealedAt };
        await OBR.broadcast.sendMessage(REVEALED, said, { destination: "REMOTE" });
      } catch (error) {
        button.disabled = false;
        await raise(`fairroll: not revealed: ${error instanceof Error ? error.message : error}`);
      }
    })();
  });
  return button;
}

/** Another player's sealed roll: its entry checked here (in the log, under the root, a
 * sealed roll for the audience said), a sealed line shown. */
async function sealedReceived(said: SealedBroadcast): Promise<void> {
  if (!table) return;
  const checked = await table.checkSealedLine(said.seq, said.receipt, said.audience);
  const mark = checked.verified ? "&#10003; in the signed log" : `not verified: ${escaped(checked.problem ?? "unknown")}`;
  show(`<div class="fairroll-card fairroll-sealed-line" data-seq="${said.seq}">${escaped(said.player)}: sealed roll #${said.seq}, ${escaped((AUDIENCE_WORDS as Record<string, string>)[said.audience] ?? said.audience)} — ${mark}</div>`);
}

/** A sealed roll revealed: the opening checked here against the log's sealed entry. */
async function revealReceived(said: RevealBroadcast): Promise<void> {
  if (!table) return;
  const checked = await table.checkSealed(said.sealed, said.roll);
  show(`<div class="fairroll-from">${escaped(said.player)} revealed</div>${card({ roll: said.roll, faces: [], ...checked, sealed: said.sealed }, "you")}`);
}

async function compared(shared: SharedCheckpoint): Promise<void> {
  if (!table) return;
  const { comparison, reply } = await table.receive(shared);
  const said = alarm(shared.player, comparison);
  if (said) return raise(said);
  if (comparison.agree) {
    $("agreement").textContent = `Your view agrees with ${shared.player}'s (tree of ${comparison.size} entries).`;
    confirmed(comparison.size, comparison.confirmedBy);
  }
  if (reply) await OBR.broadcast.sendMessage(CHECKPOINTS, reply, { destination: "REMOTE" });
}

async function saveSettings(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const update: RoomSettings = {
    server: $<HTMLInputElement>("server").value,
    root: $<HTMLInputElement>("root").value,
    table: $<HTMLInputElement>("table").value,
    dialect: $<HTMLSelectElement>("dialect").value as Dialect,
  };
  await OBR.room.setMetadata({ [KEY]: update });
}

OBR.onReady(async () => {
  me = await OBR.player.getName();
  const gm = (await OBR.player.getRole()) === "GM";
  $("setup").hidden = !gm;
  if (gm && !$<HTMLInputElement>("server").value) $<HTMLInputElement>("server").value = installedFrom();
  use(settingsOf(await OBR.room.getMetadata()));
  OBR.room.onMetadataChange((metadata) => use(settingsOf(metadata)));
  OBR.broadcast.onMessage(ROLLS, (event) => void received(event.data as Broadcast));
  OBR.broadcast.onMessage(CHECKPOINTS, (event) => void compared(event.data as SharedCheckpoint));
  OBR.broadcast.onMessage(COSIGNERS, (event) => void pinned(event.data as CosignerAnnouncement));
  OBR.broadcast.onMessage(SEALED, (event) => void sealedReceived(event.data as SealedBroadcast));
  OBR.broadcast.onMessage(REVEALED, (event) => void revealReceived(event.data as RevealBroadcast));
  $<HTMLFormElement>("roller").addEventListener("submit", (event) => void roll(event));
  $<HTMLFormElement>("setup").addEventListener("submit", (event) => void saveSettings(event));
  document.body.dataset.ready = "true";
});
