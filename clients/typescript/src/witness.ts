// A player as a witness of one table's log (docs/audit.md, "Cosignatures", in the
// service's repository): every checkpoint it verified kept, each new one proven
// consistent with every tree verified before (RFC 9162, GET .../proofs/consistency),
// cosigned in the C2SP tlog-cosignature format (cosignature/v1) with the player's own
// Ed25519 key (WebCrypto) and posted; and checkpoints handed over by other players, over a
// channel the operator does not run (a VTT's own messages), compared: two signed trees of
// one size are an Equivocation, whose two notes anyone can check
// (`fairroll verify --equivocation A B`). Keys are trusted only through the pinned root.

import type { Call } from "./session.js";
import { cosignerVkey, cosignNote, trustedKeys, verifyCheckpoint, verifyConsistency, verifyCosignature } from "./vendor/verify.js";

/** What a witness keeps (`state()`), to go on with it elsewhere. */
export interface WitnessState {
  table: string;
  name: string;
  root: string;
  /** The player's Ed25519 key: PKCS #8 and raw public key, base64. */
  privateKey: string;
  publicKey: string;
  trees: Array<{ size: number; root_hash: string; note: string }>;
  /** The cosigners' keys this player trusts (`trust`), kept with the rest. */
  trusted?: string[];
}

/** Two notes of one log, both signed under the pinned root, of two trees of one size. */
export class Equivocation extends Error {
  constructor(
    readonly size: number,
    readonly first: string,
    readonly second: string,
  ) {
    super(`EQUIVOCATION: two signed trees of size ${size} for one log\n--- first note ---\n${first}--- second note ---\n${second}`);
    this.name = "Equivocation";
  }
}

/** A checkpoint this witness verified and cosigned, and who else cosigned that tree. */
export interface Checked {
  size: number;
  rootHash: string;
  note: string;
  cosigned: string;
  /** Cosigners of this tree whose key this player trusts (pinned, exchanged over a
   * channel the operator does not run, or configured witnesses), their cosignature checked. */
  confirmedBy: string[];
  /** Other cosignatures of this tree, by keys this player does not know: they count for
   * nothing (the operator can make any number of them). */
  unknownCosigners: string[];
  /** No trusted player or witness has cosigned this tree (yet): the view is unconfirmed. */
  unconfirmed: boolean;
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const SIZE = /^\d+$/;

export class TableWitness {
  private constructor(
    private readonly call: Call,
    private readonly s: WitnessState,
    private readonly key: CryptoKey,
    readonly vkey: string,
    private readonly trusted: Set<string> = new Set(),
  ) {}

  /** Trust the cosignatures of `vkey`: a player's key received over a channel the operator
   * does not run (the VTT's own messages), or a witness the player pinned. Only trusted
   * keys count towards `confirmedBy`; any other cosigner is listed, not counted. */
  trust(vkey: string): void {
    this.trusted.add(vkey);
  }

  /** A witness of `table` with a fresh Ed25519 key, trusting keys from `root` only. */
  static async create(call: Call, table: string, name: string, root: string, trusted: string[] = []): Promise<TableWitness> {
    const pair = (await globalThis.crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const raw = new Uint8Array(await globalThis.crypto.subtle.exportKey("raw", pair.publicKey));
    const pkcs8 = new Uint8Array(await globalThis.crypto.subtle.exportKey("pkcs8", pair.privateKey));
    const state = { table, name, root, privateKey: b64(pkcs8), publicKey: b64(raw), trees: [] };
    return new TableWitness(call, state, pair.privateKey, await cosignerVkey(name, raw), new Set(trusted));
  }

  /** Go on with a kept witness. */
  static async resume(call: Call, state: WitnessState, trusted: string[] = []): Promise<TableWitness> {
    const key = await globalThis.crypto.subtle.importKey("pkcs8", unb64(state.privateKey), { name: "Ed25519" }, true, ["sign"]);
    const vkey = await cosignerVkey(state.name, unb64(state.publicKey));
    const kept = [...(state.trusted ?? []), ...trusted];
    return new TableWitness(call, { ...state, trees: [...state.trees] }, key, vkey, new Set(kept));
  }

  state(): WitnessState {
    return { ...this.s, trees: [...this.s.trees], trusted: [...this.trusted] };
  }

  /** Verify the table's current checkpoint, prove it consistent with every tree verified
   * before, keep it, cosign it and post the cosignature. Throws an Equivocation if the
   * server now shows another tree of a size verified before. */
  async check(): Promise<Checked> {
    const table = encodeURIComponent(this.s.table);
    const [status, served] = await this.call("GET", `/v1/tables/${table}/checkpoint`);
    if (status !== 200) throw new Error(`the checkpoint was not served (HTTP ${status})`);
    const note: string = served.text;
    const split = await this.compare(note);
    if (split) throw split;
    const { size, rootHash } = await this.open(note);
    const plain = ownLines(note);
    const cosigned = `${plain}${await cosignNote(plain, this.s.name, this.key, unb64(this.s.publicKey), Math.floor(Date.now() / 1000))}\n`;
    const [posted, problem] = await this.call("POST", `/v1/tables/${table}/cosignatures`, { vkey: this.vkey, note: cosigned });
    if (posted !== 201) throw Object.assign(new Error(`the cosignature was refused (HTTP ${posted})`), { problem });
    const [, listed] = await this.call("GET", `/v1/tables/${table}/cosignatures`);
    const confirmed = new Set<string>();
    const unknown = new Set<string>();
    const body = plain.slice(0, plain.indexOf("\n\n") + 1);
    for (const c of listed?.cosignatures ?? []) {
      if (c.vkey === this.vkey || c.size !== size || c.root_hash !== rootHash) continue;
      if (!this.trusted.has(c.vkey)) {
        unknown.add(nameOf(String(c.vkey)));
        continue;
      }
      try {  // a trusted key's cosignature of this very tree, checked here
        if (!String(c.note).startsWith(body)) continue;
        await verifyCosignature(c.note, c.vkey);
        confirmed.add(nameOf(c.vkey));  // the name the key carries, not the listing's
      } catch {
        continue;
      }
    }
    const confirmedBy = [...confirmed].sort();
    return { size, rootHash, note, cosigned, confirmedBy, unknownCosigners: [...unknown].sort(), unconfirmed: confirmedBy.length === 0 };
  }

  /** This witness's cosignature of `note`, a checkpoint whose tree it verified before
   * (`check` or `compare`): the note with its log signatures and this witness's line, to
   * hand to the other players over their own channel. Throws for a tree not verified. */
  async cosign(note: string): Promise<string> {
    const plain = ownLines(note);
    const body = plain.slice(0, plain.indexOf("\n\n") + 1);
    if (!this.s.trees.some((t) => t.note.startsWith(body))) throw new Error("this witness has not verified that tree");
    return `${plain}${await cosignNote(plain, this.s.name, this.key, unb64(this.s.publicKey), Math.floor(Date.now() / 1000))}\n`;
  }

  /** Who of the cosigners this player trusts cosigned `note` (their lines in it checked
   * here), where the note states a tree this witness verified: a cosignature handed over
   * by another player confirms this view only if it is of this very tree, by a key the
   * player trusts. Any other line counts for nothing. */
  async confirmedIn(note: string): Promise<string[]> {
    const split = note.indexOf("\n\n");
    if (split < 0) return [];
    const body = note.slice(0, split + 1);
    if (!this.s.trees.some((t) => t.note.startsWith(body))) return [];
    const confirmed = new Set<string>();
    for (const vkey of this.trusted) {
      if (vkey === this.vkey) continue;
      try {
        await verifyCosignature(note, vkey);
        confirmed.add(nameOf(vkey));
      } catch {
        continue;
      }
    }
    return [...confirmed].sort();
  }

  /** Check a checkpoint note, from the server or from another player: signed under the
   * root and consistent with every tree verified before (the server proves it; throws if
   * it cannot). Returns the Equivocation if it states another tree for a size verified
   * before (the note is then not kept); else keeps it and returns null. */
  async compare(note: string): Promise<Equivocation | null> {
    const { size, rootHash } = await this.open(note);
    const kept = this.s.trees.find((t) => t.size === size);
    if (kept) return kept.root_hash === rootHash ? null : new Equivocation(size, kept.note, note);
    // The trees kept are prefixes of one another (each was proven so when kept): a tree
    // consistent with the largest kept below it and the smallest kept above it is
    // consistent with them all, so two proofs do, however long the game.
    const below = this.s.trees.filter((t) => t.size < size).at(-1);
    const above = this.s.trees.find((t) => t.size > size);
    for (const old of [below, above]) {
      if (!old || old.size === 0 || size === 0) continue;
      const [low, high] = old.size < size ? [old, { size, root_hash: rootHash }] : [{ size, root_hash: rootHash }, old];
      const [status, proof] = await this.call(
        "GET",
        `/v1/tables/${encodeURIComponent(this.s.table)}/proofs/consistency?from=${low.size}&to=${high.size}`,
      );
      if (status !== 200) throw new Error(`no consistency proof from ${low.size} to ${high.size} (HTTP ${status})`);
      try {
        await verifyConsistency(low.size, high.size, unb64(low.root_hash), unb64(high.root_hash), proof.proof.map(unb64));
      } catch (error) {
        throw new Error(
          `the checkpoint of size ${size} is not consistent with the one of size ${old.size} verified before ` +
            `(${(error as Error).message}): keep both notes\n${old.note}\n${note}`,
        );
      }
    }
    this.s.trees.push({ size, root_hash: rootHash, note: ownLines(note) });
    this.s.trees.sort((a, b) => a.size - b.size);
    return null;
  }

  private async open(note: string): Promise<{ size: number; rootHash: string; root: Uint8Array }> {
    const lines = note.split("\n");
    if (!lines[0]?.endsWith(`/${this.s.table}`) || !SIZE.test(lines[1] ?? "")) {
      throw new Error(`the note is not a checkpoint of table ${this.s.table}`);
    }
    const [, served] = await this.call("GET", "/v1/keys");
    const keys = await trustedKeys(served, this.s.root);
    let last: unknown = new Error("no key certified by the pinned root");
    for (const keyId of keys.keys()) {
      try {
        const opened = await verifyCheckpoint(
          { text: note, key_id: keyId, size: Number(lines[1]), root_hash: lines[2] },
          keys,
          { table: this.s.table },
        );
        return { size: opened.size, rootHash: lines[2]!, root: opened.root };
      } catch (error) {
        last = error;
      }
    }
    throw last;
  }
}

/** The cosigner name a verifier key carries (`<name>+<key ID>+<key>`). */
function nameOf(vkey: string): string {
  return vkey.slice(0, vkey.indexOf("+"));
}

/** The note with only the log's own signature lines (no one's cosignatures). */
function ownLines(note: string): string {
  const split = note.indexOf("\n\n");
  const body = note.slice(0, split + 1);
  const name = body.slice(0, body.indexOf("\n")).replace(/\/[^/]*$/, "");
  const own = note
    .slice(split + 2)
    .split("\n")
    .filter((line) => {
      if (!line.startsWith(`\u2014 ${name} `)) return false;
      try {
        return unb64(line.slice(name.length + 3)).length === 68;
      } catch {
        return false;
      }
    });
  return `${body}\n${own.map((line) => `${line}\n`).join("")}`;
}
