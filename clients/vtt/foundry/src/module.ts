// fairroll for Foundry VTT (v12 and v13): every roll's dice fulfilled by fairroll.
//
// A roll is resolved whole in one audited request, in the `foundry` dialect (fairroll
// reads Foundry's notation as Foundry does, and rolls a term's dice in Foundry's order:
// every die first, then each modifier in turn), before Foundry evaluates it; Foundry's
// own dice then take those faces, one by one, through the fulfillment method this
// module registers (CONFIG.Dice.fulfillment). The chat card shows fairroll's words, the
// receipt and a mark this client earned by checking the roll itself. After each roll the
// player's witness verifies the table's checkpoint and shares it over Foundry's socket;
// every other player compares it with theirs, and an alarm is raised where they differ.
//
// Foundry's roll modes map onto sealed rolls (docs/audit.md, "Sealed rolls"): a public
// roll is an ordinary roll; a GM roll is sealed for the GM, a blind roll for the GM only,
// a self roll for the roller only. The log then holds only a commitment (the table's page
// shows a sealed line); the chat message is whispered as Foundry whispers that mode, and
// carries the roll's opening in its flags, so the GM's client checks it against the log
// and can reveal it (a sealed.reveal statement) when the GM likes.
//
// Each player's cosigner key is announced over the module's socket (game.socket, which
// the Foundry server relays and the dice operator does not run), and the keys the
// others announce there are pinned. A player who agrees with a shared checkpoint answers
// with its own cosignature of that tree, over the socket too; the view is "confirmed by"
// a player only under a key so announced, never one the fairroll server merely lists.

import {
  alarm,
  type Audience,
  card,
  type CheckedRoll,
  confirmation,
  type CosignerAnnouncement,
  escaped,
  FairTable,
  type Sealed,
  type SharedCheckpoint,
} from "../../shared/fair-table.js";

const ID = "fairroll";
const CHANNEL = `module.${ID}`;

type Setting = "server" | "table" | "root" | "writeKey";

declare global {
  interface SettingConfig {
    "fairroll.server": string;
    "fairroll.table": string;
    "fairroll.root": string;
    "fairroll.writeKey": string;
  }
}

/** The faces of the roll being evaluated, handed to Foundry's dice in order. */
class Faces {
  private index = 0;
  constructor(
    private readonly faces: number[],
    private readonly sides: number[],
  ) {}

  next(sides: number): number {
    const at = this.index++;
    if (at >= this.faces.length) throw new Error("Foundry asked for more dice than fairroll rolled");
    if (this.sides[at] !== sides) throw new Error(`Foundry asked for a d${sides} where fairroll rolled a d${this.sides[at]}`);
    return this.faces[at]!;
  }

  get done(): boolean {
    return this.index === this.faces.length;
  }
}

let current: Faces | null = null;
let queue: Promise<unknown> = Promise.resolve();
let table: FairTable | null = null;

/** The fairroll server this module was installed from: a fairroll server serves the
 * module's manifest (GET /integrations/foundry/module.json) with its own URL in
 * `flags.fairroll.server`, the default of the *fairroll server* setting. */
function installedFrom(): string {
  const modules = (game as { modules?: { get(id: string): unknown } }).modules;
  const flags = (modules?.get(ID) as { flags?: { fairroll?: { server?: unknown } } } | undefined)?.flags;
  const server = flags?.fairroll?.server;
  return typeof server === "string" ? server : "";
}

function setting(key: Setting): string {
  return String(game.settings!.get(ID, key) ?? "");
}

function fairTable(): FairTable | null {
  const server = setting("server");
  const root = setting("root");
  if (!server || !root) return null;
  table ??= new FairTable({
    server,
    table: setting("table") || `foundry-${game.world?.id ?? "world"}`,
    root,
    player: `${game.user?.name ?? "player"}.foundry`,
    ...(setting("writeKey") ? { writeKey: setting("writeKey") } : {}),
  });
  return table;
}

/** The fulfillment handler: the next face fairroll rolled, for Foundry's die. */
async function fulfil(term: foundry.dice.terms.DiceTerm): Promise<number | void> {
  if (current === null) return undefined; // not a fairroll roll: Foundry rolls it itself
  return current.next(term.faces ?? 0);
}

type Evaluate = (this: Roll, options?: object) => Promise<Roll>;

/** Foundry's roll modes as sealed rolls: a public roll is not sealed. */
const AUDIENCES: { [mode: string]: Audience } = { gmroll: "gm", blindroll: "blind", selfroll: "self" };
const MODES: { [audience in Audience]: string } = { gm: "gmroll", blind: "blindroll", self: "selfroll" };

/** The roll mode the chat is in (Foundry's own setting, what a roll's message takes by
 * default), as the audience of a sealed roll, or undefined for a public roll. */
function chatAudience(): Audience | undefined {
  const settings = game.settings as unknown as { get(ns: string, key: string): unknown };
  let mode: unknown;
  try {
    mode = settings.get("core", "rollMode");
  } catch {
    mode = undefined;  // not registered: a public roll
  }
  return AUDIENCES[String(mode)];
}

/** Evaluate a roll with fairroll's faces: one request for the whole formula, then
 * Foundry's evaluation takes them die by die. Rolls are evaluated one at a time. */
function wrapEvaluate(original: Evaluate): Evaluate {
  return async function evaluate(this: Roll, options?: object): Promise<Roll> {
    const fair = fairTable();
    if (fair === null) return original.call(this, options);
    const turn = queue.then(async () => {
      let checked: CheckedRoll;
      try {
        checked = await fair.roll(this.formula, "foundry", chatAudience());
      } catch (error) {
        // fairroll refused the formula (a form it does not read) or could not be reached:
        // Foundry rolls it, and the card says so.
        keep(this, { refused: String(error instanceof Error ? error.message : error) });
        return original.call(this, options);
      }
      current = new Faces(checked.faces, (checked.roll.dice ?? []).map((d) => d.sides));
      try {
        const evaluated = await original.call(this, options);
        const agree = current.done && Number(evaluated.total) === Number(checked.roll.outcome.total);
        keep(this, { checked, agree });
        return evaluated;
      } finally {
        current = null;
      }
    });
    queue = turn.catch(() => undefined);
    return turn;
  };
}

interface Record {
  checked?: CheckedRoll;
  agree?: boolean;
  refused?: string;
}

/** A roll's options travel with it into its chat message (Roll#toJSON): fairroll's record
 * of the roll goes there. */
function keep(roll: Roll, record: Record): void {
  (roll.options as { fairroll?: Record }).fairroll = record;
}

/** The card of a message's fairroll rolls, added where Foundry renders the message. */
function render(message: ChatMessage, html: JQuery | HTMLElement): void {
  const element = html instanceof HTMLElement ? html : html[0];
  if (!element) return;
  for (const roll of message.rolls ?? []) {
    const record = (roll.options as { fairroll?: Record }).fairroll;
    if (!record) continue;
    const block = document.createElement("div");
    if (record.checked?.sealed) {
      renderSealed(message, roll, record, block);
    } else if (record.checked) {
      // The roller's own client evaluated the roll with fairroll's faces (`agree`); every
      // other client compares what Foundry shows with the log itself (checkHere).
      const agree = !message.isAuthor || record.agree
        ? ""
        : `<div class="fairroll-alarm">Foundry's total (${escaped(String(roll.total))}) is not fairroll's (${escaped(String(record.checked.roll.outcome.total))})</div>`;
      const me = game.user?.name ?? "you";
      if (message.isAuthor) {
        block.innerHTML = card(record.checked, me) + agree;
      } else {
        // Another player's roll: the mark is this client's own check, never the roller's
        // record (which the roller could have written as it liked).
        const { roll: rolled } = record.checked;
        block.innerHTML = `<div class="fairroll-card fairroll-checking">checking the roll here…</div>`;
        void checkHere(message, roll, rolled).then((checked) => {
          block.innerHTML = card({ roll: rolled, faces: rolled.dice.map((d) => d.face), ...checked }, me) + agree;
        });
      }
    } else {
      block.innerHTML = `<div class="fairroll-card fairroll-refused">Rolled by Foundry, not fairroll: ${escaped(record.refused ?? "")}</div>`;
    }
    element.append(block);
  }
}

interface Whispered {
  flags?: { fairroll?: { sealed?: Sealed[] } };
  blind?: boolean;
}

const isGM = (): boolean => Boolean((game.user as { isGM?: boolean } | undefined)?.isGM);

/** A sealed roll's card. The roller sees its own record (but not a blind roll's dice, as
 * Foundry hides a blind roll from its roller); the GM's client checks the opening the
 * message's flags carry against the log itself, and offers to reveal it. */
function renderSealed(message: ChatMessage, roll: Roll, record: Record, block: HTMLElement): void {
  const checked = record.checked!;
  const me = game.user?.name ?? "you";
  const flagged = ((message as unknown as Whispered).flags?.fairroll?.sealed ?? []).find((s) => s.seq === checked.sealed!.seq);
  if (!isGM()) {
    if (!message.isAuthor) return;  // not for this player: Foundry whispered it elsewhere
    if (checked.sealed!.audience === "blind") {
      block.innerHTML = `<div class="fairroll-card fairroll-sealed-line">sealed blind roll #${checked.sealed!.seq}, for the GM only</div>`;
    } else {
      block.innerHTML = card(checked, me);
      if (flagged) block.append(revealButton(flagged));
    }
    return;
  }
  if (!flagged) {
    block.innerHTML = `<div class="fairroll-card fairroll-unverified">a sealed roll without its opening: nothing to check</div>`;
    return;
  }
  block.innerHTML = `<div class="fairroll-card fairroll-checking">checking the sealed roll here…</div>`;
  const rolled = checked.roll;
  void fairTable()?.checkSealed(flagged, rolled).then((verdict) => {
    block.innerHTML = card({ roll: rolled, faces: rolled.dice.map((d) => d.face), ...verdict, sealed: flagged }, me) + opened(roll, flagged);
    if (verdict.verified) block.append(revealButton(flagged));
  });
}

/** The GM's own comparison of Foundry's roll in a whispered message (its formula and
 * total, what Foundry shows the GM) with the opening the GM's client checked: the
 * roller's `agree` is the roller's word, and a cheating player could send a message that
 * shows one formula with the opening of another (a larger modifier). An alarm, or "". */
function opened(roll: Roll, sealed: Sealed): string {
  const formula = String((sealed.opening.request as { formula?: unknown }).formula ?? "");
  const total = (sealed.opening.outcome as { total?: unknown } | null)?.total;
  const bare = (text: unknown) => String(text).replace(/\s+/g, "");
  if (bare(roll.formula) === bare(formula) && Number(roll.total) === Number(total)) return "";
  return `<div class="fairroll-alarm">Foundry's roll (${escaped(String(roll.formula))} = ${escaped(String(roll.total))}) is not the one opened (${escaped(formula)} = ${escaped(String(total))})</div>`;
}

/** Reveal a sealed roll on the table's log: its opening, checked against the sealed entry
 * before it is published. */
function revealButton(sealed: Sealed): HTMLElement {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "fairroll-reveal";
  button.textContent = `Reveal sealed roll #${sealed.seq}`;
  button.addEventListener("click", () => {
    button.disabled = true;
    void fairTable()?.reveal(sealed).then(
      (seq) => { button.replaceWith(Object.assign(document.createElement("div"), { className: "fairroll-revealed", textContent: `revealed on the table's log at entry ${seq}` })); },
      (error: unknown) => {
        button.disabled = false;
        ui.notifications?.error(`fairroll: not revealed: ${error instanceof Error ? error.message : error}`);
      },
    );
  });
  return button;
}

/** A message of sealed rolls is whispered as Foundry whispers their mode (GM roll and
 * blind roll to the GMs, blind hidden from its roller; self roll to the roller), whatever
 * mode it was sent with: the log says whom each roll is for. Its flags carry each roll's
 * opening, for the GM's client to check and reveal. */
function sealedMessage(message: ChatMessage): void {
  const sealed = (message.rolls ?? [])
    .map((roll) => (roll.options as { fairroll?: Record }).fairroll?.checked?.sealed)
    .filter((s): s is Sealed => Boolean(s));
  if (!sealed.length) return;
  const audience = sealed.some((s) => s.audience === "blind") ? "blind" : sealed.some((s) => s.audience === "gm") ? "gm" : "self";
  const data: { whisper?: string[]; blind?: boolean } = {};
  const foundryChat = ChatMessage as unknown as { applyRollMode?: (data: object, mode: string) => object };
  if (typeof foundryChat.applyRollMode === "function") {
    foundryChat.applyRollMode(data, MODES[audience]);
  } else {
    const users = (game.users ?? []) as unknown as Iterable<{ id: string; isGM: boolean }>;
    const gms = [...users].filter((u) => u.isGM).map((u) => u.id);
    data.whisper = audience === "self" ? [String((game.user as { id?: string } | undefined)?.id)] : gms;
    data.blind = audience === "blind";
  }
  (message as unknown as { updateSource(changes: object): void }).updateSource({ ...data, flags: { fairroll: { sealed } } });
}

/** Another player's roll, checked by this client: its entry, receipt and key chain to
 * the pinned root, and the roll's dice and outcome against the entry. */
/** Another player's roll, checked on this client: its record against the log, and the
 * roll Foundry shows (formula and total) against the log's roll at that seq, never the
 * roller's `agree`; a seq another message showed already is a roll shown twice. */
async function checkHere(message: ChatMessage, roll: Roll, rolled: CheckedRoll["roll"]): Promise<{ verified: boolean; problem?: string }> {
  const fair = fairTable();
  if (fair === null) return { verified: false, problem: "fairroll is not set up in this world" };
  const seq = rolled.receipt.seq;
  const checked = await fair.check(seq, rolled.receipt, rolled, { formula: String(roll.formula), total: roll.total, dialect: "foundry" });
  if (!checked.verified) return checked;
  const id = String(message.id ?? "");
  const first = shownIn.get(seq);
  if (first !== undefined && first !== id) return { verified: false, problem: `roll #${seq} was shown before, in another message` };
  shownIn.set(seq, id);
  return checked;
}

/** The seq of each fairroll roll a message showed on this client, and that message. */
const shownIn = new Map<number, string>();

async function share(): Promise<void> {
  const fair = fairTable();
  if (fair === null) return;
  try {
    const mine = await fair.witnessCheckpoint();
    game.socket?.emit(CHANNEL, { kind: mine.kind, player: mine.player, table: mine.table, note: mine.note });
    confirmed(mine.size, mine.confirmedBy);
  } catch (error) {
    ui.notifications?.error(`fairroll: this table's checkpoint does not check out: ${error instanceof Error ? error.message : error}`);
  }
}

function confirmed(size: number, by: string[]): void {
  const said = confirmation(size, by, "Foundry");
  if (said) ui.notifications?.info(said);
}

async function compare(shared: SharedCheckpoint): Promise<void> {
  const fair = fairTable();
  if (fair === null) return;
  const { comparison, reply } = await fair.receive(shared);
  const said = alarm(shared.player, comparison);
  if (said) {
    ui.notifications?.error(said, { permanent: true });
    await ChatMessage.create({ content: `<div class="fairroll-alarm">${escaped(said)}</div>` });
    return;
  }
  if (comparison.agree) confirmed(comparison.size, comparison.confirmedBy);
  if (reply) game.socket?.emit(CHANNEL, reply);
}

/** Announce this player's cosigner key over the socket. */
async function announce(): Promise<void> {
  const fair = fairTable();
  if (fair === null) return;
  try {
    game.socket?.emit(CHANNEL, await fair.announcement());
  } catch (error) {
    ui.notifications?.error(`fairroll: no cosigner key: ${error instanceof Error ? error.message : error}`);
  }
}

/** Another player's cosigner key, pinned; a key not known before is answered with this
 * player's own, so that whoever joined later learns it too. */
async function pinned(said: CosignerAnnouncement): Promise<void> {
  const fair = fairTable();
  if (fair === null) return;
  if (await fair.pin(said)) await announce();
}

type Message = SharedCheckpoint | CosignerAnnouncement;

Hooks.once("init", () => {
  const register = (key: Setting, name: string, hint: string, scope: "world" | "client", value = "") =>
    game.settings!.register(ID, key, { name, hint, scope, config: true, type: String, default: value });
  register("server", "fairroll server", "The fairroll server's URL, e.g. https://dice.example (default: the server this module was installed from)", "world", installedFrom());
  register("table", "Table", "The table this world's rolls go to (default: foundry-<world id>)", "world");
  register("root", "Root key id", "The root key id (ed25519:...) the players trust, obtained out of band, never from the server", "world");
  register("writeKey", "Write key", "The table's write key, if it was created with one", "world");
  CONFIG.Dice.fulfillment.methods[ID] = {
    label: "fairroll (verifiable)",
    interactive: false,
    handler: fulfil,
    resolver: foundry.applications.dice.RollResolver,
  };
  CONFIG.Dice.fulfillment.defaultMethod = ID;
  const prototype = Roll.prototype as unknown as { evaluate: Evaluate };
  prototype.evaluate = wrapEvaluate(prototype.evaluate);
});

(Hooks.on as (hook: string, fn: (message: ChatMessage) => void) => number)("preCreateChatMessage", sealedMessage);

Hooks.once("ready", () => {
  game.socket?.on(CHANNEL, (said: Message) => {
    if (said?.kind === "cosigner") void pinned(said);
    else void compare(said);
  });
  void announce();
});

/** The card of a rendered message, and the roller's checkpoint shared after it. */
function rendered(message: ChatMessage, html: JQuery | HTMLElement): void {
  render(message, html);
  if ((message.rolls ?? []).some((roll) => (roll.options as { fairroll?: Record }).fairroll?.checked)) {
    if (message.isAuthor) void share();
  }
}

Hooks.once("init", () => {
  // Foundry 13 renders a message's HTML through renderChatMessageHTML (an HTMLElement);
  // Foundry 12 through renderChatMessage (jQuery), which 13 keeps only as deprecated.
  const generation = Number((game as { release?: { generation?: number } }).release?.generation ?? 12);
  const hook = generation >= 13 ? "renderChatMessageHTML" : "renderChatMessage";
  (Hooks.on as (hook: string, fn: (message: ChatMessage, html: JQuery | HTMLElement) => void) => number)(hook, rendered);
});
