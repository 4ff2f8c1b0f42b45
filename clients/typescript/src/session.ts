// A player's hash-chain seed session: what makes a roll fair against the operator.
//
// The server commits a hash chain's anchor in the log before the first roll; each roll
// reveals the chain's next link, mixed with a client seed this client drew from the
// platform's CSPRNG and kept, so neither side could pick the dice (docs/randomness.md in
// the service's repository). Each answer is checked as it comes, trusting nothing the
// server says: its link hashes to its chain's anchor in as many steps as it stands from
// the chain's start, and every die derives from `link:client_seed:nonce`. A roll that did
// not go through is sent again with the same nonce, client seed and Idempotency-Key, so a
// server that refuses rolls can only refuse them again, never change their dice. The
// client seed is drawn afresh for each chain, once that chain's anchor is committed.

import { chainPrevious, deriveFaces } from "./vendor/verify.js";

/** What a client keeps of its session (`state()`), to go on with it elsewhere. */
export interface SessionState {
  table: string;
  seedId: string;
  clientSeed: string;
  nonce: number;
  anchor: string;
  length: number;
  firstNonce: number;
  /** A roll sent and not answered: its nonce, Idempotency-Key and body. */
  pending?: { nonce: number; idempotencyKey: string; asked: string };
}

/** An answer that does not follow from the committed chain: keep it, it is evidence. */
export class UnfairRollError extends Error {
  constructor(
    message: string,
    readonly answer: unknown,
  ) {
    super(message);
    this.name = "UnfairRollError";
  }
}

/** How a session reaches the server: one POST or GET, answering [status, body]. */
export type Call = (method: "GET" | "POST", path: string, body?: unknown, headers?: Record<string, string>) => Promise<[number, any]>;

const LINK = /^[0-9a-f]{64}$/;

function clientSeed(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class PlayerSession {
  private constructor(
    private readonly call: Call,
    private s: SessionState,
  ) {}

  /** Start a hash-chain session on `table` (for `player`; chains of `length` links). */
  static async open(call: Call, table: string, player?: string, length?: number): Promise<PlayerSession> {
    const asked: Record<string, unknown> = {};
    if (player) asked.player = player;
    if (length) asked.length = length;
    const [status, made] = await call("POST", `/v1/tables/${encodeURIComponent(table)}/seeds`, asked);
    if (status !== 201) throw new UnfairRollError(`the seed session was not opened (HTTP ${status})`, made);
    if (made.kind !== "chain" || !LINK.test(made.commitment ?? "")) {
      throw new UnfairRollError("the server did not open a hash-chain session", made);
    }
    return new PlayerSession(call, {
      table, seedId: made.seed_id, clientSeed: clientSeed(), nonce: 1,
      anchor: made.commitment, length: made.length, firstNonce: 1,
    });
  }

  /** Go on with a kept session. */
  static resume(call: Call, state: SessionState): PlayerSession {
    return new PlayerSession(call, { ...state });
  }

  state(): SessionState {
    return { ...this.s };
  }

  /** Roll `body` (no seed, dice or session) at this session's next nonce, checked
   * against the chain before it is returned. Throws the server's answer on a refusal. */
  async roll(path: string, body: Record<string, unknown>, idempotencyKey?: string): Promise<any> {
    const asked = JSON.stringify({ ...body, table: this.s.table });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (this.s.nonce > this.s.firstNonce + this.s.length - 1 && !this.s.pending) await this.nextChain();
      const s = this.s;
      const same = s.pending?.asked === asked;
      const nonce = s.pending?.nonce ?? s.nonce;
      const key = idempotencyKey ?? (same ? s.pending!.idempotencyKey : globalThis.crypto.randomUUID());
      s.pending = { nonce, idempotencyKey: key, asked };
      const session = { seed_id: s.seedId, client_seed: s.clientSeed, nonce };
      const [status, answer] = await this.call("POST", path, { ...body, table: s.table, session }, { "Idempotency-Key": key });
      if (status === 409 && Number.isInteger(answer?.nonce)) {
        s.nonce = answer.nonce;  // this player rolled elsewhere
        s.pending = undefined;
        continue;
      }
      if (status >= 400) {
        if (status < 500) s.pending = undefined;  // refused for what it asked: no nonce taken
        throw Object.assign(new Error(`HTTP ${status}: ${answer?.detail ?? ""}`), { status, problem: answer });
      }
      await this.check(answer, nonce);
      s.pending = undefined;
      return answer;
    }
    throw new Error("the seed session kept moving; try again");
  }

  private async nextChain(): Promise<void> {
    const s = this.s;
    const [status, seen] = await this.call("GET", `/v1/tables/${encodeURIComponent(s.table)}/seeds/${s.seedId}`);
    if (status === 200 && seen.first_nonce === s.nonce && LINK.test(seen.commitment ?? "")) {
      this.s = { ...s, anchor: seen.commitment, firstNonce: s.nonce, length: seen.length, clientSeed: clientSeed() };
    } else {
      this.s = (await PlayerSession.open(this.call, s.table, undefined, s.length)).s;
    }
  }

  private async check(answer: any, nonce: number): Promise<void> {
    const s = this.s;
    const ref = answer?.session ?? {};
    if (ref.seed_id !== s.seedId || ref.client_seed !== s.clientSeed) {
      throw new UnfairRollError("the roll is not in this player's session", answer);
    }
    if (ref.nonce !== nonce || !LINK.test(ref.link ?? "")) {
      throw new UnfairRollError("the roll does not reveal its link at the nonce sent", answer);
    }
    if (ref.first_nonce !== s.firstNonce || ref.commitment !== s.anchor) {
      throw new UnfairRollError("the roll is on another chain than the one committed", answer);
    }
    if ((await chainPrevious(ref.link, nonce - s.firstNonce + 1)) !== s.anchor) {
      throw new UnfairRollError("the revealed link does not hash to its chain's anchor", answer);
    }
    const dice: Array<{ sides: number; face: number }> = answer.dice ?? [];
    for (const [i, die] of dice.entries()) {
      const [face] = await deriveFaces(`${ref.link}:${s.clientSeed}:${nonce}`, die.sides, 1, i);
      if (face !== die.face) throw new UnfairRollError(`die ${i} does not derive from the link`, answer);
    }
    s.nonce = nonce + 1;
  }
}
