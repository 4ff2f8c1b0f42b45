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

import OBR from "@owlbear-rodeo/sdk";
import {
  alarm,
  card,
  type CheckedRoll,
  type Dialect,
  escaped,
  FairTable,
  type SharedCheckpoint,
} from "../../shared/fair-table.js";

const KEY = "rodeo.fairroll/settings";
const ROLLS = "rodeo.fairroll/roll";
const CHECKPOINTS = "rodeo.fairroll/checkpoint";

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
}

async function shareCheckpoint(): Promise<void> {
  if (!table) return;
  try {
    const mine = await table.witnessCheckpoint();
    await OBR.broadcast.sendMessage(CHECKPOINTS, mine, { destination: "REMOTE" });
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
  try {
    const checked = await table.roll(formula, dialect);
    show(card(checked, "you"));
    const said: Broadcast = { player: me, formula, roll: checked.roll };
    await OBR.broadcast.sendMessage(ROLLS, said, { destination: "REMOTE" });
    await shareCheckpoint();
  } catch (error) {
    show(`<div class="fairroll-card fairroll-refused">${escaped(error instanceof Error ? error.message : String(error))}</div>`);
  }
}

async function received(said: Broadcast): Promise<void> {
  if (!table) return;
  // Another player's roll, checked here: this player's own verdict, not theirs.
  const checked = await table.check(said.roll.receipt.seq, said.roll.receipt);
  show(`<div class="fairroll-from">${escaped(said.player)} rolled</div>${card({ roll: said.roll, faces: [], ...checked }, "you")}`);
}

async function compared(shared: SharedCheckpoint): Promise<void> {
  if (!table) return;
  const said = alarm(shared.player, await table.compare(shared));
  if (said) await raise(said);
  else $("agreement").textContent = `Your view agrees with ${shared.player}'s (tree of ${shared.note.split("\n")[1]} entries).`;
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
  use(settingsOf(await OBR.room.getMetadata()));
  OBR.room.onMetadataChange((metadata) => use(settingsOf(metadata)));
  OBR.broadcast.onMessage(ROLLS, (event) => void received(event.data as Broadcast));
  OBR.broadcast.onMessage(CHECKPOINTS, (event) => void compared(event.data as SharedCheckpoint));
  $<HTMLFormElement>("roller").addEventListener("submit", (event) => void roll(event));
  $<HTMLFormElement>("setup").addEventListener("submit", (event) => void saveSettings(event));
  document.body.dataset.ready = "true";
});
