// What a VTT integration of fairroll needs, whatever the VTT: roll a formula in one
// audited request (fair by default: in this player's own seed session), check the roll
// here (its entry is in the signed log, under keys certified by the root key the table
// pinned out of band), witness the table's checkpoint, and compare the checkpoints other
// players verified, received over the VTT's own messaging, which the dice operator does
// not run. Two signed trees of one size are an equivocation: the operator showed two
// players two different logs.
//
// Cosigners that mean something: each player's witness key is made once and kept in
// the player's browser; its verifier key is announced over the VTT's own messaging, and
// the keys the other players announce there are pinned. A cosignature counts towards
// "confirmed by" only under a pinned key and only of a tree this player verified itself;
// a key that only the fairroll server lists (anyone can post one) never counts.

import {
  AUDIENCE_WORDS,
  canonicalJson,
  createFairroll,
  openingProblem,
  type SealedOpening,
  sealedRollProblem,
  Equivocation,
  type Fairroll,
  type FormulaRoll,
  type TableWitness,
  trustedKeys,
  type WitnessState,
  verifyReceipt,
} from "@fairroll/client";

export type Dialect = "roll20" | "foundry" | "avrae";

/** Whom a sealed roll is for (docs/audit.md, "Sealed rolls"): roller and GM, the GM only
 * (a blind roll), the roller only. */
export type Audience = "gm" | "blind" | "self";

/** A sealed roll: the log's sealed entry, whom it is for, and the opening that reveals it
 * (checked against the entry's commitment before it is kept or handed to the GM). */
export interface Sealed {
  seq: number;
  audience: Audience;
  opening: SealedOpening;
}

export interface TableSettings {
  /** The fairroll server, e.g. https://dice.example. */
  server: string;
  /** The table the VTT's rolls go to (one per world or room). */
  table: string;
  /** The root key id the players trust (`ed25519:...`), obtained out of band. */
  root: string;
  /** Who this player is, as the witness names itself. */
  player: string;
  /** The table's write key, where the table was created with one. */
  writeKey?: string;
  fetch?: typeof fetch;
  /** Where this player's cosigner key and the keys it pinned are kept (the browser's
   * localStorage by default; none: a fresh key each time). */
  store?: KeyStore;
}

/** The part of the Web Storage API a FairTable keeps its witness in. */
export interface KeyStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** A player's cosigner key, announced to the others over the VTT's own messaging. */
export interface CosignerAnnouncement {
  kind: "cosigner";
  player: string;
  table: string;
  vkey: string;
}

/** A roll and this player's own verdict on it. */
export interface CheckedRoll {
  roll: FormulaRoll;
  /** The faces in the order the formula rolled them (what the VTT's dice show). */
  faces: number[];
  verified: boolean;
  /** Why not, where it is not. */
  problem?: string;
  /** A sealed roll: its entry's seq, its audience and its opening. */
  sealed?: Sealed;
}

/** A checkpoint this player verified, to share with the others: the note carries the
 * player's cosignature. `kind` "cosigned" answers another player's checkpoint (and is
 * not answered in turn). */
export interface SharedCheckpoint {
  kind?: "checkpoint" | "cosigned";
  player: string;
  table: string;
  note: string;
}

/** What comparing another player's checkpoint found; where they agree, who of the
 * players whose keys this one pinned cosigned that very tree (checked here). */
export type Comparison =
  | { agree: true; size: number; confirmedBy: string[] }
  | { agree: false; equivocation: Equivocation }
  | { agree: false; problem: string };

/** This player's own checkpoint: shared with the others, and who confirmed it. */
export interface WitnessedCheckpoint extends SharedCheckpoint {
  size: number;
  /** Players whose keys this one pinned (announced over the VTT) who cosigned this tree. */
  confirmedBy: string[];
}

/** A C2SP note name for a player: no space and no "+" (a VTT name may hold both). */
export function cosignerName(player: string): string {
  return player.replace(/[\s+]+/g, "-") || "player";
}

/** How many of the trees it verified a player's browser keeps between visits. */
const KEPT_TREES = 64;

const VKEY = /^[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/;

export class FairTable {
  readonly dice: Fairroll;
  private witness?: Promise<TableWitness>;
  private keys?: Promise<Map<string, unknown>>;

  constructor(readonly settings: TableSettings) {
    this.dice = createFairroll({
      baseUrl: settings.server,
      player: settings.player,
      root: settings.root,  // every roll checked live under the table's pinned root
      ...(settings.writeKey ? { writeKey: settings.writeKey } : {}),
      ...(settings.fetch ? { fetch: settings.fetch } : {}),
    });
  }

  /** The signing keys the root certifies, from the server's list (each certificate checked). */
  private trusted(): Promise<Map<string, unknown>> {
    this.keys ??= this.dice.keys().then((served) => trustedKeys(served, this.settings.root));
    return this.keys;
  }

  private store(): KeyStore | null {
    if (this.settings.store) return this.settings.store;
    const local = (globalThis as { localStorage?: KeyStore }).localStorage;
    return local ?? null;
  }

  private get storeKey(): string {
    return `fairroll:witness:${this.settings.server}|${this.settings.table}|${cosignerName(this.settings.player)}`;
  }

  /** This player's witness of the table: its key made once and kept (with every tree it
   * verified and every key it pinned), or the one kept before. */
  private me(): Promise<TableWitness> {
    this.witness ??= (async () => {
      const { table, root } = this.settings;
      const name = cosignerName(this.settings.player);
      let kept: WitnessState | null = null;
      try {
        kept = JSON.parse(this.store()?.getItem(this.storeKey) ?? "null") as WitnessState | null;
      } catch {
        kept = null;
      }
      const usable = kept && kept.table === table && kept.root === root && kept.name === name;
      const witness = await this.dice.witness(table, name, root, usable ? kept! : undefined);
      this.save(witness);
      return witness;
    })();
    this.witness.catch(() => { this.witness = undefined; });
    return this.witness;
  }

  /** Keep the witness: its key, the keys it pinned and the largest trees it verified
   * (each a prefix of the next, so the largest hold what the smaller proved). */
  private save(witness: TableWitness): void {
    try {
      const state = witness.state();
      this.store()?.setItem(this.storeKey, JSON.stringify({ ...state, trees: state.trees.slice(-KEPT_TREES) }));
    } catch {
      // a full or closed store: the key lives as long as the page
    }
  }

  /** This player's cosigner key, to announce over the VTT's own messaging. */
  async announcement(): Promise<CosignerAnnouncement> {
    const witness = await this.me();
    return { kind: "cosigner", player: this.settings.player, table: this.settings.table, vkey: witness.vkey };
  }

  /** Pin another player's cosigner key, received over the VTT's own messaging (never from
   * the fairroll server). True if it was not pinned before (answer with this player's own
   * announcement then, so that late joiners learn it too). */
  async pin(said: CosignerAnnouncement): Promise<boolean> {
    if (said?.kind !== "cosigner" || said.table !== this.settings.table || !VKEY.test(String(said.vkey))) return false;
    const witness = await this.me();
    if (said.vkey === witness.vkey || (witness.state().trusted ?? []).includes(said.vkey)) return false;
    witness.trust(said.vkey);
    this.save(witness);
    return true;
  }

  /** Roll `formula` in `dialect`, in this player's seed session, and check it here. With
   * `audience`, the roll is sealed: the log holds only a commitment, this client draws the
   * blind and checks the answer against the commitment (the npm client's live check),
   * and the opening comes back in `sealed`, to be handed to the GM or revealed. */
  async roll(formula: string, dialect: Dialect, audience?: Audience): Promise<CheckedRoll> {
    if (audience) {
      const roll = (await this.dice.rollFormula({ table: this.settings.table, formula, dialect, sealed: { audience } })) as FormulaRoll & {
        checked: { sealed: Sealed };
      };
      const faces = roll.dice.map((die) => die.face);
      const checked = await this.check(roll.receipt.seq, roll.receipt);
      return { roll, faces, ...checked, sealed: roll.checked.sealed };
    }
    const roll = await this.dice.rollFormula({ table: this.settings.table, formula, dialect });
    const faces = roll.dice.map((die) => die.face);
    const checked = await this.check(roll.receipt.seq, roll.receipt);
    return { roll, faces, ...checked };
  }

  /** Check a sealed roll another player handed over (to the GM, in a whispered message):
   * its entry is a sealed roll of this table under the pinned root (`check`), the opening
   * opens its commitment and its dice derive with its blind, and the roll shows the
   * opening's dice and outcome. */
  async checkSealed(sealed: Sealed, roll: FormulaRoll): Promise<{ verified: boolean; problem?: string }> {
    const held = await this.check(sealed.seq, roll.receipt);
    if (!held.verified) return held;
    try {
      const { data } = await this.dice.api.GET("/v1/tables/{table}/entries/{seq}", {
        params: { path: { table: this.settings.table, seq: sealed.seq } },
      });
      const entry = data as unknown as { mechanic?: string; request?: { audience?: string } } | undefined;
      if (entry?.mechanic !== "sealed.roll") throw new Error(`entry ${sealed.seq} is not a sealed roll`);
      if (entry.request?.audience !== sealed.audience) throw new Error(`entry ${sealed.seq} is sealed for '${entry.request?.audience}', not '${sealed.audience}'`);
      const wrong = await openingProblem(entry, sealed.opening);
      if (wrong) throw new Error(wrong);
      const said = (value: unknown) => canonicalJson(value ?? null);
      const dice = (list: FormulaRoll["dice"] | null | undefined) => (list ?? []).map((d) => ({ group: d.group, sides: d.sides, face: d.face }));
      if (said(dice(roll.dice)) !== said(dice(sealed.opening.dice)) || said(roll.outcome) !== said(sealed.opening.outcome)) {
        throw new Error("the roll's dice and outcome are not its opening's");
      }
      return { verified: true };
    } catch (error) {
      return { verified: false, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Check a sealed line another player announced (no opening yet): the entry at `seq`
   * is in the log under the pinned root (`check`), and it is a sealed roll for the
   * `audience` announced. A line pointing at another entry (a plain roll, a roll sealed
   * for someone else) is not marked. */
  async checkSealedLine(seq: number, receipt: FormulaRoll["receipt"], audience: Audience): Promise<{ verified: boolean; problem?: string }> {
    const held = await this.check(seq, receipt);
    if (!held.verified) return held;
    try {
      const { data } = await this.dice.api.GET("/v1/tables/{table}/entries/{seq}", {
        params: { path: { table: this.settings.table, seq } },
      });
      const entry = data as unknown as { mechanic?: string; request?: { audience?: string } } | undefined;
      const wrong = entry?.mechanic !== "sealed.roll" ? `entry ${seq} is a ${entry?.mechanic}, not a sealed roll` : sealedRollProblem(entry);
      if (wrong) throw new Error(wrong);
      if (entry!.request?.audience !== audience) throw new Error(`entry ${seq} is sealed for '${entry!.request?.audience}', not '${audience}'`);
      return { verified: true };
    } catch (error) {
      return { verified: false, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Reveal a sealed roll: its opening published on the table's log (checked here against
   * the sealed entry first; the statement appended checked after). */
  async reveal(sealed: Sealed): Promise<number> {
    const made = await this.dice.revealSealed(this.settings.table, sealed.seq, sealed.opening);
    return Number(made?.receipt?.seq);
  }

  /** Check a roll of this table by its receipt: the entry is fetched and must be the
   * receipt's, included in a checkpoint signed by a key the root certifies. With `roll`
   * (one another player handed over), its mechanic, source, dice and outcome must be the
   * entry's too: what a card shows under the mark is what the log holds. */
  /** Check a roll against the table's signed log: the receipt under the pinned root;
   * with `roll`, its mechanic, source, dice and outcome are its entry's; with `shown`, the
   * formula and total the VTT shows are the ones the entry's request and outcome hold (read
   * in `dialect`, where given), so a message cannot show a roll of its own beside the
   * record of another. */
  async check(
    seq: number,
    receipt: FormulaRoll["receipt"],
    roll?: FormulaRoll,
    shown?: { formula: string; total: unknown; dialect?: Dialect },
  ): Promise<{ verified: boolean; problem?: string }> {
    try {
      const { data, response } = await this.dice.api.GET("/v1/tables/{table}/entries/{seq}", {
        params: { path: { table: this.settings.table, seq } },
      });
      if (!response.ok || !data) throw new Error(`the entry was not served (HTTP ${response.status})`);
      const keys = await this.trusted();
      if (keys.size === 0) throw new Error(`no signing key is certified by the root ${this.settings.root}`);
      await verifyReceipt(data, receipt, keys);
      if (roll) {
        const logged = data as unknown as Record<string, unknown>;
        const said = (value: unknown) => canonicalJson(value ?? null);
        const dice = (list: unknown) => ((list as FormulaRoll["dice"] | null) ?? []).map((d) => ({ group: d.group, sides: d.sides, face: d.face }));
        for (const [field, ours, theirs] of [
          ["mechanic", logged.mechanic, roll.mechanic],
          ["source", logged.source, roll.source],
          ["dice", dice(logged.dice), dice(roll.dice)],
          ["outcome", logged.outcome, roll.outcome],
        ] as const) {
          if (said(ours) !== said(theirs)) throw new Error(`the roll's ${field} is not its entry's`);
        }
      }
      if (shown) {
        const logged = data as unknown as { request?: { formula?: unknown; dialect?: unknown }; outcome?: { total?: unknown } | null };
        const formula = String(logged.request?.formula ?? "");
        const total = logged.outcome?.total;
        const bare = (text: unknown) => String(text).replace(/\s+/g, "");
        if (shown.dialect !== undefined && logged.request?.dialect !== shown.dialect) {
          throw new Error(`the log's roll #${seq} was read in the ${String(logged.request?.dialect)} dialect, not ${shown.dialect}`);
        }
        if (bare(formula) !== bare(shown.formula) || Number(total) !== Number(shown.total)) {
          throw new Error(`the roll shown (${shown.formula} = ${String(shown.total)}) is not the log's roll #${seq} (${formula} = ${String(total)})`);
        }
      }
      return { verified: true };
    } catch (error) {
      return { verified: false, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Verify the table's checkpoint as this player's witness (cosigned and posted), to be
   * shared with the other players: the note carries this player's cosignature. */
  async witnessCheckpoint(): Promise<WitnessedCheckpoint> {
    const witness = await this.me();
    try {
      const checked = await witness.check();
      return {
        kind: "checkpoint",
        player: this.settings.player,
        table: this.settings.table,
        note: checked.cosigned,
        size: checked.size,
        confirmedBy: checked.confirmedBy,
      };
    } finally {
      this.save(witness);
    }
  }

  /** Compare a checkpoint another player verified with every tree this one verified;
   * where they agree, count the cosignatures it carries by keys this player pinned. */
  async compare(shared: SharedCheckpoint): Promise<Comparison> {
    if (shared.table !== this.settings.table) return { agree: false, problem: `another table (${shared.table})` };
    try {
      const witness = await this.me();
      const split = await witness.compare(shared.note);
      this.save(witness);
      if (split) return { agree: false, equivocation: split };
      const size = Number(shared.note.split("\n")[1]);
      return { agree: true, size, confirmedBy: await witness.confirmedIn(shared.note) };
    } catch (error) {
      if (error instanceof Equivocation) return { agree: false, equivocation: error };
      return { agree: false, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Another player's checkpoint, received over the VTT: compared, and, where it agrees
   * and asked for it, answered with this player's cosignature of that very tree (to be
   * sent back over the VTT), so that the sharer can count it. */
  async receive(shared: SharedCheckpoint): Promise<{ comparison: Comparison; reply: SharedCheckpoint | null }> {
    const comparison = await this.compare(shared);
    if (!comparison.agree || shared.kind === "cosigned") return { comparison, reply: null };
    try {
      const note = await (await this.me()).cosign(shared.note);
      return { comparison, reply: { kind: "cosigned", player: this.settings.player, table: this.settings.table, note } };
    } catch {
      return { comparison, reply: null };
    }
  }
}

/** What a player's UI says of a confirmed view, or null where no pinned key confirmed it. */
export function confirmation(size: number, confirmedBy: string[], via: string): string | null {
  if (confirmedBy.length === 0) return null;
  return `fairroll: your view of this table (${size} entries) is confirmed by ${confirmedBy.join(", ")}: cosigned by the key${confirmedBy.length > 1 ? "s" : ""} announced over ${via}`;
}

/** HTML-escaped text, for the cards both integrations draw. */
export function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A roll's card: this player's verdict with what it checked (the dice and the outcome
 * the signed log holds), the receipt, and apart from them the server's words, marked as
 * the server's: they are not in the log, and nothing here checked them. */
export function card(checked: CheckedRoll, by: string): string {
  const { roll } = checked;
  const mark = checked.verified
    ? `<span class="fairroll-verified" title="checked here: in the signed log, under the pinned root">&#10003; verified by ${escaped(by)}</span>`
    : `<span class="fairroll-unverified">not verified: ${escaped(checked.problem ?? "unknown")}</span>`;
  const sealed = checked.sealed
    ? `<div class="fairroll-sealed" data-audience="${escaped(checked.sealed.audience)}">sealed roll #${checked.sealed.seq}, ${escaped((AUDIENCE_WORDS as Record<string, string>)[checked.sealed.audience] ?? checked.sealed.audience)}${
      checked.verified ? ": the opening matched its commitment" : ""}; the table sees a sealed line until it is revealed</div>`
    : "";
  const faces = (roll.dice ?? []).map((die) => `${die.face}/d${die.sides}`).join(" ");
  const total = (roll.outcome as { total?: unknown } | undefined)?.total;
  const what = checked.verified
    ? `<div class="fairroll-checked">dice ${escaped(faces)}${total === undefined ? "" : `, total ${escaped(String(total))}`}</div>`
    : "";
  return [
    `<div class="fairroll-card" data-seq="${roll.receipt.seq}">`,
    `<div class="fairroll-mark">${mark}</div>`,
    sealed,
    what,
    `<div class="fairroll-receipt">table ${escaped(roll.receipt.table)}, entry ${roll.receipt.seq}, `,
    `hash <code>${escaped(roll.receipt.entry_hash.slice(0, 16))}</code>, ${escaped(roll.source)}</div>`,
    `<div class="fairroll-words" title="the server's text about the roll: not in the log, not checked here">`,
    `the server's words: ${escaped(roll.words.asked)} — ${escaped(roll.words.text)}</div>`,
    `</div>`,
  ].join("");
}

/** The alarm both integrations raise when two players' checkpoints differ. */
export function alarm(from: string, comparison: Comparison): string | null {
  if (comparison.agree) return null;
  if ("equivocation" in comparison) {
    return `fairroll: the dice server showed ${from} a different log of this table than it showed you (two signed trees of size ${comparison.equivocation.size}). Keep both notes: fairroll verify --equivocation proves it.`;
  }
  return `fairroll: ${from}'s checkpoint does not check out here: ${comparison.problem}`;
}
