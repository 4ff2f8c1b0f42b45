// Signed notes (C2SP signed-note), shaped like Go's golang.org/x/mod/sumdb/note and the
// Python core's fairroll.audit.note: one verifier per key (its name, its 4-byte key hash
// SHA-256(name || "\n" || type || key)[:4], and `verify`), and `openNote`, which opens a
// note with a set of verifiers. A line whose name and key hash are a known verifier's must
// verify: one that fails rejects the note, before or after a good line of that key. Two
// key types, both Ed25519: a log's signer (0x01, over the text) and a cosigner (0x04, C2SP
// tlog-cosignature: an 8-byte time, then Ed25519 over "cosignature/v1\ntime <t>\n" and
// the text). Checkpoints (`verifyCheckpoint`) and cosignatures are notes opened so.

import { bytesToBase64, bytesToHex, concat, encoder, sha256, strictBase64ToBytes, subtle } from "./bytes.js";

export const SIGNER_TYPE = 0x01;
export const COSIGNATURE_TYPE = 0x04;
/** Go's cap on a note's signature lines. */
export const MAX_SIGNATURES = 100;
// What C2SP forbids in a note ("MUST be valid UTF-8 and MUST NOT contain any ASCII control
// characters ... other than newline"): a control character, or a lone surrogate (a JSON
// escape can put one in a string; TextEncoder would sign its replacement instead).
const NOT_TEXT = /[\u0000-\u0009\u000b-\u001f]|[\ud800-\udfff]/u;
// A key name holds no Unicode space (Go's unicode.IsSpace; the control ones are refused
// with the whole note) and no "+"; the base64 is standard, whole padded quads.
const LINE = /^\u2014 ([^ +\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+) ([A-Za-z0-9+/=]+)$/u;
const COSIGNATURE_HEADER = encoder.encode("cosignature/v1\n");

/** A note that does not open, in words (the Python core's). */
export class NoteError extends Error {}

/** SHA-256(name || "\n" || type || key)[:4]. */
export async function keyHash(name, type, raw) {
  return (await sha256(concat(encoder.encode(`${name}\n`), new Uint8Array([type]), raw))).slice(0, 4);
}

async function ed25519(raw, key) {
  return key ?? subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
}

/** A log's Ed25519 signer (type 0x01): the signature is over the note's text. `key`: the
 * WebCrypto key of `raw`, if already imported. */
export async function signerVerifier(name, raw, key = null) {
  const imported = await ed25519(raw, key);
  return {
    name,
    keyHash: await keyHash(name, SIGNER_TYPE, raw),
    verify: async (text, signature) =>
      signature.length === 64 && subtle.verify({ name: "Ed25519" }, imported, signature, text),
  };
}

/** An Ed25519 cosigner (type 0x04, cosignature/v1): the signature is its time (8 bytes,
 * below 2^63), then Ed25519 over the header, the time line and the text. */
export async function cosignerVerifier(name, raw) {
  const imported = await ed25519(raw, null);
  return {
    name,
    keyHash: await keyHash(name, COSIGNATURE_TYPE, raw),
    verify: async (text, signature) => {
      if (signature.length !== 72) return false;
      const time = new DataView(signature.buffer, signature.byteOffset, 8).getBigUint64(0);
      if (time >= 2n ** 63n) return false;
      const message = concat(COSIGNATURE_HEADER, encoder.encode(`time ${time}\n`), text);
      return subtle.verify({ name: "Ed25519" }, imported, signature.slice(8), message);
    },
  };
}

/** A note's signature line (without its newline). */
export function signatureLine(name, hash, signature) {
  return `\u2014 ${name} ${bytesToBase64(concat(hash, signature))}`;
}

const sameHash = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The note, its signatures checked by `verifiers`: {text, sigs: [{name, keyHash,
 * signature}], unverified: [...]} (one verified signature per key; lines of keys not
 * given are kept unverified). NoteError if it is not a note (text with no control character
 * but newline, a blank line, then at most 100 signature lines, each "— <name> <base64 of
 * key hash and signature>", the name with no space or "+": the Python core's rules), if a
 * known key's line fails, or if no known key signed it. */
export async function openNote(note, verifiers) {
  if (NOT_TEXT.test(note)) throw new NoteError("a note is UTF-8 text with no control character but newline");
  const split = note.lastIndexOf("\n\n");
  const block = split < 0 ? "" : note.slice(split + 2);
  if (split <= 0 || !block.endsWith("\n")) {
    throw new NoteError("a note is its text, a blank line, then signature lines");
  }
  const text = note.slice(0, split + 1);
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_SIGNATURES) throw new NoteError(`a note has at most ${MAX_SIGNATURES} signature lines`);
  const bytes = encoder.encode(text);
  const sigs = new Map();
  const unverified = [];
  for (const line of lines) {
    const match = LINE.exec(line);
    if (!match) throw new NoteError(`not a signature line: ${JSON.stringify(line)}`);
    let raw;
    try {
      raw = strictBase64ToBytes(match[2]);
    } catch {
      throw new NoteError("a signature is not base64");
    }
    if (raw.length < 5) throw new NoteError("a signature line holds a key hash and a signature");
    const signature = { name: match[1], keyHash: raw.slice(0, 4), signature: raw.slice(4) };
    const verifier = verifiers.find((v) => v.name === signature.name && sameHash(v.keyHash, signature.keyHash));
    if (!verifier) {
      unverified.push(signature);
    } else if (!(await verifier.verify(bytes, signature.signature))) {
      throw new NoteError(`${signature.name}'s signature does not verify`);
    } else {
      const at = `${signature.name} ${bytesToHex(signature.keyHash)}`;
      if (!sigs.has(at)) sigs.set(at, signature);
    }
  }
  if (!sigs.size) throw new NoteError("the note carries no signature by a known key");
  return { text, sigs: [...sigs.values()], unverified };
}

/** A note's text (its lines before the blank line), or NoteError. */
export function noteBody(note) {
  const split = note.lastIndexOf("\n\n");
  if (split <= 0) throw new NoteError("a note is its text, a blank line, then signature lines");
  return note.slice(0, split + 1);
}

/** The size, root and chain head a checkpoint's text states (the Python core's
 * `parse_body`): an origin, a decimal size, a base64 root of 32 bytes, then extensions;
 * the last "chain <head>" is the head (64 zeros without one). */
export function parseCheckpointBody(body) {
  const lines = body.slice(0, -1).split("\n");
  if (lines.length < 3) throw new NoteError("a checkpoint has an origin, a size and a root hash");
  const [origin, sizeText, rootText] = lines;
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText)) throw new NoteError(`the size '${sizeText}' is not a decimal number`);
  let root;
  try {
    root = strictBase64ToBytes(rootText);
  } catch {
    throw new NoteError("the root hash is not base64");
  }
  if (root.length !== 32) throw new NoteError("the root hash is not 32 bytes");
  let headHash = "0".repeat(64);
  for (const extension of lines.slice(3)) if (extension.startsWith("chain ")) headHash = extension.slice(6);
  return { origin, size: Number(sizeText), root, rootText, headHash };
}

/** Check a checkpoint (JSON of GET .../checkpoint, or {text, key_id}): its text is a
 * signed note opened with the key it names (as sumdb/note: every line of that key must
 * verify). With `table`, the note's origin must be `<key name>/<table>`: a note of another
 * table's log proves nothing about this one. `keys`: keys trusted from the pinned root
 * (trustedKeys), never every key a server lists. A retired key signs only notes of a size
 * below the seq of its key.retire in this log (`retired`: key id -> that seq, or the key's
 * own `retiredAt`, as the log read so far shows it); one the listing marks retired
 * (`notAfter`) with no seq known opens none (docs/audit.md, row 5; the Python core's
 * `receipts.open_checkpoint`, in its words). The JSON's size, root_hash, head_hash and
 * origin, where given, must be what the note signs. Returns {size, root (bytes),
 * headHash, origin}. */
/** @param {any} checkpoint @param {Map<string, any>} keys
 * @param {{table?: string | null, retired?: Map<string, number> | null}} [options] */
export async function verifyCheckpoint(checkpoint, keys, { table = null, retired = null } = {}) {
  const text = String(checkpoint.text ?? "");
  const signer = keys.get(checkpoint.key_id);
  if (!signer) throw new Error(`the checkpoint is signed by unknown key ${checkpoint.key_id}`);
  const body = noteBody(text);
  const origin = body.slice(0, body.indexOf("\n"));
  const name = checkpoint.key_name ?? origin.slice(0, origin.lastIndexOf("/"));
  if (table !== null && origin !== `${name}/${table}`) {
    throw new Error(`the checkpoint is not of log ${name}/${table}: its origin is ${origin}, signed for another table`);
  }
  let opened;
  try {
    opened = await openNote(text, [await signerVerifier(name, signer.raw, signer.key)]);
  } catch (error) {
    if (/does not verify/.test(error.message)) throw new Error("the checkpoint's signature does not verify");
    if (/no signature by a known key/.test(error.message)) throw new Error(`the checkpoint carries no signature by key ${name}`);
    throw error;
  }
  const { size, root, rootText, headHash } = parseCheckpointBody(opened.text);
  if (!signsAt(checkpoint.key_id, signer, size, retired)) throw retiredError(checkpoint.key_id, signer, size, retired);
  if (size !== checkpoint.size || rootText !== checkpoint.root_hash
      || (checkpoint.head_hash !== undefined && checkpoint.head_hash !== headHash)
      || (checkpoint.origin !== undefined && checkpoint.origin !== origin)) {
    throw new Error("the checkpoint's fields are not what its note signs");
  }
  return { size, root, headHash, origin };
}

/** Open a checkpoint note (a receipt's) under every key of `keys` at once (trustedKeys:
 * certified under the pinned root), as the Python core's `receipts.open_checkpoint`: any
 * failing line of a known key rejects it, and at least one key whose line verified may
 * sign a note of its size (a retired one only below the seq of its key.retire: `retired`,
 * or its own `retiredAt`; one the listing marks retired, `notAfter`, with no seq known,
 * none). A receipt's note is the table's checkpoint when the receipt was made: after a
 * rotation it is signed by the key that took over, not by the entry's. With `table`, the
 * origin must be `<key name>/<table>`. Returns {size, root, rootText, headHash, origin,
 * signers (key ids)}. */
/** @param {string} text @param {Map<string, any>} keys
 * @param {{table?: string | null, retired?: Map<string, number> | null}} [options] */
export async function openCheckpoint(text, keys, { table = null, retired = null } = {}) {
  const body = noteBody(text);
  const origin = body.slice(0, body.indexOf("\n"));
  const name = origin.slice(0, origin.lastIndexOf("/"));
  if (table !== null && origin !== `${name}/${table}`) {
    throw new Error(`the checkpoint is not of log ${name}/${table}: its origin is ${origin}, signed for another table`);
  }
  const verifiers = [];
  const byHash = new Map();
  for (const [keyId, signer] of keys) {
    const verifier = await signerVerifier(name, signer.raw, signer.key);
    verifiers.push(verifier);
    byHash.set(bytesToHex(verifier.keyHash), keyId);
  }
  let opened;
  try {
    opened = await openNote(text, verifiers);
  } catch (error) {
    if (/does not verify/.test(error.message)) throw new Error("the checkpoint's signature does not verify");
    if (/no signature by a known key/.test(error.message)) {
      throw new Error("the checkpoint carries no signature by a key the pinned root certified");
    }
    throw error;
  }
  const parsed = parseCheckpointBody(opened.text);
  const signers = opened.sigs.filter((sig) => sig.name === name).map((sig) => byHash.get(bytesToHex(sig.keyHash)));
  if (!signers.some((keyId) => signsAt(keyId, keys.get(keyId), parsed.size, retired))) {
    throw retiredError(signers[0], keys.get(signers[0]), parsed.size, retired);
  }
  return { ...parsed, origin, signers };
}

// Row 5: a retired key signs only notes of a size below the seq of its key.retire in this
// log (`retired`, or the key's own `retiredAt`); one the listing marks retired with no
// seq known signs none.
function retiredAt(keyId, signer, retired) {
  return retired?.get(keyId) ?? signer?.retiredAt ?? null;
}

function signsAt(keyId, signer, size, retired) {
  const at = retiredAt(keyId, signer, retired);
  return at !== null ? size < at : !signer?.notAfter;
}

function retiredError(keyId, signer, size, retired) {
  const at = retiredAt(keyId, signer, retired);
  const where = at === null ? "(GET /v1/keys) at no seq given" : `at seq ${at} of this log`;
  return new Error(
    `the checkpoint of size ${size} is signed by key ${keyId}, retired ${where}: ` +
    "a retired key is trusted only for what it signed before its retirement",
  );
}

/** A cosigner's verifier key: `<name>+<key ID hex>+base64(0x04 || key)`. */
export async function cosignerVkey(name, raw) {
  return `${name}+${bytesToHex(await keyHash(name, COSIGNATURE_TYPE, raw))}+${bytesToBase64(concat(new Uint8Array([COSIGNATURE_TYPE]), raw))}`;
}

/** The signature line of `name`'s cosignature of `note` at POSIX `time`, signed by the
 * WebCrypto Ed25519 `privateKey` whose raw public key is `raw`. */
export async function cosignNote(note, name, privateKey, raw, time) {
  const stamp = new Uint8Array(8);
  new DataView(stamp.buffer).setBigUint64(0, BigInt(time));
  const message = concat(COSIGNATURE_HEADER, encoder.encode(`time ${time}\n${noteBody(note)}`));
  const signature = new Uint8Array(await subtle.sign({ name: "Ed25519" }, privateKey, message));
  return signatureLine(name, await keyHash(name, COSIGNATURE_TYPE, raw), concat(stamp, signature));
}

/** The time of the cosignature of `note` by the cosigner of `vkey`; throws if the note
 * carries none, if a line of that key does not verify (even after a good one), or if the
 * note is not a note. */
export async function verifyCosignature(note, vkey) {
  // <name>+<key ID hex>+<base64 key>: the key's base64 may hold "+" too.
  const first = vkey.indexOf("+");
  const second = vkey.indexOf("+", first + 1);
  const name = vkey.slice(0, first);
  if (first < 1 || second < 0 || second === first + 1 || second === vkey.length - 1 || /[ +\n]/.test(name)) {
    throw new Error("a verifier key is <name>+<key ID hex>+<base64 key>");
  }
  const hex = vkey.slice(first + 1, second);
  let raw;
  try {
    if (!/^([0-9a-fA-F]{2})+$/.test(hex)) throw new Error("not hex");
    raw = strictBase64ToBytes(vkey.slice(second + 1));
  } catch {
    throw new Error("a verifier key's key ID is hex and its key base64");
  }
  if (raw.length !== 33 || raw[0] !== COSIGNATURE_TYPE) throw new Error("not an Ed25519 cosignature key (type 0x04, 32 bytes)");
  const verifier = await cosignerVerifier(name, raw.slice(1));
  if (bytesToHex(verifier.keyHash) !== hex.toLowerCase()) throw new Error("the verifier key's key ID is not its name's and key's");
  let opened;
  try {
    opened = await openNote(note, [verifier]);
  } catch (error) {
    if (/does not verify/.test(error.message)) throw new Error(`${name}'s cosignature does not verify`);
    if (/no signature by a known key/.test(error.message)) throw new Error(`the note carries no cosignature by ${name}`);
    throw error;
  }
  const signature = opened.sigs[0].signature;
  return Number(new DataView(signature.buffer, signature.byteOffset, 8).getBigUint64(0));
}
