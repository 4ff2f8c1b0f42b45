// @fairroll/client: a typed client for fairroll, the verifiable dice service.
//
//   import { createFairroll } from "@fairroll/client";
//   const dice = createFairroll({ baseUrl: "https://dice.example" });
//   const { table, write_key } = await dice.createTable();
//   const rolled = await dice.withKey(write_key).rollFormula({ table, formula: "1d20+5" });
//
// Types come from the service's OpenAPI spec (openapi-typescript), calls from
// openapi-fetch; `api` is the whole typed API, the methods below the common path of a
// VTT plugin: roll, follow a table's events, and verify its log without trusting the
// server (the same verifier as the table page).

import createClient from "openapi-fetch";
import type { components, paths } from "./generated/fairroll.js";
import { importKeys, parseStrict, trustedKeys, verifyEntries } from "./vendor/verify.js";

export type { components, paths } from "./generated/fairroll.js";
export type Schemas = components["schemas"];
export { type CheckpointEvent, type EntryEvent, type EventOptions, type TableEvent, messages, tableEvents } from "./events.js";
export { describe, dieInWords } from "./vendor/words.js";
export {
  canonicalJson,
  deriveFaces,
  entryHash,
  importKeys,
  LogVerifier,
  parseStrict,
  PROVES,
  SELECTIVE_REFUSAL,
  trustedKeys,
  verifyCheckpoint,
  verifyConsistency,
  verifyCosignature,
  verifyEntries,
  verifyEntry,
  verifyInclusion,
  verifyReceipt,
} from "./vendor/verify.js";
import { tableEvents, type EventOptions, type TableEvent } from "./events.js";
import { PlayerSession, type Call, type SessionState } from "./session.js";
export { PlayerSession, type SessionState, UnfairRollError } from "./session.js";
import { TableWitness, type WitnessState } from "./witness.js";
export { type Checked, Equivocation, TableWitness, type WitnessState } from "./witness.js";

/** The version of the API spec this client was generated from (and its own). */
export const SPEC_VERSION = "0.1.0";

export interface FairrollOptions {
  baseUrl: string;
  /** A table's write key (from `createTable`), sent as `Authorization: Bearer`. */
  writeKey?: string;
  /** Whom this client rolls for: named in its seed sessions. */
  player?: string;
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

export type FormulaRequest = Schemas["DiceRollRequest"];
export type FormulaRoll = Schemas["DiceRollResponse"];
export type Entry = Schemas["Entry"];

/** The outcome of `verifyExport`, in the shape the Python package's `Verified` has too:
 * whether it all holds, how many entries, the first bad seq and every problem found
 * ("seq N: why"), the sources of the dice counted, how many signatures were checked; here
 * also one report per entry. */
export interface VerifiedLog {
  ok: boolean;
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
  const sessions = new Map<string, Promise<PlayerSession>>();
  function session(table: string, start?: { state?: SessionState; length?: number }): Promise<PlayerSession> {
    if (start?.state) sessions.set(table, Promise.resolve(PlayerSession.resume(call, start.state)));
    if (!sessions.has(table)) {
      const opening = PlayerSession.open(call, table, options.player, start?.length);
      opening.catch(() => sessions.delete(table));
      sessions.set(table, opening);
    }
    return sessions.get(table)!;
  }
  const unseeded = (body: object) => !["seed", "dice", "session"].some((k) => k in body);

  return {
    /** The whole typed API (openapi-fetch): `api.POST("/v1/tft/contests", { body })`. */
    api,
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
      if (fair && unseeded(body)) {
        const mine = await session(body.table ?? "default");
        return mine.roll("/v1/dice/rolls", body as Record<string, unknown>, idempotencyKey);
      }
      return answer(
        api.POST("/v1/dice/rolls", {
          body,
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
      return state ? TableWitness.resume(call, state) : TableWitness.create(call, table, name, root);
    },
    /** Follow a table's entries live (see `tableEvents`). */
    events(table: string, eventOptions: EventOptions = {}): AsyncGenerator<TableEvent> {
      return tableEvents(options.baseUrl, table, { ...(options.fetch ? { fetch: options.fetch } : {}), ...eventOptions });
    },
    /** Check an NDJSON export here, trusting nothing the server says about it: strict JSON,
     * the hash chain, Ed25519 signatures, and every seeded die. With `root` (a root key id
     * obtained out of band), only keys that root certifies are trusted; without it, the
     * keys the server publishes. */
    async verifyExport(ndjson: string, keys?: Schemas["KeyList"], root?: string): Promise<VerifiedLog> {
      const served = keys ?? (await this.keys());
      const published = root ? await trustedKeys(served, root) : await importKeys(served);
      if (root && published.size === 0) {
        const problem = `no signing key is certified by the root ${root}`;
        const entries = ndjson.split("\n").filter((line) => line.trim()).length;
        return { ok: false, entries, first_bad_seq: null, problems: [problem], sources: {}, signatures_checked: 0, reports: [] };
      }
      const entries = ndjson
        .split("\n")
        .filter((line) => line.trim())
        .map((line) => parseStrict(line));
      // From seq 1: the first entry links to 64 zeros.
      const reports: Array<{ seq: number; ok: boolean; problems: string[]; checks: { signature: boolean } }> =
        await verifyEntries(entries, published, "0".repeat(64));
      const problems = reports.flatMap((r) => r.problems.map((p) => `seq ${r.seq}: ${p}`));
      const sources: Record<string, number> = {};
      for (const entry of entries as Array<{ source?: string }>) {
        const source = String(entry.source);
        sources[source] = (sources[source] ?? 0) + 1;
      }
      return {
        ok: problems.length === 0 && reports.length === entries.length,
        entries: entries.length,
        first_bad_seq: reports.find((r) => !r.ok)?.seq ?? null,
        problems,
        sources,
        signatures_checked: reports.filter((r) => r.checks.signature).length,
        reports,
      };
    },
  };
}

export type Fairroll = ReturnType<typeof createFairroll>;
