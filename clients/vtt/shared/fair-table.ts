// What a VTT integration of fairroll needs, whatever the VTT: roll a formula in one
// audited request (fair by default: in this player's own seed session), check the roll
// here (its entry is in the signed log, under keys certified by the root key the table
// pinned out of band), witness the table's checkpoint, and compare the checkpoints other
// players verified, received over the VTT's own messaging, which the dice operator does
// not run. Two signed trees of one size are an equivocation: the operator showed two
// players two different logs.

import {
  createFairroll,
  Equivocation,
  type Fairroll,
  type FormulaRoll,
  type TableWitness,
  trustedKeys,
  verifyReceipt,
} from "@fairroll/client";

export type Dialect = "roll20" | "foundry" | "avrae";

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
}

/** A roll and this player's own verdict on it. */
export interface CheckedRoll {
  roll: FormulaRoll;
  /** The faces in the order the formula rolled them (what the VTT's dice show). */
  faces: number[];
  verified: boolean;
  /** Why not, where it is not. */
  problem?: string;
}

/** A checkpoint this player verified, to share with the others. */
export interface SharedCheckpoint {
  player: string;
  table: string;
  note: string;
}

/** What comparing another player's checkpoint found. */
export type Comparison =
  | { agree: true; size: number }
  | { agree: false; equivocation: Equivocation }
  | { agree: false; problem: string };

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

  private me(): Promise<TableWitness> {
    this.witness ??= this.dice.witness(this.settings.table, this.settings.player, this.settings.root);
    return this.witness;
  }

  /** Roll `formula` in `dialect`, in this player's seed session, and check it here. */
  async roll(formula: string, dialect: Dialect): Promise<CheckedRoll> {
    const roll = await this.dice.rollFormula({ table: this.settings.table, formula, dialect });
    const faces = roll.dice.map((die) => die.face);
    const checked = await this.check(roll.receipt.seq, roll.receipt);
    return { roll, faces, ...checked };
  }

  /** Check a roll of this table by its receipt: the entry is fetched and must be the
   * receipt's, included in a checkpoint signed by a key the root certifies. */
  async check(seq: number, receipt: FormulaRoll["receipt"]): Promise<{ verified: boolean; problem?: string }> {
    try {
      const { data, response } = await this.dice.api.GET("/v1/tables/{table}/entries/{seq}", {
        params: { path: { table: this.settings.table, seq } },
      });
      if (!response.ok || !data) throw new Error(`the entry was not served (HTTP ${response.status})`);
      const keys = await this.trusted();
      if (keys.size === 0) throw new Error(`no signing key is certified by the root ${this.settings.root}`);
      await verifyReceipt(data, receipt, keys);
      return { verified: true };
    } catch (error) {
      return { verified: false, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Verify the table's checkpoint as this player's witness (cosigned and posted), to be
   * shared with the other players. */
  async witnessCheckpoint(): Promise<SharedCheckpoint> {
    const checked = await (await this.me()).check();
    return { player: this.settings.player, table: this.settings.table, note: checked.note };
  }

  /** Compare a checkpoint another player verified with every tree this one verified. */
  async compare(shared: SharedCheckpoint): Promise<Comparison> {
    if (shared.table !== this.settings.table) return { agree: false, problem: `another table (${shared.table})` };
    try {
      const witness = await this.me();
      const split = await witness.compare(shared.note);
      if (split) return { agree: false, equivocation: split };
      const size = Number(shared.note.split("\n")[1]);
      return { agree: true, size };
    } catch (error) {
      if (error instanceof Equivocation) return { agree: false, equivocation: error };
      return { agree: false, problem: error instanceof Error ? error.message : String(error) };
    }
  }
}

/** HTML-escaped text, for the cards both integrations draw. */
export function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A roll's card: the words, the receipt, and this player's verdict. */
export function card(checked: CheckedRoll, by: string): string {
  const { roll } = checked;
  const mark = checked.verified
    ? `<span class="fairroll-verified" title="checked here: in the signed log, under the pinned root">&#10003; verified by ${escaped(by)}</span>`
    : `<span class="fairroll-unverified">not verified: ${escaped(checked.problem ?? "unknown")}</span>`;
  return [
    `<div class="fairroll-card" data-seq="${roll.receipt.seq}">`,
    `<div class="fairroll-asked">${escaped(roll.words.asked)}</div>`,
    `<div class="fairroll-words">${escaped(roll.words.text)}</div>`,
    `<div class="fairroll-receipt">table ${escaped(roll.receipt.table)}, entry ${roll.receipt.seq}, `,
    `hash <code>${escaped(roll.receipt.entry_hash.slice(0, 16))}</code>, ${escaped(roll.source)}</div>`,
    `<div class="fairroll-mark">${mark}</div>`,
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
