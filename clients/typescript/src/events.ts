// Live table events: GET /v1/tables/{table}/events (Server-Sent Events), read over fetch so
// the same helper runs in Node (which has no EventSource before 22) and in browsers.
//
//   for await (const event of tableEvents("https://dice.example", "campaign-7")) {
//     if (event.kind === "entry") show(event.entry, event.words);
//   }
//
// It resumes where it stopped: after a dropped connection it reconnects with
// Last-Event-ID (the last seq it yielded), so no entry is missed or repeated; a 503
// (the server's subscriber bound) is retried after its Retry-After.

import type { components } from "./generated/fairroll.js";

export type Words = components["schemas"]["Words"];

/** One entry of the table's log, as signed (nothing here checks it: verify it with
 * `verifyEntries` or a `LogVerifier` before showing it as verified), and the server's
 * words about it (not in the log: show them apart from what was checked, as the
 * server's). */
export interface EntryEvent {
  kind: "entry";
  seq: number;
  entry: Record<string, unknown> & { seq: number; entry_hash: string; mechanic: string };
  /** The server's text about the roll; entries do not carry it, no verifier checks it. */
  words: Words | null;
}

/** The table's checkpoint (when asked for with `checkpoint: true`), as served: check it
 * (`verifyCheckpoint` under the keys the pinned root certifies) before trusting it. */
export interface CheckpointEvent {
  kind: "checkpoint";
  checkpoint: Record<string, unknown>;
}

export type TableEvent = EntryEvent | CheckpointEvent;

export interface EventOptions {
  /** Start after this seq (0: from the first entry); default: only new entries. */
  after?: number;
  /** Also yield the table's signed checkpoint after each burst. */
  checkpoint?: boolean;
  /** Stop following (the generator returns). */
  signal?: AbortSignal;
  /** How long to wait before reconnecting after a dropped stream (ms). */
  reconnectMs?: number;
  fetch?: typeof fetch;
}

/** Follow a table's events, reconnecting without a gap until `signal` aborts. */
export async function* tableEvents(
  baseUrl: string,
  table: string,
  options: EventOptions = {},
): AsyncGenerator<TableEvent> {
  const get = options.fetch ?? globalThis.fetch;
  let last: number | undefined = options.after;
  while (!options.signal?.aborted) {
    const url = new URL(`/v1/tables/${encodeURIComponent(table)}/events`, baseUrl);
    if (options.checkpoint) url.searchParams.set("checkpoint", "true");
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    if (last !== undefined) headers["Last-Event-ID"] = String(last);
    let response: Response;
    try {
      response = await get(url, { headers, signal: options.signal ?? null });
    } catch (error) {
      if (options.signal?.aborted) return;
      await pause(options.reconnectMs ?? 1000, options.signal);
      continue;
    }
    if (response.status === 503) {
      await pause(Number(response.headers.get("Retry-After") ?? 5) * 1000, options.signal);
      continue;
    }
    if (!response.ok || !response.body) {
      throw new Error(`events of ${table}: HTTP ${response.status} ${await response.text()}`);
    }
    try {
      for await (const message of messages(response.body)) {
        if (message.event === "entry") {
          const { entry, words } = JSON.parse(message.data) as Omit<EntryEvent, "kind" | "seq">;
          last = entry.seq;
          yield { kind: "entry", seq: entry.seq, entry, words };
        } else if (message.event === "checkpoint") {
          yield { kind: "checkpoint", checkpoint: JSON.parse(message.data) as Record<string, unknown> };
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return;
    }
    await pause(options.reconnectMs ?? 1000, options.signal);
  }
}

interface Message {
  event: string;
  data: string;
  id: string | null;
}

/** The messages of an event stream (the WHATWG "event stream" format; comments skipped). */
export async function* messages(body: ReadableStream<Uint8Array>): AsyncGenerator<Message> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  let event = "message";
  let data: string[] = [];
  let id: string | null = null;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        if (line === "") {
          if (data.length) yield { event, data: data.join("\n"), id };
          event = "message";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = text;
        else if (field === "data") data.push(text);
        else if (field === "id") id = text;
      }
    }
  } finally {
    // The reader stops (a `break`, an abort): close the stream, so the connection ends too.
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
