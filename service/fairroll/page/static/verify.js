// fairroll's audit entries, verified where they are shown: in the browser (or Node >= 20),
// with WebCrypto only, taking nothing the server says about them on trust.
//
// For each entry, in seq order (docs/audit.md, "What a verifier checks"):
//   - json:      no key twice in one object (parseStrict);
//   - hash:      entry_hash = SHA-256(bytes(prev_hash) || RFC 8785 JSON of the body),
//                where the body is the entry without entry_hash and signature;
//                prev_hash must be the previous entry's entry_hash; seqs consecutive but
//                for the gap an audit.epoch entry declares;
//   - signature: Ed25519 over "fairroll/entry/v1:" + entry_hash with the key named by
//                key_id, from GET /v1/keys, and not after the key was retired;
//   - source:    who chose the seed (drawn, chosen, committed, supplied) and what that
//                proves (PROVES); the table's policy (table.policy) is kept;
//   - dice:      a drawn or chosen roll's dice are re-derived from its seed; a committed
//                roll's nonce must follow its session's last one (no gap, no reuse); a
//                hash-chain roll's link must hash to the link before it (and, alone, to
//                its chain's anchor) and its dice are re-derived from it at once; in a
//                commit-reveal session, when the session.reveal entry comes, its server
//                seed must match the commitment and every roll of the session is re-derived;
//   - tree:      each entry is a leaf, SHA-256(0x00 || RFC 8785 JSON of the entry), of
//                the RFC 6962 Merkle tree; checkpoints (C2SP signed notes) are checked
//                with verifyCheckpoint and kept ones with verifyConsistency.
// The rules themselves (outcome from dice) are replayed by `fairroll verify`; a page
// shows the dice it re-derived next to the outcome.
//
// No build step, no dependency: import it as an ES module.

const encoder = new TextEncoder();
const DOMAIN = encoder.encode("fairroll/die/v1");
const SIGNATURE_CONTEXT = "fairroll/entry/v1:";
const WORD_SPACE = 1n << 64n;
const subtle = globalThis.crypto.subtle;

/** RFC 8785 (JCS), as fairroll hashes entries: keys sorted by UTF-16 code units (what
 * Array.prototype.sort does with strings) at every level, no whitespace; strings as
 * JSON.stringify writes them; integers only, within Number.MAX_SAFE_INTEGER. */
export function canonicalJson(value) {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer: ${value}`);
    return String(value);
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

/** JSON.parse, but a key twice in one object is an error (parsers disagree on which
 * value wins, so such an entry means different things to different verifiers). */
export function parseStrict(text) {
  let at = 0;
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at])) at++;
  };
  const string = () => {
    const start = at++;
    while (text[at] !== '"') {
      if (at >= text.length) throw new Error("unterminated string");
      at += text[at] === "\\" ? 2 : 1;
    }
    at++;
    return JSON.parse(text.slice(start, at));
  };
  const value = () => {
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      const seen = new Set();
      space();
      if (text[at] === "}") return at++;
      for (;;) {
        space();
        const key = string();
        if (seen.has(key)) throw new Error(`the key ${pyRepr(key)} appears twice in one object`);
        seen.add(key);
        space();
        at++; // :
        value();
        space();
        if (text[at++] === "}") return;
      }
    }
    if (c === "[") {
      at++;
      space();
      if (text[at] === "]") return at++;
      for (;;) {
        value();
        space();
        if (text[at++] === "]") return;
      }
    }
    if (c === '"') return string();
    const start = at;
    while (at < text.length && !",]} \t\n\r".includes(text[at])) at++;
    // JSON.parse reads 2.0 as the integer 2; an entry holds integers only (RFC 8785 form,
    // no floats), as the Python core reads it: a fraction or an exponent is refused.
    const token = text.slice(start, at);
    if (/^-?[0-9]/.test(token) && /[.eE]/.test(token)) throw new Error(`the number ${token} is not an integer: an entry holds no floats`);
  };
  const parsed = JSON.parse(text); // the grammar; then the keys
  value();
  return parsed;
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

async function sha256(bytes) {
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

function bytesToBase64(bytes) {
  return btoa(String.fromCharCode(...bytes));
}

/** The entry's RFC 6962 leaf hash: SHA-256(0x00 || JCS of the whole entry). */
export async function leafHash(entry) {
  return sha256(concat(new Uint8Array([0]), encoder.encode(canonicalJson(entry))));
}

/** The leaf of a seq an epoch declared lost. */
export async function lostLeaf(seq) {
  return sha256(concat(new Uint8Array([0]), encoder.encode(`fairroll/lost/v1:${seq}`)));
}

async function node(left, right) {
  return sha256(concat(new Uint8Array([1]), left, right));
}

/** The right edge of a Merkle tree: the hashes of its complete subtrees, largest first. */
export class Frontier {
  constructor(size = 0, levels = [], hashes = []) {
    this.size = size;
    this.levels = levels;
    this.hashes = hashes;
  }

  /** The frontier of a tree of `size` from its subtree hashes (an archive base's). */
  static of(size, hashes) {
    const levels = [];
    for (let level = 52; level >= 0; level--) if (Math.floor(size / 2 ** level) % 2) levels.push(level);
    if (levels.length !== hashes.length) throw new Error(`a tree of ${size} has ${levels.length} frontier hashes`);
    return new Frontier(size, levels, hashes);
  }

  async append(leaf) {
    const levels = [...this.levels, 0];
    const hashes = [...this.hashes, leaf];
    while (levels.length > 1 && levels.at(-1) === levels.at(-2)) {
      const right = hashes.pop();
      const left = hashes.pop();
      const level = levels.pop();
      levels[levels.length - 1] = level + 1;
      hashes.push(await node(left, right));
    }
    return new Frontier(this.size + 1, levels, hashes);
  }

  async root() {
    if (!this.hashes.length) return sha256(new Uint8Array());
    let root = this.hashes.at(-1);
    for (let i = this.hashes.length - 2; i >= 0; i--) root = await node(this.hashes[i], root);
    return root;
  }
}

/** RFC 9162 2.1.4.2: is the tree of `oldSize` (root `oldRoot`) a prefix of the tree of
 * `newSize`? Roots and proof hashes as bytes. Throws naming what fails. */
export async function verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof) {
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (oldSize > newSize) throw new Error(`the tree shrank from ${oldSize} to ${newSize}`);
  if (oldSize === newSize) {
    if (proof.length || !same(oldRoot, newRoot)) throw new Error(`two different roots for size ${oldSize}`);
    return;
  }
  if (oldSize === 0) return;
  const path = [...proof];
  if (!path.length) throw new Error("the consistency proof is empty");
  const m = BigInt(oldSize);
  if ((m & (m - 1n)) === 0n) path.unshift(oldRoot);  // a power of two: the old root is the first node
  let fn = BigInt(oldSize - 1);
  let sn = BigInt(newSize - 1);
  while (fn & 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0n) throw new Error("the consistency proof is too long");
    if (fn & 1n || fn === sn) {
      fr = await node(c, fr);
      sr = await node(c, sr);
      if (!(fn & 1n)) {
        while (fn && !(fn & 1n)) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      sr = await node(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new Error("the consistency proof is too short");
  if (!same(fr, oldRoot)) throw new Error("the proof does not lead to the kept checkpoint's root: the log was rewritten");
  if (!same(sr, newRoot)) throw new Error("the proof does not lead to the new checkpoint's root");
}

/** Check a checkpoint (JSON of GET .../checkpoint): its text is a C2SP signed note whose
 * body (origin, size, base64 root, "chain <head>") carries an Ed25519 signature by the
 * key it names, with the signed-note key hash. As Go's sumdb/note opens a note, every
 * signature line of that key must verify: one that fails rejects the note, before or
 * after a good one. With `table`, the note's origin must be `<key name>/<table>`: a note
 * of another table's log proves nothing about this one. `keys`: keys trusted from the
 * pinned root (trustedKeys), never every key a server lists. Returns {size, root
 * (bytes), headHash, origin}. */
/** @param {any} checkpoint @param {Map<string, any>} keys @param {{table?: string | null}} [options] */
export async function verifyCheckpoint(checkpoint, keys, { table = null } = {}) {
  const text = checkpoint.text;
  const split = text.indexOf("\n\n");
  if (split < 0) throw new Error("a checkpoint note is its text, a blank line, then signatures");
  const body = text.slice(0, split + 1);
  const lines = body.slice(0, -1).split("\n");
  const signer = keys.get(checkpoint.key_id);
  if (!signer) throw new Error(`the checkpoint is signed by unknown key ${checkpoint.key_id}`);
  const origin = lines[0];
  const name = origin.slice(0, origin.lastIndexOf("/"));
  if (table !== null && origin !== `${name}/${table}`) {
    throw new Error(`the checkpoint is not of log ${name}/${table}: its origin is ${origin}, signed for another table`);
  }
  const wantHash = (await sha256(concat(encoder.encode(`${name}\n`), new Uint8Array([1]), signer.raw))).slice(0, 4);
  let good = false;
  for (const line of text.slice(split + 2, -1).split("\n")) {
    const match = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const signature = base64ToBytes(match[2]);
    if (signature.length !== 68 || !signature.slice(0, 4).every((b, i) => b === wantHash[i])) continue;
    if (!(await subtle.verify({ name: "Ed25519" }, signer.key, signature.slice(4), encoder.encode(body)))) {
      throw new Error("the checkpoint's signature does not verify");
    }
    good = true;
  }
  if (!good) throw new Error(`the checkpoint carries no signature by key ${name}`);
  const size = Number(lines[1]);
  const root = base64ToBytes(lines[2]);
  const chain = lines.slice(3).find((l) => l.startsWith("chain "));
  if (size !== checkpoint.size || lines[2] !== checkpoint.root_hash) {
    throw new Error("the checkpoint's fields are not what its note signs");
  }
  return { size, root, headHash: chain ? chain.slice(6) : "0".repeat(64), origin };
}

/** RFC 9162 2.1.3.2: does `proof` lead from `leaf` (bytes, at `index`) to `root` of the
 * tree of `size`? Throws naming what fails. */
export async function verifyInclusion(index, size, leaf, root, proof) {
  if (!(index >= 0 && index < size)) throw new Error(`leaf ${index} is not in a tree of ${size}`);
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new Error("the inclusion proof is too long");
    if ((fn & 1n) === 1n || fn === sn) {
      r = await node(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await node(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new Error("the inclusion proof is too short");
  if (!(r.length === root.length && r.every((x, i) => x === root[i]))) {
    throw new Error("the inclusion proof does not lead to the tree's root");
  }
}

/** Check a roll's receipt alone against its entry (docs/audit.md, "Receipts"): the
 * receipt names the entry, its leaf hash is the entry's, its checkpoint note is signed
 * by a key of `keys` (trustedKeys: keys certified under the pinned root) and is a note
 * of this table's log (origin `<name>/<table>`; `table` defaults to the entry's), and
 * its inclusion proof leads from the leaf to the note's root. Returns {size, root}. */
/** @param {any} entry @param {any} receipt @param {Map<string, any>} keys @param {{table?: string | null}} [options] */
export async function verifyReceipt(entry, receipt, keys, { table = null } = {}) {
  for (const field of ["table", "seq", "entry_hash", "key_id"]) {
    if (receipt[field] !== entry[field]) throw new Error(`the receipt's ${field} is not the entry's`);
  }
  const leaf = await leafHash(entry);
  if (bytesToBase64(leaf) !== receipt.leaf_hash) throw new Error("the receipt's leaf_hash is not the entry's");
  if (typeof receipt.checkpoint !== "string") throw new Error("the receipt carries no checkpoint");
  const lines = noteBody(receipt.checkpoint).split("\n");
  const opened = await verifyCheckpoint(
    { text: receipt.checkpoint, key_id: receipt.key_id, size: Number(lines[1]), root_hash: lines[2] },
    keys,
    { table: table ?? entry.table },
  );
  if (opened.size !== receipt.tree_size) throw new Error("the receipt's tree_size is not its note's");
  await verifyInclusion(entry.seq - 1, opened.size, leaf, opened.root, (receipt.proof ?? []).map(base64ToBytes));
  return { size: opened.size, root: opened.root };
}

// C2SP tlog-cosignature (cosignature/v1, Ed25519): a player's statement that it verified
// a checkpoint (docs/audit.md, "Cosignatures"). The key ID is SHA-256(name || "\n" ||
// 0x04 || key)[:4]; the signature, over "cosignature/v1\ntime <t>\n" and the note's
// body, follows the key ID and the time (u64, big-endian).

const COSIGNATURE_HEADER = encoder.encode("cosignature/v1\n");

function noteBody(text) {
  const split = text.indexOf("\n\n");
  if (split < 0) throw new Error("a note is its text, a blank line, then signatures");
  return text.slice(0, split + 1);
}

async function cosignerKeyId(name, raw) {
  return (await sha256(concat(encoder.encode(`${name}\n`), new Uint8Array([4]), raw))).slice(0, 4);
}

/** A cosigner's verifier key: `<name>+<key ID hex>+base64(0x04 || key)`. */
export async function cosignerVkey(name, raw) {
  return `${name}+${bytesToHex(await cosignerKeyId(name, raw))}+${bytesToBase64(concat(new Uint8Array([4]), raw))}`;
}

/** The signature line of `name`'s cosignature of `note` at POSIX `time`, signed by the
 * WebCrypto Ed25519 `privateKey` whose raw public key is `raw`. */
export async function cosignNote(note, name, privateKey, raw, time) {
  const stamp = new Uint8Array(8);
  new DataView(stamp.buffer).setBigUint64(0, BigInt(time));
  const message = concat(COSIGNATURE_HEADER, encoder.encode(`time ${time}\n${noteBody(note)}`));
  const signature = new Uint8Array(await subtle.sign({ name: "Ed25519" }, privateKey, message));
  return `\u2014 ${name} ${bytesToBase64(concat(await cosignerKeyId(name, raw), stamp, signature))}`;
}

/** The time of the cosignature of `note` by the cosigner of `vkey`; throws if the note
 * carries none or it does not verify. */
export async function verifyCosignature(note, vkey) {
  // <name>+<key ID hex>+<base64 key>: the key's base64 may hold "+" too.
  const first = vkey.indexOf("+");
  const second = vkey.indexOf("+", first + 1);
  if (first < 1 || second < 0) throw new Error("a verifier key is <name>+<key ID hex>+<base64 key>");
  const name = vkey.slice(0, first);
  const raw = base64ToBytes(vkey.slice(second + 1));
  if (raw.length !== 33 || raw[0] !== 4) throw new Error("not an Ed25519 cosignature key");
  const key = await subtle.importKey("raw", raw.slice(1), { name: "Ed25519" }, false, ["verify"]);
  const want = await cosignerKeyId(name, raw.slice(1));
  const body = noteBody(note);
  // As sumdb/note: every line under this key must verify, before or after a good one.
  let time = null;
  for (const line of note.slice(body.length + 1).split("\n")) {
    const match = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const signature = base64ToBytes(match[2]);
    if (signature.length !== 76 || !signature.slice(0, 4).every((b, i) => b === want[i])) continue;
    const stamp = new DataView(signature.buffer, signature.byteOffset + 4, 8).getBigUint64(0);
    const message = concat(COSIGNATURE_HEADER, encoder.encode(`time ${stamp}\n${body}`));
    if (!(await subtle.verify({ name: "Ed25519" }, key, signature.slice(12), message))) {
      throw new Error(`${name}'s cosignature does not verify`);
    }
    time ??= Number(stamp);
  }
  if (time === null) throw new Error(`the note carries no cosignature by ${name}`);
  return time;
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

/** A key's id: "ed25519:" and the first 16 hex digits of SHA-256 of its raw bytes. */
export async function keyIdOf(raw) {
  return `ed25519:${bytesToHex(await sha256(raw)).slice(0, 16)}`;
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
    keys.set(key.key_id, { key: imported, raw: base64ToBytes(key.public_key), notAfter: key.not_after });
  }
  return keys;
}

/** The keys of a GET /v1/keys answer whose certificate the pinned `root` (a key id
 * published out of band) signed, imported as `importKeys` does; any other key is left
 * out, whatever the answer says. */
export async function trustedKeys(served, root) {
  const keys = new Map();
  for (const key of served.keys ?? []) {
    const certificate = key.certificate;
    if (!certificate || certificate.certified_by !== root || certificate.key_id !== key.key_id) continue;
    if (certificate.public_key !== key.public_key) continue;
    const raw = base64ToBytes(certificate.public_key ?? "");
    const rootRaw = base64ToBytes(certificate.root_public_key ?? "");
    if ((await keyIdOf(raw)) !== certificate.key_id || (await keyIdOf(rootRaw)) !== root) continue;
    const rootKey = await subtle.importKey("raw", rootRaw, { name: "Ed25519" }, false, ["verify"]);
    const message = encoder.encode(`fairroll/key/v1\n${certificate.key_id}\n${certificate.public_key}\n`);
    if (!(await subtle.verify({ name: "Ed25519" }, rootKey, base64ToBytes(certificate.signature), message))) continue;
    const imported = await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
    keys.set(key.key_id, { key: imported, raw, notAfter: key.not_after });
  }
  return keys;
}

/** Check one entry; `previousHash` is the entry_hash of seq - 1 (64 zeros before seq 1),
 * or null when the previous entry is not at hand (then the link is not checked).
 * Returns {seq, ok, problems: [..], checks: {...}}. */
export async function verifyEntry(entry, keys, previousHash = null, { signature = true } = {}) {
  const problems = [];
  const checks = { hash: false, link: previousHash !== null, signature: false, dice: "none" };
  const computed = await entryHash(entry);
  if (computed !== entry.entry_hash) {
    problems.push(`entry_hash does not match the entry's content (computed ${computed.slice(0, 12)}…)`);
  } else {
    checks.hash = true;
  }
  if (previousHash !== null && entry.prev_hash !== previousHash) {
    problems.push("prev_hash does not match the previous entry's entry_hash");
  }
  const signer = keys.get(entry.key_id);
  if (!signature) {
    // the log's key checks named why this entry's key is not trusted
  } else if (!signer) {
    problems.push(`unknown signing key ${pyRepr(entry.key_id)}`);
  } else {
    const good = await subtle.verify(
      { name: "Ed25519" },
      signer.key,
      base64ToBytes(entry.signature),
      encoder.encode(SIGNATURE_CONTEXT + entry.entry_hash),
    );
    if (!good) problems.push("the signature does not verify");
    else if (signer.notAfter && entry.v < 2 && entry.time > signer.notAfter) {
      problems.push(`signed at ${entry.time}, after key ${entry.key_id} was retired`);
    } else checks.signature = true;
  }
  const seeded = ["drawn", "chosen", "seeded"].includes(entry.source);
  if (entry.v >= 2 && seeded && entry.source !== "seeded" && (typeof entry.seed !== "string" || !entry.seed)) {
    problems.push(`a ${entry.source} entry has no seed`);
  } else if (entry.v >= 2 && entry.source === "drawn" && !/^[0-9a-f]{64}$/.test(entry.seed)) {
    problems.push("a drawn seed is 64 hex digits: this one was not drawn by the server");
  }
  if (entry.v >= 2 && entry.source === "supplied" && entry.seed !== null && entry.seed !== undefined) {
    problems.push("a supplied roll has no seed");
  }
  if (seeded && typeof entry.seed === "string") {
    checks.dice = "re-derived";
    const wrong = await wrongDie(entry.seed, entry.dice);
    if (wrong) {
      problems.push(wrong);
      checks.dice = "wrong";
    }
  } else if (entry.source === "committed" && entry.session?.link !== undefined) {
    // A hash-chain roll checks alone: its link hashes to its chain's anchor in as many steps
    // as it stands from the chain's start, and its dice derive from it now.
    const ref = entry.session;
    const steps = ref.nonce - ref.first_nonce + 1;
    if (!LINK.test(ref.link) || !(steps >= 1) || (await chainPrevious(ref.link, steps)) !== ref.commitment) {
      problems.push("the revealed link does not hash to its chain's anchor");
      checks.dice = "wrong";
    } else {
      const wrong = await wrongDie(`${ref.link}:${ref.client_seed}:${ref.nonce}`, entry.dice);
      checks.dice = wrong ? "wrong" : "re-derived from the revealed link";
      if (wrong) problems.push(wrong);
    }
  } else if (entry.source === "committed") {
    checks.dice = "committed (checkable after the reveal)";
  } else if (entry.source === "supplied") {
    checks.dice = "supplied (rolled elsewhere)";
  } else if (entry.source === "statement") {
    checks.dice = "statement (no dice)";
  }
  checks.source = entry.source;
  return { seq: entry.seq, ok: problems.length === 0, problems, checks, proves: PROVES[entry.source] ?? null };
}

/** What a roll of each source proves (fairroll.audit.verify's words, held equal by a test). */
export const PROVES = {
  drawn:
    "fair if the operator is honest: the server drew the seed after it saw the request, so a " +
    "dishonest operator could have drawn again until it liked the dice, unseen; roll in a seed " +
    "session to take that power away",
  chosen: "reproducible, not fair: the caller chose the seed and could have tried many before this one",
  committed:
    "fair: the server committed to its seeds (a hash chain's anchor, or a server seed's SHA-256) " +
    "before the player's client seed was known, and the nonces run without a gap",
  supplied: "rolled elsewhere: fairroll only adjudicated these dice",
  seeded: "version 1: drawn or chosen (who chose the seed is not recorded)",
};

/** What a server that refuses rolls in a seed session can and cannot do. */
export const SELECTIVE_REFUSAL =
  "a server can refuse a roll in a seed session, but not change its dice: refused, the same " +
  "nonce and client seed give the same dice when it is made; a selective refusal shows as the " +
  "same nonce and client seed refused again and again";

const CHAIN_DOMAIN = encoder.encode("fairroll/chain/v1");
const LINK = /^[0-9a-f]{64}$/;

/** A hash chain's link `steps` before `link` (docs/randomness.md, "Hash-chain seed sessions"). */
export async function chainPrevious(link, steps = 1) {
  let raw = hexToBytes(link);
  for (let i = 0; i < steps; i++) raw = await sha256(concat(CHAIN_DOMAIN, raw));
  return bytesToHex(raw);
}

async function chainReaches(link, anchor, most) {
  let at = link;
  for (let i = 0; i < most && at !== anchor; i++) at = await chainPrevious(at);
  return at;
}

async function wrongDie(seed, dice) {
  for (let i = 0; i < dice.length; i++) {
    const die = dice[i];
    const [face] = await deriveFaces(seed, die.sides, 1, i);
    if (face !== die.face) return `die ${i + 1} (${die.group}) is ${die.face}; the seed gives ${face}: it does not derive from the seed`;
  }
  return null;
}

/** The mechanic of an operator's signed statement that acknowledged seqs were lost for
 * good (docs/audit.md): it may follow exactly the gap it declares. */
export const EPOCH_MECHANIC = "audit.epoch";

/** Who chose a version 2 entry's seed: one of these, and `statement` exactly for the
 * statement mechanics (fairroll.audit.verify's `_SOURCES_V2` and `_STATEMENTS`). A roll
 * relabelled `statement`, `seeded` (version 1's word) or anything else is refused. */
export const SOURCES = new Set(["drawn", "chosen", "committed", "supplied", "statement"]);
export const STATEMENTS = new Set([
  "session.commit", "session.renew", "session.reveal", "table.policy", EPOCH_MECHANIC, "key.retire",
]);
const SOURCES_V1 = new Set(["seeded", "committed", "supplied"]);

/** A value as Python's repr writes it, so a reason reads the same in both cores. */
function pyRepr(value) {
  if (value === null || value === undefined) return "None";
  if (typeof value !== "string") return JSON.stringify(value);
  return value.includes("'") && !value.includes('"') ? `"${value}"` : `'${value.replaceAll("'", "\\'")}'`;
}

/** What is wrong with an entry's source for its version and mechanic, or null. */
export function sourceProblem(entry) {
  const { source, mechanic } = entry;
  if (entry.v >= 2) {
    if (!SOURCES.has(source)) return `unknown dice source ${pyRepr(source)}`;
    if ((source === "statement") !== STATEMENTS.has(mechanic)) {
      return `a ${mechanic} entry cannot have source ${pyRepr(source)}`;
    }
    if (source === "statement" && (entry.dice ?? []).length) return "a statement rolls no dice";
    return null;
  }
  if (mechanic !== EPOCH_MECHANIC && !SOURCES_V1.has(source)) return `unknown dice source ${pyRepr(source)}`;
  return null;
}

/** The words every verifier begins a not-fair roll's `why` with (shared with the CLI). */
export const CLIENT_SEED_REUSED = "client seed reused";

function declaresGap(entry, previousSeq) {
  const request = entry.request ?? {};
  return (
    entry.mechanic === EPOCH_MECHANIC &&
    request.lost_after === previousSeq &&
    request.resume_after === entry.seq - 1
  );
}

/** A table's log verified as it is read, page after page: the chain, the sessions'
 * nonces and reveals, the policy, and the Merkle tree. `keys`: the keys a server lists
 * (importKeys; trustedKeys under a pinned root), used only for version 1 entries and a log
 * read from its middle. `root`: the pinned root key id; then a version 2 entry is checked
 * only with a key this log published under that root before it or in it (a certificate
 * signed by the root), as `fairroll verify --root` does; without it nothing is trusted
 * (`verdict()` says NOT VERIFIED). `previousHash`/`previousSeq`: where the log starts (64
 * zeros and 0 from seq 1; an archived table's base `head_hash` and `size`, with
 * `frontier` its base's frontier hashes, base64). */
export class LogVerifier {
  /** @param {Map<string, any>} keys
   * @param {{previousHash?: string | null, previousSeq?: number | null, frontier?: string[] | null, root?: string | null}} [options] */
  constructor(keys, { previousHash = null, previousSeq = null, frontier = null, root = null } = {}) {
    this.keys = new Map(keys);
    this.pinnedRoot = root;  // the pinned root key id: keys count only as the log publishes them
    this.published = new Map();  // key id -> imported key, from the log's own certificates
    this.retired = new Map();
    this.previous = previousHash;
    this.seq = previousSeq;
    this.partial = previousSeq !== null && previousSeq > 0;
    this.tree = previousSeq === null || previousSeq === 0
      ? new Frontier()
      : frontier ? Frontier.of(previousSeq, frontier.map(base64ToBytes)) : null;
    this.sessions = new Map();
    this.policy = {};
    this.table = null;
    this.clientSeeds = new Map();  // client seed -> the first seq that showed it
    this.notFair = [];  // [{seq, why}]: committed rolls the server could have ground
    this.failures = [];  // results found bad, in the order a reader meets them
    this.count = 0;
    this.sources = {};
  }

  /** The Merkle root (bytes) of the entries so far, or null if not known (a range). */
  async root() {
    return this.tree ? this.tree.root() : null;
  }

  /** Verify the next entries; returns their results, and `revised`: results of earlier
   * committed rolls that a reveal among these entries has now checked. */
  async add(entries) {
    const results = [];
    const revised = [];
    for (const entry of entries) {
      if (this.seq === null) {
        this.partial = entry.seq !== 1;
        if (this.partial) this.tree = null;
      }
      const expected = this.previous ?? (entry.seq === 1 ? "0".repeat(64) : null);
      const early = [];
      const signing = entry.v >= 2 ? await this.#keyChecks(entry, early) : this.keys;
      const result = await verifyEntry(entry, signing ?? new Map(), expected, { signature: signing !== null });
      result.problems.unshift(...early);
      if (this.seq !== null && entry.seq !== this.seq + 1 && !declaresGap(entry, this.seq)) {
        result.problems.push(`seq ${this.seq + 1} is missing: found seq ${entry.seq}`);
        result.badSeq = this.seq + 1;  // the seq a verifier names: the first one missing
      }
      this.table ??= entry.table;
      if (entry.table !== this.table) result.problems.push("the entry belongs to another table");
      if (entry.mechanic === EPOCH_MECHANIC) {
        result.checks.dice = `epoch: seqs ${entry.request.lost_after + 1}..${entry.request.resume_after} declared lost`;
      }
      const wrongSource = sourceProblem(entry);
      if (wrongSource) {
        result.problems.push(wrongSource);
        result.proves = null;
      } else if (entry.v >= 2) {
        await this.#sourceChecks(entry, result, revised);
      }
      if (entry.source !== "statement") this.sources[entry.source] = (this.sources[entry.source] ?? 0) + 1;
      const clientSeed = entry.session?.client_seed;
      if (typeof clientSeed === "string" && !this.clientSeeds.has(clientSeed)) this.clientSeeds.set(clientSeed, entry.seq);
      if (this.tree) {
        while (this.tree.size + 1 < entry.seq) this.tree = await this.tree.append(await lostLeaf(this.tree.size + 1));
        this.tree = await this.tree.append(await leafHash(entry));
      }
      result.ok = result.problems.length === 0;
      if (!result.ok) this.failures.push(result);
      results.push(result);
      this.previous = entry.entry_hash;
      this.seq = entry.seq;
      this.count += 1;
    }
    return { results, revised };
  }

  /** The verdict on what was read, in the CLI's shape (`fairroll verify --root`): ok, the
   * first bad seq and why (the first problem a reader meets, as the CLI stops there), the
   * rolls that verify but are not fair, and NOT VERIFIED when no root is pinned. */
  verdict() {
    const bad = this.failures[0] ?? null;
    const verified = Boolean(this.pinnedRoot);
    return {
      ok: verified && !bad,
      verified,
      entries: this.count,
      last_seq: this.seq,
      first_bad_seq: bad ? (bad.badSeq ?? bad.seq) : null,
      reason: bad ? bad.problems.join("; ") : verified ? null : NOT_VERIFIED,
      not_fair: this.notFair.map((n) => ({ ...n })),
      sources: { ...this.sources },
    };
  }

  /** Keys in the log: a key signs only from its first entry in the log, which carries its
   * certificate by the root (by the pinned root if given), and never after its key.retire
   * entry. Returns the keys to check the entry's signature with, or null when `problems`
   * already says why no key of this log may sign it. */
  async #keyChecks(entry, problems) {
    const retiredAt = this.retired.get(entry.key_id);
    if (retiredAt !== undefined) {
      problems.push(`signed by key ${entry.key_id} after its retirement at seq ${retiredAt} of this log`);
    }
    if (entry.mechanic === "key.retire" && typeof entry.request?.key_id === "string" && !this.retired.has(entry.request.key_id)) {
      this.retired.set(entry.request.key_id, entry.seq);
    }
    const certificate = entry.certificate;
    if (certificate) {
      const problem = await this.#introduce(entry, certificate);
      if (problem) {
        problems.push(problem);
        return null;
      }
    }
    const published = this.published.get(entry.key_id);
    if (published) return new Map([[entry.key_id, published]]);
    if (this.pinnedRoot && !this.partial) {
      problems.push(`signed by key ${entry.key_id}, which this log did not publish before it`);
      return null;
    }
    return this.keys;
  }

  async #introduce(entry, certificate) {
    if (certificate.key_id !== entry.key_id) return "a certificate publishes the key that signs its entry";
    const who = this.pinnedRoot ? `the pinned root ${this.pinnedRoot}` : "its root";
    const byHand = `key ${certificate.key_id} is not certified by ${who}: a key added by hand`;
    let raw;
    let rootRaw;
    try {
      raw = base64ToBytes(certificate.public_key ?? "");
      rootRaw = base64ToBytes(certificate.root_public_key ?? "");
    } catch {
      return byHand;
    }
    if ((await keyIdOf(raw)) !== certificate.key_id || (await keyIdOf(rootRaw)) !== certificate.certified_by) {
      return byHand;
    }
    if (this.pinnedRoot && certificate.certified_by !== this.pinnedRoot) return byHand;
    try {
      const rootKey = await subtle.importKey("raw", rootRaw, { name: "Ed25519" }, false, ["verify"]);
      const message = encoder.encode(`fairroll/key/v1\n${certificate.key_id}\n${certificate.public_key}\n`);
      if (!(await subtle.verify({ name: "Ed25519" }, rootKey, base64ToBytes(certificate.signature ?? ""), message))) {
        return byHand;
      }
      const key = await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
      this.published.set(certificate.key_id, { key, raw, notAfter: null });
    } catch {
      return byHand;
    }
    return null;
  }

  async #sourceChecks(entry, result, revised) {
    const problems = result.problems;
    const request = entry.request ?? {};
    if (entry.mechanic === "table.policy") {
      if (entry.seq !== 1) problems.push("a table's policy is its first entry, only");
      this.policy = request;
    } else if (entry.mechanic === "session.commit") {
      if (this.sessions.has(request.seed_id)) problems.push(`seed session ${request.seed_id} is committed twice`);
      const chain = request.kind === "chain";
      if (chain && (!LINK.test(request.commitment ?? "") || request.first_nonce !== 1)) {
        problems.push("a chain's commitment is a link, from nonce 1");
      }
      this.sessions.set(request.seed_id, {
        commitment: request.commitment, nonce: 0, revealed: false, pending: [],
        length: chain ? request.length : 0, first: 1, last: request.commitment, chainSeq: entry.seq,
      });
      result.checks.dice = `commitment of seed session ${request.seed_id}`;
    } else if (entry.mechanic === "session.renew") {
      let session = this.sessions.get(request.seed_id);
      if (!session && this.partial && Number.isInteger(request.first_nonce) && Number.isInteger(request.length)) {
        // Renewed mid-log (read from the middle): the used-up chain is taken from here.
        session = {
          commitment: request.previous, nonce: request.first_nonce - 1, revealed: false, pending: [],
          length: request.length, first: request.first_nonce - request.length, last: request.previous, partial: true,
        };
        this.sessions.set(request.seed_id, session);
      }
      if (!session || session.revealed || !session.length) {
        problems.push(`seed session ${request.seed_id} is not an open hash chain`);
      } else if (request.previous !== session.commitment || !LINK.test(request.commitment ?? "")) {
        problems.push(`the renewal does not follow seed session ${request.seed_id}'s chain`);
      } else if (request.first_nonce !== session.nonce + 1 || (!session.partial && session.nonce !== session.first + session.length - 1)) {
        problems.push(`seed session ${request.seed_id} is renewed before its chain is used up`);
      } else {
        Object.assign(session, {
          commitment: request.commitment, last: request.commitment, length: request.length,
          first: request.first_nonce, partial: false, chainSeq: entry.seq,
        });
        result.checks.dice = `next chain of seed session ${request.seed_id}, from nonce ${request.first_nonce}`;
      }
    } else if (entry.mechanic === "session.reveal") {
      const session = this.#session(request.seed_id, request.commitment, request.rolls, problems);
      if (!session) return;
      const digest = !session.length
        ? bytesToHex(await sha256(encoder.encode(request.server_seed ?? "")))
        : LINK.test(request.server_seed ?? "")
          ? session.partial
            ? await chainReaches(request.server_seed, session.commitment, 10000)
            : await chainPrevious(request.server_seed, session.length)
          : "";
      if (session.revealed) problems.push(`seed session ${request.seed_id} is revealed twice`);
      else if (digest !== session.commitment || request.commitment !== session.commitment) {
        problems.push("the revealed server seed does not match the commitment");
      } else if (request.rolls !== session.nonce) {
        problems.push(`revealed after ${request.rolls} rolls, but the log holds ${session.nonce}`);
      } else {
        session.revealed = true;
        for (const [roll, earlier] of session.pending) {
          const seed = `${request.server_seed}:${roll.session.client_seed}:${roll.session.nonce}`;
          const wrong = await wrongDie(seed, roll.dice);
          earlier.checks.dice = wrong ? "wrong" : "re-derived after the reveal";
          if (wrong) earlier.problems.push(wrong);
          if (earlier.ok && wrong) this.failures.push(earlier);
          earlier.ok = earlier.problems.length === 0;
          revised.push(earlier);
        }
        session.pending = [];
        result.checks.dice = `reveal of seed session ${request.seed_id}: ${session.nonce} roll(s) re-derived`;
      }
    } else if (entry.source === "committed") {
      const before = problems.length;
      await this.#committed(entry, result, problems);
      if (problems.length === before) this.#clientSeedReused(entry, result);
    } else if (entry.source === "drawn" && this.policy.drawn_seeds === false) {
      problems.push("the table's policy refuses server-drawn seeds");
    } else if (entry.source === "chosen" && this.policy.chosen_seeds === false) {
      problems.push("the table's policy refuses caller-chosen seeds");
    } else if (entry.source === "supplied" && this.policy.supplied_dice === false) {
      problems.push("the table's policy refuses supplied dice");
    }
  }

  /** A committed roll: its session, its commitment, its nonce right after the last one,
   * and (a hash chain) its link hashing to the one before. */
  async #committed(entry, result, problems) {
    const ref = entry.session ?? {};
    const session = this.#session(ref.seed_id, ref.commitment, ref.nonce - 1, problems, ref.link, ref.first_nonce);
    if (session?.last === null) session.last = await chainPrevious(ref.link);
    if (!session) return;
    if (ref.commitment !== session.commitment) problems.push(`the roll's commitment is not seed session ${ref.seed_id}'s`);
    else if (session.revealed) problems.push(`a roll in seed session ${ref.seed_id} after its reveal`);
    else if (ref.nonce <= session.nonce) problems.push(`nonce ${ref.nonce} of seed session ${ref.seed_id} is reused`);
    else if (ref.nonce !== session.nonce + 1) {
      problems.push(`nonce ${session.nonce + 1} of seed session ${ref.seed_id} is missing: found nonce ${ref.nonce} (a roll was made and left out)`);
    } else if (Boolean(session.length) !== (ref.link !== undefined)) {
      problems.push(`the roll and seed session ${ref.seed_id} disagree on whether it is a hash chain`);
    } else if (session.length) {
      // A hash chain: the link hashes to the one revealed before it (entryChecks re-derived the dice).
      if (ref.first_nonce !== session.first) problems.push("a hash-chain roll reveals its link and its chain's start");
      else if (ref.nonce > session.first + session.length - 1) problems.push(`nonce ${ref.nonce} is past its chain's ${session.length} links`);
      else if ((await chainPrevious(ref.link)) !== session.last) {
        problems.push("the revealed link does not hash to the one before: the seed was changed");
      } else {
        session.nonce = ref.nonce;
        session.last = ref.link;
      }
    } else {
      session.nonce = ref.nonce;
      session.pending.push([entry, result]);
    }
  }

  /** Shared decision: a roll whose client seed the log showed before the entry that
   * committed its chain (or session) verifies, but is not fair: the server knew the seed
   * when it drew the chain and could have ground the chain for it. */
  #clientSeedReused(entry, result) {
    const ref = entry.session ?? {};
    const session = this.sessions.get(ref.seed_id);
    const shown = this.clientSeeds.get(ref.client_seed);
    if (!session || session.chainSeq === undefined || shown === undefined || shown >= session.chainSeq) return;
    const why = `${CLIENT_SEED_REUSED}: seq ${shown} showed this client seed before seq ${session.chainSeq} committed the chain it is rolled on, so the server could have ground that chain for it`;
    result.notFair = why;
    result.proves = `not fair: ${why}`;
    this.notFair.push({ seq: entry.seq, why });
  }

  #session(seedId, commitment, nonce, problems, link = undefined, firstNonce = 1) {
    let session = this.sessions.get(seedId);
    if (!session && this.partial) {  // committed before the first entry read
      session = { commitment, nonce, revealed: false, pending: [], length: 0, first: 1, last: commitment };
      if (link !== undefined) {  // a chain met mid-log: its length is not known from here
        Object.assign(session, { length: 10000, first: firstNonce, last: null, partial: true });
      }
      this.sessions.set(seedId, session);
    }
    if (!session) problems.push(`seed session ${seedId} has no commitment earlier in the log`);
    return session;
  }
}

/** What a verdict says when no root is pinned: nothing the log's keys signed can be
 * trusted, whatever it holds. */
export const NOT_VERIFIED =
  "NOT VERIFIED: no root is pinned; pass the root key id published out of band (a key " +
  "the server names itself proves nothing)";

/** Check a run of consecutive entries (ascending seq); the first one's link is checked
 * against `previousHash` when given (64 zeros for a table from seq 1; an archived
 * table's base `head_hash`, with `previousSeq` its `size`). Every seq must follow the
 * one before, but for the gap an epoch entry declares.
 * @param {object[]} entries
 * @param {Map<string, object>} keys from importKeys
 * @param {string | null} [previousHash]
 * @param {number | null} [previousSeq]
 * @returns {Promise<Array<{seq: number, ok: boolean, problems: string[], checks: {hash: boolean, link: boolean, signature: boolean, dice: string}}>>} */
export async function verifyEntries(entries, keys, previousHash = null, previousSeq = null) {
  const log = new LogVerifier(keys, { previousHash, previousSeq });
  return (await log.add(entries)).results;
}

/** A whole export (NDJSON text, from seq 1 or from `previousSeq`) verified under the
 * pinned `root`, as `fairroll verify --root <root>` verifies it: returns `verdict()`'s
 * shape ({ok, verified, first_bad_seq, reason, not_fair, ...}) and the per-entry
 * `results`. A line that is not strict JSON stops the reading there, at its seq. With no
 * root the verdict is NOT VERIFIED (ok false), whatever the log holds. */
/** @param {string} text @param {Map<string, any>} keys
 * @param {{root?: string | null, previousHash?: string | null, previousSeq?: number | null, frontier?: string[] | null}} [options] */
export async function verifyLog(text, keys, { root = null, previousHash = null, previousSeq = null, frontier = null } = {}) {
  const log = new LogVerifier(keys, { root, previousHash, previousSeq, frontier });
  const results = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let entry;
    try {
      entry = parseStrict(line);
    } catch (error) {
      const seq = log.seq !== null ? log.seq + 1 : seqHint(line);
      const verdict = log.verdict();
      if (verdict.first_bad_seq !== null) return { ...verdict, results, log };
      return { ...verdict, ok: false, first_bad_seq: seq, reason: `not a JSON entry: ${error.message}`, results, log };
    }
    results.push(...(await log.add([entry])).results);
  }
  return { ...log.verdict(), results, log };
}

function seqHint(line) {
  const found = /"seq"\s*:\s*(\d+)/.exec(line);
  return found ? Number(found[1]) : null;
}

// Live checks: a player's roll in its own hash-chain seed session, checked before it is
// shown or returned (docs/audit.md, "What a verifier checks"), by the page and the npm
// client alike. `call(method, path, body?, headers?)` answers [status, JSON]; `keys` are
// the signing keys certified under the pinned root (trustedKeys); `s` is the session as
// the client keeps it: {table, seedId, clientSeed, nonce, anchor, length, firstNonce,
// after (the last seq this client verified), pending?}.

/** An answer that does not follow from what this client sent and the committed chain, or
 * a server that will not make the roll it was sent: keep it, it is evidence. */
export class UnfairRollError extends Error {
  constructor(message, answer = null) {
    super(message);
    this.name = "UnfairRollError";
    this.answer = answer;
  }
}

/** The client seed of a chain: drawn by the platform's CSPRNG, after the client saw the
 * chain's anchor committed, and never used before (a new one for every chain). */
export function freshClientSeed() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return bytesToHex(bytes);
}

const same = (a, b) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/** Does the logged request hold every field this client sent, with its value (the log
 * keeps the request with its defaults filled in)? */
export function holdsRequest(logged, sent) {
  if (sent === null || typeof sent !== "object") return logged === sent;
  if (Array.isArray(sent)) {
    return Array.isArray(logged) && logged.length === sent.length && sent.every((v, i) => holdsRequest(logged[i], v));
  }
  if (logged === null || typeof logged !== "object") return false;
  return Object.entries(sent).every(([key, value]) => value === undefined || holdsRequest(logged[key], value));
}

/** A session's commitment as the log shows it: the entry at `status.commit_seq` is the
 * session.commit (or session.renew) of `status.seed_id` with `status.commitment`, and its
 * receipt proves it is in a note of this table signed under the pinned root. */
export async function checkCommitted(call, status, keys, table) {
  if (status?.kind !== "chain" || !LINK.test(status.commitment ?? "") || !Number.isInteger(status.commit_seq)) {
    throw new UnfairRollError("the server did not show a hash-chain session committed in the log", status);
  }
  const seq = status.chain_seq ?? status.commit_seq;
  const [got, entry] = await call("GET", `/v1/tables/${encodeURIComponent(table)}/entries/${seq}`);
  const request = entry?.request ?? {};
  if (got !== 200 || !["session.commit", "session.renew"].includes(entry.mechanic) || request.seed_id !== status.seed_id
      || request.commitment !== status.commitment || entry.table !== table) {
    throw new UnfairRollError(`seq ${seq} does not commit the chain the server named`, entry);
  }
  if (!trusting(keys)) return entry;  // NOT VERIFIED: nothing to check the note with
  try {
    await verifyReceipt(entry, status.receipt ?? {}, keys, { table });
  } catch (error) {
    throw new UnfairRollError(`the commitment's receipt: ${error.message}`, status);
  }
  return entry;
}

/** Check a roll's answer before it is shown (with no `keys`, no root pinned, everything
 * but the receipt's note, and the caller says NOT VERIFIED): the client seed, session and nonce are the
 * ones sent, the link hashes to the chain's anchor (so to the link before it), the dice
 * re-derive from it, the entry the receipt names holds this answer, the receipt's proof
 * leads from that entry's leaf to its note's root, the note is signed under the pinned
 * root (`keys`) and is a note of this table. Throws UnfairRollError naming what fails. */
export async function checkAnswer(answer, entry, s, nonce, keys, body = null) {
  const ref = answer?.session ?? {};
  const fail = (why) => { throw new UnfairRollError(why, answer); };
  if (ref.client_seed !== s.clientSeed) fail("the answer is not rolled with the client seed this client sent");
  if (ref.seed_id !== s.seedId) fail("the roll is not in this player's seed session");
  if (ref.nonce !== nonce) fail(`the roll is at nonce ${ref.nonce}, not at nonce ${nonce} this client sent`);
  if (!LINK.test(ref.link ?? "") || ref.first_nonce !== s.firstNonce || ref.commitment !== s.anchor) {
    fail("the roll is on another chain than the one this client saw committed");
  }
  if ((await chainPrevious(ref.link, nonce - s.firstNonce + 1)) !== s.anchor) {
    fail("the revealed link does not hash to its chain's anchor");
  }
  const wrong = await wrongDie(`${ref.link}:${s.clientSeed}:${nonce}`, answer.dice ?? []);
  if (wrong) fail(wrong);
  if (!entry || entry.table !== s.table || entry.seq !== answer.receipt?.seq || !same(entry.session, answer.session)
      || !same(entry.dice, answer.dice) || entry.source !== "committed" || entry.mechanic !== answer.mechanic
      || !same(entry.outcome, answer.outcome)) {
    fail("the log's entry is not this answer");
  }
  // The roll the log holds is of the request this client sent (the log fills in defaults).
  if (body !== null && !holdsRequest(entry.request, { ...body, table: undefined, session: undefined })) {
    fail("the log's entry rolled another request than the one this client sent");
  }
  if (!trusting(keys)) return;  // NOT VERIFIED: the caller labels it so
  try {
    await verifyReceipt(entry, answer.receipt, keys, { table: s.table });
  } catch (error) {
    fail(`the receipt: ${error.message}`);
  }
}

const trusting = (keys) => Boolean(keys && keys.size);

/** The entry of seed session `s` at `nonce` and its words, read from the table's entries
 * after the last seq this client verified (page after page), or null. */
export async function entryAtNonce(call, s, nonce) {
  let after = s.after ?? 0;
  for (;;) {
    const [status, page] = await call("GET", `/v1/tables/${encodeURIComponent(s.table)}/entries?after=${after}&limit=100`);
    if (status !== 200) throw new Error(`the table's entries were not served (HTTP ${status})`);
    const at = (page.entries ?? []).findIndex((e) => e.session?.seed_id === s.seedId && e.session?.nonce === nonce);
    if (at >= 0) return { entry: page.entries[at], words: page.words?.[at] ?? null };
    if (page.next_after === null || page.next_after === undefined || !page.entries?.length) return null;
    after = page.next_after;
  }
}

/** An answer for an entry found in the log: the entry's own fields, and a receipt made
 * of the table's checkpoint and the entry's inclusion proof in it. */
async function answerOf(call, s, entry, words) {
  const base = `/v1/tables/${encodeURIComponent(s.table)}`;
  const [got, checkpoint] = await call("GET", `${base}/checkpoint`);
  if (got !== 200) throw new Error(`the table's checkpoint was not served (HTTP ${got})`);
  const [proved, inclusion] = await call("GET", `${base}/proofs/inclusion?seq=${entry.seq}&size=${checkpoint.size}`);
  if (proved !== 200) throw new Error(`no inclusion proof of seq ${entry.seq} (HTTP ${proved})`);
  const receipt = {
    table: entry.table, seq: entry.seq, entry_hash: entry.entry_hash, key_id: checkpoint.key_id,
    leaf_hash: inclusion.leaf_hash, checkpoint: checkpoint.text, tree_size: checkpoint.size, proof: inclusion.proof,
    signature: entry.signature, source: entry.source,
  };
  return { ...entry, words, receipt, fromLog: true };
}

const CLOSED = /revealed|spent|used up|closed/;

/** Roll `body` at the session's next nonce and check the answer; returns it. A refusal
 * never lets the operator choose (shared decision 2): a 409 naming another nonce makes
 * the client read the log for its own roll at the nonce it sent (the answer, checked, if
 * it holds this client's client seed and request; else UnfairRollError), or send the same
 * roll again (same nonce, client seed and Idempotency-Key) a few times before saying the
 * server refuses that nonce. A session answered as revealed, spent or gone is never
 * replaced: the client raises and the player starts a new one. */
/** @param {any} call @param {any} s @param {string} path @param {any} body @param {Map<string, any>} keys
 * @param {{idempotencyKey?: string | null, tries?: number}} [options] @returns {Promise<any>} */
export async function rollInSession(call, s, path, body, keys, { idempotencyKey = null, tries = 3 } = {}) {
  if (s.closed) throw new UnfairRollError(`seed session ${s.seedId} is closed: start a new session`);
  const asked = JSON.stringify({ ...body, table: s.table });
  let refused = 0;
  for (;;) {
    if (!s.pending && s.nonce > s.firstNonce + s.length - 1) await nextChain(call, s, keys);
    const nonce = s.pending?.nonce ?? s.nonce;
    const key = idempotencyKey ?? (s.pending?.asked === asked ? s.pending.idempotencyKey : globalThis.crypto.randomUUID());
    s.pending = { nonce, idempotencyKey: key, asked };
    const session = { seed_id: s.seedId, client_seed: s.clientSeed, nonce };
    const [status, answer] = await call("POST", path, { ...body, table: s.table, session }, { "Idempotency-Key": key });
    let made = null;
    if (status === 200) {
      const [got, entry] = await call("GET", `/v1/tables/${encodeURIComponent(s.table)}/entries/${answer?.receipt?.seq}`);
      await checkAnswer(answer, got === 200 ? entry : null, s, nonce, keys, body);
      made = answer;
    } else if (status === 409 && Number.isInteger(answer?.nonce) && answer.nonce !== nonce) {
      const { entry, words } = (await entryAtNonce(call, s, nonce)) ?? {};
      if (entry) {
        if (entry.session.client_seed !== s.clientSeed || !holdsRequest(entry.request, { ...body, table: undefined })) {
          throw new UnfairRollError(`nonce ${nonce} of this session holds a roll this client did not send`, entry);
        }
        made = await answerOf(call, s, entry, words);
        await checkAnswer(made, entry, s, nonce, keys);
      } else if ((refused += 1) >= tries) {
        throw new UnfairRollError(
          `the server refuses nonce ${nonce} of this session (it named nonce ${answer.nonce}, and no roll holds nonce ${nonce}): a refusal it cannot turn into other dice`,
          answer,
        );
      } else {
        continue;  // the same nonce, client seed and Idempotency-Key again
      }
    } else if (status === 404 || (status === 409 && CLOSED.test(answer?.detail ?? ""))) {
      // A server may roll at the nonce, look, then say the session is gone: the roll the
      // log holds there is this player's, whatever it answers.
      const { entry, words } = (await entryAtNonce(call, s, nonce).catch(() => null)) ?? {};
      if (entry) {
        if (entry.session.client_seed !== s.clientSeed || !holdsRequest(entry.request, { ...body, table: undefined })) {
          throw new UnfairRollError(`nonce ${nonce} of this session holds a roll this client did not send`, entry);
        }
        made = await answerOf(call, s, entry, words);
        await checkAnswer(made, entry, s, nonce, keys, body);
      }
    }
    if (made === null && (status === 404 || (status === 409 && CLOSED.test(answer?.detail ?? "")))) {
      s.pending = undefined;
      s.closed = true;
      throw new UnfairRollError(
        `seed session ${s.seedId} is ${status === 404 ? "gone" : "closed"} (${answer?.detail ?? `HTTP ${status}`}): start a new session; no roll was made in another one`,
        answer,
      );
    }
    if (made === null) {
      if (status < 500) s.pending = undefined;  // refused for what it asked: no nonce taken
      throw Object.assign(new Error(`HTTP ${status}: ${answer?.detail ?? ""}`), { status, problem: answer });
    }
    s.nonce = nonce + 1;
    s.after = Math.max(s.after ?? 0, made.receipt.seq);
    s.pending = undefined;
    // What was checked, in words a caller shows: verified only under a pinned root.
    made.verdict = trusting(keys)
      ? { verified: true, fair: true, reason: null }
      : { verified: false, fair: false, reason: NOT_VERIFIED };
    return made;
  }
}

/** A used-up chain: its next one was committed by the roll that used its last link. The
 * client checks that commitment in the log, then draws a new client seed for it. */
async function nextChain(call, s, keys) {
  const [status, seen] = await call("GET", `/v1/tables/${encodeURIComponent(s.table)}/seeds/${s.seedId}`);
  if (status !== 200 || seen.revealed || seen.first_nonce !== s.nonce) {
    s.closed = true;
    throw new UnfairRollError(`seed session ${s.seedId} has no next chain from nonce ${s.nonce}: start a new session`, seen);
  }
  await checkCommitted(call, seen, keys, s.table);
  Object.assign(s, { anchor: seen.commitment, firstNonce: s.nonce, length: seen.length, clientSeed: freshClientSeed() });
  s.after = Math.max(s.after ?? 0, seen.chain_seq ?? seen.commit_seq);
}

/** Open a hash-chain seed session on `table` and check its commitment in the log; the
 * client seed is drawn once the anchor is seen committed. */
/** @param {any} call @param {string} table @param {Map<string, any>} keys
 * @param {{player?: string | null, length?: number | null, headers?: Record<string, string>}} [options] */
export async function openSession(call, table, keys, { player = null, length = null, headers = {} } = {}) {
  const asked = {};
  if (player) asked.player = player;
  if (length) asked.length = length;
  const [status, made] = await call("POST", `/v1/tables/${encodeURIComponent(table)}/seeds`, asked, headers);
  if (status !== 201) throw new UnfairRollError(`the seed session was not opened (HTTP ${status})`, made);
  await checkCommitted(call, made, keys, table);
  return {
    table, seedId: made.seed_id, clientSeed: freshClientSeed(), nonce: 1, anchor: made.commitment,
    length: made.length, firstNonce: 1, after: made.commit_seq,
    // The player's credential for posting cosignatures with this session (shown once).
    token: made.token ?? null,
  };
}
