// @fairroll/client: a typed client for fairroll, the verifiable dice service.
//
//   import { createFairroll } from "@fairroll/client";
//   const dice = createFairroll({ baseUrl: "https://dice.example", root: "ed25519:..." });
//   const { table, write_key } = await dice.createTable();
//   const rolled = await dice.withKey(write_key).rollFormula({ table, formula: "1d20+5" });
//   const attack = await dice.withKey(write_key).roll("/v1/tft/contests", { table, a, b });
//
// Types come from the service's OpenAPI spec (openapi-typescript), calls from
// openapi-fetch; `api` is the whole typed API, the methods below the common path of a
// VTT plugin: roll, follow a table's events, and verify its log without trusting the
// server (the same verifier as the table page).

import createClient from "openapi-fetch";
import type { components, paths } from "./generated/fairroll.js";
import { NOT_VERIFIED, trustedKeys, UnfairRollError, verifyLog } from "./vendor/verify.js";
import { verifiedLog, verifyTilesLog } from "./tiles.js";

export type { components, paths } from "./generated/fairroll.js";
export type Schemas = components["schemas"];
export { type CheckpointEvent, type EntryEvent, type EventOptions, type TableEvent, messages, tableEvents } from "./events.js";
export { AUDIENCE_WORDS, describe, dieInWords, sealedInWords } from "./vendor/words.js";
export {
  canonicalJson,
  deriveFaces,
  entryHash,
  importKeys,
  LogVerifier,
  NOT_VERIFIED,
  parseStrict,
  openingProblem,
  PROVES,
  sealedCommitment,
  sealedRollProblem,
  SELECTIVE_REFUSAL,
  trustedKeys,
  verifyCheckpoint,
  verifyConsistency,
  verifyCosignature,
  verifyEntries,
  verifyEntry,
  verifyInclusion,
  verifyLog,
  verifyReceipt,
} from "./vendor/verify.js";
import { tableEvents, type EventOptions, type TableEvent } from "./events.js";
import { revealSealed } from "./vendor/verify.js";
import { PlayerSession, type Call, type SessionState } from "./session.js";
export { PlayerSession, type SealedOpening, type SessionState, UnfairRollError } from "./session.js";
import type { SealedOpening } from "./session.js";
import { TableWitness, type WitnessState } from "./witness.js";
export { type Checked, Equivocation, TableWitness, type WitnessState } from "./witness.js";
export { verifyTilesLog } from "./tiles.js";

/** A path whose request takes a `seed` and supplied `dice`: a roll, in the spec. */
type RollPath = {
  [P in keyof paths]: paths[P] extends { post: { requestBody: { content: { "application/json": infer B } } } }
    ? "seed" extends keyof B
      ? "dice" extends keyof B
        ? P
        : never
      : never
    : never;
}[keyof paths];

/** Every path that rolls, as the spec this client was built from declares it (the
 * compiler holds this list to the spec: a roll path missing or one too many fails the
 * build). Fair routing starts from it, never from the server's word alone. */
const ROLL_PATHS = {
  "/v1/dice/rolls": true,
  "/v1/fast-battle/attacks": true,
  "/v1/fast-battle/battles": true,
  "/v1/fast-battle/characters": true,
  "/v1/fast-battle/initiatives": true,
  "/v1/fast-battle/level-ups": true,
  "/v1/fast-battle/spells": true,
  "/v1/fbc/conflicts": true,
  "/v1/fbc/rolls": true,
  "/v1/stat-skill/checks": true,
  "/v1/stat-skill/complex-checks": true,
  "/v1/stat-skill/contests": true,
  "/v1/tft/contests": true,
  "/v1/tribute/tests": true,
} as const satisfies Record<RollPath, true>;

/** The version of the API spec this client was generated from (and its own). */
export const SPEC_VERSION = "0.1.0";

export interface FairrollOptions {
  baseUrl: string;
  /** A table's write key (from `createTable`), sent as `Authorization: Bearer`. */
  writeKey?: string;
  /** Whom this client rolls for: named in its seed sessions. */
  player?: string;
  /** The pinned root key id (`ed25519:...`), obtained out of band: only keys it certifies
   * are trusted. Without it every roll and every verdict says NOT VERIFIED. */
  root?: string;
  /** Cosigners' verifier keys this player trusts (exchanged over a channel the operator
   * does not run, or configured witnesses): only they count towards `confirmedBy`. */
  trustedCosigners?: string[];
  fetch?: typeof fetch;
}

/** A refused call: the RFC 9457 problem the server answered. */
export class FairrollError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Schemas["Problem"] | unknown,
  ) {
    const said = problem as { detail?: string; title?: string } | null;
    super(`HTTP ${status}: ${said?.detail ?? said?.title ?? JSON.stringify(problem)}`);
    this.name = "FairrollError";
  }
}

/** A formula to roll; `sealed: {audience}` seals it (the client draws the blind itself:
 * a blind given here is sent as it is). */
export type FormulaRequest = Omit<Schemas["DiceRollRequest"], "sealed"> & {
  sealed?: { audience: Schemas["Audience"]; blind?: string };
};
export type FormulaRoll = Schemas["DiceRollResponse"];
export type Entry = Schemas["Entry"];

/** The outcome of `verifyExport`, in the shape the Python package's `Verified` has too:
 * whether it all holds, how many entries, the first bad seq and every problem found
 * ("seq N: why"), the sources of the dice counted, how many signatures were checked; here
 * also one report per entry. */
export interface VerifiedLog {
  ok: boolean;
  /** False when no root was pinned: the log was NOT VERIFIED, whatever it holds. */
  verified: boolean;
  /** The rolls that verify but are not fair (a client seed the log showed before their
   * chain was committed), with why. */
  not_fair: Array<{ seq: number; why: string }>;
  /** Sealed rolls never revealed (their seqs): they verify, and are listed. */
  sealed_unrevealed: number[];
  /** Sealed rolls a reveal opened, each checked against its commitment. */
  sealed_revealed: number;
  /** Reveals of sealed rolls before the part of the log read: not checked, not bad. */
  sealed_unchecked: number;
  reason: string | null;
  entries: number;
  first_bad_seq: number | null;
  problems: string[];
  sources: Record<string, number>;
  signatures_checked: number;
  reports: Array<{ seq: number; ok: boolean; problems: string[] }>;
}

export function createFairroll(options: FairrollOptions) {
  const headers: Record<string, string> = {};
  if (options.writeKey) headers.Authorization = `Bearer ${options.writeKey}`;
  const api = createClient<paths>({
    baseUrl: options.baseUrl,
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (data === undefined) throw new FairrollError(response.status, error);
    return data;
  }

  // Fair by default: a roll without seed, dice or session is made in this client's own
  // hash-chain seed session on its table (see PlayerSession), opened on first use.
  const call: Call = async (method, path, body, extra = {}) => {
    const response = await (options.fetch ?? fetch)(`${options.baseUrl.replace(/\/$/, "")}${path}`, {
      method,
      headers: { ...headers, ...extra, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return [response.status, text ? JSON.parse(text) : null];
  };
  // The keys certified under the pinned root, read once (none without a root).
  let trusted: Promise<Map<string, unknown>> | null = null;
  const keys = (): Promise<Map<string, unknown>> => {
    if (!options.root) return Promise.resolve(new Map());
    trusted ??= call("GET", "/v1/keys").then(async ([, served]) => {
      const known = await trustedKeys(served, options.root);
      if (known.size === 0) throw new UnfairRollError(`no signing key is certified by the root ${options.root}`, served);
      return known;
    });
    trusted.catch(() => { trusted = null; });
    return trusted;
  };
  const sessions = new Map<string, Promise<PlayerSession>>();
  function session(table: string, start?: { state?: SessionState; length?: number }): Promise<PlayerSession> {
    if (start?.state) sessions.set(table, Promise.resolve(PlayerSession.resume(call, start.state, keys)));
    if (!sessions.has(table)) {
      const opening = PlayerSession.open(call, table, keys, options.player, start?.length);
      opening.catch(() => sessions.delete(table));
      sessions.set(table, opening);
    }
    return sessions.get(table)!;
  }
  // A body asks for a fair roll unless it names a seed, dice or a session with a value
  // (a field set to undefined or null asks for nothing: it is left out of the fair roll).
  const CHOSEN = ["seed", "dice", "session"];
  const unseeded = (body: object) => !CHOSEN.some((k) => (body as Record<string, unknown>)[k] != null);
  const plain = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).filter(([k, v]) => !(CHOSEN.includes(k) && v == null)));
  // The paths that roll, as this client's spec declares them (ROLL_PATHS), and any the
  // server lists beside them: the server's list can add a path to the fair route, never
  // take one off it (a relisting that drops a mechanic would send its fair call to a
  // server-drawn seed, unchecked).
  let rolling: Promise<Set<string>> | null = null;
  const rollPaths = (): Promise<Set<string>> => {
    rolling ??= call("GET", "/v1/systems")
      .then(([, listed]) =>
        (listed?.systems ?? []).flatMap((s: any) =>
          (s.mechanics ?? []).filter((m: any) => (m.dice ?? []).length > 0).map((m: any) => String(m.roll?.path)),
        ),
      )
      .catch(() => [] as string[])
      .then((served: string[]) => new Set<string>([...Object.keys(ROLL_PATHS), ...served]));
    return rolling;
  };
  /** Roll `body` on `path` fairly: in this client's seed session on the body's table. */
  async function fairRoll(path: string, body: Record<string, unknown>, idempotencyKey?: string): Promise<any> {
    const mine = await session(String(body.table ?? "default"));
    return mine.roll(path, plain(body), idempotencyKey);
  }
  // The typed API, fair by default: a POST to a roll path without seed, dice or session
  // goes through this player's seed session and is checked before it is returned.
  const fairApi = {
    ...api,
    POST: (async (path: string, init: any = {}) => {
      const body = init?.body;
      if (body && typeof body === "object" && unseeded(body) && (await rollPaths()).has(path)) {
        const key = (init.headers as Record<string, string> | undefined)?.["Idempotency-Key"];
        const rolled = await fairRoll(path, body, key);
        return { data: rolled, error: undefined, response: new Response(JSON.stringify(rolled), { status: 200 }) };
      }
      return (api.POST as any)(path, init);
    }) as typeof api.POST,
  } as typeof api;

  return {
    /** The whole typed API (openapi-fetch): `api.POST("/v1/tft/contests", { body })`, fair
     * by default (a roll without seed, dice or session is made in this player's seed
     * session and checked); `rawApi` sends what it is given. */
    api: fairApi,
    rawApi: api,
    /** Roll any mechanic fairly: `roll("/v1/tft/contests", { table, a, b })`, in this
     * player's seed session, checked before it is returned. With `sealed: {audience}`
     * ("gm", "blind" or "self") the roll is sealed: this client draws its blind
     * (crypto.getRandomValues), the log records only a commitment, and the answer is
     * checked against it (the entry seals the mechanic and audience sent, the opening holds
     * the blind and request sent, opens the commitment, and its dice derive with the
     * blind); `checked.sealed` is `{seq, audience, opening}`: keep the opening (or give it
     * to the GM) to reveal the roll with `revealSealed`. */
    roll: fairRoll,
    /** Publish the opening of the sealed roll at `seq` of `table`: checked here against
     * the sealed entry first (an opening that does not open it is never sent), then the
     * reveal statement the server appended (its seq, its opening, its receipt under the
     * pinned root). */
    async revealSealed(table: string, seq: number, opening: SealedOpening): Promise<any> {
      return revealSealed(call, table, seq, opening, await keys());
    },
    /** The same client with a table's write key. */
    withKey(writeKey: string) {
      return createFairroll({ ...options, writeKey });
    },
    createTable(body: Schemas["NewTable"] = {}) {
      return answer(api.POST("/v1/tables", { body }));
    },
    systems() {
      return answer(api.GET("/v1/systems"));
    },
    /** This client's seed session on `table` (opened on first use, or resumed from a kept
     * `state`); `session(table).roll(path, body)` rolls any mechanic in it. */
    session,
    /** Roll a dice formula, in this client's seed session unless the body names a seed,
     * dice or a session, or `fair` is false; `idempotencyKey` makes a retry answer the same
     * roll. */
    async rollFormula(body: FormulaRequest, idempotencyKey?: string, fair = true): Promise<FormulaRoll> {
      if (fair && unseeded(body)) return fairRoll("/v1/dice/rolls", body as Record<string, unknown>, idempotencyKey);
      return answer(
        api.POST("/v1/dice/rolls", {
          // Not fair (a seed, dice or a session named): a `sealed` here is the caller's
          // own, blind and all (the server refuses one outside a hash-chain session).
          body: body as Schemas["DiceRollRequest"],
          ...(idempotencyKey ? { headers: { "Idempotency-Key": idempotencyKey } } : {}),
        }),
      );
    },
    /** Exact odds of a formula, read in `dialect` (`roll20`, the default; `foundry`; `avrae`). */
    formulaOdds(formula: string, dialect?: FormulaRequest["dialect"]) {
      return answer(api.POST("/v1/dice/rolls/odds", { body: dialect ? { formula, dialect } : { formula } }));
    },
    entries(table: string, after = 0, limit = 100) {
      return answer(api.GET("/v1/tables/{table}/entries", { params: { path: { table }, query: { after, limit } } }));
    },
    /** Every entry of a table, page by page. */
    async *allEntries(table: string): AsyncGenerator<Entry> {
      let after = 0;
      for (;;) {
        const page = await this.entries(table, after);
        yield* page.entries as Entry[];
        if (page.next_after === null || page.next_after === undefined) return;
        after = page.next_after;
      }
    },
    /** The table's log as NDJSON: the signed bytes of every entry, one per line. */
    async exportTable(table: string): Promise<string> {
      const { data, response } = await api.GET("/v1/tables/{table}/export", {
        params: { path: { table } },
        parseAs: "text",
      });
      if (!response.ok || typeof data !== "string") throw new FairrollError(response.status, data);
      return data;
    },
    keys() {
      return answer(api.GET("/v1/keys"));
    },
    /** This player as a witness of `table`'s log, trusting keys from the pinned `root`
     * only (see TableWitness): `await (await dice.witness(table, name, root)).check()`
     * verifies, proves consistent, cosigns and posts the table's checkpoint. */
    witness(table: string, name: string, root: string, state?: WitnessState): Promise<TableWitness> {
      const trust = options.trustedCosigners ?? [];
      return state ? TableWitness.resume(call, state, trust) : TableWitness.create(call, table, name, root, trust);
    },
    /** Follow a table's entries live (see `tableEvents`). */
    events(table: string, eventOptions: EventOptions = {}): AsyncGenerator<TableEvent> {
      return tableEvents(options.baseUrl, table, { ...(options.fetch ? { fetch: options.fetch } : {}), ...eventOptions });
    },
    /** Check an NDJSON export here, trusting nothing the server says about it, as
     * `fairroll verify --root` does (verify.js `verifyLog`): strict JSON, the hash chain,
     * Ed25519 signatures by keys the log publishes under the pinned `root` only, sources,
     * sessions, chains and every seeded die. Without `root` (here or in the options) the
     * verdict is NOT VERIFIED: ok false, whatever the log holds. */
    async verifyExport(ndjson: string, keys?: Schemas["KeyList"], root?: string): Promise<VerifiedLog> {
      const pinned = root ?? options.root;
      const served = keys ?? (await this.keys());
      const known = pinned ? await trustedKeys(served, pinned) : new Map();
      return verifiedLog(await verifyLog(ndjson, known, { root: pinned ?? null }), pinned);
    },
    /** Check the table's log from its tiles at `location` (the server's
     * /v1/tables/{table}/log, or a mirror's URL on any static host) as `verifyExport`
     * checks its export, with the checkpoint it read kept: see `verifyTilesLog`. */
    async verifyTiles(location: string, keys?: Schemas["KeyList"], root?: string): Promise<VerifiedLog> {
      const served = keys ?? (await this.keys());
      return verifyTilesLog(location, served, root ?? options.root, options.fetch ? { fetch: options.fetch } : {});
    },
  };
}

export type Fairroll = ReturnType<typeof createFairroll>;
