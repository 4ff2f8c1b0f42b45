// A player's hash-chain seed session: what makes a roll fair against the operator.
//
// The server commits a hash chain's anchor in the log before the first roll; each roll
// reveals the chain's next link, mixed with a client seed this client drew from the
// platform's CSPRNG once it saw the anchor committed, so neither side could pick the dice
// (docs/randomness.md in the service's repository). Every answer is checked before it is
// returned, by the same code the table page runs (verify.js `rollInSession`): the client
// seed, the session and the nonce are the ones sent, the link hashes to the chain's
// anchor, the dice re-derive, and the receipt proves the entry is in a note of this table
// signed under the pinned root. A refusal never lets the operator choose: a 409 naming
// another nonce sends the client to the log for its own roll at the nonce it sent, and a
// session answered as revealed, spent or gone is never replaced silently.

import { openSession, rollInSession, UnfairRollError } from "./vendor/verify.js";

export { UnfairRollError };

/** What a client keeps of its session (`state()`), to go on with it elsewhere. */
export interface SessionState {
  table: string;
  seedId: string;
  clientSeed: string;
  nonce: number;
  anchor: string;
  length: number;
  firstNonce: number;
  /** The last seq of the table this client verified: a 409 is looked into from there. */
  after?: number;
  /** A roll sent and not answered: its nonce, Idempotency-Key and body. */
  pending?: { nonce: number; idempotencyKey: string; asked: string };
  /** The blind this client drew for a sealed roll at `nonce` of the chain of
   * `clientSeed`: every sealed roll sent at that nonce sends it, so a server that refuses
   * one cannot have the player roll other dice there. */
  blind?: { nonce: number; clientSeed: string; blind: string };
  /** The last checkpoint of the table this client verified (a receipt's note): every
   * new receipt's note must be consistent with it, so a forked log shown to this player
   * is caught at its next roll. */
  checkpoint?: { size: number; root_hash: string } | null;
}

/** What opens a sealed roll's commitment (docs/audit.md, "Sealed rolls"): the blind this
 * client drew, the mechanic, its request as the log would hold it, the dice and the outcome. */
export interface SealedOpening {
  blind: string;
  mechanic: string;
  request: Record<string, unknown>;
  dice: Die[];
  outcome: unknown;
}

/** A die as the log holds it. */
export interface Die {
  group: string;
  sides: number;
  face: number;
}

/** A roll checked before it was returned (`PlayerSession.roll`): the server's answer,
 * with what this client checked apart from what it did not. */
export interface CheckedRoll {
  /** What was checked, as the log holds it: the entry's seq and mechanic, its dice
   * (re-derived from the chain's link, this client's seed and the nonce) and its
   * outcome. Show these under the check mark. */
  checked: {
    seq: number;
    mechanic: string;
    dice: Die[];
    outcome: unknown;
    /** A sealed roll (sent with `sealed: {audience}`): the log's sealed entry, whom it is
     * for, and its opening (checked against the entry's commitment), kept to reveal it. */
    sealed?: { seq: number; audience: "gm" | "blind" | "self"; opening: SealedOpening };
  };
  /** The server's words about the outcome: no log entry carries them and nothing here
   * checked them. Show them apart from `checked`, labelled as the server's words (or
   * derive words from `checked` yourself). */
  serverWords: { asked: string; text: string; [field: string]: unknown } | null;
  /** Verified (under the pinned root) and fair, or NOT VERIFIED and why. */
  verdict: { verified: boolean; fair: boolean; reason: string | null };
  /** The rest of the server's answer (its `words` are `serverWords`, unchecked). */
  [field: string]: any;
}

/** How a session reaches the server: one POST or GET, answering [status, body]. */
export type Call = (method: "GET" | "POST", path: string, body?: unknown, headers?: Record<string, string>) => Promise<[number, any]>;

/** The signing keys certified under the pinned root (empty: no root, NOT VERIFIED). */
export type TrustedKeys = () => Promise<Map<string, unknown>>;

export class PlayerSession {
  private constructor(
    private readonly call: Call,
    private s: SessionState,
    private readonly keys: TrustedKeys,
  ) {}

  /** Start a hash-chain session on `table` (for `player`; chains of `length` links), its
   * commitment checked in the log before any roll. */
  static async open(call: Call, table: string, keys: TrustedKeys, player?: string, length?: number): Promise<PlayerSession> {
    const s = await openSession(call, table, await keys(), { player: player ?? null, length: length ?? null });
    return new PlayerSession(call, s as SessionState, keys);
  }

  /** Go on with a kept session. */
  static resume(call: Call, state: SessionState, keys: TrustedKeys): PlayerSession {
    return new PlayerSession(call, { ...state }, keys);
  }

  state(): SessionState {
    return { ...this.s };
  }

  /** Roll `body` (no seed, dice or session) at this session's next nonce, checked before
   * it is returned (`UnfairRollError` otherwise); its `verdict` says whether it was
   * verified under a pinned root, its `checked` what was checked, and its `serverWords`
   * are the server's text, unchecked. Throws the server's answer on a refusal. */
  async roll(path: string, body: Record<string, unknown>, idempotencyKey?: string): Promise<CheckedRoll> {
    return rollInSession(this.call, this.s, path, body, await this.keys(), { idempotencyKey: idempotencyKey ?? null });
  }
}
