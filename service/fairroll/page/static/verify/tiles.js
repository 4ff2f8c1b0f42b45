// A table's log read from its tiles (C2SP tlog-tiles, docs/audit.md "Tiles") instead of
// its export: the server's /v1/tables/<table>/log, or a mirror of it on any static host
// (`fairroll mirror`). The reading only, as the Python core's
// fairroll.audit.verify.tiles_source reads it, with its words: the checkpoint must be a
// note signed by a key the pinned root certified; every full hash tile must hash to its
// hash in the tile above, and the level-0 tiles must fold to the checkpoint's root;
// every entry bundle must hold as many entries as its level-0 tile has hashes, each
// hashing to its leaf; a seq an epoch declared lost (bundled as its placeholder's bytes)
// is left out, as the export leaves it out. The entries go to verifyLog (run.js) as an
// export's lines, with the checkpoint read kept, so a log verifies the same either way.

import { concat, sameBytes, sha256 } from "./bytes.js";
import { Frontier } from "./merkle.js";
import { openNote, parseCheckpointBody, signerVerifier } from "./note.js";
import { NOT_VERIFIED, verifyLog } from "./run.js";

const HEIGHT = 8;
const WIDTH = 256;
const HASH = 32;
const LOST_PREFIX = "fairroll/lost/v1:";

/** A tile, a bundle or a checkpoint that is not what the signed checkpoint says. */
export class TileError extends Error {}

/** A tile's path under the log's prefix: level -1 for an entry bundle; `<N>` in 3-digit
 * groups, all but the last prefixed with "x"; ".p/<width>" for a partial tile. */
export function tilePath(level, n, width = WIDTH) {
  let digits = String(n).padStart(3, "0");
  digits = "0".repeat((3 - (digits.length % 3)) % 3) + digits;
  const groups = digits.match(/.../g);
  const index = [...groups.slice(0, -1).map((g) => `x${g}`), groups.at(-1)].join("/");
  return `tile/${level < 0 ? "entries" : level}/${index}${width === WIDTH ? "" : `.p/${width}`}`;
}

/** Every hash tile of the tree of `size` leaves, level by level: [{level, n, width}]. */
export function tilesOf(size) {
  const out = [];
  for (let level = 0; ; level++) {
    const count = Math.floor(size / WIDTH ** level);
    if (!count) break;
    for (let n = 0; n < Math.floor(count / WIDTH); n++) out.push({ level, n, width: WIDTH });
    if (count % WIDTH) out.push({ level, n: Math.floor(count / WIDTH), width: count % WIDTH });
    if (count < WIDTH) break;
  }
  return out;
}

/** A loader of the log at `prefix` (an http(s) URL, or a path on the page's host): a
 * function from a path ("checkpoint", "tile/0/000") to its bytes; TileError for a file
 * not served. */
export function tilesLoader(prefix, fetchImpl = globalThis.fetch) {
  const base = String(prefix).replace(/\/+$/, "");
  return async (path) => {
    const url = `${base}/${path}`;
    const answer = await fetchImpl(url, { cache: path === "checkpoint" ? "no-cache" : "default" });
    if (!answer.ok) throw new TileError(`${path} is not served (${answer.status} from ${url})`);
    return new Uint8Array(await answer.arrayBuffer());
  };
}

async function node(left, right) {
  return sha256(concat(new Uint8Array([1]), left, right));
}

/** The Merkle tree hash of a full tile's 256 hashes: its hash in the tile above. */
async function tileHash(data) {
  let hashes = [];
  for (let at = 0; at < data.length; at += HASH) hashes.push(data.slice(at, at + HASH));
  while (hashes.length > 1) {
    const up = [];
    for (let i = 0; i < hashes.length; i += 2) up.push(await node(hashes[i], hashes[i + 1]));
    hashes = up;
  }
  return hashes[0];
}

function unframe(bundle) {
  const out = [];
  let at = 0;
  while (at < bundle.length) {
    if (at + 2 > bundle.length) throw new TileError("a bundle ends inside an entry's length");
    const length = (bundle[at] << 8) | bundle[at + 1];
    if (at + 2 + length > bundle.length) throw new TileError("a bundle ends inside an entry");
    out.push(bundle.slice(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return out;
}

/** The log whose tiles `load` reads (tilesLoader), checked as the module says: {note,
 * size, root (bytes), keyId, checkpoint ({text, key_id, size, root_hash}: a kept
 * checkpoint for verifyLog), text (the entries as NDJSON)}. `keys`: those the pinned
 * root certified (trustedKeys). Throws TileError (NoteError for the checkpoint). */
export async function readTiles(load, keys, { table = null } = {}) {
  let note;
  try {
    note = new TextDecoder("utf-8", { fatal: true }).decode(await load("checkpoint"));
  } catch (error) {
    if (error instanceof TileError) throw error;
    throw new TileError("the checkpoint is not UTF-8 text");
  }
  const origin = note.slice(0, note.indexOf("\n"));
  const name = origin.slice(0, origin.lastIndexOf("/"));
  if (table !== null && origin.slice(name.length + 1) !== table) {
    throw new TileError(`the checkpoint's origin '${origin}' is not table ${table}'s log`);
  }
  const verifiers = new Map();
  for (const [keyId, key] of keys) verifiers.set(await signerVerifier(name, key.raw, key.key), keyId);
  const opened = await openNote(note, [...verifiers.keys()]);
  const signer = [...verifiers.keys()].find((v) => sameBytes(v.keyHash, opened.sigs[0].keyHash));
  const { size, root, rootText } = parseCheckpointBody(opened.text);
  const loaded = new Map();
  const tile = async (level, n, width) => {
    const at = `${level}/${n}`;
    if (!loaded.has(at)) {
      const data = await load(tilePath(level, n, width));
      if (data.length !== width * HASH) throw new TileError(`${tilePath(level, n, width)} is not ${width} hashes`);
      loaded.set(at, data);
    }
    return loaded.get(at);
  };
  const all = tilesOf(size);
  const widths = new Map(all.map((t) => [`${t.level}/${t.n}`, t.width]));
  for (const t of all) {
    if (t.width !== WIDTH) continue;
    const parent = Math.floor(t.n / WIDTH);
    const above = await tile(t.level + 1, parent, widths.get(`${t.level + 1}/${parent}`));
    const at = (t.n % WIDTH) * HASH;
    if (!sameBytes(await tileHash(await tile(t.level, t.n, t.width)), above.slice(at, at + HASH))) {
      throw new TileError(`${tilePath(t.level, t.n, t.width)} is not the tile its parent tile hashes`);
    }
  }
  let frontier = new Frontier();
  const levelZero = all.filter((t) => t.level === 0);
  for (const t of levelZero) {
    const data = await tile(0, t.n, t.width);
    for (let at = 0; at < data.length; at += HASH) frontier = await frontier.append(data.slice(at, at + HASH));
  }
  if (!sameBytes(await frontier.root(), root)) {
    throw new TileError(`the tiles of the tree of ${size} entries do not give its root`);
  }
  const lines = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  for (const t of levelZero) {
    const path = tilePath(-1, t.n, t.width);
    const entries = unframe(await load(path));
    if (entries.length !== t.width) throw new TileError(`${path} holds ${entries.length} entries, not ${t.width}`);
    const leaves = await tile(0, t.n, t.width);
    for (const [i, data] of entries.entries()) {
      const seq = t.n * WIDTH + i + 1;
      const leaf = await sha256(concat(new Uint8Array([0]), data));
      if (!sameBytes(leaf, leaves.slice(i * HASH, (i + 1) * HASH))) {
        throw new TileError(`entry ${seq} of ${path} is not its leaf`);
      }
      let line;
      try {
        line = decoder.decode(data);
      } catch {
        line = "\ufffd";  // not UTF-8: not a JSON entry, as the core will say at its seq
      }
      if (line !== `${LOST_PREFIX}${seq}`) lines.push(line);
    }
  }
  const checkpoint = { text: note, key_id: verifiers.get(signer), size, root_hash: rootText, origin };
  return { note, size, root, keyId: verifiers.get(signer), checkpoint, text: lines.map((l) => `${l}\n`).join("") };
}

/** A table's log verified from its tiles at `location` (an http(s) URL of the log's
 * prefix or of a mirror) as verifyLog verifies its export under the pinned `root`, with
 * the checkpoint read kept beside `checkpoints`: verifyLog's verdict, or ok false with
 * the tile that is not the log's as the reason. `load` replaces the fetching loader. */
/** @param {string} location @param {Map<string, any>} keys
 * @param {{root?: string | null, checkpoints?: any[], receipts?: any[], table?: string | null,
 *   fetch?: typeof fetch, load?: (path: string) => Promise<Uint8Array>}} [options] */
export async function verifyTiles(location, keys, options = {}) {
  const { root = null, checkpoints = [], fetch: fetchImpl, load, ...rest } = options;
  const failed = (reason) => ({
    ok: false, verified: Boolean(root), entries: 0, last_seq: null, first_bad_seq: null, reason,
    not_fair: [], lost: [], sources: {}, results: [],
  });
  if (!root) return failed(NOT_VERIFIED);
  let log;
  try {
    log = await readTiles(load ?? tilesLoader(location, fetchImpl), keys, { table: rest.table ?? null });
  } catch (error) {
    if (error instanceof TypeError) throw error;  // the host could not be reached
    return failed(`the tiles at ${location}: ${error.message}`);
  }
  return verifyLog(log.text, keys, { ...rest, root, checkpoints: [...checkpoints, log.checkpoint] });
}
