// fairroll's audit entries, verified where they are shown: in the browser (or Node >= 20),
// with WebCrypto only, taking nothing the server says about them on trust.
//
// For each entry, in seq order:
//   - hash:      entry_hash = SHA-256(bytes(prev_hash) || canonical JSON of the body),
//                where the body is the entry without entry_hash and signature
//                (docs/audit.md); prev_hash must be the previous entry's entry_hash;
//   - signature: Ed25519 over "fairroll/entry/v1:" + entry_hash with the key named by
//                key_id, from GET /v1/keys, and not after the key was retired;
//   - dice:      for a seeded roll, every die is re-derived from the seed with the
//                published HMAC-SHA256 derivation (docs/randomness.md).
// The rules themselves (outcome from dice) are replayed by `fairroll verify`; a page
// shows the dice it re-derived next to the outcome.
//
// No build step, no dependency: import it as an ES module.

const encoder = new TextEncoder();
const DOMAIN = encoder.encode("fairroll/die/v1");
const SIGNATURE_CONTEXT = "fairroll/entry/v1:";
const WORD_SPACE = 1n << 64n;
const subtle = globalThis.crypto.subtle;

/** Canonical JSON, as fairroll hashes it: keys sorted (by code point) at every level,
 * no whitespace, UTF-8; strings escaped as JSON requires and nothing more. */
export function canonicalJson(value) {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
    return String(value);
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort(byCodePoint);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

function byCodePoint(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return x.length - y.length;
}

function hexToBytes(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function base64ToBytes(text) {
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The hash an entry must carry: SHA-256(prev_hash bytes || canonical body), hex. */
export async function entryHash(entry) {
  const { entry_hash: _hash, signature: _signature, ...body } = entry;
  const digest = await subtle.digest(
    "SHA-256",
    concat(hexToBytes(entry.prev_hash), encoder.encode(canonicalJson(body))),
  );
  return bytesToHex(digest);
}

/** The faces of `count` dice of `sides` sides from `seed`, at positions start.. */
export async function deriveFaces(seed, sides, count, start = 0) {
  const key = await subtle.importKey(
    "raw",
    encoder.encode(seed),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const faces = [];
  for (let position = start; position < start + count; position++) {
    faces.push(await deriveFace(key, position, sides));
  }
  return faces;
}

function u32(value) {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

async function deriveFace(key, position, sides) {
  const limit = WORD_SPACE - (WORD_SPACE % BigInt(sides));
  for (let counter = 0; ; counter++) {
    const message = concat(DOMAIN, u32(position), u32(sides), u32(counter));
    const block = new DataView(await subtle.sign("HMAC", key, message));
    for (let at = 0; at < 32; at += 8) {
      const word = block.getBigUint64(at);
      if (word < limit) return Number(word % BigInt(sides)) + 1;
    }
  }
}

/** Public keys as served by GET /v1/keys, imported for verification, by key_id. */
export async function importKeys(served) {
  const keys = new Map();
  for (const key of served.keys) {
    const imported = await subtle.importKey(
      "raw",
      base64ToBytes(key.public_key),
      { name: "Ed25519" },
      false,
      ["verify"],
    );
    keys.set(key.key_id, { key: imported, notAfter: key.not_after });
  }
  return keys;
}

/** Check one entry; `previousHash` is the entry_hash of seq - 1 (64 zeros before seq 1),
 * or null when the previous entry is not at hand (then the link is not checked).
 * Returns {seq, ok, problems: [..], checks: {...}}. */
export async function verifyEntry(entry, keys, previousHash = null) {
  const problems = [];
  const checks = { hash: false, link: previousHash !== null, signature: false, dice: "none" };
  const computed = await entryHash(entry);
  if (computed !== entry.entry_hash) {
    problems.push(`entry_hash does not match its contents (computed ${computed.slice(0, 12)}…)`);
  } else {
    checks.hash = true;
  }
  if (previousHash !== null && entry.prev_hash !== previousHash) {
    problems.push(`prev_hash is not the entry_hash of seq ${entry.seq - 1}`);
  }
  const signer = keys.get(entry.key_id);
  if (!signer) {
    problems.push(`signed by unknown key ${entry.key_id}`);
  } else {
    const good = await subtle.verify(
      { name: "Ed25519" },
      signer.key,
      base64ToBytes(entry.signature),
      encoder.encode(SIGNATURE_CONTEXT + entry.entry_hash),
    );
    if (!good) problems.push("the signature does not verify");
    else if (signer.notAfter && entry.time > signer.notAfter) {
      problems.push(`signed at ${entry.time}, after key ${entry.key_id} was retired`);
    } else checks.signature = true;
  }
  if (entry.source === "seeded" && entry.seed !== null) {
    checks.dice = "re-derived";
    for (let i = 0; i < entry.dice.length; i++) {
      const die = entry.dice[i];
      const [face] = await deriveFaces(entry.seed, die.sides, 1, i);
      if (face !== die.face) {
        problems.push(`die ${i + 1} (${die.group}) is ${die.face}; the seed gives ${face}`);
        checks.dice = "wrong";
        break;
      }
    }
  } else if (entry.source === "committed") {
    checks.dice = "committed (checkable after the reveal)";
  } else if (entry.source === "supplied") {
    checks.dice = "supplied (rolled elsewhere)";
  }
  return { seq: entry.seq, ok: problems.length === 0, problems, checks };
}

/** The mechanic of an operator's signed statement that acknowledged seqs were lost for
 * good (docs/audit.md): it may follow exactly the gap it declares. */
export const EPOCH_MECHANIC = "audit.epoch";

function declaresGap(entry, previousSeq) {
  const request = entry.request ?? {};
  return (
    entry.mechanic === EPOCH_MECHANIC &&
    request.lost_after === previousSeq &&
    request.resume_after === entry.seq - 1
  );
}

/** Check a run of consecutive entries (ascending seq); the first one's link is checked
 * against `previousHash` when given (64 zeros for a table from seq 1; an archived
 * table's base `head_hash`, with `previousSeq` its `size`). Every seq must follow the
 * one before, but for the gap an epoch entry declares. */
export async function verifyEntries(entries, keys, previousHash = null, previousSeq = null) {
  const results = [];
  let previous = previousHash;
  let seq = previousSeq;
  for (const entry of entries) {
    const expected = previous ?? (entry.seq === 1 ? "0".repeat(64) : null);
    const result = await verifyEntry(entry, keys, expected);
    if (seq !== null && entry.seq !== seq + 1 && !declaresGap(entry, seq)) {
      result.problems.push(`seq ${seq + 1} is missing: found seq ${entry.seq}`);
      result.ok = false;
    }
    if (entry.mechanic === EPOCH_MECHANIC) {
      result.checks.dice = `epoch: seqs ${entry.request.lost_after + 1}..${entry.request.resume_after} declared lost`;
    }
    results.push(result);
    previous = entry.entry_hash;
    seq = entry.seq;
  }
  return results;
}
